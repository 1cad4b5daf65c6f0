// SPDX-License-Identifier: BSD-3-Clause
// Asynchronous MultiLock and RedLock for clients that share the caller's event
// loop. The state lives in the caller's edgelock_composite, not in any client's
// tables: member calls on several clients call back into it, and it must not
// depend on which of those clients goes first.
#include <string.h>

#include "locks/composite/async.hpp"

#include "base/time.hpp"
#include "locks/acquire.hpp"
#include "locks/callbacks.hpp"
#include "locks/client.hpp"
#include "locks/composite/policy.hpp"
#include "locks/giveback.hpp"
#include "locks/handles.hpp"
#include "locks/holds.hpp"
#include "locks/queries.hpp"
#include "locks/release.hpp"

namespace edgelock
{

namespace
{

enum class Mode : uint8_t { MultiLock, MultiUnlock, RedLock, RedUnlock };

// Where a composite is: each phase but Taking runs calls on members in
// parallel and moves on when the last one answers.
enum class Phase : uint8_t {
    Taking,    // MultiLock: one member at a time, in order
    Aligning,  // MultiLock: every lease set to the one asked for
    Round,     // RedLock: every server at once
    Releasing, // giving back what was taken; then finish or another round
    Unlocking, // the unlock calls
};

struct State;

// The user pointer of one member call: which composite, which member; and
// its link into that member's client, which tells it when the client goes
// (watch first: closing() gets the MemberRef back from it).
struct MemberRef {
    ClientWatch watch;
    State *state;
    uint32_t index;
};

struct State {
    uint32_t in_use; // kInUse from the call until the callback
    Mode mode;
    Phase phase;
    bool retry_after_release; // RedLock: another round once the release is done
    uint32_t n;
    uint32_t next;        // Taking: the member being taken
    uint32_t outstanding; // parallel phases: member calls not answered yet
    edgelock_member members[EDGELOCK_MAX_MEMBERS];
    MemberRef refs[EDGELOCK_MAX_MEMBERS];
    bool held[EDGELOCK_MAX_MEMBERS];
    // MultiLock: the owner's hold was renewed by the watchdog before this
    // composite took the member (a re-entry): that renewal is not ours to end.
    bool renewed_before[EDGELOCK_MAX_MEMBERS];
    // A member's client is shutting down: nothing of it is touched again
    // (gone), and the call ends with SHUTDOWN once what it holds elsewhere
    // is given back.
    bool gone[EDGELOCK_MAX_MEMBERS];
    bool shutdown;
    bool pinned, settle_due; // on_client_closing: the end waits until its cancels are through
    edgelock_status status[EDGELOCK_MAX_MEMBERS];
    uint64_t owner;
    int64_t lease_ms, first_lease_ms;
    uint64_t deadline, round_start;
    edgelock_status result;
    int64_t value;
    edgelock_result_fn cb;
    void *user;
};

constexpr uint32_t kInUse = 0x45444743; // "EDGC"
static_assert(sizeof(State) <= sizeof(edgelock_composite), "edgelock_composite too small");

enum class Call : uint8_t { Acquire, Release, Extend };

void member_done(edgelock_client *, edgelock_lock, edgelock_status st, int64_t, void *user);

Client *client_of(const State *s, uint32_t i)
{
    return reinterpret_cast<Client *>(s->members[i].client);
}

edgelock_status start(State *s, uint32_t i, Call call, int64_t wait_ms, int64_t lease_ms)
{
    if (s->gone[i])
        return EDGELOCK_ERR_SHUTDOWN;
    Client *c = client_of(s, i);
    const edgelock_lock lk = s->members[i].lock;
    switch (call) {
    case Call::Acquire: {
        Hold *h = hold_find(c, lk.id, s->owner, nullptr);
        s->renewed_before[i] = h && hold_renewable(h);
        // A RedLock server that is unreachable counts as failed at once.
        return acquire_start(c, lk, s->owner, wait_ms, lease_ms, member_done, &s->refs[i],
                             s->mode == Mode::RedLock);
    }
    case Call::Release:
        return release_start(c, lk, s->owner, member_done, &s->refs[i], s->phase == Phase::Releasing);
    case Call::Extend: return extend_start(c, lk, s->owner, lease_ms, member_done, &s->refs[i]);
    }
    return EDGELOCK_ERR_INVALID_ARG;
}

void end_watchdog(State *s, uint32_t i);

// Start `call` on every member in mask (all when mask is null). A start that
// fails at once records its status and is not waited for. Returns how many
// answers are due.
uint32_t start_all(State *s, Phase phase, Call call, const bool *mask, int64_t wait_ms, int64_t lease_ms)
{
    s->phase = phase;
    s->outstanding = 0;
    for (uint32_t i = 0; i < s->n; i++) {
        if (mask && !mask[i])
            continue;
        s->outstanding++;
        s->status[i] = start(s, i, call, wait_ms, lease_ms);
        if (s->status[i] == EDGELOCK_OK)
            continue;
        s->outstanding--;
        if (phase == Phase::Releasing && !s->gone[i])
            give_back_not_queued(client_of(s, i), s->members[i].lock.id, s->owner, !s->renewed_before[i]);
    }
    return s->outstanding;
}

void unwatch_all(State *s)
{
    for (uint32_t i = 0; i < s->n; i++)
        client_watch_unlink(&s->refs[i].watch);
}

void finish(State *s)
{
    unwatch_all(s);
    if (s->shutdown) {
        s->result = EDGELOCK_ERR_SHUTDOWN;
        s->value = 0;
    }
    s->in_use = 0; // the caller may reuse the storage from inside its callback
    if (!s->gone[0]) {
        invoke_result(client_of(s, 0), s->cb, s->members[0].lock.id, s->result, s->value, s->user);
        return;
    }
    // Member 0's client is gone (being freed): its pointer is passed as a
    // value only. The call that brought us here holds its own client's
    // callback depth, so a destroy from the callback is deferred as usual.
    s->cb(s->members[0].client, s->members[0].lock, s->result, s->value, s->user);
}

void give_back(State *s, edgelock_status result, bool retry);

// After a member's client went, once no member call is outstanding: give
// back what is held on the clients that remain, then the end (SHUTDOWN).
void shutdown_settle(State *s)
{
    switch (s->phase) {
    case Phase::Taking:
    case Phase::Round:
    case Phase::Aligning: give_back(s, EDGELOCK_ERR_SHUTDOWN, false); break;
    case Phase::Releasing:
    case Phase::Unlocking: finish(s); break;
    }
}

// A member's client shuts down (client_shutdown, through the watch). Its
// members are let go of: what they hold is left to lapse in Redis, as every
// hold of a destroyed client. A wait on another member's client would keep
// the call going until its end: it is cancelled, and the call ends with
// SHUTDOWN once that answers (at once when it is not on the wire) and the
// rest is given back. Member calls on the closing client itself are failed
// by its shutdown right after this. While the cancels run the call cannot
// end (pinned): its callback may free the storage, which is then not ours
// to read; it ends, if due, as the last step here.
void on_client_closing(ClientWatch *w, Client *closing)
{
    State *s = reinterpret_cast<MemberRef *>(w)->state;
    s->shutdown = true;
    for (uint32_t i = 0; i < s->n; i++) {
        if (client_of(s, i) != closing)
            continue;
        s->gone[i] = true;
        s->held[i] = false;
        client_watch_unlink(&s->refs[i].watch);
    }
    s->pinned = true;
    for (uint32_t i = 0; i < s->n; i++)
        if (!s->gone[i])
            acquire_cancel_user(client_of(s, i), &s->refs[i]);
    s->pinned = false;
    if (s->settle_due) {
        s->settle_due = false;
        shutdown_settle(s);
    }
}

// A member answered after a member's client went: no further step, only the
// giving back, then the end.
void member_done_after_shutdown(State *s, uint32_t i, edgelock_status st)
{
    if (s->phase == Phase::Taking)
        s->held[i] = st == EDGELOCK_OK && !s->gone[i];
    else if (--s->outstanding > 0)
        return;
    if (s->phase == Phase::Round)
        for (uint32_t k = 0; k < s->n; k++)
            s->held[k] = s->status[k] == EDGELOCK_OK && !s->gone[k];
    if (s->pinned)
        s->settle_due = true;
    else
        shutdown_settle(s);
}

void redlock_round(State *s);

void after_release(State *s)
{
    if (s->retry_after_release && !s->shutdown)
        redlock_round(s);
    else
        finish(s);
}

// Give back every member held now; then finish with `result`, or, when
// `retry`, start another RedLock round.
void give_back(State *s, edgelock_status result, bool retry)
{
    s->result = result;
    s->retry_after_release = retry;
    bool mask[EDGELOCK_MAX_MEMBERS];
    memcpy(mask, s->held, sizeof(mask));
    memset(s->held, 0, sizeof(s->held));
    if (start_all(s, Phase::Releasing, Call::Release, mask, 0, 0) == 0)
        after_release(s);
}

void succeed(State *s, int64_t value)
{
    s->result = EDGELOCK_OK;
    s->value = value;
    finish(s);
}

// Aligning: a member this composite took under the watchdog (an endless
// wait) gets the fixed lease asked for; the watchdog lets go of it before
// the Extend is sent (hold_end_watchdog). If the Extend fails, the composite
// releases it anyway. Not a hold the owner had renewed before (a re-entry):
// that renewal is the owner's.
void end_watchdog(State *s, uint32_t i)
{
    if (!s->renewed_before[i])
        hold_end_watchdog(client_of(s, i), s->members[i].lock.id, s->owner);
}

// The set is complete with the leases it was taken with: a member taken
// early may have been lost meanwhile (its key deleted, renewals unconfirmed
// for a lease), which only the client's own account tells. All or nothing.
edgelock_status first_lost(const State *s)
{
    for (uint32_t i = 0; i < s->n; i++) {
        int64_t left = 0;
        edgelock_status st = hold_validity(client_of(s, i), s->members[i].lock.id, s->owner, &left);
        if (st != EDGELOCK_OK)
            return st;
    }
    return EDGELOCK_OK;
}

void take_next(State *s)
{
    edgelock_status st = start(s, s->next, Call::Acquire, composite_left(s->deadline), s->first_lease_ms);
    if (st != EDGELOCK_OK)
        give_back(s, st, false);
}

void redlock_round(State *s)
{
    s->round_start = edgelock_port_now_ms();
    int64_t per_node = redlock_node_wait(composite_left(s->deadline), s->n);
    if (start_all(s, Phase::Round, Call::Acquire, nullptr, per_node, s->lease_ms) == 0) {
        // Nothing could even start (tables full, a handle freed): that is
        // the answer, as for a first round, not the last round's verdict.
        s->result = s->status[0];
        s->value = 0;
        finish(s);
    }
}

void judge_round(State *s)
{
    for (uint32_t i = 0; i < s->n; i++) {
        s->held[i] = s->status[i] == EDGELOCK_OK;
        // A server taken early in the round and lost again before its end
        // (the watchdog found its key gone) counts for nothing toward the
        // majority; it is given back with the rest (held).
        int64_t left = 0;
        if (s->held[i])
            s->status[i] = hold_validity(client_of(s, i), s->members[i].lock.id, s->owner, &left);
    }
    int64_t lease = s->lease_ms == EDGELOCK_LEASE_WATCHDOG ? (int64_t)client_of(s, 0)->cfg.watchdog_lease_ms
                                                           : s->lease_ms;
    RedlockVerdict v =
        redlock_judge(s->status, s->n, lease, (int64_t)(edgelock_port_now_ms() - s->round_start),
                      composite_left(s->deadline));
    if (v.acquired)
        succeed(s, v.validity_ms);
    else
        give_back(s, v.why, v.retry);
}

edgelock_status first_error(const State *s, edgelock_status none)
{
    for (uint32_t i = 0; i < s->n; i++)
        if (s->status[i] != EDGELOCK_OK)
            return s->status[i];
    return none;
}

void member_done(edgelock_client *, edgelock_lock, edgelock_status st, int64_t, void *user)
{
    auto *ref = static_cast<MemberRef *>(user);
    State *s = ref->state;
    const uint32_t i = ref->index;
    s->status[i] = st;
    if (s->shutdown) {
        member_done_after_shutdown(s, i, st);
        return;
    }
    if (s->phase == Phase::Taking) {
        if (st != EDGELOCK_OK) {
            give_back(s, st, false);
            return;
        }
        s->held[i] = true;
        if (++s->next < s->n) {
            take_next(s);
        } else if (s->first_lease_ms != s->lease_ms) {
            if (s->first_lease_ms == EDGELOCK_LEASE_WATCHDOG)
                for (uint32_t k = 0; k < s->n; k++)
                    end_watchdog(s, k);
            if (start_all(s, Phase::Aligning, Call::Extend, nullptr, 0, s->lease_ms) == 0)
                give_back(s, first_error(s, EDGELOCK_ERR_INVALID_ARG), false);
        } else if (edgelock_status gone = first_lost(s); gone != EDGELOCK_OK) {
            give_back(s, gone, false);
        } else {
            succeed(s, 0);
        }
        return;
    }
    if (--s->outstanding > 0)
        return;
    switch (s->phase) {
    case Phase::Taking: break;
    case Phase::Aligning: {
        edgelock_status bad = first_error(s, EDGELOCK_OK);
        if (bad == EDGELOCK_OK)
            succeed(s, 0);
        else
            give_back(s, bad, false);
        break;
    }
    case Phase::Round: judge_round(s); break;
    case Phase::Releasing: after_release(s); break;
    case Phase::Unlocking:
        s->result = s->mode == Mode::MultiUnlock ? multi_unlock_result(s->status, s->n)
                                                 : redlock_unlock_result(s->status, s->n);
        finish(s);
        break;
    }
}

edgelock_status begin(edgelock_composite *storage, Mode mode, const edgelock_member *m, size_t n,
                      uint64_t owner, int64_t wait_ms, int64_t lease_ms, edgelock_result_fn cb, void *user,
                      State **out)
{
    if (!storage || !cb ||
        !composite_valid_members(
            m, n, mode == Mode::RedLock || mode == Mode::RedUnlock ? client_one_server : nullptr))
        return EDGELOCK_ERR_INVALID_ARG;
    bool locking = mode == Mode::MultiLock || mode == Mode::RedLock;
    if (locking && !composite_valid_times(wait_ms, lease_ms))
        return EDGELOCK_ERR_INVALID_ARG;
    for (size_t i = 0; i < n; i++) {
        Client *c = reinterpret_cast<Client *>(m[i].client);
        if (!on_loop_thread(c))
            return EDGELOCK_ERR_WRONG_THREAD;
        if (c->closing)
            return EDGELOCK_ERR_SHUTDOWN;
        LockEntry *le = lock_get(c, m[i].lock.id);
        if (!le && !locking)
            continue; // an unlock tries every member, as the blocking one: this one's STALE_HANDLE is its own
        if (!le)
            return EDGELOCK_ERR_STALE_HANDLE;
        if (!kind_serves((edgelock_lock_kind)le->kind, KindClass::Lock))
            return EDGELOCK_ERR_INVALID_ARG; // a semaphore or latch is no member
    }
    auto *s = reinterpret_cast<State *>(storage);
    if (s->in_use == kInUse)
        return EDGELOCK_ERR_BUSY; // the storage of a composite still running
    memset(s, 0, sizeof(*s));
    s->in_use = kInUse;
    s->mode = mode;
    s->n = (uint32_t)n;
    memcpy(s->members, m, n * sizeof(*m));
    for (uint32_t i = 0; i < n; i++) {
        s->refs[i].state = s;
        s->refs[i].index = i;
        s->refs[i].watch.closing = on_client_closing;
        client_watch_link(client_of(s, i), &s->refs[i].watch);
    }
    s->owner = owner;
    s->lease_ms = lease_ms;
    s->first_lease_ms = mode == Mode::MultiLock ? multi_first_lease(lease_ms, wait_ms) : lease_ms;
    s->deadline = composite_deadline(wait_ms);
    s->cb = cb;
    s->user = user;
    *out = s;
    return EDGELOCK_OK;
}

// The first step of a composite: when nothing at all could start, the call
// returns that status and no callback will fire.
edgelock_status launch(State *s, uint32_t started, edgelock_status first)
{
    if (started > 0)
        return EDGELOCK_OK;
    unwatch_all(s);
    s->in_use = 0;
    return first;
}

} // namespace

edgelock_status multi_lock_async(edgelock_composite *st, const edgelock_member *m, size_t n, uint64_t owner,
                                 int64_t wait_ms, int64_t lease_ms, edgelock_result_fn cb, void *user)
{
    State *s;
    edgelock_status r = begin(st, Mode::MultiLock, m, n, owner, wait_ms, lease_ms, cb, user, &s);
    if (r != EDGELOCK_OK)
        return r;
    s->phase = Phase::Taking;
    r = start(s, 0, Call::Acquire, composite_left(s->deadline), s->first_lease_ms);
    return launch(s, r == EDGELOCK_OK ? 1 : 0, r);
}

edgelock_status redlock_lock_async(edgelock_composite *st, const edgelock_member *m, size_t n, uint64_t owner,
                                   int64_t wait_ms, int64_t lease_ms, edgelock_result_fn cb, void *user)
{
    State *s;
    edgelock_status r = begin(st, Mode::RedLock, m, n, owner, wait_ms, lease_ms, cb, user, &s);
    if (r != EDGELOCK_OK)
        return r;
    s->round_start = edgelock_port_now_ms();
    int64_t per_node = redlock_node_wait(composite_left(s->deadline), s->n);
    uint32_t started = start_all(s, Phase::Round, Call::Acquire, nullptr, per_node, s->lease_ms);
    return launch(s, started, s->status[0]);
}

static edgelock_status unlock_async(Mode mode, edgelock_composite *st, const edgelock_member *m, size_t n,
                                    uint64_t owner, edgelock_result_fn cb, void *user)
{
    State *s;
    edgelock_status r = begin(st, mode, m, n, owner, 0, 0, cb, user, &s);
    if (r != EDGELOCK_OK)
        return r;
    uint32_t started = start_all(s, Phase::Unlocking, Call::Release, nullptr, 0, 0);
    return launch(s, started, s->status[0]);
}

edgelock_status multi_unlock_async(edgelock_composite *st, const edgelock_member *m, size_t n, uint64_t owner,
                                   edgelock_result_fn cb, void *user)
{
    return unlock_async(Mode::MultiUnlock, st, m, n, owner, cb, user);
}

edgelock_status redlock_unlock_async(edgelock_composite *st, const edgelock_member *m, size_t n,
                                     uint64_t owner, edgelock_result_fn cb, void *user)
{
    return unlock_async(Mode::RedUnlock, st, m, n, owner, cb, user);
}

} // namespace edgelock
