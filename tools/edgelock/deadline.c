// SPDX-License-Identifier: BSD-3-Clause
/* The overall deadline of a subcommand's Redis calls (deadline.h). */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "common.h"
#include "deadline.h"

static struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_t thread;
    int running;
    int stopped;
    uint64_t at_ms; /* now_ms() clock */
    uint64_t budget_ms;
    uint32_t call_ms;
    int exit_code;
    char what[700];
    char why_late[400];
} dl = {.mu = PTHREAD_MUTEX_INITIALIZER};

static void *watchdog(void *arg)
{
    (void)arg;
    struct timespec ts = {(time_t)(dl.at_ms / 1000), (long)(dl.at_ms % 1000) * 1000000L};
    pthread_mutex_lock(&dl.mu);
    while (!dl.stopped && now_ms() < dl.at_ms)
        pthread_cond_timedwait(&dl.cv, &dl.mu, &ts);
    if (!dl.stopped) {
        /* Still holding the mutex: deadline_stop() cannot return, so nothing
         * is printed after this message. The library's threads are left as
         * they are; the process ends here. */
        msg("%s did not finish within %" PRIu64 " ms: %s", dl.what, dl.budget_ms, dl.why_late);
        fflush(stdout);
        _exit(dl.exit_code);
    }
    pthread_mutex_unlock(&dl.mu);
    return NULL;
}

int deadline_start(unsigned calls, uint32_t call_ms, const char *what, const char *why_late, int exit_code)
{
    dl.call_ms = call_ms;
    dl.budget_ms = (uint64_t)calls * call_ms;
    dl.at_ms = now_ms() + dl.budget_ms;
    dl.exit_code = exit_code;
    dl.stopped = 0;
    snprintf(dl.what, sizeof(dl.what), "%s", what);
    snprintf(dl.why_late, sizeof(dl.why_late), "%s", why_late);
    /* The timed wait runs on the monotonic clock, as now_ms() does. */
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&dl.cv, &ca);
    pthread_condattr_destroy(&ca);
    if (pthread_create(&dl.thread, NULL, watchdog, NULL) != 0) {
        pthread_cond_destroy(&dl.cv);
        msg("cannot start a thread");
        return EXIT_OSERR;
    }
    dl.running = 1;
    return 0;
}

int deadline_room(void)
{
    return now_ms() + dl.call_ms <= dl.at_ms;
}

void deadline_stop(void)
{
    if (!dl.running)
        return;
    pthread_mutex_lock(&dl.mu);
    dl.stopped = 1;
    pthread_cond_signal(&dl.cv);
    pthread_mutex_unlock(&dl.mu);
    pthread_join(dl.thread, NULL);
    pthread_cond_destroy(&dl.cv);
    dl.running = 0;
}
