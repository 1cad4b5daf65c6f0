// MultiLock and RedLock over the blocking hand-off (composite.cpp).
#pragma once

#include "edgelock/edgelock.h"

#include <stddef.h>
#include <stdint.h>

namespace edgelock
{

// Shared by the blocking and the asynchronous composites.
bool valid_times(int64_t wait_ms, int64_t lease_ms);
bool valid_members(const edgelock_member *m, size_t n); // 1..EDGELOCK_MAX_MEMBERS, none twice
int64_t left_of(uint64_t deadline);                     // ms left, or EDGELOCK_WAIT_FOREVER
// RedLock's figures: members needed, clock drift allowance, each server's wait.
inline size_t redlock_quorum(size_t n)
{
    return n / 2 + 1;
}
inline int64_t redlock_drift(int64_t lease)
{
    return lease / 100 + 2;
}
inline int64_t redlock_node_wait(int64_t left, size_t n)
{
    return left == EDGELOCK_WAIT_FOREVER ? 1000 : left / (int64_t)n;
}

edgelock_status multi_try_lock(const edgelock_member *m, size_t n, int64_t wait_ms, int64_t lease_ms);
edgelock_status multi_unlock(const edgelock_member *m, size_t n);
edgelock_status redlock_try_lock(const edgelock_member *m, size_t n, int64_t wait_ms, int64_t lease_ms,
                                 int64_t *validity_ms);
edgelock_status redlock_unlock(const edgelock_member *m, size_t n);

// composite_async.cpp
edgelock_status multi_lock_async(edgelock_composite *st, const edgelock_member *m, size_t n, uint64_t owner,
                                 int64_t wait_ms, int64_t lease_ms, edgelock_result_fn cb, void *user);
edgelock_status multi_unlock_async(edgelock_composite *st, const edgelock_member *m, size_t n, uint64_t owner,
                                   edgelock_result_fn cb, void *user);
edgelock_status redlock_lock_async(edgelock_composite *st, const edgelock_member *m, size_t n, uint64_t owner,
                                   int64_t wait_ms, int64_t lease_ms, edgelock_result_fn cb, void *user);
edgelock_status redlock_unlock_async(edgelock_composite *st, const edgelock_member *m, size_t n,
                                     uint64_t owner, edgelock_result_fn cb, void *user);

} // namespace edgelock
