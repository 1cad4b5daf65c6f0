// SPDX-License-Identifier: BSD-3-Clause
// The fuzz server's side of TLS (fuzz_tls): certificates made in memory when
// the target starts, and per connection an OpenSSL server whose records go
// through memory buffers, so that the server (server.hpp) still reads and
// writes the socket itself: with MSG_NOSIGNAL, cut anywhere, or bypassing
// TLS to put bytes that are no record on the wire.
//
// Two certificates over one key, both in the CA file the client is given:
// one for 127.0.0.1 (the address the client connects to, checked as an IP)
// and one for another name, which every eighth connection presents, so that
// a failed name check comes up too.
#pragma once

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <stdio.h>
#include <stdlib.h>

#include <string>

namespace fuzz
{

struct TlsSide {
    SSL_CTX *right = nullptr; // 127.0.0.1's certificate
    SSL_CTX *wrong = nullptr; // another name's
    std::string ca_path;      // both certificates, PEM
};

inline X509 *tls_certificate(EVP_PKEY *key, const char *cn, const char *alt_name)
{
    X509 *x = X509_new();
    X509_set_version(x, 2);
    ASN1_INTEGER_set(X509_get_serialNumber(x), alt_name[0] == 'I' ? 1 : 2);
    X509_gmtime_adj(X509_getm_notBefore(x), -3600);
    X509_gmtime_adj(X509_getm_notAfter(x), 3600L * 24 * 365);
    X509_set_pubkey(x, key);
    X509_NAME *name = X509_get_subject_name(x);
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char *>(cn), -1, -1,
                               0);
    X509_set_issuer_name(x, name); // self-signed: it is its own CA
    X509V3_CTX ctx;
    X509V3_set_ctx_nodb(&ctx);
    X509V3_set_ctx(&ctx, x, x, nullptr, nullptr, 0);
    const std::pair<int, const char *> exts[] = {{NID_basic_constraints, "critical,CA:TRUE"},
                                                 {NID_subject_alt_name, alt_name}};
    for (const auto &e : exts) {
        X509_EXTENSION *ext = X509V3_EXT_conf_nid(nullptr, &ctx, e.first, e.second);
        if (!ext || !X509_add_ext(x, ext, -1)) {
            fprintf(stderr, "fuzz: certificate extension %s\n", e.second);
            abort();
        }
        X509_EXTENSION_free(ext);
    }
    if (!X509_sign(x, key, EVP_sha256())) {
        fprintf(stderr, "fuzz: X509_sign\n");
        abort();
    }
    return x;
}

inline SSL_CTX *tls_server_context(EVP_PKEY *key, X509 *cert)
{
    SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
    if (!ctx || SSL_CTX_use_certificate(ctx, cert) != 1 || SSL_CTX_use_PrivateKey(ctx, key) != 1) {
        fprintf(stderr, "fuzz: server TLS context\n");
        abort();
    }
    return ctx;
}

// Made once per process; the CA file goes into `dir` (the listener's).
inline TlsSide &tls_side(const std::string &dir)
{
    static TlsSide side = [&] {
        TlsSide s;
        EVP_PKEY *key = EVP_EC_gen("P-256"); // fast to make and to shake hands with
        if (!key) {
            fprintf(stderr, "fuzz: EVP_EC_gen\n");
            abort();
        }
        X509 *right = tls_certificate(key, "fuzz server", "IP:127.0.0.1");
        X509 *wrong = tls_certificate(key, "elsewhere", "DNS:elsewhere.example");
        s.right = tls_server_context(key, right);
        s.wrong = tls_server_context(key, wrong);
        s.ca_path = dir + "/ca.pem";
        FILE *f = fopen(s.ca_path.c_str(), "w");
        if (!f || !PEM_write_X509(f, right) || !PEM_write_X509(f, wrong) || fclose(f) != 0) {
            fprintf(stderr, "fuzz: cannot write %s\n", s.ca_path.c_str());
            abort();
        }
        X509_free(right);
        X509_free(wrong);
        EVP_PKEY_free(key);
        return s;
    }();
    return side;
}

// A server for connection `id`, its records in memory buffers.
inline SSL *tls_accept(const TlsSide &side, int id)
{
    SSL *ssl = SSL_new(id % 8 == 5 ? side.wrong : side.right);
    if (!ssl) {
        fprintf(stderr, "fuzz: SSL_new\n");
        abort();
    }
    SSL_set_bio(ssl, BIO_new(BIO_s_mem()), BIO_new(BIO_s_mem()));
    SSL_set_accept_state(ssl);
    return ssl;
}

// What the server's TLS has to send (handshake, records, alerts), taken.
inline std::string tls_pending(SSL *ssl)
{
    std::string out;
    char buf[4096];
    int n;
    while ((n = BIO_read(SSL_get_wbio(ssl), buf, sizeof(buf))) > 0)
        out.append(buf, (size_t)n);
    return out;
}

// Bytes read from the socket in; what they carried out, into *plain. False
// when the client broke the session (a bad record, an alert, close_notify):
// Redis would drop the connection.
inline bool tls_take(SSL *ssl, const char *raw, size_t n, std::string *plain)
{
    if (n > 0)
        BIO_write(SSL_get_rbio(ssl), raw, (int)n);
    char buf[4096];
    for (;;) {
        int got = SSL_read(ssl, buf, sizeof(buf));
        if (got > 0) {
            plain->append(buf, (size_t)got);
            continue;
        }
        int err = SSL_get_error(ssl, got);
        ERR_clear_error(); // this thread's queue: the client's TLS may share it (fuzz_wire)
        return err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE;
    }
}

// Bytes as records (none before the handshake has finished: lost, as
// bytes a server writes to a connection it has not set up).
inline std::string tls_wrap(SSL *ssl, const char *data, size_t n)
{
    if (n > 0 && SSL_is_init_finished(ssl))
        (void)SSL_write(ssl, data, (int)n);
    ERR_clear_error();
    return tls_pending(ssl);
}

inline std::string tls_close_notify(SSL *ssl)
{
    (void)SSL_shutdown(ssl);
    ERR_clear_error();
    return tls_pending(ssl);
}

} // namespace fuzz
