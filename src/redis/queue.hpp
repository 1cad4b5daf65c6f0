// SPDX-License-Identifier: BSD-3-Clause
// The command queue: every command edgelock sends lives in a slot of one fixed
// table from creation to completion. Commands made while the connection is
// down wait in a FIFO; one timer enforces every deadline (hiredis 0.14 has no
// command timeout). A command is formatted only when it is sent, into one
// buffer, so a queued command costs a slot and nothing else.
//
// Completion goes to the command's own `done` function, set by whoever made it
// (as hiredis's redisCallback.fn): the queue names no consumer.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "base/table.hpp"
#include "edgelock/edgelock.h"
#include "event/loop.hpp"

struct redisReply;

namespace edgelock
{

class RespCommand;
struct Connection;
struct Command;

enum class CmdState : uint8_t { Queued, Sent };

// Called exactly once per command, after its slot is free again: cmd is a copy.
// reply is null unless st is OK or ERR_REDIS.
using CommandDoneFn = void (*)(void *ctx, const Command *cmd, uint64_t id, struct redisReply *reply,
                               edgelock_status st);

// The creator's arguments, opaque to the queue: room for 7 words of 64 bits
// and 4 pointers (locks/calls.hpp's LockCall, which checks that it fits).
struct CommandArgs {
    alignas(8) unsigned char bytes[8 * 8 + 4 * sizeof(void *)];
};

struct Command {
    uint64_t deadline_ms;
    uint64_t sent_ms;
    uint64_t retry_at_ms; // TRYAGAIN, CLUSTERDOWN: not sent again before (0: at once)
    CommandDoneFn done;
    Connection *conn; // the connection it was sent on; ASK: the one to send it to
    uint32_t next;    // send FIFO link
    uint16_t slot;    // cluster: the slot of its keys (set by its creator)
    uint8_t retries;  // redirections and retries so far
    CmdState state;
    bool eval_fallback; // NOSCRIPT seen: the formatter sends the script body with EVAL
    bool patient;       // queue_set_patient(): no deadline until sent
    bool asking;        // ASK: ASKING goes first, on conn
    bool pinned;        // goes to conn whatever the slot map says (a WAIT for one node's grant)
    bool urgent;        // onto the socket as soon as sent (conn_send): a woken waiter's attempt
    CommandArgs args;
};

struct QueueHooks {
    void *ctx;
    // The command's bytes, at send time (it goes out right after). False: it
    // cannot be formatted.
    bool (*format)(void *ctx, Command *cmd, uint64_t id, RespCommand &rc);
    // The command that loads cmd's script again after NOSCRIPT; false: none.
    bool (*reload)(void *ctx, const Command *cmd, RespCommand &rc);
    // A cluster's routing (null otherwise: every command goes to the queue's
    // connection). route: the connection serving slot, null while not known
    // (the command waits). redirected: where a MOVED or ASK answer from
    // `from` sends the command (null: nowhere to be had).
    Connection *(*route)(void *route_ctx, uint16_t slot);
    Connection *(*redirected)(void *route_ctx, const Connection *from, uint16_t slot, const char *addr,
                              size_t len, bool moved);
    void *route_ctx;
};

struct CommandQueue {
    FixedTable<Command> cmds;
    Connection *conn; // null with a route hook
    Loop *loop;
    QueueHooks hooks;
    char *buf; // one formatted command
    uint32_t buf_len;
    uint32_t timeout_ms;
    uint32_t send_head, send_tail;
    Timer timer; // earliest deadline
    uint64_t timer_at;
    bool closed; // no command is created any more
};

// Redirections and retries a command may take before it fails (ERR_REDIS):
// a MOVED that points back and forth ends here, not at its deadline only.
constexpr uint8_t kMaxRetries = 16;

// storage: capacity zeroed slots; buf: buf_len bytes. False: no timer.
bool queue_init(CommandQueue *q, FixedTable<Command>::Slot *storage, uint32_t capacity, char *buf,
                uint32_t buf_len, Connection *conn, Loop *loop, uint32_t timeout_ms, const QueueHooks &hooks);
void queue_fini(CommandQueue *q);
// A fresh command completing through done, or null when the table is full or
// the queue closed. The caller fills cmd->args (and, on a cluster, cmd->slot),
// then submits it.
Command *queue_new(CommandQueue *q, CommandDoneFn done, uint64_t *id_out);
Command *queue_get(CommandQueue *q, uint64_t id);
// Before queue_submit(): the command waits for the connection as long as it
// takes (work that must reach Redis, like an undo); once sent, it has the
// usual timeout for its reply.
void queue_set_patient(CommandQueue *q, uint64_t id);
// Send now when connected, else queue. The command does not complete inside
// this call (a write the link refuses completes it from the timer, at the
// loop's next turn) unless it cannot be formatted at all.
void queue_submit(CommandQueue *q, uint64_t id);
void queue_flush(CommandQueue *q); // send what waits (the connection is ready)
// A command not sent yet (its connection down, its slot unknown, a retry
// pending) completes now with st, and true: it never reached Redis, so
// nothing of it can have run. A sent one is left to its reply: false.
bool queue_withdraw(CommandQueue *q, uint64_t id, edgelock_status st);
void queue_fail_all(CommandQueue *q, edgelock_status st);
// The connection's reply hook (ConnHooks::reply), with the queue as ctx.
void queue_on_reply(void *queue, struct redisReply *reply, void *privdata);

} // namespace edgelock
