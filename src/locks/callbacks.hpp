// SPDX-License-Identifier: BSD-3-Clause
// Calling the user: result and lock-lost callbacks, counted so that a client
// destroyed from inside one is freed only once control is back in the loop.
#pragma once

#include <stdint.h>

#include "edgelock/edgelock.h"

namespace edgelock
{

struct Client;

void invoke_result(Client *c, edgelock_result_fn cb, uint64_t lock_id, edgelock_status st, int64_t value,
                   void *user);
void invoke_lock_lost(Client *c, uint64_t lock_id, uint64_t owner);
// True on the thread that may call into the engine now: in event-loop mode
// always (the caller's loop is the caller's business); on an owned loop, the
// thread driving it (the loop thread, or a blocked caller leading).
bool on_loop_thread(const Client *c);

} // namespace edgelock
