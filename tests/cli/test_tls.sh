#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# rediss:// from the command line: --tls-* options and EDGELOCK_TLS_*
# variables, against a redis-server with certificates made at test time. A
# build without TLS says so at once (usage error).
source "$(dirname "$0")/lib.sh" "$@"
HERE=$(cd "$(dirname "$0")" && pwd)
CERTS=$TMP/certs
bash "$HERE/../integration/tls/make_certs.sh" "$CERTS"
start_redis --tls-port @PORT2@ --tls-cert-file "$CERTS/server.crt" --tls-key-file "$CERTS/server.key" \
    --tls-ca-cert-file "$CERTS/ca.crt" --tls-auth-clients optional
unset EDGELOCK_URL
URL=rediss://localhost:$REDIS_PORT2

if ! "$EDGELOCK" --version | grep -q "(TLS)"; then
    expect_rc 64 "rediss:// without TLS in the build is a usage error" "$EDGELOCK" --url "$URL" status t
    check "it says so" grep -q "without TLS" "$ERR"
    finish
fi

expect_rc 0 "run over TLS with --tls-ca" "$EDGELOCK" --url "$URL" --tls-ca "$CERTS/ca.crt" run t -- true
expect_rc 0 "the same from EDGELOCK_TLS_CA" env EDGELOCK_TLS_CA="$CERTS/ca.crt" "$EDGELOCK" --url "$URL" status t
expect_rc 0 "a client certificate" "$EDGELOCK" --url "$URL" --tls-ca "$CERTS/ca.crt" \
    --tls-cert "$CERTS/client.crt" --tls-key "$CERTS/client.key" run t -- true
expect_rc 69 "a server name the certificate does not carry" \
    "$EDGELOCK" --url "$URL" --tls-ca "$CERTS/ca.crt" --tls-server-name redis.example.com status t
check "the failure names TLS" grep -q "TLS" "$ERR"
expect_rc 69 "a CA that did not sign the server's certificate" \
    "$EDGELOCK" --url "$URL" --tls-ca "$CERTS/other-ca.crt" status t
expect_rc 0 "--tls-insecure-skip-verify connects anyway" \
    "$EDGELOCK" --url "$URL" --tls-ca "$CERTS/other-ca.crt" --tls-insecure-skip-verify status t
expect_rc 64 "a CA file that does not exist" "$EDGELOCK" --url "$URL" --tls-ca "$TMP/none.crt" status t
expect_rc 64 "a certificate without its key" \
    "$EDGELOCK" --url "$URL" --tls-ca "$CERTS/ca.crt" --tls-cert "$CERTS/client.crt" status t
check "no key material in any message" bash -c "! grep -q 'PRIVATE KEY' '$OUT' '$ERR'"
finish
