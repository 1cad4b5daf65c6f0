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

// The distinct clients of one composite call, each pinned for the call's
// length (blocking_pin): a member's client destroyed meanwhile must not be
// called again, and must not wait on the call's waits elsewhere.
struct MemberClients {
    Client *client[EDGELOCK_MAX_MEMBERS]; // the ones pinned
    BlockingPin pin[EDGELOCK_MAX_MEMBERS];
    size_t pinned;
    // Per member: OK when its client is pinned, else why it could not be
    // (SHUTDOWN, WRONG_THREAD); such a client is not called at all.
    edgelock_status member[EDGELOCK_MAX_MEMBERS];
    uint64_t owner;
    // A member's client is being destroyed (__atomic): the call's waits end,
    // what it holds elsewhere is given back, and it returns SHUTDOWN.
    bool gone;
};

// A member's client stops: end the call's wait wherever it is. A wait not yet
// started is refused at its entry or its start (BlockingRequest::abandoned,
// read under that client's mutex or after it), one started is found by this
// cancel, which enters its client after the flag is set.
static void member_client_stops(BlockingPin *pin, void *user)
{
    auto *mc = static_cast<MemberClients *>(user);
    __atomic_store_n(&mc->gone, true, __ATOMIC_RELEASE);
    size_t pinned = __atomic_load_n(&mc->pinned, __ATOMIC_ACQUIRE);
    for (size_t i = 0; i < pinned; i++) {
        if (&mc->pin[i] == pin)
            continue;
        BlockingRequest r = {};
        r.op = ReqOp::Cancel;
        r.owner = mc->owner;
        (void)blocking_call(mc->client[i], &r, nullptr); // SHUTDOWN if that one stops too
    }
}

static bool members_gone(const MemberClients &mc)
{
    return __atomic_load_n(&mc.gone, __ATOMIC_ACQUIRE);
}

static void unpin_members(MemberClients &mc)
{
    for (size_t i = 0; i < mc.pinned; i++)
        blocking_unpin_begin(mc.client[i], &mc.pin[i]);
    for (size_t i = 0; i < mc.pinned; i++)
        blocking_unpin(mc.client[i], &mc.pin[i]);
}

// Pin each distinct client of m. all_or_nothing: the first refusal is
// returned and nothing is left pinned (a lock call: nothing taken yet);
// else a refused client's members carry its refusal in mc.member (an
// unlock: the members elsewhere are still released).
static edgelock_status pin_members(MemberClients &mc, const edgelock_member *m, size_t n, bool all_or_nothing)
{
    mc.pinned = 0;
    mc.owner = edgelock_port_thread_id();
    mc.gone = false;
    for (size_t i = 0; i < n; i++) {
        Client *c = client_of(m[i]);
        size_t before = 0;
        while (before < i && client_of(m[before]) != c)
            before++;
        if (before < i) {
            mc.member[i] = mc.member[before]; // its client pinned or refused already
            continue;
        }
        // An on_stop of a client pinned before may run on another thread
        // meanwhile: it reads the clients counted by pinned, so the count
        // grows only once this one is pinned and written.
        size_t k = mc.pinned;
        mc.client[k] = c;
        mc.member[i] = blocking_pin(c, &mc.pin[k], member_client_stops, &mc);
        if (mc.member[i] == EDGELOCK_OK) {
            __atomic_store_n(&mc.pinned, k + 1, __ATOMIC_RELEASE);
        } else if (all_or_nothing) {
            unpin_members(mc);
            return mc.member[i];
        }
    }
    return EDGELOCK_OK;
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

// Give back what a composite call took. took_watchdog[i]: the call took
// member i under the watchdog (not a re-entry of a hold renewed before), so a
// release that cannot start ends that renewal: the member lapses with its
// lease rather than being renewed for ever by nobody who knows of it.
static void release_all(const edgelock_member *m, size_t n, const bool *held, const bool *took_watchdog)
{
    for (size_t i = 0; i < n; i++) {
        if (!held[i])
            continue;
        BlockingRequest r;
        request(r, ReqOp::Release, m[i], 0, 0);
        r.give_back = true;
        r.end_watchdog = took_watchdog[i];
        (void)blocking_call(client_of(m[i]), &r, nullptr);
    }
}

// Set the lease of every member to lease_ms, all at once: each lease counts
// from its own Extend's sending, so one after another the first would end a
// round trip per member before the last. end_watchdog[i]: member i was taken
// under the watchdog by this call, which lets go of it first. The first error.
static edgelock_status extend_all(const edgelock_member *m, size_t n, int64_t lease_ms,
                                  const bool *end_watchdog)
{
    BlockingRequest r[EDGELOCK_MAX_MEMBERS];
    edgelock_status st[EDGELOCK_MAX_MEMBERS];
    for (size_t i = 0; i < n; i++) {
        request(r[i], ReqOp::Extend, m[i], 0, lease_ms);
        r[i].end_watchdog = end_watchdog[i];
        st[i] = blocking_post(client_of(m[i]), &r[i]);
    }
    edgelock_status first = EDGELOCK_OK;
    for (size_t i = 0; i < n; i++) {
        if (st[i] == EDGELOCK_OK)
            st[i] = blocking_wait(client_of(m[i]), &r[i], nullptr);
        if (first == EDGELOCK_OK)
            first = st[i];
    }
    return first;
}

// A member taken early may have been lost while later ones were awaited (the
// watchdog found its key gone, or no renewal was confirmed for a lease).
// Without an Extend to follow (the lease asked for is the one taken) only the
// client's own account tells: all or nothing, so that is not OK.
static edgelock_status still_held(const edgelock_member &m)
{
    int64_t left = 0;
    BlockingRequest r;
    request(r, ReqOp::Valid, m, 0, 0);
    r.remaining_out = &left;
    return blocking_call(client_of(m), &r, nullptr);
}

static edgelock_status all_still_held(const edgelock_member *m, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        edgelock_status st = still_held(m[i]);
        if (st != EDGELOCK_OK)
            return st;
    }
    return EDGELOCK_OK;
}

// A composite call on its members' clients, pinned for its length.
template <typename Body>
static edgelock_status with_members_pinned(const edgelock_member *m, size_t n, bool all_or_nothing, Body body)
{
    MemberClients mc;
    edgelock_status st = pin_members(mc, m, n, all_or_nothing);
    if (st != EDGELOCK_OK)
        return st;
    st = body(mc);
    unpin_members(mc);
    return st;
}

static edgelock_status multi_take(const edgelock_member *m, size_t n, int64_t wait_ms, int64_t lease_ms,
                                  MemberClients &mc)
{
    const uint64_t deadline = composite_deadline(wait_ms);
    const int64_t first_lease = multi_first_lease(lease_ms, wait_ms);
    // A wait without end and a fixed lease: the members taken early are
    // renewed by their clients' watchdogs until the set is complete (a process
    // that dies frees them within a watchdog lease), then the watchdog lets
    // go of each (the ones this call took) and its lease is set.
    const bool under_watchdog = first_lease == EDGELOCK_LEASE_WATCHDOG;
    bool held[EDGELOCK_MAX_MEMBERS] = {};
    bool took_watchdog[EDGELOCK_MAX_MEMBERS] = {};
    for (size_t i = 0; i < n; i++) {
        // In the order given, each waiting for what is left of the wait. A
        // member that cannot be had ends the attempt: the wait is spent.
        BlockingRequest r;
        request(r, ReqOp::Acquire, m[i], composite_left(deadline), first_lease);
        r.abandoned = &mc.gone;
        edgelock_status st = blocking_call(client_of(m[i]), &r, nullptr);
        if (st != EDGELOCK_OK) {
            release_all(m, n, held, took_watchdog);
            return members_gone(mc) ? EDGELOCK_ERR_SHUTDOWN : st;
        }
        held[i] = true;
        took_watchdog[i] = under_watchdog && !r.renewed_before;
    }
    edgelock_status st =
        first_lease != lease_ms ? extend_all(m, n, lease_ms, took_watchdog) : all_still_held(m, n);
    // A set with a member on a client being destroyed is no set its caller
    // could unlock: given back too.
    if (st == EDGELOCK_OK && members_gone(mc))
        st = EDGELOCK_ERR_SHUTDOWN;
    if (st != EDGELOCK_OK) {
        release_all(m, n, held, took_watchdog);
        return members_gone(mc) ? EDGELOCK_ERR_SHUTDOWN : st;
    }
    return EDGELOCK_OK;
}

edgelock_status multi_try_lock(const edgelock_member *m, size_t n, int64_t wait_ms, int64_t lease_ms)
{
    if (!composite_valid_members(m, n) || !composite_valid_times(wait_ms, lease_ms))
        return EDGELOCK_ERR_INVALID_ARG;
    return with_members_pinned(m, n, true,
                               [&](MemberClients &mc) { return multi_take(m, n, wait_ms, lease_ms, mc); });
}

edgelock_status multi_unlock(const edgelock_member *m, size_t n)
{
    if (!composite_valid_members(m, n))
        return EDGELOCK_ERR_INVALID_ARG;
    return with_members_pinned(m, n, false, [&](MemberClients &mc) {
        edgelock_status st[EDGELOCK_MAX_MEMBERS];
        for (size_t i = 0; i < n; i++)
            st[i] = mc.member[i] == EDGELOCK_OK ? run(ReqOp::Release, m[i], 0, 0) : mc.member[i];
        return multi_unlock_result(st, n);
    });
}

// Which members a RedLock round took under the watchdog (not re-entries of
// holds renewed before): run_everywhere's Acquire fills it, its Release reads
// it (release_all's took_watchdog).
struct Took {
    bool watchdog[EDGELOCK_MAX_MEMBERS];
};

// Run one request on every member at once; statuses land in st[].
// give_up: a server that is unreachable fails its attempt at once (RedLock).
// abandoned: BlockingRequest's, for an Acquire.
static void run_everywhere(ReqOp op, const edgelock_member *m, size_t n, int64_t wait_ms, int64_t lease_ms,
                           const bool *only, edgelock_status *st, Took *took, bool give_up = false,
                           const bool *abandoned = nullptr)
{
    BlockingRequest r[EDGELOCK_MAX_MEMBERS];
    bool posted[EDGELOCK_MAX_MEMBERS] = {};
    for (size_t i = 0; i < n; i++) {
        st[i] = EDGELOCK_ERR_INVALID_ARG;
        if (only && !only[i])
            continue;
        request(r[i], op, m[i], wait_ms, lease_ms);
        r[i].give_up_on_connection_error = give_up;
        r[i].abandoned = abandoned;
        r[i].give_back = op == ReqOp::Release && took;
        r[i].end_watchdog = r[i].give_back && took->watchdog[i];
        st[i] = blocking_post(client_of(m[i]), &r[i]);
        posted[i] = st[i] == EDGELOCK_OK;
    }
    for (size_t i = 0; i < n; i++) {
        if (posted[i])
            st[i] = blocking_wait(client_of(m[i]), &r[i], nullptr);
        if (op == ReqOp::Acquire && took)
            took->watchdog[i] =
                st[i] == EDGELOCK_OK && lease_ms == EDGELOCK_LEASE_WATCHDOG && !r[i].renewed_before;
    }
}

static edgelock_status redlock_take(const edgelock_member *m, size_t n, int64_t wait_ms, int64_t lease_ms,
                                    int64_t *validity_ms, MemberClients &mc)
{
    const int64_t lease =
        lease_ms == EDGELOCK_LEASE_WATCHDOG ? (int64_t)client_of(m[0])->cfg.watchdog_lease_ms : lease_ms;
    const uint64_t deadline = composite_deadline(wait_ms);
    for (;;) {
        const uint64_t round_start = edgelock_port_now_ms();
        int64_t per_node = redlock_node_wait(composite_left(deadline), n);
        edgelock_status st[EDGELOCK_MAX_MEMBERS];
        Took took = {};
        run_everywhere(ReqOp::Acquire, m, n, per_node, lease_ms, nullptr, st, &took, true, &mc.gone);
        // A server taken early in the round and lost again before its end
        // (the watchdog found its key gone) counts for nothing toward the
        // majority; it is given back with the rest.
        edgelock_status counted[EDGELOCK_MAX_MEMBERS];
        for (size_t i = 0; i < n; i++)
            counted[i] = st[i] == EDGELOCK_OK ? still_held(m[i]) : st[i];
        RedlockVerdict v = redlock_judge(counted, n, lease, (int64_t)(edgelock_port_now_ms() - round_start),
                                         composite_left(deadline));
        if (v.acquired && !members_gone(mc)) {
            if (validity_ms)
                *validity_ms = v.validity_ms;
            return EDGELOCK_OK;
        }
        // No majority in time: hold nothing anywhere.
        bool held[EDGELOCK_MAX_MEMBERS] = {};
        for (size_t i = 0; i < n; i++)
            held[i] = st[i] == EDGELOCK_OK;
        edgelock_status ignored[EDGELOCK_MAX_MEMBERS];
        run_everywhere(ReqOp::Release, m, n, 0, 0, held, ignored, &took);
        if (members_gone(mc))
            return EDGELOCK_ERR_SHUTDOWN; // a member's client is being destroyed
        if (!v.retry || composite_left(deadline) == 0)
            return v.why;
    }
}

edgelock_status redlock_try_lock(const edgelock_member *m, size_t n, int64_t wait_ms, int64_t lease_ms,
                                 int64_t *validity_ms)
{
    if (!composite_valid_members(m, n, client_one_server) || !composite_valid_times(wait_ms, lease_ms))
        return EDGELOCK_ERR_INVALID_ARG;
    return with_members_pinned(m, n, true, [&](MemberClients &mc) {
        return redlock_take(m, n, wait_ms, lease_ms, validity_ms, mc);
    });
}

edgelock_status redlock_unlock(const edgelock_member *m, size_t n)
{
    if (!composite_valid_members(m, n, client_one_server))
        return EDGELOCK_ERR_INVALID_ARG;
    return with_members_pinned(m, n, false, [&](MemberClients &mc) {
        edgelock_status st[EDGELOCK_MAX_MEMBERS];
        bool reachable[EDGELOCK_MAX_MEMBERS];
        for (size_t i = 0; i < n; i++)
            reachable[i] = mc.member[i] == EDGELOCK_OK;
        run_everywhere(ReqOp::Release, m, n, 0, 0, reachable, st, nullptr);
        for (size_t i = 0; i < n; i++)
            if (!reachable[i])
                st[i] = mc.member[i];
        return redlock_unlock_result(st, n);
    });
}

} // namespace edgelock
