#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# test_recipes.sh SRC [SYSROOT]: the Buildroot package
# (tools/packaging/buildroot, a BR2_EXTERNAL tree) and the Yocto recipe
# (tools/packaging/yocto, a layer) build edgelock for armhf the way those
# systems do, without the systems themselves:
#  - Buildroot: edgelock.mk is evaluated by make (with the CLI and OpenSSL
#    enabled, shared libraries), and its version, licence file and
#    CONF_OPTS are used in the configure command line of Buildroot's
#    cmake-package (package/pkg-cmake.mk: prefix /usr, BUILD_SHARED_LIBS,
#    BUILD_TESTS/DOCS/EXAMPLES off, Unix Makefiles), then `cmake --build` and
#    `make install/fast` into a staging and a target directory;
#  - Yocto: the recipe's PV, LIC_FILES_CHKSUM, EXTRA_OECMAKE and PACKAGECONFIG
#    defaults are read, and the configure line of cmake.bbclass (Ninja, the
#    CMAKE_INSTALL_* paths it sets, no package registry) is run, then
#    `cmake --build` and the install into an image; every installed file must
#    land in one of the recipe's packages (bitbake's installed-vs-shipped).
# The cross toolchain is toolchains/arm-linux-gnueabihf.cmake over SYSROOT
# (default build-arm/sysroot-armhf, made by `make arm`'s scripts if missing:
# Debian's armhf libevent and OpenSSL, hiredis 1.2 cross-built).
set -u
src=$(cd "$1" && pwd)
sysroot=${2:-$src/build-arm/sysroot-armhf}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
source "$(dirname "$0")/lib.sh"
version=$(sed -n 's/^project(edgelock VERSION \([0-9.]*\).*/\1/p' "$src/CMakeLists.txt")
jobs=${JOBS:-2}

if [ ! -f "$sysroot/usr/lib/arm-linux-gnueabihf/pkgconfig/hiredis_ssl.pc" ]; then
    (cd "$src" && ./scripts/cross_sysroot.sh armhf "$sysroot" openssl &&
        JOBS=$jobs ./scripts/hiredis.sh --cross arm-linux-gnueabihf "$sysroot") >"$tmp/sysroot.log" 2>&1 ||
        { bad "armhf sysroot"; tail -20 "$tmp/sysroot.log"; exit 1; }
fi
toolchain=(-DCMAKE_TOOLCHAIN_FILE="$src/toolchains/arm-linux-gnueabihf.cmake" -DEDGELOCK_SYSROOT="$sysroot")

is_arm() { readelf -h "$1" 2>/dev/null | grep -q "Machine:.*ARM$"; }

# ---------------------------------------------------------------- Buildroot
br=$src/tools/packaging/buildroot
for f in external.desc external.mk Config.in package/edgelock/Config.in package/edgelock/edgelock.mk; do
    [ -f "$br/$f" ] || bad "buildroot: $f missing"
done
cat >"$tmp/br.mk" <<EOF
BR2_EXTERNAL_EDGELOCK_PATH := $br
BR2_PACKAGE_EDGELOCK := y
BR2_PACKAGE_EDGELOCK_CLI := y
BR2_PACKAGE_OPENSSL := y
BR2_STATIC_LIBS :=
cmake-package :=
include $br/package/edgelock/edgelock.mk
show:
	@printf '%s\n' '\$(EDGELOCK_VERSION)' '\$(EDGELOCK_SITE)' '\$(EDGELOCK_SITE_METHOD)' \
		'\$(EDGELOCK_LICENSE)' '\$(EDGELOCK_LICENSE_FILES)' '\$(EDGELOCK_DEPENDENCIES)' '\$(strip \$(EDGELOCK_CONF_OPTS))'
EOF
mapfile -t v < <(make -s -f "$tmp/br.mk" show)
[ "${v[0]}" = "$version" ] && ok "buildroot: EDGELOCK_VERSION $version is project(VERSION)'s" || bad "buildroot: version '${v[0]}'"
site=$(cd "${v[1]}" 2>/dev/null && pwd)
[ "$site" = "$src" ] && [ "${v[2]}" = local ] && ok "buildroot: EDGELOCK_SITE is this tree (local)" || bad "buildroot: site '${v[1]}'"
[ "${v[3]}" = BSD-3-Clause ] && [ -f "$src/${v[4]}" ] && ok "buildroot: licence BSD-3-Clause, ${v[4]} present" || bad "buildroot: licence"
deps_ok=1
for d in host-pkgconf hiredis libevent openssl; do
    case " ${v[5]} " in *" $d "*) ;; *) deps_ok=0 ;; esac
done
[ $deps_ok = 1 ] && ok "buildroot: depends on ${v[5]}" || bad "buildroot: dependencies '${v[5]}'"
read -r -a conf_opts <<<"${v[6]}"
b=$tmp/br-build
if cmake -G "Unix Makefiles" -S "$site" -B "$b" "${toolchain[@]}" -DCMAKE_INSTALL_PREFIX=/usr -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_COLOR_MAKEFILE=OFF -DBUILD_DOC=OFF -DBUILD_DOCS=OFF -DBUILD_EXAMPLE=OFF -DBUILD_EXAMPLES=OFF \
    -DBUILD_TEST=OFF -DBUILD_TESTS=OFF -DBUILD_TESTING=OFF -DBUILD_SHARED_LIBS=ON "${conf_opts[@]}" \
    >"$tmp/br.log" 2>&1 &&
    cmake --build "$b" -j"$jobs" >>"$tmp/br.log" 2>&1 &&
    make -C "$b" DESTDIR="$tmp/br-staging" install/fast >>"$tmp/br.log" 2>&1 &&
    make -C "$b" DESTDIR="$tmp/br-target" install/fast >>"$tmp/br.log" 2>&1; then
    ok "buildroot: configure, build, install/fast (staging and target) with ${#conf_opts[@]} CONF_OPTS"
    s=$tmp/br-staging
    grep -q "EDGELOCK_TLS:.*=ON" "$b/CMakeCache.txt" && ok "buildroot: TLS on (OpenSSL enabled)" || bad "buildroot: TLS not on"
    a=$(find "$s/usr/lib" -name libedgelock.a | head -1)
    so=$(find "$s/usr/lib" -name 'libedgelock.so.*.*' | head -1)
    [ -n "$a" ] && ok "buildroot: ${a#"$s"}" || bad "buildroot: no libedgelock.a in staging"
    [ -n "$so" ] && is_arm "$so" && ok "buildroot: ${so#"$s"} (ARM)" || bad "buildroot: no ARM libedgelock.so in staging"
    is_arm "$s/usr/bin/edgelock" && ok "buildroot: /usr/bin/edgelock (ARM)" || bad "buildroot: no ARM /usr/bin/edgelock"
    for f in usr/include/edgelock/edgelock.h usr/include/edgelock/version.h usr/share/man/man1/edgelock.1; do
        [ -f "$s/$f" ] && ok "buildroot: /$f" || bad "buildroot: /$f missing"
    done
    [ -n "$(find "$s/usr/lib" -name edgelock.pc)" ] && [ -n "$(find "$s/usr/lib" -name edgelockConfigVersion.cmake)" ] &&
        ok "buildroot: edgelock.pc and the CMake package" || bad "buildroot: .pc or CMake package missing"
else
    bad "buildroot: configure/build/install"
    tail -25 "$tmp/br.log"
fi

# ---------------------------------------------------------------- Yocto
layer=$src/tools/packaging/yocto
recipe=$(ls "$layer"/recipes-*/edgelock/edgelock_*.bb 2>/dev/null | head -1)
[ -f "$layer/conf/layer.conf" ] && ok "yocto: conf/layer.conf" || bad "yocto: conf/layer.conf missing"
if [ -z "$recipe" ]; then
    bad "yocto: no edgelock_<version>.bb"
else
    pv=$(basename "$recipe" .bb)
    pv=${pv#edgelock_}
    [ "$pv" = "$version" ] && ok "yocto: $(basename "$recipe"): PV is project(VERSION)'s" || bad "yocto: PV $pv, project $version"
    md5=$(sed -n 's/^LIC_FILES_CHKSUM = "file:\/\/LICENSE;md5=\([0-9a-f]*\)"/\1/p' "$recipe")
    [ "$md5" = "$(md5sum <"$src/LICENSE" | cut -d' ' -f1)" ] && ok "yocto: LIC_FILES_CHKSUM matches LICENSE" ||
        bad "yocto: LIC_FILES_CHKSUM '$md5' does not match LICENSE (update it with the licence)"
    grep -q '^inherit .*cmake' "$recipe" && ok "yocto: inherits cmake" || bad "yocto: does not inherit cmake"
    # EXTRA_OECMAKE, and PACKAGECONFIG's default flags (the enabled side of each).
    extra=$(sed -n 's/^EXTRA_OECMAKE = "\(.*\)"$/\1/p' "$recipe")
    pcs=$(sed -n 's/^PACKAGECONFIG ??= "\(.*\)"$/\1/p' "$recipe")
    pc_args=()
    for p in $pcs; do
        arg=$(sed -n "s/^PACKAGECONFIG\\[$p\\] = \"\\([^,]*\\),.*/\\1/p" "$recipe")
        [ -n "$arg" ] && pc_args+=("$arg") || bad "yocto: PACKAGECONFIG[$p] has no flag"
    done
    read -r -a extra_args <<<"$extra"
    y=$tmp/oe-build
    gen=(-G Ninja)
    command -v ninja >/dev/null || gen=(-G "Unix Makefiles")
    if cmake "${gen[@]}" -S "$src" -B "$y" "${toolchain[@]}" \
        -DCMAKE_INSTALL_PREFIX:PATH=/usr -DCMAKE_INSTALL_BINDIR:PATH=bin -DCMAKE_INSTALL_SBINDIR:PATH=sbin \
        -DCMAKE_INSTALL_LIBEXECDIR:PATH=libexec -DCMAKE_INSTALL_SYSCONFDIR:PATH=/etc \
        -DCMAKE_INSTALL_SHAREDSTATEDIR:PATH=../com -DCMAKE_INSTALL_LOCALSTATEDIR:PATH=/var \
        -DCMAKE_INSTALL_LIBDIR:PATH=lib -DCMAKE_INSTALL_INCLUDEDIR:PATH=include \
        -DCMAKE_INSTALL_DATAROOTDIR:PATH=share -DCMAKE_INSTALL_SO_NO_EXE=0 \
        -DCMAKE_NO_SYSTEM_FROM_IMPORTED=1 -DCMAKE_EXPORT_NO_PACKAGE_REGISTRY=ON \
        -DFETCHCONTENT_FULLY_DISCONNECTED=ON "${extra_args[@]}" "${pc_args[@]}" -Wno-dev >"$tmp/oe.log" 2>&1 &&
        cmake --build "$y" --target all -j"$jobs" >>"$tmp/oe.log" 2>&1 &&
        DESTDIR="$tmp/oe-image" cmake --build "$y" --target install >>"$tmp/oe.log" 2>&1; then
        ok "yocto: configure (${gen[1]}), build, install with PACKAGECONFIG '$pcs'"
        img=$tmp/oe-image
        # FILES of the recipe's packages, with bitbake's defaults for -dev,
        # -staticdev and -doc; every installed file must be shipped.
        unshipped=
        while IFS= read -r f; do
            case "$f" in
            /usr/bin/edgelock | /usr/lib/libedgelock.so.*) ;;                           # edgelock
            /usr/include/* | /usr/lib/cmake/edgelock/* | /usr/lib/pkgconfig/* | /usr/lib/libedgelock.so) ;; # -dev
            /usr/lib/libedgelock.a) ;;                                                    # -staticdev
            /usr/share/man/* | /usr/share/doc/*) ;;                                       # -doc
            *) unshipped="$unshipped $f" ;;
            esac
        done < <(cd "$img" && find . -type f -o -type l | sed 's|^\.||')
        [ -z "$unshipped" ] && ok "yocto: every installed file is in a package" || bad "yocto: installed, not shipped:$unshipped"
        is_arm "$img/usr/bin/edgelock" && ok "yocto: /usr/bin/edgelock (ARM)" || bad "yocto: no ARM /usr/bin/edgelock"
        [ -n "$(find "$img/usr/lib" -name 'libedgelock.so.*.*')" ] && [ -f "$img/usr/lib/libedgelock.a" ] &&
            ok "yocto: libedgelock.a and libedgelock.so in /usr/lib" || bad "yocto: libraries not in /usr/lib"
    else
        bad "yocto: configure/build/install"
        tail -25 "$tmp/oe.log"
    fi
fi

[ $fails = 0 ] && echo "all Buildroot and Yocto checks passed" || echo "$fails recipe check(s) failed"
exit $((fails > 0))
