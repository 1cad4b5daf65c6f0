// SPDX-License-Identifier: BSD-3-Clause
/*
 * The worker processes, from the checker's side: starting them, finding the
 * one behind a pid, replacing one killed by a fault, noting any that dies on
 * its own (a crash: the run fails), and at the end waiting for each to leave
 * by itself within a bound (one that does not is a hung worker, killed then).
 */
#ifndef EDGELOCK_CHAOS_POOL_H
#define EDGELOCK_CHAOS_POOL_H

#include <stdint.h>
#include <sys/types.h>

#include "worker.h"

#define POOL_MAX_WORKERS CHAOS_MAX_WORKERS
#define POOL_MAX_PROCS 512

struct pool_proc {
    pid_t pid;
    int slot;
    int killed; /* by a kill-holder fault */
    int done;   /* reaped */
    int status; /* waitpid's status, when done */
    int hung;   /* did not leave by itself within the bound: killed */
    int64_t done_us;
};

struct pool {
    const struct worker_config *cfg;
    int n;
    pid_t slots[POOL_MAX_WORKERS];
    struct pool_proc procs[POOL_MAX_PROCS];
    int nprocs;
};

/* Starts n workers. 0, or -1. */
int pool_start(struct pool *p, const struct worker_config *cfg, int n);

/* The slot whose current worker is pid, or -1. */
int pool_slot_of(const struct pool *p, pid_t pid);

/* SIGKILL of pid (a current worker), reaped, and a new worker in its slot.
 * 0, or -1. */
int pool_kill_and_replace(struct pool *p, pid_t pid);

/* SIGSTOP of pid (a current worker), returning once it is stopped: 0; or -1
 * when it ended instead (noted as pool_reap() does). */
int pool_stop(struct pool *p, pid_t pid);

/* Reaps workers that ended on their own during the run (crashes) and starts
 * new ones in their slots. The number reaped. */
int pool_reap(struct pool *p);

/* After the run's end: waits until every worker has left or bound_us (CLOCK_
 * MONOTONIC) passes; the rest are hung, killed and reaped. The hung count. */
int pool_finish(struct pool *p, int64_t bound_us);

/* Workers that ended badly: neither killed by a fault nor hung, and not
 * exited with status 0. */
int pool_crashes(const struct pool *p);

#endif
