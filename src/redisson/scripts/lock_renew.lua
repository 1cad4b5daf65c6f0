-- SPDX-License-Identifier: BSD-3-Clause
-- Batched watchdog renewal: one call renews many held locks.
-- KEYS[1..K] lock hashes
-- ARGV[1] lease ms, ARGV[1+i] owner field expected in KEYS[i]
-- Returns an array of K integers: 1 renewed, 0 lost (field gone or key of another
-- type; one bad key must not stop the others from being renewed).
local renewed = {}
for i = 1, #KEYS do
    local held = redis.pcall('hexists', KEYS[i], ARGV[i + 1])
    if held == 1 then
        redis.call('pexpire', KEYS[i], ARGV[1])
        renewed[i] = 1
    else
        renewed[i] = 0
    end
end
return renewed
