// SPDX-License-Identifier: BSD-3-Clause
// edgelock_lock_info_get() and edgelock_url_redact(): what `edgelock status`
// prints comes from here, against a real redis-server.
#include <string.h>

#include <initializer_list>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "check.hpp"
#include "clients.hpp"
#include "edgelock/edgelock.h"
#include "redis_server.hpp"

static edgelock_lock make_kind(edgelock_client *c, edgelock_lock_kind kind, const char *name)
{
    edgelock_lock lk = {0};
    edgelock_lock_new_kind(c, kind, name, strlen(name), &lk);
    return lk;
}

// A snapshot to fill: every field set to `fill` (to show which ones the call
// writes), with the caller's arrays.
static edgelock_lock_info info_with(int fill, edgelock_lock_entry *holders, size_t nh,
                                    edgelock_lock_entry *queue, size_t nq)
{
    edgelock_lock_info info;
    memset(&info, fill, sizeof(info));
    info.holders = holders;
    info.holders_cap = nh;
    info.queue = queue;
    info.queue_cap = nq;
    return info;
}

TEST_CASE(info_of_a_free_lock)
{
    RedisServer &r = shared_server();
    edgelock_client *c = make_client(r.url());
    REQUIRE(c);
    edgelock_lock lk = make_lock(c, "info:free");
    edgelock_lock_info info = info_with(0x5a, nullptr, 0, nullptr, 0);
    CHECK_ST(edgelock_lock_info_get(c, lk, &info), EDGELOCK_OK);
    CHECK_EQ(info.state, EDGELOCK_LOCK_FREE);
    CHECK(strcmp(info.redis_type, "none") == 0);
    CHECK(info.mode[0] == 0);
    CHECK_EQ(info.ttl_ms, -2);
    CHECK_EQ(info.has_token, 0);
    CHECK_EQ(info.holder_count, 0);
    CHECK_EQ(info.queue_count, 0);
    CHECK_EQ(info.subscribers, 0);
    CHECK(info.redis_time_ms > 1600000000000LL);
    CHECK(tables_idle(c));
    edgelock_lock_free(c, lk);
    edgelock_client_destroy(c);
}

// A lock's waiting clients are its channel's subscribers (one per client,
// however many of its threads wait), for the reentrant and the read-write lock.
TEST_CASE(info_counts_the_waiting_clients)
{
    RedisServer &r = shared_server();
    edgelock_client *holder = make_client(r.url());
    edgelock_client *w1 = make_client(r.url());
    edgelock_client *w2 = make_client(r.url());
    REQUIRE(holder && w1 && w2);
    for (edgelock_lock_kind kind : {EDGELOCK_REENTRANT, EDGELOCK_WRITE}) {
        const char *name = kind == EDGELOCK_REENTRANT ? "info:waiters" : "info:rw-waiters";
        edgelock_lock h = make_kind(holder, kind, name);
        CHECK_ST(edgelock_try_lock(holder, h, 0, 30000), EDGELOCK_OK);
        edgelock_lock l1 = make_kind(w1, kind, name), l2 = make_kind(w2, kind, name);
        std::vector<std::thread> waiting;
        for (int i = 0; i < 3; i++) { // two threads on w1, one on w2
            edgelock_client *c = i < 2 ? w1 : w2;
            edgelock_lock l = i < 2 ? l1 : l2;
            waiting.emplace_back([c, l] {
                if (edgelock_try_lock(c, l, 60000, 30000) == EDGELOCK_OK)
                    edgelock_unlock(c, l, nullptr);
            });
        }
        edgelock_lock_info info = info_with(0, nullptr, 0, nullptr, 0);
        CHECK(wait_until(10000, [&] {
            return edgelock_lock_info_get(holder, h, &info) == EDGELOCK_OK && info.subscribers == 2;
        }));
        CHECK_EQ(info.holder_count, 1);
        CHECK_ST(edgelock_unlock(holder, h, nullptr), EDGELOCK_OK);
        for (auto &t : waiting)
            t.join();
        // The waiters' UNSUBSCRIBE goes out after their calls returned.
        CHECK(wait_until(10000, [&] {
            return edgelock_lock_info_get(holder, h, &info) == EDGELOCK_OK && info.subscribers == 0;
        }));
        edgelock_lock_free(holder, h);
        edgelock_lock_free(w1, l1);
        edgelock_lock_free(w2, l2);
    }
    edgelock_client_destroy(holder);
    edgelock_client_destroy(w1);
    edgelock_client_destroy(w2);
}

TEST_CASE(info_names_holders_mode_token_and_queue)
{
    RedisServer &r = shared_server();
    edgelock_client *c = make_client(r.url());
    REQUIRE(c);
    edgelock_lock rd = make_kind(c, EDGELOCK_READ, "info:rw");
    CHECK_ST(edgelock_try_lock(c, rd, 0, 30000), EDGELOCK_OK);
    edgelock_lock_entry holders[4], queue[4];
    edgelock_lock_info info = info_with(0, holders, 4, queue, 4);
    CHECK_ST(edgelock_lock_info_get(c, rd, &info), EDGELOCK_OK);
    CHECK_EQ(info.state, EDGELOCK_LOCK_HELD);
    CHECK(strcmp(info.mode, "read") == 0);
    CHECK_EQ(info.holder_count, 1);
    CHECK(info.ttl_ms > 0 && info.ttl_ms <= 30000);
    char want[128];
    snprintf(want, sizeof(want), "%s:%llu", edgelock_client_id(c),
             (unsigned long long)edgelock_current_owner());
    CHECK(strcmp(holders[0].owner, want) == 0);
    CHECK_EQ(holders[0].owner_len, strlen(want));
    CHECK_EQ(holders[0].value, 1);
    CHECK_ST(edgelock_unlock(c, rd, nullptr), EDGELOCK_OK);

    // Fenced: the last token issued stays after the unlock.
    edgelock_lock fenced = make_kind(c, EDGELOCK_FENCED, "info:fenced");
    int64_t token = 0;
    CHECK_ST(edgelock_try_lock_token(c, fenced, 0, 30000, &token), EDGELOCK_OK);
    CHECK_ST(edgelock_unlock(c, fenced, nullptr), EDGELOCK_OK);
    CHECK_ST(edgelock_lock_info_get(c, fenced, &info), EDGELOCK_OK);
    CHECK_EQ(info.state, EDGELOCK_LOCK_FREE);
    CHECK_EQ(info.has_token, 1);
    CHECK_EQ(info.token, token);

    // Fair: a holder and one queued waiter with a deadline; capacity 0 for
    // holders still counts them.
    edgelock_lock fair = make_kind(c, EDGELOCK_FAIR, "info:fair");
    CHECK_ST(edgelock_try_lock(c, fair, 0, 30000), EDGELOCK_OK);
    std::thread waiter([&] {
        CHECK_ST(edgelock_try_lock(c, fair, 20000, 30000), EDGELOCK_OK);
        CHECK_ST(edgelock_unlock(c, fair, nullptr), EDGELOCK_OK);
    });
    CHECK(wait_until(10000,
                     [&] { return redis_integer(r, "LLEN %s", "redisson_lock_queue:{info:fair}") == 1; }));
    info.holders_cap = 0;
    CHECK_ST(edgelock_lock_info_get(c, fair, &info), EDGELOCK_OK);
    CHECK_EQ(info.holder_count, 1);
    CHECK_EQ(info.queue_count, 1);
    CHECK(queue[0].value > info.redis_time_ms - 60000);
    CHECK_ST(edgelock_unlock(c, fair, nullptr), EDGELOCK_OK);
    waiter.join();
    CHECK(tables_idle(c));
    edgelock_client_destroy(c);
}

TEST_CASE(info_of_a_key_of_another_type_and_bad_input)
{
    RedisServer &r = shared_server();
    edgelock_client *c = make_client(r.url());
    REQUIRE(c);
    redis_integer(r, "SET %s %s", "info:string", "x");
    edgelock_lock lk = make_lock(c, "info:string");
    edgelock_lock_info info;
    memset(&info, 0, sizeof(info));
    CHECK_ST(edgelock_lock_info_get(c, lk, &info), EDGELOCK_OK);
    CHECK_EQ(info.state, EDGELOCK_LOCK_WRONG_TYPE);
    CHECK(strcmp(info.redis_type, "string") == 0);
    CHECK_ST(edgelock_lock_info_get(c, lk, nullptr), EDGELOCK_ERR_INVALID_ARG);
    info.holders_cap = 3; // with no array
    CHECK_ST(edgelock_lock_info_get(c, lk, &info), EDGELOCK_ERR_INVALID_ARG);
    info.holders_cap = 0;
    CHECK_ST(edgelock_lock_info_get(nullptr, lk, &info), EDGELOCK_ERR_INVALID_ARG);
    edgelock_lock stale = lk;
    CHECK_ST(edgelock_lock_free(c, lk), EDGELOCK_OK);
    CHECK_ST(edgelock_lock_info_get(c, stale, &info), EDGELOCK_ERR_STALE_HANDLE);
    CHECK(tables_idle(c));
    edgelock_client_destroy(c);
}

// What a writer other than Redisson may leave: counts, tokens and deadlines
// that are not numbers, or not within int64_t, come back as
// EDGELOCK_INFO_INVALID (never clamped, never 0, never undefined behaviour);
// numbers that are merely odd come back as they are.
static int64_t value_of(const edgelock_lock_entry *e, size_t n, const char *owner)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(e[i].owner, owner) == 0)
            return e[i].value;
    return 424242;
}

TEST_CASE(info_reports_numbers_that_are_not_numbers_as_invalid)
{
    RedisServer &r = shared_server();
    edgelock_client *c = make_client(r.url());
    REQUIRE(c);
    redis_integer(r, "HSET %s %s %s %s %s %s %s %s %s", "info:bad", "gw-a:1", "abc", "gw-b:1",
                  "99999999999999999999", "gw-c:1", "-5", "gw-d:1", "7");
    redis_integer(r, "SET %s %s", "redisson_lock_token:{info:bad}", "abc");
    redis_integer(r, "RPUSH %s %s %s %s %s", "redisson_lock_queue:{info:bad}", "w1", "w2", "w3", "w4");
    redis_integer(r, "ZADD %s %s %s %s %s %s %s", "redisson_lock_timeout:{info:bad}", "inf", "w1", "1e300",
                  "w2", "-5", "w3");
    edgelock_lock lk = make_lock(c, "info:bad");
    edgelock_lock_entry holders[8], queue[8];
    edgelock_lock_info info = info_with(0, holders, 8, queue, 8);
    CHECK_ST(edgelock_lock_info_get(c, lk, &info), EDGELOCK_OK);
    CHECK_EQ(info.holder_count, 4);
    CHECK_EQ(value_of(holders, 4, "gw-a:1"), EDGELOCK_INFO_INVALID);
    CHECK_EQ(value_of(holders, 4, "gw-b:1"), EDGELOCK_INFO_INVALID); // was clamped to INT64_MAX
    CHECK_EQ(value_of(holders, 4, "gw-c:1"), -5);
    CHECK_EQ(value_of(holders, 4, "gw-d:1"), 7);
    CHECK_EQ(info.has_token, 1); // a token key is there, though not a number (was: no token)
    CHECK_EQ(info.token, EDGELOCK_INFO_INVALID);
    CHECK_EQ(info.queue_count, 4);
    CHECK_EQ(value_of(queue, 4, "w1"), EDGELOCK_INFO_INVALID); // inf
    CHECK_EQ(value_of(queue, 4, "w2"), EDGELOCK_INFO_INVALID); // beyond int64_t
    CHECK_EQ(value_of(queue, 4, "w3"), -5);
    CHECK_EQ(value_of(queue, 4, "w4"), -1); // no deadline
    edgelock_lock_free(c, lk);
    CHECK(tables_idle(c));
    edgelock_client_destroy(c);
}

TEST_CASE(url_redact_hides_credentials_and_refuses_bad_urls)
{
    char out[64];
    CHECK_ST(edgelock_url_redact("redis://u:p@ss@host:1/2", out, sizeof(out)), EDGELOCK_OK);
    CHECK(strcmp(out, "redis://***@host:1/2") == 0);
    CHECK_ST(edgelock_url_redact("redis://secret@h", out, sizeof(out)), EDGELOCK_OK);
    CHECK(strcmp(out, "redis://***@h") == 0);
    CHECK_ST(edgelock_url_redact("redis://h:6379", out, sizeof(out)), EDGELOCK_OK);
    CHECK(strcmp(out, "redis://h:6379") == 0);
    CHECK_ST(edgelock_url_redact("redis://h:6379", nullptr, 0), EDGELOCK_OK);
    CHECK_ST(edgelock_url_redact("redis://u:p@h", out, 10), EDGELOCK_OK);
    CHECK(strcmp(out, "redis://*") == 0); // cut, never the password
    CHECK_ST(edgelock_url_redact("http://h", out, sizeof(out)), EDGELOCK_ERR_INVALID_ARG);
    CHECK(out[0] == 0);
    CHECK_ST(edgelock_url_redact("redis://h:99999", out, sizeof(out)), EDGELOCK_ERR_INVALID_ARG);
    CHECK_ST(edgelock_url_redact(nullptr, out, sizeof(out)), EDGELOCK_ERR_INVALID_ARG);
}

// edgelock_scan_locks() on one Redis: every matching hash, page by page, and
// a clear status for each misuse.
TEST_CASE(scan_pages_over_the_hashes_and_refuses_bad_input)
{
    RedisServer &r = shared_server();
    edgelock_client *c = make_client(r.url());
    REQUIRE(c);
    for (int i = 0; i < 50; i++)
        redis_integer(r, "HSET scan:h%d gw-1:1 1", i);
    redis_integer(r, "SET scan:string x"); // no hash: not a candidate
    std::vector<edgelock_scan_name> page(6);
    edgelock_scan scan = {"scan:*", 0, page.data(), page.size(), 0};
    std::set<std::string> found;
    int calls = 0;
    for (;;) {
        REQUIRE(++calls < 1000);
        edgelock_status st = edgelock_scan_locks(c, &scan);
        if (st == EDGELOCK_ERR_PAGE_TOO_SMALL) {
            // A page of more than COUNT (Redis resizing its table, as on a
            // slow machine after 50 new keys): the same page, with room.
            REQUIRE(scan.count > scan.names_cap);
            page.resize(scan.count);
            scan.names = page.data();
            scan.names_cap = page.size();
            continue;
        }
        CHECK_ST(st, EDGELOCK_OK);
        REQUIRE(st == EDGELOCK_OK && scan.count <= scan.names_cap);
        for (size_t i = 0; i < scan.count; i++) {
            CHECK(strncmp(page[i].name, "scan:h", 6) == 0 && page[i].len == strlen(page[i].name));
            found.insert(page[i].name);
        }
        if (scan.cursor == 0)
            break;
    }
    CHECK(found.size() == 50); // SCAN may return a name twice, never miss one present throughout
    CHECK(calls > 1);
    scan.names_cap = 6;
    edgelock_scan bad = scan;
    bad.names = nullptr;
    CHECK_ST(edgelock_scan_locks(c, &bad), EDGELOCK_ERR_INVALID_ARG);
    bad = scan;
    bad.names_cap = 0;
    CHECK_ST(edgelock_scan_locks(c, &bad), EDGELOCK_ERR_INVALID_ARG);
    std::string long_pattern(EDGELOCK_SCAN_PATTERN_MAX + 1, '*');
    bad = scan;
    bad.pattern = long_pattern.c_str();
    CHECK_ST(edgelock_scan_locks(c, &bad), EDGELOCK_ERR_INVALID_ARG);
    bad = scan;
    bad.cursor = UINT64_MAX; // no cursor this client gave
    CHECK_ST(edgelock_scan_locks(c, &bad), EDGELOCK_ERR_INVALID_ARG);
    CHECK_ST(edgelock_scan_locks(c, nullptr), EDGELOCK_ERR_INVALID_ARG);
    CHECK(tables_idle(c));
    edgelock_client_destroy(c);
    for (int i = 0; i < 50; i++)
        redis_integer(r, "DEL scan:h%d", i);
    redis_integer(r, "DEL scan:string");
}
