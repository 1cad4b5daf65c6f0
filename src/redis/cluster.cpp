// SPDX-License-Identifier: BSD-3-Clause
// The cluster's masters and slot map (cluster.hpp).
#include "redis/cluster.hpp"
#include "base/log.hpp"

#include <hiredis/hiredis.h>
#include <stdlib.h>
#include <string.h>

#include "base/resp.hpp"
#include "port.h"

namespace edgelock
{

enum : uint8_t { kProbeSlots = 0, kProbeSharded = 1 };

static bool is_int_in(const redisReply *r, long long lo, long long hi)
{
    return r->type == REDIS_REPLY_INTEGER && r->integer >= lo && r->integer <= hi;
}

// One range of CLUSTER SLOTS: [start, end, [host, port, id, ...], replicas...].
static bool range_valid(const redisReply *r)
{
    if (r->type != REDIS_REPLY_ARRAY || r->elements < 3)
        return false;
    const redisReply *master = r->element[2];
    return is_int_in(r->element[0], 0, kClusterSlots - 1) && is_int_in(r->element[1], 0, kClusterSlots - 1) &&
           r->element[0]->integer <= r->element[1]->integer && master->type == REDIS_REPLY_ARRAY &&
           master->elements >= 2 && master->element[0]->type == REDIS_REPLY_STRING &&
           master->element[0]->len < 256 && is_int_in(master->element[1], 1, 65535);
}

bool parse_cluster_slots(const redisReply *reply, const char *asked_host, ClusterNodeFinder find, void *ctx,
                         uint8_t *owner)
{
    if (!reply || reply->type != REDIS_REPLY_ARRAY)
        return false;
    for (size_t i = 0; i < reply->elements; i++)
        if (!range_valid(reply->element[i]))
            return false;
    memset(owner, kNoNode, kClusterSlots);
    for (size_t i = 0; i < reply->elements; i++) {
        const redisReply *r = reply->element[i];
        const redisReply *master = r->element[2];
        char host[256];
        memcpy(host, master->element[0]->str, master->element[0]->len);
        host[master->element[0]->len] = 0;
        // "" (or "?") when the node does not know the address it is reached at.
        const char *h = host[0] && strcmp(host, "?") != 0 ? host : asked_host;
        uint8_t node = find(ctx, h, (uint16_t)master->element[1]->integer);
        memset(owner + r->element[0]->integer, node,
               (size_t)(r->element[1]->integer - r->element[0]->integer + 1));
    }
    return true;
}

static ClusterNode *node_of(void *ctx)
{
    return static_cast<ClusterNode *>(ctx);
}

// The node at host:port, given a table entry and started if it is new;
// kNoNode when the table is full.
static uint8_t find_node(void *ctx, const char *host, uint16_t port)
{
    auto *cl = static_cast<Cluster *>(ctx);
    uint32_t free_index = kNoNode;
    for (uint32_t i = 0; i < cl->capacity; i++) {
        ClusterNode *n = &cl->nodes[i];
        if (!n->used) {
            if (free_index == kNoNode)
                free_index = i;
            continue;
        }
        if (n->cmd.port == port && strcmp(n->cmd.host, host) == 0)
            return (uint8_t)i;
    }
    if (free_index == kNoNode)
        cl->table_full = true; // the next map taken frees what it no longer names
    if (free_index == kNoNode || strlen(host) >= sizeof(cl->nodes[0].cmd.host)) {
        log_to(cl->loop->log, EDGELOCK_LOG_ERROR, "cluster: no room for node %s:%u (max_nodes %u)", host,
               port, cl->capacity);
        return kNoNode;
    }
    ClusterNode *n = &cl->nodes[free_index];
    n->used = true;
    Connection *conns[] = {&n->cmd, &n->sub};
    for (Connection *conn : conns) {
        memset(conn->host, 0, sizeof(conn->host));
        memcpy(conn->host, host, strlen(host));
        conn->port = port;
    }
    log_to(cl->loop->log, EDGELOCK_LOG_INFO, "cluster: node %s:%u", host, port);
    if (!cl->closed)
        conn_start(&n->cmd);
    return (uint8_t)free_index;
}

static void arm_refresh(Cluster *cl, uint64_t delay_ms)
{
    if (!cl->closed)
        timer_arm(&cl->timer, delay_ms);
}

static bool send_probe(Connection *conn, uint8_t kind)
{
    char buf[64];
    RespCommand rc(buf, sizeof(buf));
    if (kind == kProbeSlots) {
        rc.arg("CLUSTER");
        rc.arg("SLOTS");
    } else {
        // As Redisson asks it: an error (Redis before 7) means no sharded pub/sub.
        rc.arg("PUBSUB");
        rc.arg("SHARDNUMSUB");
        rc.arg("0");
    }
    const char *out;
    size_t len;
    return rc.finish(&out, &len) && conn_send_probe(conn, kind, out, len);
}

// An outstanding CLUSTER SLOTS is waited for this long before another node is asked.
constexpr uint64_t kRefreshTimeoutMs = kClusterRefreshMs;

static void refresh_sent(Cluster *cl, Connection *conn)
{
    cl->refreshing = true;
    cl->refresh_conn = conn;
    cl->refresh_deadline_ms = loop_now(cl->loop) + kRefreshTimeoutMs;
}

// The CLUSTER SLOTS in flight was not answered in time: forget it (its late
// answer is ignored) and ask the others first from now on.
static void refresh_overdue(Cluster *cl)
{
    ClusterNode *n = node_of(cl->refresh_conn->hooks.ctx);
    n->refresh_failed = true;
    log_to(cl->loop->log, EDGELOCK_LOG_WARN,
           "cluster: %s:%u did not answer CLUSTER SLOTS in %u ms; asking another node", n->cmd.host,
           n->cmd.port, (unsigned)kRefreshTimeoutMs);
    cl->refreshing = false;
    cl->refresh_conn = nullptr;
}

void cluster_refresh(Cluster *cl)
{
    if (cl->closed)
        return;
    if (cl->refreshing) {
        if (loop_now(cl->loop) < cl->refresh_deadline_ms)
            return;
        refresh_overdue(cl);
    }
    // The next ready node in turn, so one that keeps answering badly is not
    // the only one asked; one that left the last refresh unanswered only when
    // no other is ready.
    for (int pass = 0; pass < 2; pass++) {
        for (uint32_t k = 0; k < cl->capacity; k++) {
            ClusterNode *n = &cl->nodes[(cl->next_probe + k) % cl->capacity];
            if (!n->used || !conn_ready(&n->cmd) || (pass == 0 && n->refresh_failed))
                continue;
            cl->next_probe = (cl->next_probe + k + 1) % cl->capacity;
            if (send_probe(&n->cmd, kProbeSlots)) {
                refresh_sent(cl, &n->cmd);
                return;
            }
        }
    }
    // None ready: the next command connection asks in its setup.
}

// Close and free the entries no slot of the map points to, but the seeds and
// keep (whose callback is running): a master gone in a failover is not
// reconnected forever, and its entry is there for the next address seen.
// Commands in flight on them complete with CONNECTION; their subscriptions
// are down (and made again on their slots' masters). How many were freed.
static uint32_t free_unmapped(Cluster *cl, const Connection *keep)
{
    bool mapped[kMaxClusterNodes] = {};
    for (uint32_t s = 0; s < kClusterSlots; s++)
        if (cl->slot_owner[s] < kMaxClusterNodes)
            mapped[cl->slot_owner[s]] = true;
    uint32_t freed = 0;
    for (uint32_t i = 0; i < cl->capacity; i++) {
        ClusterNode *n = &cl->nodes[i];
        if (!n->used || mapped[i] || n->seed || &n->cmd == keep || &n->cmd == cl->refresh_conn)
            continue;
        log_to(cl->loop->log, EDGELOCK_LOG_INFO, "cluster: node %s:%u no longer in the map; closed",
               n->cmd.host, n->cmd.port);
        if (n->sub_started) {
            conn_close(&n->sub);
            cl->hooks.subscriber_down(cl->hooks.ctx, &n->sub);
        }
        conn_close(&n->cmd);
        conn_reuse(&n->cmd);
        conn_reuse(&n->sub);
        n->used = false;
        n->sub_started = false;
        n->refresh_failed = false;
        freed++;
    }
    return freed;
}

static void took_map(Cluster *cl, Connection *conn, const redisReply *reply)
{
    uint8_t before[kClusterSlots];
    memcpy(before, cl->slot_owner, sizeof(before));
    cl->table_full = false;
    if (!parse_cluster_slots(reply, conn->host, find_node, cl, cl->slot_owner)) {
        log_to(cl->loop->log, EDGELOCK_LOG_WARN, "cluster: %s:%u answered CLUSTER SLOTS with %s", conn->host,
               conn->port, reply->type == REDIS_REPLY_ERROR ? reply->str : "a malformed map");
        return;
    }
    uint32_t freed = free_unmapped(cl, conn);
    if (freed && cl->table_full) {
        // Masters refused an entry that is free now: the same answer again.
        cl->table_full = false;
        parse_cluster_slots(reply, conn->host, find_node, cl, cl->slot_owner);
    }
    bool first = !cl->map_known;
    cl->map_known = true;
    // An entry freed and taken again may hold another node at the same index.
    if (first || freed || memcmp(before, cl->slot_owner, sizeof(before)) != 0) {
        cl->map_changes++;
        log_to(cl->loop->log, EDGELOCK_LOG_INFO, "cluster: slot map %s from %s:%u",
               first ? "taken" : "changed", conn->host, conn->port);
        cl->hooks.commands_ready(cl->hooks.ctx);
    }
    // Also when nothing moved: a subscription Redis ended (sunsubscribe) after
    // the map had already been updated by a MOVED waits for this.
    cl->hooks.subscribers_ready(cl->hooks.ctx);
}

static void probed(void *ctx, Connection *conn, uint8_t kind, redisReply *reply)
{
    Cluster *cl = node_of(ctx)->cluster;
    if (cl->closed)
        return;
    if (kind == kProbeSharded) {
        if (!reply || cl->sharded_known)
            return; // the next connection asks again
        cl->sharded = reply->type != REDIS_REPLY_ERROR;
        cl->sharded_known = true;
        log_to(cl->loop->log, EDGELOCK_LOG_INFO, "cluster: %s pub/sub", cl->sharded ? "sharded" : "plain");
        cl->hooks.sharded_decided(cl->hooks.ctx, cl->sharded);
        cl->hooks.subscribers_ready(cl->hooks.ctx);
        return;
    }
    if (!cl->refreshing || conn != cl->refresh_conn)
        return; // the late answer to a refresh given up (or its connection's drop)
    cl->refreshing = false;
    cl->refresh_conn = nullptr;
    if (!reply) {
        arm_refresh(cl, 100); // dropped before it answered: another node, soon
        return;
    }
    node_of(ctx)->refresh_failed = false;
    took_map(cl, conn, reply);
    arm_refresh(cl, cl->map_known ? kClusterRefreshMs : 100);
}

static bool command_setup(void *ctx, Connection *conn)
{
    Cluster *cl = node_of(ctx)->cluster;
    if (!cl->hooks.command_setup(cl->hooks.ctx, conn))
        return false;
    // Answered before the connection counts as ready, so its first commands
    // already know where they go and what to publish with.
    if (!cl->sharded_known && !send_probe(conn, kProbeSharded))
        return false;
    if (!cl->map_known && !cl->refreshing) {
        if (!send_probe(conn, kProbeSlots))
            return false;
        refresh_sent(cl, conn);
    }
    return true;
}

static void command_ready(void *ctx)
{
    node_of(ctx)->refresh_failed = false; // connected again: worth asking again
    Cluster *cl = node_of(ctx)->cluster;
    cl->hooks.commands_ready(cl->hooks.ctx);
}

static void command_down(void *ctx)
{
    // A master gone may mean a failover: ask a node still there.
    cluster_refresh(node_of(ctx)->cluster);
}

static bool subscriber_setup(void *ctx, Connection *conn)
{
    if (!conn->push_replies)
        return true;
    // Sharded: RESP3, whose pushes carry what hiredis cannot match to a command.
    char buf[64];
    RespCommand rc(buf, sizeof(buf));
    rc.arg("HELLO");
    rc.arg("3");
    const char *out;
    size_t len;
    (void)ctx;
    return rc.finish(&out, &len) && conn_send_setup(conn, out, len);
}

static void subscriber_ready(void *ctx)
{
    Cluster *cl = node_of(ctx)->cluster;
    cl->hooks.subscribers_ready(cl->hooks.ctx);
}

static void subscriber_down(void *ctx)
{
    ClusterNode *n = node_of(ctx);
    n->cluster->hooks.subscriber_down(n->cluster->hooks.ctx, &n->sub);
}

static void timer_fired(void *arg, Timer *)
{
    auto *cl = static_cast<Cluster *>(arg);
    cluster_refresh(cl); // gives up one overdue first
    // Armed whatever happened: the next refresh, or the one in flight's deadline.
    uint64_t delay = cl->map_known ? kClusterRefreshMs : 100;
    if (cl->refreshing) {
        uint64_t now = loop_now(cl->loop);
        uint64_t left = cl->refresh_deadline_ms > now ? cl->refresh_deadline_ms - now : 0;
        if (left < delay)
            delay = left;
    }
    arm_refresh(cl, delay);
}

bool cluster_init(Cluster *cl, ClusterNode *nodes, uint32_t capacity, uint8_t *slot_owner, Loop *loop,
                  const LinkOps *ops, const ConnConfig &cfg, ShardedMode mode, const ClusterHooks &hooks)
{
    EDGELOCK_ASSERT(capacity <= kMaxClusterNodes);
    cl->nodes = nodes;
    cl->capacity = capacity;
    cl->slot_owner = slot_owner;
    memset(slot_owner, kNoNode, kClusterSlots);
    cl->url = cfg.url;
    cl->loop = loop;
    cl->hooks = hooks;
    cl->mode = mode;
    cl->sharded = mode == ShardedMode::On;
    cl->sharded_known = mode != ShardedMode::Auto;
    bool ok = timer_init(&cl->timer, loop, timer_fired, cl);
    for (uint32_t i = 0; i < capacity; i++) {
        ClusterNode *n = &nodes[i];
        n->cluster = cl;
        ConnConfig cc = cfg;
        cc.role = "command";
        cc.leader_reads = false; // replies come on several sockets: the leader runs the loop
        cc.pubsub = false;
        cc.keepalive = nullptr; // the subscriber's only: the queue's timeouts watch this one
        const ConnHooks cmd_hooks = {
            n,     command_ready, command_down, command_setup, hooks.command_reply, hooks.command_reply_ctx,
            probed};
        ok = conn_init(&n->cmd, loop, ops, cc, cmd_hooks) && ok;
        cc.role = "subscriber";
        cc.pubsub = true;
        cc.keepalive = cfg.keepalive;
        cc.write_at_once = false;
        const ConnHooks sub_hooks = {n,
                                     subscriber_ready,
                                     subscriber_down,
                                     subscriber_setup,
                                     hooks.message_reply,
                                     hooks.message_reply_ctx,
                                     nullptr};
        ok = conn_init(&n->sub, loop, ops, cc, sub_hooks) && ok;
    }
    return ok;
}

void cluster_start(Cluster *cl)
{
    for (unsigned i = 0; i < cl->url->nhosts; i++) {
        char host[256];
        uint16_t port;
        if (!host_address(*cl->url, i, host, sizeof(host), &port))
            continue;
        uint8_t node = find_node(cl, host, port);
        if (node != kNoNode)
            cl->nodes[node].seed = true;
    }
    arm_refresh(cl, kClusterRefreshMs);
}

void cluster_close(Cluster *cl)
{
    cl->closed = true;
    timer_cancel(&cl->timer);
    for (uint32_t i = 0; i < cl->capacity; i++) {
        conn_close(&cl->nodes[i].cmd);
        conn_close(&cl->nodes[i].sub);
    }
}

void cluster_fini(Cluster *cl)
{
    timer_fini(&cl->timer);
    for (uint32_t i = 0; cl->nodes && i < cl->capacity; i++) {
        conn_fini(&cl->nodes[i].cmd);
        conn_fini(&cl->nodes[i].sub);
    }
}

Connection *cluster_command_conn(Cluster *cl, uint16_t slot)
{
    uint8_t node = cl->map_known ? cl->slot_owner[slot] : kNoNode;
    if (node == kNoNode) {
        cluster_refresh(cl);
        return nullptr;
    }
    return &cl->nodes[node].cmd;
}

Connection *cluster_master_from(Cluster *cl, uint32_t *index)
{
    if (!cl->map_known)
        return nullptr;
    bool owns[kMaxClusterNodes] = {};
    for (uint32_t s = 0; s < kClusterSlots; s++)
        if (cl->slot_owner[s] != kNoNode && cl->slot_owner[s] < kMaxClusterNodes)
            owns[cl->slot_owner[s]] = true;
    for (uint32_t i = *index; i < cl->capacity && i < kMaxClusterNodes; i++) {
        if (owns[i]) {
            *index = i;
            return &cl->nodes[i].cmd;
        }
    }
    return nullptr;
}

Connection *cluster_subscriber_conn(Cluster *cl, uint16_t slot)
{
    uint8_t node = cl->map_known ? cl->slot_owner[slot] : kNoNode;
    if (!cl->sharded_known || node == kNoNode)
        return nullptr;
    ClusterNode *n = &cl->nodes[node];
    if (!n->sub_started && !cl->closed) {
        n->sub_started = true;
        n->sub.push_replies = cl->sharded;
        conn_start(&n->sub);
    }
    return &n->sub;
}

Connection *cluster_redirected(Cluster *cl, const Connection *from, uint16_t slot, const char *addr,
                               size_t len, bool moved)
{
    char host[256];
    uint16_t port;
    if (slot >= kClusterSlots || !split_node_address(addr, len, host, sizeof(host), &port))
        return nullptr;
    uint8_t node = find_node(cl, host[0] ? host : from->host, port);
    if (node == kNoNode) {
        cluster_refresh(cl); // a map taken frees the entries of nodes gone
        return nullptr;
    }
    if (moved && cl->map_known) {
        cl->slot_owner[slot] = node;
        cluster_refresh(cl);
    }
    return &cl->nodes[node].cmd;
}

bool cluster_ready(const Cluster *cl)
{
    if (!cl->map_known)
        return false;
    bool needed[kMaxClusterNodes] = {};
    for (uint32_t s = 0; s < kClusterSlots; s++)
        if (cl->slot_owner[s] != kNoNode)
            needed[cl->slot_owner[s]] = true;
    for (uint32_t i = 0; i < cl->capacity; i++)
        if (needed[i] && !conn_ready(&cl->nodes[i].cmd))
            return false;
    return true;
}

void cluster_flush(Cluster *cl)
{
    for (uint32_t i = 0; i < cl->capacity; i++)
        conn_flush_output(&cl->nodes[i].cmd);
}

} // namespace edgelock
