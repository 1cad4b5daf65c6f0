// SPDX-License-Identifier: BSD-3-Clause
// extern "C" shims: check arguments, map handles to objects, pick the path
// (direct on the loop thread, or through the blocking hand-off).
#include <event2/event.h>
#include <event2/thread.h>
#include <string.h>

#include "api/blocking.hpp"
#include "api/entry.hpp"
#include "base/log.hpp"
#include "api/composite.hpp"
#include "locks/acquire.hpp"
#include "locks/callbacks.hpp"
#include "locks/client.hpp"
#include "locks/composite/async.hpp"
#include "locks/queries.hpp"
#include "locks/scan.hpp"
#include "locks/release.hpp"
#include "redis/link.hpp"
#include "redis/tls.hpp"
#include "redis/url.hpp"

using namespace edgelock;

extern "C" {

void edgelock_config_init(edgelock_config *cfg)
{
    if (!cfg)
        return;
    memset(cfg, 0, sizeof(*cfg));
    cfg->url = "redis://127.0.0.1:6379";
    cfg->max_locks = 64;
    cfg->max_holds = 64;
    cfg->max_waiters = 64;
    cfg->max_subscriptions = 32;
    cfg->max_commands = 128;
    cfg->max_name_len = 128;
    cfg->watchdog_lease_ms = 30000;
    cfg->command_timeout_ms = 3000;
    cfg->connect_timeout_ms = 3000;
    cfg->reconnect_min_ms = 100;
    cfg->reconnect_max_ms = 5000;
    cfg->unlock_latch_ttl_ms = 16000;
    cfg->fair_wait_ms = 300000;
    cfg->wait_replicas_timeout_ms = 1000;
    cfg->max_nodes = 16;
    cfg->sharded_pubsub = EDGELOCK_SHARDED_AUTO;
    cfg->log_level = EDGELOCK_LOG_WARN;
}

// libevent's first evthread_use_pthreads() sets up its global locks without a
// lock of its own: two threads creating clients at once both did it, and one
// set of locks leaked. Once per process, whoever comes first.
static edgelock_port_once g_libevent_threads_once = EDGELOCK_PORT_ONCE_INIT;
static int g_libevent_threads_rc = -1;
static void use_libevent_threads()
{
    g_libevent_threads_rc = evthread_use_pthreads();
}

edgelock_status edgelock_client_create(const edgelock_config *cfg, struct event_base *base,
                                       edgelock_client **out)
{
    if (!cfg || !out || !client_config_valid(cfg))
        return EDGELOCK_ERR_INVALID_ARG;
    // The owned loop is woken from other threads: libevent must be thread-aware
    // before that base exists. Idempotent.
    if (!base) {
        edgelock_port_call_once(&g_libevent_threads_once, use_libevent_threads);
        if (g_libevent_threads_rc != 0)
            return EDGELOCK_ERR_NO_MEMORY;
    }
    struct event_base *own = nullptr;
    if (!base) {
        // The changelist folds hiredis's add/remove of the write event around
        // every command into one epoll_ctl per loop iteration, at most. The
        // precise timer: by default libevent reads CLOCK_MONOTONIC_COARSE, a
        // clock tick (1-4 ms) behind, and reports a timer due up to a tick
        // early; the seam then waits out the rest (timer_expired), a tick late.
        struct event_config *ec = event_config_new();
        if (ec) {
            event_config_set_flag(ec, EVENT_BASE_FLAG_EPOLL_USE_CHANGELIST);
            event_config_set_flag(ec, EVENT_BASE_FLAG_PRECISE_TIMER);
            own = event_base_new_with_config(ec);
            event_config_free(ec);
        }
        if (!own)
            return EDGELOCK_ERR_NO_MEMORY;
    }
    Loop loop;
    loop_init_libevent(&loop, base ? base : own);
    edgelock_status st;
    Client *c = client_create(cfg, loop, own != nullptr, &kHiredisLink, &st); // frees own on failure
    if (!c)
        return st;
    client_start(c);
    if (!base) {
        st = blocking_start(c);
        if (st != EDGELOCK_OK) {
            client_shutdown(c);
            client_destroy(c);
            return st;
        }
    }
    *out = reinterpret_cast<edgelock_client *>(c);
    return EDGELOCK_OK;
}

void edgelock_client_destroy(edgelock_client *client)
{
    Client *c = as_client(client);
    if (!c)
        return;
    if (c->owns_base) {
        if (on_loop_thread(c)) {
            // Joining the loop thread from itself would deadlock.
            log_to(c->loop.log, EDGELOCK_LOG_ERROR,
                   "edgelock_client_destroy called on the client's own "
                   "loop thread; ignored");
            return;
        }
        blocking_stop(c);
    }
    client_destroy(c);
}

const char *edgelock_client_id(const edgelock_client *client)
{
    return client ? reinterpret_cast<const Client *>(client)->client_id : "";
}

edgelock_status edgelock_client_stats(edgelock_client *client, edgelock_stats *out)
{
    if (!client || !out)
        return EDGELOCK_ERR_INVALID_ARG;
    BlockingRequest r = {};
    r.op = ReqOp::Stats;
    r.stats_out = out;
    return local_call(as_client(client), &r);
}

edgelock_status edgelock_lock_new(edgelock_client *client, const void *name, size_t name_len,
                                  edgelock_lock *out)
{
    return edgelock_lock_new_kind(client, EDGELOCK_REENTRANT, name, name_len, out);
}

edgelock_status edgelock_lock_new_kind(edgelock_client *client, edgelock_lock_kind kind, const void *name,
                                       size_t name_len, edgelock_lock *out)
{
    if (!client || !name || !out)
        return EDGELOCK_ERR_INVALID_ARG;
    // A C caller may pass any int: look at it as one, so that a value out of
    // the enum's range is refused instead of loaded as an enum (undefined).
    uint32_t k;
    static_assert(sizeof(k) == sizeof(kind), "edgelock_lock_kind is an int");
    memcpy(&k, &kind, sizeof(k));
    if (k > EDGELOCK_LATCH)
        return EDGELOCK_ERR_INVALID_ARG;
    BlockingRequest r = {};
    r.op = ReqOp::LockNew;
    r.kind = kind;
    r.name = name;
    r.name_len = name_len;
    r.lock_out = out;
    return local_call(as_client(client), &r);
}

edgelock_status edgelock_lock_free(edgelock_client *client, edgelock_lock lock)
{
    if (!client)
        return EDGELOCK_ERR_INVALID_ARG;
    BlockingRequest r = {};
    r.op = ReqOp::LockFree;
    r.lock = lock;
    return local_call(as_client(client), &r);
}

edgelock_status edgelock_lock_valid(edgelock_client *client, edgelock_lock lock, uint64_t owner,
                                    int64_t *remaining_ms)
{
    if (!client || !remaining_ms)
        return EDGELOCK_ERR_INVALID_ARG;
    *remaining_ms = 0;
    BlockingRequest r = {};
    r.op = ReqOp::Valid;
    r.lock = lock;
    r.owner = owner;
    r.remaining_out = remaining_ms;
    return local_call(as_client(client), &r);
}

edgelock_status edgelock_token_server(edgelock_client *client, edgelock_lock lock, uint64_t owner,
                                      uint64_t *server)
{
    if (!client || !server)
        return EDGELOCK_ERR_INVALID_ARG;
    *server = 0;
    BlockingRequest r = {};
    r.op = ReqOp::Server;
    r.lock = lock;
    r.owner = owner;
    r.server_out = server;
    return local_call(as_client(client), &r);
}

edgelock_status edgelock_cancel(edgelock_client *client, uint64_t owner)
{
    if (!client)
        return EDGELOCK_ERR_INVALID_ARG;
    BlockingRequest r = {};
    r.op = ReqOp::Cancel;
    r.owner = owner;
    return local_call(as_client(client), &r);
}

// ---- asynchronous ----

edgelock_status edgelock_lock_async(edgelock_client *client, edgelock_lock lock, uint64_t owner,
                                    int64_t wait_ms, int64_t lease_ms, edgelock_result_fn cb, void *user)
{
    edgelock_status st = async_entry(client);
    return st != EDGELOCK_OK ? st
                             : acquire_start(as_client(client), lock, owner, wait_ms, lease_ms, cb, user);
}

edgelock_status edgelock_unlock_async(edgelock_client *client, edgelock_lock lock, uint64_t owner,
                                      edgelock_result_fn cb, void *user)
{
    edgelock_status st = async_entry(client);
    return st != EDGELOCK_OK ? st : release_start(as_client(client), lock, owner, cb, user);
}

edgelock_status edgelock_force_unlock_async(edgelock_client *client, edgelock_lock lock,
                                            edgelock_result_fn cb, void *user)
{
    edgelock_status st = async_entry(client);
    return st != EDGELOCK_OK ? st : query_start(as_client(client), LockOp::ForceRelease, lock, 0, cb, user);
}

edgelock_status edgelock_is_locked_async(edgelock_client *client, edgelock_lock lock, edgelock_result_fn cb,
                                         void *user)
{
    edgelock_status st = async_entry(client);
    return st != EDGELOCK_OK ? st : query_start(as_client(client), LockOp::Exists, lock, 0, cb, user);
}

edgelock_status edgelock_hold_count_async(edgelock_client *client, edgelock_lock lock, uint64_t owner,
                                          edgelock_result_fn cb, void *user)
{
    edgelock_status st = async_entry(client);
    return st != EDGELOCK_OK ? st : query_start(as_client(client), LockOp::HoldCount, lock, owner, cb, user);
}

edgelock_status edgelock_remaining_ttl_async(edgelock_client *client, edgelock_lock lock,
                                             edgelock_result_fn cb, void *user)
{
    edgelock_status st = async_entry(client);
    return st != EDGELOCK_OK ? st : query_start(as_client(client), LockOp::Ttl, lock, 0, cb, user);
}

// ---- blocking ----

uint64_t edgelock_current_owner(void)
{
    return edgelock_port_thread_id();
}

static edgelock_status call(edgelock_client *client, ReqOp op, edgelock_lock lock, int64_t wait_ms,
                            int64_t lease_ms, int64_t *value)
{
    if (!client)
        return EDGELOCK_ERR_INVALID_ARG;
    BlockingRequest r = {};
    r.op = op;
    r.lock = lock;
    r.owner = edgelock_port_thread_id();
    r.wait_ms = wait_ms;
    r.lease_ms = lease_ms;
    return blocking_call(as_client(client), &r, value);
}

edgelock_status edgelock_acquire(edgelock_client *client, edgelock_lock lock)
{
    return call(client, ReqOp::Acquire, lock, EDGELOCK_WAIT_FOREVER, EDGELOCK_LEASE_WATCHDOG, nullptr);
}

edgelock_status edgelock_try_lock(edgelock_client *client, edgelock_lock lock, int64_t wait_ms,
                                  int64_t lease_ms)
{
    return call(client, ReqOp::Acquire, lock, wait_ms, lease_ms, nullptr);
}

edgelock_status edgelock_try_lock_token(edgelock_client *client, edgelock_lock lock, int64_t wait_ms,
                                        int64_t lease_ms, int64_t *token)
{
    if (!token)
        return EDGELOCK_ERR_INVALID_ARG;
    *token = 0;
    return call(client, ReqOp::Acquire, lock, wait_ms, lease_ms, token);
}

static edgelock_status call_flag(edgelock_client *client, ReqOp op, edgelock_lock lock, int *out)
{
    int64_t v = 0;
    edgelock_status st = call(client, op, lock, 0, 0, &v);
    if (out)
        *out = st == EDGELOCK_OK && v > 0 ? 1 : 0;
    return st;
}

edgelock_status edgelock_unlock(edgelock_client *client, edgelock_lock lock, int *released)
{
    return call_flag(client, ReqOp::Release, lock, released);
}

edgelock_status edgelock_force_unlock(edgelock_client *client, edgelock_lock lock, int *deleted)
{
    return call_flag(client, ReqOp::ForceRelease, lock, deleted);
}

edgelock_status edgelock_is_locked(edgelock_client *client, edgelock_lock lock, int *locked)
{
    if (!locked)
        return EDGELOCK_ERR_INVALID_ARG;
    return call_flag(client, ReqOp::Exists, lock, locked);
}

edgelock_status edgelock_is_held_by_current_thread(edgelock_client *client, edgelock_lock lock, int *held)
{
    if (!held)
        return EDGELOCK_ERR_INVALID_ARG;
    return call_flag(client, ReqOp::HoldCount, lock, held);
}

edgelock_status edgelock_hold_count(edgelock_client *client, edgelock_lock lock, int64_t *count)
{
    if (!count)
        return EDGELOCK_ERR_INVALID_ARG;
    return call(client, ReqOp::HoldCount, lock, 0, 0, count);
}

edgelock_status edgelock_remaining_ttl(edgelock_client *client, edgelock_lock lock, int64_t *ttl_ms)
{
    if (!ttl_ms)
        return EDGELOCK_ERR_INVALID_ARG;
    return call(client, ReqOp::Ttl, lock, 0, 0, ttl_ms);
}

edgelock_status edgelock_lock_info_get(edgelock_client *client, edgelock_lock lock, edgelock_lock_info *info)
{
    if (!client || !info)
        return EDGELOCK_ERR_INVALID_ARG;
    BlockingRequest r = {};
    r.op = ReqOp::Info;
    r.lock = lock;
    r.info = info;
    return blocking_call(as_client(client), &r, nullptr);
}

edgelock_status edgelock_lock_info_async(edgelock_client *client, edgelock_lock lock,
                                         edgelock_lock_info *info, edgelock_result_fn cb, void *user)
{
    edgelock_status st = async_entry(client);
    return st != EDGELOCK_OK ? st : info_start(as_client(client), lock, info, cb, user);
}

edgelock_status edgelock_scan_locks(edgelock_client *client, edgelock_scan *scan)
{
    if (!client || !scan)
        return EDGELOCK_ERR_INVALID_ARG;
    BlockingRequest r = {};
    r.op = ReqOp::Scan;
    r.scan = scan;
    return blocking_call(as_client(client), &r, nullptr);
}

edgelock_status edgelock_scan_locks_async(edgelock_client *client, edgelock_scan *scan, edgelock_result_fn cb,
                                          void *user)
{
    edgelock_status st = async_entry(client);
    return st != EDGELOCK_OK ? st : scan_start(as_client(client), scan, cb, user);
}

edgelock_status edgelock_url_redact(const char *url, char *out, size_t cap)
{
    if (out && cap)
        out[0] = 0;
    RedisUrl parsed;
    bool ok = url && parse_redis_url(url, &parsed);
    if (ok && out && cap)
        redact_redis_url(url, parsed, out, cap);
    edgelock_port_wipe(parsed.password,
                       sizeof(parsed.password)); // decoded, even by a parse that failed later
    return ok ? EDGELOCK_OK : EDGELOCK_ERR_INVALID_ARG;
}

const char *edgelock_version(void)
{
    return EDGELOCK_VERSION_STRING;
}

int edgelock_tls_available(void)
{
    return tls_available() ? 1 : 0;
}

int edgelock_sharded_pubsub_available(void)
{
    return kHiredisLink.push ? 1 : 0;
}

// ---- composites ----

edgelock_status edgelock_multi_try_lock(const edgelock_member *members, size_t n, int64_t wait_ms,
                                        int64_t lease_ms)
{
    return multi_try_lock(members, n, wait_ms, lease_ms);
}

edgelock_status edgelock_multi_unlock(const edgelock_member *members, size_t n)
{
    return multi_unlock(members, n);
}

edgelock_status edgelock_redlock_try_lock(const edgelock_member *members, size_t n, int64_t wait_ms,
                                          int64_t lease_ms, int64_t *validity_ms)
{
    return redlock_try_lock(members, n, wait_ms, lease_ms, validity_ms);
}

edgelock_status edgelock_redlock_unlock(const edgelock_member *members, size_t n)
{
    return redlock_unlock(members, n);
}

edgelock_status edgelock_multi_lock_async(edgelock_composite *state, const edgelock_member *members, size_t n,
                                          uint64_t owner, int64_t wait_ms, int64_t lease_ms,
                                          edgelock_result_fn cb, void *user)
{
    return multi_lock_async(state, members, n, owner, wait_ms, lease_ms, cb, user);
}

edgelock_status edgelock_multi_unlock_async(edgelock_composite *state, const edgelock_member *members,
                                            size_t n, uint64_t owner, edgelock_result_fn cb, void *user)
{
    return multi_unlock_async(state, members, n, owner, cb, user);
}

edgelock_status edgelock_redlock_lock_async(edgelock_composite *state, const edgelock_member *members,
                                            size_t n, uint64_t owner, int64_t wait_ms, int64_t lease_ms,
                                            edgelock_result_fn cb, void *user)
{
    return redlock_lock_async(state, members, n, owner, wait_ms, lease_ms, cb, user);
}

edgelock_status edgelock_redlock_unlock_async(edgelock_composite *state, const edgelock_member *members,
                                              size_t n, uint64_t owner, edgelock_result_fn cb, void *user)
{
    return redlock_unlock_async(state, members, n, owner, cb, user);
}

} // extern "C"
