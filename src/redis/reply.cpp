// SPDX-License-Identifier: BSD-3-Clause
#include "redis/reply.hpp"

#include <errno.h>
#include <hiredis/hiredis.h>
#include <stdlib.h>
#include <string.h>

namespace edgelock
{

bool parse_decimal(const char *s, size_t len, int64_t *out)
{
    if (len == 0 || len > 20)
        return false;
    // strtoll alone would also take leading blanks, a '+' and anything after
    // a NUL ("1\0junk" as 1): only what Redis writes is a number here.
    for (size_t i = s[0] == '-' ? 1 : 0; i < len; i++)
        if (s[i] < '0' || s[i] > '9')
            return false;
    char buf[24];
    memcpy(buf, s, len);
    buf[len] = 0;
    char *end;
    errno = 0;
    long long v = strtoll(buf, &end, 10);
    if (end == buf || *end != 0 || errno == ERANGE) // not clamped to LLONG_MIN/MAX
        return false;
    *out = v;
    return true;
}

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
    return r->type == REDIS_REPLY_STRING && parse_decimal(r->str, r->len, out);
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
