#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Calls to Redis without a wait the user gave (status, unlock --force, the
# release at the end of run) end by a deadline, with a clear message and exit
# code, against servers that misbehave (tests/cli/slow_redis.py): one that
# trickles a byte every 200 ms, one whose every answer is slow and reports
# ever more holders, and a Redis stopped (SIGSTOP) while CMD runs.
#
# Only outcomes are asserted: exit codes, messages, how many reads a server
# saw. `timeout` turns a hang into a failure (124) instead of a stuck test.
source "$(dirname "$0")/lib.sh" "$@"
SLOW_REDIS=$(cd "$(dirname "$0")" && pwd)/slow_redis.py
unset EDGELOCK_URL

# start_slow TAG MODE [ARGS...]: a slow_redis.py server, its output in
# $TMP/TAG.log, its port in SLOW_PORT.
start_slow() {
    local tag=$1
    shift
    python3 "$SLOW_REDIS" "$@" >"$TMP/$tag.log" 2>&1 &
    wait_for "slow_redis.py $1 listening" "$HANG_MS" test -s "$TMP/$tag.log" || exit 1
    SLOW_PORT=$(head -n 1 "$TMP/$tag.log")
}
EL() { timeout -k 5 "$HANG_S" "$EDGELOCK" "$@"; }

# --- a reply that trickles in a byte every 200 ms and never ends -------------------
start_slow trickle trickle-reply
URL=redis://127.0.0.1:$SLOW_PORT
expect_rc 69 "trickling reply: status" EL --url "$URL" status d
check "... says Redis did not answer in time" grep -q "Redis at $URL did not answer in time while reading lock 'd'" "$ERR"
check "... prints nothing on stdout" [ ! -s "$OUT" ]
expect_rc 69 "trickling reply: status --json" EL --url "$URL" status d --json
check "... prints no partial JSON" [ ! -s "$OUT" ]
expect_rc 69 "trickling reply: unlock --force" EL --url "$URL" unlock --force d
check "... says Redis did not answer in time" grep -q "did not answer in time while force-unlocking lock 'd'" "$ERR"
expect_rc 69 "trickling reply: run" EL --url "$URL" run d -- touch "$TMP/ran"
check "... CMD did not run" [ ! -e "$TMP/ran" ]

# --- a status line trickling from the accept on: the setup never completes ----------
start_slow accept trickle-accept
expect_rc 69 "trickling from the accept: status" EL --url "redis://127.0.0.1:$SLOW_PORT" status d
check "... says Redis cannot be reached" grep -q "cannot reach Redis" "$ERR"

# --- every answer slow, every answer with more holders: status stops re-reading -----
# Without a deadline it read 8 times (up to 8 command timeouts, past 20 s); with
# it, a re-read is started only while it can end within 2 command timeouts.
start_slow grow grow 1000
expect_rc 0 "ever more holders, each answer after 1 s: status" EL --url "redis://127.0.0.1:$SLOW_PORT" status d
check "... prints the holders it could read" grep -q "^    gw-0:1  count 1$" "$OUT"
check "... and says how many it could not" grep -Eq '^    \.\.\. and [0-9]+ more' "$OUT"
reads=$(grep -c '^read ' "$TMP/grow.log")
check "... and stopped re-reading at the deadline ($reads reads, fewer than 8)" [ "$reads" -ge 1 -a "$reads" -lt 8 ]

# --- Redis stops answering while CMD runs: the release ends, CMD's status passes -----
start_redis
expect_rc 3 "Redis stopped at release time: run exits with CMD's status" \
    EL --url "$REDIS_URL" run d -- sh -c 'kill -STOP "$1"; exit 3' sh "$REDIS_PID"
kill -CONT "$REDIS_PID"
check "... says the lock could not be released and expires on its own" \
    grep -q "could not release lock 'd'.*expires on its own" "$ERR"

finish
