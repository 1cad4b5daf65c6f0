// SPDX-License-Identifier: BSD-3-Clause
/*
 * `edgelock latch ACTION NAME`: Redisson's RCountDownLatch for scripts.
 *
 *   latch set NAME COUNT    trySetCount: exit 0 when set, 1 when NAME exists
 *                           already (its count is left as it is)
 *   latch countdown NAME    countDown: prints the count left
 *   latch count NAME        getCount: prints the count (0 when absent)
 *   latch await NAME [--wait T]
 *                           await: exit 0 once the count is zero or the latch
 *                           absent, 75 when T runs out first, 128+N on
 *                           SIGINT/SIGTERM/SIGHUP while waiting
 *
 * set, countdown and count make one call each, within the deadline `status`
 * has (deadline.h). await waits on a thread of its own (the blocking call
 * belongs to it, as in `run`), with INT, TERM and HUP blocked in every thread
 * and taken by the main thread with sigwaitinfo() (any of them ignored at
 * start is left out, and stays ignored); a signal cancels the wait with
 * edgelock_cancel(), so the client leaves its channel cleanly.
 */
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common.h"
#include "deadline.h"

/* Exit code of `latch set` when NAME exists already. */
#define EXIT_LATCH_EXISTS 1

/* The deadline of set, countdown and count: as status's, two command timeouts
 * (connecting, then the call). */
#define LATCH_CALLS 2u

/* set, countdown, count: one call. */
static int latch_call(const struct options *o, const char *action, const char *name, const char *label,
                      int64_t count)
{
    char what[1200];
    snprintf(what, sizeof(what), "latch %s of %s at %s", action, label, o->shown_url);
    int code =
        deadline_start(LATCH_CALLS, command_timeout_for(REDIS_TIMEOUT_MS), what,
                       strcmp(action, "count") == 0 ? "Redis did not answer in time"
                                                    : "Redis did not answer in time; the latch may or "
                                                      "may not have been changed ('edgelock latch count "
                                                      "NAME' tells)",
                       EXIT_UNAVAILABLE);
    if (code)
        return code;
    edgelock_client *c;
    edgelock_lock lk;
    code = make_client_kind(o, name, EDGELOCK_LATCH, &c, &lk);
    if (code) {
        deadline_stop();
        return code;
    }
    edgelock_status st;
    int set = 0;
    int64_t value = 0;
    const char *doing;
    if (strcmp(action, "set") == 0) {
        doing = "setting the count of";
        st = edgelock_latch_try_set_count(c, lk, count, &set);
    } else if (strcmp(action, "countdown") == 0) {
        doing = "counting down";
        st = edgelock_latch_count_down(c, lk, &value);
    } else {
        doing = "reading";
        st = edgelock_latch_count(c, lk, &value);
    }
    deadline_stop();
    edgelock_client_destroy(c);
    if (st != EDGELOCK_OK)
        return report_failure(o->shown_url, doing, label, st);
    if (strcmp(action, "set") == 0) {
        if (!set) {
            msg("%s exists already; its count was not changed", label);
            return EXIT_LATCH_EXISTS;
        }
        if (verbose)
            msg("%s set to %" PRId64, label, count);
        return 0;
    }
    printf("%" PRId64 "\n", value);
    return fflush(stdout) == 0 ? 0 : EXIT_OSERR;
}

/* What the await thread and the main thread share. */
struct await_state {
    pthread_mutex_t mu;
    pthread_t main_thread;
    edgelock_client *c;
    edgelock_lock lk;
    int64_t wait_ms;
    uint64_t owner; /* the await thread's edgelock_current_owner(), 0 until it is known */
    int cancelled;  /* main -> thread: a signal came, do not start the await */
    int done;       /* thread -> main */
    edgelock_status st;
};

static void *await_thread(void *arg)
{
    struct await_state *s = arg;
    pthread_mutex_lock(&s->mu);
    s->owner = edgelock_current_owner();
    int cancelled = s->cancelled;
    pthread_mutex_unlock(&s->mu);
    edgelock_status st = cancelled ? EDGELOCK_ERR_CANCELLED : edgelock_latch_await(s->c, s->lk, s->wait_ms);
    pthread_mutex_lock(&s->mu);
    s->st = st;
    s->done = 1;
    pthread_mutex_unlock(&s->mu);
    pthread_kill(s->main_thread, SIGUSR1);
    return NULL;
}

/* A signal while waiting: cancels the await thread's call (again and again:
 * a call that reaches the client after a cancel is not affected) until it
 * returns, at most ms. 1 when it did. */
static int cancel_await(struct await_state *s, int ms)
{
    pthread_mutex_lock(&s->mu);
    s->cancelled = 1;
    pthread_mutex_unlock(&s->mu);
    for (int waited = 0;; waited += 20) {
        pthread_mutex_lock(&s->mu);
        int done = s->done;
        uint64_t owner = s->owner;
        pthread_mutex_unlock(&s->mu);
        if (done)
            return 1;
        if (waited >= ms)
            return 0;
        if (owner)
            edgelock_cancel(s->c, owner);
        struct timespec pause = {0, 20 * 1000000L};
        nanosleep(&pause, NULL);
    }
}

static int latch_await(const struct options *o, const char *name, const char *label, int64_t wait_ms)
{
    /* INT, TERM and HUP, less any ignored at start: those stay ignored. */
    sigset_t handled;
    sigemptyset(&handled);
    add_unignored_stop_signals(&handled);
    sigaddset(&handled, SIGUSR1);
    /* Before any thread exists, so the client's loop thread inherits the mask. */
    pthread_sigmask(SIG_BLOCK, &handled, NULL);

    static struct await_state s; /* static: the await thread points at it */
    memset(&s, 0, sizeof(s));
    pthread_mutex_init(&s.mu, NULL);
    s.main_thread = pthread_self();
    s.wait_ms = wait_ms;
    int code = make_client_kind(o, name, EDGELOCK_LATCH, &s.c, &s.lk);
    if (code)
        return code;

    /* A cheap check first, as `run` makes one: an await without --wait would
     * otherwise wait forever for an unreachable Redis. An open latch needs
     * no wait at all. */
    int64_t count = 0;
    edgelock_status st = edgelock_latch_count(s.c, s.lk, &count);
    if (st != EDGELOCK_OK) {
        edgelock_client_destroy(s.c);
        return report_failure(o->shown_url, "reading", label, st);
    }
    if (count <= 0) {
        edgelock_client_destroy(s.c);
        if (verbose)
            msg("%s is open", label);
        return 0;
    }
    if (verbose) {
        if (wait_ms == EDGELOCK_WAIT_FOREVER)
            msg("%s has count %" PRId64 "; waiting for it to open", label, count);
        else
            msg("%s has count %" PRId64 "; waiting up to %" PRId64 " ms for it to open", label, count,
                wait_ms);
    }

    pthread_t th;
    if (pthread_create(&th, NULL, await_thread, &s) != 0) {
        edgelock_client_destroy(s.c);
        msg("cannot start a thread");
        return EXIT_OSERR;
    }
    uint64_t start = now_ms();
    for (;;) {
        siginfo_t si;
        int sig = sigwaitinfo(&handled, &si);
        if (sig < 0)
            continue; /* EINTR */
        if (sig == SIGUSR1) {
            pthread_mutex_lock(&s.mu);
            int done = s.done;
            pthread_mutex_unlock(&s.mu);
            if (done)
                break;
            continue;
        }
        /* INT, TERM, HUP: cancel the wait, so that the client leaves the
         * latch's channel and goes cleanly. Only if the call does not return
         * in time (a reply Redis does not send), leave at once. */
        if (!cancel_await(&s, (int)REDIS_TIMEOUT_MS + 1000)) {
            msg("%s received while waiting for %s; gave up", signal_name(sig), label);
            _exit(128 + sig);
        }
        pthread_join(th, NULL);
        edgelock_client_destroy(s.c);
        if (s.st == EDGELOCK_OK)
            msg("%s received; %s had just opened", signal_name(sig), label);
        else
            msg("%s received while waiting for %s; gave up", signal_name(sig), label);
        return 128 + sig;
    }
    pthread_join(th, NULL);
    edgelock_client_destroy(s.c);
    pthread_mutex_destroy(&s.mu);
    st = s.st;
    if (st == EDGELOCK_OK) {
        if (verbose)
            msg("%s opened after %" PRIu64 " ms", label, now_ms() - start);
        return 0;
    }
    if (st == EDGELOCK_ERR_WAIT_TIMEOUT) {
        msg("%s did not open within %" PRId64 " ms", label, wait_ms);
        return EXIT_NOT_ACQUIRED;
    }
    return report_failure(o->shown_url, "awaiting", label, st);
}

int cmd_latch(const struct options *o, const char *action, const char *name, int64_t count, int64_t wait_ms)
{
    char label[600];
    kind_label(label, sizeof(label), "latch", name);
    if (strcmp(action, "await") == 0)
        return latch_await(o, name, label, wait_ms);
    return latch_call(o, action, name, label, count);
}
