// SPDX-License-Identifier: BSD-3-Clause
// edgelock_client_destroy at every step of a blocking call on that client,
// against a real redis-server. alloc_pause (tests/support) stops the client's
// threads at the Nth allocation after the call starts, whichever thread makes
// it (the caller leading its loop, or the client's loop thread), until
// destroy has begun; N runs from 1 until the call no longer reaches an Nth
// allocation. At each step destroy must return, and the call with OK (it
// was done) or SHUTDOWN. A stop landing in the loop thread's hand-over of the
// lead to a caller once hung both for ever (the aarch64 suite under qemu):
// the sweep that starts with the loop thread leading lands there at N = 1.
// Outcomes and order only; the sleeps only choose who leads.
#include <stdio.h>
#include <unistd.h>

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

// One step: the call paused at its step-th allocation, then destroy. True
// while the call still reached that allocation (the sweep goes on).
bool destroy_at_step(RedisServer &r, const SweptCall &how, int step)
{
    CallOnThread call(r, how);
    if (!call.ok())
        return false;
    bool reached = call.go_paused_at(step);
    std::atomic<bool> destroyed{false};
    std::thread destroyer([&] {
        alloc_pause::mark_test_thread();
        alloc_pause::acting();
        edgelock_client_destroy(call.c);
        destroyed = true;
    });
    if (!wait_until(kHangMs, [&] { return destroyed.load(); })) {
        fprintf(stderr, "edgelock_client_destroy hung at allocation %d of the call\n", step);
        _exit(1); // the threads cannot be joined
    }
    destroyer.join();
    edgelock_status st = call.join();
    call.c = nullptr; // destroyed
    if (st != EDGELOCK_OK && st != EDGELOCK_ERR_SHUTDOWN) {
        fprintf(stderr, "  allocation %d: the call returned %s\n", step, edgelock_status_str(st));
        CHECK(false);
    }
    return reached;
}

} // namespace

TEST_CASE(destroy_anywhere_in_a_lock_call)
{
    for (const SweptCall &how : kLockCalls)
        sweep_steps(how, destroy_at_step);
}

TEST_CASE(destroy_anywhere_in_an_unlock)
{
    sweep_steps({"an unlock, the loop thread handing over", EDGELOCK_REENTRANT, Call::Unlock, true},
                destroy_at_step);
    sweep_steps({"a fair unlock, the caller leading", EDGELOCK_FAIR, Call::Unlock, false}, destroy_at_step);
}

// The same on a Redis Cluster: the slot map, redirects and (hiredis 1.x)
// sharded pub/sub are steps of the call too.
TEST_CASE(destroy_anywhere_in_a_lock_call_on_a_cluster)
{
    for (SweptCall how : kThreeCalls) {
        sweep_steps(on_shared_cluster(how), destroy_at_step);
    }
}

// The same over TLS: hiredis_ssl reads and writes through OpenSSL, and a
// blocking call's command is written by the loop's write event, not at once.
TEST_CASE(destroy_anywhere_in_a_call_over_tls)
{
    if (!edgelock_tls_available())
        return; // test_tls checks that rediss:// is refused
    for (SweptCall how : kThreeCalls)
        sweep_steps(over_shared_tls(how), destroy_at_step);
    sweep_steps(over_shared_tls({"an unlock, the caller leading", EDGELOCK_REENTRANT, Call::Unlock, false}),
                destroy_at_step);
    sweep_steps(over_shared_tls(kJustConnecting), destroy_at_step); // the handshake's steps
}

// Through sentinels: a wait, and a client destroyed at every step of its
// connecting (a sentinel's answer, the master's link, its ROLE; no call: see
// SweptCall::while_connecting). Once connected, a call's steps are those of
// one on a single Redis.
TEST_CASE(destroy_anywhere_through_sentinels)
{
    sweep_steps(via_shared_sentinels(kLockCalls[0]), destroy_at_step);
    sweep_steps(via_shared_sentinels(kJustConnecting), destroy_at_step);
}
