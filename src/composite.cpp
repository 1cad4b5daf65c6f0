// MultiLock and RedLock: composites of lock handles, possibly on several
// clients (servers), built on the blocking hand-off. Client-side only, as in
// Redisson; the owner on every member is the calling thread.
#include "composite.hpp"

#include "blocking.hpp"

namespace edgelock
{

static Client *client_of(const edgelock_member &m)
{
    return reinterpret_cast<Client *>(m.client);
}

bool valid_times(int64_t wait_ms, int64_t lease_ms)
{
    if (wait_ms != EDGELOCK_WAIT_FOREVER && (wait_ms < 0 || wait_ms > EDGELOCK_MAX_TIME_MS))
        return false;
    return lease_ms == EDGELOCK_LEASE_WATCHDOG || (lease_ms > 0 && lease_ms <= EDGELOCK_MAX_TIME_MS);
}

bool valid_members(const edgelock_member *m, size_t n)
{
    if (!m || n == 0 || n > EDGELOCK_MAX_MEMBERS)
        return false;
    for (size_t i = 0; i < n; i++) {
        if (!m[i].client)
            return false;
        for (size_t j = 0; j < i; j++)
            if (m[j].client == m[i].client && m[j].lock.id == m[i].lock.id)
                return false; // a member twice would be taken as a re-entry
    }
    return true;
}

static void request(BlockingRequest &r, ReqOp op, const edgelock_member &m, int64_t wait_ms, int64_t lease_ms)
{
    r = BlockingRequest();
    r.op = op;
    r.lock = m.lock;
    r.owner = edgelock_port_thread_id();
    r.wait_ms = wait_ms;
    r.lease_ms = lease_ms;
}

static edgelock_status run(ReqOp op, const edgelock_member &m, int64_t wait_ms, int64_t lease_ms)
{
    BlockingRequest r;
    request(r, op, m, wait_ms, lease_ms);
    return blocking_call(client_of(m), &r, nullptr);
}

// What is left of a wait that ends at deadline (kForever: no end).
int64_t left_of(uint64_t deadline)
{
    if (deadline == kForever)
        return EDGELOCK_WAIT_FOREVER;
    uint64_t now = edgelock_port_now_ms();
    return deadline > now ? (int64_t)(deadline - now) : 0;
}

static void release_all(const edgelock_member *m, size_t n, const bool *held)
{
    for (size_t i = 0; i < n; i++)
        if (held[i])
            (void)run(ReqOp::Release, m[i], 0, 0);
}

edgelock_status multi_try_lock(const edgelock_member *m, size_t n, int64_t wait_ms, int64_t lease_ms)
{
    if (!valid_members(m, n) || !valid_times(wait_ms, lease_ms))
        return EDGELOCK_ERR_INVALID_ARG;
    const uint64_t start = edgelock_port_now_ms();
    const uint64_t deadline = wait_ms == EDGELOCK_WAIT_FOREVER ? kForever : add_ms(start, (uint64_t)wait_ms);
    // Members taken early must not lapse while later ones are awaited: take
    // them with lease + wait, and align every lease once the set is complete.
    int64_t first_lease = lease_ms;
    if (lease_ms != EDGELOCK_LEASE_WATCHDOG && wait_ms > 0)
        first_lease = lease_ms + wait_ms > EDGELOCK_MAX_TIME_MS ? EDGELOCK_MAX_TIME_MS : lease_ms + wait_ms;

    bool held[EDGELOCK_MAX_MEMBERS] = {};
    for (size_t i = 0; i < n; i++) {
        // In the order given, each waiting for what is left of the wait. A
        // member that cannot be had ends the attempt: the wait is spent.
        edgelock_status st = run(ReqOp::Acquire, m[i], left_of(deadline), first_lease);
        if (st != EDGELOCK_OK) {
            release_all(m, n, held);
            return st;
        }
        held[i] = true;
    }
    if (lease_ms != EDGELOCK_LEASE_WATCHDOG && first_lease != lease_ms) {
        for (size_t i = 0; i < n; i++) {
            edgelock_status st = run(ReqOp::Extend, m[i], 0, lease_ms);
            if (st != EDGELOCK_OK) {
                release_all(m, n, held);
                return st;
            }
        }
    }
    return EDGELOCK_OK;
}

edgelock_status multi_unlock(const edgelock_member *m, size_t n)
{
    if (!valid_members(m, n))
        return EDGELOCK_ERR_INVALID_ARG;
    edgelock_status first = EDGELOCK_OK;
    for (size_t i = 0; i < n; i++) {
        edgelock_status st = run(ReqOp::Release, m[i], 0, 0);
        if (first == EDGELOCK_OK)
            first = st;
    }
    return first;
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

static bool connection_trouble(edgelock_status st)
{
    return st == EDGELOCK_ERR_CONNECTION || st == EDGELOCK_ERR_TIMEOUT;
}

edgelock_status redlock_try_lock(const edgelock_member *m, size_t n, int64_t wait_ms, int64_t lease_ms,
                                 int64_t *validity_ms)
{
    if (!valid_members(m, n) || !valid_times(wait_ms, lease_ms))
        return EDGELOCK_ERR_INVALID_ARG;
    const size_t quorum = redlock_quorum(n);
    const int64_t lease =
        lease_ms == EDGELOCK_LEASE_WATCHDOG ? (int64_t)client_of(m[0])->cfg.watchdog_lease_ms : lease_ms;
    const int64_t drift = redlock_drift(lease);
    const uint64_t deadline =
        wait_ms == EDGELOCK_WAIT_FOREVER ? kForever : add_ms(edgelock_port_now_ms(), (uint64_t)wait_ms);
    for (;;) {
        const uint64_t round_start = edgelock_port_now_ms();
        // As Redisson: each server gets an equal share of what is left of the
        // wait, so one slow server cannot spend it all.
        int64_t left = left_of(deadline);
        int64_t per_node = redlock_node_wait(left, n);
        edgelock_status st[EDGELOCK_MAX_MEMBERS];
        run_everywhere(ReqOp::Acquire, m, n, per_node, lease_ms, nullptr, st, true);
        bool held[EDGELOCK_MAX_MEMBERS] = {};
        size_t ok = 0, unreachable = 0;
        for (size_t i = 0; i < n; i++) {
            held[i] = st[i] == EDGELOCK_OK;
            ok += held[i];
            unreachable += connection_trouble(st[i]);
        }
        int64_t validity = lease - (int64_t)(edgelock_port_now_ms() - round_start) - drift;
        if (ok >= quorum && validity > 0) {
            if (validity_ms)
                *validity_ms = validity;
            return EDGELOCK_OK;
        }
        // No majority in time: hold nothing anywhere.
        edgelock_status ignored[EDGELOCK_MAX_MEMBERS];
        run_everywhere(ReqOp::Release, m, n, 0, 0, held, ignored);
        // Too many servers unreachable for a majority: say so rather than spin
        // on servers that fail fast.
        if (n - unreachable < quorum)
            return EDGELOCK_ERR_CONNECTION;
        if (left_of(deadline) == 0)
            return EDGELOCK_ERR_WAIT_TIMEOUT;
    }
}

edgelock_status redlock_unlock(const edgelock_member *m, size_t n)
{
    if (!valid_members(m, n))
        return EDGELOCK_ERR_INVALID_ARG;
    edgelock_status st[EDGELOCK_MAX_MEMBERS];
    run_everywhere(ReqOp::Release, m, n, 0, 0, nullptr, st);
    // A minority that never had it says NOT_OWNER: expected. Report a problem
    // only when no server released it.
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
