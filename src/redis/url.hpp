// redis://[user:password@]host[:port][/db], rediss:// the same over TLS
// unix://[user:password@]/path/to/redis.sock[?db=N]
#pragma once

#include <stddef.h>
#include <stdint.h>

namespace edgelock
{

struct RedisUrl {
    bool unix_socket; // unix://: path, not host and port
    bool tls;         // rediss://
    char path[108];   // the socket's path (sun_path's size), NUL-terminated
    char host[256];
    char user[128];
    char password[256];
    uint16_t port;
    uint32_t db;
    uint32_t scheme_len;  // "redis://" or "unix://"
    uint32_t host_offset; // where the host (or path) starts in the URL, after any credentials
    bool has_credentials;
};

// Returns false on anything malformed; *out is then unspecified.
bool parse_redis_url(const char *url, RedisUrl *out);

// The URL with its credentials replaced by "***", cut to fit cap (> 0).
void redact_redis_url(const char *url, const RedisUrl &parsed, char *out, size_t cap);

} // namespace edgelock
