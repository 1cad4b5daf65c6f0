#!/usr/bin/env bash
# `make size`: the footprint of edgelock per ARM target (MinSizeRel, -Os), as
# docs/FOOTPRINT.md records it:
#   - .text/.data/.bss of libedgelock.a (sum over its members, the cross `size -t`);
#   - .text/.data/.bss of a statically linked example (examples/blocking_threads.c
#     with libedgelock.a, hiredis, libevent and glibc all static), and how much
#     of its .text each library brought (from the link map);
#   - table bytes per configured lock, hold, waiter, subscription and command,
#     computed on the target by tests/unit/test_footprint.cpp under qemu-user.
# Exits non-zero when armhf's libedgelock.a has more .text than the budget.
#
# Environment: ARM_TARGETS, JOBS, CMAKE_FLAGS as scripts/arm.sh;
# EDGELOCK_TEXT_BUDGET (bytes, default 98304 = 96 KiB).
set -euo pipefail
cd "$(dirname "$0")/.."

targets=${ARM_TARGETS:-armhf aarch64}
budget=${EDGELOCK_TEXT_BUDGET:-98304}
example=examples/blocking_threads.c

ARM_TARGETS="$targets" ./scripts/arm.sh build >/dev/null

status=0
for t in $targets; do
  case "$t" in
  armhf) triplet=arm-linux-gnueabihf ;;
  aarch64) triplet=aarch64-linux-gnu ;;
  esac
  build=build-arm/$t
  sysroot=$(cd "build-arm/sysroot-$t" && pwd)
  libdir=$sysroot/usr/lib/$triplet
  out=$build/size
  mkdir -p "$out"

  echo "=== $t ($triplet, MinSizeRel)"
  read -r text data bss _ < <("$triplet-size" -t "$build/libedgelock.a" | awk '/\(TOTALS\)/ {print $1, $2, $3}')
  printf '  libedgelock.a            .text %7d  .data %5d  .bss %5d   (%d.%d KiB .text)\n' \
    "$text" "$data" "$bss" $((text / 1024)) $((text % 1024 * 10 / 1024))
  code=$("$triplet-size" -A "$build/libedgelock.a" | awk '$1 ~ /^\.text/ {n += $2} END {print n + 0}')
  echo "    of which code $code, read-only data and unwind tables $((text - code)) (the embedded Lua scripts among it)"
  if [ "$t" = armhf ]; then
    if [ "$text" -le "$budget" ]; then
      echo "  budget: $budget bytes of .text on armhf: within ($((budget - text)) to spare)"
    else
      echo "  budget: $budget bytes of .text on armhf: OVER by $((text - budget))" >&2
      status=1
    fi
  fi
  echo "  largest members (.text):"
  "$triplet-size" "$build/libedgelock.a" | awk 'NR > 1 {print $1, $6}' | sort -rn | head -n 6 |
    while read -r n f; do printf '    %-24s %7d\n' "$f" "$n"; done

  # The example, compiled as the examples are (C11, gnu extensions) at -Os,
  # linked fully static; the map says which archive each input section came from.
  "$triplet-gcc" -Os -std=gnu11 -Iinclude -isystem "$sysroot/usr/include" -c "$example" -o "$out/example.o"
  "$triplet-gcc" -static -o "$out/example-static" "$out/example.o" "$build/libedgelock.a" \
    "$libdir/libhiredis.a" "$libdir/libevent_core.a" "$libdir/libevent_pthreads.a" -lpthread \
    -Wl,-Map="$out/example-static.map" 2>"$out/link.log" ||
    { cat "$out/link.log" >&2; exit 1; }
  read -r text data bss _ < <("$triplet-size" "$out/example-static" | awk 'NR == 2 {print $1, $2, $3}')
  printf '  %-24s .text %7d  .data %5d  .bss %5d   (static, glibc included)\n' \
    "$(basename "$example" .c)" "$text" "$data" "$bss"
  # Input sections of the output .text (code; size's .text also counts
  # read-only data), summed per archive.
  awk '
    function hex(s,   i, n) {  # mawk has no strtonum
      n = 0
      for (i = 3; i <= length(s); i++) n = n * 16 + index("0123456789abcdef", tolower(substr(s, i, 1))) - 1
      return n
    }
    function add(file, n) {
      if (file ~ /libedgelock\.a/) k = "edgelock"
      else if (file ~ /libhiredis\.a/) k = "hiredis"
      else if (file ~ /libevent/) k = "libevent"
      else if (file ~ /example\.o/) k = "example"
      else k = "libc, libgcc, crt"
      sum[k] += n
    }
    /^\.text[ \t]/ { in_text = 1; next }
    /^[^ \t]/ { in_text = 0 }
    in_text && /^ \.text/ {
      if (NF >= 4) { add($4, hex($3)) }
      else { pending = 1 }
      next
    }
    in_text && pending && NF >= 3 && $1 ~ /^0x/ { add($3, hex($2)); pending = 0; next }
    { pending = 0 }
    END {
      for (k in sum) printf "    code from %-20s %7d\n", k, sum[k]
    }' "$out/example-static.map" | sort -k4 -rn

  echo "  table memory (computed on the target, tests/unit/test_footprint.cpp):"
  (cd "$build" && ctest -R '^unit_test_footprint$' -V 2>&1) | sed -n 's/^[0-9]*: footprint: /    /p'
  echo
done
exit $status
