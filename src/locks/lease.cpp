// SPDX-License-Identifier: BSD-3-Clause
// The lease a lock command names (lease.hpp).
//
// Two lock calls of one owner on one name may be on the wire at once (two
// threads, or a retry and a later call), and a re-send (CLUSTERDOWN, MOVED,
// NOSCRIPT) may run after a call sent later. Whichever Redis runs last sets
// the TTL of the key they share. So an attempt names the longest lease any
// of them relies on, decided when its bytes are formatted: a stress run on
// a cluster saw a 250 ms re-entry, sent again after the slot came back, run
// after the same owner's watchdog grant; that call said OK with 2.3 s of
// lock_valid left, and another client held the lock 50 ms later.
#include "locks/lease.hpp"

#include "base/time.hpp"
#include "locks/acquire.hpp"
#include "locks/client.hpp"
#include "locks/handles.hpp"
#include "locks/holds.hpp"

namespace edgelock
{

int64_t effective_lease(const Client *c, int64_t lease_ms)
{
    return lease_ms == EDGELOCK_LEASE_WATCHDOG ? (int64_t)c->cfg.watchdog_lease_ms : lease_ms;
}

// What one hold has left by our clock, -1 when it holds nothing: the
// watchdog's lease for a hold it renews, else the rest of the fixed one
// (Redis runs the command no earlier than now, so the key ends no sooner).
static int64_t lease_left(Client *c, const Hold *h)
{
    if (!h || h->count == 0 || h->lost)
        return -1;
    if (h->watchdog)
        return (int64_t)c->cfg.watchdog_lease_ms;
    uint64_t now = loop_now(&c->loop);
    return h->expires_ms > now ? (int64_t)(h->expires_ms - now) : -1;
}

int64_t hold_lease_left(Client *c, uint64_t lock_id, uint64_t owner)
{
    int64_t left = lease_left(c, hold_find(c, lock_id, owner, nullptr));
    for (uint32_t i = lock_next_twin(c, lock_id, kNoIndex); i != kNoIndex;
         i = lock_next_twin(c, lock_id, i)) {
        int64_t twin = lease_left(c, hold_find(c, c->locks.id_of(i), owner, nullptr));
        if (twin > left)
            left = twin;
    }
    return left;
}

void count_in_flight(Client *c, const Waiter *w, bool was_in_flight)
{
    bool now = waiter_in_flight(w);
    if (now != was_in_flight)
        lock_get(c, w->lock_id)->calls_in_flight += now ? 1u : (uint32_t)-1;
}

void waiter_set_state(Client *c, Waiter *w, WaiterState state)
{
    bool was = waiter_in_flight(w);
    w->state = state;
    count_in_flight(c, w, was);
}

// Lock calls in flight on lock_id's name, through any handle, but `except`
// (one of them, on lock_id).
static uint32_t calls_in_flight_on_name(Client *c, uint64_t lock_id, const Waiter *except)
{
    uint32_t n = lock_get(c, lock_id)->calls_in_flight;
    for (uint32_t i = lock_next_twin(c, lock_id, kNoIndex); i != kNoIndex; i = lock_next_twin(c, lock_id, i))
        n += c->locks.get(i)->calls_in_flight;
    return except && waiter_in_flight(except) ? n - 1 : n;
}

// The longest lease the owner's lock calls on lock_id's name (but `except`)
// asked for while Redis may run or have run their attempts (on the wire, or
// granted and not yet counted): 0 when there are none. One that waits has no
// grant.
static int64_t longest_lease_in_flight(Client *c, uint64_t lock_id, uint64_t owner, const Waiter *except)
{
    int64_t longest = 0;
    if (calls_in_flight_on_name(c, lock_id, except) == 0)
        return longest;
    for (uint32_t i = 0; i < c->waiters.end(); i++) {
        const Waiter *o = c->waiters.get(i);
        if (!o || o == except || o->owner != owner || !waiter_in_flight(o) ||
            !kind_serves(lock_kind(c, o->lock_id), KindClass::Lock) ||
            !same_lock_name(c, o->lock_id, lock_id))
            continue;
        if (o->asked_lease_ms > longest)
            longest = o->asked_lease_ms;
    }
    return longest;
}

int64_t lease_to_ask(Client *c, Waiter *w)
{
    int64_t lease = effective_lease(c, w->lease_ms);
    if (kind_serves(lock_kind(c, w->lock_id), KindClass::Lock)) {
        int64_t left = hold_lease_left(c, w->lock_id, w->owner);
        int64_t in_flight = longest_lease_in_flight(c, w->lock_id, w->owner, w);
        if (left > lease)
            lease = left;
        if (in_flight > lease)
            lease = in_flight;
    }
    w->asked_lease_ms = lease;
    return lease;
}

int64_t lease_to_leave(Client *c, const Waiter *w)
{
    // Undoing a re-entry, the count left is the hold's (through any handle
    // on the name): its own lease (what lock_valid counts), not the
    // re-entry's, which may be longer. The owner's other calls in flight
    // are counted when the give-back is sent (lease_to_release).
    int64_t left = hold_lease_left(c, w->lock_id, w->owner);
    return left >= 0 ? left : effective_lease(c, w->lease_ms);
}

int64_t lease_to_release(Client *c, uint64_t lock_id, uint64_t owner, int64_t named)
{
    if (!kind_serves(lock_kind(c, lock_id), KindClass::Lock))
        return named;
    int64_t left = hold_lease_left(c, lock_id, owner);
    int64_t in_flight = longest_lease_in_flight(c, lock_id, owner, nullptr);
    int64_t lease = left > named ? left : named;
    return in_flight > lease ? in_flight : lease;
}

void bound_by_unknown_re_entry(Client *c, const Waiter *w, Hold *h, uint64_t sent_ms)
{
    if (!kind_serves(lock_kind(c, w->lock_id), KindClass::Lock))
        return;
    int64_t lease = w->asked_lease_ms;
    uint64_t end = add_ms(sent_ms, (uint64_t)lease);
    if (h->watchdog) {
        // One asked for no less than the watchdog's lease shortens nothing.
        if ((uint64_t)lease >= c->cfg.watchdog_lease_ms)
            return;
        h->watchdog = false;
        uint64_t promised = add_ms(h->confirmed_ms, c->cfg.watchdog_lease_ms);
        h->expires_ms = end < promised ? end : promised;
        h->lease_ms = lease;
    } else if (end < h->expires_ms) {
        h->expires_ms = end;
    }
}

} // namespace edgelock
