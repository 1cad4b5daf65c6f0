// SPDX-License-Identifier: BSD-3-Clause
#include "base/writer.hpp"

#include <string.h>

namespace edgelock
{

void Writer::bytes(const void *p, size_t n)
{
    if (overflow || n > cap - len) {
        overflow = true;
        return;
    }
    if (n)
        memcpy(buf + len, p, n);
    len += n;
}

void Writer::str(const char *s)
{
    bytes(s, strlen(s));
}

void Writer::u64(uint64_t v)
{
    char tmp[20];
    size_t n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    char out[20];
    for (size_t i = 0; i < n; i++)
        out[i] = tmp[n - 1 - i];
    bytes(out, n);
}

void Writer::i64(int64_t v)
{
    if (v < 0) {
        bytes("-", 1);
        u64((uint64_t)(-(v + 1)) + 1); // no overflow at INT64_MIN
    } else {
        u64((uint64_t)v);
    }
}

} // namespace edgelock
