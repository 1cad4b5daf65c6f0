// SPDX-License-Identifier: BSD-3-Clause
#include "base/log.hpp"

#include <stdarg.h>
#include <stdio.h>

#include "port.h"

namespace edgelock
{

void log_to(const LogSink *sink, int level, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (!sink || !sink->fn) {
        edgelock_port_vlog(level, fmt, ap); // formats only when EDGELOCK_LOG asks
    } else if (level <= sink->level) {
        char line[512];
        vsnprintf(line, sizeof(line), fmt, ap);
        sink->fn(sink->user, (edgelock_log_level)level, line);
    }
    va_end(ap);
}

} // namespace edgelock
