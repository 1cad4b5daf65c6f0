// SPDX-License-Identifier: BSD-3-Clause
// The rules of MultiLock and RedLock, once, for both faces: the blocking one
// (api/composite_blocking.cpp, members on any clients, one thread) and the
// asynchronous one (async.cpp, members on one loop). Pure: no I/O, no state.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "edgelock/edgelock.h"

namespace edgelock
{

bool composite_valid_times(int64_t wait_ms, int64_t lease_ms);
// 1..EDGELOCK_MAX_MEMBERS, none twice; with one_server (RedLock), no client
// twice of which one_server says it reaches a single server.
bool composite_valid_members(const edgelock_member *m, size_t n,
                             bool (*one_server)(const edgelock_client *) = nullptr);
// The end of a wait of wait_ms from now (kForever for EDGELOCK_WAIT_FOREVER),
// and what is left of it (EDGELOCK_WAIT_FOREVER when it has no end).
uint64_t composite_deadline(int64_t wait_ms);
int64_t composite_left(uint64_t deadline);

// MultiLock: members taken early must not lapse while later ones are awaited:
// they are taken with lease + wait, or under the watchdog when the wait has no
// end (renewed while the process lives, so a dead one still frees them within
// a watchdog lease), and every lease is aligned to lease_ms once the set is
// complete (when this differs from lease_ms): a fixed lease, the watchdog's
// renewal of it ended. With wait 0 no member waits: plain lease_ms.
int64_t multi_first_lease(int64_t lease_ms, int64_t wait_ms);
// MultiLock unlock: the first error, every member tried regardless.
edgelock_status multi_unlock_result(const edgelock_status *st, size_t n);

// RedLock: each server gets an equal share of what is left of the wait, so
// one slow server cannot spend it all.
int64_t redlock_node_wait(int64_t left, size_t n);

struct RedlockVerdict {
    bool acquired;
    int64_t validity_ms; // acquired: how long the caller may rely on it
    edgelock_status why; // not acquired: WAIT_TIMEOUT; CONNECTION, or a refusal (REDIS, ...), when
                         // too many servers are down or refuse for a majority; a member's
                         // CANCELLED, INVALID_ARG, STALE_HANDLE, ... (no retry)
    bool retry;          // not acquired: release, then another round
};
// Judge one round: st[i] per server, lease the lease in force (the watchdog
// lease when none was given), elapsed_ms the round's duration, left what is
// left of the wait after it.
RedlockVerdict redlock_judge(const edgelock_status *st, size_t n, int64_t lease, int64_t elapsed_ms,
                             int64_t left);
// RedLock unlock: a minority that never had it answers NOT_OWNER, which is
// expected; OK when any server released it, else the first status.
edgelock_status redlock_unlock_result(const edgelock_status *st, size_t n);

} // namespace edgelock
