// SPDX-License-Identifier: BSD-3-Clause
// Hold records that only tell of the past (locks/holds.cpp): holds whose
// fixed lease ran out without an unlock (hold_lapsed) leave the hold table at
// the watchdog's next tick, or at once when the table is full, and a full
// table takes the oldest loss marker when no lease has run out, so that
// owners who never come back (a thread gone, a request id never reused)
// cannot fill it and refuse everyone else with TABLE_FULL; and the owner's
// next lock call is a fresh hold, not one more re-entry of the lapsed one.
#include <string>
#include <vector>

#include "check.hpp"
#include "fake/fake_engine.hpp"
#include "fake/harness.hpp"
#include "locks/acquire.hpp"
#include "locks/holds.hpp"
#include "locks/queries.hpp"
#include "locks/release.hpp"
#include "redisson/scripts.hpp"

using namespace edgelock;
using namespace fake;

namespace
{

constexpr uint64_t kCommandTimeout = 3000, kLatchTtl = 16000, kTick = 10000; // a third of the lease

void two_holds(edgelock_config *cfg)
{
    cfg->max_holds = 2;
    cfg->watchdog_lease_ms = 30000;
    cfg->command_timeout_ms = (uint32_t)kCommandTimeout;
    cfg->unlock_latch_ttl_ms = (uint32_t)kLatchTtl;
    cfg->reconnect_min_ms = 100;
    cfg->reconnect_max_ms = 100;
}

bool is_release(const std::vector<std::string> &a)
{
    return a.size() > 1 && a[0] == "EVALSHA" && a[1] == kScripts[kScriptRelease].sha1;
}

// owner takes lk with a fixed lease; Redis grants it.
void take(Harness &h, edgelock_lock lk, uint64_t owner, int64_t lease_ms)
{
    Result r;
    REQUIRE(acquire_start(h.c, lk, owner, 0, lease_ms, record, &r) == EDGELOCK_OK);
    h.reply(kNil);
    CHECK_EQ(r.calls, 1);
    CHECK_ST(r.st, EDGELOCK_OK);
}

uint32_t count_of(Harness &h, edgelock_lock lk, uint64_t owner)
{
    Hold *held = hold_find(h.c, lk.id, owner, nullptr);
    return held ? held->count : 0;
}

} // namespace

TEST_CASE(leases_run_out_without_unlock_and_the_full_table_takes_new_owners)
{
    Harness h(two_holds);
    REQUIRE(h.c);
    edgelock_lock a = h.lock("a"), b = h.lock("b");
    take(h, a, 1, 1000);
    take(h, b, 2, 2000);
    // Both still held: the table is rightly full, and nothing changes.
    Result early;
    CHECK_ST(acquire_start(h.c, a, 3, 0, 1000, record, &early), EDGELOCK_ERR_TABLE_FULL);
    CHECK_EQ(h.c->holds.used(), 2);
    CHECK_EQ(early.calls, 0);

    // Owner 1's lease is over by our clock (which runs ahead of Redis's for
    // it); owner 2's is not.
    h.loop.advance(1000);
    int64_t left = -1;
    CHECK_ST(hold_validity(h.c, a.id, 1, &left), EDGELOCK_ERR_NOT_OWNER);
    Result r;
    CHECK_ST(acquire_start(h.c, a, 3, 0, 1000, record, &r), EDGELOCK_OK);
    h.reply(kNil);
    CHECK_ST(r.st, EDGELOCK_OK);
    CHECK_EQ(h.c->holds.used(), 2);       // owner 1's record went, owner 3's came
    CHECK_EQ(h.c->holds.full_count(), 1); // the one refusal above, not this call
    CHECK(hold_find(h.c, a.id, 1, nullptr) == nullptr);
    CHECK_ST(hold_validity(h.c, b.id, 2, &left), EDGELOCK_OK);
    CHECK_EQ(left, 1000);

    // The owner whose record went still gets Redisson's answer from Redis.
    Result u;
    CHECK_ST(release_start(h.c, a, 1, record, &u), EDGELOCK_OK);
    CHECK(is_release(h.last_cmd()));
    h.reply(kNil);
    CHECK_ST(u.st, EDGELOCK_ERR_NOT_OWNER);
    CHECK_EQ(h.c->holds.used(), 2);
}

TEST_CASE(the_watchdog_tick_frees_a_lapsed_record_and_then_stops)
{
    Harness h(two_holds);
    REQUIRE(h.c);
    edgelock_lock a = h.lock("a");
    take(h, a, 1, 15000);
    size_t sent = h.cmd().log.size();
    h.loop.advance(kTick); // still running
    CHECK_EQ(h.c->holds.used(), 1);
    CHECK(h.c->watchdog.armed);
    h.loop.advance(kTick);
    CHECK_EQ(h.c->holds.used(), 0);
    CHECK_EQ(lock_get(h.c, a.id)->holds, 0);
    CHECK_EQ(h.cmd().log.size(), sent); // no renewal for a fixed lease
    CHECK(!h.c->watchdog.armed);        // nothing left to look after
    CHECK_EQ(h.lost.calls, 0);
    CHECK_ST(lock_free(h.c, a), EDGELOCK_OK);
}

TEST_CASE(a_lock_call_after_the_lease_ran_out_is_a_fresh_hold)
{
    Harness h(two_holds);
    REQUIRE(h.c);
    edgelock_lock a = h.lock("a");
    take(h, a, 1, 1000);
    take(h, a, 1, 1000); // a re-entry while it runs
    CHECK_EQ(count_of(h, a, 1), 2);
    h.loop.advance(1000);
    take(h, a, 1, 1000); // Redis started over: one hold, not three
    CHECK_EQ(count_of(h, a, 1), 1);
    Result u;
    CHECK_ST(release_start(h.c, a, 1, record, &u), EDGELOCK_OK);
    h.reply(":1\r\n");
    CHECK_ST(u.st, EDGELOCK_OK);
    CHECK_EQ(u.value, 1);
    h.reply("+OK\r\n"); // latch delete
    CHECK_EQ(h.c->holds.used(), 0);
}

// An extend sent before the lease ends keeps the record until it answers,
// however late: its answer says whether the lease goes on.
TEST_CASE(an_extend_in_flight_keeps_the_record_for_its_answer)
{
    Harness h(two_holds);
    REQUIRE(h.c);
    edgelock_lock a = h.lock("a"), b = h.lock("b");
    take(h, a, 1, 1000);
    take(h, b, 2, 10000); // the table is full
    h.loop.advance(900);
    Result x;
    CHECK_ST(extend_start(h.c, a, 1, 5000, record, &x), EDGELOCK_OK);
    h.loop.advance(200); // past the old lease: a full table frees what it can
    Result full;
    CHECK_ST(acquire_start(h.c, b, 3, 0, 1000, record, &full), EDGELOCK_ERR_TABLE_FULL);
    REQUIRE(hold_find(h.c, a.id, 1, nullptr) != nullptr);
    h.reply("*1\r\n:1\r\n"); // extended
    CHECK_ST(x.st, EDGELOCK_OK);
    int64_t left = 0;
    CHECK_ST(hold_validity(h.c, a.id, 1, &left), EDGELOCK_OK);
    CHECK_EQ(left, 4800); // from the extend's send time
}

// An unlock that timed out keeps its record until the latch that could
// answer its retry is gone too: the retry sends the same request id.
TEST_CASE(an_unlock_of_unknown_outcome_keeps_its_record_for_the_latch)
{
    Harness h(two_holds);
    REQUIRE(h.c);
    edgelock_lock a = h.lock("a");
    take(h, a, 1, 5000);
    Result u1;
    CHECK_ST(release_start(h.c, a, 1, record, &u1), EDGELOCK_OK);
    std::vector<std::string> first = h.last_cmd();
    REQUIRE(is_release(first));
    h.loop.advance(kCommandTimeout);
    CHECK_ST(u1.st, EDGELOCK_ERR_TIMEOUT);
    h.loop.advance(200);
    h.link.accept(&h.c->cmd_conn);
    // Past the lease: a plain record would be gone.
    h.loop.advance(2 * kTick);
    CHECK_EQ(h.c->holds.used(), 1);
    Result u2;
    CHECK_ST(release_start(h.c, a, 1, record, &u2), EDGELOCK_OK);
    CHECK(h.last_cmd() == first);
    h.reply(":1\r\n"); // the latch: the first one released it
    CHECK_ST(u2.st, EDGELOCK_OK);
    h.reply("+OK\r\n"); // latch delete
    CHECK_EQ(h.c->holds.used(), 0);

    // The same again, but nobody retries: the record goes with the latch.
    take(h, a, 2, 5000);
    Result u3;
    CHECK_ST(release_start(h.c, a, 2, record, &u3), EDGELOCK_OK);
    h.loop.advance(kCommandTimeout);
    CHECK_ST(u3.st, EDGELOCK_ERR_TIMEOUT);
    h.loop.advance(200);
    h.link.accept(&h.c->cmd_conn);
    h.loop.advance(5000 + kLatchTtl - 200); // short of lease + command timeout + latch TTL
    CHECK_EQ(h.c->holds.used(), 1);
    h.loop.advance(2 * kTick); // the reconnect ran a tick and set the next ones from it
    CHECK_EQ(h.c->holds.used(), 0);
}

// An expirable semaphore's owner takes again once its permits' lease ran
// out: BUSY only while they run.
TEST_CASE(permits_whose_lease_ran_out_do_not_keep_their_owner_busy)
{
    Harness h(two_holds);
    REQUIRE(h.c);
    edgelock_lock s = h.lock("s", EDGELOCK_PERMIT_SEMAPHORE);
    Result r1;
    REQUIRE(acquire_start(h.c, s, 1, 0, 1000, record, &r1, false, 2) == EDGELOCK_OK);
    h.reply("+OK\r\n");
    CHECK_ST(r1.st, EDGELOCK_OK);
    Result busy;
    CHECK_ST(acquire_start(h.c, s, 1, 0, 1000, record, &busy, false, 1), EDGELOCK_ERR_BUSY);
    h.loop.advance(1000);
    Result r2;
    CHECK_ST(acquire_start(h.c, s, 1, 0, 1000, record, &r2, false, 1), EDGELOCK_OK);
    h.reply("+OK\r\n");
    CHECK_ST(r2.st, EDGELOCK_OK);
    CHECK_EQ(count_of(h, s, 1), 1);
}

// Two watchdog holds found lost, their owners gone: a new owner finds the
// table full of loss markers and takes the oldest one's slot. That owner's
// unlock answers NOT_OWNER (Redis has nothing of it), the other's still LOST.
TEST_CASE(a_full_table_takes_the_oldest_loss_marker_when_no_lease_ran_out)
{
    Harness h(two_holds);
    REQUIRE(h.c);
    edgelock_lock a = h.lock("a"), b = h.lock("b"), x = h.lock("x");
    take(h, a, 1, EDGELOCK_LEASE_WATCHDOG);
    h.loop.advance(5000);
    take(h, b, 2, EDGELOCK_LEASE_WATCHDOG);
    h.loop.advance(5000);          // the tick renews both in one batch
    h.reply("*2\r\n:0\r\n:0\r\n"); // both fields gone
    CHECK_EQ(h.lost.calls, 2);
    CHECK_EQ(h.c->holds.used(), 2);

    take(h, x, 3, 1000);
    CHECK_EQ(h.c->holds.used(), 2);
    CHECK_EQ(h.c->holds.full_count(), 0);
    CHECK(hold_find(h.c, a.id, 1, nullptr) == nullptr); // lost first: its marker went

    Result u1, u2;
    CHECK_ST(release_start(h.c, b, 2, record, &u2), EDGELOCK_ERR_LOST); // at once, from its marker
    CHECK_ST(release_start(h.c, a, 1, record, &u1), EDGELOCK_OK);
    CHECK(is_release(h.last_cmd()));
    h.reply(kNil);
    CHECK_ST(u1.st, EDGELOCK_ERR_NOT_OWNER);
}

// A command may be written inside send (write_at_once) and run by Redis
// before the sender reads the clock again: the lease is counted from before
// the write, so our end of it never comes after Redis's. Counted from after,
// this hold would say OK for 40 ms after Redis let the key go, and a full
// table would keep its record while another owner already holds the lock.
TEST_CASE(a_lease_counts_from_before_its_command_is_written)
{
    Harness h(two_holds);
    REQUIRE(h.c);
    edgelock_lock a = h.lock("a");
    h.link.send_takes_ms = 40;
    take(h, a, 1, 1000);
    h.link.send_takes_ms = 0;
    int64_t left = -1;
    CHECK_ST(hold_validity(h.c, a.id, 1, &left), EDGELOCK_OK);
    CHECK_EQ(left, 960);
    h.loop.advance(960); // Redis's 1000 ms from its write are over
    CHECK_ST(hold_validity(h.c, a.id, 1, &left), EDGELOCK_ERR_NOT_OWNER);
    CHECK(hold_lapsed(h.c, hold_find(h.c, a.id, 1, nullptr), h.loop.now));
}
