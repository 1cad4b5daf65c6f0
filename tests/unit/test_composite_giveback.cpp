// SPDX-License-Identifier: BSD-3-Clause
// An async MultiLock that gives back a member it took under the watchdog,
// when that release cannot even be queued (the command table is full): the
// member must not stay renewed for ever by nobody who knows of it; and a
// member it re-entered must not keep the re-entry's count.
#include <string.h>

#include <string>

#include "check.hpp"
#include "fake/fake_engine.hpp"
#include "fake/harness.hpp"
#include "locks/acquire.hpp"
#include "locks/composite/async.hpp"
#include "locks/holds.hpp"
#include "locks/release.hpp"
#include "redisson/scripts.hpp"

using namespace edgelock;
using namespace fake;

namespace
{

void four_commands(edgelock_config *cfg)
{
    cfg->watchdog_lease_ms = 30000;
    cfg->command_timeout_ms = 60000;
    cfg->max_commands = 4;
}

// Members a and b of one MultiLock by owner 7 on the harness's client, and the
// call's storage.
struct TwoMembers {
    edgelock_member m[2];
    edgelock_composite state;
    explicit TwoMembers(Harness &h)
    {
        m[0].client = reinterpret_cast<edgelock_client *>(h.c);
        m[0].lock = h.lock("a");
        m[1].client = m[0].client;
        m[1].lock = h.lock("b");
        memset(&state, 0, sizeof(state));
    }
};

// Member 1 is held elsewhere, so its attempt waits on the channel; then other
// calls fill the four command slots. How many commands went out by then.
size_t member_1_waits_with_the_table_full(Harness &h, Result (&fillers)[4])
{
    h.reply(":20000\r\n");
    h.link.reply(&h.c->sub_conn, subscribed("redisson_lock__channel:{b}"));
    h.reply(":20000\r\n"); // the attempt after the subscription: still held
    const char *names[4] = {"x", "y", "z", "w"};
    for (int i = 0; i < 4; i++)
        CHECK_ST(acquire_start(h.c, h.lock(names[i]), 9, 0, 1000, record, &fillers[i]), EDGELOCK_OK);
    return h.cmd().log.size();
}

} // namespace

TEST_CASE(a_give_back_that_cannot_be_queued_lets_the_watchdog_go)
{
    Harness h(four_commands);
    REQUIRE(h.c);
    TwoMembers t(h);
    edgelock_member *m = t.m;
    Result r, fillers[4];
    CHECK_ST(multi_lock_async(&t.state, m, 2, 7, 5000, EDGELOCK_LEASE_WATCHDOG, record, &r), EDGELOCK_OK);
    h.reply(kNil); // member 0 taken, under the watchdog; member 1's attempt goes out
    CHECK(hold_renewable(hold_find(h.c, m[0].lock.id, 7, nullptr)));
    const size_t sent = member_1_waits_with_the_table_full(h, fillers);
    h.loop.advance(5100);               // member 1's wait ends: member 0 is given back
    CHECK_EQ(h.cmd().log.size(), sent); // no release went out
    CHECK_EQ(r.calls, 1);
    CHECK_ST(r.st, EDGELOCK_ERR_WAIT_TIMEOUT);
    Hold *held = hold_find(h.c, m[0].lock.id, 7, nullptr);
    // The release could not be queued: the watchdog no longer renews it, so
    // it lapses with its lease, and lock_valid stops vouching for it then.
    CHECK(held == nullptr || !hold_renewable(held));
    for (int i = 0; i < 4; i++)
        h.reply(kNil);
    h.loop.advance(31000);
    CHECK_EQ(h.cmd().log.size(), sent); // no renewal of it either
    int64_t left = 0;
    CHECK(hold_validity(h.c, m[0].lock.id, 7, &left) != EDGELOCK_OK);
    CHECK_EQ(h.c->holds.used(), 0u); // and no entry left behind
}

// The same, for a member the owner held already (the MultiLock re-entered
// it): its renewal is the owner's and goes on, but the re-entry's count must
// not stay. Left counted, the owner's own unlock would leave the lock held,
// renewed for ever. Given up by our count, Redis counts one more than the
// owner; the owner's unlock then releases that one too (a drain), and says
// released.
TEST_CASE(a_give_back_of_a_re_entry_that_cannot_be_queued_leaves_one_count)
{
    Harness h(four_commands);
    REQUIRE(h.c);
    TwoMembers t(h);
    edgelock_member *m = t.m;
    Result own, r, fillers[4];
    CHECK_ST(acquire_start(h.c, m[0].lock, 7, 0, EDGELOCK_LEASE_WATCHDOG, record, &own), EDGELOCK_OK);
    h.reply(kNil);
    CHECK_ST(own.st, EDGELOCK_OK);
    CHECK_ST(multi_lock_async(&t.state, m, 2, 7, 5000, EDGELOCK_LEASE_WATCHDOG, record, &r), EDGELOCK_OK);
    h.reply(kNil); // member 0 re-entered
    CHECK_EQ(hold_find(h.c, m[0].lock.id, 7, nullptr)->count, 2u);
    const size_t sent = member_1_waits_with_the_table_full(h, fillers);
    h.loop.advance(5100); // member 1's wait ends: member 0's re-entry is given back
    CHECK_EQ(h.cmd().log.size(), sent);
    CHECK_ST(r.st, EDGELOCK_ERR_WAIT_TIMEOUT);
    Hold *held = hold_find(h.c, m[0].lock.id, 7, nullptr);
    REQUIRE(held);
    CHECK_EQ(held->count, 1u);   // the owner's own hold
    CHECK(hold_renewable(held)); // still renewed: the owner holds it
    for (int i = 0; i < 4; i++)
        h.reply(kNil);

    Result u;
    CHECK_ST(release_start(h.c, m[0].lock, 7, record, &u), EDGELOCK_OK);
    h.reply(":0\r\n"); // Redis still counts the re-entry: a drain goes out
    CHECK_EQ(u.calls, 0);
    h.reply(":1\r\n"); // the unlock latch's DEL
    h.reply(":1\r\n"); // the drain: released
    h.loop.advance(0);
    CHECK_EQ(u.calls, 1);
    CHECK_ST(u.st, EDGELOCK_OK);
    CHECK_EQ(u.value, 1); // released
}

namespace
{

void reconnecting(edgelock_config *cfg)
{
    cfg->watchdog_lease_ms = 30000;
    cfg->command_timeout_ms = 3000;
    cfg->reconnect_min_ms = 100;
    cfg->reconnect_max_ms = 100;
}

bool is_release(const std::string &cmd)
{
    std::vector<std::string> a = resp_args(cmd);
    return a.size() > 1 && a[0] == "EVALSHA" && a[1] == kScripts[kScriptRelease].sha1;
}

} // namespace

// A give-back whose answer never comes (the connection drops) may or may not
// have run. Nobody will unlock that member again: its release goes out again,
// with the same request id (the unlock latch answers if the first one ran),
// once the connection is back, until Redis answers; the member does not sit
// out its whole lease.
TEST_CASE(a_give_back_of_unknown_outcome_goes_out_again_until_answered)
{
    Harness h(reconnecting);
    REQUIRE(h.c);
    TwoMembers t(h);
    edgelock_member *m = t.m;
    Result r;
    CHECK_ST(multi_lock_async(&t.state, m, 2, 7, 0, 10000, record, &r), EDGELOCK_OK);
    h.reply(kNil);         // member 0 taken
    h.reply(":20000\r\n"); // member 1 held elsewhere: no wait, so member 0 is given back
    REQUIRE(is_release(h.cmd().log.back()));
    const std::string give_back = h.cmd().log.back();
    h.link.drop(&h.c->cmd_conn); // its answer never comes
    CHECK_EQ(r.calls, 1);
    CHECK_ST(r.st, EDGELOCK_ERR_WAIT_TIMEOUT);
    int64_t left = 0;
    CHECK_ST(hold_validity(h.c, m[0].lock.id, 7, &left), EDGELOCK_ERR_LOST); // it may be released

    h.loop.advance(200);
    h.link.accept(&h.c->cmd_conn);
    h.loop.advance(0);
    REQUIRE(is_release(h.cmd().log.back()));
    CHECK(h.cmd().log.back() == give_back); // the same unlock, request id included
    h.reply(":1\r\n");                      // released (or the latch says the first one did)
    h.loop.advance(0);
    CHECK(hold_find(h.c, m[0].lock.id, 7, nullptr) == nullptr);
    CHECK_EQ(r.calls, 1);
}
