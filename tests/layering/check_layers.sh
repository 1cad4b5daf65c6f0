#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The layering rule of src/ (docs/ARCHITECTURE.md): a file may include headers
# of its own layer and of the layers below it, never above. Also: the CLI in
# tools/ uses the public header only.
#
#   api -> locks -> redisson -> redis -> event -> base   (port.h and the public
#   header edgelock/edgelock.h are below everything)
#
# Usage: check_layers.sh [SRC_ROOT]   (defaults to the repository's root)
set -u
root="${1:-$(cd "$(dirname "$0")/../.." && pwd)}"
layers=(base event redis redisson locks api)

# Each layer's rank, looked up without a subshell: this runs for every
# include line, and a fork per line made the check take seconds.
declare -A rank_of=()
for i in "${!layers[@]}"; do
    rank_of[${layers[$i]}]=$i
done
rank() {
    r=-1
    [ -n "$1" ] && r=${rank_of[$1]--1}
}
include_re='^[[:space:]]*#[[:space:]]*include[[:space:]]*"([^"]+)"'
any_include_re='^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]([^">]+)[">]'

bad=0
checked=0
while IFS= read -r file; do
    rel="${file#"$root"/src/}"
    layer="${rel%%/*}"
    rank "$layer"
    own=$r
    if [ "$own" -lt 0 ]; then
        echo "layering: $rel is in no layer folder (${layers[*]})"
        bad=1
        continue
    fi
    checked=$((checked + 1))
    while IFS= read -r line; do
        [[ $line =~ $include_re ]] || continue
        inc=${BASH_REMATCH[1]}
        case "$inc" in
        port.h | port_types.h | edgelock/edgelock.h) continue ;;
        esac
        target="${inc%%/*}"
        if [ "$target" = "$inc" ]; then
            echo "layering: $rel includes \"$inc\": name the layer folder (\"layer/file.hpp\")"
            bad=1
            continue
        fi
        rank "$target"
        t=$r
        if [ "$t" -lt 0 ]; then
            echo "layering: $rel includes \"$inc\", which is in no layer"
            bad=1
        elif [ "$t" -gt "$own" ]; then
            echo "layering: $rel ($layer) includes \"$inc\" of the higher layer $target"
            bad=1
        fi
    done < <(grep -E '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$file")
done < <(find "$root/src" -type f \( -name '*.cpp' -o -name '*.hpp' -o -name '*.h' -o -name '*.c' \) | sort)

# The CLI: the public C ABI only.
while IFS= read -r file; do
    while IFS= read -r line; do
        [[ $line =~ $any_include_re ]] || continue
        inc=${BASH_REMATCH[1]}
        case "$inc" in
        edgelock/edgelock.h) ;;
        hiredis/* | event2/* | *.hpp)
            echo "layering: ${file#"$root"/} includes <$inc>: the CLI uses the public header only"
            bad=1
            ;;
        esac
    done < <(grep -E '^[[:space:]]*#[[:space:]]*include' "$file")
done < <(find "$root/tools" -type f \( -name '*.c' -o -name '*.h' \) 2>/dev/null | sort)

if [ "$checked" -eq 0 ]; then
    echo "layering: no source files found under $root/src"
    exit 1
fi
if [ "$bad" -ne 0 ]; then
    echo "layering: FAILED"
    exit 1
fi
echo "layering: $checked files in src/ include only their own layer and those below"
