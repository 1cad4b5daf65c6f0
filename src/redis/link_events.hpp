// SPDX-License-Identifier: BSD-3-Clause
// hiredis's event hooks on libevent, for edgelock's own links (link_events.cpp).
#pragma once

struct redisAsyncContext;
struct event_base;

namespace edgelock
{

// In place of hiredis's redisLibeventAttach(): the context's read and write
// interest on base. flush_at_pass_end: as ConnConfig (a plain link on the
// application's loop). False: out of memory (nothing attached).
bool link_events_attach(redisAsyncContext *ac, struct event_base *base, bool flush_at_pass_end);

} // namespace edgelock
