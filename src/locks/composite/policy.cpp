// SPDX-License-Identifier: BSD-3-Clause
// MultiLock and RedLock rules (policy.hpp), as in Redisson's RedissonMultiLock
// and RedissonRedLock.
#include "locks/composite/policy.hpp"

#include "base/time.hpp"
#include "port.h"

namespace edgelock
{

bool composite_valid_times(int64_t wait_ms, int64_t lease_ms)
{
    if (wait_ms != EDGELOCK_WAIT_FOREVER && (wait_ms < 0 || wait_ms > EDGELOCK_MAX_TIME_MS))
        return false;
    return lease_ms == EDGELOCK_LEASE_WATCHDOG || (lease_ms > 0 && lease_ms <= EDGELOCK_MAX_TIME_MS);
}

bool composite_valid_members(const edgelock_member *m, size_t n, bool (*one_server)(const edgelock_client *))
{
    if (!m || n == 0 || n > EDGELOCK_MAX_MEMBERS)
        return false;
    for (size_t i = 0; i < n; i++) {
        if (!m[i].client)
            return false;
        for (size_t j = 0; j < i; j++) {
            if (m[j].client == m[i].client && m[j].lock.id == m[i].lock.id)
                return false; // a member twice would be taken as a re-entry
            // RedLock: two members on a client of one server are that server
            // counted twice toward the majority (a cluster client's names
            // may be on different masters).
            if (one_server && m[j].client == m[i].client && one_server(m[i].client))
                return false;
        }
    }
    return true;
}

uint64_t composite_deadline(int64_t wait_ms)
{
    return wait_ms == EDGELOCK_WAIT_FOREVER ? kForever : add_ms(edgelock_port_now_ms(), (uint64_t)wait_ms);
}

int64_t composite_left(uint64_t deadline)
{
    uint64_t left = ms_left(deadline, edgelock_port_now_ms());
    return left == kForever ? EDGELOCK_WAIT_FOREVER : (int64_t)left;
}

int64_t multi_first_lease(int64_t lease_ms, int64_t wait_ms)
{
    if (lease_ms == EDGELOCK_LEASE_WATCHDOG || wait_ms == 0)
        return lease_ms; // the watchdog's own, or no member waits
    if (wait_ms == EDGELOCK_WAIT_FOREVER)
        return EDGELOCK_LEASE_WATCHDOG; // no lease + wait covers a wait without end
    return lease_ms + wait_ms > EDGELOCK_MAX_TIME_MS ? EDGELOCK_MAX_TIME_MS : lease_ms + wait_ms;
}

edgelock_status multi_unlock_result(const edgelock_status *st, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (st[i] != EDGELOCK_OK)
            return st[i];
    return EDGELOCK_OK;
}

static size_t redlock_quorum(size_t n)
{
    return n / 2 + 1;
}

// Clock drift allowance, as Redisson: 1% of the lease plus 2 ms.
static int64_t redlock_drift(int64_t lease)
{
    return lease / 100 + 2;
}

int64_t redlock_node_wait(int64_t left, size_t n)
{
    return left == EDGELOCK_WAIT_FOREVER ? 1000 : left / (int64_t)n;
}

// A member's call that no retry can end otherwise: the caller's misuse (a
// member that is no lock: INVALID_ARG; a freed handle) or the client going.
static bool ends_the_call(edgelock_status st)
{
    return st == EDGELOCK_ERR_INVALID_ARG || st == EDGELOCK_ERR_STALE_HANDLE ||
           st == EDGELOCK_ERR_WRONG_THREAD || st == EDGELOCK_ERR_SHUTDOWN || st == EDGELOCK_ERR_CANCELLED;
}

// A server that answered without the lock being held elsewhere: it cannot
// grant it this round, and a round started at once would get the same.
static bool refused(edgelock_status st)
{
    return st == EDGELOCK_ERR_REDIS || st == EDGELOCK_ERR_PROTOCOL || st == EDGELOCK_ERR_TABLE_FULL ||
           st == EDGELOCK_ERR_NOT_REPLICATED;
}

RedlockVerdict redlock_judge(const edgelock_status *st, size_t n, int64_t lease, int64_t elapsed_ms,
                             int64_t left)
{
    size_t ok = 0, unreachable = 0, refusing = 0;
    edgelock_status ended = EDGELOCK_OK;   // the first member's call that ends the RedLock's
    edgelock_status refusal = EDGELOCK_OK; // the first refusal
    for (size_t i = 0; i < n; i++) {
        if (ended == EDGELOCK_OK && ends_the_call(st[i]))
            ended = st[i];
        if (refusal == EDGELOCK_OK && refused(st[i]))
            refusal = st[i];
        ok += st[i] == EDGELOCK_OK;
        refusing += refused(st[i]);
        // A server that refuses our setup (AUTH) cannot grant the lock either.
        unreachable += st[i] == EDGELOCK_ERR_CONNECTION || st[i] == EDGELOCK_ERR_TIMEOUT ||
                       st[i] == EDGELOCK_ERR_TLS || st[i] == EDGELOCK_ERR_AUTH;
    }
    RedlockVerdict v = {};
    v.validity_ms = lease - elapsed_ms - redlock_drift(lease);
    if (ended != EDGELOCK_OK) {
        // Not taken even with a majority: a cancelled call ends, releasing
        // what the round took, as MultiLock's does; so does misuse, which
        // every round would meet again (a retry at once, without end under
        // EDGELOCK_WAIT_FOREVER).
        v.why = ended;
        return v;
    }
    if (ok >= redlock_quorum(n) && v.validity_ms > 0) {
        v.acquired = true;
        return v;
    }
    // Too many servers unreachable or refusing for a majority: say so rather
    // than spin on servers that fail fast. Otherwise retry while the wait
    // lasts (some are held elsewhere: their unlock, or their TTL, is awaited).
    if (n - unreachable - refusing < redlock_quorum(n))
        v.why = unreachable >= refusing || refusal == EDGELOCK_OK ? EDGELOCK_ERR_CONNECTION : refusal;
    else
        v.why = EDGELOCK_ERR_WAIT_TIMEOUT;
    v.retry = v.why == EDGELOCK_ERR_WAIT_TIMEOUT && left != 0;
    return v;
}

edgelock_status redlock_unlock_result(const edgelock_status *st, size_t n)
{
    edgelock_status first = EDGELOCK_ERR_NOT_OWNER;
    for (size_t i = 0; i < n; i++) {
        if (st[i] == EDGELOCK_OK)
            return EDGELOCK_OK;
        if (first == EDGELOCK_ERR_NOT_OWNER)
            first = st[i];
    }
    return first;
}

} // namespace edgelock
