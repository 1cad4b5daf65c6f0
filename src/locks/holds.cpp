// SPDX-License-Identifier: BSD-3-Clause
// Holds (holds.hpp). A hold slot lives while it is held, while calls for its
// pair are in flight, while it sits in a renewal batch, or as a loss marker
// (until its owner's next call, or a full table needs it: make_room); a fixed
// lease's until the lease has ended by our clock (hold_lapsed).
#include "locks/holds.hpp"
#include "base/log.hpp"

#include "base/time.hpp"
#include "locks/callbacks.hpp"
#include "locks/client.hpp"

namespace edgelock
{

static uint32_t *bucket_of(Client *c, uint64_t lock_id, uint64_t owner)
{
    // Owners are thread ids or task numbers and lock ids are slot|generation:
    // mix them so that neighbours spread over the chains.
    uint64_t x = lock_id * 0x9e3779b97f4a7c15ull ^ owner;
    x ^= x >> 31;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 29;
    return &c->hold_buckets[(uint32_t)(x % c->holds.capacity())];
}

Hold *hold_find(Client *c, uint64_t lock_id, uint64_t owner, uint32_t *index)
{
    if (c->holds.capacity() == 0)
        return nullptr;
    for (uint32_t i = *bucket_of(c, lock_id, owner); i != kNoIndex;) {
        Hold *h = c->holds.get(i);
        if (h->lock_id == lock_id && h->owner == owner) {
            if (index)
                *index = i;
            return h;
        }
        i = h->next_in_bucket;
    }
    return nullptr;
}

void hold_free(Client *c, uint32_t index)
{
    Hold *h = c->holds.get(index);
    uint32_t *link = bucket_of(c, h->lock_id, h->owner);
    while (*link != index)
        link = &c->holds.get(*link)->next_in_bucket;
    *link = h->next_in_bucket;
    if (LockEntry *le = lock_get(c, h->lock_id))
        le->holds--;
    c->holds.release(index);
}

bool hold_lapsed(const Client *c, const Hold *h, uint64_t now)
{
    if (h->count == 0 || h->watchdog || h->lost || h->pending > 0 || h->renewing)
        return false;
    // The lease is over by our clock (expires_ms counts from the attempt's
    // send time: no later than Redis's end of it): lock_valid says NOT_OWNER
    // already, and an unlock or extend asks Redis with or without this
    // record (an extend in flight pins it). After an unlock of unknown
    // outcome the record stays until the latch that could answer its retry
    // is gone (release.cpp): that unlock could only set it while Redis still
    // had the hold, which it had a command timeout past expires_ms at the
    // latest (an acquire's reply comes within one, or it is undone).
    uint64_t end = h->expires_ms;
    if (h->unlock_uncertain)
        end = add_ms(end, (uint64_t)c->cfg.command_timeout_ms + c->cfg.unlock_latch_ttl_ms);
    return now >= end;
}

// A full table: make room from what is only a record of the past. Every
// lapsed fixed lease; if that freed nothing, the oldest loss marker: its loss
// was told through on_lock_lost, and its owner's unlock then answers
// NOT_OWNER instead of LOST, which calls for the same. Without that, owners
// that never come back after a loss would fill the table. An O(holds in use)
// scan, only when full.
static void make_room(Client *c)
{
    const uint64_t now = loop_now(&c->loop);
    uint32_t oldest_loss = kNoIndex;
    for (uint32_t i = 0; i < c->holds.end(); i++) {
        Hold *h = c->holds.get(i);
        if (!h)
            continue;
        if (hold_lapsed(c, h, now))
            hold_free(c, i);
        else if (h->lost && h->pending == 0 && !h->renewing &&
                 (oldest_loss == kNoIndex || h->confirmed_ms < c->holds.get(oldest_loss)->confirmed_ms))
            oldest_loss = i;
    }
    if (c->holds.full() && oldest_loss != kNoIndex)
        hold_free(c, oldest_loss);
}

Hold *hold_reserve(Client *c, uint64_t lock_id, uint64_t owner, uint32_t *index)
{
    Hold *h = hold_find(c, lock_id, owner, index);
    if (h) {
        // A fresh acquisition supersedes a loss marker or a lease that ran
        // out: it is not one more re-entry of those.
        if (h->lost || hold_lapsed(c, h, loop_now(&c->loop))) {
            h->lost = false;
            h->count = 0;
            h->watchdog = false;
        }
        h->pending++;
        return h;
    }
    if (c->holds.full())
        make_room(c); // before the allocation: a refusal counts (table full_count) only if it stays full
    h = c->holds.alloc(index);
    if (!h)
        return nullptr;
    h->lock_id = lock_id;
    h->owner = owner;
    h->pending = 1;
    uint32_t *bucket = bucket_of(c, lock_id, owner);
    h->next_in_bucket = *bucket;
    *bucket = *index;
    lock_get(c, lock_id)->holds++;
    return h;
}

void hold_release_if_idle(Client *c, uint32_t index)
{
    Hold *h = c->holds.get(index);
    if (h && h->pending == 0 && h->count == 0 && !h->lost && !h->renewing)
        hold_free(c, index);
}

void hold_unpin(Client *c, uint32_t index)
{
    Hold *h = c->holds.get(index);
    EDGELOCK_ASSERT(h && h->pending > 0);
    h->pending--;
    hold_release_if_idle(c, index);
}

bool hold_active(const Hold *h, uint64_t now)
{
    return h->count > 0 && !h->lost && (h->watchdog || now < h->expires_ms);
}

void hold_renewed(Client *c, Hold *h, uint64_t sent_ms)
{
    h->confirmed_ms = sent_ms;
    // A read hold's renewal sets every one of its timeout keys to the lease.
    if (lock_kind(c, h->lock_id) == EDGELOCK_READ)
        h->read_earliest_end_ms = add_ms(sent_ms, c->cfg.watchdog_lease_ms);
}

void hold_unlocked(Client *c, Hold *h)
{
    // An undo's handle may be freed once it is sent: no kind to ask then.
    if (!lock_get(c, h->lock_id) || lock_kind(c, h->lock_id) != EDGELOCK_READ)
        return;
    if (h->count > 0 && !h->watchdog && h->read_earliest_end_ms < h->expires_ms)
        h->expires_ms = h->read_earliest_end_ms;
}

bool hold_renewable(const Hold *h)
{
    return h->count > 0 && h->watchdog && !h->lost;
}

void hold_end_watchdog(Client *c, uint64_t lock_id, uint64_t owner)
{
    Hold *h = hold_find(c, lock_id, owner, nullptr);
    if (!h || !hold_renewable(h))
        return;
    h->watchdog = false;
    h->lease_ms = (int64_t)c->cfg.watchdog_lease_ms;
    h->expires_ms = add_ms(h->confirmed_ms, c->cfg.watchdog_lease_ms);
}

// one_ttl: the hold is part of one key with one TTL that every acquire sets (a
// lock, not a semaphore's permits, each with its own expiry). own_timeouts:
// a read lock, whose holds also have a timeout key each (read_earliest_end_ms).
static void acquired(Hold *h, int64_t lease_ms, uint64_t sent_ms, uint32_t permits, bool one_ttl,
                     bool own_timeouts, uint32_t watchdog_lease_ms)
{
    if (own_timeouts) {
        uint64_t end =
            add_ms(sent_ms, lease_ms == EDGELOCK_LEASE_WATCHDOG ? watchdog_lease_ms : (uint64_t)lease_ms);
        if (h->count == 0 || end < h->read_earliest_end_ms)
            h->read_earliest_end_ms = end;
    }
    if (lease_ms == EDGELOCK_LEASE_WATCHDOG) {
        h->watchdog = true;
    } else {
        // A shorter fixed lease set on a hold the watchdog renews (a re-entry
        // sent before the call it re-enters was, so lease_to_ask() could not
        // raise it): Redis now lets the key lapse with this lease,
        // and so does the hold; counting the watchdog's lease from here would
        // promise more than Redis has.
        if (h->count == 0 || (one_ttl && (uint64_t)lease_ms < watchdog_lease_ms))
            h->watchdog = false;
        h->expires_ms = add_ms(sent_ms, (uint64_t)lease_ms);
    }
    h->lease_ms = lease_ms;
    h->count += permits;
    h->confirmed_ms = sent_ms;
}

bool hold_settle(Client *c, uint32_t index, bool acquired_it, int64_t lease_ms, uint64_t sent_ms,
                 uint32_t permits)
{
    Hold *h = c->holds.get(index);
    bool tick = false;
    if (acquired_it) {
        if (h->lost) {
            // Loss was seen before this acquire ran (its reply came later on
            // the same connection; or by time, the key then gone or not): a
            // fresh hold, not one more re-entry of the lost one. Else the
            // marker would make the next unlock answer LOST and release
            // nothing, leaving this lock held in Redis.
            h->lost = false;
            h->count = 0;
            h->watchdog = false;
        }
        // After an unlock of unknown outcome, the next unlock is another one:
        // resending the old one's request id would get its answer from the
        // unlock latch ("released") and release nothing of this hold.
        h->unlock_uncertain = false;
        h->unlock_settling = false;
        const edgelock_lock_kind kind = lock_kind(c, h->lock_id);
        acquired(h, lease_ms, sent_ms, permits, kind_serves(kind, KindClass::Lock), kind == EDGELOCK_READ,
                 c->cfg.watchdog_lease_ms);
        tick = true; // renewed, or freed once lapsed
    }
    hold_unpin(c, index);
    return tick;
}

// The local calls' first answer about owner's hold: OK with it in *out, or
// STALE_HANDLE, NOT_OWNER, LOST.
static edgelock_status held(Client *c, uint64_t lock_id, uint64_t owner, Hold **out)
{
    if (!lock_get(c, lock_id))
        return EDGELOCK_ERR_STALE_HANDLE;
    Hold *h = hold_find(c, lock_id, owner, nullptr);
    if (!h || (h->count == 0 && !h->lost))
        return EDGELOCK_ERR_NOT_OWNER;
    if (h->lost)
        return EDGELOCK_ERR_LOST;
    *out = h;
    return EDGELOCK_OK;
}

edgelock_status hold_validity(Client *c, uint64_t lock_id, uint64_t owner, int64_t *remaining_ms)
{
    *remaining_ms = 0;
    Hold *h = nullptr;
    edgelock_status st = held(c, lock_id, owner, &h);
    if (st != EDGELOCK_OK)
        return st;
    // An unlock of the owner's last hold whose outcome is unknown may have
    // released it, and another client may hold the lock now: promise
    // nothing (fail closed). A retry of that unlock, or a lock call, settles
    // it once Redis has answered it (the lock call's resend: unlock_settling).
    if ((h->unlock_uncertain || h->unlock_settling) && h->count <= 1)
        return EDGELOCK_ERR_LOST;
    const uint64_t now = loop_now(&c->loop);
    if (h->watchdog) {
        // Redis set the lease no earlier than the send time of the last
        // renewal it confirmed: its expiry is at least that plus the lease.
        // A holder that was frozen (or whose renewals failed) past it finds
        // out here, before its next write, not when the watchdog next runs.
        uint64_t until = add_ms(h->confirmed_ms, c->cfg.watchdog_lease_ms);
        if (now >= until)
            return EDGELOCK_ERR_LOST;
        *remaining_ms = (int64_t)(until - now);
        return EDGELOCK_OK;
    }
    if (now >= h->expires_ms)
        return EDGELOCK_ERR_NOT_OWNER; // a fixed lease ran out, as unlock says
    *remaining_ms = (int64_t)(h->expires_ms - now);
    return EDGELOCK_OK;
}

edgelock_status hold_server(Client *c, uint64_t lock_id, uint64_t owner, uint64_t *server)
{
    *server = 0;
    Hold *h = nullptr;
    edgelock_status st = held(c, lock_id, owner, &h);
    if (st == EDGELOCK_OK)
        *server = h->server_instance;
    return st;
}

void hold_mark_lost(Client *c, uint32_t index)
{
    Hold *h = c->holds.get(index);
    h->lost = true;
    log_to(c->loop.log, EDGELOCK_LOG_WARN, "lock lost (owner %llu)", (unsigned long long)h->owner);
    invoke_lock_lost(c, h->lock_id, h->owner);
}

} // namespace edgelock
