// SPDX-License-Identifier: BSD-3-Clause
// Contention through the blocking C ABI: several threads (and clients) racing
// for one lock against a real redis-server. Hand-off by unlock, by lease
// expiry, wait timeouts, mutual exclusion, and wake-up by pub/sub.
#include <stdio.h>
#include <string.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "check.hpp"
#include "clients.hpp"
#include "edgelock/edgelock.h"
#include "redis_server.hpp"

namespace
{

// A client with room for a thousand concurrent lock calls.
void big_tables(edgelock_config *cfg)
{
    cfg->max_locks = 64;
    cfg->max_holds = 1100;
    cfg->max_waiters = 1100;
    cfg->max_commands = 4096;
}

void room_for_200(edgelock_config *cfg)
{
    cfg->max_holds = 256;
    cfg->max_waiters = 256;
    cfg->max_commands = 1024;
}

// Tracks how many threads are inside a critical section and the most seen at once.
struct Exclusion {
    std::atomic<int> inside{0};
    std::atomic<int> max_inside{0};
    void enter()
    {
        int now = ++inside;
        int seen = max_inside.load();
        while (now > seen && !max_inside.compare_exchange_weak(seen, now)) {
        }
    }
    void leave() { --inside; }
};

} // namespace

TEST_CASE(waiter_gets_the_lock_only_after_the_holders_unlock)
{
    RedisServer &r = shared_server();
    edgelock_client *c = make_client(r.url());
    REQUIRE(c);
    edgelock_lock lk = make_lock(c, "cont:two");

    std::atomic<bool> a_holds{false}, a_unlocking{false}, b_done{false};
    std::atomic<bool> b_acquired_before_unlock{false};
    std::atomic<int> b_status{1};
    std::atomic<int> a_unlock_status{1};

    std::thread a([&] {
        CHECK_ST(edgelock_try_lock(c, lk, 0, 30000), EDGELOCK_OK);
        a_holds = true;
        // B parks as a waiter; it must not get the lock while A holds it.
        CHECK(wait_until(5000, [&] { return stats_of(c).waiters == 1; }));
        sleep_ms(300);
        CHECK(!b_done.load());
        a_unlocking = true; // set before the unlock call starts
        int released = -1;
        a_unlock_status = edgelock_unlock(c, lk, &released);
        CHECK_EQ(released, 1);
    });
    REQUIRE(wait_until(5000, [&] { return a_holds.load(); }));
    std::thread b([&] {
        edgelock_status st = edgelock_try_lock(c, lk, 10000, 30000);
        b_acquired_before_unlock = !a_unlocking.load();
        b_status = st;
        b_done = true;
        if (st == EDGELOCK_OK) {
            int held = -1;
            CHECK_ST(edgelock_is_held_by_current_thread(c, lk, &held), EDGELOCK_OK);
            CHECK_EQ(held, 1);
            int released = -1;
            CHECK_ST(edgelock_unlock(c, lk, &released), EDGELOCK_OK);
            CHECK_EQ(released, 1);
        }
    });
    a.join();
    b.join();
    CHECK_EQ(a_unlock_status.load(), EDGELOCK_OK);
    CHECK_EQ(b_status.load(), EDGELOCK_OK);
    CHECK(!b_acquired_before_unlock.load());
    CHECK_EQ(redis_integer(r, "EXISTS cont:two"), 0);
    CHECK(tables_idle(c));
    CHECK_ST(edgelock_lock_free(c, lk), EDGELOCK_OK);
    edgelock_client_destroy(c);
}

TEST_CASE(two_waiters_race_after_unlock_and_never_overlap)
{
    RedisServer &r = shared_server();
    edgelock_client *c = make_client(r.url());
    REQUIRE(c);
    edgelock_lock lk = make_lock(c, "cont:three");
    Exclusion ex;
    std::atomic<bool> a_holds{false}, a_unlocking{false};
    std::atomic<int> acquired{0}, early{0};

    std::thread a([&] {
        CHECK_ST(edgelock_try_lock(c, lk, 0, 30000), EDGELOCK_OK);
        ex.enter();
        a_holds = true;
        CHECK(wait_until(5000, [&] { return stats_of(c).waiters == 2; }));
        sleep_ms(200);
        ex.leave();
        a_unlocking = true;
        int released = -1;
        CHECK_ST(edgelock_unlock(c, lk, &released), EDGELOCK_OK);
        CHECK_EQ(released, 1);
    });
    REQUIRE(wait_until(5000, [&] { return a_holds.load(); }));
    // Leases are long (30 s) and the wait is 10 s: each hand-off must come from
    // the unlock message, or the waiter times out.
    auto contender = [&] {
        edgelock_status st = edgelock_try_lock(c, lk, 10000, 30000);
        CHECK_ST(st, EDGELOCK_OK);
        if (st != EDGELOCK_OK)
            return;
        if (!a_unlocking.load())
            early++;
        ex.enter();
        acquired++;
        sleep_ms(50);
        ex.leave();
        int released = -1;
        CHECK_ST(edgelock_unlock(c, lk, &released), EDGELOCK_OK);
        CHECK_EQ(released, 1);
    };
    std::thread b(contender), cc(contender);
    a.join();
    b.join();
    cc.join();
    CHECK_EQ(acquired.load(), 2);
    CHECK_EQ(early.load(), 0);
    CHECK_EQ(ex.max_inside.load(), 1);
    CHECK_EQ(redis_integer(r, "EXISTS cont:three"), 0);
    CHECK(tables_idle(c));
    edgelock_lock_free(c, lk);
    edgelock_client_destroy(c);
}

TEST_CASE(wait_times_out_after_the_wait_time)
{
    RedisServer &r = shared_server();
    edgelock_client *c = make_client(r.url());
    REQUIRE(c);
    edgelock_lock lk = make_lock(c, "cont:timeout");
    CHECK_ST(edgelock_try_lock(c, lk, 0, 30000), EDGELOCK_OK);

    std::atomic<int> status{1};
    std::atomic<uint64_t> elapsed{0};
    std::thread t([&] {
        uint64_t t0 = mono_ms();
        status = edgelock_try_lock(c, lk, 1000, 10);
        elapsed = mono_ms() - t0;
    });
    t.join();
    CHECK_EQ(status.load(), EDGELOCK_ERR_WAIT_TIMEOUT);
    CHECK(elapsed.load() >= 950);
    CHECK(elapsed.load() < 30000); // a hang, not a slow machine
    // The holder is untouched.
    CHECK_EQ(redis_integer(r, "HLEN cont:timeout"), 1);
    int64_t count = 0;
    CHECK_ST(edgelock_hold_count(c, lk, &count), EDGELOCK_OK);
    CHECK_EQ(count, 1);

    int released = -1;
    CHECK_ST(edgelock_unlock(c, lk, &released), EDGELOCK_OK);
    CHECK_EQ(released, 1);
    CHECK_EQ(redis_integer(r, "EXISTS cont:timeout"), 0);
    CHECK(tables_idle(c));
    edgelock_lock_free(c, lk);
    edgelock_client_destroy(c);
}

// edgelock_cancel() from another thread ends a blocking wait: CANCELLED, no
// table entry left, the holder untouched; a later wait works as before.
TEST_CASE(another_thread_cancels_a_blocking_wait)
{
    RedisServer &r = shared_server();
    edgelock_client *c = make_client(r.url());
    REQUIRE(c);
    edgelock_lock lk = make_lock(c, "cont:cancel");
    CHECK_ST(edgelock_try_lock(c, lk, 0, 60000), EDGELOCK_OK);

    std::atomic<uint64_t> waiter_owner{0};
    std::atomic<int> status{1};
    std::thread t([&] {
        waiter_owner = edgelock_current_owner();
        status = edgelock_try_lock(c, lk, 120000, 10000);
    });
    CHECK(wait_until(10000, [&] { return stats_of(c).waiters == 1; }));
    CHECK_ST(edgelock_cancel(c, waiter_owner.load()), EDGELOCK_OK);
    t.join();
    CHECK_EQ(status.load(), EDGELOCK_ERR_CANCELLED);
    CHECK_EQ(redis_integer(r, "HLEN cont:cancel"), 1);              // only the holder
    CHECK_ST(edgelock_cancel(c, waiter_owner.load()), EDGELOCK_OK); // nothing to cancel: fine
    CHECK_ST(edgelock_cancel(nullptr, 1), EDGELOCK_ERR_INVALID_ARG);

    int released = -1;
    CHECK_ST(edgelock_unlock(c, lk, &released), EDGELOCK_OK);
    CHECK_EQ(released, 1);
    CHECK(tables_idle(c));
    std::thread again([&] {
        status = edgelock_try_lock(c, lk, 1000, 10000);
        if (status == EDGELOCK_OK)
            edgelock_unlock(c, lk, nullptr);
    });
    again.join();
    CHECK_EQ(status.load(), EDGELOCK_OK);
    CHECK(tables_idle(c));
    edgelock_lock_free(c, lk);
    edgelock_client_destroy(c);
}

TEST_CASE(lease_expiry_without_unlock_frees_the_lock)
{
    RedisServer &r = shared_server();
    edgelock_client *c = make_client(r.url());
    REQUIRE(c);
    edgelock_lock lk = make_lock(c, "cont:lease");

    std::atomic<uint64_t> a_started{0};
    std::atomic<bool> a_holds{false}, b_holds{false}, a_unlocked{false};
    std::atomic<int> a_unlock_status{1};
    std::atomic<uint64_t> b_acquired_at{0};
    std::atomic<uint64_t> b_owner{0};

    std::thread a([&] {
        a_started = mono_ms();
        CHECK_ST(edgelock_try_lock(c, lk, 0, 200), EDGELOCK_OK);
        a_holds = true;
        // Never unlocks in time: the lease lapses. Unlock only once B holds it.
        CHECK(wait_until(10000, [&] { return b_holds.load(); }));
        int released = -1;
        a_unlock_status = edgelock_unlock(c, lk, &released);
        CHECK_EQ(released, 0);
        a_unlocked = true;
    });
    REQUIRE(wait_until(5000, [&] { return a_holds.load(); }));
    std::thread b([&] {
        edgelock_status st = edgelock_try_lock(c, lk, 5000, 30000);
        b_acquired_at = mono_ms();
        CHECK_ST(st, EDGELOCK_OK);
        if (st != EDGELOCK_OK) {
            b_holds = true; // let A finish
            return;
        }
        b_owner = edgelock_current_owner();
        b_holds = true;
        CHECK(wait_until(10000, [&] { return a_unlocked.load(); }));
        // A's late unlock changed nothing: B still holds it.
        int held = -1;
        CHECK_ST(edgelock_is_held_by_current_thread(c, lk, &held), EDGELOCK_OK);
        CHECK_EQ(held, 1);
        int released = -1;
        CHECK_ST(edgelock_unlock(c, lk, &released), EDGELOCK_OK);
        CHECK_EQ(released, 1);
    });
    a.join();
    b.join();
    CHECK_EQ(a_unlock_status.load(), EDGELOCK_ERR_NOT_OWNER);
    // B got it once A's 200 ms lease ran out, not before (and before its own
    // 5 s wait ended: OK above; no tighter bound, which a loaded machine
    // could break).
    uint64_t after = b_acquired_at.load() - a_started.load();
    CHECK(after >= 180);
    CHECK_EQ(redis_integer(r, "EXISTS cont:lease"), 0);
    CHECK(tables_idle(c));
    edgelock_lock_free(c, lk);
    edgelock_client_destroy(c);
}

// Two hold slots; four threads in turn take the lock with a short lease, and
// none of them unlocks: each lease runs out, and its record leaves the hold
// table (at once when the table is full, else at the watchdog's next tick),
// so that owners who never come back cannot lock everyone out with
// TABLE_FULL.
static void two_holds_short_timeouts(edgelock_config *cfg)
{
    cfg->max_holds = 2;
    cfg->command_timeout_ms = 300;
    cfg->watchdog_lease_ms = 300; // a tick every 100 ms
}

TEST_CASE(leases_left_to_run_out_do_not_fill_the_hold_table)
{
    RedisServer &r = shared_server();
    edgelock_client *c = make_client(r.url(), two_holds_short_timeouts);
    REQUIRE(c);
    edgelock_lock lk = make_lock(c, "cont:lapsed");
    for (int i = 0; i < 4; i++) {
        std::atomic<int> st{1};
        std::thread t([&] { st = edgelock_try_lock(c, lk, 5000, 50); });
        t.join();
        CHECK_ST((edgelock_status)st.load(), EDGELOCK_OK);
        CHECK(stats_of(c).holds <= 2);
    }
    CHECK(wait_until(10000, [&] { return stats_of(c).holds == 0; }));
    CHECK(wait_until(10000, [&] { return redis_integer(r, "EXISTS cont:lapsed") == 0; }));
    CHECK(tables_idle(c));
    CHECK_ST(edgelock_lock_free(c, lk), EDGELOCK_OK);
    edgelock_client_destroy(c);
}

// n threads spread over the clients try one key with a 10 ms wait and a long
// lease: exactly one gets it. The winner unlocks once every thread is done.
// The lease outlasts anything the test waits for: with 10 s, a loaded
// machine under TSan (1000 threads, other suites beside it) took longer to
// finish the threads, the lease ran out, and a late thread rightly took the
// lock too.
static constexpr int64_t kHeldLongerThanTheTest = 600000; // ms; the test's timeout
static void exactly_one_of(const char *key, edgelock_client **clients, int nclients, int n)
{
    RedisServer &r = shared_server();
    std::vector<edgelock_lock> locks((size_t)nclients);
    for (int i = 0; i < nclients; i++)
        locks[(size_t)i] = make_lock(clients[i], key);
    std::atomic<int> ok{0}, timeouts{0}, other{0}, done{0};
    std::atomic<int> other_status{0};
    std::atomic<long long> hlen_while_held{-1};
    std::vector<std::thread> threads;
    threads.reserve((size_t)n);
    for (int i = 0; i < n; i++) {
        threads.emplace_back([&, i] {
            edgelock_client *c = clients[i % nclients];
            edgelock_lock lk = locks[(size_t)(i % nclients)];
            edgelock_status st = edgelock_try_lock(c, lk, 10, kHeldLongerThanTheTest);
            if (st == EDGELOCK_OK)
                ok++;
            else if (st == EDGELOCK_ERR_WAIT_TIMEOUT)
                timeouts++;
            else {
                other++;
                other_status = st;
            }
            done++;
            if (st == EDGELOCK_OK) {
                CHECK(wait_until(60000, [&] { return done.load() == n; }));
                hlen_while_held = redis_integer(r, "HLEN %s", key);
                int released = -1;
                CHECK_ST(edgelock_unlock(c, lk, &released), EDGELOCK_OK);
                CHECK_EQ(released, 1);
            }
        });
    }
    for (auto &t : threads)
        t.join();
    CHECK_EQ(ok.load(), 1);
    CHECK_EQ(timeouts.load(), n - 1);
    CHECK_EQ(other.load(), 0);
    if (other.load())
        fprintf(stderr, "  unexpected status: %s\n",
                edgelock_status_str((edgelock_status)other_status.load()));
    CHECK_EQ(hlen_while_held.load(), 1);
    CHECK_EQ(redis_integer(r, "EXISTS %s", key), 0);
    for (int i = 0; i < nclients; i++) {
        CHECK(tables_idle(clients[i]));
        edgelock_lock_free(clients[i], locks[(size_t)i]);
    }
}

TEST_CASE(thousand_threads_one_client_exactly_one_acquires)
{
    RedisServer &r = shared_server();
    edgelock_client *c = make_client(r.url(), big_tables);
    REQUIRE(c);
    exactly_one_of("cont:thousand", &c, 1, 1000);
    edgelock_client_destroy(c);
}

TEST_CASE(thousand_threads_four_clients_exactly_one_acquires)
{
    RedisServer &r = shared_server();
    edgelock_client *cs[4];
    for (auto &c : cs) {
        c = make_client(r.url(), big_tables);
        REQUIRE(c);
    }
    exactly_one_of("cont:thousand4", cs, 4, 1000);
    for (auto &c : cs)
        edgelock_client_destroy(c);
}

TEST_CASE(hundred_threads_short_lease_all_acquire)
{
    RedisServer &r = shared_server();
    edgelock_client *c = make_client(r.url(), room_for_200);
    REQUIRE(c);
    edgelock_lock lk = make_lock(c, "cont:hundred");
    std::atomic<int> acquired{0}, unlock_ok{0}, unlock_not_owner{0}, bad{0};
    std::vector<std::thread> threads;
    for (int i = 0; i < 100; i++) {
        threads.emplace_back([&] {
            edgelock_status st = edgelock_try_lock(c, lk, 60000, 5);
            CHECK_ST(st, EDGELOCK_OK);
            if (st != EDGELOCK_OK)
                return;
            acquired++;
            // The 5 ms lease may lapse before this: both answers are fine.
            edgelock_status u = edgelock_unlock(c, lk, nullptr);
            if (u == EDGELOCK_OK)
                unlock_ok++;
            else if (u == EDGELOCK_ERR_NOT_OWNER)
                unlock_not_owner++;
            else
                bad++;
        });
    }
    for (auto &t : threads)
        t.join();
    CHECK_EQ(acquired.load(), 100);
    CHECK_EQ(unlock_ok.load() + unlock_not_owner.load(), 100);
    CHECK_EQ(bad.load(), 0);
    printf("  unlocks: %d ok, %d not owner (lease lapsed)\n", unlock_ok.load(), unlock_not_owner.load());
    CHECK(wait_until(1000, [&] { return redis_integer(r, "EXISTS cont:hundred") == 0; }));
    CHECK(tables_idle(c));
    edgelock_lock_free(c, lk);
    edgelock_client_destroy(c);
}

// The same race with a lease long enough that it never lapses while held: now
// mutual exclusion must hold, and every hand-off comes from an unlock message
// (a missed wake-up would leave a waiter sleeping for the 30 s TTL).
TEST_CASE(hundred_threads_long_lease_mutual_exclusion)
{
    RedisServer &r = shared_server();
    edgelock_client *c = make_client(r.url(), room_for_200);
    REQUIRE(c);
    edgelock_lock lk = make_lock(c, "cont:hundred-long");
    Exclusion ex;
    std::atomic<int> acquired{0}, unlocked{0};
    uint64_t t0 = mono_ms();
    std::vector<std::thread> threads;
    for (int i = 0; i < 100; i++) {
        threads.emplace_back([&] {
            edgelock_status st = edgelock_try_lock(c, lk, 60000, 30000);
            CHECK_ST(st, EDGELOCK_OK);
            if (st != EDGELOCK_OK)
                return;
            ex.enter();
            acquired++;
            sleep_ms(1);
            ex.leave();
            int released = -1;
            if (edgelock_unlock(c, lk, &released) == EDGELOCK_OK && released == 1)
                unlocked++;
        });
    }
    for (auto &t : threads)
        t.join();
    uint64_t elapsed = mono_ms() - t0;
    CHECK_EQ(acquired.load(), 100);
    CHECK_EQ(unlocked.load(), 100);
    CHECK_EQ(ex.max_inside.load(), 1);
    CHECK(elapsed < 25000); // one missed wake-up costs the 30 s lease
    CHECK_EQ(redis_integer(r, "EXISTS cont:hundred-long"), 0);
    CHECK(tables_idle(c));
    edgelock_lock_free(c, lk);
    edgelock_client_destroy(c);
}

// holder and waiter may be one client or two (then the wake-up crosses Redis
// pub/sub between two connections).
static void waiter_woken_by_unlock_message(edgelock_client *holder, edgelock_client *waiter_client,
                                           const char *key)
{
    RedisServer &r = shared_server();
    edgelock_lock hl = make_lock(holder, key);
    edgelock_lock wl = waiter_client == holder ? hl : make_lock(waiter_client, key);
    CHECK_ST(edgelock_try_lock(holder, hl, 0, 30000), EDGELOCK_OK);

    std::atomic<int> status{1};
    std::atomic<uint64_t> acquired_at{0};
    std::thread w([&] {
        edgelock_status st = edgelock_try_lock(waiter_client, wl, 10000, 30000);
        acquired_at = mono_ms();
        status = st;
        if (st == EDGELOCK_OK)
            CHECK_ST(edgelock_unlock(waiter_client, wl, nullptr), EDGELOCK_OK);
    });
    // The waiter is parked on the channel (subscribed, no attempt in flight).
    CHECK(wait_until(5000, [&] {
        edgelock_stats s = stats_of(waiter_client);
        return s.waiters == 1 && s.subscriptions == 1 && s.commands == 0;
    }));
    sleep_ms(300);
    CHECK_EQ(acquired_at.load(), 0);
    uint64_t unlock_at = mono_ms();
    int released = -1;
    CHECK_ST(edgelock_unlock(holder, hl, &released), EDGELOCK_OK);
    CHECK_EQ(released, 1);
    w.join();
    CHECK_EQ(status.load(), EDGELOCK_OK);
    CHECK(acquired_at.load() >= unlock_at);
    // The holder's TTL was 30 s: only the unlock message explains a quick wake.
    CHECK(acquired_at.load() - unlock_at < 2000);
    CHECK_EQ(redis_integer(r, "EXISTS %s", key), 0);
    CHECK(tables_idle(holder));
    CHECK(tables_idle(waiter_client));
    if (wl.id != hl.id || waiter_client != holder)
        edgelock_lock_free(waiter_client, wl);
    edgelock_lock_free(holder, hl);
}

TEST_CASE(waiter_is_woken_by_pubsub_across_clients)
{
    RedisServer &r = shared_server();
    edgelock_client *a = make_client(r.url());
    edgelock_client *b = make_client(r.url());
    REQUIRE(a && b);
    waiter_woken_by_unlock_message(a, b, "cont:pubsub2");
    edgelock_client_destroy(a);
    edgelock_client_destroy(b);
}

TEST_CASE(waiter_is_woken_by_pubsub_same_client)
{
    RedisServer &r = shared_server();
    edgelock_client *a = make_client(r.url());
    REQUIRE(a);
    waiter_woken_by_unlock_message(a, a, "cont:pubsub1");
    edgelock_client_destroy(a);
}

// A non-fair lock, but not one that shuts everybody else out: a client that
// unlocks and locks again in a loop lets a waiter in (kYieldEveryHeard: at
// the latest after its second release in a row that the waiter heard). The
// bound on A's rounds is generous: a waiter on a slow machine may miss a
// turn or two, never all of them.
TEST_CASE(a_client_relocking_in_a_loop_lets_a_waiter_in)
{
    RedisServer &r = shared_server();
    edgelock_client *a = make_client(r.url());
    edgelock_client *b = make_client(r.url());
    REQUIRE(a && b);
    edgelock_lock al = make_lock(a, "cont:turns"), bl = make_lock(b, "cont:turns");
    CHECK_ST(edgelock_try_lock(a, al, 0, 30000), EDGELOCK_OK);
    std::atomic<int> b_status{1};
    std::atomic<bool> b_has{false};
    std::thread w([&] {
        edgelock_status st = edgelock_try_lock(b, bl, 60000, 30000);
        b_status = st;
        b_has = true;
        if (st == EDGELOCK_OK)
            CHECK_ST(edgelock_unlock(b, bl, nullptr), EDGELOCK_OK);
    });
    CHECK(wait_until(5000, [&] { return stats_of(b).subscriptions == 1 && stats_of(b).commands == 0; }));
    int rounds = 0;
    while (!b_has.load() && rounds < 100) {
        CHECK_ST(edgelock_unlock(a, al, nullptr), EDGELOCK_OK);
        CHECK_ST(edgelock_try_lock(a, al, 60000, 30000), EDGELOCK_OK);
        rounds++;
    }
    CHECK_ST(edgelock_unlock(a, al, nullptr), EDGELOCK_OK);
    w.join();
    CHECK_EQ(b_status.load(), EDGELOCK_OK);
    CHECK(rounds < 100);
    fprintf(stderr, "  the waiter got in after %d rounds of the relocking client\n", rounds);
    CHECK(tables_idle(a));
    CHECK(tables_idle(b));
    edgelock_lock_free(a, al);
    edgelock_lock_free(b, bl);
    edgelock_client_destroy(a);
    edgelock_client_destroy(b);
}

// The pause itself, with a listener that never takes the lock: after two
// releases in a row that somebody heard, the next lock call waits out the
// pause (then takes the free lock); a call that may not wait that long
// attempts at once instead of timing out. The pause runs from the release's
// reply: measured from before the unlock call, so that a slow machine (qemu)
// taking its time between the two calls cannot make it look shorter; the
// bound is 5 ms, not kYieldMinMs (6 ms), for the clock's millisecond
// truncation.
TEST_CASE(relocking_after_two_heard_releases_pauses_first)
{
    RedisServer &r = shared_server();
    redisContext *listener = r.connect();
    REQUIRE(listener);
    freeReplyObject(redisCommand(listener, "SUBSCRIBE redisson_lock__channel:{cont:pause}"));
    edgelock_client *a = make_client(r.url());
    REQUIRE(a);
    edgelock_lock al = make_lock(a, "cont:pause");
    CHECK_ST(edgelock_try_lock(a, al, 0, 30000), EDGELOCK_OK);
    CHECK_ST(edgelock_unlock(a, al, nullptr), EDGELOCK_OK);
    CHECK_ST(edgelock_try_lock(a, al, 0, 30000), EDGELOCK_OK);
    auto t0 = std::chrono::steady_clock::now();
    CHECK_ST(edgelock_unlock(a, al, nullptr), EDGELOCK_OK); // the second heard release
    CHECK_ST(edgelock_try_lock(a, al, 10000, 30000), EDGELOCK_OK);
    auto waited = std::chrono::steady_clock::now() - t0;
    CHECK(waited >= std::chrono::milliseconds(5)); // the pause (kYieldMinMs), less the ms truncation
    for (int i = 0; i < 2; i++) {
        CHECK_ST(edgelock_unlock(a, al, nullptr), EDGELOCK_OK);
        CHECK_ST(edgelock_try_lock(a, al, i == 0 ? 10000 : 0, 30000), EDGELOCK_OK);
    }
    CHECK_ST(edgelock_unlock(a, al, nullptr), EDGELOCK_OK);
    CHECK(tables_idle(a));
    edgelock_lock_free(a, al);
    edgelock_client_destroy(a);
    redisFree(listener);
}
