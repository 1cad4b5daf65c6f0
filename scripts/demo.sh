#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# make demo: what edgelock is for, in about 25 seconds.
#
#   scripts/demo.sh BUILD_DIR
#
# Simulated gateways (`edgelock run` processes) contend for one
# firmware-update lock: who waits, who gets it, the watchdog renewing a lease
# shorter than the update, and a holder killed with SIGKILL whose lock is freed
# when its lease runs out; on a build with TLS, the same over rediss:// with
# certificates made on the spot; and a Sentinel failover while a gateway holds
# the lock. Uses EDGELOCK_URL when it points at a reachable
# Redis, otherwise a throwaway redis-server on a free loopback port, stopped at
# the end.
set -u
BUILD=${1:-build}
EL=$BUILD/tools/edgelock
case $EL in /*) ;; *) EL=$PWD/$EL ;; esac
[ -x "$EL" ] || { echo "demo: $EL not found; build first (make)" >&2; exit 1; }

LOCK=demo:firmware-update
LEASE=3000 # watchdog lease for the demo (ms): renewed every second
TMP=$(mktemp -d "${TMPDIR:-/tmp}/edgelock-demo.XXXXXX")
REDIS_PID=
T0=$(date +%s%3N)

cleanup() {
    local pids
    pids=$(jobs -p)
    [ -n "$pids" ] && kill $pids 2>/dev/null
    if [ -n "$REDIS_PID" ]; then
        kill "$REDIS_PID" 2>/dev/null
        wait "$REDIS_PID" 2>/dev/null
        echo "demo: stopped the throwaway redis-server"
    fi
    rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

ms() { echo $(($(date +%s%3N) - T0)); }
stamp() {
    local t
    t=$(ms)
    printf '[%3d.%02ds]' $((t / 1000)) $((t % 1000 / 10))
}
say() { echo "$(stamp) $*"; }
banner() { echo; echo "=== $* ==="; }
# prefix WHO: stamps every line read, e.g. a gateway's stdout and stderr.
prefix() { while IFS= read -r line; do echo "$(stamp) $1 | $line"; done; }

# --- Redis --------------------------------------------------------------------
# spawn_redis [CONF] ARGS...: a redis-server of ours on a free loopback port
# (CONF: a config file first, as sentinels need); sets SPAWN_PORT, SPAWN_PID.
# A port taken meanwhile costs an attempt.
spawn_redis() {
    local port i attempt conf=()
    case ${1:-} in /*) conf=("$1"); shift ;; esac
    command -v redis-server >/dev/null || { echo "demo: redis-server not installed (make deps)" >&2; exit 1; }
    for attempt in 1 2 3 4 5 6 7 8; do
        port=$((20000 + (RANDOM * 32768 + RANDOM) % 40000))
        (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && continue
        redis-server ${conf[@]+"${conf[@]}"} --port "$port" --bind 127.0.0.1 --save '' --appendonly no \
            --loglevel warning --logfile /dev/null "$@" &
        SPAWN_PID=$!
        for i in $(seq 1 200); do
            if [ "$(redis-cli -p "$port" info server 2>/dev/null | tr -d '\r' | sed -n 's/^process_id://p')" = "$SPAWN_PID" ]; then
                SPAWN_PORT=$port
                return 0
            fi
            kill -0 "$SPAWN_PID" 2>/dev/null || break
            sleep 0.02
        done
        kill -9 "$SPAWN_PID" 2>/dev/null
        wait "$SPAWN_PID" 2>/dev/null
    done
    return 1
}

start_redis() {
    spawn_redis || { echo "demo: cannot start redis-server" >&2; exit 1; }
    REDIS_PID=$SPAWN_PID
    export EDGELOCK_URL=redis://127.0.0.1:$SPAWN_PORT
    echo "demo: started a throwaway redis-server on 127.0.0.1:$SPAWN_PORT"
}

if [ -n "${EDGELOCK_URL:-}" ] && "$EL" status "$LOCK" >/dev/null 2>&1; then
    echo "demo: using the Redis at EDGELOCK_URL"
else
    [ -n "${EDGELOCK_URL:-}" ] && echo "demo: EDGELOCK_URL is not reachable; using a throwaway Redis instead"
    unset EDGELOCK_URL
    start_redis
fi
"$EL" unlock --force "$LOCK" >/dev/null

# The "firmware update" every gateway runs under the lock: it logs its start
# and end (to check that no two overlap) and takes SECONDS seconds. When its
# edgelock dies, it gets SIGTERM (possibly once per thread edgelock had: the
# kernel's parent-death signal follows each exiting thread).
cat >"$TMP/flash" <<'EOF'
#!/bin/sh
# flash GATEWAY SECONDS LOG
trap 'kill $! 2>/dev/null; echo "end $1 $(date +%s%3N)" >>"$3"; echo "interrupted"; exit 143' TERM
echo "start $1 $(date +%s%3N)" >>"$3"
echo "flashing firmware v2.1 ($2 s)..."
sleep "$2" & wait $!
echo "end $1 $(date +%s%3N)" >>"$3"
echo "flash complete"
EOF
chmod +x "$TMP/flash"
LOG=$TMP/flash.log
: >"$LOG"

# gateway NAME SECONDS [edgelock run options]: runs in the background, output
# stamped and prefixed; its edgelock's pid is in $! afterwards.
gateway() {
    local name=$1 secs=$2
    shift 2
    "$EL" -v run --watchdog "$LEASE" "$@" "$LOCK" -- "$TMP/flash" "$name" "$secs" "$LOG" \
        > >(prefix "$name") 2>&1 &
}

status_line() { say "status   | $("$EL" status "$LOCK" | tr '\n' ' ' | sed 's/  */ /g')"; }

# --- 1: contention ---------------------------------------------------------------
banner "1. Four gateways want to flash at once; the lock lets one at a time"
pids=()
for g in gw-1 gw-2 gw-3 gw-4; do
    gateway "$g" 1.5
    pids+=($!)
done
sleep 0.5
status_line
for p in "${pids[@]}"; do wait "$p"; done
say "all four are done; each waiter was woken by the holder's unlock message"

# --- 2: the watchdog ---------------------------------------------------------------
banner "2. An update longer than the lease: the watchdog renews it (lease ${LEASE} ms, every $((LEASE / 3)) ms)"
gateway gw-5 5
pid=$!
renewals=0
last_ttl=
for _ in 1 2 3 4 5 6 7 8 9; do
    sleep 0.5
    ttl=$("$EL" status --json "$LOCK" | sed -n 's/.*"ttl_ms":\([0-9]*\).*/\1/p')
    [ -n "$ttl" ] || break
    if [ -n "$last_ttl" ] && [ "$ttl" -gt "$last_ttl" ]; then
        renewals=$((renewals + 1))
        say "status   | TTL ${ttl} ms  <- renewed by the watchdog"
    else
        say "status   | TTL ${ttl} ms"
    fi
    last_ttl=$ttl
done
wait "$pid"

# --- 3: a crash ----------------------------------------------------------------------
banner "3. A gateway dies mid-update (SIGKILL): its lock is freed when the lease runs out"
gateway gw-6 30
victim=$!
sleep 0.5
gateway gw-7 1 # waits: no --wait means as long as it takes
waiter=$!
sleep 0.5
say "demo     | kill -9 gw-6 (its edgelock process; the update it ran gets SIGTERM)"
disown "$victim" # no "Killed" job report
kill -9 "$victim"
killed_at=$(ms)
status_line
say "demo     | nobody can unlock it now; gw-7 waits for the ${LEASE} ms lease to run out"
wait "$waiter"
start7=$(sed -n 's/^start gw-7 //p' "$LOG")
took_over=$((start7 - T0 - killed_at))

# --- 4: don't wait --------------------------------------------------------------------
banner "4. A cron job that must not queue up: --wait 0"
gateway gw-8 2
holder=$!
sleep 0.4
"$EL" run --wait 0 "$LOCK" -- true 2> >(prefix gw-9)
rc=$?
say "gw-9     | exit $rc (75: not acquired, try again later)"
wait "$holder"

sleep 0.2 # let the last prefixed lines through

# --- 5: finer locks (the C API) -------------------------------------------------------------
# It writes example:* keys, so only against the throwaway Redis.
STOCK=$BUILD/examples/example_stock_deduction
if [ -n "$REDIS_PID" ] && [ -x "$STOCK" ]; then
    banner "5. The C API: 4 gateways selling 400 units, one lock vs 4 segment locks"
    "$STOCK" | sed 's/^/  /'
fi

# --- TLS -----------------------------------------------------------------------------------
# A gateway reaching its Redis across a WAN: rediss://, the server's chain and
# name verified. Only on a build with TLS, with a throwaway server of our own.
if "$EL" --version | grep -q "(TLS)" && [ -n "$REDIS_PID" ]; then
    banner "6. Over TLS: rediss://, certificates made just now with openssl"
    CERTS=$TMP/certs
    if bash "$(dirname "$0")/../tests/integration/tls/make_certs.sh" "$CERTS"; then
        TLS_PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])' 2>/dev/null ||
            echo $((20000 + RANDOM % 20000)))
        redis-server --port 0 --tls-port "$TLS_PORT" --bind 127.0.0.1 --save '' --appendonly no \
            --tls-cert-file "$CERTS/server.crt" --tls-key-file "$CERTS/server.key" \
            --tls-ca-cert-file "$CERTS/ca.crt" --tls-auth-clients no --loglevel warning --logfile /dev/null &
        for _ in $(seq 1 100); do
            "$EL" --url "rediss://localhost:$TLS_PORT" --tls-ca "$CERTS/ca.crt" status demo:tls >/dev/null 2>&1 && break
            sleep 0.05
        done
        "$EL" --url "rediss://localhost:$TLS_PORT" --tls-ca "$CERTS/ca.crt" run demo:tls -- \
            echo "flashing over TLS, the server's certificate and name verified" | prefix "gw-tls  "
        "$EL" --url "rediss://localhost:$TLS_PORT" --tls-ca "$CERTS/ca.crt" --tls-server-name redis.example.com \
            status demo:tls 2>&1 | prefix "wrong name"
        say "a server that cannot prove its name is refused (exit 69), before any lock command is sent"
    fi
fi

# --- Sentinel -------------------------------------------------------------------------------
# A site Redis behind Sentinel: a master, a replica and one sentinel of our own.
# A gateway holds the lock while the sentinel moves the master; the client
# hears +switch-master, moves, and its watchdog renews on the new master.
SENTINEL_OK=skipped
if [ -n "$REDIS_PID" ]; then
    banner "7. Behind Sentinel: the master fails over while a gateway holds the lock"
    printf 'sentinel monitor site 127.0.0.1 %s 1\nsentinel down-after-milliseconds site 1000\nsentinel failover-timeout site 5000\n' \
        "${EDGELOCK_URL##*:}" >"$TMP/sentinel.conf"
    # The master is the demo's own Redis; a replica of it and a sentinel.
    MASTER_PORT=${EDGELOCK_URL##*:}
    # Replicas sync at once, not after the default 5 s wait for others.
    redis-cli -p "${EDGELOCK_URL##*:}" config set repl-diskless-sync-delay 0 >/dev/null
    if spawn_redis --replicaof 127.0.0.1 "$MASTER_PORT" --dir "$TMP" && REPLICA_PORT=$SPAWN_PORT &&
        spawn_redis "$TMP/sentinel.conf" --sentinel && SENTINEL_PORT=$SPAWN_PORT; then
        SURL=redis-sentinel://127.0.0.1:$SENTINEL_PORT/site
        sentinel() { redis-cli -p "$SENTINEL_PORT" "$@" 2>/dev/null; }
        # The replica in sync first (bounded: 20 s): a replica promoted
        # before its first sync has no locks, and their holders are told
        # they lost them.
        for _ in $(seq 1 200); do
            [ "$(redis-cli -p "$MASTER_PORT" wait 1 100)" = 1 ] && break
        done
        for _ in $(seq 1 200); do # until the sentinel knows the replica (bounded: 20 s)
            [ "$(sentinel sentinel replicas site | grep -c "^$REPLICA_PORT\$")" -ge 1 ] && break
            sleep 0.1
        done
        say "demo     | master :$MASTER_PORT, replica :$REPLICA_PORT, sentinel :$SENTINEL_PORT; URL $SURL"
        SLOG=$TMP/sentinel.log
        : >"$SLOG"
        spids=()
        for g in gw-s1 gw-s2; do
            "$EL" --url "$SURL" -v run --watchdog "$LEASE" demo:sentinel -- "$TMP/flash" "$g" 3 "$SLOG" \
                > >(prefix "$g") 2>&1 &
            spids+=($!)
            sleep 0.5
        done
        say "demo     | SENTINEL FAILOVER site"
        sentinel sentinel failover site >/dev/null
        for _ in $(seq 1 300); do
            [ "$(sentinel sentinel get-master-addr-by-name site | tail -1)" = "$REPLICA_PORT" ] && break
            sleep 0.1
        done
        say "demo     | the sentinel named :$(sentinel sentinel get-master-addr-by-name site | tail -1) the master (+switch-master)"
        for p in "${spids[@]}"; do wait "$p"; done
        sleep 0.2
        on_new=$(redis-cli -p "$REPLICA_PORT" exists demo:sentinel)
        SENTINEL_OK=$(sort -k3,3n "$SLOG" | awk '$1=="start"{n++; s++; if(n>1) bad=1} $1=="end"{n--} END{print (s==2 && !bad)?"yes":"NO"}')
        say "demo     | both updates ran, one at a time, across the failover: $SENTINEL_OK (lock key left: $on_new)"
    else
        say "demo     | could not start the Sentinel setup; skipped"
    fi
fi

# --- summary ------------------------------------------------------------------------------
# Overlap check: sort the start/end events by time; never two starts in a row.
overlap=$(sort -k3,3n "$LOG" | awk '$1=="start"{n++; if(n>1) bad=1} $1=="end"{n--} END{print bad?"YES":"no"}')
order=$(awk '$1=="start"{printf "%s ", $2}' "$LOG")
banner "Summary"
echo "  order of updates:          $order"
echo "  two updates at once:       $overlap"
echo "  watchdog renewals seen:    $renewals (a ${LEASE} ms lease kept for a 5 s update)"
echo "  crash to takeover:         ${took_over} ms (lease ${LEASE} ms: no operator needed)"
echo "  --wait 0 on a held lock:   exit $rc"
echo "  across a Sentinel failover: $SENTINEL_OK"
echo "  total:                     $(stamp | tr -d '[]')"
echo
echo "Try it yourself: $EL --help"
[ "$overlap" = no ] && [ "$renewals" -ge 1 ] && [ "$rc" -eq 75 ] && [ "$SENTINEL_OK" != NO ]
