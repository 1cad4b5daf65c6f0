// SPDX-License-Identifier: BSD-3-Clause
#include "log_capture.hpp"

static void keep_line(void *user, edgelock_log_level level, const char *message)
{
    auto *cap = static_cast<LogCapture *>(user);
    std::lock_guard<std::mutex> g(cap->m);
    cap->lines.emplace_back((int)level, message);
}

void LogCapture::attach(edgelock_config *cfg, edgelock_log_level level)
{
    cfg->log_fn = keep_line;
    cfg->log_user = this;
    cfg->log_level = level;
}

bool LogCapture::has(const char *part)
{
    std::lock_guard<std::mutex> g(m);
    for (auto &l : lines)
        if (l.second.find(part) != std::string::npos)
            return true;
    return false;
}

int LogCapture::max_level()
{
    std::lock_guard<std::mutex> g(m);
    int lv = -1;
    for (auto &l : lines)
        lv = l.first > lv ? l.first : lv;
    return lv;
}

size_t LogCapture::size()
{
    std::lock_guard<std::mutex> g(m);
    return lines.size();
}

void LogCapture::clear()
{
    std::lock_guard<std::mutex> g(m);
    lines.clear();
}
