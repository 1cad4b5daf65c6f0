-- SPDX-License-Identifier: BSD-3-Clause
-- Reentrant lock acquire (Redisson RLock).
-- KEYS[1] lock hash
-- ARGV[1] lease ms, ARGV[2] owner field "<client id>:<thread id>"
-- Returns nil when acquired or re-entered (hold count + 1, lease renewed),
-- otherwise the holder's remaining TTL in ms.
if (redis.call('exists', KEYS[1]) == 0) or (redis.call('hexists', KEYS[1], ARGV[2]) == 1) then
    redis.call('hincrby', KEYS[1], ARGV[2], 1)
    redis.call('pexpire', KEYS[1], ARGV[1])
    return nil
end
return redis.call('pttl', KEYS[1])
