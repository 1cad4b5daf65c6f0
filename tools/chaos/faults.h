// SPDX-License-Identifier: BSD-3-Clause
/*
 * The injector: applies one window's fault (plan.h) to the lock Redis or to a
 * worker, and returns once the fault is over, with the window's fault_end_us
 * set (SIGCONT sent, the server restarted, the pause over, the holder killed).
 *
 * A holder is a worker that says, in the shared slots (worker.h), that it is
 * inside the lock's critical section. It is stopped first; only once it is
 * seen stopped is it checked to be still inside, and its owner field
 * ("chaos-<pid>:<thread id>") to be in the lock's hash in Redis, so that the
 * fault hits a process that holds the lock at that moment.
 */
#ifndef EDGELOCK_CHAOS_FAULTS_H
#define EDGELOCK_CHAOS_FAULTS_H

#include <signal.h>

#include "plan.h"
#include "pool.h"
#include "resp.h"
#include "server.h"

struct injector {
    struct server *lock_server;
    struct resp_conn *admin; /* to the lock Redis */
    const char *const *lock_names;
    struct pool *pool;
    struct worker_shared *shared;
    struct server *replica;          /* NULL without --replica */
    struct resp_conn *replica_admin; /* to it */
};

/* Applies w's fault now. 0; or -1 when the run cannot go on (the lock Redis
 * could not be restarted), with a message. A holder fault that finds no holder
 * within a few seconds leaves w->applied 0 and returns 0. */
int fault_apply(struct injector *inj, struct window *w);

/* The failover fault (failover.c); fault_apply's contract. */
int failover_apply(struct injector *inj, struct window *w);

#endif
