// SPDX-License-Identifier: BSD-3-Clause
// What an async RedLock round's verdict rests on. It counts toward the
// majority only the servers it still holds when the round is judged: one
// taken early and lost before the round ended (the watchdog found its key
// gone) holds nothing (found by a RedLock stress run: OK with 2 of 5 servers
// held, and another client held the other 3). And a later round that cannot
// start ends the call with its own reason, not the last round's verdict.
#include <string.h>

#include <string>

#include "check.hpp"
#include "fake/fake_engine.hpp"
#include "fake/harness.hpp"
#include "locks/acquire.hpp"
#include "locks/client.hpp"
#include "locks/composite/async.hpp"
#include "locks/handles.hpp"
#include "locks/holds.hpp"

using namespace edgelock;
using namespace fake;

namespace
{

// Renewed every second: a renewal falls inside a 2 s round.
void three_second_watchdog(edgelock_config *cfg)
{
    cfg->watchdog_lease_ms = 3000;
    cfg->command_timeout_ms = 60000;
}

} // namespace

// A second client on the harness's loop and link (one fake link serves
// every client), connected.
Client *another_client(Harness &h, void (*tweak)(edgelock_config *))
{
    edgelock_config cfg;
    edgelock_config_init(&cfg);
    cfg.url = "redis://fake:1";
    cfg.client_id = "unit";
    tweak(&cfg);
    edgelock_status st;
    Client *c = client_create(&cfg, h.loop.loop, false, &FakeLink::ops, &st);
    if (!c)
        return nullptr;
    client_start(c);
    h.link.accept(&c->cmd_conn);
    h.link.accept(&c->sub_conn);
    return c;
}

TEST_CASE(a_server_lost_during_the_round_does_not_count_toward_the_majority)
{
    edgelock_composite state; // outlives the clients: their shutdown tells it
    memset(&state, 0, sizeof(state));
    Harness h(three_second_watchdog);
    REQUIRE(h.c);
    Client *c[3] = {h.c, another_client(h, three_second_watchdog), another_client(h, three_second_watchdog)};
    REQUIRE(c[1] && c[2]);
    edgelock_member m[3];
    for (int i = 0; i < 3; i++) {
        m[i].client = reinterpret_cast<edgelock_client *>(c[i]);
        lock_new(c[i], EDGELOCK_REENTRANT, "r", 1, &m[i].lock);
    }
    Result r;
    // 6 s to wait over 3 servers: 2 s for each attempt of a round.
    CHECK_ST(redlock_lock_async(&state, m, 3, 7, 6000, EDGELOCK_LEASE_WATCHDOG, record, &r), EDGELOCK_OK);
    h.loop.advance(0);                           // the attempts go out
    h.link.reply(&c[0]->cmd_conn, kNil);         // server 0 granted
    h.link.reply(&c[1]->cmd_conn, kNil);         // server 1 granted
    h.link.reply(&c[2]->cmd_conn, ":60000\r\n"); // server 2 held elsewhere: its attempt waits
    h.link.reply(&c[2]->sub_conn, subscribed("redisson_lock__channel:{r}"));
    h.loop.advance(0);
    h.link.reply(&c[2]->cmd_conn, ":60000\r\n");
    h.loop.advance(1000); // server 0's renewal finds the key gone
    h.link.reply(&c[0]->cmd_conn, renew_reply(1, 0));
    CHECK_EQ(h.lost.calls, 1);
    const size_t sent1 = h.link.of(&c[1]->cmd_conn).log.size();
    h.loop.advance(1100); // server 2's attempt gives up: the round is judged
    // One server held of three is no majority: not OK; what the round took
    // is given back (server 1's release goes out) for another round.
    CHECK_EQ(r.calls, 0);
    CHECK(h.link.of(&c[1]->cmd_conn).log.size() > sent1);
    int64_t left = 0;
    CHECK(hold_validity(c[0], m[0].lock.id, 7, &left) != EDGELOCK_OK); // given back too
    client_destroy(c[1]);
    client_destroy(c[2]);
}

namespace
{

// One waiting lock call per client: a second owner's call fills the table.
void one_waiter(edgelock_config *cfg)
{
    cfg->max_waiters = 1;
    cfg->command_timeout_ms = 60000;
}

} // namespace

// A round with no majority is followed by another while the wait lasts. When
// nothing of that round can even start (here every client's waiter table is
// full), the call ends with that reason, as a first round that cannot start
// does, not with the verdict of the round before (WAIT_TIMEOUT, which says
// the servers were held elsewhere for the whole wait).
TEST_CASE(a_later_round_that_cannot_start_says_why)
{
    edgelock_composite state;
    memset(&state, 0, sizeof(state));
    Harness h(one_waiter);
    REQUIRE(h.c);
    Client *c[3] = {h.c, another_client(h, one_waiter), another_client(h, one_waiter)};
    REQUIRE(c[1] && c[2]);
    edgelock_member m[3];
    edgelock_lock other[3];
    for (int i = 0; i < 3; i++) {
        m[i].client = reinterpret_cast<edgelock_client *>(c[i]);
        lock_new(c[i], EDGELOCK_REENTRANT, "r", 1, &m[i].lock);
        lock_new(c[i], EDGELOCK_REENTRANT, "x", 1, &other[i]);
    }
    Result r;
    CHECK_ST(redlock_lock_async(&state, m, 3, 7, 6000, 10000, record, &r), EDGELOCK_OK);
    h.loop.advance(0);
    h.link.reply(&c[0]->cmd_conn, kNil); // server 0 granted; 1 and 2 held elsewhere
    for (int i = 1; i < 3; i++) {
        h.link.reply(&c[i]->cmd_conn, ":60000\r\n");
        h.link.reply(&c[i]->sub_conn, subscribed("redisson_lock__channel:{r}"));
        h.loop.advance(0);
        h.link.reply(&c[i]->cmd_conn, ":60000\r\n");
    }
    h.loop.advance(2100); // both attempts give up: no majority, server 0 given back
    CHECK_EQ(r.calls, 0);
    // Another owner's lock call takes each client's only waiter slot before
    // the give-back answers and the next round would start.
    Result busy[3];
    for (int i = 0; i < 3; i++)
        CHECK_ST(acquire_start(c[i], other[i], 9, 0, 1000, record, &busy[i]), EDGELOCK_OK);
    h.link.reply(&c[0]->cmd_conn, ":1\r\n"); // the give-back's release
    CHECK_EQ(r.calls, 1);
    CHECK_ST(r.st, EDGELOCK_ERR_TABLE_FULL);
    client_destroy(c[1]);
    client_destroy(c[2]);
}
