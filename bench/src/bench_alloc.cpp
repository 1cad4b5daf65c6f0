// SPDX-License-Identifier: BSD-3-Clause
// edgelock_bench_alloc: heap allocations per lock+unlock pair (scenario E).
//
// This binary interposes malloc, calloc and realloc (forwarding to glibc) and
// counts calls from every thread while counting is on. It runs the same
// lock/unlock traffic three ways:
//   edgelock, event-loop mode (async API on our base, one thread)
//   edgelock, blocking API (the caller's thread plus the client's loop thread)
//   plain hiredis async on libevent sending the same commands, pre-formatted
//     as edgelock does (the floor: what hiredis and libevent allocate by
//     themselves)
// edgelock's own allocations per pair are the difference to the floor.
//
//   edgelock_bench_alloc --port P [--pairs N]
#include <event2/event.h>
#include <hiredis/adapters/libevent.h>
#include <hiredis/async.h>
#include <hiredis/hiredis.h>
#include <stdarg.h>
#include <string.h>

#include <atomic>
#include <string>
#include <vector>

#include "edgelock/edgelock.h"
#include "redisson/names.hpp"
#include "redisson/scripts.hpp"
#include "util.hpp"

using namespace bench;

static std::atomic<bool> g_counting{false};
static std::atomic<long> g_allocs{0};
// Calls whose immediate caller is code of this executable: edgelock is linked
// in statically, hiredis, libevent and glibc are shared libraries, so these
// are the allocations edgelock's own code makes (the benchmark's own code
// allocates nothing while counting).
static std::atomic<long> g_direct{0};

extern "C" {
extern const char __executable_start[];
extern const char etext[];
}

static inline void count(const void *caller)
{
    if (!g_counting.load(std::memory_order_relaxed))
        return;
    g_allocs.fetch_add(1, std::memory_order_relaxed);
    const char *p = static_cast<const char *>(caller);
    if (p >= __executable_start && p < etext)
        g_direct.fetch_add(1, std::memory_order_relaxed);
}

extern "C" {
void *__libc_malloc(size_t n);
void *__libc_calloc(size_t n, size_t size);
void *__libc_realloc(void *p, size_t n);
void __libc_free(void *p);

void *malloc(size_t n)
{
    count(__builtin_return_address(0));
    return __libc_malloc(n);
}
void *calloc(size_t n, size_t size)
{
    count(__builtin_return_address(0));
    return __libc_calloc(n, size);
}
void *realloc(void *p, size_t n)
{
    count(__builtin_return_address(0));
    return __libc_realloc(p, n);
}
void free(void *p)
{
    __libc_free(p);
}
}

namespace
{

const int64_t kLease = 10000;

long g_last_direct = 0;

void start_count()
{
    g_allocs = 0;
    g_direct = 0;
    g_counting = true;
}
long stop_count()
{
    g_counting = false;
    g_last_direct = g_direct.load();
    return g_allocs.load();
}

edgelock_client *new_client(int port, struct event_base *base, int locks)
{
    edgelock_config cfg;
    edgelock_config_init(&cfg);
    std::string url = "redis://127.0.0.1:" + std::to_string(port);
    cfg.url = url.c_str();
    cfg.max_locks = (uint32_t)locks;
    edgelock_client *c = nullptr;
    check_st(edgelock_client_create(&cfg, base, &c), "client_create");
    return c;
}

// ---- edgelock, event-loop mode ------------------------------------------------------

struct Run {
    edgelock_client *c;
    std::vector<edgelock_lock> *lks;
    int next, end, done;
};

void run_step(Run *r);
void run_unlocked(edgelock_client *, edgelock_lock, edgelock_status st, int64_t, void *user)
{
    check_st(st, "unlock");
    auto *r = static_cast<Run *>(user);
    r->done++;
    run_step(r);
}
void run_locked(edgelock_client *c, edgelock_lock lk, edgelock_status st, int64_t, void *user)
{
    check_st(st, "lock");
    check_st(edgelock_unlock_async(c, lk, 1, run_unlocked, user), "unlock_async");
}
void run_step(Run *r)
{
    if (r->next >= r->end)
        return;
    check_st(edgelock_lock_async(r->c, (*r->lks)[(size_t)r->next++], 1, 0, kLease, run_locked, r),
             "lock_async");
}

std::vector<edgelock_lock> names(edgelock_client *c, const char *prefix, int n)
{
    std::vector<edgelock_lock> v((size_t)n);
    for (int i = 0; i < n; i++) {
        std::string s = prefix + std::to_string(i);
        check_st(edgelock_lock_new(c, s.data(), s.size(), &v[(size_t)i]), "lock_new");
    }
    return v;
}

long edgelock_async(int port, int warm, int pairs)
{
    Loop b;
    edgelock_client *c = new_client(port, b.base, warm + pairs + 8);
    if (!b.run_until([&] { return stats_of(c).connected == 1; }, 10000))
        die("connect");
    b.run_until([] { return false; }, 30);
    std::vector<edgelock_lock> lks = names(c, "bench:alloc:async:", warm + pairs);
    Run r = {c, &lks, 0, warm, 0};
    run_step(&r);
    b.run_until([&] { return r.done == warm && stats_of(c).commands == 0; }, 60000);
    r = {c, &lks, warm, warm + pairs, 0};
    start_count();
    run_step(&r);
    bool ok = b.run_until([&] { return r.done == pairs && stats_of(c).commands == 0; }, 60000);
    long n = stop_count();
    if (!ok)
        die("async pairs did not finish");
    edgelock_client_destroy(c);
    return n;
}

long edgelock_blocking(int port, int warm, int pairs)
{
    edgelock_client *c = new_client(port, nullptr, warm + pairs + 8);
    for (int i = 0; i < 2000 && stats_of(c).connected != 1; i++)
        sleep_us(2000);
    sleep_us(30000);
    std::vector<edgelock_lock> lks = names(c, "bench:alloc:blk:", warm + pairs);
    auto pair = [&](int i) {
        check_st(edgelock_try_lock(c, lks[(size_t)i], 0, kLease), "try_lock");
        check_st(edgelock_unlock(c, lks[(size_t)i], nullptr), "unlock");
    };
    for (int i = 0; i < warm; i++)
        pair(i);
    sleep_us(20000); // the last latch DEL
    start_count();
    for (int i = warm; i < warm + pairs; i++)
        pair(i);
    sleep_us(20000);
    long n = stop_count();
    edgelock_client_destroy(c);
    return n;
}

// ---- plain hiredis floor ------------------------------------------------------------

// RESP into a fixed buffer, as edgelock formats its commands (no allocation).
struct Resp {
    char buf[2048];
    size_t len = 0;
    void cmd(int argc, ...)
    {
        len = (size_t)snprintf(buf, sizeof(buf), "*%d\r\n", argc);
        va_list ap;
        va_start(ap, argc);
        for (int i = 0; i < argc; i++) {
            const char *a = va_arg(ap, const char *);
            len += (size_t)snprintf(buf + len, sizeof(buf) - len, "$%zu\r\n%s\r\n", strlen(a), a);
        }
        va_end(ap);
    }
};

struct Floor {
    redisAsyncContext *ac;
    int next, end, done, errors;
    char name[64], chan[128], latch[160];
};

void floor_step(Floor *f);

void floor_noop(redisAsyncContext *, void *, void *) {}

void floor_released(redisAsyncContext *ac, void *r, void *priv)
{
    auto *f = static_cast<Floor *>(priv);
    auto *reply = static_cast<redisReply *>(r);
    if (!reply || reply->type != REDIS_REPLY_INTEGER || reply->integer != 1)
        f->errors++;
    Resp del;
    del.cmd(2, "DEL", f->latch);
    redisAsyncFormattedCommand(ac, floor_noop, f, del.buf, del.len);
    f->done++;
    floor_step(f);
}

void floor_acquired(redisAsyncContext *ac, void *r, void *priv)
{
    auto *f = static_cast<Floor *>(priv);
    auto *reply = static_cast<redisReply *>(r);
    if (!reply || reply->type != REDIS_REPLY_NIL)
        f->errors++;
    Resp rel;
    rel.cmd(11, "EVALSHA", edgelock::kScripts[edgelock::kScriptRelease].sha1, "3", f->name, f->chan, f->latch,
            "0", "10000", "5b0d3c1e-7a44-4f0e-9a57-0c2f1b9e8d41:4242", "publish", "16000");
    redisAsyncFormattedCommand(ac, floor_released, f, rel.buf, rel.len);
}

void floor_step(Floor *f)
{
    if (f->next >= f->end)
        return;
    int i = f->next++;
    snprintf(f->name, sizeof(f->name), "bench:alloc:floor:%d", i);
    snprintf(f->chan, sizeof(f->chan), "%s:{%s}", edgelock::kLockChannelPrefix, f->name);
    snprintf(f->latch, sizeof(f->latch), "%s:{%s}:%016x%016x", edgelock::kUnlockLatchPrefix, f->name,
             (unsigned)i * 2654435761u, (unsigned)i);
    Resp acq;
    acq.cmd(6, "EVALSHA", edgelock::kScripts[edgelock::kScriptAcquire].sha1, "1", f->name, "10000",
            "5b0d3c1e-7a44-4f0e-9a57-0c2f1b9e8d41:4242");
    redisAsyncFormattedCommand(f->ac, floor_acquired, f, acq.buf, acq.len);
}

long hiredis_floor(int port, int warm, int pairs)
{
    Loop b;
    Floor f;
    memset(&f, 0, sizeof(f));
    f.ac = redisAsyncConnect("127.0.0.1", port);
    if (!f.ac || f.ac->err)
        die("floor connect");
    redisLibeventAttach(f.ac, b.base);
    f.next = 0;
    f.end = warm;
    floor_step(&f);
    b.run_until([&] { return f.done == warm; }, 60000);
    b.run_until([] { return false; }, 5);
    f.next = warm;
    f.end = warm + pairs;
    f.done = 0;
    start_count();
    floor_step(&f);
    bool ok = b.run_until([&] { return f.done == pairs; }, 60000);
    b.run_until([] { return false; }, 5); // the last DEL's reply
    long n = stop_count();
    if (!ok || f.errors)
        die("floor failed");
    redisAsyncFree(f.ac);
    return n;
}

} // namespace

int main(int argc, char **argv)
{
    Options o(argc, argv, 1);
    int port = (int)o.get("port", 0);
    int pairs = (int)o.get("pairs", 1000);
    const int warm = 200;
    if (!port)
        die("--port is required");
    load_all_scripts(port);
    long floor = hiredis_floor(port, warm, pairs);
    long async = edgelock_async(port, warm, pairs);
    long async_direct = g_last_direct;
    long blocking = edgelock_blocking(port, warm, pairs);
    long blocking_direct = g_last_direct;
    Json j;
    j.str("scenario", "e_alloc");
    j.integer("pairs", pairs);
    j.num("hiredis_floor_allocs_per_pair", (double)floor / pairs);
    j.num("edgelock_async_allocs_per_pair", (double)async / pairs);
    j.num("edgelock_blocking_allocs_per_pair", (double)blocking / pairs);
    j.num("async_minus_floor_per_pair", (double)(async - floor) / pairs);
    j.num("blocking_minus_floor_per_pair", (double)(blocking - floor) / pairs);
    j.num("edgelock_code_async_allocs_per_pair", (double)async_direct / pairs);
    j.num("edgelock_code_blocking_allocs_per_pair", (double)blocking_direct / pairs);
    j.print();
    return 0;
}
