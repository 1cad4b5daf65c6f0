-- SPDX-License-Identifier: BSD-3-Clause
-- Force release: delete the lock whoever holds it and wake a waiter. Any
-- lock under the name goes (RLock.forceUnlock()); a read-write handle deletes
-- only its own side's (rw_force_release.lua).
-- KEYS[1] lock hash, KEYS[2] lock channel
-- ARGV[1] unlock message (0), ARGV[2] publish command
-- Returns 1 when a lock was deleted, 0 when there was none. A key of another
-- type is refused with WRONGTYPE and left alone (Redisson would delete it).
local kind = redis.call('type', KEYS[1])['ok']
if kind ~= 'none' and kind ~= 'hash' then
    return redis.error_reply('WRONGTYPE Operation against a key holding the wrong kind of value')
end
if redis.call('del', KEYS[1]) == 1 then
    redis.call(ARGV[2], KEYS[2], ARGV[1])
    return 1
end
return 0
