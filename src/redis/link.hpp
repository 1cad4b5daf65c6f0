// SPDX-License-Identifier: BSD-3-Clause
// The byte link under a Connection: where its bytes go and replies come from.
// The real one is hiredis async on the loop's event_base (link_hiredis.cpp);
// unit tests plug in a fake that records what was sent and feeds replies
// parsed from RESP bytes by hiredis's own reader.
#pragma once

#include <stddef.h>

#include "edgelock/edgelock.h"

struct redisReply;

namespace edgelock
{

struct Connection;

struct LinkOps {
    // Start connecting to conn->url. Later the link calls conn_link_connected()
    // once, then conn_link_down() if the link drops. False: failed at once
    // (nothing will be called).
    bool (*open)(Connection *conn);
    // Queue bytes of one command (written at once when conn->write_at_once
    // or urgent); its reply comes through conn_link_reply() with privdata, in
    // order. False: not sent (no reply will come).
    bool (*send)(Connection *conn, const char *buf, size_t len, void *privdata, bool urgent);
    // Close now. Every reply still due is delivered as NULL from inside this
    // call; no conn_link_connected()/conn_link_down() follows.
    void (*close)(Connection *conn);
    // Write what is buffered for the socket now, best effort (at shutdown).
    void (*flush)(Connection *conn);
    // Wait on the calling thread for the replies due, a clock tick at most
    // (the socket's receive timeout), and hand what came to conn_link_reply()
    // (or drop the link) as the loop's read event would: the blocking face's
    // leader, two system calls fewer than a pass of the loop. False when
    // nothing came within the wait, or when it cannot (nothing done then): no
    // reply due, bytes still to write, a TLS link, a socket that was not set
    // up for it (conn->reads_may_wait).
    bool (*read_waiting)(Connection *conn);
    // Whether a subscriber connection can take RESP3 pushes (conn->push_replies):
    // what sharded pub/sub needs, as hiredis before 1.0 knows no SSUBSCRIBE.
    bool push;
    // Whether the answer to a PING on a subscribed RESP2 connection reaches
    // the PING's reply (hiredis 1.1 and later). Before, hiredis takes the "p"
    // of its ["pong", arg] for a pattern message's, finds no such pattern and
    // drops it; a keepalive there re-sends a SUBSCRIBE instead (connection.hpp).
    bool hears_subscribed_ping;
};

// hiredis async over libevent.
extern const LinkOps kHiredisLink;
// Whether kHiredisLink's writes never raise SIGPIPE on a connection with or
// without TLS (hiredis 1.x, plain connections: MSG_NOSIGNAL).
bool link_writes_quietly(bool tls);

// Called by a link implementation.
void conn_link_connected(Connection *conn, bool ok, const char *err);
// why: EDGELOCK_ERR_CONNECTION, or EDGELOCK_ERR_TLS when TLS failed.
void conn_link_down(Connection *conn, edgelock_status why, const char *err);
void conn_link_reply(Connection *conn, struct redisReply *reply, void *privdata);

} // namespace edgelock
