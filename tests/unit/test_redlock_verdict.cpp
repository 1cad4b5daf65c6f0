// SPDX-License-Identifier: BSD-3-Clause
// A RedLock round counts toward the majority only the servers it still holds
// when the round is judged: one taken early and lost before the round ended
// (the watchdog found its key gone) holds nothing (found by a RedLock stress
// run: OK with 2 of 5 servers held, and another client held the other 3).
#include <string.h>

#include <string>

#include "check.hpp"
#include "fake/fake_engine.hpp"
#include "fake/harness.hpp"
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
