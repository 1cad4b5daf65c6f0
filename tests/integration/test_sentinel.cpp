// SPDX-License-Identifier: BSD-3-Clause
// redis-sentinel:// URLs against a master, a replica and three sentinels
// started by the test: the master found through the sentinels (a dead one
// skipped), and a failover (SENTINEL FAILOVER) while a holder and a waiter run.
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <string>
#include <thread>

#include "check.hpp"
#include "clients.hpp"
#include "edgelock/edgelock.h"
#include "redis_server.hpp"
#include "redis_sentinels.hpp"
#include "test_certs.hpp"

namespace
{

// A TLS redis-server with the test CA's server certificate on tls_port (0:
// a free one, set on return), beside its plaintext port `plain` (0: a free
// one) for the test's own checks. A port taken meanwhile costs an attempt.
bool start_tls_server(RedisServer &r, uint16_t plain, uint16_t &tls_port)
{
    std::string crt = test_cert("server.crt"), key = test_cert("server.key"), ca = test_cert("ca.crt");
    for (int attempt = 0; attempt < 4; attempt++) {
        uint16_t p = tls_port ? tls_port : free_loopback_port();
        std::string ps = std::to_string(p);
        const char *extra[] = {
            "--tls-port", ps.c_str(),           "--tls-cert-file", crt.c_str(),          "--tls-key-file",
            key.c_str(),  "--tls-ca-cert-file", ca.c_str(),        "--tls-auth-clients", "no",
            nullptr};
        if (r.start_args(plain, extra)) {
            tls_port = p;
            return true;
        }
    }
    return false;
}

// sentinel.conf lines for a sentinel that speaks TLS on tls_port (beside its
// plaintext port, for the test's own checks) and reaches the master over TLS.
std::string sentinel_tls_conf(uint16_t tls_port)
{
    return "tls-port " + std::to_string(tls_port) + "\ntls-cert-file " + test_cert("server.crt") +
           "\ntls-key-file " + test_cert("server.key") + "\ntls-ca-cert-file " + test_cert("ca.crt") +
           "\ntls-auth-clients no\ntls-replication yes\n";
}

std::atomic<int> g_lost{0};
void on_lost(edgelock_client *, edgelock_lock, uint64_t, void *)
{
    g_lost++;
}
void sentinel_config(edgelock_config *cfg)
{
    cfg->watchdog_lease_ms = 6000;
    cfg->command_timeout_ms = 5000;
    cfg->connect_timeout_ms = 5000;
    cfg->reconnect_max_ms = 500;
    cfg->on_lock_lost = on_lost;
}

} // namespace

TEST_CASE(the_master_is_found_through_the_sentinels)
{
    SentinelSetup st;
    REQUIRE(st.ok);
    edgelock_client *c = make_client(st.url.c_str(), sentinel_config);
    REQUIRE(c);
    edgelock_lock lk = make_lock(c, "sen:lock");
    CHECK_ST(edgelock_try_lock(c, lk, 10000, 30000), EDGELOCK_OK);
    CHECK_EQ(redis_integer(st.master, "EXISTS %s", "sen:lock"), 1);
    CHECK_ST(edgelock_unlock(c, lk, nullptr), EDGELOCK_OK);
    edgelock_lock_free(c, lk);
    edgelock_client_destroy(c);

    // The watch on +switch-master has the subscriber's keepalive: on a
    // sentinel, the one subscribed client is ours (sentinels subscribe only
    // on masters and replicas). With hiredis 1.1 and later its last command
    // turns from SUBSCRIBE to PING. Before, the keepalive subscribes again:
    // its last command stays SUBSCRIBE, but goes on being sent long after
    // it connected (CLIENT LIST's idle, in seconds, stays under its age).
    c = make_client(st.url.c_str(), [](edgelock_config *cfg) {
        sentinel_config(cfg);
        cfg->command_timeout_ms = 1000; // a PING every 3 s
    });
    REQUIRE(c);
    auto field = [](const std::string &line, const char *name) {
        size_t at = line.find(std::string(" ") + name + "=");
        return at == std::string::npos
                   ? std::string()
                   : line.substr(at + strlen(name) + 2, line.find(' ', at + 1) - at - strlen(name) - 2);
    };
    auto watch_kept_alive = [&] {
        for (auto &x : st.s) {
            std::string list = x.client_list();
            for (size_t at = 0, end; at < list.size(); at = end + 1) {
                end = list.find('\n', at);
                if (end == std::string::npos)
                    end = list.size();
                std::string line = list.substr(at, end - at);
                if (field(line, "sub") != "1")
                    continue;
#if HIREDIS_MAJOR > 1 || (HIREDIS_MAJOR == 1 && HIREDIS_MINOR >= 1)
                if (field(line, "cmd") == "ping")
                    return true;
#else
                if (atoi(field(line, "age").c_str()) >= 8 && atoi(field(line, "idle").c_str()) <= 4)
                    return true;
#endif
            }
        }
        return false;
    };
    CHECK(wait_until(20000, watch_kept_alive));
    edgelock_client_destroy(c);

    // A sentinel that is not there is skipped.
    std::string url = "redis-sentinel://127.0.0.1:" + std::to_string(free_loopback_port()) + "," +
                      st.url.substr(strlen("redis-sentinel://"));
    c = make_client(url.c_str(), sentinel_config);
    REQUIRE(c);
    lk = make_lock(c, "sen:lock");
    CHECK_ST(edgelock_try_lock(c, lk, 10000, 30000), EDGELOCK_OK);
    CHECK_ST(edgelock_unlock(c, lk, nullptr), EDGELOCK_OK);
    edgelock_lock_free(c, lk);
    edgelock_client_destroy(c);

    // A master name the sentinels do not know: no connection, in time.
    url = st.url.substr(0, st.url.rfind('/')) + "/nosuchmaster";
    c = make_client(url.c_str(), sentinel_config);
    REQUIRE(c);
    lk = make_lock(c, "sen:lock");
    edgelock_status s = edgelock_try_lock(c, lk, 0, 30000);
    CHECK(s == EDGELOCK_ERR_CONNECTION || s == EDGELOCK_ERR_TIMEOUT);
    edgelock_lock_free(c, lk);
    edgelock_client_destroy(c);
}

TEST_CASE(a_failover_loses_no_waiter_and_new_locks_go_to_the_new_master)
{
    SentinelSetup st;
    REQUIRE(st.ok);
    g_lost = 0;
    edgelock_client *holder = make_client(st.url.c_str(), sentinel_config);
    edgelock_client *waiter = make_client(st.url.c_str(), sentinel_config);
    REQUIRE(holder && waiter);
    edgelock_lock lh = make_lock(holder, "sen:fail"), lw = make_lock(waiter, "sen:fail");
    CHECK_ST(edgelock_try_lock(holder, lh, 10000, EDGELOCK_LEASE_WATCHDOG), EDGELOCK_OK);
    std::atomic<int> waited{0};
    std::thread t([&] {
        edgelock_status s = edgelock_try_lock(waiter, lw, 60000, 10000);
        waited = s == EDGELOCK_OK ? 1 : -1;
        if (s == EDGELOCK_OK)
            edgelock_unlock(waiter, lw, nullptr);
    });
    CHECK(wait_until(30000, [&] { return stats_of(waiter).subscriptions == 1; }));

    uint16_t old_master = st.master.port();
    CHECK(st.s[0].command_int("SENTINEL FAILOVER mymaster") == -1);
    CHECK(wait_until(30000, [&] { return st.s[0].master_port() == st.replica.port(); }));

    // New acquisitions reach the new master within 15 s.
    edgelock_client *fresh = make_client(st.url.c_str(), sentinel_config);
    REQUIRE(fresh);
    edgelock_lock lf = make_lock(fresh, "sen:after");
    CHECK_ST(edgelock_try_lock(fresh, lf, 15000, 30000), EDGELOCK_OK);
    CHECK_EQ(redis_integer(st.replica, "EXISTS %s", "sen:after"), 1); // the promoted replica
    edgelock_unlock(fresh, lf, nullptr);
    edgelock_client_destroy(fresh);

    // The holder keeps its lock, or is told it lost it.
    sleep_ms(7000); // more than a watchdog lease: renewals went to the new master, or failed
    edgelock_status u = edgelock_unlock(holder, lh, nullptr);
    CHECK(u == EDGELOCK_OK || (u == EDGELOCK_ERR_LOST && g_lost == 1));
    // The waiter got the lock (woken by the unlock, or when the lease ran out).
    t.join();
    CHECK_EQ(waited, 1);
    (void)old_master;
    edgelock_client_destroy(holder);
    edgelock_client_destroy(waiter);
}

// Sentinels that require a password (requirepass) answer the client's
// query with NOAUTH when it has none: a refused setup, as a master's NOAUTH
// is, so its calls say AUTH, not CONNECTION (the sentinels are there).
TEST_CASE(sentinels_that_want_a_password_the_client_lacks_say_auth)
{
    TempDir dir("auth");
    REQUIRE(dir.ok);
    RedisServer master;
    REQUIRE(master.start());
    Sentinel sen;
    REQUIRE(sen.start(dir.path, 0, master.port(), 1, "requirepass sentinel-secret\n"));
    std::string url = "redis-sentinel://127.0.0.1:" + std::to_string(sen.port) + "/mymaster";
    edgelock_client *c = make_client(url.c_str(), [](edgelock_config *cfg) {
        sentinel_config(cfg);
        cfg->command_timeout_ms = 1500;
    });
    REQUIRE(c);
    edgelock_lock lk = make_lock(c, "sen:auth");
    CHECK_ST(edgelock_try_lock(c, lk, 0, 30000), EDGELOCK_ERR_AUTH);
    CHECK_ST(edgelock_try_lock(c, lk, 2000, 30000), EDGELOCK_ERR_AUTH);
    edgelock_lock_free(c, lk);
    edgelock_client_destroy(c);

    c = make_client(url.c_str(), [](edgelock_config *cfg) {
        sentinel_config(cfg);
        cfg->sentinel_password = "sentinel-secret";
    });
    REQUIRE(c);
    lk = make_lock(c, "sen:auth");
    CHECK_ST(edgelock_try_lock(c, lk, 10000, 30000), EDGELOCK_OK);
    CHECK_ST(edgelock_unlock(c, lk, nullptr), EDGELOCK_OK);
    edgelock_lock_free(c, lk);
    edgelock_client_destroy(c);
}

// A master that is gone refuses the client's reconnects. Over TLS the
// refusal comes while the link is opened (the handshake starts at once and
// finds the socket refused), not from the connect callback. Each refusal
// must send the client back to the sentinels, not to the address it had:
// the sentinels may name another master by now, and a process restarted on
// the old address (empty, and a master until the sentinels demote it) would
// grant locks the real master's holders hold.
TEST_CASE(a_master_that_refuses_tls_connections_sends_the_client_back_to_the_sentinels)
{
    if (!edgelock_tls_available() || !test_certs_make())
        return; // a build without TLS: test_tls covers what it answers
    TempDir dir("refused");
    REQUIRE(dir.ok);
    std::string ca = test_cert("ca.crt");
    RedisServer old_master, new_master;
    uint16_t old_tls = 0, new_tls = 0;
    REQUIRE(start_tls_server(old_master, 0, old_tls));
    REQUIRE(start_tls_server(new_master, 0, new_tls));
    uint16_t old_plain = old_master.port();
    Sentinel sen;
    uint16_t sen_tls = free_loopback_port();
    std::string conf = sentinel_tls_conf(sen_tls);
    REQUIRE(sen.start(dir.path, 0, old_tls, 1, conf));
    CHECK(wait_until(30000, [&] { return sen.master_port() == old_tls; }));

    std::string url = "rediss-sentinel://localhost:" + std::to_string(sen_tls) + "/mymaster";
    static std::string s_ca;
    s_ca = ca;
    edgelock_client *c = make_client(url.c_str(), [](edgelock_config *cfg) {
        sentinel_config(cfg);
        cfg->tls_ca = s_ca.c_str();
    });
    REQUIRE(c);
    edgelock_lock lk = make_lock(c, "sen:refused");
    CHECK_ST(edgelock_try_lock(c, lk, 10000, 30000), EDGELOCK_OK);
    CHECK_ST(edgelock_unlock(c, lk, nullptr), EDGELOCK_OK);

    // The master dies; the client's reconnects to it are refused meanwhile.
    old_master.stop();
    sleep_ms(1500);
    // The sentinel now names another master (as after a failover; nothing is
    // published for this), and a process comes back empty on the old address.
    CHECK(sen.command_int("SENTINEL REMOVE mymaster") == -1);
    std::string monitor = "SENTINEL MONITOR mymaster 127.0.0.1 " + std::to_string(new_tls) + " 1";
    CHECK(sen.command_int(monitor.c_str()) == -1);
    REQUIRE(start_tls_server(old_master, old_plain, old_tls));

    CHECK_ST(edgelock_try_lock(c, lk, 10000, 30000), EDGELOCK_OK);
    CHECK_EQ(redis_integer(new_master, "EXISTS %s", "sen:refused"), 1); // the master the sentinel names
    CHECK_EQ(redis_integer(old_master, "EXISTS %s", "sen:refused"), 0);
    edgelock_unlock(c, lk, nullptr);
    edgelock_lock_free(c, lk);
    edgelock_client_destroy(c);
}

// A master that hangs (SIGSTOP: a partition, a frozen host) sends no reset and
// refuses no write: an idle waiter's subscription on it would hear nothing.
// The client follows +switch-master from the sentinels instead: its waiter
// resubscribes on the new master and is woken there by an unlock published
// on it (as a Java service's unlock would be).
TEST_CASE(an_idle_waiter_follows_switch_master_away_from_a_frozen_master)
{
    SentinelSetup st;
    REQUIRE(st.ok);
    // Held by someone else (a Redisson owner field), for longer than the wait.
    CHECK_EQ(redis_integer(st.master, "HSET %s %s 1", "sen:java", "0f0e0d0c-java:1"), 1);
    CHECK_EQ(redis_integer(st.master, "PEXPIRE %s %d", "sen:java", 600000), 1);
    CHECK(wait_until(30000, [&] { return redis_integer(st.master, "WAIT %d %d", 1, 100) == 1; }));

    edgelock_client *waiter = make_client(st.url.c_str(), sentinel_config);
    REQUIRE(waiter);
    edgelock_lock lw = make_lock(waiter, "sen:java");
    std::atomic<int> waited{0};
    std::thread t([&] {
        edgelock_status s = edgelock_try_lock(waiter, lw, 90000, 10000);
        waited = s == EDGELOCK_OK ? 1 : -1;
        if (s == EDGELOCK_OK)
            edgelock_unlock(waiter, lw, nullptr);
    });
    CHECK(wait_until(30000, [&] { return stats_of(waiter).subscriptions == 1; }));

    kill(st.master.pid(), SIGSTOP);
    CHECK(wait_until(60000, [&] { return st.s[0].master_port() == st.replica.port(); }));
    // The unlock, on the new master only.
    CHECK_EQ(redis_integer(st.replica, "DEL %s", "sen:java"), 1);
    CHECK(wait_until(60000, [&] {
        if (waited != 0)
            return true;
        // Published until heard: the waiter may not have resubscribed yet.
        redis_integer(st.replica, "PUBLISH %s %s", "redisson_lock__channel:{sen:java}", "0");
        sleep_ms(200);
        return false;
    }));
    t.join();
    CHECK_EQ(waited, 1);
    CHECK_EQ(redis_integer(st.replica, "EXISTS %s", "sen:java"), 0); // unlocked again
    edgelock_client_destroy(waiter);
    kill(st.master.pid(), SIGCONT);
}

// rediss-sentinel://: TLS to the sentinel (verified as localhost, its name in
// the URL) and to the master it names (verified as 127.0.0.1, the address the
// sentinel gave). A CA that vouches for neither: a TLS error, no lock.
TEST_CASE(tls_to_the_sentinels_and_to_the_master)
{
    if (!edgelock_tls_available() || !test_certs_make())
        return; // a build without TLS: test_tls covers what it answers
    TempDir dir("tls");
    REQUIRE(dir.ok);
    std::string ca = test_cert("ca.crt");
    RedisServer master;
    uint16_t master_tls = 0;
    REQUIRE(start_tls_server(master, 0, master_tls));
    Sentinel sen;
    uint16_t sen_tls = 0;
    for (int attempt = 0; attempt < 4 && !sen_tls; attempt++) {
        uint16_t p = free_loopback_port();
        // A plaintext port too, for the test's own checks; the sentinel
        // reaches the master over TLS (tls-replication).
        std::string conf = sentinel_tls_conf(p);
        if (sen.start(dir.path, 0, master_tls, 1, conf))
            sen_tls = p;
        else
            sen.stop(); // a port taken meanwhile costs an attempt
    }
    REQUIRE(sen_tls);
    CHECK(wait_until(30000, [&] { return sen.master_port() == master_tls; }));

    std::string url = "rediss-sentinel://localhost:" + std::to_string(sen_tls) + "/mymaster";
    static std::string s_ca;
    s_ca = ca;
    auto tls_config = [](edgelock_config *cfg) {
        sentinel_config(cfg);
        cfg->tls_ca = s_ca.c_str();
    };
    edgelock_client *c = make_client(url.c_str(), tls_config);
    REQUIRE(c);
    edgelock_lock lk = make_lock(c, "sen:tls");
    CHECK_ST(edgelock_try_lock(c, lk, 10000, 30000), EDGELOCK_OK);
    CHECK_EQ(redis_integer(master, "EXISTS %s", "sen:tls"), 1);
    CHECK_ST(edgelock_unlock(c, lk, nullptr), EDGELOCK_OK);
    edgelock_lock_free(c, lk);
    edgelock_client_destroy(c);

    s_ca = test_cert("other-ca.crt");
    c = make_client(url.c_str(), tls_config);
    REQUIRE(c);
    lk = make_lock(c, "sen:tls");
    CHECK_ST(edgelock_try_lock(c, lk, 0, 30000), EDGELOCK_ERR_TLS);
    CHECK_EQ(redis_integer(master, "EXISTS %s", "sen:tls"), 0);
    edgelock_lock_free(c, lk);
    edgelock_client_destroy(c);
}
