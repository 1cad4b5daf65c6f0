#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# CMD never sees the password of EDGELOCK_URL: `run` passes EDGELOCK_URL on
# without its credentials (a nested edgelock reaches the same server and
# brings its own password), and drops one that is not a valid URL.
source "$(dirname "$0")/lib.sh" "$@"
REDIS_PASSWORD='child-Pw-5'
start_redis --requirepass "$REDIS_PASSWORD"
P=$REDIS_PORT
printf '%s\n' "$REDIS_PASSWORD" >"$TMP/pw"

# CMD writes its whole environment into $TMP/env.
dump_env='env >"$1/env"'

seen_by_cmd() { # seen_by_cmd DESCRIPTION: CMD's environment holds no password
    check "$1: the password is nowhere in CMD's environment" bash -c "! grep -q '$REDIS_PASSWORD' '$TMP/env'"
}

expect_rc 0 "EDGELOCK_URL with a password" \
    env EDGELOCK_URL="redis://:$REDIS_PASSWORD@127.0.0.1:$P/0" "$EDGELOCK" run c -- sh -c "$dump_env" sh "$TMP"
seen_by_cmd "password only"
check "... EDGELOCK_URL reaches CMD without its credentials" grep -qx "EDGELOCK_URL=redis://127.0.0.1:$P/0" "$TMP/env"

expect_rc 0 "EDGELOCK_URL with user and password" \
    env EDGELOCK_URL="redis://default:$REDIS_PASSWORD@127.0.0.1:$P" "$EDGELOCK" run c -- sh -c "$dump_env" sh "$TMP"
seen_by_cmd "user and password"
check "... EDGELOCK_URL reaches CMD without user or password" grep -qx "EDGELOCK_URL=redis://127.0.0.1:$P" "$TMP/env"

# --url wins for edgelock itself; an EDGELOCK_URL it did not use is cleaned too.
expect_rc 0 "--url given, a password in EDGELOCK_URL too" \
    env EDGELOCK_URL="redis://:$REDIS_PASSWORD@10.0.0.9:6379" "$EDGELOCK" --url "redis://127.0.0.1:$P" \
    --password-file "$TMP/pw" run c -- sh -c "$dump_env" sh "$TMP"
seen_by_cmd "--url and EDGELOCK_URL"
check "... EDGELOCK_URL passed on without credentials" grep -qx "EDGELOCK_URL=redis://10.0.0.9:6379" "$TMP/env"

expect_rc 0 "a unix:// EDGELOCK_URL with a password, unused (--url given)" \
    env EDGELOCK_URL="unix://:$REDIS_PASSWORD@/run/redis.sock?db=2" "$EDGELOCK" --url "redis://127.0.0.1:$P" \
    --password-file "$TMP/pw" run c -- sh -c "$dump_env" sh "$TMP"
seen_by_cmd "unix://"
check "... passed on as unix:///run/redis.sock?db=2" grep -qx "EDGELOCK_URL=unix:///run/redis.sock?db=2" "$TMP/env"

expect_rc 0 "an EDGELOCK_URL that is not a URL, holding the password" \
    env EDGELOCK_URL="not a url $REDIS_PASSWORD" "$EDGELOCK" --url "redis://127.0.0.1:$P" \
    --password-file "$TMP/pw" run c -- sh -c "$dump_env" sh "$TMP"
seen_by_cmd "not a URL"
check "... is not passed on at all" bash -c "! grep -q '^EDGELOCK_URL=' '$TMP/env'"

expect_rc 0 "EDGELOCK_URL without credentials" \
    env EDGELOCK_URL="redis://127.0.0.1:$P" "$EDGELOCK" --password-file "$TMP/pw" run c -- sh -c "$dump_env" sh "$TMP"
check "... reaches CMD as it is" grep -qx "EDGELOCK_URL=redis://127.0.0.1:$P" "$TMP/env"

# A nested edgelock reaches the same server: refused without a password (77),
# fine with its own --password-file.
expect_rc 77 "a nested edgelock without a password of its own" \
    env EDGELOCK_URL="redis://:$REDIS_PASSWORD@127.0.0.1:$P" "$EDGELOCK" run outer -- "$EDGELOCK" status inner
expect_rc 0 "a nested edgelock with --password-file" \
    env EDGELOCK_URL="redis://:$REDIS_PASSWORD@127.0.0.1:$P" "$EDGELOCK" run outer -- \
    "$EDGELOCK" --password-file "$TMP/pw" run inner -- true
check "no password in any output" bash -c "! grep -q '$REDIS_PASSWORD' '$OUT' '$ERR'"

finish
