// SPDX-License-Identifier: BSD-3-Clause
// hiredis's event hooks (ac->ev) on libevent, in place of hiredis's own
// libevent adapter. hiredis 1.x's adapter keeps one event for both directions,
// so each change of interest deletes the fd from epoll and adds it again (an
// allocation in the kernel each time): four epoll_ctl calls per command for
// the write interest alone. Here read and write are two events on the fd, and
// libevent turns adding or removing one into a single EPOLL_CTL_MOD (hiredis
// 0.14's adapter did the same).
//
// On the application's loop (flush_at_pass_end) a command not written at
// once does not register the write event at all: a third event, activated
// without a system call, writes the buffer when the loop has run the
// callbacks due in this pass, so what they queued goes in one write with no
// epoll_ctl and no extra poll. Only a socket that does not take it all, or a
// write error, falls back to the write event, whose hiredis handler writes
// the rest or reports the error. Writing as soon as each read is done was
// tried and measured: a client's relock from its unlock callback then reached
// Redis ahead of the woken waiters' retries read in the same pass, and the
// contended rate fell (BENCHMARKS.md).
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
#include "redis/tls.hpp"

namespace edgelock
{

struct LinkEvents {
    redisAsyncContext *ac;
    bool tls; // OpenSSL's thread error queue emptied before each read and write
    struct event *read_ev;
    struct event *write_ev;
    struct event *flush_ev; // flush_at_pass_end only; never added, activated by add_write
};

// One hiredis handler per callback: it may free the context (and this block
// with it), so nothing touches either after it.
static void on_readable(evutil_socket_t, short, void *arg)
{
    auto *e = static_cast<LinkEvents *>(arg);
    if (e->tls)
        tls_clear_thread_errors();
    redisAsyncHandleRead(e->ac);
}

static void on_writable(evutil_socket_t, short, void *arg)
{
    auto *e = static_cast<LinkEvents *>(arg);
    if (e->tls)
        tls_clear_thread_errors();
    redisAsyncHandleWrite(e->ac);
}

// libevent keeps whether each event is added: adding an added event or
// deleting one that is not changes nothing and calls no epoll_ctl.
static void add_read(void *data)
{
    event_add(static_cast<LinkEvents *>(data)->read_ev, nullptr);
}

static void del_read(void *data)
{
    event_del(static_cast<LinkEvents *>(data)->read_ev);
}

// Until connected, the write event is how hiredis learns the connect is done.
// Once it waits for room in the socket, what is added goes with the rest.
static void add_write(void *data)
{
    auto *e = static_cast<LinkEvents *>(data);
    if (e->flush_ev && (e->ac->c.flags & REDIS_CONNECTED) && !event_pending(e->write_ev, EV_WRITE, nullptr))
        event_active(e->flush_ev, EV_WRITE, 1); // no-op while already active
    else
        event_add(e->write_ev, nullptr);
}

static void del_write(void *data)
{
    auto *e = static_cast<LinkEvents *>(data);
    if (e->flush_ev)
        event_del(e->flush_ev);
    event_del(e->write_ev);
}

void link_events_write(redisAsyncContext *ac)
{
    auto *e = static_cast<LinkEvents *>(ac->ev.data);
    int done = 0;
    if (redisBufferWrite(&ac->c, &done) == REDIS_OK && done)
        del_write(e); // nothing left for an event registered or activated before
    else
        event_add(e->write_ev, nullptr);
}

static void on_flush(evutil_socket_t, short, void *arg)
{
    link_events_write(static_cast<LinkEvents *>(arg)->ac);
}

static void cleanup(void *data)
{
    auto *e = static_cast<LinkEvents *>(data);
    if (!e)
        return;
    if (e->read_ev)
        event_free(e->read_ev);
    if (e->write_ev)
        event_free(e->write_ev);
    if (e->flush_ev)
        event_free(e->flush_ev);
    e->ac->ev.data = nullptr;
    edgelock_port_free(e);
}

bool link_events_attach(redisAsyncContext *ac, struct event_base *base, bool flush_at_pass_end, bool tls)
{
    if (ac->ev.data)
        return false;
    auto *e = static_cast<LinkEvents *>(edgelock_port_alloc(sizeof(LinkEvents)));
    if (!e)
        return false;
    *e = LinkEvents{};
    e->ac = ac;
    e->tls = tls;
    e->read_ev = event_new(base, ac->c.fd, EV_READ | EV_PERSIST, on_readable, e);
    e->write_ev = event_new(base, ac->c.fd, EV_WRITE | EV_PERSIST, on_writable, e);
    if (flush_at_pass_end)
        e->flush_ev = event_new(base, -1, 0, on_flush, e);
    if (!e->read_ev || !e->write_ev || (flush_at_pass_end && !e->flush_ev)) {
        cleanup(e);
        return false;
    }
    ac->ev.data = e;
    ac->ev.addRead = add_read;
    ac->ev.delRead = del_read;
    ac->ev.addWrite = add_write;
    ac->ev.delWrite = del_write;
    ac->ev.cleanup = cleanup;
    return true;
}

} // namespace edgelock
