// SPDX-License-Identifier: BSD-3-Clause
// Table memory (docs/FOOTPRINT.md): edgelock_client_stats().table_bytes of
// real clients equals the formula written there, per configured slot and in
// total, on whatever target this runs (make arm runs it on armhf and aarch64).
// No Redis: a client connects in the background, and port 1 never answers.
#include <event2/event.h>
#include <stdint.h>
#include <stdio.h>

#include "check.hpp"
#include "api/blocking.hpp"
#include "locks/client.hpp"
#include "edgelock/edgelock.h"
#include "redisson/names.hpp"
#include "redisson/scripts.hpp"
#include "base/table.hpp"

using namespace edgelock;

static const char kNowhere[] = "redis://127.0.0.1:1";

static edgelock_config base_config()
{
    edgelock_config cfg;
    edgelock_config_init(&cfg);
    cfg.url = kNowhere;
    return cfg;
}

// table_bytes of a client made with cfg: on a base of ours (event-loop mode),
// or with its own loop thread (blocking mode). 0 if it could not be made.
static uint64_t measured(const edgelock_config &cfg, bool blocking = false)
{
    struct event_base *base = blocking ? nullptr : event_base_new();
    if (!blocking && !base)
        return 0;
    edgelock_client *c = nullptr;
    uint64_t bytes = 0;
    if (edgelock_client_create(&cfg, base, &c) == EDGELOCK_OK) {
        edgelock_stats s;
        if (edgelock_client_stats(c, &s) == EDGELOCK_OK)
            bytes = s.table_bytes;
        edgelock_client_destroy(c);
    }
    if (base)
        event_base_free(base);
    return bytes;
}

// ---- the formula of docs/FOOTPRINT.md -----------------------------------------

static uint64_t event_bytes()
{
    return event_get_struct_event_size();
}

static uint64_t per_lock(uint32_t name_len)
{
    return sizeof(FixedTable<LockEntry>::Slot) + name_len +
           sizeof(uint32_t); // and its chain head in the name index
}
static uint64_t per_hold()
{
    return sizeof(FixedTable<Hold>::Slot) + sizeof(uint32_t); // and its chain head in the index
}
static uint64_t per_waiter()
{
    return sizeof(FixedTable<Waiter>::Slot) + sizeof(WaiterTimer) + event_bytes();
}
static uint64_t per_subscription(uint32_t name_len)
{
    // and its chain head in the name index, and the head of its waiters' list
    return sizeof(FixedTable<Subscription>::Slot) + channel_len(name_len) + 2 * sizeof(uint32_t);
}
static uint64_t per_command()
{
    return sizeof(FixedTable<Command>::Slot);
}

// One formatted command: the longest script body (EVAL after NOSCRIPT) plus the
// larger of a full renewal batch and a release's three keys, plus slack.
static uint64_t command_buffer(uint32_t name_len)
{
    uint64_t script = 0;
    for (int i = 0; i < kScriptCount; i++)
        if (kScripts[i].len > script)
            script = kScripts[i].len;
    uint64_t batch = (uint64_t)kRenewBatch * (name_len + kMaxOwnerLen + 32);
    uint64_t keys = 4 * ((uint64_t)channel_len(name_len) + 64);
    return script + (batch > keys ? batch : keys) + 512;
}

// The client itself, its command buffer and five timers: command deadline,
// watchdog, the channels' leave, and one reconnect timer per connection.
// Blocking mode adds its loop thread's state and the event that wakes it.
static uint64_t fixed(uint32_t name_len, bool blocking)
{
    return sizeof(Client) + command_buffer(name_len) + (5 + (blocking ? 1 : 0)) * event_bytes() +
           (blocking ? sizeof(BlockingFace) : 0);
}

static uint64_t formula(const edgelock_config &cfg, bool blocking = false)
{
    return fixed(cfg.max_name_len, blocking) + cfg.max_locks * per_lock(cfg.max_name_len) +
           cfg.max_holds * per_hold() + cfg.max_waiters * per_waiter() +
           cfg.max_subscriptions * per_subscription(cfg.max_name_len) + cfg.max_commands * per_command();
}

// redis-cluster://: per node a command and a subscriber connection, each with
// its reconnect timer; once the slot map (a byte per slot) and the refresh timer.
static uint64_t per_node()
{
    return sizeof(ClusterNode) + 2 * event_bytes();
}
static uint64_t cluster_fixed()
{
    return kClusterSlots + event_bytes();
}

// ---- checks ------------------------------------------------------------------

TEST_CASE(default_config_matches_the_formula)
{
    edgelock_config cfg = base_config();
    uint64_t got = measured(cfg);
    REQUIRE(got > 0);
    CHECK_EQ(got, formula(cfg));
}

TEST_CASE(each_capacity_adds_its_slot_size)
{
    edgelock_config cfg = base_config();
    const uint64_t at = measured(cfg);
    REQUIRE(at > 0);
    struct {
        const char *what;
        uint32_t edgelock_config::*field;
        uint64_t slot;
    } rows[] = {
        {"lock", &edgelock_config::max_locks, per_lock(cfg.max_name_len)},
        {"hold", &edgelock_config::max_holds, per_hold()},
        {"waiter", &edgelock_config::max_waiters, per_waiter()},
        {"subscription", &edgelock_config::max_subscriptions, per_subscription(cfg.max_name_len)},
        {"command", &edgelock_config::max_commands, per_command()},
    };
    for (auto &row : rows) {
        edgelock_config more = cfg;
        more.*row.field += 1;
        uint64_t one_more = measured(more);
        more.*row.field += 9;
        uint64_t ten_more = measured(more);
        if (one_more - at != row.slot || ten_more - at != 10 * row.slot)
            fprintf(stderr, "  per %s: measured %llu (x10: %llu), formula %llu\n", row.what,
                    (unsigned long long)(one_more - at), (unsigned long long)(ten_more - at),
                    (unsigned long long)row.slot);
        CHECK_EQ(one_more - at, row.slot);
        CHECK_EQ(ten_more - at, 10 * row.slot);
    }
}

TEST_CASE(name_length_scales_lock_names_channels_and_the_command_buffer)
{
    const uint32_t lengths[] = {1, 16, 127, 128, 129, 1000, 4096};
    for (uint32_t name_len : lengths) {
        edgelock_config cfg = base_config();
        cfg.max_name_len = name_len;
        uint64_t got = measured(cfg);
        REQUIRE(got > 0);
        CHECK_EQ(got, formula(cfg));
    }
}

TEST_CASE(small_odd_and_large_configs_match_the_formula)
{
    const uint32_t configs[][6] = {
        // locks, holds, waiters, subscriptions, commands, name length
        {1, 1, 1, 1, 1, 1},
        {3, 5, 7, 11, 13, 17},
        {64, 64, 64, 32, 128, 128},
        {16, 8, 4, 2, 64, 200},
        {1000, 1000, 1000, 500, 2000, 64},
        {2, 4096, 2, 2, 65535, 32},
    };
    for (auto &k : configs) {
        edgelock_config cfg = base_config();
        cfg.max_locks = k[0];
        cfg.max_holds = k[1];
        cfg.max_waiters = k[2];
        cfg.max_subscriptions = k[3];
        cfg.max_commands = k[4];
        cfg.max_name_len = k[5];
        uint64_t got = measured(cfg);
        REQUIRE(got > 0);
        if (got != formula(cfg))
            fprintf(stderr, "  config {%u %u %u %u %u %u}: measured %llu, formula %llu\n", k[0], k[1], k[2],
                    k[3], k[4], k[5], (unsigned long long)got, (unsigned long long)formula(cfg));
        CHECK_EQ(got, formula(cfg));
    }
}

TEST_CASE(blocking_mode_adds_its_loop_thread_state)
{
    edgelock_config cfg = base_config();
    uint64_t got = measured(cfg, true);
    REQUIRE(got > 0);
    CHECK_EQ(got, formula(cfg, true));
    CHECK_EQ(got - measured(cfg), event_bytes() + sizeof(BlockingFace));
}

TEST_CASE(a_cluster_client_adds_its_nodes_and_slot_map)
{
    edgelock_config cfg = base_config();
    cfg.url = "redis-cluster://127.0.0.1:1";
    cfg.sharded_pubsub = EDGELOCK_SHARDED_OFF; // any build, hiredis 0.14 included
    const uint32_t counts[] = {1, 6, 16, 64};
    for (uint32_t nodes : counts) {
        cfg.max_nodes = nodes;
        uint64_t got = measured(cfg);
        REQUIRE(got > 0);
        CHECK_EQ(got, formula(cfg) + cluster_fixed() + nodes * per_node());
    }
}

// A config whose tables do not fit the address space is refused, never
// truncated: on armhf 1<<20 locks of 4096-byte names need more than 4 GiB.
TEST_CASE(tables_larger_than_the_address_space_are_refused)
{
    edgelock_config cfg = base_config();
    cfg.max_locks = 1u << 20;
    cfg.max_name_len = 4096;
    cfg.max_holds = cfg.max_waiters = cfg.max_subscriptions = cfg.max_commands = 1;
    uint64_t need = (uint64_t)cfg.max_locks * cfg.max_name_len;
    if (need <= SIZE_MAX) {
        printf("  (this target's address space holds %llu bytes of names: nothing to refuse)\n",
               (unsigned long long)need);
        return;
    }
    struct event_base *base = event_base_new();
    REQUIRE(base);
    edgelock_client *c = nullptr;
    CHECK_ST(edgelock_client_create(&cfg, base, &c), EDGELOCK_ERR_NO_MEMORY);
    CHECK(c == nullptr);
    event_base_free(base);
}

// The figures `make size` prints and docs/FOOTPRINT.md records, for this target.
TEST_CASE(print_the_figures)
{
    edgelock_config cfg = base_config();
    uint64_t def = measured(cfg);
    uint64_t blocking = measured(cfg, true);
    printf("footprint: target %u-bit pointers, struct event %llu bytes\n", (unsigned)(8 * sizeof(void *)),
           (unsigned long long)event_bytes());
    printf("footprint: per lock          %llu bytes (slot %llu + name %u + 1 chain head)\n",
           (unsigned long long)per_lock(cfg.max_name_len),
           (unsigned long long)sizeof(FixedTable<LockEntry>::Slot), cfg.max_name_len);
    printf("footprint: per hold          %llu bytes\n", (unsigned long long)per_hold());
    printf("footprint: per waiter        %llu bytes (slot %llu + timer %llu + struct event %llu)\n",
           (unsigned long long)per_waiter(), (unsigned long long)sizeof(FixedTable<Waiter>::Slot),
           (unsigned long long)sizeof(WaiterTimer), (unsigned long long)event_bytes());
    printf("footprint: per subscription  %llu bytes (slot %llu + channel %llu + 2 list heads)\n",
           (unsigned long long)per_subscription(cfg.max_name_len),
           (unsigned long long)sizeof(FixedTable<Subscription>::Slot),
           (unsigned long long)channel_len(cfg.max_name_len));
    printf("footprint: per command       %llu bytes\n", (unsigned long long)per_command());
    printf("footprint: fixed             %llu bytes (client %llu + command buffer %llu + 5 events)"
           " + %llu in blocking mode (loop thread state %llu + 1 event)\n",
           (unsigned long long)fixed(cfg.max_name_len, false), (unsigned long long)sizeof(Client),
           (unsigned long long)command_buffer(cfg.max_name_len),
           (unsigned long long)(sizeof(BlockingFace) + event_bytes()),
           (unsigned long long)sizeof(BlockingFace));
    printf("footprint: default config    %llu bytes event-loop, %llu blocking"
           " (locks %u, holds %u, waiters %u, subscriptions %u, commands %u, names %u)\n",
           (unsigned long long)def, (unsigned long long)blocking, cfg.max_locks, cfg.max_holds,
           cfg.max_waiters, cfg.max_subscriptions, cfg.max_commands, cfg.max_name_len);
    edgelock_config cl = cfg;
    cl.url = "redis-cluster://127.0.0.1:1";
    cl.sharded_pubsub = EDGELOCK_SHARDED_OFF;
    uint64_t cluster = measured(cl);
    printf("footprint: cluster           + %llu bytes per node (max_nodes; ClusterNode %llu + 2 events)"
           " + %llu once (slot map %u + 1 event); default cluster config %llu bytes event-loop\n",
           (unsigned long long)per_node(), (unsigned long long)sizeof(ClusterNode),
           (unsigned long long)cluster_fixed(), (unsigned)kClusterSlots, (unsigned long long)cluster);
    CHECK(def > 0);
    CHECK(blocking > def);
    CHECK(cluster > def);
}
