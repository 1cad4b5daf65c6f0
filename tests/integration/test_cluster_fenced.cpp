// SPDX-License-Identifier: BSD-3-Clause
// A fenced-store check under a lossy cluster failover, with and without
// cfg.wait_replicas (docs/RELIABILITY.md, "On a Redis Cluster").
//
// Four clients contend for one fenced lock on master 0 of a 3+3 cluster and,
// while they hold it, "write" to a store: each write is 25 ms, made only while
// edgelock_lock_valid() says the hold has more than 100 ms left. Meanwhile the
// replica of master 0 falls 4 s behind (it saves, stops, and comes back with
// that save once the master is killed, early in a hold) and takes over
// (CLUSTER FAILOVER TAKEOVER) with the data it had: what a failover to a
// lagging replica is.
// The old master's node then comes back empty as the new master's replica.
//
// Counted: holds whose writes overlapped another client's (the exclusion
// violations a store without fencing would suffer), and tokens that went
// backwards (what a store that checks the token alone refuses). With
// wait_replicas = 1 a lock is granted only once the replica has it, so the
// failover cannot lose a grant; without it, it can. The figures are printed
// for docs/RELIABILITY.md; the test asserts what must hold either way: every
// client made progress after the failover, nothing hung, and with WAIT no
// hold began before the time lock_valid() had promised an earlier holder.
// That promise, not the writes' overlap, is what the library answers for: a
// writer frozen between its check and its write (a loaded machine's
// scheduler, or a GC pause elsewhere) writes past it whatever the lock does;
// fencing tokens are the remedy for that. Such late writes are counted apart.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

#include <hiredis/hiredis.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "check.hpp"
#include "clients.hpp"
#include "edgelock/edgelock.h"
#include "redis/slot.hpp"
#include "redis_cluster.hpp"

using namespace edgelock;

namespace
{

#if HIREDIS_MAJOR >= 1
constexpr edgelock_sharded_pubsub kPubsub = EDGELOCK_SHARDED_AUTO;
#else
constexpr edgelock_sharded_pubsub kPubsub = EDGELOCK_SHARDED_OFF;
#endif

constexpr int kWorkers = 4;
// A hold writes for up to writes x kWriteMs: 80 (two thirds of the lease),
// or 240 (twice the lease: renewed through the time the replica falls behind).
constexpr int kShortHold = 80, kLongHold = 240;
constexpr unsigned kWriteMs = 25;
constexpr unsigned kLeaseMs = 3000;
// How far the replica falls behind: longer than a lease, so that what it last
// had of the lock has expired when it takes over, and the lock is free there
// while the last holder the old master granted it to may still write.
constexpr unsigned kBehindMs = 4000;
// How long the clients go on once the old master's node is a replica again.
constexpr unsigned kAfterMs = 3000;

uint64_t now_us()
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

// One hold as its writes saw it.
struct Span {
    int worker;
    int64_t token;
    uint64_t from_us, to_us; // first write's start, last write's end
    uint64_t promised_us;    // the latest end lock_valid() gave it (a lower bound)
    uint64_t unlocked_us;    // when its unlock was called
    uint64_t end_us() const { return std::min(promised_us, unlocked_us); } // the hold's, as promised
};

// When the master dies: early in a hold granted while the replica was behind
// (the grant is lost), or with a hold granted before and renewed since (its
// renewals are lost).
enum class Fault { GrantLost, RenewalsLost };

struct Run {
    uint32_t wait_replicas;
    int writes; // per hold
    std::mutex mu;
    std::vector<Span> spans;
    std::atomic<bool> stop{false};
    std::atomic<uint64_t> fault_us{0};
    std::atomic<uint64_t> hold_began_us{0}; // the latest hold's first write
    std::atomic<int> granted{0}, granted_after{0}, not_replicated{0}, unreachable{0}, other_errors{0},
        lost{0};
    std::atomic<int> reported_lost{0}; // on_lock_lost
    std::atomic<int> after_by_worker[kWorkers] = {};
};

Run *g_run;

void on_lost(edgelock_client *, edgelock_lock, uint64_t, void *)
{
    g_run->reported_lost++;
}

void config(edgelock_config *cfg)
{
    cfg->on_lock_lost = on_lost;
    cfg->watchdog_lease_ms = kLeaseMs;
    cfg->command_timeout_ms = 2000;
    cfg->connect_timeout_ms = 2000;
    cfg->reconnect_max_ms = 300;
    cfg->sharded_pubsub = kPubsub;
    cfg->wait_replicas = g_run->wait_replicas;
    cfg->wait_replicas_timeout_ms = 300;
}

std::string name_on_master(int m)
{
    for (int n = 0;; n++) {
        std::string name = "fenced:" + std::to_string(n);
        uint16_t slot = key_hash_slot(name.data(), name.size());
        if (slot >= RedisCluster::slot_lo(m) && slot <= RedisCluster::slot_hi(m))
            return name;
    }
}

void worker(Run *run, int id, const std::string url, const std::string name)
{
    edgelock_client *c = make_client(url.c_str(), config);
    if (!c) {
        run->other_errors++;
        return;
    }
    edgelock_lock lk;
    if (edgelock_lock_new_kind(c, EDGELOCK_FENCED, name.data(), name.size(), &lk) != EDGELOCK_OK) {
        run->other_errors++;
        edgelock_client_destroy(c);
        return;
    }
    const uint64_t me = edgelock_current_owner();
    while (!run->stop) {
        int64_t token = 0;
        edgelock_status st = edgelock_try_lock_token(c, lk, 500, -1, &token);
        if (st == EDGELOCK_ERR_NOT_REPLICATED)
            run->not_replicated++;
        else if (st == EDGELOCK_ERR_CONNECTION || st == EDGELOCK_ERR_TIMEOUT)
            run->unreachable++; // the dead master, before the map names its successor
        else if (st != EDGELOCK_OK && st != EDGELOCK_ERR_WAIT_TIMEOUT) {
            fprintf(stderr, "  try_lock: %s\n", edgelock_status_str(st));
            run->other_errors++;
        }
        if (st != EDGELOCK_OK) {
            sleep_ms(20);
            continue;
        }
        run->granted++;
        if (run->fault_us && now_us() > run->fault_us) {
            run->granted_after++;
            run->after_by_worker[id]++;
        }
        Span s = {id, token, 0, 0, 0, 0};
        for (int k = 0; k < run->writes; k++) {
            int64_t left = 0;
            const uint64_t asked = now_us();
            if (edgelock_lock_valid(c, lk, me, &left) != EDGELOCK_OK || left < 100)
                break;
            // The library read its clock at or after `asked`; less a
            // millisecond for its rounding, this end is never past its own.
            s.promised_us = std::max(s.promised_us, asked + (uint64_t)left * 1000u - 1000u);
            uint64_t t = now_us();
            if (!s.from_us) {
                s.from_us = t;
                run->hold_began_us = t;
            }
            sleep_ms(kWriteMs); // the write
            s.to_us = now_us();
        }
        s.unlocked_us = now_us(); // the next holder may begin once the unlock ran
        if (s.from_us) {
            std::lock_guard<std::mutex> g(run->mu);
            run->spans.push_back(s);
        }
        st = edgelock_unlock(c, lk, nullptr);
        if (st == EDGELOCK_ERR_LOST)
            run->lost++;
    }
    edgelock_lock_free(c, lk);
    edgelock_client_destroy(c);
}

bool is_master(RedisServer &node)
{
    redisReply *r = node.command("ROLE");
    bool m =
        r && r->type == REDIS_REPLY_ARRAY && r->elements > 0 && strcmp(r->element[0]->str, "master") == 0;
    if (r)
        freeReplyObject(r);
    return m;
}

// Pairs of holds of different clients where the later began before the
// earlier's end, as end() tells it: the last write's end (writes that
// overlapped in time), or Span::end_us() (a hold begun before an earlier
// holder's promise had run out and it had not unlocked: what lock_valid()
// must never allow).
int begun_before_end(std::vector<Span> spans, uint64_t (*end)(const Span &))
{
    std::sort(spans.begin(), spans.end(), [](const Span &a, const Span &b) { return a.from_us < b.from_us; });
    int n = 0;
    for (size_t i = 0; i < spans.size(); i++)
        for (size_t j = i + 1; j < spans.size() && spans[j].from_us < end(spans[i]); j++)
            if (spans[j].worker != spans[i].worker)
                n++;
    return n;
}

// Holds whose last write ended after their promise: a writer frozen between
// its check and its write.
int late_writes(const std::vector<Span> &spans)
{
    int n = 0;
    for (const Span &s : spans)
        n += s.to_us > s.promised_us;
    return n;
}

// Holds whose token was not above every token written before them.
int token_regressions(std::vector<Span> spans)
{
    std::sort(spans.begin(), spans.end(), [](const Span &a, const Span &b) { return a.from_us < b.from_us; });
    int n = 0;
    int64_t top = 0;
    for (const Span &s : spans) {
        if (s.token <= top)
            n++;
        top = std::max(top, s.token);
    }
    return n;
}

// One case on master m of the binary's cluster, which it leaves whole again
// (m's replica its master, m's old node its replica): each case a master of
// its own, so one cluster serves them all.
// *broken: the holds begun before an earlier holder's promise ended.
void run_failover(int m, uint32_t wait_replicas, Fault fault, int *broken)
{
    Run run;
    run.wait_replicas = wait_replicas;
    run.writes = fault == Fault::GrantLost ? kShortHold : kLongHold;
    g_run = &run;
    RedisCluster &cl = shared_cluster();
    const int replica_node = RedisCluster::kMasters + m;
    std::string url =
        "redis-cluster://127.0.0.1:" + std::to_string(cl.node((m + 1) % RedisCluster::kMasters).port());
    std::string name = name_on_master(m);
    std::vector<std::thread> threads;
    for (int i = 0; i < kWorkers; i++)
        threads.emplace_back(worker, &run, i, url, name);
    sleep_ms(2000);

    // The replica falls behind (it stops, holding what it had at its last
    // SAVE), the master dies, the replica comes back with that and takes over.
    RedisServer &replica = cl.node(replica_node);
    // The master dies early in a hold: one granted after the replica fell
    // behind, or one granted before (and renewed since). Whichever begins
    // within a while: with WAIT none can while the replica is gone.
    auto hold_begins = [&] {
        uint64_t seen = run.hold_began_us;
        wait_until(run.writes * kWriteMs + 1000, [&] { return run.hold_began_us != seen; });
        sleep_ms(100);
    };
    if (fault == Fault::RenewalsLost)
        hold_begins();
    // The snapshot and the end in one command: SHUTDOWN SAVE takes in
    // nothing after its snapshot, so the replica has acknowledged (to WAIT)
    // nothing the snapshot lacks. A SAVE and then a kill let it take in a
    // renewal in between, acknowledge it, and lose it; a replica that loses
    // what it acknowledged is beyond what WAIT promises (a loaded machine
    // saw one overlap with wait_replicas = 1 so).
    redisReply *r = replica.command("SHUTDOWN SAVE");
    if (r) // no reply: the server has gone
        freeReplyObject(r);
    replica.stop(); // reaps it
    sleep_ms(kBehindMs);
    if (fault == Fault::GrantLost)
        hold_begins();
    cl.node(m).stop();
    REQUIRE(cl.restart_node(replica_node));
    r = replica.command("CLUSTER FAILOVER TAKEOVER");
    CHECK(r && r->type == REDIS_REPLY_STATUS);
    if (r)
        freeReplyObject(r);
    run.fault_us = now_us();
    CHECK(wait_until(30000, [&] { return is_master(replica); }));
    // A replica again, so that WAIT 1 can be answered.
    CHECK(cl.rejoin_as_replica(m, replica_node));
    sleep_ms(kAfterMs);
    // The failed-over slot serves locks again: one grant at least. Most runs
    // see it within kAfterMs; on a loaded machine the new master's replica
    // may need longer before WAIT 1 is answered, so wait for it, generously.
    wait_until(30000, [&] { return run.granted_after.load() > 0; });
    run.stop = true;
    uint64_t stopping = mono_ms();
    for (std::thread &t : threads)
        t.join();
    // A worker's last try_lock waits 500 ms, its unlock a command timeout.
    CHECK(mono_ms() - stopping < 15000);

    int v = begun_before_end(run.spans, [](const Span &s) { return s.to_us; }),
        b = begun_before_end(run.spans, [](const Span &s) { return s.end_us(); }),
        regress = token_regressions(run.spans), late = late_writes(run.spans);
    auto from_takeover = [&](uint64_t us) { return ((long long)us - (long long)run.fault_us) / 1000; };
    // Every span when asked, and always when two overlapped or a promise
    // broke: an overlap with WAIT is rare (seen twice, in a parallel ctest,
    // before the promise was recorded) and its timeline is the clue.
    if (getenv("FENCED_SPANS") || v > 0 || b > 0)
        for (const Span &s : run.spans)
            printf("  span worker %d token %lld: %+lld .. %+lld ms from the takeover, promised to %+lld, "
                   "unlocked at %+lld\n",
                   s.worker, (long long)s.token, from_takeover(s.from_us), from_takeover(s.to_us),
                   from_takeover(s.promised_us), from_takeover(s.unlocked_us));
    printf("fenced failover (%s): wait_replicas=%u: holds %d (after the failover %d), overlapping holds %d, "
           "begun before a promise ended %d, writes past their promise %d, tokens backwards %d, "
           "NOT_REPLICATED %d, unreachable %d, reported lost %d, unlock LOST %d, other errors %d\n",
           fault == Fault::GrantLost ? "grant lost" : "renewals lost", wait_replicas, run.granted.load(),
           run.granted_after.load(), v, b, late, regress, run.not_replicated.load(), run.unreachable.load(),
           run.reported_lost.load(), run.lost.load(), run.other_errors.load());
    CHECK(run.granted_after.load() > 0); // the failed-over slot serves locks again
    CHECK_EQ(run.other_errors.load(), 0);
    *broken = b;
    g_run = nullptr;
}

} // namespace

TEST_CASE(without_wait_a_lost_grant_is_counted)
{
    int b = 0;
    run_failover(0, 0, Fault::GrantLost, &b);
    // Not asserted: whether the lost grant's holder still wrote when the new
    // master granted the lock again depends on timing. RELIABILITY.md quotes
    // what runs saw.
}

TEST_CASE(with_wait_no_grant_is_lost)
{
    int b = -1;
    run_failover(1, 1, Fault::GrantLost, &b);
    CHECK_EQ(b, 0);
}

TEST_CASE(with_wait_no_renewal_is_lost)
{
    int b = -1;
    run_failover(2, 1, Fault::RenewalsLost, &b);
    CHECK_EQ(b, 0);
}
