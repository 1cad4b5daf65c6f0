// Unlock, and the undo of an acquire whose outcome is unknown (release.hpp).
#include "locks/release.hpp"

#include <hiredis/hiredis.h>
#include <string.h>

#include "locks/callbacks.hpp"
#include "locks/calls.hpp"
#include "locks/client.hpp"
#include "locks/handles.hpp"
#include "locks/holds.hpp"
#include "locks/replicas.hpp"

namespace edgelock
{

static int64_t lease_for(const Client *c, const Hold *h)
{
    if (!h || h->lease_ms == EDGELOCK_LEASE_WATCHDOG || h->lease_ms <= 0)
        return c->cfg.watchdog_lease_ms;
    return h->lease_ms;
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

// The hold count after a release answered `value`. 1: the lock is free. 0: for
// a read lock, holds remain (maybe only other readers'), so ours went down by
// one; for the others our own re-entrant hold remains, so at least one is left.
static uint32_t count_after_release(Client *c, const Hold *h, int64_t value)
{
    if (value == 1)
        return 0;
    if (lock_kind(c, h->lock_id) == EDGELOCK_READ)
        return h->count > 0 ? h->count - 1 : 0;
    return h->count > 1 ? h->count - 1 : 1;
}

static void send_latch_delete(Client *c, const LockCall *release)
{
    LockCall call(LockOp::LatchDelete, release->lock_id, nullptr);
    memcpy(call.request_id, release->request_id, sizeof(call.request_id));
    call.unpin_when_sent = true;
    call_start(c, call); // when it cannot, the latch expires on its own
}

static void release_done(Client *c, const LockCall *call, uint64_t, uint64_t, redisReply *reply,
                         edgelock_status st)
{
    int64_t value = 0;
    uint32_t hi = kNoIndex;
    Hold *h = hold_find(c, call->lock_id, call->owner, &hi);
    if (st == EDGELOCK_OK) {
        if (reply->type == REDIS_REPLY_NIL) {
            // Not the owner in Redis. If we thought it was still held (watchdog,
            // or a fixed lease not yet over by our clock), it was lost behind
            // our back; a lapsed fixed lease is plain NOT_OWNER, as in Redisson.
            st = h && (h->lost || hold_active(h, loop_now(&c->loop))) ? EDGELOCK_ERR_LOST
                                                                      : EDGELOCK_ERR_NOT_OWNER;
            if (h) {
                h->count = 0;
                h->lost = false;
            }
        } else if (reply->type == REDIS_REPLY_INTEGER && (reply->integer == 0 || reply->integer == 1)) {
            value = reply->integer;
            if (h)
                h->count = count_after_release(c, h, value);
            send_latch_delete(c, call);
        } else {
            st = EDGELOCK_ERR_PROTOCOL;
        }
    } else if (st == EDGELOCK_ERR_REDIS) {
        edgelock_port_log(EDGELOCK_LOG_WARN, "release refused: %s", reply ? reply->str : "");
    }
    // Connection trouble: the outcome is unknown, the hold stays as it was and
    // the caller may retry.
    if (h && !call->cleanup)
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
        }
    } else if (!call->cleanup) {
        invoke_result(c, call->cb, call->lock_id, st, value, call->user);
    }
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

static void release_wait_done(Client *c, const LockCall *call, uint64_t, uint64_t, redisReply *reply,
                              edgelock_status st)
{
    edgelock_status released = call->lease_ms == kReleaseUnanswered ? st : (edgelock_status)call->lease_ms;
    int64_t value = (int64_t)call->ref;
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
                              void *user)
{
    edgelock_status st = lock_check_call(c, lock, cb);
    if (st != EDGELOCK_OK)
        return st;
    uint32_t hi;
    Hold *h = hold_find(c, lock.id, owner, &hi);
    if (h && h->lost) {
        clear_lost(c, hi);
        return EDGELOCK_ERR_LOST;
    }
    LockCall call = make_release(c, lock.id, owner, lease_for(c, h));
    call.cb = cb;
    call.user = user;
    // Pinned before it starts: a send that fails completes it at once.
    if (h)
        h->pending++;
    if (replicas_wanted(c) ? start_with_wait(c, call, cb, user) : call_start(c, call))
        return EDGELOCK_OK;
    if (h)
        hold_unpin(c, hi);
    return EDGELOCK_ERR_TABLE_FULL;
}

void cleanup_release(Client *c, uint64_t lock_id, uint64_t owner, int64_t lease_ms)
{
    LockCall call = make_release(c, lock_id, owner, lease_ms);
    call.cleanup = true;
    call.unpin_when_sent = true;
    if (!call_start(c, call))
        edgelock_port_log(EDGELOCK_LOG_WARN, "no command slot to release an uncertain acquire; "
                                             "it lapses with its lease");
}

} // namespace edgelock
