#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Semaphores and the countdown latch in the CLI: `run --permits N` (an
# expirable semaphore of N permits: N runs at once, the rest wait or exit 75,
# a killed holder's permit comes back after its watchdog lease, an existing
# semaphore keeps its size, EDGELOCK_PERMIT_ID, a lost permit is a lost lock),
# `latch set|countdown|count|await`, `status --permits` / `status --latch`
# (text and JSON) and the usage errors. Outcomes and order are asserted, never
# how fast anything happened.
source "$(dirname "$0")/lib.sh" "$@"
start_redis

# numsub CHANNEL: how many clients listen on CHANNEL.
numsub() { rcli pubsub numsub "$1" | sed -n 2p; }
subscribers_are() { [ "$(numsub "$2")" = "$1" ]; }
running() { kill -0 "$1" 2>/dev/null; }
gone() { ! kill -0 "$1" 2>/dev/null; }
valid_json() { python3 -m json.tool "$1" >/dev/null; }
count_in() { [ "$(ls "$2" | wc -l)" -ge "$1" ]; }

# --- three runs of --permits 3 hold at once; a fourth waits or gives up --------------
# Each holder marks itself inside, then waits until its own release file.
mkdir "$TMP/in"
hold='touch "$1/in/$2"; while [ ! -e "$1/release$2" ]; do sleep 0.02; done; echo "end $2" >>"$1/order"'
pids=()
for r in 1 2 3; do
    "$EDGELOCK" run --permits 3 --wait "$HANG_MS" sem3 -- sh -c "$hold" sh "$TMP" "$r" 2>"$TMP/h$r.err" &
    pids+=($!)
done
wait_for "three --permits 3 runs inside at once" "$HANG_MS" count_in 3 "$TMP/in"
check "three --permits 3 runs hold a permit each at the same time" count_in 3 "$TMP/in"
check "the semaphore was sized 3: no permit free, 3 taken in Redis" \
    [ "$(rcli get sem3)" = 0 -a "$(rcli zcard '{sem3}:timeout')" = 3 ]
expect_rc 75 "a fourth with --wait 0 gives up" "$EDGELOCK" run --permits 3 --wait 0 sem3 -- true
check "... and says so" grep -q "permit of semaphore 'sem3' not acquired within 0 ms" "$ERR"
expect_rc 75 "a fourth with -n gives up" "$EDGELOCK" run --permits 3 -n sem3 -- true
expect_rc 9 "a fourth with -n -E 9 exits 9" "$EDGELOCK" run --permits 3 -n -E 9 sem3 -- true

expect_rc 0 "status --permits while all are taken" "$EDGELOCK" status sem3 --permits
check "... text says semaphore" grep -qx "sem3: semaphore" "$OUT"
check "... 0 free" grep -qx "  free permits: 0" "$OUT"
check "... 3 taken" grep -qx "  permits taken: 3" "$OUT"

# A fourth with a long wait runs only after one of the three has ended.
"$EDGELOCK" run --permits 3 --wait "$HANG_MS" sem3 -- sh -c 'echo fourth >>"$1/order"' sh "$TMP" &
fourth=$!
wait_for "the fourth waits on the semaphore's channel" "$HANG_MS" subscribed 'redisson_sc:{sem3}'
expect_rc 0 "status --permits --json with a waiter" "$EDGELOCK" status sem3 --permits --json
check "... is valid JSON" valid_json "$OUT"
check "... available 0, acquired 3, 1 subscriber, exists" \
    grep -qx '{"name":"sem3","kind":"semaphore","available":0,"acquired":3,"subscribers":1,"exists":true}' "$OUT"
check "the fourth has not run while the three hold" [ ! -e "$TMP/order" ]
touch "$TMP/release1"
wait "${pids[0]}"
check "holder 1 exited 0" [ $? -eq 0 ]
wait "$fourth"
check "the fourth got a permit and exited 0" [ $? -eq 0 ]
check "... after holder 1 ended ($(tr '\n' ',' <"$TMP/order"))" [ "$(sed -n 1p "$TMP/order")" = "end 1" -a "$(sed -n 2p "$TMP/order")" = fourth ]
touch "$TMP/release2" "$TMP/release3"
wait "${pids[1]}"
check "holder 2 exited 0" [ $? -eq 0 ]
wait "${pids[2]}"
check "holder 3 exited 0" [ $? -eq 0 ]
expect_rc 0 "status --permits --json when all are back" "$EDGELOCK" status --json --permits sem3
check "... available 3, acquired 0, no subscriber" \
    grep -qx '{"name":"sem3","kind":"semaphore","available":3,"acquired":0,"subscribers":0,"exists":true}' "$OUT"

# --- kill -9 of a holder: its permit comes back after the watchdog lease --------------
rm -f "$TMP/kpid"
"$EDGELOCK" run --permits 1 --watchdog 1500 semk -- sh -c 'echo $$ >"$1/kpid"; exec sleep 1000' sh "$TMP" 2>/dev/null &
victim=$!
wait_for "the holder's CMD started" "$HANG_MS" test -s "$TMP/kpid"
kpid=$(cat "$TMP/kpid")
expect_rc 75 "while it holds the only permit, --wait 0 exits 75" "$EDGELOCK" run --permits 1 --wait 0 semk -- true
kill -9 "$victim"
wait "$victim" 2>/dev/null
kill -9 "$kpid" 2>/dev/null
wait_for "the killed holder's CMD is gone" "$HANG_MS" gone "$kpid"
check "the killed holder's permit is still counted taken in Redis" [ "$(rcli zcard '{semk}:timeout')" = 1 ]
expect_rc 0 "a later run --permits 1 --wait 20s gets the permit back" \
    "$EDGELOCK" run --permits 1 --wait 20s semk -- true
check "... and gives it back: 1 free, none taken" [ "$(rcli get semk)" = 1 -a "$(rcli zcard '{semk}:timeout')" = 0 ]

# --- an existing semaphore keeps its size --------------------------------------------
expect_rc 0 "--permits 1 makes the semaphore" "$EDGELOCK" run --permits 1 semsize -- true
check "... of 1 permit" [ "$(rcli get semsize)" = 1 ]
rm -f "$TMP/started" "$TMP/release"
"$EDGELOCK" run --permits 5 semsize -- sh -c 'touch "$1/started"; while [ ! -e "$1/release" ]; do sleep 0.02; done' sh "$TMP" &
holder=$!
wait_for "a --permits 5 run holds" "$HANG_MS" test -e "$TMP/started"
expect_rc 75 "a second --permits 5 run finds no permit: the size stayed 1" \
    "$EDGELOCK" run --permits 5 --wait 0 semsize -- true
expect_rc 0 "status --permits" "$EDGELOCK" status semsize --permits --json
check "... 0 available, 1 acquired" grep -q '"available":0,"acquired":1,' "$OUT"
touch "$TMP/release"
wait "$holder"
check "the --permits 5 holder exited 0" [ $? -eq 0 ]
check "the size is still 1" [ "$(rcli get semsize)" = 1 ]
expect_rc 0 "-v says the size is kept" "$EDGELOCK" -v run --permits 5 semsize -- true
check "... on stderr" grep -q "semaphore 'semsize' exists: its size is kept" "$ERR"

# --- EDGELOCK_PERMIT_ID --------------------------------------------------------------
# CMD prints its id and the one Redis holds (the zset member's 16 bytes in hex).
hex_member="local m = redis.call('zrange', KEYS[1], 0, -1)[1]
return (m:gsub('.', function(c) return string.format('%02x', string.byte(c)) end))"
expect_rc 0 "run --permits passes EDGELOCK_PERMIT_ID" "$EDGELOCK" run --permits 2 semid -- \
    sh -c 'echo "$EDGELOCK_PERMIT_ID"; redis-cli -p "$1" eval "$2" 1 "{semid}:timeout"' sh "$REDIS_PORT" "$hex_member"
id=$(sed -n 1p "$OUT")
check "EDGELOCK_PERMIT_ID is 32 hex digits ($id)" bash -c '[[ "$1" =~ ^[0-9a-f]{32}$ ]]' _ "$id"
check "... the id of the permit in Redis" [ "$(sed -n 2p "$OUT")" = "$id" ]
EDGELOCK_PERMIT_ID=inherited expect_rc 0 "a lock run hides an inherited EDGELOCK_PERMIT_ID" \
    "$EDGELOCK" run plain -- sh -c 'echo "${EDGELOCK_PERMIT_ID-unset}"'
check "... CMD did not see it" grep -qx unset "$OUT"
EDGELOCK_PERMIT_ID=inherited expect_rc 0 "a --permits run replaces it" \
    "$EDGELOCK" run --permits 1 semid2 -- sh -c 'env | grep -c "^EDGELOCK_PERMIT_ID="; echo "$EDGELOCK_PERMIT_ID"'
check "... one EDGELOCK_PERMIT_ID, its own ($(sed -n 2p "$OUT"))" \
    bash -c '[ "$1" = 1 ] && [[ "$2" =~ ^[0-9a-f]{32}$ ]] && [ "$2" != "$3" ]' _ "$(sed -n 1p "$OUT")" "$(sed -n 2p "$OUT")" "$id"

# --- a lost permit is a lost lock: SIGTERM to CMD, exit 70 -------------------------------
cmd_trap='trap "echo TERM >\"$1/got\"; exit 0" TERM; echo x >"$1/started"; while :; do sleep 0.05; done'
rm -f "$TMP/got" "$TMP/started"
"$EDGELOCK" run --permits 2 --watchdog 600 semlost -- sh -c "$cmd_trap" sh "$TMP" 2>"$TMP/lost.err" &
pid=$!
wait_for "CMD started" "$HANG_MS" test -e "$TMP/started"
rcli del '{semlost}:timeout' >/dev/null # the permit's entry gone: the renewal finds it lost
wait "$pid"
rc=$?
check "permit deleted behind the holder: exit $rc, want 70" [ "$rc" -eq 70 ]
check "... CMD got SIGTERM" grep -qx TERM "$TMP/got"
check "... stderr says the permit was lost" grep -q "permit of semaphore 'semlost' was lost" "$TMP/lost.err"
rm -f "$TMP/got" "$TMP/started"
expect_rc 70 "a fixed --lease that runs out while CMD runs" \
    "$EDGELOCK" run --permits 2 --lease 400 semlease -- sh -c "$cmd_trap" sh "$TMP"
check "... CMD got SIGTERM" grep -qx TERM "$TMP/got"
expect_rc 0 "a fixed --lease long enough: CMD's status" "$EDGELOCK" run --permits 2 --lease 60s semlease -- true
check "... and the permits are back (2 free, none taken)" \
    [ "$(rcli get semlease)" = 2 -a "$(rcli zcard '{semlease}:timeout')" = 0 ]

# --- status --permits of an absent semaphore, and of a key of another type ----------------
expect_rc 0 "status --permits of an absent semaphore" "$EDGELOCK" status nosem --permits
check "... says absent, 0 free" grep -q "^nosem: semaphore (absent" "$OUT"
check "... 0 free" grep -qx "  free permits: 0" "$OUT"
expect_rc 0 "status --permits --json of an absent semaphore" "$EDGELOCK" status nosem --permits --json
check "... is valid JSON" valid_json "$OUT"
check "... exists false" \
    grep -qx '{"name":"nosem","kind":"semaphore","available":0,"acquired":0,"subscribers":0,"exists":false}' "$OUT"
rcli hset alock x 1 >/dev/null
expect_rc 76 "status --permits of a hash" "$EDGELOCK" status alock --permits
expect_rc 76 "run --permits on a hash" "$EDGELOCK" run --permits 1 --wait 0 alock -- true
expect_rc 76 "status --latch of a hash" "$EDGELOCK" status alock --latch

# --- latch -------------------------------------------------------------------------------
latch_channel='redisson_countdownlatch__channel__{gate}'
expect_rc 0 "latch set gate 2" "$EDGELOCK" latch set gate 2
check "... the count is in Redis" [ "$(rcli get gate)" = 2 ]
expect_rc 1 "latch set on an existing latch exits 1" "$EDGELOCK" latch set gate 5
check "... says it exists" grep -q "latch 'gate' exists already" "$ERR"
check "... and leaves the count" [ "$(rcli get gate)" = 2 ]
expect_rc 0 "latch count" "$EDGELOCK" latch count gate
check "... prints 2" grep -qx 2 "$OUT"
expect_rc 0 "status --latch" "$EDGELOCK" status gate --latch
check "... text" grep -qx "gate: latch, count 2" "$OUT"
expect_rc 0 "status --latch --json" "$EDGELOCK" status gate --latch --json
check "... is valid JSON" valid_json "$OUT"
check "... name, kind, count" grep -qx '{"name":"gate","kind":"latch","count":2}' "$OUT"

"$EDGELOCK" latch await gate --wait "$HANG_MS" 2>"$TMP/a1.err" &
a1=$!
"$EDGELOCK" latch await gate 2>"$TMP/a2.err" &
a2=$!
wait_for "both awaits listen on the latch's channel" "$HANG_MS" subscribers_are 2 "$latch_channel"
expect_rc 0 "latch countdown" "$EDGELOCK" latch countdown gate
check "... prints the count left, 1" grep -qx 1 "$OUT"
both_running() { running "$a1" && running "$a2"; }
check "both awaits still wait at count 1" both_running
expect_rc 0 "latch countdown again" "$EDGELOCK" latch countdown gate
check "... prints 0" grep -qx 0 "$OUT"
wait "$a1"
check "await 1 (with --wait) exited 0 when the latch opened" [ $? -eq 0 ]
wait "$a2"
check "await 2 (no --wait) exited 0 when the latch opened" [ $? -eq 0 ]
check "the open latch is gone from Redis" [ "$(rcli exists gate)" = 0 ]
expect_rc 0 "status --latch of the open latch" "$EDGELOCK" status gate --latch
check "... count 0 (open)" grep -qx "gate: latch, count 0 (open)" "$OUT"
expect_rc 0 "latch await on an absent latch" "$EDGELOCK" latch await gate
expect_rc 0 "latch countdown on an absent latch" "$EDGELOCK" latch countdown gate
check "... prints 0" grep -qx 0 "$OUT"
check "... and it stays absent" [ "$(rcli exists gate)" = 0 ]
expect_rc 0 "latch count of an absent latch" "$EDGELOCK" latch count gate
check "... prints 0" grep -qx 0 "$OUT"

expect_rc 0 "latch set shut 1" "$EDGELOCK" latch set shut 1
expect_rc 75 "latch await --wait 300ms on a set latch" "$EDGELOCK" latch await shut --wait 300ms
check "... says it did not open" grep -q "latch 'shut' did not open within 300 ms" "$ERR"
check "... and leaves no waiter" subscribers_are 0 'redisson_countdownlatch__channel__{shut}'

# SIGTERM while waiting: the wait is cancelled, exit 128+15 as `run` exits, no waiter left.
"$EDGELOCK" latch await shut 2>"$TMP/term.err" &
waiter=$!
wait_for "the await listens" "$HANG_MS" subscribers_are 1 'redisson_countdownlatch__channel__{shut}'
kill -TERM "$waiter"
wait "$waiter"
rc=$?
check "SIGTERM while awaiting exits 143 (got $rc)" [ "$rc" -eq 143 ]
check "... says it gave up" grep -q "SIGTERM received while waiting for latch 'shut'; gave up" "$TMP/term.err"
wait_for "no waiter left on the latch's channel" "$HANG_MS" subscribers_are 0 'redisson_countdownlatch__channel__{shut}'
check "... and the latch is untouched" [ "$(rcli get shut)" = 1 ]

# --- usage ---------------------------------------------------------------------------------
expect_rc 64 "--permits 0" "$EDGELOCK" run --permits 0 k -- true
expect_rc 64 "--permits 1000000001" "$EDGELOCK" run --permits 1000000001 k -- true
expect_rc 64 "--permits abc" "$EDGELOCK" run --permits abc k -- true
expect_rc 64 "--permits without a value" "$EDGELOCK" run --permits
expect_rc 0 "--permits 1000000000 is fine" "$EDGELOCK" run --permits=1000000000 big -- true
for kind in --fair --read --write --fenced -s -x; do
    expect_rc 64 "--permits with $kind" "$EDGELOCK" run --permits 2 $kind k -- true
    expect_rc 64 "$kind with --permits" "$EDGELOCK" run $kind --permits 2 k -- true
done
expect_rc 64 "--permits with --multi" "$EDGELOCK" run --permits 2 --multi a,b k -- true
expect_rc 64 "--permits with --redlock" "$EDGELOCK" run --permits 2 --lease 1000 --redlock "$REDIS_URL" k -- true
expect_rc 64 "--permits is a run option" "$EDGELOCK" latch count --permits 2 k
expect_rc 64 "status --permits --latch" "$EDGELOCK" status k --permits --latch
expect_rc 64 "latch without an action" "$EDGELOCK" latch
expect_rc 64 "latch with an unknown action" "$EDGELOCK" latch open k
expect_rc 64 "latch set without COUNT" "$EDGELOCK" latch set k
expect_rc 64 "latch set COUNT 0" "$EDGELOCK" latch set k 0
expect_rc 64 "latch set COUNT not a number" "$EDGELOCK" latch set k 2x
expect_rc 64 "latch set COUNT negative" "$EDGELOCK" latch set k -1
check "... stderr names COUNT, not an unknown option" grep -q "COUNT '-1' is not a number" "$ERR"
expect_rc 64 "latch countdown with an extra argument" "$EDGELOCK" latch countdown k 3
expect_rc 64 "latch count --wait" "$EDGELOCK" latch count k --wait 1s
expect_rc 64 "latch await --wait not a duration" "$EDGELOCK" latch await k --wait soon
expect_rc 64 "latch await without NAME" "$EDGELOCK" latch await
expect_rc 0 "--help" "$EDGELOCK" --help
for word in --permits --latch EDGELOCK_PERMIT_ID "latch set" "latch countdown" "latch count" "latch await"; do
    check "--help mentions '$word'" grep -q -- "$word" "$OUT"
done

finish
