#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The composite locks of `edgelock run`: --multi (every name, all or nothing,
# on one server) and --redlock (one name on a majority of three servers; one
# stopped is survivable, two are not; CMD stopped when the validity runs out).
source "$(dirname "$0")/lib.sh" "$@"
start_redis_n 3
P1=${REDIS_PORTS[0]} P2=${REDIS_PORTS[1]} P3=${REDIS_PORTS[2]}
U1=${REDIS_URLS[0]} U2=${REDIS_URLS[1]} U3=${REDIS_URLS[2]}
export EDGELOCK_URL=$U1
REDIS_PORT=$P1 # rcli, lock_held, lock_free: the --url server
hold='touch "$1/started"; while [ ! -e "$1/release" ]; do sleep 0.02; done'
cmd_trap='trap "echo TERM >\"$1/got\"; exit 0" TERM; echo x >"$1/started"; while :; do sleep 0.05; done'

# --- --multi: every name is held while CMD runs --------------------------------------
expect_rc 0 "--multi takes NAME and the listed names" \
    "$EDGELOCK" run --multi mb,mc ma -- redis-cli -p "$P1" exists ma mb mc
check "... all three keys exist while CMD runs" grep -qx 3 "$OUT"
check "... and none afterwards" [ "$(rcli exists ma mb mc)" -eq 0 ]
# Each member is first taken with lease + wait (120 s here), and every lease is
# set to the lease (60 s) once the set is complete: a member above 60 s was
# left unaligned. (Long leases: CMD must read them before they run out.)
expect_rc 0 "--multi with a fixed lease" \
    "$EDGELOCK" run --lease 60000 --wait 60000 --multi mb,mc ma -- redis-cli -p "$P1" eval \
    'return {redis.call("pttl",KEYS[1]),redis.call("pttl",KEYS[2]),redis.call("pttl",KEYS[3])}' 3 ma mb mc
read -r -d '' t1 t2 t3 <"$OUT"
check "... and aligned: every lease set to the fixed lease, none left at lease + wait ($t1 $t2 $t3)" \
    [ "${t1:-0}" -gt 0 -a "${t1:-0}" -le 60000 -a "${t2:-0}" -gt 0 -a "${t2:-0}" -le 60000 -a "${t3:-0}" -gt 0 -a "${t3:-0}" -le 60000 ]

# --- --multi is all or nothing ----------------------------------------------------------
rm -f "$TMP/started" "$TMP/release" "$TMP/ran"
"$EDGELOCK" run mc -- sh -c "$hold" sh "$TMP" &
holder=$!
wait_for "another run holds mc" "$HANG_MS" test -e "$TMP/started"
expect_rc 75 "--multi --wait 0 when one name is held elsewhere" \
    "$EDGELOCK" run --wait 0 --multi mb,mc ma -- touch "$TMP/ran"
check "... CMD did not run" [ ! -e "$TMP/ran" ]
check "... and nothing is left held (ma, mb free)" [ "$(rcli exists ma mb)" -eq 0 ]
check "... mc still held by the other run" lock_held mc
expect_rc 75 "--multi --wait 300 when one name is held elsewhere" \
    "$EDGELOCK" run --wait 300 --multi mb,mc ma -- touch "$TMP/ran"
check "... nothing left held" [ "$(rcli exists ma mb)" -eq 0 ]
# A waiting --multi gets the set once the holder lets go.
"$EDGELOCK" run --wait "$HANG_MS" --multi mb,mc ma -- redis-cli -p "$P1" exists ma mb mc >"$TMP/multi.out" &
waiter=$!
wait_for "the --multi run waits for mc" "$HANG_MS" subscribed 'redisson_lock__channel:{mc}'
touch "$TMP/release"
wait "$holder"
wait "$waiter"
check "a waiting --multi takes the set when the other run releases (exit $?)" grep -qx 3 "$TMP/multi.out"
check "every name is free at the end" [ "$(rcli exists ma mb mc)" -eq 0 ]

# --- --multi over read locks: two such runs share them -----------------------------------
mkdir "$TMP/in"
meet='touch "$1/in/$2"; end=$(( $(date +%s) + '"$HANG_S"' ))
while [ "$(ls "$1/in" | wc -l)" -lt 2 ]; do [ "$(date +%s)" -ge "$end" ] && exit 1; sleep 0.02; done'
"$EDGELOCK" run --read --multi rb ra -- sh -c "$meet" sh "$TMP" 1 &
r1=$!
"$EDGELOCK" run --read --wait "$HANG_MS" --multi rb ra -- sh -c "$meet" sh "$TMP" 2 &
r2=$!
ok=1
wait "$r1" || ok=0
wait "$r2" || ok=0
check "two --read --multi runs held both read locks at once" [ "$ok" -eq 1 ]

# --- --multi: losing one member is losing the lock --------------------------------------
rm -f "$TMP/got" "$TMP/started"
# A lease long enough that only the deletion can lose it, whatever the load.
"$EDGELOCK" run --watchdog 3000 --multi mb,mc ma -- sh -c "$cmd_trap" sh "$TMP" 2>"$TMP/lost.err" &
pid=$!
wait_for "--multi CMD started" "$HANG_MS" test -e "$TMP/started"
rcli del mb >/dev/null
wait "$pid"
rc=$?
check "--multi, one key deleted: exit $rc, want 70" [ "$rc" -eq 70 ]
check "... CMD got SIGTERM" grep -qx TERM "$TMP/got"
check "... stderr names the lost member" grep -q "lock 'mb' of the MultiLock 'ma', 'mb', 'mc' was lost" "$TMP/lost.err"
check "... and the other members are released" [ "$(rcli exists ma mc)" -eq 0 ]

# --- --redlock: three servers up ----------------------------------------------------------
RL="--redlock $U2,$U3"
exists_everywhere='for p in "$@"; do redis-cli -p "$p" exists rl; done | tr "\n" " "; echo "$EDGELOCK_VALIDITY_MS"'
# Leases of 60 s: CMD's checks never race the validity running out.
expect_rc 0 "--redlock on three servers" \
    "$EDGELOCK" run --lease 60000 $RL rl -- sh -c "$exists_everywhere" sh "$P1" "$P2" "$P3"
read -r e1 e2 e3 validity <"$OUT"
check "... the key is on every server ($e1 $e2 $e3)" [ "$e1$e2$e3" = 111 ]
check "... EDGELOCK_VALIDITY_MS within the lease ($validity)" [ "${validity:-0}" -gt 0 -a "${validity:-0}" -lt 60000 ]
check "... released everywhere" [ "$(rcli exists rl)$(redis-cli -p "$P2" exists rl)$(redis-cli -p "$P3" exists rl)" = 000 ]

rm -f "$TMP/started" "$TMP/release"
"$EDGELOCK" run --lease 120000 $RL rl -- sh -c "$hold" sh "$TMP" &
holder=$!
wait_for "a --redlock run holds rl" "$HANG_MS" test -e "$TMP/started"
expect_rc 75 "a second --redlock run with --wait 0" "$EDGELOCK" run --wait 0 --lease 5000 $RL rl -- true
touch "$TMP/release"
wait "$holder"
check "the --redlock holder exited 0" [ $? -eq 0 ]

rm -f "$TMP/got" "$TMP/started"
expect_rc 70 "--redlock: the validity runs out while CMD runs" \
    "$EDGELOCK" run --lease 700 $RL rl -- sh -c "$cmd_trap" sh "$TMP"
check "... CMD got SIGTERM" grep -qx TERM "$TMP/got"
check "... stderr says the validity ran out" grep -q "RedLock validity of [0-9]* ms on RedLock 'rl' (3 servers) ran out" "$ERR"

# --- --redlock: one server stopped: a majority is still there ------------------------------
stop_redis_pid "${REDIS_PIDS[2]}"
t0=$(now_ms)
expect_rc 0 "--redlock with one of three servers stopped" \
    "$EDGELOCK" run --lease 60000 $RL rl -- sh -c "$exists_everywhere" sh "$P1" "$P2"
t1=$(now_ms)
read -r e1 e2 validity <"$OUT"
check "... the key is on both live servers ($e1 $e2)" [ "$e1$e2" = 11 ]
check "... a validity was passed ($validity)" [ "${validity:-0}" -gt 0 -a "${validity:-0}" -lt 60000 ]
check "... stderr names the stopped server" grep -q "RedLock server redis://127.0.0.1:$P3" "$ERR"
check "... not hung on the stopped one ($((t1 - t0)) ms < $HANG_MS)" [ $((t1 - t0)) -lt "$HANG_MS" ]
check "... released on the live servers" [ "$(rcli exists rl)$(redis-cli -p "$P2" exists rl)" = 00 ]
# Someone else holds rl on the second server: only one of three is to be had,
# not a majority. The run fails and gives back what it took on the first.
redis-cli -p "$P2" hset rl "11111111-2222-3333-4444-555555555555:1" 1 >/dev/null
redis-cli -p "$P2" pexpire rl 600000 >/dev/null
expect_rc 75 "--redlock when only one server of three can grant it" \
    "$EDGELOCK" run --wait 0 --lease 5000 $RL rl -- touch "$TMP/ran"
check "... CMD did not run" [ ! -e "$TMP/ran" ]
check "... and no half-held state: rl is free on the first server" lock_free rl
redis-cli -p "$P2" del rl >/dev/null

# --- --redlock: two servers stopped: no majority -------------------------------------------
stop_redis_pid "${REDIS_PIDS[1]}"
t0=$(now_ms)
expect_rc 69 "--redlock with two of three servers stopped" "$EDGELOCK" run --lease 5000 $RL rl -- touch "$TMP/ran"
t1=$(now_ms)
check "... CMD did not run" [ ! -e "$TMP/ran" ]
check "... not hung ($((t1 - t0)) ms < $HANG_MS)" [ $((t1 - t0)) -lt "$HANG_MS" ]
check "... stderr says a majority is missing" grep -q "a majority (2) is needed" "$ERR"
LAST=0
"$EDGELOCK" run --wait 0 --lease 5000 $RL rl -- touch "$TMP/ran" >/dev/null 2>&1 || LAST=$?
check "... with --wait 0 too: exit $LAST (75 or 69)" [ "$LAST" -eq 75 -o "$LAST" -eq 69 ]
check "... and nothing is left on the live server" lock_free rl

# --- usage ---------------------------------------------------------------------------------------
expect_rc 64 "--redlock without --lease" "$EDGELOCK" run $RL rl -- true
check "... says --lease is needed" grep -q "needs --lease" "$ERR"
expect_rc 64 "--redlock with --watchdog" "$EDGELOCK" run --watchdog 3000 $RL rl -- true
expect_rc 64 "--redlock with a bad URL" "$EDGELOCK" run --lease 1000 --redlock "$U2,http://x" rl -- true
expect_rc 64 "--redlock with a server twice" "$EDGELOCK" run --lease 1000 --redlock "$U2,$U2" rl -- true
expect_rc 64 "--multi and --redlock together" "$EDGELOCK" run --lease 1000 --multi b $RL rl -- true
expect_rc 64 "--multi naming NAME again" "$EDGELOCK" run --multi b,a a -- true
expect_rc 64 "--multi with an empty item" "$EDGELOCK" run --multi b,,c a -- true
expect_rc 64 "--multi without a value" "$EDGELOCK" run --multi
expect_rc 64 "--multi with more than 16 names" "$EDGELOCK" run --multi "$(seq -s, 1 16)" a -- true
expect_rc 64 "--fenced with --multi" "$EDGELOCK" run --fenced --multi b a -- true
expect_rc 64 "--fenced with --redlock" "$EDGELOCK" run --fenced --lease 1000 $RL a -- true

finish
