-- SPDX-License-Identifier: BSD-3-Clause
-- Take permits of an expirable semaphore (Redisson
-- RPermitExpirableSemaphore.tryAcquire(n, lease)).
-- KEYS[1] the counter, KEYS[2] zset {name}:timeout, KEYS[3] channel redisson_sc:{name}
-- ARGV[1] permits wanted, ARGV[2] their deadline (ms since the epoch, or the
-- sentinel), ARGV[3] now (ms since the epoch), ARGV[4] the no-expiry sentinel
-- 922337203685477, ARGV[5] publish command, ARGV[6..] the permit ids (16 raw
-- bytes each).
-- Expired permits, as many as are wanted, go back to the pool first (expiry
-- publishes nothing: this is when the others learn of it).
-- Returns 'OK' when taken; otherwise ':<deadline>' of the permit that expires
-- first, or nil when none will.
local expired = redis.call('zrangebyscore', KEYS[2], 0, ARGV[3], 'limit', 0, ARGV[1])
if #expired > 0 then
    redis.call('zrem', KEYS[2], unpack(expired))
    local free = redis.call('incrby', KEYS[1], #expired)
    if tonumber(free) > 0 then
        redis.call(ARGV[5], KEYS[3], free)
    end
end
local free = redis.call('get', KEYS[1])
if free ~= false and tonumber(free) >= tonumber(ARGV[1]) then
    redis.call('decrby', KEYS[1], ARGV[1])
    for i = 6, #ARGV do
        redis.call('zadd', KEYS[2], ARGV[2], ARGV[i])
    end
    local ttl = redis.call('pttl', KEYS[1])
    if ttl > 0 then
        redis.call('pexpire', KEYS[2], ttl)
    end
    return 'OK'
end
local first = redis.call('zrange', KEYS[2], 0, 0, 'WITHSCORES')
if first[1] ~= nil and first[2] ~= ARGV[4] then
    return ':' .. tostring(first[2])
end
return nil
