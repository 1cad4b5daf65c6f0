// SPDX-License-Identifier: BSD-3-Clause
// The watchdog through the blocking C ABI: locks taken without a lease are
// renewed (in batches) until unlocked, a lock deleted behind the holder's back
// is reported lost, and a fixed-lease lock is left to expire.
// The watchdog lease is 600 ms (renewal every 200 ms) to keep the tests short.
#include <stdio.h>
#include <string.h>

#include <atomic>
#include <string>
#include <thread>

#include "check.hpp"
#include "clients.hpp"
#include "edgelock/edgelock.h"
#include "redis_server.hpp"

namespace
{

constexpr uint32_t kLease = 600;
constexpr uint32_t kPeriod = kLease / 3;

// What on_lock_lost saw.
struct LostLog {
    std::atomic<int> count{0};
    std::atomic<uint64_t> lock_id{0};
    std::atomic<uint64_t> owner{0};
    std::atomic<uint64_t> at_ms{0};
    std::atomic<uint64_t> thread{0}; // the thread the callback ran on
};

void on_lost(edgelock_client *, edgelock_lock lock, uint64_t owner, void *user)
{
    auto *log = static_cast<LostLog *>(user);
    log->lock_id = lock.id;
    log->owner = owner;
    log->thread = edgelock_current_owner();
    log->at_ms = mono_ms();
    log->count++;
}

edgelock_client *watchdog_client(const char *url, LostLog *log, uint32_t max_locks = 64,
                                 uint32_t max_holds = 64)
{
    edgelock_config cfg;
    edgelock_config_init(&cfg);
    cfg.url = url;
    cfg.watchdog_lease_ms = kLease;
    cfg.max_locks = max_locks;
    cfg.max_holds = max_holds;
    cfg.on_lock_lost = on_lost;
    cfg.on_lock_lost_user = log;
    edgelock_client *c = nullptr;
    edgelock_status st = edgelock_client_create(&cfg, nullptr, &c);
    if (st != EDGELOCK_OK)
        fprintf(stderr, "client_create: %s\n", edgelock_status_str(st));
    return c;
}

void owner_field(edgelock_client *c, char *out, size_t cap)
{
    snprintf(out, cap, "%s:%llu", edgelock_client_id(c), (unsigned long long)edgelock_current_owner());
}

} // namespace

TEST_CASE(watchdog_keeps_lock_past_its_lease)
{
    RedisServer &r = shared_server();
    LostLog log;
    edgelock_client *c = watchdog_client(r.url(), &log);
    REQUIRE(c);
    edgelock_lock lk = make_lock(c, "wd:keep");
    uint64_t calls0 = stats_of(c).renew_calls;
    CHECK_ST(edgelock_acquire(c, lk), EDGELOCK_OK);
    long long pttl = redis_integer(r, "PTTL wd:keep");
    CHECK(pttl > 0 && pttl <= kLease);

    sleep_ms(3 * kLease);
    char field[128];
    owner_field(c, field, sizeof(field));
    CHECK_EQ(redis_integer(r, "HGET wd:keep %s", field), 1);
    pttl = redis_integer(r, "PTTL wd:keep");
    CHECK(pttl > 0 && pttl <= kLease);
    uint64_t calls1 = stats_of(c).renew_calls;
    CHECK(calls1 >= calls0 + 2); // about 9 expected
    int held = -1;
    CHECK_ST(edgelock_is_held_by_current_thread(c, lk, &held), EDGELOCK_OK);
    CHECK_EQ(held, 1);
    CHECK_EQ(log.count.load(), 0);

    int released = -1;
    CHECK_ST(edgelock_unlock(c, lk, &released), EDGELOCK_OK);
    CHECK_EQ(released, 1);
    CHECK_EQ(redis_integer(r, "EXISTS wd:keep"), 0);
    CHECK(tables_idle(c));
    edgelock_lock_free(c, lk);
    edgelock_client_destroy(c);
}

TEST_CASE(watchdog_reentry_is_renewed_until_the_last_unlock)
{
    RedisServer &r = shared_server();
    LostLog log;
    edgelock_client *c = watchdog_client(r.url(), &log);
    REQUIRE(c);
    edgelock_lock lk = make_lock(c, "wd:reenter");
    CHECK_ST(edgelock_acquire(c, lk), EDGELOCK_OK);
    CHECK_ST(edgelock_acquire(c, lk), EDGELOCK_OK);
    int released = -1;
    CHECK_ST(edgelock_unlock(c, lk, &released), EDGELOCK_OK);
    CHECK_EQ(released, 0);
    // One hold remains: still renewed.
    sleep_ms(2 * kLease);
    char field[128];
    owner_field(c, field, sizeof(field));
    CHECK_EQ(redis_integer(r, "HGET wd:reenter %s", field), 1);
    CHECK_ST(edgelock_unlock(c, lk, &released), EDGELOCK_OK);
    CHECK_EQ(released, 1);
    CHECK_EQ(redis_integer(r, "EXISTS wd:reenter"), 0);
    CHECK_EQ(log.count.load(), 0);
    CHECK(tables_idle(c));
    edgelock_lock_free(c, lk);
    edgelock_client_destroy(c);
}

// A re-entry with a fixed lease shorter than the watchdog's into a hold the
// watchdog renews: the scripts set the key's TTL to the lease they are given,
// so without care the key lapsed before the next renewal while lock_valid()
// still promised the watchdog's lease, and another client took the lock. The
// re-entry and the unlock of one re-entry keep the watchdog's lease instead.
TEST_CASE(a_short_fixed_lease_re_entry_keeps_the_watchdogs_lease)
{
    RedisServer &r = shared_server();
    LostLog log;
    edgelock_client *c = watchdog_client(r.url(), &log);
    edgelock_client *other = make_client(r.url());
    REQUIRE(c && other);
    const uint64_t me = edgelock_current_owner();
    const edgelock_lock_kind kinds[] = {EDGELOCK_REENTRANT, EDGELOCK_FAIR, EDGELOCK_FENCED, EDGELOCK_WRITE};
    for (edgelock_lock_kind kind : kinds) {
        char name[32];
        snprintf(name, sizeof(name), "wd:short-reentry:%d", (int)kind);
        edgelock_lock lk = {0}, olk = {0};
        REQUIRE(edgelock_lock_new_kind(c, kind, name, strlen(name), &lk) == EDGELOCK_OK);
        REQUIRE(edgelock_lock_new_kind(other, kind, name, strlen(name), &olk) == EDGELOCK_OK);
        CHECK_ST(edgelock_acquire(c, lk), EDGELOCK_OK);
        CHECK_ST(edgelock_try_lock(c, lk, 0, 1), EDGELOCK_OK); // a 1 ms lease, were it applied
        CHECK_ST(edgelock_try_lock(c, lk, 0, 1), EDGELOCK_OK);
        CHECK(redis_integer(r, "PTTL %s", name) > 1);
        int released = -1;
        CHECK_ST(edgelock_unlock(c, lk, &released), EDGELOCK_OK); // restores a lease too
        CHECK_EQ(released, 0);
        CHECK(redis_integer(r, "PTTL %s", name) > 1);
        sleep_ms(10);
        int64_t left = 0;
        CHECK_ST(edgelock_lock_valid(c, lk, me, &left), EDGELOCK_OK);
        CHECK_ST(edgelock_try_lock(other, olk, 0, 10000), EDGELOCK_ERR_WAIT_TIMEOUT);
        CHECK_ST(edgelock_unlock(c, lk, &released), EDGELOCK_OK);
        CHECK_ST(edgelock_unlock(c, lk, &released), EDGELOCK_OK);
        CHECK_EQ(released, 1);
        CHECK_EQ(log.count.load(), 0);
        CHECK(tables_idle(c));
        CHECK_ST(edgelock_lock_free(c, lk), EDGELOCK_OK);
        CHECK_ST(edgelock_lock_free(other, olk), EDGELOCK_OK);
    }
    edgelock_client_destroy(c);
    edgelock_client_destroy(other);
}

TEST_CASE(unlock_stops_renewal)
{
    RedisServer &r = shared_server();
    LostLog log;
    edgelock_client *c = watchdog_client(r.url(), &log);
    REQUIRE(c);
    edgelock_lock lk = make_lock(c, "wd:stop");
    uint64_t calls0 = stats_of(c).renew_calls;
    CHECK_ST(edgelock_acquire(c, lk), EDGELOCK_OK);
    sleep_ms(kLease + kPeriod / 2);
    CHECK(stats_of(c).renew_calls > calls0); // it was being renewed
    int released = -1;
    CHECK_ST(edgelock_unlock(c, lk, &released), EDGELOCK_OK);
    CHECK_EQ(released, 1);
    CHECK_EQ(redis_integer(r, "EXISTS wd:stop"), 0);

    uint64_t after_unlock = stats_of(c).renew_calls;
    sleep_ms(4 * kPeriod);
    CHECK_EQ(stats_of(c).renew_calls, after_unlock);
    CHECK_EQ(redis_integer(r, "EXISTS wd:stop"), 0);
    CHECK_EQ(log.count.load(), 0);
    CHECK(tables_idle(c));
    edgelock_lock_free(c, lk);
    edgelock_client_destroy(c);
}

TEST_CASE(lock_deleted_behind_the_holders_back_is_reported_lost)
{
    RedisServer &r = shared_server();
    LostLog log;
    edgelock_client *c = watchdog_client(r.url(), &log);
    REQUIRE(c);
    edgelock_lock lk = make_lock(c, "wd:deleted");
    CHECK_ST(edgelock_acquire(c, lk), EDGELOCK_OK);
    sleep_ms(kPeriod + 50); // at least one renewal went through
    CHECK_EQ(log.count.load(), 0);

    uint64_t deleted_at = mono_ms();
    CHECK_EQ(redis_integer(r, "DEL wd:deleted"), 1);
    CHECK(wait_until(5 * kLease, [&] { return log.count.load() > 0; }));
    CHECK_EQ(log.count.load(), 1);
    CHECK(log.at_ms.load() >= deleted_at);
    CHECK_EQ(log.lock_id.load(), lk.id);
    CHECK_EQ(log.owner.load(), edgelock_current_owner());
    CHECK(log.thread.load() != edgelock_current_owner()); // ran on the loop thread

    // Reported once, and no longer renewed.
    uint64_t calls = stats_of(c).renew_calls;
    sleep_ms(3 * kPeriod);
    CHECK_EQ(log.count.load(), 1);
    CHECK_EQ(stats_of(c).renew_calls, calls);
    CHECK_EQ(redis_integer(r, "EXISTS wd:deleted"), 0);

    int held = -1;
    CHECK_ST(edgelock_is_held_by_current_thread(c, lk, &held), EDGELOCK_ERR_LOST);
    CHECK_EQ(held, 0);
    int released = -1;
    CHECK_ST(edgelock_unlock(c, lk, &released), EDGELOCK_ERR_LOST);
    CHECK_EQ(released, 0);
    // The loss was reported to its owner: from now on it is a plain non-owner.
    CHECK_ST(edgelock_unlock(c, lk, &released), EDGELOCK_ERR_NOT_OWNER);
    CHECK_ST(edgelock_is_held_by_current_thread(c, lk, &held), EDGELOCK_OK);
    CHECK_EQ(held, 0);
    CHECK(tables_idle(c));

    // The lock can be taken again, and is renewed again.
    CHECK_ST(edgelock_acquire(c, lk), EDGELOCK_OK);
    sleep_ms(2 * kLease);
    CHECK_EQ(redis_integer(r, "EXISTS wd:deleted"), 1);
    CHECK_ST(edgelock_unlock(c, lk, &released), EDGELOCK_OK);
    CHECK_EQ(released, 1);
    CHECK_EQ(log.count.load(), 1);
    CHECK(tables_idle(c));
    edgelock_lock_free(c, lk);
    edgelock_client_destroy(c);
}

// The key is deleted under a re-entered hold with a fixed lease (no renewal
// to notice), and the owner re-enters once more: Redis makes that a fresh
// hold of one while the owner counts three. The unlock that releases it with
// two still counted reports those two lost, as a renewal would have.
TEST_CASE(holds_gone_before_a_re_entry_are_reported_lost_by_the_unlock)
{
    RedisServer &r = shared_server();
    LostLog log;
    edgelock_client *c = watchdog_client(r.url(), &log);
    REQUIRE(c);
    edgelock_lock lk = make_lock(c, "wd:re-entered");
    CHECK_ST(edgelock_try_lock(c, lk, 0, 60000), EDGELOCK_OK);
    CHECK_ST(edgelock_try_lock(c, lk, 0, 60000), EDGELOCK_OK);
    CHECK_EQ(redis_integer(r, "DEL wd:re-entered"), 1);
    CHECK_ST(edgelock_try_lock(c, lk, 0, 60000), EDGELOCK_OK); // a first lock to Redis
    int64_t count = -1;
    CHECK_ST(edgelock_hold_count(c, lk, &count), EDGELOCK_OK);
    CHECK_EQ(count, 1);
    CHECK_EQ(log.count.load(), 0);

    int released = -1;
    CHECK_ST(edgelock_unlock(c, lk, &released), EDGELOCK_OK);
    CHECK_EQ(released, 1);
    CHECK_EQ(redis_integer(r, "EXISTS wd:re-entered"), 0);
    CHECK_EQ(log.count.load(), 1);
    CHECK_EQ(log.owner.load(), edgelock_current_owner());
    int64_t left = -1;
    CHECK_ST(edgelock_lock_valid(c, lk, edgelock_current_owner(), &left), EDGELOCK_ERR_LOST);
    CHECK_ST(edgelock_unlock(c, lk, &released), EDGELOCK_ERR_LOST);
    CHECK_ST(edgelock_unlock(c, lk, &released), EDGELOCK_ERR_NOT_OWNER);
    CHECK(tables_idle(c));
    edgelock_lock_free(c, lk);
    edgelock_client_destroy(c);
}

TEST_CASE(renewal_is_batched_a_hundred_locks_per_call)
{
    RedisServer &r = shared_server();
    LostLog log;
    const int n = 250;
    edgelock_client *c = watchdog_client(r.url(), &log, 300, 300);
    REQUIRE(c);
    edgelock_lock locks[n];
    int acquired = 0;
    for (int i = 0; i < n; i++) {
        char name[32];
        snprintf(name, sizeof(name), "wd:batch:%d", i);
        locks[i] = make_lock(c, name);
        if (edgelock_acquire(c, locks[i]) == EDGELOCK_OK)
            acquired++;
    }
    CHECK_EQ(acquired, n);
    CHECK_EQ(stats_of(c).holds, n);

    sleep_ms(kPeriod);
    uint64_t calls0 = stats_of(c).renew_calls;
    uint64_t t0 = mono_ms();
    sleep_ms(5 * kPeriod);
    uint64_t calls1 = stats_of(c).renew_calls;
    uint64_t periods = (mono_ms() - t0 + kPeriod - 1) / kPeriod; // 5, more on a slow machine
    uint64_t delta = calls1 - calls0;
    printf("  %llu renewal calls over %llu periods for %d locks\n", (unsigned long long)delta,
           (unsigned long long)periods, n);
    CHECK(delta >= 3);                 // at least one full round
    CHECK(delta <= 3 * (periods + 1)); // 3 calls per round, not 250

    // Every lock outlived its lease: each batch renewed all of its locks.
    sleep_ms(kLease);
    CHECK_EQ(redis_integer(r, "EVAL %s 0",
                           "local n = 0 for i = 0, 249 do "
                           "if redis.call('pttl', 'wd:batch:' .. i) > 0 then n = n + 1 end end "
                           "return n"),
             n);
    CHECK_EQ(log.count.load(), 0);

    int released_all = 0;
    for (int i = 0; i < n; i++) {
        int released = -1;
        if (edgelock_unlock(c, locks[i], &released) == EDGELOCK_OK && released == 1)
            released_all++;
    }
    CHECK_EQ(released_all, n);
    CHECK_EQ(redis_integer(r, "EVAL %s 0", "return #redis.call('keys', 'wd:batch:*')"), 0);
    CHECK(tables_idle(c));
    for (int i = 0; i < n; i++)
        edgelock_lock_free(c, locks[i]);
    edgelock_client_destroy(c);
}

TEST_CASE(fixed_lease_lock_is_not_renewed)
{
    RedisServer &r = shared_server();
    LostLog log;
    edgelock_client *c = watchdog_client(r.url(), &log);
    REQUIRE(c);
    edgelock_lock fixed = make_lock(c, "wd:fixed");

    // Alone: no renewal at all, and it expires.
    uint64_t calls0 = stats_of(c).renew_calls;
    CHECK_ST(edgelock_try_lock(c, fixed, 0, 400), EDGELOCK_OK);
    CHECK_EQ(redis_integer(r, "EXISTS wd:fixed"), 1);
    CHECK(wait_until(3000, [&] { return redis_integer(r, "EXISTS wd:fixed") == 0; }));
    sleep_ms(kPeriod);
    CHECK_EQ(redis_integer(r, "EXISTS wd:fixed"), 0);
    CHECK_EQ(stats_of(c).renew_calls, calls0);
    CHECK_EQ(log.count.load(), 0); // expiry of a fixed lease is not a watchdog loss
    int released = -1;
    CHECK_ST(edgelock_unlock(c, fixed, &released), EDGELOCK_ERR_NOT_OWNER);

    // Next to a watchdog lock that the client is renewing: still not renewed.
    edgelock_lock kept = make_lock(c, "wd:kept");
    CHECK_ST(edgelock_acquire(c, kept), EDGELOCK_OK);
    CHECK_ST(edgelock_try_lock(c, fixed, 0, 400), EDGELOCK_OK);
    sleep_ms(2 * kLease);
    CHECK_EQ(redis_integer(r, "EXISTS wd:fixed"), 0);
    CHECK_EQ(redis_integer(r, "EXISTS wd:kept"), 1);
    CHECK(stats_of(c).renew_calls > calls0);
    CHECK_ST(edgelock_unlock(c, fixed, &released), EDGELOCK_ERR_NOT_OWNER);
    CHECK_ST(edgelock_unlock(c, kept, &released), EDGELOCK_OK);
    CHECK_EQ(released, 1);
    CHECK_EQ(log.count.load(), 0);
    CHECK(tables_idle(c));
    edgelock_lock_free(c, fixed);
    edgelock_lock_free(c, kept);
    edgelock_client_destroy(c);
}

// edgelock_lock_valid: the holder's own check before it acts, no Redis call.
TEST_CASE(lock_valid_says_how_long_a_hold_lasts_and_when_it_is_gone)
{
    RedisServer &r = shared_server();
    LostLog log;
    edgelock_client *c = watchdog_client(r.url(), &log);
    REQUIRE(c);
    const uint64_t me = edgelock_current_owner();
    edgelock_lock lk = make_lock(c, "wd:valid");
    int64_t left = -1;
    CHECK_ST(edgelock_lock_valid(c, lk, me, &left), EDGELOCK_ERR_NOT_OWNER);
    CHECK_EQ(left, 0);
    CHECK_ST(edgelock_acquire(c, lk), EDGELOCK_OK);
    CHECK_ST(edgelock_lock_valid(c, lk, me, &left), EDGELOCK_OK);
    CHECK(left > 0 && left <= kLease);
    CHECK_ST(edgelock_lock_valid(c, lk, me + 1, &left), EDGELOCK_ERR_NOT_OWNER); // another owner
    CHECK_ST(edgelock_lock_valid(c, lk, me, nullptr), EDGELOCK_ERR_INVALID_ARG);

    // Gone behind its back: LOST once the watchdog has seen it.
    CHECK_EQ(redis_integer(r, "DEL wd:valid"), 1);
    CHECK(wait_until(5 * kLease, [&] { return log.count.load() > 0; }));
    CHECK_ST(edgelock_lock_valid(c, lk, me, &left), EDGELOCK_ERR_LOST);
    CHECK_EQ(left, 0);
    CHECK_ST(edgelock_unlock(c, lk, nullptr), EDGELOCK_ERR_LOST);
    CHECK_ST(edgelock_lock_valid(c, lk, me, &left), EDGELOCK_ERR_NOT_OWNER);

    // A fixed lease: valid for at most the lease, then not held.
    CHECK_ST(edgelock_try_lock(c, lk, 0, 300), EDGELOCK_OK);
    CHECK_ST(edgelock_lock_valid(c, lk, me, &left), EDGELOCK_OK);
    CHECK(left > 0 && left <= 300);
    sleep_ms(400);
    CHECK_ST(edgelock_lock_valid(c, lk, me, &left), EDGELOCK_ERR_NOT_OWNER);
    CHECK_ST(edgelock_unlock(c, lk, nullptr), EDGELOCK_ERR_NOT_OWNER);
    CHECK(tables_idle(c));

    edgelock_lock_free(c, lk);
    CHECK_ST(edgelock_lock_valid(c, lk, me, &left), EDGELOCK_ERR_STALE_HANDLE);
    edgelock_client_destroy(c);
}

// An ACL that forbids PUBLISH: Redis runs the unlock script up to the PUBLISH
// (the lock is deleted), then answers an error. The unlock says REDIS, the
// hold is not renewed any more (no false loss report for the deleted key),
// and a retry finds it not held.
TEST_CASE(an_unlock_refused_halfway_stops_renewal)
{
    RedisServer &r = shared_server();
    redisReply *rep = r.command("ACL SETUSER wd-nopub on >pw ~* &* +@all -publish");
    REQUIRE(rep && rep->type == REDIS_REPLY_STATUS);
    freeReplyObject(rep);
    std::string url = "redis://wd-nopub:pw@127.0.0.1:" + std::to_string(r.port());
    LostLog log;
    edgelock_client *c = watchdog_client(url.c_str(), &log);
    REQUIRE(c);
    edgelock_lock lk = make_lock(c, "wd:nopub");
    CHECK_ST(edgelock_acquire(c, lk), EDGELOCK_OK);
    CHECK_ST(edgelock_unlock(c, lk, nullptr), EDGELOCK_ERR_REDIS);
    CHECK_EQ(redis_integer(r, "EXISTS wd:nopub"), 0); // deleted before the refused PUBLISH
    uint64_t calls = stats_of(c).renew_calls;
    sleep_ms(3 * kPeriod);
    CHECK_EQ(stats_of(c).renew_calls, calls);
    CHECK_EQ(log.count.load(), 0);
    CHECK_ST(edgelock_unlock(c, lk, nullptr), EDGELOCK_ERR_NOT_OWNER);
    CHECK(tables_idle(c));
    edgelock_lock_free(c, lk);
    edgelock_client_destroy(c);
    rep = r.command("ACL DELUSER wd-nopub");
    if (rep)
        freeReplyObject(rep);
}
