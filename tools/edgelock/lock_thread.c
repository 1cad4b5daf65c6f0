// SPDX-License-Identifier: BSD-3-Clause
/* The lock thread of `edgelock run` (lock_thread.h). */
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "escape.h"
#include "lock_thread.h"

static void on_lock_lost(edgelock_client *client, edgelock_lock lock, uint64_t owner, void *user)
{
    (void)owner;
    struct run_state *s = user;
    int which = 1;
    for (size_t i = 0; i < s->a->n; i++)
        if (s->m[i].client == client && s->m[i].lock.id == lock.id)
            which = (int)i + 1;
    int none = 0;
    atomic_compare_exchange_strong(&s->lost, &none, which); /* the first loss is the one reported */
    pthread_kill(s->main_thread, SIGUSR1);                  /* the main thread takes it in sigwaitinfo() */
}

/* The reachability check of one member, on a thread of its own for RedLock. */
struct probe {
    edgelock_member m;
    edgelock_lock_kind kind;
    edgelock_status st;
    int locked; /* held so that this run must wait for it */
};

static void *probe_thread(void *arg)
{
    struct probe *p = arg;
    if (p->kind == EDGELOCK_READ || p->kind == EDGELOCK_WRITE) {
        /* is_locked answers Redisson's isLocked() of the handle's own side,
         * not whether this side must wait: a reader waits for a writer only,
         * a writer for anyone. */
        edgelock_lock_info info;
        memset(&info, 0, sizeof(info));
        p->st = edgelock_lock_info_get(p->m.client, p->m.lock, &info);
        p->locked = p->st == EDGELOCK_OK && info.state != EDGELOCK_LOCK_FREE &&
                    (p->kind == EDGELOCK_WRITE || strcmp(info.mode, "read") != 0);
        return NULL;
    }
    p->st = edgelock_is_locked(p->m.client, p->m.lock, &p->locked);
    return NULL;
}

/* --permits: sizes the semaphore NAME if it does not exist yet (Redisson's
 * trySetPermits: an existing one keeps its size), which also checks that
 * Redis answers. With -v, *held: no permit free now. */
static edgelock_status check_semaphore(struct run_state *s, int *held)
{
    const struct run_args *a = s->a;
    int set = 0;
    *held = 0;
    edgelock_status st = edgelock_semaphore_try_set_permits(s->m[0].client, s->m[0].lock, a->permits, &set);
    if (st != EDGELOCK_OK || !verbose)
        return st;
    edgelock_semaphore_info info;
    if (edgelock_semaphore_info_get(s->m[0].client, s->m[0].lock, &info) != EDGELOCK_OK)
        return EDGELOCK_OK; /* only for -v: the acquire says what is wrong */
    char shown[600];
    text_shown(shown, sizeof(shown), a->name);
    if (set)
        msg("semaphore '%s' created with %" PRId64 " permit%s", shown, a->permits,
            a->permits == 1 ? "" : "s");
    else
        msg("semaphore '%s' exists: its size is kept (--permits %" PRId64 " not applied); %" PRId64
            " free, %" PRId64 " taken",
            shown, a->permits, info.available, info.acquired);
    *held = info.available < 1;
    return EDGELOCK_OK;
}

/* A cheap check before waiting: a lock call waiting forever would otherwise
 * also wait forever for an unreachable Redis. One server (one lock or a
 * MultiLock): every member must answer. RedLock: the servers are asked at once
 * (a dead one costs its connect timeout once, not in turn) and a majority must
 * answer; each one that does not is named on stderr. *held: members held
 * elsewhere now. */
static edgelock_status check_members(struct run_state *s, int *held)
{
    const struct run_args *a = s->a;
    if (a->kind == EDGELOCK_PERMIT_SEMAPHORE)
        return check_semaphore(s, held);
    struct probe p[EDGELOCK_MAX_MEMBERS];
    pthread_t th[EDGELOCK_MAX_MEMBERS];
    int started[EDGELOCK_MAX_MEMBERS] = {0};
    *held = 0;
    for (size_t i = 0; i < a->n; i++) {
        p[i].m = s->m[i];
        p[i].kind = a->kind;
        p[i].locked = 0;
        if (a->shape == RUN_REDLOCK)
            started[i] = pthread_create(&th[i], NULL, probe_thread, &p[i]) == 0;
        if (!started[i]) {
            probe_thread(&p[i]);
            if (a->shape != RUN_REDLOCK && p[i].st != EDGELOCK_OK)
                return p[i].st; /* one server: no point asking about the others */
        }
    }
    edgelock_status first_err = EDGELOCK_OK;
    size_t ok = 0;
    for (size_t i = 0; i < a->n; i++) {
        if (started[i])
            pthread_join(th[i], NULL);
        if (p[i].st == EDGELOCK_OK) {
            ok++;
            *held += p[i].locked != 0;
        } else {
            if (first_err == EDGELOCK_OK || (is_unreachable(first_err) && !is_unreachable(p[i].st)))
                first_err = p[i].st; /* an answer with an error says more than silence */
            msg("RedLock server %s: %s", a->shown[i], edgelock_status_str(p[i].st));
        }
    }
    s->reachable = ok;
    if (a->shape == RUN_REDLOCK)
        return ok >= a->n / 2 + 1 ? EDGELOCK_OK : first_err;
    return first_err;
}

/* Gives back what the lock thread holds (every member). */
static edgelock_status release_members(struct run_state *s)
{
    const struct run_args *a = s->a;
    switch (a->shape) {
    case RUN_ONE: return edgelock_unlock(s->m[0].client, s->m[0].lock, NULL);
    case RUN_MULTI: return edgelock_multi_unlock(s->m, a->n);
    case RUN_REDLOCK: return edgelock_redlock_unlock(s->m, a->n);
    }
    return EDGELOCK_ERR_INVALID_ARG;
}

/* What is left of a fixed lease just taken, by the library's own account
 * (the least of the members'), or 0 when it is over. It began when the
 * acquire (--multi: the call that set the leases) was sent, not when the
 * answer came back: on a slow way back most of it may be gone. */
static int64_t lease_left(struct run_state *s)
{
    int64_t least = INT64_MAX;
    for (size_t i = 0; i < s->a->n; i++) {
        int64_t left = 0;
        if (edgelock_lock_valid(s->m[i].client, s->m[i].lock, edgelock_current_owner(), &left) != EDGELOCK_OK)
            return 0;
        if (left < least)
            least = left;
    }
    return least;
}

void *lock_thread(void *arg)
{
    struct run_state *s = arg;
    const struct run_args *a = s->a;
    int held = 0;
    int64_t token = 0, validity = 0;
    char permit_id[33] = "";
    pthread_mutex_lock(&s->mu);
    s->owner = edgelock_current_owner();
    pthread_mutex_unlock(&s->mu);
    edgelock_status check = check_members(s, &held);
    edgelock_status st = check;
    pthread_mutex_lock(&s->mu);
    if (s->cancelled && check == EDGELOCK_OK)
        st = EDGELOCK_ERR_CANCELLED;
    s->acquiring = st == EDGELOCK_OK;
    pthread_mutex_unlock(&s->mu);
    if (st == EDGELOCK_OK) {
        if (held && verbose) {
            char what[64] = "";
            if (a->shape == RUN_MULTI)
                snprintf(what, sizeof(what), " (%d of its %zu locks)", held, a->n);
            else if (a->shape == RUN_REDLOCK)
                snprintf(what, sizeof(what), " (on %d of %zu servers)", held, a->n);
            const char *busy =
                a->kind == EDGELOCK_PERMIT_SEMAPHORE ? "not free (every permit is taken)" : "held elsewhere";
            if (a->wait_ms == EDGELOCK_WAIT_FOREVER)
                msg("%s is %s%s; waiting for it", a->label, busy, what);
            else
                msg("%s is %s%s; waiting up to %" PRId64 " ms", a->label, busy, what, a->wait_ms);
        }
        switch (a->shape) {
        case RUN_ONE:
            if (a->kind != EDGELOCK_PERMIT_SEMAPHORE) {
                st = edgelock_try_lock_token(s->m[0].client, s->m[0].lock, a->wait_ms, a->lease_ms, &token);
                break;
            }
            /* One permit, taken and renewed as a lock is. Its id is local
             * knowledge: were the permit lost already, the lost callback
             * says so and CMD runs without EDGELOCK_PERMIT_ID. */
            st = edgelock_try_lock(s->m[0].client, s->m[0].lock, a->wait_ms, a->lease_ms);
            if (st == EDGELOCK_OK &&
                edgelock_permit_id(s->m[0].client, s->m[0].lock, edgelock_current_owner(), 0, permit_id) !=
                    EDGELOCK_OK)
                permit_id[0] = 0;
            break;
        case RUN_MULTI: st = edgelock_multi_try_lock(s->m, a->n, a->wait_ms, a->lease_ms); break;
        case RUN_REDLOCK:
            st = edgelock_redlock_try_lock(s->m, a->n, a->wait_ms, a->lease_ms, &validity);
            break;
        }
    }
    uint64_t at = now_ms(); /* before lease_left(): at + what is left never passes the lease's end */
    int lease_over = 0;
    if (st == EDGELOCK_OK && a->lease_ms > 0 && a->shape != RUN_REDLOCK) {
        validity = lease_left(s); /* a RedLock's validity already counts from its round's start */
        if (validity <= 0) {
            (void)release_members(s);
            st = EDGELOCK_ERR_NOT_OWNER;
            lease_over = 1;
        }
    }

    pthread_mutex_lock(&s->mu);
    s->check_st = check;
    s->acquire_st = st;
    s->token = token;
    s->validity_ms = validity;
    s->lease_over = lease_over;
    memcpy(s->permit_id, permit_id, sizeof(permit_id));
    s->acquired_at = at;
    s->acquire_done = 1;
    pthread_kill(s->main_thread, SIGUSR1);
    if (st == EDGELOCK_OK)
        while (!s->release_requested)
            pthread_cond_wait(&s->cv, &s->mu);
    pthread_mutex_unlock(&s->mu);
    if (st != EDGELOCK_OK)
        return NULL;

    edgelock_status rst = release_members(s);
    pthread_mutex_lock(&s->mu);
    s->release_st = rst;
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

void finish_lock_thread(struct run_state *s, pthread_t th)
{
    pthread_mutex_lock(&s->mu);
    s->release_requested = 1;
    pthread_cond_signal(&s->cv);
    pthread_mutex_unlock(&s->mu);
    pthread_join(th, NULL);
}

int cancel_lock_thread(struct run_state *s, int ms)
{
    pthread_mutex_lock(&s->mu);
    s->cancelled = 1;
    uint64_t owner = s->owner;
    int acquiring = s->acquiring || s->acquire_done;
    pthread_mutex_unlock(&s->mu);
    if (!acquiring)
        return 0;
    for (int waited = 0;; waited += 20) {
        pthread_mutex_lock(&s->mu);
        int done = s->acquire_done;
        pthread_mutex_unlock(&s->mu);
        if (done)
            return 1;
        if (waited >= ms)
            return 0;
        for (size_t i = 0; i < s->nclients; i++)
            edgelock_cancel(s->clients[i], owner);
        struct timespec pause = {0, 20 * 1000000L};
        nanosleep(&pause, NULL);
    }
}

void destroy_clients(struct run_state *s)
{
    for (size_t i = 0; i < s->nclients; i++)
        edgelock_client_destroy(s->clients[i]);
    s->nclients = 0;
}

int make_members(const struct options *o, const struct run_args *a, struct run_state *s)
{
    size_t max_name = 0;
    for (size_t i = 0; i < a->n; i++)
        if (strlen(a->names[i]) > max_name)
            max_name = strlen(a->names[i]);
    for (size_t i = 0; i < a->n; i++) {
        edgelock_client *c;
        if (a->shape == RUN_REDLOCK || i == 0) {
            uint32_t nlocks = a->shape == RUN_MULTI ? (uint32_t)a->n : 1;
            uint32_t timeout = a->shape == RUN_REDLOCK ? REDLOCK_TIMEOUT_MS : REDIS_TIMEOUT_MS;
            int rc = create_client(a->shape == RUN_REDLOCK ? a->urls[i] : o->url, nlocks, max_name, timeout,
                                   a->watchdog_ms, on_lock_lost, s, &c);
            if (rc) {
                destroy_clients(s);
                return rc;
            }
            s->clients[s->nclients++] = c;
        }
        s->m[i].client = s->clients[s->nclients - 1];
        int rc = new_handle(s->m[i].client, a->kind, a->names[i], &s->m[i].lock);
        if (rc) {
            destroy_clients(s);
            return rc;
        }
    }
    return 0;
}
