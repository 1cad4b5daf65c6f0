// SPDX-License-Identifier: BSD-3-Clause
// Lock-layer commands (calls.hpp).
#include "locks/calls.hpp"

#include <string.h>

#include <type_traits>

#include "locks/client.hpp"
#include "locks/handles.hpp"

namespace edgelock
{

LockCall *call_new(Client *c, const LockCall &call, uint64_t *id)
{
    if (c->closing)
        return nullptr;
    Command *cmd = queue_new(&c->queue, calls_done, id);
    if (!cmd)
        return nullptr;
    memcpy(cmd->args.bytes, &call, sizeof(call));
    if (call.lock_id)
        cmd->slot = lock_slot(c, call.lock_id);
    LockCall *slot = call_of(cmd);
    // A command names its lock until it completes (or, for housekeeping, is
    // sent): lock_free() is BUSY meanwhile, so the name stays readable.
    slot->pins_lock = call.lock_id != 0;
    if (slot->pins_lock)
        lock_get(c, call.lock_id)->refs++;
    return slot;
}

void call_submit(Client *c, uint64_t id)
{
    queue_submit(&c->queue, id);
}

void call_set_slot(Client *c, uint64_t id, uint16_t slot)
{
    queue_get(&c->queue, id)->slot = slot;
}

void call_pin(Client *c, uint64_t id, Connection *conn)
{
    Command *cmd = queue_get(&c->queue, id);
    cmd->conn = conn;
    cmd->pinned = true;
}

bool call_start(Client *c, const LockCall &call, bool urgent, uint64_t *id_out)
{
    static_assert(std::is_trivially_copyable<LockCall>::value, "LockCall is copied as bytes");
    uint64_t id;
    if (!call_new(c, call, &id))
        return false;
    if (id_out)
        *id_out = id;
    queue_get(&c->queue, id)->urgent = urgent;
    queue_submit(&c->queue, id);
    return true;
}

void calls_done(void *client, const Command *cmd, uint64_t id, redisReply *reply, edgelock_status st)
{
    auto *c = static_cast<Client *>(client);
    const LockCall *call = call_of(cmd);
    // Let go of the handle first: the done function may call the user, who
    // may free it.
    if (call->pins_lock)
        lock_get(c, call->lock_id)->refs--;
    c->reply_conn = cmd->state == CmdState::Sent ? cmd->conn : nullptr;
    if (call->done)
        call->done(c, call, id, cmd->state == CmdState::Sent ? cmd->sent_ms : 0, reply, st);
    c->reply_conn = nullptr;
    // A slot is free: a waiter that found the table full may go now.
    if (c->starved_waiters > 0 && !c->closing)
        c->on_command_slot_free(c);
}

} // namespace edgelock
