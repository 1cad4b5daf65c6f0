// SPDX-License-Identifier: BSD-3-Clause
// hiredis's event hooks (ac->ev) on libevent, in place of hiredis's own
// libevent adapter, for two reasons measured in `make bench`'s async runs:
//
// - Interest changes cost one epoll_ctl, not two. hiredis 1.x's adapter keeps
//   one event for both directions, so each change deletes the fd from epoll and
//   adds it again (an allocation in the kernel each time): four calls per
//   command for the write interest alone. Here read and write are two events
//   on the fd, and libevent turns adding or removing one into a single
//   EPOLL_CTL_MOD (hiredis 0.14's adapter did the same).
// - What reply callbacks send goes out when the read is done, in one write.
//   A command sent from inside a callback (the unlock latch's DEL, a caller's
//   next lock from its unlock callback) would otherwise register the write
//   event and leave at the loop's next turn, a turn and two epoll_ctl later.
//
// State: one small block per connection attempt (as hiredis's own adapter
// allocates), freed when hiredis frees the context. Not a slot in Connection:
// a context freed from inside its own callback goes only when that callback
// returns, after its connection may have opened the next one (a sentinel's
// answer opens the master's link at once).
#include <event2/event.h>
#include <hiredis/async.h>

#include "port.h"
#include "redis/link_events.hpp"

namespace edgelock
{

struct LinkEvents {
    redisAsyncContext *ac;
    struct event *read_ev;
    struct event *write_ev;
    bool reading;
    bool writing;
    bool in_read;    // inside redisAsyncHandleRead: a write waits for its end
    bool write_due;  // asked for while in_read
    bool *freed_out; // set when hiredis frees the context inside a handler
};

// Runs one hiredis handler; false when it freed the context (and e with it).
static bool run_handler(LinkEvents *e, void (*handle)(redisAsyncContext *))
{
    bool freed = false;
    e->freed_out = &freed;
    handle(e->ac);
    if (freed)
        return false;
    e->freed_out = nullptr;
    return true;
}

static void on_readable(evutil_socket_t, short, void *arg)
{
    auto *e = static_cast<LinkEvents *>(arg);
    e->in_read = true;
    if (!run_handler(e, redisAsyncHandleRead))
        return;
    e->in_read = false;
    if (e->write_due) {
        e->write_due = false;
        // As the write event would, now: hiredis writes what it can and asks
        // for the write event again only for what the socket did not take.
        run_handler(e, redisAsyncHandleWrite);
    }
}

static void on_writable(evutil_socket_t, short, void *arg)
{
    run_handler(static_cast<LinkEvents *>(arg), redisAsyncHandleWrite);
}

static void add_read(void *data)
{
    auto *e = static_cast<LinkEvents *>(data);
    if (!e->reading && event_add(e->read_ev, nullptr) == 0)
        e->reading = true;
}

static void del_read(void *data)
{
    auto *e = static_cast<LinkEvents *>(data);
    if (e->reading)
        event_del(e->read_ev);
    e->reading = false;
}

static void add_write(void *data)
{
    auto *e = static_cast<LinkEvents *>(data);
    if (e->in_read) {
        e->write_due = true;
        return;
    }
    if (!e->writing && event_add(e->write_ev, nullptr) == 0)
        e->writing = true;
}

static void del_write(void *data)
{
    auto *e = static_cast<LinkEvents *>(data);
    e->write_due = false;
    if (e->writing)
        event_del(e->write_ev);
    e->writing = false;
}

static void cleanup(void *data)
{
    auto *e = static_cast<LinkEvents *>(data);
    if (!e)
        return;
    if (e->freed_out)
        *e->freed_out = true;
    if (e->read_ev)
        event_free(e->read_ev);
    if (e->write_ev)
        event_free(e->write_ev);
    e->ac->ev.data = nullptr;
    edgelock_port_free(e);
}

bool link_events_attach(redisAsyncContext *ac, struct event_base *base)
{
    if (ac->ev.data)
        return false;
    auto *e = static_cast<LinkEvents *>(edgelock_port_alloc(sizeof(LinkEvents)));
    if (!e)
        return false;
    *e = LinkEvents{};
    e->ac = ac;
    e->read_ev = event_new(base, ac->c.fd, EV_READ | EV_PERSIST, on_readable, e);
    e->write_ev = event_new(base, ac->c.fd, EV_WRITE | EV_PERSIST, on_writable, e);
    ac->ev.data = e;
    ac->ev.cleanup = cleanup;
    if (!e->read_ev || !e->write_ev) {
        cleanup(e); // hiredis calls no hook of a context without them
        ac->ev.cleanup = nullptr;
        return false;
    }
    ac->ev.addRead = add_read;
    ac->ev.delRead = del_read;
    ac->ev.addWrite = add_write;
    ac->ev.delWrite = del_write;
    return true;
}

} // namespace edgelock
