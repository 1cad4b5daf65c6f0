// SPDX-License-Identifier: BSD-3-Clause
/*
 * Event-loop integration: edgelock on the application's own libevent base.
 *
 * A gateway application that already runs a libevent loop passes its
 * event_base to edgelock_client_create(). No thread is started; every call is
 * an *_async call made on the loop's thread, and every callback runs on it.
 *
 * The story:
 *  1. The application takes the lock "example:firmware-update" under the
 *     watchdog (lease 1500 ms, renewed every 500 ms) and starts its work: a
 *     timer that ticks every 250 ms and reads the lock's TTL. The TTL stays
 *     near the lease because the watchdog renews it.
 *  2. After 2 s an "operator" (a second client on the same loop, doing what
 *     `edgelock unlock --force` does) deletes the lock.
 *  3. The next renewal finds the lock gone and the on_lock_lost callback fires:
 *     the application stops its work at once. What was protected by the lock
 *     may no longer be; this is where a firmware updater would abort.
 *
 * Run: EDGELOCK_URL=redis://127.0.0.1:6379 ./example_event_loop
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include <edgelock/edgelock.h>
#include <event2/event.h>

#define LEASE_MS 1500
#define TASK_ID 1 /* async calls name their owner: any uint64_t, e.g. a task id */

struct app {
    struct event_base *base;
    edgelock_client *client;   /* the application */
    edgelock_client *operator; /* stands in for an operator's `edgelock unlock --force` */
    edgelock_lock lock, operator_lock;
    struct event *tick, *deadline;
    int ticks;
    int forced;         /* the operator has struck */
    int64_t lowest_ttl; /* until then: stays above 0 only if the watchdog renews */
    int lost;
    edgelock_status unlock_status;
};

static void stop(struct app *a)
{
    event_del(a->tick);
    event_base_loopexit(a->base, NULL); /* returns from event_base_dispatch() */
}

static void on_unlocked(edgelock_client *c, edgelock_lock lk, edgelock_status st, int64_t value, void *user)
{
    struct app *a = user;
    (void)c, (void)lk, (void)value;
    /* After a loss the hold is gone: unlock reports EDGELOCK_ERR_LOST. */
    printf("unlock after the loss: %s\n", edgelock_status_str(st));
    a->unlock_status = st;
    stop(a);
}

/* Runs on the loop thread when the watchdog finds the lock gone. Async calls
 * are allowed here. */
static void on_lock_lost(edgelock_client *c, edgelock_lock lk, uint64_t owner, void *user)
{
    struct app *a = user;
    printf("LOCK LOST (owner %" PRIu64 "): stopping the work now\n", owner);
    a->lost = 1;
    event_del(a->tick);
    /* Give the hold back. The library may already know the answer: then the
     * call returns it (EDGELOCK_ERR_LOST) and on_unlocked never fires. */
    edgelock_status st = edgelock_unlock_async(c, lk, owner, on_unlocked, a);
    if (st != EDGELOCK_OK)
        on_unlocked(c, lk, st, 0, a);
}

static void on_forced(edgelock_client *c, edgelock_lock lk, edgelock_status st, int64_t deleted, void *user)
{
    (void)c, (void)lk, (void)user;
    printf("operator: force unlock: %s (deleted %" PRId64 ")\n", edgelock_status_str(st), deleted);
}

static void on_ttl(edgelock_client *c, edgelock_lock lk, edgelock_status st, int64_t ttl, void *user)
{
    struct app *a = user;
    (void)c, (void)lk;
    if (st != EDGELOCK_OK || a->lost)
        return;
    printf("  working... lock TTL %" PRId64 " ms\n", ttl);
    if (!a->forced && ttl < a->lowest_ttl)
        a->lowest_ttl = ttl;
}

/* The application's work, one step every 250 ms while it holds the lock. */
static void on_tick(evutil_socket_t fd, short what, void *arg)
{
    struct app *a = arg;
    (void)fd, (void)what;
    a->ticks++;
    edgelock_remaining_ttl_async(a->client, a->lock, on_ttl, a);
    if (a->ticks == 8) { /* 2 s: longer than the lease, so the watchdog has renewed it */
        a->forced = 1;
        edgelock_force_unlock_async(a->operator, a->operator_lock, on_forced, a);
    }
}

static void on_locked(edgelock_client *c, edgelock_lock lk, edgelock_status st, int64_t value, void *user)
{
    struct app *a = user;
    (void)c, (void)lk, (void)value;
    if (st != EDGELOCK_OK) {
        printf("lock: %s\n", edgelock_status_str(st));
        stop(a);
        return;
    }
    printf("acquired; the watchdog renews the %d ms lease every %d ms\n", LEASE_MS, LEASE_MS / 3);
    struct timeval every = {0, 250 * 1000};
    event_add(a->tick, &every);
}

static void on_deadline(evutil_socket_t fd, short what, void *arg)
{
    (void)fd, (void)what;
    printf("the lock loss was not reported in time\n");
    stop(arg);
}

int main(void)
{
    struct app a = {0};
    a.lowest_ttl = INT64_MAX;
    const char *url = getenv("EDGELOCK_URL");
    if (!url)
        url = "redis://127.0.0.1:6379";

    setvbuf(stdout, NULL, _IOLBF, 0); /* line by line, also into a pipe */
    /* The application's own loop, with timers to the millisecond (see
       edgelock_client_create in edgelock.h). */
    struct event_config *ec = event_config_new();
    if (!ec)
        return 1;
    event_config_set_flag(ec, EVENT_BASE_FLAG_PRECISE_TIMER);
    a.base = event_base_new_with_config(ec);
    event_config_free(ec);
    if (!a.base)
        return 1;

    edgelock_config cfg;
    edgelock_config_init(&cfg);
    cfg.url = url;
    cfg.watchdog_lease_ms = LEASE_MS;
    cfg.on_lock_lost = on_lock_lost; /* called on this loop's thread */
    cfg.on_lock_lost_user = &a;
    if (edgelock_client_create(&cfg, a.base, &a.client) != EDGELOCK_OK)
        return 1;

    edgelock_config_init(&cfg);
    cfg.url = url;
    if (edgelock_client_create(&cfg, a.base, &a.operator) != EDGELOCK_OK)
        return 1;

    edgelock_lock_new(a.client, "example:firmware-update", 23, &a.lock);
    edgelock_lock_new(a.operator, "example:firmware-update", 23, &a.operator_lock);

    a.tick = event_new(a.base, -1, EV_PERSIST, on_tick, &a);
    a.deadline = evtimer_new(a.base, on_deadline, &a);
    struct timeval ten_s = {10, 0};
    evtimer_add(a.deadline, &ten_s);

    /* Wait up to 5 s for the lock, then keep it with the watchdog. The callback
     * fires exactly once, on this thread, from inside event_base_dispatch(). */
    edgelock_lock_async(a.client, a.lock, TASK_ID, 5000, EDGELOCK_LEASE_WATCHDOG, on_locked, &a);

    event_base_dispatch(a.base);

    /* Tear down on the loop's thread (the loop is no longer running). */
    edgelock_lock_free(a.client, a.lock);
    edgelock_lock_free(a.operator, a.operator_lock);
    edgelock_client_destroy(a.client);
    edgelock_client_destroy(a.operator);
    event_free(a.tick);
    event_free(a.deadline);
    event_base_free(a.base);

    int renewed = a.lowest_ttl != INT64_MAX && a.lowest_ttl > 0;
    printf("watchdog kept the lock alive past its lease: %s; loss reported: %s\n", renewed ? "yes" : "no",
           a.lost ? "yes" : "no");
    return renewed && a.lost && a.unlock_status == EDGELOCK_ERR_LOST ? 0 : 1;
}
