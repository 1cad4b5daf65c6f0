-- SPDX-License-Identifier: BSD-3-Clause
-- Give back permits of an expirable semaphore, all or none (Redisson
-- RPermitExpirableSemaphore.tryRelease(ids)).
-- KEYS[1] the counter, KEYS[2] channel redisson_sc:{name}, KEYS[3] zset {name}:timeout
-- ARGV[1] number of ids, ARGV[2] now (ms since the epoch), ARGV[3] publish
-- command, ARGV[4..] the permit ids (16 raw bytes each)
-- Returns 0, changing nothing, when any id is absent or past its deadline;
-- otherwise the number released, which is also what is published.
for i = 4, #ARGV do
    local deadline = redis.call('zscore', KEYS[3], ARGV[i])
    if deadline == false or tonumber(deadline) <= tonumber(ARGV[2]) then
        return 0
    end
end
local expired = redis.call('zrangebyscore', KEYS[3], 0, ARGV[2], 'limit', 0, -1)
if #expired > 0 then
    redis.call('zrem', KEYS[3], unpack(expired))
    local free = redis.call('incrby', KEYS[1], #expired)
    if tonumber(free) > 0 then
        redis.call(ARGV[3], KEYS[2], free)
    end
end
local ids = {}
for i = 4, #ARGV do
    ids[#ids + 1] = ARGV[i]
end
local removed = redis.call('zrem', KEYS[3], unpack(ids))
redis.call('incrby', KEYS[1], removed)
redis.call(ARGV[3], KEYS[2], removed)
return removed
