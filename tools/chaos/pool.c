// SPDX-License-Identifier: BSD-3-Clause
/* The worker processes, from the checker's side (pool.h). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "events.h"
#include "pool.h"

static struct pool_proc *proc_of(struct pool *p, pid_t pid)
{
    for (int i = 0; i < p->nprocs; i++)
        if (p->procs[i].pid == pid)
            return &p->procs[i];
    return NULL;
}

static int spawn(struct pool *p, int slot)
{
    if (p->nprocs == POOL_MAX_PROCS) {
        fprintf(stderr, "edgelock_chaos: more than %d worker processes\n", POOL_MAX_PROCS);
        return -1;
    }
    /* The child inherits stdio buffers: empty them so nothing prints twice. */
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "edgelock_chaos: fork: %s\n", strerror(errno));
        return -1;
    }
    if (pid == 0)
        worker_run(p->cfg, slot);
    p->slots[slot] = pid;
    struct pool_proc *pr = &p->procs[p->nprocs++];
    memset(pr, 0, sizeof(*pr));
    pr->pid = pid;
    pr->slot = slot;
    return 0;
}

int pool_start(struct pool *p, const struct worker_config *cfg, int n)
{
    memset(p, 0, sizeof(*p));
    p->cfg = cfg;
    p->n = n;
    for (int i = 0; i < n; i++)
        if (spawn(p, i) != 0)
            return -1;
    return 0;
}

int pool_slot_of(const struct pool *p, pid_t pid)
{
    for (int i = 0; i < p->n; i++)
        if (p->slots[i] == pid)
            return i;
    return -1;
}

static void note_done(struct pool *p, pid_t pid, int status)
{
    struct pool_proc *pr = proc_of(p, pid);
    if (!pr)
        return;
    pr->done = 1;
    pr->status = status;
    pr->done_us = mono_us();
}

int pool_kill_and_replace(struct pool *p, pid_t pid)
{
    int slot = pool_slot_of(p, pid);
    struct pool_proc *pr = proc_of(p, pid);
    if (slot < 0 || !pr)
        return -1;
    pr->killed = 1;
    kill(pid, SIGKILL);
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    note_done(p, pid, status);
    return spawn(p, slot);
}

int pool_stop(struct pool *p, pid_t pid)
{
    int status;
    pid_t got;
    kill(pid, SIGSTOP);
    /* kill() only posts the signal: a stopped worker's state can be read
     * (shared slot, Redis) only once waitpid has seen it stop. */
    while ((got = waitpid(pid, &status, WUNTRACED)) < 0 && errno == EINTR) {
    }
    if (got == pid && WIFSTOPPED(status))
        return 0;
    if (got == pid) {
        note_done(p, pid, status);
        int slot = pool_slot_of(p, pid);
        if (slot >= 0 && !(WIFEXITED(status) && WEXITSTATUS(status) == 0))
            spawn(p, slot);
    }
    return -1;
}

int pool_reap(struct pool *p)
{
    int n = 0, status;
    for (int i = 0; i < p->nprocs; i++) {
        struct pool_proc *pr = &p->procs[i];
        if (pr->done || waitpid(pr->pid, &status, WNOHANG) != pr->pid)
            continue;
        note_done(p, pr->pid, status);
        n++;
        /* A worker that left normally has seen the run's end: no successor. */
        int slot = pool_slot_of(p, pr->pid);
        if (slot >= 0 && !(WIFEXITED(status) && WEXITSTATUS(status) == 0))
            spawn(p, slot);
    }
    return n;
}

int pool_finish(struct pool *p, int64_t bound_us)
{
    for (;;) {
        int left = 0, status;
        for (int i = 0; i < p->nprocs; i++) {
            struct pool_proc *pr = &p->procs[i];
            if (pr->done)
                continue;
            if (waitpid(pr->pid, &status, WNOHANG) == pr->pid)
                note_done(p, pr->pid, status);
            else
                left++;
        }
        if (left == 0 || mono_us() >= bound_us)
            break;
        struct timespec ts = {0, 50 * 1000000L};
        nanosleep(&ts, NULL);
    }
    int hung = 0;
    for (int i = 0; i < p->nprocs; i++) {
        struct pool_proc *pr = &p->procs[i];
        if (pr->done)
            continue;
        pr->hung = 1;
        hung++;
        kill(pr->pid, SIGKILL);
        int status;
        while (waitpid(pr->pid, &status, 0) < 0 && errno == EINTR) {
        }
        note_done(p, pr->pid, status);
    }
    return hung;
}

int pool_crashes(const struct pool *p)
{
    int n = 0;
    for (int i = 0; i < p->nprocs; i++) {
        const struct pool_proc *pr = &p->procs[i];
        if (pr->done && !pr->killed && !pr->hung && !(WIFEXITED(pr->status) && WEXITSTATUS(pr->status) == 0))
            n++;
    }
    return n;
}
