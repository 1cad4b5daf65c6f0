#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# test_deb.sh SRC: the Debian packages, as a distribution would build them.
# Builds libedgelock-dev and edgelock from a copy of the tracked sources with
# `dpkg-buildpackage -us -uc -b` (against the system's hiredis and libevent),
# runs lintian on them (no error or warning allowed), unpacks them into a
# throwaway root and there builds and runs an example with pkg-config and with
# CMake, and reads the man page. Needs debhelper and lintian (`make
# packaging` installs them). With EDGELOCK_DEB_INSTALL=1 (root), the packages
# are also installed on this machine with dpkg -i, an example is built with
# nothing set (pkg-config, find_package), `man edgelock` is read, and the
# packages are removed again.
set -u
src=$(cd "$1" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
source "$(dirname "$0")/lib.sh"

mkdir -p "$tmp/src/edgelock"
(cd "$src" && git ls-files -z | xargs -0 cp --parents -t "$tmp/src/edgelock")
cd "$tmp/src/edgelock" || exit 2
if dpkg-buildpackage -us -uc -b >"$tmp/build.log" 2>&1; then
    ok "dpkg-buildpackage -us -uc -b"
else
    bad "dpkg-buildpackage -us -uc -b"
    tail -30 "$tmp/build.log"
    exit 1
fi
ls "$tmp/src"/*.deb
changes=$(ls "$tmp/src"/*.changes)
if command -v lintian >/dev/null; then
    lintian --fail-on error,warning --suppress-tags initial-upload-closes-no-bugs "$changes" >"$tmp/lintian.log" 2>&1 &&
        ok "lintian: no error or warning" || { bad "lintian"; cat "$tmp/lintian.log"; }
else
    bad "lintian is not installed"
fi

root=$tmp/root
for deb in "$tmp/src"/*.deb; do dpkg-deb -x "$deb" "$root"; done
pc=$(find "$root" -name edgelock.pc)
[ -n "$pc" ] && ok "edgelock.pc in libedgelock-dev" || bad "no edgelock.pc"
PKG_CONFIG_PATH=$(dirname "$pc") pkgconfig_example "$src" "$tmp/pc_example" "unpacked package"
mkdir -p "$tmp/consumer"
cp "$src/examples/blocking_threads.c" "$tmp/consumer/main.c"
cat >"$tmp/consumer/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.16)
project(consumer C)
find_package(edgelock 0.1 REQUIRED)
add_executable(consumer main.c)
target_link_libraries(consumer PRIVATE edgelock::edgelock)
CM
if cmake -S "$tmp/consumer" -B "$tmp/consumer/build" -DCMAKE_PREFIX_PATH="$root/usr" >"$tmp/cmake.log" 2>&1 &&
    cmake --build "$tmp/consumer/build" >>"$tmp/cmake.log" 2>&1; then
    ok "an example builds with find_package against the package"
    bash "$src/examples/run_with_redis.sh" "$tmp/consumer/build/consumer" >"$tmp/run2.log" 2>&1 && ok "it runs" || { bad "it runs"; tail -5 "$tmp/run2.log"; }
else
    bad "find_package build"
    tail -20 "$tmp/cmake.log"
fi
"$root/usr/bin/edgelock" --version | grep -q "^edgelock " && ok "the packaged CLI runs" || bad "the packaged CLI runs"
[ -f "$root/usr/share/man/man1/edgelock.1.gz" ] && ok "man page in the edgelock package" || bad "man page"
if command -v man >/dev/null; then
    man -l -P cat "$root/usr/share/man/man1/edgelock.1.gz" 2>/dev/null | grep -q "flock" && ok "man -l reads it" || bad "man -l reads it"
fi

if [ "${EDGELOCK_DEB_INSTALL:-0}" = 1 ]; then
    debs=("$tmp/src/libedgelock-dev_"*.deb "$tmp/src/edgelock_"*.deb)
    if dpkg -i "${debs[@]}" >"$tmp/dpkg.log" 2>&1; then
        ok "dpkg -i libedgelock-dev edgelock"
        pkgconfig_example "$src" "$tmp/sys_example" "installed, nothing else set"
        rm -rf "$tmp/consumer/build"
        cmake -S "$tmp/consumer" -B "$tmp/consumer/build" >"$tmp/sys_cmake.log" 2>&1 &&
            cmake --build "$tmp/consumer/build" >>"$tmp/sys_cmake.log" 2>&1 &&
            ok "installed: find_package(edgelock), nothing else set" || { bad "installed: find_package"; tail -10 "$tmp/sys_cmake.log"; }
        if command -v man >/dev/null; then
            MANWIDTH=200 man -P cat edgelock 2>/dev/null | tr -s ' ' | grep -q "edgelock - run a command" &&
                ok "installed: man edgelock" || bad "installed: man edgelock"
        fi
        edgelock --version | grep -q "^edgelock " && ok "installed: edgelock --version" || bad "installed: edgelock"
        dpkg -r edgelock libedgelock-dev >/dev/null 2>&1 && ok "dpkg -r: removed again" || bad "dpkg -r"
    else
        bad "dpkg -i"
        tail -10 "$tmp/dpkg.log"
    fi
fi

[ $fails = 0 ] && echo "all Debian package checks passed" || echo "$fails Debian package check(s) failed"
exit $((fails > 0))
