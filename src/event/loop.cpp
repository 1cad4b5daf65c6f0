// SPDX-License-Identifier: BSD-3-Clause
// The event seam's calls (loop.hpp), dispatched to the loop's implementation.
#include "event/loop.hpp"

#include "base/time.hpp"

namespace edgelock
{

uint64_t loop_now(Loop *loop)
{
    return loop->ops->now_ms(loop);
}

bool timer_init(Timer *t, Loop *loop, TimerFn fn, void *arg)
{
    t->loop = loop;
    t->fn = fn;
    t->arg = arg;
    return loop->ops->timer_init(t);
}

void timer_arm(Timer *t, uint64_t delay_ms)
{
    t->due_ms = add_ms(loop_now(t->loop), delay_ms);
    t->loop->ops->timer_arm(t, delay_ms);
}

void timer_expired(Timer *t)
{
    uint64_t left = ms_left(t->due_ms, loop_now(t->loop));
    if (left > 0)
        t->loop->ops->timer_arm(t, left);
    else
        t->fn(t->arg, t);
}

void timer_cancel(Timer *t)
{
    if (t->loop)
        t->loop->ops->timer_cancel(t);
}

void timer_fini(Timer *t)
{
    if (t->loop)
        t->loop->ops->timer_fini(t);
    t->loop = nullptr;
}

} // namespace edgelock
