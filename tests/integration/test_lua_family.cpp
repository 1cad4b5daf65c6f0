// SPDX-License-Identifier: BSD-3-Clause
// The Lua scripts of the rest of the lock family (fenced, fair, read-write),
// run with EVAL on a real redis-server. Each script's text is read from the
// source tree at run time (src/redisson/scripts/, found from this file's path), so the
// scripts are tested as written, independently of how the library embeds them.
#include <hiredis/hiredis.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

#include <initializer_list>
#include <string>
#include <vector>

#include "check.hpp"
#include "redis_server.hpp"

namespace
{

// ---------------------------------------------------------------- scripts

std::string scripts_dir()
{
    std::string f = __FILE__; // .../tests/integration/test_lua_family.cpp
    size_t slash = f.rfind('/');
    std::string dir = slash == std::string::npos ? std::string(".") : f.substr(0, slash);
    return dir + "/../../src/redisson/scripts/";
}

std::string script_text(const char *name)
{
    std::string path = scripts_dir() + name + ".lua";
    FILE *fp = fopen(path.c_str(), "rb");
    if (!fp) {
        fprintf(stderr, "  cannot open %s\n", path.c_str());
        return std::string();
    }
    std::string text;
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof(buf), fp)) > 0)
        text.append(buf, n);
    fclose(fp);
    return text;
}

typedef std::vector<std::string> Strs;

// One connection per test; replies are owned by Reply.
struct Reply {
    redisReply *r = nullptr;
    explicit Reply(redisReply *rep) : r(rep) {}
    ~Reply()
    {
        if (r)
            freeReplyObject(r);
    }
    Reply(const Reply &) = delete;
    Reply &operator=(const Reply &) = delete;
    bool nil() const { return r && r->type == REDIS_REPLY_NIL; }
    bool integer() const { return r && r->type == REDIS_REPLY_INTEGER; }
    bool error() const { return r && r->type == REDIS_REPLY_ERROR; }
    long long i() const { return integer() ? r->integer : -999999; }
    // Element k of an array of integers.
    long long at(size_t k) const
    {
        if (!r || r->type != REDIS_REPLY_ARRAY || k >= r->elements ||
            r->element[k]->type != REDIS_REPLY_INTEGER)
            return -999999;
        return r->element[k]->integer;
    }
    size_t size() const { return r && r->type == REDIS_REPLY_ARRAY ? r->elements : 0; }
    bool error_has(const char *s) const { return error() && strstr(r->str, s) != nullptr; }
};

struct Conn {
    redisContext *c;
    Conn() : c(shared_server().connect()) { freeReplyObject(redisCommand(c, "FLUSHALL")); }
    ~Conn()
    {
        if (c)
            redisFree(c);
    }
    Conn(const Conn &) = delete;
    Conn &operator=(const Conn &) = delete;

    redisReply *eval(const char *script, const Strs &keys, const Strs &args)
    {
        std::string text = script_text(script);
        std::string nkeys = std::to_string(keys.size());
        std::vector<const char *> argv;
        std::vector<size_t> lens;
        argv.push_back("EVAL");
        argv.push_back(text.c_str());
        argv.push_back(nkeys.c_str());
        for (const std::string &k : keys)
            argv.push_back(k.c_str());
        for (const std::string &a : args)
            argv.push_back(a.c_str());
        for (const char *a : argv)
            lens.push_back(strlen(a));
        redisReply *rep = (redisReply *)redisCommandArgv(c, (int)argv.size(), argv.data(), lens.data());
        if (rep && rep->type == REDIS_REPLY_ERROR && !strstr(rep->str, "WRONGTYPE") &&
            !strstr(rep->str, "not an integer"))
            fprintf(stderr, "  %s: %s\n", script, rep->str);
        return rep;
    }
};

// ------------------------------------------------------------------ state

long long integer(const char *fmt, const std::string &a)
{
    return redis_integer(shared_server(), fmt, a.c_str());
}
long long integer(const char *fmt, const std::string &a, const std::string &b)
{
    return redis_integer(shared_server(), fmt, a.c_str(), b.c_str());
}
long long pttl(const std::string &key)
{
    return integer("PTTL %s", key);
}
long long exists(const std::string &key)
{
    return integer("EXISTS %s", key);
}
long long hget(const std::string &key, const std::string &field)
{
    return integer("HGET %s %s", key, field); // 0 when absent
}
bool hexists(const std::string &key, const std::string &field)
{
    return integer("HEXISTS %s %s", key, field) == 1;
}
std::string str(const char *fmt, const std::string &a, const std::string &b = std::string())
{
    char out[256];
    redis_string(shared_server(), out, sizeof(out), fmt, a.c_str(), b.c_str());
    return out;
}
long long zscore(const std::string &key, const std::string &member)
{
    return integer("ZSCORE %s %s", key, member); // 0 when absent
}
bool zhas(const std::string &key, const std::string &member)
{
    redisReply *r = shared_server().command("ZSCORE %s %s", key.c_str(), member.c_str());
    bool has = r && r->type == REDIS_REPLY_STRING;
    if (r)
        freeReplyObject(r);
    return has;
}
Strs lrange(const std::string &key)
{
    Strs out;
    redisReply *r = shared_server().command("LRANGE %s 0 -1", key.c_str());
    if (r && r->type == REDIS_REPLY_ARRAY)
        for (size_t i = 0; i < r->elements; i++)
            out.push_back(std::string(r->element[i]->str, r->element[i]->len));
    if (r)
        freeReplyObject(r);
    return out;
}
bool queue_is(const std::string &key, const Strs &want)
{
    Strs got = lrange(key);
    if (got == want)
        return true;
    fprintf(stderr, "  queue %s:", key.c_str());
    for (const std::string &s : got)
        fprintf(stderr, " %s", s.c_str());
    fprintf(stderr, "  (want");
    for (const std::string &s : want)
        fprintf(stderr, " %s", s.c_str());
    fprintf(stderr, ")\n");
    return false;
}
// Redis's clock, in ms since the epoch.
long long server_ms()
{
    redisReply *r = shared_server().command("TIME");
    long long ms = -1;
    if (r && r->type == REDIS_REPLY_ARRAY && r->elements == 2)
        ms = atoll(r->element[0]->str) * 1000 + atoll(r->element[1]->str) / 1000;
    if (r)
        freeReplyObject(r);
    return ms;
}
// The caller's wall clock, in ms since the epoch (as Redisson passes it).
long long local_ms(long long skew = 0)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000 + skew;
}
std::string num(long long v)
{
    return std::to_string(v);
}

// A subscriber on its own connection. After next() times out the connection
// is unusable, so a "no message" check is the last use of a Sub.
struct Sub {
    redisContext *c;
    bool ok = false;
    explicit Sub(std::initializer_list<std::string> channels) : c(shared_server().connect())
    {
        if (!c)
            return;
        for (const std::string &ch : channels)
            redisAppendCommand(c, "SUBSCRIBE %s", ch.c_str());
        ok = true;
        for (size_t i = 0; i < channels.size(); i++) {
            redisReply *r = nullptr;
            if (redisGetReply(c, (void **)&r) != REDIS_OK || !r)
                ok = false;
            if (r)
                freeReplyObject(r);
        }
    }
    ~Sub()
    {
        if (c)
            redisFree(c);
    }
    Sub(const Sub &) = delete;
    Sub &operator=(const Sub &) = delete;

    // True when a message arrives within ms; fills its channel and payload.
    bool next(unsigned ms, std::string *channel, std::string *payload)
    {
        struct timeval tv = {(time_t)(ms / 1000), (suseconds_t)(ms % 1000) * 1000};
        redisSetTimeout(c, tv);
        redisReply *r = nullptr;
        if (redisGetReply(c, (void **)&r) != REDIS_OK || !r)
            return false;
        bool msg =
            r->type == REDIS_REPLY_ARRAY && r->elements == 3 && strcmp(r->element[0]->str, "message") == 0;
        if (msg) {
            *channel = std::string(r->element[1]->str, r->element[1]->len);
            *payload = std::string(r->element[2]->str, r->element[2]->len);
        }
        freeReplyObject(r);
        return msg;
    }
    bool quiet(unsigned ms)
    {
        std::string ch, msg;
        bool got = next(ms, &ch, &msg);
        if (got)
            fprintf(stderr, "  unexpected message %s on %s\n", msg.c_str(), ch.c_str());
        return !got;
    }
};

// ------------------------------------------------------------------ names

std::string prefix_name(const std::string &p, const std::string &n)
{
    return n.find('{') != std::string::npos ? p + ":" + n : p + ":{" + n + "}";
}
std::string suffix_name(const std::string &n, const std::string &s)
{
    return n.find('{') != std::string::npos ? n + ":" + s : "{" + n + "}:" + s;
}

const std::string A = "6f0e2c1a-3b7d-4c55-9a10-2f4e8d6b0a01:1";
const std::string B = "6f0e2c1a-3b7d-4c55-9a10-2f4e8d6b0a01:2";
const std::string C = "b3d9e7f2-0c41-4e8a-8f6d-7a2c5e1b9d02:7";
const std::string D = "b3d9e7f2-0c41-4e8a-8f6d-7a2c5e1b9d02:8";
const std::string E = "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c04:11";
const std::string F = "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c04:12";

const char *kLatchTtl = "20000";
int g_latch_seq = 0;
std::string new_latch(const std::string &name)
{
    char hex[33];
    snprintf(hex, sizeof(hex), "%016x%016x", (unsigned)rand(), ++g_latch_seq);
    return prefix_name("redisson_unlock_latch", name) + ":" + hex;
}

// --------------------------------------------------------------- fair lock

struct Fair {
    std::string name, queue, zset, channel;
    explicit Fair(const std::string &n)
        : name(n), queue(prefix_name("redisson_lock_queue", n)),
          zset(prefix_name("redisson_lock_timeout", n)), channel(prefix_name("redisson_lock__channel", n))
    {
    }
    std::string chan(const std::string &owner) const { return channel + ":" + owner; }

    redisReply *acquire(Conn &c, const std::string &owner, long long lease, long long wait,
                        long long now) const
    {
        return c.eval("fair_acquire", {name, queue, zset}, {num(lease), owner, num(wait), num(now)});
    }
    redisReply *acquire(Conn &c, const std::string &owner, long long lease, long long wait) const
    {
        return acquire(c, owner, lease, wait, local_ms());
    }
    redisReply *release(Conn &c, const std::string &owner, const std::string &latch, long long lease = 30000,
                        long long now = local_ms()) const
    {
        return c.eval("fair_release", {name, queue, zset, channel, latch},
                      {"0", num(lease), owner, num(now), "publish", kLatchTtl});
    }
    redisReply *abandon(Conn &c, const std::string &owner, long long wait) const
    {
        return c.eval("fair_abandon", {name, queue, zset, channel}, {owner, num(wait), "publish"});
    }
    redisReply *force(Conn &c) const
    {
        return c.eval("fair_force_release", {name, queue, zset, channel}, {"0", "publish"});
    }
};

// ---------------------------------------------------------- read-write lock

struct Rw {
    std::string name, channel;
    explicit Rw(const std::string &n) : name(n), channel(prefix_name("redisson_rwlock", n)) {}
    std::string timeout_prefix(const std::string &owner) const
    {
        return suffix_name(name, owner) + ":rwlock_timeout";
    }
    std::string hold_key(const std::string &owner, int n) const
    {
        return timeout_prefix(owner) + ":" + num(n);
    }
    // suffix_name(name, "") without the final ':'.
    std::string key_prefix() const
    {
        std::string s = suffix_name(name, "");
        return s.substr(0, s.size() - 1);
    }

    redisReply *read(Conn &c, const std::string &owner, long long lease) const
    {
        return c.eval("rw_read_acquire", {name, timeout_prefix(owner)},
                      {num(lease), owner, owner + ":write"});
    }
    redisReply *read_release(Conn &c, const std::string &owner, const std::string &latch) const
    {
        return c.eval("rw_read_release", {name, channel, timeout_prefix(owner), key_prefix(), latch},
                      {"0", owner, "publish", kLatchTtl});
    }
    redisReply *write(Conn &c, const std::string &owner, long long lease) const
    {
        return c.eval("rw_write_acquire", {name}, {num(lease), owner + ":write"});
    }
    redisReply *write_release(Conn &c, const std::string &owner, const std::string &latch,
                              long long lease = 30000) const
    {
        return c.eval("rw_write_release", {name, channel, latch},
                      {"1", num(lease), owner + ":write", "publish", kLatchTtl});
    }
    // Is the read side ("read") or the write side ("write") held?
    long long is_locked(Conn &c, const char *side) const
    {
        return Reply(c.eval("rw_is_locked", {name}, {side})).i();
    }
    // Force unlock of the read side ("read", message 0) or the write side ("write", 1).
    redisReply *force(Conn &c, const char *mode) const
    {
        return c.eval("rw_force_release", {name, channel},
                      {strcmp(mode, "write") == 0 ? "1" : "0", "publish", mode});
    }
};

} // namespace

// ============================================================== fenced lock

TEST_CASE(fenced_tokens_increase_across_owners_and_reentry)
{
    Conn c;
    REQUIRE(c.c);
    const std::string name = "fenced-1", token = prefix_name("redisson_lock_token", name);
    auto acquire = [&](const std::string &owner) {
        return c.eval("fenced_acquire", {name, token}, {"30000", owner});
    };
    long long last = 0;
    {
        Reply r(acquire(A));
        REQUIRE(r.size() == 2);
        CHECK_EQ(r.at(0), -1);
        CHECK(r.at(1) > last);
        last = r.at(1);
        CHECK_EQ(hget(name, A), 1);
        CHECK(pttl(name) > 29000);
    }
    {
        Reply r(acquire(A)); // re-entry gets a new, larger token too
        CHECK_EQ(r.at(0), -1);
        CHECK(r.at(1) > last);
        last = r.at(1);
        CHECK_EQ(hget(name, A), 2);
    }
    {
        Reply r(acquire(B)); // held by A: {pttl, -1}, token untouched
        REQUIRE(r.size() == 2);
        CHECK(r.at(0) > 29000 && r.at(0) <= 30000);
        CHECK_EQ(r.at(1), -1);
        CHECK_EQ(integer("GET %s", token), last);
        CHECK(!hexists(name, B));
    }
    for (int i = 0; i < 2; i++) {
        Reply r(c.eval("lock_release", {name, prefix_name("redisson_lock__channel", name), new_latch(name)},
                       {"0", "30000", A, "publish", kLatchTtl}));
        CHECK_EQ(r.i(), i == 0 ? 0 : 1);
    }
    for (const std::string &owner : {B, B, C}) {
        if (owner == C) {
            freeReplyObject(c.eval("lock_force_release", {name, prefix_name("redisson_lock__channel", name)},
                                   {"0", "publish"}));
        }
        Reply r(acquire(owner));
        CHECK_EQ(r.at(0), -1);
        CHECK(r.at(1) > last);
        last = r.at(1);
    }
    CHECK_EQ(last, 5);
    CHECK_EQ(pttl(token), -1); // the token key never expires
}

// The release answers 1 + the subscribers that heard its message (2 with
// one): the releasing client lets a waiter take its turn (kYieldEveryHeard).
// A retried release (same latch) answers 1: the listener count is not stored.
TEST_CASE(release_says_whether_a_waiter_heard_it)
{
    Conn c;
    REQUIRE(c.c);
    const std::string name = "heard-1", channel = prefix_name("redisson_lock__channel", name);
    auto release = [&](const std::string &latch) {
        return c.eval("lock_release", {name, channel, latch}, {"0", "30000", A, "publish", kLatchTtl});
    };
    freeReplyObject(c.eval("lock_acquire", {name}, {"30000", A}));
    CHECK_EQ(Reply(release(new_latch(name))).i(), 1); // nobody subscribed
    redisContext *listener = shared_server().connect();
    REQUIRE(listener);
    freeReplyObject(redisCommand(listener, "SUBSCRIBE %s", channel.c_str()));
    freeReplyObject(c.eval("lock_acquire", {name}, {"30000", A}));
    std::string latch = new_latch(name);
    CHECK_EQ(Reply(release(latch)).i(), 2);
    CHECK_EQ(Reply(release(latch)).i(), 1); // the latch's answer
    redisReply *msg = nullptr;
    REQUIRE(redisGetReply(listener, (void **)&msg) == REDIS_OK);
    REQUIRE(msg && msg->type == REDIS_REPLY_ARRAY && msg->elements == 3);
    CHECK(strcmp(msg->element[2]->str, "0") == 0); // Redisson's unlock message
    freeReplyObject(msg);
    redisFree(listener);
}

TEST_CASE(fenced_refuses_keys_of_another_type)
{
    Conn c;
    REQUIRE(c.c);
    const std::string name = "fenced-2", token = prefix_name("redisson_lock_token", name);
    freeReplyObject(redisCommand(c.c, "SET %s %s", token.c_str(), "not-a-number"));
    {
        Reply r(c.eval("fenced_acquire", {name, token}, {"30000", A}));
        CHECK(r.error());
        CHECK_EQ(exists(name), 0); // no hold without a token
        CHECK(str("GET %s", token) == "not-a-number");
    }
    freeReplyObject(redisCommand(c.c, "DEL %s", token.c_str()));
    freeReplyObject(redisCommand(c.c, "SET %s %s", name.c_str(), "foreign"));
    {
        Reply r(c.eval("fenced_acquire", {name, token}, {"30000", A}));
        CHECK(r.error_has("WRONGTYPE"));
        CHECK(str("GET %s", name) == "foreign");
        CHECK_EQ(exists(token), 0);
    }
}

// ================================================================ fair lock

TEST_CASE(fair_fifo_order_with_several_owners)
{
    Conn c;
    REQUIRE(c.c);
    Fair f("fair-fifo");
    const long long wait = 10000, lease = 30000;
    {
        Reply r(f.acquire(c, A, lease, wait));
        CHECK(r.nil());
        CHECK_EQ(hget(f.name, A), 1);
        CHECK_EQ(exists(f.queue), 0);
    }
    long long before = server_ms();
    long long ttl_b;
    {
        Reply r(f.acquire(c, B, lease, wait));
        REQUIRE(r.integer());
        ttl_b = r.i();
        CHECK(ttl_b > lease - 1000 && ttl_b <= lease); // behind A's lease
    }
    long long after = server_ms();
    long long dl_b = zscore(f.zset, B);
    CHECK(dl_b >= before + ttl_b + wait && dl_b <= after + ttl_b + wait);
    for (const std::string &o : {C, D}) {
        Reply r(f.acquire(c, o, lease, wait));
        CHECK(r.integer() && r.i() > ttl_b);
    }
    CHECK(queue_is(f.queue, {B, C, D}));
    // Each waiter is one window behind the one ahead of it.
    CHECK_EQ(zscore(f.zset, C) - dl_b, wait);
    CHECK_EQ(zscore(f.zset, D) - zscore(f.zset, C), wait);
    {
        Reply r(f.acquire(c, B, lease, wait)); // already queued: keeps its place
        CHECK(r.integer() && r.i() >= 0 && r.i() <= ttl_b);
        CHECK(queue_is(f.queue, {B, C, D}));
        CHECK_EQ(zscore(f.zset, B), dl_b);
    }
    {
        Reply r(f.acquire(c, A, lease, wait)); // the holder re-enters past the queue
        CHECK(r.nil());
        CHECK_EQ(hget(f.name, A), 2);
    }
    {
        Reply r0(f.release(c, A, new_latch(f.name)));
        CHECK_EQ(r0.i(), 0);
        Reply r1(f.release(c, A, new_latch(f.name)));
        CHECK_EQ(r1.i(), 1);
        CHECK_EQ(exists(f.name), 0);
    }
    long long dl_c = zscore(f.zset, C), dl_d = zscore(f.zset, D);
    {
        Reply r(f.acquire(c, C, lease, wait)); // free, but C is not the head
        CHECK(r.integer() && r.i() >= 0);
        CHECK_EQ(exists(f.name), 0);
        CHECK(queue_is(f.queue, {B, C, D}));
    }
    {
        Reply r(f.acquire(c, B, lease, wait)); // the head gets it
        CHECK(r.nil());
        CHECK_EQ(hget(f.name, B), 1);
        CHECK(queue_is(f.queue, {C, D}));
        CHECK(!zhas(f.zset, B));
        CHECK_EQ(zscore(f.zset, C), dl_c - wait);
        CHECK_EQ(zscore(f.zset, D), dl_d - wait);
    }
    {
        Reply r(f.release(c, B, new_latch(f.name)));
        CHECK_EQ(r.i(), 1);
        Reply rd(f.acquire(c, D, lease, wait));
        CHECK(rd.integer());
        Reply rc(f.acquire(c, C, lease, wait));
        CHECK(rc.nil());
        CHECK(queue_is(f.queue, {D}));
    }
    {
        Reply r(f.release(c, C, new_latch(f.name)));
        CHECK_EQ(r.i(), 1);
        Reply rd(f.acquire(c, D, lease, wait));
        CHECK(rd.nil());
        CHECK_EQ(exists(f.queue), 0);
        CHECK_EQ(exists(f.zset), 0);
    }
}

// A waiter already queued is told the holder's PTTL, as Redisson answers, not
// its deadline less one window: that is the holder's first lease, and says 0
// once the holder's watchdog has renewed past it.
TEST_CASE(fair_queued_waiter_is_told_the_holders_pttl)
{
    Conn c;
    REQUIRE(c.c);
    Fair f("fair-queued-ttl");
    const long long wait = 10000;
    Reply a(f.acquire(c, A, 30000, wait));
    CHECK(a.nil());
    Reply b(f.acquire(c, B, 30000, wait));
    REQUIRE(b.integer());
    // As if the holder's first lease had just passed (B's deadline says so)
    // and its watchdog had renewed it.
    freeReplyObject(redisCommand(c.c, "ZADD %s %lld %s", f.zset.c_str(), server_ms() + wait, B.c_str()));
    freeReplyObject(redisCommand(c.c, "PEXPIRE %s 20000", f.name.c_str()));
    {
        Reply r(f.acquire(c, B, 30000, wait));
        REQUIRE(r.integer());
        CHECK(r.i() > 15000 && r.i() <= 20000);
        CHECK(queue_is(f.queue, {B}));
    }
    // No TTL to name: 0 (the caller falls back to a short retry).
    freeReplyObject(redisCommand(c.c, "PERSIST %s", f.name.c_str()));
    {
        Reply r(f.acquire(c, B, 30000, wait));
        CHECK_EQ(r.i(), 0);
    }
}

TEST_CASE(fair_release_publishes_to_the_head_channel_only)
{
    Conn c;
    REQUIRE(c.c);
    Fair f("fair-pub");
    Sub sub({f.chan(B), f.chan(C), f.channel});
    REQUIRE(sub.ok);
    Reply a(f.acquire(c, A, 30000, 10000));
    CHECK(a.nil());
    Reply b(f.acquire(c, B, 30000, 10000));
    Reply cc(f.acquire(c, C, 30000, 10000));
    CHECK(queue_is(f.queue, {B, C}));
    Reply r(f.release(c, A, new_latch(f.name)));
    CHECK_EQ(r.i(), 1);
    std::string ch, msg;
    CHECK(sub.next(2000, &ch, &msg));
    CHECK(ch == f.chan(B));
    CHECK(msg == "0");
    CHECK(queue_is(f.queue, {B, C})); // B still has to come and take it
    CHECK(sub.quiet(300));            // nothing for C, nothing on the shared channel
}

TEST_CASE(fair_release_reentry_not_owner_gone_and_latch)
{
    Conn c;
    REQUIRE(c.c);
    Fair f("fair-rel");
    Reply a1(f.acquire(c, A, 30000, 10000));
    Reply a2(f.acquire(c, A, 30000, 10000));
    CHECK_EQ(hget(f.name, A), 2);
    {
        Reply r(f.release(c, B, new_latch(f.name))); // not the owner
        CHECK(r.nil());
        CHECK_EQ(hget(f.name, A), 2);
    }
    freeReplyObject(redisCommand(c.c, "PEXPIRE %s 5000", f.name.c_str()));
    std::string l1 = new_latch(f.name);
    {
        Reply r(f.release(c, A, l1, 30000));
        CHECK_EQ(r.i(), 0);
        CHECK_EQ(hget(f.name, A), 1);
        CHECK(pttl(f.name) > 29000); // lease renewed
        CHECK(str("GET %s", l1) == "0");
        CHECK(pttl(l1) > 0 && pttl(l1) <= 20000);
    }
    {
        Reply r(f.release(c, A, l1)); // a retry: first answer, no second decrement
        CHECK_EQ(r.i(), 0);
        CHECK_EQ(hget(f.name, A), 1);
    }
    std::string l2 = new_latch(f.name);
    {
        Reply r(f.release(c, A, l2));
        CHECK_EQ(r.i(), 1);
        CHECK_EQ(exists(f.name), 0);
        CHECK(str("GET %s", l2) == "1");
    }
    Reply b(f.acquire(c, B, 30000, 10000));
    CHECK(b.nil());
    {
        Reply r(f.release(c, A, l2)); // a late retry must not touch B's hold
        CHECK_EQ(r.i(), 1);
        CHECK_EQ(hget(f.name, B), 1);
    }
    // Lock gone (expired) with a waiter queued: 1, and the waiter is woken.
    Reply cq(f.acquire(c, C, 30000, 10000));
    CHECK(cq.integer());
    freeReplyObject(redisCommand(c.c, "DEL %s", f.name.c_str()));
    Sub sub({f.chan(C)});
    REQUIRE(sub.ok);
    {
        Reply r(f.release(c, B, new_latch(f.name)));
        CHECK_EQ(r.i(), 1);
        std::string ch, msg;
        CHECK(sub.next(2000, &ch, &msg));
        CHECK(ch == f.chan(C) && msg == "0");
    }
}

// A release that finds the lock gone (its lease ran out) sets the unlock
// latch too, as Redisson's does: a retry of it (the reply was lost) answers 1
// again, even once another owner holds the lock, instead of nil (NOT_OWNER).
TEST_CASE(fair_release_of_a_gone_lock_sets_the_latch)
{
    Conn c;
    REQUIRE(c.c);
    Fair f("fair-gone-latch");
    Reply a(f.acquire(c, A, 30000, 10000));
    CHECK(a.nil());
    freeReplyObject(redisCommand(c.c, "DEL %s", f.name.c_str())); // the lease ran out
    std::string latch = new_latch(f.name);
    {
        Reply r(f.release(c, A, latch));
        CHECK_EQ(r.i(), 1);
        CHECK(str("GET %s", latch) == "1");
        CHECK(pttl(latch) > 0 && pttl(latch) <= 20000);
    }
    Reply b(f.acquire(c, B, 30000, 10000));
    CHECK(b.nil());
    {
        Reply r(f.release(c, A, latch)); // the retry
        CHECK_EQ(r.i(), 1);
        CHECK_EQ(hget(f.name, B), 1);
    }
}

TEST_CASE(fair_stale_heads_are_dropped)
{
    Conn c;
    REQUIRE(c.c);
    Fair f("fair-stale");
    // Acquire side: B's window passes while nobody calls; C then finds the lock
    // expired, drops B and takes it.
    Reply a(f.acquire(c, A, 200, 300));
    CHECK(a.nil());
    Reply b(f.acquire(c, B, 200, 300));
    Reply cq(f.acquire(c, C, 200, 300));
    CHECK(queue_is(f.queue, {B, C}));
    long long dl_b = zscore(f.zset, B);
    while (server_ms() <= dl_b)
        sleep_ms(20);
    {
        Reply r(f.acquire(c, C, 200, 300));
        CHECK(r.nil());
        CHECK_EQ(hget(f.name, C), 1);
        CHECK(!zhas(f.zset, B));
        CHECK_EQ(exists(f.queue), 0);
    }

    // Release side: the wake-up goes to the first live waiter.
    freeReplyObject(redisCommand(c.c, "FLUSHALL"));
    Reply a2(f.acquire(c, A, 30000, 10000));
    Reply b2(f.acquire(c, B, 30000, 10000));
    Reply d2(f.acquire(c, D, 30000, 10000));
    long long past = server_ms() - 1;
    freeReplyObject(redisCommand(c.c, "ZADD %s %lld %s", f.zset.c_str(), past, B.c_str()));
    Sub sub({f.chan(B), f.chan(D)});
    REQUIRE(sub.ok);
    Reply r(f.release(c, A, new_latch(f.name)));
    CHECK_EQ(r.i(), 1);
    std::string ch, msg;
    CHECK(sub.next(2000, &ch, &msg));
    CHECK(ch == f.chan(D));
    CHECK(queue_is(f.queue, {D}));
    CHECK(!zhas(f.zset, B));
}

TEST_CASE(fair_abandon_subtracts_wait_only_from_those_behind)
{
    Conn c;
    REQUIRE(c.c);
    Fair f("fair-abandon");
    const long long wait = 10000;
    Reply a(f.acquire(c, A, 30000, wait));
    for (const std::string &o : {B, C, D, E}) {
        Reply r(f.acquire(c, o, 30000, wait));
        CHECK(r.integer());
    }
    long long b0 = zscore(f.zset, B), d0 = zscore(f.zset, D), e0 = zscore(f.zset, E);
    {
        Reply r(f.abandon(c, C, wait));
        CHECK_EQ(r.i(), 1);
        CHECK(queue_is(f.queue, {B, D, E}));
        CHECK(!zhas(f.zset, C));
        CHECK_EQ(zscore(f.zset, B), b0); // ahead: unchanged
        CHECK_EQ(zscore(f.zset, D), d0 - wait);
        CHECK_EQ(zscore(f.zset, E), e0 - wait);
    }
    {
        Reply r1(f.abandon(c, C, wait)); // twice: no longer queued
        CHECK_EQ(r1.i(), 0);
        Reply r2(f.abandon(c, F, wait)); // never queued
        CHECK_EQ(r2.i(), 0);
        CHECK(queue_is(f.queue, {B, D, E}));
        CHECK_EQ(zscore(f.zset, E), e0 - wait);
    }
    {
        // The head leaves while A still holds the lock: nobody is woken.
        Sub quiet({f.chan(D), f.chan(E)});
        REQUIRE(quiet.ok);
        Reply r(f.abandon(c, B, wait));
        CHECK_EQ(r.i(), 1);
        CHECK(queue_is(f.queue, {D, E}));
        CHECK_EQ(zscore(f.zset, D), d0 - 2 * wait);
        CHECK(quiet.quiet(300));
    }
    {
        // The lock is released (D woken), then D gives up before taking it:
        // E must be told, or it would wait for a message that never comes.
        Sub sub({f.chan(D), f.chan(E)});
        REQUIRE(sub.ok);
        Reply rel(f.release(c, A, new_latch(f.name)));
        CHECK_EQ(rel.i(), 1);
        std::string ch, msg;
        CHECK(sub.next(2000, &ch, &msg));
        CHECK(ch == f.chan(D));
        Reply r(f.abandon(c, D, wait));
        CHECK_EQ(r.i(), 1);
        CHECK(sub.next(2000, &ch, &msg));
        CHECK(ch == f.chan(E) && msg == "0");
        CHECK(queue_is(f.queue, {E}));
        Reply re(f.acquire(c, E, 30000, wait));
        CHECK(re.nil());
        CHECK_EQ(exists(f.zset), 0);
    }
}

// Redisson takes `now` from each client: a client 10 s ahead drops live
// waiters, one 10 s behind keeps dead ones and queues others 10 s late. The
// scripts read Redis TIME instead, so the caller's ARGV[4] cannot skew them.
TEST_CASE(fair_queue_is_robust_to_client_clock_skew)
{
    Conn c;
    REQUIRE(c.c);
    Fair f("fair-skew");
    const long long lease = 1000, wait = 800, skew = 10000;
    Reply a(f.acquire(c, A, lease, wait, local_ms()));
    CHECK(a.nil());

    long long before = server_ms();
    Reply b(f.acquire(c, B, lease, wait, local_ms(+skew))); // clock 10 s ahead
    long long after = server_ms();
    REQUIRE(b.integer());
    CHECK(b.i() > 0 && b.i() <= lease);
    long long dl_b = zscore(f.zset, B);
    CHECK(dl_b >= before + b.i() + wait && dl_b <= after + b.i() + wait);

    before = server_ms();
    Reply cq(f.acquire(c, C, lease, wait, local_ms(-skew))); // clock 10 s behind
    after = server_ms();
    REQUIRE(cq.integer());
    CHECK(cq.i() >= dl_b - after && cq.i() <= dl_b - before); // not 10 s more
    CHECK_EQ(zscore(f.zset, C), dl_b + wait);

    Reply d(f.acquire(c, D, lease, wait, local_ms()));
    CHECK_EQ(zscore(f.zset, D), dl_b + 2 * wait);

    // A caller 10 s ahead would see B, C and D as long expired: none is dropped.
    Reply e(f.acquire(c, E, lease, wait, local_ms(+skew)));
    CHECK(e.integer() && e.i() > 0);
    CHECK(queue_is(f.queue, {B, C, D, E}));
    CHECK_EQ(zscore(f.zset, E), dl_b + 3 * wait);
    {
        Reply again(f.acquire(c, B, lease, wait, local_ms(+skew)));
        CHECK(again.integer() && again.i() > 0 && again.i() <= b.i()); // not "0, hurry"
    }

    // B and C never come back. Once their windows have passed by Redis's clock,
    // a caller 10 s behind still drops them; D (still within its window) now
    // heads the queue and gets the free lock, even on a slow clock.
    long long dl_c = zscore(f.zset, C);
    while (server_ms() <= dl_c + 20)
        sleep_ms(20);
    long long dl_d = zscore(f.zset, D), dl_e = zscore(f.zset, E);
    REQUIRE(server_ms() < dl_d - 200); // enough margin left for the rest
    {
        Reply r(f.acquire(c, F, lease, wait, local_ms(-skew)));
        CHECK(r.integer());
        CHECK(queue_is(f.queue, {D, E, F}));
        CHECK(!zhas(f.zset, B) && !zhas(f.zset, C));
    }
    {
        Reply r(f.acquire(c, D, lease, wait, local_ms(-skew)));
        CHECK(r.nil());
        CHECK_EQ(hget(f.name, D), 1);
        CHECK(queue_is(f.queue, {E, F}));
        CHECK_EQ(zscore(f.zset, E), dl_e - wait);
    }
    // A release from a clock 10 s ahead does not drop E, and wakes it.
    Sub sub({f.chan(E)});
    REQUIRE(sub.ok);
    {
        Reply r(f.release(c, D, new_latch(f.name), lease, local_ms(+skew)));
        CHECK_EQ(r.i(), 1);
        std::string ch, msg;
        CHECK(sub.next(2000, &ch, &msg));
        CHECK(ch == f.chan(E));
        CHECK(queue_is(f.queue, {E, F}));
    }
    {
        Reply r(f.acquire(c, E, lease, wait, local_ms(+skew)));
        CHECK(r.nil());
        CHECK(queue_is(f.queue, {F}));
    }
    // Every deadline is on Redis's clock: none lies 10 s off.
    long long now = server_ms();
    long long dl_f = zscore(f.zset, F);
    CHECK(dl_f > now && dl_f < now + lease + 3 * wait);
}

TEST_CASE(fair_force_release_and_wrong_types)
{
    Conn c;
    REQUIRE(c.c);
    Fair f("fair-force");
    {
        Reply r(f.force(c));
        CHECK_EQ(r.i(), 0);
    }
    Reply a(f.acquire(c, A, 30000, 10000));
    Reply s(f.acquire(c, E, 30000, 10000)); // becomes stale below
    Reply b(f.acquire(c, B, 30000, 10000));
    freeReplyObject(redisCommand(c.c, "ZADD %s %lld %s", f.zset.c_str(), server_ms() - 1, E.c_str()));
    Sub sub({f.chan(B), f.chan(E)});
    REQUIRE(sub.ok);
    {
        Reply r(f.force(c));
        CHECK_EQ(r.i(), 1);
        CHECK_EQ(exists(f.name), 0);
        std::string ch, msg;
        CHECK(sub.next(2000, &ch, &msg));
        CHECK(ch == f.chan(B) && msg == "0");
        CHECK(queue_is(f.queue, {B}));
    }

    Fair g("fair-wrongtype");
    freeReplyObject(redisCommand(c.c, "SET %s %s", g.name.c_str(), "foreign"));
    {
        Reply r1(g.force(c));
        CHECK(r1.error_has("WRONGTYPE"));
        Reply r2(g.acquire(c, A, 30000, 10000));
        CHECK(r2.error_has("WRONGTYPE"));
        Reply r3(g.release(c, A, new_latch(g.name)));
        CHECK(r3.error_has("WRONGTYPE"));
        CHECK(str("GET %s", g.name) == "foreign");
        CHECK_EQ(exists(g.queue), 0);
        CHECK_EQ(exists(g.zset), 0);
    }
    freeReplyObject(redisCommand(c.c, "DEL %s", g.name.c_str()));
    freeReplyObject(redisCommand(c.c, "SET %s %s", g.queue.c_str(), "foreign"));
    {
        Reply r(g.acquire(c, A, 30000, 10000));
        CHECK(r.error_has("WRONGTYPE"));
        CHECK_EQ(exists(g.name), 0);
        Reply r2(g.abandon(c, A, 10000));
        CHECK(r2.error_has("WRONGTYPE"));
        CHECK(str("GET %s", g.queue) == "foreign");
    }
}

// ========================================================= read-write lock

TEST_CASE(rw_readers_share_and_writer_is_excluded)
{
    Conn c;
    REQUIRE(c.c);
    Rw rw("rw-share");
    {
        Reply r(rw.read(c, A, 30000));
        CHECK(r.nil());
        CHECK(str("HGET %s %s", rw.name, "mode") == "read");
        CHECK_EQ(hget(rw.name, A), 1);
        CHECK(str("GET %s", rw.hold_key(A, 1)) == "1");
        CHECK(pttl(rw.hold_key(A, 1)) > 29000);
        CHECK(pttl(rw.name) > 29000);
    }
    {
        Reply r1(rw.read(c, B, 30000));
        CHECK(r1.nil());
        Reply r2(rw.read(c, A, 30000)); // re-entry: a second hold with its own key
        CHECK(r2.nil());
        CHECK_EQ(hget(rw.name, A), 2);
        CHECK_EQ(hget(rw.name, B), 1);
        CHECK(pttl(rw.hold_key(A, 2)) > 29000);
    }
    {
        Reply w(rw.write(c, C, 30000));
        CHECK(w.integer() && w.i() > 29000);
        CHECK(!hexists(rw.name, C + ":write"));
        CHECK(str("HGET %s %s", rw.name, "mode") == "read");
    }
    Sub sub({rw.channel});
    REQUIRE(sub.ok);
    {
        Reply r1(rw.read_release(c, A, new_latch(rw.name)));
        CHECK_EQ(r1.i(), 0);
        CHECK_EQ(hget(rw.name, A), 1);
        CHECK_EQ(exists(rw.hold_key(A, 2)), 0); // the newest hold goes first
        CHECK_EQ(exists(rw.hold_key(A, 1)), 1);
        Reply r2(rw.read_release(c, A, new_latch(rw.name)));
        CHECK_EQ(r2.i(), 0);
        CHECK(!hexists(rw.name, A));
        CHECK_EQ(exists(rw.hold_key(A, 1)), 0);
        Reply r3(rw.read_release(c, B, new_latch(rw.name)));
        CHECK_EQ(r3.i(), 1);
        CHECK_EQ(exists(rw.name), 0);
        std::string ch, msg;
        CHECK(sub.next(2000, &ch, &msg));
        CHECK(ch == rw.channel && msg == "0");
    }
    Reply w(rw.write(c, C, 30000));
    CHECK(w.nil());
}

TEST_CASE(rw_writer_excludes_readers_and_writers)
{
    Conn c;
    REQUIRE(c.c);
    Rw rw("rw-excl");
    {
        Reply w(rw.write(c, A, 30000));
        CHECK(w.nil());
        CHECK(str("HGET %s %s", rw.name, "mode") == "write");
        CHECK_EQ(hget(rw.name, A + ":write"), 1);
        CHECK(pttl(rw.name) > 29000);
    }
    {
        Reply r(rw.read(c, B, 30000));
        CHECK(r.integer() && r.i() > 29000);
        CHECK(!hexists(rw.name, B));
        CHECK_EQ(exists(rw.hold_key(B, 1)), 0);
        Reply w(rw.write(c, B, 30000));
        CHECK(w.integer() && w.i() > 29000);
        CHECK(!hexists(rw.name, B + ":write"));
    }
    {
        Reply r(rw.read_release(c, B, new_latch(rw.name))); // holds nothing
        CHECK(r.nil());
        Reply w(rw.write_release(c, B, new_latch(rw.name)));
        CHECK(w.nil());
        CHECK_EQ(hget(rw.name, A + ":write"), 1);
    }
    Sub sub({rw.channel});
    REQUIRE(sub.ok);
    {
        Reply w(rw.write_release(c, A, new_latch(rw.name)));
        CHECK_EQ(w.i(), 1);
        CHECK_EQ(exists(rw.name), 0);
        std::string ch, msg;
        CHECK(sub.next(2000, &ch, &msg));
        CHECK(ch == rw.channel && msg == "1"); // wake every waiter
    }
    // A reentrant (non read-write) lock under the same name is never taken over.
    freeReplyObject(redisCommand(c.c, "HSET %s %s 1", rw.name.c_str(), C.c_str()));
    freeReplyObject(redisCommand(c.c, "PEXPIRE %s 30000", rw.name.c_str()));
    {
        Reply r(rw.read(c, A, 30000));
        CHECK(r.integer() && r.i() > 29000);
        Reply w(rw.write(c, A, 30000));
        CHECK(w.integer() && w.i() > 29000);
        Reply wr(rw.write_release(c, A, new_latch(rw.name)));
        CHECK(wr.nil());
        Reply rr(rw.read_release(c, A, new_latch(rw.name)));
        CHECK(rr.nil());
        CHECK_EQ(integer("HLEN %s", rw.name), 1);
        CHECK_EQ(hget(rw.name, C), 1);
    }
}

TEST_CASE(rw_writer_then_reader_downgrades_to_read)
{
    Conn c;
    REQUIRE(c.c);
    Rw rw("rw-down");
    Reply w(rw.write(c, A, 30000));
    CHECK(w.nil());
    {
        Reply r1(rw.read(c, A, 1000)); // the writer may read-lock too
        CHECK(r1.nil());
        Reply r2(rw.read(c, A, 1000));
        CHECK(r2.nil());
        CHECK_EQ(hget(rw.name, A), 2);
        CHECK(str("HGET %s %s", rw.name, "mode") == "write");
        CHECK(pttl(rw.name) > 29000);
        Reply other(rw.read(c, B, 30000)); // others still cannot
        CHECK(other.integer());
    }
    {
        // Dropping one read hold under the write lock keeps the writer's TTL.
        Reply r(rw.read_release(c, A, new_latch(rw.name)));
        CHECK_EQ(r.i(), 0);
        CHECK_EQ(hget(rw.name, A), 1);
        CHECK(str("HGET %s %s", rw.name, "mode") == "write");
        CHECK(pttl(rw.name) > 29000);
    }
    {
        Reply r(rw.write_release(c, A, new_latch(rw.name)));
        CHECK_EQ(r.i(), 1);
        CHECK(str("HGET %s %s", rw.name, "mode") == "read");
        CHECK(!hexists(rw.name, A + ":write"));
        CHECK_EQ(hget(rw.name, A), 1);
        CHECK_EQ(exists(rw.hold_key(A, 1)), 1);
    }
    {
        Reply r(rw.read(c, B, 30000)); // now shared
        CHECK(r.nil());
        Reply w2(rw.write(c, A, 30000)); // and no writer, not even A
        CHECK(w2.integer());
        Reply wr(rw.write_release(c, A, new_latch(rw.name))); // mode=read: not a writer
        CHECK(wr.nil());
    }
    {
        Reply r1(rw.read_release(c, A, new_latch(rw.name)));
        CHECK_EQ(r1.i(), 0);
        Reply r2(rw.read_release(c, B, new_latch(rw.name)));
        CHECK_EQ(r2.i(), 1);
        CHECK_EQ(exists(rw.name), 0);
    }
}

TEST_CASE(rw_read_unlock_recomputes_the_ttl)
{
    Conn c;
    REQUIRE(c.c);
    Rw rw("rw-ttl");
    Reply a(rw.read(c, A, 60000));
    Reply b(rw.read(c, B, 5000));
    CHECK(pttl(rw.name) > 59000); // the longest hold
    {
        Reply r(rw.read_release(c, A, new_latch(rw.name)));
        CHECK_EQ(r.i(), 0);
        long long t = pttl(rw.name);
        CHECK(t > 4000 && t <= 5000); // now B's hold is the longest
    }
    {
        Reply b2(rw.read(c, B, 60000)); // hold 2 of B: 60 s
        CHECK(pttl(rw.name) > 59000);
        Reply b3(rw.read(c, B, 3000)); // hold 3: 3 s
        CHECK(pttl(rw.name) > 59000);
        Reply r(rw.read_release(c, B, new_latch(rw.name))); // drops hold 3
        CHECK_EQ(r.i(), 0);
        CHECK(pttl(rw.name) > 59000);
        Reply r2(rw.read_release(c, B, new_latch(rw.name))); // drops hold 2
        CHECK_EQ(r2.i(), 0);
        long long t = pttl(rw.name);
        CHECK(t > 3000 && t <= 5000); // hold 1 remains
        CHECK_EQ(hget(rw.name, B), 1);
    }
    // A reader that died: its hold keys expired, its field stayed. When the
    // last live reader leaves, the lock is released, not kept for the dead.
    Reply cq(rw.read(c, C, 30000));
    freeReplyObject(redisCommand(c.c, "DEL %s", rw.hold_key(C, 1).c_str()));
    Sub sub({rw.channel});
    REQUIRE(sub.ok);
    {
        Reply r(rw.read_release(c, B, new_latch(rw.name)));
        CHECK_EQ(r.i(), 1);
        CHECK_EQ(exists(rw.name), 0);
        std::string ch, msg;
        CHECK(sub.next(2000, &ch, &msg));
        CHECK(ch == rw.channel && msg == "0");
    }
}

TEST_CASE(rw_write_reentry_extends_the_ttl)
{
    Conn c;
    REQUIRE(c.c);
    Rw rw("rw-reenter");
    Reply w1(rw.write(c, A, 5000));
    CHECK(w1.nil());
    CHECK(pttl(rw.name) <= 5000);
    Reply w2(rw.write(c, A, 5000));
    CHECK(w2.nil());
    CHECK_EQ(hget(rw.name, A + ":write"), 2);
    long long t = pttl(rw.name);
    CHECK(t > 9000 && t <= 10000); // PTTL + lease
    {
        std::string l = new_latch(rw.name);
        Reply r(rw.write_release(c, A, l, 5000));
        CHECK_EQ(r.i(), 0);
        CHECK_EQ(hget(rw.name, A + ":write"), 1);
        t = pttl(rw.name);
        CHECK(t > 4000 && t <= 5000);
        CHECK(str("GET %s", l) == "0");
    }
}

TEST_CASE(rw_renew_extends_hash_and_hold_keys)
{
    Conn c;
    REQUIRE(c.c);
    Rw rw("rw-renew"), tagged("rw{renew}tagged"), longer("rw-renew-long");
    Reply a1(rw.read(c, A, 1000));
    Reply a2(rw.read(c, A, 1000));
    Reply b1(rw.read(c, B, 1000));
    Reply t1(tagged.read(c, A, 1000));
    CHECK(tagged.hold_key(A, 1) == "rw{renew}tagged:" + A + ":rwlock_timeout:1");
    CHECK_EQ(exists(tagged.hold_key(A, 1)), 1);
    Reply l1(longer.read(c, B, 120000));
    Reply l2(longer.read(c, A, 1000));
    freeReplyObject(redisCommand(c.c, "SET rw-renew-str foreign"));

    Reply r(c.eval("rw_renew", {rw.name, tagged.name, "rw-renew-str", rw.name, "rw-renew-none", longer.name},
                   {"60000", A, A, A, C, A, A}));
    REQUIRE(r.size() == 6);
    CHECK_EQ(r.at(0), 1);
    CHECK_EQ(r.at(1), 1);
    CHECK_EQ(r.at(2), 0); // wrong type: lost, and the batch goes on
    CHECK_EQ(r.at(3), 0); // C holds nothing
    CHECK_EQ(r.at(4), 0); // no such lock
    CHECK_EQ(r.at(5), 1);
    CHECK(pttl(rw.name) > 59000);
    CHECK(pttl(rw.hold_key(A, 1)) > 59000);
    CHECK(pttl(rw.hold_key(A, 2)) > 59000);
    CHECK(pttl(rw.hold_key(B, 1)) <= 1000); // only the renewing owner's holds
    CHECK(pttl(tagged.name) > 59000);
    CHECK(pttl(tagged.hold_key(A, 1)) > 59000);
    CHECK_EQ(pttl("rw-renew-str"), -1);
    CHECK(str("GET %s", "rw-renew-str") == "foreign");
    CHECK_EQ(exists("rw-renew-none"), 0);
    CHECK(pttl(longer.name) > 119000); // a longer hold of B is not cut to 60 s
    CHECK(pttl(longer.hold_key(A, 1)) > 59000);
}

TEST_CASE(rw_latch_answers_a_retried_release)
{
    Conn c;
    REQUIRE(c.c);
    Rw rw("rw-latch");
    Reply a1(rw.read(c, A, 30000));
    Reply a2(rw.read(c, A, 30000));
    std::string l1 = new_latch(rw.name), l2 = new_latch(rw.name);
    {
        Reply r(rw.read_release(c, A, l1));
        CHECK_EQ(r.i(), 0);
        Reply again(rw.read_release(c, A, l1));
        CHECK_EQ(again.i(), 0);
        CHECK_EQ(hget(rw.name, A), 1); // decremented once
        CHECK(pttl(l1) > 0 && pttl(l1) <= 20000);
    }
    {
        Reply r(rw.read_release(c, A, l2));
        CHECK_EQ(r.i(), 1);
        CHECK_EQ(exists(rw.name), 0);
        CHECK(str("GET %s", l2) == "1");
    }
    Reply w(rw.write(c, B, 30000));
    Reply w2(rw.write(c, B, 30000));
    {
        Reply late(rw.read_release(c, A, l2)); // late retry: first answer, B untouched
        CHECK_EQ(late.i(), 1);
        CHECK_EQ(hget(rw.name, B + ":write"), 2);
    }
    std::string l3 = new_latch(rw.name), l4 = new_latch(rw.name);
    {
        Reply r(rw.write_release(c, B, l3));
        CHECK_EQ(r.i(), 0);
        Reply again(rw.write_release(c, B, l3));
        CHECK_EQ(again.i(), 0);
        CHECK_EQ(hget(rw.name, B + ":write"), 1);
        Reply fin(rw.write_release(c, B, l4));
        CHECK_EQ(fin.i(), 1);
        CHECK_EQ(exists(rw.name), 0);
    }
    Reply r3(rw.read(c, C, 30000));
    {
        Reply late(rw.write_release(c, B, l4));
        CHECK_EQ(late.i(), 1);
        CHECK_EQ(hget(rw.name, C), 1);
    }
    // Not the owner: no latch is written, so a later real answer is not masked.
    std::string l5 = new_latch(rw.name);
    Reply no(rw.read_release(c, D, l5));
    CHECK(no.nil());
    CHECK_EQ(exists(l5), 0);
}

TEST_CASE(rw_release_of_a_missing_lock_and_wrong_types)
{
    Conn c;
    REQUIRE(c.c);
    Rw rw("rw-missing");
    Sub sub({rw.channel});
    REQUIRE(sub.ok);
    std::string l1 = new_latch(rw.name), l2 = new_latch(rw.name);
    {
        // Gone (expired, forced off): not the caller's any more, so nil as in
        // Redisson; waiters are still woken and the latch says 1 to a retry.
        Reply r(rw.read_release(c, A, l1));
        CHECK(r.nil());
        CHECK(str("GET %s", l1) == "1");
        std::string ch, msg;
        CHECK(sub.next(2000, &ch, &msg));
        CHECK(ch == rw.channel && msg == "0");
        Reply w(rw.write_release(c, A, l2));
        CHECK(w.nil());
        CHECK(str("GET %s", l2) == "1");
        CHECK(sub.next(2000, &ch, &msg));
        CHECK(ch == rw.channel && msg == "1");
        CHECK_EQ(exists(rw.name), 0);
        Reply r2(rw.read_release(c, A, l1)); // the retry of a lost answer
        CHECK_EQ(r2.i(), 1);
        Reply w2(rw.write_release(c, A, l2));
        CHECK_EQ(w2.i(), 1);
    }
    Rw bad("rw-wrongtype");
    freeReplyObject(redisCommand(c.c, "SET %s %s", bad.name.c_str(), "foreign"));
    {
        Reply r1(bad.read(c, A, 30000));
        CHECK(r1.error_has("WRONGTYPE"));
        Reply r2(bad.write(c, A, 30000));
        CHECK(r2.error_has("WRONGTYPE"));
        Reply r3(bad.read_release(c, A, new_latch(bad.name)));
        CHECK(r3.error_has("WRONGTYPE"));
        Reply r4(bad.write_release(c, A, new_latch(bad.name)));
        CHECK(r4.error_has("WRONGTYPE"));
        CHECK(str("GET %s", bad.name) == "foreign");
        CHECK_EQ(pttl(bad.name), -1);
        CHECK_EQ(exists(bad.hold_key(A, 1)), 0);
    }
}

// Each side's force unlock deletes the lock only while it is held in that
// mode, and wakes waiters with that side's message (Redisson's
// RedissonReadLock/RedissonWriteLock.forceUnlockAsync).
TEST_CASE(rw_force_release_deletes_only_its_own_mode)
{
    Conn c;
    REQUIRE(c.c);
    Rw rw("rw-force");
    Sub sub({rw.channel});
    REQUIRE(sub.ok);
    std::string ch, msg;
    CHECK_EQ(Reply(rw.force(c, "read")).i(), 0); // free
    CHECK_EQ(Reply(rw.force(c, "write")).i(), 0);

    Reply w(rw.write(c, A, 30000));
    Reply wr(rw.read(c, A, 30000)); // the writer reads too: still mode=write
    CHECK_EQ(Reply(rw.force(c, "read")).i(), 0);
    CHECK_EQ(hget(rw.name, A + ":write"), 1);
    CHECK_EQ(hget(rw.name, A), 1);
    CHECK_EQ(Reply(rw.force(c, "write")).i(), 1);
    CHECK_EQ(exists(rw.name), 0);
    CHECK(sub.next(2000, &ch, &msg));
    CHECK(ch == rw.channel && msg == "1"); // every waiter: readers may share

    Reply r1(rw.read(c, A, 30000));
    Reply r2(rw.read(c, B, 30000));
    CHECK_EQ(Reply(rw.force(c, "write")).i(), 0);
    CHECK_EQ(hget(rw.name, A), 1);
    CHECK_EQ(hget(rw.name, B), 1);
    CHECK_EQ(Reply(rw.force(c, "read")).i(), 1);
    CHECK_EQ(exists(rw.name), 0);
    CHECK(sub.next(2000, &ch, &msg));
    CHECK(ch == rw.channel && msg == "0");

    // A reentrant lock under the name (no mode) is neither side's.
    freeReplyObject(redisCommand(c.c, "HSET %s %s 1", rw.name.c_str(), C.c_str()));
    CHECK_EQ(Reply(rw.force(c, "read")).i(), 0);
    CHECK_EQ(Reply(rw.force(c, "write")).i(), 0);
    CHECK_EQ(hget(rw.name, C), 1);

    Rw bad("rw-force-wrongtype");
    freeReplyObject(redisCommand(c.c, "SET %s %s", bad.name.c_str(), "foreign"));
    CHECK(Reply(bad.force(c, "read")).error_has("WRONGTYPE"));
    CHECK(Reply(bad.force(c, "write")).error_has("WRONGTYPE"));
    CHECK(str("GET %s", bad.name) == "foreign");
    CHECK(sub.quiet(200)); // none of those published
}

// Each side answers for itself (Redisson's readLock().isLocked(),
// writeLock().isLocked()): readers alone leave the write side unlocked, a
// writer alone the read side; a writer that reads too holds both.
TEST_CASE(rw_is_locked_answers_for_its_own_side)
{
    Conn c;
    REQUIRE(c.c);
    Rw rw("rw-locked");
    CHECK_EQ(rw.is_locked(c, "read"), 0);
    CHECK_EQ(rw.is_locked(c, "write"), 0);
    {
        Reply r(rw.read(c, A, 30000));
        Reply r2(rw.read(c, B, 30000));
        CHECK_EQ(rw.is_locked(c, "read"), 1);
        CHECK_EQ(rw.is_locked(c, "write"), 0);
        freeReplyObject(redisCommand(c.c, "DEL %s", rw.name.c_str()));
    }
    Reply w(rw.write(c, A, 30000));
    Reply w2(rw.write(c, A, 30000)); // re-entry: still one writer field
    CHECK_EQ(rw.is_locked(c, "read"), 0);
    CHECK_EQ(rw.is_locked(c, "write"), 1);
    Reply wr(rw.read(c, A, 30000)); // the writer reads too
    CHECK_EQ(rw.is_locked(c, "read"), 1);
    CHECK_EQ(rw.is_locked(c, "write"), 1);

    // A reentrant lock under the name (no mode) is neither side's.
    freeReplyObject(redisCommand(c.c, "DEL %s", rw.name.c_str()));
    freeReplyObject(redisCommand(c.c, "HSET %s %s 1", rw.name.c_str(), C.c_str()));
    CHECK_EQ(rw.is_locked(c, "read"), 0);
    CHECK_EQ(rw.is_locked(c, "write"), 0);

    Rw bad("rw-locked-wrongtype");
    freeReplyObject(redisCommand(c.c, "SET %s %s", bad.name.c_str(), "foreign"));
    CHECK(Reply(c.eval("rw_is_locked", {bad.name}, {"read"})).error_has("WRONGTYPE"));
    CHECK(Reply(c.eval("rw_is_locked", {bad.name}, {"write"})).error_has("WRONGTYPE"));
}
