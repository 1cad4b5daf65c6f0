// SPDX-License-Identifier: BSD-3-Clause
/*
 * What the workers tell the report: one line per event, appended with a
 * single write() to the worker's own file (events.<pid> in the run's
 * directory) as it happens, so a worker killed with kill -9 loses nothing it
 * had noted. Times are CLOCK_MONOTONIC in microseconds (clock.h).
 */
#ifndef EDGELOCK_CHAOS_EVENTS_H
#define EDGELOCK_CHAOS_EVENTS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum ev_type {
    EV_START = 'B',         /* the worker is up */
    EV_ACQUIRE = 'A',       /* t: reply received, t2: call made; epoch, token */
    EV_ACQUIRE_FAIL = 'F',  /* t; a: the status */
    EV_EPOCH_UNKNOWN = 'U', /* acquired, but the lock Redis changed meanwhile: given back unused;
                               a: token, b: enum side_error */
    EV_WRITE = 'W',         /* t: sent; epoch, token; a: 1 accepted, 0 refused; b: other holders
                               inside; c: 1 first write of the hold (entry), d: 1 arrived after
                               its own deadline */
    EV_SKIP = 'S',          /* lock_valid said stop: t; a: its status (OK: too little time left) */
    EV_LOST = 'L',          /* on_lock_lost */
    EV_RELEASE = 'R',       /* t; a: the unlock status; b: released; c (status OK): 1 the worker's field
                               is still in the lock hash (leaked), 0 gone, -1 could not look */
    EV_SIDE_ERROR = 'E',    /* a side channel failed: t; a: enum side_error */
    EV_EXIT = 'X'           /* the worker leaves by itself */
};

/* What failed beside the lock calls (EV_SIDE_ERROR, EV_EPOCH_UNKNOWN). */
enum side_error {
    SIDE_RUN_ID = 1,  /* the lock Redis did not answer INFO (down, frozen) */
    SIDE_STORE = 2,   /* the store did not answer: the checker's own failure */
    SIDE_CHANGED = 3, /* the lock Redis changed between two run_id reads */
};

struct event {
    char type;
    int lock; /* 0, 1: the run's two locks; -1 none */
    pid_t pid;
    int64_t t, t2;
    int64_t epoch, token;
    int64_t a, b, c, d;
};

/* Worker side: opens <dir>/events.<pid> for appending. -1 on failure. */
int events_open(const char *dir, pid_t pid);

/* Appends one event (e->pid is implied by the file). Safe from any thread. */
void events_put(int fd, const struct event *e);

/* Driver side: every event of every worker file in dir, sorted by t.
 * *out is malloc'ed (free it). 0, or -1. */
int events_load(const char *dir, struct event **out, size_t *n);

#endif
