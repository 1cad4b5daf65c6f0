-- SPDX-License-Identifier: BSD-3-Clause
-- Read lock release (Redisson RReadWriteLock, read side) with the unlock latch.
-- KEYS[1] lock hash, KEYS[2] channel prefix_name("redisson_rwlock", name),
-- KEYS[3] this owner's timeout prefix suffix_name(name, owner) .. ":rwlock_timeout",
-- KEYS[4] holders' key prefix: suffix_name(name, "") without its final ':',
--         that is "{" .. name .. "}", or name itself when it contains '{'; the
--         script reads hold n of any owner field F at
--         KEYS[4] .. ':' .. F .. ':rwlock_timeout:' .. n,
-- KEYS[5] unlock latch key
-- ARGV[1] unlock message (0), ARGV[2] owner field, ARGV[3] publish command,
-- ARGV[4] latch TTL ms
-- Returns nil when the owner holds no read lock, 0 when holds remain (the
-- owner's or others'), 1 when the lock is released (deleted, "0" published to
-- wake one waiter). When the lock is gone (expired, or forced off) the answer
-- is nil too, as in Redisson (IllegalMonitorStateException), so the caller
-- learns its hold is lost; but, as Redisson does, "0" is still published (a
-- waiter may have missed the expiry) and the latch set to 1, so a retry whose
-- first answer was lost reads "released". Otherwise nil changes nothing and
-- writes no latch. The owner's newest hold and its timeout key go
-- first. With holds left, the hash TTL becomes the longest remaining per-hold
-- TTL; under a writer (mode=write: the writer also read-locked) it is only ever
-- lengthened, never cut below the writer's lease. Fields whose holds all timed
-- out are dead readers: if nothing else is left the lock is released. A retried
-- release with the same latch key gets the first answer again. A lock hash of
-- another type fails with WRONGTYPE before anything is written.
local latched = redis.call('get', KEYS[5])
if latched ~= false then
    return tonumber(latched)
end

local mode = redis.call('hget', KEYS[1], 'mode')
if mode == false and redis.call('exists', KEYS[1]) == 0 then
    redis.call(ARGV[3], KEYS[2], ARGV[1])
    redis.call('set', KEYS[5], 1, 'px', ARGV[4])
    return nil
end
local held = tonumber(redis.call('hget', KEYS[1], ARGV[2]))
if mode == false or held == nil then
    return nil
end

local count = redis.call('hincrby', KEYS[1], ARGV[2], -1)
if count <= 0 then
    redis.call('hdel', KEYS[1], ARGV[2])
end
redis.call('del', KEYS[3] .. ':' .. (count + 1))

if redis.call('hlen', KEYS[1]) > 1 then
    local longest = -2
    local fields = redis.call('hkeys', KEYS[1])
    for _, field in ipairs(fields) do
        if field ~= 'mode' then
            local holds = tonumber(redis.call('hget', KEYS[1], field))
            if holds ~= nil then
                for n = 1, holds do
                    local left = redis.call('pttl', KEYS[4] .. ':' .. field .. ':rwlock_timeout:' .. n)
                    if left > longest then
                        longest = left
                    end
                end
            end
        end
    end
    if mode == 'write' then
        local own = redis.call('pttl', KEYS[1])
        if own >= 0 and longest > own then
            redis.call('pexpire', KEYS[1], longest)
        end
        redis.call('set', KEYS[5], 0, 'px', ARGV[4])
        return 0
    end
    if longest > 0 then
        redis.call('pexpire', KEYS[1], longest)
        redis.call('set', KEYS[5], 0, 'px', ARGV[4])
        return 0
    end
end

redis.call('del', KEYS[1])
redis.call(ARGV[3], KEYS[2], ARGV[1])
redis.call('set', KEYS[5], 1, 'px', ARGV[4])
return 1
