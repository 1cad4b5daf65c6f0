// SPDX-License-Identifier: BSD-3-Clause
// The slot map from CLUSTER SLOTS (src/redis/cluster.cpp): real RESP bytes,
// as Redis 7.0 writes them, parsed by hiredis's reader and then by
// parse_cluster_slots. A malformed answer (a slot or port out of range, a
// host too long, a range upside down) leaves the map it was given untouched.
#include <hiredis/hiredis.h>
#include <string.h>

#include <string>
#include <vector>

#include "check.hpp"
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
