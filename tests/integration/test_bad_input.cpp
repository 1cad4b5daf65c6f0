// SPDX-License-Identifier: BSD-3-Clause
// Bad input through the whole C ABI: every case gets its documented status, no
// crash, no table slot left behind, and nothing changed in Redis.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <atomic>
#include <initializer_list>
#include <thread>

#include "check.hpp"
#include "clients.hpp"
#include "edgelock/edgelock.h"
#include "event_loop.hpp"
#include "redis_server.hpp"

// ---- helpers ----------------------------------------------------------------

// Waits until the client has no command in flight (e.g. the unlock latch DEL
// sent after an unlock), so Redis can be inspected.
static void settle(edgelock_client *c)
{
    for (int i = 0; i < 400; i++) {
        edgelock_stats s;
        if (edgelock_client_stats(c, &s) == EDGELOCK_OK && s.commands == 0)
            return;
        sleep_ms(5);
    }
}

static long long dbsize(const RedisServer &r)
{
    return redis_integer(r, "DBSIZE");
}

static uint32_t locks_in_use(edgelock_client *c)
{
    edgelock_stats s;
    return edgelock_client_stats(c, &s) == EDGELOCK_OK ? s.locks : 9999u;
}

// A callback that must never run.
static std::atomic<int> g_unexpected_callbacks{0};
static void never_called(edgelock_client *, edgelock_lock, edgelock_status, int64_t, void *)
{
    g_unexpected_callbacks++;
}

struct Result {
    int calls = 0;
    edgelock_status st = EDGELOCK_OK;
    int64_t value = -777;
};
static void record(edgelock_client *, edgelock_lock, edgelock_status st, int64_t value, void *user)
{
    Result *r = static_cast<Result *>(user);
    r->calls++;
    r->st = st;
    r->value = value;
}

// tables_idle() without waiting: event-loop clients only make progress while
// the test thread runs their loop.
static bool idle_now(edgelock_client *c)
{
    edgelock_stats s;
    return edgelock_client_stats(c, &s) == EDGELOCK_OK && s.holds == 0 && s.waiters == 0 &&
           s.subscriptions == 0 && s.commands == 0;
}

static edgelock_client *make_loop_client(const RedisServer &r, struct event_base *base,
                                         void (*tweak)(edgelock_config *) = nullptr)
{
    edgelock_config cfg;
    edgelock_config_init(&cfg);
    cfg.url = r.url();
    if (tweak)
        tweak(&cfg);
    edgelock_client *c = nullptr;
    edgelock_status st = edgelock_client_create(&cfg, base, &c);
    if (st != EDGELOCK_OK)
        fprintf(stderr, "client_create(base): %s\n", edgelock_status_str(st));
    return c;
}

// ---- status names -------------------------------------------------------------

TEST_CASE(status_str_names_every_status)
{
    const char *names[20];
    for (int v = 0; v >= -19; v--) {
        const char *s = edgelock_status_str((edgelock_status)v);
        REQUIRE(s != nullptr);
        CHECK(s[0] != 0);
        CHECK(strcmp(s, "unknown status") != 0);
        names[-v] = s;
    }
    for (int i = 0; i < 20; i++)
        for (int j = 0; j < i; j++) {
            if (strcmp(names[i], names[j]) == 0)
                fprintf(stderr, "  status %d and %d share \"%s\"\n", -i, -j, names[i]);
            CHECK(strcmp(names[i], names[j]) != 0);
        }
    static const int unknown[] = {-999, -20, 1, 12345, -2147483647 - 1};
    for (int v : unknown) {
        const char *s = edgelock_status_str((edgelock_status)v);
        REQUIRE(s != nullptr);
        CHECK(strcmp(s, "unknown status") == 0);
    }
}

// ---- NULL pointers --------------------------------------------------------------

TEST_CASE(null_client_and_config)
{
    edgelock_config_init(nullptr);    // no crash
    edgelock_client_destroy(nullptr); // no crash
    CHECK(edgelock_client_id(nullptr) != nullptr);

    edgelock_client *sentinel = reinterpret_cast<edgelock_client *>(0x1);
    edgelock_client *out = sentinel;
    CHECK_ST(edgelock_client_create(nullptr, nullptr, &out), EDGELOCK_ERR_INVALID_ARG);
    CHECK(out == sentinel);
    edgelock_config cfg;
    edgelock_config_init(&cfg);
    CHECK_ST(edgelock_client_create(&cfg, nullptr, nullptr), EDGELOCK_ERR_INVALID_ARG);

    edgelock_lock lk = {12345};
    edgelock_stats st;
    int flag = 0;
    int64_t v = 0;
    CHECK_ST(edgelock_client_stats(nullptr, &st), EDGELOCK_ERR_INVALID_ARG);
    CHECK_ST(edgelock_lock_new(nullptr, "x", 1, &lk), EDGELOCK_ERR_INVALID_ARG);
    CHECK_EQ(lk.id, 12345);
    CHECK_ST(edgelock_lock_free(nullptr, lk), EDGELOCK_ERR_INVALID_ARG);
    CHECK_ST(edgelock_acquire(nullptr, lk), EDGELOCK_ERR_INVALID_ARG);
    CHECK_ST(edgelock_try_lock(nullptr, lk, 0, 1000), EDGELOCK_ERR_INVALID_ARG);
    CHECK_ST(edgelock_unlock(nullptr, lk, &flag), EDGELOCK_ERR_INVALID_ARG);
    CHECK_ST(edgelock_force_unlock(nullptr, lk, &flag), EDGELOCK_ERR_INVALID_ARG);
    CHECK_ST(edgelock_is_locked(nullptr, lk, &flag), EDGELOCK_ERR_INVALID_ARG);
    CHECK_ST(edgelock_is_held_by_current_thread(nullptr, lk, &flag), EDGELOCK_ERR_INVALID_ARG);
    CHECK_ST(edgelock_hold_count(nullptr, lk, &v), EDGELOCK_ERR_INVALID_ARG);
    CHECK_ST(edgelock_remaining_ttl(nullptr, lk, &v), EDGELOCK_ERR_INVALID_ARG);

    g_unexpected_callbacks = 0;
    CHECK_ST(edgelock_lock_async(nullptr, lk, 1, 0, 1000, never_called, nullptr), EDGELOCK_ERR_INVALID_ARG);
    CHECK_ST(edgelock_unlock_async(nullptr, lk, 1, never_called, nullptr), EDGELOCK_ERR_INVALID_ARG);
    CHECK_ST(edgelock_force_unlock_async(nullptr, lk, never_called, nullptr), EDGELOCK_ERR_INVALID_ARG);
    CHECK_ST(edgelock_is_locked_async(nullptr, lk, never_called, nullptr), EDGELOCK_ERR_INVALID_ARG);
    CHECK_ST(edgelock_hold_count_async(nullptr, lk, 1, never_called, nullptr), EDGELOCK_ERR_INVALID_ARG);
    CHECK_ST(edgelock_remaining_ttl_async(nullptr, lk, never_called, nullptr), EDGELOCK_ERR_INVALID_ARG);
    CHECK_EQ(g_unexpected_callbacks.load(), 0);
}

TEST_CASE(null_out_and_name_pointers_on_a_blocking_client)
{
    RedisServer &r = shared_server();
    long long keys = dbsize(r);
    edgelock_client *c = make_client(r.url());
    REQUIRE(c);
    edgelock_lock lk = make_lock(c, "null-args");
    REQUIRE(lk.id != 0);

    edgelock_lock out = {777};
    CHECK_ST(edgelock_lock_new(c, nullptr, 4, &out), EDGELOCK_ERR_INVALID_ARG);
    CHECK_EQ(out.id, 777);
    CHECK_ST(edgelock_lock_new(c, "name", 4, nullptr), EDGELOCK_ERR_INVALID_ARG);
    CHECK_ST(edgelock_client_stats(c, nullptr), EDGELOCK_ERR_INVALID_ARG);
    CHECK_ST(edgelock_is_locked(c, lk, nullptr), EDGELOCK_ERR_INVALID_ARG);
    CHECK_ST(edgelock_is_held_by_current_thread(c, lk, nullptr), EDGELOCK_ERR_INVALID_ARG);
    CHECK_ST(edgelock_hold_count(c, lk, nullptr), EDGELOCK_ERR_INVALID_ARG);
    CHECK_ST(edgelock_remaining_ttl(c, lk, nullptr), EDGELOCK_ERR_INVALID_ARG);
    // `released` may be NULL: an unlock by a non-owner is NOT_OWNER.
    CHECK_ST(edgelock_unlock(c, lk, nullptr), EDGELOCK_ERR_NOT_OWNER);
    CHECK_EQ(locks_in_use(c), 1);

    settle(c);
    CHECK(tables_idle(c));
    CHECK_EQ(dbsize(r), keys);
    CHECK_ST(edgelock_lock_free(c, lk), EDGELOCK_OK);
    edgelock_client_destroy(c);
}

TEST_CASE(null_callback_on_an_event_loop_client)
{
    RedisServer &r = shared_server();
    long long keys = dbsize(r);
    EventLoop loop;
    REQUIRE(loop.ok());
    edgelock_client *c = make_loop_client(r, loop.base());
    REQUIRE(c);
    edgelock_lock lk = {0};
    CHECK_ST(edgelock_lock_new(c, "null-cb", 7, &lk), EDGELOCK_OK);
    CHECK_ST(edgelock_lock_async(c, lk, 1, 0, 1000, nullptr, nullptr), EDGELOCK_ERR_INVALID_ARG);
    CHECK_ST(edgelock_unlock_async(c, lk, 1, nullptr, nullptr), EDGELOCK_ERR_INVALID_ARG);
    CHECK_ST(edgelock_force_unlock_async(c, lk, nullptr, nullptr), EDGELOCK_ERR_INVALID_ARG);
    CHECK_ST(edgelock_is_locked_async(c, lk, nullptr, nullptr), EDGELOCK_ERR_INVALID_ARG);
    CHECK_ST(edgelock_hold_count_async(c, lk, 1, nullptr, nullptr), EDGELOCK_ERR_INVALID_ARG);
    CHECK_ST(edgelock_remaining_ttl_async(c, lk, nullptr, nullptr), EDGELOCK_ERR_INVALID_ARG);
    CHECK(idle_now(c));
    loop.run_for(100);
    CHECK(idle_now(c));
    CHECK_EQ(dbsize(r), keys);
    CHECK_ST(edgelock_lock_free(c, lk), EDGELOCK_OK);
    edgelock_client_destroy(c);
}

// ---- configuration ----------------------------------------------------------------

static edgelock_status create_with(void (*tweak)(edgelock_config *), edgelock_client **out)
{
    edgelock_config cfg;
    edgelock_config_init(&cfg);
    cfg.url = shared_server().url();
    tweak(&cfg);
    return edgelock_client_create(&cfg, nullptr, out);
}

TEST_CASE(bad_config_is_invalid_arg)
{
    struct Case {
        const char *what;
        void (*tweak)(edgelock_config *);
    };
    static const Case cases[] = {
        {"max_locks 0", [](edgelock_config *c) { c->max_locks = 0; }},
        {"max_holds 0", [](edgelock_config *c) { c->max_holds = 0; }},
        {"max_waiters 0", [](edgelock_config *c) { c->max_waiters = 0; }},
        {"max_subscriptions 0", [](edgelock_config *c) { c->max_subscriptions = 0; }},
        {"max_commands 0", [](edgelock_config *c) { c->max_commands = 0; }},
        {"max_name_len 0", [](edgelock_config *c) { c->max_name_len = 0; }},
        {"max_name_len 4097", [](edgelock_config *c) { c->max_name_len = 4097; }},
        {"max_name_len huge", [](edgelock_config *c) { c->max_name_len = 0xffffffffu; }},
        {"watchdog_lease_ms 29", [](edgelock_config *c) { c->watchdog_lease_ms = 29; }},
        {"watchdog_lease_ms 0", [](edgelock_config *c) { c->watchdog_lease_ms = 0; }},
        {"url http://x", [](edgelock_config *c) { c->url = "http://x"; }},
        {"url redis://", [](edgelock_config *c) { c->url = "redis://"; }},
        {"url redis://h:99999", [](edgelock_config *c) { c->url = "redis://h:99999"; }},
        {"url redis://h:0", [](edgelock_config *c) { c->url = "redis://h:0"; }},
        {"url empty", [](edgelock_config *c) { c->url = ""; }},
        {"url garbage", [](edgelock_config *c) { c->url = "127.0.0.1:6379"; }},
        {"client_id with ':'", [](edgelock_config *c) { c->client_id = "gate:way"; }},
        {"client_id empty", [](edgelock_config *c) { c->client_id = ""; }},
        {"client_id 64 bytes",
         [](edgelock_config *c) {
             c->client_id = "0123456789012345678901234567890123456789012345678901234567890123";
         }},
        {"client_id 200 bytes",
         [](edgelock_config *c) {
             c->client_id = "01234567890123456789012345678901234567890123456789012345678901234567890123456789"
                            "01234567890123456789012345678901234567890123456789012345678901234567890123456789"
                            "0123456789012345678901234567890123456789";
         }},
    };
    for (const Case &k : cases) {
        edgelock_client *sentinel = reinterpret_cast<edgelock_client *>(0x1);
        edgelock_client *out = sentinel;
        edgelock_status st = create_with(k.tweak, &out);
        if (st != EDGELOCK_ERR_INVALID_ARG)
            fprintf(stderr, "  %s: got %s\n", k.what, edgelock_status_str(st));
        CHECK_ST(st, EDGELOCK_ERR_INVALID_ARG);
        CHECK(out == sentinel); // *out set only on OK
        if (st == EDGELOCK_OK && out != sentinel)
            edgelock_client_destroy(out);
    }
}

TEST_CASE(edge_of_valid_config_is_accepted)
{
    struct Case {
        const char *what;
        void (*tweak)(edgelock_config *);
    };
    static const Case cases[] = {
        {"max_name_len 4096", [](edgelock_config *c) { c->max_name_len = 4096; }},
        {"max_name_len 1", [](edgelock_config *c) { c->max_name_len = 1; }},
        {"watchdog_lease_ms 30", [](edgelock_config *c) { c->watchdog_lease_ms = 30; }},
        {"all capacities 1",
         [](edgelock_config *c) {
             c->max_locks = c->max_holds = c->max_waiters = c->max_subscriptions = c->max_commands = 1;
         }},
        {"client_id 63 bytes",
         [](edgelock_config *c) {
             c->client_id = "012345678901234567890123456789012345678901234567890123456789012";
         }},
        {"url NULL (default)", [](edgelock_config *c) { c->url = nullptr; }},
    };
    for (const Case &k : cases) {
        edgelock_client *out = nullptr;
        edgelock_status st = create_with(k.tweak, &out);
        if (st != EDGELOCK_OK)
            fprintf(stderr, "  %s: got %s\n", k.what, edgelock_status_str(st));
        CHECK_ST(st, EDGELOCK_OK);
        if (st == EDGELOCK_OK) {
            CHECK(out != nullptr);
            edgelock_client_destroy(out);
        }
    }
    // The client id is used as given.
    edgelock_client *c =
        make_client(shared_server().url(), [](edgelock_config *cfg) { cfg->client_id = "gw-7"; });
    REQUIRE(c);
    CHECK(strcmp(edgelock_client_id(c), "gw-7") == 0);
    edgelock_client_destroy(c);
}

// ---- names ------------------------------------------------------------------------

static void small_names(edgelock_config *cfg)
{
    cfg->max_name_len = 16;
}

TEST_CASE(empty_and_over_long_names)
{
    RedisServer &r = shared_server();
    edgelock_client *c = make_client(r.url(), small_names);
    REQUIRE(c);
    edgelock_lock out = {555};
    CHECK_ST(edgelock_lock_new(c, "", 0, &out), EDGELOCK_ERR_INVALID_ARG);
    CHECK_ST(edgelock_lock_new(c, "abc", 0, &out), EDGELOCK_ERR_INVALID_ARG);
    CHECK_ST(edgelock_lock_new(c, "0123456789abcdefX", 17, &out), EDGELOCK_ERR_INVALID_ARG);
    CHECK_ST(edgelock_lock_new(c, "0123456789abcdefX", (size_t)-1, &out), EDGELOCK_ERR_INVALID_ARG);
    // A kind out of the enum's range (as C may pass it): tests/c99/consumer.c.
    CHECK_EQ(out.id, 555);
    CHECK_EQ(locks_in_use(c), 0);

    // Exactly max_name_len works end to end.
    edgelock_lock lk = {0};
    CHECK_ST(edgelock_lock_new(c, "0123456789abcdef", 16, &lk), EDGELOCK_OK);
    CHECK(lk.id != 0);
    CHECK_ST(edgelock_try_lock(c, lk, 0, 5000), EDGELOCK_OK);
    CHECK_EQ(redis_integer(r, "EXISTS %s", "0123456789abcdef"), 1);
    int released = 0;
    CHECK_ST(edgelock_unlock(c, lk, &released), EDGELOCK_OK);
    CHECK_EQ(released, 1);
    CHECK_ST(edgelock_lock_free(c, lk), EDGELOCK_OK);
    CHECK(tables_idle(c));
    edgelock_client_destroy(c);

    // Default max_name_len (128): 129 bytes is refused.
    c = make_client(r.url());
    REQUIRE(c);
    char name[130];
    memset(name, 'n', sizeof(name));
    CHECK_ST(edgelock_lock_new(c, name, 129, &out), EDGELOCK_ERR_INVALID_ARG);
    CHECK_ST(edgelock_lock_new(c, name, 128, &out), EDGELOCK_OK);
    CHECK_ST(edgelock_lock_free(c, out), EDGELOCK_OK);
    edgelock_client_destroy(c);
}

struct BinName {
    const char *bytes;
    size_t len;
};

TEST_CASE(binary_names_give_exact_redisson_keys_and_channels)
{
    RedisServer &r = shared_server();
    long long keys = dbsize(r);
    edgelock_client *c = make_client(r.url());
    REQUIRE(c);
    static const BinName names[] = {
        {"nul\0inside", 10}, {"\xff\xfe\x80", 3},   {"{tag}rest", 9}, {"open{only", 9}, {"close}only", 10},
        {"with space", 10},  {"new\nline\r\n", 10}, {"\0", 1},        {"{", 1},         {"}", 1},
    };
    const size_t n = sizeof(names) / sizeof(names[0]);

    // Subscribe to the exact channel each name must use.
    redisContext *sub = r.connect();
    REQUIRE(sub);
    char chan[n][64];
    size_t chan_len[n];
    for (size_t i = 0; i < n; i++) {
        const char *pfx = "redisson_lock__channel:";
        size_t pl = strlen(pfx);
        bool brace = memchr(names[i].bytes, '{', names[i].len) != nullptr;
        memcpy(chan[i], pfx, pl);
        size_t o = pl;
        if (!brace)
            chan[i][o++] = '{';
        memcpy(chan[i] + o, names[i].bytes, names[i].len);
        o += names[i].len;
        if (!brace)
            chan[i][o++] = '}';
        chan_len[i] = o;
        redisReply *rep = (redisReply *)redisCommand(sub, "SUBSCRIBE %b", chan[i], chan_len[i]);
        CHECK(rep && rep->type == REDIS_REPLY_ARRAY);
        if (rep)
            freeReplyObject(rep);
    }
    struct timeval tv = {2, 0};
    redisSetTimeout(sub, tv);

    redisContext *q = r.connect();
    REQUIRE(q);
    for (size_t i = 0; i < n; i++) {
        edgelock_lock lk = {0};
        CHECK_ST(edgelock_lock_new(c, names[i].bytes, names[i].len, &lk), EDGELOCK_OK);
        CHECK_ST(edgelock_try_lock(c, lk, 0, 10000), EDGELOCK_OK);

        // The hash is at exactly `name`, with the owner field and count 1.
        char field[128];
        snprintf(field, sizeof(field), "%s:%llu", edgelock_client_id(c),
                 (unsigned long long)edgelock_current_owner());
        redisReply *rep = (redisReply *)redisCommand(q, "HGET %b %s", names[i].bytes, names[i].len, field);
        CHECK(rep && rep->type == REDIS_REPLY_STRING && strcmp(rep->str, "1") == 0);
        if (rep)
            freeReplyObject(rep);
        rep = (redisReply *)redisCommand(q, "HLEN %b", names[i].bytes, names[i].len);
        CHECK(rep && rep->type == REDIS_REPLY_INTEGER && rep->integer == 1);
        if (rep)
            freeReplyObject(rep);
        int64_t count = 0;
        CHECK_ST(edgelock_hold_count(c, lk, &count), EDGELOCK_OK);
        CHECK_EQ(count, 1);

        int released = 0;
        CHECK_ST(edgelock_unlock(c, lk, &released), EDGELOCK_OK);
        CHECK_EQ(released, 1);
        rep = (redisReply *)redisCommand(q, "EXISTS %b", names[i].bytes, names[i].len);
        CHECK(rep && rep->type == REDIS_REPLY_INTEGER && rep->integer == 0);
        if (rep)
            freeReplyObject(rep);

        // The unlock message arrived on exactly the expected channel.
        rep = nullptr;
        CHECK(redisGetReply(sub, (void **)&rep) == REDIS_OK && rep);
        if (rep) {
            bool ok = rep->type == REDIS_REPLY_ARRAY && rep->elements == 3 &&
                      strcmp(rep->element[0]->str, "message") == 0 && rep->element[1]->len == chan_len[i] &&
                      memcmp(rep->element[1]->str, chan[i], chan_len[i]) == 0 &&
                      strcmp(rep->element[2]->str, "0") == 0;
            if (!ok)
                fprintf(stderr, "  name #%zu: unexpected pub/sub message\n", i);
            CHECK(ok);
            freeReplyObject(rep);
        } else {
            fprintf(stderr, "  name #%zu: no unlock message on its channel\n", i);
        }
        CHECK_ST(edgelock_lock_free(c, lk), EDGELOCK_OK);
    }
    redisFree(sub);
    redisFree(q);
    settle(c);
    CHECK(tables_idle(c));
    CHECK_EQ(dbsize(r), keys); // latch keys gone too
    edgelock_client_destroy(c);
}

static long long numsub(const RedisServer &r, const char *channel)
{
    long long n = -1;
    redisReply *rep = r.command("PUBSUB NUMSUB %s", channel);
    if (rep && rep->type == REDIS_REPLY_ARRAY && rep->elements == 2)
        n = rep->element[1]->integer;
    if (rep)
        freeReplyObject(rep);
    return n;
}

TEST_CASE(waiter_subscribes_to_the_braceless_channel_of_a_braced_name)
{
    RedisServer &r = shared_server();
    edgelock_client *holder = make_client(r.url());
    edgelock_client *waiter = make_client(r.url());
    REQUIRE(holder && waiter);
    static const char name[] = "job{7}:a b";
    edgelock_lock h = make_lock(holder, name);
    edgelock_lock w = make_lock(waiter, name);
    CHECK_ST(edgelock_try_lock(holder, h, 0, 10000), EDGELOCK_OK);
    std::atomic<int> got{-99}, unlocked{-99};
    std::thread t([&] {
        got = (int)edgelock_try_lock(waiter, w, 10000, 10000);
        unlocked = (int)edgelock_unlock(waiter, w, nullptr);
    });
    // While it waits, the waiter's subscription is Redisson's channel.
    long long subs = 0;
    for (int i = 0; i < 200 && subs == 0; i++) {
        subs = numsub(r, "redisson_lock__channel:job{7}:a b");
        if (subs == 0)
            sleep_ms(10);
    }
    CHECK_EQ(subs, 1);
    CHECK_EQ(numsub(r, "redisson_lock__channel:{job{7}:a b}"), 0);
    int released = 0;
    CHECK_ST(edgelock_unlock(holder, h, &released), EDGELOCK_OK);
    t.join();
    CHECK_ST((edgelock_status)got.load(), EDGELOCK_OK);
    CHECK_ST((edgelock_status)unlocked.load(), EDGELOCK_OK);
    settle(holder);
    settle(waiter);
    CHECK(tables_idle(holder));
    CHECK(tables_idle(waiter));
    edgelock_client_destroy(holder);
    edgelock_client_destroy(waiter);
}

// ---- times ---------------------------------------------------------------------------

static long long commandstat_calls(const RedisServer &r, const char *cmd)
{
    redisReply *rep = r.command("INFO commandstats");
    long long calls = 0;
    if (rep && rep->type == REDIS_REPLY_STRING) {
        char key[64];
        snprintf(key, sizeof(key), "cmdstat_%s:calls=", cmd);
        const char *p = strstr(rep->str, key);
        if (p)
            calls = atoll(p + strlen(key));
    }
    if (rep)
        freeReplyObject(rep);
    return calls;
}

TEST_CASE(out_of_range_times_are_invalid_arg)
{
    RedisServer &r = shared_server();
    edgelock_client *holder = make_client(r.url());
    edgelock_client *c = make_client(r.url());
    REQUIRE(holder && c);
    edgelock_lock h = make_lock(holder, "times");
    edgelock_lock lk = make_lock(c, "times");
    edgelock_lock free_lk = make_lock(c, "times-free");
    CHECK_ST(edgelock_try_lock(holder, h, 0, 20000), EDGELOCK_OK);
    long long pttl = redis_integer(r, "PTTL times");

    struct Times {
        int64_t wait, lease;
    };
    static const Times bad[] = {
        {-2, 1000},        {-1000, 1000},
        {INT64_MIN, 1000}, {EDGELOCK_MAX_TIME_MS + 1, 1000},
        {INT64_MAX, 1000}, {0, 0},
        {0, -5},           {0, -2},
        {0, INT64_MIN},    {0, EDGELOCK_MAX_TIME_MS + 1},
        {0, INT64_MAX},    {EDGELOCK_WAIT_FOREVER, 0}, // a bad lease with an endless wait must not wait
        {5000, -5},
    };
    for (const Times &t : bad) {
        CHECK_ST(edgelock_try_lock(c, lk, t.wait, t.lease), EDGELOCK_ERR_INVALID_ARG);
        CHECK_ST(edgelock_try_lock(c, free_lk, t.wait, t.lease), EDGELOCK_ERR_INVALID_ARG);
    }
    CHECK(tables_idle(c));
    CHECK_EQ(redis_integer(r, "EXISTS times-free"), 0);
    CHECK_EQ(redis_integer(r, "HLEN times"), 1);
    CHECK(redis_integer(r, "PTTL times") <= pttl);

    // The limits themselves are accepted.
    CHECK_ST(edgelock_try_lock(c, free_lk, EDGELOCK_MAX_TIME_MS, EDGELOCK_MAX_TIME_MS), EDGELOCK_OK);
    CHECK(redis_integer(r, "PTTL times-free") > 999999000000LL);
    int released = 0;
    CHECK_ST(edgelock_unlock(c, free_lk, &released), EDGELOCK_OK);
    CHECK_EQ(released, 1);

    // wait 0 is one attempt: one acquire script call, no subscription.
    settle(c);
    freeReplyObject(r.command("CONFIG RESETSTAT"));
    CHECK_ST(edgelock_try_lock(c, lk, 0, 1000), EDGELOCK_ERR_WAIT_TIMEOUT);
    long long scripts = commandstat_calls(r, "evalsha") + commandstat_calls(r, "eval");
    CHECK_EQ(scripts, 1);
    CHECK_EQ(commandstat_calls(r, "subscribe"), 0);
    CHECK(tables_idle(c));
    CHECK_EQ(redis_integer(r, "HLEN times"), 1);

    CHECK_ST(edgelock_unlock(holder, h, &released), EDGELOCK_OK);
    settle(holder);
    settle(c);
    CHECK(tables_idle(holder));
    CHECK(tables_idle(c));
    edgelock_client_destroy(holder);
    edgelock_client_destroy(c);
}

TEST_CASE(out_of_range_times_async_never_call_back)
{
    RedisServer &r = shared_server();
    EventLoop loop;
    REQUIRE(loop.ok());
    edgelock_client *c = make_loop_client(r, loop.base());
    REQUIRE(c);
    edgelock_lock lk = {0};
    CHECK_ST(edgelock_lock_new(c, "times-async", 11, &lk), EDGELOCK_OK);
    g_unexpected_callbacks = 0;
    CHECK_ST(edgelock_lock_async(c, lk, 1, -2, 1000, never_called, nullptr), EDGELOCK_ERR_INVALID_ARG);
    CHECK_ST(edgelock_lock_async(c, lk, 1, 0, 0, never_called, nullptr), EDGELOCK_ERR_INVALID_ARG);
    CHECK_ST(edgelock_lock_async(c, lk, 1, 0, -5, never_called, nullptr), EDGELOCK_ERR_INVALID_ARG);
    CHECK_ST(edgelock_lock_async(c, lk, 1, 0, EDGELOCK_MAX_TIME_MS + 1, never_called, nullptr),
             EDGELOCK_ERR_INVALID_ARG);
    CHECK_ST(edgelock_lock_async(c, lk, 1, EDGELOCK_MAX_TIME_MS + 1, 1000, never_called, nullptr),
             EDGELOCK_ERR_INVALID_ARG);
    CHECK(idle_now(c));
    loop.run_for(100);
    CHECK_EQ(g_unexpected_callbacks.load(), 0);
    CHECK_EQ(redis_integer(r, "EXISTS times-async"), 0);
    CHECK_ST(edgelock_lock_free(c, lk), EDGELOCK_OK);
    edgelock_client_destroy(c);
}

// ---- stale handles ----------------------------------------------------------------------

// Every call on `lk` must say STALE_HANDLE and change nothing.
static void expect_stale_everywhere(edgelock_client *c, edgelock_lock lk)
{
    int flag = -1;
    int64_t v = -1;
    CHECK_ST(edgelock_lock_free(c, lk), EDGELOCK_ERR_STALE_HANDLE);
    CHECK_ST(edgelock_acquire(c, lk), EDGELOCK_ERR_STALE_HANDLE);
    CHECK_ST(edgelock_try_lock(c, lk, 0, 1000), EDGELOCK_ERR_STALE_HANDLE);
    CHECK_ST(edgelock_try_lock(c, lk, 1000, EDGELOCK_LEASE_WATCHDOG), EDGELOCK_ERR_STALE_HANDLE);
    CHECK_ST(edgelock_unlock(c, lk, &flag), EDGELOCK_ERR_STALE_HANDLE);
    CHECK_ST(edgelock_force_unlock(c, lk, &flag), EDGELOCK_ERR_STALE_HANDLE);
    CHECK_ST(edgelock_is_locked(c, lk, &flag), EDGELOCK_ERR_STALE_HANDLE);
    CHECK_ST(edgelock_is_held_by_current_thread(c, lk, &flag), EDGELOCK_ERR_STALE_HANDLE);
    CHECK_ST(edgelock_hold_count(c, lk, &v), EDGELOCK_ERR_STALE_HANDLE);
    CHECK_ST(edgelock_remaining_ttl(c, lk, &v), EDGELOCK_ERR_STALE_HANDLE);
}

TEST_CASE(freed_and_made_up_handles_are_stale)
{
    RedisServer &r = shared_server();
    long long keys = dbsize(r);
    edgelock_client *c = make_client(r.url());
    REQUIRE(c);
    edgelock_lock lk = make_lock(c, "stale");
    REQUIRE(lk.id != 0);
    CHECK_ST(edgelock_lock_free(c, lk), EDGELOCK_OK);
    CHECK_ST(edgelock_lock_free(c, lk), EDGELOCK_ERR_STALE_HANDLE); // double free
    expect_stale_everywhere(c, lk);
    edgelock_lock made_up = {12345};
    expect_stale_everywhere(c, made_up);
    edgelock_lock zero = {0};
    expect_stale_everywhere(c, zero);
    edgelock_lock ones = {UINT64_MAX};
    expect_stale_everywhere(c, ones);
    CHECK_EQ(locks_in_use(c), 0);
    CHECK(tables_idle(c));
    CHECK_EQ(dbsize(r), keys);
    edgelock_client_destroy(c);
}

TEST_CASE(freed_handles_are_stale_in_async_calls)
{
    RedisServer &r = shared_server();
    EventLoop loop;
    REQUIRE(loop.ok());
    edgelock_client *c = make_loop_client(r, loop.base());
    REQUIRE(c);
    edgelock_lock lk = {0};
    CHECK_ST(edgelock_lock_new(c, "stale-async", 11, &lk), EDGELOCK_OK);
    CHECK_ST(edgelock_lock_free(c, lk), EDGELOCK_OK);
    edgelock_lock made_up = {12345};
    g_unexpected_callbacks = 0;
    for (edgelock_lock x : {lk, made_up}) {
        CHECK_ST(edgelock_lock_free(c, x), EDGELOCK_ERR_STALE_HANDLE);
        CHECK_ST(edgelock_lock_async(c, x, 1, 0, 1000, never_called, nullptr), EDGELOCK_ERR_STALE_HANDLE);
        CHECK_ST(edgelock_unlock_async(c, x, 1, never_called, nullptr), EDGELOCK_ERR_STALE_HANDLE);
        CHECK_ST(edgelock_force_unlock_async(c, x, never_called, nullptr), EDGELOCK_ERR_STALE_HANDLE);
        CHECK_ST(edgelock_is_locked_async(c, x, never_called, nullptr), EDGELOCK_ERR_STALE_HANDLE);
        CHECK_ST(edgelock_hold_count_async(c, x, 1, never_called, nullptr), EDGELOCK_ERR_STALE_HANDLE);
        CHECK_ST(edgelock_remaining_ttl_async(c, x, never_called, nullptr), EDGELOCK_ERR_STALE_HANDLE);
    }
    CHECK(idle_now(c));
    loop.run_for(50);
    CHECK_EQ(g_unexpected_callbacks.load(), 0);
    edgelock_client_destroy(c);
}

static void one_lock(edgelock_config *cfg)
{
    cfg->max_locks = 1;
}

TEST_CASE(old_handle_never_reaches_the_lock_that_reuses_its_slot)
{
    RedisServer &r = shared_server();
    edgelock_client *c = make_client(r.url(), one_lock);
    REQUIRE(c);
    edgelock_lock old_lk = make_lock(c, "gen-old");
    REQUIRE(old_lk.id != 0);
    CHECK_ST(edgelock_lock_free(c, old_lk), EDGELOCK_OK);
    edgelock_lock new_lk = make_lock(c, "gen-new"); // the only slot: reused
    REQUIRE(new_lk.id != 0);
    CHECK(new_lk.id != old_lk.id);
    CHECK_ST(edgelock_try_lock(c, new_lk, 0, 10000), EDGELOCK_OK);

    expect_stale_everywhere(c, old_lk);

    // The new lock is untouched: still held once, by us.
    CHECK_EQ(redis_integer(r, "HLEN gen-new"), 1);
    CHECK_EQ(redis_integer(r, "EXISTS gen-old"), 0);
    int64_t count = 0;
    CHECK_ST(edgelock_hold_count(c, new_lk, &count), EDGELOCK_OK);
    CHECK_EQ(count, 1);
    CHECK_ST(edgelock_lock_free(c, new_lk), EDGELOCK_ERR_BUSY);
    int released = 0;
    CHECK_ST(edgelock_unlock(c, new_lk, &released), EDGELOCK_OK);
    CHECK_EQ(released, 1);
    settle(c);
    CHECK_ST(edgelock_lock_free(c, new_lk), EDGELOCK_OK);
    expect_stale_everywhere(c, new_lk);
    CHECK(tables_idle(c));
    edgelock_client_destroy(c);
}

// A handle passed to the wrong client (easy with one client per RedLock
// server, or arrays of members): every client used to hand out the same
// first handle, so it named that client's lock in the same slot, and an
// unlock or force-unlock acted on it.
TEST_CASE(a_handle_of_another_client_is_stale)
{
    RedisServer &r = shared_server();
    edgelock_client *a = make_client(r.url());
    edgelock_client *b = make_client(r.url());
    REQUIRE(a && b);
    edgelock_lock firmware = make_lock(a, "xclient-firmware");
    edgelock_lock orders = make_lock(b, "xclient-orders");
    CHECK_ST(edgelock_try_lock(b, orders, 0, 10000), EDGELOCK_OK);

    expect_stale_everywhere(b, firmware);

    CHECK_EQ(redis_integer(r, "HLEN xclient-orders"), 1); // untouched
    CHECK_EQ(redis_integer(r, "EXISTS xclient-firmware"), 0);
    int released = 0;
    CHECK_ST(edgelock_unlock(b, orders, &released), EDGELOCK_OK);
    CHECK_EQ(released, 1);
    settle(b);
    CHECK_ST(edgelock_lock_free(b, orders), EDGELOCK_OK);
    CHECK_ST(edgelock_lock_free(a, firmware), EDGELOCK_OK);
    CHECK(tables_idle(a));
    CHECK(tables_idle(b));
    edgelock_client_destroy(a);
    edgelock_client_destroy(b);
}

// ---- ownership -------------------------------------------------------------------------

static void hash_snapshot(const RedisServer &r, const char *key, char *out, size_t cap)
{
    out[0] = 0;
    redisReply *rep = r.command("HGETALL %s", key);
    if (rep && rep->type == REDIS_REPLY_ARRAY) {
        size_t o = 0;
        for (size_t i = 0; i < rep->elements; i++)
            o += (size_t)snprintf(out + o, o < cap ? cap - o : 0, "%s|", rep->element[i]->str);
    }
    if (rep)
        freeReplyObject(rep);
}

TEST_CASE(unlock_by_non_owner_changes_nothing)
{
    RedisServer &r = shared_server();
    edgelock_client *a = make_client(r.url());
    edgelock_client *b = make_client(r.url());
    REQUIRE(a && b);
    edgelock_lock la = make_lock(a, "owned");
    edgelock_lock lb = make_lock(b, "owned");
    CHECK_ST(edgelock_try_lock(a, la, 0, 20000), EDGELOCK_OK);
    CHECK_ST(edgelock_try_lock(a, la, 0, 20000), EDGELOCK_OK);
    char before[512], after[512];
    hash_snapshot(r, "owned", before, sizeof(before));
    long long pttl = redis_integer(r, "PTTL owned");
    long long keys = dbsize(r);

    int released = -1;
    CHECK_ST(edgelock_unlock(b, lb, &released), EDGELOCK_ERR_NOT_OWNER);
    std::thread other([&] { // same client, another thread: another owner
        int rel = -1;
        CHECK_ST(edgelock_unlock(a, la, &rel), EDGELOCK_ERR_NOT_OWNER);
    });
    other.join();
    settle(a);
    settle(b);
    hash_snapshot(r, "owned", after, sizeof(after));
    CHECK(strcmp(before, after) == 0);
    CHECK(redis_integer(r, "PTTL owned") <= pttl); // not refreshed
    CHECK_EQ(dbsize(r), keys);                     // no latch key left
    CHECK(tables_idle(b));

    int64_t count = 0;
    CHECK_ST(edgelock_hold_count(a, la, &count), EDGELOCK_OK);
    CHECK_EQ(count, 2);
    CHECK_ST(edgelock_unlock(a, la, &released), EDGELOCK_OK);
    CHECK_ST(edgelock_unlock(a, la, &released), EDGELOCK_OK);
    CHECK_EQ(released, 1);
    // Nobody holds it now: still NOT_OWNER, and nothing is created.
    CHECK_ST(edgelock_unlock(b, lb, &released), EDGELOCK_ERR_NOT_OWNER);
    settle(a);
    settle(b);
    CHECK_EQ(redis_integer(r, "EXISTS owned"), 0);
    CHECK(tables_idle(a));
    CHECK(tables_idle(b));
    edgelock_client_destroy(a);
    edgelock_client_destroy(b);
}

// ---- keys of another type --------------------------------------------------------------

TEST_CASE(lock_key_of_another_type_is_a_redis_error_and_left_alone)
{
    RedisServer &r = shared_server();
    edgelock_client *c = make_client(r.url());
    REQUIRE(c);
    freeReplyObject(r.command("SET %s %s", "wt-string", "precious"));
    freeReplyObject(r.command("RPUSH %s %s %s", "wt-list", "a", "b"));
    freeReplyObject(r.command("SADD %s %s", "wt-set", "m"));
    long long keys = dbsize(r);

    static const char *const names[] = {"wt-string", "wt-list", "wt-set"};
    for (const char *name : names) {
        edgelock_lock lk = make_lock(c, name);
        REQUIRE(lk.id != 0);
        CHECK_ST(edgelock_try_lock(c, lk, 0, 10000), EDGELOCK_ERR_REDIS);
        CHECK_ST(edgelock_try_lock(c, lk, 2000, 10000), EDGELOCK_ERR_REDIS); // not a wait
        CHECK_ST(edgelock_try_lock(c, lk, 2000, EDGELOCK_LEASE_WATCHDOG), EDGELOCK_ERR_REDIS);
        int flag = -1;
        CHECK_ST(edgelock_unlock(c, lk, &flag), EDGELOCK_ERR_REDIS);
        CHECK_ST(edgelock_force_unlock(c, lk, &flag), EDGELOCK_ERR_REDIS);
        int64_t v = -1;
        CHECK_ST(edgelock_hold_count(c, lk, &v), EDGELOCK_ERR_REDIS);
        CHECK_ST(edgelock_is_held_by_current_thread(c, lk, &flag), EDGELOCK_ERR_REDIS);
        // Read-only queries that work on any key type still answer.
        CHECK_ST(edgelock_is_locked(c, lk, &flag), EDGELOCK_OK);
        CHECK_EQ(flag, 1);
        CHECK_ST(edgelock_remaining_ttl(c, lk, &v), EDGELOCK_OK);
        CHECK_EQ(v, -1);
        settle(c);
        CHECK(tables_idle(c));
        CHECK_ST(edgelock_lock_free(c, lk), EDGELOCK_OK);
    }
    char val[64];
    redis_string(r, val, sizeof(val), "GET wt-string");
    CHECK(strcmp(val, "precious") == 0);
    CHECK_EQ(redis_integer(r, "LLEN wt-list"), 2);
    CHECK_EQ(redis_integer(r, "SCARD wt-set"), 1);
    CHECK_EQ(redis_integer(r, "PTTL wt-string"), -1);
    CHECK_EQ(dbsize(r), keys);
    freeReplyObject(r.command("DEL wt-string wt-list wt-set"));
    edgelock_client_destroy(c);
}

// ---- full tables ---------------------------------------------------------------------

static void two_locks(edgelock_config *cfg)
{
    cfg->max_locks = 2;
}

TEST_CASE(lock_table_full)
{
    RedisServer &r = shared_server();
    edgelock_client *c = make_client(r.url(), two_locks);
    REQUIRE(c);
    edgelock_lock a = make_lock(c, "full-a");
    edgelock_lock b = make_lock(c, "full-b");
    REQUIRE(a.id && b.id);
    edgelock_lock out = {4242};
    CHECK_ST(edgelock_lock_new(c, "full-c", 6, &out), EDGELOCK_ERR_TABLE_FULL);
    CHECK_ST(edgelock_lock_new(c, "full-c", 6, &out), EDGELOCK_ERR_TABLE_FULL);
    CHECK_EQ(out.id, 4242);
    CHECK_EQ(locks_in_use(c), 2);
    // The stats say which table was full, how often, and how big it is.
    edgelock_stats s = stats_of(c);
    CHECK_EQ(s.tables[EDGELOCK_TABLE_LOCKS].full, 2);
    CHECK_EQ(s.tables[EDGELOCK_TABLE_LOCKS].capacity, 2);
    CHECK_EQ(s.tables[EDGELOCK_TABLE_LOCKS].used, 2);
    CHECK_EQ(s.tables[EDGELOCK_TABLE_LOCKS].high_water, 2);
    CHECK_EQ(s.tables[EDGELOCK_TABLE_HOLDS].full, 0);
    // The existing handles are unaffected.
    CHECK_ST(edgelock_try_lock(c, a, 0, 5000), EDGELOCK_OK);
    CHECK_ST(edgelock_unlock(c, a, nullptr), EDGELOCK_OK);
    CHECK_ST(edgelock_lock_free(c, b), EDGELOCK_OK);
    CHECK_ST(edgelock_lock_new(c, "full-c", 6, &out), EDGELOCK_OK);
    CHECK(out.id != 4242 && out.id != b.id);
    settle(c);
    CHECK_ST(edgelock_lock_free(c, a), EDGELOCK_OK);
    CHECK_ST(edgelock_lock_free(c, out), EDGELOCK_OK);
    CHECK_EQ(locks_in_use(c), 0);
    CHECK(tables_idle(c));
    edgelock_client_destroy(c);
}

static void one_hold(edgelock_config *cfg)
{
    cfg->max_holds = 1;
}

TEST_CASE(hold_table_full)
{
    RedisServer &r = shared_server();
    edgelock_client *c = make_client(r.url(), one_hold);
    REQUIRE(c);
    edgelock_lock a = make_lock(c, "hold-a");
    edgelock_lock b = make_lock(c, "hold-b");
    CHECK_ST(edgelock_try_lock(c, a, 0, 10000), EDGELOCK_OK);
    CHECK_ST(edgelock_try_lock(c, b, 0, 10000), EDGELOCK_ERR_TABLE_FULL);
    CHECK_ST(edgelock_try_lock(c, b, 1000, EDGELOCK_LEASE_WATCHDOG), EDGELOCK_ERR_TABLE_FULL);
    CHECK_EQ(redis_integer(r, "EXISTS hold-b"), 0);
    // Re-entry uses the same hold; another thread is another owner.
    CHECK_ST(edgelock_try_lock(c, a, 0, 10000), EDGELOCK_OK);
    std::thread other([&] { CHECK_ST(edgelock_try_lock(c, a, 0, 10000), EDGELOCK_ERR_TABLE_FULL); });
    other.join();
    CHECK_EQ(redis_integer(r, "HLEN hold-a"), 1);
    edgelock_stats s;
    CHECK_ST(edgelock_client_stats(c, &s), EDGELOCK_OK);
    CHECK_EQ(s.holds, 1);
    CHECK_EQ(s.waiters, 0);
    CHECK_EQ(s.tables[EDGELOCK_TABLE_HOLDS].full, 3); // the three TABLE_FULLs above
    CHECK_EQ(s.tables[EDGELOCK_TABLE_HOLDS].high_water, 1);
    CHECK_EQ(s.tables[EDGELOCK_TABLE_WAITERS].full, 0);

    int released = 0;
    CHECK_ST(edgelock_unlock(c, a, &released), EDGELOCK_OK);
    CHECK_ST(edgelock_unlock(c, a, &released), EDGELOCK_OK);
    CHECK_EQ(released, 1);
    // The full condition cleared: b works now.
    CHECK_ST(edgelock_try_lock(c, b, 0, 10000), EDGELOCK_OK);
    CHECK_ST(edgelock_unlock(c, b, &released), EDGELOCK_OK);
    CHECK_EQ(released, 1);
    settle(c);
    CHECK(tables_idle(c));
    edgelock_client_destroy(c);
}

static void two_commands(edgelock_config *cfg)
{
    cfg->max_commands = 2;
}

TEST_CASE(command_table_full_then_recovers)
{
    RedisServer &r = shared_server();
    EventLoop loop;
    REQUIRE(loop.ok());
    edgelock_client *c = make_loop_client(r, loop.base(), two_commands);
    REQUIRE(c);
    edgelock_lock lk = {0};
    CHECK_ST(edgelock_lock_new(c, "cmd-full", 8, &lk), EDGELOCK_OK);
    Result q1, q2;
    g_unexpected_callbacks = 0;
    // Without running the loop nothing completes: two queries fill the table.
    CHECK_ST(edgelock_is_locked_async(c, lk, record, &q1), EDGELOCK_OK);
    CHECK_ST(edgelock_remaining_ttl_async(c, lk, record, &q2), EDGELOCK_OK);
    CHECK_ST(edgelock_is_locked_async(c, lk, never_called, nullptr), EDGELOCK_ERR_TABLE_FULL);
    CHECK_ST(edgelock_lock_async(c, lk, 1, 0, 1000, never_called, nullptr), EDGELOCK_ERR_TABLE_FULL);
    CHECK_ST(edgelock_unlock_async(c, lk, 1, never_called, nullptr), EDGELOCK_ERR_TABLE_FULL);
    CHECK_ST(edgelock_force_unlock_async(c, lk, never_called, nullptr), EDGELOCK_ERR_TABLE_FULL);
    CHECK_ST(edgelock_hold_count_async(c, lk, 1, never_called, nullptr), EDGELOCK_ERR_TABLE_FULL);
    CHECK_ST(edgelock_remaining_ttl_async(c, lk, never_called, nullptr), EDGELOCK_ERR_TABLE_FULL);
    edgelock_stats s;
    CHECK_ST(edgelock_client_stats(c, &s), EDGELOCK_OK);
    CHECK_EQ(s.commands, 2);
    CHECK_EQ(s.holds, 0);
    CHECK_EQ(s.waiters, 0);

    CHECK(loop.run_until([&] { return q1.calls && q2.calls; }, 5000));
    CHECK_EQ(q1.calls, 1);
    CHECK_ST(q1.st, EDGELOCK_OK);
    CHECK_EQ(q1.value, 0);
    CHECK_ST(q2.st, EDGELOCK_OK);
    CHECK_EQ(q2.value, -2);

    // Cleared: a full lock/unlock cycle works.
    Result l, u;
    CHECK_ST(edgelock_lock_async(c, lk, 1, 0, 10000, record, &l), EDGELOCK_OK);
    CHECK(loop.run_until([&] { return l.calls > 0; }, 5000));
    CHECK_ST(l.st, EDGELOCK_OK);
    CHECK_EQ(redis_integer(r, "EXISTS cmd-full"), 1);
    CHECK_ST(edgelock_unlock_async(c, lk, 1, record, &u), EDGELOCK_OK);
    CHECK(loop.run_until([&] { return u.calls > 0; }, 5000));
    CHECK_ST(u.st, EDGELOCK_OK);
    CHECK_EQ(u.value, 1);
    CHECK(loop.run_until([&] { return idle_now(c); }, 5000));
    CHECK_EQ(g_unexpected_callbacks.load(), 0);
    CHECK_EQ(redis_integer(r, "EXISTS cmd-full"), 0);
    CHECK_ST(edgelock_lock_free(c, lk), EDGELOCK_OK);
    edgelock_client_destroy(c);
}

static void one_waiter(edgelock_config *cfg)
{
    cfg->max_waiters = 1;
}

TEST_CASE(waiter_table_full_then_recovers)
{
    RedisServer &r = shared_server();
    edgelock_client *holder = make_client(r.url());
    REQUIRE(holder);
    edgelock_lock h = make_lock(holder, "wait-full");
    CHECK_ST(edgelock_try_lock(holder, h, 0, 20000), EDGELOCK_OK);

    EventLoop loop;
    REQUIRE(loop.ok());
    edgelock_client *c = make_loop_client(r, loop.base(), one_waiter);
    REQUIRE(c);
    edgelock_lock lk = {0}, other = {0};
    CHECK_ST(edgelock_lock_new(c, "wait-full", 9, &lk), EDGELOCK_OK);
    CHECK_ST(edgelock_lock_new(c, "wait-free", 9, &other), EDGELOCK_OK);
    Result w1;
    g_unexpected_callbacks = 0;
    CHECK_ST(edgelock_lock_async(c, lk, 1, 10000, 10000, record, &w1), EDGELOCK_OK);
    CHECK_ST(edgelock_lock_async(c, lk, 2, 10000, 10000, never_called, nullptr), EDGELOCK_ERR_TABLE_FULL);
    CHECK_ST(edgelock_lock_async(c, other, 3, 0, 10000, never_called, nullptr), EDGELOCK_ERR_TABLE_FULL);
    loop.run_for(200); // w1 is waiting on the holder
    CHECK_EQ(w1.calls, 0);
    CHECK_ST(edgelock_lock_async(c, other, 3, 0, 10000, never_called, nullptr), EDGELOCK_ERR_TABLE_FULL);
    CHECK_EQ(redis_integer(r, "EXISTS wait-free"), 0);

    int released = 0;
    CHECK_ST(edgelock_unlock(holder, h, &released), EDGELOCK_OK);
    CHECK(loop.run_until([&] { return w1.calls > 0; }, 5000));
    CHECK_ST(w1.st, EDGELOCK_OK);
    // The waiter slot is free again.
    Result l3, u1, u3;
    CHECK_ST(edgelock_lock_async(c, other, 3, 0, 10000, record, &l3), EDGELOCK_OK);
    CHECK(loop.run_until([&] { return l3.calls > 0; }, 5000));
    CHECK_ST(l3.st, EDGELOCK_OK);
    CHECK_ST(edgelock_unlock_async(c, lk, 1, record, &u1), EDGELOCK_OK);
    CHECK_ST(edgelock_unlock_async(c, other, 3, record, &u3), EDGELOCK_OK);
    CHECK(loop.run_until([&] { return u1.calls && u3.calls; }, 5000));
    CHECK_ST(u1.st, EDGELOCK_OK);
    CHECK_ST(u3.st, EDGELOCK_OK);
    CHECK(loop.run_until([&] { return idle_now(c); }, 5000));
    CHECK_EQ(g_unexpected_callbacks.load(), 0);
    CHECK_EQ(redis_integer(r, "EXISTS wait-full"), 0);
    CHECK_EQ(redis_integer(r, "EXISTS wait-free"), 0);
    edgelock_client_destroy(c);
    settle(holder);
    edgelock_client_destroy(holder);
}

static void one_subscription(edgelock_config *cfg)
{
    cfg->max_subscriptions = 1;
}

TEST_CASE(subscription_table_full_is_reported_through_the_callback)
{
    RedisServer &r = shared_server();
    edgelock_client *holder = make_client(r.url());
    REQUIRE(holder);
    edgelock_lock h1 = make_lock(holder, "sub-full-1");
    edgelock_lock h2 = make_lock(holder, "sub-full-2");
    CHECK_ST(edgelock_try_lock(holder, h1, 0, 20000), EDGELOCK_OK);
    CHECK_ST(edgelock_try_lock(holder, h2, 0, 20000), EDGELOCK_OK);

    EventLoop loop;
    REQUIRE(loop.ok());
    edgelock_client *c = make_loop_client(r, loop.base(), one_subscription);
    REQUIRE(c);
    edgelock_lock l1 = {0}, l2 = {0};
    CHECK_ST(edgelock_lock_new(c, "sub-full-1", 10, &l1), EDGELOCK_OK);
    CHECK_ST(edgelock_lock_new(c, "sub-full-2", 10, &l2), EDGELOCK_OK);
    Result w1, w2;
    CHECK_ST(edgelock_lock_async(c, l1, 1, 10000, 10000, record, &w1), EDGELOCK_OK);
    loop.run_for(200); // w1 subscribed and waiting
    CHECK_EQ(w1.calls, 0);
    CHECK_ST(edgelock_lock_async(c, l2, 2, 10000, 10000, record, &w2), EDGELOCK_OK);
    CHECK(loop.run_until([&] { return w2.calls > 0; }, 5000));
    CHECK_EQ(w2.calls, 1);
    CHECK_ST(w2.st, EDGELOCK_ERR_TABLE_FULL);
    CHECK_EQ(w1.calls, 0);

    int released = 0;
    CHECK_ST(edgelock_unlock(holder, h1, &released), EDGELOCK_OK);
    CHECK(loop.run_until([&] { return w1.calls > 0; }, 5000));
    CHECK_ST(w1.st, EDGELOCK_OK);
    Result u1;
    CHECK_ST(edgelock_unlock_async(c, l1, 1, record, &u1), EDGELOCK_OK);
    CHECK(loop.run_until([&] { return u1.calls > 0; }, 5000));
    CHECK(loop.run_until([&] { return idle_now(c); }, 5000));
    edgelock_client_destroy(c);
    CHECK_ST(edgelock_unlock(holder, h2, &released), EDGELOCK_OK);
    settle(holder);
    CHECK(tables_idle(holder));
    edgelock_client_destroy(holder);
}

// ---- threads -----------------------------------------------------------------------------

TEST_CASE(blocking_calls_on_an_event_loop_client_are_wrong_thread)
{
    RedisServer &r = shared_server();
    long long keys = dbsize(r);
    EventLoop loop;
    REQUIRE(loop.ok());
    edgelock_client *c = make_loop_client(r, loop.base());
    REQUIRE(c);
    edgelock_lock lk = {0};
    CHECK_ST(edgelock_lock_new(c, "wrong-thread", 12, &lk), EDGELOCK_OK); // local calls work
    int flag = -1;
    int64_t v = -1;
    CHECK_ST(edgelock_acquire(c, lk), EDGELOCK_ERR_WRONG_THREAD);
    CHECK_ST(edgelock_try_lock(c, lk, 0, 1000), EDGELOCK_ERR_WRONG_THREAD);
    CHECK_ST(edgelock_unlock(c, lk, &flag), EDGELOCK_ERR_WRONG_THREAD);
    CHECK_ST(edgelock_force_unlock(c, lk, &flag), EDGELOCK_ERR_WRONG_THREAD);
    CHECK_ST(edgelock_is_locked(c, lk, &flag), EDGELOCK_ERR_WRONG_THREAD);
    CHECK_ST(edgelock_is_held_by_current_thread(c, lk, &flag), EDGELOCK_ERR_WRONG_THREAD);
    CHECK_ST(edgelock_hold_count(c, lk, &v), EDGELOCK_ERR_WRONG_THREAD);
    CHECK_ST(edgelock_remaining_ttl(c, lk, &v), EDGELOCK_ERR_WRONG_THREAD);
    CHECK(idle_now(c));
    loop.run_for(50);
    CHECK_EQ(dbsize(r), keys);
    CHECK_ST(edgelock_lock_free(c, lk), EDGELOCK_OK);
    edgelock_client_destroy(c);
}

TEST_CASE(async_calls_off_the_owned_loop_are_wrong_thread)
{
    RedisServer &r = shared_server();
    long long keys = dbsize(r);
    edgelock_client *c = make_client(r.url());
    REQUIRE(c);
    edgelock_lock lk = make_lock(c, "off-loop");
    g_unexpected_callbacks = 0;
    for (int t = 0; t < 2; t++) { // the test thread and another one
        auto calls = [&] {
            CHECK_ST(edgelock_lock_async(c, lk, 1, 0, 1000, never_called, nullptr),
                     EDGELOCK_ERR_WRONG_THREAD);
            CHECK_ST(edgelock_unlock_async(c, lk, 1, never_called, nullptr), EDGELOCK_ERR_WRONG_THREAD);
            CHECK_ST(edgelock_force_unlock_async(c, lk, never_called, nullptr), EDGELOCK_ERR_WRONG_THREAD);
            CHECK_ST(edgelock_is_locked_async(c, lk, never_called, nullptr), EDGELOCK_ERR_WRONG_THREAD);
            CHECK_ST(edgelock_hold_count_async(c, lk, 1, never_called, nullptr), EDGELOCK_ERR_WRONG_THREAD);
            CHECK_ST(edgelock_remaining_ttl_async(c, lk, never_called, nullptr), EDGELOCK_ERR_WRONG_THREAD);
        };
        if (t == 0) {
            calls();
        } else {
            std::thread th(calls);
            th.join();
        }
    }
    sleep_ms(50);
    CHECK_EQ(g_unexpected_callbacks.load(), 0);
    CHECK(tables_idle(c));
    CHECK_EQ(dbsize(r), keys);
    CHECK_ST(edgelock_lock_free(c, lk), EDGELOCK_OK);
    edgelock_client_destroy(c);
}

// Inside a callback of a client that owns its loop: async calls are allowed,
// blocking calls would deadlock and are refused.
struct InsideOwned {
    std::atomic<int> lost{0};
    std::atomic<int> blocking_try{-99}, blocking_query{-99}, blocking_stats{-99};
    std::atomic<int> async_call{-99}, async_done{0}, async_status{-99};
    std::atomic<uint64_t> callback_thread{0};
};
static InsideOwned g_inside;
static void inside_async_done(edgelock_client *, edgelock_lock, edgelock_status st, int64_t, void *)
{
    g_inside.async_status = (int)st;
    g_inside.async_done++;
}
static void inside_lost(edgelock_client *c, edgelock_lock lk, uint64_t, void *)
{
    if (g_inside.lost++)
        return;
    g_inside.callback_thread = edgelock_current_owner();
    int locked = -1;
    g_inside.blocking_try = (int)edgelock_try_lock(c, lk, 0, 1000);
    g_inside.blocking_query = (int)edgelock_is_locked(c, lk, &locked);
    edgelock_stats s;
    g_inside.blocking_stats = (int)edgelock_client_stats(c, &s); // a local call: fine
    g_inside.async_call = (int)edgelock_is_locked_async(c, lk, inside_async_done, nullptr);
}
static void inside_tweak(edgelock_config *cfg)
{
    cfg->watchdog_lease_ms = 300;
    cfg->on_lock_lost = inside_lost;
}

TEST_CASE(blocking_calls_inside_an_owned_loop_callback_are_wrong_thread)
{
    RedisServer &r = shared_server();
    edgelock_client *c = make_client(r.url(), inside_tweak);
    REQUIRE(c);
    edgelock_lock lk = make_lock(c, "inside-owned");
    CHECK_ST(edgelock_acquire(c, lk), EDGELOCK_OK);
    freeReplyObject(r.command("DEL inside-owned"));
    for (int i = 0; i < 300 && g_inside.async_done == 0; i++)
        sleep_ms(10);
    CHECK_EQ(g_inside.lost.load(), 1);
    CHECK(g_inside.callback_thread != 0 && g_inside.callback_thread != edgelock_current_owner());
    CHECK_ST((edgelock_status)g_inside.blocking_try.load(), EDGELOCK_ERR_WRONG_THREAD);
    CHECK_ST((edgelock_status)g_inside.blocking_query.load(), EDGELOCK_ERR_WRONG_THREAD);
    CHECK_ST((edgelock_status)g_inside.blocking_stats.load(), EDGELOCK_OK);
    CHECK_ST((edgelock_status)g_inside.async_call.load(), EDGELOCK_OK);
    CHECK_EQ(g_inside.async_done.load(), 1);
    CHECK_ST((edgelock_status)g_inside.async_status.load(), EDGELOCK_OK);
    CHECK_ST(edgelock_unlock(c, lk, nullptr), EDGELOCK_ERR_LOST);
    CHECK_EQ(redis_integer(r, "EXISTS inside-owned"), 0);
    CHECK(tables_idle(c));
    CHECK_ST(edgelock_lock_free(c, lk), EDGELOCK_OK);
    edgelock_client_destroy(c);
}

// ---- lock_free ----------------------------------------------------------------------------

TEST_CASE(lock_free_of_a_held_or_busy_lock_is_busy)
{
    RedisServer &r = shared_server();
    edgelock_client *holder = make_client(r.url());
    edgelock_client *c = make_client(r.url());
    REQUIRE(holder && c);
    edgelock_lock lk = make_lock(c, "busy");
    CHECK_ST(edgelock_try_lock(c, lk, 0, 10000), EDGELOCK_OK);
    CHECK_ST(edgelock_lock_free(c, lk), EDGELOCK_ERR_BUSY);
    CHECK_ST(edgelock_lock_free(c, lk), EDGELOCK_ERR_BUSY);
    CHECK_EQ(locks_in_use(c), 1);
    // The handle still works after BUSY.
    int64_t count = 0;
    CHECK_ST(edgelock_hold_count(c, lk, &count), EDGELOCK_OK);
    CHECK_EQ(count, 1);
    int released = 0;
    CHECK_ST(edgelock_unlock(c, lk, &released), EDGELOCK_OK);
    CHECK_EQ(released, 1);

    // A call in flight (a waiter) also makes it BUSY.
    edgelock_lock h = make_lock(holder, "busy");
    CHECK_ST(edgelock_try_lock(holder, h, 0, 20000), EDGELOCK_OK);
    std::atomic<int> got{-99}, unlocked{-99};
    std::atomic<bool> may_unlock{false};
    std::thread t([&] {
        got = (int)edgelock_try_lock(c, lk, 10000, 10000);
        while (!may_unlock)
            sleep_ms(1);
        unlocked = (int)edgelock_unlock(c, lk, nullptr);
    });
    for (int i = 0; i < 200; i++) {
        edgelock_stats s;
        if (edgelock_client_stats(c, &s) == EDGELOCK_OK && s.waiters == 1)
            break;
        sleep_ms(5);
    }
    CHECK_ST(edgelock_lock_free(c, lk), EDGELOCK_ERR_BUSY);
    CHECK_ST(edgelock_unlock(holder, h, &released), EDGELOCK_OK);
    for (int i = 0; i < 400 && got == -99; i++)
        sleep_ms(5);
    CHECK_ST((edgelock_status)got.load(), EDGELOCK_OK);
    CHECK_ST(edgelock_lock_free(c, lk), EDGELOCK_ERR_BUSY); // held by thread t
    may_unlock = true;
    t.join();
    CHECK_ST((edgelock_status)unlocked.load(), EDGELOCK_OK);
    settle(c);
    CHECK_ST(edgelock_lock_free(c, lk), EDGELOCK_OK);
    CHECK(tables_idle(c));
    settle(c);
    settle(holder);
    CHECK(tables_idle(holder));
    edgelock_client_destroy(holder);
    edgelock_client_destroy(c);
}

TEST_CASE(lock_free_with_an_async_call_in_flight_is_busy)
{
    RedisServer &r = shared_server();
    EventLoop loop;
    REQUIRE(loop.ok());
    edgelock_client *c = make_loop_client(r, loop.base());
    REQUIRE(c);
    edgelock_lock lk = {0};
    CHECK_ST(edgelock_lock_new(c, "busy-async", 10, &lk), EDGELOCK_OK);
    Result q, l, u;
    CHECK_ST(edgelock_is_locked_async(c, lk, record, &q), EDGELOCK_OK);
    CHECK_ST(edgelock_lock_free(c, lk), EDGELOCK_ERR_BUSY);
    CHECK(loop.run_until([&] { return q.calls > 0; }, 5000));
    CHECK_ST(edgelock_lock_async(c, lk, 1, 0, 10000, record, &l), EDGELOCK_OK);
    CHECK_ST(edgelock_lock_free(c, lk), EDGELOCK_ERR_BUSY); // acquire in flight
    CHECK(loop.run_until([&] { return l.calls > 0; }, 5000));
    CHECK_ST(l.st, EDGELOCK_OK);
    CHECK_ST(edgelock_lock_free(c, lk), EDGELOCK_ERR_BUSY); // held by owner 1
    CHECK_ST(edgelock_unlock_async(c, lk, 1, record, &u), EDGELOCK_OK);
    CHECK_ST(edgelock_lock_free(c, lk), EDGELOCK_ERR_BUSY); // release in flight
    CHECK(loop.run_until([&] { return u.calls > 0; }, 5000));
    CHECK_ST(u.st, EDGELOCK_OK);
    CHECK_ST(edgelock_lock_free(c, lk), EDGELOCK_OK);
    CHECK(loop.run_until([&] { return idle_now(c); }, 5000));
    CHECK_EQ(redis_integer(r, "EXISTS busy-async"), 0);
    edgelock_client_destroy(c);
}

// ---- the longest names ------------------------------------------------------------------

static void longest_names(edgelock_config *cfg)
{
    cfg->max_name_len = 4096;
    cfg->watchdog_lease_ms = 300;
}

// Last in the file: under AddressSanitizer a failure here aborts the binary.
TEST_CASE(longest_allowed_names_work_end_to_end)
{
    // 4096-byte names, with and without '{': keys, channels, the unlock latch
    // and the watchdog's renewal batch all fit their buffers.
    RedisServer &r = shared_server();
    long long keys = dbsize(r);
    edgelock_client *holder = make_client(r.url(), longest_names);
    edgelock_client *waiter = make_client(r.url(), longest_names);
    REQUIRE(holder && waiter);
    static char names[2][4096];
    memset(names[0], 'L', sizeof(names[0]));
    memset(names[1], 'B', sizeof(names[1]));
    names[1][100] = '{';
    names[1][200] = '}';
    for (int k = 0; k < 2; k++) {
        edgelock_lock h = {0}, w = {0};
        CHECK_ST(edgelock_lock_new(holder, names[k], 4096, &h), EDGELOCK_OK);
        CHECK_ST(edgelock_lock_new(waiter, names[k], 4096, &w), EDGELOCK_OK);
        edgelock_lock too_long = {0};
        CHECK_ST(edgelock_lock_new(holder, names[k], 4097, &too_long), EDGELOCK_ERR_INVALID_ARG);
        CHECK_ST(edgelock_acquire(holder, h), EDGELOCK_OK); // watchdog
        std::atomic<int> got{-99}, unlocked{-99};
        std::thread t([&] {
            got = (int)edgelock_try_lock(waiter, w, 10000, 10000);
            unlocked = (int)edgelock_unlock(waiter, w, nullptr);
        });
        sleep_ms(700); // renewed across two leases while the waiter waits
        redisReply *rep = r.command("EXISTS %b", names[k], (size_t)4096);
        CHECK(rep && rep->type == REDIS_REPLY_INTEGER && rep->integer == 1);
        if (rep)
            freeReplyObject(rep);
        CHECK_EQ(got.load(), -99);
        int released = 0;
        CHECK_ST(edgelock_unlock(holder, h, &released), EDGELOCK_OK);
        CHECK_EQ(released, 1);
        t.join();
        CHECK_ST((edgelock_status)got.load(), EDGELOCK_OK);
        CHECK_ST((edgelock_status)unlocked.load(), EDGELOCK_OK);
        settle(holder);
        settle(waiter);
        CHECK_ST(edgelock_lock_free(holder, h), EDGELOCK_OK);
        CHECK_ST(edgelock_lock_free(waiter, w), EDGELOCK_OK);
    }
    edgelock_stats s;
    CHECK_ST(edgelock_client_stats(holder, &s), EDGELOCK_OK);
    CHECK(s.renew_calls >= 2);
    CHECK(tables_idle(holder));
    CHECK(tables_idle(waiter));
    CHECK_EQ(dbsize(r), keys);
    edgelock_client_destroy(holder);
    edgelock_client_destroy(waiter);
}
