// SPDX-License-Identifier: BSD-3-Clause
// The hold index (locks/holds.cpp): holds found by (lock, owner) through a
// fixed table of chains, however many are held, and nothing left in it after
// they go, in any order, with handles freed along the way.
#include <string>
#include <vector>

#include "check.hpp"
#include "fake/fake_engine.hpp"
#include "fake/harness.hpp"
#include "locks/acquire.hpp"
#include "locks/holds.hpp"
#include "locks/release.hpp"

using namespace edgelock;
using namespace fake;

namespace
{

void many(edgelock_config *cfg)
{
    cfg->max_locks = 10000;
    cfg->max_holds = 10000;
    cfg->max_waiters = 64;
    cfg->max_commands = 256;
}

} // namespace

TEST_CASE(ten_thousand_holds_are_each_found_and_all_go)
{
    Harness h(many);
    REQUIRE(h.c);
    const uint32_t n = 10000;
    std::vector<edgelock_lock> locks(n);
    Result r;
    for (uint32_t i = 0; i < n; i++) {
        locks[i] = h.lock(("k" + std::to_string(i)).c_str());
        REQUIRE(locks[i].id != 0);
        // Two owners on some locks: chains hold pairs, not locks.
        uint64_t owner = 1000 + i % 7;
        REQUIRE(acquire_start(h.c, locks[i], owner, 0, 60000, record, &r) == EDGELOCK_OK);
        h.reply(kNil);
    }
    CHECK_EQ(h.c->holds.used(), n);
    CHECK_EQ(r.calls, (int)n);
    for (uint32_t i = 0; i < n; i++) {
        uint32_t index = kNoIndex;
        Hold *held = hold_find(h.c, locks[i].id, 1000 + i % 7, &index);
        REQUIRE(held);
        CHECK_EQ(held->lock_id, locks[i].id);
        CHECK(hold_find(h.c, locks[i].id, 1000 + (i + 1) % 7, nullptr) == nullptr); // another owner
    }
    // Released in a scrambled order; every third handle freed right after.
    Result u;
    for (uint32_t k = 0; k < n; k++) {
        uint32_t i = (uint32_t)((uint64_t)k * 7919 % n);
        REQUIRE(release_start(h.c, locks[i], 1000 + i % 7, record, &u) == EDGELOCK_OK);
        h.reply(":1\r\n");
        h.reply("+OK\r\n"); // the unlock latch's DEL
        CHECK(hold_find(h.c, locks[i].id, 1000 + i % 7, nullptr) == nullptr);
        if (i % 3 == 0)
            CHECK_ST(lock_free(h.c, locks[i]), EDGELOCK_OK);
    }
    CHECK_EQ(h.c->holds.used(), 0);
    for (uint32_t i = 0; i < n; i++)
        CHECK(lock_get(h.c, locks[i].id) == nullptr || lock_get(h.c, locks[i].id)->holds == 0);
    for (uint32_t b = 0; b < n; b++)
        CHECK_EQ(h.c->hold_buckets[b], kNoIndex);
}
