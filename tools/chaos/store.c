// SPDX-License-Identifier: BSD-3-Clause
/* The fenced store's scripts and calls (store.h). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store.h"

/* KEYS[1] the lock's fence hash {epoch, token, pid}, KEYS[2] the epoch floor,
 * KEYS[3] the lock's inside set (worker -> deadline ms), KEYS[4] the counts,
 * KEYS[5] the resource itself (a counter the accepted writes advance).
 * ARGV[1] epoch, ARGV[2] token, ARGV[3] worker, ARGV[4] its deadline (ms since
 * 1970 by the same machine's clock), ARGV[5] the lock's number.
 * Returns {1 accepted / 0 refused, other holders inside, 1 when late}.
 * A refused writer leaves the inside set: it is stale, whatever it believes.
 * A late writer (its own deadline passed) is not entered, as it may no longer
 * act; whether its write is refused is the fence's business alone. */
static const char kWrite[] =
    "local e, t, d = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[4])\n"
    "local now = redis.call('time')\n"
    "local now_ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)\n"
    "local late = 0\n"
    "if d <= now_ms then late = 1 end\n"
    "local floor = tonumber(redis.call('get', KEYS[2]) or '0')\n"
    "local fe = tonumber(redis.call('hget', KEYS[1], 'epoch') or '0')\n"
    "local ft = tonumber(redis.call('hget', KEYS[1], 'token') or '0')\n"
    "if e < floor or e < fe or (e == fe and t < ft) then\n"
    "  redis.call('zrem', KEYS[3], ARGV[3])\n"
    "  redis.call('hincrby', KEYS[4], 'refused:' .. ARGV[5], 1)\n"
    "  return {0, 0, late}\n"
    "end\n"
    "redis.call('hset', KEYS[1], 'epoch', ARGV[1], 'token', ARGV[2], 'pid', ARGV[3])\n"
    "redis.call('zremrangebyscore', KEYS[3], '-inf', now_ms)\n"
    "redis.call('zrem', KEYS[3], ARGV[3])\n"
    "local others = redis.call('zcard', KEYS[3])\n"
    "if late == 0 then redis.call('zadd', KEYS[3], ARGV[4], ARGV[3]) end\n"
    "redis.call('incr', KEYS[5])\n"
    "redis.call('hincrby', KEYS[4], 'accepted:' .. ARGV[5], 1)\n"
    "return {1, others, late}\n";

/* KEYS[1] run_id -> epoch hash, KEYS[2] the epoch counter. ARGV[1] a run_id.
 * Returns its epoch, the next number when it is new. */
static const char kEpoch[] = "local e = redis.call('hget', KEYS[1], ARGV[1])\n"
                             "if e then return tonumber(e) end\n"
                             "e = redis.call('incr', KEYS[2])\n"
                             "redis.call('hset', KEYS[1], ARGV[1], e)\n"
                             "return e\n";

/* KEYS[1] the epoch floor. ARGV[1] an epoch. Raises the floor to it, never
 * lowers it (a slow worker may raise an old epoch late). Returns the floor. */
static const char kFloor[] = "local f = tonumber(redis.call('get', KEYS[1]) or '0')\n"
                             "local e = tonumber(ARGV[1])\n"
                             "if e > f then redis.call('set', KEYS[1], ARGV[1]) return e end\n"
                             "return f\n";

static int load_one(struct resp_conn *c, const char *body, char *sha, size_t cap)
{
    struct resp_reply r;
    if (resp_callv(c, &r, "SCRIPT", "LOAD", body, NULL) != 0 || r.type != RESP_STRING || r.len >= cap)
        return -1;
    memcpy(sha, r.str, r.len);
    sha[r.len] = '\0';
    return 0;
}

int store_load(struct resp_conn *c, struct store_scripts *s)
{
    if (load_one(c, kWrite, s->write, sizeof(s->write)) != 0 ||
        load_one(c, kEpoch, s->epoch, sizeof(s->epoch)) != 0 ||
        load_one(c, kFloor, s->floor, sizeof(s->floor)) != 0) {
        fprintf(stderr, "edgelock_chaos: cannot load the store's scripts\n");
        return -1;
    }
    return 0;
}

static int integer_reply(struct resp_conn *c, const char *const *argv, int64_t *out)
{
    struct resp_reply r;
    if (resp_call(c, &r, argv) != 0 || r.type != RESP_INTEGER)
        return -1;
    *out = r.integer;
    return 0;
}

int store_epoch(struct resp_conn *c, const struct store_scripts *s, const char *run_id, int64_t *epoch)
{
    const char *argv[] = {"EVALSHA", s->epoch, "2", "chaos:epochs", "chaos:epoch_seq", run_id, NULL};
    return integer_reply(c, argv, epoch);
}

int store_raise_floor(struct resp_conn *c, const struct store_scripts *s, int64_t epoch)
{
    char e[24];
    int64_t floor;
    snprintf(e, sizeof(e), "%" PRId64, epoch);
    const char *argv[] = {"EVALSHA", s->floor, "1", "chaos:epoch_floor", e, NULL};
    return integer_reply(c, argv, &floor);
}

int store_write(struct resp_conn *c, const struct store_scripts *s, int lock, int64_t epoch, int64_t token,
                pid_t pid, int64_t deadline_ms, struct store_write_result *out)
{
    char fence[32], inside[32], value[32], e[24], t[24], p[24], d[24], l[8];
    snprintf(fence, sizeof(fence), "chaos:fence:%d", lock);
    snprintf(inside, sizeof(inside), "chaos:inside:%d", lock);
    snprintf(value, sizeof(value), "chaos:value:%d", lock);
    snprintf(e, sizeof(e), "%" PRId64, epoch);
    snprintf(t, sizeof(t), "%" PRId64, token);
    snprintf(p, sizeof(p), "%ld", (long)pid);
    snprintf(d, sizeof(d), "%" PRId64, deadline_ms);
    snprintf(l, sizeof(l), "%d", lock);
    const char *argv[] = {
        "EVALSHA", s->write, "5", fence, "chaos:epoch_floor", inside, "chaos:stats", value, e, t,
        p,         d,        l,   NULL};
    struct resp_reply r;
    if (resp_call(c, &r, argv) != 0 || r.type != RESP_ARRAY || r.n != 3 || r.elems[0].type != RESP_INTEGER ||
        r.elems[1].type != RESP_INTEGER || r.elems[2].type != RESP_INTEGER)
        return -1;
    out->accepted = r.elems[0].integer == 1;
    out->others = r.elems[1].integer;
    out->late = r.elems[2].integer == 1;
    return 0;
}

int store_leave(struct resp_conn *c, int lock, pid_t pid)
{
    char inside[32], p[24];
    snprintf(inside, sizeof(inside), "chaos:inside:%d", lock);
    snprintf(p, sizeof(p), "%ld", (long)pid);
    int64_t removed;
    const char *argv[] = {"ZREM", inside, p, NULL};
    return integer_reply(c, argv, &removed);
}

static int64_t field_int(const struct resp_reply *r)
{
    if (r->type != RESP_STRING || r->len >= 24)
        return 0;
    char b[24];
    memcpy(b, r->str, r->len);
    b[r->len] = '\0';
    return strtoll(b, NULL, 10);
}

int store_totals(struct resp_conn *c, int lock, int64_t *accepted, int64_t *refused)
{
    char a[24], f[24];
    snprintf(a, sizeof(a), "accepted:%d", lock);
    snprintf(f, sizeof(f), "refused:%d", lock);
    struct resp_reply r;
    if (resp_callv(c, &r, "HMGET", "chaos:stats", a, f, NULL) != 0 || r.type != RESP_ARRAY || r.n != 2)
        return -1;
    *accepted = field_int(&r.elems[0]);
    *refused = field_int(&r.elems[1]);
    return 0;
}
