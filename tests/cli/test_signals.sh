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

# A signal ignored when `run` starts stays ignored (nohup, `trap '' HUP`): the
# waiter is not ended by it, takes the lock when the holder is done, and CMD
# starts with it ignored too (POSIX exec keeps SIG_IGN).
# hup_ignored_unblocked PID: HUP (bit 0 of the masks) is ignored and blocked
# in none of PID's threads, so the kernel drops it when it is sent; a blocked
# one would be queued and reach sigwaitinfo() whatever its disposition. (The
# main thread's mask reads 0 for the set it is in sigwaitinfo() for: the
# other threads, created with the same mask, show it.)
hup_ignored_unblocked() {
    local t ign blk
    ign=$(sed -n 's/^SigIgn:\t//p' "/proc/$1/status") || return 1
    [ $((0x$ign & 1)) = 1 ] || return 1
    for t in /proc/"$1"/task/*; do
        blk=$(sed -n 's/^SigBlk:\t//p' "$t/status") || return 1
        [ $((0x$blk & 1)) = 0 ] || return 1
    done
}
rm -f "$TMP/started" "$TMP/release" "$TMP/ign-ran"
"$EDGELOCK" run --watchdog 3000 sig-ign -- sh -c 'echo x >"$1/started"; while [ ! -e "$1/release" ]; do sleep 0.02; done' sh "$TMP" &
holder=$!
wait_for "holder started (ignored HUP)" "$HANG_MS" test -e "$TMP/started"
# CMD sends itself SIGHUP: it gets as far as `touch` only if HUP is ignored.
(trap '' HUP; exec "$EDGELOCK" run --wait "$HANG_MS" sig-ign -- sh -c 'kill -HUP $$; touch "$1/ign-ran"' sh "$TMP") 2>"$TMP/ign.err" &
waiter=$!
wait_for "the waiter with HUP ignored waits" "$HANG_MS" subscribed 'redisson_lock__channel:{sig-ign}'
check "the waiter has HUP ignored, blocked in none of its threads" hup_ignored_unblocked "$waiter"
kill -HUP "$waiter"
# A build that took the HUP would give up within a round trip to Redis; a
# correct one is unaffected however long this pause is.
sleep 0.5
check "SIGHUP did not end the waiter" kill -0 "$waiter"
check "... which still waits" subscribed 'redisson_lock__channel:{sig-ign}'
check "... and has not run CMD" [ ! -e "$TMP/ign-ran" ]
touch "$TMP/release"
wait "$holder"
check "holder (ignored HUP) finished with 0" [ $? -eq 0 ]
wait "$waiter"
rc=$?
check "the waiter then took the lock and CMD exited 0 (got $rc)" [ "$rc" -eq 0 ]
check "... CMD ran, HUP still ignored in it" [ -e "$TMP/ign-ran" ]
check "... and nothing was said about SIGHUP" [ ! -s "$TMP/ign.err" ]
check "lock free after the waiter (ignored HUP)" lock_free sig-ign

# The same for `latch await`.
expect_rc 0 "latch set for the ignored-HUP await" "$EDGELOCK" latch set sig-ign-latch 1
(trap '' HUP; exec "$EDGELOCK" latch await sig-ign-latch --wait "$HANG_MS") 2>"$TMP/ign-latch.err" &
waiter=$!
wait_for "the await with HUP ignored listens" "$HANG_MS" subscribed 'redisson_countdownlatch__channel__{sig-ign-latch}'
check "the await has HUP ignored, blocked in none of its threads" hup_ignored_unblocked "$waiter"
kill -HUP "$waiter"
sleep 0.5 # as above: only lets a build that took the HUP show it
check "SIGHUP did not end latch await" kill -0 "$waiter"
expect_rc 0 "latch countdown opens it" "$EDGELOCK" latch countdown sig-ign-latch
wait "$waiter"
rc=$?
check "latch await with HUP ignored exited 0 when the latch opened (got $rc)" [ "$rc" -eq 0 ]
check "... and said nothing about SIGHUP" [ ! -s "$TMP/ign-latch.err" ]

finish
