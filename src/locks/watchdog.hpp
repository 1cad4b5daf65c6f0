// SPDX-License-Identifier: BSD-3-Clause
// The watchdog: renews the holds taken without a lease, in batches of up to
// kRenewBatch locks per script call, and declares a hold lost when Redis says
// its field is gone or when no renewal was confirmed for a whole lease. While
// fixed leases are held it ticks too, to free their records once they end.
#pragma once

#include <stdint.h>

#include "event/loop.hpp"

namespace edgelock
{

struct Client;

constexpr uint32_t kRenewBatch = 100; // locks per renewal script call, as Redisson

struct Watchdog {
    Timer timer;
    bool armed;
    uint64_t renew_calls; // renewal script calls sent
};

bool watchdog_init(Client *c);
void watchdog_fini(Client *c);
void watchdog_arm(Client *c);  // a hold exists: make sure a tick is due
void watchdog_kick(Client *c); // the connection is back: check the holds now
void watchdog_stop(Client *c);

} // namespace edgelock
