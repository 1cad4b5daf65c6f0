// SPDX-License-Identifier: BSD-3-Clause
// The C ABI of the semaphores and the countdown latch (edgelock.h, section
// "semaphores and the countdown latch"): async calls go straight to
// locks/permits.hpp and locks/acquire.hpp, blocking ones through the blocking
// face, as c_api.cpp does for the locks.
#include "api/blocking.hpp"
#include "api/entry.hpp"
#include "locks/acquire.hpp"
#include "locks/client.hpp"
#include "locks/permits.hpp"

using namespace edgelock;

// ---- semaphores and the countdown latch ----

namespace
{

edgelock_status semaphore_async(edgelock_client *client, LockOp op, edgelock_lock lock, int64_t count,
                                const char *permit_hex, edgelock_semaphore_info *info, edgelock_result_fn cb,
                                void *user)
{
    edgelock_status st = async_entry(client);
    return st != EDGELOCK_OK
               ? st
               : semaphore_call_start(as_client(client), op, lock, count, permit_hex, info, cb, user);
}

edgelock_status semaphore_blocking(edgelock_client *client, LockOp op, edgelock_lock lock, int64_t count,
                                   const char *permit_hex, edgelock_semaphore_info *info, int64_t *value)
{
    if (!client)
        return EDGELOCK_ERR_INVALID_ARG;
    BlockingRequest r = {};
    r.op = ReqOp::Semaphore;
    r.sem_op = op;
    r.lock = lock;
    r.count = count;
    r.permit_hex = permit_hex;
    r.sem_info = info;
    int64_t v = 0;
    edgelock_status st = blocking_call(as_client(client), &r, &v);
    if (value)
        *value = st == EDGELOCK_OK ? v : 0;
    return st;
}

} // namespace

edgelock_status edgelock_semaphore_acquire_async(edgelock_client *client, edgelock_lock sem, uint64_t owner,
                                                 uint32_t permits, int64_t wait_ms, int64_t lease_ms,
                                                 edgelock_result_fn cb, void *user)
{
    edgelock_status st = async_entry(client);
    if (st != EDGELOCK_OK)
        return st;
    if (permits == 0) // 0 means a latch's await inside
        return EDGELOCK_ERR_INVALID_ARG;
    return acquire_start(as_client(client), sem, owner, wait_ms, lease_ms, cb, user, false, permits);
}

edgelock_status edgelock_semaphore_try_acquire(edgelock_client *client, edgelock_lock sem, uint32_t permits,
                                               int64_t wait_ms, int64_t lease_ms)
{
    if (!client || permits == 0)
        return EDGELOCK_ERR_INVALID_ARG;
    BlockingRequest r = {};
    r.op = ReqOp::Acquire;
    r.lock = sem;
    r.owner = edgelock_port_thread_id();
    r.wait_ms = wait_ms;
    r.lease_ms = lease_ms;
    r.permits = permits;
    return blocking_call(as_client(client), &r, nullptr);
}

edgelock_status edgelock_semaphore_try_set_permits_async(edgelock_client *client, edgelock_lock sem,
                                                         int64_t permits, edgelock_result_fn cb, void *user)
{
    return semaphore_async(client, LockOp::SetPermits, sem, permits, nullptr, nullptr, cb, user);
}

edgelock_status edgelock_semaphore_try_set_permits(edgelock_client *client, edgelock_lock sem,
                                                   int64_t permits, int *set)
{
    int64_t v = 0;
    edgelock_status st = semaphore_blocking(client, LockOp::SetPermits, sem, permits, nullptr, nullptr, &v);
    if (set)
        *set = v == 1;
    return st;
}

edgelock_status edgelock_semaphore_add_permits_async(edgelock_client *client, edgelock_lock sem,
                                                     int64_t permits, edgelock_result_fn cb, void *user)
{
    return semaphore_async(client, LockOp::AddPermits, sem, permits, nullptr, nullptr, cb, user);
}

edgelock_status edgelock_semaphore_add_permits(edgelock_client *client, edgelock_lock sem, int64_t permits,
                                               int64_t *free_after)
{
    return semaphore_blocking(client, LockOp::AddPermits, sem, permits, nullptr, nullptr, free_after);
}

edgelock_status edgelock_semaphore_info_async(edgelock_client *client, edgelock_lock sem,
                                              edgelock_semaphore_info *info, edgelock_result_fn cb,
                                              void *user)
{
    return semaphore_async(client, LockOp::SemaphoreInfo, sem, 0, nullptr, info, cb, user);
}

edgelock_status edgelock_semaphore_info_get(edgelock_client *client, edgelock_lock sem,
                                            edgelock_semaphore_info *info)
{
    return semaphore_blocking(client, LockOp::SemaphoreInfo, sem, 0, nullptr, info, nullptr);
}

edgelock_status edgelock_permit_id(edgelock_client *client, edgelock_lock sem, uint64_t owner, uint32_t k,
                                   char out[33])
{
    if (!client || !out)
        return EDGELOCK_ERR_INVALID_ARG;
    BlockingRequest r = {};
    r.op = ReqOp::PermitId;
    r.lock = sem;
    r.owner = owner;
    r.permits = k;
    r.hex_out = out;
    return local_call(as_client(client), &r);
}

edgelock_status edgelock_permit_release_async(edgelock_client *client, edgelock_lock sem,
                                              const char *permit_id, edgelock_result_fn cb, void *user)
{
    return semaphore_async(client, LockOp::ReleasePermit, sem, 0, permit_id, nullptr, cb, user);
}

edgelock_status edgelock_permit_release(edgelock_client *client, edgelock_lock sem, const char *permit_id)
{
    return semaphore_blocking(client, LockOp::ReleasePermit, sem, 0, permit_id, nullptr, nullptr);
}

edgelock_status edgelock_latch_try_set_count_async(edgelock_client *client, edgelock_lock latch,
                                                   int64_t count, edgelock_result_fn cb, void *user)
{
    return semaphore_async(client, LockOp::LatchSetCount, latch, count, nullptr, nullptr, cb, user);
}

edgelock_status edgelock_latch_try_set_count(edgelock_client *client, edgelock_lock latch, int64_t count,
                                             int *set)
{
    int64_t v = 0;
    edgelock_status st =
        semaphore_blocking(client, LockOp::LatchSetCount, latch, count, nullptr, nullptr, &v);
    if (set)
        *set = v == 1;
    return st;
}

edgelock_status edgelock_latch_count_down_async(edgelock_client *client, edgelock_lock latch,
                                                edgelock_result_fn cb, void *user)
{
    return semaphore_async(client, LockOp::LatchCountDown, latch, 0, nullptr, nullptr, cb, user);
}

edgelock_status edgelock_latch_count_down(edgelock_client *client, edgelock_lock latch, int64_t *count_after)
{
    return semaphore_blocking(client, LockOp::LatchCountDown, latch, 0, nullptr, nullptr, count_after);
}

edgelock_status edgelock_latch_count_async(edgelock_client *client, edgelock_lock latch,
                                           edgelock_result_fn cb, void *user)
{
    return semaphore_async(client, LockOp::LatchCount, latch, 0, nullptr, nullptr, cb, user);
}

edgelock_status edgelock_latch_count(edgelock_client *client, edgelock_lock latch, int64_t *count)
{
    return semaphore_blocking(client, LockOp::LatchCount, latch, 0, nullptr, nullptr, count);
}

edgelock_status edgelock_latch_await_async(edgelock_client *client, edgelock_lock latch, uint64_t owner,
                                           int64_t wait_ms, edgelock_result_fn cb, void *user)
{
    edgelock_status st = async_entry(client);
    return st != EDGELOCK_OK ? st
                             : acquire_start(as_client(client), latch, owner, wait_ms,
                                             EDGELOCK_LEASE_WATCHDOG, cb, user, false, 0);
}

edgelock_status edgelock_latch_await(edgelock_client *client, edgelock_lock latch, int64_t wait_ms)
{
    if (!client)
        return EDGELOCK_ERR_INVALID_ARG;
    BlockingRequest r = {};
    r.op = ReqOp::LatchAwait;
    r.lock = latch;
    r.owner = edgelock_port_thread_id();
    r.wait_ms = wait_ms;
    return blocking_call(as_client(client), &r, nullptr);
}
