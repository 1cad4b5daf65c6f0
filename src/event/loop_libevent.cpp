// SPDX-License-Identifier: BSD-3-Clause
// The event seam over libevent: the port's monotonic clock and evtimers.
#include <event2/event.h>

#include "event/loop.hpp"
#include "port.h"

namespace edgelock
{

static uint64_t now_ms(Loop *)
{
    return edgelock_port_now_ms();
}

static void fire(evutil_socket_t, short, void *arg)
{
    timer_expired(static_cast<Timer *>(arg));
}

static struct event *ev_of(Timer *t)
{
    return static_cast<struct event *>(t->impl);
}

static bool init(Timer *t)
{
    t->impl = event_new(t->loop->base, -1, 0, fire, t);
    return t->impl != nullptr;
}

static void arm(Timer *t, uint64_t delay_ms)
{
    // libevent's timeval: keep the seconds in range on 32-bit time_t.
    if (delay_ms > 86400000ull * 365)
        delay_ms = 86400000ull * 365;
    struct timeval tv;
    tv.tv_sec = (time_t)(delay_ms / 1000);
    tv.tv_usec = (suseconds_t)((delay_ms % 1000) * 1000);
    event_add(ev_of(t), &tv);
}

static void cancel(Timer *t)
{
    if (t->impl)
        event_del(ev_of(t));
}

static void fini(Timer *t)
{
    if (t->impl)
        event_free(ev_of(t));
    t->impl = nullptr;
}

static const LoopOps kLibeventOps = {now_ms, init, arm, cancel, fini};

void loop_init_libevent(Loop *loop, struct event_base *base)
{
    loop->ops = &kLibeventOps;
    loop->base = base;
    loop->impl = nullptr;
}

uint64_t loop_timer_bytes(const Loop *loop)
{
    return loop->ops == &kLibeventOps ? event_get_struct_event_size() : 0;
}

} // namespace edgelock
