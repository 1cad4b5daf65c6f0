#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The man page (docs/edgelock.1) and docs/CLI.md say what --help says: every
# option --help names appears in both, the man page carries the version of
# project(VERSION) and renders without a groff warning.
source "$(dirname "$0")/lib.sh" "$@"
SRC=$(cd "$(dirname "$0")/../.." && pwd)
MAN=$SRC/docs/edgelock.1
CLI_MD=$SRC/docs/CLI.md

expect_rc 0 "--help" "$EDGELOCK" --help
cp "$OUT" "$TMP/help.txt"
# Options as --help writes them: -x, --long-name (not inside words, nor in the
# quoted commands of its examples).
sed "s/'[^']*'//g" "$TMP/help.txt" | grep -oE '(^|[][ ,|(])--?[A-Za-z][A-Za-z-]*' | sed -E 's/^[][ ,|(]//' |
    grep -vE '^-(-)?$' | sort -u >"$TMP/options.txt"
check "--help names at least 30 options" test "$(wc -l <"$TMP/options.txt")" -ge 30
# The man page writes a hyphen as \- : compare without the backslashes.
sed 's/\\-/-/g; s/\\f[BIRP]//g' "$MAN" >"$TMP/man.txt"
missing_man=
missing_md=
while IFS= read -r opt; do
    grep -qE -- "(^|[^A-Za-z-])$opt([^A-Za-z-]|$)" "$TMP/man.txt" || missing_man="$missing_man $opt"
    grep -qE -- "(^|[^A-Za-z-])$opt([^A-Za-z-]|$)" "$CLI_MD" || missing_md="$missing_md $opt"
done <"$TMP/options.txt"
check "every --help option is in edgelock.1${missing_man:+ (missing:$missing_man)}" test -z "$missing_man"
check "every --help option is in docs/CLI.md${missing_md:+ (missing:$missing_md)}" test -z "$missing_md"

version=$("$EDGELOCK" --version | sed -n 's/^edgelock \([0-9.]*\).*/\1/p')
check "edgelock.1's .TH names version $version" grep -q "^\.TH EDGELOCK 1 .*\"edgelock $version\"" "$MAN"
check "the version is project(VERSION)'s" grep -q "^project(edgelock VERSION $version " "$SRC/CMakeLists.txt"
for code in 64 69 70 71 75 76 77; do
    check "exit code $code in edgelock.1" grep -qx "$code" "$MAN"
done
if command -v groff >/dev/null; then
    LC_ALL=C.UTF-8 groff -man -ww -z "$MAN" 2>"$TMP/groff.txt"
    check "groff renders it without a warning" test ! -s "$TMP/groff.txt"
fi
finish
