// SPDX-License-Identifier: BSD-3-Clause
#include "redis/sentinel_watch.hpp"
#include "base/log.hpp"

#include <hiredis/hiredis.h>
#include <string.h>

#include "base/resp.hpp"
#include "port.h"
#include "redis/reply.hpp"

namespace edgelock
{

static const char kChannel[] = "+switch-master";
static char subscribe_tag; // the privdata of SUBSCRIBE, and so of its messages

// The next space-separated word of [*p, e) into [*b, *w_end).
static bool next_word(const char **p, const char *e, const char **b, const char **w_end)
{
    while (*p < e && **p == ' ')
        (*p)++;
    *b = *p;
    while (*p < e && **p != ' ')
        (*p)++;
    *w_end = *p;
    return *w_end > *b;
}

bool parse_switch_master(const char *msg, size_t len, const char *master, char *host, size_t cap,
                         uint16_t *port)
{
    const char *p = msg, *e = msg + len, *b, *w;
    size_t mlen = strlen(master);
    if (!next_word(&p, e, &b, &w) || (size_t)(w - b) != mlen || memcmp(b, master, mlen) != 0)
        return false;
    for (int skip = 0; skip < 2; skip++) // the old address
        if (!next_word(&p, e, &b, &w))
            return false;
    // A NUL would cut the name short: another host than the one announced.
    if (!next_word(&p, e, &b, &w) || (size_t)(w - b) >= cap || memchr(b, 0, (size_t)(w - b)))
        return false;
    memcpy(host, b, (size_t)(w - b));
    host[w - b] = 0;
    if (!next_word(&p, e, &b, &w))
        return false;
    uint32_t v = 0;
    for (const char *q = b; q < w; q++) {
        if (*q < '0' || *q > '9' || (v = v * 10 + (uint32_t)(*q - '0')) > 65535)
            return false;
    }
    *port = (uint16_t)v;
    return v != 0;
}

static void ready(void *ctx)
{
    auto *w = static_cast<SentinelWatch *>(ctx);
    w->subscribed = false;
    char buf[64];
    RespCommand rc(buf, sizeof(buf));
    rc.arg("SUBSCRIBE");
    rc.arg(kChannel);
    const char *out;
    size_t len;
    w->asked = rc.finish(&out, &len) && conn_send(&w->conn, out, len, &subscribe_tag);
    if (!w->asked)
        conn_drop(&w->conn); // the next sentinel, after the backoff
}

static void down(void *ctx)
{
    static_cast<SentinelWatch *>(ctx)->subscribed = false;
    static_cast<SentinelWatch *>(ctx)->asked = false;
}

// ConnChannelFn: its one channel, once the SUBSCRIBE went out.
static bool channel_asked(void *ctx, const Connection *, const char *channel, size_t len)
{
    return static_cast<SentinelWatch *>(ctx)->asked && len == sizeof(kChannel) - 1 &&
           memcmp(channel, kChannel, len) == 0;
}

// ConnKeepaliveFn: PING (naming the channel, as a subscriber's PING does)
// once the subscription is confirmed.
static bool keepalive(void *ctx, const Connection *, const char **channel, size_t *len)
{
    if (!static_cast<SentinelWatch *>(ctx)->subscribed)
        return false;
    *channel = kChannel;
    *len = sizeof(kChannel) - 1;
    return true;
}

static void reply(void *reply_ctx, redisReply *r, void *privdata)
{
    auto *w = static_cast<SentinelWatch *>(reply_ctx);
    if (r && privdata == &subscribe_tag && r->type == REDIS_REPLY_ARRAY && r->elements == 3 &&
        reply_text_is(r->element[0], "subscribe")) {
        w->subscribed = true;
        return;
    }
    if (r && privdata == &subscribe_tag && r->type == REDIS_REPLY_ARRAY && r->elements == 3 &&
        reply_text_is(r->element[0], "unsubscribe")) {
        // Not asked for: the sentinel ended it (hiredis may have dropped the
        // channel's callback with it). Asked for again.
        ready(w);
        return;
    }
    // ["message", "+switch-master", text]; a drop (NULL) needs nothing: it
    // reconnects to the next sentinel.
    if (!r || privdata != &subscribe_tag || r->type != REDIS_REPLY_ARRAY || r->elements != 3 ||
        !reply_text_is(r->element[0], "message") || !reply_text_is(r->element[1], kChannel) ||
        r->element[2]->type != REDIS_REPLY_STRING)
        return;
    char host[sizeof(w->conn.host)];
    uint16_t port;
    if (!parse_switch_master(r->element[2]->str, r->element[2]->len, w->conn.url->master_name, host,
                             sizeof(host), &port))
        return; // another master's, or malformed
    log_to(w->conn.loop->log, EDGELOCK_LOG_INFO, "sentinel %s:%u: +switch-master to %s:%u", w->conn.host,
           w->conn.port, host, port);
    w->hooks.switched(w->hooks.ctx, host, port);
}

bool sentinel_watch_init(SentinelWatch *w, Loop *loop, const LinkOps *ops, ConnConfig cfg,
                         const SentinelWatchHooks &hooks)
{
    w->hooks = hooks;
    cfg.role = "sentinel watch";
    cfg.to_sentinels = true;
    cfg.pubsub = true;
    w->subscribed = false;
    w->asked = false;
    cfg.keepalive_ctx = w;
    cfg.channel_asked = channel_asked;
    if (cfg.keepalive) {
        cfg.keepalive = keepalive;
        cfg.resubscribe_privdata = &subscribe_tag;
    }
    const ConnHooks ch = {w, ready, down, nullptr, reply, w, nullptr};
    return conn_init(&w->conn, loop, ops, cfg, ch);
}

void sentinel_watch_start(SentinelWatch *w)
{
    conn_start(&w->conn);
}

void sentinel_watch_close(SentinelWatch *w)
{
    conn_close(&w->conn);
}

void sentinel_watch_fini(SentinelWatch *w)
{
    conn_fini(&w->conn);
}

} // namespace edgelock
