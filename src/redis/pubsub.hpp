// SPDX-License-Identifier: BSD-3-Clause
// Channel subscriptions on the subscriber connection, one slot per channel,
// shared (refcounted) by everyone waiting on it. The owner hears through hooks
// it set: a subscription confirmed (first time or after a reconnect, when
// messages may have been missed), and each message.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "base/table.hpp"
#include "edgelock/edgelock.h"

struct redisReply;

namespace edgelock
{

struct Connection;

// The longest channel name a PubSub accepts.
constexpr size_t kMaxChannelLen = 4096 + 256;

enum class SubState : uint8_t { Down, Subscribing, Subscribed, Unsubscribing };

struct Subscription {
    uint32_t refs;           // joins not yet left (leaves due included)
    uint32_t len;            // channel name bytes (in the name arena)
    Connection *conn;        // where it is (being) subscribed; null when down
    uint32_t leaves_due;     // pubsub_leave_later() calls not yet flushed
    uint32_t next_due;       // the due list (PubSub::due_head), kNoSub at its end
    uint32_t hash;           // of the channel name: its chain in PubSub::buckets
    uint32_t next_in_bucket; // that chain, kNoSub at its end
    uint16_t slot;           // cluster: the channel's slot
    SubState state;
};

constexpr uint32_t kNoSub = 0xffffffffu;

struct PubSubHooks {
    void *ctx;
    void (*subscribed)(void *ctx, uint32_t index);
    void (*message)(void *ctx, uint32_t index, const char *msg, size_t len);
    // A cluster's routing (null otherwise: the one connection): the
    // subscriber connection of slot's master, null while not known.
    Connection *(*route)(void *route_ctx, uint16_t slot);
    void *route_ctx;
    // Redis ended a subscription itself (a sharded channel's slot moved or its
    // node failed over): the routing is out of date. May be null.
    void (*moved)(void *route_ctx);
};

struct PubSub {
    FixedTable<Subscription> subs;
    // Subscriptions are found by channel name through capacity chains (a
    // join, and every message and confirmation), so that a lookup costs the
    // same with 2 or 2,000 channels subscribed.
    uint32_t *buckets;
    char *names; // capacity * name_cap bytes
    uint32_t name_cap;
    Connection *conn; // null with a route hook
    PubSubHooks hooks;
    uint32_t due_head; // subscriptions with leaves due, newest first
    bool sharded;      // SSUBSCRIBE/SUNSUBSCRIBE (set by the owner before any join)
    bool closed;
};

// buckets: capacity chain heads, names: capacity * name_cap bytes; both owned
// by the caller.
void pubsub_init(PubSub *ps, FixedTable<Subscription>::Slot *storage, uint32_t capacity, uint32_t *buckets,
                 char *names, uint32_t name_cap, Connection *conn, const PubSubHooks &hooks);
// The subscription of a channel, or kNoSub.
uint32_t pubsub_find(PubSub *ps, const char *channel, size_t len);
// Join the channel (subscribing when first joined). TABLE_FULL when no slot.
edgelock_status pubsub_join(PubSub *ps, const char *channel, size_t len, uint32_t *index);
void pubsub_leave(PubSub *ps, uint32_t index);
// Leave, but not now: the join is given up at the next pubsub_flush_leaves(),
// which the owner runs at its loop's next turn. A waiter that got its lock is
// answered before an UNSUBSCRIBE is formatted and queued (on the blocking
// face, before the caller's call returns), and a join of the channel before
// the flush keeps the subscription instead of a round of UNSUBSCRIBE and
// SUBSCRIBE. Until then the channel's messages reach no one (its joins are
// gone); true when a flush is now due.
bool pubsub_leave_later(PubSub *ps, uint32_t index);
void pubsub_flush_leaves(PubSub *ps);
bool pubsub_subscribed(PubSub *ps, uint32_t index);
// Connection hooks (ConnHooks), with the PubSub as ctx.
void pubsub_on_ready(void *ps);
void pubsub_on_down(void *ps);
void pubsub_on_reply(void *ps, struct redisReply *reply, void *privdata);
// ConnKeepaliveFn (redis/connection.hpp), with the PubSub as ctx: whether
// conn carries a confirmed subscription, and that channel's name.
bool pubsub_keepalive(void *ps, const Connection *conn, const char **channel, size_t *len);
// ConnChannelFn (redis/connection.hpp), with the PubSub as ctx: whether a
// SUBSCRIBE to channel went out on conn and no unsubscribe reply ended it.
bool pubsub_channel_asked(void *ps, const Connection *conn, const char *channel, size_t len);
// A cluster's subscriber connection is ready, or the slot map changed: make
// every subscription that is down (on its slot's master now).
void pubsub_resubscribe(PubSub *ps);
// A cluster's subscriber connection dropped: its subscriptions are down.
void pubsub_conn_down(PubSub *ps, Connection *conn);

} // namespace edgelock
