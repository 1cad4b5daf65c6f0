// SPDX-License-Identifier: BSD-3-Clause
// The client: every table, the two connections, the command queue, the
// subscriptions and the watchdog, on one loop. Every function of the locks
// layer runs on the thread driving the loop (one at a time); api/blocking.cpp
// is the only way in from other threads. client.cpp builds it and wires the
// hooks through which the lower layers report back (connection up/down,
// replies, messages).
#pragma once

#include <stdint.h>
#include <string.h>

#include "base/log.hpp"
#include "base/table.hpp"
#include "edgelock/edgelock.h"
#include "event/loop.hpp"
#include "locks/acquire.hpp"
#include "locks/handles.hpp"
#include "locks/holds.hpp"
#include "locks/watchdog.hpp"
#include "port.h"
#include "redis/cluster.hpp"
#include "redis/connection.hpp"
#include "redis/pubsub.hpp"
#include "redis/queue.hpp"
#include "redis/sentinel_watch.hpp"
#include "redis/url.hpp"
#include "redisson/format.hpp"

namespace edgelock
{

struct BlockingFace; // api/blocking.hpp: the owned loop thread, when there is one
struct Client;

// A call of a higher layer that spans clients (composite/async: a MultiLock
// or RedLock whose state is the caller's) and must hear when one of them
// shuts down, since nothing of that client may be touched afterwards. Linked
// into each member's client while the call runs; client_shutdown calls
// closing() for each one still linked, which must unlink it (and any other
// link of its call on that client) before it returns.
struct ClientWatch {
    ClientWatch *prev, *next;
    Client *client; // the client it is linked into; null when not linked
    void (*closing)(ClientWatch *w, Client *c);
};
void client_watch_link(Client *c, ClientWatch *w);
void client_watch_unlink(ClientWatch *w); // nothing when not linked

struct Client {
    edgelock_config cfg;
    RedisUrl url;
    void *tls;                   // rediss://: the TLS context (redis/tls.hpp)
    char tls_name[256];          // rediss://: SNI and the name verified, when configured
    char sentinel_password[256]; // redis-sentinel://: the sentinels\' AUTH
    char client_id[64];
    ClientProtocol protocol; // what every command carries (client id, times)
    Loop loop;               // its log is &log
    LogSink log;             // edgelock_config.log_fn
    struct event_base *base;
    bool owns_base;
    bool closing;
    uint32_t callback_depth;
    ClientWatch *watches; // the composite calls that have a member here

    FixedTable<LockEntry> locks;
    char *lock_names; // max_locks * max_name_len
    FixedTable<Hold> holds;
    uint32_t *lock_buckets; // max_locks chain heads of the name index (handles.hpp)
    uint32_t *hold_buckets; // max_holds chain heads of the hold index (holds.hpp)
    FixedTable<Waiter> waiters;
    WaiterTimer *waiter_timers;
    // max_subscriptions list heads: the waiters of each subscription, by its
    // index (waiter_channels.hpp).
    uint32_t *channel_waiters;
    Timer leave_timer; // acquire.cpp: the channels finished waiters left, at the loop's next turn
    uint64_t waiter_seq;
    uint32_t starved_waiters;                // waiters whose retry found the command table full
    void (*on_command_slot_free)(Client *c); // acquire.cpp: retry one of them
    // Give-backs of locks in the queue (release.cpp's cleanup releases: an
    // undo, a resent unlock, a drain). A lock call of the same owner and
    // name waits for them (acquire.cpp, behind_undo), woken through
    // on_undo_answered when one completes.
    uint32_t undos_out;
    void (*on_undo_answered)(Client *c);
    // Lock calls granted whose WAIT is still to answer (wait_replicas;
    // acquire.cpp, Waiter::replicating), or whose OK is held back behind a
    // give-back of their owner's (giveback.cpp grant_ok). A release that
    // frees the lock of one of their owners meanwhile ran after their grant
    // and took it (on_owner_released, giveback.cpp: they try again).
    uint32_t replicating_waiters;
    void (*on_owner_released)(Client *c, uint64_t lock_id, uint64_t owner);
    // The connection the completing command's reply came on, while its done
    // function runs (null: it never went out): a WAIT's answer counts only
    // for a grant from the same node.
    Connection *reply_conn;

    // One node: its command and subscriber connections. redis-cluster://: the
    // cluster's (these two are not used).
    Connection cmd_conn;
    Connection sub_conn;
    Cluster cluster;
    SentinelWatch sentinel_watch; // redis-sentinel:// only
    CommandQueue queue;
    PubSub pubsub;
    Watchdog watchdog;

    uint8_t latch_prefix[8]; // unlock request ids: this random prefix and a counter
    uint64_t latch_counter;
    bool was_ready_once;
    uint64_t reconnects;
    uint64_t table_bytes;

    // Owned loop: the thread driving the engine now (the loop thread or a
    // blocked caller leading, api/blocking.cpp), 0 for none. Written under the
    // face's mutex, read by any thread with __atomic loads: a thread compares
    // it with its own id, which only it ever stores.
    uint64_t driver_thread_id;
    BlockingFace *face;
};

// ---- reads of the lock table, on every path (inline) ----

// The entry of a live handle id, or null for a stale one.
inline LockEntry *lock_get(Client *c, uint64_t lock_id)
{
    return c->locks.get_id(lock_id);
}

// A live handle's name and kind, as the wire needs them.
inline LockRef lock_ref(Client *c, uint64_t lock_id)
{
    uint32_t i = id_index(lock_id);
    const LockEntry *le = c->locks.get(i);
    return LockRef{c->lock_names + (size_t)i * c->cfg.max_name_len, le->name_len,
                   (edgelock_lock_kind)le->kind};
}

// Whether two live handles name one lock: Redis counts an owner's holds
// through both in one hash field (they are one RLock to Redisson).
inline bool same_lock_name(Client *c, uint64_t a, uint64_t b)
{
    const LockRef x = lock_ref(c, a), y = lock_ref(c, b);
    return x.len == y.len && lock_get(c, a)->name_hash == lock_get(c, b)->name_hash &&
           memcmp(x.name, y.name, x.len) == 0;
}

inline edgelock_lock_kind lock_kind(Client *c, uint64_t lock_id)
{
    return (edgelock_lock_kind)lock_get(c, lock_id)->kind;
}

// The cluster slot of a live handle's keys (Redisson tags them all with the
// name); 0 off a cluster.
inline uint16_t lock_slot(Client *c, uint64_t lock_id)
{
    if (!c->url.cluster)
        return 0;
    LockRef r = lock_ref(c, lock_id);
    return key_hash_slot(r.name, r.len);
}

// The command connection serving a slot now: the one, or the slot's master
// (null while a cluster's map does not know it).
inline Connection *slot_conn(Client *c, uint16_t slot)
{
    return c->url.cluster ? cluster_command_conn(&c->cluster, slot) : &c->cmd_conn;
}

inline bool slot_ready(Client *c, uint16_t slot)
{
    Connection *conn = slot_conn(c, slot);
    return conn && conn_ready(conn);
}

// Whether commands can go out: the connection, or every master of the map.
inline bool client_connected(const Client *c)
{
    return c->url.cluster ? cluster_ready(&c->cluster) : conn_ready(&c->cmd_conn);
}

// True when cfg is one client_create() accepts (fields and URL).
// Whether every lock of this client lives on one server (all but a
// redis-cluster:// client): what RedLock counts as one vote.
inline bool client_one_server(const edgelock_client *client)
{
    return !reinterpret_cast<const Client *>(client)->url.cluster;
}

bool client_config_valid(const edgelock_config *cfg);

// Build a client on loop (libevent: loop->base), every table allocated; the
// connections are not started. link: how connections reach Redis.
Client *client_create(const edgelock_config *cfg, const Loop &loop, bool owns_base, const LinkOps *link,
                      edgelock_status *st);
void client_start(Client *c);    // connect
void client_shutdown(Client *c); // complete everything with SHUTDOWN, close connections
void client_destroy(Client *c);  // shutdown, then free (deferred when inside a callback)
// Bytes allocated outside the tables, counted in edgelock_stats.table_bytes.
void *client_alloc(Client *c, uint64_t bytes);

} // namespace edgelock
