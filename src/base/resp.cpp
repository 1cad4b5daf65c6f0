// SPDX-License-Identifier: BSD-3-Clause
#include "base/resp.hpp"

#include <string.h>

namespace edgelock
{

// Room left at the front for "*<argc>\r\n"; the header is written right-aligned
// into it at finish() so the argument bytes never move.
static constexpr size_t kHeaderRoom = 16;

RespCommand::RespCommand(char *buf, size_t cap)
    : buf_(buf), cap_(cap), w_(buf + kHeaderRoom, cap > kHeaderRoom ? cap - kHeaderRoom : 0),
      scratch_(part_, sizeof(part_)), argc_(0), header_room_(kHeaderRoom)
{
    if (cap <= kHeaderRoom)
        w_.overflow = true;
}

void RespCommand::arg(const void *p, size_t n)
{
    w_.bytes("$", 1);
    w_.u64(n);
    w_.bytes("\r\n", 2);
    w_.bytes(p, n);
    w_.bytes("\r\n", 2);
    argc_++;
}

void RespCommand::arg(const char *s)
{
    arg(s, strlen(s));
}

void RespCommand::arg_u64(uint64_t v)
{
    char tmp[24];
    Writer t(tmp, sizeof(tmp));
    t.u64(v);
    arg(tmp, t.len);
}

void RespCommand::arg_i64(int64_t v)
{
    char tmp[24];
    Writer t(tmp, sizeof(tmp));
    t.i64(v);
    arg(tmp, t.len);
}

Writer &RespCommand::begin_arg()
{
    scratch_.len = 0;
    scratch_.overflow = false;
    return scratch_;
}

void RespCommand::end_arg()
{
    if (scratch_.overflow)
        w_.overflow = true;
    arg(part_, scratch_.len);
}

bool RespCommand::finish(const char **out, size_t *len)
{
    // A NUL after the last byte, not counted in *len: hiredis 0.14 scans the
    // arguments of (UN)SUBSCRIBE with strchr() and would run past the end.
    w_.bytes("", 1);
    if (w_.overflow)
        return false;
    w_.len--;
    char hdr[kHeaderRoom];
    Writer h(hdr, sizeof(hdr));
    h.bytes("*", 1);
    h.u64(argc_);
    h.bytes("\r\n", 2);
    char *start = buf_ + header_room_ - h.len;
    memcpy(start, hdr, h.len);
    *out = start;
    *len = h.len + w_.len;
    return true;
}

} // namespace edgelock
