// SPDX-License-Identifier: BSD-3-Clause
// MultiLock and RedLock, blocking: composites of lock handles, possibly on
// several clients (servers), driven from the calling thread through each
// client's blocking hand-off. The rules are locks/composite/policy.hpp's; the
// owner on every member is the calling thread.
#include "api/blocking.hpp"
#include "api/composite.hpp"
#include "base/time.hpp"
#include "locks/composite/policy.hpp"

namespace edgelock
{

static Client *client_of(const edgelock_member &m)
{
    return reinterpret_cast<Client *>(m.client);
}

static void request(BlockingRequest &r, ReqOp op, const edgelock_member &m, int64_t wait_ms, int64_t lease_ms)
{
    r = BlockingRequest();
    r.op = op;
    r.lock = m.lock;
    r.owner = edgelock_port_thread_id();
    r.wait_ms = wait_ms;
    r.lease_ms = lease_ms;
    r.locks_only = true; // a semaphore or latch is no member of a composite lock
}

static edgelock_status run(ReqOp op, const edgelock_member &m, int64_t wait_ms, int64_t lease_ms)
{
    BlockingRequest r;
    request(r, op, m, wait_ms, lease_ms);
    return blocking_call(client_of(m), &r, nullptr);
}

static void release_all(const edgelock_member *m, size_t n, const bool *held)
{
    for (size_t i = 0; i < n; i++)
        if (held[i])
            (void)run(ReqOp::Release, m[i], 0, 0);
}

// Renew the members taken so far (0..k-1) to a lease of lease_ms.
static edgelock_status extend_all(const edgelock_member *m, size_t k, int64_t lease_ms)
{
    for (size_t i = 0; i < k; i++) {
        edgelock_status st = run(ReqOp::Extend, m[i], 0, lease_ms);
        if (st != EDGELOCK_OK)
            return st;
    }
    return EDGELOCK_OK;
}

edgelock_status multi_try_lock(const edgelock_member *m, size_t n, int64_t wait_ms, int64_t lease_ms)
{
    if (!composite_valid_members(m, n) || !composite_valid_times(wait_ms, lease_ms))
        return EDGELOCK_ERR_INVALID_ARG;
    const uint64_t deadline = composite_deadline(wait_ms);
    int64_t first_lease = multi_first_lease(lease_ms, wait_ms);
    // A wait without end and a fixed lease: the policy wants the members taken
    // early held until the set is complete. This face cannot hand them to the
    // watchdog, whose renewal an Extend does not end (its hold would stay
    // renewed, and counted valid for a watchdog lease, after Redis was told
    // lease_ms): it renews them itself instead, with the watchdog's lease and
    // cadence. Each later member is awaited a third of that lease at a time;
    // between two, the ones taken are renewed. A process that dies frees them
    // within one watchdog lease, as the watchdog would.
    const bool renew_early = first_lease == EDGELOCK_LEASE_WATCHDOG && lease_ms != EDGELOCK_LEASE_WATCHDOG;
    int64_t renew_every = 0;
    if (renew_early) {
        first_lease = (int64_t)client_of(m[0])->cfg.watchdog_lease_ms;
        for (size_t i = 1; i < n; i++)
            if ((int64_t)client_of(m[i])->cfg.watchdog_lease_ms < first_lease)
                first_lease = (int64_t)client_of(m[i])->cfg.watchdog_lease_ms;
        renew_every = first_lease / 3 > 0 ? first_lease / 3 : 1;
    }
    bool held[EDGELOCK_MAX_MEMBERS] = {};
    for (size_t i = 0; i < n; i++) {
        // In the order given, each waiting for what is left of the wait. A
        // member that cannot be had ends the attempt: the wait is spent.
        edgelock_status st;
        for (;;) {
            const bool chunked = renew_early && i > 0;
            st = run(ReqOp::Acquire, m[i], chunked ? renew_every : composite_left(deadline), first_lease);
            if (!chunked || st != EDGELOCK_ERR_WAIT_TIMEOUT)
                break;
            st = extend_all(m, i, first_lease);
            if (st != EDGELOCK_OK)
                break; // one taken is gone: fail closed
        }
        if (st != EDGELOCK_OK) {
            release_all(m, n, held);
            return st;
        }
        held[i] = true;
    }
    if (first_lease != lease_ms) {
        edgelock_status st = extend_all(m, n, lease_ms);
        if (st != EDGELOCK_OK) {
            release_all(m, n, held);
            return st;
        }
    }
    return EDGELOCK_OK;
}

edgelock_status multi_unlock(const edgelock_member *m, size_t n)
{
    if (!composite_valid_members(m, n))
        return EDGELOCK_ERR_INVALID_ARG;
    edgelock_status st[EDGELOCK_MAX_MEMBERS];
    for (size_t i = 0; i < n; i++)
        st[i] = run(ReqOp::Release, m[i], 0, 0);
    return multi_unlock_result(st, n);
}

// Run one request on every member at once; statuses land in st[].
// give_up: a server that is unreachable fails its attempt at once (RedLock).
static void run_everywhere(ReqOp op, const edgelock_member *m, size_t n, int64_t wait_ms, int64_t lease_ms,
                           const bool *only, edgelock_status *st, bool give_up = false)
{
    BlockingRequest r[EDGELOCK_MAX_MEMBERS];
    bool posted[EDGELOCK_MAX_MEMBERS] = {};
    for (size_t i = 0; i < n; i++) {
        st[i] = EDGELOCK_ERR_INVALID_ARG;
        if (only && !only[i])
            continue;
        request(r[i], op, m[i], wait_ms, lease_ms);
        r[i].give_up_on_connection_error = give_up;
        st[i] = blocking_post(client_of(m[i]), &r[i]);
        posted[i] = st[i] == EDGELOCK_OK;
    }
    for (size_t i = 0; i < n; i++)
        if (posted[i])
            st[i] = blocking_wait(client_of(m[i]), &r[i], nullptr);
}

edgelock_status redlock_try_lock(const edgelock_member *m, size_t n, int64_t wait_ms, int64_t lease_ms,
                                 int64_t *validity_ms)
{
    if (!composite_valid_members(m, n, client_one_server) || !composite_valid_times(wait_ms, lease_ms))
        return EDGELOCK_ERR_INVALID_ARG;
    const int64_t lease =
        lease_ms == EDGELOCK_LEASE_WATCHDOG ? (int64_t)client_of(m[0])->cfg.watchdog_lease_ms : lease_ms;
    const uint64_t deadline = composite_deadline(wait_ms);
    for (;;) {
        const uint64_t round_start = edgelock_port_now_ms();
        int64_t per_node = redlock_node_wait(composite_left(deadline), n);
        edgelock_status st[EDGELOCK_MAX_MEMBERS];
        run_everywhere(ReqOp::Acquire, m, n, per_node, lease_ms, nullptr, st, true);
        RedlockVerdict v = redlock_judge(st, n, lease, (int64_t)(edgelock_port_now_ms() - round_start),
                                         composite_left(deadline));
        if (v.acquired) {
            if (validity_ms)
                *validity_ms = v.validity_ms;
            return EDGELOCK_OK;
        }
        // No majority in time: hold nothing anywhere.
        bool held[EDGELOCK_MAX_MEMBERS] = {};
        for (size_t i = 0; i < n; i++)
            held[i] = st[i] == EDGELOCK_OK;
        edgelock_status ignored[EDGELOCK_MAX_MEMBERS];
        run_everywhere(ReqOp::Release, m, n, 0, 0, held, ignored);
        if (!v.retry || composite_left(deadline) == 0)
            return v.why;
    }
}

edgelock_status redlock_unlock(const edgelock_member *m, size_t n)
{
    if (!composite_valid_members(m, n, client_one_server))
        return EDGELOCK_ERR_INVALID_ARG;
    edgelock_status st[EDGELOCK_MAX_MEMBERS];
    run_everywhere(ReqOp::Release, m, n, 0, 0, nullptr, st);
    return redlock_unlock_result(st, n);
}

} // namespace edgelock
