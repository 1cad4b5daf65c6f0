// SPDX-License-Identifier: BSD-3-Clause
// What a lock call gives back when its caller is not to have what an attempt
// took in Redis (cancelled, not replicated, ended meanwhile), or cannot know
// whether it took it (a reply that never came): the grant released again,
// a semaphore's permits returned, a fair queue place left.
#include "locks/giveback.hpp"

#include "base/time.hpp"
#include "locks/acquire.hpp"
#include "locks/calls.hpp"
#include "locks/client.hpp"
#include "locks/handles.hpp"
#include "locks/holds.hpp"
#include "locks/lease.hpp"
#include "locks/permits.hpp"
#include "locks/release.hpp"

namespace edgelock
{

// A fair waiter that leaves without the lock takes itself out of the queue, so
// those behind it do not wait out its window (fire and forget). Those behind
// it move up by the window it queued with.
void abandon_fair_queue(Client *c, const Waiter *w)
{
    LockCall call(LockOp::Abandon, w->lock_id, nullptr);
    call.owner = w->owner;
    call.fair_window_ms = w->fair_window_ms;
    call.unpin_when_sent = true;
    call_start(c, call); // when it cannot, its queue entry lapses after its window
}

// Give back what a grant took, for a caller that is not to have it. certain:
// Redis granted it (not a reply that never came).
void undo_grant(Client *c, Waiter *w, bool certain)
{
    // The attempt given back relies on nothing now: a give-back written at
    // once, while the waiter is still in the table, must not count its lease
    // among the calls in flight (lease_to_release).
    w->asked_lease_ms = 0;
    switch (lock_kind(c, w->lock_id)) {
    case EDGELOCK_LATCH: return; // an await takes nothing
    case EDGELOCK_PERMIT_SEMAPHORE: permits_undo(c, w->lock_id, w->permit_base, w->permits); return;
    case EDGELOCK_SEMAPHORE:
        // Unknown outcome: giving back a permit that was not taken would
        // make one too many; a leak is the lesser harm.
        if (certain)
            semaphore_undo(c, w->lock_id, w->permits);
        return;
    default: break;
    }
    // The release script sets the key's TTL to the lease it names when a
    // count remains (lease.cpp).
    cleanup_release(c, w->lock_id, w->owner, lease_to_leave(c, w));
}

bool wait_behind_give_back(Client *c, uint32_t index)
{
    // A give-back of this owner's on this name (the undo of a grant it is
    // not to have, say) is still to run: a grant made before it would be
    // the one it gives back, behind the owner's back. Commands of one node
    // keep their order, but a give-back told CLUSTERDOWN or TRYAGAIN goes
    // again after a pause, or to another node after a failover. So the
    // attempt waits for its answer, as one queued behind it would: for a
    // command timeout at least, even past a shorter wait, so that a
    // try-once call still tries.
    Waiter *w = c->waiters.get(index);
    w->behind_undo =
        kind_serves(lock_kind(c, w->lock_id), KindClass::Lock) && release_undo_out(c, w->lock_id, w->owner);
    if (!w->behind_undo)
        return false;
    if (w->starved) // what it waits for now is the give-back
        c->starved_waiters--;
    w->starved = false;
    const uint64_t now = loop_now(&c->loop);
    if (w->behind_undo_until_ms == 0)
        w->behind_undo_until_ms = add_ms(now, c->cfg.command_timeout_ms);
    const uint64_t end = w->behind_undo_until_ms > w->deadline_ms ? w->behind_undo_until_ms : w->deadline_ms;
    waiter_set_state(c, w, WaiterState::Waiting);
    w->timer_is_deadline = true;
    timer_cancel(&c->waiter_timers[index]);
    if (end != kForever)
        timer_arm(&c->waiter_timers[index], end > now ? end - now : 0);
    return true;
}

// A give-back of the owner's not answered within a command timeout: its node
// unreachable (CONNECTION), or slow (TIMEOUT), as an attempt queued behind it.
static edgelock_status give_back_unanswered(Client *c, const Waiter *w)
{
    return slot_ready(c, lock_slot(c, w->lock_id)) ? EDGELOCK_ERR_TIMEOUT : EDGELOCK_ERR_CONNECTION;
}

edgelock_status end_of_wait_behind_give_back(Client *c, const Waiter *w)
{
    if (!w->behind_undo || w->deadline_ms >= w->behind_undo_until_ms)
        return EDGELOCK_ERR_WAIT_TIMEOUT;
    return give_back_unanswered(c, w);
}

void waiter_set_replicating(Client *c, Waiter *w, bool on)
{
    bool was = waiter_in_flight(w);
    if (w->replicating != on)
        c->replicating_waiters += on ? 1u : (uint32_t)-1;
    w->replicating = on;
    count_in_flight(c, w, was);
    w->grant_released = false;
    w->ok_behind_undo = false;
}

void grant_ok(Client *c, uint32_t index, int64_t value, uint64_t sent_ms)
{
    Waiter *w = c->waiters.get(index);
    if (!kind_serves(lock_kind(c, w->lock_id), KindClass::Lock) ||
        !release_undo_out(c, w->lock_id, w->owner)) {
        acquire_finish(c, index, EDGELOCK_OK, value, sent_ms);
        return;
    }
    waiter_set_replicating(c, w, true); // a release that frees the lock now marks it
    w->ok_behind_undo = true;
    w->acquired_value = value;
    w->acquired_sent_ms = sent_ms;
    timer_cancel(&c->waiter_timers[index]);
    timer_arm(&c->waiter_timers[index], c->cfg.command_timeout_ms);
}

void held_ok_settle(Client *c, uint32_t index)
{
    Waiter *w = c->waiters.get(index);
    if (w->grant_released) {
        grant_taken_back(c, index);
        return;
    }
    if (release_undo_out(c, w->lock_id, w->owner))
        return; // another one of its owner's is still out
    waiter_set_replicating(c, w, false);
    if (w->cancelled) {
        undo_grant(c, w, true);
        acquire_finish(c, index, EDGELOCK_ERR_CANCELLED);
        return;
    }
    acquire_finish(c, index, EDGELOCK_OK, w->acquired_value, w->acquired_sent_ms);
}

void held_ok_expired(Client *c, uint32_t index)
{
    // Given back behind the give-back it waited for (that one may still
    // free the lock): whichever runs first, the counts add up, and the
    // owner's next attempt waits for both.
    Waiter *w = c->waiters.get(index);
    waiter_set_replicating(c, w, false);
    undo_grant(c, w, true);
    acquire_finish(c, index, w->cancelled ? EDGELOCK_ERR_CANCELLED : give_back_unanswered(c, w));
}

void grant_taken_back(Client *c, uint32_t index)
{
    Waiter *w = c->waiters.get(index);
    waiter_set_replicating(c, w, false);
    if (w->cancelled || ms_left(w->deadline_ms, loop_now(&c->loop)) == 0)
        acquire_finish(c, index, w->cancelled ? EDGELOCK_ERR_CANCELLED : EDGELOCK_ERR_WAIT_TIMEOUT);
    else
        acquire_attempt(c, index);
}

void acquire_grant_released(Client *c, uint64_t lock_id, uint64_t owner)
{
    if (c->replicating_waiters == 0)
        return;
    const bool named = lock_get(c, lock_id) != nullptr; // a freed handle's name is unknown: any
    for (uint32_t i = 0; i < c->waiters.end(); i++) {
        Waiter *w = c->waiters.get(i);
        if (w && w->replicating && w->owner == owner &&
            kind_serves(lock_kind(c, w->lock_id), KindClass::Lock) &&
            (!named || same_lock_name(c, w->lock_id, lock_id)))
            w->grant_released = true;
    }
}

// Nobody will release it now. A re-entry of the owner's hold gives up its
// count here: Redis keeps one more than the owner, and the owner's last unlock
// releases that one as well (release.cpp, drain_stale_counts); left counted,
// that unlock would leave the lock held and the watchdog renewing it for
// ever. A member held by the composite alone keeps its count (lock_valid
// stays true to Redis), but the watchdog lets go: it lapses with its lease.
void give_back_not_queued(Client *c, uint64_t lock_id, uint64_t owner, bool took_watchdog)
{
    Hold *h = hold_find(c, lock_id, owner, nullptr);
    if (h && h->count > 1 && !h->lost)
        h->count--;
    else if (took_watchdog)
        hold_end_watchdog(c, lock_id, owner);
}

} // namespace edgelock
