// SPDX-License-Identifier: BSD-3-Clause
// A libevent base driven by the test thread, for event-loop mode clients.
// A persistent 5 ms tick keeps EVLOOP_ONCE from blocking forever, so every
// wait has a deadline. Creating it allocates; running it does not.
#pragma once

#include <event2/event.h>
#include <stdint.h>

#include "redis_server.hpp"

class EventLoop
{
public:
    EventLoop()
    {
        base_ = event_base_new();
        if (base_)
            tick_ = event_new(base_, -1, EV_PERSIST, on_tick, nullptr);
        if (tick_) {
            struct timeval tv = {0, 5000};
            event_add(tick_, &tv);
        }
    }
    ~EventLoop()
    {
        if (tick_)
            event_free(tick_);
        if (base_)
            event_base_free(base_);
    }
    EventLoop(const EventLoop &) = delete;
    EventLoop &operator=(const EventLoop &) = delete;

    struct event_base *base() const { return base_; }
    bool ok() const { return base_ && tick_; }

    // Runs the loop until pred() holds; false if timeout_ms passed first.
    template <typename Pred> bool run_until(Pred pred, unsigned timeout_ms)
    {
        uint64_t deadline = mono_ms() + timeout_ms;
        while (!pred()) {
            if (mono_ms() >= deadline)
                return false;
            event_base_loop(base_, EVLOOP_ONCE);
        }
        return true;
    }
    void run_for(unsigned ms)
    {
        run_until([] { return false; }, ms);
    }

private:
    static void on_tick(evutil_socket_t, short, void *) {}
    struct event_base *base_ = nullptr;
    struct event *tick_ = nullptr;
};
