// SPDX-License-Identifier: BSD-3-Clause
// A throwaway redis-server with a plaintext port (to inspect and set up keys)
// and a TLS port, its certificates made by test_certs.
#pragma once

#include <stdint.h>

#include <string>

#include "redis_server.hpp"

struct TlsServer {
    RedisServer r; // its plaintext side
    uint16_t tls_port = 0;
    bool ok = false; // false: openssl or the server failed

    // server_cert: test_cert()'s name of the server's pair; client_certs:
    // whether Redis asks clients for a certificate (tls-auth-clients).
    explicit TlsServer(const char *server_cert = "server", bool client_certs = false);
    std::string url(const char *host = "localhost") const; // rediss://host:tls_port

private:
    bool start(const char *server_cert, bool client_certs);
};

// The binary's one TLS server, started on first use; null when it could not
// start (a build without TLS never asks).
TlsServer *shared_tls_server();
