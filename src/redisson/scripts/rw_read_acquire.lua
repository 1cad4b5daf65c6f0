-- SPDX-License-Identifier: BSD-3-Clause
-- Read lock acquire (Redisson RReadWriteLock, read side).
-- KEYS[1] lock hash, KEYS[2] this owner's timeout prefix
-- suffix_name(name, owner) .. ":rwlock_timeout"
-- ARGV[1] lease ms, ARGV[2] owner field, ARGV[3] owner field .. ":write"
-- Returns nil when acquired: the hold count n of the owner field goes up by one
-- and the hold gets its own key KEYS[2] .. ':' .. n (value 1, PX lease), so the
-- hash can be given the longest remaining lease when a hold ends. Shared with
-- other readers, and open to the writer itself (mode=write, ARGV[3] held).
-- Otherwise returns the hash's PTTL (a writer holds it).
-- A hash without a `mode` field is not a read-write lock (say, a reentrant lock
-- under the same name): it is treated as held, never taken over. A key of
-- another type fails with WRONGTYPE before anything is written.
local mode = redis.call('hget', KEYS[1], 'mode')
if mode == false then
    if redis.call('exists', KEYS[1]) == 1 then
        return redis.call('pttl', KEYS[1])
    end
    redis.call('hset', KEYS[1], 'mode', 'read')
    redis.call('hset', KEYS[1], ARGV[2], 1)
    redis.call('set', KEYS[2] .. ':1', 1, 'px', ARGV[1])
    redis.call('pexpire', KEYS[1], ARGV[1])
    return nil
end
if mode == 'read' or (mode == 'write' and redis.call('hexists', KEYS[1], ARGV[3]) == 1) then
    local n = redis.call('hincrby', KEYS[1], ARGV[2], 1)
    redis.call('set', KEYS[2] .. ':' .. n, 1, 'px', ARGV[1])
    local left = redis.call('pttl', KEYS[1])
    redis.call('pexpire', KEYS[1], math.max(left, tonumber(ARGV[1])))
    return nil
end
return redis.call('pttl', KEYS[1])
