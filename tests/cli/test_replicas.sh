#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# --wait-replicas: a master and a replica; with the replica stopped, `run`
# exits 69 naming the replicas, CMD does not run, and the lock is not held.
source "$(dirname "$0")/lib.sh" "$@"
start_redis --repl-diskless-sync-delay 0 # the replica syncs at once
MASTER_PORT=$REDIS_PORT
MASTER_URL=$REDIS_URL
# The replica through start_redis too: a port another test takes meanwhile
# costs an attempt, not the test. Then point everything back at the master.
start_redis --dir "$TMP" --replicaof 127.0.0.1 "$MASTER_PORT"
REPLICA_PID=$REDIS_PID
REDIS_PORT=$MASTER_PORT
REDIS_URL=$MASTER_URL
export EDGELOCK_URL=$MASTER_URL
replicated() { [ "$(rcli wait 1 100)" = 1 ]; }
wait_for "the replica to sync" "$HANG_MS" replicated && pass "the replica is in sync"

expect_rc 0 "run with --wait-replicas 1" "$EDGELOCK" --wait-replicas 1 run r -- true
# A WAIT longer than the 3 s command timeout: the command timeout grows to
# fit it (it used to be set back to 3 s, and the client refused as invalid).
expect_rc 0 "--wait-replicas-timeout 5000, above the command timeout" \
    "$EDGELOCK" --wait-replicas 1 --wait-replicas-timeout 5000 run r -- true
kill -STOP "$REPLICA_PID"
expect_rc 69 "a stopped replica: not replicated" \
    "$EDGELOCK" --wait-replicas 1 --wait-replicas-timeout 200 run r -- touch "$TMP/ran"
check "the message names the replicas" grep -q "fewer than 1 replica acknowledged" "$ERR"
check "CMD did not run" test ! -e "$TMP/ran"
wait_for "the lock to be released again" "$HANG_MS" lock_free r && pass "the lock is not held"
expect_rc 64 "--wait-replicas needs a number" "$EDGELOCK" --wait-replicas x run r -- true
kill -CONT "$REPLICA_PID"
finish
