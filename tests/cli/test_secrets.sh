#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Secrets out of argv: the URL from --url-file, the password from
# --password-file, a Redis reached through its unix socket; a password never
# appears in any output, whatever goes wrong.
source "$(dirname "$0")/lib.sh" "$@"
REDIS_PASSWORD='pw-s3cr3t@x'
SOCK=$TMP/redis.sock
start_redis --requirepass "$REDIS_PASSWORD" --unixsocket "$SOCK"
unset EDGELOCK_URL

# The password must not show anywhere: stdout, stderr, --json.
no_secret() { ! grep -q -- "$REDIS_PASSWORD" "$OUT" "$ERR"; }

echo "redis://:$REDIS_PASSWORD@127.0.0.1:$REDIS_PORT" >"$TMP/url"
expect_rc 0 "--url-file: the URL from a file" "$EDGELOCK" --url-file "$TMP/url" run s -- true
expect_rc 0 "--url-file before status" "$EDGELOCK" --url-file "$TMP/url" status s --json
check "status --json does not show the password" no_secret

printf '%s\n' "$REDIS_PASSWORD" >"$TMP/pw"
expect_rc 0 "--password-file with a URL that has none" \
    "$EDGELOCK" --url "redis://127.0.0.1:$REDIS_PORT" --password-file "$TMP/pw" run s -- true
expect_rc 0 "--password-file replaces a wrong password in the URL" \
    "$EDGELOCK" --url "redis://:wrong@127.0.0.1:$REDIS_PORT" --password-file "$TMP/pw" status s
expect_rc 77 "no password at all: Redis refuses the setup (EX_NOPERM)" \
    "$EDGELOCK" --url "redis://127.0.0.1:$REDIS_PORT" status s
check "the refusal does not show a password" no_secret

# unix:// socket, with the password from its file.
expect_rc 0 "a unix socket URL" "$EDGELOCK" --url "unix://$SOCK" --password-file "$TMP/pw" run u -- \
    sh -c '[ "$(redis-cli -s "$1" -a "$2" --no-auth-warning exists u)" = 1 ]' sh "$SOCK" "$REDIS_PASSWORD"
check "the lock taken over the socket is released" lock_free u
expect_rc 0 "a unix socket URL with credentials, shown masked" \
    "$EDGELOCK" --url "unix://:$REDIS_PASSWORD@$SOCK" status u
check "status over the socket does not show the password" no_secret
expect_rc 69 "a unix socket that does not exist" \
    "$EDGELOCK" --url "unix://$TMP/none.sock" --password-file "$TMP/pw" status u
check "the socket error does not show the password" no_secret

# Bad files: usage errors that name the file, never its content.
expect_rc 64 "--url-file that does not exist" "$EDGELOCK" --url-file "$TMP/missing" status s
: >"$TMP/empty"
expect_rc 64 "--password-file that is empty" "$EDGELOCK" --password-file "$TMP/empty" status s
echo "redis://:$REDIS_PASSWORD@127.0.0.1:$REDIS_PORT:99999" >"$TMP/badurl"
expect_rc 64 "--url-file with a malformed URL" "$EDGELOCK" --url-file "$TMP/badurl" status s
check "the malformed URL is not echoed" no_secret
head -c 5000 /dev/zero | tr '\0' p >"$TMP/long"
expect_rc 64 "--password-file longer than 255 bytes" "$EDGELOCK" --password-file "$TMP/long" status s

# Only the first line of a secret file is read, and nothing else of it stays
# in memory: a CRLF line end is dropped, later lines are ignored.
printf '%s\r\nsecond line\n' "$REDIS_PASSWORD" >"$TMP/pw-crlf"
expect_rc 0 "--password-file with a CRLF line end and a second line" \
    "$EDGELOCK" --url "redis://127.0.0.1:$REDIS_PORT" --password-file "$TMP/pw-crlf" status s
printf 'redis://:%s@127.0.0.1:%s\r\nredis://127.0.0.1:1\n' "$REDIS_PASSWORD" "$REDIS_PORT" >"$TMP/url-crlf"
expect_rc 0 "--url-file with a CRLF line end and a second line" "$EDGELOCK" --url-file "$TMP/url-crlf" status s

# A FIFO (as `--password-file <(pass show redis)` makes) whose writer keeps it
# open after the first line: edgelock reads up to the line end, not to EOF.
mkfifo "$TMP/pw-fifo"
(printf '%s\n' "$REDIS_PASSWORD"; while [ ! -e "$TMP/fifo-done" ]; do sleep 0.02; done) >"$TMP/pw-fifo" &
writer=$!
"$EDGELOCK" --url "redis://127.0.0.1:$REDIS_PORT" --password-file "$TMP/pw-fifo" status s >"$OUT" 2>"$ERR" &
reader=$!
exited() { ! kill -0 "$1" 2>/dev/null; }
wait_for "edgelock done with the FIFO's first line" "$HANG_MS" exited "$reader"
reader_first=0 # edgelock ended while the writer still held the FIFO open
if exited "$reader" && ! exited "$writer"; then reader_first=1; fi
touch "$TMP/fifo-done"
wait "$reader"
rc=$?
wait "$writer"
check "--password-file from a FIFO still open: exit 0 (got $rc)" [ "$rc" -eq 0 ]
check "... before the writer closed it" [ "$reader_first" -eq 1 ]

# While CMD runs, no later line of the file is anywhere in edgelock's
# writable memory (a stdio buffer once kept a block of the file, freed
# unwiped). Skipped where /proc/PID/mem cannot be read.
# mem_has PID STRING: 0 found, 1 not found, 2 cannot read.
mem_has() {
    python3 - "$@" <<'PY'
import sys
pid, needle = sys.argv[1], sys.argv[2].encode()
try:
    maps = open("/proc/%s/maps" % pid).read().splitlines()
    mem = open("/proc/%s/mem" % pid, "rb", 0)
except OSError:
    sys.exit(2)
read_any = False
for line in maps:
    f = line.split()
    if len(f) < 2 or not f[1].startswith("rw"):
        continue
    lo, hi = (int(x, 16) for x in f[0].split("-"))
    try:
        mem.seek(lo)
        data = mem.read(hi - lo)
    except (OSError, ValueError, OverflowError):
        continue
    read_any = True
    if needle in data:
        sys.exit(0)
sys.exit(1 if read_any else 2)
PY
}
{
    printf '%s\n' "$REDIS_PASSWORD"
    for k in $(seq 1 60); do printf 'later-line-%02d-of-the-password-file-padding-padding-padding\n' "$k"; done
} >"$TMP/pw-long"
rm -f "$TMP/started" "$TMP/release"
"$EDGELOCK" --url "redis://127.0.0.1:$REDIS_PORT" --password-file "$TMP/pw-long" run mem -- \
    sh -c 'echo x >"$1/started"; while [ ! -e "$1/release" ]; do sleep 0.02; done' sh "$TMP" &
holder=$!
wait_for "CMD started (memory check)" "$HANG_MS" test -e "$TMP/started"
mem_has "$holder" later-line-
mrc=$?
if [ "$mrc" -eq 2 ]; then
    echo "skip - cannot read /proc/$holder/mem"
else
    check "no later line of --password-file is in edgelock's memory" [ "$mrc" -eq 1 ]
fi
touch "$TMP/release"
wait "$holder"
check "the run with the long --password-file exited 0" [ $? -eq 0 ]

# Usage errors never echo a secret: an unknown option is named without its
# value, a stray argument that may be a URL is shown redacted or not at all.
expect_rc 64 "an unknown option with a URL as its value" "$EDGELOCK" "--URL=redis://:$REDIS_PASSWORD@h" status s
check "... does not show the password" no_secret
check "... but names the option" grep -q "unknown option '--URL'" "$ERR"
expect_rc 64 "a stray argument that is a URL with a password" \
    "$EDGELOCK" --url redis://127.0.0.1:1 status s "redis://:$REDIS_PASSWORD@h"
check "... does not show the password" no_secret
check "... but shows it redacted" grep -q "unexpected argument 'redis://\*\*\*@h'" "$ERR"
expect_rc 64 "a stray argument with an '@' that is not a URL" \
    "$EDGELOCK" --url redis://127.0.0.1:1 status s "user:$REDIS_PASSWORD"
check "... does not show the password" no_secret
expect_rc 64 "an option after NAME with a URL as its value" \
    "$EDGELOCK" run s "--url=redis://:$REDIS_PASSWORD@h" -- true
check "... does not show the password" no_secret
expect_rc 64 "an unknown command that is a URL" "$EDGELOCK" "redis://:$REDIS_PASSWORD@h:6379" status s
check "... does not show the password" no_secret
expect_rc 64 "a bad --wait that is a URL" "$EDGELOCK" run --wait "redis://:$REDIS_PASSWORD@h" s -- true
check "... does not show the password" no_secret
expect_rc 127 "a CMD that is a URL: not found" "$EDGELOCK" --url redis://127.0.0.1:1 run s -- "redis://:$REDIS_PASSWORD@h"
check "... does not show the password" no_secret

finish
