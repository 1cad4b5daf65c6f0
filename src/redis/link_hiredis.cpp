// SPDX-License-Identifier: BSD-3-Clause
// The hiredis link: one redisAsyncContext on the loop's event_base.
//
// Ownership rule: conn->link is cleared *before* redisAsyncFree(), so the
// connect and disconnect callbacks hiredis runs from inside the free recognise
// a context that is no longer current and do nothing; pending command callbacks
// still run (with a NULL reply) so their commands complete.
#include <hiredis/async.h>
#include <stdio.h>
#include <string.h>
#include <hiredis/hiredis.h>
#if HIREDIS_MAJOR >= 1
#include <hiredis/sds.h>
#endif

#include "event/loop.hpp"
#include "base/log.hpp"
#include "port.h"
#include "redis/connection.hpp"
#include "redis/link.hpp"
#include "redis/link_events.hpp"
#include "redis/reader_guard.hpp"
#include "redis/tls.hpp"

namespace edgelock
{

static Connection *current(const redisAsyncContext *ac)
{
    auto *conn = static_cast<Connection *>(ac->data);
    return conn && conn->link == ac ? conn : nullptr;
}

static void let_reads_wait(Connection *conn, const redisAsyncContext *ac);

static void connect_cb(const redisAsyncContext *ac, int status)
{
    Connection *conn = current(ac);
    if (!conn)
        return;
    if (status != REDIS_OK) {
        conn->link = nullptr; // hiredis frees the context after this callback
        conn->tls_ssl = nullptr;
    } else
        let_reads_wait(conn, ac);
    conn_link_connected(conn, status == REDIS_OK, ac->errstr);
}

static void disconnect_cb(const redisAsyncContext *ac, int)
{
    Connection *conn = current(ac);
    if (!conn)
        return;
    // A TLS attempt that dropped before its handshake finished, or whose
    // server did not verify, failed in TLS, not in the network.
    char tls_why[160];
    edgelock_status why = conn->tls_ssl && tls_failed(conn->tls_ssl, ac->errstr, tls_why, sizeof(tls_why))
                              ? EDGELOCK_ERR_TLS
                              : EDGELOCK_ERR_CONNECTION;
    // hiredis says strerror(errno) for OpenSSL's failures too ("Success"),
    // and "Out of memory" when the reader guard refused a reply.
    char refused[128];
    const char *err = ac->errstr;
    if (why == EDGELOCK_ERR_TLS)
        err = tls_why;
    else if (conn->refused_reply && ac->err == REDIS_ERR_OOM) {
        snprintf(refused, sizeof(refused), "Redis sent %s", conn->refused_reply);
        err = refused;
    } else if (conn->tls_ssl && tls_io_error_says_nothing(ac->errstr))
        err = "a TLS error";
    conn->link = nullptr;
    conn->tls_ssl = nullptr; // freed with the context, after this callback
    conn_link_down(conn, why, err);
}

static void reply_cb(redisAsyncContext *ac, void *reply, void *privdata)
{
    auto *conn = static_cast<Connection *>(ac->data);
    if (!conn)
        return;
    if (conn->link == ac && conn->replies_due > 0)
        conn->replies_due--;
    conn_link_reply(conn, static_cast<redisReply *>(reply), privdata);
}

#if HIREDIS_MAJOR >= 1
// RESP3 pushes of a push_replies connection: SSUBSCRIBE's confirmations and
// its messages, which hiredis does not match to any command.
static void push_cb(redisAsyncContext *ac, void *reply)
{
    Connection *conn = current(ac);
    if (conn && reply)
        conn_link_reply(conn, static_cast<redisReply *>(reply), nullptr);
}
constexpr bool kPushReplies = true;

// hiredis writes with a plain send(): a write to a socket whose peer closed it
// raises SIGPIPE, whose default action ends the process. hiredis 1.x writes
// through its context's function table, so a plain (not TLS) connection gets
// one whose write cannot raise it, and a blocking client then needs no guard
// around its calls (three system calls each). One table for the process: a
// copy of hiredis's own (every plain context shares one) with the write
// replaced, made on first use.
static ssize_t write_quietly(redisContext *c)
{
    long n = edgelock_port_send_quiet(c->fd, c->obuf, sdslen(c->obuf), c->errstr, sizeof(c->errstr));
    if (n < 0)
        c->err = REDIS_ERR_IO; // errstr filled in: what hiredis's own write sets
    return (ssize_t)n;
}

// Reads never wait either, but for the one the blocking face's leader asks
// for (read_waiting): on a socket made blocking for it, with a receive
// timeout of a clock tick, the leader sleeps in this recv until its reply
// comes, where a pass of the loop costs libevent's timerfd_settime and an
// epoll_wait before the same recv (BENCHMARKS.md, fourteenth pass). What
// hiredis's own read says, it says too.
static ssize_t read_quietly(redisContext *c, char *buf, size_t cap)
{
    // Only asynchronous contexts get this table; c is the first member of one.
    Connection *conn = current(reinterpret_cast<const redisAsyncContext *>(c));
    int wait = conn && conn->read_waits_now ? 1 : 0;
    long n = edgelock_port_recv(c->fd, buf, cap, wait, c->errstr, sizeof(c->errstr));
    if (wait)
        conn->read_wait_empty = n == 0;
    if (n == EDGELOCK_PORT_RECV_CLOSED) {
        c->err = REDIS_ERR_EOF;
        snprintf(c->errstr, sizeof(c->errstr), "%s", "Server closed the connection");
        return -1;
    }
    if (n < 0)
        c->err = REDIS_ERR_IO; // errstr filled in
    return (ssize_t)n;
}

static const redisContextFuncs *hiredis_funcs; // hiredis's table (atomic access)
static redisContextFuncs quiet_funcs;
static edgelock_port_once quiet_once = EDGELOCK_PORT_ONCE_INIT;

static void make_quiet_funcs()
{
    quiet_funcs = *__atomic_load_n(&hiredis_funcs, __ATOMIC_ACQUIRE);
    quiet_funcs.write = write_quietly;
    quiet_funcs.read = read_quietly;
}

static void write_quietly_on(redisContext *c)
{
    const redisContextFuncs *none = nullptr;
    __atomic_compare_exchange_n(&hiredis_funcs, &none, c->funcs, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
    edgelock_port_call_once(&quiet_once, make_quiet_funcs);
    if (__atomic_load_n(&hiredis_funcs, __ATOMIC_ACQUIRE) == c->funcs)
        c->funcs = &quiet_funcs;
}

bool link_writes_quietly(bool tls)
{
    return !tls;
}

// A read that waits stays within a clock tick (the kernel rounds the receive
// timeout up to one): what else the loop has to do waits no longer.
static const uint32_t kReadWaitMs = 1;

// Connected: a plain link the blocking face's leader reads (leader_reads)
// gets a socket whose reads can wait.
static void let_reads_wait(Connection *conn, const redisAsyncContext *ac)
{
    conn->reads_may_wait = conn->leader_reads && !conn->tls && ac->c.funcs == &quiet_funcs &&
                           edgelock_port_socket_reads_may_wait(ac->c.fd, kReadWaitMs) == 0;
}

static bool read_waiting(Connection *conn)
{
    auto *ac = static_cast<redisAsyncContext *>(conn->link);
    if (!ac || !conn->reads_may_wait || conn->replies_due == 0 || sdslen(ac->c.obuf) > 0 ||
        (ac->c.flags & (REDIS_CONNECTED | REDIS_IN_CALLBACK)) != REDIS_CONNECTED)
        return false;
    conn->read_waits_now = true;
    conn->read_wait_empty = false;
    redisAsyncHandleRead(ac); // replies and their callbacks, or the link dropped (ac freed)
    conn->read_waits_now = false;
    return !conn->read_wait_empty;
}
#else
constexpr bool kPushReplies = false;

static void let_reads_wait(Connection *conn, const redisAsyncContext *)
{
    conn->reads_may_wait = false; // no function table to read through before hiredis 1.0
}

static bool read_waiting(Connection *)
{
    return false;
}

bool link_writes_quietly(bool)
{
    return false; // no function table to change before hiredis 1.0
}
#endif

static bool open(Connection *conn)
{
    redisAsyncContext *ac = conn->url->unix_socket ? redisAsyncConnectUnix(conn->url->path)
                                                   : redisAsyncConnect(conn->host, conn->port);
    if (!ac || ac->err) {
        log_to(conn->loop->log, EDGELOCK_LOG_WARN, "%s connect failed: %s", conn->role,
               ac ? ac->errstr : "out of memory");
        if (ac)
            redisAsyncFree(ac);
        return false;
    }
    ac->data = conn;
    conn->link = ac;
    conn->replies_due = 0;
    conn->reads_may_wait = false;
    conn->read_waits_now = false;
    conn->read_wait_empty = false;
    conn->refused_reply = nullptr;
    reader_guard_attach(ac->c.reader, conn);
    conn->tls_ssl = nullptr;
#if HIREDIS_MAJOR >= 1
    if (!conn->tls)
        write_quietly_on(&ac->c);
#endif
    if (conn->tls) {
        // Right after connecting starts: the handshake runs as the socket
        // becomes ready, before any command.
        // The name verified: the configured one, else the host this attempt
        // goes to (a sentinel, or the master a sentinel named).
        const char *name = conn->tls_name ? conn->tls_name : conn->host;
        edgelock_status why = EDGELOCK_ERR_TLS;
        conn->tls_ssl = tls_attach(conn->tls, &ac->c, name, conn->tls_verify, conn->loop->log, &why);
        if (!conn->tls_ssl) {
            // A refused connection is CONNECTION, and ends a refusal (AUTH) seen before.
            conn->down_status = why;
            conn->link = nullptr;
            redisAsyncFree(ac);
            return false;
        }
    }
    bool ok =
        link_events_attach(ac, conn->loop->base, conn->flush_at_pass_end && !conn->tls, conn->tls != nullptr);
    ok = ok && redisAsyncSetConnectCallback(ac, connect_cb) == REDIS_OK;
    ok = ok && redisAsyncSetDisconnectCallback(ac, disconnect_cb) == REDIS_OK;
#if HIREDIS_MAJOR >= 1
    if (conn->push_replies)
        redisAsyncSetPushCallback(ac, push_cb);
#endif
    if (!ok) {
        conn->link = nullptr;
        conn->tls_ssl = nullptr;
        redisAsyncFree(ac);
    }
    return ok;
}

// Whether a command sent now may be written now rather than at the loop's
// next turn: so a blocked caller's poll waits for the reply only, and a woken
// waiter's retry leaves with the message that woke it.
static bool writes_now(const Connection *conn, const redisAsyncContext *ac, bool urgent)
{
    if (!conn->write_at_once && !urgent)
        return false;
    // TLS keeps its own want-read/want-write state in hiredis_ssl's async
    // handlers: only they write a TLS link.
    if (conn->tls || (ac->c.flags & REDIS_CONNECTED) == 0)
        return false;
    // Sent from inside one of this link's reply callbacks (the unlock latch's
    // DEL after the release reply): nobody polls for it now; it goes with the
    // next command, in one write.
    return (ac->c.flags & REDIS_IN_CALLBACK) == 0;
}

static bool send(Connection *conn, const char *buf, size_t len, void *privdata, bool urgent)
{
    auto *ac = static_cast<redisAsyncContext *>(conn->link);
    if (ac && conn->push_replies && !privdata) {
        // Its answers come as pushes (push_cb): no reply callback to queue,
        // or the next real reply would be matched to it.
        if (redisAppendFormattedCommand(&ac->c, buf, len) != REDIS_OK)
            return false;
        if (ac->ev.addWrite)
            ac->ev.addWrite(ac->ev.data);
        return true;
    }
    if (!ac)
        return false;
    // Written now: hiredis is kept from registering the write event for it
    // (two epoll_ctl calls on a loop without libevent's changelist, and two
    // more to remove it after the write); link_events_write() registers it
    // only if the socket does not take it all.
    bool now = writes_now(conn, ac, urgent);
    void (*add_write)(void *) = ac->ev.addWrite;
    if (now)
        ac->ev.addWrite = nullptr;
    int rc = redisAsyncFormattedCommand(ac, reply_cb, privdata, buf, len);
    ac->ev.addWrite = add_write;
    if (rc != REDIS_OK)
        return false;
    conn->replies_due++;
    if (now)
        link_events_write(ac);
    return true;
}

static void close(Connection *conn)
{
    auto *ac = static_cast<redisAsyncContext *>(conn->link);
    conn->link = nullptr;
    conn->tls_ssl = nullptr;
    if (ac)
        redisAsyncFree(ac);
}

static void flush(Connection *conn)
{
    auto *ac = static_cast<redisAsyncContext *>(conn->link);
    if (!ac)
        return;
    // The socket is non-blocking: a few rounds write a small buffer whole; a
    // full socket buffer is left to the close (best effort by design).
    int done = 0;
    if (conn->tls)
        tls_clear_thread_errors(); // as before each TLS write (link_events.cpp)
    for (int i = 0; i < 16 && !done; i++)
        if (redisBufferWrite(&ac->c, &done) != REDIS_OK)
            break;
}

// On a subscribed RESP2 connection Redis answers PING with ["pong", arg],
// which hiredis 1.1 and later hand to the PING's callback (LinkOps).
#if HIREDIS_MAJOR > 1 || (HIREDIS_MAJOR == 1 && HIREDIS_MINOR >= 1)
constexpr bool kHearsSubscribedPing = true;
#else
constexpr bool kHearsSubscribedPing = false;
#endif

const LinkOps kHiredisLink = {open, send, close, flush, read_waiting, kPushReplies, kHearsSubscribedPing};

} // namespace edgelock
