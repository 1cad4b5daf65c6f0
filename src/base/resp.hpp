// SPDX-License-Identifier: BSD-3-Clause
// RESP command encoding into a fixed buffer, so sending a command allocates
// nothing on edgelock's side (hiredis copies the bytes into its output buffer).
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "base/writer.hpp"

namespace edgelock
{

// Builds "*<argc>\r\n" followed by bulk strings. The argument count is patched
// in at finish(), so arguments can be appended in a loop.
class RespCommand
{
public:
    RespCommand(char *buf, size_t cap);
    void arg(const void *p, size_t n);
    void arg(const char *s);
    void arg_u64(uint64_t v);
    void arg_i64(int64_t v);
    // Start an argument whose bytes are appended piecewise through part();
    // end_arg() closes it. Used for keys built from a prefix and a name.
    Writer &begin_arg();
    void end_arg();
    // Returns false when the buffer overflowed. The bytes are NUL-terminated
    // (the NUL is not counted in *len).
    bool finish(const char **out, size_t *len);

private:
    char *buf_;
    size_t cap_;
    Writer w_;
    Writer scratch_;
    uint32_t argc_;
    size_t header_room_;
    char part_[8192 + 128];
};

} // namespace edgelock
