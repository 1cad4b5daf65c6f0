// Client lifecycle: validate the config, allocate every table once, start the
// connections; at the end complete everything with SHUTDOWN and free it all.
#include "client.hpp"

#include <event2/event.h>
#include <stdint.h>
#include <string.h>

#include "names.hpp"

namespace edgelock
{

static const char kDefaultUrl[] = "redis://127.0.0.1:6379";
static constexpr uint32_t kMaxCapacity = 1u << 20;

static void waiter_timer_cb(evutil_socket_t, short, void *arg)
{
    auto *t = static_cast<WaiterTimer *>(arg);
    acquire_on_timer(t->client, t->index);
}
static void cmd_timer_cb(evutil_socket_t, short, void *arg)
{
    cmd_on_timer(static_cast<Client *>(arg));
}
static void watchdog_timer_cb(evutil_socket_t, short, void *arg)
{
    watchdog_tick(static_cast<Client *>(arg));
}

void timer_arm(struct event *ev, uint64_t delay_ms)
{
    struct timeval tv;
    // libevent's timeval: keep the seconds in range on 32-bit time_t.
    if (delay_ms > 86400000ull * 365)
        delay_ms = 86400000ull * 365;
    tv.tv_sec = (time_t)(delay_ms / 1000);
    tv.tv_usec = (suseconds_t)((delay_ms % 1000) * 1000);
    event_add(ev, &tv);
}

static void make_uuid(char out[37])
{
    uint8_t b[16];
    edgelock_port_random(b, sizeof(b));
    b[6] = (uint8_t)((b[6] & 0x0f) | 0x40); // version 4
    b[8] = (uint8_t)((b[8] & 0x3f) | 0x80); // RFC 4122 variant
    static const char hex[] = "0123456789abcdef";
    size_t o = 0;
    for (int i = 0; i < 16; i++) {
        if (i == 4 || i == 6 || i == 8 || i == 10)
            out[o++] = '-';
        out[o++] = hex[b[i] >> 4];
        out[o++] = hex[b[i] & 15];
    }
    out[o] = 0;
}

static bool valid_capacity(uint32_t v)
{
    return v >= 1 && v <= kMaxCapacity;
}

static bool valid_config(const edgelock_config *cfg)
{
    if (!valid_capacity(cfg->max_locks) || !valid_capacity(cfg->max_holds) ||
        !valid_capacity(cfg->max_waiters) || !valid_capacity(cfg->max_subscriptions) ||
        !valid_capacity(cfg->max_commands) || cfg->max_commands > 0xffff)
        return false;
    if (cfg->max_name_len < 1 || cfg->max_name_len > kMaxNameLenLimit)
        return false;
    if (cfg->watchdog_lease_ms < 30 || cfg->command_timeout_ms < 1 || cfg->connect_timeout_ms < 1)
        return false;
    if (cfg->reconnect_min_ms < 1 || cfg->reconnect_max_ms < cfg->reconnect_min_ms)
        return false;
    if (cfg->unlock_latch_ttl_ms < 1)
        return false;
    if (cfg->client_id) {
        size_t n = strnlen(cfg->client_id, 64);
        if (n == 0 || n > 63 || memchr(cfg->client_id, ':', n))
            return false;
    }
    return true;
}

// Largest command the client will ever format: a full renewal batch, sent with
// EVAL (script body included) after a NOSCRIPT.
static uint32_t command_buffer_len(uint32_t max_name_len)
{
    size_t script = 0;
    for (int i = 0; i < kScriptCount; i++)
        if (kScripts[i].len > script)
            script = kScripts[i].len;
    size_t per_lock = max_name_len + kMaxOwnerLen + 2 * 16; // two bulk headers
    size_t keys = 3 * (channel_len(max_name_len) + 64);     // release: name, channel, latch
    size_t body = kRenewBatch * per_lock > keys ? kRenewBatch * per_lock : keys;
    return (uint32_t)(script + body + 512);
}

static void *alloc_bytes(Client *c, uint64_t n)
{
    // Sizes are computed in 64 bits; on a 32-bit target a table the config
    // makes larger than the address space is refused, not truncated.
    if (n > SIZE_MAX)
        return nullptr;
    void *p = edgelock_port_alloc((size_t)n);
    if (p)
        c->table_bytes += n;
    return p;
}

template <typename T> static bool alloc_table(Client *c, FixedTable<T> &t, uint32_t cap)
{
    auto *slots = static_cast<typename FixedTable<T>::Slot *>(alloc_bytes(c, FixedTable<T>::bytes_for(cap)));
    if (!slots)
        return false;
    t.init(slots, cap);
    return true;
}

template <typename T> static void free_table(FixedTable<T> &t)
{
    if (t.capacity())
        edgelock_port_free(t.storage());
}

static struct event *new_timer(Client *c, event_callback_fn fn, void *arg)
{
    struct event *ev = event_new(c->base, -1, 0, fn, arg);
    if (ev)
        c->table_bytes += event_get_struct_event_size();
    return ev;
}

static void free_memory(Client *c)
{
    if (c->waiter_timers) {
        for (uint32_t i = 0; i < c->waiters.capacity(); i++)
            if (c->waiter_timers[i].ev)
                event_free(c->waiter_timers[i].ev);
        edgelock_port_free(c->waiter_timers);
    }
    struct event *timers[] = {c->cmd_timer, c->watchdog_timer, c->cmd_conn.timer, c->sub_conn.timer,
                              c->wake_event};
    for (struct event *ev : timers)
        if (ev)
            event_free(ev);
    free_table(c->locks);
    free_table(c->holds);
    free_table(c->waiters);
    free_table(c->subs);
    free_table(c->cmds);
    edgelock_port_free(c->lock_names);
    edgelock_port_free(c->channel_names);
    edgelock_port_free(c->cmd_buf);
    if (c->owns_base && c->base)
        event_base_free(c->base);
    edgelock_port_free(c);
}

Client *client_create(const edgelock_config *cfg, struct event_base *base, edgelock_status *st)
{
    *st = EDGELOCK_ERR_INVALID_ARG;
    if (!cfg || !valid_config(cfg))
        return nullptr;
    RedisUrl url;
    if (!parse_redis_url(cfg->url ? cfg->url : kDefaultUrl, &url))
        return nullptr;

    *st = EDGELOCK_ERR_NO_MEMORY;
    Client *c = static_cast<Client *>(edgelock_port_alloc(sizeof(Client)));
    if (!c)
        return nullptr;
    c->cfg = *cfg;
    c->cfg.url = nullptr; // parsed; the caller's string need not outlive the call
    c->cfg.client_id = nullptr;
    c->url = url;
    c->table_bytes = sizeof(Client);
    if (cfg->client_id)
        memcpy(c->client_id, cfg->client_id, strnlen(cfg->client_id, 63));
    else
        make_uuid(c->client_id);
    c->send_head = c->send_tail = kNoIndex;
    edgelock_port_random(c->latch_prefix, sizeof(c->latch_prefix));
    c->cmd_timer_at = kForever;

    if (base) {
        c->base = base;
    } else {
        c->owns_base = true;
        // The changelist folds hiredis's add/remove of the write event around
        // every command into one epoll_ctl per loop iteration, at most.
        struct event_config *ec = event_config_new();
        if (ec) {
            event_config_set_flag(ec, EVENT_BASE_FLAG_EPOLL_USE_CHANGELIST);
            c->base = event_base_new_with_config(ec);
            event_config_free(ec);
        }
        if (!c->base) {
            free_memory(c);
            return nullptr;
        }
    }

    const uint32_t chan_cap = (uint32_t)channel_len(cfg->max_name_len);
    c->cmd_buf_len = command_buffer_len(cfg->max_name_len);
    bool ok = alloc_table(c, c->locks, cfg->max_locks) && alloc_table(c, c->holds, cfg->max_holds) &&
              alloc_table(c, c->waiters, cfg->max_waiters) &&
              alloc_table(c, c->subs, cfg->max_subscriptions) && alloc_table(c, c->cmds, cfg->max_commands);
    ok = ok && (c->lock_names = static_cast<char *>(
                    alloc_bytes(c, (uint64_t)cfg->max_locks * cfg->max_name_len))) != nullptr;
    ok = ok && (c->channel_names = static_cast<char *>(
                    alloc_bytes(c, (uint64_t)cfg->max_subscriptions * chan_cap))) != nullptr;
    ok = ok && (c->cmd_buf = static_cast<char *>(alloc_bytes(c, c->cmd_buf_len))) != nullptr;
    ok = ok && (c->waiter_timers = static_cast<WaiterTimer *>(
                    alloc_bytes(c, (uint64_t)cfg->max_waiters * sizeof(WaiterTimer)))) != nullptr;
    for (uint32_t i = 0; ok && i < cfg->max_waiters; i++) {
        WaiterTimer &t = c->waiter_timers[i];
        t.client = c;
        t.index = i;
        t.ev = new_timer(c, waiter_timer_cb, &t);
        ok = t.ev != nullptr;
    }
    ok = ok && (c->cmd_timer = new_timer(c, cmd_timer_cb, c)) != nullptr;
    ok = ok && (c->watchdog_timer = new_timer(c, watchdog_timer_cb, c)) != nullptr;
    if (ok) {
        conn_init(c, &c->cmd_conn, false);
        conn_init(c, &c->sub_conn, true);
        ok = c->cmd_conn.timer && c->sub_conn.timer;
    }
    if (!ok) {
        free_memory(c);
        return nullptr;
    }
    *st = EDGELOCK_OK;
    return c;
}

void client_shutdown(Client *c)
{
    if (c->closing)
        return;
    // Last words, best effort: fair waiters leave their queues (else those
    // behind them wait out their windows), and whatever is queued, those
    // included, goes onto the socket before it closes.
    acquire_abandon_fair_all(c);
    cmd_flush_queue(c);
    conn_flush_output(&c->cmd_conn);
    c->closing = true;
    acquire_fail_all(c, EDGELOCK_ERR_SHUTDOWN);
    cmd_fail_all(c, EDGELOCK_ERR_SHUTDOWN);
    event_del(c->cmd_timer);
    event_del(c->watchdog_timer);
    conn_close(&c->cmd_conn);
    conn_close(&c->sub_conn);
}

static void deferred_free(evutil_socket_t, short, void *arg)
{
    free_memory(static_cast<Client *>(arg));
}

void client_destroy(Client *c)
{
    client_shutdown(c);
    if (c->callback_depth > 0) {
        // Frames of ours are still on the stack below the user's callback; free
        // once control is back in the event loop.
        struct timeval zero = {0, 0};
        if (event_base_once(c->base, -1, EV_TIMEOUT, deferred_free, c, &zero) == 0)
            return;
        edgelock_port_log(EDGELOCK_LOG_ERROR, "cannot defer client release; leaking it");
        return;
    }
    free_memory(c);
}

void invoke_result(Client *c, edgelock_result_fn cb, uint64_t lock_id, edgelock_status st, int64_t value,
                   void *user)
{
    if (!cb)
        return;
    edgelock_lock lk;
    lk.id = lock_id;
    c->callback_depth++;
    cb(reinterpret_cast<edgelock_client *>(c), lk, st, st == EDGELOCK_OK ? value : 0, user);
    c->callback_depth--;
}

void invoke_lock_lost(Client *c, uint64_t lock_id, uint64_t owner)
{
    if (!c->cfg.on_lock_lost)
        return;
    edgelock_lock lk;
    lk.id = lock_id;
    c->callback_depth++;
    c->cfg.on_lock_lost(reinterpret_cast<edgelock_client *>(c), lk, owner, c->cfg.on_lock_lost_user);
    c->callback_depth--;
}

bool on_loop_thread(const Client *c)
{
    return !c->owns_base || edgelock_port_thread_id() == c->loop_thread_id;
}

} // namespace edgelock
