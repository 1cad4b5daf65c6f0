#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# `status` (text and --json) and `unlock --force`, against a Redis that needs a
# password: the password never appears in any output.
source "$(dirname "$0")/lib.sh" "$@"
REDIS_PASSWORD='s3cr3t-Pa55'
start_redis --requirepass "$REDIS_PASSWORD"
URL_USER="redis://default:$REDIS_PASSWORD@127.0.0.1:$REDIS_PORT"
ALL_OUTPUT=$TMP/all-output # every stdout and stderr of edgelock, for the password check
: >"$ALL_OUTPUT"
collect() { cat "$OUT" "$ERR" >>"$ALL_OUTPUT"; }

uuid_owner='[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}:[0-9]+'

# --- free -------------------------------------------------------------------------
expect_rc 0 "status of a free lock" "$EDGELOCK" status st-free
collect
check "text says free" grep -qx "st-free: free" "$OUT"
expect_rc 0 "status --json of a free lock" "$EDGELOCK" status st-free --json
collect
check "json of a free lock" grep -qx '{"name":"st-free","state":"free","ttl_ms":null,"mode":null,"holders":\[\],"queue":\[\],"waiters":\[\],"token":null,"subscribers":0,"server":"127.0.0.1:[0-9]*"}' "$OUT"

# --- held by a running `run` (with user:password in --url, and -v) ----------------
rm -f "$TMP/started" "$TMP/release"
"$EDGELOCK" --url "$URL_USER" -v run --watchdog 6000 st-held -- sh -c 'echo x >"$1/started"; while [ ! -e "$1/release" ]; do sleep 0.02; done' sh "$TMP" >"$TMP/run.out" 2>"$TMP/run.err" &
holder=$!
wait_for "holder started" "$HANG_MS" test -e "$TMP/started"
expect_rc 0 "status of a held lock" "$EDGELOCK" status st-held
collect
check "text says held with a TTL" grep -Eq '^st-held: held, expires in [0-9]+\.[0-9]{3} s$' "$OUT"
check "text lists one holder" grep -q "1 holder:" "$OUT"
check "text shows the owner field and count 1" grep -Eq "^    $uuid_owner  count 1$" "$OUT"
expect_rc 0 "status --json of a held lock" "$EDGELOCK" --url "$URL_USER" status --json st-held
collect
check "json: state held" grep -q '"state":"held"' "$OUT"
check "json: one holder, count 1" grep -Eq "\"holders\":\[\{\"owner\":\"$uuid_owner\",\"count\":1\}\]" "$OUT"
ttl=$(sed -n 's/.*"ttl_ms":\([0-9]*\).*/\1/p' "$OUT")
check "json: ttl_ms within the watchdog lease (got '$ttl')" [ "${ttl:-0}" -gt 0 -a "${ttl:-0}" -le 6000 ]
check "json is one line" [ "$(wc -l <"$OUT")" -eq 1 ]
owner=$(grep -Eo "$uuid_owner" "$OUT")
check "the owner is the one in Redis" [ "$(rcli hget st-held "$owner")" = 1 ]
touch "$TMP/release"
wait "$holder"
check "holder exited 0" [ $? -eq 0 ]
cat "$TMP/run.out" "$TMP/run.err" >>"$ALL_OUTPUT"
check "-v said acquired and released" grep -q "acquired lock 'st-held'" "$TMP/run.err"

# --- shapes written by others: re-entrant count, several holders, mode, queue, no TTL
rcli hset st-multi mode read "11111111-2222-3333-4444-555555555555:7" 2 "aaaaaaaa-2222-3333-4444-555555555555:9" 1 >/dev/null
rcli pexpire st-multi 600000 >/dev/null
rcli rpush "redisson_lock_queue:{st-multi}" "bbbbbbbb-2222-3333-4444-555555555555:3" >/dev/null
expect_rc 0 "status of a lock with two holders, a mode and a queue" "$EDGELOCK" status st-multi
collect
check "text: mode" grep -q "^st-multi: held (mode read), expires in" "$OUT"
check "text: two holders" grep -q "2 holders:" "$OUT"
check "text: re-entrant count 2" grep -q "11111111-2222-3333-4444-555555555555:7  count 2" "$OUT"
check "text: queue" grep -q "1. bbbbbbbb-2222-3333-4444-555555555555:3  (no deadline)" "$OUT"
expect_rc 0 "status --json of the same" "$EDGELOCK" status st-multi --json
collect
check "json: mode, holders and queue" grep -Eq '"mode":"read","holders":\[\{"owner":"11111111-2222-3333-4444-555555555555:7","count":2\},\{"owner":"aaaaaaaa-2222-3333-4444-555555555555:9","count":1\}\],"queue":\["bbbbbbbb-2222-3333-4444-555555555555:3"\],"waiters":\[\{"owner":"bbbbbbbb-2222-3333-4444-555555555555:3","deadline_ms":null,"expires_in_ms":null\}\],"token":null,"subscribers":0,"server":"127.0.0.1:[0-9]+"\}$' "$OUT"
rcli hset 'st-"odd' 'x"y:1' 1 >/dev/null
expect_rc 0 "status --json escapes quotes; a hash without TTL" "$EDGELOCK" status 'st-"odd' --json
collect
check "json: escaped name and owner, ttl null" grep -qx '{"name":"st-\\"odd","state":"held","ttl_ms":null,"mode":null,"holders":\[{"owner":"x\\"y:1","count":1}\],"queue":\[\],"waiters":\[\],"token":null,"subscribers":0,"server":"127.0.0.1:[0-9]*"}' "$OUT"
expect_rc 0 "text says no expiry" "$EDGELOCK" status 'st-"odd'
check "... 'no expiry'" grep -q "held, no expiry" "$OUT"

# --- unlock --force wakes a waiter at once; the holder learns it lost the lock --------
# The holder's watchdog lease (120 s) outlasts every wait below: a waiter that
# runs was woken by the unlock message, not by the lease running out.
cmd_trap='trap "echo TERM >\"$1/got\"; exit 0" TERM; echo x >"$1/started"; while :; do sleep 0.05; done'
rm -f "$TMP/started" "$TMP/got" "$TMP/waiter-ran"
"$EDGELOCK" run --watchdog 120000 st-force -- sh -c "$cmd_trap" sh "$TMP" 2>"$TMP/holder.err" &
holder=$!
wait_for "holder started" "$HANG_MS" test -e "$TMP/started"
"$EDGELOCK" run --wait 100000 st-force -- touch "$TMP/waiter-ran" &
waiter=$!
wait_for "the waiter waits (listens on the lock's channel)" "$HANG_MS" subscribed 'redisson_lock__channel:{st-force}'
check "... and has not run its CMD" [ ! -e "$TMP/waiter-ran" ]
expect_rc 0 "unlock --force of a held lock" "$EDGELOCK" unlock --force st-force
collect
check "... says it was force-unlocked" grep -q "st-force: force-unlocked" "$OUT"
wait_for "the waiter runs its CMD, woken by the unlock message" "$HANG_MS" test -e "$TMP/waiter-ran"
wait "$waiter"
check "the waiter exited 0" [ $? -eq 0 ]
check "... before the holder noticed anything (its CMD still runs)" [ ! -e "$TMP/got" ]
# Its next renewal is 40 s away: stop it. Its release then finds the lock gone.
kill -TERM "$holder"
wait "$holder"
rc=$?
check "the forced-out holder exits 70 at its release (got $rc)" [ "$rc" -eq 70 ]
check "... and says the lock was lost" grep -q "lock 'st-force' was lost before the command finished" "$TMP/holder.err"
cat "$TMP/holder.err" >>"$ALL_OUTPUT"
# A holder that renews often learns it at its next renewal, and stops CMD.
rm -f "$TMP/started" "$TMP/got"
"$EDGELOCK" run --watchdog 3000 st-force -- sh -c "$cmd_trap" sh "$TMP" 2>"$TMP/holder.err" &
holder=$!
wait_for "holder started" "$HANG_MS" test -e "$TMP/started"
expect_rc 0 "unlock --force of a held lock, again" "$EDGELOCK" unlock --force st-force
collect
wait "$holder"
rc=$?
check "the forced-out holder exits 70 (got $rc)" [ "$rc" -eq 70 ]
check "... after its CMD got SIGTERM" grep -qx TERM "$TMP/got"
cat "$TMP/holder.err" >>"$ALL_OUTPUT"
expect_rc 0 "unlock --force of a free lock" "$EDGELOCK" unlock --force st-force
collect
check "... says it was not held" grep -q "st-force: was not held" "$OUT"

# --- credentials ----------------------------------------------------------------------
expect_rc 77 "wrong password" "$EDGELOCK" --url "redis://:wrong-Pw-9@127.0.0.1:$REDIS_PORT" status st-free
collect
check "... not shown either" bash -c "! grep -q wrong-Pw-9 '$OUT' '$ERR'"
expect_rc 77 "wrong password (run)" "$EDGELOCK" --url "redis://:wrong-Pw-9@127.0.0.1:$REDIS_PORT" run x -- true
collect
check "... not shown either" bash -c "! grep -q wrong-Pw-9 '$OUT' '$ERR'"
expect_rc 77 "no password" "$EDGELOCK" --url "redis://127.0.0.1:$REDIS_PORT" status st-free
collect
# One renewal (at 2 s) is logged too; the lease leaves 4 s of slack for a slow machine.
EDGELOCK_LOG=3 "$EDGELOCK" run --watchdog 6000 st-log -- sleep 2.2 >>"$ALL_OUTPUT" 2>&1
check "run with EDGELOCK_LOG=3 exits 0" [ $? -eq 0 ]
check "outputs were collected" [ -s "$ALL_OUTPUT" ]
check "the password appears in no output" bash -c "! grep -q '$REDIS_PASSWORD' '$ALL_OUTPUT'"

finish
