// SPDX-License-Identifier: BSD-3-Clause
// Clients created by several threads at once, as the first clients of the
// process: libevent's thread support is set up exactly once (two setups at once
// used to leak a set of libevent's global locks, which LeakSanitizer reports in
// the ASan build). Its own binary, because only a process's first clients race.
#include <atomic>
#include <thread>
#include <vector>

#include "check.hpp"
#include "clients.hpp"
#include "edgelock/edgelock.h"
#include "redis_server.hpp"

TEST_CASE(first_clients_created_by_eight_threads_at_once)
{
    RedisServer &r = shared_server();
    const int kThreads = 8;
    std::atomic<int> ready{0}, created{0}, locked{0};
    std::vector<std::thread> threads;
    for (int i = 0; i < kThreads; i++) {
        threads.emplace_back([&] {
            ready++;
            while (ready.load() < kThreads) {
            } // release every thread together
            edgelock_config cfg;
            edgelock_config_init(&cfg);
            cfg.url = r.url();
            edgelock_client *c = nullptr;
            if (edgelock_client_create(&cfg, nullptr, &c) != EDGELOCK_OK)
                return;
            created++;
            edgelock_lock lk = make_lock(c, "concurrent-create");
            if (edgelock_try_lock(c, lk, 10000, 5000) == EDGELOCK_OK) {
                locked++;
                edgelock_unlock(c, lk, nullptr);
            }
            edgelock_lock_free(c, lk);
            edgelock_client_destroy(c);
        });
    }
    for (auto &t : threads)
        t.join();
    CHECK_EQ(created.load(), kThreads);
    CHECK_EQ(locked.load(), kThreads);
    CHECK_EQ(redis_integer(r, "EXISTS concurrent-create"), 0);
}
