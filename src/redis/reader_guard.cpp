// SPDX-License-Identifier: BSD-3-Clause
#include "redis/reader_guard.hpp"
#include "base/log.hpp"

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
    log_to(conn->loop->log, EDGELOCK_LOG_WARN,
           "%s connection: Redis sent a reply no command asked for; dropping it", conn->role);
    return true;
}

static void *guarded_string(const redisReadTask *t, char *s, size_t len)
{
    return unrequested(t) ? nullptr : g_hiredis.createString(t, s, len);
}

// The element count's type differs between hiredis 0.14 (int) and 1.x (size_t).
template <typename Count> static void *guarded_array(const redisReadTask *t, Count elements)
{
    if ((uint64_t)elements > kMaxReplyElements) {
        auto *conn = static_cast<Connection *>(t->privdata);
        log_to(conn ? conn->loop->log : nullptr, EDGELOCK_LOG_WARN,
               "a reply announced %llu elements (most allowed: %llu); "
               "dropping the connection",
               (unsigned long long)elements, (unsigned long long)kMaxReplyElements);
        return nullptr;
    }
    return unrequested(t) ? nullptr : g_hiredis.createArray(t, elements);
}

static void *guarded_integer(const redisReadTask *t, long long v)
{
    return unrequested(t) ? nullptr : g_hiredis.createInteger(t, v);
}

static void *guarded_nil(const redisReadTask *t)
{
    return unrequested(t) ? nullptr : g_hiredis.createNil(t);
}

#if HIREDIS_MAJOR >= 1
static void *guarded_double(const redisReadTask *t, double v, char *s, size_t len)
{
    return unrequested(t) ? nullptr : g_hiredis.createDouble(t, v, s, len);
}

static void *guarded_bool(const redisReadTask *t, int v)
{
    return unrequested(t) ? nullptr : g_hiredis.createBool(t, v);
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
