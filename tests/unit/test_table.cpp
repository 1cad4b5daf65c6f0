// SPDX-License-Identifier: BSD-3-Clause
// FixedTable (src/table.hpp): fixed storage, generation-checked ids.
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.hpp"
#include "base/table.hpp"

using namespace edgelock;

struct Item {
    int a;
    uint64_t b;
};

using Table = FixedTable<Item>;

TEST_CASE(empty_table)
{
    Table::Slot slots[4];
    memset(slots, 0, sizeof(slots));
    Table t;
    t.init(slots, 4);
    CHECK_EQ(t.capacity(), 4);
    CHECK_EQ(t.used(), 0);
    CHECK_EQ(t.available(), 4);
    CHECK(!t.full());
    for (uint32_t i = 0; i < 4; i++)
        CHECK(t.get(i) == nullptr);
    CHECK(t.get(4) == nullptr);
    CHECK(t.get(kNoIndex) == nullptr);
    CHECK(t.get_id(0) == nullptr);
    CHECK(t.storage() == slots);
    CHECK_EQ(Table::bytes_for(4), sizeof(slots));
}

TEST_CASE(alloc_until_full_then_nothing_changes)
{
    Table::Slot slots[3];
    memset(slots, 0, sizeof(slots));
    Table t;
    t.init(slots, 3);
    uint32_t idx[3];
    uint64_t ids[3];
    for (int i = 0; i < 3; i++) {
        Item *it = t.alloc(&idx[i]);
        REQUIRE(it);
        it->a = 100 + i;
        ids[i] = t.id_of(idx[i]);
        CHECK(ids[i] != 0);
        CHECK(t.get_id(ids[i]) == it);
        CHECK(t.get(idx[i]) == it);
        CHECK_EQ(t.index_of(it), idx[i]);
    }
    CHECK(idx[0] != idx[1] && idx[1] != idx[2] && idx[0] != idx[2]);
    CHECK(t.full());
    CHECK_EQ(t.used(), 3);
    CHECK_EQ(t.available(), 0);

    Table::Slot before[3];
    memcpy(before, slots, sizeof(slots));
    uint32_t out = 12345;
    CHECK(t.alloc(&out) == nullptr);
    CHECK(t.alloc(&out) == nullptr);
    CHECK_EQ(out, 12345);
    CHECK(memcmp(before, slots, sizeof(slots)) == 0);
    CHECK_EQ(t.used(), 3);
    for (int i = 0; i < 3; i++)
        CHECK_EQ(t.get_id(ids[i])->a, 100 + i);
}

TEST_CASE(release_bumps_generation_so_old_ids_are_stale)
{
    Table::Slot slots[2];
    memset(slots, 0, sizeof(slots));
    Table t;
    t.init(slots, 2);
    uint32_t i0, i1;
    Item *a = t.alloc(&i0);
    Item *b = t.alloc(&i1);
    REQUIRE(a && b);
    a->a = 1;
    b->a = 2;
    uint64_t old_id = t.id_of(i0);
    t.release(i0);
    CHECK_EQ(t.used(), 1);
    CHECK_EQ(t.available(), 1);
    CHECK(!t.full());
    CHECK(t.get(i0) == nullptr);
    CHECK(t.get_id(old_id) == nullptr);
    CHECK_EQ(t.get_id(t.id_of(i1))->a, 2);

    uint32_t again;
    Item *c = t.alloc(&again);
    REQUIRE(c);
    CHECK_EQ(again, i0); // the freed slot is reused...
    uint64_t new_id = t.id_of(again);
    CHECK(new_id != old_id); // ...under a new generation
    CHECK_EQ(id_index(new_id), id_index(old_id));
    CHECK_EQ(id_gen(new_id), id_gen(old_id) + 1);
    CHECK(t.get_id(old_id) == nullptr);
    CHECK(t.get_id(new_id) == c);
    // Value-initialised: nothing of the previous occupant survives.
    CHECK_EQ(c->a, 0);
    CHECK_EQ(c->b, 0);
}

TEST_CASE(generation_never_wraps_to_zero)
{
    Table::Slot slots[1];
    memset(slots, 0, sizeof(slots));
    Table t;
    t.init(slots, 1);
    uint32_t i;
    REQUIRE(t.alloc(&i));
    slots[0].gen = UINT32_MAX; // as if released 4 billion times
    uint64_t last = t.id_of(i);
    t.release(i);
    REQUIRE(t.alloc(&i));
    CHECK_EQ(id_gen(t.id_of(i)), 1);
    CHECK(t.id_of(i) != 0);
    CHECK(t.get_id(last) == nullptr);
}

TEST_CASE(ids_of_other_indexes_or_generations_are_rejected)
{
    Table::Slot slots[2];
    memset(slots, 0, sizeof(slots));
    Table t;
    t.init(slots, 2);
    uint32_t i;
    REQUIRE(t.alloc(&i));
    uint64_t id = t.id_of(i);
    CHECK(t.get_id(make_id(i, id_gen(id) + 1)) == nullptr);
    CHECK(t.get_id(make_id(i, 0)) == nullptr);
    CHECK(t.get_id(make_id(7, id_gen(id))) == nullptr);     // out of range
    CHECK(t.get_id(make_id(1 - i, id_gen(id))) == nullptr); // not in use
    CHECK(t.get_id(12345) == nullptr);
    CHECK(make_id(5, 9) == ((uint64_t)9 << 32 | 5));
    CHECK_EQ(id_index(make_id(5, 9)), 5);
    CHECK_EQ(id_gen(make_id(5, 9)), 9);
}

TEST_CASE(every_slot_cycles_through_release_and_realloc)
{
    enum { kCap = 16 };
    static Table::Slot slots[kCap];
    memset(slots, 0, sizeof(slots));
    Table t;
    t.init(slots, kCap);
    uint32_t idx[kCap];
    for (int round = 0; round < 50; round++) {
        for (uint32_t k = 0; k < kCap; k++)
            REQUIRE(t.alloc(&idx[k]));
        uint32_t dummy;
        CHECK(t.alloc(&dummy) == nullptr);
        for (uint32_t k = 0; k < kCap; k += 2)
            t.release(idx[k]); // every other one
        CHECK_EQ(t.used(), kCap / 2);
        for (uint32_t k = 1; k < kCap; k += 2)
            t.release(idx[k]);
        CHECK_EQ(t.used(), 0);
    }
    for (uint32_t k = 0; k < kCap; k++)
        CHECK_EQ(slots[k].gen, 51);
}

TEST_CASE(zero_capacity_table_is_always_full)
{
    Table t;
    t.init(nullptr, 0);
    uint32_t i;
    CHECK(t.full());
    CHECK(t.alloc(&i) == nullptr);
    CHECK(t.get(0) == nullptr);
}

TEST_CASE(releasing_a_free_slot_is_a_broken_invariant)
{
    // A bug, not bad input: the assert hook aborts (checked in a child).
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        Table::Slot slots[2];
        memset(slots, 0, sizeof(slots));
        Table t;
        t.init(slots, 2);
        t.release(1);
        _exit(0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT);
}

TEST_CASE(every_slot_in_use_is_below_end_whatever_the_order_of_releases)
{
    // Scans of the slots in use stop at end() (a message scans the
    // subscription and waiter tables): no slot in use may lie at or above it.
    const uint32_t kCap = 64;
    Table::Slot slots[kCap];
    memset(slots, 0, sizeof(slots));
    Table t;
    t.init(slots, kCap);
    CHECK_EQ(t.end(), 0);
    bool in_use[kCap] = {};
    uint32_t most = 0;
    auto check_end = [&] {
        if (t.used() > most)
            most = t.used();
        CHECK_EQ(t.end(), most);
        CHECK_EQ(t.end(), t.high_water());
        for (uint32_t i = t.end(); i < kCap; i++)
            CHECK(!in_use[i] && t.get(i) == nullptr);
    };
    // Half full, releases scattered, then a random walk of both.
    for (uint32_t k = 0; k < kCap / 2; k++) {
        uint32_t i;
        REQUIRE(t.alloc(&i));
        in_use[i] = true;
        check_end();
    }
    for (uint32_t i = 0; i < kCap / 2; i += 3) {
        t.release(i);
        in_use[i] = false;
        check_end();
    }
    uint32_t seed = 12345;
    for (int step = 0; step < 20000; step++) {
        seed = seed * 1103515245u + 12345u;
        uint32_t pick = (seed >> 16) % kCap;
        // Mostly allocations while few are in use, mostly releases when many
        // are: the count wanders over the whole range.
        bool release = (seed >> 8) % kCap < t.used();
        if (release) {
            while (!in_use[pick])
                pick = (pick + 1) % kCap;
            t.release(pick);
            in_use[pick] = false;
        } else {
            uint32_t i;
            Item *it = t.alloc(&i);
            if (!it) {
                CHECK(t.full());
                continue;
            }
            CHECK(!in_use[i]);
            in_use[i] = true;
        }
        check_end();
    }
    CHECK(most > kCap / 2); // the walk went past where it started
}

TEST_CASE(a_few_slots_in_use_keep_end_low_in_a_large_table)
{
    const uint32_t kCap = 10000;
    Table::Slot *slots = static_cast<Table::Slot *>(calloc(kCap, sizeof(Table::Slot)));
    REQUIRE(slots);
    Table t;
    t.init(slots, kCap);
    for (int round = 0; round < 1000; round++) { // two in use at a time, again and again
        uint32_t a, b;
        REQUIRE(t.alloc(&a));
        REQUIRE(t.alloc(&b));
        t.release(a);
        t.release(b);
    }
    CHECK_EQ(t.end(), 2);
    free(slots);
}
