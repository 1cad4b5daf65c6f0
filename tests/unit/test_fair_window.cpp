// SPDX-License-Identifier: BSD-3-Clause
// A fair waiter's window in the queue, as it goes on the wire (fake loop and
// link): its own wait, or fair_wait_ms when it has none, as Redisson's
// RFairLock takes it; and its abandon gives back the same window.
#include <stdint.h>

#include <string>
#include <vector>

#include "check.hpp"
#include "fake/fake_engine.hpp"
#include "fake/harness.hpp"
#include "locks/acquire.hpp"
#include "redisson/scripts.hpp"

using namespace edgelock;
using namespace fake;

namespace
{

void short_default(edgelock_config *cfg)
{
    cfg->fair_wait_ms = 5000;
}

bool runs(const std::vector<std::string> &a, ScriptId id)
{
    return a.size() > 8 && a[0] == "EVALSHA" && a[1] == kScripts[id].sha1;
}

// The window the acquire sends (ARGV[3]: after 3 keys, lease and owner) and
// the one its abandon sends (ARGV[2]: after 4 keys and owner), for one call
// that finds the lock held and then gives up.
void windows_of(int64_t wait_ms, std::string *acquire, std::string *abandon)
{
    Harness h(short_default);
    REQUIRE(h.c);
    edgelock_lock lk = h.lock("f", EDGELOCK_FAIR);
    Result r;
    REQUIRE(acquire_start(h.c, lk, 7, wait_ms, 30000, record, &r) == EDGELOCK_OK);
    std::vector<std::string> a = h.last_cmd();
    REQUIRE(runs(a, kScriptFairAcquire));
    *acquire = a[8];
    h.reply(":20000\r\n"); // held elsewhere: queued
    if (r.calls == 0)
        acquire_cancel(h.c, 7);
    CHECK_EQ(r.calls, 1);
    std::vector<std::string> b = h.last_cmd();
    REQUIRE(runs(b, kScriptFairAbandon));
    *abandon = b[8];
}

} // namespace

TEST_CASE(a_fair_waiter_queues_with_its_own_wait_as_its_window)
{
    std::string acq, ab;
    windows_of(1000, &acq, &ab);
    CHECK(acq == "1000");
    CHECK(ab == "1000");
    windows_of(400000, &acq, &ab); // longer than fair_wait_ms too
    CHECK(acq == "400000");
    CHECK(ab == "400000");
}

// Redisson: `if (waitTime > 0) wait = waitTime`, else threadWaitTime.
TEST_CASE(a_fair_waiter_without_a_wait_queues_with_fair_wait_ms)
{
    std::string acq, ab;
    windows_of(0, &acq, &ab); // a try-once: queued, then leaves at once
    CHECK(acq == "5000");
    CHECK(ab == "5000");
    windows_of(EDGELOCK_WAIT_FOREVER, &acq, &ab);
    CHECK(acq == "5000");
    CHECK(ab == "5000");
}

TEST_CASE(a_fair_window_longer_than_32_bits_is_clamped)
{
    std::string acq, ab;
    windows_of(EDGELOCK_MAX_TIME_MS, &acq, &ab);
    CHECK(acq == "4294967295");
    CHECK(ab == "4294967295");
}
