#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# flock(1)'s habits: -w SECONDS (fractional), -n, -E CODE, -c STRING (before
# NAME or right after it), -s/-x (the read/write lock of one read-write lock),
# -V; durations with units in the long options, the millisecond forms as
# before. Outcomes only: no assertion depends on how fast anything ran.
source "$(dirname "$0")/lib.sh" "$@"
start_redis

expect_rc 0 "-V" "$EDGELOCK" -V
check "... prints the version" grep -qE "^edgelock [0-9]+\.[0-9]+\.[0-9]+ " "$OUT"

# --- -c STRING -----------------------------------------------------------------
expect_rc 3 "-c STRING runs through sh -c, its status passes" "$EDGELOCK" run -c 'echo "in $0"; exit 3' c1
check "... via /bin/sh" grep -qx "in /bin/sh" "$OUT"
expect_rc 0 "flock's form: NAME -c STRING" "$EDGELOCK" run c2 -c 'test -n "$HOME"'
check "the lock was released after -c" lock_free c2
expect_rc 64 "-c and a CMD" "$EDGELOCK" run -c 'true' c3 -- true
expect_rc 64 "-c twice" "$EDGELOCK" run -c 'true' c4 -c 'false'
expect_rc 64 "-c without STRING" "$EDGELOCK" run c5 -c

# --- a held lock: -n, -w, -E, units in --wait ----------------------------------
"$EDGELOCK" run --watchdog 3000 busy -- sleep 600 &
holder=$!
wait_for "background holder takes 'busy'" "$HANG_MS" lock_held busy
expect_rc 75 "-n on a held lock" "$EDGELOCK" run -n busy -- true
expect_rc 75 "--nonblock" "$EDGELOCK" run --nonblock busy -- true
expect_rc 9 "-n -E 9: the conflict exit code" "$EDGELOCK" run -n -E 9 busy -- true
expect_rc 0 "-E 0 (a skipped turn is success)" "$EDGELOCK" run -n -E 0 busy -- true
expect_rc 5 "--conflict-exit-code=5" "$EDGELOCK" run -n --conflict-exit-code=5 busy -- true
t0=$(now_ms)
expect_rc 75 "-w 0.3 on a held lock" "$EDGELOCK" run -w 0.3 busy -- true
t1=$(now_ms)
check "... gave up after the wait, not before ($((t1 - t0)) ms)" [ $((t1 - t0)) -ge 300 ]
check "... 0.3 s is 300 ms" grep -q "not acquired within 300 ms" "$ERR"
expect_rc 75 "--timeout 0.25" "$EDGELOCK" run --timeout 0.25 busy -- true
check "... 250 ms" grep -q "not acquired within 250 ms" "$ERR"
expect_rc 75 "--wait 200ms" "$EDGELOCK" run --wait 200ms busy -- true
check "... 200 ms" grep -q "not acquired within 200 ms" "$ERR"
expect_rc 75 "--wait 0.2s" "$EDGELOCK" run --wait 0.2s busy -- true
check "... 200 ms" grep -q "not acquired within 200 ms" "$ERR"
expect_rc 75 "--wait 150 (milliseconds, as before)" "$EDGELOCK" run --wait 150 busy -- true
check "... 150 ms" grep -q "not acquired within 150 ms" "$ERR"
kill -TERM "$holder"
wait "$holder"
wait_for "the holder released 'busy'" "$HANG_MS" lock_free busy

# --- -s / -x ---------------------------------------------------------------------
"$EDGELOCK" run -s shared -- sleep 600 &
reader=$!
wait_for "a reader holds 'shared'" "$HANG_MS" lock_held shared
check "... as the read lock of a read-write lock" [ "$(rcli hget shared mode)" = read ]
expect_rc 0 "a second reader (-s) shares it" "$EDGELOCK" run -n -s shared -- true
expect_rc 0 "--shared too" "$EDGELOCK" run -n --shared shared -- true
expect_rc 75 "a writer (-x) is excluded" "$EDGELOCK" run -n -x shared -- true
expect_rc 75 "--exclusive too" "$EDGELOCK" run -n --exclusive shared -- true
expect_rc 75 "and so is --write" "$EDGELOCK" run -n --write shared -- true
kill -TERM "$reader"
wait "$reader"
wait_for "the reader released 'shared'" "$HANG_MS" lock_free shared
expect_rc 64 "-s with -x" "$EDGELOCK" run -s -x both -- true
expect_rc 64 "-x with --fair" "$EDGELOCK" run -x --fair both -- true
expect_rc 0 "-s with --read (the same lock)" "$EDGELOCK" run -s --read both -- true

# --- durations with units --------------------------------------------------------
expect_rc 0 "--lease 10s" "$EDGELOCK" run --lease 10s dur -- sh -c "redis-cli -p $REDIS_PORT pttl dur > $TMP/pttl"
check "... a lease of at most 10 000 ms, more than 5 000 left" bash -c "v=\$(cat $TMP/pttl); [ \$v -le 10000 ] && [ \$v -gt 5000 ]"
expect_rc 0 "--watchdog 1m" "$EDGELOCK" run --watchdog 1m dur -- sh -c "redis-cli -p $REDIS_PORT pttl dur > $TMP/pttl"
check "... a watchdog lease of 60 000 ms" bash -c "v=\$(cat $TMP/pttl); [ \$v -le 60000 ] && [ \$v -gt 50000 ]"
expect_rc 0 "--kill-after 2s --lease 1500ms" "$EDGELOCK" run --kill-after 2s --lease 1500ms dur -- true
for bad in 5x 1.5ms0 s 10S -1s 1..5s "1 s" 0.s 99999999999999999999h; do
    expect_rc 64 "--wait '$bad' is refused" "$EDGELOCK" run --wait "$bad" dur -- true
done
expect_rc 64 "--lease 0s is refused (> 0)" "$EDGELOCK" run --lease 0s dur -- true
expect_rc 64 "--watchdog 29ms is refused (>= 30 ms)" "$EDGELOCK" run --watchdog 29ms dur -- true
expect_rc 64 "-w abc" "$EDGELOCK" run -w abc dur -- true
expect_rc 64 "-w 1s (seconds are bare, as flock's)" "$EDGELOCK" run -w 1s dur -- true
expect_rc 64 "-E 256" "$EDGELOCK" run -E 256 dur -- true
expect_rc 64 "-E -1" "$EDGELOCK" run -E -1 dur -- true
check "nothing was left in Redis" [ "$(rcli dbsize)" = 0 ]
finish
