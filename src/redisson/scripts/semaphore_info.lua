-- SPDX-License-Identifier: BSD-3-Clause
-- What edgelock status shows of a semaphore (either kind): free permits,
-- permits taken with an id, and processes waiting. Expired permits go back to
-- the pool first, as Redisson's availablePermits() does.
-- KEYS[1] the counter, KEYS[2] zset {name}:timeout, KEYS[3] channel redisson_sc:{name}
-- ARGV[1] now (ms since the epoch), ARGV[2] publish command, ARGV[3] 'numsub'
-- or 'shardnumsub'
-- Returns {free permits or -1 when the counter is absent, permits taken,
-- subscribers of the channel}.
local expired = redis.call('zrangebyscore', KEYS[2], 0, ARGV[1], 'limit', 0, -1)
if #expired > 0 then
    redis.call('zrem', KEYS[2], unpack(expired))
    local free = redis.call('incrby', KEYS[1], #expired)
    if tonumber(free) > 0 then
        redis.call(ARGV[2], KEYS[3], free)
    end
end
local free = redis.call('get', KEYS[1])
local subs = redis.call('pubsub', ARGV[3], KEYS[3])
return {free == false and -1 or tonumber(free), redis.call('zcard', KEYS[2]), subs[2]}
