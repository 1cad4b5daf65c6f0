// SPDX-License-Identifier: BSD-3-Clause
// How each command is spelled on the wire, per lock kind: which script, which
// KEYS and ARGV (REDISSON-PROTOCOL.md; each script's header comment has the
// same list). Formatted at send time into the client's one command buffer.
#include "redisson/format.hpp"

#include <string.h>

#include "port.h"
#include "base/resp.hpp"
#include "redisson/names.hpp"

namespace edgelock
{

namespace
{

void key(RespCommand &rc, const LockRef &l)
{
    rc.arg(l.name, l.len);
}

void prefixed(RespCommand &rc, const LockRef &l, const char *prefix)
{
    write_prefix_name(rc.begin_arg(), prefix, l.name, l.len);
    rc.end_arg();
}

bool is_rw(const LockRef &l)
{
    return l.kind == EDGELOCK_READ || l.kind == EDGELOCK_WRITE;
}

// The channel a release publishes on (and, but for fair locks, waiters listen to).
void channel(RespCommand &rc, const LockRef &l)
{
    prefixed(rc, l, is_rw(l) ? kRwChannelPrefix : kLockChannelPrefix);
}

void write_owner_field(Writer &w, const ClientProtocol &p, const LockRef &l, uint64_t owner)
{
    write_owner(w, p.client_id, owner);
    if (l.kind == EDGELOCK_WRITE)
        w.str(kWriteSuffix);
}

void owner_arg(RespCommand &rc, const ClientProtocol &p, const LockRef &l, uint64_t owner)
{
    write_owner_field(rc.begin_arg(), p, l, owner);
    rc.end_arg();
}

// A writer's field is "<owner field>:write" whatever the handle's kind.
void writer_arg(RespCommand &rc, const ClientProtocol &p, uint64_t owner)
{
    Writer &w = rc.begin_arg();
    write_owner(w, p.client_id, owner);
    w.str(kWriteSuffix);
    rc.end_arg();
}

// suffix_name(name, owner field) + ":rwlock_timeout": prefix of a reader's
// per-hold timeout keys.
void timeout_prefix(RespCommand &rc, const ClientProtocol &p, const LockRef &l, uint64_t owner)
{
    char field[kMaxOwnerLen + 8];
    Writer f(field, sizeof(field));
    write_owner(f, p.client_id, owner);
    Writer &w = rc.begin_arg();
    write_suffix_name(w, l.name, l.len, field, f.len);
    w.str(":rwlock_timeout");
    rc.end_arg();
}

// Prefix of every holder's timeout keys: "{name}" (or "name" with a brace), to
// which the read-release script appends ":<owner field>:rwlock_timeout".
void key_prefix(RespCommand &rc, const LockRef &l)
{
    Writer &w = rc.begin_arg();
    write_suffix_name(w, l.name, l.len, "", 0);
    if (w.len > 0)
        w.len--; // drop the ':' suffix_name added before the empty suffix
    rc.end_arg();
}

void latch(RespCommand &rc, const LockRef &l, const LockOpArgs &a)
{
    static const char hex[] = "0123456789abcdef";
    Writer &w = rc.begin_arg();
    write_prefix_name(w, kUnlockLatchPrefix, l.name, l.len);
    char id[33];
    for (int i = 0; i < 16; i++) {
        id[2 * i] = hex[a.request_id[i] >> 4];
        id[2 * i + 1] = hex[a.request_id[i] & 15];
    }
    w.bytes(":", 1);
    w.bytes(id, 32);
    rc.end_arg();
}

bool is_semaphore(const LockRef &l)
{
    return l.kind == EDGELOCK_SEMAPHORE || l.kind == EDGELOCK_PERMIT_SEMAPHORE;
}

void semaphore_channel(RespCommand &rc, const LockRef &l)
{
    prefixed(rc, l, kSemaphoreChannelPrefix);
}

void latch_channel(RespCommand &rc, const LockRef &l)
{
    write_latch_channel(rc.begin_arg(), l.name, l.len);
    rc.end_arg();
}

// suffix_name(name, "timeout"): the expirable permits' zset.
void permit_zset(RespCommand &rc, const LockRef &l)
{
    write_suffix_name(rc.begin_arg(), l.name, l.len, kPermitTimeoutSuffix, strlen(kPermitTimeoutSuffix));
    rc.end_arg();
}

// The raw ids of the permits a call takes or gives back.
void permit_ids(RespCommand &rc, const uint8_t *base, uint32_t n)
{
    for (uint32_t k = 0; k < n; k++) {
        uint8_t id[16];
        permit_id(base, k, id);
        rc.arg(reinterpret_cast<const char *>(id), sizeof(id));
    }
}

// A permit's deadline: ms since the epoch by our clock, as Redisson's
// acquirer computes it, or the no-expiry sentinel.
int64_t permit_deadline(int64_t lease_ms)
{
    return lease_ms > 0 ? edgelock_port_wall_ms() + lease_ms : kPermitNoExpiry;
}

void script(RespCommand &rc, const LockOpArgs &a, ScriptId id, uint32_t nkeys)
{
    const Script &s = kScripts[id];
    if (a.eval) {
        rc.arg("EVAL");
        rc.arg(s.text, s.len);
    } else {
        rc.arg("EVALSHA");
        rc.arg(s.sha1, 40);
    }
    rc.arg_u64(nkeys);
}

void acquire(RespCommand &rc, const ClientProtocol &p, const LockOpArgs &a, const LockRef &l)
{
    switch (l.kind) {
    case EDGELOCK_REENTRANT:
        script(rc, a, kScriptAcquire, 1);
        key(rc, l);
        rc.arg_i64(a.lease_ms);
        owner_arg(rc, p, l, a.owner);
        break;
    case EDGELOCK_FENCED:
        script(rc, a, kScriptFencedAcquire, 2);
        key(rc, l);
        prefixed(rc, l, kLockTokenPrefix);
        rc.arg_i64(a.lease_ms);
        owner_arg(rc, p, l, a.owner);
        break;
    case EDGELOCK_FAIR:
        script(rc, a, kScriptFairAcquire, 3);
        key(rc, l);
        prefixed(rc, l, kLockQueuePrefix);
        prefixed(rc, l, kLockTimeoutPrefix);
        rc.arg_i64(a.lease_ms);
        owner_arg(rc, p, l, a.owner);
        rc.arg_u64(a.fair_window_ms);
        rc.arg_i64(edgelock_port_wall_ms());
        break;
    case EDGELOCK_READ:
        script(rc, a, kScriptReadAcquire, 2);
        key(rc, l);
        timeout_prefix(rc, p, l, a.owner);
        rc.arg_i64(a.lease_ms);
        owner_arg(rc, p, l, a.owner);
        writer_arg(rc, p, a.owner);
        break;
    case EDGELOCK_WRITE:
        script(rc, a, kScriptWriteAcquire, 1);
        key(rc, l);
        rc.arg_i64(a.lease_ms);
        owner_arg(rc, p, l, a.owner);
        break;
    case EDGELOCK_SEMAPHORE:
        script(rc, a, kScriptSemaphoreAcquire, 1);
        key(rc, l);
        rc.arg_u64(a.permits);
        break;
    case EDGELOCK_PERMIT_SEMAPHORE:
        script(rc, a, kScriptPermitAcquire, 3);
        key(rc, l);
        permit_zset(rc, l);
        semaphore_channel(rc, l);
        rc.arg_u64(a.permits);
        rc.arg_i64(permit_deadline(a.lease_ms));
        rc.arg_i64(edgelock_port_wall_ms());
        rc.arg_i64(kPermitNoExpiry);
        rc.arg(p.publish);
        permit_ids(rc, a.request_id, a.permits);
        break;
    case EDGELOCK_LATCH: // await: its count
        rc.arg("GET");
        key(rc, l);
        break;
    }
}

void release(RespCommand &rc, const ClientProtocol &p, const LockOpArgs &a, const LockRef &l)
{
    switch (l.kind) {
    case EDGELOCK_REENTRANT:
    case EDGELOCK_FENCED:
        script(rc, a, kScriptRelease, 3);
        key(rc, l);
        channel(rc, l);
        latch(rc, l, a);
        rc.arg("0");
        rc.arg_i64(a.lease_ms);
        owner_arg(rc, p, l, a.owner);
        rc.arg(p.publish);
        rc.arg_u64(p.unlock_latch_ttl_ms);
        break;
    case EDGELOCK_FAIR:
        script(rc, a, kScriptFairRelease, 5);
        key(rc, l);
        prefixed(rc, l, kLockQueuePrefix);
        prefixed(rc, l, kLockTimeoutPrefix);
        channel(rc, l);
        latch(rc, l, a);
        rc.arg("0");
        rc.arg_i64(a.lease_ms);
        owner_arg(rc, p, l, a.owner);
        rc.arg_i64(edgelock_port_wall_ms());
        rc.arg(p.publish);
        rc.arg_u64(p.unlock_latch_ttl_ms);
        break;
    case EDGELOCK_READ:
        script(rc, a, kScriptReadRelease, 5);
        key(rc, l);
        channel(rc, l);
        timeout_prefix(rc, p, l, a.owner);
        key_prefix(rc, l);
        latch(rc, l, a);
        rc.arg("0");
        owner_arg(rc, p, l, a.owner);
        rc.arg(p.publish);
        rc.arg_u64(p.unlock_latch_ttl_ms);
        break;
    case EDGELOCK_WRITE:
        script(rc, a, kScriptWriteRelease, 3);
        key(rc, l);
        channel(rc, l);
        latch(rc, l, a);
        rc.arg("1"); // a writer's release wakes every waiter: readers may share
        rc.arg_i64(a.lease_ms);
        owner_arg(rc, p, l, a.owner);
        rc.arg(p.publish);
        rc.arg_u64(p.unlock_latch_ttl_ms);
        break;
    case EDGELOCK_SEMAPHORE:
        script(rc, a, kScriptSemaphoreRelease, 2);
        key(rc, l);
        semaphore_channel(rc, l);
        rc.arg_u64(a.permits);
        rc.arg(p.publish);
        break;
    case EDGELOCK_PERMIT_SEMAPHORE:
        script(rc, a, kScriptPermitRelease, 3);
        key(rc, l);
        semaphore_channel(rc, l);
        permit_zset(rc, l);
        rc.arg_u64(a.permits);
        rc.arg_i64(edgelock_port_wall_ms());
        rc.arg(p.publish);
        permit_ids(rc, a.request_id, a.permits);
        break;
    case EDGELOCK_LATCH: break; // nothing to release (the API refuses it)
    }
}

// The semaphores' and the latch's own operations.
void semaphore_op(RespCommand &rc, const ClientProtocol &p, const LockOpArgs &a, const LockRef &l)
{
    bool expirable = l.kind == EDGELOCK_PERMIT_SEMAPHORE;
    switch (a.op) {
    case LockOp::SetPermits:
        script(rc, a, kScriptSemaphoreTrySet, 2);
        key(rc, l);
        semaphore_channel(rc, l);
        rc.arg_i64(a.count);
        rc.arg(p.publish);
        break;
    case LockOp::AddPermits:
        script(rc, a, expirable ? kScriptPermitAdd : kScriptSemaphoreAdd, 2);
        key(rc, l);
        semaphore_channel(rc, l);
        rc.arg_i64(a.count);
        rc.arg(p.publish);
        break;
    case LockOp::SemaphoreInfo:
        script(rc, a, kScriptSemaphoreInfo, 3);
        key(rc, l);
        permit_zset(rc, l);
        semaphore_channel(rc, l);
        rc.arg_i64(edgelock_port_wall_ms());
        rc.arg(p.publish);
        rc.arg(strcmp(p.publish, "spublish") == 0 ? "shardnumsub" : "numsub");
        break;
    case LockOp::ReleasePermit:
        script(rc, a, kScriptPermitReleaseOne, 3);
        key(rc, l);
        semaphore_channel(rc, l);
        permit_zset(rc, l);
        rc.arg(reinterpret_cast<const char *>(a.request_id), 16);
        rc.arg("1");
        rc.arg_i64(edgelock_port_wall_ms());
        rc.arg(p.publish);
        break;
    case LockOp::LatchSetCount:
        script(rc, a, kScriptLatchTrySet, 2);
        key(rc, l);
        latch_channel(rc, l);
        rc.arg(kLatchNewCountMessage);
        rc.arg_i64(a.count);
        rc.arg(p.publish);
        break;
    case LockOp::LatchCountDown:
        script(rc, a, kScriptLatchCountDown, 2);
        key(rc, l);
        latch_channel(rc, l);
        rc.arg(kLatchOpenMessage);
        rc.arg(p.publish);
        break;
    case LockOp::LatchCount:
        rc.arg("GET");
        key(rc, l);
        break;
    default: break;
    }
}

void force_release(RespCommand &rc, const ClientProtocol &p, const LockOpArgs &a, const LockRef &l)
{
    if (l.kind == EDGELOCK_FAIR) {
        script(rc, a, kScriptFairForceRelease, 4);
        key(rc, l);
        prefixed(rc, l, kLockQueuePrefix);
        prefixed(rc, l, kLockTimeoutPrefix);
        channel(rc, l);
        rc.arg("0");
        rc.arg(p.publish);
    } else if (is_rw(l)) {
        // Only the handle's own side: the other side's holders stay (Redisson).
        bool write = l.kind == EDGELOCK_WRITE;
        script(rc, a, kScriptRwForceRelease, 2);
        key(rc, l);
        channel(rc, l);
        rc.arg(write ? "1" : "0"); // a writer gone wakes every waiter, as its unlock does
        rc.arg(p.publish);
        rc.arg(write ? "write" : "read");
    } else {
        script(rc, a, kScriptForceRelease, 2);
        key(rc, l);
        channel(rc, l);
        rc.arg("0");
        rc.arg(p.publish);
    }
}

} // namespace

void permit_id(const uint8_t *base, uint32_t k, uint8_t out[16])
{
    memcpy(out, base, 16);
    out[14] = (uint8_t)(k >> 8);
    out[15] = (uint8_t)k;
}

// KEYS: counter, zset, channel per hold; ARGV: now, deadline, publish, then
// per hold its count and ids (permit_renew.lua).
static void format_permit_renew(RespCommand &rc, const ClientProtocol &p, const LockOpArgs &a,
                                const RenewItem *items, uint32_t n)
{
    script(rc, a, kScriptPermitRenew, 3 * n);
    for (uint32_t k = 0; k < n; k++) {
        key(rc, items[k].lock);
        permit_zset(rc, items[k].lock);
        semaphore_channel(rc, items[k].lock);
    }
    rc.arg_i64(edgelock_port_wall_ms());
    rc.arg_i64(permit_deadline(p.watchdog_lease_ms));
    rc.arg(p.publish);
    for (uint32_t k = 0; k < n; k++) {
        rc.arg_u64(items[k].permits);
        permit_ids(rc, items[k].permit_base, items[k].permits);
    }
}

void format_renew(RespCommand &rc, const ClientProtocol &p, bool eval, RenewKind kind, const RenewItem *items,
                  uint32_t n)
{
    LockOpArgs a = {};
    a.eval = eval;
    if (kind == RenewKind::Permits) {
        format_permit_renew(rc, p, a, items, n);
        return;
    }
    script(rc, a, kind == RenewKind::Read ? kScriptReadRenew : kScriptRenew, n);
    for (uint32_t k = 0; k < n; k++)
        key(rc, items[k].lock);
    rc.arg_u64(p.watchdog_lease_ms);
    for (uint32_t k = 0; k < n; k++)
        owner_arg(rc, p, items[k].lock, items[k].owner);
}

void format_lock_op(RespCommand &rc, const ClientProtocol &p, const LockOpArgs &a, const LockRef &l)
{
    switch (a.op) {
    case LockOp::Acquire: acquire(rc, p, a, l); break;
    case LockOp::Release: release(rc, p, a, l); break;
    case LockOp::ForceRelease: force_release(rc, p, a, l); break;
    case LockOp::Exists:
        if (is_rw(l)) {
            // The handle's own side, not the key: readers alone do not make
            // the write side locked (Redisson's readLock/writeLock().isLocked()).
            script(rc, a, kScriptRwIsLocked, 1);
            key(rc, l);
            rc.arg(l.kind == EDGELOCK_WRITE ? "write" : "read");
            break;
        }
        rc.arg("EXISTS");
        key(rc, l);
        break;
    case LockOp::HoldCount:
        rc.arg("HGET");
        key(rc, l);
        owner_arg(rc, p, l, a.owner);
        break;
    case LockOp::Ttl:
        rc.arg("PTTL");
        key(rc, l);
        break;
    case LockOp::LatchDelete:
        rc.arg("DEL");
        latch(rc, l, a);
        break;
    case LockOp::Abandon:
        script(rc, a, kScriptFairAbandon, 4);
        key(rc, l);
        prefixed(rc, l, kLockQueuePrefix);
        prefixed(rc, l, kLockTimeoutPrefix);
        channel(rc, l);
        owner_arg(rc, p, l, a.owner);
        rc.arg_u64(a.fair_window_ms);
        rc.arg(p.publish);
        break;
    case LockOp::Extend:
        script(rc, a, l.kind == EDGELOCK_READ ? kScriptReadRenew : kScriptRenew, 1);
        key(rc, l);
        rc.arg_i64(a.lease_ms);
        owner_arg(rc, p, l, a.owner);
        break;
    case LockOp::Renew: break; // a batch: format_renew()
    case LockOp::Wait: break;  // no lock: format_wait()
    case LockOp::Scan: break;  // no lock: format_scan()
    case LockOp::SetPermits:
    case LockOp::AddPermits:
    case LockOp::SemaphoreInfo:
    case LockOp::ReleasePermit:
    case LockOp::LatchSetCount:
    case LockOp::LatchCountDown:
    case LockOp::LatchCount: semaphore_op(rc, p, a, l); break;
    case LockOp::Info:
        script(rc, a, kScriptLockInfo, 4);
        key(rc, l);
        prefixed(rc, l, kLockQueuePrefix);
        prefixed(rc, l, kLockTimeoutPrefix);
        prefixed(rc, l, kLockTokenPrefix);
        prefixed(rc, l, kLockChannelPrefix);
        prefixed(rc, l, kRwChannelPrefix);
        rc.arg(strcmp(p.publish, "spublish") == 0 ? "shardnumsub" : "numsub");
        break;
    }
}

ScriptId script_of(LockOp op, edgelock_lock_kind kind, RenewKind renew)
{
    switch (op) {
    case LockOp::SetPermits: return kScriptSemaphoreTrySet;
    case LockOp::AddPermits:
        return kind == EDGELOCK_PERMIT_SEMAPHORE ? kScriptPermitAdd : kScriptSemaphoreAdd;
    case LockOp::SemaphoreInfo: return kScriptSemaphoreInfo;
    case LockOp::ReleasePermit: return kScriptPermitReleaseOne;
    case LockOp::LatchSetCount: return kScriptLatchTrySet;
    case LockOp::LatchCountDown: return kScriptLatchCountDown;
    case LockOp::Acquire:
        switch (kind) {
        case EDGELOCK_REENTRANT: return kScriptAcquire;
        case EDGELOCK_FENCED: return kScriptFencedAcquire;
        case EDGELOCK_FAIR: return kScriptFairAcquire;
        case EDGELOCK_READ: return kScriptReadAcquire;
        case EDGELOCK_WRITE: return kScriptWriteAcquire;
        case EDGELOCK_SEMAPHORE: return kScriptSemaphoreAcquire;
        case EDGELOCK_PERMIT_SEMAPHORE: return kScriptPermitAcquire;
        case EDGELOCK_LATCH: return kScriptCount;
        }
        break;
    case LockOp::Release:
        switch (kind) {
        case EDGELOCK_REENTRANT:
        case EDGELOCK_FENCED: return kScriptRelease;
        case EDGELOCK_FAIR: return kScriptFairRelease;
        case EDGELOCK_READ: return kScriptReadRelease;
        case EDGELOCK_WRITE: return kScriptWriteRelease;
        case EDGELOCK_SEMAPHORE: return kScriptSemaphoreRelease;
        case EDGELOCK_PERMIT_SEMAPHORE: return kScriptPermitRelease;
        case EDGELOCK_LATCH: return kScriptCount;
        }
        break;
    case LockOp::ForceRelease:
        return kind == EDGELOCK_FAIR                             ? kScriptFairForceRelease
               : kind == EDGELOCK_READ || kind == EDGELOCK_WRITE ? kScriptRwForceRelease
                                                                 : kScriptForceRelease;
    case LockOp::Renew:
        return renew == RenewKind::Permits ? kScriptPermitRenew
               : renew == RenewKind::Read  ? kScriptReadRenew
                                           : kScriptRenew;
    case LockOp::Extend: return kind == EDGELOCK_READ ? kScriptReadRenew : kScriptRenew;
    case LockOp::Exists:
        return kind == EDGELOCK_READ || kind == EDGELOCK_WRITE ? kScriptRwIsLocked : kScriptCount;
    case LockOp::Abandon: return kScriptFairAbandon;
    case LockOp::Info: return kScriptLockInfo;
    default: break;
    }
    return kScriptCount;
}

void format_wait(RespCommand &rc, uint32_t replicas, uint32_t timeout_ms)
{
    rc.arg("WAIT");
    rc.arg_u64(replicas);
    rc.arg_u64(timeout_ms);
}

void format_scan(RespCommand &rc, uint64_t cursor, const char *pattern, uint32_t count)
{
    rc.arg("SCAN");
    rc.arg_u64(cursor);
    rc.arg("MATCH");
    rc.arg(pattern, strlen(pattern));
    rc.arg("COUNT");
    rc.arg_u64(count);
    rc.arg("TYPE");
    rc.arg("hash");
}

void format_script_load(RespCommand &rc, ScriptId id)
{
    rc.arg("SCRIPT");
    rc.arg("LOAD");
    rc.arg(kScripts[id].text, kScripts[id].len);
}

void write_waiter_channel(Writer &w, const ClientProtocol &p, const LockRef &l, uint64_t owner)
{
    if (is_semaphore(l)) {
        write_prefix_name(w, kSemaphoreChannelPrefix, l.name, l.len);
        return;
    }
    if (l.kind == EDGELOCK_LATCH) {
        write_latch_channel(w, l.name, l.len);
        return;
    }
    bool rw = l.kind == EDGELOCK_READ || l.kind == EDGELOCK_WRITE;
    write_prefix_name(w, rw ? kRwChannelPrefix : kLockChannelPrefix, l.name, l.len);
    if (l.kind == EDGELOCK_FAIR) {
        w.bytes(":", 1);
        write_owner(w, p.client_id, owner);
    }
}

} // namespace edgelock
