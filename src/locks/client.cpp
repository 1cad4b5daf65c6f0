// SPDX-License-Identifier: BSD-3-Clause
// Client lifecycle: validate the config, allocate every table once, wire the
// hooks through which the lower layers report back; at the end complete
// everything with SHUTDOWN and free it all.
#include "locks/client.hpp"
#include "base/log.hpp"

#include <event2/event.h>
#include <stdint.h>
#include <string.h>

#include "locks/calls.hpp"
#include "locks/waiter_channels.hpp"
#include "locks/wire.hpp"
#include "base/resp.hpp"
#include "redis/tls.hpp"
#include "redisson/names.hpp"
#include "redisson/scripts.hpp"

namespace edgelock
{

static const char kDefaultUrl[] = "redis://127.0.0.1:6379";
static constexpr uint32_t kMaxCapacity = 1u << 20;

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
    if (cfg->password && strnlen(cfg->password, 256) > 255)
        return false;
    if (cfg->sentinel_password && strnlen(cfg->sentinel_password, 256) > 255)
        return false;
    if (cfg->wait_replicas > 0 &&
        (cfg->wait_replicas_timeout_ms < 1 || cfg->wait_replicas_timeout_ms >= cfg->command_timeout_ms))
        return false;
    if (cfg->tls_server_name && (strnlen(cfg->tls_server_name, 256) > 255 || !cfg->tls_server_name[0]))
        return false;
    if (cfg->client_id) {
        size_t n = strnlen(cfg->client_id, 64);
        if (n == 0 || n > 63 || memchr(cfg->client_id, ':', n))
            return false;
    }
    // A C caller may store any int there: looked at as one, so a value out of
    // the enum's range is refused instead of loaded as an enum (undefined).
    uint32_t sharded;
    static_assert(sizeof(sharded) == sizeof(cfg->sharded_pubsub), "edgelock_sharded_pubsub is an int");
    memcpy(&sharded, &cfg->sharded_pubsub, sizeof(sharded));
    uint32_t log_level;
    static_assert(sizeof(log_level) == sizeof(cfg->log_level), "edgelock_log_level is an int");
    memcpy(&log_level, &cfg->log_level, sizeof(log_level));
    return sharded <= EDGELOCK_SHARDED_OFF && log_level <= EDGELOCK_LOG_DEBUG;
}

// What only a cluster URL asks of the config and of the link.
static bool valid_cluster_config(const edgelock_config *cfg, const RedisUrl &url, const LinkOps *link)
{
    if (!url.cluster)
        return true;
    if (cfg->max_nodes < 1 || cfg->max_nodes > kMaxClusterNodes)
        return false;
    // Sharded pub/sub arrives as RESP3 pushes, which hiredis 0.14 cannot take.
    return link->push || cfg->sharded_pubsub == EDGELOCK_SHARDED_OFF;
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
    size_t keys = 4 * (channel_len(max_name_len) + 64);     // release: name, channel, latch; info: 4 keys
    size_t body = kRenewBatch * per_lock > keys ? kRenewBatch * per_lock : keys;
    return (uint32_t)(script + body + 512);
}

void *client_alloc(Client *c, uint64_t n)
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

template <typename T> static typename FixedTable<T>::Slot *alloc_slots(Client *c, uint32_t cap)
{
    return static_cast<typename FixedTable<T>::Slot *>(client_alloc(c, FixedTable<T>::bytes_for(cap)));
}

// n list or chain heads, each at kNoIndex (empty).
static uint32_t *alloc_heads(Client *c, uint32_t n)
{
    auto *heads = static_cast<uint32_t *>(client_alloc(c, (uint64_t)n * sizeof(uint32_t)));
    for (uint32_t i = 0; heads && i < n; i++)
        heads[i] = kNoIndex;
    return heads;
}

template <typename T> static void free_table(FixedTable<T> &t)
{
    if (t.capacity())
        edgelock_port_free(t.storage());
}

static void free_memory(Client *c)
{
    if (c->waiter_timers) {
        acquire_fini_timers(c);
        edgelock_port_free(c->waiter_timers);
    }
    queue_fini(&c->queue);
    watchdog_fini(c);
    conn_fini(&c->cmd_conn);
    conn_fini(&c->sub_conn);
    cluster_fini(&c->cluster);
    edgelock_port_free(c->cluster.nodes);
    edgelock_port_free(c->cluster.slot_owner);
    sentinel_watch_fini(&c->sentinel_watch);
    free_table(c->locks);
    edgelock_port_free(c->lock_buckets);
    free_table(c->holds);
    edgelock_port_free(c->hold_buckets);
    free_table(c->waiters);
    free_table(c->pubsub.subs);
    edgelock_port_free(c->pubsub.buckets);
    edgelock_port_free(c->channel_waiters);
    free_table(c->queue.cmds);
    edgelock_port_free(c->lock_names);
    edgelock_port_free(c->pubsub.names);
    edgelock_port_free(c->queue.buf);
    if (c->owns_base && c->base)
        event_base_free(c->base);
    edgelock_port_wipe(c->url.password, sizeof(c->url.password)); // not left in freed memory
    edgelock_port_wipe(c->sentinel_password, sizeof(c->sentinel_password));
    if (c->tls)
        tls_context_free(c->tls);
    edgelock_port_free(c);
}

// ---- hooks: how the connections report back ----------------------------------

static void command_conn_ready(void *ctx)
{
    auto *c = static_cast<Client *>(ctx);
    if (c->was_ready_once)
        c->reconnects++;
    c->was_ready_once = true;
    queue_flush(&c->queue);
    acquire_retry_all(c);
    watchdog_kick(c);
}

// Every connection of the command role loads the scripts first, so that the
// lock calls are one EVALSHA each.
static bool command_conn_setup(void *ctx, Connection *conn)
{
    auto *c = static_cast<Client *>(ctx);
    for (int i = 0; i < kScriptPreloadCount; i++) {
        RespCommand rc(c->queue.buf, c->queue.buf_len);
        format_script_load(rc, static_cast<ScriptId>(i));
        const char *out;
        size_t len;
        if (!rc.finish(&out, &len) || !conn_send_setup(conn, out, len))
            return false;
    }
    return true;
}

// The subscriber's keepalive PING goes every max(command_timeout_ms, this).
static constexpr uint32_t kSubscriberPingMs = 3000;

// A subscriber only reads: a PING while it carries a subscription finds a
// path that died without a reset (edgelock.h, command_timeout_ms). Its
// SUBSCRIBEs go without privdata (pubsub.cpp), so a keepalive that has to
// subscribe again (hiredis before 1.1) does too: the default.
static void subscriber_keepalive(Client *c, ConnConfig *cc)
{
    uint32_t timeout = c->cfg.command_timeout_ms;
    cc->keepalive_ms = timeout > kSubscriberPingMs ? timeout : kSubscriberPingMs;
    cc->keepalive_timeout_ms = timeout;
    cc->keepalive = pubsub_keepalive;
    cc->keepalive_ctx = &c->pubsub;
    cc->channel_asked = pubsub_channel_asked;
}

static void sub_conn_ready(void *ctx)
{
    pubsub_on_ready(&static_cast<Client *>(ctx)->pubsub);
}

static void sub_conn_down(void *ctx)
{
    pubsub_on_down(&static_cast<Client *>(ctx)->pubsub);
}

// The sentinels announced another master: a connection to another address
// goes there now (asking the sentinels again) instead of at its next refused
// write. Commands in flight on it complete as on any drop.
static void sentinel_switched(void *ctx, const char *host, uint16_t port)
{
    auto *c = static_cast<Client *>(ctx);
    Connection *conns[] = {&c->cmd_conn, &c->sub_conn};
    for (Connection *conn : conns) {
        // Down or asking a sentinel: it will be told of the switch anyway.
        bool there = conn->have_master && conn->port == port && strcmp(conn->host, host) == 0;
        if (conn->state != ConnState::Down && !conn->resolving && !there)
            conn_drop(conn);
    }
}

// ---- a cluster's hooks ---------------------------------------------------------

static void cluster_subscribers_ready(void *ctx)
{
    pubsub_resubscribe(&static_cast<Client *>(ctx)->pubsub);
}

static void cluster_subscriber_down(void *ctx, Connection *conn)
{
    pubsub_conn_down(&static_cast<Client *>(ctx)->pubsub, conn);
}

static void cluster_sharded_decided(void *ctx, bool sharded)
{
    auto *c = static_cast<Client *>(ctx);
    c->pubsub.sharded = sharded;
    c->protocol.publish = sharded ? "spublish" : "publish";
}

static Connection *route_command(void *cluster, uint16_t slot)
{
    return cluster_command_conn(static_cast<Cluster *>(cluster), slot);
}

static Connection *route_redirected(void *cluster, const Connection *from, uint16_t slot, const char *addr,
                                    size_t len, bool moved)
{
    return cluster_redirected(static_cast<Cluster *>(cluster), from, slot, addr, len, moved);
}

static Connection *route_subscription(void *cluster, uint16_t slot)
{
    return cluster_subscriber_conn(static_cast<Cluster *>(cluster), slot);
}

static void subscription_moved(void *cluster)
{
    cluster_refresh(static_cast<Cluster *>(cluster));
}

// redis-cluster://: the node table and slot map, and the queue and the
// subscriptions routed through them. command_cc: the command connection's
// config; the nodes' subscribers get the keepalive on top of it.
static bool build_cluster(Client *c, const LinkOps *link, const ConnConfig &command_cc)
{
    ConnConfig cc = command_cc;
    subscriber_keepalive(c, &cc);
    const edgelock_config &cfg = c->cfg;
    Cluster *cl = &c->cluster;
    cl->nodes = static_cast<ClusterNode *>(client_alloc(c, (uint64_t)cfg.max_nodes * sizeof(ClusterNode)));
    cl->slot_owner = static_cast<uint8_t *>(client_alloc(c, kClusterSlots));
    if (!cl->nodes || !cl->slot_owner)
        return false;
    memset(cl->nodes, 0, (size_t)cfg.max_nodes * sizeof(ClusterNode));
    const ClusterHooks hooks = {c,
                                command_conn_ready,
                                cluster_subscribers_ready,
                                cluster_subscriber_down,
                                command_conn_setup,
                                cluster_sharded_decided,
                                queue_on_reply,
                                &c->queue,
                                pubsub_on_reply,
                                &c->pubsub};
    ShardedMode mode = cfg.sharded_pubsub == EDGELOCK_SHARDED_ON    ? ShardedMode::On
                       : cfg.sharded_pubsub == EDGELOCK_SHARDED_OFF ? ShardedMode::Off
                                                                    : ShardedMode::Auto;
    bool ok = cluster_init(cl, cl->nodes, cfg.max_nodes, cl->slot_owner, &c->loop, link, cc, mode, hooks);
    if (cl->sharded_known)
        cluster_sharded_decided(c, cl->sharded);
    c->queue.conn = nullptr;
    c->queue.hooks.route = route_command;
    c->queue.hooks.redirected = route_redirected;
    c->queue.hooks.route_ctx = cl;
    c->pubsub.conn = nullptr;
    c->pubsub.hooks.route = route_subscription;
    c->pubsub.hooks.route_ctx = cl;
    c->pubsub.hooks.moved = subscription_moved;
    // Timers: the refresh, and each node's two connections.
    c->table_bytes += (1 + 2 * (uint64_t)cfg.max_nodes) * loop_timer_bytes(&c->loop);
    return ok;
}

static bool build(Client *c, const LinkOps *link)
{
    const edgelock_config &cfg = c->cfg;
    const uint32_t chan_cap = (uint32_t)channel_len(cfg.max_name_len);
    const uint32_t buf_len = command_buffer_len(cfg.max_name_len);

    auto *lock_slots = alloc_slots<LockEntry>(c, cfg.max_locks);
    c->lock_buckets = alloc_heads(c, cfg.max_locks);
    auto *hold_slots = alloc_slots<Hold>(c, cfg.max_holds);
    c->hold_buckets = alloc_heads(c, cfg.max_holds);
    auto *waiter_slots = alloc_slots<Waiter>(c, cfg.max_waiters);
    auto *sub_slots = alloc_slots<Subscription>(c, cfg.max_subscriptions);
    auto *sub_buckets =
        static_cast<uint32_t *>(client_alloc(c, (uint64_t)cfg.max_subscriptions * sizeof(uint32_t)));
    c->channel_waiters = alloc_heads(c, cfg.max_subscriptions);
    auto *cmd_slots = alloc_slots<Command>(c, cfg.max_commands);
    c->lock_names = static_cast<char *>(client_alloc(c, (uint64_t)cfg.max_locks * cfg.max_name_len));
    auto *chan_names = static_cast<char *>(client_alloc(c, (uint64_t)cfg.max_subscriptions * chan_cap));
    auto *buf = static_cast<char *>(client_alloc(c, buf_len));
    c->waiter_timers =
        static_cast<WaiterTimer *>(client_alloc(c, (uint64_t)cfg.max_waiters * sizeof(WaiterTimer)));
    // Tables first, so that free_memory() frees whatever was had.
    if (lock_slots) {
        // Lock handles are the application's: one passed to the wrong client
        // must be STALE_HANDLE there, not the lock in the same slot (every
        // client's first handle would otherwise be the same value).
        uint32_t first_gen;
        edgelock_port_random(&first_gen, sizeof(first_gen));
        c->locks.init(lock_slots, cfg.max_locks, first_gen);
    }
    if (hold_slots)
        c->holds.init(hold_slots, cfg.max_holds);
    if (waiter_slots)
        c->waiters.init(waiter_slots, cfg.max_waiters);
    if (sub_slots)
        c->pubsub.subs.init(sub_slots, cfg.max_subscriptions);
    if (cmd_slots)
        c->queue.cmds.init(cmd_slots, cfg.max_commands);
    c->pubsub.buckets = sub_buckets;
    c->pubsub.names = chan_names;
    c->queue.buf = buf;
    if (!lock_slots || !c->lock_buckets || !hold_slots || !c->hold_buckets || !waiter_slots || !sub_slots ||
        !sub_buckets || !c->channel_waiters || !cmd_slots || !c->lock_names || !chan_names || !buf ||
        !c->waiter_timers)
        return false;

    // Replies go straight to their consumer: commands to the queue, channel
    // messages to the subscriptions.
    const ConnHooks cmd_hooks = {
        c, command_conn_ready, nullptr, command_conn_setup, queue_on_reply, &c->queue, nullptr};
    const ConnHooks sub_hooks = {c,          sub_conn_ready, sub_conn_down, nullptr, pubsub_on_reply,
                                 &c->pubsub, nullptr};
    const QueueHooks queue_hooks = {c, wire_format, wire_reload, nullptr, nullptr, nullptr};
    c->on_command_slot_free = acquire_on_command_slot_free;
    c->on_undo_answered = acquire_after_undo;
    c->on_owner_released = acquire_grant_released;
    const PubSubHooks pubsub_hooks = {c,      channel_on_subscribed, channel_on_message, nullptr, nullptr,
                                      nullptr};
    ConnConfig cc = {"command",
                     &c->url,
                     cfg.connect_timeout_ms,
                     cfg.reconnect_min_ms,
                     cfg.reconnect_max_ms,
                     c->tls,
                     c->tls_name[0] ? c->tls_name : nullptr,
                     !cfg.tls_insecure_skip_verify,
                     c->sentinel_password[0] ? c->sentinel_password : nullptr,
                     false,
                     false,
                     c->owns_base,  // a blocked caller polls for its reply right after sending
                     !c->owns_base, // the application's loop
                     c->owns_base && !c->url.cluster, // the blocking face's leader reads it
                     0,
                     0,
                     nullptr,
                     nullptr,
                     nullptr,
                     nullptr}; // no keepalive: the queue's timeouts notice a dead path
    bool ok = conn_init(&c->cmd_conn, &c->loop, link, cc, cmd_hooks);
    const ConnConfig cc_command = cc;
    cc.role = "subscriber";
    cc.pubsub = true;
    // Nobody polls for a (UN)SUBSCRIBE's answer on its own: the UNSUBSCRIBE of
    // a waiter that got its lock goes with the loop's next turn, not before
    // the call returns.
    cc.write_at_once = false;
    cc.leader_reads = false;
    ConnConfig cc_sub = cc;
    subscriber_keepalive(c, &cc_sub);
    ok = conn_init(&c->sub_conn, &c->loop, link, cc_sub, sub_hooks) && ok;
    if (c->url.sentinel) {
        const SentinelWatchHooks watch_hooks = {c, sentinel_switched};
        // A subscriber too: the subscriber's keepalive period and timeout.
        ok = sentinel_watch_init(&c->sentinel_watch, &c->loop, link, cc_sub, watch_hooks) && ok;
        c->table_bytes += loop_timer_bytes(&c->loop);
    }
    ok = queue_init(&c->queue, cmd_slots, cfg.max_commands, buf, buf_len, &c->cmd_conn, &c->loop,
                    cfg.command_timeout_ms, queue_hooks) &&
         ok;
    pubsub_init(&c->pubsub, sub_slots, cfg.max_subscriptions, sub_buckets, chan_names, chan_cap, &c->sub_conn,
                pubsub_hooks);
    if (c->url.cluster)
        ok = build_cluster(c, link, cc_command) && ok;
    ok = watchdog_init(c) && ok;
    ok = acquire_init_timers(c) && ok;
    // Timers: 2 connections (3 with a sentinel watch), the queue, the watchdog,
    // one per waiter and the channels' leave (acquire.cpp).
    c->table_bytes += (5 + (uint64_t)cfg.max_waiters) * loop_timer_bytes(&c->loop);
    return ok;
}

bool client_config_valid(const edgelock_config *cfg)
{
    RedisUrl url;
    bool ok = cfg && valid_config(cfg) && parse_redis_url(cfg->url ? cfg->url : kDefaultUrl, &url);
    edgelock_port_wipe(url.password, sizeof(url.password));
    return ok;
}

Client *client_create(const edgelock_config *cfg, const Loop &loop, bool owns_base, const LinkOps *link,
                      edgelock_status *st)
{
    *st = EDGELOCK_ERR_INVALID_ARG;
    RedisUrl url;
    if (!client_config_valid(cfg) || !parse_redis_url(cfg->url ? cfg->url : kDefaultUrl, &url) ||
        !valid_cluster_config(cfg, url, link)) {
        edgelock_port_wipe(url.password, sizeof(url.password));
        if (owns_base && loop.base)
            event_base_free(loop.base);
        return nullptr;
    }

    *st = EDGELOCK_ERR_NO_MEMORY;
    Client *c = static_cast<Client *>(edgelock_port_alloc(sizeof(Client)));
    if (!c) {
        edgelock_port_wipe(url.password, sizeof(url.password));
        if (owns_base && loop.base)
            event_base_free(loop.base);
        return nullptr;
    }
    *c = Client();
    c->cfg = *cfg;
    c->cfg.url = nullptr; // parsed; the caller's strings need not outlive the call
    c->cfg.client_id = nullptr;
    c->cfg.password = nullptr;
    if (cfg->sentinel_password)
        memcpy(c->sentinel_password, cfg->sentinel_password, strnlen(cfg->sentinel_password, 255));
    c->cfg.sentinel_password = nullptr;
    c->cfg.tls_ca = c->cfg.tls_cert = c->cfg.tls_key = c->cfg.tls_server_name = nullptr;
    c->url = url;
    c->log = {cfg->log_fn, cfg->log_user, (int)cfg->log_level};
    edgelock_port_wipe(url.password, sizeof(url.password));
    if (cfg->password) {
        memset(c->url.password, 0, sizeof(c->url.password));
        memcpy(c->url.password, cfg->password, strnlen(cfg->password, 255));
    }
    c->table_bytes = sizeof(Client);
    if (cfg->client_id)
        memcpy(c->client_id, cfg->client_id, strnlen(cfg->client_id, 63));
    else
        write_client_id(c->client_id);
    c->protocol = ClientProtocol{c->client_id, cfg->unlock_latch_ttl_ms, cfg->watchdog_lease_ms, "publish"};
    c->loop = loop;
    c->loop.log = &c->log;
    c->base = loop.base;
    c->owns_base = owns_base;
    edgelock_port_random(c->latch_prefix, sizeof(c->latch_prefix));
    if (c->url.tls) {
        // The files are read now: a bad one fails the creation, not every connect.
        TlsOptions tls = {cfg->tls_ca, cfg->tls_cert, cfg->tls_key, !cfg->tls_insecure_skip_verify, &c->log};
        c->tls = tls_context_new(tls, st);
        if (cfg->tls_server_name)
            memcpy(c->tls_name, cfg->tls_server_name, strnlen(cfg->tls_server_name, sizeof(c->tls_name) - 1));
        if (!c->tls) {
            free_memory(c);
            return nullptr;
        }
        *st = EDGELOCK_ERR_NO_MEMORY;
    }
    if (!build(c, link)) {
        free_memory(c);
        return nullptr;
    }
    *st = EDGELOCK_OK;
    return c;
}

void client_start(Client *c)
{
    if (c->url.cluster) {
        cluster_start(&c->cluster);
        return;
    }
    conn_start(&c->cmd_conn);
    conn_start(&c->sub_conn);
    if (c->url.sentinel)
        sentinel_watch_start(&c->sentinel_watch);
}

void client_watch_link(Client *c, ClientWatch *w)
{
    w->client = c;
    w->prev = nullptr;
    w->next = c->watches;
    if (c->watches)
        c->watches->prev = w;
    c->watches = w;
}

void client_watch_unlink(ClientWatch *w)
{
    if (!w->client)
        return;
    if (w->prev)
        w->prev->next = w->next;
    else
        w->client->watches = w->next;
    if (w->next)
        w->next->prev = w->prev;
    w->client = nullptr;
}

void client_shutdown(Client *c)
{
    if (c->closing)
        return;
    // First the calls spanning other clients too: they let go of this one
    // (nothing of it is touched once it is freed) and end with SHUTDOWN;
    // their member calls here are failed below like every other.
    while (c->watches)
        c->watches->closing(c->watches, c);
    // Last words, best effort: fair waiters leave their queues (else those
    // behind them wait out their windows), and whatever is queued, those
    // included, goes onto the socket before it closes.
    acquire_abandon_fair_all(c);
    queue_flush(&c->queue);
    if (c->url.cluster)
        cluster_flush(&c->cluster);
    else
        conn_flush_output(&c->cmd_conn);
    c->closing = true;
    c->queue.closed = true;
    c->pubsub.closed = true;
    acquire_fail_all(c, EDGELOCK_ERR_SHUTDOWN);
    queue_fail_all(&c->queue, EDGELOCK_ERR_SHUTDOWN);
    watchdog_stop(c);
    conn_close(&c->cmd_conn);
    conn_close(&c->sub_conn);
    if (c->url.cluster)
        cluster_close(&c->cluster);
    if (c->url.sentinel)
        sentinel_watch_close(&c->sentinel_watch);
}

static void deferred_free(evutil_socket_t, short, void *arg)
{
    free_memory(static_cast<Client *>(arg));
}

void client_destroy(Client *c)
{
    client_shutdown(c);
    if (c->callback_depth > 0 && c->base) {
        // Frames of ours are still on the stack below the user's callback; free
        // once control is back in the event loop.
        struct timeval zero = {0, 0};
        if (event_base_once(c->base, -1, EV_TIMEOUT, deferred_free, c, &zero) == 0)
            return;
        log_to(c->loop.log, EDGELOCK_LOG_ERROR, "cannot defer client release; leaking it");
        return;
    }
    free_memory(c);
}

} // namespace edgelock
