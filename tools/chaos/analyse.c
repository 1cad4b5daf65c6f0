// SPDX-License-Identifier: BSD-3-Clause
/* Per-window figures from the workers' events (analyse.h). */
#include <stdlib.h>
#include <string.h>

#include "analyse.h"

struct acq {
    int64_t recv, sent, epoch, token;
    pid_t pid;
};

/* Acquisitions of one lock, by receive time, with the newest pair received
 * so far at each position. */
struct acq_line {
    struct acq *a;
    struct acq *newest; /* newest[i]: the largest (epoch, token) among a[0..i] */
    size_t n;
};

static int pair_cmp(int64_t e1, int64_t t1, int64_t e2, int64_t t2)
{
    if (e1 != e2)
        return e1 < e2 ? -1 : 1;
    return (t1 > t2) - (t1 < t2);
}

static int by_pair(const void *x, const void *y)
{
    const struct acq *a = x, *b = y;
    return pair_cmp(a->epoch, a->token, b->epoch, b->token);
}

static int window_of(const struct run_record *run, int64_t t)
{
    int w = 0;
    for (int i = 1; i < run->nwindows; i++)
        if (run->windows[i].start_us <= t)
            w = i;
    return w;
}

/* Whether t falls between a data loss and a lease after it. */
static int after_data_loss(const struct run_record *run, int64_t t)
{
    for (int i = 0; i < run->nwindows; i++) {
        const struct window *w = &run->windows[i];
        if (plan_data_loss(w) && w->applied && t >= w->start_us &&
            t <= w->fault_end_us + run->lease_ms * 1000)
            return 1;
    }
    return 0;
}

static int line_build(const struct run_record *run, int lock, struct acq_line *l)
{
    memset(l, 0, sizeof(*l));
    size_t n = 0;
    for (size_t i = 0; i < run->nev; i++)
        if (run->ev[i].type == EV_ACQUIRE && run->ev[i].lock == lock)
            n++;
    l->a = calloc(n + 1, sizeof(*l->a));
    l->newest = calloc(n + 1, sizeof(*l->newest));
    if (!l->a || !l->newest)
        return -1;
    for (size_t i = 0; i < run->nev; i++) {
        const struct event *e = &run->ev[i];
        if (e->type != EV_ACQUIRE || e->lock != lock)
            continue;
        struct acq *a = &l->a[l->n];
        a->recv = e->t;
        a->sent = e->t2;
        a->epoch = e->epoch;
        a->token = e->token;
        a->pid = e->pid;
        l->newest[l->n] = *a;
        if (l->n > 0 && by_pair(&l->newest[l->n - 1], a) > 0)
            l->newest[l->n] = l->newest[l->n - 1];
        l->n++;
    }
    return 0;
}

/* How many acquisitions were received strictly before t. */
static size_t received_before(const struct acq_line *l, int64_t t)
{
    size_t lo = 0, hi = l->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (l->a[mid].recv < t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Whether some acquisition received before t carries a pair newer than (e, k). */
static int newer_known(const struct acq_line *l, int64_t t, int64_t e, int64_t k)
{
    size_t n = received_before(l, t);
    return n > 0 && pair_cmp(l->newest[n - 1].epoch, l->newest[n - 1].token, e, k) > 0;
}

static void count_event(const struct run_record *run, const struct acq_line *lines, const struct event *e,
                        struct window_stats *s)
{
    switch (e->type) {
    case EV_ACQUIRE:
        s->acquisitions++;
        if (newer_known(&lines[e->lock], e->t2, e->epoch, e->token))
            s->inversions++;
        break;
    case EV_ACQUIRE_FAIL: s->acquire_fails++; break;
    case EV_EPOCH_UNKNOWN: s->epoch_unknown++; break;
    case EV_WRITE:
        if (!e->a) {
            s->refused++;
            break;
        }
        s->accepted++;
        s->late += e->d;
        if (newer_known(&lines[e->lock], e->t, e->epoch, e->token))
            s->stale_accepted++;
        if (e->c && e->b > 0) {
            if (after_data_loss(run, e->t))
                s->overlaps_data_loss++;
            else
                s->overlaps++;
        }
        break;
    case EV_RELEASE:
        if (e->a == EDGELOCK_OK && (e->b != 1 || e->c == 1))
            s->leaked++;
        else if (e->a == EDGELOCK_ERR_LOST)
            s->unlock_lost++;
        else if (e->a == EDGELOCK_ERR_TIMEOUT || e->a == EDGELOCK_ERR_CONNECTION)
            s->unlock_uncertain++;
        else if (e->a != EDGELOCK_OK)
            s->unlock_other++;
        break;
    case EV_SKIP: s->skips++; break;
    case EV_LOST: s->lost++; break;
    case EV_SIDE_ERROR:
        if (e->a == SIDE_STORE)
            s->store_errors++;
        else
            s->run_id_errors++;
        break;
    default: break;
    }
}

static void count_duplicates(const struct run_record *run, struct acq_line *l, struct window_stats *stats)
{
    struct acq *sorted = calloc(l->n + 1, sizeof(*sorted));
    if (!sorted)
        return;
    memcpy(sorted, l->a, l->n * sizeof(*sorted));
    qsort(sorted, l->n, sizeof(*sorted), by_pair);
    for (size_t i = 1; i < l->n; i++)
        if (by_pair(&sorted[i - 1], &sorted[i]) == 0) {
            int64_t later = sorted[i].recv > sorted[i - 1].recv ? sorted[i].recv : sorted[i - 1].recv;
            stats[window_of(run, later)].duplicates++;
        }
    free(sorted);
}

static int64_t recovery(const struct acq_line *lines, const struct window *w)
{
    if (w->kind == FAULT_NONE || !w->applied)
        return RECOVERY_NONE;
    int64_t worst = 0;
    for (int lock = 0; lock < CHAOS_LOCKS; lock++) {
        if (!(plan_locks(w) & (1u << lock)))
            continue;
        size_t i = received_before(&lines[lock], w->fault_end_us);
        if (i == lines[lock].n)
            return RECOVERY_NEVER;
        int64_t ms = (lines[lock].a[i].recv - w->fault_end_us) / 1000;
        if (ms > worst)
            worst = ms;
    }
    return worst;
}

static void count_hung(const struct run_record *run, struct window_stats *stats)
{
    for (int i = 0; i < run->pool->nprocs; i++) {
        const struct pool_proc *pr = &run->pool->procs[i];
        if (!pr->hung)
            continue;
        int64_t last = 0;
        for (size_t k = 0; k < run->nev; k++)
            if (run->ev[k].pid == pr->pid)
                last = run->ev[k].t;
        stats[last ? window_of(run, last) : run->nwindows - 1].hung++;
    }
}

static void add(struct window_stats *t, const struct window_stats *s)
{
    t->acquisitions += s->acquisitions;
    t->acquire_fails += s->acquire_fails;
    t->epoch_unknown += s->epoch_unknown;
    t->overlaps += s->overlaps;
    t->overlaps_data_loss += s->overlaps_data_loss;
    t->accepted += s->accepted;
    t->refused += s->refused;
    t->stale_accepted += s->stale_accepted;
    t->late += s->late;
    t->inversions += s->inversions;
    t->duplicates += s->duplicates;
    t->lost += s->lost;
    t->skips += s->skips;
    t->run_id_errors += s->run_id_errors;
    t->store_errors += s->store_errors;
    t->hung += s->hung;
    t->leaked += s->leaked;
    t->unlock_lost += s->unlock_lost;
    t->unlock_uncertain += s->unlock_uncertain;
    t->unlock_other += s->unlock_other;
    if (s->recovery_ms != RECOVERY_NONE &&
        (t->recovery_ms == RECOVERY_NONE || s->recovery_ms > t->recovery_ms))
        t->recovery_ms = s->recovery_ms;
}

int analyse(const struct run_record *run, struct window_stats *stats, struct window_stats *total)
{
    struct acq_line lines[CHAOS_LOCKS];
    int rc = 0;
    memset(lines, 0, sizeof(lines));
    memset(stats, 0, (size_t)run->nwindows * sizeof(*stats));
    memset(total, 0, sizeof(*total));
    for (int lock = 0; lock < CHAOS_LOCKS; lock++)
        if (line_build(run, lock, &lines[lock]) != 0)
            rc = -1;
    if (rc == 0) {
        for (size_t i = 0; i < run->nev; i++) {
            const struct event *e = &run->ev[i];
            if (e->lock >= CHAOS_LOCKS || (e->lock < 0 && e->type != EV_LOST))
                continue;
            count_event(run, lines, e, &stats[window_of(run, e->t)]);
        }
        for (int lock = 0; lock < CHAOS_LOCKS; lock++)
            count_duplicates(run, &lines[lock], stats);
        for (int i = 0; i < run->nwindows; i++)
            stats[i].recovery_ms = recovery(lines, &run->windows[i]);
        count_hung(run, stats);
        total->recovery_ms = RECOVERY_NONE;
        for (int i = 0; i < run->nwindows; i++)
            add(total, &stats[i]);
    }
    for (int lock = 0; lock < CHAOS_LOCKS; lock++) {
        free(lines[lock].a);
        free(lines[lock].newest);
    }
    return rc;
}
