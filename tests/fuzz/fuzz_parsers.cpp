// SPDX-License-Identifier: BSD-3-Clause
// What edgelock parses from the outside, coverage-guided; the first byte
// picks the parser, the rest is its input:
// - a URL (parse_redis_url, host_address, redact_redis_url and
//   edgelock_url_redact): what parses is usable as it claims, and no
//   redaction shows the credentials;
// - bytes from a server through hiredis's reader with edgelock's guard, each
//   reply then read as a CLUSTER SLOTS answer and as a number;
// - a +switch-master message from a sentinel;
// - a decimal number (parse_decimal), checked against strtoll.
// Nothing may crash (ASan, UBSan) or read or write out of bounds.
#include <errno.h>
#include <hiredis/hiredis.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <string>

#include "edgelock/edgelock.h"
#include "redis/cluster.hpp"
#include "redis/reader_guard.hpp"
#include "redis/reply.hpp"
#include "redis/sentinel_watch.hpp"
#include "redis/slot.hpp"
#include "redis/url.hpp"

using namespace edgelock;

namespace
{

[[noreturn]] void fail(const char *what, const std::string &input)
{
    fprintf(stderr, "fuzz_parsers: %s: \"", what);
    for (unsigned char ch : input)
        fprintf(stderr, ch >= 32 && ch < 127 && ch != '"' ? "%c" : "\\x%02x", ch);
    fprintf(stderr, "\"\n");
    abort();
}

bool terminated(const char *s, size_t cap)
{
    return memchr(s, 0, cap) != nullptr;
}

void url(const std::string &text)
{
    const char *s = text.c_str(); // up to the first NUL, as C callers pass it
    RedisUrl u;
    bool ok = parse_redis_url(s, &u);
    char out[600];
    edgelock_status st = edgelock_url_redact(s, out, sizeof(out));
    if (ok != (st == EDGELOCK_OK) || !terminated(out, sizeof(out)) || (!ok && out[0]))
        fail("edgelock_url_redact disagrees with the parser", text);
    if (!ok)
        return;
    if (!terminated(u.path, sizeof(u.path)) || !terminated(u.host, sizeof(u.host)) ||
        !terminated(u.user, sizeof(u.user)) || !terminated(u.password, sizeof(u.password)) ||
        !terminated(u.hosts, sizeof(u.hosts)) || !terminated(u.master_name, sizeof(u.master_name)))
        fail("a field of the parsed URL is not NUL-terminated", text);
    if (!u.unix_socket && !u.sentinel && !u.cluster && u.port == 0)
        fail("a parsed TCP URL without a port", text);
    if (u.sentinel || u.cluster) {
        if (u.nhosts < 1 || u.nhosts > kMaxHosts || (u.sentinel && !u.master_name[0]))
            fail("a parsed sentinel or cluster URL without hosts or master", text);
        for (unsigned i = 0; i < u.nhosts; i++) {
            char host[256];
            uint16_t port = 0;
            if (!host_address(u, i, host, sizeof(host), &port) || port == 0 || !host[0])
                fail("a host of a parsed URL that host_address cannot give", text);
        }
    }
    size_t len = strlen(s);
    if (u.scheme_len > u.host_offset || u.host_offset > len)
        fail("offsets out of the URL", text);
    // Whole, the redaction is the URL with its credentials replaced by "***";
    // cut to fit a smaller buffer, it is a prefix of that.
    std::string whole = u.has_credentials
                            ? std::string(s, u.scheme_len) + "***@" + std::string(s + u.host_offset)
                            : std::string(s);
    if (whole.compare(0, strlen(out), out) != 0)
        fail("edgelock_url_redact shows more than the URL without its credentials", text);
    for (size_t cap : {(size_t)1, (size_t)8, (size_t)32, len + 16}) {
        std::string shown(cap, '\x7f');
        redact_redis_url(s, u, &shown[0], cap);
        if (!terminated(shown.data(), cap))
            fail("a redaction not NUL-terminated within its buffer", text);
        shown.resize(strlen(shown.c_str()));
        if (whole.compare(0, shown.size(), shown) != 0 || (cap > whole.size() && shown != whole))
            fail("a redaction that is not the URL with its credentials hidden", text);
    }
}

struct Nodes {
    char hosts[kMaxClusterNodes][64];
    uint16_t ports[kMaxClusterNodes];
    uint8_t n = 0;
    static uint8_t find(void *ctx, const char *host, uint16_t port)
    {
        auto *f = static_cast<Nodes *>(ctx);
        if (!host || !host[0] || port == 0)
            fail("the finder given an empty host or port 0", host ? host : "(null)");
        for (uint8_t i = 0; i < f->n; i++)
            if (f->ports[i] == port && strncmp(f->hosts[i], host, sizeof(f->hosts[i])) == 0)
                return i;
        if (f->n == 4)
            return kNoNode; // the table is full
        snprintf(f->hosts[f->n], sizeof(f->hosts[f->n]), "%s", host);
        f->ports[f->n] = port;
        return f->n++;
    }
};

void replies(const std::string &bytes)
{
    redisReader *r = redisReaderCreate();
    if (!r)
        return;
    reader_guard_attach(r, nullptr);
    // Fed in two pieces, as a socket may deliver them.
    size_t cut = bytes.empty() ? 0 : (unsigned char)bytes[0] % bytes.size();
    redisReaderFeed(r, bytes.data(), cut);
    redisReaderFeed(r, bytes.data() + cut, bytes.size() - cut);
    static uint8_t owner[kClusterSlots];
    for (int k = 0; k < 16; k++) {
        void *reply = nullptr;
        if (redisReaderGetReply(r, &reply) != REDIS_OK || !reply)
            break;
        auto *rep = static_cast<redisReply *>(reply);
        if (rep->type == REDIS_REPLY_ARRAY && rep->elements > kMaxReplyElements)
            fail("an array over the guard's cap", bytes);
        Nodes nodes;
        memset(owner, 0xee, sizeof(owner));
        if (parse_cluster_slots(rep, "asked.example", Nodes::find, &nodes, owner)) {
            for (uint32_t slot = 0; slot < kClusterSlots; slot++)
                if (owner[slot] != kNoNode && owner[slot] >= nodes.n)
                    fail("a slot given to a node the finder never gave", bytes);
        } else {
            for (uint32_t slot = 0; slot < kClusterSlots; slot++)
                if (owner[slot] != 0xee)
                    fail("a malformed CLUSTER SLOTS answer changed the map", bytes);
        }
        int64_t v;
        reply_integer(rep, &v);
        reply_is_text(rep);
        reply_text_is(rep, "OK");
        freeReplyObject(reply);
    }
    redisReaderFree(r);
}

void switch_master(const std::string &msg)
{
    for (size_t cap : {(size_t)1, (size_t)16, (size_t)256}) {
        std::string host(cap, '\x7f');
        uint16_t port = 0;
        if (parse_switch_master(msg.data(), msg.size(), "mymaster", &host[0], cap, &port)) {
            if (!terminated(host.data(), cap) || !host[0] || port == 0)
                fail("a +switch-master parsed without a host or port", msg);
        } else if (!terminated(host.data(), cap) && host[0] != '\x7f') {
            fail("a refused +switch-master left its host unterminated", msg);
        }
    }
}

void decimal(const std::string &text)
{
    int64_t got = 0;
    bool ok = parse_decimal(text.data(), text.size(), &got);
    // The rule: an optional '-', then one or more digits, nothing else,
    // within int64_t, and no longer than INT64_MIN is written (20 bytes: Redis
    // writes no leading zeros).
    size_t i = !text.empty() && text[0] == '-' ? 1 : 0;
    bool shape = i < text.size() && text.size() <= 20;
    for (size_t k = i; k < text.size(); k++)
        shape = shape && text[k] >= '0' && text[k] <= '9';
    bool want = false;
    long long ref = 0;
    if (shape) {
        errno = 0;
        char *end = nullptr;
        ref = strtoll(text.c_str(), &end, 10);
        want = errno == 0 && end == text.c_str() + text.size();
    }
    if (ok != want || (ok && got != ref))
        fail("parse_decimal disagrees with strtoll", text);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    std::string input(reinterpret_cast<const char *>(data) + 1, size - 1);
    switch (data[0] % 4) {
    case 0: url(input); break;
    case 1: replies(input); break;
    case 2: switch_master(input); break;
    default: decimal(input); break;
    }
    return 0;
}
