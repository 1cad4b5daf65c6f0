// Unlock, force unlock and the read-only queries (is locked, hold count, TTL).
#include <hiredis/hiredis.h>
#include <stdlib.h>
#include <string.h>

#include "client.hpp"

namespace edgelock
{

static int64_t lease_for(const Client *c, const Hold *h)
{
    if (!h || h->lease_ms == EDGELOCK_LEASE_WATCHDOG || h->lease_ms <= 0)
        return c->cfg.watchdog_lease_ms;
    return h->lease_ms;
}

// The owner learns of a loss through the call it made: forget the marker.
static void clear_lost(Client *c, uint32_t index)
{
    Hold *h = c->holds.get(index);
    h->lost = false;
    h->count = 0;
    h->watchdog = false;
    if (h->pending == 0 && !h->renewing)
        c->holds.release(index);
}

// The hold count after a release answered `value`. 1: the lock is free. 0: for
// a read lock, holds remain (maybe only other readers'), so ours went down by
// one; for the others our own re-entrant hold remains, so at least one is left.
static uint32_t count_after_release(Client *c, const Hold *h, int64_t value)
{
    if (value == 1)
        return 0;
    if (lock_kind(c, h->lock_id) == EDGELOCK_READ)
        return h->count > 0 ? h->count - 1 : 0;
    return h->count > 1 ? h->count - 1 : 1;
}

static edgelock_status check_call(Client *c, edgelock_lock lock, edgelock_result_fn cb)
{
    if (!cb)
        return EDGELOCK_ERR_INVALID_ARG;
    if (c->closing)
        return EDGELOCK_ERR_SHUTDOWN;
    if (!lock_get(c, lock.id))
        return EDGELOCK_ERR_STALE_HANDLE;
    return EDGELOCK_OK;
}

static void send_latch_delete(Client *c, const Command *release)
{
    uint64_t id;
    Command *cmd = cmd_new(c, CmdKind::LatchDelete, release->lock_id, &id);
    if (!cmd)
        return; // the latch expires on its own
    memcpy(cmd->request_id, release->request_id, sizeof(cmd->request_id));
    cmd_submit(c, id);
}

static Command *new_release(Client *c, CmdKind kind, uint64_t lock_id, uint64_t owner, int64_t lease,
                            uint64_t *id)
{
    Command *cmd = cmd_new(c, kind, lock_id, id);
    if (!cmd)
        return nullptr;
    cmd->owner = owner;
    cmd->lease_ms = lease;
    // Unique per unlock across clients, as Redisson's random id is, without a
    // getrandom() per unlock: 8 random bytes per client, 8 bytes of counter.
    memcpy(cmd->request_id, c->latch_prefix, sizeof(c->latch_prefix));
    uint64_t n = ++c->latch_counter;
    for (int i = 0; i < 8; i++)
        cmd->request_id[8 + i] = (uint8_t)(n >> (56 - 8 * i));
    return cmd;
}

edgelock_status release_start(Client *c, edgelock_lock lock, uint64_t owner, edgelock_result_fn cb,
                              void *user)
{
    edgelock_status st = check_call(c, lock, cb);
    if (st != EDGELOCK_OK)
        return st;
    uint32_t hi;
    Hold *h = hold_find(c, lock.id, owner, &hi);
    if (h && h->lost) {
        clear_lost(c, hi);
        return EDGELOCK_ERR_LOST;
    }
    uint64_t id;
    Command *cmd = new_release(c, CmdKind::Release, lock.id, owner, lease_for(c, h), &id);
    if (!cmd)
        return EDGELOCK_ERR_TABLE_FULL;
    cmd->cb = cb;
    cmd->user = user;
    if (h)
        h->pending++;
    cmd_submit(c, id);
    return EDGELOCK_OK;
}

void cleanup_release(Client *c, uint64_t lock_id, uint64_t owner, int64_t lease_ms)
{
    uint64_t id;
    if (!new_release(c, CmdKind::Cleanup, lock_id, owner, lease_ms, &id)) {
        edgelock_port_log(EDGELOCK_LOG_WARN, "no command slot to release an uncertain acquire; "
                                             "it lapses with its lease");
        return;
    }
    cmd_submit(c, id);
}

void release_on_reply(Client *c, const Command *cmd, redisReply *reply, edgelock_status st)
{
    int64_t value = 0;
    uint32_t hi = kNoIndex;
    Hold *h = hold_find(c, cmd->lock_id, cmd->owner, &hi);
    if (st == EDGELOCK_OK) {
        if (reply->type == REDIS_REPLY_NIL) {
            // Not the owner in Redis. If we thought it was still held (watchdog,
            // or a fixed lease not yet over by our clock), it was lost behind
            // our back; a lapsed fixed lease is plain NOT_OWNER, as in Redisson.
            st = h && (h->lost || hold_active(c, h, edgelock_port_now_ms())) ? EDGELOCK_ERR_LOST
                                                                             : EDGELOCK_ERR_NOT_OWNER;
            if (h) {
                h->count = 0;
                h->lost = false;
            }
        } else if (reply->type == REDIS_REPLY_INTEGER && (reply->integer == 0 || reply->integer == 1)) {
            value = reply->integer;
            if (h)
                h->count = count_after_release(c, h, value);
            send_latch_delete(c, cmd);
        } else {
            st = EDGELOCK_ERR_PROTOCOL;
        }
    } else if (st == EDGELOCK_ERR_REDIS) {
        edgelock_port_log(EDGELOCK_LOG_WARN, "release refused: %s", reply ? reply->str : "");
    }
    // Connection trouble: the outcome is unknown, the hold stays as it was and
    // the caller may retry.
    if (h && cmd->kind == CmdKind::Release)
        hold_unpin(c, hi);
    else if (h && h->count == 0 && h->pending == 0 && !h->lost && !h->renewing)
        c->holds.release(hi);
    if (cmd->kind == CmdKind::Release)
        invoke_result(c, cmd->cb, cmd->lock_id, st, value, cmd->user);
}

edgelock_status query_start(Client *c, CmdKind kind, edgelock_lock lock, uint64_t owner,
                            edgelock_result_fn cb, void *user)
{
    edgelock_status st = check_call(c, lock, cb);
    if (st != EDGELOCK_OK)
        return st;
    if (kind == CmdKind::HoldCount) {
        Hold *h = hold_find(c, lock.id, owner, nullptr);
        if (h && h->lost)
            return EDGELOCK_ERR_LOST; // kept until that owner unlocks
    }
    uint64_t id;
    Command *cmd = cmd_new(c, kind, lock.id, &id);
    if (!cmd)
        return EDGELOCK_ERR_TABLE_FULL;
    cmd->owner = owner;
    cmd->cb = cb;
    cmd->user = user;
    cmd_submit(c, id);
    return EDGELOCK_OK;
}

static bool reply_integer(const redisReply *r, int64_t *out)
{
    if (r->type == REDIS_REPLY_INTEGER) {
        *out = (int64_t)r->integer;
        return true;
    }
    if (r->type == REDIS_REPLY_NIL) {
        *out = 0;
        return true;
    }
    if (r->type == REDIS_REPLY_STRING && r->len > 0 && r->len < 21) {
        char buf[24];
        memcpy(buf, r->str, r->len);
        buf[r->len] = 0;
        char *end;
        long long v = strtoll(buf, &end, 10);
        if (*end == 0) {
            *out = v;
            return true;
        }
    }
    return false;
}

void query_on_reply(Client *c, const Command *cmd, redisReply *reply, edgelock_status st)
{
    int64_t value = 0;
    if (st == EDGELOCK_OK && !reply_integer(reply, &value))
        st = EDGELOCK_ERR_PROTOCOL;
    if (st == EDGELOCK_OK && cmd->kind == CmdKind::HoldCount && value == 0) {
        // We believed this owner still held it: it is gone.
        uint32_t hi;
        Hold *h = hold_find(c, cmd->lock_id, cmd->owner, &hi);
        if (h && hold_active(c, h, edgelock_port_now_ms())) {
            h->lost = true;
            st = EDGELOCK_ERR_LOST;
        }
    }
    invoke_result(c, cmd->cb, cmd->lock_id, st, value, cmd->user);
}

} // namespace edgelock

namespace edgelock
{

edgelock_status extend_start(Client *c, edgelock_lock lock, uint64_t owner, int64_t lease_ms,
                             edgelock_result_fn cb, void *user)
{
    edgelock_status st = check_call(c, lock, cb);
    if (st != EDGELOCK_OK)
        return st;
    if (lease_ms <= 0 || lease_ms > EDGELOCK_MAX_TIME_MS)
        return EDGELOCK_ERR_INVALID_ARG;
    uint64_t id;
    Command *cmd = cmd_new(c, CmdKind::Extend, lock.id, &id);
    if (!cmd)
        return EDGELOCK_ERR_TABLE_FULL;
    cmd->owner = owner;
    cmd->lease_ms = lease_ms;
    cmd->cb = cb;
    cmd->user = user;
    cmd_submit(c, id);
    return EDGELOCK_OK;
}

void extend_on_reply(Client *c, const Command *cmd, redisReply *reply, edgelock_status st)
{
    int64_t value = 0;
    if (st == EDGELOCK_OK) {
        if (reply->type != REDIS_REPLY_ARRAY || reply->elements != 1 ||
            reply->element[0]->type != REDIS_REPLY_INTEGER) {
            st = EDGELOCK_ERR_PROTOCOL;
        } else {
            uint32_t hi;
            Hold *h = hold_find(c, cmd->lock_id, cmd->owner, &hi);
            value = (int64_t)reply->element[0]->integer;
            if (value == 1 && h && h->count > 0 && !h->watchdog) {
                h->lease_ms = cmd->lease_ms;
                h->expires_ms = add_ms(cmd->sent_ms, (uint64_t)cmd->lease_ms);
            } else if (value != 1) {
                st = h && hold_active(c, h, edgelock_port_now_ms()) ? EDGELOCK_ERR_LOST
                                                                    : EDGELOCK_ERR_NOT_OWNER;
            }
        }
    }
    invoke_result(c, cmd->cb, cmd->lock_id, st, value, cmd->user);
}

} // namespace edgelock

// ---- lock info ----------------------------------------------------------------

namespace edgelock
{

edgelock_status info_start(Client *c, edgelock_lock lock, edgelock_lock_info *info, edgelock_result_fn cb,
                           void *user)
{
    if (!info || (info->holders_cap && !info->holders) || (info->queue_cap && !info->queue))
        return EDGELOCK_ERR_INVALID_ARG;
    edgelock_status st = check_call(c, lock, cb);
    if (st != EDGELOCK_OK)
        return st;
    uint64_t id;
    Command *cmd = cmd_new(c, CmdKind::Info, lock.id, &id);
    if (!cmd)
        return EDGELOCK_ERR_TABLE_FULL;
    cmd->eval_fallback = true; // not preloaded: a status query is rare
    cmd->info = info;
    cmd->cb = cb;
    cmd->user = user;
    cmd_submit(c, id);
    return EDGELOCK_OK;
}

static bool is_string(const redisReply *r)
{
    return r->type == REDIS_REPLY_STRING || r->type == REDIS_REPLY_STATUS;
}

static void copy_text(char *dst, size_t cap, const redisReply *r)
{
    size_t n = r->len < cap - 1 ? r->len : cap - 1;
    memcpy(dst, r->str, n);
    dst[n] = 0;
}

static void set_entry(edgelock_lock_entry *e, const redisReply *owner, int64_t value)
{
    copy_text(e->owner, sizeof(e->owner), owner);
    e->owner_len = owner->len;
    e->value = value;
}

// Redis's answer to lock_info.lua, shape-checked element by element.
static edgelock_status parse_info(const redisReply *r, edgelock_lock_info *info)
{
    if (r->type != REDIS_REPLY_ARRAY || r->elements != 7)
        return EDGELOCK_ERR_PROTOCOL;
    redisReply *const *e = r->element;
    const redisReply *type = e[0], *fields = e[1], *ttl = e[2], *queue = e[3], *deadlines = e[4],
                     *token = e[5], *time = e[6];
    if (!is_string(type) || fields->type != REDIS_REPLY_ARRAY || fields->elements % 2 ||
        ttl->type != REDIS_REPLY_INTEGER || queue->type != REDIS_REPLY_ARRAY ||
        deadlines->type != REDIS_REPLY_ARRAY || deadlines->elements % 2 ||
        (token->type != REDIS_REPLY_NIL && !is_string(token)) || time->type != REDIS_REPLY_ARRAY ||
        time->elements != 2 || !is_string(time->element[0]) || !is_string(time->element[1]))
        return EDGELOCK_ERR_PROTOCOL;
    for (size_t i = 0; i < fields->elements; i++)
        if (!is_string(fields->element[i]))
            return EDGELOCK_ERR_PROTOCOL;
    for (size_t i = 0; i < queue->elements; i++)
        if (!is_string(queue->element[i]))
            return EDGELOCK_ERR_PROTOCOL;
    for (size_t i = 0; i < deadlines->elements; i++)
        if (!is_string(deadlines->element[i]))
            return EDGELOCK_ERR_PROTOCOL;

    copy_text(info->redis_type, sizeof(info->redis_type), type);
    bool hash = strcmp(info->redis_type, "hash") == 0;
    info->state = hash                                    ? EDGELOCK_LOCK_HELD
                  : strcmp(info->redis_type, "none") == 0 ? EDGELOCK_LOCK_FREE
                                                          : EDGELOCK_LOCK_WRONG_TYPE;
    info->mode[0] = 0;
    info->ttl_ms = info->state == EDGELOCK_LOCK_FREE ? -2 : (int64_t)ttl->integer;
    int64_t v = 0;
    info->has_token = token->type != REDIS_REPLY_NIL && reply_integer(token, &v) ? 1 : 0;
    info->token = info->has_token ? v : 0;
    int64_t secs = 0, usecs = 0;
    reply_integer(time->element[0], &secs);
    reply_integer(time->element[1], &usecs);
    info->redis_time_ms = secs * 1000 + usecs / 1000;

    info->holder_count = 0;
    for (size_t i = 0; i + 1 < fields->elements; i += 2) {
        const redisReply *f = fields->element[i], *val = fields->element[i + 1];
        if (f->len == 4 && memcmp(f->str, "mode", 4) == 0) {
            copy_text(info->mode, sizeof(info->mode), val);
            continue;
        }
        int64_t count = 0;
        reply_integer(val, &count);
        if (info->holder_count < info->holders_cap)
            set_entry(&info->holders[info->holder_count], f, count);
        info->holder_count++;
    }
    info->queue_count = queue->elements;
    for (size_t i = 0; i < queue->elements && i < info->queue_cap; i++) {
        const redisReply *owner = queue->element[i];
        int64_t deadline = -1;
        for (size_t k = 0; k + 1 < deadlines->elements; k += 2) {
            const redisReply *m = deadlines->element[k];
            if (m->len == owner->len && memcmp(m->str, owner->str, m->len) == 0) {
                // Scores print as floats ("1.7e+12" for large ones): parse as such.
                char buf[64];
                copy_text(buf, sizeof(buf), deadlines->element[k + 1]);
                deadline = (int64_t)strtod(buf, nullptr);
                break;
            }
        }
        set_entry(&info->queue[i], owner, deadline);
    }
    return EDGELOCK_OK;
}

void info_on_reply(Client *c, const Command *cmd, redisReply *reply, edgelock_status st)
{
    if (st == EDGELOCK_OK)
        st = parse_info(reply, cmd->info);
    else if (st == EDGELOCK_ERR_REDIS)
        edgelock_port_log(EDGELOCK_LOG_WARN, "lock info refused: %s", reply ? reply->str : "");
    invoke_result(c, cmd->cb, cmd->lock_id, st, 0, cmd->user);
}

} // namespace edgelock
