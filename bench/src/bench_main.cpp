// SPDX-License-Identifier: BSD-3-Clause
// edgelock_bench: one scenario per invocation, one JSON object on stdout.
// bench/run_bench.py starts the redis-server, calls the scenarios in rounds,
// and turns the objects into bench/results.json and BENCHMARKS.md.
//
//   edgelock_bench shas
//   edgelock_bench floor      --port P   plain hiredis: hot and idle round trip, pair
//   edgelock_bench probe      --port P   a short hot + idle round trip measurement
//   edgelock_bench a_blocking --port P   A: lock+unlock pairs, blocking API (--fresh 1: a handle per key)
//   edgelock_bench a_async    --port P   A: the same through the async API
//   edgelock_bench a2         --port P   A2: many locks in flight on one client
//   edgelock_bench b_async    --port P   B: handoff, two clients on one event loop
//   edgelock_bench b_blocking --port P   B: handoff, two clients, two threads
//   edgelock_bench b_plain    --port P   B: the same between two plain Redisson-protocol clients
//   edgelock_bench b_mixed --holder 1|0 --port P   B: edgelock on one side, the plain client on the other
//   edgelock_bench c --kind reentrant|fair --api async|blocking|plain --port P
//   edgelock_bench d          --port P   D: 10,000 holds under the watchdog
//   edgelock_bench d_cost --holds N [--few M] --port P   D: a pair's cost beside N held locks ÷ beside M
//   edgelock_bench d_waiters --waiters N --port P   D: a handoff while N other lock calls wait
//   edgelock_bench e_rss --locks N --port P   E: RSS against table size
#include <event2/event.h>
#include <hiredis/adapters/libevent.h>
#include <hiredis/async.h>
#include <hiredis/hiredis.h>
#include <sched.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "edgelock/edgelock.h"
#include "redis/slot.hpp"
#include "redisson/names.hpp"
#include "redisson/scripts.hpp"
#include "plain_async.hpp"
#include "plain_lock.hpp"
#include "util.hpp"

using namespace bench;

namespace
{

const int64_t kLease = 10000;
// An owner field as long as edgelock's ("<uuid>:<thread id>").
const char kFloorOwner[] = "5b0d3c1e-7a44-4f0e-9a57-0c2f1b9e8d41:4242";

std::string url_of(int port)
{
    return "redis://127.0.0.1:" + std::to_string(port);
}

// ---- event loop helpers (event-loop mode clients run on our own base) -------------

void wait_connected_async(Loop &loop, edgelock_client *c)
{
    if (!loop.run_until([&] { return stats_of(c).connected == 1; }, 10000))
        die("client did not connect");
    loop.run_for(30); // the subscriber connection settles too
}

void wait_connected_blocking(edgelock_client *c)
{
    for (int i = 0; i < 1000 && stats_of(c).connected != 1; i++)
        sleep_us(2000);
    if (stats_of(c).connected != 1)
        die("client did not connect");
    sleep_us(30000);
}

// max_holds: 0 for as many as max_locks.
// subscriptions: 0 for the library's default.
edgelock_client *new_client(int port, struct event_base *base, uint32_t locks, uint32_t commands = 128,
                            uint32_t holds = 0, uint32_t subscriptions = 0)
{
    edgelock_config cfg;
    edgelock_config_init(&cfg);
    std::string url = url_of(port);
    cfg.url = url.c_str();
    cfg.max_locks = locks;
    cfg.max_holds = holds ? holds : locks;
    cfg.max_waiters = locks < 64 ? 64 : locks;
    cfg.max_commands = commands;
    if (subscriptions)
        cfg.max_subscriptions = subscriptions;
    edgelock_client *c = nullptr;
    check_st(edgelock_client_create(&cfg, base, &c), "client_create");
    return c;
}

std::vector<edgelock_lock> new_locks(edgelock_client *c, const char *prefix, int n,
                                     edgelock_lock_kind kind = EDGELOCK_REENTRANT)
{
    std::vector<edgelock_lock> v((size_t)n);
    for (int i = 0; i < n; i++) {
        std::string name = std::string(prefix) + std::to_string(i);
        check_st(edgelock_lock_new_kind(c, kind, name.data(), name.size(), &v[(size_t)i]), "lock_new");
    }
    return v;
}

// ---- Floor ----------------------------------------------------------------------------

// Async floor: the exact per-pair traffic of edgelock (acquire; release; DEL of
// the latch sent together with the next acquire) through a bare hiredis async
// context on libevent.
struct AsyncFloor {
    redisAsyncContext *ac;
    struct event_base *base;
    int i, total, warm;
    uint64_t t0, first_t0, last_t1;
    Samples lat;
    bool connected, failed, done;
    int errors;
};

void afloor_step(AsyncFloor *f);

void afloor_released(redisAsyncContext *ac, void *r, void *priv)
{
    auto *f = static_cast<AsyncFloor *>(priv);
    auto *reply = static_cast<redisReply *>(r);
    uint64_t t1 = now_ns();
    if (!reply || reply->type != REDIS_REPLY_INTEGER || reply->integer != 1)
        f->errors++;
    std::string name = "bench:floor:apair:" + std::to_string(f->i % 1000);
    std::string latch = latch_of(name, (uint64_t)f->i);
    redisAsyncCommand(ac, nullptr, nullptr, "DEL %s", latch.c_str());
    if (f->i >= f->warm) {
        f->lat.add((double)(t1 - f->t0));
        f->last_t1 = t1;
    }
    f->i++;
    afloor_step(f);
}

void afloor_acquired(redisAsyncContext *ac, void *r, void *priv)
{
    auto *f = static_cast<AsyncFloor *>(priv);
    auto *reply = static_cast<redisReply *>(r);
    if (!reply || reply->type != REDIS_REPLY_NIL)
        f->errors++;
    std::string name = "bench:floor:apair:" + std::to_string(f->i % 1000);
    std::string chan = channel_of(name), latch = latch_of(name, (uint64_t)f->i);
    redisAsyncCommand(ac, afloor_released, f, "EVALSHA %s 3 %s %s %s 0 %lld %s publish 16000",
                      edgelock::kScripts[edgelock::kScriptRelease].sha1, name.c_str(), chan.c_str(),
                      latch.c_str(), (long long)kLease, kFloorOwner);
}

void afloor_step(AsyncFloor *f)
{
    if (f->i >= f->total) {
        f->done = true;
        return;
    }
    std::string name = "bench:floor:apair:" + std::to_string(f->i % 1000);
    f->t0 = now_ns();
    if (f->i == f->warm)
        f->first_t0 = f->t0;
    redisAsyncCommand(f->ac, afloor_acquired, f, "EVALSHA %s 1 %s %lld %s",
                      edgelock::kScripts[edgelock::kScriptAcquire].sha1, name.c_str(), (long long)kLease,
                      kFloorOwner);
}

// Sync floor: edgelock's wire traffic for one lock+unlock pair through plain
// sync hiredis: acquire; release; the latch's DEL appended, so it goes out
// with the next acquire, as edgelock's does.
struct SyncPairs {
    redisContext *c;
    bool del_pending = false;
    // ns from the acquire's write to the release's answer; seq picks the key.
    double pair(uint64_t seq)
    {
        std::string name = "bench:floor:pair:" + std::to_string(seq % 1000);
        std::string chan = channel_of(name), latch = latch_of(name, seq);
        uint64_t t0 = now_ns();
        redisAppendCommand(c, "EVALSHA %s 1 %s %lld %s", edgelock::kScripts[edgelock::kScriptAcquire].sha1,
                           name.c_str(), (long long)kLease, kFloorOwner);
        void *rp = nullptr;
        if (del_pending) {
            if (redisGetReply(c, &rp) != REDIS_OK)
                die("floor DEL reply");
            freeReplyObject(rp);
        }
        if (redisGetReply(c, &rp) != REDIS_OK || ((redisReply *)rp)->type != REDIS_REPLY_NIL)
            die("floor pair acquire");
        freeReplyObject(rp);
        redisReply *r = must(c, "EVALSHA %s 3 %s %s %s 0 %lld %s publish 16000",
                             edgelock::kScripts[edgelock::kScriptRelease].sha1, name.c_str(), chan.c_str(),
                             latch.c_str(), (long long)kLease, kFloorOwner);
        uint64_t t1 = now_ns();
        if (r->type != REDIS_REPLY_INTEGER || r->integer != 1)
            die("floor pair release");
        freeReplyObject(r);
        redisAppendCommand(c, "DEL %s", latch.c_str());
        del_pending = true;
        return (double)(t1 - t0);
    }
    void drain()
    {
        void *rp = nullptr;
        if (del_pending && redisGetReply(c, &rp) == REDIS_OK)
            freeReplyObject(rp);
        del_pending = false;
    }
};

// Hot: back-to-back acquire EVALSHAs on fresh keys. Returns the measured ns.
double hot_probe(redisContext *c, int warm, int n, Samples *out)
{
    const char *acq = edgelock::kScripts[edgelock::kScriptAcquire].sha1;
    static unsigned long long seq = 0;
    uint64_t start = 0;
    for (int i = 0; i < warm + n; i++) {
        if (i == warm)
            start = now_ns();
        std::string key = "bench:floor:hot:" + std::to_string(seq++);
        uint64_t t0 = now_ns();
        redisReply *r = must(c, "EVALSHA %s 1 %s %d %s", acq, key.c_str(), 5000, kFloorOwner);
        uint64_t t1 = now_ns();
        if (r->type != REDIS_REPLY_NIL)
            die("floor acquire: unexpected reply");
        freeReplyObject(r);
        if (i >= warm)
            out->add((double)(t1 - t0));
    }
    return (double)(now_ns() - start);
}

// Idle: one acquire after a pause, as a waiter woken after a quiet spell sees it.
void idle_probe(redisContext *c, int n, int pause_us, Samples *out)
{
    const char *acq = edgelock::kScripts[edgelock::kScriptAcquire].sha1;
    static unsigned long long seq = 0;
    for (int i = 0; i < n; i++) {
        sleep_us((uint64_t)pause_us);
        std::string key = "bench:floor:idle:" + std::to_string(seq++);
        uint64_t t0 = now_ns();
        redisReply *r = must(c, "EVALSHA %s 1 %s %d %s", acq, key.c_str(), 5000, kFloorOwner);
        uint64_t t1 = now_ns();
        freeReplyObject(r);
        out->add((double)(t1 - t0));
    }
}

// A short floor measurement taken right before and after every A, B and C run
// (of every library), so each ratio has a floor from the same seconds.
int cmd_probe(const Options &o)
{
    int port = (int)o.get("port", 0);
    load_all_scripts(port);
    redisContext *c = connect_sync(port);
    Samples hot, idle;
    // Hot: back to back for --ms (at least --hot calls), so a probe covers a
    // few hundred ms of the machine's changing load rather than a moment.
    hot_probe(c, 50, (int)o.get("hot", 200), &hot);
    uint64_t end = now_ns() + (uint64_t)o.get("ms", 400) * 1000000ull;
    while (now_ns() < end)
        hot_probe(c, 0, 50, &hot);
    idle_probe(c, (int)o.get("idle", 20), 5000, &idle);
    redisFree(c);
    Json j;
    j.str("scenario", "probe");
    j.latency("hot_rtt", hot);
    j.latency("idle_rtt", idle);
    j.print();
    return 0;
}

int cmd_floor(const Options &o)
{
    int port = (int)o.get("port", 0);
    int hot_n = (int)o.get("hot", 5000), idle_n = (int)o.get("idle", 200), pairs = (int)o.get("pairs", 3000);
    int idle_pause_us = (int)o.get("idle-pause-us", 5000);
    const int warm = 500;
    load_all_scripts(port);
    redisContext *c = connect_sync(port);

    Samples hot, idle;
    double hot_elapsed = hot_probe(c, warm, hot_n, &hot);
    idle_probe(c, idle_n, idle_pause_us, &idle);

    // Pair: edgelock's wire traffic for lock+unlock through sync hiredis.
    Samples pair;
    SyncPairs sp{c};
    uint64_t pair_start = 0;
    for (int i = 0; i < warm + pairs; i++) {
        if (i == warm)
            pair_start = now_ns();
        double v = sp.pair((uint64_t)i);
        if (i >= warm)
            pair.add(v);
    }
    double pair_elapsed = (double)(now_ns() - pair_start);
    sp.drain();
    redisFree(c);

    // The same pair through hiredis async on libevent.
    Loop loop;
    AsyncFloor f;
    f.ac = redisAsyncConnect("127.0.0.1", port);
    if (!f.ac || f.ac->err)
        die("async floor connect");
    f.base = loop.base;
    f.i = 0;
    f.total = warm + pairs;
    f.warm = warm;
    f.connected = f.failed = f.done = false;
    f.errors = 0;
    f.t0 = f.first_t0 = f.last_t1 = 0;
    redisLibeventAttach(f.ac, loop.base);
    afloor_step(&f);
    if (!loop.run_until([&] { return f.done; }, 60000) || f.errors)
        die("async floor failed (%d errors)", f.errors);
    redisAsyncFree(f.ac);

    Json j;
    j.str("scenario", "floor");
    j.latency("hot_rtt", hot);
    j.num("hot_calls_per_s", hot_n / (hot_elapsed / 1e9));
    j.latency("idle_rtt", idle);
    j.integer("idle_pause_us", idle_pause_us);
    j.latency("pair_sync", pair);
    j.num("pair_sync_per_s", pairs / (pair_elapsed / 1e9));
    j.latency("pair_async", f.lat);
    j.num("pair_async_per_s", pairs / ((double)(f.last_t1 - f.first_t0) / 1e9));
    j.print();
    return 0;
}

// ---- A: uncontended pairs -----------------------------------------------------------------

// Process CPU (every thread) and context switches (voluntary + involuntary).
struct Usage {
    uint64_t cpu_ns;
    long csw;  // context switches, voluntary (sleeps) and involuntary (preempted)
    long vcsw; // voluntary only: the ones the process causes itself
};
Usage usage()
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return {((uint64_t)ru.ru_utime.tv_sec + (uint64_t)ru.ru_stime.tv_sec) * 1000000000ull +
                ((uint64_t)ru.ru_utime.tv_usec + (uint64_t)ru.ru_stime.tv_usec) * 1000ull,
            ru.ru_nvcsw + ru.ru_nivcsw, ru.ru_nvcsw};
}

// A is measured against a floor interleaved with it: chunks of `chunk` pairs
// alternate with chunks of `chunk` hot EVALSHAs from a plain sync hiredis
// connection, so both see the same moments of a machine whose load changes
// from one second to the next. The ratio is 2 x mean floor RTT / mean pair.
struct Interleaved {
    redisContext *floor_ctx;
    Samples floor, pairs;
    std::vector<double> chunk_ratio;
    double chunk_floor_ns = 0, chunk_pair_ns = 0;
    bool enabled = true; // --floor 0: no interleaved floor (for profiling)
    void floor_chunk(int n)
    {
        if (!enabled) {
            chunk_floor_ns = 0;
            return;
        }
        Samples s;
        Usage u0 = usage();
        hot_probe(floor_ctx, 0, n, &s);
        Usage u1 = usage();
        floor_csw += u1.csw - u0.csw;
        floor_vcsw += u1.vcsw - u0.vcsw;
        chunk_floor_ns = 0;
        for (double v : s.v) {
            floor.add(v);
            chunk_floor_ns += v;
        }
        chunk_floor_ns /= (double)n;
    }
    // The blocking face's own floor (issue 13: "the same wire traffic sent
    // through plain sync hiredis"): n lock+unlock pairs through SyncPairs on
    // a connection of its own, right after the hot round trips.
    redisContext *pair_ctx = nullptr;
    Samples sync_pairs;
    std::vector<double> sync_chunk_ratio;
    double chunk_sync_ns = 0;
    uint64_t sync_seq = 0;
    void sync_pair_chunk(int n)
    {
        chunk_sync_ns = 0;
        if (!enabled || !pair_ctx)
            return;
        SyncPairs sp{pair_ctx};
        for (int k = 0; k < n; k++) {
            double v = sp.pair(sync_seq++);
            sync_pairs.add(v);
            chunk_sync_ns += v;
        }
        sp.drain();
        chunk_sync_ns /= (double)n;
    }
    void end_chunk(double pair_ns_sum, int n)
    {
        chunk_ratio.push_back(2.0 * chunk_floor_ns / (pair_ns_sum / n));
        if (chunk_sync_ns > 0)
            sync_chunk_ratio.push_back(chunk_sync_ns / (pair_ns_sum / n));
    }
    // Client CPU and context switches over the timed pairs only.
    uint64_t cpu_ns = 0;
    long csw = 0, vcsw = 0;
    long floor_csw = 0, floor_vcsw = 0; // over the floor's chunks
    void report(Json &j, int n)
    {
        j.num("client_cpu_us_per_pair", (double)cpu_ns / 1000.0 / n);
        j.num("context_switches_per_pair", (double)csw / n);
        j.num("voluntary_switches_per_pair", (double)vcsw / n);
        if (floor.size() > 0) { // plain sync hiredis: two round trips, as a pair
            j.num("floor_context_switches_per_2_rtts", 2.0 * (double)floor_csw / (double)floor.size());
            j.num("floor_voluntary_switches_per_2_rtts", 2.0 * (double)floor_vcsw / (double)floor.size());
        }
        double pair_sum = 0;
        for (double v : pairs.v)
            pair_sum += v;
        j.num("pairs_per_s", n / (pair_sum / 1e9));
        j.latency("pair", pairs);
        if (!enabled)
            return;
        j.latency("floor_rtt", floor);
        j.num("floor_pairs_per_s", 1e9 / (2.0 * floor.mean()));
        j.num("ratio_vs_floor", 2.0 * floor.mean() / pairs.mean());
        Samples cr;
        for (double r : chunk_ratio)
            cr.add(r);
        j.num("ratio_vs_floor_chunk_median", cr.pct(50));
        j.num("p50_in_floor_rtts", pairs.pct(50) / floor.pct(50));
        if (sync_pairs.size() == 0)
            return;
        j.latency("sync_pair", sync_pairs);
        j.num("ratio_vs_sync_pair", sync_pairs.mean() / pairs.mean());
        Samples sr;
        for (double r : sync_chunk_ratio)
            sr.add(r);
        j.num("ratio_vs_sync_pair_chunk_median", sr.pct(50));
    }
};

// Pairs first .. first + n - 1, timed in chunks with the floor measured
// before each chunk, CPU and context switches over the pairs only.
template <typename Pair> void time_pairs(Interleaved &il, int first, int n, int chunk, Pair pair)
{
    for (int i = first; i < first + n;) {
        il.floor_chunk(chunk);
        il.sync_pair_chunk(chunk);
        double sum = 0;
        int k = 0;
        Usage u0 = usage();
        for (; k < chunk && i < first + n; k++, i++) {
            double v = pair(i);
            il.pairs.add(v);
            sum += v;
        }
        Usage u1 = usage();
        il.cpu_ns += u1.cpu_ns - u0.cpu_ns;
        il.csw += u1.csw - u0.csw;
        il.vcsw += u1.vcsw - u0.vcsw;
        il.end_chunk(sum, k);
    }
}

// One latency a line, in µs (--samples FILE), for the plots.
void write_samples(const std::string &path, const Samples &s)
{
    if (path.empty())
        return;
    FILE *f = fopen(path.c_str(), "w");
    if (!f)
        die("cannot write %s", path.c_str());
    for (double v : s.v)
        fprintf(f, "%.3f\n", v / 1000.0);
    fclose(f);
}

int cmd_a_blocking(const Options &o)
{
    int port = (int)o.get("port", 0);
    int n = (int)o.get("pairs", 5000), chunk = (int)o.get("chunk", 100);
    const int warm = 500, names = 1000;
    load_all_scripts(port);
    // 1,000 lock handles; holds at the default 64 (one is held at a time).
    edgelock_client *c = new_client(port, nullptr, names + 8, 128, 64);
    wait_connected_blocking(c);
    std::vector<edgelock_lock> lks = new_locks(c, "bench:a:blk:", names);
    Interleaved il;
    il.floor_ctx = connect_sync(port);
    il.pair_ctx = connect_sync(port);
    il.enabled = o.get("floor", 1) != 0;
    // --fresh 1: a handle per key, as the README's example does (lock_new and
    // lock_free inside the timed pair), instead of the 1,000 made beforehand.
    const bool fresh = o.get("fresh", 0) != 0;
    char key[64];
    auto pair = [&](int i) {
        edgelock_lock lk = lks[(size_t)(i % names)];
        uint64_t t0 = now_ns();
        if (fresh) {
            int len = snprintf(key, sizeof(key), "bench:a:fresh:%d", i % names);
            check_st(edgelock_lock_new(c, key, (size_t)len, &lk), "lock_new");
        }
        check_st(edgelock_try_lock(c, lk, 0, kLease), "try_lock");
        int released = 0;
        check_st(edgelock_unlock(c, lk, &released), "unlock");
        if (fresh)
            check_st(edgelock_lock_free(c, lk), "lock_free");
        uint64_t t1 = now_ns();
        if (released != 1)
            die("unlock did not release");
        return (double)(t1 - t0);
    };
    for (int i = 0; i < warm; i++)
        pair(i);
    time_pairs(il, warm, n, chunk, pair);
    edgelock_client_destroy(c);
    redisFree(il.floor_ctx);
    redisFree(il.pair_ctx);
    Json j;
    write_samples(o.get_str("samples", ""), il.pairs);
    j.str("scenario", fresh ? "a_blocking_fresh" : "a_blocking");
    j.integer("ops_total", warm + n);
    il.report(j, n);
    j.print();
    return 0;
}

// For F's floor: a sync connection to the node serving each slot (--port's
// node for every slot unless it is a cluster's).
struct SlotConns {
    std::vector<redisContext *> ctx;
    std::vector<uint16_t> owner; // per slot: an index into ctx
    explicit SlotConns(int port) : owner(16384, 0)
    {
        redisContext *seed = connect_sync(port);
        ctx.push_back(seed);
        redisReply *r = (redisReply *)redisCommand(seed, "CLUSTER SLOTS");
        std::vector<int> ports = {port};
        for (size_t i = 0; r && r->type == REDIS_REPLY_ARRAY && i < r->elements; i++) {
            redisReply *range = r->element[i];
            int p = (int)range->element[2]->element[1]->integer;
            size_t k = std::find(ports.begin(), ports.end(), p) - ports.begin();
            if (k == ports.size()) {
                ports.push_back(p);
                ctx.push_back(connect_sync(p));
            }
            for (long long s = range->element[0]->integer; s <= range->element[1]->integer; s++)
                owner[(size_t)s] = (uint16_t)k;
        }
        if (r)
            freeReplyObject(r);
    }
    ~SlotConns()
    {
        for (redisContext *c : ctx)
            redisFree(c);
    }
};

// F (issue 14): uncontended blocking pairs on the server --url names: one
// Redis, or a cluster (redis-cluster://, the slot map warm after the first
// pairs). The driver counts what Redis ran per pair on every node. The floor,
// interleaved in chunks: two plain round trips (PING) per pair, each to the
// node its lock's slot is on, so that both see the same servers in the same
// order (three servers on two cores answer slower than one that stays hot).
int cmd_a_url(const Options &o)
{
    std::string url = o.get_str("url", "");
    int n = (int)o.get("pairs", 3000);
    const int warm = 300, names = 1000;
    edgelock_config cfg;
    edgelock_config_init(&cfg);
    cfg.url = url.c_str();
    cfg.max_locks = names + 8;
    cfg.max_holds = 64;
    if (!edgelock_sharded_pubsub_available())
        cfg.sharded_pubsub = EDGELOCK_SHARDED_OFF;
    edgelock_client *c = nullptr;
    check_st(edgelock_client_create(&cfg, nullptr, &c), "client_create");
    wait_connected_blocking(c);
    // Names spread over every slot, so on a cluster every master serves some.
    std::vector<edgelock_lock> lks = new_locks(c, "bench:f:", names);
    Samples lat;
    auto pair = [&](int i) {
        edgelock_lock lk = lks[(size_t)(i % names)];
        uint64_t t0 = now_ns();
        check_st(edgelock_try_lock(c, lk, 0, kLease), "try_lock");
        int released = 0;
        check_st(edgelock_unlock(c, lk, &released), "unlock");
        uint64_t t1 = now_ns();
        if (released != 1)
            die("unlock did not release");
        return (double)(t1 - t0);
    };
    SlotConns nodes((int)o.get("port", 0));
    std::vector<uint16_t> slot_of((size_t)names);
    for (int i = 0; i < names; i++) {
        std::string name = "bench:f:" + std::to_string(i);
        slot_of[(size_t)i] = edgelock::key_hash_slot(name.data(), name.size());
    }
    Samples floor;
    auto floor_pair = [&](int i) {
        redisContext *fc = nodes.ctx[nodes.owner[slot_of[(size_t)(i % names)]]];
        uint64_t t0 = now_ns();
        for (int k = 0; k < 2; k++) {
            redisReply *r = (redisReply *)redisCommand(fc, "PING");
            if (!r)
                die("floor: PING failed");
            freeReplyObject(r);
        }
        return (double)(now_ns() - t0);
    };
    for (int i = 0; i < warm; i++)
        pair(i);
    const int chunk = 100;
    double sum = 0, floor_sum = 0;
    uint64_t cpu_ns = 0; // over the timed pairs only
    long csw = 0;
    for (int i = warm; i < warm + n;) {
        for (int k = 0; k < chunk; k++) {
            double v = floor_pair(i + k);
            floor.add(v);
            floor_sum += v;
        }
        Usage u0 = usage();
        for (int k = 0; k < chunk && i < warm + n; k++, i++) {
            double v = pair(i);
            lat.add(v);
            sum += v;
        }
        Usage u1 = usage();
        cpu_ns += u1.cpu_ns - u0.cpu_ns;
        csw += u1.csw - u0.csw;
    }
    edgelock_stats st = stats_of(c);
    edgelock_client_destroy(c);
    Json j;
    j.str("scenario", "a_url");
    j.integer("ops_total", warm + n);
    j.num("pairs_per_s", n / (sum / 1e9));
    j.latency("pair", lat);
    j.num("floor_pairs_per_s", (double)floor.size() / (floor_sum / 1e9));
    j.num("ratio_vs_floor", (floor_sum / (double)floor.size()) / (sum / n));
    j.integer("nodes", (long long)nodes.ctx.size());
    j.num("client_cpu_us_per_pair", (double)cpu_ns / 1000.0 / n);
    j.num("context_switches_per_pair", (double)csw / n);
    j.integer("reconnects", (long long)st.reconnects);
    j.print();
    return 0;
}

struct AsyncPairs {
    Loop *loop;
    edgelock_client *c;
    std::vector<edgelock_lock> lks;
    int i, end;
    uint64_t t0;
    Samples *lat;
    bool done;
};

void ap_step(AsyncPairs *a);

void ap_unlocked(edgelock_client *, edgelock_lock, edgelock_status st, int64_t v, void *user)
{
    auto *a = static_cast<AsyncPairs *>(user);
    uint64_t t1 = now_ns();
    if (st != EDGELOCK_OK || v != 1)
        die("async unlock: %s", edgelock_status_str(st));
    if (a->lat)
        a->lat->add((double)(t1 - a->t0));
    a->i++;
    ap_step(a);
}

void ap_locked(edgelock_client *c, edgelock_lock lk, edgelock_status st, int64_t, void *user)
{
    check_st(st, "async lock");
    check_st(edgelock_unlock_async(c, lk, 1, ap_unlocked, user), "unlock_async");
}

void ap_step(AsyncPairs *a)
{
    if (a->i >= a->end) {
        a->done = true;
        event_base_loopbreak(a->loop->base);
        return;
    }
    a->t0 = now_ns();
    check_st(
        edgelock_lock_async(a->c, a->lks[(size_t)(a->i % (int)a->lks.size())], 1, 0, kLease, ap_locked, a),
        "lock_async");
}

// Pairs [a->i, end) back to back on the loop; their latencies go to lat.
void ap_run(AsyncPairs *a, int end, Samples *lat)
{
    a->end = end;
    a->lat = lat;
    a->done = false;
    ap_step(a);
    if (!a->loop->run_until([&] { return a->done; }, 120000))
        die("async pairs did not finish");
}

int cmd_a_async(const Options &o)
{
    int port = (int)o.get("port", 0);
    int n = (int)o.get("pairs", 5000), chunk = (int)o.get("chunk", 100);
    const int warm = 500, names = 1000;
    load_all_scripts(port);
    Loop loop;
    AsyncPairs a;
    a.loop = &loop;
    a.c = new_client(port, loop.base, names + 8, 128, 64); // as in a_blocking
    wait_connected_async(loop, a.c);
    a.lks = new_locks(a.c, "bench:a:async:", names);
    a.i = 0;
    ap_run(&a, warm, nullptr);
    Interleaved il;
    il.floor_ctx = connect_sync(port);
    il.enabled = o.get("floor", 1) != 0;
    // A third interleaved chunk: edgelock's exact per-pair traffic through a
    // bare hiredis async context on the same base (what the async I/O stack
    // costs without edgelock).
    AsyncFloor f;
    f.ac = redisAsyncConnect("127.0.0.1", port);
    if (!f.ac || f.ac->err)
        die("async floor connect");
    redisLibeventAttach(f.ac, loop.base);
    f.base = loop.base;
    f.i = f.warm = f.errors = 0;
    f.connected = f.failed = false;
    while (a.i < warm + n) {
        il.floor_chunk(chunk);
        if (il.enabled) {
            f.total = f.i + chunk;
            f.done = false;
            afloor_step(&f);
            if (!loop.run_until([&] { return f.done; }, 60000) || f.errors)
                die("async floor failed");
        }
        Samples s;
        int from = a.i;
        Usage u0 = usage();
        ap_run(&a, std::min(a.i + chunk, warm + n), &s);
        Usage u1 = usage();
        il.cpu_ns += u1.cpu_ns - u0.cpu_ns;
        il.csw += u1.csw - u0.csw;
        il.vcsw += u1.vcsw - u0.vcsw;
        double sum = 0;
        for (double v : s.v) {
            il.pairs.add(v);
            sum += v;
        }
        il.end_chunk(sum, a.i - from);
    }
    loop.run_until([&] { return stats_of(a.c).commands == 0; }, 2000);
    edgelock_client_destroy(a.c);
    redisAsyncFree(f.ac);
    redisFree(il.floor_ctx);
    write_samples(o.get_str("samples", ""), il.pairs);
    Json j;
    j.str("scenario", "a_async");
    j.integer("ops_total", warm + n);
    il.report(j, n);
    if (il.enabled) {
        j.latency("hiredis_async_pair", f.lat);
        j.num("ratio_vs_hiredis_async_pair", f.lat.mean() / il.pairs.mean());
    }
    j.print();
    return 0;
}

// ---- A2: many distinct locks in flight on one client ----------------------------------------

struct Phase {
    int pending;
    int errors;
};

void phase_done(edgelock_client *, edgelock_lock, edgelock_status st, int64_t, void *user)
{
    auto *p = static_cast<Phase *>(user);
    if (st != EDGELOCK_OK)
        p->errors++;
    p->pending--;
}

int cmd_a2(const Options &o)
{
    int port = (int)o.get("port", 0);
    int window = (int)o.get("window", 512);
    double seconds = (double)o.get("ms", 1500) / 1000.0;
    Loop loop;
    edgelock_client *c = new_client(port, loop.base, (uint32_t)window, (uint32_t)(2 * window + 64));
    wait_connected_async(loop, c);
    std::vector<edgelock_lock> lks = new_locks(c, "bench:a2:", window);
    double lock_ns = 0, unlock_ns = 0, cycle_ns = 0;
    long long acquisitions = 0;
    int rounds = 0;
    for (int warm = 0; warm < 3 || lock_ns + unlock_ns < seconds * 1e9; warm++) {
        bool counted = warm >= 3;
        Phase p = {window, 0};
        uint64_t t0 = now_ns();
        for (int k = 0; k < window; k++)
            check_st(edgelock_lock_async(c, lks[(size_t)k], 1, 0, kLease, phase_done, &p), "a2 lock_async");
        if (!loop.run_until([&] { return p.pending == 0; }, 30000) || p.errors)
            die("a2 lock phase failed (%d errors)", p.errors);
        uint64_t t1 = now_ns();
        p = {window, 0};
        for (int k = 0; k < window; k++)
            check_st(edgelock_unlock_async(c, lks[(size_t)k], 1, phase_done, &p), "a2 unlock_async");
        if (!loop.run_until([&] { return p.pending == 0; }, 30000) || p.errors)
            die("a2 unlock phase failed (%d errors)", p.errors);
        uint64_t t2 = now_ns();
        // The latch DELs are still on their way: a cycle ends when they are done.
        loop.run_until([&] { return stats_of(c).commands == 0; }, 30000);
        uint64_t t3 = now_ns();
        if (counted) {
            lock_ns += (double)(t1 - t0);
            unlock_ns += (double)(t2 - t1);
            cycle_ns += (double)(t3 - t0);
            acquisitions += window;
            rounds++;
        }
    }
    edgelock_client_destroy(c);
    Json j;
    j.str("scenario", "a2");
    j.integer("window", window);
    j.integer("rounds", rounds);
    j.integer("acquisitions", acquisitions);
    j.num("acquisitions_per_s", (double)acquisitions / (lock_ns / 1e9));
    j.num("releases_per_s", (double)acquisitions / (unlock_ns / 1e9));
    j.num("cycles_per_s", (double)acquisitions / (cycle_ns / 1e9));
    j.print();
    return 0;
}

// ---- B: handoff -----------------------------------------------------------------------------

// B on two threads, one lock client each: A holds, B waits (try_lock with a
// long wait); after 3-8 ms A unlocks; the handoff is from A's unlock call to
// B's lock call returning. Lock is how a side takes and gives up the lock.
struct ThreadLock {
    std::function<void()> lock, unlock;
};

// One handoff at a time on demand: B's side lives on a thread of its own.
class ThreadHandoff
{
public:
    ThreadHandoff(ThreadLock a, ThreadLock b) : a_(std::move(a)), b_(std::move(b))
    {
        waiter_ = std::thread([this] { serve(); });
    }
    ~ThreadHandoff()
    {
        {
            std::lock_guard<std::mutex> g(m_);
            quit_ = true;
            cv_.notify_all();
        }
        waiter_.join();
    }
    // A takes the lock, B starts waiting, A lets go after 3-8 ms: ns from
    // A's unlock call to B's lock call returning. same_cpu: whether B's lock
    // call returned on the CPU A's unlock call started on (BENCHMARKS.md, B:
    // where the waiter thread sits decides much of a handoff's time).
    double once(bool *same_cpu = nullptr)
    {
        a_.lock();
        int i;
        {
            std::lock_guard<std::mutex> g(m_);
            i = ++go_;
            cv_.notify_all();
        }
        sleep_us(3000 + rand_u32() % 5000);
        int cpu = sched_getcpu();
        uint64_t t0 = now_ns();
        a_.unlock();
        std::unique_lock<std::mutex> g(m_);
        cv_.wait(g, [&] { return done_ == i; });
        if (same_cpu)
            *same_cpu = cpu == cpu1_;
        return (double)(t1_ - t0);
    }

private:
    void serve()
    {
        for (int i = 1;; i++) {
            {
                std::unique_lock<std::mutex> g(m_);
                cv_.wait(g, [&] { return go_ == i || quit_; });
                if (quit_)
                    return;
            }
            b_.lock();
            uint64_t t = now_ns();
            int cpu = sched_getcpu();
            b_.unlock();
            std::lock_guard<std::mutex> g(m_);
            t1_ = t;
            cpu1_ = cpu;
            done_ = i;
            cv_.notify_all();
        }
    }
    ThreadLock a_, b_;
    std::thread waiter_;
    std::mutex m_;
    std::condition_variable cv_;
    int go_ = 0, done_ = 0;
    bool quit_ = false;
    uint64_t t1_ = 0;
    int cpu1_ = -1;
};

// The plain Redisson-protocol client's handoff (plain_lock.hpp), run between
// edgelock's handoffs in the same process: B's reference without the noise of
// comparing two runs taken seconds apart, or of idle round trips measured
// from different threads.
struct PlainHandoff {
    PlainLock pa, pb;
    std::unique_ptr<ThreadHandoff> run;
    explicit PlainHandoff(int port, const char *name)
    {
        plain_open(&pa, port, name, std::string(kFloorOwner) + "1");
        plain_open(&pb, port, name, std::string(kFloorOwner) + "2");
        run.reset(
            new ThreadHandoff({[this] { plain_lock(&pa, kLease); }, [this] { plain_unlock(&pa, kLease); }},
                              {[this] { plain_lock(&pb, kLease); }, [this] { plain_unlock(&pb, kLease); }}));
    }
    ~PlainHandoff()
    {
        run.reset();
        plain_close(&pa);
        plain_close(&pb);
    }
};

// Handoffs split by where the waiter's lock call returned: on the CPU the
// holder's unlock started on, or another.
struct Placement {
    Samples same, other;
    void add(bool same_cpu, double ns) { (same_cpu ? same : other).add(ns); }
};

// The placement fields of one side (prefix "" for edgelock's, "plain_" for
// the plain client's): the share of handoffs with the waiter on the
// holder's CPU, and the p50 of each kind when there are enough of them.
static void placement_json(Json &j, const std::string &prefix, const Placement &p)
{
    const size_t kEnough = 10;
    size_t n = p.same.size() + p.other.size();
    if (n == 0)
        return;
    j.num((prefix + "same_cpu_share").c_str(), (double)p.same.size() / n);
    if (p.same.size() >= kEnough)
        j.num((prefix + "same_cpu_p50_us").c_str(), p.same.pct(50) / 1e3);
    if (p.other.size() >= kEnough)
        j.num((prefix + "other_cpu_p50_us").c_str(), p.other.pct(50) / 1e3);
}

Json handoff_json(const char *scenario, int ops, const Samples &lat, const Samples &idle,
                  const Samples *plain, const Placement *ours_at = nullptr,
                  const Placement *plain_at = nullptr)
{
    Json j;
    j.str("scenario", scenario);
    j.integer("ops_total", ops);
    j.latency("handoff", lat);
    j.latency("idle_rtt", idle);
    j.num("p50_in_idle_rtts", lat.pct(50) / idle.pct(50));
    j.num("p99_in_idle_rtts", lat.pct(99) / idle.pct(50));
    if (plain) {
        j.latency("plain_handoff", *plain);
        j.num("p50_vs_plain_interleaved", lat.pct(50) / plain->pct(50));
    }
    if (ours_at)
        placement_json(j, "", *ours_at);
    if (plain_at)
        placement_json(j, "plain_", *plain_at);
    return j;
}

struct Handoff {
    Loop *loop;
    edgelock_client *a, *b;
    edgelock_lock la, lb;
    struct event *hold_timer;
    int i, total, warm;
    uint64_t t0;
    bool a_done, b_done, finished;
    Samples a_reply;
    Samples lat;
    // The idle round trip, interleaved: one per handoff, after its own pause.
    redisContext *probe;
    Samples idle;
    PlainHandoff *plain;
    Samples plain_lat;
    PlainAsyncHandoff *plain_async; // the reference of the same face
    Samples plain_async_lat;
    // d_waiters: a second waiting client that takes every other handoff, with
    // samples of its own: ho_start swaps it with b each time.
    edgelock_client *b_alt = nullptr;
    edgelock_lock lb_alt = {0};
    Samples lat_alt;
    bool swapped = false;
};

void ho_start(Handoff *h);

void ho_maybe_next(Handoff *h)
{
    if (h->a_done && h->b_done) {
        h->i++;
        ho_start(h);
    }
}

void ho_b_unlocked(edgelock_client *, edgelock_lock, edgelock_status st, int64_t, void *user)
{
    check_st(st, "B unlock");
    auto *h = static_cast<Handoff *>(user);
    h->b_done = true;
    ho_maybe_next(h);
}

void ho_a_unlocked(edgelock_client *, edgelock_lock, edgelock_status st, int64_t, void *user)
{
    check_st(st, "A unlock");
    auto *h = static_cast<Handoff *>(user);
    h->a_done = true;
    if (h->i >= h->warm)
        h->a_reply.add((double)(now_ns() - h->t0));
    ho_maybe_next(h);
}

void ho_b_locked(edgelock_client *c, edgelock_lock lk, edgelock_status st, int64_t, void *user)
{
    uint64_t t1 = now_ns();
    check_st(st, "B lock");
    auto *h = static_cast<Handoff *>(user);
    if (h->t0 == 0)
        die("B acquired before A unlocked");
    if (h->i >= h->warm)
        h->lat.add((double)(t1 - h->t0));
    check_st(edgelock_unlock_async(c, lk, 2, ho_b_unlocked, h), "B unlock_async");
}

void ho_release(evutil_socket_t, short, void *user)
{
    auto *h = static_cast<Handoff *>(user);
    h->t0 = now_ns();
    check_st(edgelock_unlock_async(h->a, h->la, 1, ho_a_unlocked, h), "A unlock_async");
}

void ho_a_locked(edgelock_client *, edgelock_lock, edgelock_status st, int64_t, void *user)
{
    check_st(st, "A lock");
    auto *h = static_cast<Handoff *>(user);
    check_st(edgelock_lock_async(h->b, h->lb, 2, 30000, kLease, ho_b_locked, h), "B lock_async");
    // B is waiting (attempt, subscribe, attempt) well within 3 ms.
    struct timeval tv = {0, (suseconds_t)(3000 + rand_u32() % 5000)};
    event_add(h->hold_timer, &tv);
}

void ho_start(Handoff *h)
{
    if (h->i >= h->total) {
        h->finished = true;
        return;
    }
    h->a_done = h->b_done = false;
    h->t0 = 0;
    if (h->b_alt) {
        std::swap(h->b, h->b_alt);
        std::swap(h->lb, h->lb_alt);
        std::swap(h->lat, h->lat_alt);
        h->swapped = !h->swapped;
    }
    // The plain clients' handoffs between two of ours (the loop is idle: A
    // and B hold nothing now). The handoff right after the idle probe's pause
    // comes out slower (handoff_threads), so ours and the plain async one
    // take that place in turn.
    bool ours_after_probe = h->i % 2 == 0;
    double async_ns = h->plain_async && ours_after_probe ? h->plain_async->once() : 0;
    double plain_ns = h->plain ? h->plain->run->once() : 0;
    Samples idle;
    idle_probe(h->probe, 1, 5000, &idle);
    if (h->plain_async && !ours_after_probe)
        async_ns = h->plain_async->once();
    if (h->i >= h->warm) {
        h->idle.add(idle.v[0]);
        if (h->plain)
            h->plain_lat.add(plain_ns);
        if (h->plain_async)
            h->plain_async_lat.add(async_ns);
    }
    check_st(edgelock_lock_async(h->a, h->la, 1, 0, kLease, ho_a_locked, h), "A lock_async");
}

int cmd_b_async(const Options &o)
{
    int port = (int)o.get("port", 0);
    Loop loop;
    Handoff h;
    h.loop = &loop;
    h.a = new_client(port, loop.base, 8);
    h.b = new_client(port, loop.base, 8);
    wait_connected_async(loop, h.a);
    wait_connected_async(loop, h.b);
    const char name[] = "bench:b:async";
    check_st(edgelock_lock_new(h.a, name, strlen(name), &h.la), "lock_new");
    check_st(edgelock_lock_new(h.b, name, strlen(name), &h.lb), "lock_new");
    h.hold_timer = event_new(loop.base, -1, 0, ho_release, &h);
    loop.stop_tick(); // as the plain async client's loop: no tick (Loop::stop_tick)
    h.t0 = 0;
    load_all_scripts(port);
    h.probe = connect_sync(port);
    PlainHandoff plain(port, "bench:b:plain");
    h.plain = &plain;
    PlainAsyncHandoff plain_async(port, "bench:b:plain-async", kFloorOwner);
    h.plain_async = &plain_async;
    h.i = 0;
    h.warm = 20;
    h.total = h.warm + (int)o.get("handoffs", 200);
    h.finished = false;
    ho_start(&h);
    if (!loop.run_until([&] { return h.finished; }, 120000))
        die("handoffs did not finish");
    event_free(h.hold_timer);
    redisFree(h.probe);
    edgelock_client_destroy(h.a);
    edgelock_client_destroy(h.b);
    write_samples(o.get_str("samples", ""), h.lat);
    // A's own release round trip (its unlock callback), for the breakdown.
    handoff_json("b_async", h.total, h.lat, h.idle, &h.plain_lat)
        .latency("release_rtt", h.a_reply)
        .latency("plain_async_handoff", h.plain_async_lat)
        .num("p50_vs_plain_async_interleaved", h.lat.pct(50) / h.plain_async_lat.pct(50))
        .print();
    return 0;
}

// D, waiters: B's async handoff to a client with --waiters N lock calls
// waiting on N other locks (N channels subscribed), alternated with the same
// handoff to a client with 10, in one loop. An unlock message has to find its
// channel and its waiter among those: what N could add to a handoff.
void ignore_result(edgelock_client *, edgelock_lock, edgelock_status, int64_t, void *) {}

int cmd_d_waiters(const Options &o)
{
    int port = (int)o.get("port", 0);
    const int many = (int)o.get("waiters", 10000), few = 10, window = 500;
    Loop loop;
    load_all_scripts(port);
    // A run's own names: the locks of an earlier run outlive it by a lease.
    std::string prefix = "bench:dwait:" + std::to_string(rand_u32()) + ":";
    auto client = [&](int waiters) {
        uint32_t cap = (uint32_t)waiters + 64; // locks, holds, waiters and subscriptions
        edgelock_client *c = new_client(port, loop.base, cap, 2 * window, 0, cap);
        wait_connected_async(loop, c);
        return c;
    };
    edgelock_client *holder = client(many), *c_many = client(many), *c_few = client(few);
    // The holder takes the N locks for longer than the run; each waiting
    // client then waits on its share, a window at a time, until every call
    // is subscribed and waiting (no command in flight for a while).
    std::vector<edgelock_lock> held = new_locks(holder, (prefix + "bg:").c_str(), many);
    for (int k = 0; k < many; k += window) {
        Phase p = {0, 0};
        for (int m = k; m < many && m < k + window; m++, p.pending++)
            check_st(edgelock_lock_async(holder, held[(size_t)m], 1, 0, 600000, phase_done, &p),
                     "d_waiters hold");
        if (!loop.run_until([&] { return p.pending == 0; }, 60000) || p.errors)
            die("d_waiters: holding failed");
    }
    auto wait_on = [&](edgelock_client *c, int n) {
        std::vector<edgelock_lock> lks = new_locks(c, (prefix + "bg:").c_str(), n);
        for (int k = 0; k < n; k += window) {
            int upto = std::min(n, k + window);
            for (int m = k; m < upto; m++)
                check_st(edgelock_lock_async(c, lks[(size_t)m], 1, 600000, kLease, ignore_result, nullptr),
                         "d_waiters wait");
            auto settled = [&] {
                edgelock_stats s = stats_of(c);
                return s.waiters == (uint32_t)upto && s.subscriptions == (uint32_t)upto && s.commands == 0;
            };
            if (!loop.run_until(settled, 60000))
                die("d_waiters: waits did not settle");
        }
        loop.run_for(300);
        if (stats_of(c).commands != 0 || stats_of(c).waiters != (uint32_t)n)
            die("d_waiters: waits did not settle");
    };
    wait_on(c_many, many);
    wait_on(c_few, few);

    Handoff h;
    h.loop = &loop;
    h.a = holder;
    h.b = c_many;
    h.b_alt = c_few;
    std::string hot = prefix + "hot";
    check_st(edgelock_lock_new(holder, hot.data(), hot.size(), &h.la), "lock_new");
    check_st(edgelock_lock_new(c_many, hot.data(), hot.size(), &h.lb), "lock_new");
    check_st(edgelock_lock_new(c_few, hot.data(), hot.size(), &h.lb_alt), "lock_new");
    h.hold_timer = event_new(loop.base, -1, 0, ho_release, &h);
    loop.stop_tick();
    h.probe = connect_sync(port);
    h.plain = nullptr;
    h.plain_async = nullptr;
    h.i = 0;
    h.warm = 20;
    h.total = h.warm + 2 * (int)o.get("handoffs", 200);
    h.finished = false;
    ho_start(&h);
    if (!loop.run_until([&] { return h.finished; }, 120000))
        die("handoffs did not finish");
    if (h.swapped)
        std::swap(h.lat, h.lat_alt); // lat: the client with N waiting, lat_alt: with 10
    if (stats_of(c_many).waiters != (uint32_t)many)
        die("d_waiters: a background wait ended");
    event_free(h.hold_timer);
    redisFree(h.probe);
    edgelock_client_destroy(c_many);
    edgelock_client_destroy(c_few);
    edgelock_client_destroy(holder);
    Json j;
    j.str("scenario", "d_waiters");
    j.integer("waiters", many);
    j.latency("handoff_many", h.lat);
    j.latency("handoff_few", h.lat_alt);
    j.num("p50_many_vs_few", h.lat.pct(50) / h.lat_alt.pct(50));
    j.print();
    return 0;
}

// with_plain: a plain client's handoff after each of ours (B's reference).
int handoff_threads(const Options &o, const char *scenario, ThreadLock a, ThreadLock b, bool with_plain)
{
    int port = (int)o.get("port", 0);
    const int warm = 20, n = (int)o.get("handoffs", 200);
    Samples lat, idle, plain_lat;
    Placement ours_at, plain_at;
    load_all_scripts(port);
    redisContext *probe = connect_sync(port);
    std::unique_ptr<PlainHandoff> plain;
    if (with_plain)
        plain.reset(new PlainHandoff(port, "bench:b:plain"));
    {
        ThreadHandoff ours(std::move(a), std::move(b));
        for (int i = 0; i < warm + n; i++) {
            Samples one;
            idle_probe(probe, 1, 5000, &one); // the idle round trip, interleaved
            if (i >= warm)
                idle.add(one.v[0]);
            // The handoff right after the probe's pause comes out slower
            // (the same plain client in both places: 1.5x at p50), so ours
            // and the plain one take that place in turn.
            bool plain_first = plain && i % 2 == 1;
            bool same_cpu = false;
            if (plain_first) {
                double ns = plain->run->once(&same_cpu);
                if (i >= warm) {
                    plain_lat.add(ns);
                    plain_at.add(same_cpu, ns);
                }
            }
            double ns = ours.once(&same_cpu);
            if (i >= warm) {
                lat.add(ns);
                ours_at.add(same_cpu, ns);
            }
            if (plain && !plain_first) {
                ns = plain->run->once(&same_cpu);
                if (i >= warm) {
                    plain_lat.add(ns);
                    plain_at.add(same_cpu, ns);
                }
            }
        }
    }
    plain.reset();
    redisFree(probe);
    write_samples(o.get_str("samples", ""), lat);
    handoff_json(scenario, warm + n, lat, idle, with_plain ? &plain_lat : nullptr, &ours_at,
                 with_plain ? &plain_at : nullptr)
        .print();
    return 0;
}

int cmd_b_blocking(const Options &o)
{
    int port = (int)o.get("port", 0);
    edgelock_client *ca = new_client(port, nullptr, 8), *cb = new_client(port, nullptr, 8);
    wait_connected_blocking(ca);
    wait_connected_blocking(cb);
    const char name[] = "bench:b:blocking";
    edgelock_lock la, lb;
    check_st(edgelock_lock_new(ca, name, strlen(name), &la), "lock_new");
    check_st(edgelock_lock_new(cb, name, strlen(name), &lb), "lock_new");
    int rc = handoff_threads(o, "b_blocking",
                             {[&] { check_st(edgelock_try_lock(ca, la, 0, kLease), "A try_lock"); },
                              [&] { check_st(edgelock_unlock(ca, la, nullptr), "A unlock"); }},
                             {[&] { check_st(edgelock_try_lock(cb, lb, 30000, kLease), "B try_lock"); },
                              [&] { check_st(edgelock_unlock(cb, lb, nullptr), "B unlock"); }},
                             true);
    edgelock_client_destroy(ca);
    edgelock_client_destroy(cb);
    return rc;
}

// B with one side edgelock and the other the plain client (they speak the
// same protocol on one lock): which side of the handoff edgelock's extra time
// is on. --holder 1: edgelock holds and unlocks, the plain client waits;
// --holder 0: the plain client holds, edgelock waits. The plain pair's
// handoff is interleaved as in b_blocking.
int cmd_b_mixed(const Options &o)
{
    int port = (int)o.get("port", 0);
    const bool ours_hold = o.get("holder", 1) != 0;
    edgelock_client *c = new_client(port, nullptr, 8);
    wait_connected_blocking(c);
    const char name[] = "bench:b:mixed";
    edgelock_lock lk;
    check_st(edgelock_lock_new(c, name, strlen(name), &lk), "lock_new");
    PlainLock p;
    plain_open(&p, port, name, std::string(kFloorOwner) + "5");
    ThreadLock ours = {[&] { check_st(edgelock_try_lock(c, lk, 30000, kLease), "try_lock"); },
                       [&] { check_st(edgelock_unlock(c, lk, nullptr), "unlock"); }};
    ThreadLock plain = {[&] { plain_lock(&p, kLease); }, [&] { plain_unlock(&p, kLease); }};
    int rc = ours_hold ? handoff_threads(o, "b_mixed_holder", ours, plain, true)
                       : handoff_threads(o, "b_mixed_waiter", plain, ours, true);
    plain_close(&p);
    edgelock_client_destroy(c);
    return rc;
}

// The same handoff between two plain Redisson-protocol clients (plain_lock.hpp):
// what B costs with nothing but the protocol's own round trips.
int cmd_b_plain(const Options &o)
{
    int port = (int)o.get("port", 0);
    PlainLock pa, pb;
    plain_open(&pa, port, "bench:b:plain", std::string(kFloorOwner) + "1");
    plain_open(&pb, port, "bench:b:plain", std::string(kFloorOwner) + "2");
    int rc =
        handoff_threads(o, "b_plain", {[&] { plain_lock(&pa, kLease); }, [&] { plain_unlock(&pa, kLease); }},
                        {[&] { plain_lock(&pb, kLease); }, [&] { plain_unlock(&pb, kLease); }}, false);
    plain_close(&pa);
    plain_close(&pb);
    return rc;
}

// B's method checked on itself: two plain clients in the place of ours, so
// the interleaved ratio measures the method's own bias (1.0 when fair).
int cmd_b_calibrate(const Options &o)
{
    int port = (int)o.get("port", 0);
    PlainLock pa, pb;
    plain_open(&pa, port, "bench:b:calibrate", std::string(kFloorOwner) + "3");
    plain_open(&pb, port, "bench:b:calibrate", std::string(kFloorOwner) + "4");
    int rc = handoff_threads(o, "b_calibrate",
                             {[&] { plain_lock(&pa, kLease); }, [&] { plain_unlock(&pa, kLease); }},
                             {[&] { plain_lock(&pb, kLease); }, [&] { plain_unlock(&pb, kLease); }}, true);
    plain_close(&pa);
    plain_close(&pb);
    return rc;
}

// ---- S: semaphores ----------------------------------------------------------------------------

// An expirable semaphore of `permits` permits called name, on c.
edgelock_lock new_semaphore(edgelock_client *c, const char *name, int64_t permits)
{
    edgelock_lock s;
    check_st(edgelock_lock_new_kind(c, EDGELOCK_PERMIT_SEMAPHORE, name, strlen(name), &s), "lock_new_kind");
    check_st(edgelock_semaphore_try_set_permits(c, s, permits, nullptr), "try_set_permits");
    return s;
}

// Take and give back one permit of an expirable semaphore, under the
// watchdog, with the interleaved floor as A's (two round trips per pair).
int cmd_s_pairs(const Options &o)
{
    int port = (int)o.get("port", 0);
    int n = (int)o.get("pairs", 5000), chunk = (int)o.get("chunk", 100);
    const int warm = 500;
    edgelock_client *c = new_client(port, nullptr, 8);
    wait_connected_blocking(c);
    edgelock_lock s = new_semaphore(c, "bench:s:pairs", 3);
    Interleaved il;
    il.floor_ctx = connect_sync(port);
    il.enabled = o.get("floor", 1) != 0;
    auto pair = [&](int) {
        uint64_t t0 = now_ns();
        check_st(edgelock_try_lock(c, s, 0, EDGELOCK_LEASE_WATCHDOG), "semaphore take");
        check_st(edgelock_unlock(c, s, nullptr), "semaphore give back");
        return (double)(now_ns() - t0);
    };
    for (int i = 0; i < warm; i++)
        pair(i);
    time_pairs(il, warm, n, chunk, pair);
    edgelock_client_destroy(c);
    redisFree(il.floor_ctx);
    Json j;
    j.str("scenario", "s_pairs");
    j.integer("ops_total", warm + n);
    il.report(j, n);
    j.print();
    return 0;
}

// B's handoff on a semaphore of one permit: A gives it back, B (waiting on
// the channel) takes it; a plain lock client's handoff interleaved.
int cmd_s_handoff(const Options &o)
{
    int port = (int)o.get("port", 0);
    edgelock_client *ca = new_client(port, nullptr, 8), *cb = new_client(port, nullptr, 8);
    wait_connected_blocking(ca);
    wait_connected_blocking(cb);
    edgelock_lock sa = new_semaphore(ca, "bench:s:handoff", 1);
    edgelock_lock sb = new_semaphore(cb, "bench:s:handoff", 1);
    int rc = handoff_threads(
        o, "s_handoff",
        {[&] { check_st(edgelock_try_lock(ca, sa, 0, EDGELOCK_LEASE_WATCHDOG), "A take"); },
         [&] { check_st(edgelock_unlock(ca, sa, nullptr), "A give back"); }},
        {[&] { check_st(edgelock_try_lock(cb, sb, 30000, EDGELOCK_LEASE_WATCHDOG), "B take"); },
         [&] { check_st(edgelock_unlock(cb, sb, nullptr), "B give back"); }},
        true);
    edgelock_client_destroy(ca);
    edgelock_client_destroy(cb);
    return rc;
}

// ---- C: contended ---------------------------------------------------------------------------

struct CShared {
    std::atomic<int> holders{0};
    std::atomic<long long> overlaps{0};
    uint64_t deadline;
};

struct CAsyncClient {
    CShared *sh;
    int *running;
    edgelock_client *c;
    edgelock_lock lk;
    redisAsyncContext *ac;
    long long count;
    long long value;
    uint64_t owner = 1; // the async owner id: one per client, or 1..n on one shared client
};

void ca_lock(CAsyncClient *x);

void ca_unlocked(edgelock_client *, edgelock_lock, edgelock_status st, int64_t, void *user)
{
    check_st(st, "C unlock");
    auto *x = static_cast<CAsyncClient *>(user);
    if (now_ns() < x->sh->deadline)
        ca_lock(x);
    else
        (*x->running)--;
}

void ca_set(redisAsyncContext *, void *r, void *priv)
{
    auto *x = static_cast<CAsyncClient *>(priv);
    if (!r)
        die("C SET failed");
    x->count++;
    x->sh->holders--;
    check_st(edgelock_unlock_async(x->c, x->lk, x->owner, ca_unlocked, x), "C unlock_async");
}

void ca_get(redisAsyncContext *ac, void *r, void *priv)
{
    auto *x = static_cast<CAsyncClient *>(priv);
    auto *reply = static_cast<redisReply *>(r);
    if (!reply)
        die("C GET failed");
    long long v = reply->type == REDIS_REPLY_STRING ? atoll(reply->str) : 0;
    redisAsyncCommand(ac, ca_set, x, "SET bench:c:counter %lld", v + 1);
}

void ca_locked(edgelock_client *, edgelock_lock, edgelock_status st, int64_t, void *user)
{
    check_st(st, "C lock");
    auto *x = static_cast<CAsyncClient *>(user);
    if (++x->sh->holders != 1)
        x->sh->overlaps++;
    redisAsyncCommand(x->ac, ca_get, x, "GET bench:c:counter");
}

void ca_lock(CAsyncClient *x)
{
    check_st(edgelock_lock_async(x->c, x->lk, x->owner, EDGELOCK_WAIT_FOREVER, kLease, ca_locked, x),
             "C lock_async");
}

int cmd_c(const Options &o)
{
    int port = (int)o.get("port", 0);
    int nclients = (int)o.get("clients", 8);
    double ms = (double)o.get("ms", 2000);
    std::string kind_s = o.get_str("kind", "reentrant"), api = o.get_str("api", "async");
    // --shared 1: the contenders are owners of one edgelock client (task ids
    // on the async API, threads on the blocking one), as one process would
    // run them, rather than a client each (a process each).
    bool shared = o.get("shared", 0) != 0 && api != "plain";
    edgelock_lock_kind kind = kind_s == "fair" ? EDGELOCK_FAIR : EDGELOCK_REENTRANT;
    std::string name = "bench:c:" + kind_s + ":" + api;
    redisContext *admin = connect_sync(port);
    freeReplyObject(must(admin, "DEL bench:c:counter %s", name.c_str()));

    CShared sh;
    std::vector<long long> counts((size_t)nclients, 0);
    uint64_t start = 0, end = 0;
    Usage u0 = usage();
    if (api == "async") {
        Loop loop;
        std::vector<CAsyncClient> xs((size_t)nclients);
        int running = nclients;
        for (auto &x : xs) {
            x.sh = &sh;
            x.running = &running;
            if (shared && &x != &xs[0]) {
                x.c = xs[0].c;
                x.lk = xs[0].lk;
                x.owner = (uint64_t)(&x - &xs[0]) + 1;
            } else {
                x.c = new_client(port, loop.base, 8);
                check_st(edgelock_lock_new_kind(x.c, kind, name.data(), name.size(), &x.lk), "lock_new");
            }
            x.ac = redisAsyncConnect("127.0.0.1", port);
            if (!x.ac || x.ac->err)
                die("C connect");
            redisLibeventAttach(x.ac, loop.base);
            x.count = 0;
        }
        for (auto &x : xs)
            wait_connected_async(loop, x.c);
        loop.stop_tick(); // as B: no tick while measuring (Loop::stop_tick)
        start = now_ns();
        sh.deadline = start + (uint64_t)(ms * 1e6);
        for (auto &x : xs)
            ca_lock(&x);
        if (!loop.run_until([&] { return running == 0; }, (uint64_t)ms + 60000))
            die("C async did not finish");
        end = now_ns();
        loop.start_tick();
        for (size_t i = 0; i < xs.size(); i++) {
            counts[i] = xs[i].count;
            if (i == 0 || xs[i].c != xs[0].c) {
                loop.run_until([&] { return stats_of(xs[i].c).commands == 0; }, 2000);
                edgelock_client_destroy(xs[i].c);
            }
            redisAsyncFree(xs[i].ac);
        }
    } else {
        // A thread per client: edgelock's blocking API, or the plain
        // Redisson-protocol client (--api plain, reentrant only).
        std::vector<edgelock_client *> cs;
        std::vector<edgelock_lock> lks((size_t)nclients);
        std::vector<PlainLock> ps(api == "plain" ? (size_t)nclients : 0);
        std::vector<ThreadLock> tl((size_t)nclients);
        if (api == "plain") {
            if (kind != EDGELOCK_REENTRANT)
                die("C: --api plain speaks the reentrant lock only");
            for (int i = 0; i < nclients; i++) {
                PlainLock *pl = &ps[(size_t)i];
                plain_open(pl, port, name, std::string(kFloorOwner) + std::to_string(i));
                tl[(size_t)i] = {[pl] { plain_lock(pl, kLease); }, [pl] { plain_unlock(pl, kLease); }};
            }
        } else {
            for (int i = 0; i < nclients; i++) {
                bool second = shared && i > 0; // an owner (thread) of client 0
                edgelock_client *c = second ? cs[0] : new_client(port, nullptr, 8);
                if (!second)
                    cs.push_back(c);
                edgelock_lock *lk = &lks[(size_t)i];
                if (second)
                    *lk = lks[0];
                else
                    check_st(edgelock_lock_new_kind(c, kind, name.data(), name.size(), lk), "lock_new");
                tl[(size_t)i] = {[c, lk] {
                                     check_st(edgelock_try_lock(c, *lk, EDGELOCK_WAIT_FOREVER, kLease),
                                              "C try_lock");
                                 },
                                 [c, lk] { check_st(edgelock_unlock(c, *lk, nullptr), "C unlock"); }};
            }
            for (auto *c : cs)
                wait_connected_blocking(c);
        }
        std::vector<std::thread> ts;
        std::atomic<int> ready{0};
        std::atomic<bool> go{false};
        for (int i = 0; i < nclients; i++) {
            ts.emplace_back([&, i] {
                redisContext *rc = connect_sync(port);
                ThreadLock &l = tl[(size_t)i];
                ready++;
                while (!go.load())
                    sleep_us(100);
                long long n = 0;
                while (now_ns() < sh.deadline) {
                    l.lock();
                    if (++sh.holders != 1)
                        sh.overlaps++;
                    long long v = must_int(rc, "GET bench:c:counter");
                    freeReplyObject(must(rc, "SET bench:c:counter %lld", v + 1));
                    n++;
                    sh.holders--;
                    l.unlock();
                }
                counts[(size_t)i] = n;
                redisFree(rc);
            });
        }
        while (ready.load() < nclients)
            sleep_us(1000);
        start = now_ns();
        sh.deadline = start + (uint64_t)(ms * 1e6);
        go = true;
        for (auto &t : ts)
            t.join();
        end = now_ns();
        for (auto *c : cs)
            edgelock_client_destroy(c);
        for (auto &pl : ps)
            plain_close(&pl);
    }
    Usage u1 = usage(); // includes client setup and teardown: an upper bound
    long long total = 0, mn = -1, mx = 0;
    for (long long n : counts) {
        total += n;
        mn = mn < 0 || n < mn ? n : mn;
        mx = n > mx ? n : mx;
    }
    long long counter = must_int(admin, "GET bench:c:counter");
    redisFree(admin);
    double elapsed = (double)(end - start) / 1e9;
    Json j;
    j.str("scenario", "c");
    j.str("kind", kind_s.c_str());
    j.str("api", api.c_str());
    j.integer("clients", nclients);
    j.integer("shared_client", shared ? 1 : 0);
    j.num("seconds", elapsed);
    j.integer("acquisitions", total);
    j.integer("ops_total", total);
    j.num("acquisitions_per_s", (double)total / elapsed);
    j.integer("per_client_min", mn);
    j.integer("per_client_max", mx);
    j.raw("per_client", json_array(counts));
    j.integer("counter", counter);
    j.integer("overlaps", sh.overlaps.load());
    j.num("client_cpu_us_per_acquisition",
          (double)(u1.cpu_ns - u0.cpu_ns) / 1000.0 / (double)(total ? total : 1));
    j.num("client_cpu_pct_of_core", 100.0 * (double)(u1.cpu_ns - u0.cpu_ns) / 1e9 / elapsed);
    j.boolean("exclusion_ok", counter == total && sh.overlaps.load() == 0);
    j.print();
    return 0;
}

// ---- D: watchdog with 10,000 holds ----------------------------------------------------------

int cmd_d(const Options &o)
{
    int port = (int)o.get("port", 0);
    int holds = (int)o.get("holds", 10000);
    uint32_t lease = (uint32_t)o.get("lease", 3000);
    int periods = (int)o.get("periods", 4);
    const int window = 500;
    Loop loop;
    edgelock_config cfg;
    edgelock_config_init(&cfg);
    std::string url = url_of(port);
    cfg.url = url.c_str();
    cfg.max_locks = cfg.max_holds = (uint32_t)holds;
    cfg.max_waiters = window;
    cfg.max_commands = 2 * window + 256;
    cfg.watchdog_lease_ms = lease;
    cfg.command_timeout_ms = 10000;
    edgelock_client *c = nullptr;
    check_st(edgelock_client_create(&cfg, loop.base, &c), "client_create");
    wait_connected_async(loop, c);
    std::vector<edgelock_lock> lks = new_locks(c, "bench:d:", holds);

    // Take every lock under the watchdog, a window at a time.
    uint64_t t0 = now_ns(), cpu0 = thread_cpu_ns();
    for (int k = 0; k < holds; k += window) {
        Phase p = {0, 0};
        for (int m = k; m < holds && m < k + window; m++, p.pending++)
            check_st(edgelock_lock_async(c, lks[(size_t)m], 1, 0, EDGELOCK_LEASE_WATCHDOG, phase_done, &p),
                     "d lock_async");
        if (!loop.run_until([&] { return p.pending == 0; }, 60000) || p.errors)
            die("d acquire failed (%d errors)", p.errors);
    }
    double acquire_s = (double)(now_ns() - t0) / 1e9;
    double acquire_cpu_s = (double)(thread_cpu_ns() - cpu0) / 1e9;
    if (stats_of(c).holds != (uint32_t)holds)
        die("d: %u holds, expected %d", stats_of(c).holds, holds);

    // Idle-hold. A window starts right after a renewal tick has sent its calls
    // and ends right after the periods-th tick after it.
    auto wait_tick = [&](uint64_t after) {
        if (!loop.run_until([&] { return stats_of(c).renew_calls > after; }, lease * 2ull))
            die("d: no renewal tick");
        loop.run_for(1); // the rest of that tick's batches are out by now
        return stats_of(c).renew_calls;
    };
    uint64_t calls = wait_tick(stats_of(c).renew_calls);
    uint64_t w0 = now_ns(), c0 = thread_cpu_ns(), calls0 = calls;
    for (int k = 0; k < periods; k++)
        calls = wait_tick(calls);
    // Let that tick's replies be processed as well, so the CPU covers whole periods.
    loop.run_until([&] { return stats_of(c).commands == 0; }, 5000);
    double window_s = (double)(now_ns() - w0) / 1e9;
    double cpu_s = (double)(thread_cpu_ns() - c0) / 1e9;
    edgelock_stats s = stats_of(c);
    if (s.holds != (uint32_t)holds)
        die("d: holds lost while idle (%u left)", s.holds);
    long rss = rss_kib();

    // Release everything.
    for (int k = 0; k < holds; k += window) {
        Phase p = {0, 0};
        for (int m = k; m < holds && m < k + window; m++, p.pending++)
            check_st(edgelock_unlock_async(c, lks[(size_t)m], 1, phase_done, &p), "d unlock_async");
        if (!loop.run_until([&] { return p.pending == 0; }, 60000) || p.errors)
            die("d release failed (%d errors)", p.errors);
    }
    loop.run_until([&] { return stats_of(c).commands == 0; }, 5000);
    edgelock_client_destroy(c);

    double per_period = (double)(calls - calls0) / periods;
    Json j;
    j.str("scenario", "d");
    j.integer("holds", holds);
    j.integer("watchdog_lease_ms", lease);
    j.integer("period_ms", lease / 3);
    j.integer("periods", periods);
    j.num("window_s", window_s);
    j.num("renew_calls_per_period", per_period);
    j.num("renew_calls_per_100_locks", per_period / (holds / 100.0));
    j.num("cpu_ms_per_period", cpu_s * 1000.0 / periods);
    j.num("cpu_pct_of_core", 100.0 * cpu_s / window_s);
    j.num("acquire_s", acquire_s);
    j.num("acquire_cpu_s", acquire_cpu_s);
    j.integer("rss_kib", rss);
    j.print();
    return 0;
}

// ---- E: RSS against table size ----------------------------------------------------------------

// D, cost: uncontended blocking lock+unlock pairs (a handle per key, as A
// --fresh 1) on a client that holds --holds other locks under the watchdog
// (lease 30 s: no renewal falls inside the run), against the same pairs on a
// second client of this process that holds --few (10). Client CPU per pair
// is the cost the hold table's size could add to (issue 13: 10,000 vs 10).
// The two take turns in blocks of --block pairs (ABBA), so that both see the
// same moments of the machine: run one after the other, in processes of
// their own, the same side read 32 to 56 µs per pair from run to run.
int cmd_d_cost(const Options &o)
{
    int port = (int)o.get("port", 0);
    int holds = (int)o.get("holds", 10000), few_holds = (int)o.get("few", 10);
    int pairs = (int)o.get("pairs", 3000), block = (int)o.get("block", 100);
    if (holds < 0 || few_holds < 0 || pairs <= 0 || block <= 0)
        die("d_cost: --holds, --few >= 0; --pairs, --block > 0");
    const int warm = 300;
    load_all_scripts(port);
    struct Side {
        int holds;
        edgelock_client *c;
        std::string prefix;
        std::vector<edgelock_lock> held;
        uint64_t cpu_ns = 0, wall_ns = 0;
        int timed = 0;
    } sides[2] = {{holds, nullptr, "", {}}, {few_holds, nullptr, "", {}}};
    for (Side &sd : sides) {
        uint32_t cap = (uint32_t)sd.holds + 64;
        sd.c = new_client(port, nullptr, cap, 128, cap);
        wait_connected_blocking(sd.c);
        // A run's own names: the locks of an earlier run outlive it by a lease.
        sd.prefix = "bench:dcost:" + std::to_string(rand_u32()) + ":";
        sd.held = new_locks(sd.c, (sd.prefix + "held:").c_str(), sd.holds);
        for (auto lk : sd.held)
            check_st(edgelock_try_lock(sd.c, lk, 0, EDGELOCK_LEASE_WATCHDOG), "d_cost hold");
    }
    char key[64];
    auto pair = [&](Side &sd, int i) {
        edgelock_lock lk;
        int len = snprintf(key, sizeof(key), "%spair:%d", sd.prefix.c_str(), i % 1000);
        check_st(edgelock_lock_new(sd.c, key, (size_t)len, &lk), "lock_new");
        check_st(edgelock_try_lock(sd.c, lk, 0, kLease), "try_lock");
        check_st(edgelock_unlock(sd.c, lk, nullptr), "unlock");
        check_st(edgelock_lock_free(sd.c, lk), "lock_free");
    };
    for (Side &sd : sides)
        for (int i = 0; i < warm; i++)
            pair(sd, i);
    // The process's CPU: each client's loop thread runs whatever its caller
    // does not run itself (the other client's sleeps meanwhile).
    for (int b = 0; sides[0].timed < pairs; b++) {
        Side &sd = sides[(b & 1) ^ ((b >> 1) & 1)]; // 0 1 1 0 0 1 1 0 ...
        int n = pairs - sd.timed < block ? pairs - sd.timed : block;
        uint64_t cpu0 = process_cpu_ns(), t0 = now_ns();
        for (int i = 0; i < n; i++)
            pair(sd, sd.timed + i);
        sd.wall_ns += now_ns() - t0;
        sd.cpu_ns += process_cpu_ns() - cpu0;
        sd.timed += n;
    }
    for (Side &sd : sides) {
        if (stats_of(sd.c).holds != (uint32_t)sd.holds)
            die("d_cost: %u holds, expected %d", stats_of(sd.c).holds, sd.holds);
        edgelock_client_destroy(sd.c);
    }
    auto per_pair_us = [](const Side &sd) { return (double)sd.cpu_ns / 1000.0 / sd.timed; };
    Json j;
    j.str("scenario", "d_cost");
    j.integer("holds", holds);
    j.integer("few_holds", few_holds);
    j.integer("pairs", pairs);
    j.integer("block", block);
    j.num("pairs_per_s", sides[0].timed / ((double)sides[0].wall_ns / 1e9));
    j.num("client_cpu_us_per_pair", per_pair_us(sides[0]));
    j.num("few_pairs_per_s", sides[1].timed / ((double)sides[1].wall_ns / 1e9));
    j.num("few_client_cpu_us_per_pair", per_pair_us(sides[1]));
    j.num("cpu_vs_few", per_pair_us(sides[0]) / per_pair_us(sides[1]));
    j.print();
    return 0;
}

int cmd_e_rss(const Options &o)
{
    int port = (int)o.get("port", 0);
    int locks = (int)o.get("locks", 64);
    int fill = (int)o.get("fill", 0);
    Loop loop;
    // Connections and libevent's own state exist before the client does.
    redisContext *warm = connect_sync(port);
    redisFree(warm);
    long rss0 = rss_kib();
    edgelock_config cfg;
    edgelock_config_init(&cfg);
    std::string url = url_of(port);
    cfg.url = url.c_str();
    if (locks != 64) {
        cfg.max_locks = cfg.max_holds = (uint32_t)locks;
        cfg.max_waiters = (uint32_t)locks;
        cfg.max_subscriptions = (uint32_t)(locks / 2 > 32 ? locks / 2 : 32);
        cfg.max_commands = (uint32_t)(locks * 2 > 0xffff ? 0xffff : locks * 2);
    }
    edgelock_client *c = nullptr;
    check_st(edgelock_client_create(&cfg, loop.base, &c), "client_create");
    long rss_created = rss_kib();
    wait_connected_async(loop, c);
    long rss_connected = rss_kib();
    edgelock_stats s = stats_of(c);
    long rss_full = -1;
    if (fill) {
        // Every lock handle named and held: every table slot and name byte in use.
        std::vector<edgelock_lock> lks = new_locks(c, "bench:e:", locks);
        const int window = 500;
        for (int k = 0; k < locks; k += window) {
            Phase p = {0, 0};
            for (int m = k; m < locks && m < k + window; m++, p.pending++)
                check_st(edgelock_lock_async(c, lks[(size_t)m], 1, 0, kLease, phase_done, &p),
                         "e lock_async");
            if (!loop.run_until([&] { return p.pending == 0; }, 60000) || p.errors)
                die("e acquire failed");
        }
        rss_full = rss_kib();
        for (int k = 0; k < locks; k += window) {
            Phase p = {0, 0};
            for (int m = k; m < locks && m < k + window; m++, p.pending++)
                check_st(edgelock_unlock_async(c, lks[(size_t)m], 1, phase_done, &p), "e unlock_async");
            if (!loop.run_until([&] { return p.pending == 0; }, 60000) || p.errors)
                die("e release failed");
        }
        loop.run_until([&] { return stats_of(c).commands == 0; }, 5000);
    }
    edgelock_client_destroy(c);
    Json j;
    j.str("scenario", "e_rss");
    j.integer("max_locks", cfg.max_locks);
    j.integer("max_holds", cfg.max_holds);
    j.integer("max_waiters", cfg.max_waiters);
    j.integer("max_subscriptions", cfg.max_subscriptions);
    j.integer("max_commands", cfg.max_commands);
    j.integer("max_name_len", cfg.max_name_len);
    j.integer("table_bytes", (long long)s.table_bytes);
    j.integer("rss_before_kib", rss0);
    j.integer("rss_delta_created_kib", rss_created - rss0);
    j.integer("rss_delta_connected_kib", rss_connected - rss0);
    j.integer("rss_delta_full_kib", fill ? rss_full - rss0 : -1);
    j.print();
    return 0;
}

int cmd_shas()
{
    Json j;
    j.str("acquire", edgelock::kScripts[edgelock::kScriptAcquire].sha1);
    j.str("release", edgelock::kScripts[edgelock::kScriptRelease].sha1);
    j.str("hiredis", (std::to_string(HIREDIS_MAJOR) + "." + std::to_string(HIREDIS_MINOR) + "." +
                      std::to_string(HIREDIS_PATCH))
                         .c_str());
    j.str("libevent", event_get_version());
    j.print();
    return 0;
}

} // namespace

int main(int argc, char **argv)
{
    if (argc < 2)
        die("usage: edgelock_bench SCENARIO [--port P] [options]");
    std::string s = argv[1];
    Options o(argc, argv, 2);
    if (s != "shas" && o.get("port", 0) == 0)
        die("--port is required");
    if (s == "shas")
        return cmd_shas();
    if (s == "floor")
        return cmd_floor(o);
    if (s == "probe")
        return cmd_probe(o);
    if (s == "a_blocking")
        return cmd_a_blocking(o);
    if (s == "a_async")
        return cmd_a_async(o);
    if (s == "a_url")
        return cmd_a_url(o);
    if (s == "a2")
        return cmd_a2(o);
    if (s == "b_async")
        return cmd_b_async(o);
    if (s == "b_blocking")
        return cmd_b_blocking(o);
    if (s == "b_mixed")
        return cmd_b_mixed(o);
    if (s == "b_calibrate")
        return cmd_b_calibrate(o);
    if (s == "b_plain")
        return cmd_b_plain(o);
    if (s == "s_pairs")
        return cmd_s_pairs(o);
    if (s == "s_handoff")
        return cmd_s_handoff(o);
    if (s == "d_cost")
        return cmd_d_cost(o);
    if (s == "d_waiters")
        return cmd_d_waiters(o);
    if (s == "c")
        return cmd_c(o);
    if (s == "d")
        return cmd_d(o);
    if (s == "e_rss")
        return cmd_e_rss(o);
    die("unknown scenario %s", s.c_str());
}
