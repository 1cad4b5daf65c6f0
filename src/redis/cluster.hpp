// SPDX-License-Identifier: BSD-3-Clause
// redis-cluster://: the masters of a Redis Cluster as the client sees them. A
// fixed table of nodes (a command and a subscriber connection each, started
// when first needed), the master of every slot in fixed memory, and how that
// map is kept fresh: CLUSTER SLOTS asked of a ready node at the first
// connection, after a MOVED, when a node's connection drops, and every
// refresh period (Redisson rescans every 5 s as well). A CLUSTER SLOTS left
// unanswered for a refresh period (a node gone without a reset) is given up:
// its late answer, if any, is ignored, and another node is asked. After each
// map taken, the entries no slot points to (seeds aside) are closed and free
// again, so addresses that change across failovers do not fill the table.
//
// Whether pub/sub is sharded is decided once, as Redisson's AUTO mode does:
// the first node to connect is asked PUBSUB SHARDNUMSUB, and any answer that
// is not an error means SPUBLISH/SSUBSCRIBE from then on.
//
// The owner learns of changes through hooks it set, and sends commands itself
// (redis/queue, redis/pubsub) on the connections this hands out.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "redis/connection.hpp"
#include "redis/slot.hpp"

struct redisReply;

namespace edgelock
{

struct Cluster;

struct ClusterNode {
    Connection cmd;
    Connection sub;
    Cluster *cluster;
    bool used;           // has an address: its command connection runs
    bool sub_started;    // its subscriber connection runs (first asked for)
    bool refresh_failed; // left a CLUSTER SLOTS unanswered: asked last (until it answers or reconnects)
    bool seed;           // an address of the URL: kept, the way back when every other node is gone
};

enum class ShardedMode : uint8_t { Auto, On, Off };

struct ClusterHooks {
    void *ctx;
    // A command connection became ready, or the slot map changed: commands
    // waiting for their node, and waiters, may go now.
    void (*commands_ready)(void *ctx);
    // A subscriber connection became ready, or the slot map changed:
    // subscriptions that are down may be made (on the master their slot has now).
    void (*subscribers_ready)(void *ctx);
    // conn, a subscriber connection, dropped: its subscriptions are gone.
    void (*subscriber_down)(void *ctx, Connection *conn);
    // The owner's setup of every command connection (loading the scripts).
    bool (*command_setup)(void *ctx, Connection *conn);
    // AUTO: the first node answered; from now on pub/sub is sharded or not.
    void (*sharded_decided)(void *ctx, bool sharded);
    // Every reply that is not the cluster's own: commands' and messages'.
    void (*command_reply)(void *reply_ctx, struct redisReply *reply, void *privdata);
    void *command_reply_ctx;
    void (*message_reply)(void *reply_ctx, struct redisReply *reply, void *privdata);
    void *message_reply_ctx;
};

constexpr uint8_t kNoNode = 0xff;
constexpr uint32_t kMaxClusterNodes = 64;
constexpr uint32_t kClusterRefreshMs = 5000;

struct Cluster {
    ClusterNode *nodes;
    uint32_t capacity;
    uint8_t *slot_owner; // kClusterSlots entries: a node index, or kNoNode
    const RedisUrl *url;
    Loop *loop;
    ClusterHooks hooks;
    Timer timer;         // the next refresh
    uint32_t next_probe; // round robin over the nodes asked for the map
    ShardedMode mode;
    bool sharded;                 // SPUBLISH/SSUBSCRIBE (decided when sharded_known)
    bool sharded_known;           // ON and OFF: from the start; AUTO: once a node answered
    bool map_known;               // a CLUSTER SLOTS answer was taken
    bool refreshing;              // a CLUSTER SLOTS is in flight
    Connection *refresh_conn;     // where it went (an answer from elsewhere is a late one, ignored)
    uint64_t refresh_deadline_ms; // given up at this time (loop clock)
    bool closed;
    bool table_full;      // a node was refused for want of an entry (since the last map taken)
    uint64_t map_changes; // slot maps taken that moved a slot
};

// nodes: capacity zeroed entries (<= kMaxClusterNodes); slot_owner:
// kClusterSlots bytes. cfg: as for a single node's command connection (TLS,
// times), with the subscribers' keepalive; roles, pub/sub and which
// connections keep alive are set here. False when timers cannot be had.
bool cluster_init(Cluster *cl, ClusterNode *nodes, uint32_t capacity, uint8_t *slot_owner, Loop *loop,
                  const LinkOps *ops, const ConnConfig &cfg, ShardedMode mode, const ClusterHooks &hooks);
void cluster_start(Cluster *cl); // connect to the seeds
void cluster_close(Cluster *cl); // for good: every connection closed
void cluster_fini(Cluster *cl);

// The command connection of slot's master, or null while it is not known (a
// refresh is asked for). It may not be ready yet.
Connection *cluster_command_conn(Cluster *cl, uint16_t slot);
// The command connection of the first master (a node owning slots by the
// map) whose index is *index or above, *index set to it; null when none.
Connection *cluster_master_from(Cluster *cl, uint32_t *index);
// The subscriber connection of slot's master (started now if it was not),
// or null while the master or the pub/sub mode is not known.
Connection *cluster_subscriber_conn(Cluster *cl, uint16_t slot);
// A MOVED (moved) or ASK answer from `from` named "host:port" for slot (an
// empty host: from's): the command connection there (started now if new;
// null when the table is full or the address is malformed). MOVED also makes
// it slot's master at once and asks for the whole map again.
Connection *cluster_redirected(Cluster *cl, const Connection *from, uint16_t slot, const char *addr,
                               size_t len, bool moved);
// Ask for the slot map again now (no-op while one is in flight and not yet
// overdue).
void cluster_refresh(Cluster *cl);
// True when every master in the map has a ready command connection.
bool cluster_ready(const Cluster *cl);
// Flush every command connection's output (shutdown).
void cluster_flush(Cluster *cl);

// A CLUSTER SLOTS reply into owner[kClusterSlots]; find(ctx, host, port)
// gives the node index of a master (kNoNode: none to be had). An empty host
// (a node that does not know its own address) is asked_host. False when the
// reply is malformed (owner untouched).
using ClusterNodeFinder = uint8_t (*)(void *ctx, const char *host, uint16_t port);
bool parse_cluster_slots(const struct redisReply *reply, const char *asked_host, ClusterNodeFinder find,
                         void *ctx, uint8_t *owner);

} // namespace edgelock
