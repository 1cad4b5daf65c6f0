// The client: its tables, its two connections and its loop. Every function
// declared here runs on the loop thread; blocking.cpp is the only way in from
// other threads.
#pragma once

#include <stdint.h>

#include "edgelock/edgelock.h"
#include "port.h"
#include "scripts.hpp"
#include "table.hpp"
#include "url.hpp"

struct event;
struct redisAsyncContext;
struct redisReply;

namespace edgelock
{

constexpr uint32_t kMaxNameLenLimit = 4096;
constexpr uint32_t kRenewBatch = 100; // locks per renewal script call, as Redisson
constexpr uint64_t kForever = UINT64_MAX;

// ---- lock handles --------------------------------------------------------
struct LockEntry {
    uint32_t name_len;
    uint32_t refs; // waiters and commands that name this lock
    edgelock_lock_kind kind;
};

// ---- holds: (lock, owner) pairs this client believes it holds --------------
struct Hold {
    uint64_t lock_id;
    uint64_t owner;
    uint32_t count;        // re-entrant holds as this client counted them
    uint32_t pending;      // lock/unlock calls in flight for this pair
    int64_t lease_ms;      // lease of the latest acquire
    bool watchdog;         // renewed by the watchdog
    bool lost;             // watchdog found it gone; reported once, kept as a marker
    bool renewing;         // part of an in-flight renewal batch
    uint32_t renew_pos;    // its position in that batch's KEYS
    uint64_t renew_cmd;    // that batch's command id
    uint64_t confirmed_ms; // send time of the last acquire/renewal Redis confirmed
    uint64_t expires_ms;   // fixed lease: when it lapses at the latest by our clock
};

// ---- lock calls in progress -------------------------------------------------
enum class WaiterState : uint8_t {
    Attempting,  // acquire script in flight (or queued)
    Subscribing, // waiting for the channel subscription to be confirmed
    Waiting,     // timer armed; an unlock message or the timer retries
};

struct Waiter {
    uint64_t lock_id;
    uint64_t owner;
    int64_t lease_ms;     // EDGELOCK_LEASE_WATCHDOG or fixed
    uint64_t deadline_ms; // kForever when waiting forever
    uint64_t seq;         // arrival order: "wake one" wakes the oldest
    edgelock_result_fn cb;
    void *user;
    uint32_t hold_index;
    uint32_t sub_index; // kNoIndex until subscribed
    WaiterState state;
    bool wake_pending; // an unlock message arrived while an attempt was in flight
    bool starved;      // a retry found the command table full; retried when a slot frees
    bool attempted;
    bool give_up_on_connection_error; // an acquire was sent (a fair waiter may be queued)
    bool timer_is_deadline;           // the armed timer ends the wait (it may fire a hair early)
    edgelock_status last_error;       // a connection problem seen while waiting
};

// One preallocated timer per waiter slot (index i serves waiter slot i).
struct WaiterTimer {
    struct Client *client;
    uint32_t index;
    struct event *ev;
};

// ---- channel subscriptions, shared by every waiter of a lock ------------------
enum class SubState : uint8_t { Down, Subscribing, Subscribed, Unsubscribing };

struct Subscription {
    uint32_t refs; // waiters using it
    uint32_t len;  // channel name bytes (in the channel arena)
    SubState state;
};

// ---- Redis commands queued or in flight ------------------------------------
enum class CmdKind : uint8_t {
    Acquire, // waiter's attempt
    Release, // user unlock
    Cleanup, // release after an acquire whose outcome is unknown; no caller
    ForceRelease,
    Exists,
    HoldCount,
    Ttl,
    Renew,
    LatchDelete, // drop the unlock latch key after a release; no caller
    Abandon,     // a fair waiter that gave up leaves the queue; no caller
    Extend,      // set the lease of a held lock (MultiLock alignment)
    Info,        // read-only snapshot of a lock (edgelock_lock_info)
};

enum class CmdState : uint8_t { Queued, Sent };

struct Command {
    CmdKind kind;
    CmdState state;
    bool eval_fallback; // NOSCRIPT seen: send the script body with EVAL
    bool pins_lock;     // holds a ref on lock_id (its name is needed to format it)
    bool read_batch;    // Renew: a batch of read holds (rw_renew.lua)
    uint64_t deadline_ms;
    uint64_t sent_ms;
    uint64_t lock_id;
    uint64_t owner;
    uint64_t ref;     // Acquire: waiter id
    int64_t lease_ms; // Release/Cleanup: lease to restore on a partial release
    edgelock_result_fn cb;
    void *user;
    uint32_t next;            // send queue link
    uint8_t request_id[16];   // unlock latch
    edgelock_lock_info *info; // Info: the caller's snapshot
};

enum class ConnState : uint8_t { Down, Connecting, Ready };

struct Connection {
    struct Client *client;
    bool subscriber;
    ConnState state;
    bool tcp_up;
    redisAsyncContext *ac;
    uint32_t setup_pending; // AUTH/SELECT/SCRIPT LOAD replies still due
    uint32_t backoff_ms;
    uint64_t down_since_ms; // first failure since it was last ready; 0 when not known down
    struct event *timer;    // connect timeout, then reconnect delay
};

struct Client {
    edgelock_config cfg;
    RedisUrl url;
    char client_id[64];
    struct event_base *base;
    bool owns_base;
    bool closing;
    uint32_t callback_depth;

    FixedTable<LockEntry> locks;
    FixedTable<Hold> holds;
    FixedTable<Waiter> waiters;
    FixedTable<Subscription> subs;
    FixedTable<Command> cmds;
    char *lock_names;    // max_locks * max_name_len
    char *channel_names; // max_subscriptions * channel_len(max_name_len)
    char *cmd_buf;       // one formatted command
    uint32_t cmd_buf_len;
    WaiterTimer *waiter_timers;
    uint64_t table_bytes;

    Connection cmd_conn;
    Connection sub_conn;
    uint32_t send_head, send_tail; // FIFO of queued commands
    struct event *cmd_timer;       // earliest command deadline
    uint64_t cmd_timer_at;
    struct event *watchdog_timer;
    bool watchdog_armed;
    uint64_t waiter_seq;
    uint8_t latch_prefix[8]; // unlock request ids: this random prefix and a counter
    uint64_t latch_counter;
    uint32_t starved_waiters;
    bool was_ready_once;
    uint64_t reconnects;
    uint64_t renew_calls;

    // Blocking facade (owned loop only).
    uint64_t loop_thread_id;
    edgelock_port_thread thread;
    edgelock_port_mutex mutex;
    edgelock_port_cond idle_cond;
    struct BlockingRequest *inbox;
    uint32_t blocking_callers;
    bool loop_stop;
    struct event *wake_event;
};

// client.cpp
Client *client_create(const edgelock_config *cfg, struct event_base *base, edgelock_status *st);
void client_destroy(Client *c);
void client_shutdown(Client *c); // complete everything with SHUTDOWN, close connections
void invoke_result(Client *c, edgelock_result_fn cb, uint64_t lock_id, edgelock_status st, int64_t value,
                   void *user);
void invoke_lock_lost(Client *c, uint64_t lock_id, uint64_t owner);
bool on_loop_thread(const Client *c);

// connection.cpp
void conn_init(Client *c, Connection *conn, bool subscriber);
void conn_start(Connection *conn);
void conn_drop(Connection *conn);         // close now; pending commands complete
void conn_close(Connection *conn);        // final close at shutdown
void conn_flush_output(Connection *conn); // write what hiredis holds for the socket, now
bool conn_ready(const Connection *conn);
void on_command_conn_ready(Client *c);
void on_sub_conn_ready(Client *c);
void on_sub_conn_down(Client *c);

// command.cpp
Command *cmd_new(Client *c, CmdKind kind, uint64_t lock_id, uint64_t *id_out);
void cmd_submit(Client *c, uint64_t id); // queue, and send when connected
void cmd_flush_queue(Client *c);
void cmd_fail_all(Client *c, edgelock_status st);
void cmd_on_timer(Client *c);

// lock_handles.cpp
LockEntry *lock_get(Client *c, uint64_t lock_id);
const char *lock_name(Client *c, uint64_t lock_id, uint32_t *len);
edgelock_status lock_new(Client *c, edgelock_lock_kind kind, const void *name, size_t len,
                         edgelock_lock *out);
edgelock_lock_kind lock_kind(Client *c, uint64_t lock_id);
edgelock_status lock_free(Client *c, edgelock_lock lock);

// holds.cpp (and the watchdog)
Hold *hold_find(Client *c, uint64_t lock_id, uint64_t owner, uint32_t *index);
Hold *hold_reserve(Client *c, uint64_t lock_id, uint64_t owner, uint32_t *index);
void hold_unpin(Client *c, uint32_t index); // pending--, free when idle
bool hold_active(const Client *c, const Hold *h, uint64_t now);
void hold_acquired(Client *c, uint32_t index, int64_t lease_ms, uint64_t sent_ms);
void hold_mark_lost(Client *c, uint32_t index);
void watchdog_arm(Client *c);
void watchdog_tick(Client *c);
void watchdog_on_renew_reply(Client *c, uint64_t cmd_id, const Command *cmd, struct redisReply *reply,
                             edgelock_status st);

// acquire.cpp
// give_up_on_connection_error: end with CONNECTION/TIMEOUT at the first sign
// that Redis is unreachable instead of waiting for it to come back (RedLock
// members: a dead server must cost one attempt, not its share of the wait).
edgelock_status acquire_start(Client *c, edgelock_lock lock, uint64_t owner, int64_t wait_ms,
                              int64_t lease_ms, edgelock_result_fn cb, void *user,
                              bool give_up_on_connection_error = false);
void acquire_on_reply(Client *c, const Command *cmd, struct redisReply *reply, edgelock_status st);
void acquire_on_timer(Client *c, uint32_t waiter_index);
void acquire_wake(Client *c, uint32_t sub_index, bool all);
void acquire_on_subscribed(Client *c, uint32_t sub_index);
void acquire_retry_all(Client *c); // the command connection came back
void acquire_on_command_slot_free(Client *c);
void acquire_fail_all(Client *c, edgelock_status st);
void acquire_abandon_fair_all(Client *c); // at shutdown: fair waiters leave their queues

// pubsub.cpp
edgelock_status sub_join(Client *c, uint64_t lock_id, uint64_t owner, uint32_t *sub_index);
void sub_leave(Client *c, uint32_t sub_index);
void sub_resubscribe_all(Client *c);
void sub_on_down(Client *c);
void sub_on_reply(Client *c, struct redisReply *reply);

// release.cpp
edgelock_status release_start(Client *c, edgelock_lock lock, uint64_t owner, edgelock_result_fn cb,
                              void *user);
edgelock_status query_start(Client *c, CmdKind kind, edgelock_lock lock, uint64_t owner,
                            edgelock_result_fn cb, void *user);
void release_on_reply(Client *c, const Command *cmd, struct redisReply *reply, edgelock_status st);
edgelock_status extend_start(Client *c, edgelock_lock lock, uint64_t owner, int64_t lease_ms,
                             edgelock_result_fn cb, void *user);
void extend_on_reply(Client *c, const Command *cmd, struct redisReply *reply, edgelock_status st);
void query_on_reply(Client *c, const Command *cmd, struct redisReply *reply, edgelock_status st);
void cleanup_release(Client *c, uint64_t lock_id, uint64_t owner, int64_t lease_ms);
edgelock_status info_start(Client *c, edgelock_lock lock, edgelock_lock_info *info, edgelock_result_fn cb,
                           void *user);
void info_on_reply(Client *c, const Command *cmd, struct redisReply *reply, edgelock_status st);

// Time arithmetic that cannot overflow with deadlines of kForever.
inline uint64_t add_ms(uint64_t now, uint64_t d)
{
    return d >= kForever - now ? kForever : now + d;
}
void timer_arm(struct event *ev, uint64_t delay_ms);

} // namespace edgelock
