-- SPDX-License-Identifier: BSD-3-Clause
-- Fenced lock acquire (Redisson RFencedLock): the reentrant acquire plus a token.
-- KEYS[1] lock hash, KEYS[2] token key prefix_name("redisson_lock_token", name)
-- ARGV[1] lease ms, ARGV[2] owner field "<client id>:<thread id>"
-- Returns {-1, token} when acquired or re-entered: the token key (no TTL) is
-- incremented on every successful acquire, so tokens only grow. Returns
-- {pttl, -1} when another owner holds the lock; test the token (-1 = failed),
-- since a holder without a TTL makes pttl -1 too.
-- The token is incremented before the hash is touched: a token key that cannot
-- be incremented (another type, not an integer) fails the call with an error and
-- leaves no hold without a token behind.
if (redis.call('exists', KEYS[1]) == 0) or (redis.call('hexists', KEYS[1], ARGV[2]) == 1) then
    local token = redis.call('incr', KEYS[2])
    redis.call('hincrby', KEYS[1], ARGV[2], 1)
    redis.call('pexpire', KEYS[1], ARGV[1])
    return {-1, token}
end
return {redis.call('pttl', KEYS[1]), -1}
