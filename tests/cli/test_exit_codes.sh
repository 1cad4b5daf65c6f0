#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Every exit code of `edgelock run` except the lost-lock one (test_lost.sh):
# CMD's status, 128+N, 75, 69, 64, 76, 126, 127.
source "$(dirname "$0")/lib.sh" "$@"
start_redis

# --- CMD's own status, 128+N ------------------------------------------------
expect_rc 0 "CMD succeeds" "$EDGELOCK" run a -- true
expect_rc 3 "CMD's exit status passes through" "$EDGELOCK" run a -- sh -c 'exit 3'
expect_rc 137 "CMD killed by SIGKILL gives 128+9" "$EDGELOCK" run a -- sh -c 'kill -KILL $$'
expect_rc 140 "CMD killed by SIGUSR2 gives 128+12" "$EDGELOCK" run a -- sh -c 'kill -USR2 $$'
check "the lock is free after CMD was killed" lock_free a
expect_rc 0 "CMD's arguments are passed as given" "$EDGELOCK" run a -- sh -c '[ "$1" = "x y" ] && [ "$2" = "" ]' sh "x y" ""
expect_rc 0 "'--' is optional" "$EDGELOCK" run a true
expect_rc 0 "CMD sees the lock held while it runs" "$EDGELOCK" run a -- redis-cli -p "$REDIS_PORT" exists a
check "... (it printed 1)" grep -qx 1 "$OUT"
check "... and it is free afterwards" lock_free a
# CMD inherits edgelock's file descriptors, but not the library's Redis sockets.
base=$(sh -c 'ls -l /proc/$$/fd | grep socket: | wc -l')
expect_rc 0 "CMD's descriptors" "$EDGELOCK" run a -- sh -c 'ls -l /proc/$$/fd | grep socket: | wc -l'
check "... hold no Redis socket ($(cat "$OUT") sockets, $base outside edgelock)" [ "$(cat "$OUT")" -eq "$base" ]
expect_rc 0 "an inherited descriptor (3) reaches CMD" "$EDGELOCK" run a -- sh -c 'echo via-fd3 >&3' 3>"$TMP/fd3"
check "... and CMD wrote through it" grep -qx via-fd3 "$TMP/fd3"

# --- 75: not acquired within --wait ------------------------------------------
# The holder's CMD runs until it is stopped, however long the checks take.
"$EDGELOCK" run --watchdog 3000 busy -- sleep 600 &
holder=$!
wait_for "background holder takes 'busy'" "$HANG_MS" lock_held busy
expect_rc 75 "--wait 0 on a held lock is one try" "$EDGELOCK" run --wait 0 busy -- true
t0=$(now_ms)
expect_rc 75 "--wait 300 on a held lock" "$EDGELOCK" run --wait 300 busy -- true
t1=$(now_ms)
check "... gave up after the wait, not before ($((t1 - t0)) ms)" [ $((t1 - t0)) -ge 300 ]
check "... and said so on stderr" grep -q "not acquired within 300 ms" "$ERR"
expect_rc 75 "--wait=200 form" "$EDGELOCK" run --wait=200 busy -- true
kill -TERM "$holder"
wait "$holder"
check "holder ended by SIGTERM reports 143" [ $? -eq 143 ]
check "holder released the lock" lock_free busy

# --- 69: Redis unreachable, reported, never a hang --------------------------------
# The cases run side by side: each may take the full connect timeout (3 s). The
# bound below only catches a hang: how fast the report comes depends on the
# machine's load.
timed() { # timed TAG COMMAND...: exit status and elapsed ms into $TMP/TAG.*
    local tag=$1 t0
    shift
    t0=$(now_ms)
    "$@" >"$TMP/$tag.out" 2>"$TMP/$tag.err"
    echo "$? $(($(now_ms) - t0))" >"$TMP/$tag.rc"
}
subs=("run x -- touch $TMP/ran" "run --wait 0 x -- touch $TMP/ran" "status x" "status x --json" "unlock --force x")
pids=()
for i in "${!subs[@]}"; do
    # shellcheck disable=SC2086
    timed "u$i" "$EDGELOCK" --url redis://127.0.0.1:1 ${subs[$i]} &
    pids+=($!)
done
timed upw env EDGELOCK_URL=redis://u:hunter2pw@127.0.0.1:1 "$EDGELOCK" run x -- true &
pids+=($!)
wait "${pids[@]}"
for i in "${!subs[@]}" pw; do
    tag=u$i
    read -r rc ms <"$TMP/$tag.rc"
    what="run with a password in EDGELOCK_URL"
    [ "$i" = pw ] || what=${subs[$i]}
    check "unreachable Redis: $what -> exit $rc (want 69)" [ "$rc" -eq 69 ]
    check "... reported, not hung ($ms ms < $HANG_MS)" [ "$ms" -lt "$HANG_MS" ]
    check "... says so on stderr" grep -q "cannot reach Redis" "$TMP/$tag.err"
done
check "the command did not run" [ ! -e "$TMP/ran" ]
check "the password is not shown" bash -c "! grep -q hunter2pw '$TMP/upw.out' '$TMP/upw.err'"
check "the host is shown, credentials masked" grep -q "redis://\*\*\*@127.0.0.1:1" "$TMP/upw.err"

# --- 64: bad usage -------------------------------------------------------------
expect_rc 64 "no arguments" "$EDGELOCK"
expect_rc 64 "unknown command" "$EDGELOCK" frobnicate x
expect_rc 64 "run without NAME" "$EDGELOCK" run
expect_rc 64 "run without CMD" "$EDGELOCK" run a
expect_rc 64 "run without CMD after --" "$EDGELOCK" run a --
expect_rc 64 "--wait without a number" "$EDGELOCK" run --wait
expect_rc 64 "--wait not a number" "$EDGELOCK" run --wait soon a -- true
expect_rc 64 "--wait negative" "$EDGELOCK" run --wait -1 a -- true
expect_rc 64 "--lease 0" "$EDGELOCK" run --lease 0 a -- true
expect_rc 64 "--watchdog below 30" "$EDGELOCK" run --watchdog 29 a -- true
expect_rc 64 "--lease and --watchdog together" "$EDGELOCK" run --lease 1000 --watchdog 1000 a -- true
expect_rc 64 "unknown run option" "$EDGELOCK" run --frob a -- true
expect_rc 64 "option after NAME" "$EDGELOCK" run a --wait 5 -- true
expect_rc 64 "empty NAME" "$EDGELOCK" run "" -- true
expect_rc 64 "status without NAME" "$EDGELOCK" status
expect_rc 64 "status with two names" "$EDGELOCK" status a b
expect_rc 64 "unlock without --force" "$EDGELOCK" unlock a
expect_rc 64 "URL of another scheme" "$EDGELOCK" --url http://127.0.0.1:6379 status a
expect_rc 64 "URL with a bad port" "$EDGELOCK" --url redis://127.0.0.1:99999 status a
expect_rc 64 "bad URL with a password" "$EDGELOCK" --url "redis://:hunter2pw@127.0.0.1:port" run a -- true
check "... the password is not shown" bash -c "! grep -q hunter2pw '$OUT' '$ERR'"
check "usage errors name the problem on stderr" grep -q "edgelock: " "$ERR"

# --- --help documents everything, exit 0 ----------------------------------------
expect_rc 0 "--help" "$EDGELOCK" --help
for word in "--wait" "--lease" "--watchdog" "--kill-after" "--json" "--force" "EDGELOCK_URL" " 64 " " 69 " " 70 " " 75 " " 77 " "128+N"; do
    check "--help mentions '$word'" grep -q -- "$word" "$OUT"
done
expect_rc 0 "run --help" "$EDGELOCK" run --help
expect_rc 0 "--version" "$EDGELOCK" --version

# --- 126 / 127: CMD cannot be run (the lock is not taken) -----------------------
expect_rc 127 "CMD not found" "$EDGELOCK" run a -- /nonexistent/command
expect_rc 127 "CMD not found in PATH" "$EDGELOCK" run a -- edgelock-no-such-command
printf '#!/bin/sh\nexit 0\n' >"$TMP/noexec"
chmod -x "$TMP/noexec"
expect_rc 126 "CMD not executable" "$EDGELOCK" run a -- "$TMP/noexec"
check "the lock was never taken" lock_free a

# --- 76: NAME holds a value that is not a lock ------------------------------------
rcli set plain-key value >/dev/null
expect_rc 76 "run on a string key" "$EDGELOCK" run --wait 0 plain-key -- true
expect_rc 76 "status on a string key" "$EDGELOCK" status plain-key
expect_rc 76 "unlock --force on a string key" "$EDGELOCK" unlock --force plain-key
check "... which is left alone" [ "$(rcli get plain-key)" = value ]

finish
