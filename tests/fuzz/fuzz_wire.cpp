// SPDX-License-Identifier: BSD-3-Clause
// The real link under a hostile server, plaintext: one Redis on a unix
// socket, or a cluster or a sentinel deployment over loopback TCP (the run:
// wire_run.hpp).
#include "wire_run.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz::run_input<fuzz::WireRun>(data, size);
}
