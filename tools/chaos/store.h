// SPDX-License-Identifier: BSD-3-Clause
/*
 * The fenced store: what a protected resource does with fencing tokens, as
 * Lua scripts on a second redis-server that no fault touches.
 *
 * - Every write carries (epoch, token). The store refuses a pair lower than
 *   the highest it accepted for that lock, or an epoch below the floor, and
 *   counts what it accepted and refused.
 * - The epoch is a number the store hands out per lock-Redis run_id, in the
 *   order they are first registered (store_epoch); store_raise_floor() is the
 *   "that Redis is gone" step of the recipe in docs/RELIABILITY.md.
 * - The overlap counter: holders inside their critical section, each with the
 *   deadline its own edgelock_lock_valid() gave it. A writer sees how many
 *   others are inside; more than none on the hold's first write is an overlap.
 *   A deadline, not a plain INCR/DECR: a holder killed with kill -9 never
 *   leaves, and a frozen one may not act once its deadline has passed, so
 *   neither must count as inside forever.
 */
#ifndef EDGELOCK_CHAOS_STORE_H
#define EDGELOCK_CHAOS_STORE_H

#include <stdint.h>
#include <sys/types.h>

#include "resp.h"

struct store_scripts {
    char write[48], epoch[48], floor[48]; /* SHA1s, loaded by store_load() */
};

struct store_write_result {
    int accepted;   /* 1 accepted, 0 refused as stale */
    int64_t others; /* other holders inside (deadline not passed) when it was accepted */
    int late;       /* the write arrived after the writer's own deadline */
};

/* Loads the scripts (driver, once). 0 or -1. */
int store_load(struct resp_conn *c, struct store_scripts *s);

/* The epoch of a lock-Redis run_id, registering it when new. 0 or -1. */
int store_epoch(struct resp_conn *c, const struct store_scripts *s, const char *run_id, int64_t *epoch);

/* Refuse every epoch below `epoch` from now on (never lowers). 0 or -1. */
int store_raise_floor(struct resp_conn *c, const struct store_scripts *s, int64_t epoch);

/* One write to the resource guarded by lock `lock`, by worker `pid`, which
 * may act until deadline_ms (CLOCK_REALTIME ms). 0 or -1. */
int store_write(struct resp_conn *c, const struct store_scripts *s, int lock, int64_t epoch, int64_t token,
                pid_t pid, int64_t deadline_ms, struct store_write_result *out);

/* The worker leaves the critical section (before it unlocks). 0 or -1. */
int store_leave(struct resp_conn *c, int lock, pid_t pid);

/* What the store itself counted for lock `lock`. 0 or -1. */
int store_totals(struct resp_conn *c, int lock, int64_t *accepted, int64_t *refused);

#endif
