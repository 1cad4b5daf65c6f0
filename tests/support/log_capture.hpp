// SPDX-License-Identifier: BSD-3-Clause
// The library's log lines (edgelock_config.log_fn), kept for a test to read.
#pragma once

#include <stddef.h>

#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "edgelock/edgelock.h"

struct LogCapture {
    std::mutex m;
    std::vector<std::pair<int, std::string>> lines; // level, message; under m

    // cfg's log goes here, from level up. Any thread may log: the client's
    // loop thread or a caller leading it.
    void attach(edgelock_config *cfg, edgelock_log_level level = EDGELOCK_LOG_DEBUG);
    bool has(const char *part);
    int max_level(); // -1 when nothing was logged
    size_t size();
    void clear();
};
