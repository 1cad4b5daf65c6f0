-- SPDX-License-Identifier: BSD-3-Clause
-- Reentrant lock release with Redisson 4.x's unlock latch.
-- KEYS[1] lock hash, KEYS[2] lock channel, KEYS[3] unlock latch key
-- ARGV[1] unlock message (0), ARGV[2] lease ms, ARGV[3] owner field,
-- ARGV[4] publish command, ARGV[5] latch TTL ms
-- Returns nil when the owner does not hold the lock (nothing changed), 0 when a
-- re-entrant hold remains, and 1 + n when released (message published), n
-- the subscribers that heard the message: waiters the releasing client lets
-- take their turn (release.cpp, take_turns), less its own subscription. Keys
-- and message are Redisson's; only the answer says more. A retried release
-- with the same latch key answers 1.
local latched = redis.call('get', KEYS[3])
if latched ~= false then
    return tonumber(latched)
end
if redis.call('hexists', KEYS[1], ARGV[3]) == 0 then
    return nil
end
local remaining = redis.call('hincrby', KEYS[1], ARGV[3], -1)
if remaining > 0 then
    redis.call('pexpire', KEYS[1], ARGV[2])
    redis.call('set', KEYS[3], 0, 'px', ARGV[5])
    return 0
end
redis.call('del', KEYS[1])
local listeners = redis.call(ARGV[4], KEYS[2], ARGV[1])
redis.call('set', KEYS[3], 1, 'px', ARGV[5])
return 1 + listeners
