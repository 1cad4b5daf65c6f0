// SPDX-License-Identifier: BSD-3-Clause
// Unlock, and the undo of an acquire whose outcome is unknown (release.hpp).
#include "locks/release.hpp"
#include "base/log.hpp"

#include <hiredis/hiredis.h>
#include <string.h>

#include "base/time.hpp"
#include "base/writer.hpp"
#include "locks/callbacks.hpp"
#include "locks/calls.hpp"
#include "locks/client.hpp"
#include "locks/handles.hpp"
#include "locks/holds.hpp"
#include "locks/lease.hpp"
#include "locks/permits.hpp"
#include "locks/replicas.hpp"
#include "redisson/format.hpp"

namespace edgelock
{

// The lease a release names, for the count it may leave: the hold's own, and
// no shorter than what the owner's holds through other handles on the name
// have left (lease.cpp).
static int64_t lease_for(Client *c, const Hold *h)
{
    if (!h)
        return c->cfg.watchdog_lease_ms;
    int64_t own = h->lease_ms == EDGELOCK_LEASE_WATCHDOG || h->lease_ms <= 0
                      ? (int64_t)c->cfg.watchdog_lease_ms
                      : h->lease_ms;
    int64_t others = hold_lease_left(c, h->lock_id, h->owner);
    return others > own ? others : own;
}

// The owner learns of a loss through the call it made: forget the marker.
static void clear_lost(Client *c, uint32_t index)
{
    Hold *h = c->holds.get(index);
    h->lost = false;
    h->count = 0;
    h->watchdog = false;
    hold_release_if_idle(c, index);
}

// Whether `owner` holds lock_id's name, or may be granted it, through another
// handle of this client: Redis counts those holds in the same hash field
// (two handles on one name are one RLock to Redisson), so a 0 from a release
// is theirs, not a stale count. A walk of the name index's chain
// (lock_next_twin), made when a release leaves the owner no hold of its own
// by this handle's count.
// lock_id: a live handle (the callers have looked).
static bool held_through_another_handle(Client *c, uint64_t lock_id, uint64_t owner)
{
    for (uint32_t i = lock_next_twin(c, lock_id, kNoIndex); i != kNoIndex;
         i = lock_next_twin(c, lock_id, i)) {
        const Hold *h = hold_find(c, c->locks.id_of(i), owner, nullptr);
        if (h && (h->count > 0 || h->pending > 0))
            return true;
    }
    return false;
}

// The hold count after a release answered `value`. 1: the lock is free. 0:
// holds remain in Redis (for a read lock maybe only other readers'), ours went
// down by one. Ours may reach 0 while Redis still counts one more (a re-entry
// whose reply was lost did run): then renewal stops and the rest lapses with
// its lease, as Redisson stops renewing when the thread's own count is 0.
static uint32_t count_after_release(Client *c, const Hold *h, int64_t value)
{
    if (value == 1)
        return 0;
    if (h->count <= 1 && lock_get(c, h->lock_id) && lock_kind(c, h->lock_id) != EDGELOCK_READ &&
        !held_through_another_handle(c, h->lock_id, h->owner))
        log_to(c->loop.log, EDGELOCK_LOG_WARN,
               "Redis counts more holds than this owner took (owner %llu); "
               "the rest lapses with its lease",
               (unsigned long long)h->owner);
    return h->count > 0 ? h->count - 1 : 0;
}

static void send_latch_delete(Client *c, const LockCall *release)
{
    // An undo lets go of its handle once sent (unpin_when_sent): freed since,
    // the lock has no name to send; the latch lapses with its TTL.
    if (!lock_get(c, release->lock_id))
        return;
    LockCall call(LockOp::LatchDelete, release->lock_id, nullptr);
    memcpy(call.request_id, release->request_id, sizeof(call.request_id));
    call.unpin_when_sent = true;
    call_start(c, call); // when it cannot, the latch expires on its own
}

static void start_cleanup(Client *c, const LockCall &call);
static LockCall make_release(Client *c, uint64_t lock_id, uint64_t owner, int64_t lease);

// How many releases in a row may drop counts of an owner that holds nothing.
static constexpr uint8_t kMaxDrains = 16;

// Redis still counts holds of this owner (an unlock answered 0: not
// released) while the owner holds nothing by our count and has nothing in
// flight: a reply that was lost, or a failover that restored a released
// hold. They are nobody's: release them too, one Redisson unlock each, else
// every unlock of the owner would reset their lease and the lock would never
// lapse. The caller's answer waits for the last one, so that "released"
// means released. False when no more may be sent (then the rest lapses).
static bool drain_stale_counts(Client *c, const LockCall *answered)
{
    Hold *h = hold_find(c, answered->lock_id, answered->owner, nullptr);
    if (!lock_get(c, answered->lock_id))
        return false; // an undo's handle, freed once it was sent: nothing to name
    if ((h && (h->count > 0 || h->pending > (answered->pins_hold ? 1u : 0u))) ||
        lock_kind(c, answered->lock_id) == EDGELOCK_READ)
        return false; // a read lock's 0 may be other readers' holds
    if (held_through_another_handle(c, answered->lock_id, answered->owner))
        return false; // the counts are that handle's
    uint8_t left = answered->drain ? answered->drains_left : kMaxDrains;
    if (left == 0 || c->closing) {
        log_to(c->loop.log, EDGELOCK_LOG_WARN,
               "Redis still counts holds of owner %llu; they lapse with their lease",
               (unsigned long long)answered->owner);
        return false;
    }
    LockCall call = make_release(c, answered->lock_id, answered->owner, answered->lease_ms);
    call.drain = true;
    call.drains_left = (uint8_t)(left - 1);
    if (answered->cleanup || answered->ref || answered->wait_after) {
        // Nobody waits (an undo), or a WAIT answers the caller: in the background.
        call.cleanup = true;
        call.unpin_when_sent = true;
        start_cleanup(c, call);
        return false;
    }
    call.cb = answered->cb;
    call.user = answered->user;
    return call_start(c, call);
}

// An unlock of unknown outcome: keep its request id for a retry, and stop
// renewing (as Redisson does after any unlock): if it did not run, the lock
// lapses with the lease Redis last set.
static void unlock_uncertain(Client *c, Hold *h, const LockCall *call)
{
    h->unlock_uncertain = true;
    memcpy(h->unlock_request_id, call->request_id, sizeof(h->unlock_request_id));
    if (h->watchdog) {
        h->watchdog = false;
        h->expires_ms = add_ms(h->confirmed_ms, c->cfg.watchdog_lease_ms);
    }
}

// Whether a release that freed the lock was heard by another client's
// waiter: answered is the release script's 1 + subscribers told. One of those
// may be this client's own subscription (a waiter of ours, or the channel of
// one that got the lock, left at the loop's next turn, after the release went
// out): yielding to it would only pause this client (a lone client that once
// waited paused 6 ms every second relock).
static bool heard_by_others(Client *c, const LockCall *call, int64_t answered)
{
    if (answered <= 1)
        return false;
    char chan[kMaxChannelLen];
    Writer wr(chan, sizeof(chan));
    write_waiter_channel(wr, c->protocol, lock_ref(c, call->lock_id), call->owner);
    bool ours = !wr.overflow && pubsub_find(&c->pubsub, chan, wr.len) != kNoSub;
    return answered - 1 > (ours ? 1 : 0);
}

// A release answered "freed": heard says whether another client's waiter was
// told. See kYieldEveryHeard.
static void take_turns(Client *c, uint64_t lock_id, bool heard, uint64_t sent_ms)
{
    LockEntry *le = lock_get(c, lock_id);
    le->heard_in_a_row = heard ? (uint8_t)(le->heard_in_a_row + 1) : 0;
    if (le->heard_in_a_row < kYieldEveryHeard) {
        // A pause still pending from an earlier release is over: this client
        // took the lock since (another of its owners, woken by that release's
        // message), so the turn was taken. Left set, it would hold back every
        // owner of this client from a lock nobody else is waiting for.
        le->yield_until_ms = 0;
        return;
    }
    le->heard_in_a_row = 0;
    uint64_t now = loop_now(&c->loop);
    uint64_t rtt = sent_ms != 0 && now > sent_ms ? now - sent_ms : 0;
    le->yield_until_ms = add_ms(now, kYieldMinMs + 2 * rtt);
}

static void wait_on(Client *c, uint64_t lock_id, Connection *conn, int64_t value, edgelock_result_fn cb,
                    void *user);

static void release_answered(Client *c, const LockCall *call, uint64_t sent_ms, redisReply *reply,
                             edgelock_status st)
{
    int64_t value = 0;
    uint32_t hi = kNoIndex;
    Hold *h = hold_find(c, call->lock_id, call->owner, &hi);
    bool handed_on = false;   // a drain answers the caller instead
    bool report_lost = false; // the owner's outer holds were gone
    bool uncertain = st == EDGELOCK_ERR_CONNECTION || st == EDGELOCK_ERR_TIMEOUT;
    // An error from the script (an ACL that forbids PUBLISH, say) may come
    // after its DEL ran: Redis keeps a script's writes up to the error.
    bool partial = st == EDGELOCK_ERR_REDIS;
    if (call->cleanup && uncertain && !c->closing) {
        // The undo of an acquire of unknown outcome must reach Redis: again,
        // with the same request id (the unlock latch answers a repeat).
        start_cleanup(c, *call);
        if (h)
            hold_release_if_idle(c, hi);
        return;
    }
    // The resent unlock of unknown outcome (release_settle_uncertain) is
    // answered. Refused (an ACL, OOM), it settled nothing: the first one may
    // still have released the lock, so it stays uncertain and goes out again
    // with the owner's next call.
    if (h && call->cleanup && h->unlock_settling &&
        memcmp(h->unlock_request_id, call->request_id, sizeof(call->request_id)) == 0) {
        h->unlock_settling = false;
        if (st != EDGELOCK_OK && h->count > 0)
            h->unlock_uncertain = true;
    }
    bool retried = h && h->unlock_uncertain && !call->cleanup &&
                   memcmp(h->unlock_request_id, call->request_id, sizeof(call->request_id)) == 0;
    if (h && !call->cleanup && !uncertain && !partial)
        h->unlock_uncertain = false; // answered: a later unlock is another one
    if (st == EDGELOCK_OK) {
        if (reply->type == REDIS_REPLY_NIL) {
            // Not the owner in Redis. If we thought it was still held (watchdog,
            // or a fixed lease not yet over by our clock), it was lost behind
            // our back; a lapsed fixed lease is plain NOT_OWNER, as in Redisson.
            // A retry of an unlock of unknown outcome whose latch is gone: the
            // first may have released it; not ours either way.
            st = h && !retried && (h->lost || hold_active(h, loop_now(&c->loop))) ? EDGELOCK_ERR_LOST
                                                                                  : EDGELOCK_ERR_NOT_OWNER;
            if (call->drain) { // the stale counts went by themselves meanwhile
                st = EDGELOCK_OK;
                value = 1;
            }
            if (h) {
                h->count = 0;
                h->lost = false;
            }
            // A read-write unlock that found the lock gone latched its nil
            // (rw_*_release.lua); answered, the latch can go, as Redisson's does.
            LockEntry *le = lock_get(c, call->lock_id);
            if (le && (le->kind == EDGELOCK_READ || le->kind == EDGELOCK_WRITE))
                send_latch_delete(c, call);
        } else if (reply->type == REDIS_REPLY_INTEGER && reply->integer >= 0) {
            value = reply->integer > 0 ? 1 : 0;
            // Freed: the owner's count ran out and the key went. A grant of
            // that owner answered before this (and so run before it) but not
            // yet the caller's, its WAIT to come, went with it.
            if (value == 1)
                c->on_owner_released(c, call->lock_id, call->owner);
            // A read hold whose fixed lease ran out is still a field of the
            // hash while other readers keep the key (Redis expires the hold's
            // own timeout key, not the field), so the script counts it down.
            // For its owner it ended with the lease, as a lapsed lease of any
            // other kind, whose key is gone (nil): NOT_OWNER.
            bool lapsed_read = h && !call->cleanup && !call->drain && h->count > 0 && !h->lost &&
                               !h->watchdog && lock_kind(c, call->lock_id) == EDGELOCK_READ &&
                               loop_now(&c->loop) >= h->expires_ms;
            // 1: freed; 1 + n: freed, and n subscribers heard the message.
            if (value == 1 && !call->cleanup)
                take_turns(c, call->lock_id, heard_by_others(c, call, reply->integer), sent_ms);
            // An undo gives back a grant the owner never counted (a re-entry
            // cancelled or not replicated): its 0 is the outer hold, still
            // there, not a count to take down (nor one to drain). Its 1 with
            // an outer hold counted means that hold was gone already (its
            // lease ran out before the re-entry made a fresh one): lost.
            if (lapsed_read) {
                st = EDGELOCK_ERR_NOT_OWNER;
                h->count = 0;
            } else if (h && !call->undo && value == 1 && h->count > 1 && !h->lost) {
                // Released while the owner still counts holds after this one:
                // if they are live by our clock (which counts a lease from its
                // send, so they are live in Redis too), Redis had fewer than
                // the owner took. They were gone before this unlock (the key
                // deleted or expired, and a re-entry made a fresh hold, which
                // Redis answers as a re-entry's; or a failover lost a
                // re-entry), and the owner's outer critical section has not
                // been protected since: a loss, as the watchdog reports one.
                h->count--;
                hold_unlocked(c, h);
                if (hold_active(h, loop_now(&c->loop))) {
                    h->lost = true;
                    report_lost = true;
                } else {
                    h->count = 0; // their leases ran out: released, not lost
                }
            } else if (h && !call->undo) {
                h->count = count_after_release(c, h, value);
                hold_unlocked(c, h);
            } else if (h && value == 1 && h->count > 0 && !h->lost) {
                h->lost = true;
                report_lost = true;
            }
            send_latch_delete(c, call);
            handed_on = value == 0 && drain_stale_counts(c, call);
        } else {
            st = EDGELOCK_ERR_PROTOCOL;
        }
    } else if (st == EDGELOCK_ERR_REDIS) {
        log_to(c->loop.log, EDGELOCK_LOG_WARN, "release refused: %s", reply ? reply->str : "");
    }
    // Connection trouble: the outcome is unknown, the hold stays as it was
    // (unrenewed) and the caller may retry.
    if (h && !call->cleanup && (uncertain || partial)) {
        unlock_uncertain(c, h, call);
        if (call->give_back && uncertain && h->count > 0 && !c->closing)
            release_settle_uncertain(c, h);
    }
    // Only the pin this unlock took (release_start): a hold found now that
    // it did not pin is a lock call's made meanwhile by the same owner.
    if (h && call->pins_hold)
        hold_unpin(c, hi);
    else if (h)
        hold_release_if_idle(c, hi);
    if (call->ref) {
        // A WAIT follows (wait_replicas): it answers the caller. Its slot is
        // gone only if it completed first (shutdown), having answered then.
        if (Command *wait = queue_get(&c->queue, call->ref)) {
            LockCall *w = call_of(wait);
            w->lease_ms = st;
            w->ref = (uint64_t)value;
            w->ran_on = c->reply_conn;
        }
    } else if (call->wait_after && st == EDGELOCK_OK && !handed_on) {
        // Its WAIT answered before it (release_wait_done): ask the node
        // that released it now.
        wait_on(c, call->lock_id, c->reply_conn, value, call->cb, call->user);
    } else if (!call->cleanup && !handed_on) {
        invoke_result(c, call->cb, call->lock_id, st, value, call->user);
    }
    if (report_lost) { // last: the application may free the handle in it
        log_to(c->loop.log, EDGELOCK_LOG_WARN, "lock lost (owner %llu)", (unsigned long long)call->owner);
        invoke_lock_lost(c, call->lock_id, call->owner);
    }
}

// Every release completes here. A give-back's completion lets the lock
// calls that waited for it go (the same owner's next grant must not come
// before it: it would give that back instead).
static void release_done(Client *c, const LockCall *call, uint64_t, uint64_t sent_ms, redisReply *reply,
                         edgelock_status st)
{
    release_answered(c, call, sent_ms, reply, st); // a give-back sent again counts itself again
    if (!call->cleanup)
        return;
    EDGELOCK_ASSERT(c->undos_out > 0);
    c->undos_out--;
    if (!c->closing)
        c->on_undo_answered(c);
}

bool release_undo_out(Client *c, uint64_t lock_id, uint64_t owner)
{
    if (c->undos_out == 0)
        return false;
    for (uint32_t i = 0; i < c->queue.cmds.end(); i++) {
        const Command *cmd = c->queue.cmds.get(i);
        if (!cmd || cmd->done != calls_done)
            continue;
        const LockCall *call = call_of(cmd);
        if (call->done != release_done || !call->cleanup || call->owner != owner)
            continue; // (a semaphore's give-back has done functions of its own)
        // This handle's, or one freed since it was sent (its name is
        // unknown), or another on the same name: Redis counts both in one field.
        if (call->lock_id == lock_id || !lock_get(c, call->lock_id) ||
            same_lock_name(c, call->lock_id, lock_id))
            return true;
    }
    return false;
}

static LockCall make_release(Client *c, uint64_t lock_id, uint64_t owner, int64_t lease)
{
    LockCall call(LockOp::Release, lock_id, release_done);
    call.owner = owner;
    call.lease_ms = lease;
    // Unique per unlock across clients, as Redisson's random id is, without a
    // getrandom() per unlock: 8 random bytes per client, 8 bytes of counter.
    memcpy(call.request_id, c->latch_prefix, sizeof(c->latch_prefix));
    uint64_t n = ++c->latch_counter;
    for (int i = 0; i < 8; i++)
        call.request_id[8 + i] = (uint8_t)(n >> (56 - 8 * i));
    return call;
}

// The release's own answer, stored in its WAIT's slot (lease_ms: status, ref:
// value) until the WAIT answers; this while it has not come.
static constexpr int64_t kReleaseUnanswered = INT64_MIN;

static void release_wait_done(Client *c, const LockCall *call, uint64_t id, uint64_t, redisReply *reply,
                              edgelock_status st);

// The WAIT for a release that ran on conn, pinned there; it answers the
// caller (release_wait_done). Without a command slot or a node, fail closed.
static void wait_on(Client *c, uint64_t lock_id, Connection *conn, int64_t value, edgelock_result_fn cb,
                    void *user)
{
    LockCall wait = replicas_wait_call(lock_id, release_wait_done);
    wait.cb = cb;
    wait.user = user;
    wait.lease_ms = EDGELOCK_OK;
    wait.ref = (uint64_t)value;
    wait.ran_on = conn;
    uint64_t id;
    if (conn && call_new(c, wait, &id)) {
        call_pin(c, id, conn);
        call_submit(c, id);
        return;
    }
    invoke_result(c, cb, lock_id,
                  c->closing ? EDGELOCK_ERR_SHUTDOWN
                  : conn     ? EDGELOCK_ERR_TABLE_FULL
                             : EDGELOCK_ERR_NOT_REPLICATED,
                  0, user);
}

// On a cluster the release may be sent again (MOVED, ASK, TRYAGAIN) after
// the WAIT behind it went out: that WAIT may answer first, or from another
// node, and then says nothing of the release. (owner: the release's
// command id.)
static void release_wait_done(Client *c, const LockCall *call, uint64_t id, uint64_t, redisReply *reply,
                              edgelock_status st)
{
    if (call->lease_ms == kReleaseUnanswered && !c->closing) {
        Command *rel = queue_get(&c->queue, call->owner);
        LockCall *r = rel ? call_of(rel) : nullptr;
        if (r && r->op == LockOp::Release && r->ref == id) {
            // The release answers the caller, with a WAIT behind it then.
            r->ref = 0;
            r->cb = call->cb;
            r->user = call->user;
            r->wait_after = true;
            return;
        }
    }
    edgelock_status released = call->lease_ms == kReleaseUnanswered ? st : (edgelock_status)call->lease_ms;
    int64_t value = (int64_t)call->ref;
    if (released == EDGELOCK_OK && st == EDGELOCK_OK && call->ran_on && c->reply_conn != call->ran_on &&
        !c->closing) {
        wait_on(c, call->lock_id, call->ran_on, value, call->cb, call->user); // another node's WAIT
        return;
    }
    if (released == EDGELOCK_OK)
        released = replicas_verdict(c, reply, st);
    invoke_result(c, call->cb, call->lock_id, released, value, call->user);
}

// Release, then WAIT, in one round trip; the WAIT answers the caller.
static bool start_with_wait(Client *c, const LockCall &release, edgelock_result_fn cb, void *user)
{
    if (c->queue.cmds.available() < 2)
        return false;
    uint64_t rid, wid;
    LockCall *r = call_new(c, release, &rid);
    LockCall wait = replicas_wait_call(release.lock_id, release_wait_done);
    wait.cb = cb;
    wait.user = user;
    wait.lease_ms = kReleaseUnanswered;
    if (!r)
        return false;
    wait.owner = rid;              // release_wait_done finds its release by it
    if (call_new(c, wait, &wid)) { // two slots were free: it is there
        r->ref = wid;
        r->cb = nullptr;
        call_submit(c, rid);
        call_submit(c, wid);
    } else {
        call_submit(c, rid);
    }
    return true;
}

edgelock_status release_start(Client *c, edgelock_lock lock, uint64_t owner, edgelock_result_fn cb,
                              void *user, bool give_back)
{
    edgelock_status st = lock_check_call(c, lock, cb, KindClass::LockOrSemaphore);
    if (st != EDGELOCK_OK)
        return st;
    uint32_t hi;
    Hold *h = hold_find(c, lock.id, owner, &hi);
    if (h && h->lost) {
        clear_lost(c, hi);
        return EDGELOCK_ERR_LOST;
    }
    if (!kind_serves(lock_kind(c, lock.id), KindClass::Lock))
        return semaphore_release_start(c, lock, owner, cb, user);
    LockCall call = make_release(c, lock.id, owner, lease_for(c, h));
    if (h && h->unlock_uncertain) // a retry: the latch answers if the first one ran
        memcpy(call.request_id, h->unlock_request_id, sizeof(call.request_id));
    call.cb = cb;
    call.user = user;
    call.give_back = give_back;
    // Pinned before it starts: a send that fails completes it at once.
    call.pins_hold = h != nullptr;
    if (h)
        h->pending++;
    if (replicas_wanted(c) ? start_with_wait(c, call, cb, user) : call_start(c, call))
        return EDGELOCK_OK;
    if (h)
        hold_unpin(c, hi);
    return EDGELOCK_ERR_TABLE_FULL;
}

// An undo waits for the connection as long as it takes (the acquire it undoes
// may still run when Redis is back), and is sent again after each loss of
// the connection until Redis answers it. Its handle may be freed once it is
// sent; a repeat then has no name to send and is dropped.
static void start_cleanup(Client *c, const LockCall &call)
{
    uint64_t id;
    if (!lock_get(c, call.lock_id) || !call_new(c, call, &id)) {
        log_to(c->loop.log, EDGELOCK_LOG_WARN,
               "cannot release an acquire of unknown outcome (%s); "
               "it lapses with its lease",
               lock_get(c, call.lock_id) ? "no command slot" : "lock handle freed");
        return;
    }
    queue_set_patient(&c->queue, id);
    c->undos_out++; // until release_done
    call_submit(c, id);
}

void release_settle_uncertain(Client *c, Hold *h)
{
    // The owner's unlock of unknown outcome still counts in h->count. If it
    // did not run, the next acquire would re-enter the old hold in Redis, and
    // the owner's next unlock would leave that count behind, renewed by the
    // watchdog for ever. So it goes out again first (same request id: the
    // unlock latch answers if it ran), ahead of the acquire on the same
    // connection; its answer takes the count down (release_done).
    LockCall call = make_release(c, h->lock_id, h->owner, lease_for(c, h));
    memcpy(call.request_id, h->unlock_request_id, sizeof(call.request_id));
    call.cleanup = true;
    call.unpin_when_sent = true;
    h->unlock_uncertain = false;
    h->unlock_settling = true; // lock_valid: LOST until it is answered
    start_cleanup(c, call);
}

void cleanup_release(Client *c, uint64_t lock_id, uint64_t owner, int64_t lease_ms)
{
    LockCall call = make_release(c, lock_id, owner, lease_ms);
    call.cleanup = true;
    call.undo = true;
    call.unpin_when_sent = true;
    start_cleanup(c, call);
}

} // namespace edgelock
