// SPDX-License-Identifier: BSD-3-Clause
// The command queue (queue.hpp).
#include "redis/queue.hpp"
#include "base/log.hpp"

#include <hiredis/hiredis.h>
#include <stdlib.h>
#include <string.h>

#include "base/time.hpp"
#include "port.h"
#include "redis/connection.hpp"
#include "redis/slot.hpp"
#include "base/resp.hpp"

namespace edgelock
{

// The privdata of fire-and-forget commands (script reloads): slot 0xffff,
// which no queue has (max 0xffff slots).
static void *const kNoCommand = reinterpret_cast<void *>((uintptr_t)0xffffu);

// Connection privdata: slot index and the low 16 bits of its generation, so a
// late reply for a slot that was completed and reused is recognised (32-bit safe).
static void *to_privdata(uint64_t id)
{
    return reinterpret_cast<void *>((uintptr_t)(id_index(id) | (id_gen(id) & 0xffffu) << 16));
}

static Command *from_privdata(CommandQueue *q, void *p, uint32_t *index)
{
    uintptr_t v = reinterpret_cast<uintptr_t>(p);
    uint32_t i = (uint32_t)(v & 0xffffu);
    Command *cmd = q->cmds.get(i);
    if (!cmd || (id_gen(q->cmds.id_of(i)) & 0xffffu) != ((v >> 16) & 0xffffu))
        return nullptr;
    *index = i;
    return cmd;
}

static void timer_fired(void *arg, Timer *);
static void arm_timer(CommandQueue *q, uint64_t deadline);

// Where cmd goes now: the ASK target, its slot's node, or the one connection.
static Connection *target(CommandQueue *q, const Command *cmd)
{
    if (cmd->asking || cmd->pinned)
        return cmd->conn;
    return q->hooks.route ? q->hooks.route(q->hooks.route_ctx, cmd->slot) : q->conn;
}

static bool sendable(CommandQueue *q, const Command *cmd, uint64_t now)
{
    Connection *conn = cmd->retry_at_ms > now ? nullptr : target(q, cmd);
    return conn && conn_ready(conn);
}

bool queue_init(CommandQueue *q, FixedTable<Command>::Slot *storage, uint32_t capacity, char *buf,
                uint32_t buf_len, Connection *conn, Loop *loop, uint32_t timeout_ms, const QueueHooks &hooks)
{
    EDGELOCK_ASSERT(capacity <= 0xffff);
    q->cmds.init(storage, capacity);
    q->conn = conn;
    q->loop = loop;
    q->hooks = hooks;
    q->buf = buf;
    q->buf_len = buf_len;
    q->timeout_ms = timeout_ms;
    q->send_head = q->send_tail = kNoIndex;
    q->timer_at = kForever;
    return timer_init(&q->timer, loop, timer_fired, q);
}

void queue_fini(CommandQueue *q)
{
    timer_fini(&q->timer);
}

Command *queue_new(CommandQueue *q, CommandDoneFn done, uint64_t *id_out)
{
    if (q->closed)
        return nullptr;
    uint32_t i;
    Command *cmd = q->cmds.alloc(&i);
    if (!cmd)
        return nullptr;
    cmd->state = CmdState::Queued;
    cmd->done = done;
    cmd->next = kNoIndex;
    cmd->patient = false;
    cmd->conn = nullptr;
    cmd->slot = 0;
    cmd->retries = 0;
    cmd->asking = false;
    cmd->pinned = false;
    cmd->urgent = false;
    cmd->retry_at_ms = 0;
    uint64_t now = loop_now(q->loop);
    cmd->deadline_ms = add_ms(now, q->timeout_ms);
    // Redis has been unreachable for a whole command timeout already: do not
    // make this caller wait another one. Due now, so it completes (with
    // CONNECTION) from the timer, never from inside the call that made it.
    // (A cluster's node is known only once the slot is set.)
    const Connection *conn = q->conn;
    if (conn && !conn_ready(conn) && conn->down_since_ms && now - conn->down_since_ms >= q->timeout_ms)
        cmd->deadline_ms = now;
    *id_out = q->cmds.id_of(i);
    return cmd;
}

Command *queue_get(CommandQueue *q, uint64_t id)
{
    return q->cmds.get_id(id);
}

// index out of the send FIFO, prev the entry before it (kNoIndex: the head).
static void unlink_after(CommandQueue *q, uint32_t prev, uint32_t index)
{
    uint32_t next = q->cmds.get(index)->next;
    if (prev == kNoIndex)
        q->send_head = next;
    else
        q->cmds.get(prev)->next = next;
    if (q->send_tail == index)
        q->send_tail = prev;
}

static void unlink_queued(CommandQueue *q, uint32_t index)
{
    uint32_t prev = kNoIndex;
    for (uint32_t i = q->send_head; i != kNoIndex; prev = i, i = q->cmds.get(i)->next) {
        if (i != index)
            continue;
        unlink_after(q, prev, index);
        return;
    }
}

// Release the slot first, then complete a copy: the done function may call
// the user, who may start further calls that want this very slot.
static void complete(CommandQueue *q, uint32_t index, redisReply *reply, edgelock_status st)
{
    Command *slot = q->cmds.get(index);
    uint64_t id = q->cmds.id_of(index);
    Command cmd = *slot;
    if (cmd.state == CmdState::Queued)
        unlink_queued(q, index);
    q->cmds.release(index);
    cmd.done(q->hooks.ctx, &cmd, id, reply, st);
}

// Fire-and-forget: a command whose reply is ignored (ASKING).
static void send_aside(Connection *conn, const char *verb)
{
    char buf[64];
    RespCommand rc(buf, sizeof(buf));
    rc.arg(verb);
    const char *out;
    size_t len;
    if (rc.finish(&out, &len))
        conn_send(conn, out, len, kNoCommand);
}

// cmd back at the head of the FIFO, sent again when its connection can take it.
static void requeue(CommandQueue *q, uint32_t index)
{
    Command *cmd = q->cmds.get(index);
    cmd->state = CmdState::Queued;
    cmd->next = q->send_head;
    q->send_head = index;
    if (q->send_tail == kNoIndex)
        q->send_tail = index;
}

static bool send(CommandQueue *q, uint32_t index)
{
    Command *cmd = q->cmds.get(index);
    uint64_t id = q->cmds.id_of(index);
    Connection *conn = target(q, cmd);
    // Leases count from sent_ms and must end no later than Redis's, so it is
    // read before the command exists: a link may write it at once, and Redis
    // may run it before this thread reads the clock again (preempted on a
    // busy machine); and a permit's deadline is formatted into it by the wall
    // clock, which must not be read before this.
    const uint64_t before_write = loop_now(q->loop);
    RespCommand rc(q->buf, q->buf_len);
    const char *buf;
    size_t len;
    // A hook that declines says why itself (a repeat whose subject is gone
    // is expected); bytes that do not fit the buffer are a fault.
    bool formatted = q->hooks.format(q->hooks.ctx, cmd, id, rc);
    if (!formatted || !rc.finish(&buf, &len)) {
        if (formatted)
            log_to(q->loop->log, EDGELOCK_LOG_ERROR, "command could not be formatted");
        complete(q, index, nullptr, EDGELOCK_ERR_INVALID_ARG);
        return false;
    }
    if (cmd->asking) {
        // ASK: the slot is being imported there; ASKING lets this one command in.
        send_aside(conn, "ASKING");
        cmd->asking = false;
    }
    if (!conn_send(conn, buf, len, to_privdata(id), cmd->urgent)) {
        // The link is going away (its replies are being failed right now):
        // first in line for the next connection. A patient one waits for it;
        // any other is due now and completes from the timer (with the
        // connection's down status), never inside the call that submitted it,
        // whose caller may be half-way through its own bookkeeping.
        requeue(q, index);
        if (!cmd->patient) {
            cmd->deadline_ms = loop_now(q->loop);
            arm_timer(q, cmd->deadline_ms);
        }
        return false;
    }
    cmd->conn = conn;
    cmd->state = CmdState::Sent;
    cmd->sent_ms = before_write;
    if (cmd->patient) {
        cmd->deadline_ms = add_ms(cmd->sent_ms, q->timeout_ms);
        arm_timer(q, cmd->deadline_ms);
    }
    return true;
}

// Fire-and-forget SCRIPT LOAD after NOSCRIPT; its reply is ignored.
static void reload_script(CommandQueue *q, const Command *cmd)
{
    RespCommand rc(q->buf, q->buf_len);
    const char *buf;
    size_t len;
    if (q->hooks.reload && conn_ready(cmd->conn) && q->hooks.reload(q->hooks.ctx, cmd, rc) &&
        rc.finish(&buf, &len))
        conn_send(cmd->conn, buf, len, kNoCommand);
}

static bool error_is(const redisReply *reply, const char *prefix)
{
    size_t n = strlen(prefix);
    return reply->len >= n && strncmp(reply->str, prefix, n) == 0;
}

// A cluster's answer that the command was not run there: MOVED and ASK send
// it to another node, TRYAGAIN and CLUSTERDOWN (a slot being moved, a
// failover) again after a pause, within its deadline. True when handled.
static bool redirect(CommandQueue *q, uint32_t index, const redisReply *reply)
{
    bool moved = error_is(reply, "MOVED "), ask = error_is(reply, "ASK ");
    bool again = error_is(reply, "TRYAGAIN") || error_is(reply, "CLUSTERDOWN");
    if (!q->hooks.redirected || !(moved || ask || again))
        return false;
    Command *cmd = q->cmds.get(index);
    if (++cmd->retries > kMaxRetries)
        return false; // the error goes to the caller
    Connection *from = cmd->conn;
    if (cmd->pinned)
        return false; // its node, and no other: the error is its answer
    if (again) {
        // Like Redisson's retry interval, shorter: the caller's wait is short.
        uint64_t pause = 50u << (cmd->retries < 4 ? cmd->retries : 4);
        log_to(q->loop->log, EDGELOCK_LOG_DEBUG, "cluster: %.*s; again in %u ms",
               (int)(reply->len < 60 ? reply->len : 60), reply->str, (unsigned)pause);
        cmd->retry_at_ms = loop_now(q->loop) + pause;
        cmd->conn = nullptr;
        requeue(q, index);
        arm_timer(q, cmd->retry_at_ms);
        return true;
    }
    // "MOVED <slot> <host>:<port>"
    // A slot past 16383 or an address that is none: a broken or hostile
    // server. Not followed, and nothing in the map changes.
    uint16_t slot;
    const char *addr;
    size_t addr_len;
    size_t skip = moved ? 6 : 4;
    if (!parse_redirect(reply->str + skip, reply->len - skip, &slot, &addr, &addr_len)) {
        log_to(q->loop->log, EDGELOCK_LOG_WARN, "cluster: malformed redirect '%.*s'",
               (int)(reply->len < 80 ? reply->len : 80), reply->str);
        complete(q, index, nullptr, EDGELOCK_ERR_PROTOCOL);
        return true;
    }
    Connection *to = q->hooks.redirected(q->hooks.route_ctx, from, slot, addr, addr_len, moved);
    if (!to)
        return false;
    cmd->asking = ask;
    cmd->conn = ask ? to : nullptr;
    requeue(q, index);
    queue_flush(q);
    return true;
}

void queue_on_reply(void *queue, redisReply *reply, void *privdata)
{
    auto *q = static_cast<CommandQueue *>(queue);
    uint32_t index;
    Command *cmd = from_privdata(q, privdata, &index);
    if (!cmd || cmd->state != CmdState::Sent)
        return; // completed already (timeout), or a reload's reply
    if (!reply) {
        complete(q, index, nullptr, EDGELOCK_ERR_CONNECTION);
        return;
    }
    if (reply->type == REDIS_REPLY_ERROR && !cmd->eval_fallback && strncmp(reply->str, "NOSCRIPT", 8) == 0) {
        // The server lost our scripts (restart, SCRIPT FLUSH): send the body,
        // and load the script again so later calls are one EVALSHA again.
        cmd->eval_fallback = true;
        reload_script(q, cmd);
        if (conn_ready(cmd->conn) && target(q, cmd) == cmd->conn)
            send(q, index);
        else
            complete(q, index, nullptr, EDGELOCK_ERR_CONNECTION);
        return;
    }
    if (reply->type == REDIS_REPLY_ERROR && redirect(q, index, reply))
        return;
    if (reply->type == REDIS_REPLY_ERROR && strncmp(reply->str, "READONLY", 8) == 0) {
        // We are talking to a replica: a failover demoted our master (or the
        // URL names a replica). A connection problem, not the lock's: drop it,
        // and the next connection finds the master (asking the sentinels).
        log_to(q->loop->log, EDGELOCK_LOG_WARN, "Redis answered READONLY: not a master; reconnecting");
        Connection *conn = cmd->conn;
        complete(q, index, nullptr, EDGELOCK_ERR_CONNECTION);
        if (conn_ready(conn))
            conn_drop(conn);
        return;
    }
    complete(q, index, reply, reply->type == REDIS_REPLY_ERROR ? EDGELOCK_ERR_REDIS : EDGELOCK_OK);
}

static void arm_timer(CommandQueue *q, uint64_t deadline)
{
    if (deadline >= q->timer_at)
        return;
    uint64_t now = loop_now(q->loop);
    q->timer_at = deadline;
    timer_arm(&q->timer, deadline > now ? deadline - now : 0);
}

void queue_set_patient(CommandQueue *q, uint64_t id)
{
    Command *cmd = q->cmds.get_id(id);
    cmd->patient = true;
    cmd->deadline_ms = kForever;
}

void queue_submit(CommandQueue *q, uint64_t id)
{
    uint32_t index = id_index(id);
    Command *cmd = q->cmds.get(index);
    arm_timer(q, cmd->deadline_ms);
    if (q->send_head == kNoIndex && sendable(q, cmd, 0)) {
        send(q, index);
        return;
    }
    if (q->send_tail == kNoIndex)
        q->send_head = index;
    else
        q->cmds.get(q->send_tail)->next = index;
    q->send_tail = index;
    queue_flush(q);
}

// Every queued command whose connection can take it, in FIFO order (so the
// commands of one node keep their order); the others stay. A command paused
// by TRYAGAIN or CLUSTERDOWN is passed by later ones meanwhile: where order
// matters across such a pause, the sender waits for the answer itself (a
// lock call behind a give-back, locks/acquire.cpp).
void queue_flush(CommandQueue *q)
{
    uint64_t now = loop_now(q->loop);
    uint32_t prev = kNoIndex;
    uint32_t index = q->send_head;
    while (index != kNoIndex && !q->closed) {
        Command *cmd = q->cmds.get(index);
        uint32_t next = cmd->next;
        if (!sendable(q, cmd, now)) {
            if (!q->hooks.route)
                return; // one connection, not ready: none is sendable
            prev = index;
            index = next;
            continue;
        }
        unlink_after(q, prev, index);
        cmd->next = kNoIndex;
        // Marks it Sent; or, the link refusing it, puts it back at the head
        // (the link is going away: nothing more goes now); or completes it,
        // not formattable (whose done function may have changed the FIFO:
        // start over).
        if (send(q, index)) {
            index = next;
            continue;
        }
        if (q->send_head == index)
            return;
        prev = kNoIndex;
        index = q->send_head;
    }
}

bool queue_withdraw(CommandQueue *q, uint64_t id, edgelock_status st)
{
    Command *cmd = q->cmds.get_id(id);
    if (!cmd || cmd->state != CmdState::Queued)
        return false;
    complete(q, id_index(id), nullptr, st);
    return true;
}

void queue_fail_all(CommandQueue *q, edgelock_status st)
{
    for (uint32_t i = 0; i < q->cmds.end(); i++)
        if (q->cmds.get(i))
            complete(q, i, nullptr, st);
    q->send_head = q->send_tail = kNoIndex;
    timer_cancel(&q->timer);
    q->timer_at = kForever;
}

static void timer_fired(void *arg, Timer *)
{
    auto *q = static_cast<CommandQueue *>(arg);
    q->timer_at = kForever;
    uint64_t now = loop_now(q->loop);
    // Connections with a reply that never came (a cluster may have several).
    Connection *silent[8];
    uint32_t nsilent = 0;
    for (uint32_t i = 0; i < q->cmds.end() && !q->closed; i++) {
        Command *cmd = q->cmds.get(i);
        if (!cmd || cmd->deadline_ms > now)
            continue;
        bool sent = cmd->state == CmdState::Sent;
        bool seen = false;
        for (uint32_t k = 0; k < nsilent; k++)
            seen |= silent[k] == cmd->conn;
        if (sent && !seen && nsilent < 8)
            silent[nsilent++] = cmd->conn;
        // Never sent: Redis was unreachable all along. Sent: it did not answer.
        Connection *conn = sent ? nullptr : target(q, cmd);
        complete(q, i, nullptr,
                 sent   ? EDGELOCK_ERR_TIMEOUT
                 : conn ? conn->down_status
                        : EDGELOCK_ERR_CONNECTION);
    }
    if (q->closed)
        return;
    // A reply that never came leaves the connection's reply order unknowable:
    // drop it; every other command on it completes, and we reconnect.
    for (uint32_t k = 0; k < nsilent; k++) {
        if (silent[k]->state == ConnState::Down)
            continue;
        log_to(q->loop->log, EDGELOCK_LOG_WARN, "command timed out; dropping the connection");
        conn_drop(silent[k]);
    }
    // Commands whose pause (TRYAGAIN) is over.
    queue_flush(q);
    uint64_t next = kForever;
    for (uint32_t i = 0; i < q->cmds.end(); i++) {
        Command *cmd = q->cmds.get(i);
        if (cmd && cmd->deadline_ms < next)
            next = cmd->deadline_ms;
        if (cmd && cmd->state == CmdState::Queued && cmd->retry_at_ms > now && cmd->retry_at_ms < next)
            next = cmd->retry_at_ms;
    }
    if (next != kForever)
        arm_timer(q, next);
}

} // namespace edgelock
