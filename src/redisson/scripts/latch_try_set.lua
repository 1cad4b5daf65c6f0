-- SPDX-License-Identifier: BSD-3-Clause
-- Set a countdown latch that does not exist (Redisson RCountDownLatch.trySetCount(c)).
-- KEYS[1] the count, KEYS[2] channel redisson_countdownlatch__channel__{name}
-- ARGV[1] 1 (the count-set message), ARGV[2] count, ARGV[3] publish command
-- Returns 1 when set (and published), 0 when the latch exists: unchanged.
if redis.call('exists', KEYS[1]) == 0 then
    redis.call('set', KEYS[1], ARGV[2])
    redis.call(ARGV[3], KEYS[2], ARGV[1])
    return 1
end
return 0
