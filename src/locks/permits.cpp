// SPDX-License-Identifier: BSD-3-Clause
// Semaphores and the countdown latch (permits.hpp). The wire format is
// docs/SEMAPHORES.md; the scripts are src/redisson/scripts/semaphore_*,
// permit_* and latch_*.
#include "locks/permits.hpp"

#include <hiredis/hiredis.h>
#include <string.h>

#include "base/log.hpp"
#include "locks/callbacks.hpp"
#include "locks/calls.hpp"
#include "locks/client.hpp"
#include "locks/handles.hpp"
#include "locks/acquire.hpp"
#include "locks/waiter_channels.hpp"
#include "locks/holds.hpp"
#include "redisson/names.hpp"
#include "redis/reply.hpp"

namespace edgelock
{

// When Redis names a permit deadline we cannot read, look again after this
// long rather than wait for a message that expiry never sends.
static constexpr int64_t kUnreadableDeadlineRetryMs = 1000;

TakeAnswer read_take_reply(edgelock_lock_kind kind, const redisReply *r, int64_t wall_now_ms, int64_t *ttl)
{
    *ttl = -1;
    int64_t v = 0;
    switch (kind) {
    case EDGELOCK_SEMAPHORE:
        if (r->type != REDIS_REPLY_INTEGER || (r->integer != 0 && r->integer != 1))
            return TakeAnswer::Malformed;
        return r->integer == 1 ? TakeAnswer::Taken : TakeAnswer::NotYet;
    case EDGELOCK_PERMIT_SEMAPHORE:
        if (r->type == REDIS_REPLY_NIL)
            return TakeAnswer::NotYet;
        if (reply_text_is(r, "OK"))
            return TakeAnswer::Taken;
        if (!reply_is_text(r) || r->len < 2 || r->str[0] != ':')
            return TakeAnswer::Malformed;
        // ":<deadline>": the earliest permit to expire. Expiry publishes
        // nothing, so retry then (its reclaim step frees it and tells the
        // other waiters).
        if (!parse_decimal(r->str + 1, r->len - 1, &v))
            *ttl = kUnreadableDeadlineRetryMs;
        else
            *ttl = v > wall_now_ms ? v - wall_now_ms : 0;
        return TakeAnswer::NotYet;
    case EDGELOCK_LATCH:
        if (!reply_integer(r, &v))
            return TakeAnswer::Malformed;
        return v <= 0 ? TakeAnswer::Taken : TakeAnswer::NotYet;
    default: return TakeAnswer::Malformed;
    }
}

void permit_new_base(Client *c, uint8_t out[16])
{
    memcpy(out, c->latch_prefix, sizeof(c->latch_prefix));
    uint64_t n = ++c->latch_counter;
    for (int i = 0; i < 6; i++)
        out[8 + i] = (uint8_t)(n >> (40 - 8 * i));
    out[14] = out[15] = 0; // permit_id() puts the permit's number here
}

static void give_back_done(Client *c, const LockCall *call, uint64_t, uint64_t, redisReply *reply,
                           edgelock_status st);

// An undo goes out whatever the queue holds (patient) and needs no caller.
static void start_undo(Client *c, const LockCall &call)
{
    uint64_t id;
    if (!lock_get(c, call.lock_id) || !call_new(c, call, &id)) {
        log_to(c->loop.log, EDGELOCK_LOG_WARN, "cannot give back %u permit(s) of a take not to be kept (%s)",
               (unsigned)call.permits, lock_get(c, call.lock_id) ? "no command slot" : "handle freed");
        return;
    }
    queue_set_patient(&c->queue, id);
    call_submit(c, id);
}

static LockCall undo_call(uint64_t lock_id, uint32_t n)
{
    LockCall call(LockOp::Release, lock_id, give_back_done);
    call.permits = (uint16_t)n;
    call.cleanup = true;
    call.unpin_when_sent = true;
    return call;
}

void permits_undo(Client *c, uint64_t lock_id, const uint8_t *base, uint32_t n)
{
    LockCall call = undo_call(lock_id, n);
    memcpy(call.request_id, base, sizeof(call.request_id));
    start_undo(c, call);
}

void semaphore_undo(Client *c, uint64_t lock_id, uint32_t n)
{
    start_undo(c, undo_call(lock_id, n));
}

static void give_back_done(Client *c, const LockCall *call, uint64_t, uint64_t, redisReply *reply,
                           edgelock_status st)
{
    bool expirable = lock_get(c, call->lock_id) && lock_kind(c, call->lock_id) == EDGELOCK_PERMIT_SEMAPHORE;
    if (call->cleanup) {
        // An expirable undo names its ids: repeating it cannot give back
        // twice. A plain one is never repeated.
        bool uncertain = st == EDGELOCK_ERR_CONNECTION || st == EDGELOCK_ERR_TIMEOUT;
        if (uncertain && expirable && !c->closing)
            start_undo(c, *call);
        return;
    }
    int64_t value = 0;
    uint32_t hi = kNoIndex;
    Hold *h = hold_find(c, call->lock_id, call->owner, &hi);
    int64_t n = 0;
    if (st == EDGELOCK_OK && !reply_integer(reply, &n)) {
        st = EDGELOCK_ERR_PROTOCOL;
    } else if (st == EDGELOCK_OK && expirable) {
        // The script gives back all or none; none means they are gone.
        if (n > 0)
            value = 1;
        else
            st = call->was_held ? EDGELOCK_ERR_LOST : EDGELOCK_ERR_NOT_OWNER;
    } else if (st == EDGELOCK_OK) {
        value = h && h->count > 0 ? 0 : 1;
    } else if (st == EDGELOCK_ERR_REDIS) {
        log_to(c->loop.log, EDGELOCK_LOG_WARN, "permit release refused: %s", reply ? reply->str : "");
    }
    if (h)
        hold_unpin(c, hi);
    invoke_result(c, call->cb, call->lock_id, st, value, call->user);
}

edgelock_status semaphore_release_start(Client *c, edgelock_lock lock, uint64_t owner, edgelock_result_fn cb,
                                        void *user)
{
    uint32_t hi;
    Hold *h = hold_find(c, lock.id, owner, &hi);
    if (!h || h->count == 0)
        return EDGELOCK_ERR_NOT_OWNER; // a give-back without a take would grow the semaphore
    bool expirable = lock_kind(c, lock.id) == EDGELOCK_PERMIT_SEMAPHORE;
    if (expirable && h->pending > 0)
        return EDGELOCK_ERR_BUSY;
    LockCall call(LockOp::Release, lock.id, give_back_done);
    call.owner = owner;
    call.cb = cb;
    call.user = user;
    call.permits = (uint16_t)(expirable ? h->count : 1);
    call.was_held = hold_active(h, loop_now(&c->loop));
    memcpy(call.request_id, h->permit_base, sizeof(call.request_id));
    // Counted as given back from now: a second unlock is NOT_OWNER, never a
    // second give-back, and the watchdog stops renewing them. If the answer
    // never comes they were given back, or lapse with their lease.
    h->count -= call.permits;
    h->pending++;
    if (call_start(c, call))
        return EDGELOCK_OK;
    h->count += call.permits;
    hold_unpin(c, hi);
    return EDGELOCK_ERR_TABLE_FULL;
}

static void semaphore_call_done(Client *c, const LockCall *call, uint64_t, uint64_t, redisReply *reply,
                                edgelock_status st)
{
    int64_t value = 0;
    if (st == EDGELOCK_OK && call->op == LockOp::SemaphoreInfo) {
        int64_t v[3];
        bool ok = reply->type == REDIS_REPLY_ARRAY && reply->elements == 3;
        for (size_t i = 0; ok && i < 3; i++)
            ok = reply->element[i]->type == REDIS_REPLY_INTEGER && reply_integer(reply->element[i], &v[i]);
        if (ok) {
            call->sem_info->available = v[0];
            call->sem_info->acquired = v[1];
            call->sem_info->subscribers = v[2];
            value = v[0];
        } else {
            st = EDGELOCK_ERR_PROTOCOL;
        }
    } else if (st == EDGELOCK_OK && !reply_integer(reply, &value)) {
        st = EDGELOCK_ERR_PROTOCOL;
    } else if (st == EDGELOCK_OK && call->op == LockOp::ReleasePermit && value != 1) {
        st = EDGELOCK_ERR_NOT_OWNER; // absent, released already, or expired
        value = 0;
    } else if (st == EDGELOCK_ERR_REDIS) {
        log_to(c->loop.log, EDGELOCK_LOG_WARN, "semaphore call refused: %s", reply ? reply->str : "");
    }
    invoke_result(c, call->cb, call->lock_id, st, value, call->user);
}

static bool hex_digit(char ch, uint8_t *out)
{
    if (ch >= '0' && ch <= '9')
        *out = (uint8_t)(ch - '0');
    else if (ch >= 'a' && ch <= 'f')
        *out = (uint8_t)(ch - 'a' + 10);
    else if (ch >= 'A' && ch <= 'F')
        *out = (uint8_t)(ch - 'A' + 10);
    else
        return false;
    return true;
}

// 32 hex digits, as Redisson prints a permit id, into its 16 bytes.
static bool parse_permit_hex(const char *hex, uint8_t out[16])
{
    if (!hex || strlen(hex) != 32)
        return false;
    for (int i = 0; i < 16; i++) {
        uint8_t hi, lo;
        if (!hex_digit(hex[2 * i], &hi) || !hex_digit(hex[2 * i + 1], &lo))
            return false;
        out[i] = (uint8_t)(hi << 4 | lo);
    }
    return true;
}

edgelock_status semaphore_call_start(Client *c, LockOp op, edgelock_lock lock, int64_t count,
                                     const char *permit_hex, edgelock_semaphore_info *info,
                                     edgelock_result_fn cb, void *user)
{
    KindClass cls = KindClass::Semaphore;
    bool count_ok = true;
    switch (op) {
    case LockOp::SetPermits: count_ok = count >= 0 && count <= EDGELOCK_MAX_TIME_MS; break;
    case LockOp::AddPermits:
        count_ok = count >= -EDGELOCK_MAX_TIME_MS && count <= EDGELOCK_MAX_TIME_MS;
        break;
    case LockOp::SemaphoreInfo: count_ok = info != nullptr; break;
    case LockOp::ReleasePermit: cls = KindClass::Expirable; break;
    case LockOp::LatchSetCount:
        cls = KindClass::Latch;
        count_ok = count >= 1 && count <= EDGELOCK_MAX_TIME_MS;
        break;
    case LockOp::LatchCountDown:
    case LockOp::LatchCount: cls = KindClass::Latch; break;
    default: return EDGELOCK_ERR_INVALID_ARG;
    }
    if (!count_ok)
        return EDGELOCK_ERR_INVALID_ARG;
    edgelock_status st = lock_check_call(c, lock, cb, cls);
    if (st != EDGELOCK_OK)
        return st;
    LockCall call(op, lock.id, semaphore_call_done);
    if (op == LockOp::ReleasePermit && !parse_permit_hex(permit_hex, call.request_id))
        return EDGELOCK_ERR_INVALID_ARG;
    call.lease_ms = count;
    call.sem_info = info;
    call.cb = cb;
    call.user = user;
    return call_start(c, call) ? EDGELOCK_OK : EDGELOCK_ERR_TABLE_FULL;
}

edgelock_status permit_id_hex(Client *c, edgelock_lock lock, uint64_t owner, uint32_t k, char out[33])
{
    static const char hex[] = "0123456789abcdef";
    if (!out)
        return EDGELOCK_ERR_INVALID_ARG;
    out[0] = 0;
    LockEntry *le = lock_get(c, lock.id);
    if (!le)
        return EDGELOCK_ERR_STALE_HANDLE;
    if (le->kind != EDGELOCK_PERMIT_SEMAPHORE)
        return EDGELOCK_ERR_INVALID_ARG;
    Hold *h = hold_find(c, lock.id, owner, nullptr);
    if (h && h->lost)
        return EDGELOCK_ERR_LOST;
    if (!h || k >= h->count)
        return EDGELOCK_ERR_NOT_OWNER;
    uint8_t id[16];
    permit_id(h->permit_base, k, id);
    for (int i = 0; i < 16; i++) {
        out[2 * i] = hex[id[i] >> 4];
        out[2 * i + 1] = hex[id[i] & 15];
    }
    out[32] = 0;
    return EDGELOCK_OK;
}

// What a lock call may ask of each kind: permits (0 for a latch's await),
// leases, and for expirable permits one group per owner and handle.
edgelock_status permits_check_take(Client *c, const LockEntry *le, uint64_t lock_id, uint64_t owner,
                                   uint32_t permits, int64_t lease_ms)
{
    switch ((edgelock_lock_kind)le->kind) {
    case EDGELOCK_LATCH: return permits == 0 ? EDGELOCK_OK : EDGELOCK_ERR_INVALID_ARG;
    case EDGELOCK_SEMAPHORE:
        if (permits == 0 || permits > kMaxPermitsPerCall || lease_ms != EDGELOCK_LEASE_WATCHDOG)
            return EDGELOCK_ERR_INVALID_ARG;
        return EDGELOCK_OK;
    case EDGELOCK_PERMIT_SEMAPHORE: {
        if (permits == 0 || permits > kMaxPermitsPerCall)
            return EDGELOCK_ERR_INVALID_ARG;
        // One take at a time per owner (its permits share one id base), but
        // permits whose lease ran out, or that the watchdog found lost (the
        // loss marker), are not a take: the next take supersedes them
        // (hold_reserve), as a lock call does a lock's.
        Hold *h = hold_find(c, lock_id, owner, nullptr);
        bool taken = h && (h->count > 0 || h->pending > 0) && !(h->lost && h->pending == 0) &&
                     !hold_lapsed(c, h, loop_now(&c->loop));
        return taken ? EDGELOCK_ERR_BUSY : EDGELOCK_OK;
    }
    default: return permits == 1 ? EDGELOCK_OK : EDGELOCK_ERR_INVALID_ARG;
    }
}

// A semaphore's message says how many permits became free (Redisson: wake
// that many of the waiters); a latch's "0" opens every waiter, its "1" (a count
// was set) none.
void permits_on_message(Client *c, uint32_t sub_index, edgelock_lock_kind kind, const char *msg, size_t len)
{
    int64_t freed = 0;
    if (kind == EDGELOCK_LATCH) {
        if (len == 1 && msg[0] == kLatchOpenMessage[0])
            channel_wake_all(c, sub_index);
        return;
    }
    if (!parse_decimal(msg, len, &freed) || freed <= 0)
        return;
    int64_t listening = 0;
    for (uint32_t i = c->channel_waiters[sub_index]; i != kNoIndex; i = c->waiters.get(i)->next_on_channel)
        listening++;
    if (freed >= listening) { // enough for everyone (a large set or add): one pass
        channel_wake_all(c, sub_index);
        return;
    }
    // Oldest first: idle waiters try now, one with an attempt in flight
    // tries again when it answers; each at most once per message.
    uint64_t after = 0; // arrival order of the last one woken
    for (int64_t k = 0; k < freed; k++) {
        uint32_t best = kNoIndex; // a fresh walk each time: a wake may end waiters at once
        for (uint32_t i = c->channel_waiters[sub_index]; i != kNoIndex;
             i = c->waiters.get(i)->next_on_channel) {
            Waiter *w = c->waiters.get(i);
            if (w->seq <= after || w->wake_pending)
                continue;
            if (best == kNoIndex || w->seq < c->waiters.get(best)->seq)
                best = i;
        }
        if (best == kNoIndex)
            return;
        after = c->waiters.get(best)->seq;
        acquire_wake(c, best);
    }
}

} // namespace edgelock
