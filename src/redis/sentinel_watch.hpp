// SPDX-License-Identifier: BSD-3-Clause
// redis-sentinel://: a connection to one of the sentinels, subscribed to
// +switch-master, so that a failover is followed when the sentinels announce
// it, not only at the next write the old master refuses (READONLY) or when it
// drops. Its owner hears through a hook: the master it watches moved.
#pragma once

#include <stdint.h>

#include "redis/connection.hpp"

namespace edgelock
{

struct SentinelWatchHooks {
    void *ctx;
    // The sentinels promoted host:port to be the master (name as in the URL).
    void (*switched)(void *ctx, const char *host, uint16_t port);
};

struct SentinelWatch {
    Connection conn; // to the sentinels in turn (ConnConfig::to_sentinels)
    SentinelWatchHooks hooks;
    bool subscribed; // the sentinel confirmed the SUBSCRIBE on this connection
    bool asked;      // the SUBSCRIBE went out on this connection, no unsubscribe reply since
};

// cfg as for the owner's other connections; its role and to_sentinels are set
// here. With a keepalive in cfg (the subscriber's period and timeout), the
// watch PINGs its sentinel while subscribed: a sentinel whose path died
// without a reset is left for the next one, not trusted for ever. False when
// the connection's timer cannot be had.
bool sentinel_watch_init(SentinelWatch *w, Loop *loop, const LinkOps *ops, ConnConfig cfg,
                         const SentinelWatchHooks &hooks);
void sentinel_watch_start(SentinelWatch *w);
void sentinel_watch_close(SentinelWatch *w);
void sentinel_watch_fini(SentinelWatch *w);

// The master's address after the switch, from a +switch-master message
// ("<name> <from-ip> <from-port> <to-ip> <to-port>") when <name> is master.
bool parse_switch_master(const char *msg, size_t len, const char *master, char *host, size_t cap,
                         uint16_t *port);

} // namespace edgelock
