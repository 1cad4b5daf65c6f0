// SPDX-License-Identifier: BSD-3-Clause
// Hostile input, bounded and reproducible (a fixed seed, a few thousand cases
// each, milliseconds): mutated URLs through the parser and the redaction;
// random bytes through hiredis's reader with edgelock's guard; and random
// well-formed replies of every type and shape to each lock call on the fake
// link. Nothing may crash (ASan and UBSan watch in CI), every call ends with
// a status it documents, and no table entry is left behind.
#include <hiredis/hiredis.h>
#include <string.h>

#include <string>
#include <vector>

#include "check.hpp"
#include "fake/fake_engine.hpp"
#include "fake/harness.hpp"
#include "locks/acquire.hpp"
#include "locks/release.hpp"
#include "redis/reader_guard.hpp"
#include "redis/url.hpp"

using namespace edgelock;
using namespace fake;

namespace
{

// xorshift64*: the same cases on every run and every machine.
struct Rng {
    uint64_t s;
    uint64_t next()
    {
        s ^= s >> 12;
        s ^= s << 25;
        s ^= s >> 27;
        return s * 2685821657736338717ull;
    }
    uint32_t below(uint32_t n) { return (uint32_t)(next() % n); }
};

const char *const kSeedUrls[] = {
    "redis://127.0.0.1",
    "redis://u:p@host:6380/3",
    "rediss://[::1]:6379/0",
    "redis://:secret@h",
    "unix:///run/redis/redis.sock?db=2",
    "unix://u:p@/tmp/r.sock",
    "redis-sentinel://u:p@10.0.0.1:26380,10.0.0.2,[::1]:26381/mymaster/3",
    "rediss-sentinel://s1/m",
};

std::string mutate(Rng &rng, std::string s)
{
    static const char kBytes[] = ":/@[],?=%\\0123456789abcdefXYZ \t\x01\xff-.";
    int edits = 1 + (int)rng.below(6);
    for (int e = 0; e < edits; e++) {
        uint32_t pos = s.empty() ? 0 : rng.below((uint32_t)s.size() + 1);
        switch (rng.below(5)) {
        case 0: // insert
            s.insert(pos, 1, kBytes[rng.below(sizeof(kBytes) - 1)]);
            break;
        case 1: // delete
            if (pos < s.size())
                s.erase(pos, 1);
            break;
        case 2: // replace
            if (pos < s.size())
                s[pos] = (char)rng.below(256);
            break;
        case 3: // repeat a piece: long hosts, many sentinels, long passwords
            if (!s.empty()) {
                uint32_t len = 1 + rng.below(16);
                std::string piece = s.substr(pos < s.size() ? pos : 0, len);
                for (uint32_t k = rng.below(40); k > 0; k--)
                    s.insert(pos, piece);
            }
            break;
        default: // cut
            s.resize(pos);
            break;
        }
    }
    return s;
}

} // namespace

TEST_CASE(mutated_urls_parse_or_are_refused_and_redaction_hides_the_password)
{
    Rng rng{0x5eed0001};
    int parsed = 0;
    for (int i = 0; i < 20000; i++) {
        std::string url = mutate(rng, kSeedUrls[rng.below(sizeof(kSeedUrls) / sizeof(kSeedUrls[0]))]);
        RedisUrl u;
        if (!parse_redis_url(url.c_str(), &u))
            continue;
        parsed++;
        // Whatever parsed is usable as it claims.
        CHECK(u.unix_socket || u.sentinel || u.port != 0);
        CHECK(strlen(u.host) < sizeof(u.host) && strlen(u.password) < sizeof(u.password));
        if (u.sentinel) {
            CHECK(u.nhosts >= 1 && u.nhosts <= kMaxHosts && u.master_name[0]);
            char host[256];
            uint16_t port;
            for (unsigned k = 0; k < u.nhosts; k++)
                CHECK(host_address(u, k, host, sizeof(host), &port) && port != 0);
        }
        char out[64];
        redact_redis_url(url.c_str(), u, out, sizeof(out)); // cut to fit, NUL-terminated
        CHECK(strlen(out) < sizeof(out));
        std::string full(url.size() + 8, '\0');
        redact_redis_url(url.c_str(), u, &full[0], full.size());
        if (u.password[0] && strlen(u.password) >= 4)
            CHECK(strstr(full.c_str(), u.password) == nullptr ||
                  strstr(url.c_str() + u.host_offset, u.password));
    }
    CHECK(parsed > 1000); // the mutations do reach the parser's valid paths
}

// Random bytes (and random bytes behind a valid prefix) through hiredis's
// reader with the guard: replies, or a reader error; never a crash, and no
// array over the cap.
TEST_CASE(random_bytes_through_the_guarded_reader)
{
    Rng rng{0x5eed0002};
    static const char kPrefixes[][8] = {"*",       "$",       ":", "+", "-", "*2\r\n",
                                        "$-1\r\n", "*-1\r\n", ">", "%", "~"};
    int replies = 0, errors = 0;
    for (int i = 0; i < 20000; i++) {
        redisReader *r = redisReaderCreate();
        REQUIRE(r);
        reader_guard_attach(r, nullptr);
        std::string in = kPrefixes[rng.below(sizeof(kPrefixes) / sizeof(kPrefixes[0]))];
        uint32_t n = rng.below(64);
        for (uint32_t k = 0; k < n; k++) {
            uint32_t pick = rng.below(10);
            in += pick < 3   ? "\r\n"
                  : pick < 6 ? std::to_string(rng.next() % 3000000000ull)
                             : std::string(1, (char)rng.below(256));
        }
        redisReaderFeed(r, in.data(), in.size());
        for (int k = 0; k < 8; k++) {
            void *reply = nullptr;
            if (redisReaderGetReply(r, &reply) != REDIS_OK) {
                errors++;
                break;
            }
            if (!reply)
                break;
            replies++;
            auto *rep = static_cast<redisReply *>(reply);
            if (rep->type == REDIS_REPLY_ARRAY)
                CHECK(rep->elements <= kMaxReplyElements);
            freeReplyObject(reply);
        }
        redisReaderFree(r);
    }
    CHECK(replies > 100 && errors > 100);
}

namespace
{

// A random well-formed reply: any type, any shape, nesting up to depth 3.
std::string random_reply(Rng &rng, int depth = 0)
{
    switch (rng.below(depth < 3 ? 8 : 6)) {
    case 0: return "$-1\r\n";
    case 1: return ":" + std::to_string((int64_t)rng.next()) + "\r\n";
    case 2: return ":" + std::to_string((int64_t)rng.below(3) - 1) + "\r\n";
    case 3: return "+OK\r\n";
    case 4: return "-ERR random\r\n";
    case 5: {
        std::string s(rng.below(8), 'x');
        return "$" + std::to_string(s.size()) + "\r\n" + s + "\r\n";
    }
    default: {
        uint32_t n = rng.below(4);
        std::string out = "*" + std::to_string(n) + "\r\n";
        for (uint32_t k = 0; k < n; k++)
            out += random_reply(rng, depth + 1);
        return out;
    }
    }
}

bool documented_lock_status(edgelock_status st)
{
    return st == EDGELOCK_OK || st == EDGELOCK_ERR_WAIT_TIMEOUT || st == EDGELOCK_ERR_PROTOCOL ||
           st == EDGELOCK_ERR_REDIS;
}

bool documented_unlock_status(edgelock_status st)
{
    return st == EDGELOCK_OK || st == EDGELOCK_ERR_NOT_OWNER || st == EDGELOCK_ERR_LOST ||
           st == EDGELOCK_ERR_PROTOCOL || st == EDGELOCK_ERR_REDIS;
}

} // namespace

// Each lock kind's acquire, the watchdog's renewal and the unlock answered
// with random replies: a documented status each time, the tables empty after.
TEST_CASE(random_replies_to_every_lock_call_end_in_documented_statuses)
{
    Rng rng{0x5eed0003};
    const edgelock_lock_kind kinds[] = {EDGELOCK_REENTRANT, EDGELOCK_FAIR, EDGELOCK_READ, EDGELOCK_WRITE,
                                        EDGELOCK_FENCED};
    int unlocks = 0;
    for (int round = 0; round < 400; round++) {
        Harness h;
        REQUIRE(h.c);
        edgelock_lock lk = h.lock("r", kinds[rng.below(5)]);
        Result a;
        REQUIRE(acquire_start(h.c, lk, 7, 0, EDGELOCK_LEASE_WATCHDOG, record, &a) == EDGELOCK_OK);
        // Answer everything sent, at random, until the acquire is over.
        for (int k = 0; k < 8 && a.calls == 0 && !h.cmd().pending.empty(); k++)
            h.reply(random_reply(rng));
        if (a.calls == 0)
            continue; // still waiting (held elsewhere): the harness ends it
        CHECK_EQ(a.calls, 1);
        CHECK(documented_lock_status(a.st));
        // What else went out (a fair waiter leaving its queue), renewals, then
        // an unlock, answered at random too; nothing is left to time out.
        while (!h.cmd().pending.empty())
            h.reply(random_reply(rng));
        h.loop.advance(10000);
        while (!h.cmd().pending.empty())
            h.reply(random_reply(rng));
        Result u;
        if (release_start(h.c, lk, 7, record, &u) == EDGELOCK_OK) {
            while (!h.cmd().pending.empty() && u.calls == 0)
                h.reply(random_reply(rng));
            CHECK_EQ(u.calls, 1);
            CHECK(documented_unlock_status(u.st));
            unlocks++;
        }
        while (!h.cmd().pending.empty())
            h.reply(random_reply(rng));
        h.loop.advance(100000);
        while (!h.cmd().pending.empty())
            h.reply(random_reply(rng));
        CHECK_EQ(h.c->waiters.used(), 0);
        CHECK_EQ(h.c->queue.cmds.used(), 0);
    }
    CHECK(unlocks > 100);
}
