// SPDX-License-Identifier: BSD-3-Clause
// A member's client destroyed, or the call cancelled, at every step of a
// blocking MultiLock or RedLock whose members live on three clients, against
// a real redis-server: alloc_pause (tests/support) stops the clients'
// threads at the Nth allocation after the call starts, another thread acts,
// and N runs from 1 until the call no longer reaches an Nth allocation.
// Whatever the step, the destroy returns, the call returns SHUTDOWN or
// CANCELLED (an unlock: OK too, when it was done first), the clients left
// keep nothing of it in their tables, and Redis keeps nothing of it on their
// keys. Before a composite call pinned its clients (api/blocking.hpp,
// BlockingPin), it went on waiting after such a destroy and then called the
// freed client. Outcomes and order only.
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

enum class Composite {
    MultiWaits,   // members 1 and 2 held elsewhere: member 0 taken, then a wait on member 1
    RedlockWaits, // the same members: no majority, a round waits on members 1 and 2
    MultiUnlock,  // all three taken before, then released
};

const size_t kCancel = 99; // SweptComposite::destroyed: no destroy, the call is cancelled

struct SweptComposite {
    const char *name;
    Composite call;
    size_t destroyed; // the member whose client is destroyed, or kCancel
};

const size_t kMembers = 3;
const char *const kNames[kMembers] = {"anywhere:0", "anywhere:1", "anywhere:2"};

bool waits(Composite call)
{
    return call != Composite::MultiUnlock;
}

// The keys as each step starts: free, or (a waiting call's members 1 and 2)
// held by someone else, written as Redisson would.
void reset_composite_keys(RedisServer &r, Composite call)
{
    for (size_t i = 0; i < kMembers; i++) {
        freeReplyObject(r.command("DEL %s", kNames[i]));
        if (i > 0 && waits(call)) {
            freeReplyObject(r.command("HSET %s other:1 1", kNames[i]));
            freeReplyObject(r.command("PEXPIRE %s 120000", kNames[i]));
        }
    }
}

edgelock_status composite_call(Composite call, const edgelock_member *m)
{
    switch (call) {
    case Composite::MultiWaits: return edgelock_multi_try_lock(m, kMembers, 60000, EDGELOCK_LEASE_WATCHDOG);
    case Composite::RedlockWaits: return edgelock_redlock_try_lock(m, kMembers, 60000, 30000, nullptr);
    case Composite::MultiUnlock: return edgelock_multi_unlock(m, kMembers);
    }
    return EDGELOCK_ERR_INVALID_ARG;
}

// The act on a paused call: a member's client destroyed (on a thread of its
// own, marked as the test's), or edgelock_cancel on every member's client
// until the call returns (one made before the call reached a client finds
// nothing there). Whether the act and the call ended within kHangMs.
bool act(const SweptComposite &how, edgelock_client **c, const GatedCall &caller)
{
    if (how.destroyed == kCancel) {
        alloc_pause::acting();
        return wait_until(kHangMs, [&] {
            for (size_t i = 0; i < kMembers; i++)
                CHECK_ST(edgelock_cancel(c[i], caller.owner()), EDGELOCK_OK);
            return caller.done();
        });
    }
    std::atomic<bool> destroyed{false};
    std::thread destroyer([&] {
        alloc_pause::mark_test_thread();
        alloc_pause::acting();
        edgelock_client_destroy(c[how.destroyed]);
        destroyed = true;
    });
    if (!wait_until(kHangMs, [&] { return destroyed.load() && caller.done(); }))
        return false;
    destroyer.join();
    c[how.destroyed] = nullptr;
    return true;
}

// One step: the call paused at its step-th allocation, then the act. True
// while the call still reached that allocation.
bool act_at_step(const SweptComposite &how, int step)
{
    RedisServer &r = shared_server();
    reset_composite_keys(r, how.call);
    edgelock_client *c[kMembers];
    edgelock_member m[kMembers];
    for (size_t i = 0; i < kMembers; i++) {
        c[i] = make_client(r.url());
        CHECK(c[i] != nullptr);
        if (!c[i])
            return false;
        m[i] = {c[i], make_lock(c[i], kNames[i])};
        int held = 0; // a round trip: the client connected before the sweep counts
        CHECK_ST(edgelock_is_locked(c[i], m[i].lock, &held), EDGELOCK_OK);
    }
    // Quiet clients, as CallOnThread leaves them: a loop thread's allocation
    // paused before the caller entered would let the destroy come first,
    // which the header does not allow (a call after destroy).
    sleep_ms(100);
    GatedCall caller;
    caller.start(
        [&] {
            if (how.call == Composite::MultiUnlock) // taken first, on the caller's thread
                CHECK_ST(edgelock_multi_try_lock(m, kMembers, 0, 30000), EDGELOCK_OK);
        },
        [&] { return composite_call(how.call, m); });
    alloc_pause::arm(step);
    caller.go();
    bool reached = alloc_pause::reached(kQuietMs);
    if (!act(how, c, caller)) {
        fprintf(stderr, "  allocation %d: the call or the destroy hung\n", step);
        _exit(1); // the threads cannot be joined
    }
    edgelock_status st = caller.join();
    edgelock_status ended = how.destroyed == kCancel ? EDGELOCK_ERR_CANCELLED : EDGELOCK_ERR_SHUTDOWN;
    if (st != ended && (waits(how.call) || st != EDGELOCK_OK)) {
        fprintf(stderr, "  allocation %d: the call returned %s\n", step, edgelock_status_str(st));
        CHECK(false);
    }
    for (size_t i = 0; i < kMembers; i++) {
        if (!c[i])
            continue; // what its client held lapses with its lease
        CHECK(tables_idle(c[i]));
        if (waits(how.call) && i > 0)
            CHECK_EQ(redis_integer(r, "HLEN %s", kNames[i]), 1); // the other holder's field only
        else
            CHECK_EQ(redis_integer(r, "EXISTS %s", kNames[i]), 0); // given back, or released
        edgelock_lock_free(c[i], m[i].lock);
        edgelock_client_destroy(c[i]);
    }
    return reached;
}

void sweep(const SweptComposite &how)
{
    if (sweep_allocations(how.name, [&](int step) { return act_at_step(how, step); }))
        reset_composite_keys(shared_server(), Composite::MultiUnlock); // all free
}

} // namespace

TEST_CASE(a_member_client_destroyed_anywhere_in_a_multilock)
{
    sweep({"a MultiLock waiting, the taken member's client destroyed", Composite::MultiWaits, 0});
    sweep({"a MultiLock waiting, the awaited member's client destroyed", Composite::MultiWaits, 1});
    sweep({"a MultiLock waiting, a member's client not reached yet destroyed", Composite::MultiWaits, 2});
    sweep({"a MultiLock unlock, a member's client destroyed", Composite::MultiUnlock, 1});
}

TEST_CASE(a_member_client_destroyed_anywhere_in_a_redlock)
{
    sweep({"a RedLock short of a majority, the taken member's client destroyed", Composite::RedlockWaits, 0});
    sweep(
        {"a RedLock short of a majority, an awaited member's client destroyed", Composite::RedlockWaits, 1});
}

TEST_CASE(a_composite_cancelled_anywhere)
{
    sweep({"a MultiLock waiting, cancelled", Composite::MultiWaits, kCancel});
    sweep({"a RedLock short of a majority, cancelled", Composite::RedlockWaits, kCancel});
}
