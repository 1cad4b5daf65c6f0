// SPDX-License-Identifier: BSD-3-Clause
// Force unlock, the read-only queries (is locked, hold count, TTL, info) and
// setting the lease of a held lock (MultiLock alignment).
#pragma once

#include <stdint.h>

#include "edgelock/edgelock.h"
#include "redisson/format.hpp"

namespace edgelock
{

struct Client;

// op: ForceRelease, Exists, HoldCount or Ttl.
edgelock_status query_start(Client *c, LockOp op, edgelock_lock lock, uint64_t owner, edgelock_result_fn cb,
                            void *user);
edgelock_status extend_start(Client *c, edgelock_lock lock, uint64_t owner, int64_t lease_ms,
                             edgelock_result_fn cb, void *user);
edgelock_status info_start(Client *c, edgelock_lock lock, edgelock_lock_info *info, edgelock_result_fn cb,
                           void *user);

} // namespace edgelock
