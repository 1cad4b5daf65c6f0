// SPDX-License-Identifier: BSD-3-Clause
// The slot map from CLUSTER SLOTS (src/redis/cluster.cpp): real RESP bytes,
// as Redis 7.0 writes them, parsed by hiredis's reader and then by
// parse_cluster_slots. A malformed answer (a slot or port out of range, a
// host too long, a range upside down) leaves the map it was given untouched.
// Then the map's keeping on the fake loop and link (tests/unit/fake/): a
// refresh nobody answers, a redirect that names no slot, a node table that
// address churn would fill.
#include <hiredis/hiredis.h>
#include <stdio.h>
#include <string.h>

#include <string>
#include <vector>

#include "check.hpp"
#include "fake/fake_engine.hpp"
#include "fake/harness.hpp"
#include "locks/acquire.hpp"
#include "redis/cluster.hpp"

using namespace edgelock;

namespace
{

redisReply *parse(const std::string &bytes)
{
    redisReader *r = redisReaderCreate();
    void *reply = nullptr;
    if (redisReaderFeed(r, bytes.data(), bytes.size()) != REDIS_OK ||
        redisReaderGetReply(r, &reply) != REDIS_OK)
        reply = nullptr;
    redisReaderFree(r);
    return static_cast<redisReply *>(reply);
}

std::string bulk(const std::string &s)
{
    return "$" + std::to_string(s.size()) + "\r\n" + s + "\r\n";
}

// One range: [lo, hi, [host, port, id], [replica host, port, id]].
std::string range(long lo, long hi, const std::string &host, long port)
{
    return "*4\r\n:" + std::to_string(lo) + "\r\n:" + std::to_string(hi) + "\r\n*3\r\n" + bulk(host) + ":" +
           std::to_string(port) + "\r\n" + bulk("0123abcd") + "*3\r\n" + bulk("127.0.0.1") + ":7999\r\n" +
           bulk("replica") + "";
}

// The finder: every distinct host:port gets the next index, up to a limit.
struct Finder {
    std::vector<std::string> seen;
    size_t limit = 8;
    static uint8_t find(void *ctx, const char *host, uint16_t port)
    {
        auto *f = static_cast<Finder *>(ctx);
        std::string key = std::string(host) + ":" + std::to_string(port);
        for (size_t i = 0; i < f->seen.size(); i++)
            if (f->seen[i] == key)
                return (uint8_t)i;
        if (f->seen.size() >= f->limit)
            return kNoNode;
        f->seen.push_back(key);
        return (uint8_t)(f->seen.size() - 1);
    }
};

struct Map {
    uint8_t owner[kClusterSlots];
    Map() { memset(owner, 0x42, sizeof(owner)); }
    bool untouched() const
    {
        for (uint8_t o : owner)
            if (o != 0x42)
                return false;
        return true;
    }
};

bool take(const std::string &bytes, Finder *f, Map *m, const char *asked = "10.0.0.9")
{
    redisReply *r = parse(bytes);
    bool ok = parse_cluster_slots(r, asked, Finder::find, f, m->owner);
    if (r)
        freeReplyObject(r);
    return ok;
}

} // namespace

TEST_CASE(three_masters_cover_every_slot)
{
    Finder f;
    Map m;
    std::string reply = "*3\r\n" + range(0, 5460, "127.0.0.1", 7000) + range(5461, 10922, "127.0.0.1", 7001) +
                        range(10923, 16383, "127.0.0.1", 7002);
    REQUIRE(take(reply, &f, &m));
    CHECK_EQ(f.seen.size(), 3u);
    CHECK_EQ(m.owner[0], 0);
    CHECK_EQ(m.owner[5460], 0);
    CHECK_EQ(m.owner[5461], 1);
    CHECK_EQ(m.owner[10922], 1);
    CHECK_EQ(m.owner[10923], 2);
    CHECK_EQ(m.owner[16383], 2);
    CHECK(f.seen[1] == "127.0.0.1:7001");
}

TEST_CASE(uncovered_slots_have_no_owner)
{
    Finder f;
    Map m;
    REQUIRE(take("*1\r\n" + range(100, 200, "127.0.0.1", 7000), &f, &m));
    CHECK_EQ(m.owner[99], kNoNode);
    CHECK_EQ(m.owner[100], 0);
    CHECK_EQ(m.owner[200], 0);
    CHECK_EQ(m.owner[201], kNoNode);
    REQUIRE(take("*0\r\n", &f, &m)); // a cluster with no slots assigned yet
    CHECK_EQ(m.owner[150], kNoNode);
}

TEST_CASE(a_node_that_does_not_know_its_address_is_the_one_asked)
{
    Finder f;
    Map m;
    REQUIRE(take("*2\r\n" + range(0, 8191, "", 7000) + range(8192, 16383, "?", 7001), &f, &m, "gw.example"));
    CHECK(f.seen[0] == "gw.example:7000");
    CHECK(f.seen[1] == "gw.example:7001");
}

TEST_CASE(a_full_node_table_leaves_its_slots_without_owner)
{
    Finder f;
    f.limit = 1;
    Map m;
    REQUIRE(take("*2\r\n" + range(0, 8191, "a", 7000) + range(8192, 16383, "b", 7001), &f, &m));
    CHECK_EQ(m.owner[0], 0);
    CHECK_EQ(m.owner[8192], kNoNode);
}

TEST_CASE(malformed_answers_leave_the_map_untouched)
{
    const std::string bad[] = {
        "-ERR This instance has cluster support disabled\r\n",
        ":3\r\n",
        "*1\r\n" + range(0, 16384, "a", 7000),                // slot past the last
        "*1\r\n" + range(-1, 10, "a", 7000),                  // negative slot
        "*1\r\n" + range(10, 5, "a", 7000),                   // upside down
        "*1\r\n" + range(0, 10, "a", 0),                      // port 0
        "*1\r\n" + range(0, 10, "a", 65536),                  // port too large
        "*1\r\n" + range(0, 10, std::string(300, 'h'), 7000), // host too long
        "*1\r\n*2\r\n:0\r\n:10\r\n",                          // no master
        "*1\r\n*3\r\n:0\r\n:10\r\n*1\r\n" + bulk("a"),        // master without port
        "*1\r\n*3\r\n:0\r\n:10\r\n*2\r\n:1\r\n:7000\r\n",     // host not a string
        "*2\r\n" + range(0, 10, "a", 7000) + ":5\r\n",        // one good range, one not
    };
    for (const std::string &b : bad) {
        Finder f;
        Map m;
        CHECK(!take(b, &f, &m));
        CHECK(m.untouched());
    }
    Map m;
    Finder f;
    CHECK(!parse_cluster_slots(nullptr, "a", Finder::find, &f, m.owner));
    CHECK(m.untouched());
}

// ---- the map's keeping, on the fake loop and link ------------------------------

namespace
{

void two_seeds(edgelock_config *cfg)
{
    cfg->url = "redis-cluster://10.0.0.1:7000,10.0.0.2:7001";
    cfg->sharded_pubsub = EDGELOCK_SHARDED_OFF; // the map is the point here (fuzz_engine plays sharded)
    cfg->max_nodes = 4;
    cfg->command_timeout_ms = 3000;
    cfg->reconnect_min_ms = 100;
    cfg->reconnect_max_ms = 100;
}

bool is_cluster_slots(const std::string &bytes)
{
    std::vector<std::string> a = resp_args(bytes);
    return a.size() == 2 && a[0] == "CLUSTER" && a[1] == "SLOTS";
}

size_t slots_asked(fake::Harness &h, Connection *conn)
{
    size_t n = 0;
    for (const std::string &b : h.link.of(conn).log)
        n += is_cluster_slots(b);
    return n;
}

// The node's connection opens; its setup is answered, a CLUSTER SLOTS among
// it with map.
void open_node(fake::Harness &h, Connection *conn, const std::string &map)
{
    conn_link_connected(conn, true, "");
    FakeLink::Conn &fc = h.link.of(conn);
    for (size_t setup = fc.pending.size(); setup > 0; setup--)
        h.link.reply(conn, is_cluster_slots(fc.pending.front().bytes) ? map : "+OK\r\n");
}

Connection *node_cmd(fake::Harness &h, uint32_t i)
{
    return &h.c->cluster.nodes[i].cmd;
}

const std::string kTwoMasters =
    "*2\r\n" + range(0, 8191, "10.0.0.1", 7000) + range(8192, 16383, "10.0.0.2", 7001);

// Both seeds up, the map taken from the first.
void start_two(fake::Harness &h)
{
    open_node(h, node_cmd(h, 0), kTwoMasters);
    open_node(h, node_cmd(h, 1), kTwoMasters);
    REQUIRE(h.c->cluster.map_known);
    REQUIRE(conn_ready(node_cmd(h, 0)) && conn_ready(node_cmd(h, 1)));
}

} // namespace

// A node that stops answering without a reset (a partition) is asked for the
// map by the periodic refresh: after the refresh's timeout it is given up on,
// another node is asked, and its late answer, when it comes, changes nothing.
TEST_CASE(an_unanswered_refresh_is_given_up_and_another_node_asked)
{
    fake::Harness h(two_seeds, false);
    REQUIRE(h.c);
    start_two(h);
    Connection *a = node_cmd(h, 0), *b = node_cmd(h, 1);
    size_t a0 = slots_asked(h, a), b0 = slots_asked(h, b);
    h.loop.advance(kClusterRefreshMs); // the periodic refresh
    Connection *asked = slots_asked(h, a) > a0 ? a : b;
    Connection *other = asked == a ? b : a;
    REQUIRE(slots_asked(h, asked) == (asked == a ? a0 : b0) + 1);
    size_t other_before = slots_asked(h, other);
    h.loop.advance(kClusterRefreshMs + 1); // no answer within the refresh timeout
    CHECK(slots_asked(h, other) > other_before);
    // The other node answers: the first master failed over to 10.0.0.3.
    const std::string failed_over =
        "*2\r\n" + range(0, 8191, "10.0.0.3", 7002) + range(8192, 16383, "10.0.0.2", 7001);
    FakeLink::Conn &ofc = h.link.of(other);
    while (!ofc.pending.empty()) {
        REQUIRE(is_cluster_slots(ofc.pending.front().bytes));
        h.link.reply(other, failed_over);
    }
    uint8_t now_owner = h.c->cluster.slot_owner[0];
    REQUIRE(now_owner != kNoNode);
    CHECK(strcmp(h.c->cluster.nodes[now_owner].cmd.host, "10.0.0.3") == 0);
    // The first node's late answer, the map from before the failover.
    FakeLink::Conn &afc = h.link.of(asked);
    while (!afc.pending.empty())
        h.link.reply(asked, kTwoMasters);
    CHECK_EQ(h.c->cluster.slot_owner[0], now_owner);
    CHECK_EQ(h.c->cluster.slot_owner[16383], h.c->cluster.slot_owner[8192]);
    // And the map keeps being refreshed.
    size_t total = slots_asked(h, a) + slots_asked(h, b);
    h.loop.advance(kClusterRefreshMs + 1);
    CHECK(slots_asked(h, a) + slots_asked(h, b) > total);
}

// Refreshes keep being asked for while no node answers at all.
TEST_CASE(the_refresh_timer_stays_armed_while_no_node_answers)
{
    fake::Harness h(two_seeds, false);
    REQUIRE(h.c);
    start_two(h);
    Connection *a = node_cmd(h, 0), *b = node_cmd(h, 1);
    size_t before = slots_asked(h, a) + slots_asked(h, b);
    h.loop.advance(6 * kClusterRefreshMs);
    CHECK(slots_asked(h, a) + slots_asked(h, b) >= before + 3);
    CHECK(h.c->cluster.map_known);
}

namespace
{

// The connection the lock call went out on (its EVALSHA the last thing sent).
Connection *sent_on(fake::Harness &h)
{
    for (uint32_t i = 0; i < h.c->cluster.capacity; i++) {
        Connection *conn = node_cmd(h, i);
        FakeLink::Conn &fc = h.link.of(conn);
        if (!fc.pending.empty() && resp_args(fc.pending.back().bytes)[0] == "EVALSHA")
            return conn;
    }
    return nullptr;
}

} // namespace

// A redirect whose slot does not fit in 0..16383 (70000 would wrap to 4464 in
// 16 bits), or is no number, or whose address is none, fails the call with
// PROTOCOL and leaves the map and the node table as they were.
TEST_CASE(a_redirect_out_of_range_is_a_protocol_error_and_changes_nothing)
{
    const char *bad[] = {
        "-MOVED 70000 127.0.0.1:7000\r\n",
        "-ASK 70000 127.0.0.1:7000\r\n",
        "-MOVED 16384 10.0.0.2:7001\r\n",
        "-MOVED -1 10.0.0.2:7001\r\n",
        "-MOVED x 10.0.0.2:7001\r\n",
        "-MOVED 100 10.0.0.2:70000\r\n",
        "-MOVED 100 10.0.0.2:0\r\n",
        "-MOVED 100 10.0.0.2:\r\n",
        "-MOVED 100 10.0.0.2:7001x\r\n",
        "-MOVED 100 10.0.0.2\r\n",
        "-MOVED 100\r\n",
    };
    for (const char *b : bad) {
        fake::Harness h(two_seeds, false);
        REQUIRE(h.c);
        start_two(h);
        uint8_t before[kClusterSlots];
        memcpy(before, h.c->cluster.slot_owner, sizeof(before));
        fake::Result r;
        REQUIRE(acquire_start(h.c, h.lock("a"), 7, 0, 30000, fake::record, &r) == EDGELOCK_OK);
        Connection *on = sent_on(h);
        REQUIRE(on);
        h.link.reply(on, b);
        CHECK_EQ(r.calls, 1);
        CHECK_ST(r.st, EDGELOCK_ERR_PROTOCOL);
        CHECK(memcmp(before, h.c->cluster.slot_owner, sizeof(before)) == 0);
        CHECK(!h.c->cluster.nodes[2].used);
        if (r.st != EDGELOCK_ERR_PROTOCOL)
            fprintf(stderr, "  with %s", b);
    }
}

// A well-formed MOVED is still followed: the slot's owner changes at once.
TEST_CASE(a_moved_in_range_is_followed)
{
    fake::Harness h(two_seeds, false);
    REQUIRE(h.c);
    start_two(h);
    fake::Result r;
    edgelock_lock lk = h.lock("a");
    REQUIRE(acquire_start(h.c, lk, 7, 0, 30000, fake::record, &r) == EDGELOCK_OK);
    Connection *on = sent_on(h);
    REQUIRE(on);
    uint16_t slot = key_hash_slot("a", 1);
    Connection *other = on == node_cmd(h, 0) ? node_cmd(h, 1) : node_cmd(h, 0);
    std::string moved =
        "-MOVED " + std::to_string(slot) + " " + other->host + ":" + std::to_string(other->port) + "\r\n";
    h.link.reply(on, moved);
    CHECK_EQ(r.calls, 0);
    CHECK(&h.c->cluster.nodes[h.c->cluster.slot_owner[slot]].cmd == other);
    REQUIRE(sent_on(h) == other);
    // The MOVED also asked for the map again (on either node): it agrees.
    const std::string map = "*1\r\n" + range(0, 16383, other->host, other->port);
    for (Connection *conn : {node_cmd(h, 0), node_cmd(h, 1)}) {
        FakeLink::Conn &fc = h.link.of(conn);
        while (!fc.pending.empty())
            h.link.reply(conn, is_cluster_slots(fc.pending.front().bytes) ? map : fake::kNil);
    }
    CHECK_EQ(r.calls, 1);
    CHECK_ST(r.st, EDGELOCK_OK);
}

namespace
{

void one_seed_three_nodes(edgelock_config *cfg)
{
    two_seeds(cfg);
    cfg->url = "redis-cluster://10.0.0.1:7000";
    cfg->max_nodes = 3;
}

// The map with slots 8192..16383 on host:7001.
std::string second_half_on(const std::string &host)
{
    return "*2\r\n" + range(0, 8191, "10.0.0.1", 7000) + range(8192, 16383, host, 7001);
}

int entries_for(fake::Harness &h, const char *host)
{
    int n = 0;
    for (uint32_t i = 0; i < h.c->cluster.capacity; i++)
        n += h.c->cluster.nodes[i].used && strcmp(h.c->cluster.nodes[i].cmd.host, host) == 0;
    return n;
}

} // namespace

// The second master fails over again and again, each time to a new address
// (pods that come back with new IPs): more addresses than max_nodes over
// time. The entry of a master no longer in the map is closed and used again;
// the seed stays.
TEST_CASE(address_churn_does_not_fill_the_node_table)
{
    fake::Harness h(one_seed_three_nodes, false);
    REQUIRE(h.c);
    Connection *seed = node_cmd(h, 0);
    open_node(h, seed, second_half_on("10.0.1.1"));
    REQUIRE(h.c->cluster.map_known);
    const char *hosts[] = {"10.0.1.2", "10.0.1.3", "10.0.1.4", "10.0.1.5", "10.0.1.6"};
    for (const char *host : hosts) {
        h.loop.advance(kClusterRefreshMs); // the periodic refresh, on the seed (the one ready)
        FakeLink::Conn &fc = h.link.of(seed);
        REQUIRE(!fc.pending.empty() && is_cluster_slots(fc.pending.front().bytes));
        h.link.reply(seed, second_half_on(host));
        uint8_t owner = h.c->cluster.slot_owner[8192];
        REQUIRE(owner != kNoNode);
        CHECK(strcmp(h.c->cluster.nodes[owner].cmd.host, host) == 0);
        CHECK_EQ(h.c->cluster.slot_owner[0], 0); // the seed, still there
        CHECK_EQ(entries_for(h, host), 1);
    }
    // The masters gone are closed: not one of them reconnects.
    CHECK_EQ(entries_for(h, "10.0.1.1"), 0);
    CHECK_EQ(entries_for(h, "10.0.1.5"), 0);
    uint32_t used = 0;
    for (uint32_t i = 0; i < h.c->cluster.capacity; i++)
        used += h.c->cluster.nodes[i].used;
    CHECK_EQ(used, 2u);
    // The new master's connection opens and serves its slots.
    Connection *now = node_cmd(h, h.c->cluster.slot_owner[8192]);
    CHECK(h.link.of(now).open);
    open_node(h, now, "*0\r\n");
    CHECK(conn_ready(now));
    CHECK(cluster_ready(&h.c->cluster));
}

// A node's subscriber carries the keepalive as a single node's does: while a
// subscription is on it, a PING every max(command timeout, 3 s); a node's
// command connection sends none (its queue's timeouts watch it).
TEST_CASE(a_nodes_subscriber_pings_while_it_carries_a_subscription)
{
    fake::Harness h(two_seeds, false);
    REQUIRE(h.c);
    start_two(h);
    edgelock_lock lk = h.lock("a");
    fake::Result r;
    REQUIRE(acquire_start(h.c, lk, 7, 60000, EDGELOCK_LEASE_WATCHDOG, fake::record, &r) == EDGELOCK_OK);
    Connection *cmd = sent_on(h);
    REQUIRE(cmd);
    h.link.reply(cmd, ":20000\r\n"); // held elsewhere: subscribe
    ClusterNode *node = nullptr;
    for (uint32_t i = 0; i < h.c->cluster.capacity; i++)
        if (&h.c->cluster.nodes[i].cmd == cmd)
            node = &h.c->cluster.nodes[i];
    REQUIRE(node);
    Connection *sub = &node->sub;
    FakeLink::Conn &fc = h.link.of(sub);
    if (!conn_ready(sub))
        h.link.accept(sub);
    const std::string chan = "redisson_lock__channel:{a}";
    REQUIRE(!fc.log.empty() && resp_args(fc.log.back())[0] == "SUBSCRIBE");
    h.link.push(sub, fake::subscribed(chan));
    h.link.reply(cmd, ":20000\r\n"); // the attempt after subscribing
    auto pings = [](FakeLink::Conn &c) {
        size_t n = 0;
        for (const std::string &b : c.log)
            n += resp_args(b)[0] == "PING";
        return n;
    };
    size_t cmd_pings = pings(h.link.of(cmd));
    h.loop.advance(3000);
    CHECK_EQ(pings(fc), 1u);
    CHECK_EQ(pings(h.link.of(cmd)), cmd_pings);
    CHECK_EQ(r.calls, 0);
}
