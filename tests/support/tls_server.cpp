// SPDX-License-Identifier: BSD-3-Clause
#include "tls_server.hpp"

#include <stdio.h>

#include "test_certs.hpp"

TlsServer::TlsServer(const char *server_cert, bool client_certs)
{
    if (!test_certs_make())
        return;
    // A port taken meanwhile by another test's server costs an attempt.
    for (int attempt = 0; attempt < 4 && !ok; attempt++)
        ok = start(server_cert, client_certs);
}

bool TlsServer::start(const char *server_cert, bool client_certs)
{
    tls_port = free_loopback_port();
    char port[16];
    snprintf(port, sizeof(port), "%u", tls_port);
    std::string crt = test_cert(server_cert) + ".crt", key = test_cert(server_cert) + ".key",
                ca = test_cert("ca.crt");
    const char *extra[] = {"--tls-port",
                           port,
                           "--tls-cert-file",
                           crt.c_str(),
                           "--tls-key-file",
                           key.c_str(),
                           "--tls-ca-cert-file",
                           ca.c_str(),
                           "--tls-auth-clients",
                           client_certs ? "yes" : "no",
                           nullptr};
    return r.start_args(0, extra);
}

std::string TlsServer::url(const char *host) const
{
    return "rediss://" + std::string(host) + ":" + std::to_string(tls_port);
}

TlsServer *shared_tls_server()
{
    static TlsServer server; // stopped at exit, as shared_server()'s
    return server.ok ? &server : nullptr;
}
