-- SPDX-License-Identifier: BSD-3-Clause
-- Give permits back to a plain semaphore (Redisson RSemaphore.release(n)).
-- KEYS[1] the counter, KEYS[2] channel redisson_sc:{name}
-- ARGV[1] permits, ARGV[2] publish command
-- No owner check, as in Redisson (the client checks that it took them).
-- Publishes the counter after it, which wakes as many waiters. Returns it.
local free = redis.call('incrby', KEYS[1], ARGV[1])
redis.call(ARGV[2], KEYS[2], free)
return free
