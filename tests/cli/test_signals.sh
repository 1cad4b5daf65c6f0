#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Signal forwarding: SIGTERM/SIGINT/SIGHUP sent to `edgelock run` reach CMD and
# the lock is released when CMD ends; a signal while waiting gives up without
# taking the lock; SIGKILL of edgelock stops CMD and the lock expires with its
# lease, so a waiter gets it.
source "$(dirname "$0")/lib.sh" "$@"
# Job control: background jobs get their own process group and keep SIGINT
# (a non-interactive shell would start them with SIGINT ignored).
set -m
start_redis

# CMD: says it started, then waits; on a signal records it and exits 7.
cmd_trap='trap "echo \$0 >\"$1/got\"; exit 7" $2; echo started >"$1/started"; while :; do sleep 0.05; done'

for sig in TERM INT HUP; do
    rm -f "$TMP/got" "$TMP/started"
    "$EDGELOCK" run "sig-$sig" -- sh -c "$cmd_trap" "$sig" "$TMP" "$sig" &
    pid=$!
    wait_for "CMD started ($sig)" "$HANG_MS" test -e "$TMP/started"
    check "lock held while CMD runs ($sig)" lock_held "sig-$sig"
    kill -"$sig" "$pid"
    wait "$pid"
    rc=$?
    check "SIG$sig to edgelock reached CMD" grep -qx "$sig" "$TMP/got"
    check "edgelock exited with CMD's status after SIG$sig (got $rc, want 7)" [ "$rc" -eq 7 ]
    check "the lock was released after SIG$sig" lock_free "sig-$sig"
done

# CMD that does not handle the signal dies by it: 128+N.
rm -f "$TMP/started"
"$EDGELOCK" run sig-plain -- sh -c 'echo x >"$1/started"; exec sleep 600' sh "$TMP" &
pid=$!
wait_for "CMD started (plain)" "$HANG_MS" test -e "$TMP/started"
kill -TERM "$pid"
wait "$pid"
rc=$?
check "CMD killed by the forwarded SIGTERM gives 143 (got $rc)" [ "$rc" -eq 143 ]
check "the lock was released" lock_free sig-plain

# A signal while waiting: give up at once, never run CMD, leave the holder alone.
rm -f "$TMP/started" "$TMP/release"
"$EDGELOCK" run --watchdog 3000 sig-wait -- sh -c 'echo x >"$1/started"; while [ ! -e "$1/release" ]; do sleep 0.02; done' sh "$TMP" &
holder=$!
wait_for "holder started" "$HANG_MS" test -e "$TMP/started"
"$EDGELOCK" run sig-wait -- touch "$TMP/waiter-ran" &
waiter=$!
wait_for "the second run waits" "$HANG_MS" subscribed 'redisson_lock__channel:{sig-wait}'
kill -TERM "$waiter"
wait "$waiter"
rc=$?
check "SIGTERM while waiting exits 143 (got $rc)" [ "$rc" -eq 143 ]
check "... without running CMD" [ ! -e "$TMP/waiter-ran" ]
check "... and the holder still holds the lock" lock_held sig-wait
touch "$TMP/release"
wait "$holder"
check "holder finished with 0" [ $? -eq 0 ]
check "lock free after the holder" lock_free sig-wait

# A fair waiter given up by a signal leaves the queue at once (the wait is
# cancelled, not abandoned): the next waiter need not wait out its window.
rm -f "$TMP/started" "$TMP/release"
"$EDGELOCK" run --fair --watchdog 3000 sig-fair -- sh -c 'echo x >"$1/started"; while [ ! -e "$1/release" ]; do sleep 0.02; done' sh "$TMP" &
holder=$!
wait_for "fair holder started" "$HANG_MS" test -e "$TMP/started"
"$EDGELOCK" run --fair sig-fair -- touch "$TMP/fair-waiter-ran" &
waiter=$!
fair_queued() { [ "$(rcli llen 'redisson_lock_queue:{sig-fair}')" = 1 ]; }
wait_for "the fair waiter is queued" "$HANG_MS" fair_queued
kill -INT "$waiter"
wait "$waiter"
rc=$?
check "SIGINT while waiting on a fair lock exits 130 (got $rc)" [ "$rc" -eq 130 ]
check "... without running CMD" [ ! -e "$TMP/fair-waiter-ran" ]
check "... and its queue entry is gone" [ "$(rcli llen 'redisson_lock_queue:{sig-fair}')" = 0 ]
check "... and the holder still holds the lock" lock_held sig-fair
touch "$TMP/release"
wait "$holder"
check "fair holder finished with 0" [ $? -eq 0 ]

# SIGKILL of edgelock: CMD gets SIGTERM (parent-death signal), the lock stays
# until its watchdog lease (10 s: longer than the checks take) runs out, then a
# waiter gets it.
rm -f "$TMP/got" "$TMP/started"
"$EDGELOCK" run --watchdog 10000 sig-kill -- sh -c "$cmd_trap" TERM "$TMP" TERM &
victim=$!
wait_for "victim CMD started" "$HANG_MS" test -e "$TMP/started"
"$EDGELOCK" run --wait "$HANG_MS" sig-kill -- touch "$TMP/waiter-ran" &
waiter=$!
wait_for "the waiter waits" "$HANG_MS" subscribed 'redisson_lock__channel:{sig-kill}'
kill -KILL "$victim"
wait "$victim" 2>/dev/null
check "the killed holder's lock is still there at first" lock_held sig-kill
check "... and the waiter has not run" [ ! -e "$TMP/waiter-ran" ]
wait_for "CMD of the killed edgelock got SIGTERM" "$HANG_MS" test -e "$TMP/got"
wait "$waiter"
rc=$?
check "the waiter got the lock after the lease ran out (exit $rc)" [ "$rc" -eq 0 ]
check "... and ran its CMD" [ -e "$TMP/waiter-ran" ]
check "lock free at the end" lock_free sig-kill

finish
