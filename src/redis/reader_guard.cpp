// SPDX-License-Identifier: BSD-3-Clause
#include "redis/reader_guard.hpp"

#include <ctype.h>
#include <string.h>
#include <strings.h>
#include <hiredis/async.h>
#include <hiredis/hiredis.h>

#include "port.h"
#include "redis/connection.hpp"

namespace edgelock
{

// hiredis's own functions (the same for every reader), and the guarded table;
// both set once per process.
static redisReplyObjectFunctions g_hiredis;
static redisReplyObjectFunctions g_guarded;
static edgelock_port_once g_once = EDGELOCK_PORT_ONCE_INIT;

// A subscribed context takes replies nobody asked for (messages); hiredis
// routes them itself.
static bool subscribed(const Connection *conn)
{
    auto *ac = static_cast<const redisAsyncContext *>(conn->link);
    return conn->pubsub && ac && (ac->c.flags & REDIS_SUBSCRIBED);
}

// Notes why a reply is refused, for the line that logs the connection's end
// (link_hiredis.cpp); true.
static bool refuse(Connection *conn, const char *what)
{
    conn->refused_reply = what;
    return true;
}

// A reply (not an element of one) that no command waits for, where hiredis
// would assert on it.
static bool unrequested(const redisReadTask *task)
{
    if (task->parent)
        return false;
    auto *conn = static_cast<Connection *>(task->privdata);
    if (!conn || conn->replies_due > 0 || subscribed(conn))
        return false;
#if HIREDIS_MAJOR >= 1
    // RESP3 pushes (sharded pub/sub): hiredis hands them to the push callback.
    if (conn->push_replies && task->type == REDIS_REPLY_PUSH)
        return false;
#endif
    return refuse(conn, "a reply no command asked for");
}

#if HIREDIS_MAJOR >= 1
// hiredis 1.x's test of a RESP3 push for a pub/sub reply of its own
// (redisIsSubscribeReply): a first element of at least 7 bytes that, after
// an optional 'p', begins "subscribe", "message" or "unsubscribe" as far as
// it goes (strncasecmp over its length, as hiredis compares). hiredis routes
// such a push as a plain subscriber's reply.
static bool hiredis_pubsub_word(const char *s, size_t len)
{
    if (len < 7)
        return false;
    size_t off = tolower((unsigned char)s[0]) == 'p';
    return strncasecmp(s + off, "subscribe", len - off) == 0 ||
           strncasecmp(s + off, "message", len - off) == 0 ||
           strncasecmp(s + off, "unsubscribe", len - off) == 0;
}
#endif

// The kind of a subscriber's array reply as hiredis routes it: the C string
// hiredis makes of the bytes (up to a NUL), after an optional 'p', is
// "subscribe" or "unsubscribe" in any case.
enum class Kind { Subscribe, Unsubscribe, Other };

static Kind hiredis_kind(const char *s, size_t len)
{
    size_t clen = strnlen(s, len);
    size_t off = clen > 0 && tolower((unsigned char)s[0]) == 'p';
    if (clen - off == 9 && strncasecmp(s + off, "subscribe", 9) == 0)
        return Kind::Subscribe;
    if (clen - off == 11 && strncasecmp(s + off, "unsubscribe", 11) == 0)
        return Kind::Unsubscribe;
    return Kind::Other;
}

// Whether those bytes are exactly what Redis sends, and what edgelock's
// subscriptions read (redis/pubsub.cpp): then both see the same kind.
static bool as_redis_writes_it(Kind kind, const char *s, size_t len)
{
    return kind == Kind::Other || (kind == Kind::Subscribe && len == 9 && memcmp(s, "subscribe", 9) == 0) ||
           (kind == Kind::Unsubscribe && len == 11 && memcmp(s, "unsubscribe", 11) == 0);
}

// Whether a reply will reach hiredis's routing of a RESP2 subscriber's
// replies by their shape (__redisGetSubscribeCallback): the context is
// subscribed and no command of the ordinary list waits for it (while
// subscribed, nothing joins that list).
static bool routed_by_shape(const Connection *conn)
{
    auto *ac = static_cast<const redisAsyncContext *>(conn->link);
    return conn->pubsub && !conn->push_replies && ac && (ac->c.flags & REDIS_SUBSCRIBED) &&
           ac->replies.head == nullptr;
}

// An element of a top-level array that hiredis will route by its shape, or
// of a top-level push, where hiredis trusts the server:
// - an array's first element must be a string (asserted), and not a
//   pattern's (edgelock subscribes to none: hiredis has no callback for it)
//   nor "subscribe" or "unsubscribe" in another case (hiredis reads them
//   as such, edgelock's subscriptions would not);
// - its second must be a string (hiredis 0.14 asserts), and the channel of a
//   "subscribe" one the owner asked for (hiredis asserts it has a callback);
// - an "unsubscribe" one has a third element, an integer (asserted, and
//   read out of bounds without one);
// - a push reaches its owner only if hiredis does not take it for a RESP2
//   subscriber's reply (then it asserts the context is subscribed: a RESP3
//   subscriber's never is, and reads elements a short one lacks).
// `type` is the object's (the task's is the type byte's: "$-1" is a
// string's task and a nil object). True to refuse it.
static bool misshapen(const redisReadTask *t, int type, const char *str, size_t len)
{
    const redisReadTask *parent = t->parent;
    if (!parent || parent->parent)
        return false; // the reply itself, or deeper down
    auto *conn = static_cast<Connection *>(t->privdata);
    auto *array = static_cast<const redisReply *>(parent->obj);
    if (!conn || !array)
        return false;
    const char *why = nullptr;
#if HIREDIS_MAJOR >= 1
    if (array->type == REDIS_REPLY_PUSH && t->idx == 0 && type == REDIS_REPLY_STRING &&
        hiredis_pubsub_word(str, len))
        why = "a RESP2 subscriber's reply as a push";
#endif
    if (!why && array->type == REDIS_REPLY_ARRAY && routed_by_shape(conn)) {
        Kind kind = Kind::Other;
        if (t->idx > 0 && array->element[0]->type == REDIS_REPLY_STRING)
            kind = hiredis_kind(array->element[0]->str, array->element[0]->len);
        if (t->idx == 0 && type != REDIS_REPLY_STRING)
            why = "a subscriber's reply without its kind";
        else if (t->idx == 0 && !as_redis_writes_it(hiredis_kind(str, len), str, len))
            why = "a pattern's subscriber reply, or one in another case";
        else if (t->idx == 1 && type != REDIS_REPLY_STRING)
            why = "a subscriber's reply without its channel";
        else if (t->idx == 1 && kind == Kind::Subscribe &&
                 !(conn->channel_asked && conn->channel_asked(conn->keepalive_ctx, conn, str, len)))
            why = "a subscribe confirmation for a channel not asked for";
        else if (t->idx == 1 && kind == Kind::Unsubscribe && array->elements < 3)
            why = "an unsubscribe reply without its count";
        else if (t->idx == 2 && kind == Kind::Unsubscribe && type != REDIS_REPLY_INTEGER)
            why = "an unsubscribe reply whose count is no integer";
    }
    return why && refuse(conn, why);
}

static void *guarded_string(const redisReadTask *t, char *s, size_t len)
{
    return unrequested(t) || misshapen(t, t->type, s, len) ? nullptr : g_hiredis.createString(t, s, len);
}

// The element count's type differs between hiredis 0.14 (int) and 1.x (size_t).
template <typename Count> static void *guarded_array(const redisReadTask *t, Count elements)
{
    auto *conn = static_cast<Connection *>(t->privdata);
    if ((uint64_t)elements > kMaxReplyElements) {
        static_assert(kMaxReplyElements == 65536, "the text names it");
        if (conn)
            refuse(conn, "an array of more elements than any reply edgelock reads (65536)");
        return nullptr;
    }
#if HIREDIS_MAJOR >= 1
    // Redis pushes only to a RESP3 connection; a push on a RESP2 one would
    // mark its context as one that takes pushes, and hiredis would then stop
    // routing the subscriber's array replies as messages.
    if (t->type == REDIS_REPLY_PUSH && !t->parent && conn && !conn->push_replies && refuse(conn, "a push"))
        return nullptr;
#endif
    // hiredis 0.14 asserts that such a reply has a kind and a channel.
    if (t->type == REDIS_REPLY_ARRAY && !t->parent && conn && routed_by_shape(conn) && elements < 2 &&
        refuse(conn, "a subscriber's reply of fewer than 2 elements"))
        return nullptr;
    return unrequested(t) || misshapen(t, t->type, "", 0) ? nullptr : g_hiredis.createArray(t, elements);
}

static void *guarded_integer(const redisReadTask *t, long long v)
{
    return unrequested(t) || misshapen(t, REDIS_REPLY_INTEGER, "", 0) ? nullptr
                                                                      : g_hiredis.createInteger(t, v);
}

static void *guarded_nil(const redisReadTask *t)
{
    return unrequested(t) || misshapen(t, REDIS_REPLY_NIL, "", 0) ? nullptr : g_hiredis.createNil(t);
}

#if HIREDIS_MAJOR >= 1
static void *guarded_double(const redisReadTask *t, double v, char *s, size_t len)
{
    return unrequested(t) || misshapen(t, REDIS_REPLY_DOUBLE, "", 0) ? nullptr
                                                                     : g_hiredis.createDouble(t, v, s, len);
}

static void *guarded_bool(const redisReadTask *t, int v)
{
    return unrequested(t) || misshapen(t, REDIS_REPLY_BOOL, "", 0) ? nullptr : g_hiredis.createBool(t, v);
}
#endif

static void init_tables()
{
    redisReader *r = redisReaderCreate();
    if (!r)
        return; // g_guarded stays empty: reader_guard_attach leaves readers alone
    g_hiredis = *r->fn;
    redisReaderFree(r);
    g_guarded = g_hiredis;
    g_guarded.createString = guarded_string;
    g_guarded.createArray = guarded_array;
    g_guarded.createInteger = guarded_integer;
    g_guarded.createNil = guarded_nil;
#if HIREDIS_MAJOR >= 1
    if (g_hiredis.createDouble)
        g_guarded.createDouble = guarded_double;
    if (g_hiredis.createBool)
        g_guarded.createBool = guarded_bool;
#endif
}

void reader_guard_attach(redisReader *r, Connection *conn)
{
    edgelock_port_call_once(&g_once, init_tables);
    if (!r || !r->fn || !g_guarded.createArray || r->fn->createArray != g_hiredis.createArray)
        return; // not hiredis's default functions: someone else's reader
    r->fn = &g_guarded;
    r->privdata = conn;
}

} // namespace edgelock
