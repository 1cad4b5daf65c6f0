// SPDX-License-Identifier: BSD-3-Clause
// What a blocking request (BlockingRequest, blocking.hpp) does on the engine:
// the local calls it runs at once, and the engine call it starts for any
// other. Who runs it, and on which thread, is the face's (blocking.cpp).
#include <string.h>

#include "api/blocking.hpp"
#include "locks/acquire.hpp"
#include "locks/giveback.hpp"
#include "locks/holds.hpp"
#include "locks/permits.hpp"
#include "locks/queries.hpp"
#include "locks/release.hpp"
#include "locks/scan.hpp"

namespace edgelock
{

edgelock_status stats(Client *c, edgelock_stats *out)
{
    if (!out)
        return EDGELOCK_ERR_INVALID_ARG;
    memset(out, 0, sizeof(*out));
    out->locks = c->locks.used();
    out->holds = c->holds.used();
    out->waiters = c->waiters.used();
    out->subscriptions = c->pubsub.subs.used();
    out->commands = c->queue.cmds.used();
    out->connected = client_connected(c) ? 1u : 0u;
    out->reconnects = c->reconnects;
    out->renew_calls = c->watchdog.renew_calls;
    out->table_bytes = c->table_bytes;
    auto fill = [out](edgelock_table t, const auto &table) {
        out->tables[t] = {table.used(), table.capacity(), table.high_water(), table.full_count()};
    };
    fill(EDGELOCK_TABLE_LOCKS, c->locks);
    fill(EDGELOCK_TABLE_HOLDS, c->holds);
    fill(EDGELOCK_TABLE_WAITERS, c->waiters);
    fill(EDGELOCK_TABLE_SUBSCRIPTIONS, c->pubsub.subs);
    fill(EDGELOCK_TABLE_COMMANDS, c->queue.cmds);
    return EDGELOCK_OK;
}

bool request_is_local(ReqOp op)
{
    return op == ReqOp::LockNew || op == ReqOp::LockFree || op == ReqOp::Stats || op == ReqOp::Valid ||
           op == ReqOp::Server || op == ReqOp::Cancel || op == ReqOp::PermitId;
}

void run_local(Client *c, BlockingRequest *r)
{
    switch (r->op) {
    case ReqOp::LockNew: r->status = lock_new(c, r->kind, r->name, r->name_len, r->lock_out); break;
    case ReqOp::LockFree: r->status = lock_free(c, r->lock); break;
    case ReqOp::Stats: r->status = stats(c, r->stats_out); break;
    case ReqOp::Valid: r->status = hold_validity(c, r->lock.id, r->owner, r->remaining_out); break;
    case ReqOp::Server: r->status = hold_server(c, r->lock.id, r->owner, r->server_out); break;
    case ReqOp::PermitId: r->status = permit_id_hex(c, r->lock, r->owner, r->permits, r->hex_out); break;
    case ReqOp::Cancel:
        acquire_cancel(c, r->owner);
        r->status = EDGELOCK_OK;
        break;
    default: EDGELOCK_ASSERT(false);
    }
}

edgelock_status request_start(Client *c, BlockingRequest *r, edgelock_result_fn done)
{
    edgelock_status st;
    LockEntry *le = lock_get(c, r->lock.id);
    if (r->locks_only && le && !kind_serves((edgelock_lock_kind)le->kind, KindClass::Lock))
        return EDGELOCK_ERR_INVALID_ARG;
    switch (r->op) {
    case ReqOp::Acquire:
        if (r->locks_only) {
            Hold *h = hold_find(c, r->lock.id, r->owner, nullptr);
            r->renewed_before = h && hold_renewable(h); // a re-entry: that renewal is not the call's
        }
        st = acquire_start(c, r->lock, r->owner, r->wait_ms, r->lease_ms, done, r,
                           r->give_up_on_connection_error, r->permits ? r->permits : 1);
        break;
    case ReqOp::LatchAwait:
        st = acquire_start(c, r->lock, r->owner, r->wait_ms, EDGELOCK_LEASE_WATCHDOG, done, r, false, 0);
        break;
    case ReqOp::Semaphore:
        st = semaphore_call_start(c, r->sem_op, r->lock, r->count, r->permit_hex, r->sem_info, done, r);
        break;
    case ReqOp::Release:
        st = release_start(c, r->lock, r->owner, done, r, r->give_back);
        if (st != EDGELOCK_OK && r->give_back)
            give_back_not_queued(c, r->lock.id, r->owner, r->end_watchdog);
        break;
    case ReqOp::ForceRelease: st = query_start(c, LockOp::ForceRelease, r->lock, 0, done, r); break;
    case ReqOp::Exists: st = query_start(c, LockOp::Exists, r->lock, 0, done, r); break;
    case ReqOp::HoldCount: st = query_start(c, LockOp::HoldCount, r->lock, r->owner, done, r); break;
    case ReqOp::Ttl: st = query_start(c, LockOp::Ttl, r->lock, 0, done, r); break;
    case ReqOp::Extend:
        if (r->end_watchdog)
            hold_end_watchdog(c, r->lock.id, r->owner);
        st = extend_start(c, r->lock, r->owner, r->lease_ms, done, r);
        break;
    case ReqOp::Info: st = info_start(c, r->lock, r->info, done, r); break;
    case ReqOp::Scan: st = scan_start(c, r->scan, done, r); break;
    default: st = EDGELOCK_ERR_INVALID_ARG; break;
    }
    return st;
}

} // namespace edgelock
