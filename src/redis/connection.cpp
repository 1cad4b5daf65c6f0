// SPDX-License-Identifier: BSD-3-Clause
// The connection state machine over a link (redis/link.hpp).
#include "redis/connection.hpp"
#include "base/log.hpp"

#include <hiredis/hiredis.h>
#include <stdlib.h>
#include <string.h>

#include "port.h"
#include "base/resp.hpp"
#include "redis/tls.hpp"
#include "redis/reply.hpp"

namespace edgelock
{

// The privdata of setup commands, of the ROLE check and of the sentinel
// query: never a valid command id's privdata.
static char setup_tag;
static char role_tag;
static char resolve_tag;
static char info_tag;
static char probe_tags[kConnProbeKinds];
static char ping_tag;
static_assert(kConnProbeKinds == 2, "conn_link_reply() tells the probe tags apart one by one");

static void went_down(Connection *conn);
static bool is_pong(const Connection *conn, const redisReply *reply, const void *privdata);
static bool is_subscribe_confirmation(const redisReply *reply);
static bool keepalive_resubscribes(const Connection *conn);

static void schedule_reconnect(Connection *conn)
{
    uint32_t jitter = 0;
    edgelock_port_random(&jitter, sizeof(jitter));
    // Up to a quarter of the delay as jitter, so gateways restarted together
    // do not reconnect in lockstep.
    uint64_t delay = conn->backoff_ms + jitter % (conn->backoff_ms / 4 + 1);
    timer_arm(&conn->timer, delay);
    uint64_t next = (uint64_t)conn->backoff_ms * 2;
    conn->backoff_ms = (uint32_t)(next > conn->reconnect_max_ms ? conn->reconnect_max_ms : next);
}

// While ready, conn->timer runs the keepalive: the next PING, or the answer's
// deadline.
static void arm_keepalive(Connection *conn)
{
    conn->ping_due = false;
    if (conn->keepalive && conn->keepalive_ms)
        timer_arm(&conn->timer, conn->keepalive_ms);
}

static void maybe_ready(Connection *conn)
{
    if (conn->state != ConnState::Connecting || !conn->tcp_up || conn->setup_pending)
        return;
    conn->state = ConnState::Ready;
    conn->down_since_ms = 0;
    conn->down_status = EDGELOCK_ERR_CONNECTION;
    // The delay starts over, but the one that was due comes back if it drops
    // again before conn_stable_ms() (went_down).
    conn->ready_backoff_ms = conn->backoff_ms;
    conn->ready_at_ms = loop_now(conn->loop);
    conn->backoff_ms = conn->reconnect_min_ms;
    timer_cancel(&conn->timer);
    arm_keepalive(conn);
    log_to(conn->loop->log, EDGELOCK_LOG_INFO, "%s connection ready", conn->role);
    conn->hooks.ready(conn->hooks.ctx);
}

void conn_link_connected(Connection *conn, bool ok, const char *err)
{
    if (!ok) {
        log_to(conn->loop->log, EDGELOCK_LOG_WARN, "%s connect failed: %s", conn->role, err);
        if (conn->down_status == EDGELOCK_ERR_AUTH)
            conn->down_status = EDGELOCK_ERR_CONNECTION; // the refusing server is gone now
        went_down(conn);
        return;
    }
    conn->tcp_up = true;
    maybe_ready(conn);
}

void conn_link_down(Connection *conn, edgelock_status why, const char *err)
{
    log_to(conn->loop->log, EDGELOCK_LOG_WARN, "%s connection %s: %s", conn->role,
           why == EDGELOCK_ERR_TLS ? "failed in TLS" : "lost", err);
    conn->down_status = why;
    went_down(conn);
}

// "run_id:<40 hex digits>" in INFO server: its first 16 digits.
static uint64_t parse_run_id(const redisReply *r)
{
    static const char key[] = "run_id:";
    if (r->type != REDIS_REPLY_STRING)
        return 0;
    const char *end = r->str + r->len;
    for (const char *p = r->str; p + sizeof(key) - 1 + 16 <= end; p++) {
        if ((p != r->str && p[-1] != '\n') || memcmp(p, key, sizeof(key) - 1) != 0)
            continue;
        uint64_t v = 0;
        for (const char *h = p + sizeof(key) - 1; h < p + sizeof(key) - 1 + 16; h++) {
            int d = *h >= '0' && *h <= '9' ? *h - '0' : *h >= 'a' && *h <= 'f' ? *h - 'a' + 10 : -1;
            if (d < 0)
                return 0;
            v = v << 4 | (uint64_t)d;
        }
        return v;
    }
    return 0;
}

static void setup_reply(Connection *conn, redisReply *reply, const void *tag)
{
    if (!reply || conn->state != ConnState::Connecting)
        return; // a drop is handled where it is noticed
    if (tag == &info_tag) {
        // Informational: a Redis that refuses INFO (ACL) is still usable.
        conn->server_instance = parse_run_id(reply);
        conn->setup_pending--;
        maybe_ready(conn);
        return;
    }
    if (tag == &role_tag && reply->type != REDIS_REPLY_ERROR &&
        !(reply->type == REDIS_REPLY_ARRAY && reply->elements > 0 &&
          reply_text_is(reply->element[0], "master"))) {
        // The sentinels' answer is already out of date (a failover is going
        // on): ask them again.
        log_to(conn->loop->log, EDGELOCK_LOG_WARN,
               "%s connection: %s:%u is not a master; asking the sentinels again", conn->role, conn->host,
               conn->port);
        conn_drop(conn);
        return;
    }
    if (reply->type == REDIS_REPLY_ERROR) {
        // Wrong password, unknown ACL user, db out of range: retrying soon will
        // not help the operator, but backoff keeps it cheap. Commands that
        // fail meanwhile say AUTH, not CONNECTION: the server is there.
        log_to(conn->loop->log, EDGELOCK_LOG_ERROR, "%s connection setup refused: %s", conn->role,
               reply->str);
        conn_drop(conn);
        conn->down_status = EDGELOCK_ERR_AUTH;
        return;
    }
    conn->setup_pending--;
    maybe_ready(conn);
}

static void resolved(Connection *conn, redisReply *reply);

static void probed(Connection *conn, redisReply *reply, uint8_t kind)
{
    bool in_setup = reply && conn->state == ConnState::Connecting;
    if (conn->hooks.probe)
        conn->hooks.probe(conn->hooks.ctx, conn, kind, reply);
    // The owner may have dropped it meanwhile.
    if (in_setup && conn->state == ConnState::Connecting) {
        conn->setup_pending--;
        maybe_ready(conn);
    }
}

void conn_link_reply(Connection *conn, redisReply *reply, void *privdata)
{
    if (privdata == &setup_tag || privdata == &role_tag || privdata == &info_tag)
        setup_reply(conn, reply, privdata);
    else if (privdata == &resolve_tag)
        resolved(conn, reply);
    else if (privdata == &probe_tags[0] || privdata == &probe_tags[1])
        probed(conn, reply, (uint8_t)(static_cast<char *>(privdata) - probe_tags));
    else if (is_pong(conn, reply, privdata)) {
        // Any answer will do (an error too): the path is alive. NULL: dropped.
        if (reply && conn->ping_due && conn->state == ConnState::Ready)
            arm_keepalive(conn);
    } else {
        if (conn->ping_due && keepalive_resubscribes(conn) && privdata == conn->resubscribe_privdata &&
            is_subscribe_confirmation(reply) && conn->state == ConnState::Ready)
            arm_keepalive(conn);
        conn->hooks.reply(conn->hooks.reply_ctx, reply, privdata);
    }
}

// ["subscribe", channel, count]: the answer to a SUBSCRIBE, never a message.
static bool is_subscribe_confirmation(const redisReply *reply)
{
    return reply && reply->type == REDIS_REPLY_ARRAY && reply->elements == 3 &&
           reply_text_is(reply->element[0], "subscribe");
}

// The keepalive's answer: a PING's reply (with its tag; on a subscribed RESP2
// connection ["pong", channel]), or that array without the tag: it is no
// channel message either way, and never goes on to the subscriptions.
static bool is_pong(const Connection *conn, const redisReply *reply, const void *privdata)
{
    if (privdata == &ping_tag)
        return true;
    if (!conn->pubsub || !reply || privdata)
        return false;
#ifdef REDIS_REPLY_PUSH
    bool array = reply->type == REDIS_REPLY_ARRAY || reply->type == REDIS_REPLY_PUSH;
#else
    bool array = reply->type == REDIS_REPLY_ARRAY;
#endif
    return array && reply->elements == 2 && reply_text_is(reply->element[0], "pong");
}

// Whether the keepalive subscribes again instead of PINGing: only a subscribed
// RESP2 connection answers ["pong", arg], which old hiredis drops; RESP3
// (push_replies, fixed for the connection's life once ready) answers a plain
// PONG, which every hiredis hears.
static bool keepalive_resubscribes(const Connection *conn)
{
    return conn->pubsub && !conn->push_replies && !conn->ops->hears_subscribed_ping;
}

static void keepalive_fired(Connection *conn)
{
    if (conn->ping_due) {
        log_to(conn->loop->log, EDGELOCK_LOG_WARN, "%s connection: no answer to %s in %u ms; reconnecting",
               conn->role, keepalive_resubscribes(conn) ? "its keepalive SUBSCRIBE" : "PING",
               conn->keepalive_timeout_ms);
        conn_drop(conn);
        return;
    }
    const char *channel = nullptr;
    size_t len = 0;
    if (!conn->keepalive(conn->keepalive_ctx, conn, &channel, &len)) {
        arm_keepalive(conn); // nothing to lose: no PING on an idle connection
        return;
    }
    bool named = channel && len <= kConnPingArgMax;
    bool resubscribe = keepalive_resubscribes(conn);
    if (resubscribe && !named) {
        arm_keepalive(conn); // no channel to subscribe to again, and a PING goes unheard
        return;
    }
    char buf[kConnPingArgMax + 64];
    RespCommand rc(buf, sizeof(buf));
    rc.arg(resubscribe ? "SUBSCRIBE" : "PING");
    if (named)
        rc.arg(channel, len);
    const char *out;
    size_t n;
    void *privdata = resubscribe ? conn->resubscribe_privdata : &ping_tag;
    if (!rc.finish(&out, &n) || !conn->ops->send(conn, out, n, privdata, false)) {
        log_to(conn->loop->log, EDGELOCK_LOG_WARN, "%s connection: keepalive not sent; reconnecting",
               conn->role);
        conn_drop(conn);
        return;
    }
    conn->ping_due = true;
    timer_arm(&conn->timer, conn->keepalive_timeout_ms);
}

static void timer_fired(void *arg, Timer *)
{
    auto *conn = static_cast<Connection *>(arg);
    if (conn->state == ConnState::Connecting) {
        // Connected, but the TLS handshake never finished (a server that does
        // not speak TLS on that port waits for a line end that never comes).
        bool tls = conn->tcp_up && conn->tls_ssl && tls_failed(conn->tls_ssl, nullptr, nullptr, 0);
        log_to(conn->loop->log, EDGELOCK_LOG_WARN, "%s connect timed out%s", conn->role,
               tls ? " in the TLS handshake" : "");
        conn_drop(conn);
        if (tls)
            conn->down_status = EDGELOCK_ERR_TLS;
        else if (conn->down_status == EDGELOCK_ERR_AUTH)
            conn->down_status = EDGELOCK_ERR_CONNECTION; // no refusal this time, no answer at all
    } else if (conn->state == ConnState::Down && !conn->closed) {
        conn_start(conn);
    } else if (conn->state == ConnState::Ready) {
        keepalive_fired(conn);
    }
}

bool conn_init(Connection *conn, Loop *loop, const LinkOps *ops, const ConnConfig &cfg,
               const ConnHooks &hooks)
{
    conn->role = cfg.role;
    conn->url = cfg.url;
    conn->connect_timeout_ms = cfg.connect_timeout_ms;
    conn->reconnect_min_ms = cfg.reconnect_min_ms;
    conn->reconnect_max_ms = cfg.reconnect_max_ms;
    conn->loop = loop;
    conn->ops = ops;
    conn->hooks = hooks;
    conn->state = ConnState::Down;
    conn->backoff_ms = cfg.reconnect_min_ms;
    conn->tls = cfg.tls;
    conn->tls_name = cfg.tls_name;
    conn->tls_verify = cfg.tls_verify;
    conn->down_status = EDGELOCK_ERR_CONNECTION;
    conn->refused_reply = nullptr;
    conn->sentinel_password = cfg.sentinel_password;
    conn->to_sentinels = cfg.to_sentinels && cfg.url->sentinel;
    conn->pubsub = cfg.pubsub;
    conn->write_at_once = cfg.write_at_once;
    conn->flush_at_pass_end = cfg.flush_at_pass_end;
    conn->leader_reads = cfg.leader_reads;
    conn->keepalive_ms = cfg.keepalive_ms;
    conn->keepalive_timeout_ms = cfg.keepalive_timeout_ms;
    conn->keepalive = cfg.keepalive;
    conn->keepalive_ctx = cfg.keepalive_ctx;
    conn->resubscribe_privdata = cfg.resubscribe_privdata;
    conn->channel_asked = cfg.channel_asked;
    memcpy(conn->host, cfg.url->host, sizeof(conn->host));
    conn->port = cfg.url->port;
    return timer_init(&conn->timer, loop, timer_fired, conn);
}

void conn_fini(Connection *conn)
{
    timer_fini(&conn->timer);
}

bool conn_send_setup(Connection *conn, const char *buf, size_t len)
{
    if (!conn->ops->send(conn, buf, len, &setup_tag, false))
        return false;
    conn->setup_pending++;
    return true;
}

bool conn_send_probe(Connection *conn, uint8_t kind, const char *buf, size_t len)
{
    EDGELOCK_ASSERT(kind < kConnProbeKinds);
    if (!conn->ops->send(conn, buf, len, &probe_tags[kind], false))
        return false;
    if (conn->state == ConnState::Connecting)
        conn->setup_pending++;
    return true;
}

// One command whose reply is tagged (setup, ROLE, sentinel query).
static bool send_tagged(Connection *conn, void *tag, const char *a0, const char *a1 = nullptr,
                        const char *a2 = nullptr)
{
    char buf[512];
    RespCommand rc(buf, sizeof(buf));
    const char *args[] = {a0, a1, a2};
    for (const char *a : args)
        if (a)
            rc.arg(a);
    const char *out;
    size_t len;
    bool ok = rc.finish(&out, &len) && conn->ops->send(conn, out, len, tag, false);
    edgelock_port_wipe(buf, sizeof(buf)); // a password is not left on the stack
    if (ok)
        conn->setup_pending++;
    return ok;
}

// AUTH and SELECT as the URL asks; they go out first, before the owner's setup.
// A user with an empty password ("redis://alice:@host") still authenticates
// as that user (AUTH alice ""), as redis-py does: an ACL user with nopass,
// not the default user's rights.
static bool send_url_setup(Connection *conn)
{
    const RedisUrl &u = *conn->url;
    if ((u.password[0] || u.user[0]) &&
        !(u.user[0] ? send_tagged(conn, &setup_tag, "AUTH", u.user, u.password)
                    : send_tagged(conn, &setup_tag, "AUTH", u.password)))
        return false;
    if (!u.db)
        return true;
    char db[24];
    Writer w(db, sizeof(db) - 1);
    w.u64(u.db);
    db[w.len] = 0;
    return send_tagged(conn, &setup_tag, "SELECT", db);
}

// redis-sentinel://: the next sentinel in turn becomes where the link goes.
static bool next_sentinel(Connection *conn)
{
    const RedisUrl &u = *conn->url;
    unsigned i = conn->sentinel_next++ % u.nhosts;
    return host_address(u, i, conn->host, sizeof(conn->host), &conn->port);
}

// The sentinel's answer: [host, port] of the master, or nil when it knows none.
static void resolved(Connection *conn, redisReply *reply)
{
    if (!reply || conn->state != ConnState::Connecting || !conn->resolving)
        return;
    bool ok = reply->type == REDIS_REPLY_ARRAY && reply->elements == 2 &&
              reply->element[0]->type == REDIS_REPLY_STRING &&
              reply->element[1]->type == REDIS_REPLY_STRING && reply->element[0]->len < sizeof(conn->host);
    uint16_t port = ok ? (uint16_t)atoi(reply->element[1]->str) : 0;
    char host[sizeof(conn->host)] = {0};
    if (ok && port) {
        memcpy(host, reply->element[0]->str, reply->element[0]->len);
        log_to(conn->loop->log, EDGELOCK_LOG_INFO, "%s connection: sentinel %s:%u names master %s:%u",
               conn->role, conn->host, conn->port, host, port);
    } else {
        log_to(conn->loop->log, EDGELOCK_LOG_WARN, "%s connection: sentinel %s:%u names no master '%s'%s%s",
               conn->role, conn->host, conn->port, conn->url->master_name,
               reply->type == REDIS_REPLY_ERROR ? ": " : "",
               reply->type == REDIS_REPLY_ERROR ? reply->str : "");
    }
    // A sentinel that refuses the query (NOAUTH: it wants a password the
    // client was not given; an ACL's NOPERM) refused the setup, as a master
    // that refuses AUTH does: calls that fail meanwhile say AUTH.
    bool refused = reply->type == REDIS_REPLY_ERROR;
    // Done with the sentinel either way.
    conn->ops->close(conn);
    conn->state = ConnState::Down;
    conn->resolving = false;
    conn->tcp_up = false;
    conn->setup_pending = 0;
    timer_cancel(&conn->timer);
    if (ok && port) {
        memcpy(conn->host, host, sizeof(conn->host));
        conn->port = port;
        conn->have_master = true;
        conn->sentinel_misses = 0;
        conn_start(conn);
        return;
    }
    // The next sentinel at once, until every one was asked; then back off.
    if (++conn->sentinel_misses < conn->url->nhosts) {
        conn_start(conn);
        return;
    }
    conn->sentinel_misses = 0;
    went_down(conn);
    if (refused)
        conn->down_status = EDGELOCK_ERR_AUTH;
}

void conn_start(Connection *conn)
{
    if (conn->closed || conn->state != ConnState::Down)
        return;
    // To a sentinel: to ask it for the master, or (to_sentinels) to stay.
    bool sentinel = conn->url->sentinel && (conn->to_sentinels || !conn->have_master);
    if (sentinel && !next_sentinel(conn)) {
        schedule_reconnect(conn);
        return;
    }
    conn->resolving = sentinel && !conn->to_sentinels;
    if (!conn->ops->open(conn)) {
        conn->resolving = false;
        // A master that cannot even be opened (a refused TLS link fails
        // here, not in the connect callback) is asked about again, as one
        // that dropped is (went_down): the sentinels may name another by
        // now, and the old address may come back as a stale, empty master.
        conn->have_master = false;
        schedule_reconnect(conn);
        return;
    }
    conn->state = ConnState::Connecting;
    conn->tcp_up = false;
    conn->setup_pending = 0;
    // The link queues these until the socket is connected.
    bool ok;
    if (sentinel) {
        ok = !conn->sentinel_password || send_tagged(conn, &setup_tag, "AUTH", conn->sentinel_password);
        if (conn->resolving)
            ok = ok && send_tagged(conn, &resolve_tag, "SENTINEL", "get-master-addr-by-name",
                                   conn->url->master_name);
    } else {
        ok = send_url_setup(conn);
        // A master named by the sentinels must still be one when we get there.
        if (ok && conn->url->sentinel)
            ok = send_tagged(conn, &role_tag, "ROLE");
        conn->server_instance = 0;
        if (ok && !conn->pubsub)
            ok = send_tagged(conn, &info_tag, "INFO", "server");
    }
    if (ok && !conn->resolving && conn->hooks.setup)
        ok = conn->hooks.setup(conn->hooks.ctx, conn);
    if (!ok) {
        conn_drop(conn);
        return;
    }
    timer_arm(&conn->timer, conn->connect_timeout_ms);
}

static void went_down(Connection *conn)
{
    uint64_t now = loop_now(conn->loop);
    if (conn->state == ConnState::Ready && now - conn->ready_at_ms < conn_stable_ms(conn)) {
        // Dropped soon after its setup: not the sign of a working connection
        // that one reconnect at the shortest delay deserves. Keep backing off.
        conn->backoff_ms = conn->ready_backoff_ms;
        log_to(conn->loop->log, EDGELOCK_LOG_WARN,
               "%s connection dropped %llu ms after it was ready; reconnecting in about %u ms", conn->role,
               (unsigned long long)(now - conn->ready_at_ms), conn->backoff_ms);
    }
    conn->state = ConnState::Down;
    conn->ping_due = false;
    // Ask the sentinels again: the master may have changed.
    conn->have_master = false;
    conn->resolving = false;
    if (conn->down_since_ms == 0)
        conn->down_since_ms = now;
    conn->tcp_up = false;
    conn->setup_pending = 0;
    timer_cancel(&conn->timer);
    if (conn->closed)
        return;
    if (conn->hooks.down)
        conn->hooks.down(conn->hooks.ctx);
    if (!conn->closed)
        schedule_reconnect(conn);
}

void conn_drop(Connection *conn)
{
    conn->ops->close(conn);
    if (conn->state != ConnState::Down)
        went_down(conn);
}

void conn_reuse(Connection *conn)
{
    conn->closed = false;
    conn->tcp_up = false;
    conn->setup_pending = 0;
    conn->backoff_ms = conn->reconnect_min_ms;
    conn->down_since_ms = 0;
    conn->down_status = EDGELOCK_ERR_CONNECTION;
    conn->server_instance = 0;
    conn->push_replies = false;
}

void conn_close(Connection *conn)
{
    conn->closed = true;
    timer_cancel(&conn->timer);
    conn->state = ConnState::Down;
    conn->ops->close(conn);
}

void conn_flush_output(Connection *conn)
{
    if (conn_ready(conn))
        conn->ops->flush(conn);
}

bool conn_read_waiting(Connection *conn)
{
    return conn_ready(conn) && conn->ops->read_waiting && conn->ops->read_waiting(conn);
}

bool conn_send(Connection *conn, const char *buf, size_t len, void *privdata, bool urgent)
{
    return conn->ops->send(conn, buf, len, privdata, urgent);
}

} // namespace edgelock
