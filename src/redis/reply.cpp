// SPDX-License-Identifier: BSD-3-Clause
#include "redis/reply.hpp"

#include <errno.h>
#include <hiredis/hiredis.h>
#include <stdlib.h>
#include <string.h>

namespace edgelock
{

bool reply_integer(const redisReply *r, int64_t *out)
{
    if (r->type == REDIS_REPLY_INTEGER) {
        *out = (int64_t)r->integer;
        return true;
    }
    if (r->type == REDIS_REPLY_NIL) {
        *out = 0;
        return true;
    }
    if (r->type == REDIS_REPLY_STRING && r->len > 0 && r->len < 21) {
        char buf[24];
        memcpy(buf, r->str, r->len);
        buf[r->len] = 0;
        char *end;
        errno = 0;
        long long v = strtoll(buf, &end, 10);
        if (end != buf && *end == 0 && errno != ERANGE) { // not clamped to LLONG_MIN/MAX
            *out = v;
            return true;
        }
    }
    return false;
}

bool reply_is_text(const redisReply *r)
{
    return r->type == REDIS_REPLY_STRING || r->type == REDIS_REPLY_STATUS;
}

bool reply_text_is(const redisReply *r, const char *s)
{
    size_t n = strlen(s);
    return reply_is_text(r) && r->len == n && memcmp(r->str, s, n) == 0;
}

} // namespace edgelock
