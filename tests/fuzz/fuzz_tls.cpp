// SPDX-License-Identifier: BSD-3-Clause
// The real link under a hostile server over TLS: fuzz_wire's run and input
// (wire_run.hpp), every connection TLS to a server whose certificate the
// client checks (tls_side.hpp), with records cut anywhere, bytes that are no
// record, close_notify or none, and a certificate for another name on some
// connections. Built with EDGELOCK_FUZZ_TLS, on builds with TLS only.
#include "wire_run.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz::run_input<fuzz::WireRun>(data, size);
}
