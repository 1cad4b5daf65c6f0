-- SPDX-License-Identifier: BSD-3-Clause
-- A read-only snapshot of one lock for `edgelock status` and edgelock_lock_info():
-- what Redisson keeps for it, read in one step so the parts agree.
-- KEYS[1] lock hash, KEYS[2] fair queue (list), KEYS[3] fair deadlines (zset),
-- KEYS[4] fencing token (string)
-- ARGV[1] the lock's channel, ARGV[2] the read-write lock's channel, ARGV[3]
-- 'numsub' or 'shardnumsub' (a cluster's sharded pub/sub)
-- Returns {type of KEYS[1], HGETALL or {}, PTTL, queue or {}, deadlines WITHSCORES
-- or {}, token or false, TIME, subscribers of both channels}. A queue, deadline
-- or token key of another type reads as absent: it is not this lock's.
local function typ(k)
    return redis.call('type', k)['ok']
end
local t = typ(KEYS[1])
local fields = {}
if t == 'hash' then
    fields = redis.call('hgetall', KEYS[1])
end
local queue = {}
if typ(KEYS[2]) == 'list' then
    queue = redis.call('lrange', KEYS[2], 0, -1)
end
local deadlines = {}
if typ(KEYS[3]) == 'zset' then
    deadlines = redis.call('zrange', KEYS[3], 0, -1, 'WITHSCORES')
end
local token = false
if typ(KEYS[4]) == 'string' then
    token = redis.call('get', KEYS[4])
end
-- Waiting clients listen on the channel (one subscription per client, or
-- per JVM with Redisson), holders do not: a lock's waiters, but for a fair
-- lock's, which listen on channels of their own (its queue counts them).
local numsub = redis.call('pubsub', ARGV[3], ARGV[1], ARGV[2])
return {t, fields, redis.call('pttl', KEYS[1]), queue, deadlines, token, redis.call('time'),
        numsub[2] + numsub[4]}
