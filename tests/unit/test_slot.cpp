// SPDX-License-Identifier: BSD-3-Clause
// Redis Cluster's key slot (src/redis/slot.cpp) against the cluster
// specification: the CRC16 check value, slots Redis's own documentation
// prints, and the hash-tag rules. tests/integration/test_cluster_slots.cpp
// checks the same function against a running cluster's CLUSTER KEYSLOT.
#include <string.h>

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
