// SPDX-License-Identifier: BSD-3-Clause
/*
 * The run's plan: a warm-up window, then one window per fault, in the order
 * given. A window starts with its fault and ends after the fault and a quiet
 * time, when the next one starts; every event is counted in the window it
 * happens in.
 *
 * Faults, as written in --faults (a comma list):
 *   redis-stop[:MS]        SIGSTOP of the lock Redis for MS (default 2500, past
 *                          the workers' 1000 ms command timeout), then SIGCONT
 *   redis-restart          kill -9 of the lock Redis and a restart on the same
 *                          port, its data lost (the data-loss window)
 *   kill-normal            CLIENT KILL TYPE normal
 *   kill-pubsub            CLIENT KILL TYPE pubsub
 *   pause-write[:MS]       CLIENT PAUSE MS WRITE (default 2000)
 *   freeze-wd[:MS]         SIGSTOP of the worker holding lock 0 (watchdog) for
 *   freeze-fixed[:MS]      MS (default 4500, past the 3000 ms lease); lock 1
 *                          (fixed lease) for freeze-fixed
 *   kill-holder-wd         kill -9 of the worker holding lock 0 / lock 1; a new
 *   kill-holder-fixed      worker takes its place
 *   failover[:MS]          (with --replica) the replica stops following, the
 *                          master serves alone for MS (default 1000), is killed
 *                          (kill -9) and comes back on its port with the
 *                          replica's data, as after a failover to a replica
 *                          that lagged MS: what was not replicated is lost
 */
#ifndef EDGELOCK_CHAOS_PLAN_H
#define EDGELOCK_CHAOS_PLAN_H

#include <stddef.h>
#include <stdint.h>

enum fault_kind {
    FAULT_NONE, /* the warm-up window */
    FAULT_REDIS_STOP,
    FAULT_REDIS_RESTART,
    FAULT_KILL_NORMAL,
    FAULT_KILL_PUBSUB,
    FAULT_PAUSE_WRITE,
    FAULT_HOLDER_FREEZE,
    FAULT_HOLDER_KILL,
    FAULT_FAILOVER
};

#define PLAN_MAX_WINDOWS 64

struct window {
    enum fault_kind kind;
    int lock;         /* holder faults: the lock whose holder is hit; else -1 */
    int64_t param_ms; /* stop, pause, freeze: how long */
    /* Filled in by the run (CLOCK_MONOTONIC us): */
    int64_t start_us, fault_end_us, end_us;
    int applied;   /* 0: the fault could not be applied (no holder found) */
    char note[96]; /* what was hit */
};

/* Appends the windows of a comma list to w[*n..cap). 0, or -1 with a message. */
int plan_parse(const char *spec, struct window *w, int cap, int *n);

/* "redis-stop 2500ms", "freeze-wd 4500ms", ... */
void plan_name(const struct window *w, char *buf, size_t cap);

/* The fault loses the lock Redis's data: overlaps in its window are the
 * inherent cost of a Redis without replicas, counted apart. */
int plan_data_loss(const struct window *w);

/* The locks a window's fault affects (bit i: lock i): holder faults one,
 * Redis faults both. */
unsigned plan_locks(const struct window *w);

#endif
