// SPDX-License-Identifier: BSD-3-Clause
// Force unlock, is-locked, hold count, TTL, and setting the lease of a held
// lock (queries.hpp). lock_info is in info.cpp.
#include "locks/queries.hpp"

#include <hiredis/hiredis.h>

#include "base/time.hpp"
#include "locks/callbacks.hpp"
#include "locks/calls.hpp"
#include "locks/client.hpp"
#include "locks/handles.hpp"
#include "locks/holds.hpp"
#include "redis/reply.hpp"

namespace edgelock
{

static void query_done(Client *c, const LockCall *call, uint64_t, uint64_t, redisReply *reply,
                       edgelock_status st)
{
    int64_t value = 0;
    if (st == EDGELOCK_OK && !reply_integer(reply, &value))
        st = EDGELOCK_ERR_PROTOCOL;
    if (st == EDGELOCK_OK && call->op == LockOp::HoldCount && value == 0) {
        // We believed this owner still held it: it is gone.
        Hold *h = hold_find(c, call->lock_id, call->owner, nullptr);
        if (h && hold_active(h, loop_now(&c->loop))) {
            h->lost = true;
            st = EDGELOCK_ERR_LOST;
        }
    }
    invoke_result(c, call->cb, call->lock_id, st, value, call->user);
}

edgelock_status query_start(Client *c, LockOp op, edgelock_lock lock, uint64_t owner, edgelock_result_fn cb,
                            void *user)
{
    edgelock_status st = lock_check_call(c, lock, cb);
    if (st != EDGELOCK_OK)
        return st;
    if (op == LockOp::HoldCount) {
        Hold *h = hold_find(c, lock.id, owner, nullptr);
        if (h && h->lost)
            return EDGELOCK_ERR_LOST; // kept until that owner unlocks
    }
    LockCall call(op, lock.id, query_done);
    call.owner = owner;
    call.cb = cb;
    call.user = user;
    return call_start(c, call) ? EDGELOCK_OK : EDGELOCK_ERR_TABLE_FULL;
}

static void extend_done(Client *c, const LockCall *call, uint64_t, uint64_t sent_ms, redisReply *reply,
                        edgelock_status st)
{
    int64_t value = 0;
    if (st == EDGELOCK_OK) {
        if (reply->type != REDIS_REPLY_ARRAY || reply->elements != 1 ||
            reply->element[0]->type != REDIS_REPLY_INTEGER) {
            st = EDGELOCK_ERR_PROTOCOL;
        } else {
            uint32_t hi;
            Hold *h = hold_find(c, call->lock_id, call->owner, &hi);
            value = (int64_t)reply->element[0]->integer;
            if (value == 1 && h && h->count > 0 && !h->watchdog) {
                h->lease_ms = call->lease_ms;
                h->expires_ms = add_ms(sent_ms, (uint64_t)call->lease_ms);
            } else if (value != 1) {
                st = h && hold_active(h, loop_now(&c->loop)) ? EDGELOCK_ERR_LOST : EDGELOCK_ERR_NOT_OWNER;
            }
        }
    }
    uint32_t hi;
    if (call->pins_hold && hold_find(c, call->lock_id, call->owner, &hi))
        hold_unpin(c, hi);
    invoke_result(c, call->cb, call->lock_id, st, value, call->user);
}

edgelock_status extend_start(Client *c, edgelock_lock lock, uint64_t owner, int64_t lease_ms,
                             edgelock_result_fn cb, void *user)
{
    edgelock_status st = lock_check_call(c, lock, cb);
    if (st != EDGELOCK_OK)
        return st;
    if (lease_ms <= 0 || lease_ms > EDGELOCK_MAX_TIME_MS)
        return EDGELOCK_ERR_INVALID_ARG;
    LockCall call(LockOp::Extend, lock.id, extend_done);
    call.owner = owner;
    call.lease_ms = lease_ms;
    call.cb = cb;
    call.user = user;
    // Pinned while in flight: a lease that ends meanwhile by our clock keeps
    // its record (hold_lapsed) for the answer to extend.
    uint32_t hi;
    Hold *h = hold_find(c, lock.id, owner, &hi);
    call.pins_hold = h != nullptr;
    if (h)
        h->pending++;
    if (call_start(c, call))
        return EDGELOCK_OK;
    if (h)
        hold_unpin(c, hi);
    return EDGELOCK_ERR_TABLE_FULL;
}

} // namespace edgelock
