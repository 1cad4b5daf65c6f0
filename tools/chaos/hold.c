// SPDX-License-Identifier: BSD-3-Clause
/* One hold of one lock by a worker: epoch, acquire, critical section, release. */
#include "clock.h"
#include "events.h"
#include "worker.h"

static void note(struct worker *w, char type, int lock, int64_t a, int64_t b)
{
    struct event e = {.type = type, .lock = lock, .t = mono_us(), .a = a, .b = b};
    events_put(w->events_fd, &e);
}

static int side_code(enum epoch_result r)
{
    return r == EPOCH_READ_FAILED ? SIDE_RUN_ID : r == EPOCH_CHANGED ? SIDE_CHANGED : SIDE_STORE;
}

/* The writes of one hold. Stops at the first write the local check forbids
 * or the store refuses: from then on this worker is not the holder. */
static void critical_section(struct worker *w, int lock, int64_t epoch, int64_t token)
{
    const struct worker_config *cfg = w->cfg;
    int written = 0;
    for (int j = 0; j < cfg->writes_per_hold; j++) {
        if (j > 0)
            nap_ms(cfg->write_gap_ms);
        /* The clock is read before the check, so that the deadline errs early. */
        int64_t t0 = realtime_ms();
        int64_t remaining = 0;
        edgelock_status st = edgelock_lock_valid(w->client, w->locks[lock], w->owner, &remaining);
        if (st != EDGELOCK_OK || remaining < cfg->margin_ms) {
            note(w, EV_SKIP, lock, st, remaining);
            break;
        }
        struct store_write_result res;
        int64_t sent = mono_us();
        if (store_write(w->store, &cfg->scripts, lock, epoch, token, w->pid, t0 + remaining, &res) != 0) {
            note(w, EV_SIDE_ERROR, lock, SIDE_STORE, 0);
            break;
        }
        struct event e = {.type = EV_WRITE,
                          .lock = lock,
                          .t = sent,
                          .epoch = epoch,
                          .token = token,
                          .a = res.accepted,
                          .b = res.others,
                          .c = written == 0,
                          .d = res.late};
        events_put(w->events_fd, &e);
        written++;
        if (!res.accepted)
            break;
    }
    /* Leave before unlocking: once the lock is free the next holder may
     * enter, and must not find this worker still inside. */
    if (store_leave(w->store, lock, w->pid) != 0)
        note(w, EV_SIDE_ERROR, lock, SIDE_STORE, 0);
}

/* Whether this worker's owner field is still in the lock's hash: 1, 0, or
 * -1 when the lock Redis did not answer. */
static int field_still_there(struct worker *w, int lock)
{
    struct resp_reply r;
    if (resp_callv(w->lock_redis, &r, "HEXISTS", w->cfg->lock_names[lock], w->field, NULL) != 0 ||
        r.type != RESP_INTEGER)
        return -1;
    return r.integer == 1;
}

/* Unlock, and when the library says the lock was released, look whether Redis
 * agrees: the worker never re-enters, so after a release its field must be
 * gone. A field still there is a hold leaked by the library. */
static void release(struct worker *w, int lock)
{
    int released = 0;
    edgelock_status st = edgelock_unlock(w->client, w->locks[lock], &released);
    struct event e = {.type = EV_RELEASE, .lock = lock, .t = mono_us(), .a = st, .b = released, .c = -1};
    if (st == EDGELOCK_OK)
        e.c = field_still_there(w, lock);
    events_put(w->events_fd, &e);
}

void hold_once(struct worker *w, int lock)
{
    const struct worker_config *cfg = w->cfg;
    char run_id[RUN_ID_BYTES];
    int64_t epoch = 0;
    enum epoch_result er = epoch_before(&w->epoch, run_id, &epoch);
    if (er != EPOCH_OK) {
        note(w, EV_SIDE_ERROR, lock, side_code(er), 0);
        nap_ms(100); /* the lock Redis is away: do not spin on it */
        return;
    }
    int64_t token = 0;
    int64_t lease = lock == 0 ? EDGELOCK_LEASE_WATCHDOG : cfg->lease_ms;
    int64_t sent = mono_us();
    edgelock_status st = edgelock_try_lock_token(w->client, w->locks[lock], cfg->wait_ms, lease, &token);
    int64_t got = mono_us();
    if (st != EDGELOCK_OK) {
        note(w, EV_ACQUIRE_FAIL, lock, st, 0);
        if (st != EDGELOCK_ERR_WAIT_TIMEOUT)
            nap_ms(100);
        return;
    }
    er = epoch_after(&w->epoch, run_id);
    if (er != EPOCH_OK) {
        /* The token may come from a server that is gone or from the new one:
         * its epoch is unknown, so it must guard nothing. */
        note(w, EV_EPOCH_UNKNOWN, lock, token, side_code(er));
        release(w, lock);
        return;
    }
    struct event e = {.type = EV_ACQUIRE, .lock = lock, .t = got, .t2 = sent, .epoch = epoch, .token = token};
    events_put(w->events_fd, &e);
    /* Inside from here to the unlock: what the injector looks for. */
    atomic_store(&cfg->shared->slot[w->slot].inside, lock);
    critical_section(w, lock, epoch, token);
    atomic_store(&cfg->shared->slot[w->slot].inside, -1);
    release(w, lock);
}
