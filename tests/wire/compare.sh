#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Wire comparison: run scenario.c linked against two builds of edgelock, each
# against a fresh private redis-server recorded with MONITOR, normalise the
# two command logs (normalise.py) and diff them, and the scenario's stdout.
#
# Usage: tests/wire/compare.sh OLD_BUILD_DIR NEW_BUILD_DIR [OUT_DIR]
#   *_BUILD_DIR: a CMake build dir holding libedgelock.a; the headers are taken
#   from its source tree (CMAKE_HOME_DIRECTORY in its CMakeCache.txt).
#   OUT_DIR (default: a fresh mktemp dir) keeps the raw and normalised logs.
# Environment:
#   WIRE_PORT   loopback port for the private servers (default: a free one)
#   WIRE_RUNS   runs per build and mode (default 1). With 2 or more, every run
#               is diffed against the first old run of its mode, which also
#               shows whether the scenario itself is deterministic.
#   WIRE_MODES  modes (default "scripts flush"):
#               scripts   the client loads its scripts when it connects and
#                         every script call is an EVALSHA;
#               flush     the scenario pauses once connected (its go-file
#                         argument) while this script runs SCRIPT FLUSH, so
#                         the first call of each script gets NOSCRIPT and is
#                         re-sent as EVAL with the script body.
#   WIRE_STRACE=1  also record the scenario's socket writes with strace and
#               compare the decoded byte streams (resp_stream.py checks that
#               each stream is exactly the canonical RESP of its commands).
# Exit status: 0 identical, 1 a difference, 2 a setup failure.
# Needs redis-server, redis-cli, python3, cc, pkg-config (hiredis, libevent).
set -u

here=$(cd "$(dirname "$0")" && pwd)
if [ $# -lt 2 ]; then
    sed -n '2,22p' "$0" >&2
    exit 2
fi
old_build=$(cd "$1" && pwd) || exit 2
new_build=$(cd "$2" && pwd) || exit 2
out=${3:-$(mktemp -d /tmp/edgelock-wire.XXXXXX)}
mkdir -p "$out" || exit 2
runs=${WIRE_RUNS:-1}
modes=${WIRE_MODES:-scripts flush}
strace_on=${WIRE_STRACE:-0}
password=wire-pw

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

port=${WIRE_PORT:-$(free_port)}
server_pid=
monitor_pid=

cleanup() {
    if [ -n "$monitor_pid" ]; then
        kill "$monitor_pid" 2>/dev/null
        wait "$monitor_pid" 2>/dev/null
    fi
    if [ -n "$server_pid" ]; then
        kill "$server_pid" 2>/dev/null
        wait "$server_pid" 2>/dev/null
    fi
    monitor_pid=
    server_pid=
}
trap cleanup EXIT
trap 'exit 2' INT TERM

cli() {
    redis-cli -h 127.0.0.1 -p "$port" -a "$password" --no-auth-warning "$@"
}

build_scenario() { # name build_dir
    local src
    src=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$2/CMakeCache.txt" 2>/dev/null)
    if [ -z "$src" ] || [ ! -f "$2/libedgelock.a" ]; then
        echo "$2: no libedgelock.a or no source tree in CMakeCache.txt" >&2
        return 1
    fi
    # shellcheck disable=SC2046
    cc -std=c99 "$here/scenario.c" -I"$src/include" "$2/libedgelock.a" \
        $(pkg-config --libs hiredis libevent_core libevent_pthreads) -lpthread -lstdc++ -o "$out/scenario-$1"
}

run_one() { # build-name mode tag
    local bin=$out/scenario-$1 log=$out/monitor-$3.raw
    # A fresh server for every run: no scripts cached, no keys.
    redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --daemonize no \
        --requirepass "$password" >"$out/redis-$3.log" 2>&1 &
    server_pid=$!
    for _ in $(seq 100); do
        cli PING 2>/dev/null | grep -q PONG && break
        sleep 0.05
    done
    if ! cli PING 2>/dev/null | grep -q PONG; then
        echo "redis-server on port $port did not start (see $out/redis-$3.log)" >&2
        return 1
    fi
    cli MONITOR >"$log" 2>&1 &
    monitor_pid=$!
    for _ in $(seq 100); do
        grep -q '^OK' "$log" && break
        sleep 0.05
    done
    local url="redis://default:$password@127.0.0.1:$port/1" rc
    local run=(timeout 120)
    [ "$strace_on" = 1 ] && run+=(strace -f -xx -s 1000000 -e "trace=write,sendto" -o "$out/strace-$3.txt")
    if [ "$2" = flush ]; then
        local go=$out/go-$3
        rm -f "$go"
        "${run[@]}" "$bin" "$url" "$go" >"$out/stdout-$3.txt" 2>&1 &
        local pid=$!
        for _ in $(seq 200); do
            grep -q '^paused$' "$out/stdout-$3.txt" && break
            sleep 0.05
        done
        grep -q '^paused$' "$out/stdout-$3.txt" || echo "scenario did not pause" >&2
        cli SCRIPT FLUSH >/dev/null
        touch "$go"
        wait "$pid"
        rc=$?
    else
        "${run[@]}" "$bin" "$url" >"$out/stdout-$3.txt" 2>&1
        rc=$?
    fi
    echo "exit $rc" >>"$out/stdout-$3.txt"
    # Everything the scenario sent is in the log once this marker is.
    cli ECHO wire-compare-end >/dev/null
    for _ in $(seq 100); do
        grep -q '"ECHO" "wire-compare-end"' "$log" && break
        sleep 0.05
    done
    cleanup
    python3 "$here/normalise.py" <"$log" >"$out/monitor-$3.txt"
    if [ "$strace_on" = 1 ]; then
        python3 "$here/resp_stream.py" "$out/strace-$3.txt" >"$out/bytes-$3.txt" 2>"$out/bytes-$3.err" ||
            echo "$3: the socket writes do not parse as canonical RESP (see $out/bytes-$3.txt)" >&2
    fi
}

build_scenario old "$old_build" || exit 2
build_scenario new "$new_build" || exit 2

tags=()
for mode in $modes; do
    for n in $(seq "$runs"); do
        run_one old "$mode" "$mode-old$n" || exit 2
        run_one new "$mode" "$mode-new$n" || exit 2
        [ "$n" -gt 1 ] && tags+=("$mode-old$n")
        tags+=("$mode-new$n")
    done
done

echo "old: $old_build"
echo "new: $new_build"
echo "port $port; logs in $out"
status=0
for tag in "${tags[@]}"; do
    ref=${tag%%-*}-old1
    a=$out/monitor-$ref.txt
    b=$out/monitor-$tag.txt
    echo "== $ref vs $tag: $(grep -c '^\[' "$a") vs $(grep -c '^\[' "$b") client commands" \
        "($(grep -c . "$a") vs $(grep -c . "$b") lines with the script calls)"
    diff -u "$a" "$b" >"$out/diff-$tag.txt"
    d1=$?
    diff -u "$out/stdout-$ref.txt" "$out/stdout-$tag.txt" >>"$out/diff-$tag.txt"
    d2=$?
    d3=0
    if [ "$strace_on" = 1 ]; then
        echo "   socket bytes: $(tr '\n' ' ' <"$out/bytes-$ref.err")vs $(tr '\n' ' ' <"$out/bytes-$tag.err")"
        diff -u "$out/bytes-$ref.txt" "$out/bytes-$tag.txt" >>"$out/diff-$tag.txt"
        d3=$?
    fi
    if [ $d1 -eq 0 ] && [ $d2 -eq 0 ] && [ $d3 -eq 0 ]; then
        echo "identical (commands$([ "$strace_on" = 1 ] && echo ", socket bytes") and scenario output)"
    else
        status=1
        cat "$out/diff-$tag.txt"
    fi
done
exit $status
