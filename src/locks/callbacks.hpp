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
bool on_loop_thread(const Client *c);

} // namespace edgelock
