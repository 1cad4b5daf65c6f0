-- SPDX-License-Identifier: BSD-3-Clause
-- Force release of one side of a read-write lock (Redisson RReadWriteLock:
-- readLock().forceUnlock(), writeLock().forceUnlock()).
-- KEYS[1] lock hash, KEYS[2] channel prefix_name("redisson_rwlock", name)
-- ARGV[1] unlock message (read side 0, write side 1: wakes every waiter),
-- ARGV[2] publish command, ARGV[3] the side's mode, "read" or "write"
-- Returns 1 when the lock was held in that mode: deleted whoever holds it, and
-- ARGV[1] published. Otherwise 0 and nothing changed: free, a hash without a
-- mode (not a read-write lock), or held in the other mode, which must survive:
-- forcing stale readers off must not delete a writer's hold and let a reader
-- in beside it. A writer that also holds read locks is mode=write: only the
-- write side removes it. A key of another type fails with WRONGTYPE and is
-- left alone.
if redis.call('hget', KEYS[1], 'mode') == ARGV[3] then
    redis.call('del', KEYS[1])
    redis.call(ARGV[2], KEYS[2], ARGV[1])
    return 1
end
return 0
