// SPDX-License-Identifier: BSD-3-Clause
/*
 * A worker process: its own edgelock client (a client that owns its loop,
 * blocking calls), looping acquire -> critical section -> release on the
 * run's two fenced locks in turn until the run's end, then leaving by itself:
 * it frees its handles and destroys its client, as a gateway would on exit.
 *
 *   lock 0: EDGELOCK_FENCED under the watchdog (watchdog_lease_ms = lease)
 *   lock 1: EDGELOCK_FENCED with a fixed lease (lease)
 *
 * The critical section is a few writes to the fenced store, each preceded by
 * edgelock_lock_valid(); a write is skipped, and the hold given up, when the
 * local check says the hold is gone or has less than margin_ms left.
 * Everything that happens goes to the worker's event file (events.h).
 */
#ifndef EDGELOCK_CHAOS_WORKER_H
#define EDGELOCK_CHAOS_WORKER_H

#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>

#include "edgelock/edgelock.h"
#include "epoch.h"
#include "resp.h"
#include "store.h"

#define CHAOS_LOCKS 2
#define CHAOS_MAX_WORKERS 64

/* Memory shared by the checker and every worker (one MAP_SHARED page, mapped
 * before the first fork): the stop flag, and what each worker slot is doing,
 * which is how the injector finds a worker inside its critical section. */
struct worker_shared {
    atomic_int stop; /* set at the run's end: start no new hold, leave */
    struct {
        atomic_int pid;
        atomic_int inside; /* the lock whose critical section it is in, or -1 */
    } slot[CHAOS_MAX_WORKERS];
};

struct worker_config {
    const char *dir; /* the run's directory: event files */
    uint16_t lock_port, store_port;
    const char *lock_names[CHAOS_LOCKS];
    int64_t lease_ms;
    uint32_t command_timeout_ms;
    int writes_per_hold;
    int write_gap_ms;
    int64_t wait_ms;
    int64_t margin_ms;
    struct worker_shared *shared;
    struct store_scripts scripts;
    int no_epoch;
    uint32_t wait_replicas;
};

/* The worker's state, shared by worker.c (its life) and hold.c (one hold). */
struct worker {
    const struct worker_config *cfg;
    int slot;
    pid_t pid;
    char field[64]; /* its owner field in the lock hash: "<client id>:<owner>" */
    int events_fd;
    edgelock_client *client;
    edgelock_lock locks[CHAOS_LOCKS];
    uint64_t owner;
    struct resp_conn *lock_redis, *store;
    struct epoch_state epoch;
};

/* In a forked child: runs the worker in `slot` until shared->stop and exits
 * (status 0, or 3 when it could not start). Never returns. */
void worker_run(const struct worker_config *cfg, int slot) __attribute__((noreturn));

/* One acquire -> critical section -> release on lock `lock` (hold.c). */
void hold_once(struct worker *w, int lock);

/* The client_id a worker uses: "chaos-<pid>", how the injector finds the
 * process behind a lock's owner field. */
#define CHAOS_CLIENT_PREFIX "chaos-"

#endif
