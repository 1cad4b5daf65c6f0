// SPDX-License-Identifier: BSD-3-Clause
// Redis Cluster groundwork (issue 14), against a real 3+3 cluster started by
// the test (tests/support/redis_cluster.cpp): edgelock's key slot function
// agrees with the cluster's CLUSTER KEYSLOT, every key and channel of one lock
// (all the Redisson names edgelock writes, for every lock kind) lands in the
// lock name's slot, and that slot is served by exactly one master, which takes
// the lock's script while the others redirect it (MOVED).
#include <stdio.h>
#include <string.h>

#include <string>

#include "check.hpp"
#include "redis/slot.hpp"
#include "redis_cluster.hpp"
#include "redisson/names.hpp"
#include "redisson/scripts.hpp"

using namespace edgelock;

namespace
{

uint16_t cluster_keyslot(const std::string &key)
{
    redisReply *r = shared_cluster().node(0).command("CLUSTER KEYSLOT %b", key.data(), key.size());
    long long v = r && r->type == REDIS_REPLY_INTEGER ? r->integer : -1;
    if (r)
        freeReplyObject(r);
    return (uint16_t)v;
}

uint16_t slot_of(const std::string &key)
{
    return key_hash_slot(key.data(), key.size());
}

std::string prefix_name(const char *prefix, const std::string &name)
{
    char buf[512];
    Writer w(buf, sizeof(buf));
    write_prefix_name(w, prefix, name.data(), name.size());
    return std::string(buf, w.len);
}

std::string suffix_name(const std::string &name, const char *suffix)
{
    char buf[512];
    Writer w(buf, sizeof(buf));
    write_suffix_name(w, name.data(), name.size(), suffix, strlen(suffix));
    return std::string(buf, w.len);
}

} // namespace

TEST_CASE(key_hash_slot_agrees_with_cluster_keyslot)
{
    const char *keys[] = {"",
                          "a",
                          "foo",
                          "somekey",
                          "firmware-update",
                          "{user1000}.following",
                          "foo{}{bar}",
                          "foo{{bar}}zap",
                          "foo{bar}{zap}",
                          "x{",
                          "}{",
                          "{}",
                          "{a}"};
    for (const char *k : keys)
        CHECK_EQ(slot_of(k), cluster_keyslot(k));
    // Bytes of every value, NULs and braces included, at many lengths.
    uint32_t seed = 12345;
    for (int n = 0; n < 500; n++) {
        std::string k;
        size_t len = (size_t)(n % 40);
        for (size_t i = 0; i < len; i++) {
            seed = seed * 1103515245u + 12345u;
            k.push_back((char)((seed >> 16) & 0xff));
        }
        CHECK_EQ(slot_of(k), cluster_keyslot(k));
    }
}

// Redisson derives every key from the lock name under its hash tag ("{name}",
// or the name as it is when it has a brace already), so one lock is one slot.
// Not for a name whose brace makes no tag ("a{}b", "x{"): the derived names
// then hash differently from the name; Redisson has the same limit.
TEST_CASE(every_key_of_a_lock_is_in_the_name_slot)
{
    const char *names[] = {"firmware-update", "site:7:uplink", "gw", "{tagged}", "a{b}c", "leader:{site-3}"};
    const char owner[] = "5b0d3c1e-7a44-4f0e-9a57-0c2f1b9e8d41:4242";
    for (const char *n : names) {
        std::string name = n;
        uint16_t slot = cluster_keyslot(name);
        CHECK_EQ(slot_of(name), slot);
        std::string keys[] = {
            name,                                                                // the lock hash
            prefix_name(kLockChannelPrefix, name),                               // unlock channel
            prefix_name(kLockChannelPrefix, name) + ":" + owner,                 // a fair waiter's channel
            prefix_name(kUnlockLatchPrefix, name) + ":0123456789abcdef",         // unlock latch
            prefix_name(kLockQueuePrefix, name),                                 // fair queue
            prefix_name(kLockTimeoutPrefix, name),                               // fair timeouts
            prefix_name(kLockTokenPrefix, name),                                 // fencing token
            prefix_name(kRwChannelPrefix, name),                                 // read-write channel
            suffix_name(name, (std::string(owner) + ":rwlock_timeout").c_str()), // a reader's timeout
        };
        for (const std::string &k : keys) {
            CHECK_EQ(cluster_keyslot(k), slot);
            if (cluster_keyslot(k) != slot)
                fprintf(stderr, "  lock %s: key %s in slot %u, name in %u\n", n, k.c_str(),
                        cluster_keyslot(k), slot);
        }
    }
}

// The master that serves a lock's slot runs its acquire script; the other
// masters answer MOVED with that slot and the owner's address, which is what
// a cluster client routes by.
TEST_CASE(one_master_serves_a_lock_and_the_others_redirect)
{
    RedisCluster &cluster = shared_cluster();
    const char *names[] = {"firmware-update", "site:7:uplink", "gw"};
    for (const char *n : names) {
        uint16_t slot = slot_of(n);
        RedisServer &owner = cluster.master_of(slot);
        for (int i = 0; i < RedisCluster::kMasters; i++) {
            RedisServer &m = cluster.node(i);
            redisReply *r =
                m.command("EVAL %s 1 %s %d %s", kScripts[kScriptAcquire].text, n, 10000, "test-owner:1");
            REQUIRE(r);
            if (&m == &owner) {
                CHECK_EQ(r->type, REDIS_REPLY_NIL); // acquired
            } else {
                char want[64];
                snprintf(want, sizeof(want), "MOVED %u 127.0.0.1:%u", slot, owner.port());
                CHECK(r->type == REDIS_REPLY_ERROR && strcmp(r->str, want) == 0);
            }
            freeReplyObject(r);
        }
        redisReply *d = owner.command("DEL %s", n);
        if (d)
            freeReplyObject(d);
    }
}
