// SPDX-License-Identifier: BSD-3-Clause
// Subscriptions (pubsub.hpp). A channel being unsubscribed keeps its slot until
// Redis confirms, and is subscribed again then if someone joined meanwhile:
// hiredis 0.14 would otherwise drop the later subscription's callback when the
// old UNSUBSCRIBE confirmation arrives.
#include "redis/pubsub.hpp"

#include <hiredis/hiredis.h>
#include <string.h>

#include "base/name_hash.hpp"
#include "redis/connection.hpp"
#include "base/resp.hpp"
#include "redis/reply.hpp"
#include "redis/slot.hpp"

namespace edgelock
{

static char *name_of(PubSub *ps, uint32_t index)
{
    return ps->names + (size_t)index * ps->name_cap;
}

static uint32_t *bucket_of(PubSub *ps, uint32_t hash)
{
    return &ps->buckets[hash % ps->subs.capacity()];
}

void pubsub_init(PubSub *ps, FixedTable<Subscription>::Slot *storage, uint32_t capacity, uint32_t *buckets,
                 char *names, uint32_t name_cap, Connection *conn, const PubSubHooks &hooks)
{
    EDGELOCK_ASSERT(name_cap <= kMaxChannelLen);
    ps->subs.init(storage, capacity);
    ps->buckets = buckets;
    for (uint32_t i = 0; i < capacity; i++)
        buckets[i] = kNoSub;
    ps->names = names;
    ps->name_cap = name_cap;
    ps->conn = conn;
    ps->hooks = hooks;
    ps->due_head = kNoSub;
    ps->closed = false;
}

uint32_t pubsub_find(PubSub *ps, const char *channel, size_t len)
{
    if (ps->subs.capacity() == 0)
        return kNoSub;
    uint32_t hash = name_hash(channel, len);
    for (uint32_t i = *bucket_of(ps, hash); i != kNoSub;) {
        Subscription *s = ps->subs.get(i);
        if (s->hash == hash && s->len == len && memcmp(name_of(ps, i), channel, len) == 0)
            return i;
        i = s->next_in_bucket;
    }
    return kNoSub;
}

// Out of its chain and the table.
static void release(PubSub *ps, uint32_t index)
{
    Subscription *s = ps->subs.get(index);
    uint32_t *link = bucket_of(ps, s->hash);
    while (*link != index)
        link = &ps->subs.get(*link)->next_in_bucket;
    *link = s->next_in_bucket;
    ps->subs.release(index);
}

// Sharded channels have their own verbs and replies: "ssubscribe",
// "sunsubscribe", "smessage".
static const char *verb_of(const PubSub *ps, bool subscribe)
{
    if (ps->sharded)
        return subscribe ? "SSUBSCRIBE" : "SUNSUBSCRIBE";
    return subscribe ? "SUBSCRIBE" : "UNSUBSCRIBE";
}

static bool kind_is(const redisReply *kind, const char *plain)
{
    return reply_text_is(kind, plain) ||
           (kind->type == REDIS_REPLY_STRING && kind->len > 1 && kind->str[0] == 's' &&
            strlen(plain) == kind->len - 1 && memcmp(kind->str + 1, plain, kind->len - 1) == 0);
}

static Connection *route(PubSub *ps, const Subscription *s)
{
    return ps->hooks.route ? ps->hooks.route(ps->hooks.route_ctx, s->slot) : ps->conn;
}

static bool send_sub(PubSub *ps, uint32_t index, const char *verb)
{
    Subscription *s = ps->subs.get(index);
    char buf[kMaxChannelLen + 64];
    RespCommand rc(buf, sizeof(buf));
    rc.arg(verb);
    rc.arg(name_of(ps, index), s->len);
    const char *out;
    size_t len;
    // Subscriber replies carry no privdata: they are matched by channel name.
    return rc.finish(&out, &len) && conn_send(s->conn, out, len, nullptr);
}

static void subscribe(PubSub *ps, uint32_t index)
{
    Subscription *s = ps->subs.get(index);
    s->conn = route(ps, s);
    if (s->conn && conn_ready(s->conn) && send_sub(ps, index, verb_of(ps, true))) {
        s->state = SubState::Subscribing;
        return;
    }
    s->state = SubState::Down; // subscribed when the connection is back
    s->conn = nullptr;
}

edgelock_status pubsub_join(PubSub *ps, const char *channel, size_t len, uint32_t *index)
{
    EDGELOCK_ASSERT(len <= ps->name_cap);
    uint32_t i = pubsub_find(ps, channel, len);
    if (i != kNoSub) {
        Subscription *s = ps->subs.get(i);
        s->refs++;
        if (s->state == SubState::Down)
            subscribe(ps, i);
        *index = i;
        return EDGELOCK_OK;
    }
    Subscription *s = ps->subs.alloc(&i);
    if (!s)
        return EDGELOCK_ERR_TABLE_FULL;
    memcpy(name_of(ps, i), channel, len);
    s->len = (uint32_t)len;
    s->hash = name_hash(channel, len);
    uint32_t *bucket = bucket_of(ps, s->hash);
    s->next_in_bucket = *bucket;
    *bucket = i;
    s->refs = 1;
    s->leaves_due = 0;
    s->next_due = kNoSub;
    s->slot = ps->hooks.route ? key_hash_slot(channel, len) : 0;
    subscribe(ps, i);
    *index = i;
    return EDGELOCK_OK;
}

void pubsub_leave(PubSub *ps, uint32_t index)
{
    Subscription *s = ps->subs.get(index);
    EDGELOCK_ASSERT(s && s->refs > 0);
    if (--s->refs > 0)
        return;
    switch (s->state) {
    case SubState::Subscribed:
        if (conn_ready(s->conn) && send_sub(ps, index, verb_of(ps, false)))
            s->state = SubState::Unsubscribing;
        else
            release(ps, index);
        break;
    case SubState::Down: release(ps, index); break;
    case SubState::Subscribing: // unsubscribed when the confirmation arrives
    case SubState::Unsubscribing: break;
    }
}

bool pubsub_leave_later(PubSub *ps, uint32_t index)
{
    Subscription *s = ps->subs.get(index);
    EDGELOCK_ASSERT(s && s->refs > s->leaves_due);
    if (s->leaves_due++ > 0)
        return false; // on the list already
    s->next_due = ps->due_head;
    ps->due_head = index;
    return true;
}

void pubsub_flush_leaves(PubSub *ps)
{
    // Unlinked before leaving: a leave may release the slot.
    while (ps->due_head != kNoSub && !ps->closed) {
        uint32_t index = ps->due_head;
        Subscription *s = ps->subs.get(index);
        ps->due_head = s->next_due;
        uint32_t n = s->leaves_due;
        s->leaves_due = 0;
        s->next_due = kNoSub;
        while (n-- > 0)
            pubsub_leave(ps, index);
    }
}

bool pubsub_subscribed(PubSub *ps, uint32_t index)
{
    return ps->subs.get(index)->state == SubState::Subscribed;
}

void pubsub_on_reply(void *arg, redisReply *reply, void *)
{
    auto *ps = static_cast<PubSub *>(arg);
#ifdef REDIS_REPLY_PUSH
    bool push = reply && reply->type == REDIS_REPLY_PUSH; // RESP3 (sharded)
#else
    bool push = false;
#endif
    if (!reply || (reply->type != REDIS_REPLY_ARRAY && !push) || reply->elements < 3 || ps->closed)
        return;
    redisReply *chan = reply->element[1];
    if (chan->type != REDIS_REPLY_STRING)
        return;
    uint32_t index = pubsub_find(ps, chan->str, chan->len);
    if (index == kNoSub)
        return;
    Subscription *s = ps->subs.get(index);
    redisReply *kind = reply->element[0];
    if (kind_is(kind, "subscribe")) {
        if (s->state != SubState::Subscribing)
            return;
        s->state = SubState::Subscribed;
        if (s->refs == 0) {
            s->refs = 1; // let pubsub_leave send the UNSUBSCRIBE
            pubsub_leave(ps, index);
            return;
        }
        ps->hooks.subscribed(ps->hooks.ctx, index);
    } else if (kind_is(kind, "unsubscribe")) {
        if (s->state == SubState::Subscribed && s->refs > 0) {
            // Not asked for: Redis ended it (the slot moved, the node is no
            // longer its master). Down until the routing is fresh again.
            s->state = SubState::Down;
            s->conn = nullptr;
            if (ps->hooks.moved)
                ps->hooks.moved(ps->hooks.route_ctx);
            return;
        }
        if (s->state == SubState::Subscribing) {
            // Not asked for either, before the confirmation: hiredis may have
            // dropped the channel's callback with it. Asked for again, so
            // that hiredis and pubsub_channel_asked agree.
            subscribe(ps, index);
            return;
        }
        if (s->state != SubState::Unsubscribing)
            return;
        if (s->refs > 0)
            subscribe(ps, index);
        else
            release(ps, index);
    } else if (kind_is(kind, "message") && s->state == SubState::Subscribed) {
        redisReply *msg = reply->element[2];
        if (msg->type == REDIS_REPLY_STRING)
            ps->hooks.message(ps->hooks.ctx, index, msg->str, msg->len);
        else
            ps->hooks.message(ps->hooks.ctx, index, "", 0);
    }
}

static_assert(kMaxChannelLen <= kConnPingArgMax, "a keepalive PING names any channel");

bool pubsub_keepalive(void *arg, const Connection *conn, const char **channel, size_t *len)
{
    auto *ps = static_cast<PubSub *>(arg);
    for (uint32_t i = 0; i < ps->subs.end() && !ps->closed; i++) {
        Subscription *s = ps->subs.get(i);
        if (s && s->conn == conn && s->state == SubState::Subscribed) {
            *channel = name_of(ps, i);
            *len = s->len;
            return true;
        }
    }
    return false;
}

bool pubsub_channel_asked(void *arg, const Connection *conn, const char *channel, size_t len)
{
    auto *ps = static_cast<PubSub *>(arg);
    uint32_t index = ps->closed ? kNoSub : pubsub_find(ps, channel, len);
    if (index == kNoSub)
        return false;
    const Subscription *s = ps->subs.get(index);
    return s->conn == conn && s->state != SubState::Down;
}

void pubsub_on_ready(void *arg)
{
    pubsub_resubscribe(static_cast<PubSub *>(arg));
}

void pubsub_resubscribe(PubSub *ps)
{
    for (uint32_t i = 0; i < ps->subs.end() && !ps->closed; i++) {
        Subscription *s = ps->subs.get(i);
        if (s && s->state == SubState::Down && s->refs > 0)
            subscribe(ps, i);
    }
}

void pubsub_on_down(void *arg)
{
    pubsub_conn_down(static_cast<PubSub *>(arg), nullptr);
}

void pubsub_conn_down(PubSub *ps, Connection *conn)
{
    for (uint32_t i = 0; i < ps->subs.end(); i++) {
        Subscription *s = ps->subs.get(i);
        if (!s || (conn && s->conn != conn))
            continue;
        if (s->refs == 0)
            release(ps, i);
        else {
            s->state = SubState::Down;
            s->conn = nullptr;
        }
    }
}

} // namespace edgelock
