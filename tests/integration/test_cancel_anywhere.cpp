// SPDX-License-Identifier: BSD-3-Clause
// edgelock_cancel at every step of a blocking lock call, against a real
// redis-server: alloc_pause (tests/support) stops the client's threads at the
// Nth allocation after the call starts, the test cancels the caller, and N
// runs from 1 until the call no longer reaches an Nth allocation. Whatever
// the step, the header's promise holds: the call returns CANCELLED (or OK
// when it was granted before, and is then unlocked), the client's tables
// empty again (no waiter, subscription, command or hold left), and Redis
// keeps nothing of it: no field of ours in the lock, no place in a fair
// queue. Outcomes only; the sleeps only choose who leads.
#include <string.h>

#include <atomic>
#include <thread>

#include "alloc_pause.hpp"
#include "check.hpp"
#include "clients.hpp"
#include "edgelock/edgelock.h"
#include "redis_server.hpp"
#include "sweep_call.hpp"

namespace
{

bool cancel_at_step(RedisServer &r, const SweptCall &how, int step)
{
    CallOnThread call(r, how);
    if (!call.ok())
        return false;
    bool reached = call.go_paused_at(step);
    // A cancel ends the calls it finds: one made before the call reached
    // the client finds nothing, so cancel until the call returns.
    alloc_pause::acting();
    CHECK(wait_until(kHangMs, [&] {
        CHECK_ST(edgelock_cancel(call.c, call.owner()), EDGELOCK_OK);
        return call.done();
    }));
    edgelock_status st = call.join(); // a granted lock is unlocked by now
    if (how.call == Call::LockWaits ? st != EDGELOCK_ERR_CANCELLED
                                    : st != EDGELOCK_OK && st != EDGELOCK_ERR_CANCELLED) {
        fprintf(stderr, "  allocation %d: the call returned %s\n", step, edgelock_status_str(st));
        CHECK(false);
    }
    CHECK(tables_idle(call.c));
    CHECK(wait_until(kHangMs, [&] { return redis_integer(r, "LLEN redisson_lock_queue:{anywhere}") == 0; }));
    CHECK_EQ(redis_integer(r, "ZCARD redisson_lock_timeout:{anywhere}"), 0);
    if (how.call == Call::LockWaits)
        CHECK_EQ(redis_integer(r, "HLEN anywhere"), 1); // the other holder's field only
    else
        CHECK_EQ(redis_integer(r, "EXISTS anywhere"), 0);
    return reached;
}

} // namespace

TEST_CASE(cancel_anywhere_in_a_lock_call)
{
    for (SweptCall how : kLockCalls) {
        how.unlock_if_granted = true;
        sweep_steps(how, cancel_at_step);
    }
}

// The same on a Redis Cluster: the slot map, redirects and (hiredis 1.x)
// sharded pub/sub are steps of the call too.
TEST_CASE(cancel_anywhere_in_a_lock_call_on_a_cluster)
{
    for (SweptCall how : kThreeCalls) {
        how.unlock_if_granted = true;
        sweep_steps(on_shared_cluster(how), cancel_at_step);
    }
}

// The same over TLS: hiredis_ssl reads and writes through OpenSSL, and a
// blocking call's command is written by the loop's write event, not at once.
TEST_CASE(cancel_anywhere_in_a_lock_call_over_tls)
{
    if (!edgelock_tls_available())
        return; // test_tls checks that rediss:// is refused
    for (SweptCall how : kThreeCalls) {
        how.unlock_if_granted = true;
        sweep_steps(over_shared_tls(how), cancel_at_step);
    }
    sweep_steps(over_shared_tls(kWaitWhileConnecting), cancel_at_step); // the handshake's steps
}

// Through sentinels, a wait made as the client connects: a sentinel's answer
// and the master's ROLE are its first steps. Once connected, a call's steps
// are those of one on a single Redis.
TEST_CASE(cancel_anywhere_in_a_wait_through_sentinels)
{
    sweep_steps(via_shared_sentinels(kWaitWhileConnecting), cancel_at_step);
}
