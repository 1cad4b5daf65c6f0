#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# hiredis 1.2 with TLS (hiredis_ssl) for the primary build, where the system
# has an older one (Debian bookworm ships 0.14, without TLS). The source is
# Debian trixie's source package, fetched with apt's state kept private under
# the build-deps folder (the system's sources, lists and cache are untouched),
# unpacked with Debian's patches and installed into a prefix of ours:
#
#   scripts/hiredis.sh [PREFIX]              native, into PREFIX (default build-deps/hiredis)
#   scripts/hiredis.sh --cross TRIPLET ROOT  for a cross target (make arm): built by
#                                            TRIPLET-gcc at -Os against the OpenSSL in ROOT
#                                            (a scripts/cross_sysroot.sh overlay), installed
#                                            into ROOT/usr, libraries in usr/lib/TRIPLET
#
# Prints nothing and does nothing when the prefix already holds hiredis 1.2 with
# hiredis_ssl. The unpacked source stays in build-deps/hiredis-src, so the
# native build and every cross target download it once between them. Needs
# root (or sudo) for apt-get only to fetch into its private state, which it can
# do as root; dpkg-dev, a C compiler (and libssl-dev for a native build) come
# from scripts/bootstrap.sh.
set -euo pipefail
cd "$(dirname "$0")/.."

triplet=""
if [ "${1:-}" = --cross ]; then
  [ $# -eq 3 ] || { echo "usage: $0 --cross TRIPLET ROOT" >&2; exit 2; }
  triplet=$2
  root=$(cd "$3" && pwd)
  # Installed as the target's own packages would be, so the overlay's
  # pkg-config setup (PKG_CONFIG_SYSROOT_DIR, toolchains/cross-common.cmake)
  # finds it beside libevent and OpenSSL.
  prefix=/usr
  libpath=lib/$triplet
  dest=$root
  pcdir=$root/usr/lib/$triplet/pkgconfig
  [ -f "$root/usr/include/openssl/ssl.h" ] ||
    { echo "hiredis: no OpenSSL headers in $root (scripts/cross_sysroot.sh puts them there)" >&2; exit 1; }
else
  prefix=${1:-$PWD/build-deps/hiredis}
  libpath=lib
  dest=""
  pcdir=$prefix/lib/pkgconfig
fi

# 1.2 or a later 1.x (whatever trixie's source package is now).
is_wanted() { grep -Eq '^Version: 1\.([2-9]|[1-9][0-9])\.' "$1" 2>/dev/null; }
if [ -f "$pcdir/hiredis_ssl.pc" ] && is_wanted "$pcdir/hiredis.pc"; then
  exit 0
fi

# The source, once: a complete unpack leaves src/.edgelock-unpacked behind.
srcdir=$PWD/build-deps/hiredis-src
if [ ! -f "$srcdir/src/.edgelock-unpacked" ]; then
  rm -rf "$srcdir"
  mkdir -p "$srcdir/apt/lists/partial" "$srcdir/apt/cache/archives/partial"
  echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian trixie main" \
    >"$srcdir/apt/sources.list"
  apt_private=(-o "Dir::Etc::SourceList=$srcdir/apt/sources.list" -o Dir::Etc::SourceParts=/dev/null
    -o "Dir::State::Lists=$srcdir/apt/lists" -o "Dir::Cache=$srcdir/apt/cache"
    -o APT::Sandbox::User=root)
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO=sudo

  echo "hiredis: fetching Debian trixie's hiredis source into $srcdir"
  (
    cd "$srcdir"
    $SUDO apt-get "${apt_private[@]}" -qq update
    $SUDO apt-get "${apt_private[@]}" -qq source --download-only hiredis >/dev/null
    $SUDO chown -R "$(id -u):$(id -g)" "$srcdir"
    # apt checked the .dsc against the signed Release; no keyring for its inline signature here.
    dpkg-source --no-check -x hiredis_*.dsc src >/dev/null
  )
  rm -rf "$srcdir/apt"
  touch "$srcdir/src/.edgelock-unpacked"
fi
version=$(sed -n 's/^Version: //p' "$srcdir"/hiredis_*.dsc | head -1)

# hiredis's Makefile builds in its source tree: each build gets its own copy,
# so the native and the cross builds never share objects.
work=$PWD/build-deps/hiredis-build-${triplet:-native}
rm -rf "$work"
cp -a "$srcdir/src" "$work"
make_args=(USE_SSL=1 PREFIX="$prefix" LIBRARY_PATH="$libpath")
if [ -n "$triplet" ]; then
  # OpenSSL's configuration.h is per architecture (usr/include/TRIPLET):
  # without the overlay's, the build machine's would describe the wrong target.
  make_args+=(DESTDIR="$dest" CC="$triplet-gcc" AR="$triplet-ar" OPTIMIZATION=-Os
    CPPFLAGS="-isystem $root/usr/include/$triplet -isystem $root/usr/include"
    LDFLAGS="-L$root/usr/lib/$triplet -Wl,-rpath-link,$root/usr/lib/$triplet")
fi

echo "hiredis: building $version with TLS${triplet:+ for $triplet} into $dest$prefix"
make -C "$work" -j"${JOBS:-2}" "${make_args[@]}" install >"$work/build.log" 2>&1 ||
  { tail -20 "$work/build.log" >&2; exit 1; }
# Static archives only: what links against them runs anywhere, installed or
# not, without this prefix on the library path.
rm -f "$dest$prefix/$libpath"/libhiredis*.so*
is_wanted "$pcdir/hiredis.pc" ||
  { echo "hiredis: $dest$prefix does not hold hiredis 1.2 or later" >&2; exit 1; }
test -f "$pcdir/hiredis_ssl.pc"
rm -rf "$work"
