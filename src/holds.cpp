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
        if (h->lost) { // a new acquisition supersedes the loss marker
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

void watchdog_tick(Client *c)
{
    c->watchdog_armed = false;
    const uint64_t lease = c->cfg.watchdog_lease_ms;
    const uint64_t now = edgelock_port_now_ms();
    uint64_t next = now + lease / 3;
    bool any = false;
    uint64_t batch = 0;
    uint32_t pos = 0;
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
        if (!batch && !cmd_new(c, CmdKind::Renew, 0, &batch))
            continue; // full: next tick
        h->renewing = true;
        h->renew_cmd = batch;
        h->renew_pos = pos++;
        if (pos == kRenewBatch) {
            c->renew_calls++;
            cmd_submit(c, batch);
            batch = 0;
            pos = 0;
        }
    }
    if (batch && !c->closing) {
        c->renew_calls++;
        cmd_submit(c, batch);
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
            if (e->type == REDIS_REPLY_INTEGER && e->integer == 1)
                h->confirmed_ms = cmd->sent_ms;
            else
                hold_mark_lost(c, i);
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

void on_command_conn_down(Client *, bool) {}

} // namespace edgelock
