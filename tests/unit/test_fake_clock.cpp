// SPDX-License-Identifier: BSD-3-Clause
// The engine on the fake clock and the fake link (fake/fake_engine.hpp): waiter
// timeouts, the watchdog's period and batches, lock loss and reconnect backoff,
// run without Redis and without sleeping. Replies are real RESP bytes, parsed
// by hiredis's reader; what the client sends is checked as RESP arguments.
#include <string.h>

#include <deque>
#include <string>
#include <vector>

#include "check.hpp"
#include "fake/fake_engine.hpp"
#include "fake/harness.hpp"
#include "locks/acquire.hpp"
#include "locks/client.hpp"
#include "locks/handles.hpp"
#include "locks/release.hpp"
#include "redisson/scripts.hpp"

using namespace edgelock;

using namespace fake;

TEST_CASE(an_acquire_goes_out_as_evalsha_of_the_lock_script)
{
    Harness h;
    REQUIRE(h.c);
    // Setup on the command connection: which server it is (INFO server, for
    // edgelock_token_server), then every preloaded script, nothing else.
    REQUIRE(h.cmd().log.size() == 1 + (size_t)kScriptPreloadCount);
    CHECK(resp_args(h.cmd().log[0]) == std::vector<std::string>({"INFO", "server"}));
    CHECK(resp_args(h.cmd().log[1])[0] == "SCRIPT");
    edgelock_lock lk = h.lock("fw");
    Result r;
    CHECK_ST(acquire_start(h.c, lk, 7, 0, 10000, record, &r), EDGELOCK_OK);
    std::vector<std::string> a = h.last_cmd();
    REQUIRE(a.size() == 6);
    CHECK(a[0] == "EVALSHA");
    CHECK(a[1] == kScripts[kScriptAcquire].sha1);
    CHECK(a[2] == "1");
    CHECK(a[3] == "fw");
    CHECK(a[4] == "10000");
    CHECK(a[5] == "unit:7");
    CHECK_EQ(r.calls, 0); // never from inside the call
    h.reply(kNil);
    CHECK_EQ(r.calls, 1);
    CHECK_ST(r.st, EDGELOCK_OK);
}

TEST_CASE(a_waiter_times_out_at_its_deadline_and_leaves_nothing_behind)
{
    Harness h;
    edgelock_lock lk = h.lock("busy");
    Result r;
    CHECK_ST(acquire_start(h.c, lk, 7, 5000, 10000, record, &r), EDGELOCK_OK);
    h.reply(":30000\r\n"); // held elsewhere for 30 s more
    // It subscribes to the lock's channel, then tries once more (an unlock
    // between the first attempt and the subscription would be missed).
    std::vector<std::string> s = resp_args(h.sub().log.back());
    REQUIRE(s.size() == 2);
    CHECK(s[0] == "SUBSCRIBE");
    CHECK(s[1] == "redisson_lock__channel:{busy}");
    size_t sent = h.cmd().log.size();
    h.link.push(&h.c->sub_conn, subscribed(s[1]));
    CHECK_EQ(h.cmd().log.size(), sent + 1);
    h.reply(":29990\r\n");
    // No polling: nothing is sent while it waits, and it ends at its deadline.
    sent = h.cmd().log.size();
    h.loop.advance(4990);
    CHECK_EQ(r.calls, 0);
    CHECK_EQ(h.cmd().log.size(), sent);
    h.loop.advance(20);
    CHECK_EQ(r.calls, 1);
    CHECK_ST(r.st, EDGELOCK_ERR_WAIT_TIMEOUT);
    CHECK(resp_args(h.sub().log.back())[0] == "UNSUBSCRIBE");
    h.link.push(&h.c->sub_conn,
                resp_array({resp_bulk("unsubscribe"), resp_bulk("redisson_lock__channel:{busy}"), ":0\r\n"}));
    CHECK_EQ(h.c->waiters.used(), 0);
    CHECK_EQ(h.c->holds.used(), 0);
    CHECK_EQ(h.c->pubsub.subs.used(), 0);
    CHECK_EQ(h.c->queue.cmds.used(), 0);
}

// libevent's default clock (CLOCK_MONOTONIC_COARSE, in the caller's base)
// fires a timer up to a clock step early by ours: the wait is not over then,
// and it goes on for the rest.
TEST_CASE(a_deadline_timer_that_fires_early_does_not_end_the_wait_early)
{
    Harness h;
    h.loop.coarse_step_ms = 4;
    h.loop.advance(3); // between two steps of the coarse clock
    edgelock_lock lk = h.lock("busy");
    Result r;
    CHECK_ST(acquire_start(h.c, lk, 7, 5000, 10000, record, &r), EDGELOCK_OK);
    h.reply(":30000\r\n");
    h.link.push(&h.c->sub_conn, subscribed(resp_args(h.sub().log.back())[1]));
    h.reply(":29990\r\n");
    h.loop.advance(4998); // the deadline timer fired at 4997 (by the coarse clock, 5000)
    CHECK_EQ(r.calls, 0);
    h.loop.advance(2);
    CHECK_EQ(r.calls, 0); // 5000: the wait is over, but the coarse clock is not there yet
    h.loop.advance(5);
    CHECK_EQ(r.calls, 1);
    CHECK_ST(r.st, EDGELOCK_ERR_WAIT_TIMEOUT);
    CHECK_EQ(h.c->waiters.used(), 0);
}

TEST_CASE(an_unlock_message_wakes_the_oldest_waiter_at_once)
{
    Harness h;
    edgelock_lock lk = h.lock("q");
    Result first, second;
    CHECK_ST(acquire_start(h.c, lk, 1, 60000, 10000, record, &first), EDGELOCK_OK);
    CHECK_ST(acquire_start(h.c, lk, 2, 60000, 10000, record, &second), EDGELOCK_OK);
    h.reply(":30000\r\n");
    h.reply(":30000\r\n");
    h.link.push(&h.c->sub_conn, subscribed("redisson_lock__channel:{q}"));
    h.reply(":29000\r\n");
    h.reply(":29000\r\n");
    size_t sent = h.cmd().log.size();
    h.link.push(&h.c->sub_conn,
                resp_array({resp_bulk("message"), resp_bulk("redisson_lock__channel:{q}"), resp_bulk("0")}));
    REQUIRE(h.cmd().log.size() == sent + 1); // one unlock wakes one waiter
    CHECK(h.last_cmd()[5] == "unit:1");      // the oldest
    h.reply(kNil);
    CHECK_EQ(first.calls, 1);
    CHECK_ST(first.st, EDGELOCK_OK);
    CHECK_EQ(second.calls, 0);
}

// A waiter that got its lock leaves the channel at the loop's next turn, after
// its answer: a lock call on the same lock before then keeps the subscription
// (no UNSUBSCRIBE and SUBSCRIBE round), and the last one out unsubscribes.
TEST_CASE(a_granted_waiter_leaves_its_channel_at_the_next_turn)
{
    Harness h;
    edgelock_lock lk = h.lock("q");
    Result first, second;
    CHECK_ST(acquire_start(h.c, lk, 1, 60000, 10000, record, &first), EDGELOCK_OK);
    h.reply(":30000\r\n");
    h.link.push(&h.c->sub_conn, subscribed("redisson_lock__channel:{q}"));
    h.reply(":29000\r\n");
    h.link.push(&h.c->sub_conn,
                resp_array({resp_bulk("message"), resp_bulk("redisson_lock__channel:{q}"), resp_bulk("0")}));
    h.reply(kNil);
    CHECK_EQ(first.calls, 1);
    CHECK_ST(first.st, EDGELOCK_OK);
    size_t sub_sent = h.sub().log.size();
    CHECK_EQ(h.c->pubsub.subs.used(), 1);
    // Another owner of this client waits on the same lock before the turn.
    CHECK_ST(acquire_start(h.c, lk, 2, 60000, 10000, record, &second), EDGELOCK_OK);
    h.reply(":9000\r\n"); // held (by owner 1): it joins the live subscription...
    h.reply(":8990\r\n"); // ...and tries once more, as after a SUBSCRIBE
    h.loop.advance(0);
    CHECK_EQ(h.sub().log.size(), sub_sent); // no UNSUBSCRIBE, no SUBSCRIBE
    CHECK_EQ(h.c->pubsub.subs.used(), 1);
    h.link.push(&h.c->sub_conn,
                resp_array({resp_bulk("message"), resp_bulk("redisson_lock__channel:{q}"), resp_bulk("0")}));
    h.reply(kNil);
    CHECK_EQ(second.calls, 1);
    CHECK_ST(second.st, EDGELOCK_OK);
    CHECK_EQ(h.sub().log.size(), sub_sent); // answered before the UNSUBSCRIBE
    h.loop.advance(0);
    REQUIRE(h.sub().log.size() == sub_sent + 1);
    CHECK(resp_args(h.sub().log.back())[0] == "UNSUBSCRIBE");
    h.link.push(&h.c->sub_conn,
                resp_array({resp_bulk("unsubscribe"), resp_bulk("redisson_lock__channel:{q}"), ":0\r\n"}));
    CHECK_EQ(h.c->pubsub.subs.used(), 0);
    CHECK_EQ(h.c->waiters.used(), 0);
}

// Turn taking (kYieldEveryHeard) between owners of one client, as the trace
// of 8 async owners on one client showed: owner 1's second heard release makes
// its next lock call pause; owner 2 takes the lock meanwhile and gives it back
// with nobody listening. The pause has served: a lock call by either owner now
// goes out at once, not after the pause (the lock idle for kYieldMinMs or more).
TEST_CASE(a_pause_for_turn_taking_ends_when_this_client_takes_the_lock_again)
{
    Harness h;
    edgelock_lock lk = h.lock("turns");
    auto lock_unlock = [&](uint64_t owner, const char *release_reply) {
        Result got, freed;
        CHECK_ST(acquire_start(h.c, lk, owner, 0, 10000, record, &got), EDGELOCK_OK);
        h.reply(kNil);
        CHECK_ST(got.st, EDGELOCK_OK);
        CHECK_ST(release_start(h.c, lk, owner, record, &freed), EDGELOCK_OK);
        h.reply(release_reply); // 2: freed and heard by a waiter; 1: nobody heard
        h.reply("+OK\r\n");     // the unlock latch's DEL
        CHECK_ST(freed.st, EDGELOCK_OK);
    };
    lock_unlock(1, ":2\r\n");
    lock_unlock(1, ":2\r\n"); // the second heard release in a row

    size_t sent = h.cmd().log.size();
    Result paused;
    CHECK_ST(acquire_start(h.c, lk, 1, 60000, 10000, record, &paused), EDGELOCK_OK);
    CHECK_EQ(h.cmd().log.size(), sent); // owner 1 lets a woken waiter go first

    lock_unlock(2, ":1\r\n"); // owner 2 (wait 0: no pause) takes its turn
    sent = h.cmd().log.size();
    Result next;
    CHECK_ST(acquire_start(h.c, lk, 2, 60000, 10000, record, &next), EDGELOCK_OK);
    REQUIRE(h.cmd().log.size() == sent + 1); // at once, no pause left over
    CHECK(h.last_cmd()[5] == "unit:2");
    h.reply(kNil);
    CHECK_ST(next.st, EDGELOCK_OK);
    CHECK_EQ(paused.calls, 0); // owner 1's paused call goes on waiting
}

// A release heard only by this client's own subscription (the channel of
// its waiter that got the lock, left at the loop's next turn, after the
// release went out) starts no pause: yielding to itself would only leave the
// lock idle (B's handoff had a 3 ms tail). One more subscriber does.
TEST_CASE(a_release_heard_only_by_this_clients_own_subscription_starts_no_pause)
{
    std::deque<Result> calls; // outlive the client: its last call is still waiting at the end
    Harness h;
    edgelock_lock lk = h.lock("self");
    Result waited;
    CHECK_ST(acquire_start(h.c, lk, 1, 60000, 10000, record, &waited), EDGELOCK_OK);
    h.reply(":30000\r\n");
    h.link.push(&h.c->sub_conn, subscribed("redisson_lock__channel:{self}"));
    h.reply(kNil); // the retry after the subscription: taken
    CHECK_ST(waited.st, EDGELOCK_OK);
    REQUIRE(h.c->pubsub.subs.used() == 1); // its channel: still there
    auto unlock_lock = [&](const char *release_reply) {
        Result &freed = calls.emplace_back(), &got = calls.emplace_back();
        CHECK_ST(release_start(h.c, lk, 1, record, &freed), EDGELOCK_OK);
        h.reply(release_reply); // 1 + the subscribers that heard it
        h.reply("+OK\r\n");     // the unlock latch's DEL
        CHECK_ST(freed.st, EDGELOCK_OK);
        size_t sent = h.cmd().log.size();
        CHECK_ST(acquire_start(h.c, lk, 1, 60000, 10000, record, &got), EDGELOCK_OK);
        bool at_once = h.cmd().log.size() == sent + 1;
        if (at_once)
            h.reply(kNil);
        return at_once;
    };
    CHECK(unlock_lock(":2\r\n")); // ourselves only
    CHECK(unlock_lock(":2\r\n"));
    CHECK(unlock_lock(":2\r\n"));
    CHECK(unlock_lock(":3\r\n"));  // ourselves and another client's waiter
    CHECK(!unlock_lock(":3\r\n")); // the second such in a row: a pause first
}

static void small_lease(edgelock_config *cfg)
{
    cfg->watchdog_lease_ms = 30000;
    cfg->max_locks = 200;
    cfg->max_holds = 200;
    cfg->max_waiters = 200;
    cfg->max_commands = 300;
}

TEST_CASE(the_watchdog_renews_every_third_of_the_lease_in_batches_of_100)
{
    Harness h(small_lease);
    std::vector<edgelock_lock> locks;
    std::vector<Result> results(150);
    for (int i = 0; i < 150; i++) {
        std::string name = "wd" + std::to_string(i);
        locks.push_back(h.lock(name.c_str()));
        CHECK_ST(acquire_start(h.c, locks.back(), 7, 0, EDGELOCK_LEASE_WATCHDOG, record, &results[i]),
                 EDGELOCK_OK);
        h.reply(kNil);
    }
    size_t sent = h.cmd().log.size();
    h.loop.advance(9999);
    CHECK_EQ(h.cmd().log.size(), sent); // not before a third of the lease
    h.loop.advance(1);
    REQUIRE(h.cmd().log.size() == sent + 2); // 150 holds: two script calls
    std::vector<std::string> a = resp_args(h.cmd().log[sent]);
    std::vector<std::string> b = resp_args(h.cmd().log[sent + 1]);
    CHECK(a[0] == "EVALSHA" && a[1] == kScripts[kScriptRenew].sha1);
    CHECK(a[2] == "100");
    CHECK(b[2] == "50");
    CHECK_EQ(a.size(), 3 + 100 + 1 + 100); // keys, lease, owner fields
    CHECK(a[3 + 100] == "30000");
    h.reply(renew_reply(100));
    h.reply(renew_reply(50));
    CHECK_EQ(h.c->watchdog.renew_calls, 2);
    h.loop.advance(10000);
    CHECK_EQ(h.c->watchdog.renew_calls, 4); // and again a third of the lease later
    h.reply(renew_reply(100));
    h.reply(renew_reply(50));
    CHECK_EQ(h.lost.calls, 0);
}

TEST_CASE(a_renewal_that_finds_the_field_gone_reports_the_loss_once)
{
    Harness h(small_lease);
    edgelock_lock a = h.lock("a"), b = h.lock("b");
    Result ra, rb;
    acquire_start(h.c, a, 7, 0, EDGELOCK_LEASE_WATCHDOG, record, &ra);
    h.reply(kNil);
    acquire_start(h.c, b, 8, 0, EDGELOCK_LEASE_WATCHDOG, record, &rb);
    h.reply(kNil);
    h.loop.advance(10000);
    h.reply(renew_reply(2, 1)); // b's field is gone
    CHECK_EQ(h.lost.calls, 1);
    CHECK_EQ(h.lost.owner, 8);
    // The owner learns it on unlock, and the marker goes with it.
    Result u;
    CHECK_ST(release_start(h.c, b, 8, record, &u), EDGELOCK_ERR_LOST);
    h.loop.advance(10000);
    std::vector<std::string> args = h.last_cmd();
    CHECK(args[2] == "1"); // only a is renewed now
    h.reply(renew_reply(1));
    CHECK_EQ(h.lost.calls, 1);
}

TEST_CASE(a_hold_is_lost_when_no_renewal_is_confirmed_for_a_whole_lease)
{
    Harness h(small_lease);
    edgelock_lock a = h.lock("a");
    Result r;
    acquire_start(h.c, a, 7, 0, EDGELOCK_LEASE_WATCHDOG, record, &r);
    h.reply(kNil);
    h.link.refuse = true; // Redis stays away
    h.link.drop(&h.c->cmd_conn);
    h.loop.advance(29999);
    CHECK_EQ(h.lost.calls, 0);
    h.loop.advance(1); // the lease Redis enforces is over by now: fail closed
    CHECK_EQ(h.lost.calls, 1);
    CHECK_EQ(h.lost.owner, 7);
}

static void backoff_config(edgelock_config *cfg)
{
    cfg->reconnect_min_ms = 100;
    cfg->reconnect_max_ms = 1000;
}

TEST_CASE(reconnect_backs_off_doubling_with_jitter_up_to_the_cap)
{
    Harness h(backoff_config);
    h.link.refuse = true; // Redis goes away and stays away
    h.link.drop(&h.c->cmd_conn);
    h.link.drop(&h.c->sub_conn);
    const uint64_t dropped = h.loop.now;
    h.loop.advance(60000);
    // Each connection on its own: 100, 200, 400, 800 ms, then the 1000 ms cap,
    // each plus up to a quarter of jitter.
    for (FakeLink::Conn *fc : {&h.cmd(), &h.sub()}) {
        const std::vector<uint64_t> &t = fc->opens;
        REQUIRE(t.size() > 1 + 6);
        uint64_t last = dropped;
        size_t k = 0;
        for (size_t i = 1; i < t.size(); i++, k++) { // [0]: the first connect, before the drop
            uint64_t gap = t[i] - last;
            uint64_t base = k < 4 ? 100u << k : 1000;
            CHECK(gap >= base);
            CHECK(gap <= base + base / 4);
            last = t[i];
        }
        CHECK(t.size() - 1 >= 48 && t.size() - 1 <= 62); // about one a second once capped
    }
    // And once Redis is back, the next try connects and the delay starts over.
    h.link.refuse = false;
    h.loop.advance(h.loop.next_due() - h.loop.now);
    h.loop.advance(1300);
    h.link.accept(&h.c->cmd_conn);
    CHECK(conn_ready(&h.c->cmd_conn));
    CHECK_EQ(h.c->cmd_conn.backoff_ms, 100);
}
