// SPDX-License-Identifier: BSD-3-Clause
// The lease a re-entry names (lease.cpp, holds.cpp acquired): the lock
// scripts set the key's TTL to the lease each acquire and each partial
// release names, so a shorter one must not leave the client counting more
// than Redis keeps: not the watchdog's lease, not a longer fixed one, not
// the lease of the owner's other call on the wire.
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

constexpr uint32_t kWatchdogLease = 30000;

void watchdog_lease(edgelock_config *cfg)
{
    cfg->watchdog_lease_ms = kWatchdogLease;
}

// lock_acquire.lua: EVALSHA sha 1 key lease owner (or EVAL with its text).
// -1: the last command is not that.
long long acquire_lease(Harness &h)
{
    std::vector<std::string> a = h.last_cmd();
    const Script &s = kScripts[kScriptAcquire];
    bool acquire = a.size() == 6 && (a[1] == s.sha1 || a[1] == std::string(s.text, s.len));
    return acquire ? std::stoll(a[4]) : -1;
}

// Owner 1 takes lk with that lease, granted at once.
void take(Harness &h, edgelock_lock lk, int64_t lease_ms)
{
    Result r;
    REQUIRE(acquire_start(h.c, lk, 1, 0, lease_ms, record, &r) == EDGELOCK_OK);
    h.reply(kNil);
    CHECK_ST(r.st, EDGELOCK_OK);
}

int64_t valid_for(Harness &h, edgelock_lock lk, edgelock_status want)
{
    int64_t left = -1;
    CHECK_ST(hold_validity(h.c, lk.id, 1, &left), want);
    return left;
}

} // namespace

TEST_CASE(a_short_re_entry_into_a_watchdog_hold_asks_for_the_watchdogs_lease)
{
    Harness h(watchdog_lease);
    REQUIRE(h.c);
    edgelock_lock lk = h.lock("a");
    Result first, again;
    REQUIRE(acquire_start(h.c, lk, 1, 0, EDGELOCK_LEASE_WATCHDOG, record, &first) == EDGELOCK_OK);
    CHECK_EQ(acquire_lease(h), kWatchdogLease);
    h.reply(kNil);
    REQUIRE(acquire_start(h.c, lk, 1, 0, 50, record, &again) == EDGELOCK_OK);
    CHECK_EQ(acquire_lease(h), kWatchdogLease); // not 50
    h.reply(kNil);
    CHECK_ST(again.st, EDGELOCK_OK);
    h.loop.advance(1000); // the 50 ms would be long over
    CHECK_EQ(valid_for(h, lk, EDGELOCK_OK), (int64_t)kWatchdogLease - 1000);

    // The release of one re-entry restores the watchdog's lease (ARGV[2]).
    Result u;
    REQUIRE(release_start(h.c, lk, 1, record, &u) == EDGELOCK_OK);
    std::vector<std::string> rel = h.last_cmd();
    REQUIRE(rel.size() > 7 && rel[1] == kScripts[kScriptRelease].sha1);
    CHECK_EQ(std::stoll(rel[7]), kWatchdogLease); // EVALSHA sha 3 keys... message lease
    h.reply(":0\r\n");
    CHECK_ST(u.st, EDGELOCK_OK);
    CHECK_EQ(u.value, 0);
    Hold *held = hold_find(h.c, lk.id, 1, nullptr);
    REQUIRE(held);
    CHECK(hold_renewable(held));

    // A fixed-lease hold re-entered with a shorter fixed lease: it asks for
    // what the hold has left, so lock_valid's first answer stays true.
    edgelock_lock b = h.lock("b");
    Result f2;
    h.reply("+OK\r\n"); // the release's latch delete
    take(h, b, 1000);
    h.loop.advance(400);
    REQUIRE(acquire_start(h.c, b, 1, 0, 50, record, &f2) == EDGELOCK_OK);
    CHECK_EQ(acquire_lease(h), 600);
    h.reply(kNil);
    CHECK_ST(f2.st, EDGELOCK_OK);
    CHECK_EQ(valid_for(h, b, EDGELOCK_OK), 600);
    // A longer one extends it, as Redisson's does.
    Result f3;
    REQUIRE(acquire_start(h.c, b, 1, 0, 5000, record, &f3) == EDGELOCK_OK);
    CHECK_EQ(acquire_lease(h), 5000);
    h.reply(kNil);
    CHECK_EQ(valid_for(h, b, EDGELOCK_OK), 5000);
}

// Sent while the same owner's watchdog call on the lock is on the wire (two
// threads of one owner), the re-entry may run after that call's grant: it
// asks for the watchdog's lease, so the key cannot lapse under the hold the
// watchdog renews.
TEST_CASE(a_short_re_entry_sent_while_a_watchdog_call_is_out_asks_for_its_lease)
{
    Harness h(watchdog_lease);
    REQUIRE(h.c);
    edgelock_lock lk = h.lock("a");
    Result first, again;
    REQUIRE(acquire_start(h.c, lk, 1, 0, EDGELOCK_LEASE_WATCHDOG, record, &first) == EDGELOCK_OK);
    REQUIRE(acquire_start(h.c, lk, 1, 0, 50, record, &again) == EDGELOCK_OK);
    CHECK_EQ(acquire_lease(h), kWatchdogLease); // not 50
    h.reply(kNil);
    h.reply(kNil);
    CHECK_ST(first.st, EDGELOCK_OK);
    CHECK_ST(again.st, EDGELOCK_OK);
    h.loop.advance(1000);
    CHECK_EQ(valid_for(h, lk, EDGELOCK_OK), (int64_t)kWatchdogLease - 1000);
    CHECK(hold_renewable(hold_find(h.c, lk.id, 1, nullptr)));
}

namespace
{

const char kNoScript[] = "-NOSCRIPT No matching script. Please use EVAL.\r\n";

} // namespace

// The lease is decided again each time an attempt is sent: a short one sent
// first, alone, and sent again (NOSCRIPT here; CLUSTERDOWN on a cluster)
// behind the owner's watchdog call runs after that call's grant. A stress
// run on a cluster saw the 250 ms it asked the first time set on a watchdog
// hold: the watchdog call said OK with 2.3 s of lock_valid left, and another
// client held the lock 50 ms later.
TEST_CASE(a_re_entry_sent_again_behind_a_watchdog_call_asks_for_its_lease)
{
    Harness h(watchdog_lease);
    REQUIRE(h.c);
    edgelock_lock lk = h.lock("a");
    Result shorter, longer;
    REQUIRE(acquire_start(h.c, lk, 1, 0, 50, record, &shorter) == EDGELOCK_OK);
    CHECK_EQ(acquire_lease(h), 50); // nothing else of this owner's out
    REQUIRE(acquire_start(h.c, lk, 1, 0, EDGELOCK_LEASE_WATCHDOG, record, &longer) == EDGELOCK_OK);
    CHECK_EQ(acquire_lease(h), kWatchdogLease);
    h.reply(kNoScript);                         // the short one: not run; loaded and sent again, behind
    CHECK_EQ(acquire_lease(h), kWatchdogLease); // not 50
    h.reply(kNil);                              // the watchdog call: granted
    h.reply(std::string("$40\r\n") + kScripts[kScriptAcquire].sha1 + "\r\n");
    h.reply(kNil); // the short one: a re-entry, run last
    CHECK_ST(longer.st, EDGELOCK_OK);
    CHECK_ST(shorter.st, EDGELOCK_OK);
    h.loop.advance(1000);
    CHECK_EQ(valid_for(h, lk, EDGELOCK_OK), (int64_t)kWatchdogLease - 1000);
    CHECK(hold_renewable(hold_find(h.c, lk.id, 1, nullptr)));
}

namespace
{

void watchdog_lease_timeout_3s(edgelock_config *cfg)
{
    cfg->watchdog_lease_ms = kWatchdogLease;
    cfg->command_timeout_ms = 3000;
    cfg->reconnect_min_ms = 100;
    cfg->reconnect_max_ms = 100;
}

// lock_release.lua: EVALSHA sha 3 key channel latch message lease owner ...
// -1: the last command is not that.
long long release_lease(Harness &h)
{
    std::vector<std::string> a = h.last_cmd();
    return a.size() > 7 && a[1] == kScripts[kScriptRelease].sha1 ? std::stoll(a[7]) : -1;
}

} // namespace

// A re-entry cancelled while its attempt was on the wire, and granted: the
// script set the key's TTL to the re-entry's lease (the watchdog's, raised),
// and the undo that gives its count back sets it again, to the lease it
// names. That must be the hold's own, not the 50 ms the caller asked for:
// else Redis lets the key lapse 50 ms later while lock_valid, counting the
// watchdog's lease from its last renewal, says held for 30 s (found by a
// stress run's mutual-exclusion check on a cluster).
TEST_CASE(the_undo_of_a_cancelled_re_entry_restores_the_holds_lease)
{
    Harness h(watchdog_lease);
    REQUIRE(h.c);
    edgelock_lock lk = h.lock("a");
    Result first, again;
    REQUIRE(acquire_start(h.c, lk, 1, 0, EDGELOCK_LEASE_WATCHDOG, record, &first) == EDGELOCK_OK);
    h.reply(kNil);
    REQUIRE(acquire_start(h.c, lk, 1, 60000, 50, record, &again) == EDGELOCK_OK);
    CHECK_EQ(acquire_lease(h), kWatchdogLease); // raised on the wire
    acquire_cancel(h.c, 1);
    h.reply(kNil); // granted: too late to stop, so given back
    CHECK_ST(again.st, EDGELOCK_ERR_CANCELLED);
    CHECK_EQ(release_lease(h), kWatchdogLease); // the undo: the hold's lease, not 50
    h.reply(":0\r\n");                          // the first hold is still there
    h.reply("+OK\r\n");                         // latch delete
    CHECK_EQ(valid_for(h, lk, EDGELOCK_OK), (int64_t)kWatchdogLease);

    // The same on a fixed-lease hold: its own lease again, not the re-entry's.
    edgelock_lock b = h.lock("b");
    Result f1, f2;
    REQUIRE(acquire_start(h.c, b, 1, 0, 60000, record, &f1) == EDGELOCK_OK);
    h.reply(kNil);
    REQUIRE(acquire_start(h.c, b, 1, 60000, 50, record, &f2) == EDGELOCK_OK);
    acquire_cancel(h.c, 1);
    h.reply(kNil);
    CHECK_ST(f2.st, EDGELOCK_ERR_CANCELLED);
    CHECK_EQ(release_lease(h), 60000);
}

// The other way round: a longer re-entry given back names what the hold
// has left, not the lease of the attempt it undoes (that call is over, and
// the key would outlive the hold that lock_valid counts).
TEST_CASE(the_undo_of_a_longer_re_entry_does_not_count_its_own_lease)
{
    Harness h(watchdog_lease);
    REQUIRE(h.c);
    edgelock_lock lk = h.lock("a");
    take(h, lk, 10000);
    h.loop.advance(1000);
    Result again;
    REQUIRE(acquire_start(h.c, lk, 1, 60000, 60000, record, &again) == EDGELOCK_OK);
    CHECK_EQ(acquire_lease(h), 60000);
    acquire_cancel(h.c, 1);
    h.reply(kNil); // granted: given back
    CHECK_ST(again.st, EDGELOCK_ERR_CANCELLED);
    CHECK_EQ(release_lease(h), 9000); // what the hold has left
}

// A re-entry whose reply never came may have run, and then set the key's TTL
// to the lease it asked for: lock_valid must not promise more than that
// (fail closed). It asked for no less than what the hold had left, so the
// hold keeps its own end, not the re-entry's.
TEST_CASE(a_re_entry_of_unknown_outcome_leaves_the_holds_end)
{
    Harness h(watchdog_lease_timeout_3s);
    REQUIRE(h.c);
    edgelock_lock lk = h.lock("a");
    take(h, lk, 10000);
    Result again;
    REQUIRE(acquire_start(h.c, lk, 1, 0, 60000, record, &again) == EDGELOCK_OK);
    CHECK_EQ(acquire_lease(h), 60000);
    h.loop.advance(3000); // no answer: TIMEOUT, outcome unknown
    CHECK_ST(again.st, EDGELOCK_ERR_TIMEOUT);
    CHECK_EQ(valid_for(h, lk, EDGELOCK_OK), 7000); // not 57000: it may not have run
}

TEST_CASE(a_re_entry_of_unknown_outcome_sent_while_a_watchdog_call_was_out_keeps_the_watchdog)
{
    Harness h(watchdog_lease_timeout_3s);
    REQUIRE(h.c);
    edgelock_lock lk = h.lock("a");
    Result first, again;
    REQUIRE(acquire_start(h.c, lk, 1, 0, EDGELOCK_LEASE_WATCHDOG, record, &first) == EDGELOCK_OK);
    REQUIRE(acquire_start(h.c, lk, 1, 0, 5000, record, &again) == EDGELOCK_OK);
    CHECK_EQ(acquire_lease(h), kWatchdogLease); // raised: the first is out
    h.reply(kNil);                              // the first is granted; the re-entry's answer never comes
    CHECK_ST(first.st, EDGELOCK_OK);
    h.loop.advance(3000);
    CHECK_ST(again.st, EDGELOCK_ERR_TIMEOUT);
    CHECK(hold_renewable(hold_find(h.c, lk.id, 1, nullptr)));
}

// A read lock's holds each have a timeout key of their own, and an unlock
// deletes the newest one's (Redisson's read unlock). A re-entry with a longer
// lease keeps the lock until its end; once unlocked, the hold left ends with
// its own, shorter lease, over here already: a writer may hold the lock by
// now. lock_valid said OK with the unlocked re-entry's time left (found by a
// stress run: a reader valid 630 ms more while a writer held the lock).
TEST_CASE(a_read_hold_left_by_an_unlock_ends_with_its_own_lease)
{
    Harness h(watchdog_lease);
    REQUIRE(h.c);
    edgelock_lock lk = h.lock("rw", EDGELOCK_READ);
    take(h, lk, 1000);
    h.loop.advance(500);
    take(h, lk, 3000); // to 3500
    h.loop.advance(600);
    CHECK_EQ(valid_for(h, lk, EDGELOCK_OK), 2400); // both held: until the longer one ends
    Result u;
    REQUIRE(release_start(h.c, lk, 1, record, &u) == EDGELOCK_OK);
    h.reply(":0\r\n"); // other readers still hold it
    CHECK_ST(u.st, EDGELOCK_OK);
    CHECK_EQ(hold_find(h.c, lk.id, 1, nullptr)->count, 1u);
    valid_for(h, lk, EDGELOCK_ERR_NOT_OWNER); // the first hold's 1000 ms are over
}

// Two handles on one name are one lock to Redis (Redisson: one RLock), and
// the owner's holds through both one hash field with one TTL: a short
// re-entry through the second handle must cover the first's hold too.
TEST_CASE(a_short_re_entry_through_another_handle_asks_for_the_holds_lease)
{
    Harness h(watchdog_lease);
    REQUIRE(h.c);
    edgelock_lock first = h.lock("a"), second = h.lock("a");
    take(h, first, EDGELOCK_LEASE_WATCHDOG);
    Result r;
    REQUIRE(acquire_start(h.c, second, 1, 0, 50, record, &r) == EDGELOCK_OK);
    CHECK_EQ(acquire_lease(h), kWatchdogLease); // not 50
    h.reply(kNil);
    CHECK_ST(r.st, EDGELOCK_OK);

    // The other way round: a 50 ms hold through one handle, the watchdog's
    // through another; the first one's unlock leaves the watchdog's count
    // and names its lease, not 50.
    edgelock_lock one = h.lock("b"), two = h.lock("b");
    take(h, one, 50);
    take(h, two, EDGELOCK_LEASE_WATCHDOG);
    Result u;
    REQUIRE(release_start(h.c, one, 1, record, &u) == EDGELOCK_OK);
    CHECK_EQ(release_lease(h), kWatchdogLease);
    h.reply(":0\r\n");
    CHECK_ST(u.st, EDGELOCK_OK);
    CHECK(hold_renewable(hold_find(h.c, two.id, 1, nullptr)));
}

// An unlock that leaves a count sets the key's TTL to the lease it names: it
// must cover a lock call of the same owner on the wire ahead of it, whose
// grant it leaves counted.
TEST_CASE(an_unlock_behind_a_longer_re_entry_names_its_lease)
{
    Harness h(watchdog_lease);
    REQUIRE(h.c);
    edgelock_lock lk = h.lock("a");
    take(h, lk, 1000);
    Result again, u;
    REQUIRE(acquire_start(h.c, lk, 1, 0, 60000, record, &again) == EDGELOCK_OK);
    REQUIRE(release_start(h.c, lk, 1, record, &u) == EDGELOCK_OK);
    CHECK_EQ(release_lease(h), 60000); // not the 1000 of the hold it releases
    h.reply(kNil);                     // the re-entry: granted first
    h.reply(":0\r\n");                 // the unlock: a count remains
    CHECK_ST(again.st, EDGELOCK_OK);
    CHECK_ST(u.st, EDGELOCK_OK);
    CHECK_EQ(valid_for(h, lk, EDGELOCK_OK), 60000);
}
