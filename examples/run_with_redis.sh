#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# run_with_redis.sh CMD [ARG...]: starts a throwaway redis-server on a free
# loopback port, runs CMD with EDGELOCK_URL pointing at it, stops the server
# and exits with CMD's status. The example tests run through it, so they never
# touch a Redis of yours.
set -u
[ $# -ge 1 ] || { echo "usage: $0 CMD [ARG...]" >&2; exit 64; }

pid=
trap '[ -n "$pid" ] && kill -9 "$pid" 2>/dev/null && wait "$pid" 2>/dev/null' EXIT

for attempt in 1 2 3 4 5 6 7 8; do
    port=$((20000 + (RANDOM * 32768 + RANDOM) % 40000))
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && continue # in use
    redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no \
        --loglevel warning --logfile /dev/null &
    pid=$!
    for _ in $(seq 1 200); do
        # Our own server answers (not one that won a race for the port).
        if [ "$(redis-cli -p "$port" info server 2>/dev/null | tr -d '\r' | sed -n 's/^process_id://p')" = "$pid" ]; then
            EDGELOCK_URL=redis://127.0.0.1:$port "$@"
            exit $?
        fi
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.02
    done
    kill -9 "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    pid=
done
echo "$0: cannot start redis-server" >&2
exit 2
