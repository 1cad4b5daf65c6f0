#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# `make arm`: cross-builds edgelock for armhf and aarch64 (MinSizeRel) and runs
# the unit and integration tests of each under qemu-user, against a native
# redis-server on loopback (the tests start it themselves; exec from an
# emulated process runs the native binary).
#
#   scripts/arm.sh            build and test every target
#   scripts/arm.sh build      build only (make size uses this)
#
# Environment: ARM_TARGETS (default "armhf aarch64"), JOBS, TEST_JOBS (tests run
# at once, default twice JOBS as in the Makefile), CMAKE_FLAGS (extra
# -D options for the first configure), ARM_TEST_EXCLUDE (ctest -E regex),
# ARM_TEST_BUDGET_S (seconds one target's tests may take, default 420),
# EDGELOCK_TEXT_BUDGET (bytes of .text libedgelock.a may have on armhf),
# ARM_HIREDIS: 1.2 (default: hiredis 1.2 with TLS, built from Debian trixie's
# source by scripts/hiredis.sh --cross against the target's OpenSSL) or system
# (the target's own hiredis .debs: bookworm's 0.14, no TLS; `make arm
# HIREDIS=system`).
# Packages (cross compilers, qemu-user, dpkg-dev) are installed by the Makefile target.
#
# Layout: build-arm/sysroot-<target>  libevent + OpenSSL from Debian .debs, hiredis 1.2 built in
#         build-arm/<target>          the CMake build
#         build-arm/sysroot-<target>-hiredis0.14, build-arm/<target>-hiredis0.14
#                                     the same with ARM_HIREDIS=system
set -euo pipefail
cd "$(dirname "$0")/.."

mode=${1:-test}
case "$mode" in test | build) ;; *) echo "usage: $0 [test|build]" >&2; exit 2 ;; esac
targets=${ARM_TARGETS:-armhf aarch64}
jobs=${JOBS:-2}
test_jobs=${TEST_JOBS:-$((jobs * 2))}
budget=${ARM_TEST_BUDGET_S:-420}
case "${ARM_HIREDIS:-1.2}" in
1.2) suffix=""; with=openssl; tls_flag=-DEDGELOCK_TLS=ON ;;
system) suffix=-hiredis0.14; with=hiredis; tls_flag="" ;;
*) echo "arm: ARM_HIREDIS is 1.2 or system, not '$ARM_HIREDIS'" >&2; exit 2 ;;
esac
text_budget=${EDGELOCK_TEXT_BUDGET:-98304} # 96 KiB, armhf -Os
# Tests that exec a target binary from a script or a native-looking runner:
# without binfmt_misc the kernel cannot run that binary (qemu-user only
# emulates the process it started). The CLI scripts and the C99 consumer run
# natively in `make test`.
exclude=${ARM_TEST_EXCLUDE:-'^(cli_.*|c99_consumer)$'}

for t in $targets; do
  case "$t" in
  armhf) debarch=armhf; triplet=arm-linux-gnueabihf ;;
  aarch64) debarch=arm64; triplet=aarch64-linux-gnu ;;
  *) echo "arm: unknown target '$t' (armhf or aarch64)" >&2; exit 2 ;;
  esac
  build=build-arm/$t$suffix
  sysroot=build-arm/sysroot-$t$suffix
  t0=$(date +%s)
  echo "--- arm: $t: sysroot"
  ./scripts/cross_sysroot.sh "$debarch" "$sysroot" "$with"
  if [ "$with" = openssl ]; then
    JOBS=$jobs ./scripts/hiredis.sh --cross "$triplet" "$sysroot"
  fi
  echo "--- arm: $t: configure and build (MinSizeRel)"
  # A sysroot made again (other packages, another hiredis) invalidates what
  # the configure found in it: start that build afresh.
  deps=$(cat "$sysroot/.edgelock-sysroot" "$sysroot/usr/lib/$triplet/pkgconfig/hiredis.pc")
  if [ -f "$build/CMakeCache.txt" ] && [ "$(cat "$build/.edgelock-deps" 2>/dev/null)" != "$deps" ]; then
    echo "--- arm: $t: $sysroot changed since the last configure: configuring afresh"
    rm -rf "$build"
  fi
  if [ ! -f "$build/CMakeCache.txt" ]; then
    # TLS is required where hiredis 1.2 was built for it: a build that quietly
    # lost it would pass without testing it. CMAKE_FLAGS comes last and may
    # still turn it off.
    # shellcheck disable=SC2086 # CMAKE_FLAGS is a list of options
    cmake -S . -B "$build" -DCMAKE_TOOLCHAIN_FILE="toolchains/$triplet.cmake" \
      -DEDGELOCK_SYSROOT="$sysroot" -DCMAKE_BUILD_TYPE=MinSizeRel $tls_flag ${CMAKE_FLAGS:-}
    printf '%s\n' "$deps" >"$build/.edgelock-deps"
  fi
  cmake --build "$build" -j"$jobs"
  t1=$(date +%s)
  echo "--- arm: $t: built in $((t1 - t0)) s"
  if [ "$t" = armhf ]; then
    # The footprint budget of docs/FOOTPRINT.md (make size says more).
    text=$("$triplet-size" -t "$build/libedgelock.a" | awk '/\(TOTALS\)/ {print $1}')
    echo "--- arm: $t: libedgelock.a .text $text bytes, budget $text_budget"
    if [ "$text" -gt "$text_budget" ]; then
      echo "arm: libedgelock.a is over its .text budget on armhf by $((text - text_budget)) bytes" >&2
      exit 1
    fi
  fi
  [ "$mode" = build ] && continue

  echo "--- arm: $t: unit and integration tests under qemu-user"
  # A run that hangs (qemu-user has been seen to hang when a guest with
  # hundreds of threads aborts) must not eat CI's time: every test stops at
  # the budget's end.
  stop=$(date -d "+$budget seconds" +%H:%M:%S)
  (
    if [ "$t" = armhf ]; then
      # 32-bit address space: the contention tests start 1000 threads, and at
      # glibc's default 8 MiB stack (RLIMIT_STACK) they do not fit in 3 GiB.
      # A gateway sizes thread stacks; so does this run: 1 MiB.
      ulimit -s 1024
    fi
    cd "$build"
    ctest --output-on-failure -L 'unit|integration' -E "$exclude" -j"$test_jobs" --stop-time "$stop"
  )
  echo "--- arm: $t: tests passed in $(($(date +%s) - t1)) s (build $((t1 - t0)) s)"
done
