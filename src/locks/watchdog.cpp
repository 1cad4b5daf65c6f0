// SPDX-License-Identifier: BSD-3-Clause
// The watchdog (watchdog.hpp). A hold is lost when Redis says its field is
// gone, or when no renewal has been confirmed for a whole lease (the connection
// is down): the lease Redis enforces started no earlier than the send time we
// keep, so declaring it lost at confirmed_ms + lease is never later than the
// key's real expiry (fail closed). The tick also frees the records of fixed
// leases that have ended (hold_lapsed).
#include "locks/watchdog.hpp"

#include <hiredis/hiredis.h>

#include "locks/calls.hpp"
#include "locks/client.hpp"
#include "locks/handles.hpp"
#include "locks/holds.hpp"
#include "locks/replicas.hpp"

namespace edgelock
{

static void tick(void *arg, Timer *);

bool watchdog_init(Client *c)
{
    return timer_init(&c->watchdog.timer, &c->loop, tick, c);
}

void watchdog_fini(Client *c)
{
    timer_fini(&c->watchdog.timer);
}

void watchdog_arm(Client *c)
{
    if (c->watchdog.armed)
        return;
    c->watchdog.armed = true;
    timer_arm(&c->watchdog.timer, c->cfg.watchdog_lease_ms / 3);
}

void watchdog_stop(Client *c)
{
    timer_cancel(&c->watchdog.timer);
}

void watchdog_kick(Client *c)
{
    // After an outage, find out at once whether the holds survived it.
    if (!c->closing && c->watchdog.armed) {
        timer_cancel(&c->watchdog.timer);
        tick(c, &c->watchdog.timer);
    }
}

static void renew_done(Client *c, const LockCall *, uint64_t id, uint64_t sent_ms, redisReply *reply,
                       edgelock_status st)
{
    bool ok = st == EDGELOCK_OK && reply && reply->type == REDIS_REPLY_ARRAY;
    for (uint32_t i = 0; i < c->holds.end() && !c->closing; i++) {
        Hold *h = c->holds.get(i);
        if (!h || !h->renewing || h->renew_cmd != id)
            continue;
        h->renewing = false;
        if (ok && h->renew_pos < reply->elements && hold_renewable(h)) {
            redisReply *e = reply->element[h->renew_pos];
            if (e->type == REDIS_REPLY_INTEGER && e->integer == 1) {
                if (replicas_wanted(c)) {
                    // Counts when the replicas have it (renew_wait_done): a
                    // failover to one must not find a shorter lease than we
                    // believe in.
                    h->renewed_ms = sent_ms;
                    h->renewed_on = c->reply_conn;
                } else {
                    hold_renewed(c, h, sent_ms);
                }
            } else {
                // The user's callback may unlock (freeing this slot) or lock
                // (reusing it): h is not ours to touch afterwards.
                hold_mark_lost(c, i);
                continue;
            }
        }
        // A failed call is retried next tick; loss by time is the tick's job.
        hold_release_if_idle(c, i);
    }
}

// wait_replicas: the WAIT behind a renewal batch (call->ref: the batch's id).
// Only renewals confirmed on the connection this answer came on count: after
// a redirect the WAIT may be another node's.
static void renew_wait_done(Client *c, const LockCall *call, uint64_t, uint64_t, redisReply *reply,
                            edgelock_status st)
{
    bool replicated = replicas_verdict(c, reply, st) == EDGELOCK_OK;
    for (uint32_t i = 0; i < c->holds.end() && !c->closing; i++) {
        Hold *h = c->holds.get(i);
        if (!h || h->renew_cmd != call->ref || !h->renewed_ms)
            continue;
        if (replicated && h->renewed_on == c->reply_conn && h->renewed_ms > h->confirmed_ms)
            hold_renewed(c, h, h->renewed_ms);
        h->renewed_ms = 0; // not replicated: the lease we count on stays the last replicated one
    }
}

// One renewal script call being filled: read holds, expirable permits and
// the others use different scripts, so each has its own. On a cluster one script may touch
// one slot only (CROSSSLOT), so each slot has its own too, as in Redisson.
struct RenewBatch {
    uint64_t id;
    uint32_t size;
    RenewKind kind;
    uint16_t slot;
};

static RenewKind renew_kind_of(edgelock_lock_kind kind)
{
    return kind == EDGELOCK_READ               ? RenewKind::Read
           : kind == EDGELOCK_PERMIT_SEMAPHORE ? RenewKind::Permits
                                               : RenewKind::Lock;
}

// Batches being filled on a cluster; the oldest goes out when all are taken.
constexpr uint32_t kOpenBatches = 8;

static void batch_submit(Client *c, RenewBatch &b)
{
    if (!b.id)
        return;
    c->watchdog.renew_calls++;
    call_submit(c, b.id);
    if (replicas_wanted(c)) {
        // Right behind it, on the same node: batch_add kept a slot for it.
        LockCall wait = replicas_wait_call(0, renew_wait_done);
        wait.ref = b.id;
        uint64_t id;
        if (call_new(c, wait, &id)) {
            call_set_slot(c, id, b.slot);
            call_submit(c, id);
        }
    }
    b.id = 0;
    b.size = 0;
}

// False when the command table is full (the hold waits for the next tick).
static bool batch_add(Client *c, RenewBatch &b, Hold *h)
{
    if (!b.id) {
        if (replicas_wanted(c) && c->queue.cmds.available() < 2)
            return false; // a batch and its WAIT, or neither
        LockCall call(LockOp::Renew, 0, renew_done);
        call.renew = b.kind;
        if (!call_new(c, call, &b.id))
            return false;
        call_set_slot(c, b.id, b.slot);
    }
    h->renewing = true;
    h->renew_cmd = b.id;
    h->renew_pos = b.size++;
    if (b.size == (b.kind == RenewKind::Permits ? kPermitRenewBatch : kRenewBatch))
        batch_submit(c, b);
    return true;
}

static void tick(void *arg, Timer *)
{
    auto *c = static_cast<Client *>(arg);
    c->watchdog.armed = false;
    const uint64_t lease = c->cfg.watchdog_lease_ms;
    const uint64_t now = loop_now(&c->loop);
    uint64_t next = now + lease / 3;
    bool any = false;
    RenewBatch plain = {0, 0, RenewKind::Lock, 0}, read = {0, 0, RenewKind::Read, 0},
               permits = {0, 0, RenewKind::Permits, 0};
    RenewBatch open[kOpenBatches] = {};
    uint32_t next_out = 0; // the open batch to submit when none is free
    for (uint32_t i = 0; i < c->holds.end() && !c->closing; i++) {
        Hold *h = c->holds.get(i);
        if (!h)
            continue;
        if (!hold_renewable(h)) {
            // A fixed lease: its record goes once the lease has ended.
            if (hold_lapsed(c, h, now))
                hold_free(c, i);
            else if (h->count > 0 && !h->lost)
                any = true; // to look again
            continue;
        }
        if (now - h->confirmed_ms >= lease) {
            hold_mark_lost(c, i);
            continue;
        }
        any = true;
        if (h->confirmed_ms + lease < next)
            next = h->confirmed_ms + lease; // check loss on time
        uint16_t slot = lock_slot(c, h->lock_id);
        if (h->renewing || !slot_ready(c, slot))
            continue;
        RenewKind kind = renew_kind_of(lock_kind(c, h->lock_id));
        if (!c->url.cluster) {
            batch_add(c, kind == RenewKind::Read ? read : kind == RenewKind::Permits ? permits : plain, h);
            continue;
        }
        RenewBatch *b = nullptr;
        for (uint32_t k = 0; k < kOpenBatches && !b; k++)
            if (open[k].id && open[k].slot == slot && open[k].kind == kind)
                b = &open[k];
        for (uint32_t k = 0; k < kOpenBatches && !b; k++)
            if (!open[k].id)
                b = &open[k];
        if (!b) {
            b = &open[next_out];
            next_out = (next_out + 1) % kOpenBatches;
            batch_submit(c, *b);
        }
        if (!b->id) {
            b->slot = slot;
            b->kind = kind;
        }
        batch_add(c, *b, h);
    }
    if (!c->closing) {
        batch_submit(c, plain);
        batch_submit(c, read);
        batch_submit(c, permits);
        for (RenewBatch &b : open)
            batch_submit(c, b);
    }
    if (any && !c->closing) {
        c->watchdog.armed = true;
        timer_arm(&c->watchdog.timer, next > now ? next - now : 0);
    }
}

} // namespace edgelock
