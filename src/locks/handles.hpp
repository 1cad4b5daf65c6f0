// SPDX-License-Identifier: BSD-3-Clause
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
    uint32_t refs;            // waiters and commands that name this lock
    uint32_t holds;           // hold slots of this lock (held, in flight, or loss markers)
    uint32_t calls_in_flight; // its lock calls attempting or replicating (lease.cpp)
    uint8_t kind;             // edgelock_lock_kind (lock_kind() reads it as one)
    uint8_t heard_in_a_row;   // our releases in a row that a waiter heard
    // Until then our next lock call lets a waiter take its turn (acquire.cpp).
    uint64_t yield_until_ms;
    uint32_t name_hash;      // name_hash() of its name
    uint32_t next_same_hash; // the name index's chain (Client::lock_buckets)
};

// Turn taking on a non-fair lock (reentrant, fenced). A client that unlocks
// and locks again in a loop re-takes the lock before any woken waiter's retry
// reaches Redis, and the other clients starve. So every second release of ours
// in a row that a waiter heard (the release script says so) is followed by a
// pause before our own next attempt on that lock: the woken waiter's retry
// (a round trip and a thread wake-up away) arrives first. Every second, not
// every one: re-taking once keeps the throughput that barging buys, and the
// pause costs an idle lock only when the waiter did not come.
constexpr uint32_t kYieldEveryHeard = 2;
// The pause covers the woken waiter's thread waiting for a CPU, not only its
// round trip: on a busy machine that can be a scheduler slice or two. 2 ms
// let the releasing client's attempt arrive first so often that, with 8
// clients on one lock, the woken waiters' failed retries doubled the client
// CPU per acquisition (BENCHMARKS.md, thirteenth pass).
constexpr uint64_t kYieldMinMs = 6; // plus two of the release's own round trips
// lock_get(), lock_ref() and lock_kind(), reads of the table, are inline in
// client.hpp.
edgelock_status lock_new(Client *c, edgelock_lock_kind kind, const void *name, size_t len,
                         edgelock_lock *out);
edgelock_status lock_free(Client *c, edgelock_lock lock);
// The name index: another live handle on lock_id's name, the next after
// `from` in its chain (kNoIndex: the first), as a lock table index; kNoIndex
// when there is none. Redis counts an owner's holds through all of them in
// one hash field with one TTL. Costs a chain walk, not a table scan.
uint32_t lock_next_twin(Client *c, uint64_t lock_id, uint32_t from);
// Which handle kinds a call serves (the lock table holds semaphores and
// latches too).
enum class KindClass : uint8_t {
    Lock,            // the five lock kinds
    LockOrSemaphore, // lock and unlock
    Semaphore,       // either semaphore kind
    Expirable,       // EDGELOCK_PERMIT_SEMAPHORE
    Latch,
};
bool kind_serves(edgelock_lock_kind kind, KindClass cls);

// What every call on a lock checks first: a callback, a client not closing, a
// live handle of a kind the call serves. OK, INVALID_ARG, SHUTDOWN or
// STALE_HANDLE.
edgelock_status lock_check_call(Client *c, edgelock_lock lock, edgelock_result_fn cb,
                                KindClass cls = KindClass::Lock);

} // namespace edgelock
