// SPDX-License-Identifier: BSD-3-Clause
// Heap allocations on the lock/unlock path. This binary interposes malloc,
// calloc and realloc (forwarding to glibc) and counts calls while a flag is on.
// Everything runs on the test thread in event-loop mode, so what is counted is
// edgelock + hiredis + libevent. The same lock/unlock traffic sent through a
// bare hiredis async context gives the floor that hiredis and libevent cost
// by themselves; edgelock must add nothing to it.
#include <hiredis/adapters/libevent.h>
#include <hiredis/async.h>
#include <hiredis/hiredis.h>
#include <stdio.h>
#include <string.h>

#include <atomic>

#include "check.hpp"
#include "edgelock/edgelock.h"
#include "event_loop.hpp"
#include "redisson/names.hpp"
#include "redis_server.hpp"
#include "base/resp.hpp"
#include "redisson/scripts.hpp"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define EDGELOCK_ALLOC_COUNTING 0 // the sanitizer owns malloc
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define EDGELOCK_ALLOC_COUNTING 0
#else
#define EDGELOCK_ALLOC_COUNTING 1
#endif
#else
#define EDGELOCK_ALLOC_COUNTING 1
#endif

using namespace edgelock;

static std::atomic<bool> g_counting{false};
static std::atomic<long> g_allocs{0};

#if EDGELOCK_ALLOC_COUNTING
extern "C" {
void *__libc_malloc(size_t n);
void *__libc_calloc(size_t n, size_t size);
void *__libc_realloc(void *p, size_t n);
void __libc_free(void *p);

void *malloc(size_t n)
{
    if (g_counting.load(std::memory_order_relaxed))
        g_allocs.fetch_add(1, std::memory_order_relaxed);
    return __libc_malloc(n);
}
void *calloc(size_t n, size_t size)
{
    if (g_counting.load(std::memory_order_relaxed))
        g_allocs.fetch_add(1, std::memory_order_relaxed);
    return __libc_calloc(n, size);
}
void *realloc(void *p, size_t n)
{
    if (g_counting.load(std::memory_order_relaxed))
        g_allocs.fetch_add(1, std::memory_order_relaxed);
    return __libc_realloc(p, n);
}
void free(void *p)
{
    __libc_free(p);
}
}
#endif

// Counts from construction to stop().
struct Counter {
    Counter()
    {
        g_allocs = 0;
        g_counting = true;
    }
    long stop()
    {
        g_counting = false;
        return g_allocs.load();
    }
};

static const int kWarmup = 200;
static const int kPairs = 1000;
static const int64_t kLease = 10000;

// ---- edgelock ---------------------------------------------------------------------

struct Run {
    edgelock_client *c;
    edgelock_lock *lks;
    int begin, end, next;
    int done, errors;
};

static void run_step(Run *run);
static void run_unlocked(edgelock_client *, edgelock_lock, edgelock_status st, int64_t value, void *user)
{
    Run *run = static_cast<Run *>(user);
    if (st != EDGELOCK_OK || value != 1)
        run->errors++;
    run->done++;
    run_step(run);
}
static void run_locked(edgelock_client *c, edgelock_lock lk, edgelock_status st, int64_t, void *user)
{
    Run *run = static_cast<Run *>(user);
    if (st != EDGELOCK_OK || edgelock_unlock_async(c, lk, 1, run_unlocked, run) != EDGELOCK_OK) {
        run->errors++;
        run->done++;
        run_step(run);
    }
}
static void run_step(Run *run)
{
    if (run->next >= run->end)
        return;
    if (edgelock_lock_async(run->c, run->lks[run->next++], 1, 0, kLease, run_locked, run) != EDGELOCK_OK) {
        run->errors++;
        run->done++;
    }
}

static bool no_commands(edgelock_client *c)
{
    edgelock_stats s;
    return edgelock_client_stats(c, &s) == EDGELOCK_OK && s.commands == 0 && s.holds == 0;
}

// Runs pairs [begin, end) back to back; true when all succeeded.
static bool run_pairs(EventLoop &loop, edgelock_client *c, edgelock_lock *lks, int begin, int end)
{
    Run run = {c, lks, begin, end, begin, 0, 0};
    run_step(&run);
    bool ok = loop.run_until([&] { return run.done == end - begin && no_commands(c); }, 60000);
    if (run.errors)
        fprintf(stderr, "  %d pairs failed\n", run.errors);
    return ok && run.errors == 0;
}

// ---- the floor: the same commands through hiredis alone ------------------------------

struct Floor {
    redisAsyncContext *ac;
    const char *owner; // owner field
    int begin, end, next;
    int done, errors, pending;
    bool connected, failed;
    char buf[2048];
};

static void name_of(char *out, size_t cap, const char *prefix, int i)
{
    snprintf(out, cap, "%s:%d", prefix, i);
}

static void latch_of(Writer &w, const char *name, int i)
{
    write_prefix_name(w, edgelock::kUnlockLatchPrefix, name, strlen(name));
    char id[40];
    snprintf(id, sizeof(id), ":%016x%016x", (unsigned)i * 2654435761u, (unsigned)i);
    w.str(id);
}

static void floor_step(Floor *f);
static void floor_noop(redisAsyncContext *, void *r, void *priv)
{
    Floor *f = static_cast<Floor *>(priv);
    if (!r)
        f->errors++;
    f->pending--;
}

static void floor_send(Floor *f, RespCommand &rc)
{
    const char *out;
    size_t len;
    if (!rc.finish(&out, &len)) {
        f->errors++;
        return;
    }
    f->pending++;
    // Every edgelock command has a reply callback; so do these.
    if (redisAsyncFormattedCommand(f->ac, floor_noop, f, out, len) != REDIS_OK) {
        f->errors++;
        f->pending--;
    }
}

static void floor_release_reply(redisAsyncContext *ac, void *r, void *priv)
{
    Floor *f = static_cast<Floor *>(priv);
    redisReply *reply = static_cast<redisReply *>(r);
    f->pending--;
    if (!reply || reply->type != REDIS_REPLY_INTEGER || reply->integer != 1)
        f->errors++;
    // As edgelock does: the latch DEL first, then the caller's next lock.
    int i = f->next - 1;
    char name[32];
    name_of(name, sizeof(name), "floor", i);
    RespCommand rc(f->buf, sizeof(f->buf));
    rc.arg("DEL");
    latch_of(rc.begin_arg(), name, i);
    rc.end_arg();
    floor_send(f, rc);
    (void)ac;
    f->done++;
    floor_step(f);
}

static void floor_acquire_reply(redisAsyncContext *, void *r, void *priv)
{
    Floor *f = static_cast<Floor *>(priv);
    redisReply *reply = static_cast<redisReply *>(r);
    f->pending--;
    if (!reply || reply->type != REDIS_REPLY_NIL)
        f->errors++;
    int i = f->next - 1;
    char name[32];
    name_of(name, sizeof(name), "floor", i);
    const edgelock::Script &s = edgelock::kScripts[edgelock::kScriptRelease];
    RespCommand rc(f->buf, sizeof(f->buf));
    rc.arg("EVALSHA");
    rc.arg(s.sha1, 40);
    rc.arg_u64(3);
    rc.arg(name);
    write_prefix_name(rc.begin_arg(), edgelock::kLockChannelPrefix, name, strlen(name));
    rc.end_arg();
    latch_of(rc.begin_arg(), name, i);
    rc.end_arg();
    rc.arg("0");
    rc.arg_i64(kLease);
    rc.arg(f->owner);
    rc.arg("publish");
    rc.arg_u64(16000);
    const char *out;
    size_t len;
    if (!rc.finish(&out, &len)) {
        f->errors++;
        return;
    }
    f->pending++;
    if (redisAsyncFormattedCommand(f->ac, floor_release_reply, f, out, len) != REDIS_OK)
        f->errors++;
}

static void floor_step(Floor *f)
{
    if (f->next >= f->end)
        return;
    int i = f->next++;
    char name[32];
    name_of(name, sizeof(name), "floor", i);
    const edgelock::Script &s = edgelock::kScripts[edgelock::kScriptAcquire];
    RespCommand rc(f->buf, sizeof(f->buf));
    rc.arg("EVALSHA");
    rc.arg(s.sha1, 40);
    rc.arg_u64(1);
    rc.arg(name);
    rc.arg_i64(kLease);
    rc.arg(f->owner);
    const char *out;
    size_t len;
    if (!rc.finish(&out, &len)) {
        f->errors++;
        return;
    }
    f->pending++;
    if (redisAsyncFormattedCommand(f->ac, floor_acquire_reply, f, out, len) != REDIS_OK)
        f->errors++;
}

static void floor_connected(const redisAsyncContext *ac, int status)
{
    Floor *f = static_cast<Floor *>(ac->data);
    if (status == REDIS_OK)
        f->connected = true;
    else
        f->failed = true;
}

static bool floor_pairs(EventLoop &loop, Floor *f, int begin, int end)
{
    f->begin = begin;
    f->end = end;
    f->next = begin;
    f->done = 0;
    floor_step(f);
    bool ok = loop.run_until([&] { return f->done == end - begin && f->pending == 0; }, 60000);
    return ok && f->errors == 0;
}

// ---- the test -------------------------------------------------------------------------

TEST_CASE(lock_unlock_path_adds_no_allocation_to_hiredis_floor)
{
    if (!EDGELOCK_ALLOC_COUNTING) {
        printf("  skipped: malloc is owned by a sanitizer in this build\n");
        return;
    }
    RedisServer &r = shared_server();
    {
        // Both runs use the scripts by SHA: load them once up front.
        redisContext *ctx = r.connect();
        REQUIRE(ctx);
        for (int i = 0; i < edgelock::kScriptCount; i++)
            freeReplyObject(
                redisCommand(ctx, "SCRIPT LOAD %b", edgelock::kScripts[i].text, edgelock::kScripts[i].len));
        redisFree(ctx);
    }

    // edgelock, event-loop mode on this thread.
    EventLoop loop;
    REQUIRE(loop.ok());
    edgelock_config cfg;
    edgelock_config_init(&cfg);
    cfg.url = r.url();
    cfg.max_locks = kWarmup + kPairs + 8;
    edgelock_client *c = nullptr;
    Counter create_count;
    edgelock_status st = edgelock_client_create(&cfg, loop.base(), &c);
    long create_allocs = create_count.stop();
    REQUIRE(st == EDGELOCK_OK && c);
    edgelock_stats s;
    CHECK_ST(edgelock_client_stats(c, &s), EDGELOCK_OK);
    printf("  client_create: %ld allocations, table_bytes %llu\n", create_allocs,
           (unsigned long long)s.table_bytes);
    CHECK(create_allocs > 0);
    CHECK(s.table_bytes > 0);

    static edgelock_lock lks[kWarmup + kPairs];
    Counter new_count;
    for (int i = 0; i < kWarmup + kPairs; i++) {
        char name[32];
        name_of(name, sizeof(name), "alloc", i);
        if (edgelock_lock_new(c, name, strlen(name), &lks[i]) != EDGELOCK_OK)
            lks[i].id = 0;
    }
    long new_allocs = new_count.stop();
    CHECK_EQ(new_allocs, 0); // lock handles live in the table
    for (int i = 0; i < kWarmup + kPairs; i++)
        REQUIRE(lks[i].id != 0);

    REQUIRE(loop.run_until([&] { return edgelock_client_stats(c, &s) == EDGELOCK_OK && s.connected; }, 5000));
    loop.run_for(100); // the subscriber connection settles too
    REQUIRE(run_pairs(loop, c, lks, 0, kWarmup));
    Counter pair_count;
    bool ok = run_pairs(loop, c, lks, kWarmup, kWarmup + kPairs);
    long edgelock_allocs = pair_count.stop();
    CHECK(ok);
    CHECK_EQ(redis_integer(r, "EVAL %s 0", "return #redis.call('keys', 'alloc:*')"), 0);
    CHECK_EQ(redis_integer(r, "EVAL %s 0", "return #redis.call('keys', 'redisson_unlock_latch*')"), 0);
    for (int i = 0; i < kWarmup + kPairs; i++)
        CHECK_ST(edgelock_lock_free(c, lks[i]), EDGELOCK_OK);
    edgelock_client_destroy(c);
    loop.run_for(20);

    // The floor: a bare hiredis async context on the same kind of base.
    EventLoop floor_loop;
    REQUIRE(floor_loop.ok());
    static Floor f;
    memset(&f, 0, sizeof(f));
    f.owner = "0b5c8f4e-8a1d-4c2b-9e3f-123456789abc:1";
    f.ac = redisAsyncConnect("127.0.0.1", r.port());
    REQUIRE(f.ac && !f.ac->err);
    f.ac->data = &f;
    REQUIRE(redisLibeventAttach(f.ac, floor_loop.base()) == REDIS_OK);
    redisAsyncSetConnectCallback(f.ac, floor_connected);
    REQUIRE(floor_loop.run_until([&] { return f.connected || f.failed; }, 5000));
    REQUIRE(f.connected);
    REQUIRE(floor_pairs(floor_loop, &f, 0, kWarmup));
    Counter floor_count;
    ok = floor_pairs(floor_loop, &f, kWarmup, kWarmup + kPairs);
    long floor_allocs = floor_count.stop();
    CHECK(ok);
    redisAsyncFree(f.ac);
    floor_loop.run_for(20);
    CHECK_EQ(redis_integer(r, "EVAL %s 0", "return #redis.call('keys', 'floor:*')"), 0);

    double per_pair = (double)edgelock_allocs / kPairs;
    double floor_per_pair = (double)floor_allocs / kPairs;
    printf("  allocs/pair: edgelock %.3f, plain hiredis floor %.3f (%ld and %ld over %d pairs)\n", per_pair,
           floor_per_pair, edgelock_allocs, floor_allocs, kPairs);
    CHECK(floor_allocs > 0); // the counter works
    CHECK(edgelock_allocs <= floor_allocs);
}
