// Holds: the (lock, owner) pairs this client holds, with their re-entry count,
// and the watchdog that renews the ones taken without a lease.
//
// Renewal is batched: one script call renews up to kRenewBatch locks. A hold is
// lost when Redis says its field is gone, or when no renewal has been confirmed
// for a whole lease (the connection is down): the lease Redis enforces started
// no earlier than the send time we keep, so declaring it lost at
// confirmed_ms + lease is never later than the key's real expiry (fail closed).
#include <event2/event.h>
#include <hiredis/hiredis.h>

#include "client.hpp"

namespace edgelock
{

Hold *hold_find(Client *c, uint64_t lock_id, uint64_t owner, uint32_t *index)
{
    for (uint32_t i = 0; i < c->holds.capacity(); i++) {
        Hold *h = c->holds.get(i);
        if (h && h->lock_id == lock_id && h->owner == owner) {
            if (index)
                *index = i;
            return h;
        }
    }
    return nullptr;
}

Hold *hold_reserve(Client *c, uint64_t lock_id, uint64_t owner, uint32_t *index)
{
    Hold *h = hold_find(c, lock_id, owner, index);
    if (h) {
        if (h->lost) { // a fresh acquisition supersedes the loss marker
            h->lost = false;
            h->count = 0;
            h->watchdog = false;
        }
        h->pending++;
        return h;
    }
    h = c->holds.alloc(index);
    if (!h)
        return nullptr;
    h->lock_id = lock_id;
    h->owner = owner;
    h->pending = 1;
    return h;
}

void hold_unpin(Client *c, uint32_t index)
{
    Hold *h = c->holds.get(index);
    EDGELOCK_ASSERT(h && h->pending > 0);
    h->pending--;
    if (h->pending == 0 && h->count == 0 && !h->lost && !h->renewing)
        c->holds.release(index);
}

bool hold_active(const Client *, const Hold *h, uint64_t now)
{
    return h->count > 0 && !h->lost && (h->watchdog || now < h->expires_ms);
}

void hold_acquired(Client *c, uint32_t index, int64_t lease_ms, uint64_t sent_ms)
{
    Hold *h = c->holds.get(index);
    if (lease_ms == EDGELOCK_LEASE_WATCHDOG) {
        h->watchdog = true;
    } else {
        if (h->count == 0)
            h->watchdog = false;
        h->expires_ms = add_ms(sent_ms, (uint64_t)lease_ms);
    }
    h->lease_ms = lease_ms;
    h->count++;
    h->confirmed_ms = sent_ms;
    if (h->watchdog)
        watchdog_arm(c);
}

void hold_mark_lost(Client *c, uint32_t index)
{
    Hold *h = c->holds.get(index);
    h->lost = true;
    edgelock_port_log(EDGELOCK_LOG_WARN, "lock lost (owner %llu)", (unsigned long long)h->owner);
    invoke_lock_lost(c, h->lock_id, h->owner);
}

void watchdog_arm(Client *c)
{
    if (c->watchdog_armed)
        return;
    c->watchdog_armed = true;
    timer_arm(c->watchdog_timer, c->cfg.watchdog_lease_ms / 3);
}

static bool renewable(const Hold *h)
{
    return h->count > 0 && h->watchdog && !h->lost;
}

// One renewal script call being filled: read holds and the others use
// different scripts, so each has its own.
struct RenewBatch {
    uint64_t id;
    uint32_t size;
    bool read;
};

static void batch_submit(Client *c, RenewBatch &b)
{
    if (!b.id)
        return;
    c->renew_calls++;
    cmd_submit(c, b.id);
    b.id = 0;
    b.size = 0;
}

// False when the command table is full (the hold waits for the next tick).
static bool batch_add(Client *c, RenewBatch &b, Hold *h)
{
    if (!b.id) {
        Command *cmd = cmd_new(c, CmdKind::Renew, 0, &b.id);
        if (!cmd)
            return false;
        cmd->read_batch = b.read;
    }
    h->renewing = true;
    h->renew_cmd = b.id;
    h->renew_pos = b.size++;
    if (b.size == kRenewBatch)
        batch_submit(c, b);
    return true;
}

void watchdog_tick(Client *c)
{
    c->watchdog_armed = false;
    const uint64_t lease = c->cfg.watchdog_lease_ms;
    const uint64_t now = edgelock_port_now_ms();
    uint64_t next = now + lease / 3;
    bool any = false;
    RenewBatch plain = {0, 0, false}, read = {0, 0, true};
    for (uint32_t i = 0; i < c->holds.capacity() && !c->closing; i++) {
        Hold *h = c->holds.get(i);
        if (!h || !renewable(h))
            continue;
        if (now - h->confirmed_ms >= lease) {
            hold_mark_lost(c, i);
            continue;
        }
        any = true;
        if (h->confirmed_ms + lease < next)
            next = h->confirmed_ms + lease; // check loss on time
        if (h->renewing || !conn_ready(&c->cmd_conn))
            continue;
        batch_add(c, lock_kind(c, h->lock_id) == EDGELOCK_READ ? read : plain, h);
    }
    if (!c->closing) {
        batch_submit(c, plain);
        batch_submit(c, read);
    }
    if (any && !c->closing) {
        c->watchdog_armed = true;
        timer_arm(c->watchdog_timer, next > now ? next - now : 0);
    }
}

void watchdog_on_renew_reply(Client *c, uint64_t cmd_id, const Command *cmd, redisReply *reply,
                             edgelock_status st)
{
    bool ok = st == EDGELOCK_OK && reply && reply->type == REDIS_REPLY_ARRAY;
    for (uint32_t i = 0; i < c->holds.capacity() && !c->closing; i++) {
        Hold *h = c->holds.get(i);
        if (!h || !h->renewing || h->renew_cmd != cmd_id)
            continue;
        h->renewing = false;
        if (ok && h->renew_pos < reply->elements && renewable(h)) {
            redisReply *e = reply->element[h->renew_pos];
            if (e->type == REDIS_REPLY_INTEGER && e->integer == 1) {
                h->confirmed_ms = cmd->sent_ms;
            } else {
                // The user's callback may unlock (freeing this slot) or lock
                // (reusing it): h is not ours to touch afterwards.
                hold_mark_lost(c, i);
                continue;
            }
        }
        // A failed call is retried next tick; loss by time is the tick's job.
        if (h->pending == 0 && h->count == 0 && !h->lost)
            c->holds.release(i);
    }
}

void on_command_conn_ready(Client *c)
{
    if (c->was_ready_once)
        c->reconnects++;
    c->was_ready_once = true;
    cmd_flush_queue(c);
    acquire_retry_all(c);
    // After an outage, find out at once whether the holds survived it.
    if (!c->closing && c->watchdog_armed) {
        event_del(c->watchdog_timer);
        watchdog_tick(c);
    }
}

} // namespace edgelock
