// SPDX-License-Identifier: BSD-3-Clause
// What the fuzz targets that play a server share: the input read a byte at a
// time, replies of any RESP shape made from it (RESP3 ones too with hiredis
// 1.x), the deployment its first byte picks, and FUZZ_TRACE's step
// printing.
#pragma once

#include <hiredis/hiredis.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <string>

#include "fake/fake_engine.hpp" // resp_bulk, resp_array

namespace fuzz
{

constexpr char kNilBulk[] = "$-1\r\n";

// The input, read a byte at a time; past its end every read is 0.
struct Input {
    const uint8_t *p;
    size_t n;
    uint8_t byte()
    {
        if (n == 0)
            return 0;
        n--;
        return *p++;
    }
    uint64_t u64()
    {
        uint64_t v = 0;
        for (int i = 0; i < 8; i++)
            v = v << 8 | byte();
        return v;
    }
    std::string bytes(size_t max)
    {
        size_t len = byte() % (max + 1);
        std::string s;
        for (size_t i = 0; i < len && n > 0; i++)
            s += (char)byte();
        return s;
    }
};

inline const char *const kErrors[] = {
    "-ERR fuzz\r\n",
    "-NOSCRIPT No matching script. Please use EVAL.\r\n",
    "-OOM command not allowed when used memory > 'maxmemory'.\r\n",
    "-READONLY You can't write against a read only replica.\r\n",
    "-MOVED 3999 127.0.0.1:6381\r\n",
    "-ASK 3999 127.0.0.1:6381\r\n",
    "-MOVED 15495 10.0.0.3:7002\r\n",
    "-ASK 15495 10.0.0.2:7001\r\n",
    "-MOVED 70000 10.0.0.1:7000\r\n",
    "-MOVED 3999 :7001\r\n",
    "-LOADING Redis is loading the dataset in memory\r\n",
    "-BUSY Redis is busy running a script.\r\n",
    "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n",
    "-NOPERM this user has no permissions to run the 'publish' command\r\n",
    "-NOAUTH Authentication required.\r\n",
    "-WRONGPASS invalid username-password pair or user is disabled.\r\n",
    "-MASTERDOWN Link with MASTER is down\r\n",
    "-CLUSTERDOWN The cluster is down\r\n",
    "-TRYAGAIN Multiple keys request during rehashing of slot\r\n",
    "-NOREPLICAS Not enough good replicas to write.\r\n",
};

inline const char *const kNumbers[] = {"0",
                                       "1",
                                       "-1",
                                       "-2",
                                       "2",
                                       "30000",
                                       "9223372036854775807",
                                       "-9223372036854775808",
                                       "18446744073709551616",
                                       "1.5",
                                       "",
                                       " 1",
                                       "+1",
                                       "007",
                                       "1e3",
                                       "0x10"};

inline std::string reply_of(Input &s, int depth = 0);

// Text or a number: what a field of a script's answer usually is.
inline std::string text_or_number(Input &s)
{
    uint8_t t = s.byte();
    return t % 4 == 0   ? ":" + std::to_string((int)t - 100) + "\r\n"
           : t % 4 == 1 ? resp_bulk(s.bytes(16))
                        : resp_bulk(kNumbers[t / 4 % (sizeof(kNumbers) / sizeof(kNumbers[0]))]);
}

// The shape of lock_info.lua's answer (type, fields, TTL, queue, deadlines,
// token, TIME, subscribers), its parts filled from the input.
inline std::string info_shaped(Input &s)
{
    static const char *const kTypes[] = {"hash", "none", "string", "zset"};
    std::string out = "*8\r\n" + resp_bulk(kTypes[s.byte() % 4]);
    uint32_t pairs = s.byte() % 4;
    out += "*" + std::to_string(2 * pairs) + "\r\n";
    for (uint32_t k = 0; k < pairs; k++) { // HGETALL: bulk strings, mostly counts
        uint8_t f = s.byte();
        out += resp_bulk(f % 4 == 0 ? "mode" : "unit:" + std::to_string(k)) +
               (f % 8 == 7 ? text_or_number(s) : resp_bulk(f % 4 == 0 ? "read" : std::to_string(f / 8)));
    }
    out += ":" + std::to_string((int)s.byte() * 100 - 200) + "\r\n";
    uint32_t queued = s.byte() % 4;
    out += "*" + std::to_string(queued) + "\r\n";
    for (uint32_t k = 0; k < queued; k++)
        out += resp_bulk("unit:" + std::to_string(k));
    static const char *const kScores[] = {"1.7e+12", "inf", "-inf", "nan", "1e300", "123", "x", ""};
    out += "*" + std::to_string(2 * queued) + "\r\n";
    for (uint32_t k = 0; k < queued; k++)
        out += resp_bulk("unit:" + std::to_string(s.byte() % 4)) + resp_bulk(kScores[s.byte() % 8]);
    out += s.byte() % 2 ? kNilBulk : text_or_number(s);
    uint8_t t = s.byte(); // TIME: seconds and microseconds, mostly as Redis writes them
    out += t % 4 ? "*2\r\n" + resp_bulk("1700000000") + resp_bulk(std::to_string(t * 3000))
                 : "*2\r\n" + text_or_number(s) + text_or_number(s);
    out += ":" + std::to_string((int)s.byte() - 8) + "\r\n";
    return out;
}

// The shape of a SCAN page: a cursor and names.
inline std::string scan_shaped(Input &s)
{
    uint32_t names = s.byte() % 6;
    std::string out = "*2\r\n" + text_or_number(s) + "*" + std::to_string(names) + "\r\n";
    for (uint32_t k = 0; k < names; k++)
        out += s.byte() % 8 ? resp_bulk(s.bytes(40)) : ":7\r\n";
    return out;
}

#ifdef REDIS_REPLY_PUSH
// A RESP3 reply (hiredis 1.x reads them on any connection): what a server
// that switched protocols, or a proxy, could send where RESP2 was asked for.
inline std::string resp3_of(Input &s, int depth)
{
    uint8_t t = s.byte();
    switch (t % 8) {
    case 0: return "_\r\n";
    case 1: return t & 16 ? "#t\r\n" : "#f\r\n";
    case 2: {
        static const char *const kDoubles[] = {"1.5", "-0", "inf", "-inf", "nan", "1e308", "3", "0.000001"};
        return "," + std::string(kDoubles[t / 16 % 8]) + "\r\n";
    }
    case 3: return "(" + std::string(t & 16 ? "-" : "") + "3492890328409238509324850943850943825024385\r\n";
    case 4: {
        std::string text = s.bytes(20);
        return "=" + std::to_string(text.size() + 4) + "\r\ntxt:" + text + "\r\n";
    }
    default: {
        if (depth >= 4)
            return "_\r\n";
        char type = "%~>"[t % 3];
        uint32_t n = s.byte() % 5;
        std::string out = type + std::to_string(n) + "\r\n";
        for (uint32_t k = 0; k < (type == '%' ? 2 * n : n); k++)
            out += reply_of(s, depth + 1);
        return out;
    }
    }
}
#endif

// Any well-formed RESP2 reply (and with hiredis 1.x now and then a RESP3
// one); nesting up to depth 4.
inline std::string reply_of(Input &s, int depth)
{
    uint8_t t = s.byte();
    switch (t % 20) {
    case 0: return kNilBulk;
    case 1: return ":0\r\n";
    case 2: return ":1\r\n";
    case 3: return ":" + std::to_string((int)(t / 18) - 3) + "\r\n";
    case 4: return ":" + std::to_string((int64_t)s.u64()) + "\r\n";
    case 5: return ":" + std::to_string((int64_t)s.byte() * 1000) + "\r\n";
    case 6: return "+OK\r\n";
    case 7: return kErrors[s.byte() % (sizeof(kErrors) / sizeof(kErrors[0]))];
    case 8: return resp_bulk(s.bytes(40));
    case 9: return resp_bulk(kNumbers[s.byte() % (sizeof(kNumbers) / sizeof(kNumbers[0]))]);
    case 10: return "*-1\r\n";
    case 11: return "+" + std::string(t % 2 ? "QUEUED" : "PONG") + "\r\n";
    case 12: return info_shaped(s);
    case 13: return scan_shaped(s);
#ifdef REDIS_REPLY_PUSH
    case 14: return resp3_of(s, depth);
#endif
    default: {
        if (depth >= 4)
            return kNilBulk;
        uint32_t n = s.byte() % 9;
        std::string out = "*" + std::to_string(n) + "\r\n";
        for (uint32_t k = 0; k < n; k++)
            out += reply_of(s, depth + 1);
        return out;
    }
    }
}

// The deployment a target's server plays, by the input's first byte: one
// Redis (0, and 3 with hiredis 0.14), a cluster with plain pub/sub (1), a
// master behind sentinels (2), a cluster with sharded pub/sub over RESP3
// (3, hiredis 1.x).
enum class Mode { Single, Cluster, Sentinel, Sharded };

inline Mode mode_of(uint8_t first)
{
    switch (first >> 6) {
    case 1: return Mode::Cluster;
    case 2: return Mode::Sentinel;
#ifdef REDIS_REPLY_PUSH
    case 3: return Mode::Sharded;
#endif
    default: return Mode::Single;
    }
}

// FUZZ_TRACE: each step on stderr, to read what a finding did.
inline bool g_trace = getenv("FUZZ_TRACE") != nullptr;

inline void trace_line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
inline void trace_line(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
}

// Its arguments (escaped replies, names) are made only when tracing.
#define trace(...)                                                                                           \
    do {                                                                                                     \
        if (g_trace)                                                                                         \
            trace_line(__VA_ARGS__);                                                                         \
    } while (0)

inline std::string shown(const std::string &bytes)
{
    std::string out;
    char buf[8];
    for (unsigned char ch : bytes) {
        snprintf(buf, sizeof(buf), ch >= 32 && ch < 127 ? "%c" : "\\x%02x", ch);
        out += buf;
    }
    return out;
}

} // namespace fuzz
