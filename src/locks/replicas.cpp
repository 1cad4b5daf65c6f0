// SPDX-License-Identifier: BSD-3-Clause
// Replica acknowledgement (replicas.hpp).
#include "locks/replicas.hpp"
#include "base/log.hpp"

#include <hiredis/hiredis.h>

#include "locks/client.hpp"

namespace edgelock
{

bool replicas_wanted(const Client *c)
{
    return c->cfg.wait_replicas > 0;
}

LockCall replicas_wait_call(uint64_t lock_id, LockCallDoneFn done)
{
    return LockCall(LockOp::Wait, lock_id, done);
}

edgelock_status replicas_verdict(const Client *c, const redisReply *reply, edgelock_status st)
{
    if (st != EDGELOCK_OK)
        return st;
    if (reply->type != REDIS_REPLY_INTEGER)
        return EDGELOCK_ERR_PROTOCOL;
    if (reply->integer >= (long long)c->cfg.wait_replicas)
        return EDGELOCK_OK;
    log_to(c->loop.log, EDGELOCK_LOG_WARN, "%lld of %u replicas acknowledged in %u ms", reply->integer,
           c->cfg.wait_replicas, c->cfg.wait_replicas_timeout_ms);
    return EDGELOCK_ERR_NOT_REPLICATED;
}

} // namespace edgelock
