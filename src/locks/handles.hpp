// Lock handles: a name and a kind in the lock table. Purely local; no Redis call.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "edgelock/edgelock.h"
#include "redisson/format.hpp"

namespace edgelock
{

struct Client;

constexpr uint32_t kMaxNameLenLimit = 4096;

struct LockEntry {
    uint32_t name_len;
    uint32_t refs;  // waiters and commands that name this lock
    uint32_t holds; // hold slots of this lock (held, in flight, or loss markers)
    edgelock_lock_kind kind;
};

// lock_get(), lock_ref() and lock_kind(), reads of the table, are inline in
// client.hpp.
edgelock_status lock_new(Client *c, edgelock_lock_kind kind, const void *name, size_t len,
                         edgelock_lock *out);
edgelock_status lock_free(Client *c, edgelock_lock lock);
// What every call on a lock checks first: a callback, a client not closing, a
// live handle. OK, INVALID_ARG, SHUTDOWN or STALE_HANDLE.
edgelock_status lock_check_call(Client *c, edgelock_lock lock, edgelock_result_fn cb);

} // namespace edgelock
