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

finish
