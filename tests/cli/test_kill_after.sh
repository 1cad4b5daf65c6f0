#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# --kill-after: a CMD that ignores the SIGTERM sent when the lock is lost gets
# SIGKILL after the grace period (default 5000 ms), and run exits 70. A signal
# forwarded to CMD (the lock still held) is never escalated.
source "$(dirname "$0")/lib.sh" "$@"
start_redis

# CMD: records its pid, records every SIGTERM and carries on; ends on its own
# only when $1/stop exists.
stubborn='echo $$ >"$1/pid"; trap "echo TERM >>\"$1/got\"" TERM; while [ ! -e "$1/stop" ]; do sleep 0.05; done'
reset() { rm -f "$TMP/pid" "$TMP/got" "$TMP/stop"; }
cmd_gone() { ! kill -0 "$(cat "$TMP/pid")" 2>/dev/null; }

# --- the key is deleted: SIGTERM, ignored, then SIGKILL ---------------------------
reset
"$EDGELOCK" run --watchdog 600 --kill-after 300 ka-del -- sh -c "$stubborn" sh "$TMP" 2>"$TMP/del.err" &
pid=$!
wait_for "CMD started" "$HANG_MS" test -s "$TMP/pid"
rcli del ka-del >/dev/null
wait "$pid"
rc=$?
check "deleted key, CMD ignores SIGTERM: exit $rc, want 70" [ "$rc" -eq 70 ]
check "... CMD was sent SIGTERM first" grep -q "was lost .*sending SIGTERM to the command" "$TMP/del.err"
check "... then SIGKILL: it is gone" cmd_gone
check "... stderr says SIGKILL was sent after 300 ms" \
    grep -q "did not end within 300 ms of SIGTERM (--kill-after); sending SIGKILL" "$TMP/del.err"

# --- a fixed lease runs out: the same ------------------------------------------------
reset
expect_rc 70 "fixed lease ran out, CMD ignores SIGTERM" \
    timeout -k 5 "$HANG_S" "$EDGELOCK" run --lease 300 --kill-after 0 ka-lease -- sh -c "$stubborn" sh "$TMP"
check "... CMD gone" cmd_gone
check "... after SIGTERM and SIGKILL" grep -q "within 0 ms of SIGTERM (--kill-after); sending SIGKILL" "$ERR"

# --- the default grace, 5000 ms ------------------------------------------------------
reset
expect_rc 70 "default --kill-after" \
    timeout -k 5 "$HANG_S" "$EDGELOCK" run --lease 300 ka-default -- sh -c "$stubborn" sh "$TMP"
check "... CMD gone" cmd_gone
check "... after 5000 ms" grep -q "within 5000 ms of SIGTERM (--kill-after); sending SIGKILL" "$ERR"

# --- a CMD that stops on SIGTERM is not killed -----------------------------------------
expect_rc 70 "CMD that ends on SIGTERM" "$EDGELOCK" run --lease 300 --kill-after 100 ka-ok -- \
    sh -c 'trap "exit 0" TERM; while :; do sleep 0.05; done'
check "... gets no SIGKILL" bash -c "! grep -q SIGKILL '$ERR'"

# --- a forwarded SIGTERM is not escalated ------------------------------------------
# The lock is still held: CMD may take its time. Only an escalation would end
# it before $TMP/stop appears (waiting longer than --kill-after first only
# makes the check meaningful on a fast machine; a slow one passes trivially).
reset
"$EDGELOCK" run --kill-after 100 ka-fwd -- sh -c "$stubborn" sh "$TMP" 2>"$TMP/fwd.err" &
pid=$!
wait_for "CMD started" "$HANG_MS" test -s "$TMP/pid"
kill -TERM "$pid"
wait_for "CMD got the forwarded SIGTERM" "$HANG_MS" test -s "$TMP/got"
sleep 1
check "a forwarded SIGTERM: CMD still runs" bash -c "kill -0 $(cat "$TMP/pid")"
touch "$TMP/stop"
wait "$pid"
rc=$?
check "... and ends on its own; run exits with its status (got $rc, want 0)" [ "$rc" -eq 0 ]
check "... no SIGKILL was sent" bash -c "! grep -q SIGKILL '$TMP/fwd.err'"

expect_rc 64 "--kill-after needs a number" "$EDGELOCK" run --kill-after x k -- true
expect_rc 64 "--kill-after is not negative" "$EDGELOCK" run --kill-after -1 k -- true

finish
