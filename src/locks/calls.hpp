// Lock-layer commands: what a lock command carries in its queue slot (LockCall),
// how it is made (pinning its lock handle), and the queue hooks that turn a
// LockCall into bytes at send time (redisson/format.hpp).
#pragma once

#include <stdint.h>

#include "edgelock/edgelock.h"
#include "redis/queue.hpp"
#include "redisson/format.hpp"

namespace edgelock
{

struct Client;

struct LockCall {
    LockOp op;
    bool read_batch;      // Renew: a batch of read holds (rw_renew.lua)
    bool pins_lock;       // holds a ref on lock_id (its name is needed to format it)
    bool unpin_when_sent; // housekeeping no caller waits on: the handle may go once sent
    bool cleanup;         // Release: an uncertain acquire's undo; no caller
    uint64_t lock_id;
    uint64_t owner;
    uint64_t ref;     // Acquire: waiter id
    int64_t lease_ms; // Acquire: lease; Release: lease to restore on a partial release
    edgelock_result_fn cb;
    void *user;
    edgelock_lock_info *info;
    uint8_t request_id[16]; // unlock latch
};
static_assert(sizeof(LockCall) <= sizeof(CommandArgs), "LockCall does not fit a queue slot");

inline LockCall *call_of(Command *cmd)
{
    return reinterpret_cast<LockCall *>(cmd->args.bytes);
}
inline const LockCall *call_of(const Command *cmd)
{
    return reinterpret_cast<const LockCall *>(cmd->args.bytes);
}

// A fresh command for op on lock_id (0: none) completing through done, its
// LockCall zeroed but for op and lock_id; null when the table is full or the
// client closing.
LockCall *call_new(Client *c, LockOp op, uint64_t lock_id, CommandDoneFn done, uint64_t *id);
void call_submit(Client *c, uint64_t id);
// A done function for housekeeping whose outcome nobody needs.
void call_ignore_reply(void *ctx, const Command *cmd, uint64_t id, struct redisReply *reply,
                       edgelock_status st);

// QueueHooks, with the Client as ctx.
bool calls_format(void *client, const Command *cmd, uint64_t id, RespCommand &rc);
bool calls_reload(void *client, const Command *cmd, RespCommand &rc);
void calls_sent(void *client, Command *cmd);
void calls_retired(void *client, const Command *cmd);

} // namespace edgelock
