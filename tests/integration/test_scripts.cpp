// SPDX-License-Identifier: BSD-3-Clause
// The embedded Lua scripts: the SHA1 baked in at build time is the one Redis
// computes, and a server that lost its scripts (SCRIPT FLUSH, restart) is
// served through the EVAL fallback.
#include <stdio.h>
#include <string.h>

#include <atomic>

#include "check.hpp"
#include "clients.hpp"
#include "edgelock/edgelock.h"
#include "redis_server.hpp"
#include "redisson/scripts.hpp"

using namespace edgelock;

static bool is_hex40(const char *s)
{
    if (strlen(s) != 40)
        return false;
    for (int i = 0; i < 40; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
            return false;
    return true;
}

// An unlock's latch DEL goes after the unlock has answered, and keeps the
// handle BUSY until it is written (after a SCRIPT FLUSH, behind the scripts'
// reload): let it go before lock_free. Bounded generously.
static void wait_for_housekeeping(edgelock_client *c)
{
    wait_until(10000, [&] { return stats_of(c).commands == 0; });
}

TEST_CASE(script_table_is_well_formed)
{
    CHECK_EQ(kScriptCount, 29);
    // lock_info, the semaphores' and latch's scripts and the read-write lock's
    // force unlock and is-locked are not loaded at connect: a client of locks
    // only does not pay for them.
    CHECK_EQ(kScriptPreloadCount, 14);
    static const char *const names[] = {
        "lock_acquire",      "fair_abandon",      "fair_acquire",       "fair_force_release",
        "fair_release",      "fenced_acquire",    "lock_force_release", "lock_release",
        "lock_renew",        "rw_read_acquire",   "rw_read_release",    "rw_renew",
        "rw_write_acquire",  "rw_write_release",  "lock_info",          "semaphore_acquire",
        "semaphore_release", "semaphore_try_set", "semaphore_add",      "semaphore_info",
        "permit_acquire",    "permit_release",    "permit_release_one", "permit_renew",
        "permit_add",        "latch_try_set",     "latch_count_down",   "rw_force_release",
        "rw_is_locked"};
    static_assert(sizeof(names) / sizeof(names[0]) == kScriptCount, "a name per script");
    for (int i = 0; i < kScriptCount; i++) {
        const Script &s = kScripts[i];
        REQUIRE(s.name && s.text && s.sha1);
        CHECK(strcmp(s.name, names[i]) == 0); // ScriptId order
        CHECK(s.len > 0);
        CHECK_EQ(strlen(s.text), s.len); // NUL-terminated, no embedded NUL
        CHECK(is_hex40(s.sha1));
        for (int j = 0; j < i; j++)
            CHECK(strcmp(kScripts[j].sha1, s.sha1) != 0);
    }
}

TEST_CASE(script_load_returns_the_embedded_sha1)
{
    RedisServer &r = shared_server();
    redisContext *ctx = r.connect();
    REQUIRE(ctx);
    freeReplyObject(redisCommand(ctx, "SCRIPT FLUSH"));
    for (int i = 0; i < kScriptCount; i++) {
        const Script &s = kScripts[i];
        redisReply *rep = (redisReply *)redisCommand(ctx, "SCRIPT LOAD %b", s.text, s.len);
        REQUIRE(rep);
        CHECK(rep->type == REDIS_REPLY_STRING);
        if (rep->type == REDIS_REPLY_STRING) {
            if (strcmp(rep->str, s.sha1) != 0)
                fprintf(stderr, "  %s: server sha1 %s, embedded %s\n", s.name, rep->str, s.sha1);
            CHECK(strcmp(rep->str, s.sha1) == 0);
        }
        freeReplyObject(rep);
        // And Redis knows it by that name now.
        rep = (redisReply *)redisCommand(ctx, "SCRIPT EXISTS %s", s.sha1);
        REQUIRE(rep);
        CHECK(rep->type == REDIS_REPLY_ARRAY && rep->elements == 1 && rep->element[0]->integer == 1);
        freeReplyObject(rep);
    }
    redisFree(ctx);
}

static std::atomic<int> g_lost{0};
static void on_lost(edgelock_client *, edgelock_lock, uint64_t, void *)
{
    g_lost++;
}
static void short_watchdog(edgelock_config *cfg)
{
    cfg->watchdog_lease_ms = 300;
    cfg->on_lock_lost = on_lost;
}

static void flush_scripts(const RedisServer &r)
{
    char out[64];
    redis_string(r, out, sizeof(out), "SCRIPT FLUSH");
    CHECK(strcmp(out, "OK") == 0);
    redisReply *rep = r.command("SCRIPT EXISTS %s", kScripts[kScriptAcquire].sha1);
    CHECK(rep && rep->type == REDIS_REPLY_ARRAY && rep->element[0]->integer == 0);
    if (rep)
        freeReplyObject(rep);
}

TEST_CASE(client_works_after_script_flush)
{
    RedisServer &r = shared_server();
    edgelock_client *c = make_client(r.url());
    REQUIRE(c);
    edgelock_lock lk = make_lock(c, "flushed");
    // Connected (and scripts loaded by the client) first.
    CHECK_ST(edgelock_try_lock(c, lk, 0, 10000), EDGELOCK_OK);
    int released = -1;
    CHECK_ST(edgelock_unlock(c, lk, &released), EDGELOCK_OK);
    CHECK_EQ(released, 1);

    flush_scripts(r);
    // Every script-based call still works: NOSCRIPT, then EVAL with the body.
    CHECK_ST(edgelock_try_lock(c, lk, 0, 10000), EDGELOCK_OK);
    CHECK_EQ(redis_integer(r, "HLEN flushed"), 1);
    flush_scripts(r);
    CHECK_ST(edgelock_try_lock(c, lk, 0, 10000), EDGELOCK_OK); // re-entry
    int64_t count = 0;
    CHECK_ST(edgelock_hold_count(c, lk, &count), EDGELOCK_OK);
    CHECK_EQ(count, 2);
    flush_scripts(r);
    CHECK_ST(edgelock_unlock(c, lk, &released), EDGELOCK_OK);
    CHECK_EQ(released, 0);
    flush_scripts(r);
    CHECK_ST(edgelock_unlock(c, lk, &released), EDGELOCK_OK);
    CHECK_EQ(released, 1);
    CHECK_EQ(redis_integer(r, "EXISTS flushed"), 0);

    CHECK_ST(edgelock_try_lock(c, lk, 0, 10000), EDGELOCK_OK);
    flush_scripts(r);
    int deleted = -1;
    CHECK_ST(edgelock_force_unlock(c, lk, &deleted), EDGELOCK_OK);
    CHECK_EQ(deleted, 1);
    CHECK_EQ(redis_integer(r, "EXISTS flushed"), 0);
    // Our own hold was deleted before its lease ended: LOST, reported once.
    CHECK_ST(edgelock_unlock(c, lk, &released), EDGELOCK_ERR_LOST);
    CHECK_ST(edgelock_unlock(c, lk, &released), EDGELOCK_ERR_NOT_OWNER);

    wait_for_housekeeping(c);
    CHECK_ST(edgelock_lock_free(c, lk), EDGELOCK_OK);
    CHECK(tables_idle(c));
    CHECK_EQ(redis_integer(r, "EVAL %s 0", "return #redis.call('keys', 'redisson_unlock_latch*')"), 0);
    edgelock_client_destroy(c);
}

TEST_CASE(watchdog_renewal_works_after_script_flush)
{
    RedisServer &r = shared_server();
    g_lost = 0;
    edgelock_client *c = make_client(r.url(), short_watchdog);
    REQUIRE(c);
    edgelock_lock lk = make_lock(c, "flushed-wd");
    CHECK_ST(edgelock_acquire(c, lk), EDGELOCK_OK);
    flush_scripts(r);
    edgelock_stats s0;
    CHECK_ST(edgelock_client_stats(c, &s0), EDGELOCK_OK);
    sleep_ms(900); // three leases: renewed through EVAL or lost
    edgelock_stats s1;
    CHECK_ST(edgelock_client_stats(c, &s1), EDGELOCK_OK);
    CHECK(s1.renew_calls > s0.renew_calls);
    CHECK_EQ(g_lost.load(), 0);
    CHECK_EQ(redis_integer(r, "EXISTS flushed-wd"), 1);
    int released = -1;
    CHECK_ST(edgelock_unlock(c, lk, &released), EDGELOCK_OK);
    CHECK_EQ(released, 1);
    wait_for_housekeeping(c); // the unlock latch's DEL may wait behind a script reload
    CHECK_ST(edgelock_lock_free(c, lk), EDGELOCK_OK);
    edgelock_client_destroy(c);
}
