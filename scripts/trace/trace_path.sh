#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Measures which src/ files the blocking (edgelock_try_lock) and async
# (edgelock_lock_async) acquire paths enter, and how often: the objective check
# for "the try_lock paths enter each file at most once on the way down and once
# on the way back".
#
#   scripts/trace/trace_path.sh [BUILD_DIR]      (default build-trace/)
#
# 1. configures a separate Debug build of libedgelock.a with
#    -finstrument-functions -O0 (C++ sources only, i.e. src/ plus the generated
#    scripts table; port/ is C and is not instrumented; /usr/include excluded);
# 2. builds scripts/trace/driver.c against it (non-PIE, so addresses are link-time);
# 3. starts a throwaway redis-server on a free loopback port (never 6379),
#    runs the driver (writes BUILD_DIR/trace/{A,B}.events), stops the server;
# 4. prints the call trees and per-file counts with trace_path.py (also saved
#    to BUILD_DIR/trace/report.txt).
# Inline functions in headers (.hpp) do not count as entering a file; extra
# arguments after BUILD_DIR go to trace_path.py.
# TRACE_REV=<git rev> traces that commit instead of the work tree (exported with
# git archive into BUILD_DIR/rev-src, built in BUILD_DIR/rev-build), e.g. while
# src/ is mid-edit and does not compile.
set -eu -o pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
BUILD=${1:-$ROOT/build-trace}
shift || true
OUT=$BUILD/trace
mkdir -p "$OUT"
SRC=$ROOT
if [ -n "${TRACE_REV:-}" ]; then
    SRC=$BUILD/rev-src
    BUILD=$BUILD/rev-build
    rm -rf "$SRC" && mkdir -p "$SRC"
    git -C "$ROOT" archive "$TRACE_REV" | tar -x -C "$SRC"
    echo "trace_path: tracing $(git -C "$ROOT" rev-parse --short "$TRACE_REV") ($TRACE_REV)" >&2
fi

cmake -S "$SRC" -B "$BUILD" -DEDGELOCK_BUILD_TESTS=OFF -DEDGELOCK_BUILD_EXAMPLES=OFF \
    -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_FLAGS="-O0 -g" \
    -DCMAKE_CXX_FLAGS="-O0 -g -finstrument-functions -finstrument-functions-exclude-file-list=/usr/include,/usr/local/include,/port/" \
    >"$OUT/cmake.log" 2>&1 || { cat "$OUT/cmake.log"; exit 1; }
cmake --build "$BUILD" --target edgelock -j2 >"$OUT/build.log" 2>&1 || { tail -50 "$OUT/build.log"; exit 1; }

# shellcheck disable=SC2046
cc -O0 -g -no-pie -I"$SRC/include" "$HERE/driver.c" -o "$OUT/driver" "$BUILD/libedgelock.a" \
    $(pkg-config --libs hiredis libevent_core libevent_pthreads) -lpthread -lstdc++

REDIS_PID=
cleanup() { [ -n "$REDIS_PID" ] && kill "$REDIS_PID" 2>/dev/null && wait "$REDIS_PID" 2>/dev/null; true; }
trap cleanup EXIT
for _ in $(seq 1 20); do
    port=$((20000 + (RANDOM * 32768 + RANDOM) % 40000))
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && continue # in use
    redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --daemonize no \
        >"$OUT/redis.log" 2>&1 &
    REDIS_PID=$!
    for _ in $(seq 1 50); do
        [ "$(redis-cli -p "$port" info server 2>/dev/null | tr -d '\r' | sed -n 's/^process_id://p')" = "$REDIS_PID" ] && break 2
        sleep 0.1
    done
    kill "$REDIS_PID" 2>/dev/null; wait "$REDIS_PID" 2>/dev/null || true; REDIS_PID=
done
[ -n "$REDIS_PID" ] || { echo "trace_path: could not start redis-server" >&2; exit 1; }

"$OUT/driver" "redis://127.0.0.1:$port" "$OUT"
cleanup; REDIS_PID=
python3 "$HERE/trace_path.py" --src "$SRC/src" --binary "$OUT/driver" --no-headers "$@" "$OUT/A.events" "$OUT/B.events" \
    | tee "$OUT/report.txt"
