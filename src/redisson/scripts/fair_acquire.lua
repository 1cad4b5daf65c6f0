-- SPDX-License-Identifier: BSD-3-Clause
-- Fair lock acquire (Redisson RFairLock): FIFO queue with per-waiter deadlines.
-- KEYS[1] lock hash, KEYS[2] queue list prefix_name("redisson_lock_queue", name),
-- KEYS[3] timeout zset prefix_name("redisson_lock_timeout", name)
-- ARGV[1] lease ms, ARGV[2] owner field, ARGV[3] wait ms (the caller's queue
-- window: its own wait, or fair_wait_ms without one, Redisson's default
-- 300000), ARGV[4] now ms from the caller's clock
-- (used only when the server clock cannot be read, see below)
-- Returns nil when acquired or re-entered, otherwise the ms to wait before
-- trying again (>= 0); the caller is then queued (RPUSH) with its deadline in
-- the zset, and keeps its place when it calls again. A caller already queued
-- gets the holder's PTTL, 0 when there is none (a holder without TTL, or a
-- free lock the queue's head has yet to take).
--
-- Clock: Redisson computes deadlines from each client's own clock, so clients
-- whose clocks disagree drop live waiters early (clock ahead) or keep dead ones
-- queued (clock behind): redisson issues #1104, #2099, #3004, #3730. This script
-- takes `now` from Redis TIME, one clock for every edgelock client. Since Redis
-- 5 a script replicates its effects (ZADD with the computed score), not its
-- text, and Redis 7 knows nothing else, so TIME followed by writes is allowed
-- and replicas get the same deadlines. redis.replicate_commands() reports
-- that: it switches effect replication on (3.2 to 4.x, must precede any write)
-- or is a no-op returning true (5 and later). Only where it is missing (Redis
-- before 3.2) does the script fall back to ARGV[4]. Deadlines stay ms since the
-- epoch, as Redisson stores them, so Java clients read the same format.
--
-- A key of another type at KEYS[1..3] is refused with WRONGTYPE before anything
-- is written.
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

local lease = ARGV[1]
local owner = ARGV[2]
local wait = tonumber(ARGV[3])
local now = now_ms()

-- Waiters whose window has passed are gone (crashed or gave up without saying
-- so); a head without a deadline is inconsistent and is dropped as well.
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

if redis.call('exists', KEYS[1]) == 0 then
    local head = redis.call('lindex', KEYS[2], 0)
    if head == false or head == owner then
        if head == owner then
            -- Everyone behind moves up one place: one window less to wait.
            redis.call('lpop', KEYS[2])
            redis.call('zrem', KEYS[3], owner)
            local rest = redis.call('zrange', KEYS[3], 0, -1)
            for i = 1, #rest do
                redis.call('zincrby', KEYS[3], -wait, rest[i])
            end
        end
        redis.call('hset', KEYS[1], owner, 1)
        redis.call('pexpire', KEYS[1], lease)
        return nil
    end
end

if redis.call('hexists', KEYS[1], owner) == 1 then
    redis.call('hincrby', KEYS[1], owner, 1)
    redis.call('pexpire', KEYS[1], lease)
    return nil
end

-- Already queued: ask again when the holder's lease runs out, as Redisson
-- answers. Its deadline minus one window (Redisson's commented-out formula)
-- is the holder's first lease only: once that has passed it says 0 while the
-- holder's watchdog keeps renewing, and the waiter would poll.
if redis.call('zscore', KEYS[3], owner) ~= false then
    return math.max(redis.call('pttl', KEYS[1]), 0)
end

-- Queue behind the last waiter, or behind the holder's lease.
local ttl
local last = redis.call('lindex', KEYS[2], -1)
local last_deadline = false
if last ~= false then
    last_deadline = redis.call('zscore', KEYS[3], last)
end
if last_deadline ~= false then
    ttl = tonumber(last_deadline) - now
else
    ttl = redis.call('pttl', KEYS[1])
end
ttl = math.max(ttl, 0)
if redis.call('zadd', KEYS[3], ttl + wait + now, owner) == 1 then
    redis.call('rpush', KEYS[2], owner)
end
return ttl
