// SPDX-License-Identifier: BSD-3-Clause
// redis-cluster:// against real 3+3 clusters started by the test
// (tests/support/redis_cluster.cpp): locks on every master, every lock kind,
// MultiLock and RedLock across masters, `edgelock status` naming the node,
// the wire as Redisson writes it (SPUBLISH heard by SSUBSCRIBE on the owning
// master), a waiter woken by the sharded message rather than by the holder's
// lease, plain pub/sub when configured off, rediss-cluster:// (every node
// over TLS), WAIT after an ASK, a slot migrated under a waiting lock (MOVED,
// ASK, sunsubscribe), and a CLUSTER FAILOVER while a lock is held and another
// client waits. test_cluster_fenced.cpp breaks a master under load.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/time.h>

#include <hiredis/hiredis.h>

#include <atomic>
#include <functional>
#include <algorithm>
#include <string>
#include <vector>
#include <thread>

#include "check.hpp"
#include "clients.hpp"
#include "edgelock/edgelock.h"
#include "redis/slot.hpp"
#include "redis_cluster.hpp"
#include "test_certs.hpp"

using namespace edgelock;

namespace
{

bool still_held(edgelock_client *c, edgelock_lock lk)
{
    int64_t remaining = 0;
    return edgelock_lock_valid(c, lk, edgelock_current_owner(), &remaining) == EDGELOCK_OK;
}

std::string cluster_url(RedisCluster &cl, int seed = 0)
{
    return "redis-cluster://127.0.0.1:" + std::to_string(cl.node(seed).port());
}

std::atomic<int> g_lost{0};
void on_lost(edgelock_client *, edgelock_lock, uint64_t, void *)
{
    g_lost++;
}

// hiredis 0.14 has no RESP3 pushes, so no SSUBSCRIBE: a client built on it
// must be told the cluster's pub/sub is plain (and the Java side forced to
// match), and the cases that check the sharded wire have nothing to check.
#if HIREDIS_MAJOR >= 1
constexpr bool kSharded = true;
#else
constexpr bool kSharded = false;
#endif

void cluster_config(edgelock_config *cfg)
{
    if (!kSharded)
        cfg->sharded_pubsub = EDGELOCK_SHARDED_OFF;
    cfg->watchdog_lease_ms = 3000; // renewals every second: a failover falls between several
    cfg->command_timeout_ms = 5000;
    cfg->connect_timeout_ms = 5000;
    cfg->reconnect_max_ms = 500;
    cfg->on_lock_lost = on_lost;
}

// cluster_config, and every lock and unlock waits for one replica (2 s at most).
void cluster_config_wait1(edgelock_config *cfg)
{
    cluster_config(cfg);
    cfg->wait_replicas = 1;
    cfg->wait_replicas_timeout_ms = 2000;
}

// A lock name "<prefix><n>" whose slot master i serves.
std::string name_on_master(int i, const char *prefix)
{
    for (int n = 0;; n++) {
        std::string name = prefix + std::to_string(n);
        uint16_t s = key_hash_slot(name.data(), name.size());
        if (s >= RedisCluster::slot_lo(i) && s <= RedisCluster::slot_hi(i))
            return name;
    }
}

uint16_t slot_of(const std::string &name)
{
    return key_hash_slot(name.data(), name.size());
}

std::string node_id(RedisServer &node)
{
    redisReply *r = node.command("CLUSTER MYID");
    std::string id = r && r->type == REDIS_REPLY_STRING ? std::string(r->str, r->len) : "";
    if (r)
        freeReplyObject(r);
    return id;
}

bool status_ok(redisReply *r)
{
    bool ok = r && r->type == REDIS_REPLY_STATUS;
    if (!ok)
        fprintf(stderr, "  reply: %s\n", r && r->str ? r->str : "(none)");
    if (r)
        freeReplyObject(r);
    return ok;
}

// SSUBSCRIBE on a node from a connection of the test's own, as redis-cli would.
struct ShardSubscriber {
    redisContext *ctx = nullptr;
    bool start(RedisServer &node, const std::string &channel)
    {
        ctx = redisConnect("127.0.0.1", node.port());
        if (!ctx || ctx->err)
            return false;
        redisReply *r = (redisReply *)redisCommand(ctx, "SSUBSCRIBE %b", channel.data(), channel.size());
        bool ok = r && r->type == REDIS_REPLY_ARRAY && r->elements == 3;
        if (r)
            freeReplyObject(r);
        struct timeval tv = {10, 0};
        redisSetTimeout(ctx, tv);
        return ok;
    }
    // The next message: "<kind> <channel> <payload>", "" on timeout.
    std::string next()
    {
        void *p = nullptr;
        if (redisGetReply(ctx, &p) != REDIS_OK || !p)
            return "";
        redisReply *r = (redisReply *)p;
        std::string out;
        for (size_t i = 0; r->type == REDIS_REPLY_ARRAY && i < r->elements; i++)
            out += (i ? " " : "") + std::string(r->element[i]->str ? r->element[i]->str : "",
                                                r->element[i]->str ? r->element[i]->len : 0);
        freeReplyObject(r);
        return out;
    }
    ~ShardSubscriber()
    {
        if (ctx)
            redisFree(ctx);
    }
};

// Subscribers of channel on node: to its shard channel when pub/sub is
// sharded, else to the plain channel.
long long shard_subscribers(RedisServer &node, const std::string &channel)
{
    redisReply *r =
        node.command(kSharded ? "PUBSUB SHARDNUMSUB %b" : "PUBSUB NUMSUB %b", channel.data(), channel.size());
    long long n = r && r->type == REDIS_REPLY_ARRAY && r->elements == 2 ? r->element[1]->integer : -1;
    if (r)
        freeReplyObject(r);
    return n;
}

} // namespace

TEST_CASE(locks_of_every_kind_on_every_master_from_one_seed)
{
    RedisCluster &cl = shared_cluster();
    // Seeded with a replica: the map it gives sends every call to a master.
    std::string url = cluster_url(cl, RedisCluster::kMasters);
    edgelock_client *c = make_client(url.c_str(), cluster_config);
    REQUIRE(c);
    for (int i = 0; i < RedisCluster::kMasters; i++) {
        std::string name = name_on_master(i, "clu:every:");
        edgelock_lock lk = make_lock(c, name.c_str());
        CHECK_ST(edgelock_try_lock(c, lk, 10000, 30000), EDGELOCK_OK);
        CHECK_EQ(redis_integer(cl.node(i), "EXISTS %s", name.c_str()), 1);
        CHECK_ST(edgelock_unlock(c, lk, nullptr), EDGELOCK_OK);
        CHECK_EQ(redis_integer(cl.node(i), "EXISTS %s", name.c_str()), 0);
        edgelock_lock_free(c, lk);
    }
    const edgelock_lock_kind kinds[] = {EDGELOCK_FAIR, EDGELOCK_READ, EDGELOCK_WRITE, EDGELOCK_FENCED};
    int m = 0;
    for (edgelock_lock_kind kind : kinds) {
        std::string name = name_on_master(m++ % RedisCluster::kMasters, "clu:kind:");
        edgelock_lock lk;
        REQUIRE(edgelock_lock_new_kind(c, kind, name.data(), name.size(), &lk) == EDGELOCK_OK);
        int64_t value = 0;
        CHECK_ST(edgelock_try_lock_token(c, lk, 10000, -1, &value), EDGELOCK_OK);
        CHECK_ST(edgelock_unlock(c, lk, nullptr), EDGELOCK_OK);
        edgelock_lock_free(c, lk);
    }
    edgelock_stats st = stats_of(c);
    CHECK_EQ(st.connected, 1u);
    CHECK(tables_idle(c));
    edgelock_client_destroy(c);
}

// edgelock_scan_locks() goes over every master, one after the other, and
// finds a lock on each (and other hashes, which lock_info tells apart).
TEST_CASE(scan_goes_over_every_master)
{
    RedisCluster &cl = shared_cluster();
    std::string url = cluster_url(cl);
    edgelock_client *c = make_client(url.c_str(), cluster_config);
    REQUIRE(c);
    std::vector<std::string> names;
    std::vector<edgelock_lock> held;
    for (int i = 0; i < RedisCluster::kMasters; i++) {
        for (int k = 0; k < 5; k++) {
            names.push_back(name_on_master(i, ("clu:scan" + std::to_string(k) + ":").c_str()));
            edgelock_lock lk = make_lock(c, names.back().c_str());
            CHECK_ST(edgelock_try_lock(c, lk, 10000, 30000), EDGELOCK_OK);
            held.push_back(lk);
        }
    }
    edgelock_scan_name page[8]; // small pages: many calls, every master's cursor
    edgelock_scan scan = {"clu:scan*", 0, page, 8, 0};
    std::vector<std::string> found;
    int calls = 0;
    edgelock_scan_name big[64];
    for (;;) {
        REQUIRE(++calls < 1000);
        edgelock_status st = edgelock_scan_locks(c, &scan);
        if (st == EDGELOCK_ERR_PAGE_TOO_SMALL) { // more than COUNT: the same page, with room
            REQUIRE(scan.count <= 64 && scan.names != big);
            scan.names = big;
            scan.names_cap = 64;
            continue;
        }
        CHECK_ST(st, EDGELOCK_OK);
        REQUIRE(st == EDGELOCK_OK && scan.count <= scan.names_cap);
        for (size_t i = 0; i < scan.count; i++)
            found.emplace_back(scan.names[i].name, scan.names[i].len);
        scan.names = page; // small pages again
        scan.names_cap = 8;
        if (scan.cursor == 0)
            break;
    }
    std::sort(found.begin(), found.end());
    found.erase(std::unique(found.begin(), found.end()), found.end());
    std::vector<std::string> want = names;
    std::sort(want.begin(), want.end());
    CHECK(found == want);
    CHECK(calls >= RedisCluster::kMasters);
    for (edgelock_lock lk : held) {
        CHECK_ST(edgelock_unlock(c, lk, nullptr), EDGELOCK_OK);
        edgelock_lock_free(c, lk);
    }
    CHECK(tables_idle(c));
    edgelock_client_destroy(c);
}

TEST_CASE(multilock_and_redlock_span_masters_and_status_names_each_lock_s_node)
{
    RedisCluster &cl = shared_cluster();
    std::string url = cluster_url(cl);
    edgelock_client *c = make_client(url.c_str(), cluster_config);
    REQUIRE(c);
    edgelock_member m[RedisCluster::kMasters];
    std::string names[RedisCluster::kMasters];
    for (int i = 0; i < RedisCluster::kMasters; i++) {
        names[i] = name_on_master(i, "clu:multi:");
        m[i] = {c, make_lock(c, names[i].c_str())};
    }
    // One member per master: every one is its own call, none crosses slots.
    CHECK_ST(edgelock_multi_try_lock(m, RedisCluster::kMasters, 10000, -1), EDGELOCK_OK);
    for (int i = 0; i < RedisCluster::kMasters; i++) {
        CHECK_EQ(redis_integer(cl.node(i), "EXISTS %s", names[i].c_str()), 1);
        edgelock_lock_info info;
        memset(&info, 0, sizeof(info));
        REQUIRE(edgelock_lock_info_get(c, m[i].lock, &info) == EDGELOCK_OK);
        CHECK_EQ(info.state, EDGELOCK_LOCK_HELD);
        CHECK(std::string(info.server) == "127.0.0.1:" + std::to_string(cl.node(i).port()));
    }
#ifdef EDGELOCK_CLI_PATH
    // The operator's view: the CLI, on its own client, names the same node.
    std::string cmd = std::string(EDGELOCK_CLI_PATH) + " --url " + url +
                      (kSharded ? "" : " --sharded-pubsub off") + " status " + names[1] + " --json";
    FILE *p = popen(cmd.c_str(), "r");
    REQUIRE(p);
    char line[4096] = {0};
    bool read = fgets(line, sizeof(line), p) != nullptr;
    CHECK_EQ(pclose(p), 0);
    CHECK(read && strstr(line, "\"state\":\"held\""));
    std::string want = "\"server\":\"127.0.0.1:" + std::to_string(cl.node(1).port()) + "\"}";
    CHECK(read && strstr(line, want.c_str()));
#endif
    CHECK_ST(edgelock_multi_unlock(m, RedisCluster::kMasters), EDGELOCK_OK);
    for (int i = 0; i < RedisCluster::kMasters; i++)
        CHECK_EQ(redis_integer(cl.node(i), "EXISTS %s", names[i].c_str()), 0);
    // RedLock over the same three, one per master: a quorum of slots.
    int64_t validity = 0;
    CHECK_ST(edgelock_redlock_try_lock(m, RedisCluster::kMasters, 10000, 30000, &validity), EDGELOCK_OK);
    CHECK(validity > 0 && validity <= 30000);
    for (int i = 0; i < RedisCluster::kMasters; i++)
        CHECK_EQ(redis_integer(cl.node(i), "EXISTS %s", names[i].c_str()), 1);
    CHECK_ST(edgelock_redlock_unlock(m, RedisCluster::kMasters), EDGELOCK_OK);
    for (int i = 0; i < RedisCluster::kMasters; i++) {
        CHECK_EQ(redis_integer(cl.node(i), "EXISTS %s", names[i].c_str()), 0);
        edgelock_lock_free(c, m[i].lock);
    }
    CHECK(tables_idle(c));
    edgelock_client_destroy(c);
}

TEST_CASE(unlock_messages_go_out_with_spublish_on_the_owning_master)
{
    if (!kSharded)
        return; // nothing sharded to check on this build
    RedisCluster &cl = shared_cluster();
    std::string url = cluster_url(cl);
    auto named = [](edgelock_config *cfg) {
        cluster_config(cfg);
        cfg->client_id = "5f0c2e1a-0000-4000-8000-00000000c1u5"; // Redisson's UUID in the field
    };
    edgelock_client *c = make_client(url.c_str(), named);
    REQUIRE(c);
    std::string name = name_on_master(1, "clu:wire:");
    std::string channel = "redisson_lock__channel:{" + name + "}";
    ShardSubscriber sub;
    REQUIRE(sub.start(cl.node(1), channel));
    edgelock_lock lk = make_lock(c, name.c_str());
    CHECK_ST(edgelock_try_lock(c, lk, 10000, 30000), EDGELOCK_OK);
    // The hash on the slot's master, its field "<client id>:<thread id>"
    // holding the count, as Redisson writes it.
    std::string field = "5f0c2e1a-0000-4000-8000-00000000c1u5:" + std::to_string(edgelock_current_owner());
    CHECK_EQ(redis_integer(cl.node(1), "HGET %s %s", name.c_str(), field.c_str()), 1);
    CHECK_EQ(redis_integer(cl.node(1), "HLEN %s", name.c_str()), 1);
    CHECK_ST(edgelock_unlock(c, lk, nullptr), EDGELOCK_OK);
    CHECK(sub.next() == "smessage " + channel + " 0");
    edgelock_lock_free(c, lk);
    edgelock_client_destroy(c);
}

// A holder on master 0 with a lease far longer than the waiter's wait, a
// waiter subscribed to its sharded channel; while_waiting runs with the waiter
// subscribed, then the holder unlocks: only the message can wake the waiter
// in time.
void woken_by_the_message(const char *prefix, void (*waiter_config)(edgelock_config *),
                          const std::function<void(RedisServer &)> &while_waiting)
{
    RedisCluster &cl = shared_cluster();
    std::string url = cluster_url(cl, 2);
    edgelock_client *holder = make_client(url.c_str(), cluster_config);
    edgelock_client *waiter = make_client(url.c_str(), waiter_config);
    REQUIRE(holder && waiter);
    std::string name = name_on_master(0, prefix);
    std::string channel = "redisson_lock__channel:{" + name + "}";
    edgelock_lock h = make_lock(holder, name.c_str());
    edgelock_lock w = make_lock(waiter, name.c_str());
    CHECK_ST(edgelock_try_lock(holder, h, 0, 120000), EDGELOCK_OK);
    std::atomic<int> got{1};
    std::atomic<int> unlocked{1};
    std::thread t([&] {
        got = edgelock_try_lock(waiter, w, 60000, 30000);
        if (got == EDGELOCK_OK) // the owner is the acquiring thread
            unlocked = edgelock_unlock(waiter, w, nullptr);
    });
    REQUIRE(wait_until(30000, [&] { return shard_subscribers(cl.node(0), channel) == 1; }));
    while_waiting(cl.node(0));
    CHECK_EQ(got.load(), 1); // still waiting
    CHECK_ST(edgelock_unlock(holder, h, nullptr), EDGELOCK_OK);
    t.join();
    CHECK_ST((edgelock_status)got.load(), EDGELOCK_OK);
    CHECK_ST((edgelock_status)unlocked.load(), EDGELOCK_OK);
    edgelock_lock_free(holder, h);
    edgelock_lock_free(waiter, w);
    edgelock_client_destroy(holder);
    edgelock_client_destroy(waiter);
}

TEST_CASE(a_waiter_is_woken_by_the_sharded_message_not_the_lease)
{
    woken_by_the_message("clu:wake:", cluster_config, [](RedisServer &) {});
}

void pinged_often(edgelock_config *cfg)
{
    cluster_config(cfg);
    cfg->command_timeout_ms = 2000; // a PING every 3 s, 2 s for its answer
}

// A waiter subscribed longer than the keepalive's period on its node: the
// PINGs are answered (sharded: a RESP3 connection), so its subscriber is not
// re-made, and the message still wakes it.
TEST_CASE(a_long_wait_keeps_the_nodes_subscriber_through_its_pings)
{
    woken_by_the_message("clu:alive:", pinged_often, [](RedisServer &node) {
        // Each query is a connection of its own: between two CLIENT IDs only
        // the queries' own ids, unless a connection of ours was made again.
        long long id_before = redis_integer(node, "CLIENT ID");
        // The keepalive's command: PING, or where hiredis drops a subscribed
        // PING's answer (before 1.1; plain pub/sub there) SUBSCRIBE again.
#if HIREDIS_MAJOR > 1 || (HIREDIS_MAJOR == 1 && HIREDIS_MINOR >= 1)
        const char *keepalive = "ping";
#else
        const char *keepalive = "subscribe";
#endif
        long long before = command_calls(node, keepalive);
        sleep_ms(7000);
        long long made = redis_integer(node, "CLIENT ID") - id_before;
        if (made != 2) { // whose connection: for the failure's report
            redisReply *r = node.command("CLIENT LIST");
            fprintf(stderr, "  connections on the node:\n%s", r && r->str ? r->str : "(no answer)\n");
            if (r)
                freeReplyObject(r);
        }
        CHECK_EQ(made, 2);
        CHECK(command_calls(node, keepalive) >= before + 2); // the keepalive ran
    });
}

// Semaphores and the latch on a cluster: counter, zset and channel in the
// name's slot on its master; waiters woken by the sharded message (SPUBLISH
// from the scripts, SSUBSCRIBE by the waiters) as Redisson's AUTO mode does.
TEST_CASE(semaphore_and_latch_waiters_are_woken_by_sharded_messages)
{
    RedisCluster &cl = shared_cluster();
    std::string url = cluster_url(cl, 2);
    edgelock_client *holder = make_client(url.c_str(), cluster_config);
    edgelock_client *waiter = make_client(url.c_str(), cluster_config);
    REQUIRE(holder && waiter);
    std::string name = name_on_master(2, "clu:sem:");
    edgelock_lock h = {0}, w = {0};
    edgelock_lock_new_kind(holder, EDGELOCK_PERMIT_SEMAPHORE, name.c_str(), name.size(), &h);
    edgelock_lock_new_kind(waiter, EDGELOCK_PERMIT_SEMAPHORE, name.c_str(), name.size(), &w);
    CHECK_ST(edgelock_semaphore_try_set_permits(holder, h, 1, nullptr), EDGELOCK_OK);
    CHECK_ST(edgelock_try_lock(holder, h, 0, EDGELOCK_LEASE_WATCHDOG), EDGELOCK_OK);
    CHECK_EQ(redis_integer(cl.node(2), "ZCARD {%s}:timeout", name.c_str()), 1);
    std::atomic<int> got{1}, gave_back{1};
    std::thread t([&] {
        got = edgelock_try_lock(waiter, w, 60000, EDGELOCK_LEASE_WATCHDOG);
        if (got == EDGELOCK_OK)
            gave_back = edgelock_unlock(waiter, w, nullptr);
    });
    std::string channel = "redisson_sc:{" + name + "}";
    if (kSharded)
        REQUIRE(wait_until(30000, [&] { return shard_subscribers(cl.node(2), channel) == 1; }));
    else
        sleep_ms(300);
    CHECK_ST(edgelock_unlock(holder, h, nullptr), EDGELOCK_OK);
    t.join();
    CHECK_ST((edgelock_status)got.load(), EDGELOCK_OK);
    CHECK_ST((edgelock_status)gave_back.load(), EDGELOCK_OK);
    CHECK_EQ(redis_integer(cl.node(2), "GET %s", name.c_str()), 1);

    std::string lname = name_on_master(1, "clu:latch:");
    edgelock_lock lh = {0}, lw = {0};
    edgelock_lock_new_kind(holder, EDGELOCK_LATCH, lname.c_str(), lname.size(), &lh);
    edgelock_lock_new_kind(waiter, EDGELOCK_LATCH, lname.c_str(), lname.size(), &lw);
    CHECK_ST(edgelock_latch_try_set_count(holder, lh, 1, nullptr), EDGELOCK_OK);
    std::atomic<int> opened{1};
    std::thread a([&] { opened = edgelock_latch_await(waiter, lw, 60000); });
    std::string lchannel = "redisson_countdownlatch__channel__{" + lname + "}";
    if (kSharded)
        REQUIRE(wait_until(30000, [&] { return shard_subscribers(cl.node(1), lchannel) == 1; }));
    else
        sleep_ms(300);
    CHECK_ST(edgelock_latch_count_down(holder, lh, nullptr), EDGELOCK_OK);
    a.join();
    CHECK_ST((edgelock_status)opened.load(), EDGELOCK_OK);
    for (edgelock_lock l : {h, lh})
        edgelock_lock_free(holder, l);
    for (edgelock_lock l : {w, lw})
        edgelock_lock_free(waiter, l);
    CHECK(tables_idle(holder) && tables_idle(waiter));
    edgelock_client_destroy(holder);
    edgelock_client_destroy(waiter);
}

TEST_CASE(plain_pubsub_when_configured_off)
{
    RedisCluster &cl = shared_cluster();
    std::string url = cluster_url(cl);
    auto off = [](edgelock_config *cfg) {
        cluster_config(cfg);
        cfg->sharded_pubsub = EDGELOCK_SHARDED_OFF;
    };
    edgelock_client *holder = make_client(url.c_str(), off);
    edgelock_client *waiter = make_client(url.c_str(), off);
    REQUIRE(holder && waiter);
    std::string name = name_on_master(2, "clu:off:");
    edgelock_lock h = make_lock(holder, name.c_str());
    edgelock_lock w = make_lock(waiter, name.c_str());
    CHECK_ST(edgelock_try_lock(holder, h, 0, 120000), EDGELOCK_OK);
    std::atomic<int> got{1};
    std::atomic<int> unlocked{1};
    std::thread t([&] {
        got = edgelock_try_lock(waiter, w, 60000, 30000);
        if (got == EDGELOCK_OK) // the owner is the acquiring thread
            unlocked = edgelock_unlock(waiter, w, nullptr);
    });
    std::string channel = "redisson_lock__channel:{" + name + "}";
    REQUIRE(wait_until(30000, [&] {
        redisReply *r = cl.node(2).command("PUBSUB NUMSUB %s", channel.c_str());
        long long n = r && r->type == REDIS_REPLY_ARRAY && r->elements == 2 ? r->element[1]->integer : 0;
        if (r)
            freeReplyObject(r);
        return n == 1;
    }));
    CHECK_ST(edgelock_unlock(holder, h, nullptr), EDGELOCK_OK);
    t.join();
    CHECK_ST((edgelock_status)got.load(), EDGELOCK_OK);
    CHECK_ST((edgelock_status)unlocked.load(), EDGELOCK_OK);
    edgelock_lock_free(holder, h);
    edgelock_lock_free(waiter, w);
    edgelock_client_destroy(holder);
    edgelock_client_destroy(waiter);
}

TEST_CASE(a_config_the_build_cannot_serve_is_refused)
{
    edgelock_config cfg;
    edgelock_config_init(&cfg);
    cfg.url = "redis-cluster://127.0.0.1:1";
    cfg.max_nodes = 0;
    edgelock_client *c = nullptr;
    CHECK_ST(edgelock_client_create(&cfg, nullptr, &c), EDGELOCK_ERR_INVALID_ARG);
    cfg.max_nodes = 65;
    CHECK_ST(edgelock_client_create(&cfg, nullptr, &c), EDGELOCK_ERR_INVALID_ARG);
    cfg.max_nodes = 16;
    cfg.sharded_pubsub = (edgelock_sharded_pubsub)7;
    CHECK_ST(edgelock_client_create(&cfg, nullptr, &c), EDGELOCK_ERR_INVALID_ARG);
    cfg.url = "redis-cluster://127.0.0.1:1/3"; // a cluster has db 0 only
    cfg.sharded_pubsub = EDGELOCK_SHARDED_OFF;
    CHECK_ST(edgelock_client_create(&cfg, nullptr, &c), EDGELOCK_ERR_INVALID_ARG);
    if (!kSharded) {
        // No SSUBSCRIBE on this build: AUTO (which picks sharded on Redis 7,
        // as Redisson does) and ON would wait for messages it never hears.
        cfg.url = "redis-cluster://127.0.0.1:1";
        cfg.sharded_pubsub = EDGELOCK_SHARDED_AUTO;
        CHECK_ST(edgelock_client_create(&cfg, nullptr, &c), EDGELOCK_ERR_INVALID_ARG);
        cfg.sharded_pubsub = EDGELOCK_SHARDED_ON;
        CHECK_ST(edgelock_client_create(&cfg, nullptr, &c), EDGELOCK_ERR_INVALID_ARG);
    }
}

// rediss-cluster://: every node over TLS (the slot map a TLS client asks
// for names the nodes' TLS ports), the certificate checked against the
// address the map gives, sharded waiters woken over TLS too.
TEST_CASE(a_tls_cluster_serves_every_master_and_wakes_waiters)
{
    if (!edgelock_tls_available())
        return; // this build has no TLS: nothing to check
    RedisCluster cl;
    REQUIRE(cl.start(true));
    std::string ca = test_cert("ca.crt");
    static std::string s_ca;
    s_ca = ca;
    auto tls = [](edgelock_config *cfg) {
        cluster_config(cfg);
        cfg->tls_ca = s_ca.c_str();
    };
    std::string url = "rediss-cluster://127.0.0.1:" + std::to_string(cl.tls_port(1));
    edgelock_client *holder = make_client(url.c_str(), tls);
    edgelock_client *waiter = make_client(url.c_str(), tls);
    REQUIRE(holder && waiter);
    for (int i = 0; i < RedisCluster::kMasters; i++) {
        std::string name = name_on_master(i, "clu:tls:");
        edgelock_lock lk = make_lock(holder, name.c_str());
        CHECK_ST(edgelock_try_lock(holder, lk, 10000, 30000), EDGELOCK_OK);
        edgelock_lock_info info;
        memset(&info, 0, sizeof(info));
        CHECK_ST(edgelock_lock_info_get(holder, lk, &info), EDGELOCK_OK);
        CHECK(std::string(info.server) == "127.0.0.1:" + std::to_string(cl.tls_port(i)));
        CHECK_ST(edgelock_unlock(holder, lk, nullptr), EDGELOCK_OK);
        edgelock_lock_free(holder, lk);
    }
    std::string name = name_on_master(2, "clu:tlswake:");
    std::string channel = "redisson_lock__channel:{" + name + "}";
    edgelock_lock h = make_lock(holder, name.c_str());
    edgelock_lock w = make_lock(waiter, name.c_str());
    CHECK_ST(edgelock_try_lock(holder, h, 0, 120000), EDGELOCK_OK);
    std::atomic<int> got{1}, unlocked{1};
    std::thread t([&] {
        got = edgelock_try_lock(waiter, w, 60000, 30000);
        if (got == EDGELOCK_OK)
            unlocked = edgelock_unlock(waiter, w, nullptr);
    });
    REQUIRE(wait_until(30000, [&] { return shard_subscribers(cl.node(2), channel) == 1; }));
    CHECK_ST(edgelock_unlock(holder, h, nullptr), EDGELOCK_OK);
    t.join();
    CHECK_ST((edgelock_status)got.load(), EDGELOCK_OK);
    CHECK_ST((edgelock_status)unlocked.load(), EDGELOCK_OK);
    edgelock_lock_free(holder, h);
    edgelock_lock_free(waiter, w);
    edgelock_client_destroy(holder);
    edgelock_client_destroy(waiter);
}

// ASK splits an acquire from the WAIT behind it: the acquire goes on to the
// importing master, the WAIT was already answered by the migrating one. The
// grant must still be checked on the node that made it, and the call return.
// The unlock comes once the slot has moved (MOVED): an unlock while it is
// still being imported meets TRYAGAIN (its latch key is not there yet) until
// its command timeout, and says so (the unlock's own WAIT no longer answers
// for it: wait_replicas_answers_an_unlock_after_its_release_moved).
TEST_CASE(wait_replicas_checks_the_node_an_ask_granted_on)
{
    RedisCluster cl;
    REQUIRE(cl.start());
    std::string url = cluster_url(cl, 2);
    edgelock_client *c = make_client(url.c_str(), cluster_config_wait1);
    REQUIRE(c);
    std::string name = name_on_master(0, "clu:ask:");
    int slot = slot_of(name);
    RedisServer &from = cl.node(0), &to = cl.node(1);
    std::string from_id = node_id(from), to_id = node_id(to);
    CHECK(status_ok(to.command("CLUSTER SETSLOT %d IMPORTING %s", slot, from_id.c_str())));
    CHECK(status_ok(from.command("CLUSTER SETSLOT %d MIGRATING %s", slot, to_id.c_str())));
    edgelock_lock lk = make_lock(c, name.c_str());
    std::atomic<int> got{1}, again{1}, released{1};
    std::atomic<bool> locked{false}, moved{false}, done{false};
    std::atomic<uint64_t> server_ask{0}, server_after{0};
    std::thread t([&] {
        got = edgelock_try_lock(c, lk, 5000, 30000);
        uint64_t s = 0;
        edgelock_token_server(c, lk, edgelock_current_owner(), &s);
        server_ask = s;
        locked = true;
        while (got == EDGELOCK_OK && !moved.load())
            sleep_ms(10);
        if (got == EDGELOCK_OK) {
            // A re-entry, on the slot's master now: the same server granted both.
            again = edgelock_try_lock(c, lk, 0, 30000);
            edgelock_token_server(c, lk, edgelock_current_owner(), &s);
            server_after = s;
            if (again == EDGELOCK_OK)
                edgelock_unlock(c, lk, nullptr);
            released = edgelock_unlock(c, lk, nullptr);
        }
        done = true;
    });
    // The wait is 5 s and a WAIT at most 2 s: a call still out after 30 s hangs.
    bool returned = wait_until(30000, [&] { return locked.load(); });
    CHECK_ST((edgelock_status)got.load(), EDGELOCK_OK);
    for (int i = 0; i < RedisCluster::kMasters; i++)
        CHECK(status_ok(cl.node(i).command("CLUSTER SETSLOT %d NODE %s", slot, to_id.c_str())));
    CHECK_EQ(redis_integer(to, "EXISTS %s", name.c_str()), 1); // granted on the importing master
    moved = true;
    returned = returned && wait_until(30000, [&] { return done.load(); });
    if (!returned)
        t.detach(); // reported below; joining would hang the binary
    else
        t.join();
    REQUIRE(returned);
    CHECK_ST((edgelock_status)again.load(), EDGELOCK_OK);
    CHECK_ST((edgelock_status)released.load(), EDGELOCK_OK);
    CHECK_EQ(redis_integer(to, "EXISTS %s", name.c_str()), 0);
    // edgelock_token_server names the importing master that granted it, not
    // the migrating one the slot map named.
    CHECK(server_ask.load() != 0);
    CHECK_EQ(server_ask.load(), server_after.load());
    edgelock_lock_free(c, lk);
    edgelock_client_destroy(c);
}

// A MOVED splits an unlock from the WAIT behind it, as an ASK splits an
// acquire: the release goes on to the slot's new master while the WAIT was
// already answered by the old one. The unlock must answer with the
// release's own result (here: released; then, the lock deleted behind the
// client's back, LOST), not with an old master's WAIT.
TEST_CASE(wait_replicas_answers_an_unlock_after_its_release_moved)
{
    RedisCluster cl;
    REQUIRE(cl.start());
    std::string url = cluster_url(cl, 2);
    edgelock_client *c = make_client(url.c_str(), cluster_config_wait1);
    REQUIRE(c);
    std::string a = name_on_master(0, "clu:umoved:a:");
    std::string b = a;
    for (int n = 0; slot_of(b) == slot_of(a) || slot_of(b) < RedisCluster::slot_lo(0) ||
                    slot_of(b) > RedisCluster::slot_hi(0);
         n++)
        b = "clu:umoved:b:" + std::to_string(n);
    RedisServer &from = cl.node(0), &to = cl.node(1);
    std::string from_id = node_id(from), to_id = node_id(to);
    // Move name's slot, keys and all, from master 0 to master 1 behind the
    // client's back (its map is refreshed every 5 s: the unlock meets MOVED).
    auto move = [&](const std::string &name) {
        int slot = slot_of(name);
        CHECK(status_ok(to.command("CLUSTER SETSLOT %d IMPORTING %s", slot, from_id.c_str())));
        CHECK(status_ok(from.command("CLUSTER SETSLOT %d MIGRATING %s", slot, to_id.c_str())));
        CHECK(status_ok(from.command("MIGRATE 127.0.0.1 %d %s 0 5000", (int)to.port(), name.c_str())));
        for (int i = 0; i < RedisCluster::kMasters; i++)
            CHECK(status_ok(cl.node(i).command("CLUSTER SETSLOT %d NODE %s", slot, to_id.c_str())));
    };
    edgelock_lock la = make_lock(c, a.c_str()), lb = make_lock(c, b.c_str());
    CHECK_ST(edgelock_try_lock(c, la, 0, 30000), EDGELOCK_OK);
    CHECK_ST(edgelock_try_lock(c, lb, 0, 30000), EDGELOCK_OK);
    move(a);
    int released = -1;
    CHECK_ST(edgelock_unlock(c, la, &released), EDGELOCK_OK);
    CHECK_EQ(released, 1); // fully released: the one hold there was
    CHECK_EQ(redis_integer(to, "EXISTS %s", a.c_str()), 0);
    move(b);
    CHECK_EQ(redis_integer(to, "DEL %s", b.c_str()), 1); // gone behind the client's back
    CHECK_ST(edgelock_unlock(c, lb, nullptr), EDGELOCK_ERR_LOST);
    CHECK_ST(edgelock_lock_free(c, la), EDGELOCK_OK);
    CHECK_ST(edgelock_lock_free(c, lb), EDGELOCK_OK);
    CHECK(tables_idle(c));
    edgelock_client_destroy(c);
}

// A master that lost a slot (DELSLOTS) answers CLUSTERDOWN until it has it
// again: a call in the meantime is retried, with pauses, inside its
// command timeout, and succeeds once the slot is served.
TEST_CASE(a_cluster_down_for_a_moment_is_waited_out)
{
    RedisCluster cl;
    REQUIRE(cl.start());
    std::string url = cluster_url(cl, 1);
    edgelock_client *c = make_client(url.c_str(), cluster_config); // command timeout 5 s
    REQUIRE(c);
    std::string name = name_on_master(0, "clu:down:");
    int slot = slot_of(name);
    edgelock_lock lk = make_lock(c, name.c_str());
    CHECK_ST(edgelock_try_lock(c, lk, 0, 30000), EDGELOCK_OK); // the map is warm
    CHECK_ST(edgelock_unlock(c, lk, nullptr), EDGELOCK_OK);
    CHECK(status_ok(cl.node(0).command("CLUSTER DELSLOTS %d", slot)));
    redisReply *r = cl.node(0).command("SET %s x", name.c_str());
    bool down = r && r->type == REDIS_REPLY_ERROR && strncmp(r->str, "CLUSTERDOWN", 11) == 0;
    if (r)
        freeReplyObject(r);
    CHECK(down); // what the client's next call meets
    std::atomic<int> got{1}, released{1};
    std::thread t([&] {
        got = edgelock_try_lock(c, lk, 0, 30000);
        if (got == EDGELOCK_OK)
            released = edgelock_unlock(c, lk, nullptr);
    });
    sleep_ms(800);
    CHECK(status_ok(cl.node(0).command("CLUSTER ADDSLOTS %d", slot)));
    t.join();
    CHECK_ST((edgelock_status)got.load(), EDGELOCK_OK);
    CHECK_ST((edgelock_status)released.load(), EDGELOCK_OK);
    edgelock_lock_free(c, lk);
    edgelock_client_destroy(c);
}

// A grant its replica did not confirm is given back (NOT_REPLICATED), but the
// give-back meets CLUSTERDOWN and waits to be sent again. The owner's next
// lock call must not pass it: a grant that went first would be released by
// it, behind the owner's back, while the owner believes it holds the lock
// (a lossy failover under load did this: two holders at once).
TEST_CASE(a_give_back_that_waits_is_not_passed_by_the_owners_next_lock)
{
    RedisCluster cl;
    REQUIRE(cl.start());
    edgelock_client *c = make_client(cluster_url(cl).c_str(), [](edgelock_config *cfg) {
        cluster_config(cfg);
        cfg->wait_replicas = 1;
        cfg->wait_replicas_timeout_ms = 1000;
    });
    REQUIRE(c);
    std::string name = name_on_master(0, "clu:giveback:");
    int slot = slot_of(name);
    RedisServer &master = cl.node(0), &replica = cl.node(RedisCluster::kMasters);
    edgelock_lock lk = make_lock(c, name.c_str());
    CHECK_ST(edgelock_try_lock(c, lk, 0, 30000), EDGELOCK_OK); // the map is warm
    CHECK_ST(edgelock_unlock(c, lk, nullptr), EDGELOCK_OK);

    // The replica stops acknowledging: the grant is not replicated. While
    // its WAIT runs, the slot goes, so the give-back meets CLUSTERDOWN. The
    // grant's lease is short: it is gone by the owner's next call, as a
    // grant a failover lost is, so that call makes a fresh hold, not a
    // re-entry that the give-back would only count down.
    REQUIRE(kill(replica.pid(), SIGSTOP) == 0);
    std::thread del([&] {
        wait_until(10000, [&] { return redis_integer(master, "EXISTS %s", name.c_str()) == 1; });
        CHECK(status_ok(master.command("CLUSTER DELSLOTS %d", slot)));
    });
    CHECK_ST(edgelock_try_lock(c, lk, 0, 500), EDGELOCK_ERR_NOT_REPLICATED);
    del.join();
    REQUIRE(kill(replica.pid(), SIGCONT) == 0);
    sleep_ms(1000); // the give-back's pauses grow; the grant's lease runs out

    // The owner locks again; the slot comes back while that call waits.
    std::thread add([&] {
        sleep_ms(150);
        CHECK(status_ok(master.command("CLUSTER ADDSLOTS %d", slot)));
    });
    CHECK_ST(edgelock_try_lock(c, lk, 20000, 30000), EDGELOCK_OK);
    add.join();
    sleep_ms(2000); // longer than any pause of the give-back
    CHECK(still_held(c, lk));
    CHECK_EQ(redis_integer(master, "EXISTS %s", name.c_str()), 1);
    CHECK_ST(edgelock_unlock(c, lk, nullptr), EDGELOCK_OK);
    CHECK_EQ(redis_integer(master, "EXISTS %s", name.c_str()), 0);
    CHECK_ST(edgelock_lock_free(c, lk), EDGELOCK_OK);
    CHECK(tables_idle(c));
    edgelock_client_destroy(c);
}

TEST_CASE(a_slot_migrated_under_a_waiting_lock)
{
    RedisCluster cl;
    REQUIRE(cl.start());
    std::string url = cluster_url(cl);
    edgelock_client *holder = make_client(url.c_str(), cluster_config);
    edgelock_client *waiter = make_client(url.c_str(), cluster_config);
    REQUIRE(holder && waiter);
    std::string name = name_on_master(0, "clu:migrate:");
    uint16_t slot = slot_of(name);
    edgelock_lock h = make_lock(holder, name.c_str());
    edgelock_lock w = make_lock(waiter, name.c_str());
    CHECK_ST(edgelock_try_lock(holder, h, 0, -1), EDGELOCK_OK); // watchdog: renewed across the move
    std::atomic<int> got{1};
    std::atomic<int> unlocked{1};
    std::thread t([&] {
        got = edgelock_try_lock(waiter, w, 60000, 30000);
        if (got == EDGELOCK_OK) // the owner is the acquiring thread
            unlocked = edgelock_unlock(waiter, w, nullptr);
    });
    std::string channel = "redisson_lock__channel:{" + name + "}";
    REQUIRE(wait_until(30000, [&] { return shard_subscribers(cl.node(0), channel) == 1; }));

    // Move the slot from master 0 to master 1, keys and all, as redis-cli
    // --cluster reshard does.
    RedisServer &from = cl.node(0), &to = cl.node(1);
    std::string from_id = node_id(from), to_id = node_id(to);
    CHECK(status_ok(to.command("CLUSTER SETSLOT %d IMPORTING %s", (int)slot, from_id.c_str())));
    CHECK(status_ok(from.command("CLUSTER SETSLOT %d MIGRATING %s", (int)slot, to_id.c_str())));
    redisReply *keys = from.command("CLUSTER GETKEYSINSLOT %d 100", (int)slot);
    REQUIRE(keys && keys->type == REDIS_REPLY_ARRAY);
    for (size_t i = 0; i < keys->elements; i++)
        CHECK(status_ok(from.command("MIGRATE 127.0.0.1 %d %b 0 5000", (int)to.port(), keys->element[i]->str,
                                     keys->element[i]->len)));
    freeReplyObject(keys);
    for (int i = 0; i < RedisCluster::kMasters; i++)
        CHECK(status_ok(cl.node(i).command("CLUSTER SETSLOT %d NODE %s", (int)slot, to_id.c_str())));

    // The holder's renewals and unlock follow the slot (MOVED); the waiter,
    // told by sunsubscribe, listens on the new master and is woken there
    // (plain pub/sub reaches every node: its subscription stays where it is).
    if (kSharded)
        REQUIRE(wait_until(30000, [&] { return shard_subscribers(to, channel) == 1; }));
    CHECK(still_held(holder, h));
    CHECK_ST(edgelock_unlock(holder, h, nullptr), EDGELOCK_OK);
    t.join();
    CHECK_ST((edgelock_status)got.load(), EDGELOCK_OK);
    CHECK_EQ(redis_integer(from, "CLUSTER COUNTKEYSINSLOT %d", (int)slot), 0); // nothing left behind
    CHECK_ST((edgelock_status)unlocked.load(), EDGELOCK_OK);
    edgelock_lock_free(holder, h);
    edgelock_lock_free(waiter, w);
    edgelock_client_destroy(holder);
    edgelock_client_destroy(waiter);
}

TEST_CASE(a_failover_keeps_or_reports_holds_and_loses_no_waiter)
{
    RedisCluster cl;
    REQUIRE(cl.start());
    g_lost = 0;
    std::string url = cluster_url(cl, 1);
    edgelock_client *holder = make_client(url.c_str(), cluster_config);
    edgelock_client *waiter = make_client(url.c_str(), cluster_config);
    REQUIRE(holder && waiter);
    std::string name = name_on_master(0, "clu:failover:");
    edgelock_lock h = make_lock(holder, name.c_str());
    edgelock_lock w = make_lock(waiter, name.c_str());
    CHECK_ST(edgelock_try_lock(holder, h, 0, -1), EDGELOCK_OK);
    // The hold is on the replica before the failover starts.
    REQUIRE(wait_until(30000, [&] { return redis_integer(cl.node(0), "WAIT 1 1000") == 1; }));
    std::atomic<int> got{1};
    uint64_t wait_started = mono_ms();
    std::atomic<int> unlocked{1};
    std::thread t([&] {
        got = edgelock_try_lock(waiter, w, 40000, 30000);
        if (got == EDGELOCK_OK) // the owner is the acquiring thread
            unlocked = edgelock_unlock(waiter, w, nullptr);
    });
    std::string channel = "redisson_lock__channel:{" + name + "}";
    REQUIRE(wait_until(30000, [&] { return shard_subscribers(cl.node(0), channel) == 1; }));

    // Node kMasters + 0 is master 0's replica: it takes over, gracefully.
    // A replica gives a manual failover up when it is not done within 5 s
    // (Redis's CLUSTER_MF_TIMEOUT), as on a loaded machine (CI's ARM stage
    // saw one that never ended): asked again then, as an operator would.
    RedisServer &replica = cl.node(RedisCluster::kMasters);
    auto promoted = [&] {
        redisReply *r = replica.command("ROLE");
        bool master =
            r && r->type == REDIS_REPLY_ARRAY && r->elements > 0 && strcmp(r->element[0]->str, "master") == 0;
        if (r)
            freeReplyObject(r);
        return master;
    };
    CHECK(status_ok(replica.command("CLUSTER FAILOVER")));
    bool took_over = wait_until(15000, promoted);
    for (int again = 0; again < 3 && !took_over; again++) {
        if (redisReply *r = replica.command("CLUSTER FAILOVER")) // an error if it took over meanwhile
            freeReplyObject(r);
        took_over = wait_until(15000, promoted);
    }
    REQUIRE(took_over);
    // Renewals go to the new master: the holder keeps its lock, or is told it lost it.
    sleep_ms(4000); // more than a lease: renewals had to reach the new master
    bool kept = still_held(holder, h);
    CHECK(kept || g_lost.load() == 1);
    if (kept)
        CHECK_EQ(redis_integer(replica, "EXISTS %s", name.c_str()), 1);
    edgelock_status released = edgelock_unlock(holder, h, nullptr);
    CHECK(released == EDGELOCK_OK || (!kept && released == EDGELOCK_ERR_LOST));
    t.join();
    // The waiter acquired (woken on the new master) and did not outlast its wait.
    CHECK_ST((edgelock_status)got.load(), EDGELOCK_OK);
    CHECK(mono_ms() - wait_started < 40000 + 15000);
    CHECK_ST((edgelock_status)unlocked.load(), EDGELOCK_OK);

    // New acquisitions on the failed-over slot succeed.
    edgelock_lock n = make_lock(holder, name_on_master(0, "clu:after:").c_str());
    CHECK_ST(edgelock_try_lock(holder, n, 15000, 30000), EDGELOCK_OK);
    CHECK_ST(edgelock_unlock(holder, n, nullptr), EDGELOCK_OK);
    edgelock_lock_free(holder, n);
    edgelock_lock_free(holder, h);
    edgelock_lock_free(waiter, w);
    edgelock_client_destroy(holder);
    edgelock_client_destroy(waiter);
}
