// SPDX-License-Identifier: BSD-3-Clause
// edgelock_config.log_fn: the library's log goes to the application's
// function, filtered by log_level, and never carries a secret.
#include <stdio.h>
#include <string.h>

#include <mutex>
#include <string>
#include <vector>

#include "check.hpp"
#include "clients.hpp"
#include "edgelock/edgelock.h"
#include "log_capture.hpp"
#include "redis_server.hpp"

namespace
{

using Captured = LogCapture;

edgelock_client *logging_client(const char *url, Captured *cap, edgelock_log_level level)
{
    edgelock_config cfg;
    edgelock_config_init(&cfg);
    cfg.url = url;
    cfg.command_timeout_ms = 1000;
    cfg.connect_timeout_ms = 1000;
    cap->attach(&cfg, level);
    edgelock_client *c = nullptr;
    return edgelock_client_create(&cfg, nullptr, &c) == EDGELOCK_OK ? c : nullptr;
}

} // namespace

TEST_CASE(a_refused_setup_is_logged_to_log_fn_without_the_password)
{
    RedisServer r;
    REQUIRE(r.start(0, "--requirepass", "right-pw-77"));
    char url[160];
    snprintf(url, sizeof(url), "redis://:wrong-pw-66@127.0.0.1:%u", r.port());
    Captured cap;
    edgelock_client *c = logging_client(url, &cap, EDGELOCK_LOG_DEBUG);
    REQUIRE(c);
    edgelock_lock lk = make_lock(c, "log:refused");
    CHECK_ST(edgelock_try_lock(c, lk, 0, 1000), EDGELOCK_ERR_AUTH);
    CHECK(wait_until(10000, [&] { return cap.has("setup refused"); }));
    CHECK_EQ(cap.max_level() >= EDGELOCK_LOG_ERROR, true);
    CHECK(!cap.has("wrong-pw-66"));
    CHECK(!cap.has("right-pw-77"));
    edgelock_lock_free(c, lk);
    edgelock_client_destroy(c);
    size_t n = cap.size();
    CHECK(n > 0);
    fprintf(stderr, "  %zu lines, e.g. \"%s\"\n", n, cap.lines.empty() ? "" : cap.lines[0].second.c_str());
}

TEST_CASE(log_level_filters_what_log_fn_gets)
{
    RedisServer &r = shared_server();
    Captured cap;
    edgelock_client *c = logging_client(r.url(), &cap, EDGELOCK_LOG_WARN);
    REQUIRE(c);
    edgelock_lock lk = make_lock(c, "log:level");
    CHECK_ST(edgelock_try_lock(c, lk, 0, 10000), EDGELOCK_OK); // connects: INFO lines, filtered out
    CHECK_ST(edgelock_unlock(c, lk, nullptr), EDGELOCK_OK);
    int level = -1;
    {
        std::lock_guard<std::mutex> g(cap.m);
        for (auto &l : cap.lines)
            level = l.first > level ? l.first : level;
    }
    CHECK(level <= EDGELOCK_LOG_WARN);
    edgelock_lock_free(c, lk);
    edgelock_client_destroy(c);
    // The same session at INFO: the connections are announced.
    Captured info;
    c = logging_client(r.url(), &info, EDGELOCK_LOG_INFO);
    REQUIRE(c);
    lk = make_lock(c, "log:level");
    CHECK_ST(edgelock_try_lock(c, lk, 0, 10000), EDGELOCK_OK);
    CHECK_ST(edgelock_unlock(c, lk, nullptr), EDGELOCK_OK);
    CHECK(wait_until(10000, [&] { return info.has("connection ready"); }));
    edgelock_lock_free(c, lk);
    edgelock_client_destroy(c);
}

TEST_CASE(a_log_level_out_of_range_is_invalid)
{
    edgelock_config cfg;
    edgelock_config_init(&cfg);
    CHECK_EQ((int)cfg.log_level, (int)EDGELOCK_LOG_WARN);
    int bad[] = {-1, 4, 1000};
    for (int b : bad) {
        memcpy(&cfg.log_level, &b, sizeof(b));
        edgelock_client *c = nullptr;
        CHECK_ST(edgelock_client_create(&cfg, nullptr, &c), EDGELOCK_ERR_INVALID_ARG);
        CHECK(c == nullptr);
    }
}

// A TLS file that cannot be used is reported to log_fn while the client is
// created (the caller's thread), with the file's name and never its content.
TEST_CASE(a_tls_setup_error_reaches_log_fn_during_create)
{
    if (!edgelock_tls_available()) {
        fprintf(stderr, "  skipped: no TLS in this build\n");
        return;
    }
    Captured cap;
    edgelock_config cfg;
    edgelock_config_init(&cfg);
    cfg.url = "rediss://127.0.0.1:1";
    cfg.tls_ca = "/nonexistent/edgelock-ca.pem";
    cap.attach(&cfg, EDGELOCK_LOG_WARN);
    edgelock_client *c = nullptr;
    CHECK_ST(edgelock_client_create(&cfg, nullptr, &c), EDGELOCK_ERR_TLS);
    CHECK(cap.has("/nonexistent/edgelock-ca.pem"));
    CHECK_EQ(cap.max_level(), (int)EDGELOCK_LOG_ERROR);
}
