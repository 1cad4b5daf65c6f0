// Channel subscriptions on the subscriber connection, one per lock channel,
// shared (refcounted) by every waiter of that lock in this client. A channel
// being unsubscribed keeps its slot until Redis confirms, and is subscribed
// again then if a waiter came back: hiredis 0.14 would otherwise drop the new
// subscription's callback when the old UNSUBSCRIBE confirmation arrives.
#include <hiredis/async.h>
#include <hiredis/hiredis.h>
#include <string.h>

#include "client.hpp"
#include "names.hpp"
#include "resp.hpp"

namespace edgelock
{

static char *channel_of(Client *c, uint32_t index)
{
    return c->channel_names + (size_t)index * channel_len(c->cfg.max_name_len);
}

static void sub_reply_cb(redisAsyncContext *ac, void *r, void *)
{
    auto *conn = static_cast<Connection *>(ac->data);
    if (!conn || conn->ac != ac)
        return; // a closed context flushing its callbacks
    sub_on_reply(conn->client, static_cast<redisReply *>(r));
}

static bool send_sub(Client *c, uint32_t index, const char *verb)
{
    Subscription *s = c->subs.get(index);
    char buf[kMaxNameLenLimit + 256];
    RespCommand rc(buf, sizeof(buf));
    rc.arg(verb);
    rc.arg(channel_of(c, index), s->len);
    const char *out;
    size_t len;
    if (!rc.finish(&out, &len))
        return false;
    return redisAsyncFormattedCommand(c->sub_conn.ac, sub_reply_cb, c, out, len) == REDIS_OK;
}

static void subscribe(Client *c, uint32_t index)
{
    Subscription *s = c->subs.get(index);
    if (conn_ready(&c->sub_conn) && send_sub(c, index, "SUBSCRIBE"))
        s->state = SubState::Subscribing;
    else
        s->state = SubState::Down; // subscribed when the connection is back
}

// The channel a waiter of this lock listens to: the lock's own channel, the
// read-write lock's, or for a fair lock the waiter's private one.
static void waiter_channel(Client *c, Writer &w, uint64_t lock_id, uint64_t owner)
{
    uint32_t name_len;
    const char *name = lock_name(c, lock_id, &name_len);
    edgelock_lock_kind kind = lock_kind(c, lock_id);
    bool rw = kind == EDGELOCK_READ || kind == EDGELOCK_WRITE;
    write_prefix_name(w, rw ? kRwChannelPrefix : kLockChannelPrefix, name, name_len);
    if (kind == EDGELOCK_FAIR) {
        w.bytes(":", 1);
        write_owner(w, c->client_id, owner);
    }
}

edgelock_status sub_join(Client *c, uint64_t lock_id, uint64_t owner, uint32_t *sub_index)
{
    const size_t cap = channel_len(c->cfg.max_name_len);
    char chan[kMaxNameLenLimit + 160];
    Writer w(chan, cap);
    waiter_channel(c, w, lock_id, owner);
    EDGELOCK_ASSERT(!w.overflow);

    for (uint32_t i = 0; i < c->subs.capacity(); i++) {
        Subscription *s = c->subs.get(i);
        if (s && s->len == w.len && memcmp(channel_of(c, i), chan, w.len) == 0) {
            s->refs++;
            if (s->state == SubState::Down)
                subscribe(c, i);
            *sub_index = i;
            return EDGELOCK_OK;
        }
    }
    uint32_t i;
    Subscription *s = c->subs.alloc(&i);
    if (!s)
        return EDGELOCK_ERR_TABLE_FULL;
    memcpy(channel_of(c, i), chan, w.len);
    s->len = (uint32_t)w.len;
    s->refs = 1;
    subscribe(c, i);
    *sub_index = i;
    return EDGELOCK_OK;
}

void sub_leave(Client *c, uint32_t index)
{
    Subscription *s = c->subs.get(index);
    EDGELOCK_ASSERT(s && s->refs > 0);
    if (--s->refs > 0)
        return;
    switch (s->state) {
    case SubState::Subscribed:
        if (conn_ready(&c->sub_conn) && send_sub(c, index, "UNSUBSCRIBE"))
            s->state = SubState::Unsubscribing;
        else
            c->subs.release(index);
        break;
    case SubState::Down: c->subs.release(index); break;
    case SubState::Subscribing: // unsubscribed when the confirmation arrives
    case SubState::Unsubscribing: break;
    }
}

static bool is(const redisReply *e, const char *s)
{
    size_t n = strlen(s);
    return e->type == REDIS_REPLY_STRING && e->len == n && strncasecmp(e->str, s, n) == 0;
}

void sub_on_reply(Client *c, redisReply *reply)
{
    if (!reply || reply->type != REDIS_REPLY_ARRAY || reply->elements < 3 || c->closing)
        return;
    redisReply *chan = reply->element[1];
    if (chan->type != REDIS_REPLY_STRING)
        return;
    uint32_t index = kNoIndex;
    for (uint32_t i = 0; i < c->subs.capacity(); i++) {
        Subscription *s = c->subs.get(i);
        if (s && s->len == chan->len && memcmp(channel_of(c, i), chan->str, chan->len) == 0) {
            index = i;
            break;
        }
    }
    if (index == kNoIndex)
        return;
    Subscription *s = c->subs.get(index);
    redisReply *kind = reply->element[0];
    if (is(kind, "subscribe")) {
        if (s->state != SubState::Subscribing)
            return;
        s->state = SubState::Subscribed;
        if (s->refs == 0) {
            s->refs = 1; // let sub_leave send the UNSUBSCRIBE
            sub_leave(c, index);
            return;
        }
        acquire_on_subscribed(c, index);
    } else if (is(kind, "unsubscribe")) {
        if (s->state != SubState::Unsubscribing)
            return;
        if (s->refs > 0)
            subscribe(c, index);
        else
            c->subs.release(index);
    } else if (is(kind, "message") && s->state == SubState::Subscribed) {
        // Redisson: "0" (unlock) wakes one waiter, "1" (read unlock) wakes all.
        redisReply *msg = reply->element[2];
        bool one = msg->type == REDIS_REPLY_STRING && msg->len == 1 && msg->str[0] == '0';
        acquire_wake(c, index, !one);
    }
}

void sub_resubscribe_all(Client *c)
{
    for (uint32_t i = 0; i < c->subs.capacity() && !c->closing; i++) {
        Subscription *s = c->subs.get(i);
        if (s && s->state == SubState::Down && s->refs > 0)
            subscribe(c, i);
    }
}

void sub_on_down(Client *c)
{
    for (uint32_t i = 0; i < c->subs.capacity(); i++) {
        Subscription *s = c->subs.get(i);
        if (!s)
            continue;
        if (s->refs == 0)
            c->subs.release(i);
        else
            s->state = SubState::Down;
    }
}

void on_sub_conn_ready(Client *c)
{
    sub_resubscribe_all(c);
}
void on_sub_conn_down(Client *c)
{
    sub_on_down(c);
}

} // namespace edgelock
