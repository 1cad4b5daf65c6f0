// SPDX-License-Identifier: BSD-3-Clause
// Replica acknowledgement (edgelock_config.wait_replicas): a WAIT sent right
// behind a lock or unlock script, in the same round trip, and what its answer
// means.
#pragma once

#include <stdint.h>

#include "edgelock/edgelock.h"
#include "locks/calls.hpp"

struct redisReply;

namespace edgelock
{

struct Client;

bool replicas_wanted(const Client *c);
// The WAIT for the command just before it; done gets its answer.
LockCall replicas_wait_call(uint64_t lock_id, LockCallDoneFn done);
// OK when enough replicas acknowledged; NOT_REPLICATED when fewer did; the
// WAIT's own failure (connection, timeout) otherwise.
edgelock_status replicas_verdict(const Client *c, const struct redisReply *reply, edgelock_status st);

} // namespace edgelock
