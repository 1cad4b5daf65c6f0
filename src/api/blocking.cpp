// SPDX-License-Identifier: BSD-3-Clause
// The blocking face (blocking.hpp): leader/follower over the owned loop.
//
// A blocking call that finds no one driving the engine takes the lead: it
// starts its request on its own thread and runs the event loop there until
// the reply arrives, so an uncontended call costs what a plain hiredis client
// costs (its own sleep on the socket, no hop to another thread and back).
// A call that finds another caller leading posts its request to the inbox and
// sleeps as a follower; the leader starts it from the wake event, completes it
// like its own, and on leaving hands the lead to a follower still waiting.
// The client's loop thread takes the lead when no caller has held it for a
// short grace (or at once when a request needs it), so an idle client still
// renews its locks and hears its messages. A caller that finds the loop thread
// leading follows it like any leader: the loop thread starts the request at
// once (its command is on the wire after one wake-up), then steps down and
// hands the lead to that caller, who reads the reply itself.
#include "api/blocking.hpp"

#include <event2/event.h>
#include <string.h>

#include "locks/callbacks.hpp"
#include "locks/waiter_channels.hpp"
#include "redis/link.hpp"

namespace edgelock
{

// How long the lead stays free after a caller leaves before the loop thread
// takes it (BlockingFace::lead_grace_ms; the loop thread comes up to half a
// grace later, arm_locked): calls that come back within it keep the lead on
// the callers' threads. No caller waits on it meanwhile (a caller inside the
// library leads or is served by the leader); the timers and messages of an
// idle client wait at most a grace and a half, so a grace is a twentieth of
// the watchdog's renewal period, kept between these bounds.
//
// The loop thread sleeps through the callers' calls: a leader sets its alarm
// when it starts to wait, and a leave when the call outlasted that
// (arm_locked), which costs a system call and wakes no one, where a timed
// wait on a condition variable had to wake to learn that callers came back
// (a context switch every few graces while they kept the lead, beyond issue
// 13's two per uncontended pair).
static const uint32_t kLeadGraceMinMs = 2, kLeadGraceMaxMs = 20;

// Wake the loop thread at once (mutex held): it is wanted now. A leave's
// later time must not replace this one (arm_locked).
static void kick_loop_locked(BlockingFace *f)
{
    if (f->loop_kicked)
        return;
    f->loop_kicked = true;
    edgelock_port_alarm_set(&f->loop_alarm, 0);
}

// Have the loop thread look at the lead at due_ms or up to half a grace
// later (mutex held), unless it is to wake at once anyway. The alarm is set
// only when it would go off before due_ms, and then half a grace beyond it:
// callers coming back every few microseconds set it once per half grace, and
// it never goes off early, which would be a look for nothing (a context
// switch; a gap of ten milliseconds between bursts of calls made one per
// burst).
static void arm_locked(BlockingFace *f, uint64_t due_ms)
{
    if (f->loop_kicked || (f->alarm_due_ms != 0 && f->alarm_due_ms >= due_ms))
        return;
    uint64_t now = edgelock_port_now_ms();
    f->alarm_due_ms = due_ms + f->lead_grace_ms / 2;
    edgelock_port_alarm_set(&f->loop_alarm, f->alarm_due_ms > now ? (uint32_t)(f->alarm_due_ms - now) : 0);
}

static void set_leader(Client *c, Leader who, uint64_t thread_id) // under the mutex
{
    c->face->leader = who;
    __atomic_store_n(&c->driver_thread_id, thread_id, __ATOMIC_RELAXED);
}

static void complete(Client *c, BlockingRequest *r, edgelock_status st, int64_t value)
{
    edgelock_port_mutex_lock(&c->face->mutex);
    r->status = st;
    r->value = value;
    r->done = true;
    if (!r->may_lead)
        c->face->loop_requests--;
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

// Start r on the engine: a local call completes here, any other when its
// callback fires (request_start).
static void run(Client *c, BlockingRequest *r)
{
    if (request_is_local(r->op)) {
        run_local(c, r);
        complete(c, r, r->status, 0);
        return;
    }
    // A composite's member abandoned after it entered: the cancel of its
    // pin's on_stop may have run first (a posted request waits in the inbox
    // while the cancel's caller leads and runs its own at once). The flag
    // was set before that cancel took the mutex, which every run follows.
    if (r->abandoned && __atomic_load_n(r->abandoned, __ATOMIC_ACQUIRE)) {
        complete(c, r, EDGELOCK_ERR_SHUTDOWN, 0);
        return;
    }
    edgelock_status st = request_start(c, r, request_done);
    if (st != EDGELOCK_OK)
        complete(c, r, st, 0); // the callback will never fire
}

// Runs on the leader's thread: the requests posted meanwhile, and shutdown.
static void wake_cb(evutil_socket_t, short, void *arg)
{
    auto *c = static_cast<Client *>(arg);
    BlockingFace *f = c->face;
    edgelock_port_mutex_lock(&f->mutex);
    BlockingRequest *list = f->inbox;
    f->inbox = nullptr;
    bool stop = f->loop_stop;
    // The loop thread leaves its loop once it has started a follower's request
    // (the follower then leads); a caller's loop (EVLOOP_ONCE) returns by
    // itself after this callback.
    bool step_down = f->leader == Leader::Loop && (stop || f->want_lead > 0);
    edgelock_port_mutex_unlock(&f->mutex);

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
    if (step_down)
        event_base_loopbreak(c->base);
}

// Give up the lead (mutex held): to a follower whose request still runs (it
// is awake for it anyway), to the loop thread when a request needs it or the
// client stops, or to no one: the loop thread takes it after the grace unless
// a caller comes back first.
//
// ran_loop: whether the leader leaving ran the loop. Only that restarts the
// grace: a leader that ran a local call only (lock_new, stats, ...) moved no
// I/O, and callers polling a local call faster than the grace would
// otherwise keep the loop from ever running.
static void hand_off_locked(Client *c, bool ran_loop)
{
    BlockingFace *f = c->face;
    set_leader(c, Leader::None, 0);
    if (!f->loop_stop) {
        for (BlockingRequest **p = &f->followers; *p; p = &(*p)->next_follower) {
            BlockingRequest *r = *p;
            if (!r->done) {
                *p = r->next_follower;
                r->promoted = true;
                set_leader(c, Leader::Caller, r->thread_id);
                edgelock_port_cond_signal(&r->cond);
                return;
            }
        }
    }
    if (ran_loop)
        f->idle_since_ms = edgelock_port_now_ms();
    if (f->loop_stop || f->loop_requests > 0 || f->inbox)
        kick_loop_locked(f);
    else
        arm_locked(f, f->idle_since_ms + f->lead_grace_ms);
}

// Whether the leader may wait for the replies due in a read of the command
// socket itself (conn_read_waiting) instead of a pass of the loop, which on
// Linux costs two system calls more per reply (libevent re-arms its timerfd
// before each epoll_wait): when nothing else needs the loop meanwhile. No
// caller's request waits to start (inbox_empty); no message can be due to
// anyone (channel_messages_awaited: no subscription, or only that of the one
// waiter, whose attempt is on the wire: B's woken waiter) and no leave is due
// at the loop's next turn (a subscription left waiting for the next pass
// hears every unlock meanwhile, and C lost 14-27 % of its acquisitions); no
// event is active; and the loop ran a pass (its timers) within the grace, the
// longest an idle client's timers wait anyway. A cluster client's replies
// come on several sockets: it always runs the loop.
static bool may_read_waiting(Client *c, bool inbox_empty)
{
    return inbox_empty && !c->url.cluster && !channel_messages_awaited(c) &&
           edgelock_port_now_ms() - c->face->loop_pass_ms < c->face->lead_grace_ms &&
           event_base_get_num_events(c->base, EVENT_BASE_COUNT_ACTIVE) == 0;
}

static void loop_pass(Client *c, int flags)
{
    event_base_loop(c->base, flags);
    c->face->loop_pass_ms = edgelock_port_now_ms();
}

// Lead until r is done: the loop runs on this thread. Returns with the mutex
// held and the lead handed on.
static void lead_until_done(Client *c, BlockingRequest *r)
{
    bool ran_loop = false;
    for (;;) {
        edgelock_port_mutex_lock(&c->face->mutex);
        if (r->done)
            break;
        bool inbox_empty = c->face->inbox == nullptr;
        // The loop thread's alarm for after this call, set now, while the
        // reply is on its way: at the leave (hand_off_locked), it would keep
        // a woken waiter that shares this CPU waiting for one system call
        // more (B's handoff). A call shorter than half a grace then leaves
        // it as it is.
        if (!ran_loop)
            arm_locked(c->face, edgelock_port_now_ms() + c->face->lead_grace_ms);
        edgelock_port_mutex_unlock(&c->face->mutex);
        ran_loop = true;
        // A wait that ended with nothing (a slow reply, a stalled server)
        // goes on in the loop, whose timers end it.
        if (may_read_waiting(c, inbox_empty) && conn_read_waiting(&c->cmd_conn))
            continue;
        // Blocks in the poll until something happens (the reply, a timer, a
        // follower's post); never empty: r has a deadline or a reply due.
        loop_pass(c, EVLOOP_ONCE | EVLOOP_NO_EXIT_ON_EMPTY);
    }
    hand_off_locked(c, ran_loop);
}

static void loop_main(void *arg)
{
    auto *c = static_cast<Client *>(arg);
    BlockingFace *f = c->face;
    const uint64_t self = edgelock_port_thread_id();
    // The library's own thread: SIGPIPE stays blocked for its whole life (a
    // write's EPIPE is what the connection acts on).
    edgelock_port_sigpipe pipe_guard;
    if (f->guard_sigpipe)
        edgelock_port_sigpipe_block(&pipe_guard);
    edgelock_port_mutex_lock(&f->mutex);
    for (;;) {
        if (f->leader == Leader::None) {
            // A stop outranks a follower asking for the lead: hand_off_locked
            // promotes no one once the client stops, and the shutdown below
            // ends that follower's call. Waiting for want_lead to fall would
            // wait for ever.
            uint64_t now = edgelock_port_now_ms();
            bool wanted = f->loop_stop || f->loop_requests > 0 || f->inbox ||
                          now - f->idle_since_ms >= f->lead_grace_ms;
            if (wanted && (f->want_lead == 0 || f->loop_stop)) {
                set_leader(c, Leader::Loop, self);
                bool stop = f->loop_stop;
                edgelock_port_mutex_unlock(&f->mutex);
                if (stop)
                    wake_cb(-1, 0, c); // shut down and drain the inbox, on this thread
                else
                    loop_pass(c, EVLOOP_NO_EXIT_ON_EMPTY); // until wake_cb breaks it
                edgelock_port_mutex_lock(&f->mutex);
                if (stop) {
                    set_leader(c, Leader::None, 0);
                    break;
                }
                hand_off_locked(c, true); // to the follower it stepped down for
                continue;
            }
            // Free, but a caller left it a moment ago: look when the grace
            // ends. Or a follower that asked for the lead is on its way out
            // (its request done before the loop thread stepped down): look
            // again a grace from now.
            arm_locked(f, wanted ? now + f->lead_grace_ms : f->idle_since_ms + f->lead_grace_ms);
        }
        // Asleep while a caller leads: its leave sets the alarm.
        edgelock_port_mutex_unlock(&f->mutex);
        edgelock_port_alarm_wait(&f->loop_alarm);
        edgelock_port_mutex_lock(&f->mutex);
        f->loop_kicked = false;
        f->alarm_due_ms = 0;
    }
    edgelock_port_mutex_unlock(&f->mutex);
}

static void free_face(Client *c)
{
    edgelock_port_cond_destroy(&c->face->idle_cond);
    if (c->face->alarm_ok)
        edgelock_port_alarm_destroy(&c->face->loop_alarm);
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
    c->face->leader = Leader::None; // the loop thread takes the lead at once
    uint32_t grace = c->cfg.watchdog_lease_ms / 3 / 20;
    // Only writes that may raise SIGPIPE need the guard: TLS, or hiredis 0.14.
    c->face->guard_sigpipe = !link_writes_quietly(c->url.tls) && !edgelock_port_sigpipe_ignored();
    c->face->lead_grace_ms = grace < kLeadGraceMinMs   ? kLeadGraceMinMs
                             : grace > kLeadGraceMaxMs ? kLeadGraceMaxMs
                                                       : grace;
    c->face->alarm_ok = edgelock_port_alarm_init(&c->face->loop_alarm) == 0;
    c->face->wake_event = event_new(c->base, -1, 0, wake_cb, c);
    if (!c->face->alarm_ok || !c->face->wake_event ||
        edgelock_port_thread_start(&c->face->thread, loop_main, c) != 0) {
        free_face(c);
        return EDGELOCK_ERR_NO_MEMORY;
    }
    c->table_bytes += event_get_struct_event_size();
    return EDGELOCK_OK;
}

// Each pin's on_stop, once, without the mutex (it calls other clients). No
// pin comes in once the client stops, and a pin on_stop runs for stays
// linked until it ends (blocking_unpin_begin waits), so the walk restarts
// from the head after each and ends when no pin is left to stop.
static void stop_pins_locked(BlockingFace *f)
{
    for (;;) {
        BlockingPin *p = f->pins;
        while (p && (p->stopped || p->leaving))
            p = p->next;
        if (!p)
            return;
        p->stopping = p->stopped = true;
        edgelock_port_mutex_unlock(&f->mutex);
        p->on_stop(p, p->user);
        edgelock_port_mutex_lock(&f->mutex);
        p->stopping = false;
        edgelock_port_cond_broadcast(&f->idle_cond);
    }
}

void blocking_stop(Client *c)
{
    BlockingFace *f = c->face;
    edgelock_port_mutex_lock(&f->mutex);
    f->loop_stop = true;
    kick_loop_locked(f);
    stop_pins_locked(f);
    edgelock_port_mutex_unlock(&f->mutex);
    event_active(f->wake_event, EV_TIMEOUT, 0); // a leader (caller or loop) shuts down
    edgelock_port_thread_join(&f->thread);
    // Callers woken with SHUTDOWN may still be on their way out of the mutex.
    edgelock_port_mutex_lock(&f->mutex);
    while (f->blocking_callers > 0)
        edgelock_port_cond_wait(&f->idle_cond, &f->mutex);
    edgelock_port_mutex_unlock(&f->mutex);
    free_face(c);
}

// Whether c takes blocking calls from this thread and is not stopping: OK
// with the mutex held, or why not (the mutex not held). abandoned: a
// composite's member that is to end (BlockingRequest::abandoned), or null.
static edgelock_status admit_locked(Client *c, const bool *abandoned)
{
    if (!c->owns_base || on_loop_thread(c))
        return EDGELOCK_ERR_WRONG_THREAD; // waiting on ourselves would never end
    edgelock_port_mutex_lock(&c->face->mutex);
    // A composite's wait that its pin's on_stop would cancel, had it come
    // first (the cancel goes through this mutex after the flag is set); one
    // that entered already is checked again when it runs (run()).
    if (c->face->loop_stop || (abandoned && __atomic_load_n(abandoned, __ATOMIC_ACQUIRE))) {
        edgelock_port_mutex_unlock(&c->face->mutex);
        return EDGELOCK_ERR_SHUTDOWN;
    }
    return EDGELOCK_OK;
}

// Admit r: OK with the mutex held, or why not (the mutex not held).
static edgelock_status enter(Client *c, BlockingRequest *r, bool may_lead)
{
    edgelock_status st = admit_locked(c, r->abandoned);
    if (st != EDGELOCK_OK)
        return st;
    edgelock_port_cond_init(&r->cond);
    c->face->blocking_callers++;
    r->done = false;
    r->promoted = false;
    r->may_lead = may_lead;
    r->thread_id = edgelock_port_thread_id();
    return EDGELOCK_OK;
}

edgelock_status blocking_pin(Client *c, BlockingPin *pin, void (*on_stop)(BlockingPin *, void *), void *user)
{
    edgelock_status st = admit_locked(c, nullptr);
    if (st != EDGELOCK_OK)
        return st;
    BlockingFace *f = c->face;
    *pin = BlockingPin();
    pin->on_stop = on_stop;
    pin->user = user;
    pin->next = f->pins;
    f->pins = pin;
    f->blocking_callers++;
    edgelock_port_mutex_unlock(&f->mutex);
    return EDGELOCK_OK;
}

void blocking_unpin_begin(Client *c, BlockingPin *pin)
{
    BlockingFace *f = c->face;
    edgelock_port_mutex_lock(&f->mutex);
    while (pin->stopping)
        edgelock_port_cond_wait(&f->idle_cond, &f->mutex);
    pin->leaving = true;
    edgelock_port_mutex_unlock(&f->mutex);
}

void blocking_unpin(Client *c, BlockingPin *pin)
{
    BlockingFace *f = c->face;
    edgelock_port_mutex_lock(&f->mutex);
    for (BlockingPin **p = &f->pins; *p; p = &(*p)->next)
        if (*p == pin) {
            *p = pin->next;
            break;
        }
    if (--f->blocking_callers == 0 && f->loop_stop)
        edgelock_port_cond_broadcast(&f->idle_cond);
    edgelock_port_mutex_unlock(&f->mutex);
}

// r is done (mutex held, released here): its result, and the caller leaves.
static edgelock_status leave_locked(Client *c, BlockingRequest *r, int64_t *value)
{
    edgelock_status st = r->status;
    if (value)
        *value = r->value;
    if (--c->face->blocking_callers == 0 && c->face->loop_stop)
        edgelock_port_cond_signal(&c->face->idle_cond);
    edgelock_port_mutex_unlock(&c->face->mutex);
    edgelock_port_cond_destroy(&r->cond);
    return st;
}

static void post_locked(Client *c, BlockingRequest *r)
{
    r->next = c->face->inbox;
    c->face->inbox = r;
}

edgelock_status blocking_post(Client *c, BlockingRequest *r)
{
    edgelock_status st = enter(c, r, false);
    if (st != EDGELOCK_OK)
        return st;
    BlockingFace *f = c->face;
    f->loop_requests++;
    post_locked(c, r);
    if (f->leader == Leader::None)
        kick_loop_locked(f); // lead now, not after the grace
    edgelock_port_mutex_unlock(&f->mutex);
    event_active(f->wake_event, EV_TIMEOUT, 0);
    return EDGELOCK_OK;
}

edgelock_status blocking_wait(Client *c, BlockingRequest *r, int64_t *value)
{
    edgelock_port_mutex_lock(&c->face->mutex);
    while (!r->done)
        edgelock_port_cond_wait(&r->cond, &c->face->mutex);
    return leave_locked(c, r, value);
}

edgelock_status blocking_call(Client *c, BlockingRequest *r, int64_t *value)
{
    edgelock_status st = enter(c, r, true);
    if (st != EDGELOCK_OK)
        return st;
    BlockingFace *f = c->face;
    if (f->leader == Leader::None) {
        set_leader(c, Leader::Caller, r->thread_id);
        edgelock_port_mutex_unlock(&f->mutex);
        edgelock_port_sigpipe pipe_guard;
        if (f->guard_sigpipe)
            edgelock_port_sigpipe_block(&pipe_guard);
        run(c, r);
        lead_until_done(c, r);
        if (f->guard_sigpipe)
            edgelock_port_sigpipe_restore(&pipe_guard);
        return leave_locked(c, r, value);
    }
    // Someone leads: follow. The leader starts r from the wake event; the loop
    // thread also steps down for us right after (want_lead), unless r is a
    // local call, done as soon as it starts: nothing to lead for.
    bool asked_loop = f->leader == Leader::Loop && !request_is_local(r->op);
    if (asked_loop)
        f->want_lead++;
    post_locked(c, r);
    r->next_follower = f->followers;
    f->followers = r;
    edgelock_port_mutex_unlock(&f->mutex);
    event_active(f->wake_event, EV_TIMEOUT, 0);
    edgelock_port_mutex_lock(&f->mutex);
    while (!r->done && !r->promoted)
        edgelock_port_cond_wait(&r->cond, &f->mutex);
    if (asked_loop)
        f->want_lead--;
    if (r->promoted) { // the leader left first: drive the rest ourselves
        edgelock_port_mutex_unlock(&f->mutex);
        edgelock_port_sigpipe pipe_guard;
        if (f->guard_sigpipe)
            edgelock_port_sigpipe_block(&pipe_guard);
        lead_until_done(c, r);
        if (f->guard_sigpipe)
            edgelock_port_sigpipe_restore(&pipe_guard);
    } else {
        for (BlockingRequest **p = &f->followers; *p; p = &(*p)->next_follower)
            if (*p == r) {
                *p = r->next_follower;
                break;
            }
    }
    return leave_locked(c, r, value);
}

} // namespace edgelock
