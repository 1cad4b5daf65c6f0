#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Builds the target's libraries for a cross build: Debian's armhf or arm64
# .debs, downloaded by an apt-get with private state (the machine's dpkg
# database, architectures and lists are not touched) and unpacked into DIR.
#
#   scripts/cross_sysroot.sh armhf build-arm/sysroot-armhf
#   scripts/cross_sysroot.sh arm64 build-arm/sysroot-aarch64
#   scripts/cross_sysroot.sh armhf build-arm/sysroot-armhf-hiredis0.14 hiredis
#
# WITH (third argument) says what comes besides libevent:
#   openssl  (default) OpenSSL (libssl-dev, libssl3), for hiredis 1.2 with
#            hiredis_ssl, which `scripts/hiredis.sh --cross` then builds into
#            DIR from source: the target's release (bookworm) ships 0.14.
#   hiredis  the target's own hiredis (bookworm: 0.14, no TLS).
#
# DIR is an overlay, not a whole target root: it holds those libraries
# (headers, .pc files, .a and .so) and nothing else; the C library comes from
# the cross compiler's own runtime (/usr/arm-linux-gnueabihf and friends).
# toolchains/*.cmake take it as -DEDGELOCK_SYSROOT=DIR.
#
# The Debian repositories are the ones this machine's apt already uses (those
# whose Release says Origin: Debian), with their keys. On a host whose sources
# do not carry the target architecture (Ubuntu serves ARM elsewhere), name
# them: EDGELOCK_CROSS_SOURCES="deb URI SUITE COMPONENT" (';' between lines).
#
# Safe to run again: a complete DIR (its .edgelock-sysroot stamp lists the
# packages asked for) is left as it is, with what was built into it since.
set -euo pipefail

[ $# -eq 2 ] || [ $# -eq 3 ] || { echo "usage: $0 armhf|arm64 DIR [openssl|hiredis]" >&2; exit 2; }
arch=$1
root=$2
with=${3:-openssl}
case "$arch" in
armhf) triplet=arm-linux-gnueabihf ;;
arm64) triplet=aarch64-linux-gnu ;;
*) echo "cross_sysroot: unknown architecture '$arch' (armhf or arm64)" >&2; exit 2 ;;
esac

# libevent-dev depends on every libevent runtime, so all of them come along;
# edgelock links libevent_core and libevent_pthreads only.
pkgs=(libevent-dev libevent-2.1-7 libevent-core-2.1-7 libevent-pthreads-2.1-7 libevent-extra-2.1-7
      libevent-openssl-2.1-7)
# What must be there after unpacking (the -dev packages' .so links, .a and .pc
# files where the toolchain looks).
expect=("usr/lib/$triplet/libevent_core.a" "usr/lib/$triplet/libevent_pthreads.a"
        "usr/lib/$triplet/pkgconfig/libevent_core.pc" "usr/include/event2/event-config.h")
case "$with" in
openssl)
  # libssl3 holds both runtimes (libssl, libcrypto): the tests run against them.
  pkgs+=(libssl-dev libssl3)
  expect+=("usr/include/openssl/ssl.h" "usr/include/$triplet/openssl/configuration.h"
           "usr/lib/$triplet/libssl.so" "usr/lib/$triplet/libcrypto.a" "usr/lib/$triplet/pkgconfig/openssl.pc")
  ;;
hiredis)
  pkgs+=(libhiredis-dev libhiredis0.14)
  expect+=("usr/lib/$triplet/libhiredis.a" "usr/lib/$triplet/pkgconfig/hiredis.pc" "usr/include/hiredis/hiredis.h")
  ;;
*) echo "cross_sysroot: unknown WITH '$with' (openssl or hiredis)" >&2; exit 2 ;;
esac
stamp="$root/.edgelock-sysroot"
want="$arch ${pkgs[*]}"
if [ -f "$stamp" ] && [ "$(head -n1 "$stamp")" = "$want" ]; then
  exit 0
fi

mkdir -p "$root"
root=$(cd "$root" && pwd)
state="$root.apt"
rm -rf "$state"
mkdir -p "$state/lists/partial" "$state/cache/archives/partial" "$state/etc/apt.conf.d" \
         "$state/etc/sources.list.d" "$state/etc/preferences.d" "$state/debs"
: >"$state/status"

sources="$state/etc/sources.list"
if [ -n "${EDGELOCK_CROSS_SOURCES:-}" ]; then
  tr ';' '\n' <<<"$EDGELOCK_CROSS_SOURCES" | sed "s/^[[:space:]]*deb[[:space:]]/deb [arch=$arch] /" >"$sources"
else
  # The host's own Debian repositories, as its downloaded lists name them (a
  # machine where apt-get update never ran has none yet: run it once).
  host_repos() {
    apt-get indextargets --format '$(REPO_URI) $(RELEASE) $(COMPONENT)' 'Identifier: Packages' 'Origin: Debian' |
      sort -u
  }
  repos=$(host_repos)
  if [ -z "$repos" ] && [ "$(id -u)" -eq 0 ]; then
    apt-get update -qq || true
    repos=$(host_repos)
  fi
  [ -z "$repos" ] || sed "s/^/deb [arch=$arch] /" <<<"$repos" >"$sources"
fi
if [ ! -s "$sources" ]; then
  echo "cross_sysroot: no Debian repository found in apt's configuration;" \
       "run apt-get update, or set EDGELOCK_CROSS_SOURCES" >&2
  exit 1
fi

apt_opts=(
  -o "APT::Architecture=$arch" -o "APT::Architectures::=$arch"
  -o "Dir::State=$state" -o "Dir::State::Lists=$state/lists" -o "Dir::State::status=$state/status"
  -o "Dir::Cache=$state/cache" -o "Dir::Etc::SourceList=$sources"
  -o "Dir::Etc::SourceParts=$state/etc/sources.list.d" -o "Dir::Etc::Parts=$state/etc/apt.conf.d"
  -o "Dir::Etc::Preferences=$state/etc/preferences" -o "Dir::Etc::PreferencesParts=$state/etc/preferences.d"
  -o "Acquire::Languages=none" -o "APT::Sandbox::User=root" -q
)

echo "cross_sysroot: $arch packages from: $(awk '{print $3, $4}' "$sources" | paste -sd, -)"
# One index may fail (the security suite's armhf index has been seen to): go
# on with what was fetched; the download below says if a package is missing.
if ! apt-get "${apt_opts[@]}" update >"$state/update.log" 2>&1; then
  echo "cross_sysroot: apt-get update reported problems (going on):" >&2
  grep -E '^(W|E):' "$state/update.log" >&2 || tail -n 5 "$state/update.log" >&2
fi
(cd "$state/debs" && apt-get "${apt_opts[@]}" download "${pkgs[@]}")

# A fresh overlay each time, so no file of an older version stays behind.
find "$root" -mindepth 1 -delete
for deb in "$state"/debs/*.deb; do
  dpkg-deb -x "$deb" "$root"
done

for f in "${expect[@]}"; do
  [ -e "$root/$f" ] || { echo "cross_sysroot: $root/$f missing after unpacking" >&2; exit 1; }
done

{
  echo "$want"
  for deb in "$state"/debs/*.deb; do basename "$deb"; done
} >"$stamp"
rm -rf "$state/lists" "$state/cache"
echo "cross_sysroot: $root ready ($(($(wc -l <"$stamp") - 1)) packages)"
