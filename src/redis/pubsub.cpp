// Subscriptions (pubsub.hpp). A channel being unsubscribed keeps its slot until
// Redis confirms, and is subscribed again then if someone joined meanwhile:
// hiredis 0.14 would otherwise drop the later subscription's callback when the
// old UNSUBSCRIBE confirmation arrives.
#include "redis/pubsub.hpp"

#include <hiredis/hiredis.h>
#include <string.h>

#include "redis/connection.hpp"
#include "base/resp.hpp"
#include "redis/reply.hpp"

namespace edgelock
{

static char *name_of(PubSub *ps, uint32_t index)
{
    return ps->names + (size_t)index * ps->name_cap;
}

void pubsub_init(PubSub *ps, FixedTable<Subscription>::Slot *storage, uint32_t capacity, char *names,
                 uint32_t name_cap, Connection *conn, const PubSubHooks &hooks)
{
    EDGELOCK_ASSERT(name_cap <= kMaxChannelLen);
    ps->subs.init(storage, capacity);
    ps->names = names;
    ps->name_cap = name_cap;
    ps->conn = conn;
    ps->hooks = hooks;
    ps->closed = false;
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
    return rc.finish(&out, &len) && conn_send(ps->conn, out, len, nullptr);
}

static void subscribe(PubSub *ps, uint32_t index)
{
    Subscription *s = ps->subs.get(index);
    if (conn_ready(ps->conn) && send_sub(ps, index, "SUBSCRIBE"))
        s->state = SubState::Subscribing;
    else
        s->state = SubState::Down; // subscribed when the connection is back
}

edgelock_status pubsub_join(PubSub *ps, const char *channel, size_t len, uint32_t *index)
{
    EDGELOCK_ASSERT(len <= ps->name_cap);
    for (uint32_t i = 0; i < ps->subs.capacity(); i++) {
        Subscription *s = ps->subs.get(i);
        if (s && s->len == len && memcmp(name_of(ps, i), channel, len) == 0) {
            s->refs++;
            if (s->state == SubState::Down)
                subscribe(ps, i);
            *index = i;
            return EDGELOCK_OK;
        }
    }
    uint32_t i;
    Subscription *s = ps->subs.alloc(&i);
    if (!s)
        return EDGELOCK_ERR_TABLE_FULL;
    memcpy(name_of(ps, i), channel, len);
    s->len = (uint32_t)len;
    s->refs = 1;
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
        if (conn_ready(ps->conn) && send_sub(ps, index, "UNSUBSCRIBE"))
            s->state = SubState::Unsubscribing;
        else
            ps->subs.release(index);
        break;
    case SubState::Down: ps->subs.release(index); break;
    case SubState::Subscribing: // unsubscribed when the confirmation arrives
    case SubState::Unsubscribing: break;
    }
}

bool pubsub_subscribed(PubSub *ps, uint32_t index)
{
    return ps->subs.get(index)->state == SubState::Subscribed;
}

void pubsub_on_reply(void *arg, redisReply *reply, void *)
{
    auto *ps = static_cast<PubSub *>(arg);
    if (!reply || reply->type != REDIS_REPLY_ARRAY || reply->elements < 3 || ps->closed)
        return;
    redisReply *chan = reply->element[1];
    if (chan->type != REDIS_REPLY_STRING)
        return;
    uint32_t index = kNoIndex;
    for (uint32_t i = 0; i < ps->subs.capacity(); i++) {
        Subscription *s = ps->subs.get(i);
        if (s && s->len == chan->len && memcmp(name_of(ps, i), chan->str, chan->len) == 0) {
            index = i;
            break;
        }
    }
    if (index == kNoIndex)
        return;
    Subscription *s = ps->subs.get(index);
    redisReply *kind = reply->element[0];
    if (reply_text_is(kind, "subscribe")) {
        if (s->state != SubState::Subscribing)
            return;
        s->state = SubState::Subscribed;
        if (s->refs == 0) {
            s->refs = 1; // let pubsub_leave send the UNSUBSCRIBE
            pubsub_leave(ps, index);
            return;
        }
        ps->hooks.subscribed(ps->hooks.ctx, index);
    } else if (reply_text_is(kind, "unsubscribe")) {
        if (s->state != SubState::Unsubscribing)
            return;
        if (s->refs > 0)
            subscribe(ps, index);
        else
            ps->subs.release(index);
    } else if (reply_text_is(kind, "message") && s->state == SubState::Subscribed) {
        redisReply *msg = reply->element[2];
        if (msg->type == REDIS_REPLY_STRING)
            ps->hooks.message(ps->hooks.ctx, index, msg->str, msg->len);
        else
            ps->hooks.message(ps->hooks.ctx, index, "", 0);
    }
}

void pubsub_on_ready(void *arg)
{
    auto *ps = static_cast<PubSub *>(arg);
    for (uint32_t i = 0; i < ps->subs.capacity() && !ps->closed; i++) {
        Subscription *s = ps->subs.get(i);
        if (s && s->state == SubState::Down && s->refs > 0)
            subscribe(ps, i);
    }
}

void pubsub_on_down(void *arg)
{
    auto *ps = static_cast<PubSub *>(arg);
    for (uint32_t i = 0; i < ps->subs.capacity(); i++) {
        Subscription *s = ps->subs.get(i);
        if (!s)
            continue;
        if (s->refs == 0)
            ps->subs.release(i);
        else
            s->state = SubState::Down;
    }
}

} // namespace edgelock
