// SPDX-License-Identifier: BSD-3-Clause
// Millisecond deadlines that cannot overflow: kForever is "no deadline".
#pragma once

#include <stdint.h>

namespace edgelock
{

constexpr uint64_t kForever = UINT64_MAX;

inline uint64_t add_ms(uint64_t now, uint64_t d)
{
    return d >= kForever - now ? kForever : now + d;
}

// What is left until deadline at now (0 when passed; kForever stays kForever).
inline uint64_t ms_left(uint64_t deadline, uint64_t now)
{
    if (deadline == kForever)
        return kForever;
    return deadline > now ? deadline - now : 0;
}

} // namespace edgelock
