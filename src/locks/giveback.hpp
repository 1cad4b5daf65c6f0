// SPDX-License-Identifier: BSD-3-Clause
// What a lock call gives back when its caller is not to have what an attempt
// took in Redis, or cannot know whether it took it (giveback.cpp).
#pragma once

#include <stdint.h>

#include "edgelock/edgelock.h"

namespace edgelock
{

struct Client;
struct Waiter;

// A fair waiter leaving without the lock: out of the queue (fire and forget).
void abandon_fair_queue(Client *c, const Waiter *w);
// Give back what the waiter's grant took. certain: Redis granted it. The
// waiter's attempt counts as over from here (its asked lease is cleared).
void undo_grant(Client *c, Waiter *w, bool certain);
// Whether the waiter's attempt must wait for a give-back of its owner's on
// its lock's name still to be answered (release_undo_out): then its timer is
// armed for the end of that wait, and acquire_after_undo() tries again.
bool wait_behind_give_back(Client *c, uint32_t index);
// What a wait that ran out without an error says: WAIT_TIMEOUT, or, behind
// a give-back not answered within a command timeout that outlasted the
// caller's own wait, TIMEOUT or CONNECTION (as an attempt queued behind it).
edgelock_status end_of_wait_behind_give_back(Client *c, const Waiter *w);
// A granted waiter whose WAIT is still to answer, or whose OK is held back
// (on), or no longer: counted (Client::replicating_waiters) for the
// releases that look for such grants (acquire_grant_released).
void waiter_set_replicating(Client *c, Waiter *w, bool on);
// The waiter at index was granted (and replicated, where asked): the
// caller's OK, or, while a give-back of its owner's on that name is still to
// answer (its attempt went out before that give-back was made), held back
// until it answers (held_ok_settle), a command timeout at most
// (held_ok_expired): that give-back may free the lock after this grant.
void grant_ok(Client *c, uint32_t index, int64_t value, uint64_t sent_ms);
// A give-back answered: the held-back OK is given (the grant stands), or the
// call tries again (a release freed the lock after the grant), or it waits
// on for another give-back still out.
void held_ok_settle(Client *c, uint32_t index);
// The give-back did not answer within a command timeout: this grant is
// given back too, and the call ends with TIMEOUT or CONNECTION.
void held_ok_expired(Client *c, uint32_t index);
// A release of its owner's freed the lock after this grant: nothing is held
// and nothing to give back; the call tries again while its wait lasts.
void grant_taken_back(Client *c, uint32_t index);
// A MultiLock or RedLock gives back a member it took, and that release could
// not even be queued (the command table full). took_watchdog: it took the
// member under the watchdog (not a re-entry of a hold renewed before).
void give_back_not_queued(Client *c, uint64_t lock_id, uint64_t owner, bool took_watchdog);

} // namespace edgelock
