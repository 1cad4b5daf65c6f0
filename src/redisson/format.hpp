// SPDX-License-Identifier: BSD-3-Clause
// How each lock operation is spelled on the wire, per lock kind: which script,
// which KEYS and ARGV (REDISSON-PROTOCOL.md; each script's header comment has
// the same list), and which channel a waiter listens to. Pure formatting: no
// state, no I/O.
#pragma once

#include <stdint.h>

#include "edgelock/edgelock.h"
#include "redisson/scripts.hpp"

namespace edgelock
{

class RespCommand;
struct Writer;

enum class LockOp : uint8_t {
    Acquire,
    Release,
    ForceRelease,
    Exists,
    HoldCount,
    Ttl,
    Renew,
    LatchDelete, // drop the unlock latch key after a release
    Abandon,     // a fair waiter that gave up leaves the queue
    Extend,      // set the lease of a held lock (MultiLock alignment)
    Info,        // read-only snapshot (lock_info.lua)
    Wait,        // WAIT for replicas after a lock or unlock (no lock)
    Scan,        // one SCAN page of hash keys (no lock): edgelock_scan_locks()
    // Semaphores and the latch (permits.cpp): Acquire and Release above take
    // and give back permits (a latch's Acquire reads its count: await).
    SetPermits,     // trySetPermits(n)
    AddPermits,     // addPermits(n), n may be negative
    SemaphoreInfo,  // free, taken and waiting (semaphore_info.lua)
    ReleasePermit,  // one expirable permit by its id, whoever holds it
    LatchSetCount,  // trySetCount(c)
    LatchCountDown, // countDown()
    LatchCount,     // getCount()
};

// The no-expiry score of an expirable permit taken without a lease
// (Redisson's nonExpirableTimeout).
constexpr int64_t kPermitNoExpiry = 922337203685477LL;
// Permits one call may take: their ids travel in one script call.
constexpr uint32_t kMaxPermitsPerCall = EDGELOCK_MAX_PERMITS;
// The id of permit k of a call: the call's base id (16 bytes, its last two
// zero) with k in the last two. Redisson's ids are 16 random bytes; ours are
// 8 random bytes per client and a counter, unique all the same.
void permit_id(const uint8_t *base, uint32_t k, uint8_t out[16]);

// A lock as the wire sees it: its name and kind.
struct LockRef {
    const char *name;
    uint32_t len;
    edgelock_lock_kind kind;
};

// What a client puts in every command: its id and configured times.
struct ClientProtocol {
    const char *client_id;
    uint32_t unlock_latch_ttl_ms;
    uint32_t watchdog_lease_ms;
    // What unlock scripts publish with: "publish", or "spublish" on a
    // cluster with sharded pub/sub (Redisson passes it the same way).
    const char *publish;
};

struct LockOpArgs {
    LockOp op;
    bool eval; // send the script body (EVAL) instead of EVALSHA
    uint64_t owner;
    int64_t lease_ms;
    const uint8_t *request_id; // 16 bytes: the unlock latch (Release, LatchDelete);
                               // expirable permits: the base id (Acquire, Release)
                               // or the id (ReleasePermit)
    uint32_t permits;          // semaphores: permits taken or given back
    int64_t count;             // SetPermits, AddPermits, LatchSetCount: the number
    uint32_t fair_window_ms;   // fair Acquire, Abandon: the waiter's window in the queue
                               // (its wait, else fair_wait_ms: Redisson's threadWaitTime)
};

// The watchdog's renewal calls: each kind has its own script.
enum class RenewKind : uint8_t {
    Lock,    // lock_renew.lua: reentrant, fair, fenced, write holds
    Read,    // rw_renew.lua
    Permits, // permit_renew.lua: expirable semaphore permits
};

// One hold in a renewal batch.
struct RenewItem {
    LockRef lock;
    uint64_t owner;
    const uint8_t *permit_base; // RenewKind::Permits: the hold's base id
    uint32_t permits;           // and its number of permits
};

// Holds per renewal call of expirable permits: their ids make each one
// longer than a lock's, and the command buffer is sized for kRenewBatch locks.
constexpr uint32_t kPermitRenewBatch = 16;

void format_lock_op(RespCommand &rc, const ClientProtocol &p, const LockOpArgs &a, const LockRef &l);
// WAIT replicas timeout.
void format_wait(RespCommand &rc, uint32_t replicas, uint32_t timeout_ms);
// SCAN cursor MATCH pattern COUNT count TYPE hash: the lock hashes' candidates.
void format_scan(RespCommand &rc, uint64_t cursor, const char *pattern, uint32_t count);
// One renewal script call for n holds (read holds use their own script).
void format_renew(RespCommand &rc, const ClientProtocol &p, bool eval, RenewKind kind, const RenewItem *items,
                  uint32_t n);
// The script an operation runs, or kScriptCount for a plain command.
ScriptId script_of(LockOp op, edgelock_lock_kind kind, RenewKind renew);
void format_script_load(RespCommand &rc, ScriptId id);
// The channel a waiter of this lock listens to: the lock's own channel, the
// read-write lock's, or for a fair lock the waiter's private one.
void write_waiter_channel(Writer &w, const ClientProtocol &p, const LockRef &l, uint64_t owner);

} // namespace edgelock
