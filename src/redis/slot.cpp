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

} // namespace edgelock
