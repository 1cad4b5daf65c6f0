-- SPDX-License-Identifier: BSD-3-Clause
-- Write lock release (Redisson RReadWriteLock, write side) with the unlock latch.
-- KEYS[1] lock hash, KEYS[2] channel prefix_name("redisson_rwlock", name),
-- KEYS[3] unlock latch key
-- ARGV[1] unlock message (1: wake every waiter), ARGV[2] lease ms,
-- ARGV[3] owner field .. ":write", ARGV[4] publish command, ARGV[5] latch TTL ms
-- Returns nil when the caller does not hold the write lock (nothing changed),
-- 0 when a re-entrant write hold remains (PEXPIRE lease), 1 when the write lock
-- is released: deleted with ARGV[1] published, or, when the writer also holds
-- read locks, downgraded to mode=read with its read holds kept. Redisson
-- publishes nothing on that downgrade, so readers already waiting sleep until
-- their retry at the lock's TTL (up to a lease); ARGV[1] is published here too:
-- every waiter tries again, readers get in, writers find it held and wait on.
-- Redisson's waiters take it as any read unlock. When the lock is gone (expired, or forced off) the answer is
-- nil too, as in Redisson (IllegalMonitorStateException), so the caller learns
-- its hold is lost; but, as Redisson does, ARGV[1] is still published (a waiter
-- may have missed the expiry) and the latch set to 1, so a retry whose first
-- answer was lost reads "released". A retried release with the same latch key
-- gets the latch's answer. A lock hash of another type fails with WRONGTYPE
-- before anything is written.
local latched = redis.call('get', KEYS[3])
if latched ~= false then
    return tonumber(latched)
end

local mode = redis.call('hget', KEYS[1], 'mode')
if mode == false then
    if redis.call('exists', KEYS[1]) == 1 then
        return nil -- not a read-write lock: nothing of ours to release
    end
    redis.call(ARGV[4], KEYS[2], ARGV[1])
    redis.call('set', KEYS[3], 1, 'px', ARGV[5])
    return nil
end
if mode ~= 'write' or redis.call('hexists', KEYS[1], ARGV[3]) == 0 then
    return nil
end

local count = redis.call('hincrby', KEYS[1], ARGV[3], -1)
if count > 0 then
    redis.call('pexpire', KEYS[1], ARGV[2])
    redis.call('set', KEYS[3], 0, 'px', ARGV[5])
    return 0
end
redis.call('hdel', KEYS[1], ARGV[3])
if redis.call('hlen', KEYS[1]) == 1 then
    redis.call('del', KEYS[1])
    redis.call(ARGV[4], KEYS[2], ARGV[1])
else
    redis.call('hset', KEYS[1], 'mode', 'read')
    redis.call(ARGV[4], KEYS[2], ARGV[1])
end
redis.call('set', KEYS[3], 1, 'px', ARGV[5])
return 1
