// SPDX-License-Identifier: BSD-3-Clause
// Unlock, and the undo of an acquire whose outcome is unknown.
#pragma once

#include <stdint.h>

#include "edgelock/edgelock.h"

namespace edgelock
{

struct Client;
struct Hold;

// give_back: a MultiLock's or RedLock's, of a member it took. Nobody will
// unlock that member again, so one of unknown outcome goes out again (as
// release_settle_uncertain) until Redis answers, instead of leaving the lock
// to lapse with its lease.
edgelock_status release_start(Client *c, edgelock_lock lock, uint64_t owner, edgelock_result_fn cb,
                              void *user, bool give_back = false);
// Give back whatever owner may hold after an acquire of unknown outcome.
void cleanup_release(Client *c, uint64_t lock_id, uint64_t owner, int64_t lease_ms);
// Whether a give-back of owner's on lock_id's name is still to be answered
// (a lock call waits for it: a grant before it would be the one given back).
bool release_undo_out(Client *c, uint64_t lock_id, uint64_t owner);
// Before another acquire by h's owner, while h has an unlock of unknown
// outcome (h->unlock_uncertain, h->count > 0): that unlock goes out again,
// so that the coming hold does not re-enter the old one.
void release_settle_uncertain(Client *c, Hold *h);

} // namespace edgelock
