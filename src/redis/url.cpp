#include "redis/url.hpp"

#include <string.h>

namespace edgelock
{

static bool copy_part(char *dst, size_t cap, const char *b, const char *e)
{
    size_t n = (size_t)(e - b);
    if (n >= cap)
        return false;
    memcpy(dst, b, n);
    dst[n] = 0;
    return true;
}

static bool parse_uint(const char *b, const char *e, uint64_t max, uint64_t *out)
{
    if (b == e)
        return false;
    uint64_t v = 0;
    for (const char *p = b; p < e; p++) {
        if (*p < '0' || *p > '9')
            return false;
        v = v * 10 + (uint64_t)(*p - '0');
        if (v > max)
            return false;
    }
    *out = v;
    return true;
}

bool parse_redis_url(const char *url, RedisUrl *out)
{
    static const char scheme[] = "redis://";
    memset(out, 0, sizeof(*out));
    if (url == nullptr || strncmp(url, scheme, sizeof(scheme) - 1) != 0)
        return false;
    const char *p = url + sizeof(scheme) - 1;
    const char *end = p + strlen(p);

    const char *slash = (const char *)memchr(p, '/', (size_t)(end - p));
    const char *auth_end = nullptr;
    // The last '@' before the path ends the credentials: passwords may hold '@'.
    for (const char *q = slash ? slash : end; q > p; q--) {
        if (q[-1] == '@') {
            auth_end = q - 1;
            break;
        }
    }
    if (auth_end) {
        const char *colon = (const char *)memchr(p, ':', (size_t)(auth_end - p));
        if (colon) {
            if (!copy_part(out->user, sizeof(out->user), p, colon))
                return false;
            if (!copy_part(out->password, sizeof(out->password), colon + 1, auth_end))
                return false;
        } else if (!copy_part(out->password, sizeof(out->password), p, auth_end)) {
            return false; // redis://password@host
        }
        p = auth_end + 1;
        out->has_credentials = true;
    }
    out->host_offset = (uint32_t)(p - url);

    const char *host_end = slash ? slash : end;
    const char *port_sep = nullptr;
    const char *hb = p, *he;
    if (p < host_end && *p == '[') { // [ipv6]:port
        const char *close = (const char *)memchr(p, ']', (size_t)(host_end - p));
        if (!close)
            return false;
        hb = p + 1;
        he = close;
        if (close + 1 < host_end) {
            if (close[1] != ':')
                return false;
            port_sep = close + 1;
        }
    } else {
        port_sep = (const char *)memchr(p, ':', (size_t)(host_end - p));
        he = port_sep ? port_sep : host_end;
    }
    if (hb == he || !copy_part(out->host, sizeof(out->host), hb, he))
        return false;

    uint64_t v = 6379;
    if (port_sep && (!parse_uint(port_sep + 1, host_end, 65535, &v) || v == 0))
        return false;
    out->port = (uint16_t)v;

    if (slash && slash + 1 < end) {
        if (!parse_uint(slash + 1, end, 1000000, &v))
            return false;
        out->db = (uint32_t)v;
    }
    return true;
}

void redact_redis_url(const char *url, const RedisUrl &parsed, char *out, size_t cap)
{
    static const char scheme[] = "redis://";
    static const char hidden[] = "***@";
    size_t o = 0;
    auto put = [&](const char *s, size_t n) {
        for (size_t i = 0; i < n && o + 1 < cap; i++)
            out[o++] = s[i];
    };
    put(scheme, sizeof(scheme) - 1);
    if (parsed.has_credentials)
        put(hidden, sizeof(hidden) - 1);
    put(url + parsed.host_offset, strlen(url + parsed.host_offset));
    out[o] = 0;
}

} // namespace edgelock
