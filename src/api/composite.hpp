// SPDX-License-Identifier: BSD-3-Clause
// Blocking MultiLock and RedLock over the blocking hand-off (composite_blocking.cpp).
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "edgelock/edgelock.h"

namespace edgelock
{

edgelock_status multi_try_lock(const edgelock_member *m, size_t n, int64_t wait_ms, int64_t lease_ms);
edgelock_status multi_unlock(const edgelock_member *m, size_t n);
edgelock_status redlock_try_lock(const edgelock_member *m, size_t n, int64_t wait_ms, int64_t lease_ms,
                                 int64_t *validity_ms);
edgelock_status redlock_unlock(const edgelock_member *m, size_t n);

} // namespace edgelock
