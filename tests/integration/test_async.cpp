// SPDX-License-Identifier: BSD-3-Clause
// Event-loop mode: the caller's event_base, driven by the test thread. The
// callback contract (exactly once, on the loop thread, never inside the call,
// SHUTDOWN at destruction), owner ids as task ids, calls and destruction from
// inside callbacks, and the lock-lost notice.
#include <stdio.h>
#include <string.h>

#include "check.hpp"
#include "clients.hpp"
#include "edgelock/edgelock.h"
#include "event_loop.hpp"
#include "redis_server.hpp"

// ---- the probe ------------------------------------------------------------------

static uint64_t g_loop_tid; // the test thread runs every loop
static bool g_in_call;      // true while an async call is executing
static int g_probe_calls;   // every probe callback, for "nothing else fired"

struct Probe {
    int calls = 0;
    edgelock_status st = EDGELOCK_OK;
    int64_t value = -777;
    bool inside_call = false; // fired from inside the async call: forbidden
    bool off_thread = false;
    edgelock_lock lock = {0};
    edgelock_client *client = nullptr;
    // Optional follow-up, run from inside the callback.
    void (*then)(Probe *) = nullptr;
    void *ctx = nullptr;
};

static void probe_cb(edgelock_client *c, edgelock_lock lk, edgelock_status st, int64_t value, void *user)
{
    Probe *p = static_cast<Probe *>(user);
    p->calls++;
    g_probe_calls++;
    p->st = st;
    p->value = value;
    p->lock = lk;
    p->client = c;
    if (g_in_call)
        p->inside_call = true;
    if (edgelock_current_owner() != g_loop_tid)
        p->off_thread = true;
    if (p->then)
        p->then(p);
}

// Wraps an async call so a callback fired from inside it is noticed.
#define ASYNC(expr)                                                                                          \
    ([&]() {                                                                                                 \
        bool outer_ = g_in_call;                                                                             \
        g_in_call = true;                                                                                    \
        edgelock_status s_ = (expr);                                                                         \
        g_in_call = outer_;                                                                                  \
        return s_;                                                                                           \
    }())

static void check_fired_once(const Probe &p, const char *what)
{
    if (p.calls != 1 || p.inside_call || p.off_thread)
        fprintf(stderr, "  %s: calls %d inside_call %d off_thread %d\n", what, p.calls, (int)p.inside_call,
                (int)p.off_thread);
    CHECK_EQ(p.calls, 1);
    CHECK(!p.inside_call);
    CHECK(!p.off_thread);
}

static bool idle_now(edgelock_client *c)
{
    edgelock_stats s;
    return edgelock_client_stats(c, &s) == EDGELOCK_OK && s.holds == 0 && s.waiters == 0 &&
           s.subscriptions == 0 && s.commands == 0;
}

static edgelock_client *loop_client(struct event_base *base, void (*tweak)(edgelock_config *) = nullptr)
{
    edgelock_config cfg;
    edgelock_config_init(&cfg);
    cfg.url = shared_server().url();
    if (tweak)
        tweak(&cfg);
    edgelock_client *c = nullptr;
    edgelock_status st = edgelock_client_create(&cfg, base, &c);
    if (st != EDGELOCK_OK)
        fprintf(stderr, "client_create(base): %s\n", edgelock_status_str(st));
    return c;
}

static edgelock_lock new_lock(edgelock_client *c, const char *name, size_t len)
{
    edgelock_lock lk = {0};
    CHECK_ST(edgelock_lock_new(c, name, len, &lk), EDGELOCK_OK);
    return lk;
}

static edgelock_lock new_lock(edgelock_client *c, const char *name)
{
    return new_lock(c, name, strlen(name));
}

static void owner_field(char *out, size_t cap, edgelock_client *c, uint64_t owner)
{
    snprintf(out, cap, "%s:%llu", edgelock_client_id(c), (unsigned long long)owner);
}

// Runs one async call to completion: its status if it was refused, otherwise
// the status its callback delivered.
template <typename Call> static edgelock_status outcome(EventLoop &loop, Probe &p, Call call)
{
    edgelock_status st = ASYNC(call());
    if (st != EDGELOCK_OK) {
        loop.run_for(20);
        CHECK_EQ(p.calls, 0); // refused: never called back
        return st;
    }
    CHECK(loop.run_until([&] { return p.calls > 0; }, 5000));
    check_fired_once(p, "outcome");
    return p.st;
}

static void setup_thread()
{
    g_loop_tid = edgelock_current_owner();
}

// ---- the callback contract ----------------------------------------------------------

TEST_CASE(every_callback_fires_once_on_the_loop_thread_never_inside_the_call)
{
    setup_thread();
    RedisServer &r = shared_server();
    EventLoop loop;
    REQUIRE(loop.ok());
    edgelock_client *c = loop_client(loop.base());
    REQUIRE(c);
    edgelock_lock lk = new_lock(c, "contract");
    // Before the connection is even up: queued, still never inline.
    Probe p[12];
    CHECK_ST(ASYNC(edgelock_is_locked_async(c, lk, probe_cb, &p[0])), EDGELOCK_OK);
    CHECK_ST(ASYNC(edgelock_lock_async(c, lk, 1, 0, 10000, probe_cb, &p[1])), EDGELOCK_OK);
    CHECK_ST(ASYNC(edgelock_hold_count_async(c, lk, 1, probe_cb, &p[2])), EDGELOCK_OK);
    CHECK_ST(ASYNC(edgelock_remaining_ttl_async(c, lk, probe_cb, &p[3])), EDGELOCK_OK);
    CHECK_EQ(g_probe_calls, 0);
    CHECK(loop.run_until([&] { return p[3].calls > 0; }, 5000));
    loop.run_for(50);
    check_fired_once(p[0], "is_locked");
    CHECK_ST(p[0].st, EDGELOCK_OK);
    CHECK_EQ(p[0].value, 0);
    check_fired_once(p[1], "lock");
    CHECK_ST(p[1].st, EDGELOCK_OK);
    CHECK_EQ(p[1].value, 0);
    CHECK_EQ(p[1].lock.id, lk.id);
    CHECK(p[1].client == c);
    check_fired_once(p[2], "hold_count");
    CHECK_EQ(p[2].value, 1);
    check_fired_once(p[3], "remaining_ttl");
    CHECK(p[3].value > 9000 && p[3].value <= 10000);

    // Connected now: replies and failures alike come back later, never inline.
    CHECK_ST(ASYNC(edgelock_lock_async(c, lk, 2, 0, 10000, probe_cb, &p[4])), EDGELOCK_OK); // held by 1
    CHECK_ST(ASYNC(edgelock_unlock_async(c, lk, 2, probe_cb, &p[5])), EDGELOCK_OK);         // not owner
    CHECK_ST(ASYNC(edgelock_unlock_async(c, lk, 1, probe_cb, &p[6])), EDGELOCK_OK);
    CHECK_ST(ASYNC(edgelock_force_unlock_async(c, lk, probe_cb, &p[7])), EDGELOCK_OK);
    CHECK_ST(ASYNC(edgelock_is_locked_async(c, lk, probe_cb, &p[8])), EDGELOCK_OK);
    CHECK_EQ(p[4].calls + p[5].calls + p[6].calls + p[7].calls + p[8].calls, 0);
    CHECK(loop.run_until([&] { return p[8].calls > 0 && p[4].calls > 0; }, 5000));
    loop.run_for(50);
    check_fired_once(p[4], "contended lock");
    CHECK_ST(p[4].st, EDGELOCK_ERR_WAIT_TIMEOUT);
    CHECK_EQ(p[4].value, 0);
    check_fired_once(p[5], "unlock by non-owner");
    CHECK_ST(p[5].st, EDGELOCK_ERR_NOT_OWNER);
    check_fired_once(p[6], "unlock");
    CHECK_ST(p[6].st, EDGELOCK_OK);
    CHECK_EQ(p[6].value, 1);
    check_fired_once(p[7], "force_unlock of a free lock");
    CHECK_ST(p[7].st, EDGELOCK_OK);
    CHECK_EQ(p[7].value, 0);
    check_fired_once(p[8], "is_locked");
    CHECK_EQ(p[8].value, 0);

    // A wait that runs out is reported once, by the timer.
    CHECK_ST(ASYNC(edgelock_lock_async(c, lk, 1, 0, 10000, probe_cb, &p[9])), EDGELOCK_OK);
    CHECK(loop.run_until([&] { return p[9].calls > 0; }, 5000));
    uint64_t t0 = mono_ms();
    CHECK_ST(ASYNC(edgelock_lock_async(c, lk, 2, 300, 10000, probe_cb, &p[10])), EDGELOCK_OK);
    CHECK(loop.run_until([&] { return p[10].calls > 0; }, 5000));
    // Never before wait_ms, on this base's default (coarse) clock too.
    CHECK(mono_ms() - t0 >= 300);
    loop.run_for(50);
    check_fired_once(p[10], "lock with a wait that runs out");
    CHECK_ST(p[10].st, EDGELOCK_ERR_WAIT_TIMEOUT);
    CHECK_ST(ASYNC(edgelock_unlock_async(c, lk, 1, probe_cb, &p[11])), EDGELOCK_OK);
    CHECK(loop.run_until([&] { return p[11].calls > 0 && idle_now(c); }, 5000));
    check_fired_once(p[11], "unlock");
    CHECK_EQ(redis_integer(r, "EXISTS contract"), 0);
    CHECK_ST(edgelock_lock_free(c, lk), EDGELOCK_OK);
    edgelock_client_destroy(c);
    loop.run_for(20);
}

// ---- owners ---------------------------------------------------------------------------

TEST_CASE(two_owner_ids_on_one_client_contend_like_two_threads)
{
    setup_thread();
    RedisServer &r = shared_server();
    EventLoop loop;
    REQUIRE(loop.ok());
    edgelock_client *c = loop_client(loop.base());
    REQUIRE(c);
    edgelock_lock lk = new_lock(c, "owners");
    const uint64_t task1 = 1, task2 = 0xfeedfacecafebeefull;
    Probe l1, l2, u1, u2, hc2;
    CHECK_ST(ASYNC(edgelock_lock_async(c, lk, task1, 0, 20000, probe_cb, &l1)), EDGELOCK_OK);
    CHECK(loop.run_until([&] { return l1.calls > 0; }, 5000));
    CHECK_ST(l1.st, EDGELOCK_OK);
    char f1[128], f2[128];
    owner_field(f1, sizeof(f1), c, task1);
    owner_field(f2, sizeof(f2), c, task2);
    CHECK_EQ(redis_integer(r, "HGET owners %s", f1), 1);

    CHECK_ST(ASYNC(edgelock_lock_async(c, lk, task2, EDGELOCK_WAIT_FOREVER, 20000, probe_cb, &l2)),
             EDGELOCK_OK);
    loop.run_for(300);
    CHECK_EQ(l2.calls, 0); // still waiting for task 1
    edgelock_stats s;
    CHECK_ST(edgelock_client_stats(c, &s), EDGELOCK_OK);
    CHECK_EQ(s.waiters, 1);
    CHECK_EQ(s.subscriptions, 1);
    // task 2 cannot release task 1's hold
    Probe bad;
    CHECK_ST(outcome(loop, bad, [&] { return edgelock_unlock_async(c, lk, task2, probe_cb, &bad); }),
             EDGELOCK_ERR_NOT_OWNER);
    CHECK_EQ(l2.calls, 0);

    CHECK_ST(ASYNC(edgelock_unlock_async(c, lk, task1, probe_cb, &u1)), EDGELOCK_OK);
    CHECK(loop.run_until([&] { return l2.calls > 0; }, 5000));
    check_fired_once(u1, "task 1 unlock");
    CHECK_EQ(u1.value, 1);
    check_fired_once(l2, "task 2 lock");
    CHECK_ST(l2.st, EDGELOCK_OK);
    CHECK_EQ(redis_integer(r, "HGET owners %s", f2), 1);
    CHECK_EQ(redis_integer(r, "HEXISTS owners %s", f1), 0);
    CHECK_ST(outcome(loop, hc2, [&] { return edgelock_hold_count_async(c, lk, task2, probe_cb, &hc2); }),
             EDGELOCK_OK);
    CHECK_EQ(hc2.value, 1);
    CHECK_ST(ASYNC(edgelock_unlock_async(c, lk, task2, probe_cb, &u2)), EDGELOCK_OK);
    CHECK(loop.run_until([&] { return u2.calls > 0 && idle_now(c); }, 5000));
    CHECK_ST(u2.st, EDGELOCK_OK);
    CHECK_EQ(u2.value, 1);
    CHECK_EQ(redis_integer(r, "EXISTS owners"), 0);
    CHECK_ST(edgelock_lock_free(c, lk), EDGELOCK_OK);
    edgelock_client_destroy(c);
}

TEST_CASE(force_unlock_wakes_a_waiter)
{
    setup_thread();
    EventLoop loop;
    REQUIRE(loop.ok());
    edgelock_client *c = loop_client(loop.base());
    REQUIRE(c);
    edgelock_lock lk = new_lock(c, "forced");
    Probe l1, l2, f, u2, u1;
    CHECK_ST(outcome(loop, l1, [&] { return edgelock_lock_async(c, lk, 1, 0, 20000, probe_cb, &l1); }),
             EDGELOCK_OK);
    CHECK_ST(ASYNC(edgelock_lock_async(c, lk, 2, EDGELOCK_WAIT_FOREVER, 20000, probe_cb, &l2)), EDGELOCK_OK);
    loop.run_for(200);
    CHECK_EQ(l2.calls, 0);
    CHECK_ST(ASYNC(edgelock_force_unlock_async(c, lk, probe_cb, &f)), EDGELOCK_OK);
    CHECK(loop.run_until([&] { return l2.calls > 0; }, 5000));
    check_fired_once(f, "force_unlock");
    CHECK_EQ(f.value, 1);
    check_fired_once(l2, "woken waiter");
    CHECK_ST(l2.st, EDGELOCK_OK);
    CHECK_ST(outcome(loop, u2, [&] { return edgelock_unlock_async(c, lk, 2, probe_cb, &u2); }), EDGELOCK_OK);
    // Task 1's hold was deleted behind its back before its lease ended: it
    // learns of the loss when it unlocks.
    CHECK_ST(outcome(loop, u1, [&] { return edgelock_unlock_async(c, lk, 1, probe_cb, &u1); }),
             EDGELOCK_ERR_LOST);
    CHECK(loop.run_until([&] { return idle_now(c); }, 5000));
    CHECK_ST(edgelock_lock_free(c, lk), EDGELOCK_OK);
    edgelock_client_destroy(c);
}

TEST_CASE(reentrant_async_locks_with_the_same_owner)
{
    setup_thread();
    RedisServer &r = shared_server();
    EventLoop loop;
    REQUIRE(loop.ok());
    edgelock_client *c = loop_client(loop.base());
    REQUIRE(c);
    edgelock_lock lk = new_lock(c, "re-async");
    const uint64_t task = 7;
    char f[128];
    owner_field(f, sizeof(f), c, task);
    Probe a, b, w, hc, u1, hc1, u2, hc0;
    CHECK_ST(outcome(loop, a, [&] { return edgelock_lock_async(c, lk, task, 0, 10000, probe_cb, &a); }),
             EDGELOCK_OK);
    CHECK_ST(outcome(loop, b,
                     [&] {
                         return edgelock_lock_async(c, lk, task, 1000, EDGELOCK_LEASE_WATCHDOG, probe_cb, &b);
                     }),
             EDGELOCK_OK);
    CHECK_ST(outcome(loop, w, [&] { return edgelock_lock_async(c, lk, task, 0, 10000, probe_cb, &w); }),
             EDGELOCK_OK);
    CHECK_EQ(redis_integer(r, "HGET re-async %s", f), 3);
    CHECK_EQ(redis_integer(r, "HLEN re-async"), 1);
    CHECK_ST(outcome(loop, hc, [&] { return edgelock_hold_count_async(c, lk, task, probe_cb, &hc); }),
             EDGELOCK_OK);
    CHECK_EQ(hc.value, 3);
    CHECK_ST(outcome(loop, u1, [&] { return edgelock_unlock_async(c, lk, task, probe_cb, &u1); }),
             EDGELOCK_OK);
    CHECK_EQ(u1.value, 0);
    CHECK_ST(outcome(loop, hc1, [&] { return edgelock_hold_count_async(c, lk, task, probe_cb, &hc1); }),
             EDGELOCK_OK);
    CHECK_EQ(hc1.value, 2);
    CHECK_ST(edgelock_lock_free(c, lk), EDGELOCK_ERR_BUSY);
    Probe u;
    CHECK_ST(outcome(loop, u, [&] { return edgelock_unlock_async(c, lk, task, probe_cb, &u); }), EDGELOCK_OK);
    CHECK_EQ(u.value, 0);
    CHECK_ST(outcome(loop, u2, [&] { return edgelock_unlock_async(c, lk, task, probe_cb, &u2); }),
             EDGELOCK_OK);
    CHECK_EQ(u2.value, 1);
    CHECK_EQ(redis_integer(r, "EXISTS re-async"), 0);
    CHECK_ST(outcome(loop, hc0, [&] { return edgelock_hold_count_async(c, lk, task, probe_cb, &hc0); }),
             EDGELOCK_OK);
    CHECK_EQ(hc0.value, 0);
    CHECK(loop.run_until([&] { return idle_now(c); }, 5000));
    CHECK_ST(edgelock_lock_free(c, lk), EDGELOCK_OK);
    edgelock_client_destroy(c);
}

// ---- calls from inside callbacks ---------------------------------------------------------

struct Chain {
    edgelock_client *c;
    edgelock_lock lk;
    Probe lock, unlock, query;
    edgelock_status unlock_call = EDGELOCK_ERR_PROTOCOL;
    edgelock_status query_call = EDGELOCK_ERR_PROTOCOL;
};

static void chain_after_query(Probe *) {}
static void chain_after_unlock(Probe *p)
{
    Chain *ch = static_cast<Chain *>(p->ctx);
    ch->query.then = chain_after_query;
    ch->query_call = ASYNC(edgelock_is_locked_async(ch->c, ch->lk, probe_cb, &ch->query));
}
static void chain_after_lock(Probe *p)
{
    Chain *ch = static_cast<Chain *>(p->ctx);
    if (p->st != EDGELOCK_OK)
        return;
    ch->unlock.then = chain_after_unlock;
    ch->unlock.ctx = ch;
    ch->unlock_call = ASYNC(edgelock_unlock_async(ch->c, ch->lk, 5, probe_cb, &ch->unlock));
}

// A reader whose fixed lease ran out while another reader keeps the hash: its
// field is still there (Redis expires the hold's own timeout key, not the
// field), so the release script counts it down. For its owner the hold ended
// with the lease: NOT_OWNER, as lock_valid says and as for any other kind.
TEST_CASE(unlock_of_a_read_hold_whose_lease_ran_out_is_not_owner)
{
    setup_thread();
    RedisServer &r = shared_server();
    freeReplyObject(r.command("DEL rw-lapsed"));
    EventLoop loop;
    REQUIRE(loop.ok());
    edgelock_client *c = loop_client(loop.base());
    REQUIRE(c);
    edgelock_lock rd = {0};
    CHECK_ST(edgelock_lock_new_kind(c, EDGELOCK_READ, "rw-lapsed", 9, &rd), EDGELOCK_OK);
    Probe a, b, u2, u1;
    CHECK_ST(outcome(loop, a,
                     [&] { return edgelock_lock_async(c, rd, 1, 0, EDGELOCK_LEASE_WATCHDOG, probe_cb, &a); }),
             EDGELOCK_OK);
    CHECK_ST(outcome(loop, b, [&] { return edgelock_lock_async(c, rd, 2, 0, 200, probe_cb, &b); }),
             EDGELOCK_OK);
    int64_t left = 0;
    CHECK(
        loop.run_until([&] { return edgelock_lock_valid(c, rd, 2, &left) == EDGELOCK_ERR_NOT_OWNER; }, 5000));
    CHECK_EQ(redis_integer(r, "EXISTS rw-lapsed"), 1); // reader 1 keeps it
    CHECK_ST(outcome(loop, u2, [&] { return edgelock_unlock_async(c, rd, 2, probe_cb, &u2); }),
             EDGELOCK_ERR_NOT_OWNER);
    CHECK_ST(outcome(loop, u1, [&] { return edgelock_unlock_async(c, rd, 1, probe_cb, &u1); }), EDGELOCK_OK);
    CHECK_EQ(u1.value, 1);
    CHECK_EQ(redis_integer(r, "EXISTS rw-lapsed"), 0);
    CHECK(loop.run_until([&] { return idle_now(c); }, 5000));
    CHECK_ST(edgelock_lock_free(c, rd), EDGELOCK_OK);
    edgelock_client_destroy(c);
}

TEST_CASE(calls_made_inside_callbacks_work)
{
    setup_thread();
    RedisServer &r = shared_server();
    EventLoop loop;
    REQUIRE(loop.ok());
    edgelock_client *c = loop_client(loop.base());
    REQUIRE(c);
    Chain ch;
    ch.c = c;
    ch.lk = new_lock(c, "chain");
    ch.lock.then = chain_after_lock;
    ch.lock.ctx = &ch;
    CHECK_ST(ASYNC(edgelock_lock_async(c, ch.lk, 5, 0, 10000, probe_cb, &ch.lock)), EDGELOCK_OK);
    CHECK(loop.run_until([&] { return ch.query.calls > 0; }, 5000));
    loop.run_for(50);
    check_fired_once(ch.lock, "lock");
    CHECK_ST(ch.lock.st, EDGELOCK_OK);
    CHECK_ST(ch.unlock_call, EDGELOCK_OK);
    check_fired_once(ch.unlock, "unlock from the lock callback");
    CHECK_ST(ch.unlock.st, EDGELOCK_OK);
    CHECK_EQ(ch.unlock.value, 1);
    CHECK_ST(ch.query_call, EDGELOCK_OK);
    check_fired_once(ch.query, "is_locked from the unlock callback");
    CHECK_EQ(ch.query.value, 0);
    CHECK_EQ(redis_integer(r, "EXISTS chain"), 0);
    CHECK(loop.run_until([&] { return idle_now(c); }, 5000));
    CHECK_ST(edgelock_lock_free(c, ch.lk), EDGELOCK_OK);
    edgelock_client_destroy(c);
}

struct FreeInside {
    edgelock_client *c;
    edgelock_lock lk;
    edgelock_status free_status = EDGELOCK_ERR_PROTOCOL;
};
static void free_after_unlock(Probe *p)
{
    FreeInside *fi = static_cast<FreeInside *>(p->ctx);
    fi->free_status = edgelock_lock_free(fi->c, fi->lk);
}

TEST_CASE(lock_free_from_the_unlock_callback)
{
    // Unlock, then free the handle as soon as the unlock completes: the latch
    // DEL edgelock sends on its own must not keep the handle busy.
    setup_thread();
    RedisServer &r = shared_server();
    EventLoop loop;
    REQUIRE(loop.ok());
    edgelock_client *c = loop_client(loop.base());
    REQUIRE(c);
    FreeInside fi{c, new_lock(c, "free-inside")};
    Probe l, u;
    CHECK_ST(outcome(loop, l, [&] { return edgelock_lock_async(c, fi.lk, 4, 0, 10000, probe_cb, &l); }),
             EDGELOCK_OK);
    u.then = free_after_unlock;
    u.ctx = &fi;
    CHECK_ST(outcome(loop, u, [&] { return edgelock_unlock_async(c, fi.lk, 4, probe_cb, &u); }), EDGELOCK_OK);
    CHECK_EQ(u.value, 1);
    CHECK_ST(fi.free_status, EDGELOCK_OK);
    CHECK(loop.run_until([&] { return idle_now(c); }, 5000));
    CHECK_ST(edgelock_lock_free(c, fi.lk), EDGELOCK_ERR_STALE_HANDLE);
    CHECK_EQ(redis_integer(r, "EXISTS free-inside"), 0);
    CHECK_EQ(redis_integer(r, "EVAL %s 0", "return #redis.call('keys', 'redisson_unlock_latch*')"), 0);
    edgelock_client_destroy(c);
}

// A lock/unlock ping-pong driven entirely from callbacks, on fresh handles.
struct PingPong {
    edgelock_client *c;
    edgelock_lock lks[200];
    int n, next;
    int done, errors;
};
static void pp_step(PingPong *pp);
static void pp_unlocked(edgelock_client *, edgelock_lock, edgelock_status st, int64_t value, void *user)
{
    PingPong *pp = static_cast<PingPong *>(user);
    if (st != EDGELOCK_OK || value != 1)
        pp->errors++;
    pp->done++;
    pp_step(pp);
}
static void pp_locked(edgelock_client *c, edgelock_lock lk, edgelock_status st, int64_t, void *user)
{
    PingPong *pp = static_cast<PingPong *>(user);
    if (st != EDGELOCK_OK || edgelock_unlock_async(c, lk, 99, pp_unlocked, pp) != EDGELOCK_OK) {
        pp->errors++;
        pp->done++;
        pp_step(pp);
    }
}
static void pp_step(PingPong *pp)
{
    if (pp->next >= pp->n)
        return;
    edgelock_lock lk = pp->lks[pp->next++];
    if (edgelock_lock_async(pp->c, lk, 99, 0, 10000, pp_locked, pp) != EDGELOCK_OK) {
        pp->errors++;
        pp->done++;
    }
}

TEST_CASE(lock_unlock_chain_of_two_hundred_from_callbacks)
{
    setup_thread();
    RedisServer &r = shared_server();
    EventLoop loop;
    REQUIRE(loop.ok());
    edgelock_client *c = loop_client(loop.base(), [](edgelock_config *cfg) { cfg->max_locks = 256; });
    REQUIRE(c);
    static PingPong pp;
    memset(&pp, 0, sizeof(pp));
    pp.c = c;
    pp.n = 200;
    for (int i = 0; i < pp.n; i++) {
        char name[32];
        snprintf(name, sizeof(name), "pp:%d", i);
        pp.lks[i] = new_lock(c, name);
    }
    pp_step(&pp);
    CHECK(loop.run_until([&] { return pp.done == pp.n; }, 20000));
    CHECK_EQ(pp.errors, 0);
    CHECK(loop.run_until([&] { return idle_now(c); }, 5000));
    CHECK_EQ(redis_integer(r, "EVAL %s 0", "return #redis.call('keys', 'pp:*')"), 0);
    for (int i = 0; i < pp.n; i++)
        CHECK_ST(edgelock_lock_free(c, pp.lks[i]), EDGELOCK_OK);
    edgelock_client_destroy(c);
}

// Waits for every call of a burst, then checks each fired once with OK.
static void check_burst_ok(EventLoop &loop, const Probe *probes, int n, const char *what)
{
    auto all_fired = [&] {
        for (int i = 0; i < n; i++)
            if (probes[i].calls == 0)
                return false;
        return true;
    };
    CHECK(loop.run_until(all_fired, 30000));
    for (int i = 0; i < n; i++) {
        check_fired_once(probes[i], what);
        CHECK_ST(probes[i].st, EDGELOCK_OK);
    }
}

// More bytes queued in one turn than the socket takes in one write (each
// command carries a long name twice): the write that goes at the end of the
// loop's pass leaves the rest to the write event, and every call completes.
TEST_CASE(a_burst_bigger_than_one_write_reaches_redis_whole)
{
    setup_thread();
    RedisServer &r = shared_server();
    EventLoop loop;
    REQUIRE(loop.ok());
    const int n = 1500;
    edgelock_client *c = loop_client(loop.base(), [](edgelock_config *cfg) {
        cfg->max_locks = 1500;
        cfg->max_holds = 1500;
        cfg->max_waiters = 1500;
        cfg->max_commands = 3000;
        cfg->max_name_len = 2048;
    });
    REQUIRE(c);
    static edgelock_lock lks[n];
    static Probe locked[n], unlocked[n];
    char name[2048];
    memset(name, 'b', sizeof(name));
    for (int i = 0; i < n; i++) {
        int len = snprintf(name, sizeof(name), "burst:%d:", i);
        name[len] = 'b';
        lks[i] = new_lock(c, name, sizeof(name) - 1);
        locked[i] = Probe{};
        unlocked[i] = Probe{};
    }
    for (int i = 0; i < n; i++)
        CHECK_ST(ASYNC(edgelock_lock_async(c, lks[i], 1, 0, 30000, probe_cb, &locked[i])), EDGELOCK_OK);
    check_burst_ok(loop, locked, n, "burst lock");
    CHECK_EQ(redis_integer(r, "EVAL %s 0", "return #redis.call('keys', 'burst:*')"), n);
    for (int i = 0; i < n; i++)
        CHECK_ST(ASYNC(edgelock_unlock_async(c, lks[i], 1, probe_cb, &unlocked[i])), EDGELOCK_OK);
    check_burst_ok(loop, unlocked, n, "burst unlock");
    CHECK(loop.run_until([&] { return idle_now(c); }, 5000));
    CHECK_EQ(redis_integer(r, "EVAL %s 0", "return #redis.call('keys', 'burst:*')"), 0);
    for (int i = 0; i < n; i++)
        CHECK_ST(edgelock_lock_free(c, lks[i]), EDGELOCK_OK);
    edgelock_client_destroy(c);
}

// ---- destruction ----------------------------------------------------------------------

struct ShutdownProbe {
    edgelock_client *c;
    edgelock_lock lk;
    edgelock_status retry = EDGELOCK_OK; // an async call made from the SHUTDOWN callback
    edgelock_status new_lock = EDGELOCK_OK;
};
static void call_again_on_shutdown(Probe *p)
{
    ShutdownProbe *sp = static_cast<ShutdownProbe *>(p->ctx);
    if (p->st != EDGELOCK_ERR_SHUTDOWN)
        return;
    Probe *never = new Probe; // leaked on purpose if it ever fires: it must not
    sp->retry = ASYNC(edgelock_lock_async(sp->c, sp->lk, 3, 0, 1000, probe_cb, never));
    if (sp->retry != EDGELOCK_OK)
        delete never;
    edgelock_lock tmp;
    sp->new_lock = edgelock_lock_new(sp->c, "late", 4, &tmp);
}

TEST_CASE(destroy_with_calls_pending_completes_each_with_shutdown)
{
    setup_thread();
    RedisServer &r = shared_server();
    edgelock_client *holder = make_client(r.url());
    REQUIRE(holder);
    edgelock_lock h1 = make_lock(holder, "pending-1");
    edgelock_lock h2 = make_lock(holder, "pending-2");
    CHECK_ST(edgelock_try_lock(holder, h1, 0, 30000), EDGELOCK_OK);
    CHECK_ST(edgelock_try_lock(holder, h2, 0, 30000), EDGELOCK_OK);

    EventLoop loop;
    REQUIRE(loop.ok());
    edgelock_client *c = loop_client(loop.base());
    REQUIRE(c);
    edgelock_lock l1 = new_lock(c, "pending-1");
    edgelock_lock l2 = new_lock(c, "pending-2");
    edgelock_lock l3 = new_lock(c, "pending-3");
    Probe forever1, forever2, long_wait, held, in_flight1, in_flight2, in_flight3;
    ShutdownProbe sp{c, l3};
    forever1.then = call_again_on_shutdown;
    forever1.ctx = &sp;
    CHECK_ST(ASYNC(edgelock_lock_async(c, l1, 1, EDGELOCK_WAIT_FOREVER, 10000, probe_cb, &forever1)),
             EDGELOCK_OK);
    CHECK_ST(ASYNC(edgelock_lock_async(c, l1, 2, EDGELOCK_WAIT_FOREVER, EDGELOCK_LEASE_WATCHDOG, probe_cb,
                                       &forever2)),
             EDGELOCK_OK);
    CHECK_ST(ASYNC(edgelock_lock_async(c, l2, 1, 600000, 10000, probe_cb, &long_wait)), EDGELOCK_OK);
    CHECK_ST(ASYNC(edgelock_lock_async(c, l3, 1, 0, EDGELOCK_LEASE_WATCHDOG, probe_cb, &held)), EDGELOCK_OK);
    CHECK(loop.run_until([&] { return held.calls > 0; }, 5000));
    CHECK_ST(held.st, EDGELOCK_OK);
    loop.run_for(200); // the waiters are subscribed and waiting
    edgelock_stats s;
    CHECK_ST(edgelock_client_stats(c, &s), EDGELOCK_OK);
    CHECK_EQ(s.waiters, 3);
    // Calls in flight (sent, no reply read yet) at destruction.
    CHECK_ST(ASYNC(edgelock_is_locked_async(c, l3, probe_cb, &in_flight1)), EDGELOCK_OK);
    CHECK_ST(ASYNC(edgelock_unlock_async(c, l3, 1, probe_cb, &in_flight2)), EDGELOCK_OK);
    CHECK_ST(ASYNC(edgelock_lock_async(c, l3, 1, 0, 1000, probe_cb, &in_flight3)), EDGELOCK_OK);
    int before = g_probe_calls;
    edgelock_client_destroy(c);
    int fired = g_probe_calls - before;
    CHECK_EQ(fired, 6);
    Probe *all[] = {&forever1, &forever2, &long_wait, &in_flight1, &in_flight2, &in_flight3};
    for (Probe *p : all) {
        check_fired_once(*p, "pending at destroy");
        CHECK_ST(p->st, EDGELOCK_ERR_SHUTDOWN);
        CHECK_EQ(p->value, 0);
    }
    CHECK_ST(sp.retry, EDGELOCK_ERR_SHUTDOWN);
    CHECK_ST(sp.new_lock, EDGELOCK_ERR_SHUTDOWN);
    before = g_probe_calls;
    loop.run_for(200); // nothing more fires; nothing of the client is touched
    CHECK_EQ(g_probe_calls, before);
    CHECK_EQ(held.calls, 1);

    // The holder is unaffected; pending-3 is left to expire (watchdog stopped).
    CHECK_EQ(redis_integer(r, "HLEN pending-1"), 1);
    CHECK_EQ(redis_integer(r, "EXISTS pending-3"), 1);
    long long ttl = redis_integer(r, "PTTL pending-3");
    CHECK(ttl > 0 && ttl <= 30000);
    freeReplyObject(r.command("DEL pending-3"));
    CHECK_ST(edgelock_unlock(holder, h1, nullptr), EDGELOCK_OK);
    CHECK_ST(edgelock_unlock(holder, h2, nullptr), EDGELOCK_OK);
    edgelock_client_destroy(holder);
}

TEST_CASE(destroy_before_connecting_completes_queued_calls)
{
    setup_thread();
    EventLoop loop;
    REQUIRE(loop.ok());
    edgelock_client *c = loop_client(loop.base());
    REQUIRE(c);
    edgelock_lock lk = new_lock(c, "never-sent");
    Probe a, b;
    CHECK_ST(ASYNC(edgelock_lock_async(c, lk, 1, EDGELOCK_WAIT_FOREVER, 1000, probe_cb, &a)), EDGELOCK_OK);
    CHECK_ST(ASYNC(edgelock_is_locked_async(c, lk, probe_cb, &b)), EDGELOCK_OK);
    edgelock_client_destroy(c); // the loop never ran
    check_fired_once(a, "queued lock");
    CHECK_ST(a.st, EDGELOCK_ERR_SHUTDOWN);
    check_fired_once(b, "queued query");
    CHECK_ST(b.st, EDGELOCK_ERR_SHUTDOWN);
    loop.run_for(100);
    CHECK_EQ(a.calls, 1);
    CHECK_EQ(b.calls, 1);
    CHECK_EQ(redis_integer(shared_server(), "EXISTS never-sent"), 0);
}

struct DestroyInside {
    edgelock_client *c;
    int destroyed;
};
static void destroy_from_callback(Probe *p)
{
    DestroyInside *d = static_cast<DestroyInside *>(p->ctx);
    if (d->destroyed++)
        return;
    edgelock_client_destroy(d->c);
}

TEST_CASE(destroy_from_inside_a_callback)
{
    setup_thread();
    RedisServer &r = shared_server();
    edgelock_client *holder = make_client(r.url());
    REQUIRE(holder);
    edgelock_lock h = make_lock(holder, "inside-held");
    CHECK_ST(edgelock_try_lock(holder, h, 0, 30000), EDGELOCK_OK);

    EventLoop loop;
    REQUIRE(loop.ok());
    edgelock_client *c = loop_client(loop.base());
    REQUIRE(c);
    edgelock_lock mine = new_lock(c, "inside");
    edgelock_lock theirs = new_lock(c, "inside-held");
    DestroyInside d{c, 0};
    Probe waiter, lock, q1, q2;
    CHECK_ST(ASYNC(edgelock_lock_async(c, theirs, 1, EDGELOCK_WAIT_FOREVER, 10000, probe_cb, &waiter)),
             EDGELOCK_OK);
    loop.run_for(200);
    CHECK_EQ(waiter.calls, 0);
    lock.then = destroy_from_callback;
    lock.ctx = &d;
    CHECK_ST(ASYNC(edgelock_lock_async(c, mine, 1, 0, 10000, probe_cb, &lock)), EDGELOCK_OK);
    // Queued behind the lock on the same connection: still pending when the
    // lock callback destroys the client.
    CHECK_ST(ASYNC(edgelock_is_locked_async(c, mine, probe_cb, &q1)), EDGELOCK_OK);
    CHECK_ST(ASYNC(edgelock_remaining_ttl_async(c, mine, probe_cb, &q2)), EDGELOCK_OK);
    CHECK(loop.run_until([&] { return lock.calls > 0; }, 5000));
    loop.run_for(200); // the release completes once control is back in the loop
    CHECK_EQ(d.destroyed, 1);
    check_fired_once(lock, "the destroying callback");
    CHECK_ST(lock.st, EDGELOCK_OK);
    check_fired_once(waiter, "waiter at destroy");
    CHECK_ST(waiter.st, EDGELOCK_ERR_SHUTDOWN);
    // The queries either completed before the destroy or with SHUTDOWN.
    check_fired_once(q1, "query 1");
    check_fired_once(q2, "query 2");
    CHECK(q1.st == EDGELOCK_OK || q1.st == EDGELOCK_ERR_SHUTDOWN);
    CHECK(q2.st == EDGELOCK_OK || q2.st == EDGELOCK_ERR_SHUTDOWN);
    CHECK_EQ(redis_integer(r, "HLEN inside-held"), 1);
    freeReplyObject(r.command("DEL inside"));
    CHECK_ST(edgelock_unlock(holder, h, nullptr), EDGELOCK_OK);
    edgelock_client_destroy(holder);
}

// ---- lock lost --------------------------------------------------------------------------

struct Lost {
    int calls = 0;
    edgelock_lock lock = {0};
    uint64_t owner = 0;
    edgelock_client *client = nullptr;
    bool inside_call = false;
    bool off_thread = false;
    bool destroy = false; // destroy the client from the notice
};
static void on_lost(edgelock_client *c, edgelock_lock lk, uint64_t owner, void *user)
{
    Lost *l = static_cast<Lost *>(user);
    l->calls++;
    l->lock = lk;
    l->owner = owner;
    l->client = c;
    if (g_in_call)
        l->inside_call = true;
    if (edgelock_current_owner() != g_loop_tid)
        l->off_thread = true;
    if (l->destroy && l->calls == 1)
        edgelock_client_destroy(c);
}

static Lost g_lost;
static void short_watchdog(edgelock_config *cfg)
{
    cfg->watchdog_lease_ms = 300;
    cfg->on_lock_lost = on_lost;
    cfg->on_lock_lost_user = &g_lost;
}

TEST_CASE(lock_lost_in_event_loop_mode)
{
    setup_thread();
    RedisServer &r = shared_server();
    g_lost = Lost();
    EventLoop loop;
    REQUIRE(loop.ok());
    edgelock_client *c = loop_client(loop.base(), short_watchdog);
    REQUIRE(c);
    edgelock_lock lk = new_lock(c, "lost-async");
    edgelock_lock other = new_lock(c, "kept-async");
    const uint64_t task = 31337;
    Probe l, k;
    CHECK_ST(
        outcome(loop, l,
                [&] { return edgelock_lock_async(c, lk, task, 0, EDGELOCK_LEASE_WATCHDOG, probe_cb, &l); }),
        EDGELOCK_OK);
    CHECK_ST(
        outcome(loop, k,
                [&] { return edgelock_lock_async(c, other, 8, 0, EDGELOCK_LEASE_WATCHDOG, probe_cb, &k); }),
        EDGELOCK_OK);
    loop.run_for(500); // renewed past its first lease
    edgelock_stats s;
    CHECK_ST(edgelock_client_stats(c, &s), EDGELOCK_OK);
    CHECK(s.renew_calls > 0);
    CHECK_EQ(redis_integer(r, "EXISTS lost-async"), 1);
    CHECK_EQ(g_lost.calls, 0);

    freeReplyObject(r.command("DEL lost-async"));
    CHECK(loop.run_until([&] { return g_lost.calls > 0; }, 3000));
    loop.run_for(400);
    CHECK_EQ(g_lost.calls, 1);
    CHECK_EQ(g_lost.lock.id, lk.id);
    CHECK_EQ(g_lost.owner, task);
    CHECK(g_lost.client == c);
    CHECK(!g_lost.inside_call);
    CHECK(!g_lost.off_thread);
    // The other hold is still renewed.
    CHECK_EQ(redis_integer(r, "EXISTS kept-async"), 1);

    Probe hc, u, u2, ko;
    CHECK_ST(outcome(loop, hc, [&] { return edgelock_hold_count_async(c, lk, task, probe_cb, &hc); }),
             EDGELOCK_ERR_LOST);
    CHECK_ST(outcome(loop, u, [&] { return edgelock_unlock_async(c, lk, task, probe_cb, &u); }),
             EDGELOCK_ERR_LOST);
    // Reported once: afterwards the owner simply does not hold it.
    CHECK_ST(outcome(loop, u2, [&] { return edgelock_unlock_async(c, lk, task, probe_cb, &u2); }),
             EDGELOCK_ERR_NOT_OWNER);
    CHECK_ST(outcome(loop, ko, [&] { return edgelock_unlock_async(c, other, 8, probe_cb, &ko); }),
             EDGELOCK_OK);
    CHECK_EQ(ko.value, 1);
    CHECK(loop.run_until([&] { return idle_now(c); }, 5000));
    CHECK_ST(edgelock_lock_free(c, lk), EDGELOCK_OK);
    CHECK_ST(edgelock_lock_free(c, other), EDGELOCK_OK);
    edgelock_client_destroy(c);
}

TEST_CASE(destroy_from_inside_the_lock_lost_notice)
{
    setup_thread();
    RedisServer &r = shared_server();
    g_lost = Lost();
    g_lost.destroy = true;
    EventLoop loop;
    REQUIRE(loop.ok());
    edgelock_client *c = loop_client(loop.base(), short_watchdog);
    REQUIRE(c);
    edgelock_lock a = new_lock(c, "lost-destroy-a");
    edgelock_lock b = new_lock(c, "lost-destroy-b");
    Probe la, lb;
    CHECK_ST(outcome(loop, la,
                     [&] { return edgelock_lock_async(c, a, 1, 0, EDGELOCK_LEASE_WATCHDOG, probe_cb, &la); }),
             EDGELOCK_OK);
    CHECK_ST(outcome(loop, lb,
                     [&] { return edgelock_lock_async(c, b, 2, 0, EDGELOCK_LEASE_WATCHDOG, probe_cb, &lb); }),
             EDGELOCK_OK);
    freeReplyObject(r.command("DEL lost-destroy-a lost-destroy-b"));
    CHECK(loop.run_until([&] { return g_lost.calls > 0; }, 3000));
    loop.run_for(500); // keeps running after the deferred release
    CHECK_EQ(g_lost.calls, 1);
    CHECK(!g_lost.off_thread);
}
