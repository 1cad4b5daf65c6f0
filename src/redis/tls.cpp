// SPDX-License-Identifier: BSD-3-Clause
// TLS over hiredis_ssl and OpenSSL (tls.hpp).
#include "redis/tls.hpp"

#include "base/log.hpp"

#include "port.h"

#if EDGELOCK_HAVE_TLS
#include <hiredis/hiredis.h>
#include <hiredis/hiredis_ssl.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <stdio.h>
#endif
#include <string.h>

namespace edgelock
{

bool tls_io_error_says_nothing(const char *io_error)
{
    return !io_error || !io_error[0] || strcmp(io_error, strerror(0)) == 0;
}

#if EDGELOCK_HAVE_TLS

bool tls_available()
{
    return true;
}

static void log_openssl(const LogSink *log, const char *what, const char *file)
{
    char err[160];
    ERR_error_string_n(ERR_get_error(), err, sizeof(err));
    // The file's name, never its content (a key).
    log_to(log, EDGELOCK_LOG_ERROR, "TLS: %s %s: %s", what, file ? file : "", err);
    ERR_clear_error();
}

// OpenSSL's default for an encrypted key is to ask for its passphrase on the
// terminal, from inside client creation, with no time limit: a daemon with a
// tty would hang there. No passphrase is ever given, so such a key fails to
// load and creation reports it.
static int no_passphrase(char *, int, int, void *)
{
    return 0;
}

void *tls_context_new(const TlsOptions &o, edgelock_status *st)
{
    *st = EDGELOCK_ERR_TLS;
    if (!o.cert != !o.key) {
        log_to(o.log, EDGELOCK_LOG_ERROR,
               "TLS: a client certificate needs its key, and a key its certificate");
        return nullptr;
    }
    SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
    if (!ctx) {
        *st = EDGELOCK_ERR_NO_MEMORY;
        return nullptr;
    }
    SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
    SSL_CTX_set_verify(ctx, o.verify ? SSL_VERIFY_PEER : SSL_VERIFY_NONE, nullptr);
    bool ok = true;
    if (o.ca) {
        // A file, or a directory of hashed certificates (which OpenSSL reads
        // only when it needs one: check that it is there at all now).
        int kind = edgelock_port_path_kind(o.ca);
        ok = kind == 1   ? SSL_CTX_load_verify_locations(ctx, o.ca, nullptr) == 1
             : kind == 2 ? SSL_CTX_load_verify_locations(ctx, nullptr, o.ca) == 1
                         : false;
        if (!ok && kind == 0)
            log_to(o.log, EDGELOCK_LOG_ERROR, "TLS: no CA file or directory %s", o.ca);
        else if (!ok)
            log_openssl(o.log, "cannot use the CA", o.ca);
    } else if (o.verify) {
        ok = SSL_CTX_set_default_verify_paths(ctx) == 1;
        if (!ok)
            log_openssl(o.log, "cannot use the system's CA store", nullptr);
    }
    if (ok && o.cert) {
        SSL_CTX_set_default_passwd_cb(ctx, no_passphrase);
        if (SSL_CTX_use_certificate_chain_file(ctx, o.cert) != 1) {
            ok = false;
            log_openssl(o.log, "cannot use the certificate", o.cert);
        } else if (SSL_CTX_use_PrivateKey_file(ctx, o.key, SSL_FILETYPE_PEM) != 1) {
            ok = false;
            log_openssl(o.log, "cannot use the key (an unencrypted PEM key)", o.key);
        } else if (SSL_CTX_check_private_key(ctx) != 1) {
            ok = false;
            log_openssl(o.log, "the key does not match the certificate", o.key);
        }
    }
    if (!ok) {
        SSL_CTX_free(ctx);
        return nullptr;
    }
    *st = EDGELOCK_OK;
    return ctx;
}

void tls_context_free(void *ctx)
{
    SSL_CTX_free(static_cast<SSL_CTX *>(ctx));
}

static bool is_ip_literal(const char *name)
{
    // An IPv4 dotted quad or anything with ':' (IPv6) is checked as an address.
    if (strchr(name, ':'))
        return true;
    for (const char *p = name; *p; p++)
        if ((*p < '0' || *p > '9') && *p != '.')
            return false;
    return *name != 0;
}

void *tls_attach(void *ctx, redisContext *c, const char *name, bool verify, const LogSink *log,
                 edgelock_status *why)
{
    *why = EDGELOCK_ERR_TLS;
    SSL *ssl = SSL_new(static_cast<SSL_CTX *>(ctx));
    if (!ssl)
        return nullptr;
    bool ip = is_ip_literal(name);
    bool ok = ip || SSL_set_tlsext_host_name(ssl, name) == 1; // SNI takes names only
    if (ok && verify)
        ok = ip ? X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), name) == 1
                : SSL_set1_host(ssl, name) == 1;
    if (!ok) {
        SSL_free(ssl);
        return nullptr;
    }
    if (redisInitiateSSL(c, ssl) != REDIS_OK) {
        // hiredis takes the SSL object only when it succeeds. A server that
        // refuses the connection fails here (the handshake starts at once and
        // finds the socket refused): that is CONNECTION, as without TLS.
        if (edgelock_port_socket_failed(c->fd))
            *why = EDGELOCK_ERR_CONNECTION;
        log_to(log, EDGELOCK_LOG_WARN, "TLS: cannot start: %s", c->errstr);
        SSL_free(ssl);
        ERR_clear_error(); // the thread's queue: SSL_get_error() reads it for every link on the thread
        return nullptr;
    }
    return ssl;
}

void tls_clear_thread_errors()
{
    ERR_clear_error();
}

bool tls_failed(void *ssl, const char *io_error, char *why, size_t cap)
{
    auto *s = static_cast<SSL *>(ssl);
    long verify = SSL_get_verify_result(s);
    if (verify != X509_V_OK) {
        snprintf(why, cap, "the server's certificate did not verify: %s",
                 X509_verify_cert_error_string(verify));
        return true;
    }
    if (SSL_is_init_finished(s))
        return false;
    bool said = !tls_io_error_says_nothing(io_error);
    snprintf(why, cap, "the handshake did not finish%s%s", said ? ": " : "", said ? io_error : "");
    return true;
}

#else // no TLS in this build

bool tls_available()
{
    return false;
}

void *tls_context_new(const TlsOptions &o, edgelock_status *st)
{
    log_to(o.log, EDGELOCK_LOG_ERROR,
           "rediss://: this build of edgelock has no TLS (hiredis 1.x with "
           "hiredis_ssl and OpenSSL were not found)");
    *st = EDGELOCK_ERR_TLS;
    return nullptr;
}

void tls_context_free(void *) {}

void *tls_attach(void *, redisContext *, const char *, bool, const LogSink *, edgelock_status *why)
{
    *why = EDGELOCK_ERR_TLS;
    return nullptr;
}

void tls_clear_thread_errors() {}

bool tls_failed(void *, const char *, char *, size_t)
{
    return false;
}

#endif

} // namespace edgelock
