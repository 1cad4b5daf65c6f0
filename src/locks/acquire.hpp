// SPDX-License-Identifier: BSD-3-Clause
// Lock calls in progress ("waiters"), from the first attempt to the callback.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "edgelock/edgelock.h"
#include "event/loop.hpp"

namespace edgelock
{

struct Client;
struct Connection;

enum class WaiterState : uint8_t {
    Attempting,  // acquire script in flight (or queued)
    Subscribing, // waiting for the channel subscription to be confirmed
    Waiting,     // timer armed; an unlock message or the timer retries
};

struct Waiter {
    uint64_t lock_id;
    uint64_t owner;
    int64_t lease_ms;     // EDGELOCK_LEASE_WATCHDOG or fixed
    uint64_t deadline_ms; // kForever when waiting forever
    uint64_t seq;         // arrival order: "wake one" wakes the oldest
    uint64_t attempt_cmd; // its latest attempt's command (a queue id)
    edgelock_result_fn cb;
    void *user;
    uint32_t hold_index;
    uint32_t sub_index; // kNoIndex until subscribed
    // Its subscription's list (waiter_channels.hpp) from the join to the end
    // of the call; kNoIndex at either end.
    uint32_t next_on_channel, prev_on_channel;
    bool wake_due; // channel_wake_all(): marked to wake, not yet woken
    WaiterState state;
    bool wake_pending; // an unlock message arrived while an attempt was in flight
    bool starved;      // a retry found the command table full; retried when a slot frees
    bool attempted;
    bool give_up_on_connection_error; // end at the first sign Redis is unreachable
    bool timer_is_deadline;           // the armed timer ends the wait
    bool cancelled;                   // edgelock_cancel(): ends when its attempt is answered or withdrawn
    bool behind_undo;                 // waits for a give-back of its owner's (release_undo_out)
    uint64_t behind_undo_until_ms;    // ...for a command timeout from the first time at least
    edgelock_status last_error;       // a connection problem seen while waiting
    // wait_replicas: acquired, the WAIT behind it still to answer; or its OK
    // held back (ok_behind_undo). waiter_set_replicating keeps
    // Client::replicating_waiters.
    bool replicating;
    bool grant_released;    // ...and a release of its owner's freed the lock since (acquire_grant_released)
    bool ok_behind_undo;    // granted, its OK held back for a give-back of its owner's (grant_ok)
    uint32_t attempts;      // tags each attempt's WAIT
    uint32_t wait_first;    // the attempt whose WAIT answered before the attempt itself (0: none)
    Connection *granted_on; // the connection the grant came on, while replicating
    uint8_t waits_again;    // WAITs asked again for one attempt's grant (acquire.cpp)
    int64_t acquired_value; // the fencing token, while replicating
    uint64_t acquired_sent_ms;
    int64_t asked_lease_ms;  // the lease its latest attempt asked Redis for (lease_to_ask); 0 once given back
    uint32_t fair_window_ms; // fair lock: its window in the queue (acquire.cpp, fair_window())
    // Semaphores: permits wanted (0: a latch's await). Expirable: the ids
    // of the attempt in flight, from this base (a fresh one per attempt).
    uint32_t permits;
    uint8_t permit_base[16];
};

// One timer per waiter slot: c->waiter_timers[i] serves waiter slot i.
using WaiterTimer = Timer;

bool acquire_init_timers(Client *c); // c->waiter_timers allocated, zeroed
void acquire_fini_timers(Client *c);

// give_up_on_connection_error: end with CONNECTION/TIMEOUT at the first sign
// that Redis is unreachable instead of waiting for it to come back (RedLock
// members: a dead server must cost one attempt, not its share of the wait).
// permits: a semaphore's permits to take (1 for a lock); 0 awaits a latch.
edgelock_status acquire_start(Client *c, edgelock_lock lock, uint64_t owner, int64_t wait_ms,
                              int64_t lease_ms, edgelock_result_fn cb, void *user,
                              bool give_up_on_connection_error = false, uint32_t permits = 1);
void acquire_retry_all(Client *c); // the command connection came back
void acquire_fail_all(Client *c, edgelock_status st);
// edgelock_cancel(): every lock call of owner ends with CANCELLED, holding
// nothing (one whose attempt is on the wire when its reply comes).
void acquire_cancel(Client *c, uint64_t owner);
// The same for the one lock call whose callback's user pointer is `user`
// (a composite's member call, whose client stays while another goes).
void acquire_cancel_user(Client *c, const void *user);
void acquire_abandon_fair_all(Client *c); // at shutdown: fair waiters leave their queues

// Hooks, with the Client as ctx.
void acquire_on_command_slot_free(Client *c); // a command slot is free: retry one starved waiter
void acquire_after_undo(Client *c);           // a give-back completed: retry or answer the waiters behind one
// A release of owner's on lock_id's name freed the lock (Client::
// on_owner_released): the grants of that owner still replicating went with it.
void acquire_grant_released(Client *c, uint64_t lock_id, uint64_t owner);
// Wake the waiter at index: it attempts now, or again when its attempt in
// flight answers (waiter_channels.cpp and permits.cpp wake waiters through it).
void acquire_wake(Client *c, uint32_t index);
// For giveback.cpp: end the lock call at index (its callback, its hold
// settled), or send its next attempt (or wait behind a give-back).
void acquire_finish(Client *c, uint32_t index, edgelock_status st, int64_t value = 0, uint64_t sent_ms = 0);
void acquire_attempt(Client *c, uint32_t index);

} // namespace edgelock
