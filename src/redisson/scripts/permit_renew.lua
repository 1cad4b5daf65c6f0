-- SPDX-License-Identifier: BSD-3-Clause
-- The watchdog's renewal of permits, several semaphores in one call: for each,
-- what Redisson's RPermitExpirableSemaphore.updateLeaseTime(id, lease) does
-- for each of its ids.
-- KEYS[3k-2] the counter, KEYS[3k-1] zset {name}:timeout, KEYS[3k] channel
-- redisson_sc:{name}, for k = 1 .. #KEYS / 3
-- ARGV[1] now (ms since the epoch), ARGV[2] the deadline to set, ARGV[3] publish
-- command, then per semaphore: its number of ids, then the ids (16 raw bytes)
-- Returns one integer per semaphore: 1 when every id was still held (all
-- renewed), 0 when any had expired or been released (none renewed: the
-- holder has lost them).
local result = {}
local a = 4
for k = 1, #KEYS / 3 do
    local counter, zset, channel = KEYS[3 * k - 2], KEYS[3 * k - 1], KEYS[3 * k]
    local expired = redis.call('zrangebyscore', zset, 0, ARGV[1], 'limit', 0, -1)
    if #expired > 0 then
        redis.call('zrem', zset, unpack(expired))
        local free = redis.call('incrby', counter, #expired)
        if tonumber(free) > 0 then
            redis.call(ARGV[3], channel, free)
        end
    end
    local n = tonumber(ARGV[a])
    local held = 1
    for i = a + 1, a + n do
        if redis.call('zscore', zset, ARGV[i]) == false then
            held = 0
        end
    end
    if held == 1 then
        for i = a + 1, a + n do
            redis.call('zadd', zset, ARGV[2], ARGV[i])
        end
    end
    result[k] = held
    a = a + n + 1
end
return result
