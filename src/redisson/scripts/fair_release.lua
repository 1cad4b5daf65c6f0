-- SPDX-License-Identifier: BSD-3-Clause
-- Fair lock release with Redisson 4.x's unlock latch.
-- KEYS[1] lock hash, KEYS[2] queue list, KEYS[3] timeout zset,
-- KEYS[4] channel base prefix_name("redisson_lock__channel", name),
-- KEYS[5] unlock latch key
-- ARGV[1] unlock message (0), ARGV[2] lease ms, ARGV[3] owner field,
-- ARGV[4] now ms from the caller's clock (fallback only, as in fair_acquire),
-- ARGV[5] publish command, ARGV[6] latch TTL ms
-- Returns nil when the owner does not hold the lock (nothing changed), 0 when a
-- re-entrant hold remains, 1 when released or when the lock was already gone.
-- On 1 the message goes to the first live waiter only, on its own channel
-- KEYS[4] .. ':' .. <its owner field>. A retried release with the same latch key
-- gets the first answer again (0 or 1; as in Redisson, nil is not latched).
--
-- `now` (for dropping waiters whose window has passed, so the wake-up reaches a
-- live one) is Redis TIME, like fair_acquire: see the reasoning there.
local latched = redis.call('get', KEYS[5])
if latched ~= false then
    return tonumber(latched)
end

local function usable(key, kind)
    local t = redis.call('type', key)['ok']
    return t == 'none' or t == kind
end
if not (usable(KEYS[1], 'hash') and usable(KEYS[2], 'list') and usable(KEYS[3], 'zset')) then
    return redis.error_reply('WRONGTYPE Operation against a key holding the wrong kind of value')
end

local function now_ms()
    if redis.replicate_commands ~= nil and redis.replicate_commands() then
        local t = redis.call('time')
        return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
    end
    return tonumber(ARGV[4])
end
local now = now_ms()

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

local function wake_head()
    local head = redis.call('lindex', KEYS[2], 0)
    if head ~= false then
        redis.call(ARGV[5], KEYS[4] .. ':' .. head, ARGV[1])
    end
end

-- Already gone (its lease ran out): released all the same, and latched like
-- any release, so a retry answers 1 again whoever holds the lock by then.
if redis.call('exists', KEYS[1]) == 0 then
    wake_head()
    redis.call('set', KEYS[5], 1, 'px', ARGV[6])
    return 1
end
if redis.call('hexists', KEYS[1], ARGV[3]) == 0 then
    return nil
end
local remaining = redis.call('hincrby', KEYS[1], ARGV[3], -1)
if remaining > 0 then
    redis.call('pexpire', KEYS[1], ARGV[2])
    redis.call('set', KEYS[5], 0, 'px', ARGV[6])
    return 0
end
redis.call('del', KEYS[1])
redis.call('set', KEYS[5], 1, 'px', ARGV[6])
wake_head()
return 1
