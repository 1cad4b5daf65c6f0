#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Installs what edgelock needs to build and test, from Debian packages only,
# when it is missing. Safe to run again: it installs nothing already there.
set -euo pipefail

need=()
have_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
for p in build-essential cmake pkg-config libhiredis-dev libevent-dev redis-server; do
  have_pkg "$p" || need+=("$p")
done
for extra in ${EDGELOCK_EXTRA_PACKAGES:-}; do
  have_pkg "$extra" || need+=("$extra")
done
[ ${#need[@]} -eq 0 ] && exit 0

echo "bootstrap: installing ${need[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "bootstrap: need root (or sudo) to install: ${need[*]}" >&2; exit 1; }
  SUDO=sudo
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
