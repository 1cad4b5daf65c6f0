// SPDX-License-Identifier: BSD-3-Clause
// The lease a lock command names (lease.cpp). The lock scripts set the key's
// TTL to it on every acquire, a re-entry too, and the release script on every
// release that leaves a count; the key is one for all of an owner's holds and
// calls on a name, through any handle on it. So the lease one of them names
// must cover what the others rely on, or the key lapses under them while
// they say held.
#pragma once

#include <stdint.h>

#include "locks/acquire.hpp"

namespace edgelock
{

struct Client;
struct Hold;

// The lease a call's lease_ms stands for: the watchdog's for
// EDGELOCK_LEASE_WATCHDOG.
int64_t effective_lease(const Client *c, int64_t lease_ms);
// The lease the waiter's attempt asks Redis for, decided each time it is
// sent (a re-send may find more to cover); kept in w->asked_lease_ms, which
// its grant counts. For a lock: no shorter than what the owner's hold on the
// name has left, nor than what its other lock calls there in flight asked.
int64_t lease_to_ask(Client *c, Waiter *w);
// The lease a give-back of the waiter's grant names, for the count it
// leaves: what the owner's hold has left (its own lease when none); its send
// raises it to what the owner's lock calls on the name in flight asked
// (lease_to_release).
int64_t lease_to_leave(Client *c, const Waiter *w);
// The longest the owner's holds on lock_id's name, through any handle, have
// left by our clock (the watchdog's lease for one it renews); -1 for none.
int64_t hold_lease_left(Client *c, uint64_t lock_id, uint64_t owner);
// The lease a release (an unlock, a give-back) names when it is sent, for
// the count it may leave: no shorter than `named` (decided when it was made),
// nor than what the owner's holds on the name have left and its lock calls
// there in flight asked by now (a re-send may run after them).
int64_t lease_to_release(Client *c, uint64_t lock_id, uint64_t owner, int64_t named);
// A lock call's attempt may run in Redis, or has run and its grant is not yet
// counted: attempting, or waiting for its replicas.
inline bool waiter_in_flight(const Waiter *w)
{
    return w->state == WaiterState::Attempting || w->replicating;
}
// Every change of a waiter's state goes through here, and every change of
// its replicating flag tells count_in_flight what it was: the lock handle
// counts its calls in flight (LockEntry::calls_in_flight), so that a send
// looks through the waiter table for the owner's other calls on the name
// only when the name has any. A scan per send cost make bench's pipelined
// A2 a sixth of its rate (512 calls in flight) and a handoff beside 10,000
// waiting calls half again.
void waiter_set_state(Client *c, Waiter *w, WaiterState state);
void count_in_flight(Client *c, const Waiter *w, bool was_in_flight);

// A re-entry whose reply never came may have run, and set the key's TTL to
// the lease it asked for: the hold counts no more than that (fail closed).
void bound_by_unknown_re_entry(Client *c, const Waiter *w, Hold *h, uint64_t sent_ms);

} // namespace edgelock
