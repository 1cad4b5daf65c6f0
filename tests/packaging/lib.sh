# SPDX-License-Identifier: BSD-3-Clause
# Shared by the packaging tests (sourced): results, and building and running
# an example against an installed edgelock.
fails=0
ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; fails=$((fails + 1)); }

# pkgconfig_example SRC OUT WHAT: builds examples/blocking_threads.c into OUT
# with `pkg-config --cflags --libs edgelock` (PKG_CONFIG_PATH as the caller
# set it) and runs it against a throwaway redis-server.
pkgconfig_example() {
    local src=$1 out=$2 what=$3
    if cc -o "$out" "$src/examples/blocking_threads.c" $(pkg-config --cflags --libs edgelock) 2>"$out.cc.log"; then
        ok "$what: cc example \$(pkg-config --cflags --libs edgelock)"
        bash "$src/examples/run_with_redis.sh" "$out" >"$out.run.log" 2>&1 && ok "$what: it runs" ||
            { bad "$what: it runs"; tail -5 "$out.run.log"; }
    else
        bad "$what: cc example \$(pkg-config --cflags --libs edgelock)"
        head -20 "$out.cc.log"
    fi
}
