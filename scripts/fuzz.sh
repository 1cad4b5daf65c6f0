#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# make fuzz: the fuzz targets of tests/fuzz/ under libFuzzer, ASan and UBSan,
# built by clang in build-fuzz/ (the library too, for its coverage). Each runs
# FUZZ_SECONDS (default 60) from the saved corpus, tests/fuzz/corpus/<name>/;
# what it adds goes to build-fuzz/corpus/<name>/. An input that breaks a rule
# stops the run: it is saved as build-fuzz/crash-* (or leak-*, timeout-*),
# and `build-fuzz/tests/fuzz_<name> FILE` replays it (FUZZ_TRACE=1 shows the
# engine's steps). FUZZ_MERGE=1 then merges what was added into the saved
# corpus, keeping only inputs that reach code it did not (edges, not hit
# counts: the corpus stays small enough for `make test` to replay under ASan
# and qemu).
#
#   FUZZ_TARGETS="engine wire tls blocking parsers cli"   which to run (tls:
#                                       builds with TLS; left out without)
#   FUZZ_SECONDS=60                     how long each
set -euo pipefail
cd "$(dirname "$0")/.."
build=${FUZZ_BUILD:-build-fuzz}
targets=${FUZZ_TARGETS:-engine wire tls blocking parsers cli}
seconds=${FUZZ_SECONDS:-60}

# clang, and its libFuzzer runtime: a package of its own since Debian 12
# (libclang-rt-N-dev for clang N).
EDGELOCK_EXTRA_PACKAGES=clang ./scripts/bootstrap.sh
major=$(clang --version | sed -n 's/.*clang version \([0-9]*\).*/\1/p' | head -1)
if apt-cache show "libclang-rt-$major-dev" >/dev/null 2>&1; then
  EDGELOCK_EXTRA_PACKAGES="libclang-rt-$major-dev" ./scripts/bootstrap.sh
fi

# shellcheck disable=SC2086 # HIREDIS_FLAGS is a list of -D options
cmake -S . -B "$build" -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=Debug \
  -DEDGELOCK_SANITIZE=address,undefined -DEDGELOCK_FUZZ=ON ${HIREDIS_FLAGS:-}
# The target list read whole, then searched: `grep -q` stops at the first
# match, and under pipefail the build tool's broken pipe would fail the test
# and leave TLS out every time.
build_targets=$(cmake --build "$build" --target help)
if [ -z "${FUZZ_TARGETS:-}" ] && [[ $build_targets != *edgelock_fuzz_tls* ]]; then
  targets=${targets/ tls/} # hiredis 0.14 or no OpenSSL: no TLS to fuzz
fi
for t in $targets; do
  cmake --build "$build" -j"${JOBS:-2}" --target "edgelock_fuzz_$t"
done

export ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
for t in $targets; do
  echo "fuzz: $t for ${seconds} s"
  mkdir -p "$build/corpus/$t"
  "$build/tests/fuzz_$t" -max_total_time="$seconds" -max_len=4096 -timeout=10 -print_final_stats=1 \
    -artifact_prefix="$build/" "$build/corpus/$t" "tests/fuzz/corpus/$t" 2>"$build/fuzz_$t.log" || {
    grep -E '^fuzz|ERROR|runtime error|SUMMARY' "$build/fuzz_$t.log" | head -20
    echo "fuzz: $t found a fault: the input is in $build/ (crash-*, leak-*, timeout-*); log $build/fuzz_$t.log" >&2
    exit 1
  }
  grep -E '^Done|^stat::new_units_added' "$build/fuzz_$t.log" | sed "s/^/fuzz: $t: /"
  if [ "${FUZZ_MERGE:-0}" = 1 ]; then
    "$build/tests/fuzz_$t" -merge=1 -use_counters=0 -max_len=4096 "tests/fuzz/corpus/$t" "$build/corpus/$t" \
      2>>"$build/fuzz_$t.log"
    echo "fuzz: $t: saved corpus now $(ls "tests/fuzz/corpus/$t" | wc -l) inputs"
  fi
done
