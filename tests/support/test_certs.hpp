// SPDX-License-Identifier: BSD-3-Clause
// Certificates for the TLS tests, made once per test binary with openssl
// (tests/integration/tls/make_certs.sh) into a temp dir.
#pragma once

#include <string>

// False when openssl failed; true once they exist.
bool test_certs_make();
// The path of one of them: test_cert("ca.crt"), test_cert("server") + ".key".
std::string test_cert(const char *name);
