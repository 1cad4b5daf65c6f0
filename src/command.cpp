// The command table: every Redis command edgelock sends lives in a slot from
// creation to completion. Commands made while the connection is down wait in a
// FIFO; one timer enforces every deadline (hiredis 0.14 has no command timeout).
// A command is formatted only when it is sent, into the client's one command
// buffer, so a queued command costs a slot and nothing else.
#include <event2/event.h>
#include <hiredis/async.h>
#include <hiredis/hiredis.h>
#include <string.h>

#include "client.hpp"
#include "command_format.hpp"

namespace edgelock
{

// hiredis privdata: slot index and the low 16 bits of its generation, so a late
// reply for a slot that was completed and reused is recognised (32-bit safe).
static void *to_privdata(uint64_t id)
{
    return reinterpret_cast<void *>((uintptr_t)(id_index(id) | (id_gen(id) & 0xffffu) << 16));
}

static Command *from_privdata(Client *c, void *p, uint32_t *index)
{
    uintptr_t v = reinterpret_cast<uintptr_t>(p);
    uint32_t i = (uint32_t)(v & 0xffffu);
    Command *cmd = c->cmds.get(i);
    if (!cmd || (id_gen(c->cmds.id_of(i)) & 0xffffu) != ((v >> 16) & 0xffffu))
        return nullptr;
    *index = i;
    return cmd;
}

Command *cmd_new(Client *c, CmdKind kind, uint64_t lock_id, uint64_t *id_out)
{
    if (c->closing)
        return nullptr;
    uint32_t i;
    Command *cmd = c->cmds.alloc(&i);
    if (!cmd)
        return nullptr;
    cmd->kind = kind;
    cmd->state = CmdState::Queued;
    uint64_t now = edgelock_port_now_ms();
    cmd->deadline_ms = add_ms(now, c->cfg.command_timeout_ms);
    // Redis has been unreachable for a whole command timeout already: do not
    // make this caller wait another one. Due now, so it completes (with
    // CONNECTION) from the timer, never from inside the call that made it.
    const Connection &conn = c->cmd_conn;
    if (!conn_ready(&conn) && conn.down_since_ms && now - conn.down_since_ms >= c->cfg.command_timeout_ms)
        cmd->deadline_ms = now;
    cmd->lock_id = lock_id;
    cmd->next = kNoIndex;
    cmd->pins_lock = lock_id != 0;
    if (lock_id)
        lock_get(c, lock_id)->refs++;
    *id_out = c->cmds.id_of(i);
    return cmd;
}

static void unlink_queued(Client *c, uint32_t index)
{
    uint32_t prev = kNoIndex;
    for (uint32_t i = c->send_head; i != kNoIndex; prev = i, i = c->cmds.get(i)->next) {
        if (i != index)
            continue;
        uint32_t next = c->cmds.get(i)->next;
        if (prev == kNoIndex)
            c->send_head = next;
        else
            c->cmds.get(prev)->next = next;
        if (c->send_tail == index)
            c->send_tail = prev;
        return;
    }
}

// Release the slot first, then dispatch a copy: the handler may call the user,
// who may start further calls that want this very slot.
static void complete(Client *c, uint32_t index, redisReply *reply, edgelock_status st)
{
    Command *slot = c->cmds.get(index);
    uint64_t id = c->cmds.id_of(index);
    Command cmd = *slot;
    if (cmd.state == CmdState::Queued)
        unlink_queued(c, index);
    c->cmds.release(index);
    if (cmd.pins_lock)
        lock_get(c, cmd.lock_id)->refs--;

    switch (cmd.kind) {
    case CmdKind::Acquire: acquire_on_reply(c, &cmd, reply, st); break;
    case CmdKind::Release: release_on_reply(c, &cmd, reply, st); break;
    case CmdKind::Cleanup: release_on_reply(c, &cmd, reply, st); break;
    case CmdKind::ForceRelease:
    case CmdKind::Exists:
    case CmdKind::HoldCount:
    case CmdKind::Ttl: query_on_reply(c, &cmd, reply, st); break;
    case CmdKind::Renew: watchdog_on_renew_reply(c, id, &cmd, reply, st); break;
    case CmdKind::Extend: extend_on_reply(c, &cmd, reply, st); break;
    case CmdKind::Info: info_on_reply(c, &cmd, reply, st); break;
    case CmdKind::LatchDelete:
    case CmdKind::Abandon: break;
    }
    if (!c->closing)
        acquire_on_command_slot_free(c);
}

static void reply_cb(redisAsyncContext *ac, void *r, void *privdata);

static bool send(Client *c, uint32_t index)
{
    Command *cmd = c->cmds.get(index);
    uint64_t id = c->cmds.id_of(index);
    const char *buf;
    size_t len;
    if (!cmd_format(c, cmd, id, &buf, &len)) {
        edgelock_port_log(EDGELOCK_LOG_ERROR, "command could not be formatted");
        complete(c, index, nullptr, EDGELOCK_ERR_INVALID_ARG);
        return false;
    }
    if (redisAsyncFormattedCommand(c->cmd_conn.ac, reply_cb, to_privdata(id), buf, len) != REDIS_OK) {
        complete(c, index, nullptr, EDGELOCK_ERR_CONNECTION);
        return false;
    }
    cmd->state = CmdState::Sent;
    cmd->sent_ms = edgelock_port_now_ms();
    // Housekeeping the user did not ask for must not keep lock_free() BUSY
    // once its bytes are on the wire; no caller waits on its lock handle.
    if (cmd->pins_lock && (cmd->kind == CmdKind::LatchDelete || cmd->kind == CmdKind::Cleanup ||
                           cmd->kind == CmdKind::Abandon)) {
        lock_get(c, cmd->lock_id)->refs--;
        cmd->pins_lock = false;
    }
    return true;
}

// Fire-and-forget SCRIPT LOAD; its reply is discarded by hiredis. Only on the
// rare NOSCRIPT path, so hiredis's own formatting allocation is acceptable.
static void reload_script(Client *c, const Command *cmd)
{
    ScriptId id = cmd_script(c, cmd);
    if (id != kScriptCount && conn_ready(&c->cmd_conn))
        redisAsyncCommand(c->cmd_conn.ac, nullptr, nullptr, "SCRIPT LOAD %b", kScripts[id].text,
                          kScripts[id].len);
}

static void reply_cb(redisAsyncContext *ac, void *r, void *privdata)
{
    auto *conn = static_cast<Connection *>(ac->data);
    Client *c = conn->client;
    uint32_t index;
    Command *cmd = from_privdata(c, privdata, &index);
    if (!cmd || cmd->state != CmdState::Sent)
        return; // completed already (timeout)
    auto *reply = static_cast<redisReply *>(r);
    if (!reply) {
        complete(c, index, nullptr, EDGELOCK_ERR_CONNECTION);
        return;
    }
    if (reply->type == REDIS_REPLY_ERROR && !cmd->eval_fallback && strncmp(reply->str, "NOSCRIPT", 8) == 0) {
        // The server lost our scripts (restart, SCRIPT FLUSH): send the body,
        // and load the script again so later calls are one EVALSHA again.
        cmd->eval_fallback = true;
        reload_script(c, cmd);
        if (conn_ready(&c->cmd_conn))
            send(c, index);
        else
            complete(c, index, nullptr, EDGELOCK_ERR_CONNECTION);
        return;
    }
    complete(c, index, reply, reply->type == REDIS_REPLY_ERROR ? EDGELOCK_ERR_REDIS : EDGELOCK_OK);
}

static void arm_timer(Client *c, uint64_t deadline)
{
    if (deadline >= c->cmd_timer_at)
        return;
    uint64_t now = edgelock_port_now_ms();
    c->cmd_timer_at = deadline;
    timer_arm(c->cmd_timer, deadline > now ? deadline - now : 0);
}

void cmd_submit(Client *c, uint64_t id)
{
    uint32_t index = id_index(id);
    Command *cmd = c->cmds.get(index);
    arm_timer(c, cmd->deadline_ms);
    if (c->send_head == kNoIndex && conn_ready(&c->cmd_conn)) {
        send(c, index);
        return;
    }
    if (c->send_tail == kNoIndex)
        c->send_head = index;
    else
        c->cmds.get(c->send_tail)->next = index;
    c->send_tail = index;
    cmd_flush_queue(c);
}

void cmd_flush_queue(Client *c)
{
    while (c->send_head != kNoIndex && conn_ready(&c->cmd_conn) && !c->closing) {
        uint32_t index = c->send_head;
        Command *cmd = c->cmds.get(index);
        c->send_head = cmd->next;
        if (c->send_head == kNoIndex)
            c->send_tail = kNoIndex;
        cmd->next = kNoIndex;
        send(c, index); // marks it Sent, or completes it on failure
    }
}

void cmd_fail_all(Client *c, edgelock_status st)
{
    for (uint32_t i = 0; i < c->cmds.capacity(); i++)
        if (c->cmds.get(i))
            complete(c, i, nullptr, st);
    c->send_head = c->send_tail = kNoIndex;
}

void cmd_on_timer(Client *c)
{
    c->cmd_timer_at = kForever;
    uint64_t now = edgelock_port_now_ms();
    bool sent_expired = false;
    for (uint32_t i = 0; i < c->cmds.capacity() && !c->closing; i++) {
        Command *cmd = c->cmds.get(i);
        if (!cmd || cmd->deadline_ms > now)
            continue;
        bool sent = cmd->state == CmdState::Sent;
        sent_expired |= sent;
        // Never sent: Redis was unreachable all along. Sent: it did not answer.
        complete(c, i, nullptr, sent ? EDGELOCK_ERR_TIMEOUT : EDGELOCK_ERR_CONNECTION);
    }
    if (c->closing)
        return;
    // A reply that never came leaves the connection's reply order unknowable:
    // drop it; every other command on it completes, and we reconnect.
    if (sent_expired && c->cmd_conn.state != ConnState::Down) {
        edgelock_port_log(EDGELOCK_LOG_WARN, "command timed out; dropping the connection");
        conn_drop(&c->cmd_conn);
    }
    uint64_t next = kForever;
    for (uint32_t i = 0; i < c->cmds.capacity(); i++) {
        Command *cmd = c->cmds.get(i);
        if (cmd && cmd->deadline_ms < next)
            next = cmd->deadline_ms;
    }
    if (next != kForever)
        arm_timer(c, next);
}

} // namespace edgelock
