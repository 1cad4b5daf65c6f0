-- SPDX-License-Identifier: BSD-3-Clause
-- Give back one permit of an expirable semaphore by its id, whoever took it
-- (Redisson RPermitExpirableSemaphore.tryRelease(id)).
-- KEYS[1] the counter, KEYS[2] channel redisson_sc:{name}, KEYS[3] zset {name}:timeout
-- ARGV[1] the permit id (16 raw bytes), ARGV[2] 1, ARGV[3] now (ms since the
-- epoch), ARGV[4] publish command
-- Returns 1 when released; 0 when absent, or when it was past its deadline
-- (it goes back to the pool all the same, as an expired permit would).
local deadline = redis.call('zscore', KEYS[3], ARGV[1])
if tonumber(redis.call('zrem', KEYS[3], ARGV[1])) ~= 1 then
    return 0
end
local free = redis.call('incrby', KEYS[1], ARGV[2])
redis.call(ARGV[4], KEYS[2], free)
if tonumber(deadline) <= tonumber(ARGV[3]) then
    return 0
end
return 1
