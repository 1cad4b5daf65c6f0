#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# check_spdx.sh SRC: every source file carries "SPDX-License-Identifier:
# BSD-3-Clause" in its first ten lines (C, C++, headers, Lua, shell, Python,
# JavaScript, CMake, Makefiles, packaging scripts), and LICENSE is BSD-3-Clause.
set -u
cd "$1" || exit 2
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    list() { git ls-files; }
else
    list() { find . -type f -not -path './build*' -not -path './bench/build/*' -not -path '*/node_modules/*' | sed 's|^\./||'; }
fi
missing=0
while IFS= read -r f; do
    case "$f" in
    .ci/*) continue ;;
    *.c | *.cpp | *.h | *.hpp | *.lua | *.sh | *.py | *.js | *.cmake | *.h.in | *.pc.in | \
        */CMakeLists.txt | CMakeLists.txt | Makefile | */Makefile | *.mk | *.bb | *.1) ;;
    *) continue ;;
    esac
    [ -f "$f" ] || continue
    # The first ten lines, read without a fork (two per file made the check
    # take seconds).
    mapfile -t -n 10 first <"$f"
    if [[ "${first[*]}" != *"SPDX-License-Identifier: BSD-3-Clause"* ]]; then
        echo "no SPDX line: $f"
        missing=$((missing + 1))
    fi
done < <(list)
grep -q "^BSD 3-Clause License" LICENSE || { echo "LICENSE is not BSD-3-Clause"; missing=$((missing + 1)); }
[ $missing = 0 ] && echo "every source file has its SPDX line" || echo "$missing file(s) without"
exit $((missing > 0))
