// SPDX-License-Identifier: BSD-3-Clause
// Lock-layer commands: what a lock command carries in its queue slot
// (LockCall), how it is started (pinning its lock handle), and how it
// completes: the queue calls calls_done(), which lets go of the handle and
// calls the LockCall's own done function, set by whoever started it.
// wire.cpp turns a LockCall into bytes when the queue sends it.
#pragma once

#include <stdint.h>

#include "edgelock/edgelock.h"
#include "redis/queue.hpp"
#include "redisson/format.hpp"

struct redisReply;

namespace edgelock
{

struct Client;
struct LockCall;

// id: the command's id; sent_ms: when it went out (0 if never).
using LockCallDoneFn = void (*)(Client *c, const LockCall *call, uint64_t id, uint64_t sent_ms,
                                struct redisReply *reply, edgelock_status st);

struct LockCall {
    // Words first, then pointers, then bytes: no padding, so that it fits
    // CommandArgs on 32- and 64-bit targets alike.
    uint64_t lock_id = 0;
    uint64_t owner = 0;
    uint64_t ref = 0;     // Acquire: waiter id
    int64_t lease_ms = 0; // Acquire: lease; Release: lease to restore on a partial release;
                          // SetPermits, AddPermits, LatchSetCount: the number
    union {
        uint8_t request_id[16] = {}; // unlock latch; expirable permits: their base id (permit_id())
        uint32_t fair_window_ms;     // fair Acquire, Abandon: the waiter's window in the queue
    };
    LockCallDoneFn done = nullptr; // null: the outcome is not needed
    edgelock_result_fn cb = nullptr;
    void *user = nullptr;
    union {
        edgelock_lock_info *info = nullptr; // Info: the caller's snapshot
        edgelock_scan *scan;                // Scan: the caller's page
        edgelock_semaphore_info *sem_info;  // SemaphoreInfo: the caller's snapshot
        Connection *ran_on;                 // an unlock's Wait: the node its release ran on
    };
    LockOp op = LockOp::Acquire;
    RenewKind renew = RenewKind::Lock; // Renew: which script the batch runs
    bool pins_lock = false;            // holds a ref on lock_id (its name is needed to format it)
    bool unpin_when_sent = false;      // housekeeping no caller waits on: the handle may go once sent
    bool cleanup = false;              // Release: an uncertain acquire's undo; no caller
    bool drain = false;                // Release: one more to drop counts the owner no longer has
    bool undo = false;                 // Release: gives back a grant no hold counted (its count stays)
    bool wait_after = false;           // Release: its WAIT answered first; one goes behind it instead
    bool give_back = false;            // Release: a composite's, of a member it took (release_start)
    uint8_t drains_left = 0;           // Release: how many more such may follow
    bool force_eval = false;           // a script not preloaded: always EVAL
    bool was_held = false;             // semaphore Release: the hold was active by our clock when sent
    bool pins_hold = false;            // Extend, Release: holds a pending ref on (lock_id, owner)'s hold
    uint16_t permits = 0;              // semaphore Acquire/Release: how many

    // op on lock_id (0: none), completing through done; everything else zero.
    LockCall(LockOp o, uint64_t lock, LockCallDoneFn fn) : lock_id(lock), done(fn), op(o) {}
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

// Start it: sent now when connected, else queued. False when the command
// table is full or the client closing (nothing changed). urgent: onto the
// socket at once even where commands wait for the loop's next turn (a
// waiter woken by a message: the lock is free now). id_out: its command's
// id, set before it is submitted.
bool call_start(Client *c, const LockCall &call, bool urgent = false, uint64_t *id_out = nullptr);
// In two steps, for the watchdog's batch, whose holds are tagged with the
// command's id before it goes out.
LockCall *call_new(Client *c, const LockCall &call, uint64_t *id);
void call_submit(Client *c, uint64_t id);
// A command naming no lock (a renewal batch): the cluster slot of its keys.
void call_set_slot(Client *c, uint64_t id, uint16_t slot);
// A command that must go to conn, not wherever the slot map says its slot is.
void call_pin(Client *c, uint64_t id, Connection *conn);

// The queue's done function for every lock command (ctx: the Client).
void calls_done(void *client, const Command *cmd, uint64_t id, struct redisReply *reply, edgelock_status st);

} // namespace edgelock
