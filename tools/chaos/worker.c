// SPDX-License-Identifier: BSD-3-Clause
/* A worker process's life (worker.h). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "events.h"
#include "worker.h"

/* The lost callback runs on the client's loop thread and needs the worker. */
static struct worker *the_worker;

static void on_lost(edgelock_client *client, edgelock_lock lock, uint64_t owner, void *user)
{
    (void)client;
    (void)owner;
    (void)user;
    int which = -1;
    for (int i = 0; i < CHAOS_LOCKS; i++)
        if (the_worker->locks[i].id == lock.id)
            which = i;
    struct event e = {.type = EV_LOST, .lock = which, .t = mono_us()};
    events_put(the_worker->events_fd, &e);
}

static void fail_start(const char *what, edgelock_status st)
{
    fprintf(stderr, "edgelock_chaos: worker %ld: %s: %s\n", (long)getpid(), what, edgelock_status_str(st));
    exit(3);
}

static void start(struct worker *w, const struct worker_config *cfg, int slot)
{
    w->cfg = cfg;
    w->slot = slot;
    w->pid = getpid();
    w->events_fd = events_open(cfg->dir, w->pid);
    if (w->events_fd < 0)
        fail_start("cannot open its event file", EDGELOCK_OK);

    char url[64], client_id[32];
    snprintf(url, sizeof(url), "redis://127.0.0.1:%u", cfg->lock_port);
    snprintf(client_id, sizeof(client_id), CHAOS_CLIENT_PREFIX "%ld", (long)w->pid);
    edgelock_config ec;
    edgelock_config_init(&ec);
    ec.url = url;
    ec.client_id = client_id;
    ec.watchdog_lease_ms = (uint32_t)cfg->lease_ms;
    ec.command_timeout_ms = cfg->command_timeout_ms;
    /* WAIT must end before the command times out (edgelock.h). */
    ec.wait_replicas = cfg->wait_replicas;
    ec.wait_replicas_timeout_ms = cfg->command_timeout_ms / 2;
    ec.on_lock_lost = on_lost;
    the_worker = w;
    edgelock_status st = edgelock_client_create(&ec, NULL, &w->client);
    if (st != EDGELOCK_OK)
        fail_start("edgelock_client_create", st);
    for (int i = 0; i < CHAOS_LOCKS; i++) {
        st = edgelock_lock_new_kind(w->client, EDGELOCK_FENCED, cfg->lock_names[i],
                                    strlen(cfg->lock_names[i]), &w->locks[i]);
        if (st != EDGELOCK_OK)
            fail_start("edgelock_lock_new_kind", st);
    }
    w->owner = edgelock_current_owner();
    snprintf(w->field, sizeof(w->field), "%s:%llu", client_id, (unsigned long long)w->owner);

    w->lock_redis = malloc(sizeof(*w->lock_redis));
    w->store = malloc(sizeof(*w->store));
    if (!w->lock_redis || !w->store)
        fail_start("out of memory", EDGELOCK_ERR_NO_MEMORY);
    /* The run_id reads give up as soon as the library's commands would. */
    resp_init(w->lock_redis, cfg->lock_port, (int)cfg->command_timeout_ms);
    /* The store is never faulted: a generous bound that only catches a hang. */
    resp_init(w->store, cfg->store_port, 10000);
    memset(&w->epoch, 0, sizeof(w->epoch));
    w->epoch.lock_redis = w->lock_redis;
    w->epoch.store = w->store;
    w->epoch.scripts = &cfg->scripts;
    w->epoch.disabled = cfg->no_epoch;
}

void worker_run(const struct worker_config *cfg, int slot)
{
    /* Die with the checker if it dies first; a normal run ends by the clock. */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    /* The checker's handlers came with fork. A worker ends when told through
     * cfg->stop (Ctrl-C reaches the checker, which tells them), and SIGPIPE
     * keeps its default, as in a gateway that never changed it. */
    signal(SIGINT, SIG_IGN);
    signal(SIGTERM, SIG_DFL);
    signal(SIGPIPE, SIG_DFL);
    static struct worker w;
    start(&w, cfg, slot);
    atomic_store(&cfg->shared->slot[slot].inside, -1);
    atomic_store(&cfg->shared->slot[slot].pid, (int)w.pid);
    struct event e = {.type = EV_START, .lock = -1, .t = mono_us()};
    events_put(w.events_fd, &e);

    unsigned seed = (unsigned)w.pid;
    for (unsigned k = (unsigned)w.pid; !atomic_load(&cfg->shared->stop); k++) {
        hold_once(&w, (int)(k % CHAOS_LOCKS));
        /* A short random pause lets the others in between two holds. */
        struct timespec ts = {0, (long)(rand_r(&seed) % 10) * 1000000L};
        nanosleep(&ts, NULL);
    }

    for (int i = 0; i < CHAOS_LOCKS; i++) {
        edgelock_status st = edgelock_lock_free(w.client, w.locks[i]);
        if (st != EDGELOCK_OK)
            fprintf(stderr, "edgelock_chaos: worker %ld: lock_free: %s\n", (long)w.pid,
                    edgelock_status_str(st));
    }
    edgelock_client_destroy(w.client);
    resp_close(w.lock_redis);
    resp_close(w.store);
    free(w.lock_redis);
    free(w.store);
    e.type = EV_EXIT;
    e.t = mono_us();
    events_put(w.events_fd, &e);
    close(w.events_fd);
    exit(0);
}
