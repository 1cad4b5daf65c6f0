#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Certificates for the TLS tests, made at test time with openssl into DIR:
#   ca.{crt,key}         the test CA
#   server.{crt,key}     signed by it, for localhost and 127.0.0.1
#   client.{crt,key}     signed by it (for tls-auth-clients)
#   expired.{crt,key}    signed by it, valid only in 2020
#   other-ca.crt         a CA that signed none of them
# Usage: make_certs.sh DIR
set -euo pipefail
dir=$1
mkdir -p "$dir"
cd "$dir"
quiet() { "$@" >/dev/null 2>&1 || { echo "make_certs: failed: $*" >&2; "$@"; exit 1; }; }

quiet openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 2 -subj /CN=edgelock-test-ca
quiet openssl req -x509 -newkey rsa:2048 -nodes -keyout other-ca.key -out other-ca.crt -days 2 -subj /CN=other-ca

cat >server.ext <<'X'
subjectAltName = DNS:localhost, IP:127.0.0.1
extendedKeyUsage = serverAuth
X
cat >client.ext <<'X'
extendedKeyUsage = clientAuth
X
for who in server client; do
  quiet openssl req -newkey rsa:2048 -nodes -keyout "$who.key" -out "$who.csr" -subj "/CN=$who"
  quiet openssl x509 -req -in "$who.csr" -CA ca.crt -CAkey ca.key -CAcreateserial -out "$who.crt" -days 2 \
    -extfile "$who.ext"
done

# Expired: `openssl ca` takes explicit dates.
mkdir -p ca-db
: >ca-db/index.txt
echo 1000 >ca-db/serial
cat >ca.cnf <<X
[ca]
default_ca = test
[test]
database = ca-db/index.txt
serial = ca-db/serial
new_certs_dir = ca-db
certificate = ca.crt
private_key = ca.key
default_md = sha256
policy = any
copy_extensions = none
x509_extensions = ext
[any]
commonName = supplied
[ext]
subjectAltName = DNS:localhost, IP:127.0.0.1
X
quiet openssl req -newkey rsa:2048 -nodes -keyout expired.key -out expired.csr -subj /CN=expired
quiet openssl ca -batch -config ca.cnf -in expired.csr -out expired.crt -startdate 20200101000000Z \
  -enddate 20200102000000Z -notext
chmod 600 ./*.key
