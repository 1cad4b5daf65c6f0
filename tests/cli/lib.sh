# SPDX-License-Identifier: BSD-3-Clause
# Shared by the CLI tests (sourced, bash). Usage in a test:
#
#   source "$(dirname "$0")/lib.sh" "$@"     # $1: path to the edgelock binary
#   start_redis                              # sets REDIS_PORT, REDIS_URL, exports EDGELOCK_URL
#   expect_rc 3 "CMD status passes through" "$EDGELOCK" run x -- sh -c 'exit 3'
#   finish                                   # prints the summary, sets the exit status
#
# Every test starts its own redis-server on a free loopback port (no
# persistence) and kills it on exit, whatever happens.
set -u

EDGELOCK=${1:?usage: test.sh /path/to/edgelock}
case $EDGELOCK in /*) ;; *) EDGELOCK=$PWD/$EDGELOCK ;; esac
TMP=$(mktemp -d "${TMPDIR:-/tmp}/edgelock-cli.XXXXXX")
PASSED=0
FAILED=0
REDIS_PID=
REDIS_PORT=
REDIS_PASSWORD=
ALL_REDIS_PIDS=() # every server start_redis started

cleanup() {
    # Background jobs of the test first (their edgelock runs), then Redis.
    local pids p
    pids=$(jobs -p)
    [ -n "$pids" ] && kill $pids 2>/dev/null
    [ -n "$REDIS_PID" ] && kill -9 "$REDIS_PID" 2>/dev/null && wait "$REDIS_PID" 2>/dev/null
    for p in ${ALL_REDIS_PIDS[@]+"${ALL_REDIS_PIDS[@]}"}; do
        kill -9 "$p" 2>/dev/null && wait "$p" 2>/dev/null
    done
    rm -rf "$TMP"
}
trap cleanup EXIT

port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# rcli ARGS...: redis-cli against the test's server (password from the env).
rcli() {
    if [ -n "$REDIS_PASSWORD" ]; then
        REDISCLI_AUTH=$REDIS_PASSWORD redis-cli --no-auth-warning -p "$REDIS_PORT" "$@"
    else
        redis-cli -p "$REDIS_PORT" "$@"
    fi
}

# await_own_server PID PORT [PASSWORD]: waits (up to 10 s) until the server on
# PORT says it is process PID, not one that won a race for the port. If PID
# exits first, or never answers, it is killed and the call fails.
await_own_server() {
    local pid=$1 port=$2 password=${3:-} i
    for i in $(seq 1 500); do
        if [ "$(${password:+env REDISCLI_AUTH=$password} redis-cli --no-auth-warning -p "$port" info server \
            2>/dev/null | tr -d '\r' | sed -n 's/^process_id://p')" = "$pid" ]; then
            return 0
        fi
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.02
    done
    kill -9 "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    return 1
}

# start_redis [extra redis-server args...]
# An argument @PORT2@ is replaced by a second free port, picked anew on every
# attempt like the first one (REDIS_PORT2): a port taken meanwhile by another
# test's server costs an attempt, not the test.
start_redis() {
    local attempt a args
    for attempt in 1 2 3 4 5 6 7 8; do
        REDIS_PORT=$((20000 + (RANDOM * 32768 + RANDOM) % 40000))
        REDIS_PORT2=$((20000 + (RANDOM * 32768 + RANDOM) % 40000))
        port_in_use "$REDIS_PORT" && continue
        port_in_use "$REDIS_PORT2" && continue
        [ "$REDIS_PORT2" = "$REDIS_PORT" ] && continue
        args=()
        for a in "$@"; do
            if [ "$a" = @PORT2@ ]; then args+=("$REDIS_PORT2"); else args+=("$a"); fi
        done
        redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save '' --appendonly no \
            --loglevel warning --logfile /dev/null ${args[@]+"${args[@]}"} &
        REDIS_PID=$!
        if await_own_server "$REDIS_PID" "$REDIS_PORT" "$REDIS_PASSWORD"; then
            REDIS_URL=redis://127.0.0.1:$REDIS_PORT
            if [ -n "$REDIS_PASSWORD" ]; then REDIS_URL=redis://:$REDIS_PASSWORD@127.0.0.1:$REDIS_PORT; fi
            export EDGELOCK_URL=$REDIS_URL
            ALL_REDIS_PIDS+=("$REDIS_PID")
            return 0
        fi
        REDIS_PID=
    done
    echo "cannot start redis-server" >&2
    exit 2
}

# start_sentinel PASSWORD CONF_LINE...: a Redis Sentinel with those sentinel.conf
# lines (and requirepass PASSWORD) on a free port, picked anew on every attempt
# as start_redis does: a port taken between the check and the bind (the
# ephemeral range is shared with every test's outgoing connections) costs an
# attempt, not the test. Sets SENTINEL_PORT and SENTINEL_PID.
start_sentinel() {
    local password=$1 attempt
    shift
    for attempt in 1 2 3 4 5 6 7 8; do
        SENTINEL_PORT=$((20000 + (RANDOM * 32768 + RANDOM) % 40000))
        port_in_use "$SENTINEL_PORT" && continue
        printf '%s\n' "port $SENTINEL_PORT" "bind 127.0.0.1" "dir $TMP" "requirepass $password" "$@" \
            >"$TMP/sentinel.conf"
        redis-server "$TMP/sentinel.conf" --sentinel --loglevel warning --logfile "$TMP/sentinel.log" &
        SENTINEL_PID=$!
        if await_own_server "$SENTINEL_PID" "$SENTINEL_PORT" "$password"; then
            ALL_REDIS_PIDS+=("$SENTINEL_PID")
            return 0
        fi
    done
    echo "cannot start a sentinel; its last log:" >&2
    cat "$TMP/sentinel.log" >&2
    exit 2
}

# start_redis_n N: N independent servers (RedLock tests). Their ports, pids and
# URLs in REDIS_PORTS[0..N-1], REDIS_PIDS[], REDIS_URLS[]; REDIS_PORT, REDIS_PID
# and EDGELOCK_URL are left pointing at the last one, as start_redis leaves them.
start_redis_n() {
    local k
    REDIS_PORTS=()
    REDIS_PIDS=()
    REDIS_URLS=()
    for k in $(seq 1 "$1"); do
        start_redis
        REDIS_PORTS+=("$REDIS_PORT")
        REDIS_PIDS+=("$REDIS_PID")
        REDIS_URLS+=("$REDIS_URL")
    done
}

# stop_redis_pid PID: stops one of the servers (SIGKILL), waits for it to go.
stop_redis_pid() {
    kill -9 "$1" 2>/dev/null && wait "$1" 2>/dev/null
    [ "$1" = "$REDIS_PID" ] && REDIS_PID=
    return 0
}

stop_redis() {
    [ -n "$REDIS_PID" ] && kill -9 "$REDIS_PID" 2>/dev/null && wait "$REDIS_PID" 2>/dev/null
    REDIS_PID=
}

now_ms() { date +%s%3N; }

pass() { PASSED=$((PASSED + 1)); echo "ok   - $1"; }
fail() { FAILED=$((FAILED + 1)); echo "FAIL - $1" >&2; echo "FAIL - $1"; }

# check DESCRIPTION COMMAND...: passes when COMMAND succeeds.
check() {
    local what=$1
    shift
    if "$@"; then pass "$what"; else fail "$what"; fi
}

# expect_rc WANT DESCRIPTION COMMAND...: runs COMMAND with stdout/stderr
# captured in $OUT / $ERR (files), checks its exit status.
OUT=$TMP/out
ERR=$TMP/err
LAST_RC=0
expect_rc() {
    local want=$1 what=$2
    shift 2
    "$@" >"$OUT" 2>"$ERR"
    LAST_RC=$?
    if [ "$LAST_RC" -eq "$want" ]; then
        pass "$what (exit $want)"
    else
        fail "$what: exit $LAST_RC, want $want"
        sed 's/^/    stdout: /' "$OUT"
        sed 's/^/    stderr: /' "$ERR"
    fi
}

# Wall-clock bounds in these tests only catch hangs: a loaded machine may be
# slow by seconds, so no assertion depends on how fast something happened.
# What is asserted is the outcome and the order of events. HANG_MS bounds a
# wait for something that should come soon; HANG_S the same in seconds.
HANG_MS=60000
HANG_S=60

# wait_for DESCRIPTION TIMEOUT_MS COMMAND...: polls COMMAND (test side only).
wait_for() {
    local what=$1 limit=$2
    shift 2
    local end=$(($(now_ms) + limit))
    while ! "$@"; do
        if [ "$(now_ms)" -ge "$end" ]; then
            fail "timed out waiting for: $what"
            return 1
        fi
        sleep 0.02
    done
    return 0
}

# subscribed CHANNEL: someone listens on CHANNEL, e.g. a waiter on the lock
# NAME's redisson_lock__channel:{NAME} (the holder does not).
subscribed() { [ "$(rcli pubsub numsub "$1" | sed -n 2p)" -ge 1 ] 2>/dev/null; }

lock_held() { [ "$(rcli exists "$1")" = 1 ]; }
lock_free() { [ "$(rcli exists "$1")" = 0 ]; }

finish() {
    echo "$PASSED passed, $FAILED failed"
    [ "$FAILED" -eq 0 ]
    exit $?
}
