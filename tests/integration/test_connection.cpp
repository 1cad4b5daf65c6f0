// SPDX-License-Identifier: BSD-3-Clause
// Connection setup from the URL: AUTH (password and ACL user), SELECT, and
// failures that must end in a status within the configured time, never a hang.
#include <stdio.h>
#include <string.h>

#include <initializer_list>

#include "check.hpp"
#include "clients.hpp"
#include "edgelock/edgelock.h"
#include "redis_server.hpp"

static redisReply *authed(const RedisServer &r, const char *pass, const char *fmt, const char *arg = nullptr)
{
    redisContext *c = r.connect();
    if (!c)
        return nullptr;
    redisReply *a = (redisReply *)redisCommand(c, "AUTH %s", pass);
    if (a)
        freeReplyObject(a);
    redisReply *rep = arg ? (redisReply *)redisCommand(c, fmt, arg) : (redisReply *)redisCommand(c, fmt);
    redisFree(c);
    return rep;
}

static void short_timeouts(edgelock_config *cfg)
{
    cfg->command_timeout_ms = 700;
    cfg->connect_timeout_ms = 700;
}

TEST_CASE(password_acl_user_and_db_from_url)
{
    RedisServer r;
    REQUIRE(r.start(0, "--requirepass", "s3cret@x"));
    redisReply *rep = authed(r, "s3cret@x", "ACL SETUSER gateway on >gw-pass ~* &* +@all");
    REQUIRE(rep && rep->type == REDIS_REPLY_STATUS);
    freeReplyObject(rep);

    char url[160];
    // A password holding '@': the last '@' ends the credentials.
    snprintf(url, sizeof(url), "redis://default:s3cret@x@127.0.0.1:%u/3", r.port());
    edgelock_client *c = make_client(url);
    REQUIRE(c);
    edgelock_lock lk = make_lock(c, "authed");
    CHECK_ST(edgelock_try_lock(c, lk, 0, 10000), EDGELOCK_OK);
    rep =
        authed(r, "s3cret@x", "EVAL %s 0", "redis.call('select', 3); return redis.call('exists', 'authed')");
    CHECK(rep && rep->type == REDIS_REPLY_INTEGER && rep->integer == 1);
    if (rep)
        freeReplyObject(rep);
    rep = authed(r, "s3cret@x", "EXISTS authed"); // db 0 has nothing
    CHECK(rep && rep->type == REDIS_REPLY_INTEGER && rep->integer == 0);
    if (rep)
        freeReplyObject(rep);
    CHECK_ST(edgelock_unlock(c, lk, nullptr), EDGELOCK_OK);
    edgelock_lock_free(c, lk);
    edgelock_client_destroy(c);

    // An ACL user; and one with an empty password ("user:@"), which
    // authenticates as that user (nopass), not silently as the default user
    // (no AUTH would get NOAUTH here: AUTH).
    rep = authed(r, "s3cret@x", "ACL SETUSER opsbot on nopass ~* &* +@all");
    REQUIRE(rep && rep->type == REDIS_REPLY_STATUS);
    freeReplyObject(rep);
    for (const char *user : {"gateway:gw-pass", "opsbot:"}) {
        snprintf(url, sizeof(url), "redis://%s@127.0.0.1:%u", user, r.port());
        c = make_client(url);
        REQUIRE(c);
        lk = make_lock(c, "acl");
        CHECK_ST(edgelock_try_lock(c, lk, 0, 10000), EDGELOCK_OK);
        CHECK_ST(edgelock_unlock(c, lk, nullptr), EDGELOCK_OK);
        edgelock_lock_free(c, lk);
        CHECK(tables_idle(c));
        edgelock_client_destroy(c);
    }
}

TEST_CASE(wrong_password_fails_within_the_command_timeout)
{
    RedisServer r;
    REQUIRE(r.start(0, "--requirepass", "right"));
    char url[128];
    snprintf(url, sizeof(url), "redis://:wrong@127.0.0.1:%u", r.port());
    edgelock_client *c = make_client(url, short_timeouts);
    REQUIRE(c);
    edgelock_lock lk = make_lock(c, "nope");
    uint64_t t0 = mono_ms();
    edgelock_status st = edgelock_try_lock(c, lk, 0, 1000);
    uint64_t dt = mono_ms() - t0;
    CHECK_ST(st, EDGELOCK_ERR_AUTH); // the server is there and said no: not CONNECTION
    CHECK(dt < 5000);
    edgelock_stats s;
    CHECK_ST(edgelock_client_stats(c, &s), EDGELOCK_OK);
    CHECK_EQ(s.connected, 0);
    edgelock_lock_free(c, lk);
    CHECK(tables_idle(c));
    edgelock_client_destroy(c);
}

// Every refusal of the setup is AUTH: no password where one is needed, an
// unknown ACL user, a db out of range.
TEST_CASE(refused_setup_is_auth_for_every_cause)
{
    RedisServer r;
    REQUIRE(r.start(0, "--requirepass", "right"));
    const char *urls[] = {"redis://127.0.0.1:%u", "redis://nobody:right@127.0.0.1:%u",
                          "redis://:right@127.0.0.1:%u/99999"};
    for (const char *fmt : urls) {
        char url[128];
        snprintf(url, sizeof(url), fmt, r.port());
        edgelock_client *c = make_client(url, short_timeouts);
        REQUIRE(c);
        edgelock_lock lk = make_lock(c, "refused");
        int locked = -1;
        CHECK_ST(edgelock_is_locked(c, lk, &locked), EDGELOCK_ERR_AUTH);
        edgelock_lock_free(c, lk);
        edgelock_client_destroy(c);
    }
}

TEST_CASE(unreachable_server_gives_connection_status_and_destroy_is_prompt)
{
    uint16_t port = free_loopback_port(); // nobody listens there
    char url[64];
    snprintf(url, sizeof(url), "redis://127.0.0.1:%u", port);
    edgelock_client *c = make_client(url, short_timeouts);
    REQUIRE(c);
    edgelock_lock lk = make_lock(c, "nobody");
    int locked = -1;
    uint64_t t0 = mono_ms();
    CHECK_ST(edgelock_is_locked(c, lk, &locked), EDGELOCK_ERR_CONNECTION);
    CHECK(mono_ms() - t0 < 5000);
    // A waiter with a finite wait gives up with the connection status.
    CHECK_ST(edgelock_try_lock(c, lk, 1500, 1000), EDGELOCK_ERR_CONNECTION);
    edgelock_lock_free(c, lk);
    CHECK(tables_idle(c));
    t0 = mono_ms();
    edgelock_client_destroy(c);
    CHECK(mono_ms() - t0 < 2000);
}

TEST_CASE(server_started_late_is_found_by_reconnect)
{
    uint16_t port = free_loopback_port();
    char url[64];
    snprintf(url, sizeof(url), "redis://127.0.0.1:%u", port);
    edgelock_client *c = make_client(url, [](edgelock_config *cfg) {
        cfg->reconnect_min_ms = 20;
        cfg->reconnect_max_ms = 200;
        cfg->command_timeout_ms = 5000;
    });
    REQUIRE(c);
    RedisServer r;
    REQUIRE(r.start(port));
    // Queued until the connection is up, then sent: no failure for the caller.
    edgelock_lock lk = make_lock(c, "late");
    CHECK_ST(edgelock_try_lock(c, lk, 0, 5000), EDGELOCK_OK);
    CHECK_ST(edgelock_unlock(c, lk, nullptr), EDGELOCK_OK);
    edgelock_lock_free(c, lk);
    CHECK(tables_idle(c));
    edgelock_client_destroy(c);
}

static const char *g_password;
static void password_from_config(edgelock_config *cfg)
{
    cfg->password = g_password;
    cfg->command_timeout_ms = 700;
    cfg->connect_timeout_ms = 700;
}

TEST_CASE(password_from_the_config_replaces_the_urls)
{
    RedisServer r;
    REQUIRE(r.start(0, "--requirepass", "cfg-pw"));
    char url[160];
    snprintf(url, sizeof(url), "redis://:wrong@127.0.0.1:%u", r.port());
    g_password = "cfg-pw";
    edgelock_client *c = make_client(url, password_from_config);
    REQUIRE(c);
    edgelock_lock lk = make_lock(c, "cfg-authed");
    CHECK_ST(edgelock_try_lock(c, lk, 0, 10000), EDGELOCK_OK);
    CHECK_ST(edgelock_unlock(c, lk, nullptr), EDGELOCK_OK);
    edgelock_lock_free(c, lk);
    edgelock_client_destroy(c);

    // A wrong one in the config is refused although the URL has none.
    snprintf(url, sizeof(url), "redis://127.0.0.1:%u", r.port());
    g_password = "not-it";
    c = make_client(url, password_from_config);
    REQUIRE(c);
    lk = make_lock(c, "cfg-authed");
    CHECK_ST(edgelock_try_lock(c, lk, 0, 10000), EDGELOCK_ERR_AUTH);
    edgelock_lock_free(c, lk);
    edgelock_client_destroy(c);

    // Longer than 255 bytes: refused at creation, nothing kept.
    char longpw[300];
    memset(longpw, 'p', sizeof(longpw) - 1);
    longpw[sizeof(longpw) - 1] = 0;
    edgelock_config cfg;
    edgelock_config_init(&cfg);
    cfg.url = url;
    cfg.password = longpw;
    edgelock_client *none = nullptr;
    CHECK_ST(edgelock_client_create(&cfg, nullptr, &none), EDGELOCK_ERR_INVALID_ARG);
    CHECK(none == nullptr);
}
