// SPDX-License-Identifier: BSD-3-Clause
// A lock call in progress (a "waiter"), from its first attempt to its callback.
//
//   attempt --acquired--> done
//      |  \--held elsewhere--> subscribe to the lock channel, attempt again
//      |                        (an unlock between the first attempt and the
//      |                        subscription would otherwise be missed)
//      \--held, subscribed--> wait: an unlock message, the holder's TTL, or
//                             the end of the wait, whichever comes first
//
// Never a polling loop: without a message the only timer is the holder's TTL.
// An unlock message that arrives while the waiter's attempt is in flight is
// remembered (wake_pending), as Redisson's semaphore permit is, so a waiter
// told "held" by a reply older than the unlock retries at once.
#include "locks/acquire.hpp"
#include "base/log.hpp"

#include <hiredis/hiredis.h>
#include <string.h>

#include "base/time.hpp"
#include "locks/callbacks.hpp"
#include "locks/calls.hpp"
#include "locks/client.hpp"
#include "locks/giveback.hpp"
#include "locks/handles.hpp"
#include "locks/holds.hpp"
#include "locks/lease.hpp"
#include "locks/permits.hpp"
#include "locks/release.hpp"
#include "locks/replicas.hpp"
#include "locks/waiter_channels.hpp"
#include "locks/watchdog.hpp"
#include "redis/reply.hpp"
#include "redisson/names.hpp"

namespace edgelock
{

static constexpr uint64_t kFairFallbackMs = 100;

static void timer_fired(void *arg, Timer *t);

// The channels of finished waiters are left at the loop's next turn (finish()).
// A closing client's pubsub is closed, and the flush does nothing.
static void leave_channels(void *arg, Timer *)
{
    pubsub_flush_leaves(&static_cast<Client *>(arg)->pubsub);
}

bool acquire_init_timers(Client *c)
{
    for (uint32_t i = 0; i < c->waiters.capacity(); i++) {
        if (!timer_init(&c->waiter_timers[i], &c->loop, timer_fired, c))
            return false;
    }
    return timer_init(&c->leave_timer, &c->loop, leave_channels, c);
}

void acquire_fini_timers(Client *c)
{
    for (uint32_t i = 0; i < c->waiters.capacity(); i++)
        timer_fini(&c->waiter_timers[i]);
    timer_fini(&c->leave_timer);
}

// A fair waiter's window in the queue, as Redisson's tryLockInnerAsync and
// acquireFailedAsync take it: its own wait, or fair_wait_ms when it has none
// (a try-once, or EDGELOCK_WAIT_FOREVER). The LockCall that carries it has
// room for 32 bits: a wait beyond UINT32_MAX ms (49.7 days) that outlives
// its window drops out of the queue, and its next attempt queues it again.
static uint32_t fair_window(const Client *c, int64_t wait_ms)
{
    if (wait_ms <= 0)
        return c->cfg.fair_wait_ms;
    return wait_ms > (int64_t)UINT32_MAX ? UINT32_MAX : (uint32_t)wait_ms;
}

// The end of a lock call: OK means acquired by the attempt sent at sent_ms.
static void finish(Client *c, uint32_t index, edgelock_status st, int64_t value = 0, uint64_t sent_ms = 0)
{
    Waiter *w = c->waiters.get(index);
    waiter_set_replicating(c, w, false);
    waiter_set_state(c, w, WaiterState::Waiting); // no longer in flight (lease.cpp)
    edgelock_lock_kind kind = lock_kind(c, w->lock_id);
    if (st != EDGELOCK_OK && w->attempted && !c->closing && kind == EDGELOCK_FAIR)
        abandon_fair_queue(c, w);
    timer_cancel(&c->waiter_timers[index]);
    // A latch's await holds nothing after; a plain semaphore's permit has no
    // lease: held until given back.
    bool holds = st == EDGELOCK_OK && kind != EDGELOCK_LATCH;
    // A fixed lease counts what Redis set: the lease its attempt asked for,
    // maybe raised to cover the owner's others (lease.cpp); the watchdog
    // counts its own from each renewal.
    int64_t lease = kind == EDGELOCK_SEMAPHORE               ? EDGELOCK_MAX_TIME_MS
                    : w->lease_ms == EDGELOCK_LEASE_WATCHDOG ? w->lease_ms
                                                             : w->asked_lease_ms;
    if (holds && kind == EDGELOCK_PERMIT_SEMAPHORE)
        memcpy(c->holds.get(w->hold_index)->permit_base, w->permit_base, sizeof(w->permit_base));
    if (hold_settle(c, w->hold_index, holds, lease, sent_ms, w->permits))
        watchdog_arm(c);
    lock_get(c, w->lock_id)->refs--;
    if (w->starved)
        c->starved_waiters--;
    edgelock_result_fn cb = w->cb;
    void *user = w->user;
    uint64_t lock_id = w->lock_id;
    uint32_t sub_index = w->sub_index;
    bool pass_wake = w->wake_pending && st != EDGELOCK_OK;
    if (sub_index != kNoIndex)
        channel_remove_waiter(c, index);
    c->waiters.release(index);
    invoke_result(c, cb, lock_id, st, value, user);
    if (pass_wake && sub_index != kNoIndex && !c->closing)
        channel_pass_wake(c, sub_index);
    // The channel is left at the loop's next turn (pubsub_leave_later): the
    // UNSUBSCRIBE does not delay the answer, and a lock call on the same lock
    // before then keeps the live subscription. A client destroyed in the
    // callback has no channels.
    if (sub_index != kNoIndex && !c->closing && pubsub_leave_later(&c->pubsub, sub_index))
        timer_arm(&c->leave_timer, 0);
}

static uint64_t remaining(const Waiter *w, uint64_t now)
{
    return ms_left(w->deadline_ms, now);
}

// Arm the waiter's timer for min(delay, what is left of the wait). A timer
// armed for the end of the wait ends it when it fires (never early: loop.hpp).
static void wait_for(Client *c, uint32_t index, WaiterState state, uint64_t delay_ms)
{
    Waiter *w = c->waiters.get(index);
    uint64_t left = remaining(w, loop_now(&c->loop));
    waiter_set_state(c, w, state);
    w->timer_is_deadline = delay_ms >= left;
    if (delay_ms > left)
        delay_ms = left;
    timer_cancel(&c->waiter_timers[index]);
    if (delay_ms != kForever)
        timer_arm(&c->waiter_timers[index], delay_ms);
}

static void acquire_done(Client *c, const LockCall *call, uint64_t id, uint64_t sent_ms, redisReply *reply,
                         edgelock_status st);
static void wait_again(Client *c, uint32_t index);
constexpr uint8_t kMaxWaitsAgain = 4;
static void wait_done(Client *c, const LockCall *call, uint64_t id, uint64_t sent_ms, redisReply *reply,
                      edgelock_status st);

// woken: by a message (or a confirmed subscription): its command goes onto
// the socket at once (call_start).
static void attempt(Client *c, uint32_t index, bool woken = false)
{
    Waiter *w = c->waiters.get(index);
    if (w->last_error != EDGELOCK_OK && !slot_ready(c, lock_slot(c, w->lock_id))) {
        // Redis is known to be unreachable: an attempt would only sit in the
        // queue. acquire_retry_all() resumes us when the connection is back.
        wait_for(c, index, WaiterState::Waiting, kForever);
        return;
    }
    if (wait_behind_give_back(c, index))
        return; // until acquire_after_undo()
    LockCall call(LockOp::Acquire, w->lock_id, acquire_done);
    call.owner = w->owner;
    call.ref = c->waiters.id_of(index);
    // Decided when its bytes are formatted (wire.cpp, lease_to_ask).
    call.lease_ms = w->asked_lease_ms = effective_lease(c, w->lease_ms);
    call.permits = (uint16_t)w->permits;
    if (lock_kind(c, w->lock_id) == EDGELOCK_FAIR)
        call.fair_window_ms = w->fair_window_ms;
    if (lock_kind(c, w->lock_id) == EDGELOCK_PERMIT_SEMAPHORE) {
        // Fresh ids per attempt: an earlier one's undo never meets this one.
        permit_new_base(c, w->permit_base);
        memcpy(call.request_id, w->permit_base, sizeof(call.request_id));
    }
    // With wait_replicas a WAIT goes right behind it: both slots or neither.
    // A latch's await writes nothing: no WAIT (it would fail an open latch
    // with NOT_REPLICATED when a replica lags).
    bool replicas = replicas_wanted(c) && lock_kind(c, w->lock_id) != EDGELOCK_LATCH;
    uint64_t cmd_id = 0;
    if ((replicas && c->queue.cmds.available() < 2) || !call_start(c, call, woken && !replicas, &cmd_id)) {
        // Command table full: try again as soon as any command completes. The
        // wait timer keeps running so the deadline still holds.
        if (!w->starved)
            c->starved_waiters++;
        w->starved = true;
        wait_for(c, index, WaiterState::Waiting, kForever);
        return;
    }
    if (w->starved)
        c->starved_waiters--;
    w->starved = false;
    w->wake_pending = false;
    timer_cancel(&c->waiter_timers[index]);
    waiter_set_state(c, w, WaiterState::Attempting);
    w->attempted = true;
    w->attempt_cmd = cmd_id; // a cancel withdraws it while it waits for its connection
    if (replicas) {
        LockCall wait = replicas_wait_call(w->lock_id, wait_done);
        wait.ref = call.ref;
        wait.owner = ++w->attempts;
        w->waits_again = 0;
        call_start(c, wait); // the slot was checked above
    }
}

edgelock_status acquire_start(Client *c, edgelock_lock lock, uint64_t owner, int64_t wait_ms,
                              int64_t lease_ms, edgelock_result_fn cb, void *user,
                              bool give_up_on_connection_error, uint32_t permits)
{
    if (!cb)
        return EDGELOCK_ERR_INVALID_ARG;
    if (wait_ms != EDGELOCK_WAIT_FOREVER && (wait_ms < 0 || wait_ms > EDGELOCK_MAX_TIME_MS))
        return EDGELOCK_ERR_INVALID_ARG;
    if (lease_ms != EDGELOCK_LEASE_WATCHDOG && (lease_ms <= 0 || lease_ms > EDGELOCK_MAX_TIME_MS))
        return EDGELOCK_ERR_INVALID_ARG;
    if (c->closing)
        return EDGELOCK_ERR_SHUTDOWN;
    LockEntry *le = lock_get(c, lock.id);
    if (!le)
        return EDGELOCK_ERR_STALE_HANDLE;
    edgelock_status kind_st = permits_check_take(c, le, lock.id, owner, permits, lease_ms);
    if (kind_st != EDGELOCK_OK)
        return kind_st;
    if (c->waiters.full() || c->queue.cmds.full())
        return EDGELOCK_ERR_TABLE_FULL;
    uint32_t hold_index;
    Hold *hold = hold_reserve(c, lock.id, owner, &hold_index);
    if (!hold)
        return EDGELOCK_ERR_TABLE_FULL;
    if (hold->unlock_uncertain && hold->count > 0)
        release_settle_uncertain(c, hold);

    uint32_t index;
    Waiter *w = c->waiters.alloc(&index);
    uint64_t now = loop_now(&c->loop);
    w->state = WaiterState::Waiting; // in flight from its first attempt (lease.cpp counts)
    w->lock_id = lock.id;
    w->owner = owner;
    w->lease_ms = lease_ms;
    w->deadline_ms = wait_ms == EDGELOCK_WAIT_FOREVER ? kForever : add_ms(now, (uint64_t)wait_ms);
    w->seq = ++c->waiter_seq;
    w->cb = cb;
    w->user = user;
    w->hold_index = hold_index;
    w->sub_index = kNoIndex;
    w->last_error = EDGELOCK_OK;
    w->give_up_on_connection_error = give_up_on_connection_error;
    w->permits = permits;
    w->fair_window_ms = fair_window(c, wait_ms);
    le->refs++;
    // Our releases of this lock were heard by waiters twice in a row: let
    // one of them take its turn, then try (kYieldEveryHeard: a non-fair
    // lock, but not one that shuts everybody else out). A wait too short
    // for the pause attempts at once, as asked.
    uint64_t yield_ms = le->yield_until_ms > now ? le->yield_until_ms - now : 0;
    if (yield_ms > 0 && remaining(w, now) > yield_ms) {
        wait_for(c, index, WaiterState::Waiting, yield_ms);
        return EDGELOCK_OK;
    }
    attempt(c, index); // a command slot is free: checked above
    return EDGELOCK_OK;
}

static void held_elsewhere(Client *c, uint32_t index, int64_t ttl)
{
    Waiter *w = c->waiters.get(index);
    if (w->cancelled) {
        finish(c, index, EDGELOCK_ERR_CANCELLED);
        return;
    }
    if (w->wake_pending) {
        attempt(c, index, true);
        return;
    }
    if (remaining(w, loop_now(&c->loop)) == 0) {
        finish(c, index, EDGELOCK_ERR_WAIT_TIMEOUT);
        return;
    }
    // The holder's lease runs out after ttl ms (Redis does not publish expiry):
    // retry then. ttl < 0 means no expiry; only a message or the deadline helps.
    uint64_t delay = ttl >= 0 ? (uint64_t)ttl + 1 : kForever;
    // A fair lock answers 0 when there is no TTL to wait for (a holder
    // without one, or a free lock that the queue's head has yet to take); its
    // own-channel message wakes the waiter, and this bounded fallback keeps a
    // lost message from stalling it, without spinning.
    if (ttl == 0 && lock_kind(c, w->lock_id) == EDGELOCK_FAIR)
        delay = kFairFallbackMs;
    if (w->sub_index == kNoIndex) {
        edgelock_status st = channel_join(c, index);
        if (st != EDGELOCK_OK) {
            finish(c, index, st);
            return;
        }
        if (pubsub_subscribed(&c->pubsub, w->sub_index)) {
            attempt(c, index); // joined a live subscription: close the gap now
            return;
        }
        wait_for(c, index, WaiterState::Subscribing, delay);
        return;
    }
    wait_for(c, index, WaiterState::Waiting, delay);
}

// Redis granted the attempt sent at sent_ms. With wait_replicas the answer
// waits for the WAIT behind it (wait_done).
static void acquired(Client *c, uint32_t index, int64_t value, uint64_t sent_ms)
{
    Waiter *w = c->waiters.get(index);
    if (w->cancelled) {
        // Too late to stop this attempt: give back what it took (one count).
        undo_grant(c, w, true);
        finish(c, index, EDGELOCK_ERR_CANCELLED);
        return;
    }
    // Its server granted the hold (and issued the token): the one the reply
    // came from, which after an ASK is not the slot's master by the map.
    Connection *conn = c->reply_conn ? c->reply_conn : slot_conn(c, lock_slot(c, w->lock_id));
    c->holds.get(w->hold_index)->server_instance = conn ? conn->server_instance : 0;
    if (!replicas_wanted(c) || lock_kind(c, w->lock_id) == EDGELOCK_LATCH) {
        grant_ok(c, index, value, sent_ms);
        return;
    }
    waiter_set_replicating(c, w, true);
    w->acquired_value = value;
    w->acquired_sent_ms = sent_ms;
    w->granted_on = c->reply_conn;
    if (w->wait_first != w->attempts)
        return; // its WAIT is behind it
    wait_again(c, index);
}

// On a cluster an attempt may be sent again (MOVED, ASK, TRYAGAIN) after the
// WAIT behind it went out: that WAIT may answer first, or from another node,
// and says nothing of the grant. Ask again, now, on the connection the grant
// came on (after ASK that is not the slot's master yet); without a command
// slot for that, fail closed.
static void wait_again(Client *c, uint32_t index)
{
    Waiter *w = c->waiters.get(index);
    // A slot that keeps moving is a cluster in trouble: after a few, say the
    // grant is not known to be replicated.
    edgelock_status st = EDGELOCK_ERR_NOT_REPLICATED;
    if (w->waits_again < kMaxWaitsAgain) {
        w->waits_again++;
        LockCall wait = replicas_wait_call(w->lock_id, wait_done);
        wait.ref = c->waiters.id_of(index);
        wait.owner = ++w->attempts;
        uint64_t id;
        if (w->granted_on && call_new(c, wait, &id)) {
            call_pin(c, id, w->granted_on);
            call_submit(c, id);
            return;
        }
        st = w->granted_on ? EDGELOCK_ERR_TABLE_FULL : EDGELOCK_ERR_NOT_REPLICATED;
    }
    undo_grant(c, w, true);
    finish(c, index, st);
}

static void wait_done(Client *c, const LockCall *call, uint64_t, uint64_t, redisReply *reply,
                      edgelock_status st)
{
    Waiter *w = c->waiters.get_id(call->ref);
    if (!w || call->owner != w->attempts)
        return; // the waiter is gone, or this WAIT followed an earlier attempt
    if (!w->replicating) {
        // Answered before its attempt: the attempt did not get the lock, or
        // was sent again and has not answered yet (acquired() asks again).
        w->wait_first = (uint32_t)call->owner;
        return;
    }
    uint32_t index = id_index(call->ref);
    if (w->grant_released) {
        grant_taken_back(c, index);
        return;
    }
    if (st == EDGELOCK_OK && c->reply_conn != w->granted_on) {
        wait_again(c, index); // another node's WAIT: not this grant's
        return;
    }
    waiter_set_replicating(c, w, false);
    edgelock_status verdict = replicas_verdict(c, reply, st);
    if (verdict == EDGELOCK_OK && w->cancelled)
        verdict = EDGELOCK_ERR_CANCELLED; // given back below, like an unreplicated one
    if (verdict == EDGELOCK_OK) {
        grant_ok(c, index, w->acquired_value, w->acquired_sent_ms);
        return;
    }
    // Not known to be on enough replicas: the caller does not hold it, so
    // neither may Redis. One release, answered to nobody.
    undo_grant(c, w, true);
    finish(c, index, verdict);
}

static void acquire_done(Client *c, const LockCall *call, uint64_t, uint64_t sent_ms, redisReply *reply,
                         edgelock_status st)
{
    Waiter *w = c->waiters.get_id(call->ref);
    if (!w)
        return; // completed at shutdown
    uint32_t index = id_index(call->ref);
    if (st == EDGELOCK_OK && !kind_serves(lock_kind(c, w->lock_id), KindClass::Lock)) {
        w->last_error = EDGELOCK_OK;
        int64_t ttl = 0;
        switch (read_take_reply(lock_kind(c, w->lock_id), reply, edgelock_port_wall_ms(), &ttl)) {
        case TakeAnswer::Taken: acquired(c, index, 0, sent_ms); break;
        case TakeAnswer::NotYet: held_elsewhere(c, index, ttl); break;
        case TakeAnswer::Malformed: finish(c, index, EDGELOCK_ERR_PROTOCOL); break;
        }
        return;
    }
    if (st == EDGELOCK_OK) {
        w->last_error = EDGELOCK_OK;
        if (reply->type == REDIS_REPLY_NIL) {
            acquired(c, index, 0, sent_ms);
        } else if (reply->type == REDIS_REPLY_INTEGER) {
            held_elsewhere(c, index, (int64_t)reply->integer);
        } else if (reply->type == REDIS_REPLY_ARRAY && reply->elements == 2 &&
                   reply->element[0]->type == REDIS_REPLY_INTEGER &&
                   reply->element[1]->type == REDIS_REPLY_INTEGER) {
            // Fenced lock: {-1, token} acquired, {pttl, -1} held elsewhere.
            if (reply->element[0]->integer == -1) {
                acquired(c, index, (int64_t)reply->element[1]->integer, sent_ms);
            } else {
                held_elsewhere(c, index, (int64_t)reply->element[0]->integer);
            }
        } else {
            finish(c, index, EDGELOCK_ERR_PROTOCOL);
        }
        return;
    }
    if (st == EDGELOCK_ERR_REDIS) {
        log_to(c->loop.log, EDGELOCK_LOG_WARN, "acquire refused: %s", reply ? reply->str : "");
        finish(c, index, st);
        return;
    }
    if (st == EDGELOCK_ERR_SHUTDOWN || st == EDGELOCK_ERR_INVALID_ARG) {
        finish(c, index, st);
        return;
    }
    // Connection dropped or timed out after it was sent: the script may have
    // run. If this owner held nothing before, give back whatever it may now
    // hold, ahead of any retry (release.cpp: until Redis answers). A re-entry
    // of unknown outcome is left alone: an extra count in Redis only delays
    // the release until the lease ends (renewal stops at our count 0).
    Hold *h = c->holds.get(w->hold_index);
    if (h->count == 0 && sent_ms != 0)
        undo_grant(c, w, false);
    else if (sent_ms != 0 && !h->lost)
        bound_by_unknown_re_entry(c, w, h, sent_ms);
    if (w->cancelled) {
        finish(c, index, EDGELOCK_ERR_CANCELLED);
        return;
    }
    w->last_error = st;
    uint64_t left = remaining(w, loop_now(&c->loop));
    if (left == 0 || w->give_up_on_connection_error) {
        finish(c, index, st);
        return;
    }
    // Retried when the command connection is back (acquire_retry_all); the
    // connection is always down by the time such a reply is delivered.
    wait_for(c, index, WaiterState::Waiting, kForever);
}

static void timer_fired(void *arg, Timer *t)
{
    auto *c = static_cast<Client *>(arg);
    uint32_t index = (uint32_t)(t - c->waiter_timers);
    Waiter *w = c->waiters.get(index);
    if (w && w->ok_behind_undo) {
        held_ok_expired(c, index);
        return;
    }
    if (!w || w->state == WaiterState::Attempting)
        return;
    if (w->timer_is_deadline || remaining(w, loop_now(&c->loop)) == 0) {
        finish(c, index, w->last_error != EDGELOCK_OK ? w->last_error : end_of_wait_behind_give_back(c, w));
        return;
    }
    attempt(c, index);
}

// Wake the waiter at `index` (or remember the wake if its attempt is in flight).
void acquire_finish(Client *c, uint32_t index, edgelock_status st, int64_t value, uint64_t sent_ms)
{
    finish(c, index, st, value, sent_ms);
}

void acquire_attempt(Client *c, uint32_t index)
{
    attempt(c, index);
}

void acquire_wake(Client *c, uint32_t index)
{
    Waiter *w = c->waiters.get(index);
    if (w->state == WaiterState::Attempting)
        w->wake_pending = true;
    else
        attempt(c, index, true);
}

void acquire_retry_all(Client *c)
{
    for (uint32_t i = 0; i < c->waiters.end() && !c->closing; i++) {
        Waiter *w = c->waiters.get(i);
        if (w && w->state != WaiterState::Attempting && w->last_error != EDGELOCK_OK)
            attempt(c, i);
    }
}

void acquire_on_command_slot_free(Client *c)
{
    if (c->starved_waiters == 0)
        return;
    for (uint32_t i = 0; i < c->waiters.end() && !c->queue.cmds.full() && !c->closing; i++) {
        Waiter *w = c->waiters.get(i);
        if (w && w->starved) {
            attempt(c, i);
            return; // one slot freed: one retry
        }
    }
}

void acquire_after_undo(Client *c)
{
    for (uint32_t i = 0; i < c->waiters.end() && !c->closing; i++) {
        Waiter *w = c->waiters.get(i);
        if (w && w->ok_behind_undo)
            held_ok_settle(c, i);
        else if (w && w->behind_undo && w->state == WaiterState::Waiting)
            attempt(c, i); // waits again if another give-back of its is still out
    }
}

void acquire_abandon_fair_all(Client *c)
{
    for (uint32_t i = 0; i < c->waiters.end(); i++) {
        Waiter *w = c->waiters.get(i);
        if (w && w->attempted && lock_kind(c, w->lock_id) == EDGELOCK_FAIR)
            abandon_fair_queue(c, w);
    }
}

static void cancel_waiter(Client *c, uint32_t i)
{
    Waiter *w = c->waiters.get(i);
    if (w->state == WaiterState::Attempting || w->replicating) {
        // An attempt on the wire: its reply decides what to give back.
        // One still waiting for its connection never reached Redis: it
        // is withdrawn, and the call ends now (acquire_done).
        w->cancelled = true;
        if (!w->replicating)
            queue_withdraw(&c->queue, w->attempt_cmd, EDGELOCK_ERR_CANCELLED);
    } else {
        finish(c, i, EDGELOCK_ERR_CANCELLED);
    }
}

void acquire_cancel(Client *c, uint64_t owner)
{
    for (uint32_t i = 0; i < c->waiters.end() && !c->closing; i++) {
        Waiter *w = c->waiters.get(i);
        if (w && w->owner == owner)
            cancel_waiter(c, i);
    }
}

void acquire_cancel_user(Client *c, const void *user)
{
    for (uint32_t i = 0; i < c->waiters.end() && !c->closing; i++) {
        Waiter *w = c->waiters.get(i);
        if (w && w->user == user && !w->cancelled) {
            cancel_waiter(c, i);
            return; // one call per user pointer
        }
    }
}

void acquire_fail_all(Client *c, edgelock_status st)
{
    for (uint32_t i = 0; i < c->waiters.end(); i++)
        if (c->waiters.get(i))
            finish(c, i, st);
}

} // namespace edgelock
