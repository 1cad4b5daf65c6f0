#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Lock names and owner fields are any bytes. `status --json` is valid JSON in
# UTF-8 whatever they hold (controls as \u00XX, bytes that are not UTF-8 as
# U+FFFD); text output and messages never pass a terminal control byte through
# (escaped visibly: \x1b, \xff, \\).
source "$(dirname "$0")/lib.sh" "$@"
start_redis

# ESC [31m, an invalid byte, a valid é, a quote, a backslash, a C1 CSI (U+009B),
# a right-to-left override (U+202E), a newline, DEL.
NAME=$'n\e[31m\xff\xc3\xa9"\\\xc2\x9b\xe2\x80\xae\n\x7f'
OWNER=$'o\e]0;title\a\xfe\xc3:1'
rcli hset "$NAME" "$OWNER" 1 >/dev/null
rcli pexpire "$NAME" 600000 >/dev/null

# raw_controls FILE: FILE holds a C0 control other than the line end, DEL, or
# a C1 control (as a byte, or as UTF-8).
raw_controls() {
    python3 - "$1" <<'EOF'
import re, sys
data = open(sys.argv[1], "rb").read()
bad = re.search(rb"[\x00-\x09\x0b-\x1f\x7f]|\xc2[\x80-\x9f]", data)
sys.exit(0 if bad else 1)
EOF
}

# --- --json: valid JSON, strict UTF-8, the values as documented -------------------
expect_rc 0 "status --json of a name and an owner of odd bytes" "$EDGELOCK" status "$NAME" --json
python3 - "$OUT" <<'EOF' >"$TMP/json-check" 2>&1
import json, sys
text = open(sys.argv[1], "rb").read().decode("utf-8")  # strict: invalid UTF-8 raises
d = json.loads(text)
want_name = "n\x1b[31m\ufffd\u00e9\"\\\u009b\u202e\n\x7f"
want_owner = "o\x1b]0;title\x07\ufffd\ufffd:1"
assert d["name"] == want_name, repr(d["name"])
assert d["holders"] == [{"owner": want_owner, "count": 1}], repr(d["holders"])
assert d["state"] == "held"
print("ok")
EOF
check "json parses as strict UTF-8 with the documented values ($(tr '\n' ' ' <"$TMP/json-check"))" grep -qx ok "$TMP/json-check"
check "json: controls written as \\u00XX" grep -qF '\u001b[31m' "$OUT"
check "json: an invalid byte written as \\ufffd" grep -qF '\ufffd' "$OUT"
check "json: a C1 control written as \\u009b" grep -qF '\u009b' "$OUT"
check "json: no raw control bytes" bash -c "$(declare -f raw_controls); ! raw_controls '$OUT'"

# --- text: every control byte escaped, visibly and unambiguously ------------------
expect_rc 0 "status (text) of the same" "$EDGELOCK" status "$NAME"
check "text: no raw control bytes" bash -c "$(declare -f raw_controls); ! raw_controls '$OUT'"
check "text: the name escaped" grep -qF 'n\x1b[31m\xffé"\\\xc2\x9b\u202e\x0a\x7f: held' "$OUT"
check "text: the owner escaped" grep -qF 'o\x1b]0;title\x07\xfe\xc3:1  count 1' "$OUT"

# --- messages on stderr, and unlock's line -------------------------------------------
rcli set "$NAME-str" x >/dev/null
expect_rc 76 "a name that holds a string" "$EDGELOCK" status "$NAME-str"
check "the message escapes the name" grep -qF "'n\x1b[31m" "$ERR"
check "stderr: no raw control bytes" bash -c "$(declare -f raw_controls); ! raw_controls '$ERR'"
expect_rc 0 "run -v with the odd name" "$EDGELOCK" -v run "$NAME-run" -- true
check "run's messages escape the name" grep -qF "acquired lock 'n\x1b[31m" "$ERR"
check "run's stderr: no raw control bytes" bash -c "$(declare -f raw_controls); ! raw_controls '$ERR'"
expect_rc 0 "unlock --force of the odd name" "$EDGELOCK" unlock --force "$NAME"
check "unlock's line escapes the name" grep -qF 'n\x1b[31m\xffé"\\\xc2\x9b\u202e\x0a\x7f: force-unlocked' "$OUT"
check "unlock: no raw control bytes" bash -c "$(declare -f raw_controls); ! raw_controls '$OUT'"

finish
