// SPDX-License-Identifier: BSD-3-Clause
/* The injector (faults.h). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "faults.h"

/* Whether the lock's hash in Redis has an owner field of worker pid. */
static int holds_in_redis(struct injector *inj, int lock, pid_t pid)
{
    struct resp_reply r;
    char prefix[32];
    int n = snprintf(prefix, sizeof(prefix), CHAOS_CLIENT_PREFIX "%ld:", (long)pid);
    if (resp_callv(inj->admin, &r, "HGETALL", inj->lock_names[lock], NULL) != 0 || r.type != RESP_ARRAY)
        return 0;
    for (size_t i = 0; i + 1 < r.n; i += 2) {
        const struct resp_reply *f = &r.elems[i];
        if (f->type == RESP_STRING && f->len > (size_t)n && memcmp(f->str, prefix, (size_t)n) == 0)
            return 1;
    }
    return 0;
}

/* Stops a worker inside lock's critical section and returns its pid, or -1
 * when none was caught within a few seconds. */
static pid_t stop_holder(struct injector *inj, int lock)
{
    int64_t give_up = mono_us() + 5000000;
    while (mono_us() < give_up) {
        for (int s = 0; s < inj->pool->n; s++) {
            pid_t pid = inj->pool->slots[s];
            if (atomic_load(&inj->shared->slot[s].pid) != (int)pid ||
                atomic_load(&inj->shared->slot[s].inside) != lock)
                continue;
            if (pool_stop(inj->pool, pid) != 0)
                continue;
            if (atomic_load(&inj->shared->slot[s].inside) == lock && holds_in_redis(inj, lock, pid))
                return pid;
            kill(pid, SIGCONT);
        }
        nap_ms(2);
    }
    return -1;
}

static void client_kill(struct injector *inj, struct window *w, const char *type)
{
    struct resp_reply r;
    if (resp_callv(inj->admin, &r, "CLIENT", "KILL", "TYPE", type, NULL) == 0 && r.type == RESP_INTEGER)
        snprintf(w->note, sizeof(w->note), "%lld %s connections killed", (long long)r.integer, type);
    else
        snprintf(w->note, sizeof(w->note), "CLIENT KILL TYPE %s failed", type);
}

int fault_apply(struct injector *inj, struct window *w)
{
    struct resp_reply r;
    char ms[24];
    w->applied = 1;
    switch (w->kind) {
    case FAULT_NONE: break;
    case FAULT_REDIS_STOP:
        kill(inj->lock_server->pid, SIGSTOP);
        nap_ms((long)w->param_ms);
        kill(inj->lock_server->pid, SIGCONT);
        snprintf(w->note, sizeof(w->note), "redis-server %ld stopped", (long)inj->lock_server->pid);
        break;
    case FAULT_REDIS_RESTART: {
        char old[sizeof(inj->lock_server->run_id)];
        memcpy(old, inj->lock_server->run_id, sizeof(old));
        if (server_restart(inj->lock_server) != 0)
            return -1;
        resp_close(inj->admin);
        snprintf(w->note, sizeof(w->note), "run_id %.8s.. -> %.8s..", old, inj->lock_server->run_id);
        break;
    }
    case FAULT_FAILOVER:
        if (failover_apply(inj, w) != 0)
            return -1;
        break;
    case FAULT_KILL_NORMAL: client_kill(inj, w, "normal"); break;
    case FAULT_KILL_PUBSUB: client_kill(inj, w, "pubsub"); break;
    case FAULT_PAUSE_WRITE:
        snprintf(ms, sizeof(ms), "%ld", (long)w->param_ms);
        if (resp_callv(inj->admin, &r, "CLIENT", "PAUSE", ms, "WRITE", NULL) != 0 || !resp_is(&r, "OK")) {
            w->applied = 0;
            snprintf(w->note, sizeof(w->note), "CLIENT PAUSE failed");
            break;
        }
        nap_ms((long)w->param_ms);
        snprintf(w->note, sizeof(w->note), "writes paused");
        break;
    case FAULT_HOLDER_FREEZE:
    case FAULT_HOLDER_KILL: {
        pid_t pid = stop_holder(inj, w->lock);
        if (pid < 0) {
            w->applied = 0;
            snprintf(w->note, sizeof(w->note), "no holder caught");
            break;
        }
        if (w->kind == FAULT_HOLDER_KILL) {
            snprintf(w->note, sizeof(w->note), "worker %ld killed, replaced", (long)pid);
            if (pool_kill_and_replace(inj->pool, pid) != 0)
                return -1;
            break;
        }
        nap_ms((long)w->param_ms);
        kill(pid, SIGCONT);
        snprintf(w->note, sizeof(w->note), "worker %ld frozen", (long)pid);
        break;
    }
    }
    w->fault_end_us = mono_us();
    return 0;
}
