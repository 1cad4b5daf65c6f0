#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# `make size`: the footprint of edgelock per ARM target (MinSizeRel, -Os), as
# docs/FOOTPRINT.md records it:
#   - .text/.data/.bss of libedgelock.a (sum over its members, the cross `size -t`),
#     of the build `make arm` tests (hiredis 1.2, TLS on: the budget build) and
#     of the same library with -DEDGELOCK_TLS=OFF (build-arm/<target>-notls,
#     the library alone);
#   - .text/.data/.bss of a statically linked example (examples/blocking_threads.c
#     with libedgelock.a, hiredis, libevent, OpenSSL and glibc all static), with
#     and without TLS, and how much of its .text each library brought (from the
#     link map);
#   - table bytes per configured lock, hold, waiter, subscription and command,
#     computed on the target by tests/unit/test_footprint.cpp under qemu-user.
# Exits non-zero when armhf's libedgelock.a (TLS on) has more .text than the budget.
#
# Environment: ARM_TARGETS, JOBS, CMAKE_FLAGS, ARM_HIREDIS as scripts/arm.sh
# (ARM_HIREDIS=system: the target's hiredis 0.14, which has no TLS, so no
# second build); EDGELOCK_TEXT_BUDGET (bytes, default 98304 = 96 KiB).
set -euo pipefail
cd "$(dirname "$0")/.."

targets=${ARM_TARGETS:-armhf aarch64}
jobs=${JOBS:-2}
budget=${EDGELOCK_TEXT_BUDGET:-98304}
example=examples/blocking_threads.c
# The build directories scripts/arm.sh names.
case "${ARM_HIREDIS:-1.2}" in
1.2) suffix="" ;;
system) suffix=-hiredis0.14 ;;
*) echo "size: ARM_HIREDIS is 1.2 or system, not '$ARM_HIREDIS'" >&2; exit 2 ;;
esac

ARM_TARGETS="$targets" ./scripts/arm.sh build >/dev/null

# lib_figures TRIPLET ARCHIVE LABEL: .text/.data/.bss of ARCHIVE; sets $text.
lib_figures() {
  local triplet=$1 lib=$2 label=$3 data bss code
  read -r text data bss _ < <("$triplet-size" -t "$lib" | awk '/\(TOTALS\)/ {print $1, $2, $3}')
  printf '  %-32s .text %7d  .data %5d  .bss %5d   (%d.%d KiB .text)\n' \
    "$label" "$text" "$data" "$bss" $((text / 1024)) $((text % 1024 * 10 / 1024))
  code=$("$triplet-size" -A "$lib" | awk '$1 ~ /^\.text/ {n += $2} END {print n + 0}')
  echo "    of which code $code, read-only data and unwind tables $((text - code)) (the embedded Lua scripts among it)"
}

# link_example TRIPLET SYSROOT ARCHIVE OUTDIR LABEL: the example, compiled as
# the examples are (C11, gnu extensions) at -Os, linked fully static; the map
# says which archive each input section came from. Every library the sysroot
# has is offered: a static link takes from an archive only the members that
# something needs, so a library without TLS brings in no OpenSSL.
link_example() {
  local triplet=$1 sysroot=$2 lib=$3 out=$4 label=$5 libdir text data bss a
  libdir=$sysroot/usr/lib/$triplet
  local libs=("$lib")
  for a in libhiredis_ssl.a libhiredis.a libevent_core.a libevent_pthreads.a libssl.a libcrypto.a; do
    [ -f "$libdir/$a" ] && libs+=("$libdir/$a")
  done
  mkdir -p "$out"
  "$triplet-gcc" -Os -std=gnu11 -Iinclude -I"$(dirname "$lib")/include" -isystem "$sysroot/usr/include" -c "$example" -o "$out/example.o"
  # glibc warns that a static libcrypto's dlopen and getaddrinfo still need
  # the shared libraries at run time: the log keeps that, the figures do not
  # depend on it.
  "$triplet-gcc" -static -o "$out/example-static" "$out/example.o" "${libs[@]}" -lpthread \
    -Wl,-Map="$out/example-static.map" 2>"$out/link.log" ||
    { cat "$out/link.log" >&2; exit 1; }
  read -r text data bss _ < <("$triplet-size" "$out/example-static" | awk 'NR == 2 {print $1, $2, $3}')
  printf '  %-32s .text %7d  .data %5d  .bss %5d   (static, glibc included)\n' \
    "$label" "$text" "$data" "$bss"
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
      else if (file ~ /libhiredis(_ssl)?\.a/) k = "hiredis"
      else if (file ~ /libevent/) k = "libevent"
      else if (file ~ /lib(ssl|crypto)\.a/) k = "openssl"
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
}

status=0
for t in $targets; do
  case "$t" in
  armhf) triplet=arm-linux-gnueabihf ;;
  aarch64) triplet=aarch64-linux-gnu ;;
  esac
  build=build-arm/$t$suffix
  sysroot=$(cd "build-arm/sysroot-$t$suffix" && pwd)
  hiredis=$(sed -n 's/^Version: //p' "$sysroot/usr/lib/$triplet/pkgconfig/hiredis.pc")
  tls=on
  if [ ! -f "$sysroot/usr/lib/$triplet/libhiredis_ssl.a" ] ||
    grep -q '^EDGELOCK_TLS:STRING=OFF$' "$build/CMakeCache.txt"; then
    tls=off
  fi

  echo "=== $t ($triplet, MinSizeRel, hiredis $hiredis, TLS $tls)"
  lib_figures "$triplet" "$build/libedgelock.a" "libedgelock.a, TLS $tls"
  primary_text=$text
  if [ "$t" = armhf ]; then
    if [ "$primary_text" -le "$budget" ]; then
      echo "  budget: $budget bytes of .text on armhf: within ($((budget - primary_text)) to spare)"
    else
      echo "  budget: $budget bytes of .text on armhf: OVER by $((primary_text - budget))" >&2
      status=1
    fi
  fi
  echo "  largest members (.text):"
  "$triplet-size" "$build/libedgelock.a" | awk 'NR > 1 {print $1, $6}' | sort -rn | head -n 6 |
    while read -r n f; do printf '    %-24s %7d\n' "$f" "$n"; done

  # The same library without TLS, against the same hiredis: what TLS costs.
  notls=""
  if [ "$tls" = on ]; then
    notls=$build-notls
    # Made again along with the build scripts/arm.sh made again.
    if [ "$(cat "$notls/.edgelock-deps" 2>/dev/null)" != "$(cat "$build/.edgelock-deps")" ]; then
      rm -rf "$notls"
      # shellcheck disable=SC2086 # CMAKE_FLAGS is a list of options
      cmake -S . -B "$notls" -DCMAKE_TOOLCHAIN_FILE="toolchains/$triplet.cmake" \
        -DEDGELOCK_SYSROOT="$sysroot" -DCMAKE_BUILD_TYPE=MinSizeRel ${CMAKE_FLAGS:-} \
        -DEDGELOCK_TLS=OFF -DEDGELOCK_BUILD_TESTS=OFF -DEDGELOCK_BUILD_EXAMPLES=OFF >/dev/null
      cp "$build/.edgelock-deps" "$notls/.edgelock-deps"
    fi
    cmake --build "$notls" --target edgelock -j"$jobs" >/dev/null
    lib_figures "$triplet" "$notls/libedgelock.a" "libedgelock.a, TLS off"
    echo "  TLS adds $((primary_text - text)) bytes of .text to libedgelock.a"
  fi

  link_example "$triplet" "$sysroot" "$build/libedgelock.a" "$build/size" \
    "$(basename "$example" .c), TLS $tls"
  if [ -n "$notls" ]; then
    link_example "$triplet" "$sysroot" "$notls/libedgelock.a" "$notls/size" \
      "$(basename "$example" .c), TLS off"
  fi

  echo "  table memory (computed on the target, tests/unit/test_footprint.cpp):"
  (cd "$build" && ctest -R '^unit_test_footprint$' -V 2>&1) | sed -n 's/^[0-9]*: footprint: /    /p'
  echo
done
exit $status
