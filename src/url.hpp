// redis://[user:password@]host[:port][/db]
#pragma once

#include <stdint.h>

namespace edgelock
{

struct RedisUrl {
    char host[256];
    char user[128];
    char password[256];
    uint16_t port;
    uint32_t db;
};

// Returns false on anything malformed; *out is then unspecified.
bool parse_redis_url(const char *url, RedisUrl *out);

} // namespace edgelock
