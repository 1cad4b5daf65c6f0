// Lock-layer commands (calls.hpp).
#include "locks/calls.hpp"

#include <string.h>

#include "locks/client.hpp"
#include "locks/handles.hpp"
#include "locks/holds.hpp"
#include "locks/watchdog.hpp"
#include "redis/resp.hpp"

namespace edgelock
{

LockCall *call_new(Client *c, LockOp op, uint64_t lock_id, CommandDoneFn done, uint64_t *id)
{
    if (c->closing)
        return nullptr;
    Command *cmd = queue_new(&c->queue, done, id);
    if (!cmd)
        return nullptr;
    LockCall *call = call_of(cmd);
    memset(call, 0, sizeof(*call));
    call->op = op;
    call->lock_id = lock_id;
    call->pins_lock = lock_id != 0;
    if (lock_id)
        lock_get(c, lock_id)->refs++;
    return call;
}

void call_submit(Client *c, uint64_t id)
{
    queue_submit(&c->queue, id);
}

void call_ignore_reply(void *, const Command *, uint64_t, redisReply *, edgelock_status) {}

// The renewal batch: holds tagged with this command, in the order they were
// tagged (renew_pos).
static void format_batch(Client *c, const Command *cmd, uint64_t id, RespCommand &rc)
{
    RenewItem items[kRenewBatch];
    uint32_t n = 0;
    for (uint32_t i = 0; i < c->holds.capacity(); i++) {
        Hold *h = c->holds.get(i);
        if (h && h->renewing && h->renew_cmd == id && h->renew_pos < kRenewBatch) {
            items[h->renew_pos] = RenewItem{lock_ref(c, h->lock_id), h->owner};
            n++;
        }
    }
    format_renew(rc, c->protocol, cmd->eval_fallback, call_of(cmd)->read_batch, items, n);
}

bool calls_format(void *client, const Command *cmd, uint64_t id, RespCommand &rc)
{
    auto *c = static_cast<Client *>(client);
    const LockCall *call = call_of(cmd);
    if (call->op == LockOp::Renew) {
        format_batch(c, cmd, id, rc);
        return true;
    }
    // An unpinned cleanup re-sent after NOSCRIPT may outlive its lock handle.
    if (!lock_get(c, call->lock_id))
        return false;
    LockOpArgs a;
    a.op = call->op;
    a.eval = cmd->eval_fallback;
    a.owner = call->owner;
    a.lease_ms = call->lease_ms;
    a.request_id = call->request_id;
    format_lock_op(rc, c->protocol, a, lock_ref(c, call->lock_id));
    return true;
}

bool calls_reload(void *client, const Command *cmd, RespCommand &rc)
{
    auto *c = static_cast<Client *>(client);
    const LockCall *call = call_of(cmd);
    edgelock_lock_kind kind =
        call->lock_id && lock_get(c, call->lock_id) ? lock_kind(c, call->lock_id) : EDGELOCK_REENTRANT;
    ScriptId id = script_of(call->op, kind, call->read_batch);
    if (id == kScriptCount)
        return false;
    format_script_load(rc, id);
    return true;
}

// Housekeeping the user did not ask for must not keep lock_free() BUSY once
// its bytes are on the wire; no caller waits on its lock handle.
void calls_sent(void *client, Command *cmd)
{
    LockCall *call = call_of(cmd);
    if (call->pins_lock && call->unpin_when_sent) {
        lock_get(static_cast<Client *>(client), call->lock_id)->refs--;
        call->pins_lock = false;
    }
}

void calls_retired(void *client, const Command *cmd)
{
    const LockCall *call = call_of(cmd);
    if (call->pins_lock)
        lock_get(static_cast<Client *>(client), call->lock_id)->refs--;
}

} // namespace edgelock
