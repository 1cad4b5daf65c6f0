// SPDX-License-Identifier: BSD-3-Clause
// unix:// URLs: a Redis reached through its unix socket (a temp dir of the
// test's), with locks, a waiter woken by an unlock, and a missing socket.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <atomic>
#include <thread>

#include "check.hpp"
#include "clients.hpp"
#include "edgelock/edgelock.h"
#include "redis_server.hpp"

namespace
{

// A redis-server listening on a socket in a fresh temp dir (and on loopback TCP,
// which the tests do not use).
struct SocketServer {
    char dir[64];
    char path[128];
    char url[192];
    RedisServer r;
    bool ok = false;

    SocketServer()
    {
        snprintf(dir, sizeof(dir), "/tmp/edgelock-unix-XXXXXX");
        if (!mkdtemp(dir))
            return;
        snprintf(path, sizeof(path), "%s/redis.sock", dir);
        snprintf(url, sizeof(url), "unix://%s", path);
        if (!r.start(0, "--unixsocket", path))
            return;
        // The TCP port answers first; wait for the socket file too.
        for (int i = 0; i < 500 && access(path, F_OK) != 0; i++)
            sleep_ms(10);
        ok = access(path, F_OK) == 0;
    }
    ~SocketServer()
    {
        r.stop();
        unlink(path);
        rmdir(dir);
    }
};

} // namespace

TEST_CASE(lock_and_unlock_over_a_unix_socket)
{
    SocketServer s;
    REQUIRE(s.ok);
    edgelock_client *c = make_client(s.url);
    REQUIRE(c);
    edgelock_lock lk = make_lock(c, "unix:lock");
    CHECK_ST(edgelock_try_lock(c, lk, 5000, 10000), EDGELOCK_OK);
    CHECK_EQ(redis_integer(s.r, "EXISTS %s", "unix:lock"), 1);
    int released = 0;
    CHECK_ST(edgelock_unlock(c, lk, &released), EDGELOCK_OK);
    CHECK_EQ(released, 1);
    CHECK_EQ(redis_integer(s.r, "EXISTS %s", "unix:lock"), 0);
    CHECK(tables_idle(c));
    edgelock_lock_free(c, lk);
    edgelock_client_destroy(c);
}

TEST_CASE(a_waiter_on_the_socket_is_woken_by_the_unlock)
{
    SocketServer s;
    REQUIRE(s.ok);
    char url[220];
    snprintf(url, sizeof(url), "%s?db=2", s.url);
    edgelock_client *a = make_client(url), *b = make_client(url);
    REQUIRE(a && b);
    edgelock_lock la = make_lock(a, "unix:contended"), lb = make_lock(b, "unix:contended");
    // A lease far longer than the test: only the unlock message can let b in.
    CHECK_ST(edgelock_try_lock(a, la, 0, 600000), EDGELOCK_OK);
    CHECK_EQ(redis_integer(s.r, "EXISTS %s", "unix:contended"), 0); // in db 2, not db 0
    std::atomic<int> got{0};
    std::thread waiter([&] {
        got = edgelock_try_lock(b, lb, 60000, 10000) == EDGELOCK_OK ? 1 : -1;
        if (got == 1)
            edgelock_unlock(b, lb, nullptr);
    });
    // b is waiting once it has subscribed to the lock's channel.
    CHECK(wait_until(30000, [&] {
        edgelock_stats st = stats_of(b);
        return st.waiters == 1 && st.subscriptions == 1;
    }));
    CHECK_ST(edgelock_unlock(a, la, nullptr), EDGELOCK_OK);
    waiter.join();
    CHECK_EQ(got, 1);
    edgelock_client_destroy(a);
    edgelock_client_destroy(b);
}

static void short_timeouts(edgelock_config *cfg)
{
    cfg->command_timeout_ms = 700;
    cfg->connect_timeout_ms = 700;
}

TEST_CASE(a_missing_socket_is_a_connection_error_not_a_hang)
{
    edgelock_client *c = make_client("unix:///tmp/edgelock-no-such-dir/redis.sock", short_timeouts);
    REQUIRE(c);
    edgelock_lock lk = make_lock(c, "unix:missing");
    edgelock_status st = edgelock_try_lock(c, lk, 0, 10000);
    CHECK(st == EDGELOCK_ERR_CONNECTION || st == EDGELOCK_ERR_TIMEOUT);
    CHECK(tables_idle(c));
    edgelock_lock_free(c, lk);
    edgelock_client_destroy(c);
}

TEST_CASE(bad_unix_urls_are_refused_at_creation)
{
    edgelock_config cfg;
    edgelock_config_init(&cfg);
    edgelock_client *c = nullptr;
    const char *bad[] = {"unix://", "unix:///", "unix://r.sock", "unix:///r.sock?db=x", "unix:///r.sock?x=1"};
    for (const char *u : bad) {
        cfg.url = u;
        CHECK_ST(edgelock_client_create(&cfg, nullptr, &c), EDGELOCK_ERR_INVALID_ARG);
    }
    char out[64];
    CHECK_ST(edgelock_url_redact("unix://gw:pw@/run/r.sock?db=1", out, sizeof(out)), EDGELOCK_OK);
    CHECK(strcmp(out, "unix://***@/run/r.sock?db=1") == 0);
}
