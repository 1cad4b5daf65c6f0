// SPDX-License-Identifier: BSD-3-Clause
// One connection to Redis: connect, AUTH and SELECT from the URL, whatever
// setup its owner adds, a connect timeout, and reconnect with capped, jittered
// backoff. Its owner learns of it through hooks it set: ready, down, and every
// reply (by the privdata it sent the command with).
//
// Backoff: each failed attempt doubles the delay up to reconnect_max_ms. A
// connection that becomes ready starts over from reconnect_min_ms only once
// it has stayed up for conn_stable_ms() (reconnect_max_ms): one that Redis
// drops right after its setup each time (a SUBSCRIBE refused by an ACL, a
// READONLY reply from a demoted master) keeps backing off instead of
// reconnecting ten times a second.
//
// Keepalive (a subscriber): while its owner says it carries a confirmed
// subscription, the connection sends PING every keepalive_ms and drops itself
// (the ordinary down path: subscriptions are made again when it is back) when
// no answer came within keepalive_timeout_ms. A subscriber otherwise only
// reads, and a path that died silently would go unnoticed. Where the link
// drops a subscribed PING's answer (LinkOps::hears_subscribed_ping false, a
// RESP2 subscriber), it sends SUBSCRIBE to the channel it would have named
// instead: Redis confirms a channel already subscribed again, and changes
// nothing. Any subscribe confirmation read after it counts as the answer (it
// answers a command of ours); the owner sees it too, and ignores one for a
// channel it knows confirmed.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "event/loop.hpp"
#include "redis/link.hpp"
#include "redis/url.hpp"

struct redisReply;

namespace edgelock
{

enum class ConnState : uint8_t { Down, Connecting, Ready };

struct ConnHooks {
    void *ctx;                                  // for ready, down and setup
    void (*ready)(void *ctx);                   // setup done: commands may go out
    void (*down)(void *ctx);                    // dropped (never called at close)
    bool (*setup)(void *ctx, Connection *conn); // add setup commands (conn_send_setup); may be null
    void (*reply)(void *reply_ctx, struct redisReply *reply, void *privdata); // NULL reply: dropped
    void *reply_ctx; // the command queue, or the subscriptions
    // The answer to a conn_send_probe() (null: the connection dropped first);
    // may be null when the owner sends none.
    void (*probe)(void *ctx, Connection *conn, uint8_t kind, struct redisReply *reply);
};

// A subscriber's owner: whether conn carries a confirmed subscription now
// and, when it does, one such channel's name to send with the PING (its
// answer, ["pong", name], then says which subscribed connection it is from),
// or to subscribe to again where a PING's answer is not heard.
typedef bool (*ConnKeepaliveFn)(void *ctx, const Connection *conn, const char **channel, size_t *len);

// A subscriber's owner: whether it has sent a SUBSCRIBE to `channel` on conn
// that no unsubscribe reply has ended since, that is whether hiredis holds a
// callback for the channel. The reader guard refuses a subscribe
// confirmation for any other: hiredis asserts on one (reader_guard.hpp).
typedef bool (*ConnChannelFn)(void *ctx, const Connection *conn, const char *channel, size_t len);

// The longest channel name a keepalive PING carries.
constexpr size_t kConnPingArgMax = 4096 + 256;

// Kinds of probe a connection's owner can tell apart.
constexpr uint8_t kConnProbeKinds = 2;

struct ConnConfig {
    const char *role; // "command", "subscriber": for the log
    const RedisUrl *url;
    uint32_t connect_timeout_ms;
    uint32_t reconnect_min_ms, reconnect_max_ms;
    void *tls;            // rediss://: the client's TLS context (redis/tls.hpp); else null
    const char *tls_name; // SNI and the name the certificate must carry; null: the host connected to
    bool tls_verify;
    const char *sentinel_password; // redis-sentinel://: AUTH for the sentinels (null: none)
    // redis-sentinel://: a connection to the sentinels themselves (in turn,
    // the next one after each drop), never to the master: ready after AUTH
    // and the owner's setup.
    bool to_sentinels;
    bool pubsub; // replies come unasked (messages) once subscribed
    // Write each command as it is sent instead of at the loop's next turn: for
    // a loop whose caller polls for one reply at a time (the blocking face),
    // not where many commands queued in one turn should go in one write.
    bool write_at_once;
    // Write what was queued, not written at once, as soon as the loop has run
    // the callbacks due now, instead of registering the write event for the
    // loop's next poll (an epoll_ctl to add it and one to remove it on a loop
    // without libevent's changelist). For the application's loop: what its
    // callbacks queue in one pass still goes in one write. Not for the
    // blocking face: there the unlock latch's DEL, queued from the release's
    // reply callback, waits to go with the caller's next command, written at
    // once; sent at the end of the pass it went alone, a write more per
    // unlock (BENCHMARKS.md). Plain links only (TLS writes through
    // hiredis_ssl's handlers).
    bool flush_at_pass_end;
    // The blocking face's leader may wait for this link's replies in a read
    // of its own (conn_read_waiting): once connected, a plain link's socket
    // is set up for that. One node's command connection of a client that
    // owns its loop; not a cluster's nodes, whose leader always runs the loop.
    bool leader_reads;
    // Keepalive (see the top of this file): 0, or no keepalive function, for
    // none. The client ties both to command_timeout_ms (edgelock.h).
    uint32_t keepalive_ms, keepalive_timeout_ms;
    ConnKeepaliveFn keepalive;
    void *keepalive_ctx;
    // The privdata the owner's SUBSCRIBEs go with, for a keepalive that
    // subscribes again: hiredis keeps one reply callback per channel, the last
    // SUBSCRIBE's, so any other would take the channel's messages from it.
    void *resubscribe_privdata;
    // A subscriber's channels, with keepalive_ctx (ConnChannelFn); null: no
    // subscribe confirmation is accepted.
    ConnChannelFn channel_asked;
};

struct Connection {
    const char *role;
    const RedisUrl *url;
    uint32_t connect_timeout_ms, reconnect_min_ms, reconnect_max_ms;
    Loop *loop;
    const LinkOps *ops;
    void *link; // the link's state (hiredis: its redisAsyncContext); null when none
    ConnHooks hooks;
    ConnState state;
    bool tcp_up;
    bool closed;            // closed for good: no reconnect
    uint32_t setup_pending; // setup replies still due
    uint32_t backoff_ms;
    uint64_t down_since_ms; // first failure since it was last ready; 0 when not known down
    Timer timer;            // connect timeout, then reconnect delay
    void *tls;              // as ConnConfig
    const char *tls_name;
    bool tls_verify;
    void *tls_ssl; // the attempt's SSL object (owned by the link), to tell why it failed
    // Why it is down: CONNECTION, TLS when TLS failed, AUTH when Redis refused the setup.
    edgelock_status down_status;
    // Where the link goes: the URL's host, or (redis-sentinel://) a sentinel
    // while resolving, then the master it named.
    char host[256];
    uint16_t port;
    const char *sentinel_password;
    bool to_sentinels;      // as ConnConfig
    bool pubsub;            // as ConnConfig
    bool write_at_once;     // as ConnConfig
    bool flush_at_pass_end; // as ConnConfig
    bool leader_reads;      // as ConnConfig
    // A subscriber speaking RESP3 (its owner sends HELLO 3 in setup): its
    // channel commands are sent without a reply callback and everything they
    // bring comes as pushes (LinkOps::push). Sharded pub/sub.
    bool push_replies;
    uint32_t replies_due; // commands sent on this link not yet answered
    // The link's own, for LinkOps::read_waiting: its socket takes a read that
    // waits; the read under way now may wait; that wait ended with nothing.
    bool reads_may_wait;
    bool read_waits_now;
    bool read_wait_empty;
    // What the reader guard refused on this link, which ends it ("a reply no
    // command asked for"), for the log line that says why it was lost:
    // hiredis says "Out of memory" of any refused object. Null: nothing.
    const char *refused_reply;
    // Which Redis process this link talks to: the first 64 bits of its run_id
    // (INFO server), 0 when unknown. It changes when Redis restarts, and with
    // it the numbering of fencing tokens if the data was lost.
    uint64_t server_instance;
    bool resolving;            // connected to a sentinel, asking for the master
    bool have_master;          // host/port is the master a sentinel named
    uint8_t sentinel_next;     // the sentinel to ask next (round robin)
    uint8_t sentinel_misses;   // sentinels in a row that named no master
    uint64_t ready_at_ms;      // when it last became ready
    uint32_t ready_backoff_ms; // the delay it would have used next, had it not become ready
    // Keepalive (as ConnConfig); conn->timer runs it while ready.
    uint32_t keepalive_ms, keepalive_timeout_ms;
    ConnKeepaliveFn keepalive;
    void *keepalive_ctx;
    void *resubscribe_privdata;  // as ConnConfig
    ConnChannelFn channel_asked; // as ConnConfig
    bool ping_due;               // a keepalive PING (or SUBSCRIBE) is out, not answered yet
};

// How long a ready connection must stay up before its backoff starts over.
inline uint32_t conn_stable_ms(const Connection *conn)
{
    return conn->reconnect_max_ms;
}

// False when the timer cannot be had (no memory).
bool conn_init(Connection *conn, Loop *loop, const LinkOps *ops, const ConnConfig &cfg,
               const ConnHooks &hooks);
void conn_fini(Connection *conn);
void conn_start(Connection *conn);
void conn_drop(Connection *conn);         // close now and reconnect later; replies due come as NULL
void conn_close(Connection *conn);        // close for good (shutdown)
void conn_reuse(Connection *conn);        // one closed for good, to be opened again (another address)
void conn_flush_output(Connection *conn); // write what is buffered for the socket, now
inline bool conn_ready(const Connection *conn)
{
    return conn->state == ConnState::Ready && conn->link;
}
// Wait on this thread, a clock tick at most, for the replies due on this
// ready connection and handle what came (LinkOps::read_waiting): for the one
// thread driving the loop, while nothing else needs the loop. False when
// nothing came (the wait ended) or the link cannot wait (nothing done).
bool conn_read_waiting(Connection *conn);
// A command's bytes; its reply reaches hooks.reply with privdata. urgent:
// onto the socket at once even where commands otherwise go at the loop's
// next turn (a command whose reply someone is waiting on right now).
bool conn_send(Connection *conn, const char *buf, size_t len, void *privdata, bool urgent = false);
// From hooks.setup only: a command whose error reply fails the setup.
bool conn_send_setup(Connection *conn, const char *buf, size_t len);
// A command whose reply, error or not, goes to hooks.probe with kind (<
// kConnProbeKinds). Sent from hooks.setup, the connection is ready only after
// the probe's answer was handled.
bool conn_send_probe(Connection *conn, uint8_t kind, const char *buf, size_t len);

} // namespace edgelock
