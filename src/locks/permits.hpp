// SPDX-License-Identifier: BSD-3-Clause
// Semaphores and the countdown latch: what differs from a lock. Their takes
// and awaits run through the lock calls' waiters (acquire.cpp), their permits
// are holds (holds.hpp); this file reads their answers, gives permits back and
// runs their own calls (set, add, info, release by id, count down).
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "edgelock/edgelock.h"
#include "redisson/format.hpp"

struct redisReply;

namespace edgelock
{

struct Client;

enum class TakeAnswer : uint8_t {
    Taken,     // the permits are ours; a latch: open
    NotYet,    // wait for a message, or *ttl ms (a permit's deadline)
    Malformed, // not a reply this script gives
};

// A semaphore's take or a latch's count, as the waiting loop reads it. *ttl:
// ms until the earliest permit deadline Redis named, -1 when none.
TakeAnswer read_take_reply(edgelock_lock_kind kind, const struct redisReply *r, int64_t wall_now_ms,
                           int64_t *ttl);

struct LockEntry;

// What a take or await may ask of its handle's kind: permits (0 for a
// latch's await), leases, and for expirable permits one group per owner and
// handle. OK, INVALID_ARG or BUSY.
edgelock_status permits_check_take(Client *c, const LockEntry *le, uint64_t lock_id, uint64_t owner,
                                   uint32_t permits, int64_t lease_ms);

// A message on a semaphore's or latch's channel (channel_on_message hands
// it over): the permits it frees wake as many waiters; a latch's 0 all.
void permits_on_message(Client *c, uint32_t sub_index, edgelock_lock_kind kind, const char *msg, size_t len);

// A base for the ids of one take's permits (permit_id()): unique per client.
void permit_new_base(Client *c, uint8_t out[16]);

// Give back permits granted to a caller that is not to have them: by their
// ids (expirable: repeated until Redis answers), or by count (plain: sent
// once, never repeated, or one permit too many could appear).
void permits_undo(Client *c, uint64_t lock_id, const uint8_t *base, uint32_t n);
void semaphore_undo(Client *c, uint64_t lock_id, uint32_t n);

// Unlock of a semaphore handle (release.cpp hands it over once the loss
// marker is handled): one permit of a plain semaphore, all of the owner's
// expirable ones.
edgelock_status semaphore_release_start(Client *c, edgelock_lock lock, uint64_t owner, edgelock_result_fn cb,
                                        void *user);

// SetPermits, AddPermits, SemaphoreInfo (info), ReleasePermit (permit_hex),
// LatchSetCount, LatchCountDown, LatchCount; count as the op takes it.
edgelock_status semaphore_call_start(Client *c, LockOp op, edgelock_lock lock, int64_t count,
                                     const char *permit_hex, edgelock_semaphore_info *info,
                                     edgelock_result_fn cb, void *user);

// edgelock_permit_id(): local.
edgelock_status permit_id_hex(Client *c, edgelock_lock lock, uint64_t owner, uint32_t k, char out[33]);

} // namespace edgelock
