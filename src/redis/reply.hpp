// SPDX-License-Identifier: BSD-3-Clause
// Reading values out of hiredis replies.
#pragma once

#include <stddef.h>
#include <stdint.h>

struct redisReply;

namespace edgelock
{

// Decimal digits (an optional '-'), all of s, within int64_t.
bool parse_decimal(const char *s, size_t len, int64_t *out);
// An integer, a nil (0) or a bulk string of decimal digits. False otherwise.
bool reply_integer(const struct redisReply *r, int64_t *out);
// A bulk string or a status.
bool reply_is_text(const struct redisReply *r);
// A bulk string or a status that is exactly s.
bool reply_text_is(const struct redisReply *r, const char *s);

} // namespace edgelock
