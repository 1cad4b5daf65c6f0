// SPDX-License-Identifier: BSD-3-Clause
// Holds: the (lock, owner) pairs this client holds, with their re-entry count.
#pragma once

#include <stdint.h>

#include "edgelock/edgelock.h"

namespace edgelock
{

struct Client;

struct Hold {
    uint64_t lock_id;
    uint64_t owner;
    uint32_t count;        // re-entrant holds as this client counted them
    uint32_t pending;      // lock/unlock calls in flight for this pair
    int64_t lease_ms;      // lease of the latest acquire
    bool watchdog;         // renewed by the watchdog
    bool lost;             // watchdog found it gone; reported once, kept as a marker
    bool renewing;         // part of an in-flight renewal batch
    uint32_t renew_pos;    // its position in that batch's KEYS
    uint64_t renew_cmd;    // that batch's command id
    uint64_t confirmed_ms; // send time of the last acquire/renewal Redis confirmed
    // wait_replicas: a renewal the master confirmed (its send time, and the
    // connection it came on) that counts once the WAIT behind its batch says
    // the replicas have it too; 0 when none is pending.
    uint64_t renewed_ms;
    struct Connection *renewed_on;
    uint64_t expires_ms; // fixed lease: when it lapses at the latest by our clock
    // An unlock whose outcome is unknown (timeout, connection lost): its
    // request id, so that a retried unlock asks Redis's unlock latch for the
    // first one's answer instead of releasing again.
    uint64_t server_instance; // the Redis process of the latest acquire (Connection::server_instance)
    bool unlock_uncertain;
    // That unlock sent again ahead of a lock call (release_settle_uncertain)
    // and not answered yet: it may still have released the lock, so the hold
    // vouches for nothing until the answer takes its count down.
    bool unlock_settling;
    uint8_t unlock_request_id[16];
    union {
        // An expirable semaphore's permits held: count of them, ids from this
        // base (permit_id()).
        uint8_t permit_base[16];
        // A read lock: each of its holds has a timeout key of its own in
        // Redis, and an unlock deletes the newest one's. So the holds left
        // after an unlock may end before expires_ms (the newest's end): this
        // is the earliest end among them (hold_unlocked), by our clock.
        uint64_t read_earliest_end_ms;
    };
    uint32_t next_in_bucket; // the index's chain (Client::hold_buckets)
};

// Holds are found by (lock, owner) through a fixed index of max_holds chains,
// so that lookups cost the same with 10 or 10,000 locks held.
Hold *hold_find(Client *c, uint64_t lock_id, uint64_t owner, uint32_t *index);
Hold *hold_reserve(Client *c, uint64_t lock_id, uint64_t owner, uint32_t *index);
void hold_free(Client *c, uint32_t index);            // out of the index and the table
void hold_unpin(Client *c, uint32_t index);           // pending--, free when idle
void hold_release_if_idle(Client *c, uint32_t index); // free when nothing refers to it
bool hold_active(const Hold *h, uint64_t now);
// A renewal of h confirmed, as sent at sent_ms.
void hold_renewed(Client *c, Hold *h, uint64_t sent_ms);
// An unlock answered and h's count taken down. Of a read lock, what is left
// ends, unless renewed, no later than the earliest of its holds' ends.
void hold_unlocked(Client *c, Hold *h);
// A fixed lease that has ended by our clock, with no call on its pair in
// flight: its slot is only a record of the past, so it is freed by the
// watchdog's next tick, or at once when the table is full (hold_reserve), and
// the owner's next lock call starts a fresh hold. Without that, owners that
// let their leases run out (a thread gone, a request id never reused) would
// fill the table for good.
bool hold_lapsed(const Client *c, const Hold *h, uint64_t now);
// A lock call on the pair is over: acquired (by an attempt sent at sent_ms,
// with lease_ms) or not. Unpins it. True when the watchdog's tick must run
// (it renews watchdog holds and frees lapsed fixed ones).
// permits: how many a semaphore call took (the count goes up by that).
bool hold_settle(Client *c, uint32_t index, bool acquired, int64_t lease_ms, uint64_t sent_ms,
                 uint32_t permits = 1);
void hold_mark_lost(Client *c, uint32_t index); // tells on_lock_lost; h may be gone after
bool hold_renewable(const Hold *h);
// The watchdog lets go of owner's hold of lock_id, which is about to get a
// fixed lease by an Extend (a MultiLock's member taken under the watchdog
// during an endless wait). No renewal goes out after this one, so none can
// come after the Extend and undo its lease (a batch already sent is answered
// first, and leaves a hold no longer renewable alone). Until the Extend's
// answer sets the lease from its send time, the hold counts as what Redis
// granted at least: its last confirmed renewal or acquire plus the watchdog
// lease (fail closed). Nothing happens to a hold the watchdog does not renew.
void hold_end_watchdog(Client *c, uint64_t lock_id, uint64_t owner);
// Whether owner may still act on lock_id by this client's clock, and for how
// long at least (edgelock_lock_valid). No Redis call.
edgelock_status hold_validity(Client *c, uint64_t lock_id, uint64_t owner, int64_t *remaining_ms);
// The Redis process that granted owner's hold (edgelock_token_server).
edgelock_status hold_server(Client *c, uint64_t lock_id, uint64_t owner, uint64_t *server);

} // namespace edgelock
