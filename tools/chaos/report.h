// SPDX-License-Identifier: BSD-3-Clause
/*
 * The run's report: one table row per window, the totals, what the lock Redis
 * still holds at the end, and the verdict. The run fails on any of:
 *   - a stale write accepted, an order inversion or a duplicate token;
 *   - an overlap outside a data-loss window;
 *   - a hung worker, or one that died on its own (a crash);
 *   - a leaked hold (analyse.h): the library said released, Redis kept it;
 *   - recovery over the bound (10 s), or none;
 *   - a fault that could not be applied, or a store error (the check is void).
 */
#ifndef EDGELOCK_CHAOS_REPORT_H
#define EDGELOCK_CHAOS_REPORT_H

#include <stdio.h>

#include "analyse.h"

/* What the lock Redis holds once every worker is gone. */
struct leftovers {
    long total;        /* keys */
    long tokens;       /* redisson_lock_token:{...}: the token counters, kept on purpose */
    long locks;        /* the lock hashes themselves: a hold nobody released */
    long with_ttl;     /* other keys that expire by themselves (unlock latches) */
    long persistent;   /* other keys without a TTL: left behind for good */
    char holders[256]; /* the lock hashes' owner fields and TTLs */
    int read_ok;
};

struct store_counts {
    int64_t accepted, refused; /* as the store counted them, both locks */
    int read_ok;
};

/* Prints the table and the totals. */
void report_print(FILE *f, const struct run_record *run, const struct window_stats *stats,
                  const struct window_stats *total, const struct leftovers *left,
                  const struct store_counts *sc);

/* Prints one line per failure and returns how many there were. */
int report_verdict(FILE *f, const struct run_record *run, const struct window_stats *stats,
                   const struct window_stats *total, int64_t recovery_bound_ms);

#endif
