// SPDX-License-Identifier: BSD-3-Clause
// redis://[user:password@]host[:port][/db], rediss:// the same over TLS
// unix://[user:password@]/path/to/redis.sock[?db=N]
// redis-sentinel://[user:password@]host[:port][,host[:port]...]/mastername[/db]
// rediss-sentinel:// the same, over TLS to the sentinels and to the master
// redis-cluster://[user:password@]host[:port][,host[:port]...] (seed nodes),
// rediss-cluster:// the same over TLS
#pragma once

#include <stddef.h>
#include <stdint.h>

namespace edgelock
{

struct RedisUrl {
    bool unix_socket; // unix://: path, not host and port
    bool tls;         // rediss://, rediss-sentinel://, rediss-cluster://
    char path[108];   // the socket's path (sun_path's size), NUL-terminated
    char host[256];
    char user[128];
    char password[256];
    uint16_t port;
    uint32_t db;
    uint32_t scheme_len;  // "redis://" or "unix://"
    uint32_t host_offset; // where the host (or path) starts in the URL, after any credentials
    bool has_credentials;
    // redis-sentinel://: the sentinels and the master's name; redis-cluster://:
    // the seed nodes. The hosts as written, comma-separated (port 26379 for a
    // sentinel, 6379 for a cluster node by default); host and port stay empty.
    bool sentinel;
    bool cluster;
    uint8_t nhosts;
    char hosts[256];
    char master_name[128];
};

constexpr uint8_t kMaxHosts = 8;

// The i-th host of a sentinel or cluster URL (i < u.nhosts).
bool host_address(const RedisUrl &u, unsigned i, char *host, size_t cap, uint16_t *port);

// Returns false on anything malformed; *out is then unspecified.
bool parse_redis_url(const char *url, RedisUrl *out);

// The URL with its credentials replaced by "***", cut to fit cap (> 0).
void redact_redis_url(const char *url, const RedisUrl &parsed, char *out, size_t cap);

} // namespace edgelock
