// SPDX-License-Identifier: BSD-3-Clause
/*
 * edgelock_chaos: the fault-injection checker of issue 12 (docs/RELIABILITY.md).
 *
 * The checker process starts two redis-servers (the lock Redis the faults hit,
 * the store Redis nothing hits), forks the workers (worker.c, hold.c: the only
 * code that uses edgelock, through the public header), applies one fault per
 * window (faults.c), tells the workers to stop, waits for them to leave, and
 * turns their event files into the report (analyse.c, report.c).
 *
 * Files: options.c (command line), plan.c (fault windows), server.c
 * (redis-server processes), pool.c (worker processes), faults.c (injector),
 * failover.c (its failover fault),
 * resp.c (the checker's own Redis client), store.c (the fenced store's
 * scripts), epoch.c (the token epoch), events.c (event files), keys.c (keys
 * left), clock.c.
 */
#define _GNU_SOURCE /* nftw */
#include <errno.h>
#include <ftw.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "analyse.h"
#include "clock.h"
#include "faults.h"
#include "keys.h"
#include "options.h"
#include "report.h"
#include "server.h"
#include "store.h"

static const char *const kLockNames[CHAOS_LOCKS] = {"chaos:wd", "chaos:fixed"};

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
    interrupted = sig;
}

/* Sleeps until t (CLOCK_MONOTONIC us), reaping crashed workers meanwhile. */
static void quiet_until(struct pool *pool, int64_t t)
{
    while (!interrupted) {
        pool_reap(pool);
        int64_t left = t - mono_us();
        if (left <= 0)
            break;
        nap_ms(left > 100000 ? 100 : (long)(left / 1000) + 1);
    }
}

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

/* Waits until a replica has loaded its master's data (master_link_status). */
static int wait_synced(struct server *replica)
{
    static struct resp_conn c; /* 100 kB: not on the stack */
    resp_init(&c, replica->port, 1000);
    int rc = -1;
    for (int i = 0; i < 500 && rc != 0; i++) {
        struct resp_reply r;
        char link[16];
        if (resp_callv(&c, &r, "INFO", "replication", NULL) == 0 &&
            resp_info_field(&r, "master_link_status", link, sizeof(link)) == 0 && strcmp(link, "up") == 0)
            rc = 0;
        else
            nap_ms(10);
    }
    resp_close(&c);
    if (rc != 0)
        fprintf(stderr, "edgelock_chaos: the replica did not sync with the lock Redis\n");
    return rc;
}

struct run {
    struct options opt;
    char dir[256];
    struct server lock_server, store_server, replica;
    struct resp_conn *lock_admin, *store_admin, *replica_admin;
    struct worker_config wcfg;
    struct worker_shared *shared;
    struct pool pool;
};

static int setup(struct run *r)
{
    const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    snprintf(r->dir, sizeof(r->dir), "%s/edgelock-chaos.XXXXXX", tmp);
    if (!mkdtemp(r->dir)) {
        fprintf(stderr, "edgelock_chaos: mkdtemp %s: %s\n", r->dir, strerror(errno));
        return -1;
    }
    char sub[300];
    snprintf(sub, sizeof(sub), "%s/store", r->dir);
    if (server_start(&r->store_server, sub, 0) != 0)
        return -1;
    snprintf(sub, sizeof(sub), "%s/lock", r->dir);
    if (server_start(&r->lock_server, sub, 0) != 0)
        return -1;
    if (r->opt.replica) {
        snprintf(sub, sizeof(sub), "%s/replica", r->dir);
        r->replica.replica_of = r->lock_server.port;
        if (server_start(&r->replica, sub, 0) != 0 || wait_synced(&r->replica) != 0)
            return -1;
    }
    r->lock_admin = malloc(sizeof(*r->lock_admin));
    r->store_admin = malloc(sizeof(*r->store_admin));
    r->replica_admin = malloc(sizeof(*r->replica_admin));
    /* Shared with every worker, forked later (worker.h). */
    r->shared = mmap(NULL, sizeof(*r->shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (!r->lock_admin || !r->store_admin || !r->replica_admin || r->shared == MAP_FAILED) {
        fprintf(stderr, "edgelock_chaos: out of memory\n");
        return -1;
    }
    atomic_init(&r->shared->stop, 0);
    for (int i = 0; i < CHAOS_MAX_WORKERS; i++) {
        atomic_init(&r->shared->slot[i].pid, 0);
        atomic_init(&r->shared->slot[i].inside, -1);
    }
    resp_init(r->lock_admin, r->lock_server.port, 5000);
    resp_init(r->store_admin, r->store_server.port, 10000);
    resp_init(r->replica_admin, r->replica.port, 10000);
    struct worker_config *c = &r->wcfg;
    if (store_load(r->store_admin, &c->scripts) != 0)
        return -1;
    c->dir = r->dir;
    c->lock_port = r->lock_server.port;
    c->store_port = r->store_server.port;
    for (int i = 0; i < CHAOS_LOCKS; i++)
        c->lock_names[i] = kLockNames[i];
    c->lease_ms = r->opt.lease_ms;
    c->command_timeout_ms = (uint32_t)r->opt.command_timeout_ms;
    c->writes_per_hold = r->opt.writes_per_hold;
    c->write_gap_ms = r->opt.write_gap_ms;
    c->wait_ms = r->opt.wait_ms;
    c->margin_ms = r->opt.margin_ms;
    c->shared = r->shared;
    c->no_epoch = r->opt.no_epoch;
    c->wait_replicas = (uint32_t)r->opt.wait_replicas;
    return 0;
}

/* The windows, one after the other. 0, or -1 when the run cannot go on. */
static int run_windows(struct run *r)
{
    struct options *o = &r->opt;
    struct injector inj = {&r->lock_server, r->lock_admin, kLockNames,
                           &r->pool,        r->shared,     r->opt.replica ? &r->replica : NULL,
                           r->replica_admin};
    const int64_t t0 = mono_us();
    o->windows[0].start_us = t0;
    o->windows[0].fault_end_us = t0;
    if (pool_start(&r->pool, &r->wcfg, o->workers) != 0)
        return -1;
    printf("[%6.1fs] window 0: warm-up, %d workers\n", 0.0, o->workers);
    fflush(stdout);
    quiet_until(&r->pool, t0 + o->warmup_ms * 1000);
    for (int i = 1; i < o->nwindows && !interrupted; i++) {
        struct window *w = &o->windows[i];
        char name[40];
        w->start_us = mono_us();
        o->windows[i - 1].end_us = w->start_us;
        plan_name(w, name, sizeof(name));
        printf("[%6.1fs] window %d: %s ...", (double)(w->start_us - t0) / 1e6, i, name);
        fflush(stdout);
        if (fault_apply(&inj, w) != 0)
            return -1;
        printf(" %s\n", w->applied ? w->note : "NOT APPLIED");
        fflush(stdout);
        quiet_until(&r->pool, w->fault_end_us + o->quiet_ms * 1000);
    }
    o->windows[o->nwindows - 1].end_us = mono_us();
    return 0;
}

static int finish(struct run *r)
{
    struct options *o = &r->opt;
    atomic_store(&r->shared->stop, 1);
    int64_t end = mono_us();
    int hung = pool_finish(&r->pool, end + o->exit_bound_ms * 1000);
    printf("[%6.1fs] end: workers told to stop; %d did not leave within %lld ms\n",
           (double)(end - o->windows[0].start_us) / 1e6, hung, (long long)o->exit_bound_ms);

    struct leftovers left;
    keys_left(r->lock_admin, kLockNames, CHAOS_LOCKS, &left);
    struct store_counts sc = {0, 0, 1};
    for (int i = 0; i < CHAOS_LOCKS; i++) {
        int64_t a = 0, f = 0;
        if (store_totals(r->store_admin, i, &a, &f) != 0)
            sc.read_ok = 0;
        sc.accepted += a;
        sc.refused += f;
    }

    struct run_record rec = {o->windows, o->nwindows, NULL, 0, &r->pool, o->lease_ms};
    struct event *ev = NULL;
    size_t nev = 0;
    static struct window_stats stats[PLAN_MAX_WINDOWS];
    struct window_stats total;
    if (events_load(r->dir, &ev, &nev) != 0) {
        fprintf(stderr, "edgelock_chaos: cannot read the event files in %s\n", r->dir);
        free(ev);
        return 2;
    }
    rec.ev = ev;
    rec.nev = nev;
    if (analyse(&rec, stats, &total) != 0) {
        fprintf(stderr, "edgelock_chaos: out of memory\n");
        free(ev);
        return 2;
    }
    report_print(stdout, &rec, stats, &total, &left, &sc);
    int failures = report_verdict(stdout, &rec, stats, &total, o->recovery_bound_ms);
    free(ev);
    return failures ? 1 : 0;
}

int main(int argc, char **argv)
{
    static struct run r;
    int rc = options_parse(argc, argv, &r.opt);
    if (rc != 0)
        return rc == 1 ? 0 : rc;
    r.lock_server.pid = r.store_server.pid = r.replica.pid = -1;
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    /* The admin connections may write to a server that was just killed. */
    signal(SIGPIPE, SIG_IGN);

    rc = 2;
    if (setup(&r) == 0) {
        printf("edgelock_chaos: %d workers; lock Redis 127.0.0.1:%u (faulted), store Redis 127.0.0.1:%u; "
               "locks %s (watchdog) and %s (fixed), lease %lld ms, command timeout %lld ms%s%s; dir %s\n",
               r.opt.workers, r.lock_server.port, r.store_server.port, kLockNames[0], kLockNames[1],
               (long long)r.opt.lease_ms, (long long)r.opt.command_timeout_ms,
               r.opt.no_epoch ? "; NO EPOCH" : "",
               r.opt.replica ? (r.opt.wait_replicas ? "; a replica, wait_replicas 1" : "; a replica") : "",
               r.dir);
        if (run_windows(&r) == 0 || interrupted)
            rc = finish(&r);
        else
            finish(&r);
    }
    if (interrupted) {
        fprintf(stderr, "edgelock_chaos: interrupted\n");
        rc = 128 + interrupted;
    }
    server_kill(&r.lock_server);
    server_kill(&r.store_server);
    server_kill(&r.replica);
    if (r.dir[0] && (r.opt.keep || rc != 0))
        printf("edgelock_chaos: the run's directory (event files, Redis logs) is kept: %s\n", r.dir);
    else if (r.dir[0])
        nftw(r.dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    return rc;
}
