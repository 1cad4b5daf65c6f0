// SPDX-License-Identifier: BSD-3-Clause
// The subscriber connection's keepalive against a real Redis: while a waiter
// is subscribed the connection is PINGed (hiredis before 1.1: subscribed
// again), the answers are recognised, so the connection is never dropped for
// want of one, and the waiter still hears the unlock.
#include <atomic>
#include <thread>

#include <hiredis/hiredis.h>

#include "check.hpp"
#include "clients.hpp"
#include "edgelock/edgelock.h"
#include "redis_server.hpp"

// The keepalive's command: PING, or where hiredis drops the answer to a
// subscribed PING (before 1.1) SUBSCRIBE to the waiter's channel again.
#if HIREDIS_MAJOR > 1 || (HIREDIS_MAJOR == 1 && HIREDIS_MINOR >= 1)
static const char kKeepalive[] = "ping";
#else
static const char kKeepalive[] = "subscribe";
#endif

TEST_CASE(a_long_wait_through_several_pings_keeps_its_connection_and_hears_the_unlock)
{
    RedisServer r; // its own: no other test's connections in the count
    REQUIRE(r.start());
    auto short_timeouts = [](edgelock_config *cfg) {
        cfg->command_timeout_ms = 1000; // a PING every 3 s, answered within 1 s
    };
    edgelock_client *holder = make_client(r.url(), short_timeouts);
    edgelock_client *waiter = make_client(r.url(), short_timeouts);
    REQUIRE(holder && waiter);
    edgelock_lock hl = make_lock(holder, "keepalive");
    edgelock_lock wl = make_lock(waiter, "keepalive");
    CHECK_ST(edgelock_try_lock(holder, hl, 0, 60000), EDGELOCK_OK);
    std::atomic<int> status{1};
    std::atomic<int> unlocked{1};
    std::thread t([&] {
        status = edgelock_try_lock(waiter, wl, 60000, 10000);
        if (status == EDGELOCK_OK)
            unlocked = edgelock_unlock(waiter, wl, nullptr);
    });
    REQUIRE(wait_until(10000, [&] { return stats_of(waiter).waiters == 1; }));
    // Each redis_integer() is a connection of its own: between two CLIENT IDs
    // one id is that first call's; any other is a reconnect of ours.
    long long before = command_calls(r, kKeepalive);
    long long id_before = redis_integer(r, "CLIENT ID");
    sleep_ms(9000); // three keepalive periods
    long long id_after = redis_integer(r, "CLIENT ID");
    CHECK_EQ(id_after - id_before, 1);
    CHECK(command_calls(r, kKeepalive) >= before + 2); // the keepalive ran
    CHECK_EQ(status.load(), 1);                        // still waiting
    CHECK_ST(edgelock_unlock(holder, hl, nullptr), EDGELOCK_OK);
    REQUIRE(wait_until(30000, [&] { return status.load() != 1; }));
    t.join();
    CHECK_EQ(status.load(), EDGELOCK_OK);
    CHECK_EQ(unlocked.load(), EDGELOCK_OK);
    edgelock_lock_free(holder, hl);
    edgelock_lock_free(waiter, wl);
    CHECK(tables_idle(holder) && tables_idle(waiter));
    edgelock_client_destroy(holder);
    edgelock_client_destroy(waiter);
}
