// SPDX-License-Identifier: BSD-3-Clause
// Semaphores (plain and expirable) and the countdown latch against a real
// redis-server: permits, waiting on the channel and on permit deadlines, the
// watchdog, misuse, a chaos run that checks no permit is ever counted twice,
// and interplay with a Redisson-protocol client (RedissonSide below) that
// sends Redisson 4.7's own scripts.
#include <hiredis/hiredis.h>
#include <string.h>
#include <time.h>

#include <atomic>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "check.hpp"
#include "clients.hpp"
#include "edgelock/edgelock.h"
#include "redis_server.hpp"

namespace
{

edgelock_lock make_kind(edgelock_client *c, edgelock_lock_kind kind, const char *name)
{
    edgelock_lock lk = {0};
    edgelock_lock_new_kind(c, kind, name, strlen(name), &lk);
    return lk;
}

long long wall_ms()
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

std::atomic<int> g_lost{0};
void on_lost(edgelock_client *, edgelock_lock, uint64_t, void *)
{
    g_lost++;
}

edgelock_client *short_lease_client(const char *url)
{
    return make_client(url, [](edgelock_config *cfg) {
        cfg->watchdog_lease_ms = 600; // as test_watchdog's: renewals keep up under qemu
        cfg->on_lock_lost = on_lost;
    });
}

// Redisson 4.7's RPermitExpirableSemaphore and RCountDownLatch scripts, step
// for step (REDISSON-SEMAPHORES.md), sent over a plain hiredis connection as
// a Java service's Redisson would: the other side of the interop tests.
struct RedissonSide {
    redisContext *ctx;
    explicit RedissonSide(const RedisServer &r) : ctx(r.connect()) {}
    ~RedissonSide() { redisFree(ctx); }

    long long integer(redisReply *rep)
    {
        long long v = rep && rep->type == REDIS_REPLY_INTEGER ? rep->integer : -999;
        freeReplyObject(rep);
        return v;
    }

    long long try_set_permits(const std::string &name, int n)
    {
        std::string ch = "redisson_sc:{" + name + "}";
        return integer((redisReply *)redisCommand(
            ctx, "EVAL %s 2 %s %s %d publish",
            "local value = redis.call('get', KEYS[1]); if (value == false) then redis.call('set', KEYS[1], "
            "ARGV[1]); redis.call(ARGV[2], KEYS[2], ARGV[1]); return 1;end;return 0;",
            name.c_str(), ch.c_str(), n));
    }

    // tryAcquire(1, lease): the id as hex, "" when not taken.
    std::string try_acquire(const std::string &name, long long lease_ms)
    {
        unsigned char id[16];
        std::random_device rd;
        for (unsigned char &b : id)
            b = (unsigned char)rd();
        long long now = (long long)wall_ms();
        long long deadline = lease_ms > 0 ? now + lease_ms : 922337203685477LL;
        std::string zset = "{" + name + "}:timeout", ch = "redisson_sc:{" + name + "}";
        const char *script =
            "local expiredIds = redis.call('zrangebyscore', KEYS[2], 0, ARGV[3], 'limit', 0, ARGV[1]); "
            "if #expiredIds > 0 then redis.call('zrem', KEYS[2], unpack(expiredIds)); "
            "local value = redis.call('incrby', KEYS[1], #expiredIds); "
            "if tonumber(value) > 0 then redis.call(ARGV[5], KEYS[3], value); end;end; "
            "local value = redis.call('get', KEYS[1]); "
            "if (value ~= false and tonumber(value) >= tonumber(ARGV[1])) then "
            "redis.call('decrby', KEYS[1], ARGV[1]); "
            "for i = 6, #ARGV, 1 do redis.call('zadd', KEYS[2], ARGV[2], ARGV[i]); end; "
            "local ttl = redis.call('pttl', KEYS[1]); if ttl > 0 then redis.call('pexpire', KEYS[2], ttl); "
            "end; "
            "return 'OK'; end; "
            "local v = redis.call('zrange', KEYS[2], 0, 0, 'WITHSCORES'); "
            "if v[1] ~= nil and v[2] ~= ARGV[4] then return ':' .. tostring(v[2]); end return nil;";
        auto *rep = (redisReply *)redisCommand(
            ctx, "EVAL %s 3 %s %s %s 1 %lld %lld 922337203685477 publish %b", script, name.c_str(),
            zset.c_str(), ch.c_str(), deadline, now, id, sizeof(id));
        bool ok = rep && (rep->type == REDIS_REPLY_STATUS || rep->type == REDIS_REPLY_STRING) &&
                  strcmp(rep->str, "OK") == 0;
        freeReplyObject(rep);
        if (!ok)
            return "";
        char hex[33];
        for (int i = 0; i < 16; i++)
            snprintf(hex + 2 * i, 3, "%02x", id[i]);
        return hex;
    }

    // tryRelease(id): 1 released, 0 not.
    long long try_release(const std::string &name, const std::string &hex)
    {
        unsigned char id[16];
        for (int i = 0; i < 16; i++)
            id[i] = (unsigned char)strtoul(hex.substr(2 * i, 2).c_str(), nullptr, 16);
        std::string zset = "{" + name + "}:timeout", ch = "redisson_sc:{" + name + "}";
        const char *script = "local expire = redis.call('zscore', KEYS[3], ARGV[1]);"
                             "local removed = redis.call('zrem', KEYS[3], ARGV[1]);"
                             "if tonumber(removed) ~= 1 then return 0;end;"
                             "local value = redis.call('incrby', KEYS[1], ARGV[2]); "
                             "redis.call(ARGV[4], KEYS[2], value); "
                             "if tonumber(expire) <= tonumber(ARGV[3]) then return 0;end;return 1;";
        return integer((redisReply *)redisCommand(ctx, "EVAL %s 3 %s %s %s %b 1 %lld publish", script,
                                                  name.c_str(), ch.c_str(), zset.c_str(), id, sizeof(id),
                                                  (long long)wall_ms()));
    }

    long long latch_try_set(const std::string &name, int count)
    {
        std::string ch = "redisson_countdownlatch__channel__{" + name + "}";
        return integer((redisReply *)redisCommand(
            ctx, "EVAL %s 2 %s %s 1 %d publish",
            "if redis.call('exists', KEYS[1]) == 0 then redis.call('set', KEYS[1], ARGV[2]); "
            "redis.call(ARGV[3], KEYS[2], ARGV[1]); return 1 else return 0 end",
            name.c_str(), ch.c_str(), count));
    }

    void latch_count_down(const std::string &name)
    {
        std::string ch = "redisson_countdownlatch__channel__{" + name + "}";
        freeReplyObject(redisCommand(ctx, "EVAL %s 2 %s %s 0 publish",
                                     "local v = redis.call('decr', KEYS[1]);"
                                     "if v <= 0 then redis.call('del', KEYS[1]) end;"
                                     "if v == 0 then redis.call(ARGV[2], KEYS[2], ARGV[1]) end;",
                                     name.c_str(), ch.c_str()));
    }
};

// A Redisson-side subscriber: the first message on channel, within ms.
std::string first_message(const RedisServer &r, const std::string &channel, std::atomic<bool> *subscribed,
                          unsigned ms)
{
    redisContext *s = r.connect();
    struct timeval tv = {(time_t)(ms / 1000), (suseconds_t)(ms % 1000) * 1000};
    redisSetTimeout(s, tv);
    freeReplyObject(redisCommand(s, "SUBSCRIBE %s", channel.c_str()));
    *subscribed = true;
    std::string got;
    void *rep = nullptr;
    if (redisGetReply(s, &rep) == REDIS_OK && rep) {
        auto *m = (redisReply *)rep;
        if (m->type == REDIS_REPLY_ARRAY && m->elements == 3 && m->element[2]->type == REDIS_REPLY_STRING)
            got.assign(m->element[2]->str, m->element[2]->len);
        freeReplyObject(rep);
    }
    redisFree(s);
    return got;
}

} // namespace

TEST_CASE(three_permits_fourth_waits_and_is_woken_by_the_release)
{
    RedisServer &r = shared_server();
    std::vector<edgelock_client *> cs;
    std::vector<edgelock_lock> ls;
    for (int i = 0; i < 4; i++) {
        cs.push_back(make_client(r.url()));
        REQUIRE(cs.back());
        ls.push_back(make_kind(cs.back(), EDGELOCK_PERMIT_SEMAPHORE, "sem:uplink"));
    }
    int set = -1;
    CHECK_ST(edgelock_semaphore_try_set_permits(cs[0], ls[0], 3, &set), EDGELOCK_OK);
    CHECK_EQ(set, 1);
    CHECK_ST(edgelock_semaphore_try_set_permits(cs[1], ls[1], 5, &set), EDGELOCK_OK);
    CHECK_EQ(set, 0); // an existing semaphore keeps its size
    for (int i = 0; i < 3; i++)
        CHECK_ST(edgelock_try_lock(cs[i], ls[i], 0, EDGELOCK_LEASE_WATCHDOG), EDGELOCK_OK);
    CHECK_EQ(redis_integer(r, "ZCARD {sem:uplink}:timeout"), 3);
    CHECK_ST(edgelock_try_lock(cs[3], ls[3], 0, EDGELOCK_LEASE_WATCHDOG), EDGELOCK_ERR_WAIT_TIMEOUT);

    // The watchdog lease (30 s) names a deadline far beyond the wait: only the
    // release message can wake the fourth in time.
    std::atomic<int> got{-100}, gave_back{-100};
    std::atomic<bool> may_give_back{false};
    edgelock_semaphore_info info;
    std::thread fourth([&] {
        got = edgelock_try_lock(cs[3], ls[3], 20000, EDGELOCK_LEASE_WATCHDOG);
        while (!may_give_back)
            sleep_ms(2);
        gave_back = edgelock_unlock(cs[3], ls[3], nullptr);
    });
    CHECK(wait_until(10000, [&] {
        return edgelock_semaphore_info_get(cs[0], ls[0], &info) == EDGELOCK_OK && info.subscribers == 1;
    }));
    int released = -1;
    CHECK_ST(edgelock_unlock(cs[1], ls[1], &released), EDGELOCK_OK);
    CHECK_EQ(released, 1);
    CHECK(wait_until(20000, [&] { return got.load() != -100; }));
    CHECK_ST((edgelock_status)got.load(), EDGELOCK_OK);
    CHECK_ST(edgelock_semaphore_info_get(cs[0], ls[0], &info), EDGELOCK_OK);
    CHECK_EQ(info.available, 0);
    CHECK_EQ(info.acquired, 3);
    may_give_back = true;
    fourth.join();
    CHECK_ST((edgelock_status)gave_back.load(), EDGELOCK_OK);
    for (int i : {0, 2})
        CHECK_ST(edgelock_unlock(cs[i], ls[i], nullptr), EDGELOCK_OK);
    CHECK_EQ(redis_integer(r, "GET sem:uplink"), 3);
    CHECK_EQ(redis_integer(r, "ZCARD {sem:uplink}:timeout"), 0);
    for (int i = 0; i < 4; i++) {
        CHECK(tables_idle(cs[i]));
        edgelock_client_destroy(cs[i]);
    }
}

TEST_CASE(several_permits_at_once_all_or_none)
{
    RedisServer &r = shared_server();
    edgelock_client *c = make_client(r.url());
    REQUIRE(c);
    edgelock_lock s = make_kind(c, EDGELOCK_PERMIT_SEMAPHORE, "sem:multi");
    CHECK_ST(edgelock_semaphore_try_set_permits(c, s, 4, nullptr), EDGELOCK_OK);
    CHECK_ST(edgelock_semaphore_try_acquire(c, s, 5, 0, 10000), EDGELOCK_ERR_WAIT_TIMEOUT);
    CHECK_EQ(redis_integer(r, "GET sem:multi"), 4);
    CHECK_ST(edgelock_semaphore_try_acquire(c, s, 3, 0, 10000), EDGELOCK_OK);
    CHECK_EQ(redis_integer(r, "GET sem:multi"), 1);
    CHECK_EQ(redis_integer(r, "ZCARD {sem:multi}:timeout"), 3);
    // The ids: distinct, 32 hex digits, each in the zset as 16 raw bytes.
    char ids[3][33];
    for (uint32_t k = 0; k < 3; k++)
        CHECK_ST(edgelock_permit_id(c, s, edgelock_current_owner(), k, ids[k]), EDGELOCK_OK);
    CHECK(strlen(ids[0]) == 32 && strcmp(ids[0], ids[1]) != 0 && strcmp(ids[1], ids[2]) != 0);
    char none[33];
    CHECK_ST(edgelock_permit_id(c, s, edgelock_current_owner(), 3, none), EDGELOCK_ERR_NOT_OWNER);
    // One group per owner and handle.
    CHECK_ST(edgelock_semaphore_try_acquire(c, s, 1, 0, 10000), EDGELOCK_ERR_BUSY);
    int released = -1;
    CHECK_ST(edgelock_unlock(c, s, &released), EDGELOCK_OK);
    CHECK_EQ(released, 1);
    CHECK_ST(edgelock_unlock(c, s, nullptr), EDGELOCK_ERR_NOT_OWNER);
    CHECK_EQ(redis_integer(r, "GET sem:multi"), 4);
    CHECK(tables_idle(c));
    edgelock_client_destroy(c);
}

// Expiry publishes nothing: a waiter must wake at the deadline Redis names.
TEST_CASE(waiter_wakes_at_a_lapsed_permits_deadline)
{
    RedisServer &r = shared_server();
    edgelock_client *holder = make_client(r.url());
    edgelock_client *waiter = make_client(r.url());
    REQUIRE(holder && waiter);
    edgelock_lock h = make_kind(holder, EDGELOCK_PERMIT_SEMAPHORE, "sem:lapse");
    edgelock_lock w = make_kind(waiter, EDGELOCK_PERMIT_SEMAPHORE, "sem:lapse");
    CHECK_ST(edgelock_semaphore_try_set_permits(holder, h, 1, nullptr), EDGELOCK_OK);
    CHECK_ST(edgelock_try_lock(holder, h, 0, 400), EDGELOCK_OK);
    uint64_t t0 = mono_ms();
    CHECK_ST(edgelock_try_lock(waiter, w, 20000, EDGELOCK_LEASE_WATCHDOG), EDGELOCK_OK);
    CHECK(mono_ms() - t0 >= 300); // not before the holder's lease ran out
    int64_t left = 0;
    CHECK_ST(edgelock_lock_valid(holder, h, edgelock_current_owner(), &left), EDGELOCK_ERR_NOT_OWNER);
    CHECK_ST(edgelock_unlock(holder, h, nullptr), EDGELOCK_ERR_NOT_OWNER); // lapsed by its fixed lease
    CHECK_ST(edgelock_unlock(waiter, w, nullptr), EDGELOCK_OK);
    CHECK_EQ(redis_integer(r, "GET sem:lapse"), 1);
    CHECK(tables_idle(holder) && tables_idle(waiter));
    edgelock_client_destroy(holder);
    edgelock_client_destroy(waiter);
}

TEST_CASE(watchdog_renews_permits_and_reports_their_loss)
{
    RedisServer &r = shared_server();
    edgelock_client *c = short_lease_client(r.url());
    REQUIRE(c);
    edgelock_lock s = make_kind(c, EDGELOCK_PERMIT_SEMAPHORE, "sem:dog");
    CHECK_ST(edgelock_semaphore_try_set_permits(c, s, 2, nullptr), EDGELOCK_OK);
    CHECK_ST(edgelock_semaphore_try_acquire(c, s, 2, 0, EDGELOCK_LEASE_WATCHDOG), EDGELOCK_OK);
    sleep_ms(2000); // more than three leases
    int64_t left = 0;
    CHECK_ST(edgelock_lock_valid(c, s, edgelock_current_owner(), &left), EDGELOCK_OK);
    // A reclaim by anyone (here Redisson's availablePermits-like info) finds
    // them alive: renewed, not lapsed.
    edgelock_semaphore_info info;
    CHECK_ST(edgelock_semaphore_info_get(c, s, &info), EDGELOCK_OK);
    CHECK_EQ(info.acquired, 2);
    CHECK_EQ(info.available, 0);
    // Someone releases one of them by its id (a Java service's release(id)):
    // the watchdog finds the group broken and reports the loss.
    char id[33];
    CHECK_ST(edgelock_permit_id(c, s, edgelock_current_owner(), 1, id), EDGELOCK_OK);
    int lost_before = g_lost.load();
    RedissonSide java(r);
    CHECK_EQ(java.try_release("sem:dog", id), 1);
    CHECK(wait_until(10000, [&] { return g_lost.load() > lost_before; }));
    CHECK_ST(edgelock_lock_valid(c, s, edgelock_current_owner(), &left), EDGELOCK_ERR_LOST);
    CHECK_ST(edgelock_unlock(c, s, nullptr), EDGELOCK_ERR_LOST);
    CHECK_ST(edgelock_unlock(c, s, nullptr), EDGELOCK_ERR_NOT_OWNER);
    // The other permit, no longer renewed, comes back after its lease.
    CHECK(wait_until(10000, [&] {
        return edgelock_semaphore_info_get(c, s, &info) == EDGELOCK_OK && info.available == 2;
    }));
    CHECK(tables_idle(c));
    // After a loss the owner can take again at once: the loss marker is no
    // take in progress (it answered BUSY until the owner's unlock cleared it).
    CHECK_ST(edgelock_semaphore_try_acquire(c, s, 1, 0, EDGELOCK_LEASE_WATCHDOG), EDGELOCK_OK);
    CHECK_ST(edgelock_permit_id(c, s, edgelock_current_owner(), 0, id), EDGELOCK_OK);
    CHECK_EQ(java.try_release("sem:dog", id), 1);
    CHECK(wait_until(10000, [&] { return g_lost.load() > lost_before + 1; }));
    CHECK_ST(edgelock_semaphore_try_acquire(c, s, 1, 0, EDGELOCK_LEASE_WATCHDOG), EDGELOCK_OK);
    CHECK_ST(edgelock_unlock(c, s, nullptr), EDGELOCK_OK);
    CHECK(tables_idle(c));
    edgelock_client_destroy(c);
}

TEST_CASE(plain_semaphore_counts_and_refuses_what_it_cannot_keep)
{
    RedisServer &r = shared_server();
    edgelock_client *a = make_client(r.url());
    edgelock_client *b = make_client(r.url());
    REQUIRE(a && b);
    edgelock_lock sa = make_kind(a, EDGELOCK_SEMAPHORE, "sem:plain");
    edgelock_lock sb = make_kind(b, EDGELOCK_SEMAPHORE, "sem:plain");
    // Never set: no permits; a take waits.
    CHECK_ST(edgelock_try_lock(a, sa, 0, EDGELOCK_LEASE_WATCHDOG), EDGELOCK_ERR_WAIT_TIMEOUT);
    CHECK_ST(edgelock_try_lock(a, sa, 0, 1000), EDGELOCK_ERR_INVALID_ARG); // no leases here
    int64_t after = 0;
    CHECK_ST(edgelock_semaphore_add_permits(a, sa, 2, &after), EDGELOCK_OK);
    CHECK_EQ(after, 2);
    CHECK_ST(edgelock_try_lock(a, sa, 0, EDGELOCK_LEASE_WATCHDOG), EDGELOCK_OK);
    CHECK_ST(edgelock_try_lock(a, sa, 0, EDGELOCK_LEASE_WATCHDOG), EDGELOCK_OK); // re-entry: one more
    CHECK_ST(edgelock_try_lock(b, sb, 0, EDGELOCK_LEASE_WATCHDOG), EDGELOCK_ERR_WAIT_TIMEOUT);
    std::atomic<int> got{-100}, gave_back{-100};
    std::thread t([&] {
        got = edgelock_try_lock(b, sb, 20000, EDGELOCK_LEASE_WATCHDOG);
        gave_back = edgelock_unlock(b, sb, nullptr);
    });
    sleep_ms(100);
    int released = -1;
    CHECK_ST(edgelock_unlock(a, sa, &released), EDGELOCK_OK);
    CHECK_EQ(released, 0); // a permit remains
    t.join();
    CHECK_ST((edgelock_status)got.load(), EDGELOCK_OK);
    CHECK_ST((edgelock_status)gave_back.load(), EDGELOCK_OK);
    CHECK_ST(edgelock_unlock(a, sa, &released), EDGELOCK_OK);
    CHECK_EQ(released, 1);
    // A give-back without a take would grow the semaphore: refused locally.
    CHECK_ST(edgelock_unlock(a, sa, nullptr), EDGELOCK_ERR_NOT_OWNER);
    CHECK_ST(edgelock_unlock(b, sb, nullptr), EDGELOCK_ERR_NOT_OWNER); // that thread gave its back
    CHECK_EQ(redis_integer(r, "GET sem:plain"), 2);
    edgelock_semaphore_info info;
    CHECK_ST(edgelock_semaphore_info_get(a, sa, &info), EDGELOCK_OK);
    CHECK_EQ(info.available, 2);
    CHECK_EQ(info.acquired, 0);
    CHECK_ST(edgelock_semaphore_add_permits(a, sa, -2, &after), EDGELOCK_OK);
    CHECK_EQ(after, 0);
    CHECK(tables_idle(a) && tables_idle(b));
    edgelock_client_destroy(a);
    edgelock_client_destroy(b);
}

TEST_CASE(misuse_gets_a_status_and_changes_nothing)
{
    RedisServer &r = shared_server();
    edgelock_client *c = make_client(r.url());
    REQUIRE(c);
    edgelock_lock lock = make_lock(c, "sem:misuse-lock");
    edgelock_lock sem = make_kind(c, EDGELOCK_PERMIT_SEMAPHORE, "sem:misuse");
    edgelock_lock plain = make_kind(c, EDGELOCK_SEMAPHORE, "sem:misuse-plain");
    edgelock_lock latch = make_kind(c, EDGELOCK_LATCH, "sem:misuse-latch");
    edgelock_semaphore_info info;
    int flag = 0;
    int64_t v = 0;
    CHECK_ST(edgelock_semaphore_try_set_permits(c, lock, 1, &flag), EDGELOCK_ERR_INVALID_ARG);
    CHECK_ST(edgelock_semaphore_try_set_permits(c, latch, 1, &flag), EDGELOCK_ERR_INVALID_ARG);
    CHECK_ST(edgelock_semaphore_try_set_permits(c, sem, -1, &flag), EDGELOCK_ERR_INVALID_ARG);
    CHECK_ST(edgelock_semaphore_info_get(c, sem, nullptr), EDGELOCK_ERR_INVALID_ARG);
    CHECK_ST(edgelock_semaphore_info_get(c, latch, &info), EDGELOCK_ERR_INVALID_ARG);
    CHECK_ST(edgelock_semaphore_try_acquire(c, sem, 0, 0, 1000), EDGELOCK_ERR_INVALID_ARG);
    CHECK_ST(edgelock_semaphore_try_acquire(c, sem, EDGELOCK_MAX_PERMITS + 1, 0, 1000),
             EDGELOCK_ERR_INVALID_ARG);
    CHECK_ST(edgelock_semaphore_try_acquire(c, lock, 2, 0, 1000), EDGELOCK_ERR_INVALID_ARG);
    CHECK_ST(edgelock_try_lock(c, latch, 0, 1000), EDGELOCK_ERR_INVALID_ARG);
    CHECK_ST(edgelock_unlock(c, latch, nullptr), EDGELOCK_ERR_INVALID_ARG);
    CHECK_ST(edgelock_is_locked(c, sem, &flag), EDGELOCK_ERR_INVALID_ARG);
    CHECK_ST(edgelock_force_unlock(c, plain, &flag), EDGELOCK_ERR_INVALID_ARG);
    CHECK_ST(edgelock_remaining_ttl(c, sem, &v), EDGELOCK_ERR_INVALID_ARG);
    CHECK_ST(edgelock_permit_release(c, sem, "xyz"), EDGELOCK_ERR_INVALID_ARG);
    CHECK_ST(edgelock_permit_release(c, sem, "0123456789abcdef0123456789abcdeg"), EDGELOCK_ERR_INVALID_ARG);
    CHECK_ST(edgelock_permit_release(c, sem, nullptr), EDGELOCK_ERR_INVALID_ARG);
    CHECK_ST(edgelock_permit_release(c, plain, "0123456789abcdef0123456789abcdef"), EDGELOCK_ERR_INVALID_ARG);
    CHECK_ST(edgelock_permit_release(c, sem, "0123456789abcdef0123456789abcdef"), EDGELOCK_ERR_NOT_OWNER);
    char id[33];
    CHECK_ST(edgelock_permit_id(c, plain, edgelock_current_owner(), 0, id), EDGELOCK_ERR_INVALID_ARG);
    CHECK_ST(edgelock_latch_try_set_count(c, latch, 0, &flag), EDGELOCK_ERR_INVALID_ARG);
    CHECK_ST(edgelock_latch_try_set_count(c, sem, 1, &flag), EDGELOCK_ERR_INVALID_ARG);
    CHECK_ST(edgelock_latch_await(c, sem, 0), EDGELOCK_ERR_INVALID_ARG);
    CHECK_ST(edgelock_latch_count_down(c, lock, &v), EDGELOCK_ERR_INVALID_ARG);
    // No member of a MultiLock or RedLock: refused before anything is taken.
    edgelock_member members[2] = {{c, lock}, {c, sem}};
    CHECK_ST(edgelock_multi_try_lock(members, 2, 0, 1000), EDGELOCK_ERR_INVALID_ARG);
    CHECK_ST(edgelock_redlock_try_lock(members, 2, 0, 1000, nullptr), EDGELOCK_ERR_INVALID_ARG);
    CHECK_EQ(redis_integer(r, "EXISTS sem:misuse sem:misuse-plain sem:misuse-latch sem:misuse-lock"), 0);
    CHECK(tables_idle(c));
    edgelock_client_destroy(c);
}

// Threads on several clients take and give back permits, some with leases
// that run out; a watcher reads free + taken in one script call the whole
// time. It must never exceed the size: no permit counted twice.
TEST_CASE(chaos_never_counts_a_permit_twice)
{
    RedisServer &r = shared_server();
    const int kPermits = 3;
    std::vector<edgelock_client *> cs;
    for (int i = 0; i < 3; i++) {
        cs.push_back(short_lease_client(r.url()));
        REQUIRE(cs.back());
    }
    edgelock_lock first = make_kind(cs[0], EDGELOCK_PERMIT_SEMAPHORE, "sem:chaos");
    CHECK_ST(edgelock_semaphore_try_set_permits(cs[0], first, kPermits, nullptr), EDGELOCK_OK);
    std::atomic<bool> stop{false};
    std::atomic<long long> worst{0}, samples{0};
    std::thread watcher([&] {
        redisContext *ctx = r.connect();
        while (!stop) {
            auto *rep = (redisReply *)redisCommand(
                ctx, "EVAL %s 2 sem:chaos {sem:chaos}:timeout",
                "return (tonumber(redis.call('get', KEYS[1])) or 0) + redis.call('zcard', KEYS[2])");
            if (rep && rep->type == REDIS_REPLY_INTEGER) {
                long long v = rep->integer;
                if (v > worst)
                    worst = v;
                samples++;
            }
            freeReplyObject(rep);
        }
        redisFree(ctx);
    });
    std::vector<std::thread> workers;
    std::atomic<long long> taken{0};
    for (int t = 0; t < 6; t++) {
        workers.emplace_back([&, t] {
            edgelock_client *c = cs[t % 3];
            edgelock_lock s = make_kind(c, EDGELOCK_PERMIT_SEMAPHORE, "sem:chaos");
            std::mt19937 rng(t);
            uint64_t end = mono_ms() + 2500;
            while (mono_ms() < end) {
                int64_t lease = rng() % 3 == 0 ? 50 + rng() % 100 : EDGELOCK_LEASE_WATCHDOG;
                uint32_t n = 1 + rng() % 2;
                if (edgelock_semaphore_try_acquire(c, s, n, 200, lease) != EDGELOCK_OK)
                    continue;
                taken++;
                sleep_ms(rng() % 30);
                edgelock_unlock(c, s, nullptr); // OK, or NOT_OWNER once a short lease ran out
            }
            while (edgelock_lock_free(c, s) == EDGELOCK_ERR_BUSY)
                sleep_ms(5);
        });
    }
    for (auto &w : workers)
        w.join();
    stop = true;
    watcher.join();
    CHECK(taken > 20);
    CHECK(samples > 20);
    CHECK(worst <= kPermits);
    // Every permit is back once the lapsed ones are reclaimed.
    edgelock_semaphore_info info;
    CHECK(wait_until(10000, [&] {
        return edgelock_semaphore_info_get(cs[0], first, &info) == EDGELOCK_OK && info.available == kPermits;
    }));
    CHECK_EQ(info.acquired, 0);
    for (auto *c : cs) {
        CHECK(tables_idle(c));
        edgelock_client_destroy(c);
    }
}

TEST_CASE(interop_with_redisson_permits_and_wake_ups_both_ways)
{
    RedisServer &r = shared_server();
    RedissonSide java(r);
    edgelock_client *c = make_client(r.url());
    REQUIRE(c);
    edgelock_lock s = make_kind(c, EDGELOCK_PERMIT_SEMAPHORE, "sem:java");
    CHECK_EQ(java.try_set_permits("sem:java", 1), 1);
    // Java takes the only permit; edgelock waits and is woken by Java's release.
    std::string jid = java.try_acquire("sem:java", 60000);
    REQUIRE(jid.size() == 32);
    edgelock_semaphore_info info;
    CHECK_ST(edgelock_semaphore_info_get(c, s, &info), EDGELOCK_OK);
    CHECK_EQ(info.acquired, 1);
    // Java's release from another thread once edgelock waits on the channel.
    edgelock_client *probe = make_client(r.url());
    REQUIRE(probe);
    edgelock_lock ps = make_kind(probe, EDGELOCK_PERMIT_SEMAPHORE, "sem:java");
    std::thread t([&] {
        RedissonSide java2(r);
        edgelock_semaphore_info pi;
        if (wait_until(10000, [&] {
                return edgelock_semaphore_info_get(probe, ps, &pi) == EDGELOCK_OK && pi.subscribers == 1;
            }))
            java2.try_release("sem:java", jid);
    });
    CHECK_ST(edgelock_try_lock(c, s, 20000, EDGELOCK_LEASE_WATCHDOG), EDGELOCK_OK);
    t.join();
    edgelock_client_destroy(probe);
    // Java sees edgelock's permit as one of its own and can release it by id;
    // a Java waiter hears edgelock's release.
    char id[33];
    CHECK_ST(edgelock_permit_id(c, s, edgelock_current_owner(), 0, id), EDGELOCK_OK);
    CHECK(java.try_acquire("sem:java", 60000).empty());
    std::atomic<bool> subscribed{false};
    std::string heard;
    std::thread listener([&] { heard = first_message(r, "redisson_sc:{sem:java}", &subscribed, 20000); });
    CHECK(wait_until(10000, [&] { return subscribed.load(); }));
    sleep_ms(50);
    CHECK_ST(edgelock_unlock(c, s, nullptr), EDGELOCK_OK);
    listener.join();
    CHECK(heard == "1"); // one permit freed, as Redisson's waiters count it
    jid = java.try_acquire("sem:java", 60000);
    CHECK(jid.size() == 32);
    CHECK_EQ(java.try_release("sem:java", jid), 1);
    // An edgelock permit released by Java: edgelock's release then says LOST.
    CHECK_ST(edgelock_try_lock(c, s, 0, 60000), EDGELOCK_OK);
    CHECK_ST(edgelock_permit_id(c, s, edgelock_current_owner(), 0, id), EDGELOCK_OK);
    CHECK_EQ(java.try_release("sem:java", id), 1);
    CHECK_ST(edgelock_unlock(c, s, nullptr), EDGELOCK_ERR_LOST);
    // And edgelock releases a Java permit by its id.
    jid = java.try_acquire("sem:java", 60000);
    REQUIRE(jid.size() == 32);
    CHECK_ST(edgelock_permit_release(c, s, jid.c_str()), EDGELOCK_OK);
    CHECK_ST(edgelock_permit_release(c, s, jid.c_str()), EDGELOCK_ERR_NOT_OWNER);
    CHECK_EQ(redis_integer(r, "GET sem:java"), 1);
    CHECK(tables_idle(c));
    edgelock_client_destroy(c);
}

TEST_CASE(latch_opens_every_waiter_at_zero)
{
    RedisServer &r = shared_server();
    edgelock_client *a = make_client(r.url());
    edgelock_client *b = make_client(r.url());
    REQUIRE(a && b);
    edgelock_lock la = make_kind(a, EDGELOCK_LATCH, "latch:boot");
    edgelock_lock lb = make_kind(b, EDGELOCK_LATCH, "latch:boot");
    CHECK_ST(edgelock_latch_await(a, la, 0), EDGELOCK_OK); // absent: open
    int set = 0;
    CHECK_ST(edgelock_latch_try_set_count(a, la, 2, &set), EDGELOCK_OK);
    CHECK_EQ(set, 1);
    CHECK_ST(edgelock_latch_try_set_count(b, lb, 5, &set), EDGELOCK_OK);
    CHECK_EQ(set, 0);
    CHECK_ST(edgelock_latch_await(a, la, 200), EDGELOCK_ERR_WAIT_TIMEOUT);
    std::atomic<int> got_a{-100}, got_b{-100}, got_b2{-100};
    std::thread ta([&] { got_a = edgelock_latch_await(a, la, 20000); });
    std::thread tb([&] { got_b = edgelock_latch_await(b, lb, 20000); });
    std::thread tb2([&] { got_b2 = edgelock_latch_await(b, lb, 20000); });
    sleep_ms(200);
    int64_t left = -1;
    CHECK_ST(edgelock_latch_count_down(a, la, &left), EDGELOCK_OK);
    CHECK_EQ(left, 1);
    sleep_ms(100);
    CHECK_EQ(got_a.load(), -100); // one still to go
    CHECK_ST(edgelock_latch_count_down(b, lb, &left), EDGELOCK_OK);
    CHECK_EQ(left, 0);
    ta.join();
    tb.join();
    tb2.join();
    CHECK_ST((edgelock_status)got_a.load(), EDGELOCK_OK);
    CHECK_ST((edgelock_status)got_b.load(), EDGELOCK_OK);
    CHECK_ST((edgelock_status)got_b2.load(), EDGELOCK_OK);
    CHECK_EQ(redis_integer(r, "EXISTS latch:boot"), 0);
    CHECK_ST(edgelock_latch_count_down(a, la, &left), EDGELOCK_OK); // absent: nothing
    CHECK_EQ(left, 0);
    CHECK_EQ(redis_integer(r, "EXISTS latch:boot"), 0);
    CHECK_ST(edgelock_latch_count(a, la, &left), EDGELOCK_OK);
    CHECK_EQ(left, 0);
    // A waiter can be cancelled, holding nothing after.
    CHECK_ST(edgelock_latch_try_set_count(a, la, 1, nullptr), EDGELOCK_OK);
    std::atomic<uint64_t> owner{0};
    std::atomic<int> got_c{-100};
    std::thread tc([&] {
        owner = edgelock_current_owner();
        got_c = edgelock_latch_await(a, la, 20000);
    });
    CHECK(wait_until(10000, [&] { return owner.load() != 0 && stats_of(a).waiters == 1; }));
    CHECK_ST(edgelock_cancel(a, owner.load()), EDGELOCK_OK);
    tc.join();
    CHECK_ST((edgelock_status)got_c.load(), EDGELOCK_ERR_CANCELLED);
    redis_integer(r, "DEL latch:boot");
    CHECK(tables_idle(a) && tables_idle(b));
    edgelock_client_destroy(a);
    edgelock_client_destroy(b);
}

TEST_CASE(latch_interop_with_redisson)
{
    RedisServer &r = shared_server();
    RedissonSide java(r);
    edgelock_client *c = make_client(r.url());
    REQUIRE(c);
    edgelock_lock l = make_kind(c, EDGELOCK_LATCH, "latch:java");
    CHECK_EQ(java.latch_try_set("latch:java", 1), 1);
    std::atomic<int> got{-100};
    std::thread t([&] { got = edgelock_latch_await(c, l, 20000); });
    sleep_ms(200);
    java.latch_count_down("latch:java");
    t.join();
    CHECK_ST((edgelock_status)got.load(), EDGELOCK_OK);
    // A Java waiter hears edgelock's zero.
    int set = 0;
    CHECK_ST(edgelock_latch_try_set_count(c, l, 1, &set), EDGELOCK_OK);
    std::atomic<bool> subscribed{false};
    std::string heard;
    std::thread listener([&] {
        heard = first_message(r, "redisson_countdownlatch__channel__{latch:java}", &subscribed, 20000);
    });
    CHECK(wait_until(10000, [&] { return subscribed.load(); }));
    sleep_ms(50);
    CHECK_ST(edgelock_latch_count_down(c, l, nullptr), EDGELOCK_OK);
    listener.join();
    CHECK(heard == "0");
    CHECK(tables_idle(c));
    edgelock_client_destroy(c);
}
