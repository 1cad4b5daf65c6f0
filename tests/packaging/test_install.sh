#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# test_install.sh SRC BUILD [HIREDIS_PREFIX]: edgelock as a user outside the
# source tree gets it. Installs BUILD into throwaway prefixes and checks that
#  - a C program links with plain `pkg-config --cflags --libs edgelock` (no
#    --static) and runs against a throwaway redis-server;
#  - the .pc's prefix follows the install prefix (cmake --install --prefix);
#  - find_package(edgelock 0.1) gives edgelock::edgelock, a CMake project links
#    and runs with it; an incompatible version or a missing dependency is
#    "not found" (silent under QUIET, an error under REQUIRED); the consumer's
#    own HIREDIS_*/LIBEVENT_* variables and PkgConfig::LIBEVENT target are
#    left as they were;
#  - add_subdirectory(edgelock) in a project with its own test_async target
#    configures and builds, with no tests, examples or tools of ours.
set -u
src=$(cd "$1" && pwd)
build=$(cd "$2" && pwd)
hiredis=${3:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
source "$(dirname "$0")/lib.sh"
deps_pc=${hiredis:+$hiredis/lib/pkgconfig}
gen=(-G "Unix Makefiles")

for p in a b; do
    cmake --install "$build" --prefix "$tmp/$p" >"$tmp/install_$p.log" 2>&1 || { bad "cmake --install --prefix $p"; cat "$tmp/install_$p.log"; exit 1; }
done
pc_dir=$(dirname "$(find "$tmp/a" -name edgelock.pc | head -1)")
[ -f "$tmp/a/include/edgelock/edgelock.h" ] && [ -f "$tmp/a/include/edgelock/version.h" ] && ok "headers installed" || bad "headers installed"
[ -f "$tmp/a/share/doc/edgelock/LICENSE" ] && ok "LICENSE installed" || bad "LICENSE installed"
[ ! -x "$tmp/a/bin/edgelock" ] || [ -f "$tmp/a/share/man/man1/edgelock.1" ] && ok "man page installed" || bad "man page installed"
if [ -x "$tmp/a/bin/edgelock" ] && command -v man >/dev/null; then
    MANPATH="$tmp/a/share/man" MANWIDTH=200 man -P cat edgelock 2>/dev/null | tr -s " " | grep -q "edgelock - run a command while holding" &&
        ok "man edgelock (the installed page)" || bad "man edgelock"
fi

# pkg-config, without --static, and the prefix of the copy it was read from.
export PKG_CONFIG_PATH="$pc_dir${deps_pc:+:$deps_pc}"
v=$(pkg-config --modversion edgelock)
[ "$v" = "$(sed -n 's/^project(edgelock VERSION \([0-9.]*\).*/\1/p' "$src/CMakeLists.txt")" ] && ok "pkg-config version $v" || bad "pkg-config version $v"
b_pc=$(dirname "$(find "$tmp/b" -name edgelock.pc | head -1)")
inc_b=$(PKG_CONFIG_PATH="$b_pc${deps_pc:+:$deps_pc}" pkg-config --variable=includedir edgelock)
[ -f "$inc_b/edgelock/edgelock.h" ] && case "$inc_b" in "$tmp/b"/*) true ;; *) false ;; esac &&
    ok "the .pc of prefix b points into b ($inc_b)" || bad "the .pc of prefix b points into b ($inc_b)"
pkgconfig_example "$src" "$tmp/pc_example" "installed into a prefix"
unset PKG_CONFIG_PATH

# find_package: a consumer with variables and a target of its own by the
# names edgelock used to use.
mkdir -p "$tmp/consumer"
cp "$src/examples/blocking_threads.c" "$tmp/consumer/main.c"
cat >"$tmp/consumer/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.16)
project(consumer C)
find_package(PkgConfig REQUIRED)
pkg_check_modules(LIBEVENT REQUIRED IMPORTED_TARGET libevent)
set(HIREDIS_FOUND "mine")
set(HIREDIS_LIBRARIES "mine")
find_package(edgelock 99 QUIET)
if(edgelock_FOUND)
  message(FATAL_ERROR "edgelock 99 found")
endif()
find_package(edgelock 0.1 REQUIRED)
if(NOT HIREDIS_FOUND STREQUAL "mine" OR NOT HIREDIS_LIBRARIES STREQUAL "mine")
  message(FATAL_ERROR "edgelock changed the consumer's HIREDIS_* variables")
endif()
get_target_property(ev PkgConfig::LIBEVENT INTERFACE_LINK_LIBRARIES)
if(ev MATCHES "pthreads")
  message(FATAL_ERROR "edgelock changed the consumer's PkgConfig::LIBEVENT")
endif()
add_executable(consumer main.c)
target_link_libraries(consumer PRIVATE edgelock::edgelock)
CM
prefix_path="$tmp/a${hiredis:+;$hiredis}"
if cmake "${gen[@]}" -S "$tmp/consumer" -B "$tmp/consumer/build" -DCMAKE_PREFIX_PATH="$prefix_path" >"$tmp/consumer.log" 2>&1 &&
    cmake --build "$tmp/consumer/build" >>"$tmp/consumer.log" 2>&1; then
    ok "find_package(edgelock 0.1 REQUIRED), 99 QUIET not found, the consumer's names untouched"
    bash "$src/examples/run_with_redis.sh" "$tmp/consumer/build/consumer" >"$tmp/consumer_run.log" 2>&1 && ok "it runs" || { bad "it runs"; tail -5 "$tmp/consumer_run.log"; }
else
    bad "find_package consumer"
    tail -20 "$tmp/consumer.log"
fi

# A missing dependency: not found; quiet under QUIET, an error under REQUIRED.
mkdir -p "$tmp/nodeps"
for mode in QUIET REQUIRED; do
    cat >"$tmp/nodeps/CMakeLists.txt" <<CM
cmake_minimum_required(VERSION 3.16)
project(nodeps C)
find_package(edgelock $mode)
message(STATUS "edgelock_FOUND=\${edgelock_FOUND}")
CM
    rm -rf "$tmp/nodeps/build"
    PKG_CONFIG_LIBDIR="$tmp/empty" cmake "${gen[@]}" -S "$tmp/nodeps" -B "$tmp/nodeps/build" -DCMAKE_PREFIX_PATH="$tmp/a" \
        >"$tmp/nodeps_$mode.log" 2>&1
    rc=$?
    if [ $mode = QUIET ]; then
        [ $rc = 0 ] && grep -Eq "edgelock_FOUND=(FALSE|0)$" "$tmp/nodeps_$mode.log" && ! grep -q "needs hiredis" "$tmp/nodeps_$mode.log" &&
            ok "missing hiredis under QUIET: not found, silent" || { bad "missing hiredis under QUIET"; tail -8 "$tmp/nodeps_$mode.log"; }
    else
        [ $rc != 0 ] && grep -q "needs hiredis" "$tmp/nodeps_$mode.log" &&
            ok "missing hiredis under REQUIRED: an error that says so" || { bad "missing hiredis under REQUIRED"; tail -8 "$tmp/nodeps_$mode.log"; }
    fi
done

# add_subdirectory into a project that has a test_async of its own.
mkdir -p "$tmp/parent"
cat >"$tmp/parent/CMakeLists.txt" <<CM
cmake_minimum_required(VERSION 3.16)
project(parent C CXX)
enable_testing()
add_executable(test_async main.c)
add_test(NAME test_async COMMAND test_async)
add_subdirectory("$src" edgelock)
add_executable(app app.c)
target_link_libraries(app PRIVATE edgelock::edgelock)
CM
echo 'int main(void) { return 0; }' >"$tmp/parent/main.c"
cp "$src/examples/blocking_threads.c" "$tmp/parent/app.c"
if cmake "${gen[@]}" -S "$tmp/parent" -B "$tmp/parent/build" ${hiredis:+-DEDGELOCK_HIREDIS_PREFIX="$hiredis"} \
    -DEDGELOCK_BUILD_SHARED=ON >"$tmp/parent.log" 2>&1 &&
    cmake --build "$tmp/parent/build" -j2 >>"$tmp/parent.log" 2>&1; then
    ok "add_subdirectory beside the parent's own test_async"
    n=$(cd "$tmp/parent/build" && ctest -N | sed -n 's/^Total Tests: //p')
    [ "$n" = 1 ] && ok "only the parent's test registered" || bad "tests registered: $n"
    [ ! -e "$tmp/parent/build/edgelock/tools/edgelock" ] && [ ! -d "$tmp/parent/build/edgelock/examples" ] &&
        ok "no tools or examples of ours built" || bad "tools or examples built in a subproject"
    grep -q "edgelock" "$tmp/parent/build/cmake_install.cmake" && ! grep -rq "libedgelock" "$tmp/parent/build/edgelock/cmake_install.cmake" &&
        ok "no install rules of ours" || bad "install rules in a subproject"
    # The shared library, built there too: a soname, and only the C ABI.
    so=$(find "$tmp/parent/build/edgelock" -name 'libedgelock.so.*.*' | head -1)
    if [ -n "$so" ]; then
        soname=$(readelf -d "$so" | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')
        [ "$soname" = "libedgelock.so.${v%%.*}" ] && ok "soname $soname" || bad "soname '$soname'"
        others=$(nm -D --defined-only "$so" | awk '$2 ~ /^[TDBRW]$/ {print $3}' | grep -v '^edgelock_' | head -5)
        [ -z "$others" ] && ok "libedgelock.so exports edgelock_* only" || bad "libedgelock.so also exports: $others"
        nm -D --defined-only "$so" | grep -q ' T edgelock_try_lock$' && ok "edgelock_try_lock exported" || bad "edgelock_try_lock not exported"
    else
        bad "no libedgelock.so built with EDGELOCK_BUILD_SHARED=ON"
    fi
else
    bad "add_subdirectory"
    tail -20 "$tmp/parent.log"
fi

[ $fails = 0 ] && echo "all install checks passed" || echo "$fails install check(s) failed"
exit $((fails > 0))
