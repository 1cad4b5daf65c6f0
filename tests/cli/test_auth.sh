#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# A Redis that refuses the connection setup (wrong password, unknown ACL user,
# db out of range, an ACL that forbids a command edgelock needs) is reported as
# such by every subcommand, with exit 77 (EX_NOPERM): not as "cannot reach
# Redis". The password never appears in any output; CMD never runs.
source "$(dirname "$0")/lib.sh" "$@"
REDIS_PASSWORD='Auth-pw-7'
start_redis --requirepass "$REDIS_PASSWORD" --databases 16
unset EDGELOCK_URL
rcli acl setuser gw on '>gw-pw-8' '~*' '&*' '+@all' >/dev/null
# May log in, but not load or run scripts: SCRIPT LOAD is refused at setup.
rcli acl setuser noscript on '>ns-pw-9' '~*' '&*' '+@all' '-@scripting' >/dev/null

refused() { # refused DESCRIPTION URL: every subcommand exits 77 and says why
    local what=$1 url=$2
    rm -f "$TMP/ran"
    expect_rc 77 "$what: run" "$EDGELOCK" --url "$url" run r -- touch "$TMP/ran"
    check "... CMD did not run" [ ! -e "$TMP/ran" ]
    check "... stderr says Redis refused the connection setup" grep -q "refused the connection setup while checking lock 'r'" "$ERR"
    check "... not that the connection failed" bash -c "! grep -qi 'cannot reach\|connection to Redis failed' '$ERR'"
    check "... no password in the output" bash -c "! grep -q 'pw-\|Auth-pw' '$OUT' '$ERR'"
    expect_rc 77 "$what: status" "$EDGELOCK" --url "$url" status r
    check "... stderr says so" grep -q "refused the connection setup while reading lock 'r'" "$ERR"
    check "... no password in the output" bash -c "! grep -q 'pw-\|Auth-pw' '$OUT' '$ERR'"
    expect_rc 77 "$what: unlock --force" "$EDGELOCK" --url "$url" unlock --force r
    check "... no password in the output" bash -c "! grep -q 'pw-\|Auth-pw' '$OUT' '$ERR'"
}

# Each refusal is reported after the 3 s connect timeout (reconnects may yet
# succeed): the cases run side by side, each with its own output files, and
# their results are added up afterwards.
P=$REDIS_PORT
cases=("wrong password|redis://:wrong-pw-1@127.0.0.1:$P"
    "no password|redis://127.0.0.1:$P"
    "unknown ACL user|redis://nobody:gw-pw-8@127.0.0.1:$P"
    "db 99999 of 16|redis://gw:gw-pw-8@127.0.0.1:$P/99999"
    "an ACL without scripting|redis://noscript:ns-pw-9@127.0.0.1:$P")
pids=()
for i in "${!cases[@]}"; do
    (
        PASSED=0 FAILED=0 OUT=$TMP/out$i ERR=$TMP/err$i
        TMP=$TMP/case$i && mkdir -p "$TMP"
        refused "${cases[$i]%%|*}" "${cases[$i]#*|}"
        echo "$PASSED $FAILED" >"$TMP/../count$i"
    ) >"$TMP/log$i" &
    pids+=($!)
done
wait "${pids[@]}"
for i in "${!cases[@]}"; do
    cat "$TMP/log$i"
    read -r p f <"$TMP/count$i" || { p=0 f=1; }
    PASSED=$((PASSED + p)) FAILED=$((FAILED + f))
done

# --password-file: the same refusal; --redlock with a majority refusing too.
printf '%s\n' wrong-pw-2 >"$TMP/pw"
expect_rc 77 "wrong --password-file" "$EDGELOCK" --url "redis://127.0.0.1:$P" --password-file "$TMP/pw" run r -- true
check "... no password in the output" bash -c "! grep -q 'pw-' '$OUT' '$ERR'"
expect_rc 77 "--redlock, every server refusing" "$EDGELOCK" --url "redis://:wrong-pw-1@127.0.0.1:$P" \
    run --lease 5000 --redlock "redis://:wrong-pw-3@127.0.0.1:$P/1,redis://:wrong-pw-4@127.0.0.1:$P/2" r -- true
check "... names the refusal" grep -q "refused the connection setup" "$ERR"
check "... no password in the output" bash -c "! grep -q 'pw-' '$OUT' '$ERR'"

# The same setups with the right credentials work.
expect_rc 0 "right password" "$EDGELOCK" --url "redis://:$REDIS_PASSWORD@127.0.0.1:$P" run r -- true
expect_rc 0 "ACL user, db 15" "$EDGELOCK" --url "redis://gw:gw-pw-8@127.0.0.1:$P/15" run r -- true
check "the lock is free afterwards" lock_free r
# Percent-encoded credentials (RFC 3986): a user and a password holding '@',
# ':', '%' and '/' work when written %40, %3A, %25 and %2F.
rcli acl setuser 'g:w@1' on '>p@ss:w%rd/9' '~*' '&*' '+@all' >/dev/null
expect_rc 0 "percent-encoded user and password" "$EDGELOCK" --url "redis://g%3Aw%401:p%40ss%3Aw%25rd%2F9@127.0.0.1:$P" run r -- true
check "... no password in the output" bash -c "! grep -q 'w%rd\|w%25rd\|ss%3A' '$OUT' '$ERR'"
expect_rc 64 "a '%' that is no escape" "$EDGELOCK" --url "redis://:p%zz@127.0.0.1:$P" run r -- true
check "... the password is not shown" bash -c "! grep -q 'p%zz' '$OUT' '$ERR'"

# Sentinels with a password of their own (requirepass in sentinel.conf): the
# URL's password is the master's; --sentinel-password-file gives theirs.
# Without it the sentinels refuse the master query: exit 77, not 69.
start_sentinel Sent-pw-5 "sentinel monitor gw 127.0.0.1 $P 1" "sentinel auth-pass gw $REDIS_PASSWORD"
SURL="redis-sentinel://:$REDIS_PASSWORD@127.0.0.1:$SENTINEL_PORT/gw"
expect_rc 77 "sentinels that want a password, none given" "$EDGELOCK" --url "$SURL" run r -- true
check "... stderr says Redis refused the connection setup" grep -q "refused the connection setup" "$ERR"
check "... no password in the output" bash -c "! grep -q 'pw-' '$OUT' '$ERR'"
printf '%s\n' Sent-pw-5 >"$TMP/spw"
expect_rc 0 "--sentinel-password-file" "$EDGELOCK" --url "$SURL" --sentinel-password-file "$TMP/spw" \
    run r -- sh -c 'REDISCLI_AUTH="$2" redis-cli --no-auth-warning -p "$0" exists r >"$1"' "$P" "$TMP/held" "$REDIS_PASSWORD"
check "... held on the master the sentinel named" grep -qx 1 "$TMP/held"
check "... no password in the output" bash -c "! grep -q 'pw-' '$OUT' '$ERR'"
printf '%s\n' wrong-pw-6 >"$TMP/spw"
expect_rc 77 "a wrong --sentinel-password-file" "$EDGELOCK" --url "$SURL" --sentinel-password-file "$TMP/spw" run r -- true
check "... no password in the output" bash -c "! grep -q 'pw-' '$OUT' '$ERR'"

finish
