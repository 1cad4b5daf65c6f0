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
    alignas(8) unsigned char bytes[7 * 8 + 4 * sizeof(void *)];
};

struct Command {
    uint64_t deadline_ms;
    uint64_t sent_ms;
    CommandDoneFn done;
    uint32_t next; // send FIFO link
    CmdState state;
    bool eval_fallback; // NOSCRIPT seen: the formatter sends the script body with EVAL
    bool patient;       // queue_set_patient(): no deadline until sent
    CommandArgs args;
};

struct QueueHooks {
    void *ctx;
    // The command's bytes, at send time (it goes out right after). False: it
    // cannot be formatted.
    bool (*format)(void *ctx, Command *cmd, uint64_t id, RespCommand &rc);
    // The command that loads cmd's script again after NOSCRIPT; false: none.
    bool (*reload)(void *ctx, const Command *cmd, RespCommand &rc);
};

struct CommandQueue {
    FixedTable<Command> cmds;
    Connection *conn;
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

// storage: capacity zeroed slots; buf: buf_len bytes. False: no timer.
bool queue_init(CommandQueue *q, FixedTable<Command>::Slot *storage, uint32_t capacity, char *buf,
                uint32_t buf_len, Connection *conn, Loop *loop, uint32_t timeout_ms, const QueueHooks &hooks);
void queue_fini(CommandQueue *q);
// A fresh command completing through done, or null when the table is full or
// the queue closed. The caller fills cmd->args, then submits it.
Command *queue_new(CommandQueue *q, CommandDoneFn done, uint64_t *id_out);
Command *queue_get(CommandQueue *q, uint64_t id);
// queue_new() with args, then queue_submit(): false when the table is full or
// the queue closed (nothing changed).
bool queue_push(CommandQueue *q, CommandDoneFn done, const CommandArgs &args, uint64_t *id_out);
// Before queue_submit(): the command waits for the connection as long as it
// takes (work that must reach Redis, like an undo); once sent, it has the
// usual timeout for its reply.
void queue_set_patient(CommandQueue *q, uint64_t id);
void queue_submit(CommandQueue *q, uint64_t id); // send now when connected, else queue
void queue_flush(CommandQueue *q);               // send what waits (the connection is ready)
void queue_fail_all(CommandQueue *q, edgelock_status st);
// The connection's reply hook (ConnHooks::reply), with the queue as ctx.
void queue_on_reply(void *queue, struct redisReply *reply, void *privdata);

} // namespace edgelock
