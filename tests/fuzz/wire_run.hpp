// SPDX-License-Identifier: BSD-3-Clause
// The run of fuzz_wire and fuzz_tls: a client of the public API on a
// libevent base, hiredis reading real sockets, against the server of
// server.hpp (one Redis, a cluster or a sentinel deployment, by the input's
// first byte; with fuzz_tls over TLS), and short waits in real time so that
// timeouts, renewals and reconnects run. fuzz_engine covers the engine's
// logic on the fake link; this covers what lies under it: hiredis's reader
// and edgelock's guard on it (reader_guard.cpp), the link and its events
// (link_hiredis.cpp, link_events.cpp), TLS (tls.cpp), and the connections'
// setup and drops. What must hold whatever the bytes: no crash, no memory
// error or leak (ASan, UBSan), no SIGPIPE on a plain connection with hiredis
// 1.x (the header's promise), every call that said OK calls back exactly
// once (a failed one with value 0), and once the client is destroyed every
// call has called back. FUZZ_TRACE=1 in the environment prints each step and
// the library's log.
#pragma once

#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <deque>
#include <string>

#include "calls.hpp"
#include "edgelock/edgelock.h"
#include "replies.hpp"
#include "server.hpp"

namespace fuzz
{

struct WireRun : Server {
    event_base *base = nullptr;
    edgelock_client *c = nullptr;
    std::deque<Call> calls; // addresses stay put; outlives the client
    long waited_us = 0;
    static constexpr long kMaxWaitUs = 50000;
    edgelock_lock locks[4] = {};

    explicit WireRun(uint8_t tweaks)
    {
        base = event_base_new();
        edgelock_config cfg;
        std::string url;
        configure(&cfg, &url, tweaks);
        cfg.client_id = "wire";
        if (!base || edgelock_client_create(&cfg, base, &c) != EDGELOCK_OK)
            c = nullptr;
    }

    ~WireRun()
    {
        // The client goes first: every call still pending ends (SHUTDOWN).
        if (c) {
            trace("destroy\n");
            edgelock_client_destroy(c);
            for (int i = 0; i < 3; i++)
                event_base_loop(base, EVLOOP_NONBLOCK);
        }
        all_called_back(calls);
        if (base)
            event_base_free(base);
    }

    // The loop runs what is ready, the server takes what was written.
    void pump() override
    {
        for (int i = 0; i < 3; i++) {
            event_base_loop(base, EVLOOP_NONBLOCK);
            accept_all();
            read_all();
        }
    }

    void start(bool answer_setup)
    {
        pump();
        if (answer_setup)
            answer_all(4);
    }

    void finish() { pump(); }

    Call *call(int op)
    {
        calls.emplace_back();
        calls.back().op = op;
        return &calls.back();
    }

    void step(Input &s)
    {
        uint8_t op = s.byte();
        uint8_t which = s.byte();
        edgelock_lock lk = locks[which % 4];
        uint64_t owner = 1 + which / 4 % 3;
        static const int64_t kWaits[] = {0, 1, 20, 1000};
        static const int64_t kLeases[] = {EDGELOCK_LEASE_WATCHDOG, 1, 100, 10000};
        trace("op %d lock %d owner %llu\n", op % 16, which % 4, (unsigned long long)owner);
        if (Server::step(op % 16, s)) {
            pump();
            return;
        }
        switch (op % 16) {
        case 0: { // a handle
            edgelock_lock out;
            if (new_handle(c, s.byte(), &out) == EDGELOCK_OK)
                locks[which % 4] = out;
            break;
        }
        case 1: edgelock_lock_free(c, lk); break;
        case 2:
        case 3: {
            Call *cl = call(2);
            uint8_t w = s.byte();
            returned(cl, edgelock_lock_async(c, lk, owner, kWaits[w % 4], kLeases[w / 4 % 4], on_result, cl));
            break;
        }
        case 4: {
            Call *cl = call(4);
            returned(cl, edgelock_unlock_async(c, lk, owner, on_result, cl));
            break;
        }
        case 5: {
            Call *cl = call(5);
            switch (s.byte() % 5) {
            case 0: returned(cl, edgelock_is_locked_async(c, lk, on_result, cl)); break;
            case 1: returned(cl, edgelock_force_unlock_async(c, lk, on_result, cl)); break;
            case 2: returned(cl, edgelock_remaining_ttl_async(c, lk, on_result, cl)); break;
            case 3:
                cl->info.holders = cl->entries;
                cl->info.holders_cap = 2;
                cl->info.queue = cl->entries + 2;
                cl->info.queue_cap = 2;
                returned(cl, edgelock_lock_info_async(c, lk, &cl->info, on_result, cl));
                break;
            default:
                memset(&cl->scan, 0, sizeof(cl->scan));
                cl->scan.names = cl->names;
                cl->scan.names_cap = 4;
                returned(cl, edgelock_scan_locks_async(c, &cl->scan, on_result, cl));
                break;
            }
            break;
        }
        case 6: {
            Call *cl = call(6);
            uint8_t w = s.byte();
            returned(cl,
                     w % 2 ? edgelock_semaphore_acquire_async(c, lk, owner, 1 + w / 2 % 2, kWaits[w / 4 % 4],
                                                              EDGELOCK_LEASE_WATCHDOG, on_result, cl)
                           : edgelock_latch_await_async(c, lk, owner, kWaits[w / 4 % 4], on_result, cl));
            break;
        }
        case 7: edgelock_cancel(c, owner); break;
        case 8: {
            int64_t left;
            edgelock_lock_valid(c, lk, owner, &left);
            edgelock_stats st;
            edgelock_client_stats(c, &st);
            break;
        }
        case 14: { // real time passes: timeouts, renewals, reconnects
            struct timeval tv = {0, (suseconds_t)(1000 * (1 + s.byte() % 8))};
            if (waited_us + tv.tv_usec > kMaxWaitUs)
                break; // the input's time is spent: the corpus replays in seconds
            waited_us += tv.tv_usec;
            trace("  wait %ld us\n", (long)tv.tv_usec);
            event_base_loopexit(base, &tv);
            event_base_dispatch(base);
            break;
        }
        default: break; // the loop only
        }
        pump();
    }
};

} // namespace fuzz
