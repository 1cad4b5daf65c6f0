// SPDX-License-Identifier: BSD-3-Clause
// RESP encoding (src/resp.hpp): the exact request bytes, checked byte for byte
// and by parsing them back with hiredis's reader (a request is a multibulk of
// bulk strings, which the reader parses like an array reply).
#include <hiredis/hiredis.h>
#include <stdint.h>
#include <string.h>

#include "check.hpp"
#include "base/resp.hpp"
#include "redisson/names.hpp"

using namespace edgelock;

// Parses one multibulk from bytes; nullptr unless exactly one complete reply.
static redisReply *parse(const char *bytes, size_t len)
{
    redisReader *r = redisReaderCreate();
    if (!r)
        return nullptr;
    void *reply = nullptr;
    bool ok = redisReaderFeed(r, bytes, len) == REDIS_OK && redisReaderGetReply(r, &reply) == REDIS_OK &&
              reply != nullptr;
    if (ok) {
        void *extra = nullptr; // nothing may follow the one command
        ok = redisReaderGetReply(r, &extra) == REDIS_OK && extra == nullptr;
        if (extra)
            freeReplyObject(extra);
    }
    redisReaderFree(r);
    if (!ok && reply) {
        freeReplyObject(reply);
        reply = nullptr;
    }
    return static_cast<redisReply *>(reply);
}

static bool arg_is(const redisReply *a, const void *p, size_t n)
{
    return a->type == REDIS_REPLY_STRING && a->len == n && memcmp(a->str, p, n) == 0;
}
static bool arg_is(const redisReply *a, const char *s)
{
    return arg_is(a, s, strlen(s));
}

TEST_CASE(exact_bytes_of_a_simple_command)
{
    char buf[256];
    RespCommand rc(buf, sizeof(buf));
    rc.arg("PTTL");
    rc.arg("lock");
    const char *out = nullptr;
    size_t len = 0;
    REQUIRE(rc.finish(&out, &len));
    const char want[] = "*2\r\n$4\r\nPTTL\r\n$4\r\nlock\r\n";
    CHECK_EQ(len, sizeof(want) - 1);
    CHECK(memcmp(out, want, sizeof(want) - 1) == 0);
    // The bytes live in the caller's buffer.
    CHECK(out >= buf && out + len <= buf + sizeof(buf));
}

TEST_CASE(exact_bytes_with_numbers_and_empty_arg)
{
    char buf[256];
    RespCommand rc(buf, sizeof(buf));
    rc.arg("EVALSHA");
    rc.arg_u64(0);
    rc.arg_i64(-1);
    rc.arg_u64(UINT64_MAX);
    rc.arg_i64(INT64_MIN);
    rc.arg("", 0);
    const char *out;
    size_t len;
    REQUIRE(rc.finish(&out, &len));
    const char want[] = "*6\r\n$7\r\nEVALSHA\r\n$1\r\n0\r\n$2\r\n-1\r\n$20\r\n18446744073709551615\r\n"
                        "$20\r\n-9223372036854775808\r\n$0\r\n\r\n";
    CHECK_EQ(len, sizeof(want) - 1);
    CHECK(memcmp(out, want, sizeof(want) - 1) == 0);
}

TEST_CASE(zero_args)
{
    char buf[64];
    RespCommand rc(buf, sizeof(buf));
    const char *out;
    size_t len;
    REQUIRE(rc.finish(&out, &len));
    CHECK_EQ(len, 4);
    CHECK(memcmp(out, "*0\r\n", 4) == 0);
}

TEST_CASE(binary_args_round_trip_through_hiredis_reader)
{
    const char bin[] = {'a', '\0', '\r', '\n', (char)0xff, '$', '*', '{', '}', ' '};
    char buf[512];
    RespCommand rc(buf, sizeof(buf));
    rc.arg("EVAL");
    rc.arg(bin, sizeof(bin));
    Writer &w = rc.begin_arg(); // a prefixed key built piecewise
    write_prefix_name(w, kLockChannelPrefix, bin, sizeof(bin));
    rc.end_arg();
    rc.arg_i64(30000);
    Writer &o = rc.begin_arg();
    write_owner(o, "cid", 77);
    rc.end_arg();
    const char *out;
    size_t len;
    REQUIRE(rc.finish(&out, &len));

    redisReply *r = parse(out, len);
    REQUIRE(r);
    CHECK(r->type == REDIS_REPLY_ARRAY);
    CHECK_EQ(r->elements, 5);
    if (r->type == REDIS_REPLY_ARRAY && r->elements == 5) {
        CHECK(arg_is(r->element[0], "EVAL"));
        CHECK(arg_is(r->element[1], bin, sizeof(bin)));
        // bin holds '{': the channel has no extra braces.
        char chan[64];
        size_t pl = strlen(kLockChannelPrefix);
        memcpy(chan, kLockChannelPrefix, pl);
        chan[pl] = ':';
        memcpy(chan + pl + 1, bin, sizeof(bin));
        CHECK(arg_is(r->element[2], chan, pl + 1 + sizeof(bin)));
        CHECK(arg_is(r->element[3], "30000"));
        CHECK(arg_is(r->element[4], "cid:77"));
    }
    freeReplyObject(r);
}

TEST_CASE(many_args_round_trip)
{
    // More than 9 arguments: the count header grows a digit.
    static char buf[64 * 1024];
    RespCommand rc(buf, sizeof(buf));
    const int n = 1234;
    for (int i = 0; i < n; i++)
        rc.arg_u64((uint64_t)i * 7919u);
    const char *out;
    size_t len;
    REQUIRE(rc.finish(&out, &len));
    CHECK(memcmp(out, "*1234\r\n", 7) == 0);
    redisReply *r = parse(out, len);
    REQUIRE(r);
    CHECK_EQ(r->elements, n);
    int bad = 0;
    for (size_t i = 0; i < r->elements; i++) {
        char want[24];
        snprintf(want, sizeof(want), "%llu", (unsigned long long)i * 7919u);
        if (!arg_is(r->element[i], want))
            bad++;
    }
    CHECK_EQ(bad, 0);
    freeReplyObject(r);
}

TEST_CASE(large_binary_arg_round_trips)
{
    static char big[5000];
    for (size_t i = 0; i < sizeof(big); i++)
        big[i] = (char)(i * 31 + 7);
    static char buf[8192];
    RespCommand rc(buf, sizeof(buf));
    rc.arg("SET");
    rc.arg(big, sizeof(big));
    const char *out;
    size_t len;
    REQUIRE(rc.finish(&out, &len));
    redisReply *r = parse(out, len);
    REQUIRE(r);
    CHECK_EQ(r->elements, 2);
    if (r->elements == 2)
        CHECK(arg_is(r->element[1], big, sizeof(big)));
    freeReplyObject(r);
}

TEST_CASE(overflow_is_reported)
{
    char buf[32];
    RespCommand rc(buf, sizeof(buf));
    rc.arg("EVALSHA");
    rc.arg("this argument does not fit in 32 bytes");
    const char *out = nullptr;
    size_t len = 0;
    CHECK(!rc.finish(&out, &len));

    // Exactly full fits; one byte less does not. "*1\r\n" + "$1\r\nx\r\n" = 11
    // bytes plus the terminating NUL, in a buffer with 16 bytes of header room.
    char exact[16 + 7 + 1];
    RespCommand fits(exact, sizeof(exact));
    fits.arg("x");
    CHECK(fits.finish(&out, &len));
    CHECK_EQ(len, 11);
    CHECK_EQ(out[len], 0); // hiredis 0.14 strchr()s (UN)SUBSCRIBE arguments
    char short_buf[16 + 7];
    RespCommand too_small(short_buf, sizeof(short_buf));
    too_small.arg("x");
    CHECK(!too_small.finish(&out, &len));

    // A buffer no larger than the header room cannot hold anything.
    char tiny[8];
    RespCommand t(tiny, sizeof(tiny));
    CHECK(!t.finish(&out, &len));
}

TEST_CASE(overflow_of_a_piecewise_arg_is_reported)
{
    static char buf[32 * 1024];
    RespCommand rc(buf, sizeof(buf));
    rc.arg("X");
    Writer &w = rc.begin_arg();
    static char chunk[1024];
    memset(chunk, 'k', sizeof(chunk));
    for (int i = 0; i < 10; i++)
        w.bytes(chunk, sizeof(chunk)); // more than one arg may hold
    rc.end_arg();
    const char *out;
    size_t len;
    CHECK(!rc.finish(&out, &len));

    // The scratch is reset by the next begin_arg.
    RespCommand ok(buf, sizeof(buf));
    Writer &w2 = ok.begin_arg();
    w2.bytes(chunk, 100);
    ok.end_arg();
    CHECK(ok.finish(&out, &len));
}
