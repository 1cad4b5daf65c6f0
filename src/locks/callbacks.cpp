// SPDX-License-Identifier: BSD-3-Clause
// Calling the user (callbacks.hpp).
#include "locks/callbacks.hpp"

#include "locks/client.hpp"

namespace edgelock
{

void invoke_result(Client *c, edgelock_result_fn cb, uint64_t lock_id, edgelock_status st, int64_t value,
                   void *user)
{
    if (!cb)
        return;
    edgelock_lock lk;
    lk.id = lock_id;
    c->callback_depth++;
    cb(reinterpret_cast<edgelock_client *>(c), lk, st, st == EDGELOCK_OK ? value : 0, user);
    c->callback_depth--;
}

void invoke_lock_lost(Client *c, uint64_t lock_id, uint64_t owner)
{
    if (!c->cfg.on_lock_lost)
        return;
    edgelock_lock lk;
    lk.id = lock_id;
    c->callback_depth++;
    c->cfg.on_lock_lost(reinterpret_cast<edgelock_client *>(c), lk, owner, c->cfg.on_lock_lost_user);
    c->callback_depth--;
}

bool on_loop_thread(const Client *c)
{
    return !c->owns_base ||
           edgelock_port_thread_id() == __atomic_load_n(&c->driver_thread_id, __ATOMIC_RELAXED);
}

} // namespace edgelock
