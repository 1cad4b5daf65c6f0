// SPDX-License-Identifier: BSD-3-Clause
// Writer: appends bytes and decimal numbers to a fixed buffer, never past it.
#pragma once

#include <stddef.h>
#include <stdint.h>

namespace edgelock
{

// Cursor over a fixed buffer; overflow is sticky and reported once at the end.
struct Writer {
    char *buf;
    size_t cap;
    size_t len;
    bool overflow;

    Writer(char *b, size_t c) : buf(b), cap(c), len(0), overflow(false) {}
    void bytes(const void *p, size_t n);
    void str(const char *s);
    void u64(uint64_t v);
    void i64(int64_t v);
};

} // namespace edgelock
