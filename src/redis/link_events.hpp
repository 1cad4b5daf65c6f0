// SPDX-License-Identifier: BSD-3-Clause
// hiredis's event hooks on libevent, for edgelock's own links (link_events.cpp).
#pragma once

struct redisAsyncContext;
struct event_base;

namespace edgelock
{

// In place of hiredis's redisLibeventAttach(): the context's read and write
// interest on base. flush_at_pass_end: as ConnConfig (a plain link on the
// application's loop). tls: a TLS link (OpenSSL's thread error queue is
// emptied before each of its reads and writes: tls_clear_thread_errors()).
// False: out of memory (nothing attached).
bool link_events_attach(redisAsyncContext *ac, struct event_base *base, bool flush_at_pass_end, bool tls);

// One write of the buffer now (a plain, connected link), without calling into
// hiredis's callbacks. What does not fit, or a write error, is left to the
// write event: hiredis's handler writes the rest, or finds the error and
// reports the link down through the usual path.
void link_events_write(redisAsyncContext *ac);

} // namespace edgelock
