// SPDX-License-Identifier: BSD-3-Clause
// MultiLock with an unbounded wait and a fixed lease: the members taken early
// must still be held when the set is complete (they are held under the
// watchdog while later ones are awaited), and every lease is then the one
// asked for, no longer renewed: the keys go by themselves after it.
#include <string.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "check.hpp"
#include "clients.hpp"
#include "edgelock/edgelock.h"
#include "event_loop.hpp"
#include "redis_server.hpp"

// Long enough that the checks right after the call cannot miss it on a
// loaded machine (never a speed assertion); the blockers outlast it, so a
// member taken early with the plain lease would be gone by then.
static const int64_t kLease = 3000;

// Both keys held with a lease of at most kLease, then gone by themselves.
static void check_lease_then_gone(RedisServer &r, const char *k1, const char *k2)
{
    CHECK_EQ(redis_integer(r, "EXISTS %s", k1), 1);
    CHECK_EQ(redis_integer(r, "EXISTS %s", k2), 1);
    long long p1 = redis_integer(r, "PTTL %s", k1), p2 = redis_integer(r, "PTTL %s", k2);
    CHECK(p1 > 0 && p1 <= kLease);
    CHECK(p2 > 0 && p2 <= kLease);
    // Nothing renews them: both gone within a few leases, with no unlock.
    CHECK(wait_until(
        30000, [&] { return redis_integer(r, "EXISTS %s", k1) + redis_integer(r, "EXISTS %s", k2) == 0; }));
}

// Another client holds the second member for blocker_ms (more than kLease);
// the caller's MultiLock waits without end with a fixed lease: both members
// held when it returns, with that lease, then gone by themselves, and the
// caller knows it.
static void wait_forever_keeps_early_members(const char *k1, const char *k2,
                                             void (*config)(edgelock_config *), int64_t blocker_ms)
{
    RedisServer &r = shared_server();
    edgelock_client *c = make_client(r.url(), config);
    edgelock_client *d = make_client(r.url());
    REQUIRE(c && d);
    edgelock_member m[2] = {{c, make_lock(c, k1)}, {c, make_lock(c, k2)}};
    edgelock_lock blocker = make_lock(d, k2);
    CHECK_ST(edgelock_try_lock(d, blocker, 0, blocker_ms), EDGELOCK_OK);
    CHECK_ST(edgelock_multi_try_lock(m, 2, EDGELOCK_WAIT_FOREVER, kLease), EDGELOCK_OK);
    // Right after: both held, by Redis and by the caller's own account.
    int64_t left = 0;
    for (auto &mm : m) {
        CHECK_ST(edgelock_lock_valid(c, mm.lock, edgelock_current_owner(), &left), EDGELOCK_OK);
        CHECK(left > 0 && left <= kLease);
    }
    check_lease_then_gone(r, k1, k2);
    // The leases ended: the caller knows it, nothing is left to release.
    CHECK_ST(edgelock_lock_valid(c, m[0].lock, edgelock_current_owner(), &left), EDGELOCK_ERR_NOT_OWNER);
    CHECK_ST(edgelock_multi_unlock(m, 2), EDGELOCK_ERR_NOT_OWNER);
    // Still taken and released as usual afterwards.
    CHECK_ST(edgelock_multi_try_lock(m, 2, EDGELOCK_WAIT_FOREVER, 5000), EDGELOCK_OK);
    CHECK_ST(edgelock_multi_unlock(m, 2), EDGELOCK_OK);
    for (auto &mm : m)
        edgelock_lock_free(mm.client, mm.lock);
    edgelock_lock_free(d, blocker);
    CHECK(tables_idle(c));
    CHECK(tables_idle(d));
    edgelock_client_destroy(c);
    edgelock_client_destroy(d);
}

static void default_config(edgelock_config *) {}

static void short_watchdog(edgelock_config *cfg)
{
    cfg->watchdog_lease_ms = 900;
}

TEST_CASE(blocking_multilock_wait_forever_keeps_early_members)
{
    wait_forever_keeps_early_members("mlease:b1", "mlease:b2", default_config, kLease + 1500);
}

// The blocker outlasts several watchdog leases: the member taken first is
// kept all along (renewed by the watchdog), then set to the lease asked for.
TEST_CASE(multilock_wait_forever_outlasting_the_watchdog_lease)
{
    wait_forever_keeps_early_members("mlease:w1", "mlease:w2", short_watchdog, kLease + 2500);
}

TEST_CASE(blocking_multilock_try_once_keeps_the_plain_lease)
{
    RedisServer &r = shared_server();
    edgelock_client *c = make_client(r.url());
    REQUIRE(c);
    edgelock_member m[2] = {{c, make_lock(c, "mlease:o1")}, {c, make_lock(c, "mlease:o2")}};
    CHECK_ST(edgelock_multi_try_lock(m, 2, 0, kLease), EDGELOCK_OK);
    check_lease_then_gone(r, "mlease:o1", "mlease:o2");
    for (auto &mm : m)
        edgelock_lock_free(mm.client, mm.lock);
    CHECK(tables_idle(c));
    edgelock_client_destroy(c);
}

struct Outcome {
    int calls = 0;
    edgelock_status st = EDGELOCK_OK;
};

static void record(edgelock_client *, edgelock_lock, edgelock_status st, int64_t, void *user)
{
    auto *o = static_cast<Outcome *>(user);
    o->calls++;
    o->st = st;
}

// A client on `loop` with the given watchdog lease, and a MultiLock's two
// members on it: the locks a and b.
static bool two_members_on_one_loop_client(EventLoop &loop, RedisServer &r, uint32_t watchdog_lease_ms,
                                           const char *a, const char *b, edgelock_member m[2])
{
    edgelock_config cfg;
    edgelock_config_init(&cfg);
    cfg.url = r.url();
    cfg.watchdog_lease_ms = watchdog_lease_ms;
    edgelock_client *c = nullptr;
    if (edgelock_client_create(&cfg, loop.base(), &c) != EDGELOCK_OK)
        return false;
    m[0].client = m[1].client = c;
    return edgelock_lock_new(c, a, strlen(a), &m[0].lock) == EDGELOCK_OK &&
           edgelock_lock_new(c, b, strlen(b), &m[1].lock) == EDGELOCK_OK;
}

TEST_CASE(async_multilock_wait_forever_keeps_early_members)
{
    RedisServer &r = shared_server();
    EventLoop loop;
    REQUIRE(loop.ok());
    edgelock_member m[2];
    // A 900 ms watchdog lease: the blocker outlasts several of them.
    REQUIRE(two_members_on_one_loop_client(loop, r, 900, "mlease:a1", "mlease:a2", m));
    edgelock_client *c = m[0].client;
    const uint64_t owner = 7, other_owner = 99;

    Outcome held;
    CHECK_ST(edgelock_lock_async(c, m[1].lock, other_owner, 0, kLease + 1500, record, &held), EDGELOCK_OK);
    CHECK(loop.run_until([&] { return held.calls > 0; }, 5000));
    CHECK_ST(held.st, EDGELOCK_OK);

    edgelock_composite state;
    memset(&state, 0, sizeof(state));
    Outcome o;
    CHECK_ST(edgelock_multi_lock_async(&state, m, 2, owner, EDGELOCK_WAIT_FOREVER, kLease, record, &o),
             EDGELOCK_OK);
    CHECK(loop.run_until([&] { return o.calls > 0; }, 30000));
    CHECK_ST(o.st, EDGELOCK_OK);
    CHECK_EQ(redis_integer(r, "EXISTS mlease:a1"), 1);
    CHECK_EQ(redis_integer(r, "EXISTS mlease:a2"), 1);
    int64_t left = 0;
    CHECK_ST(edgelock_lock_valid(c, m[0].lock, owner, &left), EDGELOCK_OK);
    CHECK(left > 0 && left <= kLease);
    CHECK_ST(edgelock_lock_valid(c, m[1].lock, owner, &left), EDGELOCK_OK);
    CHECK(left > 0 && left <= kLease);
    long long p1 = redis_integer(r, "PTTL mlease:a1"), p2 = redis_integer(r, "PTTL mlease:a2");
    CHECK(p1 > 0 && p1 <= kLease);
    CHECK(p2 > 0 && p2 <= kLease);
    // The loop keeps running (the watchdog would renew here if it still
    // owned them): both keys go by themselves.
    CHECK(loop.run_until(
        [&] { return redis_integer(r, "EXISTS mlease:a1") + redis_integer(r, "EXISTS mlease:a2") == 0; },
        30000));
    CHECK_ST(edgelock_lock_valid(c, m[0].lock, owner, &left), EDGELOCK_ERR_NOT_OWNER);

    edgelock_lock_free(c, m[0].lock);
    edgelock_lock_free(c, m[1].lock);
    edgelock_client_destroy(c);
}

// A fair member awaited without end keeps its place in that lock's queue: a
// waiter that comes after the MultiLock's gets the lock after it (found by an
// audit: the blocking face awaited a later member a third of a watchdog
// lease at a time, and each new start joined the queue again at its back).
TEST_CASE(blocking_multilock_keeps_its_place_in_a_fair_members_queue)
{
    RedisServer &r = shared_server();
    edgelock_client *c = make_client(r.url(), short_watchdog); // a third of its lease: 300 ms
    edgelock_client *d = make_client(r.url());
    edgelock_client *e = make_client(r.url());
    REQUIRE(c && d && e);
    edgelock_lock first = make_lock(c, "mfair:1"), fair = {0}, held = {0}, later = {0};
    REQUIRE(edgelock_lock_new_kind(c, EDGELOCK_FAIR, "mfair:2", 7, &fair) == EDGELOCK_OK);
    REQUIRE(edgelock_lock_new_kind(d, EDGELOCK_FAIR, "mfair:2", 7, &held) == EDGELOCK_OK);
    REQUIRE(edgelock_lock_new_kind(e, EDGELOCK_FAIR, "mfair:2", 7, &later) == EDGELOCK_OK);
    CHECK_ST(edgelock_try_lock(d, held, 0, 60000), EDGELOCK_OK);
    auto queued = [&] { return redis_integer(r, "LLEN %s", "redisson_lock_queue:{mfair:2}"); };

    std::atomic<int> seq{0}, multi_order{0}, later_order{0};
    std::atomic<int> multi_st{1}, later_st{1}, unlock_st{1}, later_unlock_st{1};
    std::atomic<bool> release{false};
    edgelock_member m[2] = {{c, first}, {c, fair}};
    std::thread t_multi([&] { // the owner: this thread, for the unlock too
        multi_st = edgelock_multi_try_lock(m, 2, EDGELOCK_WAIT_FOREVER, kLease);
        multi_order = ++seq;
        while (!release.load())
            sleep_ms(2);
        unlock_st = edgelock_multi_unlock(m, 2);
    });
    REQUIRE(wait_until(10000, [&] { return queued() == 1; }));
    std::thread t_later([&] {
        later_st = edgelock_try_lock(e, later, 60000, 60000);
        later_order = ++seq;
        if (later_st == EDGELOCK_OK)
            later_unlock_st = edgelock_unlock(e, later, nullptr);
    });
    REQUIRE(wait_until(10000, [&] { return queued() == 2; }));
    sleep_ms(1500); // several of the old thirds of a watchdog lease
    char head[128] = "";
    redis_string(r, head, sizeof(head), "LINDEX %s 0", "redisson_lock_queue:{mfair:2}");
    CHECK(strncmp(head, edgelock_client_id(c), strlen(edgelock_client_id(c))) == 0);

    CHECK_ST(edgelock_unlock(d, held, nullptr), EDGELOCK_OK);
    REQUIRE(wait_until(30000, [&] { return multi_order.load() != 0; }));
    CHECK_EQ(multi_st.load(), EDGELOCK_OK);
    CHECK_EQ(multi_order.load(), 1); // first in the queue, first served
    CHECK_EQ(later_order.load(), 0);
    release = true;
    t_multi.join();
    t_later.join();
    CHECK_EQ(unlock_st.load(), EDGELOCK_OK);
    CHECK_EQ(later_st.load(), EDGELOCK_OK);
    CHECK_EQ(later_order.load(), 2);
    CHECK_EQ(later_unlock_st.load(), EDGELOCK_OK);
    edgelock_lock_free(c, first);
    edgelock_lock_free(c, fair);
    edgelock_lock_free(d, held);
    edgelock_lock_free(e, later);
    CHECK(tables_idle(c) && tables_idle(d) && tables_idle(e));
    edgelock_client_destroy(c);
    edgelock_client_destroy(d);
    edgelock_client_destroy(e);
}

static void watchdog_300(edgelock_config *cfg)
{
    cfg->watchdog_lease_ms = 300;
}

// A member taken early is lost while a later one is awaited (its key deleted
// here; a server stopped past the watchdog lease did it in a stress run).
// With the watchdog's lease no Extend follows to find that out, and the
// MultiLock answered OK without that member: all or nothing means LOST,
// with the rest given back.
TEST_CASE(blocking_multilock_with_a_member_lost_while_waiting_is_not_ok)
{
    RedisServer &r = shared_server();
    edgelock_client *c = make_client(r.url(), watchdog_300);
    edgelock_client *d = make_client(r.url());
    REQUIRE(c && d);
    edgelock_member m[2] = {{c, make_lock(c, "mlease:l1")}, {c, make_lock(c, "mlease:l2")}};
    edgelock_lock blocker = make_lock(d, "mlease:l2");
    CHECK_ST(edgelock_try_lock(d, blocker, 0, 1500), EDGELOCK_OK); // lapses by itself
    std::thread deleter([&] {
        wait_until(10000, [&] { return redis_integer(r, "EXISTS mlease:l1") == 1; });
        redis_integer(r, "DEL mlease:l1");
    });
    edgelock_status st = edgelock_multi_try_lock(m, 2, EDGELOCK_WAIT_FOREVER, EDGELOCK_LEASE_WATCHDOG);
    deleter.join();
    CHECK_ST(st, EDGELOCK_ERR_LOST);
    int64_t left = 0;
    CHECK(edgelock_lock_valid(c, m[1].lock, edgelock_current_owner(), &left) != EDGELOCK_OK);
    CHECK(wait_until(5000, [&] { return redis_integer(r, "EXISTS mlease:l2") == 0; })); // given back
    CHECK_ST(edgelock_multi_try_lock(m, 2, 0, EDGELOCK_LEASE_WATCHDOG), EDGELOCK_OK);   // usable again
    CHECK_ST(edgelock_multi_unlock(m, 2), EDGELOCK_OK);
    for (auto &mm : m)
        edgelock_lock_free(mm.client, mm.lock);
    edgelock_lock_free(d, blocker);
    CHECK(tables_idle(c));
    edgelock_client_destroy(c);
    edgelock_client_destroy(d);
}

TEST_CASE(async_multilock_with_a_member_lost_while_waiting_is_not_ok)
{
    RedisServer &r = shared_server();
    EventLoop loop;
    REQUIRE(loop.ok());
    edgelock_member m[2];
    REQUIRE(two_members_on_one_loop_client(loop, r, 300, "mlease:al1", "mlease:al2", m));
    edgelock_client *c = m[0].client;
    const uint64_t owner = 7, other_owner = 99;
    Outcome held;
    CHECK_ST(edgelock_lock_async(c, m[1].lock, other_owner, 0, 1500, record, &held), EDGELOCK_OK);
    CHECK(loop.run_until([&] { return held.calls > 0; }, 5000));
    edgelock_composite state;
    memset(&state, 0, sizeof(state));
    Outcome o;
    CHECK_ST(edgelock_multi_lock_async(&state, m, 2, owner, EDGELOCK_WAIT_FOREVER, EDGELOCK_LEASE_WATCHDOG,
                                       record, &o),
             EDGELOCK_OK);
    CHECK(loop.run_until([&] { return redis_integer(r, "EXISTS mlease:al1") == 1; }, 5000));
    redis_integer(r, "DEL mlease:al1");
    CHECK(loop.run_until([&] { return o.calls > 0; }, 30000));
    CHECK_ST(o.st, EDGELOCK_ERR_LOST);
    CHECK(loop.run_until([&] { return redis_integer(r, "EXISTS mlease:al2") == 0; }, 5000));
    edgelock_lock_free(c, m[0].lock);
    edgelock_lock_free(c, m[1].lock);
    edgelock_client_destroy(c);
}

static void nine_second_watchdog_four_commands(edgelock_config *cfg)
{
    cfg->watchdog_lease_ms = 9000;
    cfg->max_commands = 4;
    cfg->command_timeout_ms = 30000;
}

// A MultiLock's give-back that cannot even be queued (the command table full
// of calls a paused server holds) left the member it had taken under the
// watchdog renewed for ever, by nobody who knew of it (found by reading the
// composite code after a stress run). The member now lapses with its lease.
// When the owner held that member before (the MultiLock re-entered it), the
// re-entry's count stayed, and the owner's own unlock left the lock held and
// renewed; now that unlock releases it. Its own server: CLIENT PAUSE stops
// every client of it.
static void give_back_finds_no_room(bool owner_held_it_before)
{
    RedisServer r;
    REQUIRE(r.start());
    edgelock_client *c = make_client(r.url(), nine_second_watchdog_four_commands);
    edgelock_client *d = make_client(r.url());
    REQUIRE(c && d);
    edgelock_member m[2] = {{c, make_lock(c, "gb:a")}, {c, make_lock(c, "gb:b")}};
    edgelock_lock blocker = make_lock(d, "gb:b");
    edgelock_lock other = make_lock(c, "gb:other");
    CHECK_ST(edgelock_try_lock(d, blocker, 0, 60000), EDGELOCK_OK);
    std::atomic<edgelock_status> st{EDGELOCK_OK}, before_st{EDGELOCK_OK}, unlock_st{EDGELOCK_OK};
    int released = -1;
    std::atomic<bool> room{false};
    std::thread taker([&] {
        if (owner_held_it_before)
            before_st = edgelock_try_lock(c, m[0].lock, 0, EDGELOCK_LEASE_WATCHDOG);
        st = edgelock_multi_try_lock(m, 2, 2000, EDGELOCK_LEASE_WATCHDOG);
        if (!owner_held_it_before)
            return;
        while (!room.load())
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        unlock_st = edgelock_unlock(c, m[0].lock, &released);
    });
    // gb:a taken under the watchdog, gb:b waited for: subscribed, and the
    // attempt that follows the subscription answered (no command in flight).
    // Counted as a waiter before that, the wait could still need a command
    // slot after the pause below filled the table, and ended TABLE_FULL.
    CHECK(wait_until(10000, [&] {
        edgelock_stats s = stats_of(c);
        return redis_integer(r, "EXISTS gb:a") == 1 && s.waiters == 1 && s.subscriptions == 1 &&
               s.commands == 0;
    }));
    redis_integer(r, "CLIENT PAUSE 3000 ALL"); // shorter than a lease: nothing is lost
    // More calls than command slots: whatever else takes one (a renewal),
    // the table stays full until the pause ends, after gb:b's wait.
    std::thread fillers[6];
    for (auto &f : fillers)
        f = std::thread([&] {
            int locked = 0;
            (void)edgelock_is_locked(c, other, &locked);
        });
    CHECK(wait_until(10000, [&] { return stats_of(c).commands == 4; }));
    for (auto &f : fillers)
        f.join();
    room = true;
    taker.join(); // gb:b's wait ended; gb:a's release found no room
    CHECK_ST(before_st, EDGELOCK_OK);
    CHECK_ST(st, EDGELOCK_ERR_WAIT_TIMEOUT);
    if (owner_held_it_before) {
        CHECK_ST(unlock_st, EDGELOCK_OK);
        CHECK_EQ(released, 1);
        CHECK_EQ(redis_integer(r, "EXISTS gb:a"), 0);
    } else {
        // Not renewed any more: gone within a lease of the pause's end.
        CHECK(wait_until(25000, [&] { return redis_integer(r, "EXISTS gb:a") == 0; }));
    }
    CHECK(wait_until(5000, [&] { return stats_of(c).holds == 0; }));
    edgelock_lock_free(c, m[0].lock);
    edgelock_lock_free(c, m[1].lock);
    edgelock_lock_free(c, other);
    edgelock_lock_free(d, blocker);
    edgelock_client_destroy(c);
    edgelock_client_destroy(d);
}

TEST_CASE(blocking_multilock_give_back_that_cannot_be_queued_lets_the_member_lapse)
{
    give_back_finds_no_room(false);
}

TEST_CASE(blocking_multilock_give_back_of_a_re_entry_that_cannot_be_queued_leaves_the_owner_hold_alone)
{
    give_back_finds_no_room(true);
}
