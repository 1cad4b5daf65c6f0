// SPDX-License-Identifier: BSD-3-Clause
// TLS for connections (rediss://): one OpenSSL context per client, made when
// the client is created (the CA, certificate and key files are read then), and
// an SSL object per connection attempt, with SNI and the server's name checked
// (hiredis checks the chain only). Without TLS in the build, making a context
// fails with EDGELOCK_ERR_TLS.
#pragma once

#include "edgelock/edgelock.h"

struct redisContext;

namespace edgelock
{

struct LogSink;

struct TlsOptions {
    const char *ca;   // CA file or directory; null: the system's store
    const char *cert; // client certificate chain (PEM) and its key: both or neither
    const char *key;
    bool verify; // chain and name
    const LogSink *log;
};

bool tls_available();
// The client's context, or null with *st set (TLS: a file could not be used,
// or no TLS in this build; NO_MEMORY).
void *tls_context_new(const TlsOptions &o, edgelock_status *st);
void tls_context_free(void *ctx);

// Start TLS on a hiredis context that is connecting: the handshake runs as the
// socket becomes ready. name: SNI and the name verified. Returns the SSL
// object (owned by the hiredis context from then on), or null on failure with
// *why set: CONNECTION when the socket failed (the connect refused), else TLS.
void *tls_attach(void *ctx, struct redisContext *c, const char *name, bool verify, const LogSink *log,
                 edgelock_status *why);
// Empty this thread's OpenSSL error queue. Before each read or write of a TLS
// link: SSL_get_error() takes any error found there for that call's, and
// hiredis does not empty it, so an error left by another link or library on
// the loop thread turned a read that found part of a record into a dropped
// connection ("Resource temporarily unavailable").
void tls_clear_thread_errors();
// After the connection failed: true when TLS failed (the handshake did not
// finish, or the server's certificate or name did not verify), with what
// failed in why[cap] for the log (why may be null with cap 0). io_error: hiredis's text for the failure,
// which is strerror(errno) even when OpenSSL failed and errno is 0
// ("Success"); such a text is left out.
bool tls_failed(void *ssl, const char *io_error, char *why, size_t cap);
// True when hiredis's text for a failed TLS link names nothing: empty, or
// strerror(0) ("Success"), which hiredis writes when OpenSSL failed and errno
// is 0.
bool tls_io_error_says_nothing(const char *io_error);

} // namespace edgelock
