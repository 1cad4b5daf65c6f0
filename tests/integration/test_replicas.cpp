// SPDX-License-Identifier: BSD-3-Clause
// wait_replicas: a master and a replica started by the test; with the
// replica stopped (SIGSTOP) a lock is NOT_REPLICATED and nothing stays held.
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include <atomic>
#include <string>

#include "check.hpp"
#include "clients.hpp"
#include "edgelock/edgelock.h"
#include "redis_server.hpp"

namespace
{

struct Pair {
    RedisServer master, replica;
    bool ok = false;
    Pair()
    {
        if (!master.start(0, "--repl-diskless-sync-delay", "0")) // the replica syncs at once
            return;
        std::string port = std::to_string(master.port());
        // A replica writes the master's snapshot to its dir: not the test's cwd.
        const char *extra[] = {"--replicaof", "127.0.0.1", port.c_str(), "--dir", "/tmp", nullptr};
        if (!replica.start_args(0, extra))
            return;
        ok = wait_until(30000, [&] { return redis_integer(master, "WAIT %d %d", 1, 100) == 1; });
    }
};

uint32_t g_replicas = 1;
void replicated(edgelock_config *cfg)
{
    cfg->wait_replicas = g_replicas;
    // Long enough for a replica on a loaded machine (or under qemu) to answer;
    // a stopped one makes each call take this long, no more.
    cfg->wait_replicas_timeout_ms = 2000;
    cfg->command_timeout_ms = 8000;
}

} // namespace

TEST_CASE(locks_acknowledged_by_the_replica)
{
    Pair p;
    REQUIRE(p.ok);
    g_replicas = 1;
    edgelock_client *c = make_client(p.master.url(), replicated);
    REQUIRE(c);
    edgelock_lock lk = make_lock(c, "rep:ok");
    CHECK_ST(edgelock_try_lock(c, lk, 0, 30000), EDGELOCK_OK);
    CHECK_EQ(redis_integer(p.replica, "EXISTS %s", "rep:ok"), 1); // WAIT said it is there
    int released = 0;
    CHECK_ST(edgelock_unlock(c, lk, &released), EDGELOCK_OK);
    CHECK_EQ(released, 1);
    CHECK_EQ(redis_integer(p.replica, "EXISTS %s", "rep:ok"), 0);
    // A fenced lock keeps its token through the WAIT.
    edgelock_lock f = {0};
    edgelock_lock_new_kind(c, EDGELOCK_FENCED, "rep:fenced", 10, &f);
    int64_t token = 0;
    CHECK_ST(edgelock_try_lock_token(c, f, 0, 30000, &token), EDGELOCK_OK);
    CHECK(token > 0);
    CHECK_ST(edgelock_unlock(c, f, nullptr), EDGELOCK_OK);
    CHECK(tables_idle(c));
    edgelock_client_destroy(c);
}

TEST_CASE(a_stopped_replica_makes_it_not_replicated_and_nothing_stays_held)
{
    Pair p;
    REQUIRE(p.ok);
    g_replicas = 1;
    edgelock_client *c = make_client(p.master.url(), replicated);
    REQUIRE(c);
    edgelock_lock lk = make_lock(c, "rep:stopped");

    // Unlock first: taken while the replica runs, released while it is stopped.
    CHECK_ST(edgelock_try_lock(c, lk, 0, 30000), EDGELOCK_OK);
    kill(p.replica.pid(), SIGSTOP);
    CHECK_ST(edgelock_unlock(c, lk, nullptr), EDGELOCK_ERR_NOT_REPLICATED);
    CHECK_EQ(redis_integer(p.master, "EXISTS %s", "rep:stopped"), 0); // released on the master

    // Lock: taken on the master, not acknowledged, released again.
    CHECK_ST(edgelock_try_lock(c, lk, 0, 30000), EDGELOCK_ERR_NOT_REPLICATED);
    CHECK(wait_until(10000, [&] { return redis_integer(p.master, "EXISTS %s", "rep:stopped") == 0; }));
    int held = 1;
    CHECK_ST(edgelock_is_held_by_current_thread(c, lk, &held), EDGELOCK_OK);
    CHECK_EQ(held, 0);
    kill(p.replica.pid(), SIGCONT);
    CHECK(wait_until(30000, [&] { return redis_integer(p.master, "WAIT %d %d", 1, 100) == 1; }));
    CHECK_ST(edgelock_try_lock(c, lk, 0, 30000), EDGELOCK_OK);
    CHECK_ST(edgelock_unlock(c, lk, nullptr), EDGELOCK_OK);
    CHECK(tables_idle(c));
    edgelock_client_destroy(c);
}

// A semaphore take is acknowledged like a lock: with the replica stopped the
// permit taken on the master is given back and the caller holds nothing.
TEST_CASE(a_permit_not_replicated_is_given_back)
{
    Pair p;
    REQUIRE(p.ok);
    g_replicas = 1;
    edgelock_client *c = make_client(p.master.url(), replicated);
    REQUIRE(c);
    edgelock_lock s = {0};
    edgelock_lock_new_kind(c, EDGELOCK_PERMIT_SEMAPHORE, "rep:sem", 7, &s);
    CHECK_ST(edgelock_semaphore_try_set_permits(c, s, 1, nullptr), EDGELOCK_OK);
    CHECK_ST(edgelock_try_lock(c, s, 0, EDGELOCK_LEASE_WATCHDOG), EDGELOCK_OK);
    CHECK_EQ(redis_integer(p.replica, "ZCARD {rep:sem}:timeout"), 1); // WAIT said it is there
    CHECK_ST(edgelock_unlock(c, s, nullptr), EDGELOCK_OK);
    kill(p.replica.pid(), SIGSTOP);
    CHECK_ST(edgelock_try_lock(c, s, 0, EDGELOCK_LEASE_WATCHDOG), EDGELOCK_ERR_NOT_REPLICATED);
    CHECK(wait_until(10000, [&] { return redis_integer(p.master, "GET rep:sem") == 1; }));
    CHECK_EQ(redis_integer(p.master, "ZCARD {rep:sem}:timeout"), 0);
    char id[33];
    CHECK_ST(edgelock_permit_id(c, s, edgelock_current_owner(), 0, id), EDGELOCK_ERR_NOT_OWNER);
    kill(p.replica.pid(), SIGCONT);
    CHECK(wait_until(30000, [&] { return redis_integer(p.master, "WAIT %d %d", 1, 100) == 1; }));
    CHECK(tables_idle(c));
    edgelock_client_destroy(c);
}

// A renewal counts once the replica has it: with the replica stopped the
// master keeps renewing, but the holder's lease runs from the last renewal
// the replica acknowledged, so it is told it lost the lock (what a failover to
// that replica would find) instead of believing in a lease only the master has.
std::atomic<int> g_lost{0};
void lost_cb(edgelock_client *, edgelock_lock, uint64_t, void *)
{
    g_lost++;
}

TEST_CASE(renewals_the_replica_did_not_get_do_not_extend_the_hold)
{
    Pair p;
    REQUIRE(p.ok);
    g_replicas = 1;
    g_lost = 0;
    auto short_lease = [](edgelock_config *cfg) {
        replicated(cfg);
        cfg->watchdog_lease_ms = 6000; // a renewal every 2 s
        cfg->wait_replicas_timeout_ms = 1500;
        cfg->command_timeout_ms = 5000;
        cfg->on_lock_lost = lost_cb;
    };
    edgelock_client *c = make_client(p.master.url(), short_lease);
    REQUIRE(c);
    edgelock_lock lk = make_lock(c, "rep:renew");
    CHECK_ST(edgelock_try_lock(c, lk, 0, EDGELOCK_LEASE_WATCHDOG), EDGELOCK_OK);
    // Renewals while the replica runs keep it.
    sleep_ms(7000);
    int64_t left = 0;
    CHECK_ST(edgelock_lock_valid(c, lk, edgelock_current_owner(), &left), EDGELOCK_OK);
    CHECK_EQ(g_lost.load(), 0);
    kill(p.replica.pid(), SIGSTOP);
    // Within a lease (and a renewal period) of the last acknowledged renewal.
    CHECK(wait_until(30000, [&] { return g_lost.load() == 1; }));
    CHECK_ST(edgelock_lock_valid(c, lk, edgelock_current_owner(), &left), EDGELOCK_ERR_LOST);
    kill(p.replica.pid(), SIGCONT);
    CHECK_ST(edgelock_unlock(c, lk, nullptr), EDGELOCK_ERR_LOST);
    edgelock_lock_free(c, lk);
    edgelock_client_destroy(c);
}

TEST_CASE(more_replicas_asked_than_there_are)
{
    Pair p;
    REQUIRE(p.ok);
    g_replicas = 2;
    edgelock_client *c = make_client(p.master.url(), replicated);
    REQUIRE(c);
    edgelock_lock lk = make_lock(c, "rep:two");
    CHECK_ST(edgelock_try_lock(c, lk, 0, 30000), EDGELOCK_ERR_NOT_REPLICATED);
    CHECK(wait_until(10000, [&] { return redis_integer(p.master, "EXISTS %s", "rep:two") == 0; }));
    // A latch's await writes nothing: no WAIT, so an open latch is open
    // however few replicas answer (it was NOT_REPLICATED).
    edgelock_lock latch = {0};
    REQUIRE(edgelock_lock_new_kind(c, EDGELOCK_LATCH, "rep:latch", 9, &latch) == EDGELOCK_OK);
    CHECK_ST(edgelock_latch_await(c, latch, 0), EDGELOCK_OK);
    CHECK_ST(edgelock_latch_await(c, latch, 500), EDGELOCK_OK);
    edgelock_lock_free(c, latch);
    CHECK(tables_idle(c));
    edgelock_client_destroy(c);
}

TEST_CASE(the_wait_must_fit_in_the_command_timeout)
{
    edgelock_config cfg;
    edgelock_config_init(&cfg);
    cfg.wait_replicas = 1;
    cfg.wait_replicas_timeout_ms = cfg.command_timeout_ms;
    edgelock_client *c = nullptr;
    CHECK_ST(edgelock_client_create(&cfg, nullptr, &c), EDGELOCK_ERR_INVALID_ARG);
    cfg.wait_replicas_timeout_ms = 0;
    CHECK_ST(edgelock_client_create(&cfg, nullptr, &c), EDGELOCK_ERR_INVALID_ARG);
}
