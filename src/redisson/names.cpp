// SPDX-License-Identifier: BSD-3-Clause
#include "redisson/names.hpp"

#include <string.h>

#include "port.h"

namespace edgelock
{

void write_client_id(char out[37])
{
    uint8_t b[16];
    edgelock_port_random(b, sizeof(b));
    b[6] = (uint8_t)((b[6] & 0x0f) | 0x40); // version 4
    b[8] = (uint8_t)((b[8] & 0x3f) | 0x80); // RFC 4122 variant
    static const char hex[] = "0123456789abcdef";
    size_t o = 0;
    for (int i = 0; i < 16; i++) {
        if (i == 4 || i == 6 || i == 8 || i == 10)
            out[o++] = '-';
        out[o++] = hex[b[i] >> 4];
        out[o++] = hex[b[i] & 15];
    }
    out[o] = 0;
}

const char kLockChannelPrefix[] = "redisson_lock__channel";
const char kUnlockLatchPrefix[] = "redisson_unlock_latch";
const char kLockQueuePrefix[] = "redisson_lock_queue";
const char kLockTimeoutPrefix[] = "redisson_lock_timeout";
const char kLockTokenPrefix[] = "redisson_lock_token";
const char kRwChannelPrefix[] = "redisson_rwlock";
const char kWriteSuffix[] = ":write";
const char kUnlockMessage[] = "0";
const char kSemaphoreChannelPrefix[] = "redisson_sc";
const char kPermitTimeoutSuffix[] = "timeout";
const char kLatchChannelPrefix[] = "redisson_countdownlatch__channel__";
const char kLatchOpenMessage[] = "0";
const char kLatchNewCountMessage[] = "1";

void write_latch_channel(Writer &w, const void *name, size_t len)
{
    // Always braces around the raw name, even one with braces of its own
    // (Redisson's RCountDownLatch does not use prefix_name here).
    w.str(kLatchChannelPrefix);
    w.bytes("{", 1);
    w.bytes(name, len);
    w.bytes("}", 1);
}

bool contains_brace(const void *name, size_t len)
{
    return memchr(name, '{', len) != nullptr;
}

void write_prefix_name(Writer &w, const char *prefix, const void *name, size_t len)
{
    w.str(prefix);
    if (contains_brace(name, len)) {
        w.bytes(":", 1);
        w.bytes(name, len);
    } else {
        w.bytes(":{", 2);
        w.bytes(name, len);
        w.bytes("}", 1);
    }
}

void write_suffix_name(Writer &w, const void *name, size_t len, const void *suffix, size_t suffix_len)
{
    if (contains_brace(name, len)) {
        w.bytes(name, len);
    } else {
        w.bytes("{", 1);
        w.bytes(name, len);
        w.bytes("}", 1);
    }
    w.bytes(":", 1);
    w.bytes(suffix, suffix_len);
}

void write_owner(Writer &w, const char *client_id, uint64_t owner)
{
    w.str(client_id);
    w.bytes(":", 1);
    w.u64(owner);
}

size_t channel_len(size_t name_len)
{
    return sizeof(kLockChannelPrefix) - 1 + 3 + name_len + 1 + kMaxOwnerLen;
}

} // namespace edgelock
