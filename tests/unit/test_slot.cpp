// SPDX-License-Identifier: BSD-3-Clause
// Redis Cluster's key slot (src/redis/slot.cpp) against the cluster
// specification: the CRC16 check value, slots Redis's own documentation
// prints, and the hash-tag rules. tests/integration/test_cluster_slots.cpp
// checks the same function against a running cluster's CLUSTER KEYSLOT.
#include <stdio.h>
#include <string.h>

#include <string>

#include "check.hpp"
#include "redis/slot.hpp"

using namespace edgelock;

static uint16_t slot_of(const char *key)
{
    return key_hash_slot(key, strlen(key));
}

TEST_CASE(crc16_is_xmodem)
{
    CHECK_EQ(crc16_xmodem("123456789", 9), 0x31C3); // the standard check value
    CHECK_EQ(crc16_xmodem("", 0), 0);
}

TEST_CASE(slots_redis_documents)
{
    CHECK_EQ(slot_of("somekey"), 11058); // CLUSTER KEYSLOT's documentation
    CHECK_EQ(slot_of("foo{hash_tag}"), 2515);
    CHECK_EQ(slot_of("bar{hash_tag}"), 2515);
    CHECK_EQ(slot_of("foo"), 12182);
}

TEST_CASE(hash_tag_rules)
{
    // The first '{' and the first '}' after it, with something between.
    CHECK_EQ(slot_of("{user1000}.following"), slot_of("user1000"));
    CHECK_EQ(slot_of("{user1000}.followers"), slot_of("user1000"));
    CHECK_EQ(slot_of("foo{bar}{zap}"), slot_of("bar"));
    CHECK_EQ(slot_of("foo{{bar}}zap"), slot_of("{bar"));
    // "{}" is no tag: the whole key counts.
    CHECK_EQ(slot_of("foo{}{bar}"), crc16_xmodem("foo{}{bar}", 10) & 16383);
    // An unclosed '{' is no tag either.
    CHECK_EQ(slot_of("foo{bar"), crc16_xmodem("foo{bar", 7) & 16383);
    CHECK_EQ(key_hash_slot("", 0), 0);
    // Binary keys: a NUL byte is an ordinary byte.
    const char bin[] = {'a', '\0', 'b'};
    CHECK_EQ(key_hash_slot(bin, 3), crc16_xmodem(bin, 3) & 16383);
}

static bool redirect_ok(const char *s, uint16_t *slot = nullptr, std::string *addr = nullptr)
{
    uint16_t sl = 0;
    const char *a = nullptr;
    size_t alen = 0;
    bool ok = parse_redirect(s, strlen(s), &sl, &a, &alen);
    if (ok && slot)
        *slot = sl;
    if (ok && addr)
        addr->assign(a, alen);
    return ok;
}

TEST_CASE(redirects_name_a_slot_and_an_address)
{
    uint16_t slot = 0;
    std::string addr;
    REQUIRE(redirect_ok("3999 127.0.0.1:6381", &slot, &addr));
    CHECK_EQ(slot, 3999);
    CHECK(addr == "127.0.0.1:6381");
    REQUIRE(redirect_ok("16383 ::1:7000", &slot, &addr)); // IPv6: the last colon
    CHECK_EQ(slot, 16383);
    REQUIRE(redirect_ok("0 :7000", &slot, &addr)); // no host: the node answering
    CHECK_EQ(slot, 0);
    const char *bad[] = {"70000 127.0.0.1:7000", // wraps to 4464 in 16 bits
                         "16384 a:1",
                         "-1 a:1",
                         "+1 a:1",
                         " 1 a:1",
                         "x a:1",
                         "100000000000000000001 a:1",
                         "1 a:0",
                         "1 a:65536",
                         "1 a:",
                         "1 a:7000x",
                         "1 a",
                         "1",
                         "",
                         "1 a:-1"};
    for (const char *b : bad) {
        if (redirect_ok(b))
            printf("  accepted: '%s'\n", b);
        CHECK(!redirect_ok(b));
    }
    char host[8];
    uint16_t port;
    CHECK(!split_node_address("longer-than-8:1", 15, host, sizeof(host), &port));
    REQUIRE(split_node_address("short:65535", 11, host, sizeof(host), &port));
    CHECK(strcmp(host, "short") == 0);
    CHECK_EQ(port, 65535);
}
