// SPDX-License-Identifier: BSD-3-Clause
// edgelock_lock_info: one read-only script (lock_info.lua) and the checking
// of its answer, element by element, into the caller's snapshot.
#include <hiredis/hiredis.h>
#include <stdlib.h>
#include <string.h>

#include "locks/callbacks.hpp"
#include "base/log.hpp"
#include "locks/calls.hpp"
#include "locks/client.hpp"
#include "locks/handles.hpp"
#include "locks/queries.hpp"
#include "base/writer.hpp"
#include "redis/reply.hpp"

namespace edgelock
{

static void info_done(Client *c, const LockCall *call, uint64_t id, uint64_t sent_ms, redisReply *reply,
                      edgelock_status st);

edgelock_status info_start(Client *c, edgelock_lock lock, edgelock_lock_info *info, edgelock_result_fn cb,
                           void *user)
{
    if (!info || (info->holders_cap && !info->holders) || (info->queue_cap && !info->queue))
        return EDGELOCK_ERR_INVALID_ARG;
    edgelock_status st = lock_check_call(c, lock, cb);
    if (st != EDGELOCK_OK)
        return st;
    LockCall call(LockOp::Info, lock.id, info_done);
    call.force_eval = true; // not preloaded: a status query is rare
    call.info = info;
    call.cb = cb;
    call.user = user;
    return call_start(c, call) ? EDGELOCK_OK : EDGELOCK_ERR_TABLE_FULL;
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

// A zset score as ms. Scores print as floats ("1.7e+12" for large ones), and
// a writer may have stored any double ("inf", 1e300): converting one outside
// int64_t would be undefined, so it is EDGELOCK_INFO_INVALID instead.
static int64_t score_ms(const redisReply *r)
{
    char buf[64];
    if (r->len >= sizeof(buf))
        return EDGELOCK_INFO_INVALID;
    copy_text(buf, sizeof(buf), r);
    char *end;
    double d = strtod(buf, &end);
    // 2^63 is exact as a double; every double below it converts.
    if (end == buf || *end || !(d >= -9223372036854775808.0 && d < 9223372036854775808.0))
        return EDGELOCK_INFO_INVALID;
    return (int64_t)d;
}

// Redis's answer to lock_info.lua, shape-checked element by element.
static edgelock_status parse_info(const redisReply *r, edgelock_lock_info *info)
{
    if (r->type != REDIS_REPLY_ARRAY || r->elements != 8)
        return EDGELOCK_ERR_PROTOCOL;
    redisReply *const *e = r->element;
    const redisReply *type = e[0], *fields = e[1], *ttl = e[2], *queue = e[3], *deadlines = e[4],
                     *token = e[5], *time = e[6], *subscribers = e[7];
    if (subscribers->type != REDIS_REPLY_INTEGER || subscribers->integer < 0)
        return EDGELOCK_ERR_PROTOCOL;
    info->subscribers = (int64_t)subscribers->integer;
    if (!reply_is_text(type) || fields->type != REDIS_REPLY_ARRAY || fields->elements % 2 ||
        ttl->type != REDIS_REPLY_INTEGER || queue->type != REDIS_REPLY_ARRAY ||
        deadlines->type != REDIS_REPLY_ARRAY || deadlines->elements % 2 ||
        (token->type != REDIS_REPLY_NIL && !reply_is_text(token)) || time->type != REDIS_REPLY_ARRAY ||
        time->elements != 2 || !reply_is_text(time->element[0]) || !reply_is_text(time->element[1]))
        return EDGELOCK_ERR_PROTOCOL;
    for (size_t i = 0; i < fields->elements; i++)
        if (!reply_is_text(fields->element[i]))
            return EDGELOCK_ERR_PROTOCOL;
    for (size_t i = 0; i < queue->elements; i++)
        if (!reply_is_text(queue->element[i]))
            return EDGELOCK_ERR_PROTOCOL;
    for (size_t i = 0; i < deadlines->elements; i++)
        if (!reply_is_text(deadlines->element[i]))
            return EDGELOCK_ERR_PROTOCOL;

    copy_text(info->redis_type, sizeof(info->redis_type), type);
    bool hash = strcmp(info->redis_type, "hash") == 0;
    info->state = hash                                    ? EDGELOCK_LOCK_HELD
                  : strcmp(info->redis_type, "none") == 0 ? EDGELOCK_LOCK_FREE
                                                          : EDGELOCK_LOCK_WRONG_TYPE;
    info->mode[0] = 0;
    info->ttl_ms = info->state == EDGELOCK_LOCK_FREE ? -2 : (int64_t)ttl->integer;
    int64_t v = 0;
    info->has_token = token->type != REDIS_REPLY_NIL ? 1 : 0;
    info->token = !info->has_token ? 0 : reply_integer(token, &v) ? v : EDGELOCK_INFO_INVALID;
    int64_t secs = 0, usecs = 0;
    if (!reply_integer(time->element[0], &secs) || !reply_integer(time->element[1], &usecs) || secs < 0 ||
        secs > INT64_MAX / 1000 - 1 || usecs < 0 || usecs >= 1000000)
        return EDGELOCK_ERR_PROTOCOL; // not Redis's TIME
    info->redis_time_ms = secs * 1000 + usecs / 1000;

    info->holder_count = 0;
    for (size_t i = 0; i + 1 < fields->elements; i += 2) {
        const redisReply *f = fields->element[i], *val = fields->element[i + 1];
        if (f->len == 4 && memcmp(f->str, "mode", 4) == 0) {
            copy_text(info->mode, sizeof(info->mode), val);
            continue;
        }
        int64_t count = 0;
        if (!reply_integer(val, &count))
            count = EDGELOCK_INFO_INVALID;
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
                deadline = score_ms(deadlines->element[k + 1]);
                break;
            }
        }
        set_entry(&info->queue[i], owner, deadline);
    }
    return EDGELOCK_OK;
}

// The address calls on the lock go to, as the snapshot says it.
static void set_server(Client *c, uint64_t lock_id, edgelock_lock_info *info)
{
    const Connection *conn = slot_conn(c, lock_slot(c, lock_id));
    Writer w(info->server, sizeof(info->server) - 1);
    if (c->url.unix_socket) {
        w.str(c->url.path);
    } else if (conn) {
        bool v6 = strchr(conn->host, ':') != nullptr;
        w.bytes("[", v6 ? 1 : 0);
        w.str(conn->host);
        w.bytes("]", v6 ? 1 : 0);
        w.bytes(":", 1);
        w.u64(conn->port);
    }
    info->server[w.overflow ? 0 : w.len] = 0;
}

static void info_done(Client *c, const LockCall *call, uint64_t, uint64_t, redisReply *reply,
                      edgelock_status st)
{
    if (st == EDGELOCK_OK)
        st = parse_info(reply, call->info);
    if (st == EDGELOCK_OK)
        set_server(c, call->lock_id, call->info);
    else if (st == EDGELOCK_ERR_REDIS)
        log_to(c->loop.log, EDGELOCK_LOG_WARN, "lock info refused: %s", reply ? reply->str : "");
    invoke_result(c, call->cb, call->lock_id, st, 0, call->user);
}

} // namespace edgelock
