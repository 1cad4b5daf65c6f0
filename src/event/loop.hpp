// SPDX-License-Identifier: BSD-3-Clause
// The event seam: a clock and one-shot timers, which is all the engine needs
// from an event loop besides sockets (redis/link.hpp). Each module owns its
// timers: it embeds a Timer, initialises it once with its own callback, and
// arms and cancels it itself.
//
// Two implementations: libevent (loop_libevent.cpp) for real use, and a fake
// in the unit tests whose clock only moves when the test says so, so timeouts,
// backoff and the watchdog run in microseconds without sleeping.
#pragma once

#include <stdint.h>

struct event;
struct event_base;

namespace edgelock
{

struct Loop;
struct Timer;

// arg: as given to timer_init(); t: the timer that fired (one callback may
// serve a table of timers).
using TimerFn = void (*)(void *arg, Timer *t);

struct LoopOps {
    uint64_t (*now_ms)(Loop *loop);                 // monotonic; only differences matter
    bool (*timer_init)(Timer *t);                   // allocate what the timer needs; false: no memory
    void (*timer_arm)(Timer *t, uint64_t delay_ms); // (re)arm: fires once after delay_ms
    void (*timer_cancel)(Timer *t);                 // no-op when not armed
    void (*timer_fini)(Timer *t);                   // cancel and release
};

struct LogSink;

struct Loop {
    const LoopOps *ops;
    struct event_base *base; // libevent: the base timers (and connections) run on
    void *impl;              // the fake's state
    const LogSink *log;      // where what runs on this loop logs (base/log.hpp); null: the port's
};

struct Timer {
    Loop *loop;
    TimerFn fn;
    void *arg;
    void *impl;      // the implementation's: libevent's struct event, the fake's record
    uint64_t due_ms; // by loop_now(): fn runs no earlier (timer_expired)
};

// A Loop over a libevent base (the caller's or the client's own).
void loop_init_libevent(Loop *loop, struct event_base *base);
// Bytes one libevent timer costs (for the footprint figure).
uint64_t loop_timer_bytes(const Loop *loop);

uint64_t loop_now(Loop *loop);
bool timer_init(Timer *t, Loop *loop, TimerFn fn, void *arg);
void timer_arm(Timer *t, uint64_t delay_ms); // (re)arm: fires once, delay_ms or more later by loop_now()
void timer_cancel(Timer *t);                 // no-op when not armed or never initialised
void timer_fini(Timer *t);                   // safe on a timer never initialised (zeroed)
// For the implementations: their clock says t is due. It may run behind
// loop_now() (libevent's CLOCK_MONOTONIC_COARSE on a base without
// EVENT_BASE_FLAG_PRECISE_TIMER, or its time cached per loop turn), so a
// timer not yet due by loop_now() is armed again for the rest; fn runs only
// when it is.
void timer_expired(Timer *t);

} // namespace edgelock
