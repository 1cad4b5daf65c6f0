#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Mutual exclusion of concurrent `edgelock run` invocations: several processes
# increment a number in a file with a read-sleep-write race window. Under the
# lock no increment is lost; each CMD also checks that it is alone.
source "$(dirname "$0")/lib.sh" "$@"
start_redis

WORKERS=4
ROUNDS=5
echo 0 >"$TMP/counter"
rm -f "$TMP/inside"

# One increment: note that we are inside (fail if someone else is), read,
# sleep (the race window), write. mkdir is atomic: a second CMD inside the
# critical section at the same time makes it fail.
increment='mkdir "$1/inside" || { echo OVERLAP >>"$1/overlaps"; exit 1; }
n=$(cat "$1/counter"); sleep 0.05; echo $((n + 1)) >"$1/counter"
rmdir "$1/inside"'

worker() {
    local r rc=0
    for r in $(seq 1 "$ROUNDS"); do
        "$EDGELOCK" run --wait "$HANG_MS" counter-lock -- sh -c "$increment" sh "$TMP" || rc=1
    done
    return $rc
}

pids=()
for w in $(seq 1 "$WORKERS"); do
    worker &
    pids+=($!)
done
ok=1
for p in "${pids[@]}"; do wait "$p" || ok=0; done

check "every run exited 0" [ "$ok" -eq 1 ]
check "no two CMDs were inside at once" [ ! -e "$TMP/overlaps" ]
check "no lost increment: counter is $(cat "$TMP/counter"), want $((WORKERS * ROUNDS))" \
    [ "$(cat "$TMP/counter")" -eq $((WORKERS * ROUNDS)) ]
check "the lock is free at the end" lock_free counter-lock

# Re-entry across processes is not re-entry: a CMD that runs edgelock on the
# same lock is another client and cannot take it while its parent holds it.
expect_rc 75 "a nested run on the same lock waits like anyone else" \
    "$EDGELOCK" run counter-lock -- "$EDGELOCK" run --wait 100 counter-lock -- true
check "the lock is free after the nested run" lock_free counter-lock

finish
