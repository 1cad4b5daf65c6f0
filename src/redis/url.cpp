// SPDX-License-Identifier: BSD-3-Clause
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

static int hex_value(char c)
{
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
}

// A user or password, percent-decoded (RFC 3986 userinfo: "%40" is '@',
// "%3A" ':', "%25" '%'), as redis-py and Lettuce read them. A '%' without two
// hex digits after it, or one that decodes to NUL, is malformed: refused, not
// guessed at.
static bool copy_decoded(char *dst, size_t cap, const char *b, const char *e)
{
    size_t n = 0;
    for (const char *p = b; p < e; p++) {
        char c = *p;
        if (c == '%') {
            int hi = e - p >= 3 ? hex_value(p[1]) : -1; // "%XX" fits before e
            int lo = hi >= 0 ? hex_value(p[2]) : -1;
            if (hi < 0 || lo < 0 || (hi == 0 && lo == 0))
                return false;
            c = (char)(hi * 16 + lo);
            p += 2;
        }
        if (n + 1 >= cap)
            return false;
        dst[n++] = c;
    }
    dst[n] = 0;
    return true;
}

// "user:password" or "password" (the part before the '@'), percent-decoded.
static bool parse_credentials(const char *b, const char *e, RedisUrl *out)
{
    const char *colon = (const char *)memchr(b, ':', (size_t)(e - b));
    if (colon)
        return copy_decoded(out->user, sizeof(out->user), b, colon) &&
               copy_decoded(out->password, sizeof(out->password), colon + 1, e);
    return copy_decoded(out->password, sizeof(out->password), b, e); // scheme://password@...
}

// A host name or IPv4 address: letters, digits, '-', '.', '_' (as in
// container names); inside brackets an IPv6 address, with a zone after '%'.
// Anything else ("host?x=1", "host junk", a stray space) is a malformed URL,
// refused here rather than reported later as a host nobody can reach.
static bool host_chars_ok(const char *b, const char *e, bool bracketed)
{
    for (const char *p = b; p < e; p++) {
        char c = *p;
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
                  c == '.' || c == '_' || (bracketed && (c == ':' || c == '%'));
        if (!ok)
            return false;
    }
    return true;
}

// One "host[:port]" or "[ipv6][:port]" between b and e.
static bool parse_host_port(const char *b, const char *e, char *host, size_t cap, uint16_t *port,
                            uint16_t default_port)
{
    const char *port_sep = nullptr;
    const char *hb = b, *he;
    if (b < e && *b == '[') {
        const char *close = (const char *)memchr(b, ']', (size_t)(e - b));
        if (!close)
            return false;
        hb = b + 1;
        he = close;
        if (close + 1 < e) {
            if (close[1] != ':')
                return false;
            port_sep = close + 1;
        }
    } else {
        port_sep = (const char *)memchr(b, ':', (size_t)(e - b));
        he = port_sep ? port_sep : e;
    }
    if (hb == he || !host_chars_ok(hb, he, hb != b) || !copy_part(host, cap, hb, he))
        return false;
    uint64_t v = default_port;
    if (port_sep && (!parse_uint(port_sep + 1, e, 65535, &v) || v == 0))
        return false;
    *port = (uint16_t)v;
    return true;
}

// [user:password@] at p, ended by the last '@' before limit (passwords may
// hold '@'): parsed into out. Where the rest starts, or null when malformed.
static const char *take_credentials(const char *p, const char *limit, RedisUrl *out)
{
    for (const char *q = limit; q > p; q--) {
        if (q[-1] != '@')
            continue;
        if (!parse_credentials(p, q - 1, out))
            return nullptr;
        out->has_credentials = true;
        return q;
    }
    return p;
}

// After "redis://": [user:password@]host[:port][/db]
static bool parse_tcp(const char *url, const char *p, RedisUrl *out)
{
    const char *end = p + strlen(p);
    const char *slash = (const char *)memchr(p, '/', (size_t)(end - p));
    if (!(p = take_credentials(p, slash ? slash : end, out)))
        return false;
    out->host_offset = (uint32_t)(p - url);

    if (!parse_host_port(p, slash ? slash : end, out->host, sizeof(out->host), &out->port, 6379))
        return false;

    if (slash && slash + 1 < end) {
        uint64_t v;
        if (!parse_uint(slash + 1, end, 1000000, &v))
            return false;
        out->db = (uint32_t)v;
    }
    return true;
}

bool host_address(const RedisUrl &u, unsigned i, char *host, size_t cap, uint16_t *port)
{
    const char *b = u.hosts;
    for (unsigned k = 0; k < i && b; k++) {
        b = strchr(b, ',');
        if (b)
            b++;
    }
    if (!b)
        return false;
    const char *e = strchr(b, ',');
    return parse_host_port(b, e ? e : b + strlen(b), host, cap, port, u.cluster ? 6379 : 26379);
}

// host[:port][,...] between p and end into out->hosts: every one well formed,
// at most kMaxHosts.
static bool parse_hosts(const char *p, const char *end, uint16_t default_port, RedisUrl *out)
{
    if (!copy_part(out->hosts, sizeof(out->hosts), p, end))
        return false;
    for (const char *b = p; b < end;) {
        const char *e = (const char *)memchr(b, ',', (size_t)(end - b));
        if (!e)
            e = end;
        char host[256];
        uint16_t port;
        if (out->nhosts == kMaxHosts || !parse_host_port(b, e, host, sizeof(host), &port, default_port))
            return false;
        out->nhosts++;
        b = e + 1;
        if (e == end)
            break;
        if (b == end)
            return false; // a trailing comma
    }
    return out->nhosts > 0;
}

// After "redis-cluster://": [user:password@]host[:port][,...] and nothing
// else (a cluster has database 0 only).
static bool parse_cluster(const char *url, const char *p, RedisUrl *out)
{
    out->cluster = true;
    const char *end = p + strlen(p);
    if (!(p = take_credentials(p, end, out)) || memchr(p, '/', (size_t)(end - p)))
        return false;
    out->host_offset = (uint32_t)(p - url);
    return parse_hosts(p, end, 6379, out);
}

// After "redis-sentinel://": [user:password@]host[:port][,...]/mastername[/db]
static bool parse_sentinel(const char *url, const char *p, RedisUrl *out)
{
    out->sentinel = true;
    const char *end = p + strlen(p);
    const char *slash = (const char *)memchr(p, '/', (size_t)(end - p));
    if (!slash)
        return false; // the master's name is required
    if (!(p = take_credentials(p, slash, out)))
        return false;
    out->host_offset = (uint32_t)(p - url);
    if (!parse_hosts(p, slash, 26379, out))
        return false;
    const char *name = slash + 1;
    const char *name_end = (const char *)memchr(name, '/', (size_t)(end - name));
    if (!name_end)
        name_end = end;
    if (name == name_end || !copy_part(out->master_name, sizeof(out->master_name), name, name_end))
        return false;
    if (name_end < end) {
        uint64_t v;
        if (!parse_uint(name_end + 1, end, 1000000, &v))
            return false;
        out->db = (uint32_t)v;
    }
    return true;
}

// After "unix://": [user:password@]/absolute/path[?db=N]. The credentials end
// at the last "@/" (a path starts with '/'), as a TCP URL's end at the last
// '@': a password that holds "@/" unencoded is then read whole, never cut
// with its tail taken for the path and shown in messages.
static bool parse_unix(const char *url, const char *p, RedisUrl *out)
{
    out->unix_socket = true;
    if (*p != '/') {
        const char *at = nullptr;
        for (const char *q = strstr(p, "@/"); q; q = strstr(q + 1, "@/"))
            at = q;
        if (!at || !parse_credentials(p, at, out))
            return false;
        p = at + 1;
        out->has_credentials = true;
    }
    out->host_offset = (uint32_t)(p - url);
    const char *end = p + strlen(p);
    const char *query = (const char *)memchr(p, '?', (size_t)(end - p));
    const char *path_end = query ? query : end;
    if (path_end - p < 2 || !copy_part(out->path, sizeof(out->path), p, path_end))
        return false; // "/" alone is no socket; longer than sun_path cannot be reached
    if (query) {
        static const char db[] = "db=";
        uint64_t v;
        if (strncmp(query + 1, db, sizeof(db) - 1) != 0 || !parse_uint(query + sizeof(db), end, 1000000, &v))
            return false;
        out->db = (uint32_t)v;
    }
    return true;
}

bool parse_redis_url(const char *url, RedisUrl *out)
{
    static const char tcp[] = "redis://";
    static const char tls[] = "rediss://";
    static const char unix_scheme[] = "unix://";
    static const char sentinel[] = "redis-sentinel://";
    static const char tls_sentinel[] = "rediss-sentinel://";
    static const char cluster[] = "redis-cluster://";
    static const char tls_cluster[] = "rediss-cluster://";
    memset(out, 0, sizeof(*out));
    if (url == nullptr)
        return false;
    if (strncmp(url, tcp, sizeof(tcp) - 1) == 0) {
        out->scheme_len = sizeof(tcp) - 1;
        return parse_tcp(url, url + out->scheme_len, out);
    }
    if (strncmp(url, tls, sizeof(tls) - 1) == 0) {
        out->scheme_len = sizeof(tls) - 1;
        out->tls = true;
        return parse_tcp(url, url + out->scheme_len, out);
    }
    if (strncmp(url, sentinel, sizeof(sentinel) - 1) == 0) {
        out->scheme_len = sizeof(sentinel) - 1;
        return parse_sentinel(url, url + out->scheme_len, out);
    }
    if (strncmp(url, tls_sentinel, sizeof(tls_sentinel) - 1) == 0) {
        // TLS to the sentinels and to the master they name.
        out->scheme_len = sizeof(tls_sentinel) - 1;
        out->tls = true;
        return parse_sentinel(url, url + out->scheme_len, out);
    }
    if (strncmp(url, cluster, sizeof(cluster) - 1) == 0) {
        out->scheme_len = sizeof(cluster) - 1;
        return parse_cluster(url, url + out->scheme_len, out);
    }
    if (strncmp(url, tls_cluster, sizeof(tls_cluster) - 1) == 0) {
        out->scheme_len = sizeof(tls_cluster) - 1;
        out->tls = true;
        return parse_cluster(url, url + out->scheme_len, out);
    }
    if (strncmp(url, unix_scheme, sizeof(unix_scheme) - 1) == 0) {
        out->scheme_len = sizeof(unix_scheme) - 1;
        return parse_unix(url, url + out->scheme_len, out);
    }
    return false;
}

void redact_redis_url(const char *url, const RedisUrl &parsed, char *out, size_t cap)
{
    static const char hidden[] = "***@";
    size_t o = 0;
    auto put = [&](const char *s, size_t n) {
        for (size_t i = 0; i < n && o + 1 < cap; i++)
            out[o++] = s[i];
    };
    put(url, parsed.scheme_len);
    if (parsed.has_credentials)
        put(hidden, sizeof(hidden) - 1);
    put(url + parsed.host_offset, strlen(url + parsed.host_offset));
    out[o] = 0;
}

} // namespace edgelock
