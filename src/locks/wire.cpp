// SPDX-License-Identifier: BSD-3-Clause
// What the command queue asks of a lock command when it sends it (QueueHooks,
// with the Client as ctx): its bytes, formatted at send time from the lock's
// name and kind (redisson/format.hpp), and the script to load again after
// NOSCRIPT. Formatting is also where housekeeping lets go of its handle.
#include "locks/wire.hpp"

#include "locks/acquire.hpp"
#include "locks/calls.hpp"
#include "locks/client.hpp"
#include "locks/handles.hpp"
#include "locks/holds.hpp"
#include "locks/lease.hpp"
#include "locks/scan.hpp"
#include "locks/watchdog.hpp"
#include "base/resp.hpp"

namespace edgelock
{

// The renewal batch: holds tagged with this command, in the order they were
// tagged (renew_pos).
static void format_batch(Client *c, const Command *cmd, uint64_t id, RespCommand &rc)
{
    RenewItem items[kRenewBatch];
    uint32_t n = 0;
    for (uint32_t i = 0; i < c->holds.end(); i++) {
        Hold *h = c->holds.get(i);
        if (h && h->renewing && h->renew_cmd == id && h->renew_pos < kRenewBatch) {
            items[h->renew_pos] = RenewItem{lock_ref(c, h->lock_id), h->owner, h->permit_base, h->count};
            n++;
        }
    }
    format_renew(rc, c->protocol, cmd->eval_fallback, call_of(cmd)->renew, items, n);
}

bool wire_format(void *client, Command *cmd, uint64_t id, RespCommand &rc)
{
    auto *c = static_cast<Client *>(client);
    LockCall *call = call_of(cmd);
    if (call->op == LockOp::Renew) {
        format_batch(c, cmd, id, rc);
        return true;
    }
    if (call->op == LockOp::Wait) {
        format_wait(rc, c->cfg.wait_replicas, c->cfg.wait_replicas_timeout_ms);
        return true;
    }
    if (call->op == LockOp::Scan) {
        format_scan_page(rc, call->scan);
        return true;
    }
    // An unpinned cleanup re-sent after NOSCRIPT may outlive its lock handle.
    if (!lock_get(c, call->lock_id)) {
        log_to(c->loop.log, EDGELOCK_LOG_WARN,
               "a repeated give-back is dropped: its lock handle was freed; the lock lapses with its lease");
        return false;
    }
    // The lease covers what the owner's holds and other calls on the name
    // rely on by the time these bytes go out: a re-send may run after calls
    // sent since (lease.cpp).
    if (call->op == LockOp::Acquire) {
        Waiter *w = c->waiters.get_id(call->ref);
        if (w)
            call->lease_ms = lease_to_ask(c, w);
    } else if (call->op == LockOp::Release) {
        call->lease_ms = lease_to_release(c, call->lock_id, call->owner, call->lease_ms);
    }
    LockOpArgs a = {};
    a.op = call->op;
    a.eval = cmd->eval_fallback || call->force_eval;
    a.owner = call->owner;
    a.lease_ms = call->lease_ms;
    a.request_id = call->request_id;
    a.permits = call->permits;
    a.count = call->lease_ms;
    // Only these two carry it (it shares its room with request_id).
    if (call->op == LockOp::Abandon ||
        (call->op == LockOp::Acquire && lock_kind(c, call->lock_id) == EDGELOCK_FAIR))
        a.fair_window_ms = call->fair_window_ms;
    format_lock_op(rc, c->protocol, a, lock_ref(c, call->lock_id));
    // Housekeeping the user did not ask for must not keep lock_free() BUSY
    // once its bytes are out; no caller waits on its lock handle.
    if (call->pins_lock && call->unpin_when_sent) {
        lock_get(c, call->lock_id)->refs--;
        call->pins_lock = false;
    }
    return true;
}

bool wire_reload(void *client, const Command *cmd, RespCommand &rc)
{
    auto *c = static_cast<Client *>(client);
    const LockCall *call = call_of(cmd);
    edgelock_lock_kind kind =
        call->lock_id && lock_get(c, call->lock_id) ? lock_kind(c, call->lock_id) : EDGELOCK_REENTRANT;
    ScriptId id = script_of(call->op, kind, call->renew);
    if (id == kScriptCount)
        return false;
    format_script_load(rc, id);
    return true;
}

} // namespace edgelock
