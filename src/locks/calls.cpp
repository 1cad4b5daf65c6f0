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

bool call_start(Client *c, const LockCall &call)
{
    if (c->closing)
        return false;
    CommandArgs args;
    static_assert(std::is_trivially_copyable<LockCall>::value, "LockCall is copied as bytes");
    memcpy(args.bytes, &call, sizeof(call));
    LockCall *slot = reinterpret_cast<LockCall *>(args.bytes);
    slot->pins_lock = call.lock_id != 0;
    if (slot->pins_lock)
        lock_get(c, call.lock_id)->refs++;
    uint64_t id;
    if (queue_push(&c->queue, calls_done, args, &id))
        return true;
    if (slot->pins_lock)
        lock_get(c, call.lock_id)->refs--;
    return false;
}

void calls_done(void *client, const Command *cmd, uint64_t id, redisReply *reply, edgelock_status st)
{
    auto *c = static_cast<Client *>(client);
    const LockCall *call = call_of(cmd);
    // Let go of the handle first: the done function may call the user, who
    // may free it.
    if (call->pins_lock)
        lock_get(c, call->lock_id)->refs--;
    if (call->done)
        call->done(c, call, id, cmd->state == CmdState::Sent ? cmd->sent_ms : 0, reply, st);
    // A slot is free: a waiter that found the table full may go now.
    if (c->starved_waiters > 0 && !c->closing)
        c->on_command_slot_free(c);
}

} // namespace edgelock
