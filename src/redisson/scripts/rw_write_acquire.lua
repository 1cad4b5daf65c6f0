-- SPDX-License-Identifier: BSD-3-Clause
-- Write lock acquire (Redisson RReadWriteLock, write side).
-- KEYS[1] lock hash
-- ARGV[1] lease ms, ARGV[2] owner field .. ":write"
-- Returns nil when acquired (mode=write, field=1, PEXPIRE lease) or re-entered
-- (count + 1, and the TTL becomes PTTL + lease as Redisson does), otherwise the
-- hash's PTTL (readers or another writer hold it). A writer that holds read
-- locks of its own still cannot take the write lock (mode=read): as in Redisson.
-- A hash without a `mode` field (not a read-write lock) is treated as held; a
-- key of another type fails with WRONGTYPE before anything is written.
local mode = redis.call('hget', KEYS[1], 'mode')
if mode == false then
    if redis.call('exists', KEYS[1]) == 1 then
        return redis.call('pttl', KEYS[1])
    end
    redis.call('hset', KEYS[1], 'mode', 'write')
    redis.call('hset', KEYS[1], ARGV[2], 1)
    redis.call('pexpire', KEYS[1], ARGV[1])
    return nil
end
if mode == 'write' and redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
    redis.call('hincrby', KEYS[1], ARGV[2], 1)
    local left = redis.call('pttl', KEYS[1])
    redis.call('pexpire', KEYS[1], math.max(left, 0) + tonumber(ARGV[1]))
    return nil
end
return redis.call('pttl', KEYS[1])
