-- SPDX-License-Identifier: BSD-3-Clause
-- Add (or with a negative count remove) permits of a plain semaphore
-- (Redisson RSemaphore.addPermits(n)).
-- KEYS[1] the counter, KEYS[2] channel redisson_sc:{name}
-- ARGV[1] permits to add, ARGV[2] publish command
-- Publishes and returns the count after it.
local free = redis.call('get', KEYS[1])
if free == false then
    free = 0
end
local after = tonumber(free) + tonumber(ARGV[1])
redis.call('set', KEYS[1], after)
redis.call(ARGV[2], KEYS[2], after)
return after
