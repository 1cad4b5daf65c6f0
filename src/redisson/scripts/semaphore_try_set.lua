-- SPDX-License-Identifier: BSD-3-Clause
-- Size a semaphore that does not exist yet (Redisson trySetPermits(n), the
-- same script for RSemaphore and RPermitExpirableSemaphore).
-- KEYS[1] the counter, KEYS[2] channel redisson_sc:{name}
-- ARGV[1] permits, ARGV[2] publish command
-- Returns 1 when set (and published), 0 when the counter exists: unchanged.
if redis.call('get', KEYS[1]) == false then
    redis.call('set', KEYS[1], ARGV[1])
    redis.call(ARGV[2], KEYS[2], ARGV[1])
    return 1
end
return 0
