// SPDX-License-Identifier: BSD-3-Clause
// The blocking face under the hostile server of server.hpp: a client that
// owns its loop, two threads making the blocking calls the input hands
// them, and this thread playing the server (one Redis, a cluster or a
// sentinel deployment, by the input's first byte) and making the local
// calls (handles made and freed, cancels, lock_valid, stats) while they
// wait. It reaches what fuzz_wire cannot: the leader/follower hand-over of
// the loop between callers and the client's own loop thread, a caller's
// wake-up, a cancel from another thread, handles freed under a call, and
// MultiLock and RedLock over the client's handles (its pins). The
// threads make its runs differ from one replay to the next, so a finding is
// read from its trace (FUZZ_TRACE=1) more than replayed. What must hold
// whatever the bytes: no crash, no memory error or leak (ASan, UBSan), no
// SIGPIPE with hiredis 1.x, every status one the header names, and every
// blocking call returns (within 20 s of the input's end, with the server
// answering what it reads by then, against waits of at most 20 ms and
// command timeouts of at most 40 ms).
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <condition_variable>
#include <deque>
#include <mutex>
#include <string>
#include <thread>

#include "edgelock/edgelock.h"
#include "replies.hpp"
#include "server.hpp"

using namespace fuzz;

namespace
{

[[noreturn]] void fail(const char *what, int op, edgelock_status st)
{
    fprintf(stderr, "fuzz: %s (op %d, status %s)\n", what, op, edgelock_status_str(st));
    abort();
}

void check(int op, edgelock_status st)
{
    trace("  op %d returned %s\n", op, edgelock_status_str(st));
    if (strcmp(edgelock_status_str(st), "unknown status") == 0)
        fail("a status that is not in the header", op, st);
}

// One blocking call, as the input asks it.
struct Op {
    int kind = 0;
    edgelock_lock lock = {};
    edgelock_lock other = {}; // a composite's second member
    uint8_t arg = 0;
};

// A thread that makes the blocking calls handed to it, one at a time.
struct Worker {
    edgelock_client *c = nullptr;
    std::mutex m;
    std::condition_variable cv;
    std::deque<Op> ops;
    bool busy = false, stop = false;
    uint64_t owner = 0; // its edgelock_current_owner(), for cancels
    std::thread t;

    void start(edgelock_client *client)
    {
        c = client;
        t = std::thread([this] { run(); });
        std::unique_lock<std::mutex> lk(m);
        cv.wait(lk, [this] { return owner != 0; });
    }

    void run()
    {
        {
            std::lock_guard<std::mutex> lk(m);
            owner = edgelock_current_owner();
        }
        cv.notify_all();
        for (;;) {
            Op op;
            {
                std::unique_lock<std::mutex> lk(m);
                cv.wait(lk, [this] { return stop || !ops.empty(); });
                if (ops.empty())
                    return;
                op = ops.front();
                ops.pop_front();
                busy = true;
            }
            call(op);
            {
                std::lock_guard<std::mutex> lk(m);
                busy = false;
            }
            cv.notify_all();
        }
    }

    // Handed over unless three wait already (the input cannot pile up calls
    // that outlast it).
    void give(const Op &op)
    {
        {
            std::lock_guard<std::mutex> lk(m);
            if (ops.size() >= 3)
                return;
            ops.push_back(op);
        }
        cv.notify_all();
    }

    bool idle()
    {
        std::lock_guard<std::mutex> lk(m);
        return ops.empty() && !busy;
    }

    void join()
    {
        {
            std::lock_guard<std::mutex> lk(m);
            stop = true;
        }
        cv.notify_all();
        t.join();
    }

    void call(const Op &op)
    {
        static const int64_t kWaits[] = {0, 1, 20};
        static const int64_t kLeases[] = {EDGELOCK_LEASE_WATCHDOG, 1, 100, 10000};
        int64_t wait = kWaits[op.arg % 3], lease = kLeases[op.arg / 4 % 4];
        int flag = 0;
        int64_t value = 0;
        trace("  thread %llu: op %d\n", (unsigned long long)owner, op.kind);
        switch (op.kind) {
        case 0: check(op.kind, edgelock_try_lock(c, op.lock, wait, lease)); break;
        case 1: check(op.kind, edgelock_try_lock_token(c, op.lock, wait, lease, &value)); break;
        case 2: check(op.kind, edgelock_unlock(c, op.lock, op.arg & 64 ? nullptr : &flag)); break;
        case 3: check(op.kind, edgelock_is_locked(c, op.lock, &flag)); break;
        case 4: check(op.kind, edgelock_force_unlock(c, op.lock, &flag)); break;
        case 5: check(op.kind, edgelock_remaining_ttl(c, op.lock, &value)); break;
        case 6: check(op.kind, edgelock_hold_count(c, op.lock, &value)); break;
        case 7: check(op.kind, edgelock_is_held_by_current_thread(c, op.lock, &flag)); break;
        case 8:
            check(op.kind, edgelock_semaphore_try_acquire(c, op.lock, 1 + op.arg / 64 % 2, wait, lease));
            break;
        case 9: check(op.kind, edgelock_latch_await(c, op.lock, wait)); break;
        case 12:
        case 13: { // a MultiLock of two handles (one name twice is INVALID_ARG)
            edgelock_member m[2] = {{c, op.lock}, {c, op.other}};
            check(op.kind,
                  op.kind == 12 ? edgelock_multi_try_lock(m, 2, wait, lease) : edgelock_multi_unlock(m, 2));
            break;
        }
        case 14:
        case 15: { // a RedLock of one server: a client twice is INVALID_ARG
            edgelock_member m[2] = {{c, op.lock}, {c, op.other}};
            size_t n = 1 + op.arg / 128;
            check(op.kind, op.kind == 14 ? edgelock_redlock_try_lock(m, n, wait, lease, &value)
                                         : edgelock_redlock_unlock(m, n));
            break;
        }
        case 10: {
            edgelock_lock_entry entries[4];
            edgelock_lock_info info;
            memset(&info, 0, sizeof(info));
            info.holders = entries;
            info.holders_cap = 2;
            info.queue = entries + 2;
            info.queue_cap = 2;
            check(op.kind, edgelock_lock_info_get(c, op.lock, &info));
            break;
        }
        default: {
            edgelock_scan_name names[4];
            edgelock_scan scan;
            memset(&scan, 0, sizeof(scan));
            scan.names = names;
            scan.names_cap = 4;
            check(op.kind, edgelock_scan_locks(c, &scan));
            break;
        }
        }
    }
};

void sleep_us(long us)
{
    struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
    nanosleep(&ts, nullptr);
}

struct Run : Server {
    edgelock_client *c = nullptr;
    Worker workers[2];
    edgelock_lock locks[4] = {};
    long waited_us = 0;
    static constexpr long kMaxWaitUs = 50000;

    explicit Run(uint8_t tweaks)
    {
        edgelock_config cfg;
        std::string url;
        configure(&cfg, &url, tweaks);
        cfg.client_id = "blocking";
        if (edgelock_client_create(&cfg, nullptr, &c) != EDGELOCK_OK) {
            c = nullptr;
            return;
        }
        for (Worker &w : workers)
            w.start(c);
    }

    ~Run()
    {
        if (!c)
            return;
        // The server answers what it reads until every call has returned.
        for (long waited = 0; !(workers[0].idle() && workers[1].idle()); waited += 500) {
            if (waited > 20L * 1000 * 1000) {
                fprintf(stderr, "fuzz: a blocking call did not return within 20 s\n");
                abort();
            }
            answer_all(1);
            pump();
            sleep_us(400);
        }
        for (Worker &w : workers)
            w.join();
        trace("destroy\n");
        edgelock_client_destroy(c);
    }

    // The client's threads get a moment; the server takes what was written.
    void pump() override
    {
        sleep_us(100);
        accept_all();
        read_all();
    }

    // The connections' setup answered as Redis would, once the loop thread
    // has made them.
    void start(bool answer_setup)
    {
        for (int i = 0; answer_setup && i < 20; i++) {
            pump();
            answer_all(2);
        }
    }

    void finish() {} // the destructor waits for the calls

    void step(Input &s)
    {
        uint8_t op = s.byte();
        uint8_t which = s.byte();
        edgelock_lock lk = locks[which % 4];
        Worker &w = workers[which / 4 % 2];
        trace("op %d lock %d\n", op % 16, which % 4);
        if (Server::step(op % 16, s)) {
            pump();
            return;
        }
        switch (op % 16) {
        case 0: { // a handle, made while calls run
            edgelock_lock out;
            edgelock_status st = new_handle(c, s.byte(), &out);
            check(100, st);
            if (st == EDGELOCK_OK)
                locks[which % 4] = out;
            break;
        }
        case 1: check(101, edgelock_lock_free(c, lk)); break; // perhaps under a call
        case 2:
        case 3:
        case 4:
        case 5:
        case 6: {
            Op o;
            uint8_t k = s.byte();
            o.kind = op % 16 == 2 || op % 16 == 3 ? k % 2 : k % 16;
            o.lock = lk;
            o.other = locks[(which + 1) % 4];
            o.arg = s.byte();
            w.give(o);
            break;
        }
        case 7: check(107, edgelock_cancel(c, w.owner)); break;
        case 8: {
            int64_t left;
            check(108, edgelock_lock_valid(c, lk, w.owner, &left));
            edgelock_stats st;
            check(108, edgelock_client_stats(c, &st));
            break;
        }
        case 14: { // real time passes: timeouts, renewals, reconnects
            long us = 1000 * (1 + s.byte() % 8);
            if (waited_us + us > kMaxWaitUs)
                break;
            waited_us += us;
            trace("  wait %ld us\n", us);
            sleep_us(us);
            break;
        }
        default: break;
        }
        pump();
    }
};

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return run_input<Run>(data, size);
}
