// SPDX-License-Identifier: BSD-3-Clause
// The subscriber connection's health on the fake clock and link
// (fake/fake_engine.hpp): a connection Redis drops right after its setup each
// time backs off up to reconnect_max_ms instead of reconnecting at the
// shortest delay for ever, and a subscriber with a subscription PINGs, so a
// path that died without a reset is dropped and made again (subscriptions
// included) instead of leaving its waiters deaf until a lease runs out.
#include <hiredis/hiredis.h>
#include <hiredis/read.h>
#include <string.h>

#include <string>
#include <vector>

#include "check.hpp"
#include "fake/fake_engine.hpp"
#include "fake/harness.hpp"
#include "locks/acquire.hpp"
#include "locks/client.hpp"
#include "redis/connection.hpp"
#include "redis/link.hpp"

using namespace edgelock;
using namespace fake;

static const char kChannel[] = "redisson_lock__channel:{busy}";

static void backoff_config(edgelock_config *cfg)
{
    cfg->reconnect_min_ms = 100;
    cfg->reconnect_max_ms = 1000;
}

// Moves the clock 1 ms at a time until conn is opened again (at most limit ms).
static bool until_open(Harness &h, FakeLink::Conn &fc, uint64_t limit)
{
    size_t opens = fc.opens.size();
    for (uint64_t t = 0; t < limit; t++) {
        h.loop.advance(1);
        if (fc.opens.size() > opens)
            return true;
    }
    return false;
}

// A waiter on "busy" (held elsewhere for 30 s), its channel subscribed and
// confirmed, its second try answered.
static void wait_on_busy(Harness &h, Result *r)
{
    edgelock_lock lk = h.lock("busy");
    CHECK_ST(acquire_start(h.c, lk, 7, 60000, 10000, record, r), EDGELOCK_OK);
    h.reply(":30000\r\n");
    std::vector<std::string> s = resp_args(h.sub().log.back());
    REQUIRE(s.size() == 2 && s[0] == "SUBSCRIBE" && s[1] == kChannel);
    h.link.push(&h.c->sub_conn, subscribed(kChannel));
    h.reply(":29990\r\n");
}

// A client whose waiter on "busy" waits (wait_on_busy); sent: the commands
// sent by then.
struct BusyWaiter {
    Harness h;
    Result r;
    size_t sent = 0;
    BusyWaiter()
    {
        if (!h.c)
            return;
        wait_on_busy(h, &r);
        sent = h.cmd().log.size();
    }
};

static size_t count_sent(const FakeLink::Conn &fc, const char *verb)
{
    size_t n = 0;
    for (const std::string &c : fc.log)
        n += resp_args(c)[0] == verb;
    return n;
}

static redisReply *parse(const std::string &resp)
{
    redisReader *rd = redisReaderCreate();
    redisReaderFeed(rd, resp.data(), resp.size());
    void *reply = nullptr;
    int rc = redisReaderGetReply(rd, &reply);
    redisReaderFree(rd);
    return rc == REDIS_OK ? static_cast<redisReply *>(reply) : nullptr;
}

// Answers the PING waiting on the subscriber with resp, through its own
// callback (hiredis 1.1 and later, and RESP3).
static bool answer_ping(Harness &h, const std::string &resp)
{
    FakeLink::Conn &fc = h.sub();
    for (auto it = fc.pending.begin(); it != fc.pending.end(); ++it) {
        if (resp_args(it->bytes)[0] != "PING")
            continue;
        void *privdata = it->privdata;
        fc.pending.erase(it);
        redisReply *r = parse(resp);
        if (!r)
            return false;
        conn_link_reply(&h.c->sub_conn, r, privdata);
        freeReplyObject(r);
        return true;
    }
    return false;
}

// ---- backoff -------------------------------------------------------------------

TEST_CASE(a_subscriber_dropped_right_after_it_is_ready_backs_off_to_the_cap)
{
    Harness h(backoff_config);
    REQUIRE(h.c);
    Result r;
    wait_on_busy(h, &r);
    FakeLink::Conn &fc = h.sub();
    // Redis refuses the SUBSCRIBE each time (an ACL without the channel):
    // hiredis drops the connection on the error nobody waits for.
    h.link.drop(&h.c->sub_conn);
    std::vector<uint64_t> gaps;
    for (int i = 0; i < 9; i++) {
        uint64_t dropped = h.loop.now;
        REQUIRE(until_open(h, fc, 5000));
        gaps.push_back(h.loop.now - dropped);
        size_t subs = count_sent(fc, "SUBSCRIBE");
        h.link.accept(&h.c->sub_conn);
        CHECK(conn_ready(&h.c->sub_conn));
        CHECK_EQ(count_sent(fc, "SUBSCRIBE"), subs + 1); // the waiter's channel, again
        h.loop.advance(5);
        h.link.drop(&h.c->sub_conn);
    }
    // 100, 200, 400, 800 ms, then the 1000 ms cap, each plus up to a quarter.
    for (size_t k = 0; k < gaps.size(); k++) {
        uint64_t base = k < 4 ? 100u << k : 1000;
        CHECK(gaps[k] >= base);
        CHECK(gaps[k] <= base + base / 4 + 1);
    }
    // A connection that stays up a while (reconnect_max_ms) starts over.
    REQUIRE(until_open(h, fc, 5000));
    h.link.accept(&h.c->sub_conn);
    h.loop.advance(1000);
    h.link.push(&h.c->sub_conn, subscribed(kChannel));
    h.link.drop(&h.c->sub_conn);
    uint64_t dropped = h.loop.now;
    REQUIRE(until_open(h, fc, 5000));
    CHECK(h.loop.now - dropped <= 126);
}

TEST_CASE(a_command_connection_dropped_right_after_it_is_ready_backs_off_too)
{
    Harness h(backoff_config);
    REQUIRE(h.c);
    FakeLink::Conn &fc = h.cmd();
    h.link.drop(&h.c->cmd_conn);
    uint64_t last_gap = 0;
    for (int i = 0; i < 7; i++) {
        uint64_t dropped = h.loop.now;
        REQUIRE(until_open(h, fc, 5000));
        last_gap = h.loop.now - dropped;
        h.link.accept(&h.c->cmd_conn); // READONLY to the first write, say
        h.link.drop(&h.c->cmd_conn);
    }
    CHECK(last_gap >= 1000);
}

// ---- keepalive -----------------------------------------------------------------

TEST_CASE(no_ping_on_a_subscriber_without_subscriptions)
{
    Harness h;
    REQUIRE(h.c);
    h.loop.advance(60000);
    CHECK_EQ(count_sent(h.sub(), "PING"), 0);
    CHECK_EQ(h.sub().opens.size(), 1);
}

TEST_CASE(a_subscriber_whose_ping_is_not_answered_is_made_again_with_its_subscriptions)
{
    Harness h; // command_timeout_ms 3000: a PING every 3 s, 3 s for its answer
    REQUIRE(h.c);
    Result r;
    wait_on_busy(h, &r);
    FakeLink::Conn &fc = h.sub();
    h.loop.advance(2999);
    CHECK_EQ(count_sent(fc, "PING"), 0);
    h.loop.advance(1);
    REQUIRE(count_sent(fc, "PING") == 1);
    std::vector<std::string> ping = resp_args(fc.log.back());
    CHECK(ping.size() == 2 && ping[1] == kChannel); // the answer names the subscribed channel
    // The path died silently: no answer, no reset.
    h.loop.advance(2999);
    CHECK(fc.open);
    CHECK_EQ(fc.opens.size(), 1);
    h.loop.advance(1);
    CHECK(!fc.open);
    CHECK(!conn_ready(&h.c->sub_conn));
    CHECK(!pubsub_subscribed(&h.c->pubsub, pubsub_find(&h.c->pubsub, kChannel, strlen(kChannel))));
    // Reconnected at the shortest delay (it was up long enough) and subscribed again.
    size_t subs = count_sent(fc, "SUBSCRIBE");
    REQUIRE(until_open(h, fc, 200));
    h.link.accept(&h.c->sub_conn);
    CHECK_EQ(count_sent(fc, "SUBSCRIBE"), subs + 1);
    CHECK(resp_args(fc.log.back())[1] == kChannel);
    // The confirmation wakes the waiter: it tries again at once (an unlock may
    // have been missed while the path was dead).
    size_t sent = h.cmd().log.size();
    h.link.push(&h.c->sub_conn, subscribed(kChannel));
    CHECK_EQ(h.cmd().log.size(), sent + 1);
    CHECK(resp_args(h.cmd().log.back())[0] == "EVALSHA");
    CHECK_EQ(r.calls, 0);
}

TEST_CASE(a_subscriber_whose_pings_are_answered_stays_up)
{
    BusyWaiter w;
    Harness &h = w.h;
    REQUIRE(h.c);
    FakeLink::Conn &fc = h.sub();
    for (int i = 0; i < 4; i++) { // 22 s: within the holder's 30 s lease
        h.loop.advance(3000);
        REQUIRE(count_sent(fc, "PING") == (size_t)i + 1);
        h.loop.advance(2500);
        switch (i % 3) {
        case 0: // the RESP2 shape alone, without the PING's tag: still no message
            h.link.push(&h.c->sub_conn, resp_array({resp_bulk("pong"), resp_bulk(kChannel)}));
            break;
        case 1: // RESP2, subscribed (hiredis 1.1 and later): to the PING's own callback
            CHECK(answer_ping(h, resp_array({resp_bulk("pong"), resp_bulk(kChannel)})));
            break;
        default: // RESP3
            CHECK(answer_ping(h, "+PONG\r\n"));
            break;
        }
        if (i % 3 == 0) // untagged: the fake keeps the PING's entry; nothing else answers it
            for (auto it = fc.pending.begin(); it != fc.pending.end(); ++it)
                if (resp_args(it->bytes)[0] == "PING") {
                    fc.pending.erase(it);
                    break;
                }
    }
    h.loop.advance(2999);
    CHECK(fc.open);
    CHECK(conn_ready(&h.c->sub_conn));
    CHECK_EQ(fc.opens.size(), 1);
    // A pong is no unlock message: the waiter was not woken by one.
    CHECK_EQ(h.cmd().log.size(), w.sent);
    CHECK_EQ(w.r.calls, 0);
    CHECK(pubsub_subscribed(&h.c->pubsub, pubsub_find(&h.c->pubsub, kChannel, strlen(kChannel))));
}

// hiredis before 1.1 drops the answer to a PING on a subscribed RESP2
// connection (LinkOps::hears_subscribed_ping): the keepalive subscribes to the
// channel again instead, and Redis's confirmation is its answer.
struct OldHiredis {
    OldHiredis() { FakeLink::ops.hears_subscribed_ping = false; }
    ~OldHiredis() { FakeLink::ops.hears_subscribed_ping = true; }
};

TEST_CASE(where_a_ping_goes_unheard_the_keepalive_subscribes_again)
{
    OldHiredis old; // outlives the client
    BusyWaiter w;
    Harness &h = w.h;
    REQUIRE(h.c);
    FakeLink::Conn &fc = h.sub();
    for (int i = 0; i < 3; i++) { // answered each time: it stays up
        h.loop.advance(3000);
        REQUIRE(count_sent(fc, "SUBSCRIBE") == (size_t)i + 2);
        std::vector<std::string> again = resp_args(fc.log.back());
        CHECK(again.size() == 2 && again[1] == kChannel);
        h.loop.advance(2999);
        h.link.push(&h.c->sub_conn, subscribed(kChannel));
    }
    CHECK_EQ(count_sent(fc, "PING"), 0);
    CHECK(fc.open);
    CHECK_EQ(fc.opens.size(), 1);
    // The confirmation of a channel already confirmed wakes no waiter.
    CHECK_EQ(h.cmd().log.size(), w.sent);
    CHECK_EQ(w.r.calls, 0);
    // A message still reaches the waiter: its channel kept its subscription.
    h.link.push(&h.c->sub_conn, resp_array({resp_bulk("message"), resp_bulk(kChannel), resp_bulk("0")}));
    CHECK_EQ(h.cmd().log.size(), w.sent + 1);
    h.reply(":29000\r\n"); // still held: it waits on
    // Then the path dies silently: the next one goes unanswered.
    h.loop.advance(3000);
    REQUIRE(count_sent(fc, "SUBSCRIBE") == 5);
    h.loop.advance(2999);
    CHECK(fc.open);
    h.loop.advance(1);
    CHECK(!fc.open);
    CHECK_EQ(w.r.calls, 0);
}
