// SPDX-License-Identifier: BSD-3-Clause
// redis://, unix:// and sentinel URL parsing (src/redis/url.hpp), and the
// +switch-master message (src/redis/sentinel_watch.hpp).
#include <string.h>

#include <initializer_list>
#include <string>

#include "check.hpp"
#include "redis/sentinel_watch.hpp"
#include "redis/url.hpp"

using namespace edgelock;

static bool parses(const char *s, RedisUrl *u)
{
    return parse_redis_url(s, u);
}

TEST_CASE(defaults)
{
    RedisUrl u;
    REQUIRE(parses("redis://127.0.0.1", &u));
    CHECK(strcmp(u.host, "127.0.0.1") == 0);
    CHECK_EQ(u.port, 6379);
    CHECK_EQ(u.db, 0);
    CHECK(u.user[0] == 0);
    CHECK(u.password[0] == 0);

    REQUIRE(parses("redis://127.0.0.1:6379", &u));
    CHECK_EQ(u.port, 6379);
    REQUIRE(parses("redis://redis.local:1", &u));
    CHECK(strcmp(u.host, "redis.local") == 0);
    CHECK_EQ(u.port, 1);
    REQUIRE(parses("redis://h:65535", &u));
    CHECK_EQ(u.port, 65535);
    REQUIRE(parses("redis://h/", &u)); // empty path: db 0
    CHECK_EQ(u.db, 0);
}

TEST_CASE(database)
{
    RedisUrl u;
    REQUIRE(parses("redis://h:6380/3", &u));
    CHECK(strcmp(u.host, "h") == 0);
    CHECK_EQ(u.port, 6380);
    CHECK_EQ(u.db, 3);
    REQUIRE(parses("redis://h/15", &u));
    CHECK_EQ(u.port, 6379);
    CHECK_EQ(u.db, 15);
}

TEST_CASE(credentials)
{
    RedisUrl u;
    REQUIRE(parses("redis://alice:s3cret@h:6390/2", &u));
    CHECK(strcmp(u.user, "alice") == 0);
    CHECK(strcmp(u.password, "s3cret") == 0);
    CHECK(strcmp(u.host, "h") == 0);
    CHECK_EQ(u.port, 6390);
    CHECK_EQ(u.db, 2);

    // Password only (the default user).
    REQUIRE(parses("redis://s3cret@h", &u));
    CHECK(u.user[0] == 0);
    CHECK(strcmp(u.password, "s3cret") == 0);
    REQUIRE(parses("redis://:s3cret@h", &u));
    CHECK(u.user[0] == 0);
    CHECK(strcmp(u.password, "s3cret") == 0);

    // '@' and ':' inside the password: the last '@' ends the credentials,
    // the first ':' ends the user.
    REQUIRE(parses("redis://bob:p@ss:w@rd@h:7000", &u));
    CHECK(strcmp(u.user, "bob") == 0);
    CHECK(strcmp(u.password, "p@ss:w@rd") == 0);
    CHECK(strcmp(u.host, "h") == 0);
    CHECK_EQ(u.port, 7000);

    // Percent-encoded, as RFC 3986 writes userinfo (and redis-py reads it).
    REQUIRE(parses("redis://us%65r%3Ax:p%40ss%3Aw%25rd%2f@h", &u));
    CHECK(strcmp(u.user, "user:x") == 0);
    CHECK(strcmp(u.password, "p@ss:w%rd/") == 0);
    CHECK(strcmp(u.host, "h") == 0);
    REQUIRE(parses("rediss-sentinel://%41:%42@s1,s2/m", &u));
    CHECK(strcmp(u.user, "A") == 0);
    CHECK(strcmp(u.password, "B") == 0);
    REQUIRE(parses("unix://%3a@/tmp/r.sock", &u));
    CHECK(strcmp(u.password, ":") == 0);
    // A '%' that is not an escape, or one of NUL: refused, not guessed at.
    for (const char *bad : {"redis://a:b%@h", "redis://a:b%4@h", "redis://a:%zz@h", "redis://a%g1:b@h",
                            "redis://a:b%00c@h", "redis://%@h"})
        CHECK(!parses(bad, &u));
    // Decoding cannot overflow the fields: 255 bytes fit the password, 256 do not.
    std::string fits(255, 'x'), over(256, 'x');
    REQUIRE(parses(("redis://u:" + fits + "@h").c_str(), &u));
    CHECK(!parses(("redis://u:" + over + "@h").c_str(), &u));
    std::string encoded;
    for (int i = 0; i < 255; i++)
        encoded += "%41";
    REQUIRE(parses(("redis://u:" + encoded + "@h").c_str(), &u));
    CHECK_EQ(strlen(u.password), 255u);
}

TEST_CASE(host_names)
{
    RedisUrl u;
    REQUIRE(parses("redis://redis_primary-1.site.example:6380", &u)); // '_' as in container names
    CHECK(strcmp(u.host, "redis_primary-1.site.example") == 0);
}

TEST_CASE(ipv6)
{
    RedisUrl u;
    REQUIRE(parses("redis://[::1]:6380", &u));
    CHECK(strcmp(u.host, "::1") == 0);
    CHECK_EQ(u.port, 6380);
    REQUIRE(parses("redis://[::1]", &u));
    CHECK(strcmp(u.host, "::1") == 0);
    CHECK_EQ(u.port, 6379);
    REQUIRE(parses("redis://u:p@[fe80::1]:6381/4", &u));
    CHECK(strcmp(u.user, "u") == 0);
    CHECK(strcmp(u.password, "p") == 0);
    CHECK(strcmp(u.host, "fe80::1") == 0);
    CHECK_EQ(u.port, 6381);
    CHECK_EQ(u.db, 4);
}

TEST_CASE(malformed)
{
    static const char *const bad[] = {
        "",
        "http://x",
        "redis:/x",
        "redis://",
        "redis://:6379",
        "redis://h:",
        "redis://h:0",
        "redis://h:65536",
        "redis://h:99999",
        "redis://h:-1",
        "redis://h:12ab",
        "redis://h:6379x",
        "redis://h/abc",
        "redis://h/-1",
        "redis://h/1/2",
        "redis://[::1",
        "redis://[::1]6380",
        "redis://[]:6380",
        "redis://[::1]:",
        "redis://user:pass@",
        "redis://user:pass@:6379",
        // Hosts with characters no host has: refused as malformed, not
        // reported later as unreachable.
        "redis://127.0.0.1?x=1",
        "redis://127.0.0.1 junk:6379",
        "redis://127.0.0.1 ",
        "redis://h#frag",
        "redis://h\t:6379",
        "redis://[::1 ]:6379",
        "redis-cluster://a:7000,b c:7001",
        "redis-sentinel://s1,s 2/mymaster",
    };
    for (const char *s : bad) {
        RedisUrl u;
        bool ok = parses(s, &u);
        if (ok)
            fprintf(stderr, "  accepted malformed url \"%s\"\n", s);
        CHECK(!ok);
    }
    RedisUrl u;
    CHECK(!parse_redis_url(nullptr, &u));
}

TEST_CASE(field_limits)
{
    // Parts too long for their fixed fields are refused, not truncated.
    char url[1024];
    char host[300];
    memset(host, 'h', sizeof(host) - 1);
    host[sizeof(host) - 1] = 0;
    snprintf(url, sizeof(url), "redis://%s:6379", host);
    RedisUrl u;
    CHECK(!parses(url, &u));

    host[255] = 0; // 255 bytes + NUL fits host[256]
    snprintf(url, sizeof(url), "redis://%s:6379", host);
    CHECK(parses(url, &u));
    CHECK_EQ(strlen(u.host), 255);

    char pw[300];
    memset(pw, 'p', sizeof(pw) - 1);
    pw[sizeof(pw) - 1] = 0;
    snprintf(url, sizeof(url), "redis://u:%s@h", pw);
    CHECK(!parses(url, &u));

    char user[200];
    memset(user, 'u', sizeof(user) - 1);
    user[sizeof(user) - 1] = 0;
    snprintf(url, sizeof(url), "redis://%s:p@h", user);
    CHECK(!parses(url, &u));

    CHECK(!parses("redis://h/1000001", &u));
    CHECK(parses("redis://h/1000000", &u));
}

TEST_CASE(unix_sockets)
{
    RedisUrl u;
    REQUIRE(parses("unix:///run/redis/redis.sock", &u));
    CHECK(u.unix_socket);
    CHECK(strcmp(u.path, "/run/redis/redis.sock") == 0);
    CHECK_EQ(u.db, 0);
    CHECK(u.password[0] == 0);

    REQUIRE(parses("unix:///tmp/r.sock?db=3", &u));
    CHECK(strcmp(u.path, "/tmp/r.sock") == 0);
    CHECK_EQ(u.db, 3);

    REQUIRE(parses("unix://gw:s3cr@t/x@/var/r.sock?db=1", &u)); // the last "@/" ends the credentials
    CHECK(strcmp(u.user, "gw") == 0);
    CHECK(strcmp(u.password, "s3cr@t/x") == 0);
    CHECK(strcmp(u.path, "/var/r.sock") == 0);
    CHECK_EQ(u.db, 1);
    // An unencoded "@/" in the password: read whole, never cut with its tail
    // taken for the path (and shown in messages).
    REQUIRE(parses("unix://:Se@/cret@/tmp/x.sock", &u));
    CHECK(strcmp(u.password, "Se@/cret") == 0);
    CHECK(strcmp(u.path, "/tmp/x.sock") == 0);
    REQUIRE(parses("unix://onlypw@/r.sock", &u));
    CHECK(u.user[0] == 0);
    CHECK(strcmp(u.password, "onlypw") == 0);

    CHECK(!parses("unix://", &u));
    CHECK(!parses("unix:///", &u));             // no socket named
    CHECK(!parses("unix://relative.sock", &u)); // not absolute, no credentials
    CHECK(!parses("unix:///r.sock?db=", &u));
    CHECK(!parses("unix:///r.sock?db=x", &u));
    CHECK(!parses("unix:///r.sock?timeout=1", &u)); // only db is understood
    CHECK(!parses("unix:///r.sock?db=1000001", &u));

    // sun_path holds 108 bytes: a path of 107 bytes fits, 108 does not.
    char url[200], path[120];
    memset(path, 'p', sizeof(path));
    path[0] = '/';
    path[107] = 0;
    snprintf(url, sizeof(url), "unix://%s", path);
    CHECK(parses(url, &u));
    path[107] = 'p';
    path[108] = 0;
    snprintf(url, sizeof(url), "unix://%s", path);
    CHECK(!parses(url, &u));
}

TEST_CASE(redaction_keeps_the_scheme_and_hides_only_the_credentials)
{
    RedisUrl u;
    char out[128];
    const char *in[][2] = {{"redis://h:1/2", "redis://h:1/2"},
                           {"redis://u:p@h:1/2", "redis://***@h:1/2"},
                           {"unix:///r.sock?db=2", "unix:///r.sock?db=2"},
                           {"unix://u:p@/r.sock?db=2", "unix://***@/r.sock?db=2"},
                           {"unix://:Se@/cret@/tmp/x.sock", "unix://***@/tmp/x.sock"}};
    for (auto &c : in) {
        REQUIRE(parses(c[0], &u));
        redact_redis_url(c[0], u, out, sizeof(out));
        CHECK(strcmp(out, c[1]) == 0);
    }
}

TEST_CASE(rediss_is_tcp_with_tls)
{
    RedisUrl u;
    REQUIRE(parses("rediss://u:p@redis.example:6380/2", &u));
    CHECK(u.tls);
    CHECK(!u.unix_socket);
    CHECK(strcmp(u.host, "redis.example") == 0);
    CHECK_EQ(u.port, 6380);
    CHECK_EQ(u.db, 2);
    REQUIRE(parses("rediss://h", &u));
    CHECK_EQ(u.port, 6379);
    REQUIRE(parses("redis://h", &u));
    CHECK(!u.tls);
    CHECK(!parses("redisss://h", &u));
    char out[64];
    REQUIRE(parses("rediss://u:p@h:1", &u));
    redact_redis_url("rediss://u:p@h:1", u, out, sizeof(out));
    CHECK(strcmp(out, "rediss://***@h:1") == 0);
}

TEST_CASE(sentinel_urls)
{
    RedisUrl u;
    REQUIRE(parses("redis-sentinel://u:p@10.0.0.1:26380,10.0.0.2,[::1]:26381/mymaster/3", &u));
    CHECK(u.sentinel);
    CHECK_EQ(u.nhosts, 3);
    CHECK(strcmp(u.master_name, "mymaster") == 0);
    CHECK_EQ(u.db, 3);
    CHECK(strcmp(u.user, "u") == 0);
    CHECK(strcmp(u.password, "p") == 0);
    char host[256];
    uint16_t port = 0;
    REQUIRE(host_address(u, 0, host, sizeof(host), &port));
    CHECK(strcmp(host, "10.0.0.1") == 0);
    CHECK_EQ(port, 26380);
    REQUIRE(host_address(u, 1, host, sizeof(host), &port));
    CHECK(strcmp(host, "10.0.0.2") == 0);
    CHECK_EQ(port, 26379); // the sentinel default
    REQUIRE(host_address(u, 2, host, sizeof(host), &port));
    CHECK(strcmp(host, "::1") == 0);
    CHECK_EQ(port, 26381);
    CHECK(!host_address(u, 3, host, sizeof(host), &port));

    REQUIRE(parses("redis-sentinel://s1/m", &u));
    CHECK_EQ(u.nhosts, 1);
    CHECK_EQ(u.db, 0);
    CHECK(!parses("redis-sentinel://s1", &u));                  // no master name
    CHECK(!parses("redis-sentinel://s1/", &u));                 // empty master name
    CHECK(!parses("redis-sentinel:///m", &u));                  // no sentinel
    CHECK(!parses("redis-sentinel://s1,/m", &u));               // an empty one
    CHECK(!parses("redis-sentinel://s1:0/m", &u));              // port 0
    CHECK(!parses("redis-sentinel://s1/m/x", &u));              // db not a number
    CHECK(!parses("redis-sentinel://a,b,c,d,e,f,g,h,i/m", &u)); // more than 8
    REQUIRE(parses("redis-sentinel://a,b,c,d,e,f,g,h/m", &u));
    CHECK_EQ(u.nhosts, 8);

    char out[128];
    REQUIRE(parses("redis-sentinel://u:p@s1,s2/m", &u));
    redact_redis_url("redis-sentinel://u:p@s1,s2/m", u, out, sizeof(out));
    CHECK(strcmp(out, "redis-sentinel://***@s1,s2/m") == 0);
}

TEST_CASE(tls_sentinel_urls)
{
    RedisUrl u;
    REQUIRE(parses("rediss-sentinel://u:p@s1:26380,s2/m/2", &u));
    CHECK(u.sentinel);
    CHECK(u.tls); // to the sentinels and to the master
    CHECK_EQ(u.nhosts, 2);
    CHECK(strcmp(u.master_name, "m") == 0);
    CHECK_EQ(u.db, 2);
    char out[128];
    redact_redis_url("rediss-sentinel://u:p@s1:26380,s2/m/2", u, out, sizeof(out));
    CHECK(strcmp(out, "rediss-sentinel://***@s1:26380,s2/m/2") == 0);
    REQUIRE(parses("redis-sentinel://s1/m", &u));
    CHECK(!u.tls);
    CHECK(!parses("rediss-sentinel://s1", &u)); // no master name
}

TEST_CASE(cluster_urls)
{
    RedisUrl u;
    REQUIRE(parses("redis-cluster://u:p/w@10.0.0.1:7000,10.0.0.2,[::1]:7002", &u));
    CHECK(u.cluster);
    CHECK(!u.sentinel);
    CHECK(!u.tls);
    CHECK_EQ(u.nhosts, 3);
    CHECK(strcmp(u.user, "u") == 0);
    CHECK(strcmp(u.password, "p/w") == 0); // a slash in the password is not a db
    char host[256];
    uint16_t port = 0;
    REQUIRE(host_address(u, 1, host, sizeof(host), &port));
    CHECK(strcmp(host, "10.0.0.2") == 0);
    CHECK_EQ(port, 6379); // a cluster node's default, not a sentinel's
    REQUIRE(host_address(u, 2, host, sizeof(host), &port));
    CHECK(strcmp(host, "::1") == 0);
    CHECK_EQ(port, 7002);
    char out[128];
    redact_redis_url("redis-cluster://u:p/w@10.0.0.1:7000,10.0.0.2,[::1]:7002", u, out, sizeof(out));
    CHECK(strcmp(out, "redis-cluster://***@10.0.0.1:7000,10.0.0.2,[::1]:7002") == 0);

    REQUIRE(parses("rediss-cluster://n1:7000", &u));
    CHECK(u.cluster);
    CHECK(u.tls);
    CHECK_EQ(u.nhosts, 1);
    CHECK(!parses("redis-cluster://n1:7000/0", &u)); // a cluster has db 0 only: no path at all
    CHECK(!parses("redis-cluster://n1:7000/", &u));
    CHECK(!parses("redis-cluster://", &u));
    CHECK(!parses("redis-cluster://n1,", &u)); // a trailing comma
    CHECK(!parses("redis-cluster://n1,,n2", &u));
    CHECK(!parses("redis-cluster://n1:0", &u));
    CHECK(!parses("redis-cluster://n1:65536", &u));
    CHECK(!parses("redis-cluster://a,b,c,d,e,f,g,h,i", &u)); // more than 8 seeds
    REQUIRE(parses("redis-cluster://a,b,c,d,e,f,g,h", &u));
    CHECK_EQ(u.nhosts, 8);
}

// +switch-master: "<name> <old-ip> <old-port> <new-ip> <new-port>".
TEST_CASE(switch_master_messages)
{
    char host[64];
    uint16_t port = 0;
    const char *m = "mymaster 127.0.0.1 6379 10.0.0.2 6380";
    REQUIRE(parse_switch_master(m, strlen(m), "mymaster", host, sizeof(host), &port));
    CHECK(strcmp(host, "10.0.0.2") == 0);
    CHECK_EQ(port, 6380);
    CHECK(!parse_switch_master(m, strlen(m), "mymaste", host, sizeof(host), &port)); // another master
    CHECK(!parse_switch_master(m, strlen(m), "mymaster2", host, sizeof(host), &port));
    const char *bad[] = {"",
                         "mymaster",
                         "mymaster 127.0.0.1 6379",
                         "mymaster 127.0.0.1 6379 10.0.0.2",
                         "mymaster 127.0.0.1 6379 10.0.0.2 0",
                         "mymaster 127.0.0.1 6379 10.0.0.2 65536",
                         "mymaster 127.0.0.1 6379 10.0.0.2 63x"};
    for (const char *b : bad)
        CHECK(!parse_switch_master(b, strlen(b), "mymaster", host, sizeof(host), &port));
    // A host longer than the buffer is refused, not cut.
    const char *longhost = "mymaster a 1 0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef 1";
    CHECK(!parse_switch_master(longhost, strlen(longhost), "mymaster", host, sizeof(host), &port));
    // Only the message's length is read (no NUL needed).
    const char *padded = "mymaster 127.0.0.1 6379 10.0.0.3 7000trailing";
    REQUIRE(parse_switch_master(padded, strlen(padded) - 8, "mymaster", host, sizeof(host), &port));
    CHECK_EQ(port, 7000);
    // A NUL in the new host would make it another host ("10.0.0.4" here, or
    // "" when it comes first): refused (found by tests/fuzz/fuzz_parsers).
    const char nul[] = "mymaster 127.0.0.1 6379 10.0.0.4\0evil 7001";
    CHECK(!parse_switch_master(nul, sizeof(nul) - 1, "mymaster", host, sizeof(host), &port));
    const char lead[] = "mymaster 127.0.0.1 6379 \0 7001";
    CHECK(!parse_switch_master(lead, sizeof(lead) - 1, "mymaster", host, sizeof(host), &port));
}
