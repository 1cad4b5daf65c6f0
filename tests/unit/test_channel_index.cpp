// SPDX-License-Identifier: BSD-3-Clause
// The channel indexes: subscriptions found by name through a fixed table of
// chains (redis/pubsub.cpp), and each subscription's waiters on a list of
// their own (locks/acquire.cpp), so that a message costs the same with 2 or
// 2,000 channels and waiters. Checked against full scans of the tables.
#include <stdlib.h>

#include <string>
#include <vector>

#include "check.hpp"
#include "fake/fake_engine.hpp"
#include "fake/harness.hpp"
#include "locks/acquire.hpp"
#include "redis/pubsub.hpp"

using namespace edgelock;
using namespace fake;

namespace
{

std::string channel_of(const std::string &lock)
{
    return "redisson_lock__channel:{" + lock + "}";
}

std::string message(const std::string &channel, const char *text)
{
    return resp_array({resp_bulk("message"), resp_bulk(channel), resp_bulk(text)});
}

// Every list and chain agrees with a full scan of the tables: a waiter is on
// its subscription's list exactly when it has joined one, each list's links
// run both ways, and each subscription in use is on its name's chain.
void check_indexes(Client *c)
{
    PubSub *ps = &c->pubsub;
    uint32_t listed = 0;
    for (uint32_t s = 0; s < ps->subs.capacity(); s++) {
        uint32_t prev = kNoIndex;
        for (uint32_t i = c->channel_waiters[s]; i != kNoIndex; i = c->waiters.get(i)->next_on_channel) {
            Waiter *w = c->waiters.get(i);
            REQUIRE(w);
            CHECK_EQ(w->sub_index, s);
            CHECK_EQ(w->prev_on_channel, prev);
            CHECK(!w->wake_due);
            prev = i;
            REQUIRE(++listed <= c->waiters.used()); // and no cycle
        }
        if (!ps->subs.get(s))
            CHECK_EQ(c->channel_waiters[s], kNoIndex);
    }
    uint32_t joined = 0;
    for (uint32_t i = 0; i < c->waiters.capacity(); i++) {
        Waiter *w = c->waiters.get(i);
        if (w && w->sub_index != kNoIndex) {
            joined++;
            CHECK(ps->subs.get(w->sub_index) != nullptr);
        }
    }
    CHECK_EQ(listed, joined);
    uint32_t chained = 0;
    for (uint32_t b = 0; b < ps->subs.capacity(); b++)
        for (uint32_t i = ps->buckets[b]; i != kNoSub; i = ps->subs.get(i)->next_in_bucket) {
            REQUIRE(ps->subs.get(i));
            REQUIRE(++chained <= ps->subs.used());
        }
    CHECK_EQ(chained, ps->subs.used());
    for (uint32_t i = 0; i < ps->subs.capacity(); i++)
        if (Subscription *s = ps->subs.get(i))
            CHECK_EQ(pubsub_find(ps, ps->names + (size_t)i * ps->name_cap, s->len), i);
}

// The sub connection's oldest (UN)SUBSCRIBE answered as Redis would.
bool confirm_oldest(Harness &h)
{
    FakeLink::Conn &sub = h.sub();
    if (sub.pending.empty())
        return false;
    std::vector<std::string> a = resp_args(sub.pending.front().bytes);
    std::string kind = a[0] == "SUBSCRIBE" ? "subscribe" : "unsubscribe";
    h.link.reply(&h.c->sub_conn, resp_array({resp_bulk(kind), resp_bulk(a[1]), ":1\r\n"}));
    return true;
}

} // namespace

// 2,000 waiters, each on a lock of its own: a message on a channel wakes the
// waiter of that channel and no other, and nothing is left when all are done.
TEST_CASE(each_of_two_thousand_channels_wakes_its_own_waiter)
{
    const uint32_t n = 2000;
    std::vector<Result> r(n); // outlives the client: its shutdown answers calls still waiting
    Harness h([](edgelock_config *cfg) {
        cfg->max_locks = cfg->max_holds = cfg->max_waiters = cfg->max_subscriptions = 2000;
    });
    REQUIRE(h.c);
    for (uint32_t i = 0; i < n; i++) {
        edgelock_lock lk = h.lock(("k" + std::to_string(i)).c_str());
        REQUIRE(lk.id != 0);
        REQUIRE(acquire_start(h.c, lk, 100 + i, 600000, 10000, record, &r[i]) == EDGELOCK_OK);
        h.reply(":30000\r\n"); // held: it subscribes
        REQUIRE(confirm_oldest(h));
        h.reply(":29000\r\n"); // the attempt after subscribing: still held
    }
    CHECK_EQ(h.c->pubsub.subs.used(), n);
    check_indexes(h.c);
    for (uint32_t k = 0; k < n; k++) {
        uint32_t i = (uint32_t)((uint64_t)k * 7919 % n);
        size_t sent = h.cmd().log.size();
        h.link.push(&h.c->sub_conn, message(channel_of("k" + std::to_string(i)), "0"));
        REQUIRE(h.cmd().log.size() == sent + 1); // one attempt, by that channel's waiter
        CHECK(h.last_cmd()[5] == "unit:" + std::to_string(100 + i));
        h.reply(kNil);
        CHECK_EQ(r[i].calls, 1);
        CHECK_ST(r[i].st, EDGELOCK_OK);
        if (k % 250 == 0)
            check_indexes(h.c);
    }
    CHECK_EQ(h.c->waiters.used(), 0);
    h.loop.advance(0); // the channels are left
    while (confirm_oldest(h)) {
    }
    CHECK_EQ(h.c->pubsub.subs.used(), 0);
    check_indexes(h.c);
    for (uint32_t b = 0; b < n; b++) {
        CHECK_EQ(h.c->pubsub.buckets[b], kNoSub);
        CHECK_EQ(h.c->channel_waiters[b], kNoIndex);
    }
}

// Waiters come and go on a dozen locks through every path that adds or takes
// one (held replies, subscriptions confirmed, unlock and read-unlock
// messages, grants, cancels, deadlines, the subscription table full), and
// after every step the indexes match the tables.
TEST_CASE(the_indexes_match_the_tables_through_a_random_walk)
{
    std::vector<Result> r(4000); // outlives the client: its shutdown answers calls still waiting
    std::vector<edgelock_status> start_st(r.size());
    Harness h([](edgelock_config *cfg) {
        cfg->max_waiters = 32;
        cfg->max_subscriptions = 4; // fewer than the locks: joins are refused too
        cfg->max_holds = 4000;      // grants are kept: every owner is new
    });
    REQUIRE(h.c);
    srand(20261126);
    const int kLocks = 12;
    std::vector<edgelock_lock> locks;
    for (int i = 0; i < kLocks; i++)
        locks.push_back(h.lock(("w" + std::to_string(i)).c_str()));
    uint32_t started = 0;
    for (int step = 0; step < 6000; step++) {
        int lock = rand() % kLocks;
        switch (rand() % 10) {
        case 0:
        case 1:
            if (started < r.size()) {
                start_st[started] = acquire_start(h.c, locks[lock], 1000 + started, 200 + rand() % 5000,
                                                  10000, record, &r[started]);
                started++;
            }
            break;
        case 2:
        case 3:
        case 8:
        case 9:
            if (!h.cmd().pending.empty())
                h.reply(rand() % 6 == 0 ? kNil : ":5000\r\n"); // granted, or held for 5 s more
            break;
        case 4: confirm_oldest(h); break;
        case 5:
            h.link.push(&h.c->sub_conn,
                        message(channel_of("w" + std::to_string(lock)), rand() % 3 ? "0" : "1"));
            break;
        case 6:
            if (started > 0)
                acquire_cancel(h.c, 1000 + rand() % started);
            break;
        case 7: h.loop.advance(rand() % 1500); break;
        }
        check_indexes(h.c);
    }
    for (uint32_t i = 0; i < started; i++) {
        CHECK(r[i].calls <= 1);
        acquire_cancel(h.c, 1000 + i);
    }
    while (!h.cmd().pending.empty())
        h.reply(":5000\r\n");
    h.loop.advance(0);
    while (confirm_oldest(h)) {
    }
    CHECK_EQ(h.c->waiters.used(), 0);
    CHECK_EQ(h.c->pubsub.subs.used(), 0);
    check_indexes(h.c);
    for (uint32_t i = 0; i < started; i++)
        CHECK_EQ(r[i].calls, start_st[i] == EDGELOCK_OK ? 1 : 0); // exactly once when started
}
