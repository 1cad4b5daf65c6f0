-- SPDX-License-Identifier: BSD-3-Clause
-- Fair lock force release: delete the lock whoever holds it and wake the first
-- live waiter on its own channel.
-- KEYS[1] lock hash, KEYS[2] queue list, KEYS[3] timeout zset,
-- KEYS[4] channel base prefix_name("redisson_lock__channel", name)
-- ARGV[1] unlock message (0), ARGV[2] publish command
-- Returns 1 when a lock was deleted (the head of the queue, if any, gets
-- ARGV[1] on KEYS[4] .. ':' .. <owner>), 0 when there was none. A key of another
-- type is refused with WRONGTYPE and left alone (Redisson would delete it).
-- Waiters whose window has passed are dropped first, with `now` from Redis TIME
-- as in fair_acquire (there is no caller clock argument; without a usable TIME,
-- on Redis before 3.2, none are dropped here and the next acquire does it).
local function usable(key, kind)
    local t = redis.call('type', key)['ok']
    return t == 'none' or t == kind
end
if not (usable(KEYS[1], 'hash') and usable(KEYS[2], 'list') and usable(KEYS[3], 'zset')) then
    return redis.error_reply('WRONGTYPE Operation against a key holding the wrong kind of value')
end

if redis.replicate_commands ~= nil and redis.replicate_commands() then
    local t = redis.call('time')
    local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
    while true do
        local head = redis.call('lindex', KEYS[2], 0)
        if head == false then
            break
        end
        local deadline = tonumber(redis.call('zscore', KEYS[3], head))
        if deadline ~= nil and deadline > now then
            break
        end
        redis.call('lpop', KEYS[2])
        redis.call('zrem', KEYS[3], head)
    end
end

if redis.call('del', KEYS[1]) == 1 then
    local head = redis.call('lindex', KEYS[2], 0)
    if head ~= false then
        redis.call(ARGV[2], KEYS[4] .. ':' .. head, ARGV[1])
    end
    return 1
end
return 0
