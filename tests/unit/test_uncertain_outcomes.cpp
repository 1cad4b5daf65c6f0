// SPDX-License-Identifier: BSD-3-Clause
// Regression tests for what a fault run found (issue 12), on the fake loop and
// link: a loss seen before a re-entry ran, the undo of an acquire whose reply
// never came, counts that disagree with Redis, and a retried unlock.
#include <string.h>

#include <algorithm>
#include <string>
#include <vector>

#include "check.hpp"
#include "fake/fake_engine.hpp"
#include "fake/harness.hpp"
#include "locks/acquire.hpp"
#include "locks/holds.hpp"
#include "locks/release.hpp"
#include "redisson/scripts.hpp"

using namespace edgelock;
using namespace fake;

namespace
{

void watchdog_30s(edgelock_config *cfg)
{
    cfg->watchdog_lease_ms = 30000;
    cfg->command_timeout_ms = 3000;
    cfg->reconnect_min_ms = 100;
    cfg->reconnect_max_ms = 100;
}

bool is_release(const std::vector<std::string> &a)
{
    return a.size() > 1 && a[0] == "EVALSHA" && a[1] == kScripts[kScriptRelease].sha1;
}

bool is_renewal(const std::vector<std::string> &a)
{
    return a.size() > 1 && a[0] == "EVALSHA" && a[1] == kScripts[kScriptRenew].sha1;
}

// The command connection comes back (after its reconnect delay) and is set up.
void reconnect(Harness &h)
{
    h.loop.advance(200);
    h.link.accept(&h.c->cmd_conn);
}

// Owner 7 takes a with lease_ms, then its unlock gets no answer within the
// command timeout. That unlock as sent, to compare its resending with.
std::vector<std::string> take_then_unlock_times_out(Harness &h, edgelock_lock a, int64_t lease_ms,
                                                    Result *taken, Result *unlocked)
{
    acquire_start(h.c, a, 7, 0, lease_ms, record, taken);
    h.reply(kNil);
    release_start(h.c, a, 7, record, unlocked);
    std::vector<std::string> sent = h.last_cmd();
    h.loop.advance(3000);
    CHECK_ST(unlocked->st, EDGELOCK_ERR_TIMEOUT);
    return sent;
}

} // namespace

// The watchdog's renewal (sent first) finds the field gone; a re-entry sent
// after it succeeds, so it ran on a key that was gone: a fresh hold. The next
// unlock must release it in Redis, not answer LOST from the loss marker.
TEST_CASE(an_acquire_that_ran_after_the_loss_was_seen_is_a_fresh_hold)
{
    Harness h(watchdog_30s);
    REQUIRE(h.c);
    edgelock_lock a = h.lock("a");
    Result r1, r2;
    acquire_start(h.c, a, 7, 0, EDGELOCK_LEASE_WATCHDOG, record, &r1);
    h.reply(kNil);
    h.loop.advance(10000); // the renewal goes out
    REQUIRE(is_renewal(h.last_cmd()));
    acquire_start(h.c, a, 7, 0, EDGELOCK_LEASE_WATCHDOG, record, &r2); // behind it
    h.reply(renew_reply(1, 0));                                        // gone
    CHECK_EQ(h.lost.calls, 1);
    h.reply(kNil); // the re-entry ran after: it took the lock anew
    CHECK_ST(r2.st, EDGELOCK_OK);

    Result u;
    CHECK_ST(release_start(h.c, a, 7, record, &u), EDGELOCK_OK);
    REQUIRE(is_release(h.last_cmd()));
    h.reply(":1\r\n");
    CHECK_EQ(u.calls, 1);
    CHECK_ST(u.st, EDGELOCK_OK);
    CHECK_EQ(u.value, 1);
    CHECK_EQ(h.c->holds.used(), 0);
}

// An acquire whose reply never comes (Redis frozen past the command timeout):
// its undo waits for Redis as long as it takes, goes out once Redis is back,
// and is sent again, with the same request id, when that connection drops too.
TEST_CASE(the_undo_of_an_uncertain_acquire_waits_for_redis_and_repeats_until_answered)
{
    Harness h(watchdog_30s);
    REQUIRE(h.c);
    edgelock_lock a = h.lock("a");
    Result r;
    acquire_start(h.c, a, 7, 0, 10000, record, &r);
    h.link.refuse = true; // once dropped, Redis stays away
    h.loop.advance(3000);
    CHECK_EQ(r.calls, 1);
    CHECK_ST(r.st, EDGELOCK_ERR_TIMEOUT);
    h.loop.advance(120000);              // far past every deadline
    CHECK_EQ(h.c->queue.cmds.used(), 1); // the undo, still waiting

    h.link.refuse = false;
    reconnect(h);
    std::vector<std::string> first = h.last_cmd();
    REQUIRE(is_release(first));
    CHECK(std::find(first.begin(), first.end(), "unit:7") != first.end());
    h.link.drop(&h.c->cmd_conn); // no answer this time either
    reconnect(h);

    CHECK(h.last_cmd() == first); // the same unlock, request id included
    h.reply(":1\r\n");
    h.reply("+OK\r\n"); // the latch delete that follows a release
    CHECK_EQ(h.c->queue.cmds.used(), 0);
    CHECK_EQ(h.c->holds.used(), 0);
    CHECK_EQ(r.calls, 1); // the caller heard once
}

// An acquire that never left (Redis down all along) needs no undo.
TEST_CASE(an_acquire_never_sent_needs_no_undo)
{
    Harness h(watchdog_30s);
    REQUIRE(h.c);
    h.link.refuse = true;
    h.link.drop(&h.c->cmd_conn);
    edgelock_lock a = h.lock("a");
    Result r;
    acquire_start(h.c, a, 7, 0, 10000, record, &r);
    h.loop.advance(3000);
    CHECK_EQ(r.calls, 1);
    CHECK_EQ(h.c->queue.cmds.used(), 0);
    CHECK_EQ(h.c->holds.used(), 0);
}

// Redis says the lock is still held after the owner's last unlock (it counts
// a re-entry whose reply was lost, or a failover restored a released hold):
// renewal stops, and the stale counts are released too, one unlock each,
// until Redis says released (else each later unlock would reset their lease
// and the lock would never lapse while the owner keeps using it).
TEST_CASE(renewal_stops_and_stale_counts_go_when_the_owners_count_reaches_zero)
{
    Harness h(watchdog_30s);
    REQUIRE(h.c);
    edgelock_lock a = h.lock("a");
    Result r, u;
    acquire_start(h.c, a, 7, 0, EDGELOCK_LEASE_WATCHDOG, record, &r);
    h.reply(kNil);
    CHECK_ST(release_start(h.c, a, 7, record, &u), EDGELOCK_OK);
    std::vector<std::string> mine = h.last_cmd();
    h.reply(":0\r\n");    // still held in Redis: two counts where we knew one
    CHECK_EQ(u.calls, 0); // the answer waits: "released" must mean released
    std::vector<std::string> drain = h.last_cmd();
    REQUIRE(is_release(drain));
    CHECK(drain != mine); // a new unlock, its own request id
    h.reply("+OK\r\n");   // the first unlock's latch delete
    h.reply(":1\r\n");    // released now
    CHECK_EQ(u.calls, 1);
    CHECK_ST(u.st, EDGELOCK_OK);
    CHECK_EQ(u.value, 1);
    h.reply("+OK\r\n"); // its latch delete
    CHECK_EQ(h.c->queue.cmds.used(), 0);
    h.loop.advance(60000);
    for (const std::string &sent : h.cmd().log)
        CHECK(!is_renewal(resp_args(sent)));
    CHECK_EQ(h.c->holds.used(), 0);
}

// An unlock times out; its retry carries the same request id, so Redis's
// unlock latch answers what the first one did, instead of LOST. Between the
// two the hold is not renewed (as Redisson stops renewing on any unlock).
TEST_CASE(a_retried_unlock_reuses_its_request_id_and_the_hold_is_not_renewed_meanwhile)
{
    Harness h(watchdog_30s);
    REQUIRE(h.c);
    edgelock_lock a = h.lock("a");
    Result r, u1, u2;
    acquire_start(h.c, a, 7, 0, EDGELOCK_LEASE_WATCHDOG, record, &r);
    h.reply(kNil);
    CHECK_ST(release_start(h.c, a, 7, record, &u1), EDGELOCK_OK);
    std::vector<std::string> first = h.last_cmd();
    REQUIRE(is_release(first));
    h.loop.advance(3000);
    CHECK_ST(u1.st, EDGELOCK_ERR_TIMEOUT);
    int64_t left = 1;
    // The unlock may have run: another client may hold the lock now.
    CHECK_ST(hold_validity(h.c, a.id, 7, &left), EDGELOCK_ERR_LOST);
    CHECK_EQ(left, 0);
    reconnect(h);
    size_t sent = h.cmd().log.size();
    h.loop.advance(20000); // no renewal of a hold being unlocked
    CHECK_EQ(h.cmd().log.size(), sent);
    CHECK_EQ(h.lost.calls, 0);

    CHECK_ST(release_start(h.c, a, 7, record, &u2), EDGELOCK_OK);
    CHECK(h.last_cmd() == first);
    h.reply(":1\r\n"); // the latch: the first one released it
    CHECK_ST(u2.st, EDGELOCK_OK);
    CHECK_EQ(u2.value, 1);
    h.reply("+OK\r\n"); // latch delete
    CHECK_EQ(h.c->holds.used(), 0);

    // A later unlock is a new one: a fresh request id.
    Result r3, u3;
    acquire_start(h.c, a, 7, 0, EDGELOCK_LEASE_WATCHDOG, record, &r3);
    h.reply(kNil);
    release_start(h.c, a, 7, record, &u3);
    CHECK(h.last_cmd() != first);
    h.reply(":1\r\n");
    CHECK_ST(u3.st, EDGELOCK_OK);
}

// A holder frozen past its lease (its timers have not run yet when it
// resumes): its own check says LOST before it acts, by the clock alone.
TEST_CASE(a_holder_frozen_past_its_lease_is_told_by_lock_valid_before_the_watchdog_runs)
{
    Harness h(watchdog_30s);
    REQUIRE(h.c);
    edgelock_lock a = h.lock("a");
    Result r;
    acquire_start(h.c, a, 7, 0, EDGELOCK_LEASE_WATCHDOG, record, &r);
    h.reply(kNil);
    int64_t left = 0;
    CHECK_ST(hold_validity(h.c, a.id, 7, &left), EDGELOCK_OK);
    CHECK_EQ(left, 30000);
    h.loop.advance(10000); // a renewal goes out, unanswered
    CHECK_ST(hold_validity(h.c, a.id, 7, &left), EDGELOCK_OK);
    CHECK_EQ(left, 20000); // counted from the last confirmed send
    h.loop.now += 25000;   // frozen: the clock moved, no timer ran
    CHECK_ST(hold_validity(h.c, a.id, 7, &left), EDGELOCK_ERR_LOST);
    CHECK_EQ(left, 0);
    CHECK_EQ(h.lost.calls, 0); // the watchdog has not even run yet
}

// edgelock_cancel() while the waiter waits for an unlock message: it ends at
// once, holding nothing, its subscription left.
TEST_CASE(a_cancelled_wait_ends_at_once_and_leaves_nothing)
{
    Harness h(watchdog_30s);
    REQUIRE(h.c);
    edgelock_lock a = h.lock("a");
    Result r;
    acquire_start(h.c, a, 7, 60000, EDGELOCK_LEASE_WATCHDOG, record, &r);
    h.reply(":20000\r\n"); // held elsewhere for 20 s: subscribe, then wait
    REQUIRE(h.sub().log.size() == 1);
    h.link.reply(&h.c->sub_conn, subscribed("redisson_lock__channel:{a}"));
    h.reply(":20000\r\n"); // the attempt right after subscribing
    CHECK_EQ(r.calls, 0);
    acquire_cancel(h.c, 8); // another owner: nothing happens
    CHECK_EQ(r.calls, 0);
    acquire_cancel(h.c, 7);
    CHECK_EQ(r.calls, 1);
    CHECK_ST(r.st, EDGELOCK_ERR_CANCELLED);
    CHECK_EQ(h.c->waiters.used(), 0);
    CHECK_EQ(h.c->holds.used(), 0);
    // The caller is answered first; the channel is left at the loop's next turn.
    CHECK(resp_args(h.sub().log.back())[0] == "SUBSCRIBE");
    h.loop.advance(0);
    CHECK(resp_args(h.sub().log.back())[0] == "UNSUBSCRIBE");
}

// Owner 7 waits for a and is cancelled while its attempt is on the wire,
// which then takes the lock: the caller hears CANCELLED only after that, and
// the undo that gives the lock back is on the wire.
void cancel_a_granted_attempt(Harness &h, edgelock_lock a)
{
    Result r;
    acquire_start(h.c, a, 7, 60000, EDGELOCK_LEASE_WATCHDOG, record, &r);
    acquire_cancel(h.c, 7);
    CHECK_EQ(r.calls, 0); // the attempt decides
    h.reply(kNil);        // it got the lock
    CHECK_EQ(r.calls, 1);
    CHECK_ST(r.st, EDGELOCK_ERR_CANCELLED);
    REQUIRE(is_release(h.last_cmd()));
}

TEST_CASE(a_cancel_during_an_attempt_that_succeeds_gives_the_lock_back)
{
    Harness h(watchdog_30s);
    REQUIRE(h.c);
    edgelock_lock a = h.lock("a");
    cancel_a_granted_attempt(h, a);
    h.reply(":1\r\n");
    h.reply("+OK\r\n"); // latch delete
    CHECK_EQ(h.c->waiters.used(), 0);
    CHECK_EQ(h.c->holds.used(), 0);
    CHECK_EQ(h.c->queue.cmds.used(), 0);
}

// The same, with the handle freed while the undo is on the wire (it lets go
// of the handle once sent): its answer must not reach for the freed handle
// (found by a stress run: the latch DEL after it read the freed lock's slot,
// a crash).
TEST_CASE(an_undo_answered_after_its_handle_was_freed_touches_nothing)
{
    for (const char *answer : {":1\r\n", ":0\r\n"}) { // released; counts left (a drain's cue)
        Harness h(watchdog_30s);
        REQUIRE(h.c);
        edgelock_lock a = h.lock("a");
        cancel_a_granted_attempt(h, a);
        CHECK_ST(lock_free(h.c, a), EDGELOCK_OK);
        size_t sent = h.cmd().log.size();
        h.reply(answer);
        CHECK_EQ(h.cmd().log.size(), sent); // no latch DEL, no drain: no name to send
        CHECK_EQ(h.c->waiters.used(), 0);
        CHECK_EQ(h.c->holds.used(), 0);
        CHECK_EQ(h.c->queue.cmds.used(), 0);
        CHECK_EQ(h.c->locks.used(), 0);
    }
}

// A re-entry cancelled while its attempt is on the wire, which Redis then
// grants: the undo takes Redis's count back to one, and the owner still holds
// the lock it had (found by an audit: the undo's 0 took the client's count
// to 0, a "stale count" drain then freed the lock in Redis, and the watchdog
// stopped, with no loss reported).
// Owner 7 takes a with lease_ms, then re-enters, cancels the re-entry while
// its attempt is on the wire, and Redis grants it: the undo is sent.
void cancel_a_granted_re_entry(Harness &h, edgelock_lock a, int64_t lease_ms)
{
    Result first, again;
    acquire_start(h.c, a, 7, 0, lease_ms, record, &first);
    h.reply(kNil);
    CHECK_ST(first.st, EDGELOCK_OK);
    acquire_start(h.c, a, 7, 60000, lease_ms, record, &again);
    acquire_cancel(h.c, 7);
    h.reply(kNil); // the re-entry got its count
    CHECK_ST(again.st, EDGELOCK_ERR_CANCELLED);
    REQUIRE(is_release(h.last_cmd())); // the undo
}

TEST_CASE(a_cancelled_re_entry_gives_back_only_its_own_count)
{
    Harness h(watchdog_30s);
    REQUIRE(h.c);
    edgelock_lock a = h.lock("a");
    cancel_a_granted_re_entry(h, a, EDGELOCK_LEASE_WATCHDOG);
    size_t sent = h.cmd().log.size();
    h.reply(":0\r\n"); // Redis: still held (the first hold)
    h.loop.advance(0);
    for (size_t i = sent; i < h.cmd().log.size(); i++)
        CHECK(!is_release(resp_args(h.cmd().log[i]))); // no drain of the real hold
    Hold *held = hold_find(h.c, a.id, 7, nullptr);
    REQUIRE(held);
    CHECK_EQ(held->count, 1u);
    CHECK(held->watchdog);
    CHECK_EQ(h.c->waiters.used(), 0);
}

// The same undo answered "freed": the owner's outer hold was gone already (its
// lease ran out in Redis before the re-entry, which made a fresh hold). The
// owner is told it lost the lock, not left believing it holds it.
TEST_CASE(an_undo_that_frees_the_lock_reports_the_outer_hold_lost)
{
    Harness h(watchdog_30s);
    REQUIRE(h.c);
    edgelock_lock a = h.lock("a");
    cancel_a_granted_re_entry(h, a, 60000);
    h.reply(":1\r\n"); // freed: nothing of this owner is left in Redis
    CHECK_EQ(h.lost.calls, 1);
    int64_t left = 0;
    CHECK_ST(hold_validity(h.c, a.id, 7, &left), EDGELOCK_ERR_LOST);
}

bool is_acquire(const std::vector<std::string> &a)
{
    return a.size() > 1 && a[0] == "EVALSHA" && a[1] == kScripts[kScriptAcquire].sha1;
}

// The owner's next lock call waits for the give-back of its last grant: a
// grant before it would be the one given back, behind the owner's back (on
// a cluster a give-back told CLUSTERDOWN goes again later; a lossy failover
// under load did this). Another owner's call goes at once.
TEST_CASE(a_lock_call_waits_for_the_give_back_of_its_owners_last_grant)
{
    Harness h(watchdog_30s);
    REQUIRE(h.c);
    edgelock_lock a = h.lock("a");
    cancel_a_granted_attempt(h, a);
    size_t sent = h.cmd().log.size();
    Result mine, other;
    acquire_start(h.c, a, 7, 0, 10000, record, &mine); // try once
    CHECK_EQ(h.cmd().log.size(), sent);                // waits
    acquire_start(h.c, a, 8, 0, 10000, record, &other);
    REQUIRE(h.cmd().log.size() == sent + 1);
    CHECK(resp_args(h.cmd().log.back()).back() == "unit:8");
    h.loop.advance(1000); // past the try-once's own wait: still waiting
    CHECK_EQ(mine.calls, 0);
    h.reply(":1\r\n"); // the give-back: freed
    h.reply(kNil);     // owner 8 takes it
    CHECK_ST(other.st, EDGELOCK_OK);
    REQUIRE(h.cmd().log.size() == sent + 3); // the latch delete, then 7's attempt
    CHECK(is_acquire(h.last_cmd()));
    CHECK(h.last_cmd().back() == "unit:7");
    h.reply("+OK\r\n");
    h.reply(":9000\r\n"); // held by 8
    CHECK_EQ(mine.calls, 1);
    CHECK_ST(mine.st, EDGELOCK_ERR_WAIT_TIMEOUT);
    CHECK_EQ(h.c->undos_out, 0u);
}

// The same through another handle on the name (Redis counts both in one
// field), and through one made after the give-back's own handle was freed
// (its name is unknown then: any call of the owner waits).
TEST_CASE(a_lock_call_through_another_handle_waits_for_the_give_back_too)
{
    for (bool free_first : {false, true}) {
        Harness h(watchdog_30s);
        REQUIRE(h.c);
        edgelock_lock a = h.lock("a");
        cancel_a_granted_attempt(h, a);
        if (free_first)
            CHECK_ST(lock_free(h.c, a), EDGELOCK_OK); // the give-back is on the wire: it may go
        edgelock_lock b = h.lock("a");
        size_t sent = h.cmd().log.size();
        Result r;
        acquire_start(h.c, b, 7, 0, 10000, record, &r);
        CHECK_EQ(h.cmd().log.size(), sent);
        h.reply(":1\r\n");
        if (!free_first)
            h.reply("+OK\r\n"); // its latch delete (a freed handle has no name for one)
        REQUIRE(is_acquire(h.last_cmd()));
        h.reply(kNil);
        CHECK_ST(r.st, EDGELOCK_OK);
        CHECK_EQ(r.calls, 1);
    }
}

// An unlock message while both waiters' attempts are on the wire marks the
// older one to try again; that one is cancelled and its attempt says "held".
// The wake goes on to the other waiter, which tries again at once instead of
// sleeping until the holder's TTL (found by an audit: the cancelled waiter
// ended with the wake, and the free lock sat idle).
TEST_CASE(a_cancelled_waiter_passes_on_the_wake_it_was_given)
{
    Harness h(watchdog_30s);
    REQUIRE(h.c);
    edgelock_lock a = h.lock("a");
    const std::string chan = "redisson_lock__channel:{a}";
    Result ra, rb;
    acquire_start(h.c, a, 7, 60000, EDGELOCK_LEASE_WATCHDOG, record, &ra);
    acquire_start(h.c, a, 8, 60000, EDGELOCK_LEASE_WATCHDOG, record, &rb);
    h.reply(":20000\r\n"); // 7: held elsewhere for 20 s; it subscribes
    h.reply(":20000\r\n"); // 8: the same; joins the subscription under way
    REQUIRE(h.sub().log.size() == 1);
    h.link.reply(&h.c->sub_conn, subscribed(chan)); // both attempt again
    size_t before = h.cmd().log.size();
    std::string unlock = resp_array({resp_bulk("message"), resp_bulk(chan), resp_bulk("0")});
    h.link.push(&h.c->sub_conn, unlock); // both busy: the older (7) is told
    acquire_cancel(h.c, 7);
    h.reply(":20000\r\n"); // 8's attempt (sent first): held; it waits for a message
    CHECK_EQ(h.cmd().log.size(), before);
    h.reply(":20000\r\n"); // 7's attempt: held (the message was about another release)
    CHECK_ST(ra.st, EDGELOCK_ERR_CANCELLED);
    REQUIRE(h.cmd().log.size() == before + 1);
    CHECK(is_acquire(resp_args(h.cmd().log.back()))); // 8 has the wake and tries now
    CHECK(resp_args(h.cmd().log.back()).back() == "unit:8");
    h.reply(kNil);
    CHECK_ST(rb.st, EDGELOCK_OK);
    CHECK_EQ(rb.calls, 1);
}

// The unlock timed out (Redis ran it later); the owner takes the lock again.
// Its next unlock must be a new one: resent with the old request id, Redis's
// unlock latch would answer "released" for the old one and this hold would
// stay in Redis (found by make chaos).
TEST_CASE(an_acquire_after_an_uncertain_unlock_gets_a_new_unlock)
{
    Harness h(watchdog_30s);
    REQUIRE(h.c);
    edgelock_lock a = h.lock("a");
    Result r1, u1, r2, u2;
    std::vector<std::string> first = take_then_unlock_times_out(h, a, 10000, &r1, &u1);
    reconnect(h);
    size_t before = h.cmd().log.size();
    acquire_start(h.c, a, 7, 0, 10000, record, &r2);
    // The unlock of unknown outcome goes out again first, with its request
    // id: had it not run, the new acquire would re-enter the old hold, and
    // the owner's next unlock would leave a count behind (a chaos run under
    // qemu found that: released, yet the field stayed, renewed for ever).
    // The attempt waits for its answer.
    REQUIRE(h.cmd().log.size() == before + 1);
    CHECK(resp_args(h.cmd().log[before]) == first);
    h.reply(":1\r\n");                         // it ran now (or the latch says it had)
    REQUIRE(h.cmd().log.size() == before + 3); // its latch delete, then the attempt
    CHECK(is_acquire(h.last_cmd()));
    h.reply("+OK\r\n");
    h.reply(kNil); // the acquire: a fresh hold
    CHECK_ST(r2.st, EDGELOCK_OK);
    uint32_t hi;
    Hold *held = hold_find(h.c, a.id, 7, &hi);
    REQUIRE(held);
    CHECK_EQ(held->count, 1);
    release_start(h.c, a, 7, record, &u2);
    std::vector<std::string> second = h.last_cmd();
    REQUIRE(is_release(second));
    CHECK(second != first);
}

// A command whose write fails at once (the link is going away, its replies
// being failed right now) ends from the loop's next turn, never inside the
// call that sent it: the callback does not run inside the lock call, and a
// waiter whose retry fails that way is not left marked as attempting with
// its deadline timer gone (it would wait past its timeout).
TEST_CASE(a_write_that_fails_at_once_ends_the_call_after_it_returns)
{
    Harness h(watchdog_30s);
    REQUIRE(h.c);
    edgelock_lock a = h.lock("a");
    h.link.fail_sends = true;
    Result first;
    CHECK_ST(acquire_start(h.c, a, 7, 60000, EDGELOCK_LEASE_WATCHDOG, record, &first, true), EDGELOCK_OK);
    CHECK_EQ(first.calls, 0); // not from inside the call
    h.loop.advance(0);
    CHECK_EQ(first.calls, 1);
    CHECK_ST(first.st, EDGELOCK_ERR_CONNECTION);
    CHECK_EQ(h.c->waiters.used(), 0);
    CHECK_EQ(h.c->holds.used(), 0);
    CHECK_EQ(h.c->queue.cmds.used(), 0);

    // A waiter woken by an unlock message whose retry cannot be written: it
    // ends at its deadline all the same.
    h.link.fail_sends = false;
    Result second;
    CHECK_ST(acquire_start(h.c, a, 8, 5000, EDGELOCK_LEASE_WATCHDOG, record, &second), EDGELOCK_OK);
    h.reply(":20000\r\n"); // held elsewhere: subscribe, then wait
    h.link.reply(&h.c->sub_conn, subscribed("redisson_lock__channel:{a}"));
    h.reply(":20000\r\n");
    h.link.fail_sends = true;
    h.link.push(&h.c->sub_conn,
                resp_array({resp_bulk("message"), resp_bulk("redisson_lock__channel:{a}"), resp_bulk("0")}));
    h.loop.advance(0);
    CHECK_EQ(second.calls, 0); // still waiting: Redis may come back within the wait
    h.loop.advance(4990);
    CHECK_EQ(second.calls, 0);
    h.loop.advance(10);
    CHECK_EQ(second.calls, 1);
    CHECK_ST(second.st, EDGELOCK_ERR_CONNECTION); // its wait ended; what it last saw was the connection
    CHECK_EQ(h.c->waiters.used(), 0);
    CHECK_EQ(h.c->queue.cmds.used(), 0);
}

// An attempt that waits for its connection (Redis down since the client
// started) has not reached Redis: a cancel ends the call at once, not at
// command_timeout_ms, and the attempt never goes out (found by an audit).
TEST_CASE(a_cancel_while_the_attempt_waits_for_its_connection_ends_at_once)
{
    Harness h(watchdog_30s, false);
    REQUIRE(h.c);
    edgelock_lock a = h.lock("a");
    Result r;
    CHECK_ST(acquire_start(h.c, a, 7, EDGELOCK_WAIT_FOREVER, EDGELOCK_LEASE_WATCHDOG, record, &r),
             EDGELOCK_OK);
    CHECK_EQ(h.c->queue.cmds.used(), 1);
    acquire_cancel(h.c, 7);
    CHECK_EQ(r.calls, 1);
    CHECK_ST(r.st, EDGELOCK_ERR_CANCELLED);
    CHECK_EQ(h.c->waiters.used(), 0);
    CHECK_EQ(h.c->holds.used(), 0);
    CHECK_EQ(h.c->queue.cmds.used(), 0);
    h.link.accept(&h.c->cmd_conn);
    for (const std::string &sent : h.cmd().log)
        CHECK(!is_acquire(resp_args(sent))); // withdrawn: it never goes out
    CHECK_ST(lock_free(h.c, a), EDGELOCK_OK);
}

// A call made while the client's first connect is still under way waits for
// it, past its own deadline (edgelock.h, edgelock_client_create): its attempt
// decides, and may have taken the lock (ending without it would strand a
// hold).
TEST_CASE(a_call_made_before_the_first_connect_waits_for_it)
{
    Harness h(watchdog_30s, false);
    REQUIRE(h.c);
    edgelock_lock a = h.lock("a");
    Result r;
    acquire_start(h.c, a, 7, 0, EDGELOCK_LEASE_WATCHDOG, record, &r);
    h.loop.advance(0);
    h.loop.advance(500);
    CHECK_EQ(r.calls, 0);
    h.link.accept(&h.c->cmd_conn);
    REQUIRE(is_acquire(h.last_cmd()));
    h.reply(kNil);
    CHECK_EQ(r.calls, 1);
    CHECK_ST(r.st, EDGELOCK_OK);
    Hold *held = hold_find(h.c, a.id, 7, nullptr);
    REQUIRE(held);
    CHECK_EQ(held->count, 1u);
}

// An unlock by an owner this client knows no hold of (its lease ran out, or
// it never locked) goes to Redis without pinning a hold; a lock call by the
// same owner made right after it (the async API allows both in flight)
// reserves one. The unlock's answer must leave that reservation alone: it
// took the lock call's pin, the record was freed under the waiter, and the
// grant that followed wrote through a freed slot (found by a cluster stress
// run: a SEGV in acquired()).
TEST_CASE(an_unlock_without_a_hold_leaves_a_lock_call_made_meanwhile_alone)
{
    for (const char *answer : {kNil, ":1\r\n"}) { // not the owner; released (another handle's)
        Harness h(watchdog_30s);
        REQUIRE(h.c);
        edgelock_lock a = h.lock("a");
        Result u, l;
        CHECK_ST(release_start(h.c, a, 7, record, &u), EDGELOCK_OK);
        CHECK_ST(acquire_start(h.c, a, 7, 0, 10000, record, &l), EDGELOCK_OK);
        h.reply(answer); // the unlock's
        CHECK_EQ(u.calls, 1);
        h.reply(kNil); // the lock call's: granted
        CHECK_EQ(l.calls, 1);
        CHECK_ST(l.st, EDGELOCK_OK);
        int64_t left = 0;
        CHECK_ST(hold_validity(h.c, a.id, 7, &left), EDGELOCK_OK);
        CHECK_EQ(h.c->holds.used(), 1);
    }
}

// An unlock of unknown outcome that would leave a re-entrant hold behind
// cannot have freed the lock: lock_valid still vouches for what remains.
TEST_CASE(an_uncertain_unlock_of_a_re_entry_leaves_the_outer_hold_valid)
{
    Harness h(watchdog_30s);
    REQUIRE(h.c);
    edgelock_lock a = h.lock("a");
    Result r1, r2, u;
    acquire_start(h.c, a, 7, 0, EDGELOCK_LEASE_WATCHDOG, record, &r1);
    h.reply(kNil);
    acquire_start(h.c, a, 7, 0, EDGELOCK_LEASE_WATCHDOG, record, &r2);
    h.reply(kNil);
    CHECK_ST(release_start(h.c, a, 7, record, &u), EDGELOCK_OK);
    h.loop.advance(3000);
    CHECK_ST(u.st, EDGELOCK_ERR_TIMEOUT);
    int64_t left = 0;
    CHECK_ST(hold_validity(h.c, a.id, 7, &left), EDGELOCK_OK);
    CHECK(left > 0);
}

// An unlock of unknown outcome may have released the lock, and another
// client may hold it now. A lock call by the same owner sends that unlock
// again ahead of its attempt (release_settle_uncertain); until Redis answers
// it, lock_valid must still promise nothing, and an attempt whose reply never
// comes either must not make the old hold count again (found by an async
// stress run: lock_valid said OK for a lock another client held).
TEST_CASE(a_lock_call_after_an_uncertain_unlock_vouches_for_nothing_until_it_is_answered)
{
    Harness h(watchdog_30s);
    REQUIRE(h.c);
    edgelock_lock a = h.lock("a");
    Result r1, u1, r2;
    take_then_unlock_times_out(h, a, EDGELOCK_LEASE_WATCHDOG, &r1, &u1);
    int64_t left = 1;
    CHECK_ST(hold_validity(h.c, a.id, 7, &left), EDGELOCK_ERR_LOST);
    reconnect(h);
    acquire_start(h.c, a, 7, 0, EDGELOCK_LEASE_WATCHDOG, record, &r2);
    // The unlock again, then the attempt: neither answered yet.
    CHECK_ST(hold_validity(h.c, a.id, 7, &left), EDGELOCK_ERR_LOST);
    CHECK_EQ(left, 0);
    // The unlock is not answered: the attempt, which waits for it, never
    // goes out, and the call ends after a command timeout.
    h.loop.advance(3000);
    CHECK_EQ(r2.calls, 1);
    CHECK_ST(r2.st, EDGELOCK_ERR_CONNECTION);
    CHECK_ST(hold_validity(h.c, a.id, 7, &left), EDGELOCK_ERR_LOST);
    CHECK_EQ(left, 0);
    CHECK_EQ(h.lost.calls, 0);
}

// The same resent unlock refused by Redis (an ACL that forbids scripts, OOM)
// settled nothing: the hold stays uncertain, lock_valid says LOST, and the
// owner's next lock call sends that unlock once more.
TEST_CASE(a_resent_unlock_that_redis_refuses_leaves_the_hold_uncertain)
{
    Harness h(watchdog_30s);
    REQUIRE(h.c);
    edgelock_lock a = h.lock("a");
    Result r1, u1, r2, r3;
    std::vector<std::string> first = take_then_unlock_times_out(h, a, EDGELOCK_LEASE_WATCHDOG, &r1, &u1);
    reconnect(h);
    acquire_start(h.c, a, 7, 0, EDGELOCK_LEASE_WATCHDOG, record, &r2);
    h.reply("-NOPERM this user has no permissions to run the 'evalsha' command\r\n"); // the unlock
    h.reply("-NOPERM this user has no permissions to run the 'evalsha' command\r\n"); // the attempt after it
    CHECK_ST(r2.st, EDGELOCK_ERR_REDIS);
    int64_t left = 1;
    CHECK_ST(hold_validity(h.c, a.id, 7, &left), EDGELOCK_ERR_LOST);
    CHECK_EQ(left, 0);
    size_t before = h.cmd().log.size();
    acquire_start(h.c, a, 7, 0, EDGELOCK_LEASE_WATCHDOG, record, &r3);
    REQUIRE(h.cmd().log.size() == before + 1);
    CHECK(resp_args(h.cmd().log[before]) == first); // the same unlock again
    h.reply(":1\r\n");                              // it ran (now, or the latch says before)
    CHECK(is_acquire(h.last_cmd()));                // behind its latch delete
    h.reply("+OK\r\n");
    h.reply(kNil); // a fresh hold
    CHECK_ST(r3.st, EDGELOCK_OK);
    CHECK_ST(hold_validity(h.c, a.id, 7, &left), EDGELOCK_OK);
    uint32_t hi;
    Hold *held = hold_find(h.c, a.id, 7, &hi);
    REQUIRE(held);
    CHECK_EQ(held->count, 1);
}

// Owner 7 takes `lock` twice, each reply a grant, then unlocks once and Redis
// answers "released": it counted one hold where the owner counted two (the
// key had gone and the re-entry made a fresh one, or a failover lost the
// re-entry). The unlock's result is in *u; its latch delete is answered.
void take_twice_then_unlock_releases(Harness &h, edgelock_lock lock, int64_t first_lease,
                                     int64_t second_lease, uint64_t advance_ms, Result *u)
{
    Result r1, r2;
    acquire_start(h.c, lock, 7, 0, first_lease, record, &r1);
    h.reply(kNil);
    acquire_start(h.c, lock, 7, 0, second_lease, record, &r2);
    h.reply(kNil);
    CHECK_ST(r2.st, EDGELOCK_OK);
    h.loop.advance(advance_ms);
    CHECK_ST(release_start(h.c, lock, 7, record, u), EDGELOCK_OK);
    h.reply(":1\r\n");
    CHECK_ST(u->st, EDGELOCK_OK);
    CHECK_EQ(u->value, 1);
    h.reply("+OK\r\n"); // the latch delete
}

// The owner's outer hold was gone while it still counted it: its critical
// section has not been protected since. Reported as the watchdog reports a
// loss (found by the blocking stress run: the inner unlock said "released",
// lock_valid said nothing, and the outer unlock NOT_OWNER).
TEST_CASE(an_unlock_that_releases_while_the_owner_counts_more_holds_reports_them_lost)
{
    Harness h(watchdog_30s);
    REQUIRE(h.c);
    edgelock_lock a = h.lock("a");
    Result u;
    take_twice_then_unlock_releases(h, a, EDGELOCK_LEASE_WATCHDOG, EDGELOCK_LEASE_WATCHDOG, 10, &u);
    CHECK_EQ(h.lost.calls, 1);
    int64_t left = 0;
    CHECK_ST(hold_validity(h.c, a.id, 7, &left), EDGELOCK_ERR_LOST);
    // Not renewed: nothing of it is left in Redis to renew.
    h.loop.advance(60000);
    for (const std::string &sent : h.cmd().log)
        CHECK(!is_renewal(resp_args(sent)));
    // The outer unlock is told at once, as after the watchdog's loss.
    Result outer;
    CHECK_ST(release_start(h.c, a, 7, record, &outer), EDGELOCK_ERR_LOST);
    CHECK_EQ(h.c->holds.used(), 0);

    // A fixed lease: the same while the outer hold is live by our clock.
    edgelock_lock b = h.lock("b");
    take_twice_then_unlock_releases(h, b, 5000, 5000, 1000, &u);
    CHECK_EQ(h.lost.calls, 2);
    CHECK_ST(hold_validity(h.c, b.id, 7, &left), EDGELOCK_ERR_LOST);
}

// Once the lease is over by our clock, "released" with holds left is the lease
// ending, not a loss: NOT_OWNER afterwards, as for any lapsed lease.
TEST_CASE(an_unlock_that_releases_after_the_lease_ran_out_reports_no_loss)
{
    Harness h(watchdog_30s);
    REQUIRE(h.c);
    edgelock_lock a = h.lock("a");
    Result u;
    take_twice_then_unlock_releases(h, a, 1000, 1000, 1500, &u);
    CHECK_EQ(h.lost.calls, 0);
    int64_t left = 0;
    CHECK_ST(hold_validity(h.c, a.id, 7, &left), EDGELOCK_ERR_NOT_OWNER);

    // A read lock: its holds left end with the earliest of their leases.
    edgelock_lock r = h.lock("r", EDGELOCK_READ);
    take_twice_then_unlock_releases(h, r, 1000, 60000, 1500, &u);
    CHECK_EQ(h.lost.calls, 0);
    edgelock_lock s = h.lock("s", EDGELOCK_READ);
    take_twice_then_unlock_releases(h, s, 2000, 60000, 1500, &u);
    CHECK_EQ(h.lost.calls, 1); // its first hold had 500 ms left: gone early
}

namespace
{

void watchdog_30s_one_replica(edgelock_config *cfg)
{
    watchdog_30s(cfg);
    cfg->wait_replicas = 1;
    cfg->wait_replicas_timeout_ms = 500;
}

bool is_wait(const std::vector<std::string> &a)
{
    return !a.empty() && a[0] == "WAIT";
}

// Owner 7's two lock calls on "a" at once: a try-once with a 300 ms lease,
// then one that waits, with 30 s; both sent before any answer.
edgelock_lock two_calls_of_one_owner(Harness &h, Result *first, Result *second)
{
    edgelock_lock a = h.lock("a");
    acquire_start(h.c, a, 7, 0, 300, record, first);
    acquire_start(h.c, a, 7, 10000, 30000, record, second);
    return a;
}

} // namespace

// Two lock calls of one owner on one name at once, with wait_replicas: the
// first's grant is not replicated, and its give-back frees the lock after
// the second's attempt, sent before that give-back existed, was granted
// (its lease had run out in Redis, so the second's grant was a fresh hold,
// which the give-back deleted). The second's WAIT, asked again after its
// attempt was sent again, answers after the give-back: the second must not
// say OK for a hold Redis no longer has (a stress run on a cluster, where
// CLUSTERDOWN sent the attempt again, saw another client take the lock).
TEST_CASE(a_grant_its_owners_give_back_freed_is_not_reported_held)
{
    Harness h(watchdog_30s_one_replica);
    REQUIRE(h.c);
    Result first, second;
    two_calls_of_one_owner(h, &first, &second); // the second sent before any give-back
    const char kNoScript[] = "-NOSCRIPT No matching script. Please use EVAL.\r\n";
    const std::string sha_of_load = std::string("$40\r\n") + kScripts[kScriptAcquire].sha1 + "\r\n";
    h.reply(kNil);     // the first: granted
    h.reply(":0\r\n"); // ...its WAIT: not replicated; the give-back goes out
    CHECK_ST(first.st, EDGELOCK_ERR_NOT_REPLICATED);
    REQUIRE(is_release(h.last_cmd()));
    // Both the second's attempt and the give-back go again (here after
    // NOSCRIPT, on a cluster after CLUSTERDOWN), the attempt first.
    h.reply(kNoScript); // the second's attempt
    h.reply(":1\r\n");  // its WAIT, answered before the attempt it followed
    h.reply(kNoScript); // the give-back
    h.reply(sha_of_load);
    h.reply(kNil); // the second's attempt again: granted (a fresh hold); its WAIT is asked again
    REQUIRE(is_wait(h.last_cmd()));
    h.reply(sha_of_load);
    h.reply(":1\r\n"); // the give-back: freed, the second's hold with it
    CHECK_EQ(second.calls, 0);
    h.reply(":1\r\n"); // the second's WAIT: replicated, but nothing is held any more
    CHECK_EQ(second.calls, 0);
    REQUIRE(h.cmd().log.size() >= 2); // it tries again, its WAIT behind
    const std::vector<std::string> again = resp_args(h.cmd().log[h.cmd().log.size() - 2]);
    REQUIRE(is_acquire(again));
    CHECK(again.back() == "unit:7");
    CHECK(is_wait(h.last_cmd()));
    h.reply("+OK\r\n"); // the give-back's latch delete
    h.reply(kNil);      // granted
    h.reply(":1\r\n");  // replicated
    CHECK_EQ(second.calls, 1);
    CHECK_ST(second.st, EDGELOCK_OK);
    CHECK_EQ(h.c->replicating_waiters, 0u);
    CHECK_EQ(h.c->undos_out, 0u);
}

// The same two calls, in the order one node answers them: the second's
// attempt and WAIT before the give-back. Its OK waits for the give-back:
// freed, the second tries again (Redis has no hold of its owner's); not
// freed (the first's count was still there), the OK goes out then. Said at
// once, it was followed by "lost" a moment later, the lock already free for
// others (the stress run's other finding).
TEST_CASE(a_grant_made_before_its_owners_give_back_answers_after_it)
{
    for (bool freed : {true, false}) {
        Harness h(watchdog_30s_one_replica);
        REQUIRE(h.c);
        Result first, second;
        two_calls_of_one_owner(h, &first, &second);
        h.reply(kNil);
        h.reply(":0\r\n"); // the first: not replicated, given back
        CHECK_ST(first.st, EDGELOCK_ERR_NOT_REPLICATED);
        REQUIRE(is_release(h.last_cmd()));
        // A count left is the second's (granted first): its lease, not the first's 300 ms.
        CHECK(h.last_cmd()[7] == "30000");
        h.reply(kNil);     // the second: granted
        h.reply(":1\r\n"); // ...and replicated, before the give-back answers
        CHECK_EQ(second.calls, 0);
        CHECK_EQ(h.c->replicating_waiters, 1u);
        h.reply(freed ? ":1\r\n" : ":0\r\n"); // the give-back
        if (freed) {
            CHECK_EQ(second.calls, 0);
            REQUIRE(h.cmd().log.size() >= 2); // tries again
            CHECK(is_acquire(resp_args(h.cmd().log[h.cmd().log.size() - 2])));
            h.reply("+OK\r\n"); // the give-back's latch delete
            h.reply(kNil);
            h.reply(":1\r\n");
        }
        CHECK_EQ(second.calls, 1);
        CHECK_ST(second.st, EDGELOCK_OK);
        CHECK_EQ(h.lost.calls, 0);
        CHECK_EQ(h.c->replicating_waiters, 0u);
    }
}

// A held-back OK whose give-back does not answer within a command timeout:
// the grant is given back too, and the call says TIMEOUT, holding nothing.
TEST_CASE(a_held_back_grant_whose_give_back_does_not_answer_is_given_back)
{
    Harness h(watchdog_30s_one_replica);
    REQUIRE(h.c);
    Result first, second;
    two_calls_of_one_owner(h, &first, &second);
    h.reply(kNil);
    h.reply(":0\r\n");
    h.reply(kNil);
    h.reply(":1\r\n");
    size_t sent = h.cmd().log.size();
    h.loop.advance(3000); // a command timeout (the give-back's own ends, and it goes out again)
    CHECK_EQ(second.calls, 1);
    CHECK(second.st == EDGELOCK_ERR_TIMEOUT || second.st == EDGELOCK_ERR_CONNECTION);
    CHECK_EQ(h.c->undos_out, 2u); // the first's, going again, and the second's
    CHECK(h.cmd().log.size() > sent);
    CHECK_EQ(h.c->replicating_waiters, 0u);
    CHECK_EQ(h.c->waiters.used(), 0);
}
