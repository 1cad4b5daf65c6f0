-- SPDX-License-Identifier: BSD-3-Clause
-- A fair lock waiter gives up (its wait timed out, it was cancelled or freed).
-- KEYS[1] lock hash, KEYS[2] queue list, KEYS[3] timeout zset,
-- KEYS[4] channel base prefix_name("redisson_lock__channel", name)
-- ARGV[1] owner field, ARGV[2] wait ms (the queue window it was queued with),
-- ARGV[3] publish command
-- Returns 1 when the owner was in the queue (now removed), 0 otherwise. Its
-- zset entry is removed either way. Everyone queued behind it moves up one
-- place, so their deadlines drop by one window; those ahead keep theirs. When
-- it was the head and the lock is free, the next head is sent "0" on its own
-- channel KEYS[4] .. ':' .. <owner>, since the release that would have woken it
-- already went to the one leaving.
-- Needs no clock. A queue or zset of another type is refused with WRONGTYPE
-- before anything is written; the lock hash is only tested for existence.
local function usable(key, kind)
    local t = redis.call('type', key)['ok']
    return t == 'none' or t == kind
end
if not (usable(KEYS[2], 'list') and usable(KEYS[3], 'zset')) then
    return redis.error_reply('WRONGTYPE Operation against a key holding the wrong kind of value')
end

local owner = ARGV[1]
local wait = tonumber(ARGV[2])
local queue = redis.call('lrange', KEYS[2], 0, -1)
local pos = nil
for i = 1, #queue do
    if queue[i] == owner then
        pos = i
        break
    end
end
redis.call('zrem', KEYS[3], owner)
if pos == nil then
    return 0
end

for i = pos + 1, #queue do
    if queue[i] ~= owner and redis.call('zscore', KEYS[3], queue[i]) ~= false then
        redis.call('zincrby', KEYS[3], -wait, queue[i])
    end
end
redis.call('lrem', KEYS[2], 0, owner)

if pos == 1 and redis.call('exists', KEYS[1]) == 0 then
    local head = redis.call('lindex', KEYS[2], 0)
    if head ~= false then
        redis.call(ARGV[3], KEYS[4] .. ':' .. head, '0')
    end
end
return 1
