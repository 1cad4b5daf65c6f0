-- SPDX-License-Identifier: BSD-3-Clause
-- Count a latch down by one (Redisson RCountDownLatch.countDown()).
-- KEYS[1] the count, KEYS[2] channel redisson_countdownlatch__channel__{name}
-- ARGV[1] 0 (the zero-count message), ARGV[2] publish command
-- The key goes at zero or below; at zero the message opens every waiter.
-- An absent latch stays absent. Returns the count after (0 for absent).
local v = redis.call('decr', KEYS[1])
if v <= 0 then
    redis.call('del', KEYS[1])
end
if v == 0 then
    redis.call(ARGV[2], KEYS[2], ARGV[1])
end
if v < 0 then
    v = 0
end
return v
