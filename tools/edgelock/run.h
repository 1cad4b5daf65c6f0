// SPDX-License-Identifier: BSD-3-Clause
/*
 * `edgelock run`: what the command line asks for (filled by main.c) and the
 * subcommand itself (run.c).
 */
#ifndef EDGELOCK_CLI_RUN_H
#define EDGELOCK_CLI_RUN_H

#include <stddef.h>
#include <stdint.h>

#include "common.h"

/* What `run` holds: one lock (or one permit of a semaphore, --permits), a
 * MultiLock on one server, a RedLock on several. */
enum run_shape { RUN_ONE, RUN_MULTI, RUN_REDLOCK };

/* --kill-after's default: CMD's grace between SIGTERM and SIGKILL once the
 * lock is lost. */
#define DEFAULT_KILL_AFTER_MS 5000

/* A RedLock member server gets this long to connect and to answer each command:
 * a stopped server then costs about this much once, not a whole wait. */
#define REDLOCK_TIMEOUT_MS 1000u

struct run_args {
    int64_t wait_ms;  /* EDGELOCK_WAIT_FOREVER or >= 0 */
    int64_t lease_ms; /* EDGELOCK_LEASE_WATCHDOG or > 0 (always > 0 for RUN_REDLOCK) */
    uint32_t watchdog_ms;
    int64_t kill_after_ms; /* SIGKILL this long after the SIGTERM for a lost lock */
    int not_acquired_exit; /* -E: the exit code when not acquired within the wait (75) */
    const char *name;
    char **cmd;
    edgelock_lock_kind kind; /* EDGELOCK_PERMIT_SEMAPHORE with --permits */
    int64_t permits;         /* --permits N: the semaphore's size if it does not exist yet; else 0 */
    enum run_shape shape;
    size_t n;                                /* members: 1, the --multi names or the --redlock servers */
    const char *names[EDGELOCK_MAX_MEMBERS]; /* the lock name of each member */
    const char *urls[EDGELOCK_MAX_MEMBERS];  /* the server of each member */
    char shown[EDGELOCK_MAX_MEMBERS][512];   /* those URLs, credentials masked */
    char label[1024];                        /* "lock 'x'", "MultiLock 'a', 'b'", ... for messages */
    char list[4096]; /* the --multi / --redlock value, split in place; names[] and urls[] point into it */
};

/* Takes the lock, runs CMD while holding it, releases it. CMD's exit status,
 * or an exit code of edgelock's own. */
int cmd_run(const struct options *o, const struct run_args *a);

#endif
