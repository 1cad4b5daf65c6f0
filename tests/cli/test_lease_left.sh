#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# A fixed --lease begins when the acquire is sent, not when its answer comes
# back: `run` stops CMD at the lease's end by that count, tells CMD what is
# left (EDGELOCK_VALIDITY_MS) and does not start CMD when nothing is. Against
# a Redis whose answers come back 400 ms late (tests/cli/slow_redis.py
# late-replies), as on a slow WAN link: before, `run` counted the lease from
# the answer and let CMD run 400 ms past it, while another holder could
# already have the lock.
#
# Only bounds that delays can only make safer are asserted: what is left is
# at most the lease minus the way back (a slow machine leaves less).
source "$(dirname "$0")/lib.sh" "$@"
SLOW_REDIS=$(cd "$(dirname "$0")" && pwd)/slow_redis.py
start_redis
python3 "$SLOW_REDIS" late-replies 400 "$REDIS_PORT" >"$TMP/proxy.log" 2>&1 &
wait_for "slow_redis.py late-replies listening" "$HANG_MS" test -s "$TMP/proxy.log" || exit 1
LATE=redis://127.0.0.1:$(head -n 1 "$TMP/proxy.log")
EL() { timeout -k 5 "$HANG_S" "$EDGELOCK" --url "$LATE" "$@"; }
print_left='echo "$EDGELOCK_VALIDITY_MS" >"$1/left"'
between() { [ "$1" -ge "$2" ] 2>/dev/null && [ "$1" -le "$3" ]; } # between N LOW HIGH

# --- one lock: CMD gets what is left of the lease ------------------------------------
expect_rc 0 "fixed lease, answers 400 ms late" EL run --lease 3000 ll-one -- sh -c "$print_left" sh "$TMP"
left=$(cat "$TMP/left" 2>/dev/null || echo none)
check "... CMD is told $left ms are left: more than 0, at most 3000 - 400" \
    between "$left" 1 2600

# --- a MultiLock: the least of its members ------------------------------------------------
rm -f "$TMP/left"
expect_rc 0 "MultiLock with a fixed lease" EL run --multi ll-m2,ll-m3 --lease 3000 ll-m1 -- \
    sh -c "$print_left" sh "$TMP"
left=$(cat "$TMP/left" 2>/dev/null || echo none)
check "... CMD is told $left ms are left: at most 3000 - 400" between "$left" 1 2600

# --- -v says it too --------------------------------------------------------------------
expect_rc 0 "-v" EL -v run --lease 3000 ll-v -- true
check "... says how much of the lease is left" grep -q "fixed lease 3000 ms, [0-9]* ms of it left" "$ERR"

# --- a lease shorter than the way back: CMD does not run ----------------------------------
rm -f "$TMP/ran"
expect_rc 70 "a 300 ms lease whose answer takes 400 ms" EL run --lease 300 ll-short -- touch "$TMP/ran"
check "... CMD did not run" [ ! -e "$TMP/ran" ]
check "... stderr says the lease was over when the answer came" \
    grep -q "fixed lease of 300 ms was over when the acquire's answer came" "$ERR"
check "... nothing is held" [ "$(rcli exists ll-short)" = 0 ]

# --- CMD is stopped by the lease counted from the send: SIGTERM (exit 70) --------------------
expect_rc 70 "CMD outlives a 1500 ms lease" EL run --lease 1500 --kill-after 100 ll-kill -- sleep 30
check "... stderr says the lease ran out" grep -q "fixed lease of 1500 ms on lock 'll-kill' ran out" "$ERR"

finish
