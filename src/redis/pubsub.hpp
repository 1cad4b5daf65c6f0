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
    uint32_t refs; // joins not yet left
    uint32_t len;  // channel name bytes (in the name arena)
    SubState state;
};

struct PubSubHooks {
    void *ctx;
    void (*subscribed)(void *ctx, uint32_t index);
    void (*message)(void *ctx, uint32_t index, const char *msg, size_t len);
};

struct PubSub {
    FixedTable<Subscription> subs;
    char *names; // capacity * name_cap bytes
    uint32_t name_cap;
    Connection *conn;
    PubSubHooks hooks;
    bool closed;
};

void pubsub_init(PubSub *ps, FixedTable<Subscription>::Slot *storage, uint32_t capacity, char *names,
                 uint32_t name_cap, Connection *conn, const PubSubHooks &hooks);
// Join the channel (subscribing when first joined). TABLE_FULL when no slot.
edgelock_status pubsub_join(PubSub *ps, const char *channel, size_t len, uint32_t *index);
void pubsub_leave(PubSub *ps, uint32_t index);
bool pubsub_subscribed(PubSub *ps, uint32_t index);
// Connection hooks (ConnHooks), with the PubSub as ctx.
void pubsub_on_ready(void *ps);
void pubsub_on_down(void *ps);
void pubsub_on_reply(void *ps, struct redisReply *reply, void *privdata);

} // namespace edgelock
