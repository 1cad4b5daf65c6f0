-- SPDX-License-Identifier: BSD-3-Clause
-- Is one side of a read-write lock held (Redisson RReadWriteLock:
-- readLock().isLocked(), writeLock().isLocked())?
-- KEYS[1] lock hash
-- ARGV[1] the handle's side, "read" or "write"
-- Returns 1 or 0. The write side is held while mode=write. The read side is
-- held while mode=read, or mode=write with more fields than the mode and the
-- writer's own: the writer also holds read locks. So while only readers hold
-- it the write side says 0, as Java's writeLock().isLocked() does. A hash
-- without a mode (not a read-write lock) is neither side's: 0, as in Redisson.
-- A key of another type fails with WRONGTYPE.
local mode = redis.call('hget', KEYS[1], 'mode')
if ARGV[1] == 'write' then
    return mode == 'write' and 1 or 0
end
if mode == 'read' or (mode == 'write' and redis.call('hlen', KEYS[1]) > 2) then
    return 1
end
return 0
