// SPDX-License-Identifier: BSD-3-Clause
/*
 * The token epoch, the worker's half of the recipe in docs/RELIABILITY.md.
 *
 * A fenced lock's tokens start again at 1 when its Redis comes back empty
 * (Redisson's do the same), so a token alone cannot tell a new holder from an
 * old one across a data loss. The pair (epoch, token) can, with the epoch a
 * number that grows whenever the lock Redis is a new process (its run_id):
 *
 *   1. before the acquire, read the run_id R; if this worker has not
 *      confirmed R yet: get R's epoch from the store (registering R when new),
 *      read the run_id again, and only if it is still R raise the store's
 *      floor to that epoch (every older Redis is gone: its holders are stale);
 *   2. acquire; the token comes back;
 *   3. read the run_id again: still R means the token was issued by R, so it
 *      belongs to R's epoch. Otherwise the token's epoch is unknown: give the
 *      lock back without writing.
 *
 * Why epochs are in the order of the servers: a server's epoch is registered
 * before any token of it is used (step 1 precedes step 2), and a later server
 * can only be read, hence registered, after the earlier one is dead. A worker
 * that registers a dead server late gets a high number for it, but can never
 * pass step 3 with it, and never raises the floor to it (the second read fails).
 */
#ifndef EDGELOCK_CHAOS_EPOCH_H
#define EDGELOCK_CHAOS_EPOCH_H

#include <stdint.h>

#include "resp.h"
#include "store.h"

#define RUN_ID_BYTES 48

struct epoch_state {
    struct resp_conn *lock_redis; /* for INFO server only */
    struct resp_conn *store;
    const struct store_scripts *scripts;
    int disabled; /* --no-epoch: every token in epoch 0, no floor (shows why epochs are needed) */
    char confirmed[RUN_ID_BYTES]; /* the run_id whose epoch this worker registered and confirmed */
    int64_t confirmed_epoch;
};

enum epoch_result {
    EPOCH_OK = 0,
    EPOCH_CHANGED = 1,      /* the lock Redis changed between two reads */
    EPOCH_READ_FAILED = -1, /* the lock Redis did not answer INFO (down, frozen, paused) */
    EPOCH_STORE_FAILED = -2 /* the store did not answer: the checker's own failure */
};

/* Step 1. *epoch and run_id (RUN_ID_BYTES) are set on EPOCH_OK. */
enum epoch_result epoch_before(struct epoch_state *s, char *run_id, int64_t *epoch);

/* Step 3, with the run_id epoch_before() gave. */
enum epoch_result epoch_after(struct epoch_state *s, const char *run_id);

#endif
