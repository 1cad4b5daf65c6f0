// SPDX-License-Identifier: BSD-3-Clause
// What every C ABI entry point (c_api.cpp, c_api_semaphores.cpp) does first:
// the opaque handle as the client, the async calls' thread check, and local
// calls run where they may.
#pragma once

#include "api/blocking.hpp"
#include "locks/callbacks.hpp"
#include "locks/client.hpp"

namespace edgelock
{

inline Client *as_client(edgelock_client *c)
{
    return reinterpret_cast<Client *>(c);
}

// Async calls: OK on the loop thread, else WRONG_THREAD (INVALID_ARG for NULL).
inline edgelock_status async_entry(edgelock_client *client)
{
    if (!client)
        return EDGELOCK_ERR_INVALID_ARG;
    return on_loop_thread(as_client(client)) ? EDGELOCK_OK : EDGELOCK_ERR_WRONG_THREAD;
}

// Local calls: on the loop thread directly, otherwise through the hand-off.
inline edgelock_status local_call(Client *c, BlockingRequest *r)
{
    if (c->owns_base && !on_loop_thread(c))
        return blocking_call(c, r, nullptr);
    run_local(c, r);
    return r->status;
}

} // namespace edgelock
