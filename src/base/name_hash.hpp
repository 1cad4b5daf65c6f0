// SPDX-License-Identifier: BSD-3-Clause
// The hash the name indexes chain by (lock handles, subscriptions).
#pragma once

#include <stddef.h>
#include <stdint.h>

namespace edgelock
{

// FNV-1a: the names of one lock family share a long prefix and differ at the
// end, which every byte's step spreads over all 32 bits.
inline uint32_t name_hash(const void *name, size_t len)
{
    const uint8_t *p = static_cast<const uint8_t *>(name);
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < len; i++)
        h = (h ^ p[i]) * 16777619u;
    return h;
}

} // namespace edgelock
