// SPDX-License-Identifier: BSD-3-Clause
// Redis Cluster's key slot (slot.hpp).
#include "redis/slot.hpp"

#include <string.h>

namespace edgelock
{

uint16_t crc16_xmodem(const void *data, size_t len)
{
    // Bit by bit rather than a 512-byte table: keys are short, and .text on
    // armhf is the budget that counts.
    const auto *p = static_cast<const uint8_t *>(data);
    uint16_t crc = 0;
    for (size_t i = 0; i < len; i++) {
        crc = (uint16_t)(crc ^ (uint16_t)(p[i] << 8));
        for (int bit = 0; bit < 8; bit++)
            crc = (crc & 0x8000u) ? (uint16_t)((crc << 1) ^ 0x1021u) : (uint16_t)(crc << 1);
    }
    return crc;
}

uint16_t key_hash_slot(const void *key, size_t len)
{
    const auto *k = static_cast<const char *>(key);
    const char *open = len ? static_cast<const char *>(memchr(k, '{', len)) : nullptr;
    if (open) {
        size_t start = (size_t)(open - k) + 1;
        const char *close = static_cast<const char *>(memchr(k + start, '}', len - start));
        if (close && close > k + start) // "{}" is no tag: the whole key counts
            return (uint16_t)(crc16_xmodem(k + start, (size_t)(close - (k + start))) & (kClusterSlots - 1));
    }
    return (uint16_t)(crc16_xmodem(k, len) & (kClusterSlots - 1));
}

// Decimal digits only (no sign, no space), at most max: *out.
static bool parse_decimal(const char *s, size_t len, uint32_t max, uint32_t *out)
{
    if (len == 0 || len > 5)
        return false;
    uint32_t v = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        v = v * 10 + (uint32_t)(s[i] - '0');
    }
    if (v > max)
        return false;
    *out = v;
    return true;
}

bool split_node_address(const char *addr, size_t len, char *host, size_t host_cap, uint16_t *port)
{
    const char *colon = nullptr;
    for (size_t i = 0; i < len; i++)
        if (addr[i] == ':')
            colon = addr + i;
    if (!colon || host_cap == 0)
        return false;
    size_t hlen = (size_t)(colon - addr);
    uint32_t p;
    if (hlen >= host_cap || !parse_decimal(colon + 1, len - hlen - 1, 65535, &p) || p == 0 ||
        memchr(addr, 0, hlen))
        return false;
    memcpy(host, addr, hlen);
    host[hlen] = 0;
    *port = (uint16_t)p;
    return true;
}

bool parse_redirect(const char *s, size_t len, uint16_t *slot, const char **addr, size_t *addr_len)
{
    const char *space = len ? static_cast<const char *>(memchr(s, ' ', len)) : nullptr;
    uint32_t v;
    if (!space || !parse_decimal(s, (size_t)(space - s), kClusterSlots - 1, &v))
        return false;
    const char *a = space + 1;
    size_t alen = len - (size_t)(a - s);
    char host[256];
    uint16_t port;
    if (!split_node_address(a, alen, host, sizeof(host), &port))
        return false;
    *slot = (uint16_t)v;
    *addr = a;
    *addr_len = alen;
    return true;
}

} // namespace edgelock
