#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# `edgelock list [PATTERN] [--json]`: the locks present, with kind, holders,
# TTL and waiting clients; hashes and keys that are no lock left out; names
# escaped (JSON always valid UTF-8); many keys scanned page by page.
source "$(dirname "$0")/lib.sh" "$@"
start_redis

expect_rc 0 "list with no lock" "$EDGELOCK" list
check "... says so" grep -qx "no locks" "$OUT"
expect_rc 0 "--json with no lock" "$EDGELOCK" list --json
check "... an empty, complete list" grep -qx '{"locks":\[\],"complete":true}' "$OUT"

# Holders of four kinds, one with a waiting client, and things that are no lock.
pids=()
"$EDGELOCK" run ls-fw -- sleep 600 &
pids+=($!)
"$EDGELOCK" run -s ls-cfg -- sleep 600 &
pids+=($!)
"$EDGELOCK" run --fenced ls-tok -- sleep 600 &
pids+=($!)
"$EDGELOCK" run --fair ls-fair -- sleep 600 &
pids+=($!)
for n in ls-fw ls-cfg ls-tok ls-fair; do wait_for "$n held" "$HANG_MS" lock_held "$n"; done
"$EDGELOCK" run ls-fw -- true &
pids+=($!)
"$EDGELOCK" run --fair ls-fair -- true &
pids+=($!)
wait_for "a client waits for ls-fw" "$HANG_MS" subscribed "redisson_lock__channel:{ls-fw}"
fair_queued() { [ "$(rcli llen "redisson_lock_queue:{ls-fair}")" = 1 ]; } # asked again at every poll
wait_for "a fair waiter is queued" "$HANG_MS" fair_queued
rcli hset ls-plain-hash color blue >/dev/null
rcli set ls-string value >/dev/null
rcli hset $'ls-odd"\xff' 'gw-1:7' 1 >/dev/null

expect_rc 0 "list" "$EDGELOCK" list
check "the reentrant lock, 1 waiting" grep -Eq '^ls-fw  reentrant  expires in [0-9.]+ s  1 waiting$' "$OUT"
check "the read-write lock in read mode" grep -Eq '^ls-cfg  read-write \(read\)  expires in' "$OUT"
check "the fenced lock" grep -Eq '^ls-tok  fenced  ' "$OUT"
check "the fair lock with its queue" grep -Eq '^ls-fair  fair  expires in [0-9.]+ s  1 waiting$' "$OUT"
check "each with its holder" [ "$(grep -cE '^    [0-9a-f-]{36}:[0-9]+  count 1$' "$OUT")" = 4 ]
check "a hash of another shape is no lock" bash -c "! grep -q ls-plain-hash '$OUT'"
check "a string is no lock" bash -c "! grep -q ls-string '$OUT'"
check "a name with a quote and a byte that is not UTF-8, escaped" grep -q '^ls-odd"\\xff  reentrant  no expiry' "$OUT"
check "sorted by name" bash -c "grep -E '^ls-' '$OUT' | cut -d' ' -f1 | sort -c"

expect_rc 0 "list --json" "$EDGELOCK" list --json
check "... is valid JSON, complete, 5 locks" python3 -c "
import json, sys
d = json.load(open('$OUT', encoding='utf-8'))
assert d['complete'] is True
names = [l['name'] for l in d['locks']]
assert names == sorted(names), names
by = {l['name']: l for l in d['locks']}
assert set(by) == {'ls-cfg', 'ls-fair', 'ls-fw', 'ls-tok', 'ls-odd\"\ufffd'}, set(by)
assert by['ls-fw']['kind'] == 'reentrant' and by['ls-fw']['waiters'] == 1
assert by['ls-cfg']['kind'] == 'read-write' and by['ls-cfg']['mode'] == 'read'
assert by['ls-fair']['kind'] == 'fair' and by['ls-fair']['waiters'] == 1
assert by['ls-tok']['kind'] == 'fenced'
assert by['ls-odd\"\ufffd']['ttl_ms'] is None
for l in d['locks']:
    assert l['holder_count'] == len(l['holders']) == 1 and l['holders'][0]['count'] == 1
    assert l['server'].startswith('127.0.0.1:')
"
expect_rc 0 "a pattern" "$EDGELOCK" list 'ls-f*'
check "... only the names it matches" [ "$(grep -cE '^ls-' "$OUT")" = 2 ]
kill "${pids[@]}" 2>/dev/null
wait "${pids[@]}" 2>/dev/null

# Many keys: 400 locks among 1600 other hashes, read page by page.
python3 - "$REDIS_PORT" <<'PY'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
def cmd(*a):
    return b"*%d\r\n" % len(a) + b"".join(b"$%d\r\n%s\r\n" % (len(x), x) for x in a)
out = b"".join(cmd(b"HSET", b"many-%04d" % i, b"5f1c2d3e-0000-4000-8000-000000000000:%d" % i, b"1") for i in range(400))
out += b"".join(cmd(b"HSET", b"other-%04d" % i, b"f", b"v") for i in range(1600))
s.sendall(out)
got = b""
while got.count(b"\r\n") < 2000:
    got += s.recv(65536)
PY
expect_rc 0 "list over 2000 hashes" "$EDGELOCK" list 'many-*' --json
check "... all 400 locks, complete" python3 -c "
import json
d = json.load(open('$OUT'))
assert d['complete'] is True and len(d['locks']) == 400, len(d['locks'])
"

# A name too long to read whole is said, not shown cut.
rcli hset "$(printf 'L%.0s' $(seq 300))" 'gw-1:1' 1 >/dev/null
expect_rc 0 "a name over 255 bytes" "$EDGELOCK" list 'LLL*'
check "... left out, and said" grep -q "1 name longer than 255 bytes left out" "$ERR"
expect_rc 64 "a pattern over 1024 bytes" "$EDGELOCK" list "$(printf 'p%.0s' $(seq 1100))"
expect_rc 69 "an unreachable Redis" "$EDGELOCK" --url redis://127.0.0.1:1 list
finish
