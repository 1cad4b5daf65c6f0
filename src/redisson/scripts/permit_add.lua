-- SPDX-License-Identifier: BSD-3-Clause
-- Add (or remove) permits of an expirable semaphore (Redisson
-- RPermitExpirableSemaphore.addPermits(n)).
-- KEYS[1] the counter, KEYS[2] channel redisson_sc:{name}
-- ARGV[1] permits to add, ARGV[2] publish command
-- Publishes the number added when it is positive. Returns the count after it.
local free = redis.call('get', KEYS[1])
if free == false then
    free = 0
end
local after = tonumber(free) + tonumber(ARGV[1])
redis.call('set', KEYS[1], after)
if tonumber(ARGV[1]) > 0 then
    redis.call(ARGV[2], KEYS[2], ARGV[1])
end
return after
