// SPDX-License-Identifier: BSD-3-Clause
// Client construction shared by the integration tests.
#pragma once

#include "edgelock/edgelock.h"
#include "redis_server.hpp"

// A blocking-mode client (owned loop) on url, with cfg adjusted by tweak.
edgelock_client *make_client(const char *url, void (*tweak)(edgelock_config *) = nullptr);
// A lock handle for name (NUL-terminated), or {0} on failure.
edgelock_lock make_lock(edgelock_client *c, const char *name);
// True when every table of c but the locks table is empty, within 2 s (the
// unlock latch DEL may still be in flight when the last call returns).
bool tables_idle(edgelock_client *c);

// The client's table usage (zeros, with a message, if the call fails).
edgelock_stats stats_of(edgelock_client *c);

// Whether ms_left, a lease's time left read just now, is what a lease of
// lease_ms set at mono_ms() == since_ms or later leaves: no more than the
// lease, and no less than the lease less the time since (2 ms for the
// rounding of both clocks). A slow machine widens this bound and cannot break
// it, where "more than the lease less a second" fails once a second passes
// between the call and the check.
inline bool lease_left_fits(long long ms_left, long long lease_ms, uint64_t since_ms)
{
    long long since = (long long)(mono_ms() - since_ms);
    return ms_left <= lease_ms && ms_left >= lease_ms - since - 2;
}

// Poll cond every few ms until it holds (true) or ms have passed (false).
template <typename F> bool wait_until(unsigned ms, F cond)
{
    uint64_t end = mono_ms() + ms;
    for (;;) {
        if (cond())
            return true;
        if (mono_ms() >= end)
            return false;
        sleep_ms(2);
    }
}
