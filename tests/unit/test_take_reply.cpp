// SPDX-License-Identifier: BSD-3-Clause
// How a semaphore's take or a latch's count is read (locks/permits.hpp), from
// the RESP bytes Redis sends for each script answer, through hiredis's reader;
// and the numbers in them (redis/reply.hpp).
#include <hiredis/hiredis.h>
#include <stdint.h>
#include <string.h>

#include "check.hpp"
#include "locks/permits.hpp"
#include "redis/reply.hpp"

using namespace edgelock;

namespace
{

// Feed resp to a fresh reader; the one reply (caller frees).
redisReply *reply_of(const char *resp)
{
    redisReader *r = redisReaderCreate();
    redisReaderFeed(r, resp, strlen(resp));
    void *out = nullptr;
    if (redisReaderGetReply(r, &out) != REDIS_OK)
        out = nullptr;
    redisReaderFree(r);
    return static_cast<redisReply *>(out);
}

TakeAnswer read(edgelock_lock_kind kind, const char *resp, int64_t now, int64_t *ttl)
{
    redisReply *rep = reply_of(resp);
    if (!rep)
        return TakeAnswer::Malformed;
    TakeAnswer a = read_take_reply(kind, rep, now, ttl);
    freeReplyObject(rep);
    return a;
}

} // namespace

TEST_CASE(expirable_take_answers)
{
    int64_t ttl = 0;
    // Lua's 'OK' string comes back as a bulk string; a status also counts.
    CHECK(read(EDGELOCK_PERMIT_SEMAPHORE, "$2\r\nOK\r\n", 1000, &ttl) == TakeAnswer::Taken);
    CHECK(read(EDGELOCK_PERMIT_SEMAPHORE, "+OK\r\n", 1000, &ttl) == TakeAnswer::Taken);
    // nil: no permit will expire; only a message helps.
    CHECK(read(EDGELOCK_PERMIT_SEMAPHORE, "$-1\r\n", 1000, &ttl) == TakeAnswer::NotYet);
    CHECK_EQ(ttl, -1);
    // ':<deadline>': wake then (expiry publishes nothing).
    CHECK(read(EDGELOCK_PERMIT_SEMAPHORE, "$14\r\n:1700000005000\r\n", 1700000001000, &ttl) ==
          TakeAnswer::NotYet);
    CHECK_EQ(ttl, 4000);
    CHECK(read(EDGELOCK_PERMIT_SEMAPHORE, "$14\r\n:1700000005000\r\n", 1700000009000, &ttl) ==
          TakeAnswer::NotYet);
    CHECK_EQ(ttl, 0); // already past: retry at once
    // A deadline we cannot read: look again later rather than sleep forever.
    CHECK(read(EDGELOCK_PERMIT_SEMAPHORE, "$8\r\n:1.7e+12\r\n", 0, &ttl) == TakeAnswer::NotYet);
    CHECK(ttl > 0);
    CHECK(read(EDGELOCK_PERMIT_SEMAPHORE, ":1\r\n", 0, &ttl) == TakeAnswer::Malformed);
    CHECK(read(EDGELOCK_PERMIT_SEMAPHORE, "$2\r\nNO\r\n", 0, &ttl) == TakeAnswer::Malformed);
    CHECK(read(EDGELOCK_PERMIT_SEMAPHORE, "$1\r\n:\r\n", 0, &ttl) == TakeAnswer::Malformed);
}

TEST_CASE(plain_take_and_latch_answers)
{
    int64_t ttl = 0;
    CHECK(read(EDGELOCK_SEMAPHORE, ":1\r\n", 0, &ttl) == TakeAnswer::Taken);
    CHECK(read(EDGELOCK_SEMAPHORE, ":0\r\n", 0, &ttl) == TakeAnswer::NotYet);
    CHECK_EQ(ttl, -1);
    CHECK(read(EDGELOCK_SEMAPHORE, ":2\r\n", 0, &ttl) == TakeAnswer::Malformed);
    CHECK(read(EDGELOCK_SEMAPHORE, "$-1\r\n", 0, &ttl) == TakeAnswer::Malformed);
    // A latch's GET: absent or <= 0 is open.
    CHECK(read(EDGELOCK_LATCH, "$-1\r\n", 0, &ttl) == TakeAnswer::Taken);
    CHECK(read(EDGELOCK_LATCH, "$1\r\n0\r\n", 0, &ttl) == TakeAnswer::Taken);
    CHECK(read(EDGELOCK_LATCH, "$2\r\n-3\r\n", 0, &ttl) == TakeAnswer::Taken);
    CHECK(read(EDGELOCK_LATCH, "$1\r\n2\r\n", 0, &ttl) == TakeAnswer::NotYet);
    CHECK_EQ(ttl, -1);
    CHECK(read(EDGELOCK_LATCH, "$3\r\nabc\r\n", 0, &ttl) == TakeAnswer::Malformed);
    CHECK(read(EDGELOCK_REENTRANT, "$-1\r\n", 0, &ttl) == TakeAnswer::Malformed); // not its business
}

TEST_CASE(permit_ids_differ_in_their_last_two_bytes_only)
{
    uint8_t base[16], a[16], b[16];
    for (int i = 0; i < 16; i++)
        base[i] = (uint8_t)(0xa0 + i);
    base[14] = base[15] = 0;
    permit_id(base, 0, a);
    permit_id(base, 258, b);
    CHECK(memcmp(a, base, 16) == 0);
    CHECK(memcmp(b, base, 14) == 0);
    CHECK_EQ(b[14], 1);
    CHECK_EQ(b[15], 2);
}

// A number in a bulk string or a message is digits with an optional '-', all
// of it, within int64_t: strtoll's leading blanks, '+' and stop at a NUL are
// not taken (found by tests/fuzz/fuzz_parsers).
TEST_CASE(decimal_numbers_are_digits_only)
{
    int64_t v = 0;
    CHECK(parse_decimal("42", 2, &v) && v == 42);
    CHECK(parse_decimal("-7", 2, &v) && v == -7);
    CHECK(parse_decimal("-9223372036854775808", 20, &v) && v == INT64_MIN);
    CHECK(!parse_decimal("9223372036854775808", 19, &v));
    const char *bad[] = {"", "-", " 1", "+1", "1 ", "1x", "--1", "0x10"};
    for (const char *b : bad)
        CHECK(!parse_decimal(b, strlen(b), &v));
    const char nul[] = "2\0009";
    CHECK(!parse_decimal(nul, sizeof(nul) - 1, &v));
}
