// SPDX-License-Identifier: BSD-3-Clause
// The library's log: a client's sink (edgelock_config.log_fn) or, without
// one, the port's (stderr when EDGELOCK_LOG is set). Nothing secret is ever
// passed here: no password, no URL with credentials, no key contents.
#pragma once

#include "edgelock/edgelock.h"

namespace edgelock
{

struct LogSink {
    edgelock_log_fn fn; // null: the port's log
    void *user;
    int level; // the most detailed level passed to fn (EDGELOCK_LOG_ERROR .. _DEBUG)
};

// One line at level (EDGELOCK_LOG_ERROR .. EDGELOCK_LOG_DEBUG, port.h); sink
// may be null (the port's log). Longer lines are cut at 511 bytes.
void log_to(const LogSink *sink, int level, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

} // namespace edgelock
