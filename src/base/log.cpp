// SPDX-License-Identifier: BSD-3-Clause
#include "base/log.hpp"

#include <stdarg.h>
#include <stdio.h>

#include "port.h"

namespace edgelock
{

void log_to(const LogSink *sink, int level, const char *fmt, ...)
{
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    if (sink && sink->fn) {
        if (level <= sink->level) {
            vsnprintf(line, sizeof(line), fmt, ap);
            sink->fn(sink->user, (edgelock_log_level)level, line);
        }
    } else {
        vsnprintf(line, sizeof(line), fmt, ap);
        edgelock_port_log(level, "%s", line);
    }
    va_end(ap);
}

} // namespace edgelock
