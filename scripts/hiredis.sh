#!/usr/bin/env bash
# hiredis 1.2 with TLS (hiredis_ssl) for the primary build, where the system
# has an older one (Debian bookworm ships 0.14, without TLS). The source is
# Debian trixie's source package, fetched with apt's state kept private under
# the build-deps folder (the system's sources, lists and cache are untouched),
# unpacked with Debian's patches and installed into a prefix of ours:
#
#   scripts/hiredis.sh [PREFIX]     (default build-deps/hiredis)
#
# Prints nothing and does nothing when PREFIX already holds hiredis 1.2 with
# hiredis_ssl. Needs root (or sudo) for apt-get only to fetch into its private
# state, which it can do as root; dpkg-dev, libssl-dev and a C compiler come
# from scripts/bootstrap.sh.
set -euo pipefail
cd "$(dirname "$0")/.."

prefix=${1:-$PWD/build-deps/hiredis}
# 1.2 or a later 1.x (whatever trixie's source package is now).
is_wanted() { grep -Eq '^Version: 1\.([2-9]|[1-9][0-9])\.' "$1" 2>/dev/null; }
if [ -f "$prefix/lib/pkgconfig/hiredis_ssl.pc" ] && is_wanted "$prefix/lib/pkgconfig/hiredis.pc"; then
  exit 0
fi

work=$(dirname "$prefix")/hiredis-src
rm -rf "$work"
mkdir -p "$work/apt/lists/partial" "$work/apt/cache/archives/partial"
echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian trixie main" \
  >"$work/apt/sources.list"
apt_private=(-o "Dir::Etc::SourceList=$work/apt/sources.list" -o Dir::Etc::SourceParts=/dev/null
  -o "Dir::State::Lists=$work/apt/lists" -o "Dir::Cache=$work/apt/cache"
  -o APT::Sandbox::User=root)
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO=sudo

echo "hiredis: fetching Debian trixie's hiredis source into $work"
(
  cd "$work"
  $SUDO apt-get "${apt_private[@]}" -qq update
  $SUDO apt-get "${apt_private[@]}" -qq source --download-only hiredis >/dev/null
  $SUDO chown -R "$(id -u):$(id -g)" "$work"
  # apt checked the .dsc against the signed Release; no keyring for its inline signature here.
  dpkg-source --no-check -x hiredis_*.dsc src >/dev/null
)
version=$(sed -n 's/^Version: //p' "$work"/hiredis_*.dsc | head -1)

echo "hiredis: building $version with TLS into $prefix"
make -C "$work/src" -j"${JOBS:-2}" USE_SSL=1 PREFIX="$prefix" LIBRARY_PATH=lib install >"$work/build.log" 2>&1 ||
  { tail -20 "$work/build.log" >&2; exit 1; }
# Static archives only: what links against them runs anywhere, installed or
# not, without this prefix on the library path.
rm -f "$prefix"/lib/libhiredis*.so*
is_wanted "$prefix/lib/pkgconfig/hiredis.pc" ||
  { echo "hiredis: $prefix does not hold hiredis 1.2 or later" >&2; exit 1; }
test -f "$prefix/lib/pkgconfig/hiredis_ssl.pc"
rm -rf "$work"
