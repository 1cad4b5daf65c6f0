// SPDX-License-Identifier: BSD-3-Clause
/*
 * The lock thread of `edgelock run` and the state it shares with the main
 * thread and with the library's loop threads.
 *
 * Blocking holds belong to the calling thread (on every member of a
 * composite), so one helper thread makes every blocking call: the
 * reachability check, the acquire and, when the main thread asks for it, the
 * release. It reports to the main thread with pthread_kill(main, SIGUSR1); the
 * lock-lost callback, on a library loop thread, sets `lost` and does the same.
 */
#ifndef EDGELOCK_CLI_LOCK_THREAD_H
#define EDGELOCK_CLI_LOCK_THREAD_H

#include <pthread.h>
#include <stdatomic.h>

#include "run.h"

/* Shared by the main thread, the lock thread and the loop threads' callback. */
struct run_state {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_t main_thread;
    const struct run_args *a;
    edgelock_client *clients[EDGELOCK_MAX_MEMBERS];
    size_t nclients;
    edgelock_member m[EDGELOCK_MAX_MEMBERS]; /* a->n of them */

    /* lock thread -> main, under mu */
    int acquire_done;
    edgelock_status check_st; /* reachability check */
    size_t reachable;         /* RedLock: servers that answered the check */
    edgelock_status acquire_st;
    int64_t token;        /* --fenced */
    int64_t validity_ms;  /* --redlock; a fixed --lease: what was left of it at acquired_at */
    int lease_over;       /* a fixed --lease was over when the acquire's answer came (NOT_OWNER) */
    char permit_id[33];   /* --permits: the id of the permit held (32 hex digits), or "" */
    uint64_t acquired_at; /* now_ms() when the acquire call returned */
    edgelock_status release_st;
    uint64_t owner; /* the lock thread's edgelock_current_owner(), for edgelock_cancel() */
    int acquiring;  /* its lock call has started (a cancel must wait for it to end) */
    /* main -> lock thread, under mu */
    int release_requested;
    int cancelled; /* a signal came while waiting: do not start an acquire */

    atomic_int lost; /* set by the lock-lost callback: 1 + the index of the member lost */
};

/* The clients and handles of `run` into s (s->a set): one client for one lock
 * or a MultiLock, one per server for a RedLock, each reporting a lost lock into
 * s. 0, or an exit code (nothing left behind). */
int make_members(const struct options *o, const struct run_args *a, struct run_state *s);

void destroy_clients(struct run_state *s);

/* The thread function (arg: the run_state): check, acquire, report, then wait
 * for release_requested and release if it holds the lock. */
void *lock_thread(void *arg);

/* Ends the lock thread: asks it to release (when it holds the lock) and joins it. */
void finish_lock_thread(struct run_state *s, pthread_t th);

/* A signal while waiting: cancels the lock thread's lock calls on every
 * client (again and again: a composite call may be between members) until it
 * reports, at most ms. 1 when it reported (then acquire_st says how it ended:
 * CANCELLED, or OK when the lock came first), 0 when it did not in time, and
 * 0 at once when no lock call has started (the thread is still asking
 * whether the lock is held, a query nothing can cancel; it now never
 * starts one, so nothing is left to give back). */
int cancel_lock_thread(struct run_state *s, int ms);

#endif
