// One hiredis async connection on the client's event_base: connect, AUTH, SELECT
// (and SCRIPT LOAD on the command connection), a connect timeout, and reconnect
// with capped, jittered backoff. hiredis 0.14 has no timeouts of its own.
//
// Ownership rule: conn->ac is cleared *before* redisAsyncFree(), so the connect
// and disconnect callbacks hiredis runs from inside the free recognise a context
// that is no longer current and do nothing; pending command callbacks still run
// (with a NULL reply) and complete their commands with EDGELOCK_ERR_CONNECTION.
#include <event2/event.h>
#include <hiredis/adapters/libevent.h>
#include <hiredis/async.h>
#include <hiredis/hiredis.h>
#include <string.h>

#include "client.hpp"

namespace edgelock
{

static void went_down(Connection *conn);

static const char *role(const Connection *conn)
{
    return conn->subscriber ? "subscriber" : "command";
}

static Connection *current(const redisAsyncContext *ac)
{
    auto *conn = static_cast<Connection *>(ac->data);
    return conn && conn->ac == ac ? conn : nullptr;
}

static void schedule_reconnect(Connection *conn)
{
    const edgelock_config &cfg = conn->client->cfg;
    uint32_t jitter = 0;
    edgelock_port_random(&jitter, sizeof(jitter));
    // Up to a quarter of the delay as jitter, so gateways restarted together
    // do not reconnect in lockstep.
    uint64_t delay = conn->backoff_ms + jitter % (conn->backoff_ms / 4 + 1);
    timer_arm(conn->timer, delay);
    uint64_t next = (uint64_t)conn->backoff_ms * 2;
    conn->backoff_ms = (uint32_t)(next > cfg.reconnect_max_ms ? cfg.reconnect_max_ms : next);
}

static void maybe_ready(Connection *conn, bool tcp_up)
{
    if (conn->state != ConnState::Connecting || !tcp_up || conn->setup_pending)
        return;
    conn->state = ConnState::Ready;
    conn->down_since_ms = 0;
    conn->backoff_ms = conn->client->cfg.reconnect_min_ms;
    event_del(conn->timer);
    edgelock_port_log(EDGELOCK_LOG_INFO, "%s connection ready", role(conn));
    if (conn->subscriber)
        on_sub_conn_ready(conn->client);
    else
        on_command_conn_ready(conn->client);
}

static void connect_cb(const redisAsyncContext *ac, int status)
{
    Connection *conn = current(ac);
    if (!conn)
        return;
    if (status != REDIS_OK) {
        edgelock_port_log(EDGELOCK_LOG_WARN, "%s connect failed: %s", role(conn), ac->errstr);
        conn->ac = nullptr; // hiredis frees the context after this callback
        went_down(conn);
        return;
    }
    conn->tcp_up = true;
    maybe_ready(conn, true);
}

static void disconnect_cb(const redisAsyncContext *ac, int)
{
    Connection *conn = current(ac);
    if (!conn)
        return;
    edgelock_port_log(EDGELOCK_LOG_WARN, "%s connection lost: %s", role(conn), ac->errstr);
    conn->ac = nullptr;
    went_down(conn);
}

static void setup_reply_cb(redisAsyncContext *ac, void *r, void *)
{
    Connection *conn = current(ac);
    auto *reply = static_cast<redisReply *>(r);
    if (!conn || !reply)
        return; // a drop is handled where it is noticed
    if (reply->type == REDIS_REPLY_ERROR) {
        // Wrong password, unknown ACL user, db out of range: retrying soon will
        // not help the operator, but backoff keeps it cheap.
        edgelock_port_log(EDGELOCK_LOG_ERROR, "%s connection setup refused: %s", role(conn), reply->str);
        conn_drop(conn);
        return;
    }
    conn->setup_pending--;
    maybe_ready(conn, conn->tcp_up);
}

static void conn_timer_cb(evutil_socket_t, short, void *arg)
{
    auto *conn = static_cast<Connection *>(arg);
    if (conn->state == ConnState::Connecting) {
        edgelock_port_log(EDGELOCK_LOG_WARN, "%s connect timed out", role(conn));
        conn_drop(conn);
    } else if (conn->state == ConnState::Down && !conn->client->closing) {
        conn_start(conn);
    }
}

void conn_init(Client *c, Connection *conn, bool subscriber)
{
    conn->client = c;
    conn->subscriber = subscriber;
    conn->state = ConnState::Down;
    conn->backoff_ms = c->cfg.reconnect_min_ms;
    conn->timer = event_new(c->base, -1, 0, conn_timer_cb, conn);
    if (conn->timer)
        c->table_bytes += event_get_struct_event_size();
}

static bool send_setup(Connection *conn, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = redisvAsyncCommand(conn->ac, setup_reply_cb, nullptr, fmt, ap);
    va_end(ap);
    if (rc != REDIS_OK)
        return false;
    conn->setup_pending++;
    return true;
}

void conn_start(Connection *conn)
{
    Client *c = conn->client;
    if (c->closing || conn->state != ConnState::Down)
        return;
    redisAsyncContext *ac = redisAsyncConnect(c->url.host, c->url.port);
    if (!ac || ac->err) {
        edgelock_port_log(EDGELOCK_LOG_WARN, "%s connect failed: %s", role(conn),
                          ac ? ac->errstr : "out of memory");
        if (ac)
            redisAsyncFree(ac);
        schedule_reconnect(conn);
        return;
    }
    ac->data = conn;
    conn->ac = ac;
    conn->state = ConnState::Connecting;
    conn->tcp_up = false;
    conn->setup_pending = 0;
    bool ok = redisLibeventAttach(ac, c->base) == REDIS_OK;
    ok = ok && redisAsyncSetConnectCallback(ac, connect_cb) == REDIS_OK;
    ok = ok && redisAsyncSetDisconnectCallback(ac, disconnect_cb) == REDIS_OK;
    // hiredis queues these until the socket is connected; they go out first.
    if (ok && c->url.password[0]) {
        ok = c->url.user[0] ? send_setup(conn, "AUTH %s %s", c->url.user, c->url.password)
                            : send_setup(conn, "AUTH %s", c->url.password);
    }
    if (ok && c->url.db)
        ok = send_setup(conn, "SELECT %u", c->url.db);
    for (int i = 0; ok && !conn->subscriber && i < kScriptPreloadCount; i++)
        ok = send_setup(conn, "SCRIPT LOAD %b", kScripts[i].text, kScripts[i].len);
    if (!ok) {
        conn_drop(conn);
        return;
    }
    timer_arm(conn->timer, c->cfg.connect_timeout_ms);
}

static void went_down(Connection *conn)
{
    conn->state = ConnState::Down;
    if (conn->down_since_ms == 0)
        conn->down_since_ms = edgelock_port_now_ms();
    conn->tcp_up = false;
    conn->setup_pending = 0;
    event_del(conn->timer);
    Client *c = conn->client;
    if (c->closing)
        return;
    if (conn->subscriber)
        on_sub_conn_down(c);
    if (!c->closing)
        schedule_reconnect(conn);
}

void conn_drop(Connection *conn)
{
    redisAsyncContext *ac = conn->ac;
    conn->ac = nullptr;
    if (ac)
        redisAsyncFree(ac);
    if (conn->state != ConnState::Down)
        went_down(conn);
}

void conn_close(Connection *conn)
{
    event_del(conn->timer);
    redisAsyncContext *ac = conn->ac;
    conn->ac = nullptr;
    conn->state = ConnState::Down;
    if (ac)
        redisAsyncFree(ac);
}

void conn_flush_output(Connection *conn)
{
    if (!conn_ready(conn))
        return;
    // The socket is non-blocking: a few rounds write a small buffer whole; a
    // full socket buffer is left to the close (best effort by design).
    int done = 0;
    for (int i = 0; i < 16 && !done; i++)
        if (redisBufferWrite(&conn->ac->c, &done) != REDIS_OK)
            break;
}

bool conn_ready(const Connection *conn)
{
    return conn->state == ConnState::Ready && conn->ac;
}

} // namespace edgelock
