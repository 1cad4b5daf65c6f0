#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The lock kinds of `edgelock run`: --fenced (EDGELOCK_TOKEN, strictly
# increasing), --read / --write (readers share, writers exclude), --fair
# (waiters served in arrival order; status shows the queue and its deadlines),
# the lost-lock handling (SIGTERM to CMD, exit 70) for every kind, and the
# usage errors of the kind flags.
source "$(dirname "$0")/lib.sh" "$@"
start_redis

# --- --fenced: a new, higher token on every run -------------------------------------
tokens=()
for r in 1 2 3; do
    expect_rc 0 "fenced run $r" "$EDGELOCK" run --fenced fence -- sh -c 'echo "$EDGELOCK_TOKEN"'
    tokens+=("$(cat "$OUT")")
done
check "tokens are decimal numbers (${tokens[*]})" bash -c '[[ "$1 $2 $3" =~ ^[0-9]+\ [0-9]+\ [0-9]+$ ]]' _ "${tokens[@]}"
check "tokens strictly increase (${tokens[*]})" \
    bash -c '[ "$1" -gt 0 ] && [ "$2" -gt "$1" ] && [ "$3" -gt "$2" ]' _ "${tokens[@]}"
check "the last token is the one in Redis" [ "$(rcli get 'redisson_lock_token:{fence}')" = "${tokens[2]}" ]
# Another client (a run started while the first still holds) gets the next one.
rm -f "$TMP/release" "$TMP/started"
"$EDGELOCK" run --fenced fence -- sh -c 'echo "$EDGELOCK_TOKEN" >"$1/t1"; touch "$1/started"; while [ ! -e "$1/release" ]; do sleep 0.02; done' sh "$TMP" &
holder=$!
wait_for "fenced holder started" "$HANG_MS" test -e "$TMP/started"
"$EDGELOCK" run --fenced --wait "$HANG_MS" fence -- sh -c 'echo "$EDGELOCK_TOKEN" >"$1/t2"' sh "$TMP" &
waiter=$!
wait_for "the fenced waiter waits" "$HANG_MS" subscribed 'redisson_lock__channel:{fence}'
touch "$TMP/release"
wait "$holder"
check "fenced holder exited 0" [ $? -eq 0 ]
wait "$waiter"
check "fenced waiter exited 0" [ $? -eq 0 ]
t1=$(cat "$TMP/t1" 2>/dev/null || echo 0)
t2=$(cat "$TMP/t2" 2>/dev/null || echo 0)
check "the waiter's token ($t2) is above the holder's ($t1), itself above the earlier runs'" \
    [ "$t2" -gt "$t1" -a "$t1" -gt "${tokens[2]}" ]
expect_rc 0 "status shows the last token" "$EDGELOCK" status fence
check "... in text" grep -q "fencing token: $t2 " "$OUT"
expect_rc 0 "status --json shows the last token" "$EDGELOCK" status fence --json
check "... in json" grep -q "\"token\":$t2," "$OUT"
# The variables belong to the run that sets them: never inherited by CMD.
EDGELOCK_TOKEN=999 EDGELOCK_VALIDITY_MS=5 expect_rc 0 "a plain run hides inherited EDGELOCK_TOKEN/VALIDITY_MS" \
    "$EDGELOCK" run plain -- sh -c 'echo "${EDGELOCK_TOKEN-unset} ${EDGELOCK_VALIDITY_MS-unset}"'
check "... CMD saw neither" grep -qx "unset unset" "$OUT"
EDGELOCK_TOKEN=999 expect_rc 0 "a fenced run replaces an inherited EDGELOCK_TOKEN" \
    "$EDGELOCK" run --fenced fence -- sh -c 'env | grep -c "^EDGELOCK_TOKEN="; echo "$EDGELOCK_TOKEN"'
check "... one EDGELOCK_TOKEN, the new one" [ "$(sed -n 1p "$OUT")" = 1 -a "$(sed -n 2p "$OUT")" -gt "$t2" ]

# --- --read runs overlap ------------------------------------------------------------
# Each reader marks itself inside, then waits (up to HANG_S) until all three
# are inside at once: only possible when read holds are shared.
mkdir "$TMP/in"
readers_meet='touch "$1/in/$2"; end=$(( $(date +%s) + '"$HANG_S"' ))
while [ "$(ls "$1/in" | wc -l)" -lt 3 ]; do [ "$(date +%s)" -ge "$end" ] && exit 1; sleep 0.02; done'
pids=()
for r in 1 2 3; do
    "$EDGELOCK" run --read --wait "$HANG_MS" rw -- sh -c "$readers_meet" sh "$TMP" "$r" &
    pids+=($!)
done
ok=1
for p in "${pids[@]}"; do wait "$p" || ok=0; done
check "three --read runs held the lock at the same time" [ "$ok" -eq 1 ]
check "the read-write lock is free afterwards" lock_free rw

# --- --write excludes readers and writers -------------------------------------------
# Readers note themselves in $TMP/readers/; a writer makes $TMP/w (mkdir:
# atomic, fails when another writer is inside). Each checks, before and after
# a short sleep, that nobody it excludes is inside.
rm -rf "$TMP/readers" "$TMP/w" "$TMP/overlaps"
mkdir "$TMP/readers"
reader='[ -d "$1/w" ] && echo "reader saw a writer" >>"$1/overlaps"
touch "$1/readers/$$"; sleep 0.05
[ -d "$1/w" ] && echo "reader saw a writer" >>"$1/overlaps"
rm "$1/readers/$$"'
writer='mkdir "$1/w" 2>/dev/null || { echo "two writers" >>"$1/overlaps"; exit 1; }
[ -n "$(ls "$1/readers")" ] && echo "writer saw a reader" >>"$1/overlaps"
sleep 0.05
[ -n "$(ls "$1/readers")" ] && echo "writer saw a reader" >>"$1/overlaps"
rmdir "$1/w"'
loop() { # loop KIND SCRIPT: 4 runs in a row
    local r rc=0
    for r in 1 2 3 4; do
        "$EDGELOCK" run "$1" --wait "$HANG_MS" rw -- sh -c "$2" sh "$TMP" || rc=1
    done
    return $rc
}
pids=()
for w in 1 2; do loop --write "$writer" & pids+=($!); done
for r in 1 2 3; do loop --read "$reader" & pids+=($!); done
ok=1
for p in "${pids[@]}"; do wait "$p" || ok=0; done
check "every read and write run exited 0" [ "$ok" -eq 1 ]
check "no writer overlapped a reader or a writer ($(cat "$TMP/overlaps" 2>/dev/null | sort -u | tr '\n' ' '))" \
    [ ! -e "$TMP/overlaps" ]
check "the read-write lock is free afterwards" lock_free rw

# A reader blocks a writer, a writer blocks a reader (and status shows the mode).
rm -f "$TMP/started" "$TMP/release"
hold='touch "$1/started"; while [ ! -e "$1/release" ]; do sleep 0.02; done'
"$EDGELOCK" run --read rw -- sh -c "$hold" sh "$TMP" &
holder=$!
wait_for "reader started" "$HANG_MS" test -e "$TMP/started"
expect_rc 75 "--write --wait 0 while a reader holds" "$EDGELOCK" run -v --write --wait 0 rw -- true
check "... -v says it is held" grep -q "held elsewhere" "$ERR"
expect_rc 0 "--read --wait 0 while a reader holds" "$EDGELOCK" run -v --read --wait 0 rw -- true
check "... -v does not say it waits" bash -c '! grep -q "held elsewhere" "$1"' _ "$ERR"
expect_rc 0 "status of a read-held lock" "$EDGELOCK" status rw --json
check "... mode read" grep -q '"mode":"read"' "$OUT"
touch "$TMP/release"
wait "$holder"
rm -f "$TMP/started" "$TMP/release"
"$EDGELOCK" run --write rw -- sh -c "$hold" sh "$TMP" &
holder=$!
wait_for "writer started" "$HANG_MS" test -e "$TMP/started"
expect_rc 75 "--read --wait 0 while a writer holds" "$EDGELOCK" run -v --read --wait 0 rw -- true
check "... -v says it is held" grep -q "held elsewhere" "$ERR"
expect_rc 75 "--write --wait 0 while a writer holds" "$EDGELOCK" run --write --wait 0 rw -- true
expect_rc 0 "status of a write-held lock" "$EDGELOCK" status rw
check "... mode write" grep -q "held (mode write)" "$OUT"
check "... the writer's field" grep -Eq ':[0-9]+:write  count 1$' "$OUT"
touch "$TMP/release"
wait "$holder"
check "the read-write lock is free at the end" lock_free rw

# --- --fair: waiters served in arrival order ------------------------------------------
rm -f "$TMP/started" "$TMP/release" "$TMP/order"
queue='redisson_lock_queue:{fq}'
queued() { [ "$(rcli llen "$queue")" -eq "$1" ]; }
"$EDGELOCK" run --fair fq -- sh -c "$hold" sh "$TMP" &
holder=$!
wait_for "fair holder started" "$HANG_MS" test -e "$TMP/started"
WAITERS=5
pids=()
for w in $(seq 1 $WAITERS); do
    "$EDGELOCK" run --fair --wait "$HANG_MS" fq -- sh -c 'echo "$2" >>"$1/order"' sh "$TMP" "$w" &
    pids+=($!)
    # One at a time: the next starts once this one is queued.
    wait_for "fair waiter $w queued" "$HANG_MS" queued "$w"
done
expect_rc 0 "status of a fair lock with a queue" "$EDGELOCK" status fq
check "... lists $WAITERS queued" grep -q "$WAITERS queued" "$OUT"
check "... each with a deadline" [ "$(grep -Ec '^    [0-9]+\. .*  deadline in [0-9]+\.[0-9]{3} s$' "$OUT")" -eq "$WAITERS" ]
first=$(rcli lindex "$queue" 0)
check "... first the first queued" grep -q "1. $first  deadline in" "$OUT"
expect_rc 0 "status --json of the fair lock" "$EDGELOCK" status fq --json
check "... waiters with deadline_ms and expires_in_ms" \
    [ "$(grep -Eo '"deadline_ms":[0-9]+,"expires_in_ms":[0-9]+' "$OUT" | wc -l)" -eq "$WAITERS" ]
check "... the first waiter first" grep -q "\"waiters\":\[{\"owner\":\"$first\"" "$OUT"
# A waiter that gives up leaves no trace in the queue or the deadlines.
expect_rc 75 "a fair waiter with --wait 300 gives up" "$EDGELOCK" run --fair --wait 300 fq -- true
check "... and left the queue ($(rcli llen "$queue") queued)" [ "$(rcli llen "$queue")" -eq "$WAITERS" ]
check "... and the deadlines" [ "$(rcli zcard 'redisson_lock_timeout:{fq}')" -eq "$WAITERS" ]
touch "$TMP/release"
wait "$holder"
check "fair holder exited 0" [ $? -eq 0 ]
ok=1
for p in "${pids[@]}"; do wait "$p" || ok=0; done
check "every fair waiter exited 0" [ "$ok" -eq 1 ]
order=$(tr '\n' ' ' <"$TMP/order" 2>/dev/null)
check "served in arrival order: $order" [ "$order" = "$(seq 1 $WAITERS | tr '\n' ' ')" ]
check "the queue is empty" [ "$(rcli llen "$queue")" -eq 0 ]
check "the deadlines are gone" [ "$(rcli zcard 'redisson_lock_timeout:{fq}')" -eq 0 ]
check "the fair lock is free" lock_free fq

# --- the lock is lost while CMD runs: SIGTERM, exit 70, for every kind ------------------
cmd_trap='trap "echo TERM >\"$1/got\"; exit 0" TERM; echo x >"$1/started"; while :; do sleep 0.05; done'
for kind in --fair --read --write --fenced; do
    name=lost${kind#--}
    rm -f "$TMP/got" "$TMP/started"
    "$EDGELOCK" run --watchdog 600 $kind "$name" -- sh -c "$cmd_trap" sh "$TMP" 2>"$TMP/lost.err" &
    pid=$!
    wait_for "$kind: CMD started" "$HANG_MS" test -e "$TMP/started"
    rcli del "$name" >/dev/null
    wait "$pid"
    rc=$?
    check "$kind: key deleted -> exit $rc, want 70" [ "$rc" -eq 70 ]
    check "$kind: CMD got SIGTERM" grep -qx TERM "$TMP/got"
    check "$kind: stderr says the ${kind#--} lock was lost" grep -q "${kind#--} lock '$name' was lost" "$TMP/lost.err"
done
rm -f "$TMP/got" "$TMP/started"
expect_rc 70 "--fair with a fixed lease that runs out" \
    "$EDGELOCK" run --fair --lease 400 lostlease -- sh -c "$cmd_trap" sh "$TMP"
check "... CMD got SIGTERM" grep -qx TERM "$TMP/got"

# --- usage ----------------------------------------------------------------------------------
expect_rc 64 "--fair with --read" "$EDGELOCK" run --fair --read k -- true
expect_rc 64 "--write with --fenced" "$EDGELOCK" run --write --fenced k -- true
expect_rc 64 "--read after NAME" "$EDGELOCK" run k --read -- true
expect_rc 64 "--fair is a run option" "$EDGELOCK" status --fair k
expect_rc 0 "the same kind twice is fine" "$EDGELOCK" run --read --read k -- true
expect_rc 0 "--help" "$EDGELOCK" --help
for word in --fair --read --write --fenced --multi --redlock EDGELOCK_TOKEN EDGELOCK_VALIDITY_MS \
    "clock jumps" "pauses" "Prefer"; do
    check "--help mentions '$word'" grep -q -- "$word" "$OUT"
done

finish
