#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Lost-lock handling: when the lock goes away while CMD runs (key deleted, fixed
# lease ran out, Redis gone for a whole lease), CMD gets SIGTERM, edgelock says
# so on stderr and exits 70, whatever CMD's own status.
source "$(dirname "$0")/lib.sh" "$@"
start_redis

# CMD: says it started, then waits; on SIGTERM records it and exits 0 (so the
# 70 can only come from edgelock).
cmd_trap='trap "echo TERM >\"$1/got\"; exit 0" TERM; echo x >"$1/started"; while :; do sleep 0.05; done'

# --- the key is deleted behind a running `run` --------------------------------
rm -f "$TMP/got" "$TMP/started"
"$EDGELOCK" run --watchdog 600 lost-del -- sh -c "$cmd_trap" sh "$TMP" >"$TMP/del.out" 2>"$TMP/del.err" &
pid=$!
wait_for "CMD started" "$HANG_MS" test -e "$TMP/started"
rcli del lost-del >/dev/null
wait "$pid"
rc=$?
check "deleted key: exit $rc, want 70" [ "$rc" -eq 70 ]
check "deleted key: CMD got SIGTERM" grep -qx TERM "$TMP/got"
check "deleted key: stderr says the lock was lost" grep -q "lock 'lost-del' was lost" "$TMP/del.err"

# --- the key is deleted and someone else takes the lock ---------------------------
rm -f "$TMP/got" "$TMP/started"
"$EDGELOCK" run --watchdog 600 lost-steal -- sh -c "$cmd_trap" sh "$TMP" 2>/dev/null &
pid=$!
wait_for "CMD started" "$HANG_MS" test -e "$TMP/started"
rcli del lost-steal >/dev/null
expect_rc 0 "another run takes the deleted lock" "$EDGELOCK" run --wait 0 lost-steal -- sleep 0.5
wait "$pid"
rc=$?
check "stolen lock: first run exits $rc, want 70" [ "$rc" -eq 70 ]
check "stolen lock: CMD got SIGTERM" grep -qx TERM "$TMP/got"
check "the lock is free after both" lock_free lost-steal

# --- a fixed lease runs out while CMD still runs ----------------------------------
rm -f "$TMP/got" "$TMP/started"
expect_rc 70 "fixed lease ran out" "$EDGELOCK" run --lease 400 lost-lease -- sh -c "$cmd_trap" sh "$TMP"
check "... CMD got SIGTERM" grep -qx TERM "$TMP/got"
check "... stderr says the lease ran out" grep -q "lease of 400 ms" "$ERR"
expect_rc 0 "fixed lease long enough: CMD's status" "$EDGELOCK" run --lease 60000 lost-lease -- true
check "... and the lock is released at once" lock_free lost-lease

# --- a loss found only at release time (fixed lease: no renewal to notice it) --------
expect_rc 70 "key deleted under a fixed lease, found at release" \
    "$EDGELOCK" run --lease 60000 lost-late -- redis-cli -p "$REDIS_PORT" del lost-late
check "... stderr says so" grep -q "lock 'lost-late' was lost before the command finished" "$ERR"

# --- Redis goes away for longer than the watchdog lease ------------------------------
rm -f "$TMP/got" "$TMP/started"
"$EDGELOCK" run --watchdog 900 lost-redis -- sh -c "$cmd_trap" sh "$TMP" >"$TMP/redis.out" 2>"$TMP/redis.err" &
pid=$!
wait_for "CMD started" "$HANG_MS" test -e "$TMP/started"
stop_redis
wait "$pid"
rc=$?
check "Redis gone: exit $rc, want 70" [ "$rc" -eq 70 ]
check "Redis gone: CMD got SIGTERM" grep -qx TERM "$TMP/got"
check "Redis gone: stderr says the lock was lost" grep -q "was lost" "$TMP/redis.err"

finish
