// SPDX-License-Identifier: BSD-3-Clause
/*
 * Call-path recorder for the try_lock acceptance check (see trace_path.sh).
 *
 * Linked against a libedgelock.a built with -finstrument-functions: every
 * function of src/ calls __cyg_profile_func_enter/exit, defined here. While
 * `recording` is set they append (seq, thread id, E/X, function address) to a
 * static array; nothing is allocated or printed on the hot path.
 *
 *   A (blocking): client with base NULL; records one
 *     edgelock_try_lock(c, lk, 0, 10000) on this thread plus what the client's
 *     loop thread does meanwhile. After the call returns, the loop thread's
 *     frames already open are still recorded to their end (no new top-level
 *     work), then recording stops.
 *   B (async): client on this thread's own event_base; records from the call of
 *     edgelock_lock_async(c, lk, 1, 0, 10000, ...) to the end of the
 *     event_base_loop(EVLOOP_ONCE) pass in which its callback ran.
 * Each scenario runs a warm-up lock+unlock first (connections up, scripts
 * loaded) and waits for the client to be idle (settle()). Output: OUTDIR/A.events, OUTDIR/B.events, one event
 * per line: <seq> <tid> <E|X> <hex address> (first line: "# main <tid>"). Link with -no-pie so addresses
 * match the ELF.
 *
 * Usage: driver REDIS_URL OUTDIR      (this file is NOT instrumented)
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <edgelock/edgelock.h>
#include <event2/event.h>

#define NI __attribute__((no_instrument_function))
#define MAX_EVENTS (1u << 20)

typedef struct {
    uint64_t seq;
    uint32_t tid;
    uint32_t enter;
    void *fn;
} ev_t;
static ev_t events[MAX_EVENTS];
static uint64_t next_seq;       /* atomic */
static int recording;           /* atomic: 0 off, 1 on, 2 draining (only frames already open) */
static unsigned epoch;          /* atomic: bumped by start() */
static __thread int depth;      /* instrumented frames open on this thread */
static __thread int base_depth; /* depth at this thread's first event of the epoch */
static __thread unsigned my_epoch;
static __thread uint32_t my_tid;

NI static uint32_t tid(void)
{
    if (!my_tid)
        my_tid = (uint32_t)syscall(SYS_gettid);
    return my_tid;
}

NI static void record(void *fn, uint32_t enter)
{
    int r = __atomic_load_n(&recording, __ATOMIC_ACQUIRE);
    if (!r)
        return;
    unsigned e = __atomic_load_n(&epoch, __ATOMIC_RELAXED);
    if (my_epoch != e) { /* e.g. the loop thread sits inside its instrumented thread main */
        my_epoch = e;
        base_depth = depth;
    }
    if (r == 2 && enter && depth <= base_depth)
        return; /* draining: no new top-level work */
    uint64_t s = __atomic_fetch_add(&next_seq, 1, __ATOMIC_RELAXED);
    if (s >= MAX_EVENTS)
        return;
    events[s] = (ev_t){s, tid(), enter, fn};
}

NI void __cyg_profile_func_enter(void *fn, void *site)
{
    (void)site;
    record(fn, 1);
    depth++;
}

NI void __cyg_profile_func_exit(void *fn, void *site)
{
    (void)site;
    depth--;
    record(fn, 0);
}

NI static void start(void)
{
    __atomic_store_n(&next_seq, 0, __ATOMIC_RELAXED);
    __atomic_fetch_add(&epoch, 1, __ATOMIC_RELAXED);
    __atomic_store_n(&recording, 1, __ATOMIC_RELEASE);
}

NI static void dump(const char *dir, const char *name)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.events", dir, name);
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        exit(1);
    }
    uint64_t n = __atomic_load_n(&next_seq, __ATOMIC_ACQUIRE);
    if (n > MAX_EVENTS) {
        fprintf(stderr, "driver: %s: event array full\n", name);
        n = MAX_EVENTS;
    }
    fprintf(f, "# main %u\n", tid());
    for (uint64_t i = 0; i < n; i++)
        fprintf(f, "%llu %u %c %p\n", (unsigned long long)events[i].seq, events[i].tid,
                events[i].enter ? 'E' : 'X', events[i].fn);
    fclose(f);
    fprintf(stderr, "driver: %s: %llu events -> %s\n", name, (unsigned long long)n, path);
}

NI static void check(edgelock_status st, const char *what)
{
    if (st != EDGELOCK_OK) {
        fprintf(stderr, "driver: %s: %s\n", what, edgelock_status_str(st));
        exit(1);
    }
}

static volatile int done;
static edgelock_status cb_status;
NI static void on_result(edgelock_client *c, edgelock_lock l, edgelock_status st, int64_t v, void *u)
{
    (void)c;
    (void)l;
    (void)v;
    (void)u;
    cb_status = st;
    done = 1;
}

/* Wait until the client has no command queued or in flight (the unlock's
 * follow-up DEL of the unlock latch replies after unlock returned), so no
 * warm-up residue lands in the recording. base NULL: the client's own loop. */
NI static void settle(edgelock_client *c, struct event_base *base)
{
    edgelock_stats s;
    struct timespec ts = {0, 1000 * 1000};
    for (int i = 0; i < 5000; i++) {
        check(edgelock_client_stats(c, &s), "stats");
        if (s.commands == 0)
            break;
        if (base)
            event_base_loop(base, EVLOOP_ONCE | EVLOOP_NONBLOCK);
        else
            nanosleep(&ts, NULL);
    }
    ts.tv_nsec = 50 * 1000 * 1000; /* then let deferred work (slot-free callbacks) run */
    nanosleep(&ts, NULL);
    if (base)
        event_base_loop(base, EVLOOP_NONBLOCK);
}

NI static void run_until_done(struct event_base *base, const char *what)
{
    while (!done)
        event_base_loop(base, EVLOOP_ONCE);
    check(cb_status, what);
}

NI int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s REDIS_URL OUTDIR\n", argv[0]);
        return 2;
    }
    edgelock_config cfg;
    edgelock_config_init(&cfg);
    cfg.url = argv[1];

    /* ---- A: blocking ---- */
    edgelock_client *c;
    edgelock_lock lk;
    check(edgelock_client_create(&cfg, NULL, &c), "create A");
    check(edgelock_lock_new(c, "trace:A", 7, &lk), "lock_new A");
    check(edgelock_try_lock(c, lk, 0, 10000), "warm-up try_lock A");
    check(edgelock_unlock(c, lk, NULL), "warm-up unlock A");
    settle(c, NULL);
    /* settle() idled long enough for the client's loop thread to take the lead
     * back; a local call takes it onto this thread, so the traced call is the
     * one a thread making calls back to back makes: it leads, no hop. */
    edgelock_stats s;
    check(edgelock_client_stats(c, &s), "stats");
    start();
    edgelock_status st = edgelock_try_lock(c, lk, 0, 10000);
    __atomic_store_n(&recording, 2, __ATOMIC_RELEASE);
    struct timespec ts = {0, 200 * 1000 * 1000}; /* let the loop thread close its open frames */
    nanosleep(&ts, NULL);
    __atomic_store_n(&recording, 0, __ATOMIC_RELEASE);
    check(st, "traced try_lock A");
    dump(argv[2], "A");
    check(edgelock_unlock(c, lk, NULL), "unlock A");
    edgelock_lock_free(c, lk);
    edgelock_client_destroy(c);

    /* ---- B: async on our own event_base ---- */
    struct event_base *base = event_base_new();
    check(edgelock_client_create(&cfg, base, &c), "create B");
    check(edgelock_lock_new(c, "trace:B", 7, &lk), "lock_new B");
    done = 0;
    check(edgelock_lock_async(c, lk, 1, 0, 10000, on_result, NULL), "warm-up lock_async B");
    run_until_done(base, "warm-up lock B");
    done = 0;
    check(edgelock_unlock_async(c, lk, 1, on_result, NULL), "warm-up unlock_async B");
    run_until_done(base, "warm-up unlock B");
    settle(c, base);
    done = 0;
    start();
    st = edgelock_lock_async(c, lk, 1, 0, 10000, on_result, NULL);
    if (st == EDGELOCK_OK)
        while (!done)
            event_base_loop(base, EVLOOP_ONCE); /* the pass in which cb ran ends here */
    __atomic_store_n(&recording, 0, __ATOMIC_RELEASE);
    check(st, "traced lock_async B");
    check(cb_status, "traced lock B callback");
    dump(argv[2], "B");
    done = 0;
    check(edgelock_unlock_async(c, lk, 1, on_result, NULL), "unlock_async B");
    run_until_done(base, "unlock B");
    edgelock_lock_free(c, lk);
    edgelock_client_destroy(c);
    event_base_free(base);
    return 0;
}
