#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Numbers another writer left in a lock's keys that no lock holds (hold counts,
# fencing tokens, fair-queue deadlines that are not numbers, out of range,
# negative, or years away) print as "invalid", in text and JSON: never as a
# clamped or overflowed value, never as 0 or as "never fenced".
source "$(dirname "$0")/lib.sh" "$@"
start_redis

rcli hset nb "gw-abc:1" abc "gw-huge:1" 99999999999999999999 "gw-neg:1" -5 "gw-zero:1" 0 \
    "gw-ok:1" 7 >/dev/null
rcli pexpire nb 600000 >/dev/null
rcli set "redisson_lock_token:{nb}" abc >/dev/null
rcli rpush "redisson_lock_queue:{nb}" w-inf w-e300 w-min w-neg w-far w-ok w-none >/dev/null
now=$(rcli time | head -n 1)
rcli zadd "redisson_lock_timeout:{nb}" inf w-inf 1e300 w-e300 -9e18 w-min -5 w-neg 1e18 w-far \
    "$(((now + 600) * 1000))" w-ok >/dev/null
rcli set "redisson_lock_token:{nb-neg}" -3 >/dev/null

# --- text -----------------------------------------------------------------------
expect_rc 0 "status of a lock with bad numbers" "$EDGELOCK" status nb
check "a count that is not a number: invalid" grep -qx "    gw-abc:1  count invalid (not a hold count)" "$OUT"
check "a count beyond int64: invalid, not clamped" grep -qx "    gw-huge:1  count invalid (not a hold count)" "$OUT"
check "a negative count: invalid" grep -qx "    gw-neg:1  count invalid (not a hold count)" "$OUT"
check "a count of 0: invalid" grep -qx "    gw-zero:1  count invalid (not a hold count)" "$OUT"
check "a good count as it is" grep -qx "    gw-ok:1  count 7" "$OUT"
for w in w-inf w-e300 w-min w-neg w-far; do
    check "deadline of $w: invalid" grep -Eqx "    [0-9]+\. $w  deadline invalid \(not a time\)" "$OUT"
done
check "a good deadline as it is" grep -Eqx "    6\. w-ok  deadline in [0-9]+\.[0-9]{3} s" "$OUT"
check "no deadline" grep -qx "    7. w-none  (no deadline)" "$OUT"
check "a token that is not a number: invalid, not 'never fenced'" \
    grep -qx "  fencing token: invalid (the token key holds no token)" "$OUT"
check "no number printed overflowed (no 19-digit durations)" bash -c "! grep -Eq '[0-9]{16,}' '$OUT'"

# --- JSON -----------------------------------------------------------------------
expect_rc 0 "status --json of the same" "$EDGELOCK" status nb --json
python3 - "$OUT" >"$TMP/json-check" 2>&1 <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
counts = {h["owner"]: h["count"] for h in d["holders"]}
assert counts == {"gw-abc:1": "invalid", "gw-huge:1": "invalid", "gw-neg:1": "invalid",
                  "gw-zero:1": "invalid", "gw-ok:1": 7}, counts
w = {x["owner"]: (x["deadline_ms"], x["expires_in_ms"]) for x in d["waiters"]}
for o in ("w-inf", "w-e300", "w-min", "w-neg", "w-far"):
    assert w[o] == ("invalid", "invalid"), (o, w[o])
assert isinstance(w["w-ok"][0], int) and 0 < w["w-ok"][1] <= 600000, w["w-ok"]
assert w["w-none"] == (None, None)
assert d["token"] == "invalid", d["token"]
assert isinstance(d["ttl_ms"], int) and 0 < d["ttl_ms"] <= 600000, d["ttl_ms"]
print("ok")
EOF
check "json: bad numbers are \"invalid\", good ones numbers ($(tr '\n' ' ' <"$TMP/json-check"))" \
    grep -qx ok "$TMP/json-check"

# --- a negative token ---------------------------------------------------------------
expect_rc 0 "status of a free lock whose token is -3" "$EDGELOCK" status nb-neg
check "... invalid" grep -qx "  fencing token: invalid (the token key holds no token)" "$OUT"
expect_rc 0 "... --json" "$EDGELOCK" status nb-neg --json
check "... \"token\":\"invalid\"" grep -q '"token":"invalid","subscribers":0,"server":"[^"]*"}$' "$OUT"

finish
