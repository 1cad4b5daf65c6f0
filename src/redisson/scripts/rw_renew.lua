-- SPDX-License-Identifier: BSD-3-Clause
-- Batched watchdog renewal of read holds (Redisson RReadWriteLock, read side).
-- KEYS[1..K] lock hashes
-- ARGV[1] lease ms, ARGV[1+i] owner field (reader, no ":write") expected in KEYS[i]
-- Returns an array of K integers: 1 renewed, 0 lost (field gone, or a key of
-- another type: one bad key must not stop the others from being renewed).
-- Renewing KEYS[i] sets each of the owner's per-hold keys
-- suffix_name(KEYS[i], owner) .. ':rwlock_timeout:' .. n, n = 1 .. hold count,
-- to the lease, and the hash to the lease or its current TTL if that is longer
-- (another reader may hold a longer lease; one holder's renewal must not cut
-- it). suffix_name is "{name}:owner", or "name:owner" when the name already
-- contains '{', the same hash tag as the hash, so every key is in its slot.
local lease = tonumber(ARGV[1])
local renewed = {}
for i = 1, #KEYS do
    local owner = ARGV[i + 1]
    local holds = redis.pcall('hget', KEYS[i], owner)
    holds = (type(holds) == 'string') and tonumber(holds) or nil
    if holds ~= nil then
        local left = redis.call('pttl', KEYS[i])
        redis.call('pexpire', KEYS[i], math.max(left, lease))
        local prefix
        if string.find(KEYS[i], '{', 1, true) then
            prefix = KEYS[i] .. ':' .. owner
        else
            prefix = '{' .. KEYS[i] .. '}:' .. owner
        end
        for n = 1, holds do
            redis.call('pexpire', prefix .. ':rwlock_timeout:' .. n, lease)
        end
        renewed[i] = 1
    else
        renewed[i] = 0
    end
end
return renewed
