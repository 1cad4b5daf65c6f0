// SPDX-License-Identifier: BSD-3-Clause
/* The checker's command line. */
#ifndef EDGELOCK_CHAOS_OPTIONS_H
#define EDGELOCK_CHAOS_OPTIONS_H

#include <stdint.h>

#include "plan.h"

struct options {
    int workers;
    const char *faults; /* the comma list of plan.h */
    int rounds;         /* the list applied this many times */
    int64_t warmup_ms, quiet_ms;
    int64_t lease_ms, command_timeout_ms, wait_ms, margin_ms;
    int writes_per_hold, write_gap_ms;
    int64_t exit_bound_ms, recovery_bound_ms;
    int no_epoch;
    int replica;       /* start a replica of the lock Redis (the failover fault) */
    int wait_replicas; /* the workers' cfg.wait_replicas */
    int keep;
    /* From faults x rounds, with the warm-up as windows[0]. */
    struct window windows[PLAN_MAX_WINDOWS];
    int nwindows;
};

/* 0 to run; 1 when --help was printed; 64 on a usage error (message printed). */
int options_parse(int argc, char **argv, struct options *o);

#endif
