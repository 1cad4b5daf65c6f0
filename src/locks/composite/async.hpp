// SPDX-License-Identifier: BSD-3-Clause
// Asynchronous MultiLock and RedLock on caller-provided storage, for clients
// that share the caller's event loop (async.cpp).
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "edgelock/edgelock.h"

namespace edgelock
{

edgelock_status multi_lock_async(edgelock_composite *st, const edgelock_member *m, size_t n, uint64_t owner,
                                 int64_t wait_ms, int64_t lease_ms, edgelock_result_fn cb, void *user);
edgelock_status multi_unlock_async(edgelock_composite *st, const edgelock_member *m, size_t n, uint64_t owner,
                                   edgelock_result_fn cb, void *user);
edgelock_status redlock_lock_async(edgelock_composite *st, const edgelock_member *m, size_t n, uint64_t owner,
                                   int64_t wait_ms, int64_t lease_ms, edgelock_result_fn cb, void *user);
edgelock_status redlock_unlock_async(edgelock_composite *st, const edgelock_member *m, size_t n,
                                     uint64_t owner, edgelock_result_fn cb, void *user);

} // namespace edgelock
