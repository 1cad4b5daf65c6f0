// SPDX-License-Identifier: BSD-3-Clause
// What a lock call gives back when its caller is not to have what an attempt
// took in Redis, or cannot know whether it took it (giveback.cpp).
#pragma once

#include <stdint.h>

#include "edgelock/edgelock.h"

namespace edgelock
{

struct Client;
struct Hold;
struct Waiter;

// The lease a call's lease_ms stands for: the watchdog's for
// EDGELOCK_LEASE_WATCHDOG.
int64_t effective_lease(const Client *c, int64_t lease_ms);
// A fair waiter leaving without the lock: out of the queue (fire and forget).
void abandon_fair_queue(Client *c, const Waiter *w);
// Give back what the waiter's grant took. certain: Redis granted it.
void undo_grant(Client *c, const Waiter *w, bool certain);
// Whether the waiter's attempt must wait for a give-back of its owner's on
// its lock's name still to be answered (release_undo_out): then its timer is
// armed for the end of that wait, and acquire_after_undo() tries again.
bool wait_behind_give_back(Client *c, uint32_t index);
// What a wait that ran out without an error says: WAIT_TIMEOUT, or, behind
// a give-back not answered within a command timeout that outlasted the
// caller's own wait, TIMEOUT or CONNECTION (as an attempt queued behind it).
edgelock_status end_of_wait_behind_give_back(Client *c, const Waiter *w);
// A re-entry whose reply never came: the hold counts no more than its lease.
void bound_by_unknown_re_entry(Client *c, const Waiter *w, Hold *h, uint64_t sent_ms);
// A MultiLock or RedLock gives back a member it took, and that release could
// not even be queued (the command table full). took_watchdog: it took the
// member under the watchdog (not a re-entry of a hold renewed before).
void give_back_not_queued(Client *c, uint64_t lock_id, uint64_t owner, bool took_watchdog);

} // namespace edgelock
