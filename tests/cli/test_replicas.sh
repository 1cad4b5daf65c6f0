#!/usr/bin/env bash
# --wait-replicas: a master and a replica; with the replica stopped, `run`
# exits 69 naming the replicas, CMD does not run, and the lock is not held.
source "$(dirname "$0")/lib.sh" "$@"
start_redis
MASTER_PORT=$REDIS_PORT
REPLICA_PORT=$((REDIS_PORT + 1))
port_in_use "$REPLICA_PORT" && REPLICA_PORT=$((REDIS_PORT + 2))
redis-server --port "$REPLICA_PORT" --bind 127.0.0.1 --save '' --appendonly no --loglevel warning \
    --logfile /dev/null --dir "$TMP" --replicaof 127.0.0.1 "$MASTER_PORT" &
REPLICA_PID=$!
ALL_REDIS_PIDS+=("$REPLICA_PID")
replicated() { [ "$(rcli wait 1 100)" = 1 ]; }
wait_for "the replica to sync" "$HANG_MS" replicated && pass "the replica is in sync"

expect_rc 0 "run with --wait-replicas 1" "$EDGELOCK" --wait-replicas 1 run r -- true
kill -STOP "$REPLICA_PID"
expect_rc 69 "a stopped replica: not replicated" \
    "$EDGELOCK" --wait-replicas 1 --wait-replicas-timeout 200 run r -- touch "$TMP/ran"
check "the message names the replicas" grep -q "fewer than 1 replica acknowledged" "$ERR"
check "CMD did not run" test ! -e "$TMP/ran"
wait_for "the lock to be released again" "$HANG_MS" lock_free r && pass "the lock is not held"
expect_rc 64 "--wait-replicas needs a number" "$EDGELOCK" --wait-replicas x run r -- true
kill -CONT "$REPLICA_PID"
finish
