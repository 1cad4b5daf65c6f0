-- SPDX-License-Identifier: BSD-3-Clause
-- Take permits of a plain semaphore (Redisson RSemaphore.tryAcquire(n)).
-- KEYS[1] the counter (free permits)
-- ARGV[1] permits wanted
-- Returns 1 when taken, 0 when fewer are free (an absent counter has none).
local free = redis.call('get', KEYS[1])
if free ~= false and tonumber(free) >= tonumber(ARGV[1]) then
    redis.call('decrby', KEYS[1], ARGV[1])
    return 1
end
return 0
