// SPDX-License-Identifier: BSD-3-Clause
// The reentrant lock through the blocking C ABI against a real redis-server:
// wire format (Redisson's hash, owner field, channel), re-entry, queries.
#include <stdio.h>
#include <string.h>

#include <thread>

#include "check.hpp"
#include "clients.hpp"
#include "edgelock/edgelock.h"
#include "redis_server.hpp"

TEST_CASE(lock_unlock_writes_redisson_hash)
{
    RedisServer &r = shared_server();
    edgelock_client *c = make_client(r.url());
    REQUIRE(c);
    edgelock_lock lk = make_lock(c, "wire");
    uint64_t asked = mono_ms();
    CHECK_ST(edgelock_try_lock(c, lk, 0, 10000), EDGELOCK_OK);

    char field[128];
    snprintf(field, sizeof(field), "%s:%llu", edgelock_client_id(c),
             (unsigned long long)edgelock_current_owner());
    CHECK_EQ(strlen(edgelock_client_id(c)), 36);
    CHECK_EQ(redis_integer(r, "HGET wire %s", field), 1);
    CHECK_EQ(redis_integer(r, "HLEN wire"), 1);
    CHECK(lease_left_fits(redis_integer(r, "PTTL wire"), 10000, asked));

    int released = -1;
    CHECK_ST(edgelock_unlock(c, lk, &released), EDGELOCK_OK);
    CHECK_EQ(released, 1);
    CHECK_EQ(redis_integer(r, "EXISTS wire"), 0);
    CHECK_ST(edgelock_lock_free(c, lk), EDGELOCK_OK);
    CHECK(tables_idle(c));
    edgelock_client_destroy(c);
}

TEST_CASE(ten_thousand_sequential_pairs_on_fresh_keys)
{
    RedisServer &r = shared_server();
    edgelock_client *c = make_client(r.url());
    REQUIRE(c);
    int ok = 0;
    for (int i = 0; i < 10000; i++) {
        char name[32];
        snprintf(name, sizeof(name), "seq:%d", i);
        edgelock_lock lk = make_lock(c, name);
        if (edgelock_try_lock(c, lk, 0, 30000) == EDGELOCK_OK) {
            int released = 0;
            if (edgelock_unlock(c, lk, &released) == EDGELOCK_OK && released == 1)
                ok++;
        }
        edgelock_lock_free(c, lk);
    }
    CHECK_EQ(ok, 10000);
    CHECK_EQ(redis_integer(r, "EVAL %s 0", "return #redis.call('keys', 'seq:*')"), 0);
    CHECK(tables_idle(c));
    edgelock_client_destroy(c);
}

TEST_CASE(reentry_counts_and_publishes_on_final_unlock)
{
    RedisServer &r = shared_server();
    edgelock_client *c = make_client(r.url());
    REQUIRE(c);
    redisContext *sub = r.connect();
    REQUIRE(sub);
    redisReply *rep = (redisReply *)redisCommand(sub, "SUBSCRIBE %s", "redisson_lock__channel:{re}");
    freeReplyObject(rep);

    edgelock_lock lk = make_lock(c, "re");
    CHECK_ST(edgelock_acquire(c, lk), EDGELOCK_OK);
    CHECK_ST(edgelock_acquire(c, lk), EDGELOCK_OK);
    int64_t count = 0;
    CHECK_ST(edgelock_hold_count(c, lk, &count), EDGELOCK_OK);
    CHECK_EQ(count, 2);
    int released = -1;
    CHECK_ST(edgelock_unlock(c, lk, &released), EDGELOCK_OK);
    CHECK_EQ(released, 0);
    CHECK_EQ(redis_integer(r, "EXISTS re"), 1);
    CHECK_ST(edgelock_unlock(c, lk, &released), EDGELOCK_OK);
    CHECK_EQ(released, 1);
    CHECK_EQ(redis_integer(r, "EXISTS re"), 0);

    // Exactly one unlock message, "0", on Redisson's channel.
    struct timeval tv = {2, 0};
    redisSetTimeout(sub, tv);
    rep = nullptr;
    CHECK(redisGetReply(sub, (void **)&rep) == REDIS_OK && rep);
    if (rep) {
        CHECK(rep->type == REDIS_REPLY_ARRAY && rep->elements == 3);
        CHECK(strcmp(rep->element[0]->str, "message") == 0);
        CHECK(strcmp(rep->element[2]->str, "0") == 0);
        freeReplyObject(rep);
    }
    redisFree(sub);
    CHECK_ST(edgelock_unlock(c, lk, &released), EDGELOCK_ERR_NOT_OWNER);
    edgelock_lock_free(c, lk);
    CHECK(tables_idle(c));
    edgelock_client_destroy(c);
}

TEST_CASE(queries_report_what_redis_holds)
{
    RedisServer &r = shared_server();
    edgelock_client *c = make_client(r.url());
    REQUIRE(c);
    edgelock_lock lk = make_lock(c, "query");
    int locked = -1, held = -1;
    int64_t ttl = 0;
    CHECK_ST(edgelock_is_locked(c, lk, &locked), EDGELOCK_OK);
    CHECK_EQ(locked, 0);
    CHECK_ST(edgelock_remaining_ttl(c, lk, &ttl), EDGELOCK_OK);
    CHECK_EQ(ttl, -2);
    uint64_t asked_again = mono_ms();
    CHECK_ST(edgelock_try_lock(c, lk, 0, 5000), EDGELOCK_OK);
    CHECK_ST(edgelock_is_locked(c, lk, &locked), EDGELOCK_OK);
    CHECK_EQ(locked, 1);
    CHECK_ST(edgelock_is_held_by_current_thread(c, lk, &held), EDGELOCK_OK);
    CHECK_EQ(held, 1);
    CHECK_ST(edgelock_remaining_ttl(c, lk, &ttl), EDGELOCK_OK);
    CHECK(lease_left_fits(ttl, 5000, asked_again));

    // Another thread is another owner: not held by it, and its unlock is refused.
    std::thread other([&] {
        int h = -1, rel = -1;
        CHECK_ST(edgelock_is_held_by_current_thread(c, lk, &h), EDGELOCK_OK);
        CHECK_EQ(h, 0);
        CHECK_ST(edgelock_unlock(c, lk, &rel), EDGELOCK_ERR_NOT_OWNER);
        CHECK_ST(edgelock_try_lock(c, lk, 0, 5000), EDGELOCK_ERR_WAIT_TIMEOUT);
    });
    other.join();
    CHECK_EQ(redis_integer(r, "HLEN query"), 1);

    int deleted = -1;
    CHECK_ST(edgelock_force_unlock(c, lk, &deleted), EDGELOCK_OK);
    CHECK_EQ(deleted, 1);
    CHECK_ST(edgelock_force_unlock(c, lk, &deleted), EDGELOCK_OK);
    CHECK_EQ(deleted, 0);
    CHECK_ST(edgelock_lock_free(c, lk), EDGELOCK_ERR_BUSY); // this client still counts its hold
    int rel = -1;
    // Deleted behind the holder's back before its lease ended: lost, not "not owner".
    CHECK_ST(edgelock_unlock(c, lk, &rel), EDGELOCK_ERR_LOST);
    CHECK_ST(edgelock_unlock(c, lk, &rel), EDGELOCK_ERR_NOT_OWNER); // reported once
    CHECK_ST(edgelock_lock_free(c, lk), EDGELOCK_OK);
    CHECK(tables_idle(c));
    edgelock_client_destroy(c);
}

// Two handles on one name, one owner: Redis counts one lock with two holds
// (Redisson: the same RLock). Unlocking one handle must not release the
// other's hold. It did: the release's 0 left this handle's count at 0, so it
// was taken for a stale count and drained, another client got the lock, and
// lock_valid() through the first handle still said OK (found by a stress
// run).
TEST_CASE(unlocking_one_of_two_handles_on_a_name_keeps_the_other_held)
{
    RedisServer &r = shared_server();
    edgelock_client *c = make_client(r.url());
    edgelock_client *other = make_client(r.url());
    REQUIRE(c && other);
    edgelock_lock a = make_lock(c, "twoh"), b = make_lock(c, "twoh"), o = make_lock(other, "twoh");
    CHECK_ST(edgelock_try_lock(c, a, 0, EDGELOCK_LEASE_WATCHDOG), EDGELOCK_OK);
    CHECK_ST(edgelock_try_lock(c, b, 0, EDGELOCK_LEASE_WATCHDOG), EDGELOCK_OK);
    int released = -1;
    CHECK_ST(edgelock_unlock(c, b, &released), EDGELOCK_OK);
    CHECK_EQ(released, 0);
    CHECK_EQ(redis_integer(r, "EXISTS twoh"), 1);
    int64_t left = 0;
    CHECK_ST(edgelock_lock_valid(c, a, edgelock_current_owner(), &left), EDGELOCK_OK);
    CHECK_ST(edgelock_try_lock(other, o, 0, 30000), EDGELOCK_ERR_WAIT_TIMEOUT);
    CHECK_ST(edgelock_unlock(c, a, &released), EDGELOCK_OK);
    CHECK_EQ(released, 1);
    CHECK_EQ(redis_integer(r, "EXISTS twoh"), 0);
    CHECK_ST(edgelock_lock_free(c, a), EDGELOCK_OK);
    CHECK_ST(edgelock_lock_free(c, b), EDGELOCK_OK);
    CHECK_ST(edgelock_lock_free(other, o), EDGELOCK_OK);
    CHECK(tables_idle(c));
    edgelock_client_destroy(c);
    edgelock_client_destroy(other);
}
