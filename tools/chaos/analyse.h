// SPDX-License-Identifier: BSD-3-Clause
/*
 * From the workers' events to per-window figures.
 *
 * Which token is newer is decided by (epoch, token): tokens of one lock Redis
 * grow with every acquire, and epochs grow with every new lock Redis
 * (epoch.h). Two checks stand apart from the store's own comparisons:
 *
 * - stale write accepted: a write accepted by the store although, when it was
 *   sent, another worker had already received a newer token for the same lock.
 *   The store only refuses what is older than what it has *seen*; this catches
 *   what it let through because the newer holder had not written yet.
 * - order inversion: a token received by a call made after another worker had
 *   received a newer-looking one. Calls made one after the other get tokens
 *   in that order, so an inversion means the (epoch, token) order is wrong;
 *   duplicate: two acquisitions with one (epoch, token).
 *
 * Overlap: a hold's first write found another holder inside (store.h), by
 * deadlines each holder's edgelock_lock_valid() gave. From a data loss until
 * a lease after it (when every hold taken before it has lapsed by its
 * holder's own clock) this is the inherent cost of one Redis without
 * replicas; counted apart, in the window it happens in.
 *
 * Leaked hold: an unlock the library answered OK and "released", after which
 * the worker's owner field was still in the lock's hash. Workers never
 * re-enter, so the lock stays held in Redis by nobody who knows it.
 *
 * Recovery: from the fault's end to the first acquisition after it, of each
 * lock the fault affects (the slowest of them).
 */
#ifndef EDGELOCK_CHAOS_ANALYSE_H
#define EDGELOCK_CHAOS_ANALYSE_H

#include <stddef.h>
#include <stdint.h>

#include "events.h"
#include "plan.h"
#include "pool.h"

#define RECOVERY_NONE (-1)       /* the window has no fault (warm-up) or it was not applied */
#define RECOVERY_NEVER INT64_MAX /* no acquisition after the fault at all */

struct window_stats {
    int64_t acquisitions, acquire_fails, epoch_unknown;
    int64_t overlaps, overlaps_data_loss;
    int64_t accepted, refused, stale_accepted, late;
    int64_t inversions, duplicates;
    int64_t lost, skips, run_id_errors, store_errors; /* run_id: not read, or changed meanwhile */
    int64_t leaked, unlock_lost, unlock_uncertain, unlock_other;
    int64_t recovery_ms;
    int hung;
};

struct run_record {
    struct window *windows; /* windows[0] is the warm-up */
    int nwindows;
    const struct event *ev; /* sorted by time */
    size_t nev;
    const struct pool *pool;
    int64_t lease_ms;
};

/* Fills stats[0..nwindows) and *total. 0, or -1 (out of memory). */
int analyse(const struct run_record *run, struct window_stats *stats, struct window_stats *total);

#endif
