// SPDX-License-Identifier: BSD-3-Clause
/*
 * Wire scenario: one fixed sequence of blocking calls, for comparing the bytes
 * two builds of edgelock put on the wire (see compare.sh, which records them
 * with MONITOR). Uses only API that existed at 9c902a3 (before the engine was
 * split into layers), so the same file links against both.
 *
 * Usage: scenario <redis-url> [<go-file>]
 *
 * With <go-file>, once connected (scripts loaded, one command answered) the
 * scenario prints "paused" and waits until <go-file> exists: compare.sh uses
 * the pause to SCRIPT FLUSH the server, so that every script's first call gets
 * NOSCRIPT and is re-sent as EVAL.
 *
 * Deterministic by construction: one client (client id "wire"), blocking calls
 * made one after another; the only second thread is a single worker that runs
 * the contended cases, with sleeps far longer than a loopback round trip to
 * order the two threads. Timing-dependent values (TTLs) are printed only as
 * ranges, so stdout can be compared as well.
 */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "edgelock/edgelock.h"

static edgelock_client *cl;
static int failures;

static void sleep_ms(long ms)
{
    struct timespec ts;
    ts.tv_sec = ms / 1000;
    ts.tv_nsec = (ms % 1000) * 1000000L;
    while (nanosleep(&ts, &ts) != 0) {
    }
}

/* Print a step's status (and value); count a status other than the expected one. */
static void step(const char *what, edgelock_status st, edgelock_status want, const char *value)
{
    printf("%-44s %s%s%s\n", what, edgelock_status_str(st), value ? " " : "", value ? value : "");
    if (st != want) {
        printf("  ^ expected %s\n", edgelock_status_str(want));
        failures++;
    }
    fflush(stdout);
}

/* The call is made before the value expression is evaluated (argument order is
 * unspecified in C, and the value usually reads what the call wrote). */
#define STEP(what, call, want, value)                                                                        \
    do {                                                                                                     \
        edgelock_status st_ = (call);                                                                        \
        step((what), st_, (want), (value));                                                                  \
    } while (0)

static const char *num(int64_t v)
{
    static char buf[32];
    snprintf(buf, sizeof(buf), "%lld", (long long)v);
    return buf;
}

static const char *ttl_range(int64_t v)
{
    if (v > 0 && v <= 10000)
        return "(0,10000]";
    if (v > 10000)
        return ">10000";
    return num(v);
}

static edgelock_lock new_lock(edgelock_lock_kind kind, const char *name)
{
    edgelock_lock lk = {0};
    char what[96];
    snprintf(what, sizeof(what), "lock_new_kind %d %s", (int)kind, name);
    STEP(what, edgelock_lock_new_kind(cl, kind, name, strlen(name), &lk), EDGELOCK_OK, NULL);
    return lk;
}

/* ------------------------------------------------------ the one worker -- */

typedef void (*job_fn)(void);
static sem_t job_ready, job_done;
static job_fn job;

static void *worker(void *arg)
{
    (void)arg;
    for (;;) {
        sem_wait(&job_ready);
        if (!job)
            return NULL;
        job();
        sem_post(&job_done);
    }
}

static void start_job(job_fn fn)
{
    job = fn;
    sem_post(&job_ready);
}

static void wait_job(void)
{
    sem_wait(&job_done);
}

/* Results of the worker's calls, printed by the main thread after wait_job(). */
static edgelock_lock w_lock;
static int64_t w_wait;
static edgelock_status w_lock_st, w_unlock_st;
static int w_released;

/* Take w_lock (waiting w_wait), keep it 100 ms, release it. */
static void job_lock_unlock(void)
{
    w_released = -1;
    w_lock_st = edgelock_try_lock(cl, w_lock, w_wait, 10000);
    w_unlock_st = EDGELOCK_OK;
    if (w_lock_st == EDGELOCK_OK) {
        sleep_ms(100);
        w_unlock_st = edgelock_unlock(cl, w_lock, &w_released);
    }
}

static void print_job(const char *what, edgelock_status want_lock)
{
    char buf[96];
    snprintf(buf, sizeof(buf), "worker try_lock %s", what);
    step(buf, w_lock_st, want_lock, NULL);
    if (w_lock_st == EDGELOCK_OK) {
        snprintf(buf, sizeof(buf), "worker unlock %s", what);
        step(buf, w_unlock_st, EDGELOCK_OK, num(w_released));
    }
}

/* ------------------------------------------------------------ scenario -- */

static void basic(edgelock_lock_kind kind, const char *name)
{
    char what[96];
    int64_t v = 0;
    int i = 0;
    edgelock_lock lk = new_lock(kind, name);

    snprintf(what, sizeof(what), "%s try_lock 0 10000", name);
    if (kind == EDGELOCK_FENCED) {
        STEP(what, edgelock_try_lock_token(cl, lk, 0, 10000, &v), EDGELOCK_OK, num(v));
        snprintf(what, sizeof(what), "%s try_lock again", name);
        STEP(what, edgelock_try_lock_token(cl, lk, 0, 10000, &v), EDGELOCK_OK, num(v));
    } else {
        STEP(what, edgelock_try_lock(cl, lk, 0, 10000), EDGELOCK_OK, NULL);
        snprintf(what, sizeof(what), "%s try_lock again", name);
        STEP(what, edgelock_try_lock(cl, lk, 0, 10000), EDGELOCK_OK, NULL);
    }
    snprintf(what, sizeof(what), "%s hold_count", name);
    STEP(what, edgelock_hold_count(cl, lk, &v), EDGELOCK_OK, num(v));
    snprintf(what, sizeof(what), "%s is_locked", name);
    STEP(what, edgelock_is_locked(cl, lk, &i), EDGELOCK_OK, num(i));
    snprintf(what, sizeof(what), "%s is_held_by_current_thread", name);
    STEP(what, edgelock_is_held_by_current_thread(cl, lk, &i), EDGELOCK_OK, num(i));
    snprintf(what, sizeof(what), "%s remaining_ttl", name);
    STEP(what, edgelock_remaining_ttl(cl, lk, &v), EDGELOCK_OK, ttl_range(v));
    snprintf(what, sizeof(what), "%s unlock 1", name);
    STEP(what, edgelock_unlock(cl, lk, &i), EDGELOCK_OK, num(i));
    snprintf(what, sizeof(what), "%s unlock 2", name);
    STEP(what, edgelock_unlock(cl, lk, &i), EDGELOCK_OK, num(i));
    /* Not held any more. As in Redisson, the fair and read-write release
     * scripts answer "released" when the lock key is gone (and publish); only
     * the reentrant one answers nil (not the owner). */
    snprintf(what, sizeof(what), "%s unlock 3 (not held)", name);
    i = -1;
    STEP(what, edgelock_unlock(cl, lk, &i),
         kind == EDGELOCK_REENTRANT || kind == EDGELOCK_FENCED ? EDGELOCK_ERR_NOT_OWNER : EDGELOCK_OK,
         num(i));
    snprintf(what, sizeof(what), "%s is_locked after", name);
    STEP(what, edgelock_is_locked(cl, lk, &i), EDGELOCK_OK, num(i));
    snprintf(what, sizeof(what), "%s hold_count after", name);
    STEP(what, edgelock_hold_count(cl, lk, &v), EDGELOCK_OK, num(v));
    snprintf(what, sizeof(what), "%s remaining_ttl after", name);
    STEP(what, edgelock_remaining_ttl(cl, lk, &v), EDGELOCK_OK, ttl_range(v));
    snprintf(what, sizeof(what), "%s force_unlock (free)", name);
    STEP(what, edgelock_force_unlock(cl, lk, &i), EDGELOCK_OK, num(i));
    snprintf(what, sizeof(what), "%s lock_free", name);
    STEP(what, edgelock_lock_free(cl, lk), EDGELOCK_OK, NULL);
}

/* Main holds `lk`; the worker waits for it; main releases after 300 ms. */
static void contended(edgelock_lock lk, edgelock_lock theirs, const char *what)
{
    char buf[96];
    int i = 0;
    snprintf(buf, sizeof(buf), "%s main try_lock", what);
    STEP(buf, edgelock_try_lock(cl, lk, 0, 10000), EDGELOCK_OK, NULL);
    w_lock = theirs;
    w_wait = 5000;
    start_job(job_lock_unlock);
    sleep_ms(300);
    snprintf(buf, sizeof(buf), "%s main unlock", what);
    STEP(buf, edgelock_unlock(cl, lk, &i), EDGELOCK_OK, num(i));
    wait_job();
    print_job(what, EDGELOCK_OK);
    sleep_ms(100); /* let the waiter's unsubscribe settle */
}

int main(int argc, char **argv)
{
    edgelock_config cfg;
    pthread_t th;
    edgelock_lock a, b, f, r, w, r2;
    int i = 0;
    int64_t v = 0;

    if (argc != 2 && argc != 3) {
        fprintf(stderr, "usage: %s redis-url [go-file]\n", argv[0]);
        return 2;
    }
    edgelock_config_init(&cfg);
    cfg.url = argv[1];
    cfg.client_id = "wire";
    cfg.watchdog_lease_ms = 3000; /* a renewal every second: one within the 1.5 s hold below */
    STEP("client_create", edgelock_client_create(&cfg, NULL, &cl), EDGELOCK_OK, NULL);
    if (!cl)
        return 1;
    printf("client_id %s\n", edgelock_client_id(cl));
    sem_init(&job_ready, 0, 0);
    sem_init(&job_done, 0, 0);
    pthread_create(&th, NULL, worker, NULL);

    /* 0. Connected: the first call returns once the connection is up. */
    a = new_lock(EDGELOCK_REENTRANT, "wire-first");
    STEP("first: is_locked", edgelock_is_locked(cl, a, &i), EDGELOCK_OK, num(i));
    STEP("first: lock_free", edgelock_lock_free(cl, a), EDGELOCK_OK, NULL);
    if (argc == 3) {
        printf("paused\n");
        fflush(stdout);
        while (access(argv[2], F_OK) != 0)
            sleep_ms(10);
    }

    /* 1. Every kind: take, re-enter, query, release twice. */
    basic(EDGELOCK_REENTRANT, "wire-reentrant");
    basic(EDGELOCK_FAIR, "wire-fair");
    basic(EDGELOCK_READ, "wire-rw");
    basic(EDGELOCK_WRITE, "wire-rw");
    basic(EDGELOCK_FENCED, "wire-fenced");
    basic(EDGELOCK_READ, "wire-{tag}rw"); /* a name with a hash tag of its own */

    /* 2. Watchdog: reentrant, read and fair holds under the watchdog, kept 1.5 s
     *    (one renewal tick at 1 s: one batch per renewal script), then released. */
    a = new_lock(EDGELOCK_REENTRANT, "wire-wd");
    r = new_lock(EDGELOCK_READ, "wire-wd-rw");
    f = new_lock(EDGELOCK_FAIR, "wire-wd-fair");
    STEP("wd acquire (lock())", edgelock_acquire(cl, a), EDGELOCK_OK, NULL);
    STEP("wd read try_lock watchdog", edgelock_try_lock(cl, r, 0, EDGELOCK_LEASE_WATCHDOG), EDGELOCK_OK,
         NULL);
    STEP("wd fair try_lock watchdog", edgelock_try_lock(cl, f, 0, EDGELOCK_LEASE_WATCHDOG), EDGELOCK_OK,
         NULL);
    sleep_ms(1500);
    STEP("wd remaining_ttl", edgelock_remaining_ttl(cl, a, &v), EDGELOCK_OK,
         v > 1000 && v <= 3000 ? "(1000,3000]" : num(v));
    STEP("wd unlock", edgelock_unlock(cl, a, &i), EDGELOCK_OK, num(i));
    STEP("wd read unlock", edgelock_unlock(cl, r, &i), EDGELOCK_OK, num(i));
    STEP("wd fair unlock", edgelock_unlock(cl, f, &i), EDGELOCK_OK, num(i));

    /* 3. force_unlock of a held lock, for each script (reentrant, fair, rw). */
    b = new_lock(EDGELOCK_REENTRANT, "wire-force");
    STEP("force: try_lock", edgelock_try_lock(cl, b, 0, 10000), EDGELOCK_OK, NULL);
    STEP("force: force_unlock", edgelock_force_unlock(cl, b, &i), EDGELOCK_OK, num(i));
    STEP("force: is_locked", edgelock_is_locked(cl, b, &i), EDGELOCK_OK, num(i));
    STEP("force: unlock (lost)", edgelock_unlock(cl, b, &i), EDGELOCK_ERR_LOST, NULL);
    STEP("force fair: try_lock", edgelock_try_lock(cl, f, 0, 10000), EDGELOCK_OK, NULL);
    STEP("force fair: force_unlock", edgelock_force_unlock(cl, f, &i), EDGELOCK_OK, num(i));
    /* The key is gone: the fair and write release scripts answer "released". */
    i = -1;
    STEP("force fair: unlock (key gone)", edgelock_unlock(cl, f, &i), EDGELOCK_OK, num(i));
    w = new_lock(EDGELOCK_WRITE, "wire-wd-rw");
    STEP("force write: try_lock", edgelock_try_lock(cl, w, 0, 10000), EDGELOCK_OK, NULL);
    STEP("force write: force_unlock", edgelock_force_unlock(cl, w, &i), EDGELOCK_OK, num(i));
    i = -1;
    STEP("force write: unlock (key gone)", edgelock_unlock(cl, w, &i), EDGELOCK_OK, num(i));

    /* 4. MultiLock over two reentrant locks: a fixed lease (taken with lease +
     *    wait, then aligned) and the watchdog. */
    {
        edgelock_member m[2];
        m[0].client = cl;
        m[0].lock = a;
        m[1].client = cl;
        m[1].lock = b;
        STEP("multi_try_lock 1000 10000", edgelock_multi_try_lock(m, 2, 1000, 10000), EDGELOCK_OK, NULL);
        STEP("multi: remaining_ttl", edgelock_remaining_ttl(cl, b, &v), EDGELOCK_OK, ttl_range(v));
        STEP("multi_unlock", edgelock_multi_unlock(m, 2), EDGELOCK_OK, NULL);
        STEP("multi_try_lock 0 10000", edgelock_multi_try_lock(m, 2, 0, 10000), EDGELOCK_OK, NULL);
        STEP("multi_unlock", edgelock_multi_unlock(m, 2), EDGELOCK_OK, NULL);
        STEP("redlock_try_lock (1 member)", edgelock_redlock_try_lock(m, 1, 0, 10000, NULL), EDGELOCK_OK,
             NULL);
        STEP("redlock_unlock", edgelock_redlock_unlock(m, 1), EDGELOCK_OK, NULL);
    }

    /* 5. Contended: the worker waits while main holds, then gets it. */
    contended(a, a, "contended reentrant");
    contended(f, f, "contended fair");
    r2 = new_lock(EDGELOCK_READ, "wire-wd-rw");
    contended(w, r2, "contended write/read");
    /* A read hold is shared: the worker gets it at once while main holds. */
    STEP("shared: main read try_lock", edgelock_try_lock(cl, r, 0, 10000), EDGELOCK_OK, NULL);
    w_lock = r2;
    w_wait = 0;
    start_job(job_lock_unlock);
    wait_job();
    print_job("shared read", EDGELOCK_OK);
    STEP("shared: main read unlock", edgelock_unlock(cl, r, &i), EDGELOCK_OK, num(i));
    /* A fair waiter that gives up (leaves the queue), and a reentrant one. */
    STEP("timeout: main fair try_lock", edgelock_try_lock(cl, f, 0, 10000), EDGELOCK_OK, NULL);
    w_lock = f;
    w_wait = 200;
    start_job(job_lock_unlock);
    wait_job();
    print_job("fair timeout", EDGELOCK_ERR_WAIT_TIMEOUT);
    STEP("timeout: main fair unlock", edgelock_unlock(cl, f, &i), EDGELOCK_OK, num(i));
    sleep_ms(100);
    STEP("timeout: main try_lock", edgelock_try_lock(cl, a, 0, 10000), EDGELOCK_OK, NULL);
    w_lock = a;
    w_wait = 200;
    start_job(job_lock_unlock);
    wait_job();
    print_job("reentrant timeout", EDGELOCK_ERR_WAIT_TIMEOUT);
    STEP("timeout: main unlock", edgelock_unlock(cl, a, &i), EDGELOCK_OK, num(i));
    sleep_ms(100);

    /* 6. Free everything and destroy. */
    start_job(NULL);
    pthread_join(th, NULL);
    STEP("lock_free wd", edgelock_lock_free(cl, a), EDGELOCK_OK, NULL);
    STEP("lock_free force", edgelock_lock_free(cl, b), EDGELOCK_OK, NULL);
    STEP("lock_free wd-fair", edgelock_lock_free(cl, f), EDGELOCK_OK, NULL);
    STEP("lock_free wd-rw read", edgelock_lock_free(cl, r), EDGELOCK_OK, NULL);
    STEP("lock_free wd-rw write", edgelock_lock_free(cl, w), EDGELOCK_OK, NULL);
    STEP("lock_free wd-rw read 2", edgelock_lock_free(cl, r2), EDGELOCK_OK, NULL);
    STEP("lock_free again (stale)", edgelock_lock_free(cl, a), EDGELOCK_ERR_STALE_HANDLE, NULL);
    edgelock_client_destroy(cl);
    sem_destroy(&job_ready);
    sem_destroy(&job_done);
    printf("failures %d\n", failures);
    return failures ? 1 : 0;
}
