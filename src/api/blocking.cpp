// The blocking face (blocking.hpp): requests posted from any thread run on the
// loop thread; the caller sleeps until its callback answers.
#include "api/blocking.hpp"

#include <event2/event.h>
#include <string.h>

#include "locks/acquire.hpp"
#include "locks/callbacks.hpp"
#include "locks/queries.hpp"
#include "locks/release.hpp"

namespace edgelock
{

static void complete(Client *c, BlockingRequest *r, edgelock_status st, int64_t value)
{
    edgelock_port_mutex_lock(&c->face->mutex);
    r->status = st;
    r->value = value;
    r->done = true;
    // Signalled under the mutex: the caller cannot return (and pop r off its
    // stack) before we let go of it, and we touch r no more after that.
    edgelock_port_cond_signal(&r->cond);
    edgelock_port_mutex_unlock(&c->face->mutex);
}

static void request_done(edgelock_client *client, edgelock_lock, edgelock_status st, int64_t value,
                         void *user)
{
    complete(reinterpret_cast<Client *>(client), static_cast<BlockingRequest *>(user), st, value);
}

edgelock_status stats(Client *c, edgelock_stats *out)
{
    if (!out)
        return EDGELOCK_ERR_INVALID_ARG;
    memset(out, 0, sizeof(*out));
    out->locks = c->locks.used();
    out->holds = c->holds.used();
    out->waiters = c->waiters.used();
    out->subscriptions = c->pubsub.subs.used();
    out->commands = c->queue.cmds.used();
    out->connected = conn_ready(&c->cmd_conn) ? 1u : 0u;
    out->reconnects = c->reconnects;
    out->renew_calls = c->watchdog.renew_calls;
    out->table_bytes = c->table_bytes;
    auto fill = [out](edgelock_table t, const auto &table) {
        out->tables[t] = {table.used(), table.capacity(), table.high_water(), table.full_count()};
    };
    fill(EDGELOCK_TABLE_LOCKS, c->locks);
    fill(EDGELOCK_TABLE_HOLDS, c->holds);
    fill(EDGELOCK_TABLE_WAITERS, c->waiters);
    fill(EDGELOCK_TABLE_SUBSCRIPTIONS, c->pubsub.subs);
    fill(EDGELOCK_TABLE_COMMANDS, c->queue.cmds);
    return EDGELOCK_OK;
}

void run_local(Client *c, BlockingRequest *r)
{
    switch (r->op) {
    case ReqOp::LockNew: r->status = lock_new(c, r->kind, r->name, r->name_len, r->lock_out); break;
    case ReqOp::LockFree: r->status = lock_free(c, r->lock); break;
    case ReqOp::Stats: r->status = stats(c, r->stats_out); break;
    case ReqOp::Valid: r->status = hold_validity(c, r->lock.id, r->owner, r->remaining_out); break;
    case ReqOp::Server: r->status = hold_server(c, r->lock.id, r->owner, r->server_out); break;
    case ReqOp::Cancel:
        acquire_cancel(c, r->owner);
        r->status = EDGELOCK_OK;
        break;
    default: EDGELOCK_ASSERT(false);
    }
}

static void run(Client *c, BlockingRequest *r)
{
    edgelock_status st;
    switch (r->op) {
    case ReqOp::LockNew:
    case ReqOp::LockFree:
    case ReqOp::Stats:
    case ReqOp::Valid:
    case ReqOp::Server:
    case ReqOp::Cancel:
        run_local(c, r);
        complete(c, r, r->status, 0);
        return;
    case ReqOp::Acquire:
        st = acquire_start(c, r->lock, r->owner, r->wait_ms, r->lease_ms, request_done, r,
                           r->give_up_on_connection_error);
        break;
    case ReqOp::Release: st = release_start(c, r->lock, r->owner, request_done, r); break;
    case ReqOp::ForceRelease: st = query_start(c, LockOp::ForceRelease, r->lock, 0, request_done, r); break;
    case ReqOp::Exists: st = query_start(c, LockOp::Exists, r->lock, 0, request_done, r); break;
    case ReqOp::HoldCount: st = query_start(c, LockOp::HoldCount, r->lock, r->owner, request_done, r); break;
    case ReqOp::Ttl: st = query_start(c, LockOp::Ttl, r->lock, 0, request_done, r); break;
    case ReqOp::Extend: st = extend_start(c, r->lock, r->owner, r->lease_ms, request_done, r); break;
    case ReqOp::Info: st = info_start(c, r->lock, r->info, request_done, r); break;
    default: st = EDGELOCK_ERR_INVALID_ARG; break;
    }
    if (st != EDGELOCK_OK)
        complete(c, r, st, 0); // the callback will never fire
}

static void wake_cb(evutil_socket_t, short, void *arg)
{
    auto *c = static_cast<Client *>(arg);
    edgelock_port_mutex_lock(&c->face->mutex);
    BlockingRequest *list = c->face->inbox;
    c->face->inbox = nullptr;
    bool stop = c->face->loop_stop;
    edgelock_port_mutex_unlock(&c->face->mutex);

    if (stop)
        client_shutdown(c); // every call started so far completes with SHUTDOWN
    // The inbox is newest-first; run oldest first.
    BlockingRequest *fifo = nullptr;
    while (list) {
        BlockingRequest *next = list->next;
        list->next = fifo;
        fifo = list;
        list = next;
    }
    while (fifo) {
        BlockingRequest *next = fifo->next;
        run(c, fifo);
        fifo = next;
    }
    if (stop)
        event_base_loopbreak(c->base);
}

static void loop_main(void *arg)
{
    auto *c = static_cast<Client *>(arg);
    edgelock_port_mutex_lock(&c->face->mutex);
    c->loop_thread_id = edgelock_port_thread_id();
    edgelock_port_cond_signal(&c->face->idle_cond);
    edgelock_port_mutex_unlock(&c->face->mutex);
    event_base_loop(c->base, EVLOOP_NO_EXIT_ON_EMPTY);
}

static void free_face(Client *c)
{
    edgelock_port_cond_destroy(&c->face->idle_cond);
    edgelock_port_mutex_destroy(&c->face->mutex);
    if (c->face->wake_event)
        event_free(c->face->wake_event);
    edgelock_port_free(c->face);
    c->face = nullptr;
}

edgelock_status blocking_start(Client *c)
{
    c->face = static_cast<BlockingFace *>(client_alloc(c, sizeof(BlockingFace)));
    if (!c->face)
        return EDGELOCK_ERR_NO_MEMORY;
    memset(c->face, 0, sizeof(*c->face));
    edgelock_port_mutex_init(&c->face->mutex);
    edgelock_port_cond_init(&c->face->idle_cond);
    c->face->wake_event = event_new(c->base, -1, 0, wake_cb, c);
    if (!c->face->wake_event || edgelock_port_thread_start(&c->face->thread, loop_main, c) != 0) {
        free_face(c);
        return EDGELOCK_ERR_NO_MEMORY;
    }
    c->table_bytes += event_get_struct_event_size();
    // Wait until the loop thread has published its id: on_loop_thread() reads it.
    edgelock_port_mutex_lock(&c->face->mutex);
    while (c->loop_thread_id == 0)
        edgelock_port_cond_wait(&c->face->idle_cond, &c->face->mutex);
    edgelock_port_mutex_unlock(&c->face->mutex);
    return EDGELOCK_OK;
}

void blocking_stop(Client *c)
{
    edgelock_port_mutex_lock(&c->face->mutex);
    c->face->loop_stop = true;
    edgelock_port_mutex_unlock(&c->face->mutex);
    event_active(c->face->wake_event, EV_TIMEOUT, 0);
    edgelock_port_thread_join(&c->face->thread);
    // Callers woken with SHUTDOWN may still be on their way out of the mutex.
    edgelock_port_mutex_lock(&c->face->mutex);
    while (c->face->blocking_callers > 0)
        edgelock_port_cond_wait(&c->face->idle_cond, &c->face->mutex);
    edgelock_port_mutex_unlock(&c->face->mutex);
    free_face(c);
}

edgelock_status blocking_post(Client *c, BlockingRequest *r)
{
    if (!c->owns_base || on_loop_thread(c))
        return EDGELOCK_ERR_WRONG_THREAD;
    edgelock_port_mutex_lock(&c->face->mutex);
    if (c->face->loop_stop) {
        edgelock_port_mutex_unlock(&c->face->mutex);
        return EDGELOCK_ERR_SHUTDOWN;
    }
    edgelock_port_cond_init(&r->cond);
    c->face->blocking_callers++;
    r->done = false;
    r->next = c->face->inbox;
    c->face->inbox = r;
    edgelock_port_mutex_unlock(&c->face->mutex);
    event_active(c->face->wake_event, EV_TIMEOUT, 0);
    return EDGELOCK_OK;
}

edgelock_status blocking_wait(Client *c, BlockingRequest *r, int64_t *value)
{
    edgelock_port_mutex_lock(&c->face->mutex);
    while (!r->done)
        edgelock_port_cond_wait(&r->cond, &c->face->mutex);
    edgelock_status st = r->status;
    if (value)
        *value = r->value;
    if (--c->face->blocking_callers == 0 && c->face->loop_stop)
        edgelock_port_cond_signal(&c->face->idle_cond);
    edgelock_port_mutex_unlock(&c->face->mutex);
    edgelock_port_cond_destroy(&r->cond);
    return st;
}

edgelock_status blocking_call(Client *c, BlockingRequest *r, int64_t *value)
{
    edgelock_status st = blocking_post(c, r);
    return st != EDGELOCK_OK ? st : blocking_wait(c, r, value);
}

} // namespace edgelock
