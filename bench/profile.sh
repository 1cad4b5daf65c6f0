#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Where the time goes, for the goals BENCHMARKS.md reports as missed. Not part
# of `make bench` (it takes a few minutes under valgrind); run it by hand after
# `make bench` has built bench/build:
#
#   bench/profile.sh [bench/build]
#
# 1. System calls per lock+unlock pair (strace -c -f): plain sync hiredis,
#    edgelock async API, edgelock blocking API; per acquisition in scenario C.
# 2. Instructions per pair by library (callgrind): edgelock vs hiredis vs
#    libevent vs libc, async API.
# 3. Instructions per watchdog period with 10,000 holds (callgrind), by function.
# Output goes to bench/out/profile/; a summary is printed.
set -euo pipefail
BUILD=${1:-bench/build}
B="$BUILD/edgelock_bench"
OUT=bench/out/profile
mkdir -p "$OUT"
PORT=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
redis-server --port "$PORT" --bind 127.0.0.1 --save "" --appendonly no --logfile /dev/null &
RPID=$!
trap 'kill $RPID 2>/dev/null || true' EXIT
for _ in $(seq 100); do redis-cli -p "$PORT" ping >/dev/null 2>&1 && break; sleep 0.05; done

per() { # per FILE N: syscalls per operation from an strace -c summary
  awk -v n="$2" '$NF ~ /^[a-z_0-9]+$/ && $4 ~ /^[0-9]+$/ { c[$NF] = $4 }
                 $(NF-1) ~ /^[0-9]+$/ && $NF ~ /^[a-z_0-9]+$/ && NF == 5 { c[$NF] = $4 }
                 END { t = 0; s = ""; for (k in c) { if (k == "total") continue; v = c[k] / n; if (v >= 0.05) s = s sprintf(" %s=%.1f", k, v); t += c[k] }
                       printf "total=%.1f%s\n", t / n, s }' "$1"
}

echo "== system calls per operation (strace -c -f; setup included, so read totals as upper bounds)"
strace -f -c -o "$OUT/probe.strace" "$B" probe --port "$PORT" --hot 2000 --ms 0 --idle 0 >/dev/null
echo "plain sync hiredis, per round trip:   $(per "$OUT/probe.strace" 2050)"
strace -f -c -o "$OUT/a_async.strace" "$B" a_async --port "$PORT" --pairs 2000 --floor 0 >/dev/null
echo "edgelock async API, per pair:         $(per "$OUT/a_async.strace" 2500)"
BENCH_EPOLL_CHANGELIST=1 strace -f -c -o "$OUT/a_async_cl.strace" "$B" a_async --port "$PORT" --pairs 2000 --floor 0 >/dev/null
echo "... on a base with the epoll changelist: $(per "$OUT/a_async_cl.strace" 2500)"
strace -f -c -o "$OUT/a_blocking.strace" "$B" a_blocking --port "$PORT" --pairs 2000 --floor 0 >/dev/null
echo "edgelock blocking API, per pair:      $(per "$OUT/a_blocking.strace" 2500)"
for kind in reentrant fair; do
  N=$(strace -f -c -o "$OUT/c_$kind.strace" "$B" c --kind $kind --api async --ms 2000 --port "$PORT" |
      /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["acquisitions"])')
  echo "C $kind, async API, per acquisition ($N): $(per "$OUT/c_$kind.strace" "$N")"
done

echo "== instructions per pair by library (callgrind, edgelock async API, 2,000 + 500 warm-up pairs)"
valgrind --tool=callgrind --callgrind-out-file="$OUT/a_async.callgrind" "$B" a_async --port "$PORT" \
  --pairs 2000 --floor 0 >/dev/null 2>"$OUT/a_async.valgrind.log"
callgrind_annotate --inclusive=no --threshold=100 "$OUT/a_async.callgrind" > "$OUT/a_async.annotate"
/usr/bin/python3 - "$OUT/a_async.annotate" 2500 <<'PY'
import re, sys
by, last = {}, "?"
for line in open(sys.argv[1]):
    m = re.match(r"\s*([\d,]+)\s+\([^)]*\)\s+(\S+?):(.*?)(?:\s+\[(.*)\])?\s*$", line)
    if not m or m.group(2) == "PROGRAM":
        continue
    ir, src, obj = int(m.group(1).replace(",", "")), m.group(2), m.group(4)
    obj = obj.split("/")[-1] if obj else last
    last = obj
    if "bench/src" in src or src.startswith("/usr/include"):
        what = "benchmark driver"
    elif re.search(r"(^|/)(src|port|generated)/", src):
        what = "edgelock (src/, port/)"
    else:
        what = obj
    by[what] = by.get(what, 0) + ir
n = int(sys.argv[2])
for k, v in sorted(by.items(), key=lambda kv: -kv[1])[:8]:
    print("  %-32s %8.0f instructions per pair" % (k, v / n))
PY
echo "  top functions:"
grep -E "^\s*[0-9,]+ " "$OUT/a_async.annotate" | sed -n '2,7p' | cut -c1-150

echo "== the watchdog with 10,000 holds (callgrind; 4 periods of 1 s, plus taking and releasing the locks)"
valgrind --tool=callgrind --callgrind-out-file="$OUT/d.callgrind" "$B" d --port "$PORT" --periods 4 \
  >"$OUT/d.json" 2>"$OUT/d.valgrind.log"
callgrind_annotate --inclusive=no --threshold=95 "$OUT/d.callgrind" | sed -n '1,40p' > "$OUT/d.annotate"
grep -E "^\s*[0-9,]+ " "$OUT/d.annotate" | head -8
