// The blocking facade: a loop thread owned by the client, and the hand-off of
// calls from any thread to it. Each blocked caller provides the request's
// storage on its own stack, so no table bounds how many threads may block.
#pragma once

#include "locks/client.hpp"

namespace edgelock
{

enum class ReqOp : uint8_t {
    LockNew,
    LockFree,
    Stats,
    Acquire,
    Release,
    ForceRelease,
    Exists,
    HoldCount,
    Ttl,
    Extend,
    Info,
    Valid,
    Server,
    Cancel
};

struct BlockingRequest;

// The owned loop's thread and the hand-off to it; allocated by blocking_start.
struct BlockingFace {
    edgelock_port_thread thread;
    edgelock_port_mutex mutex;
    edgelock_port_cond idle_cond;
    BlockingRequest *inbox;
    uint32_t blocking_callers;
    bool loop_stop;
    struct event *wake_event;
};

struct BlockingRequest {
    BlockingRequest *next;
    ReqOp op;
    edgelock_lock lock;
    edgelock_lock_kind kind;
    uint64_t owner;
    int64_t wait_ms, lease_ms;
    bool give_up_on_connection_error; // Acquire: see acquire_start()
    edgelock_lock_info *info;         // Info
    const void *name;
    size_t name_len;
    edgelock_lock *lock_out;
    edgelock_stats *stats_out;
    int64_t *remaining_out; // Valid
    uint64_t *server_out;   // Server
    edgelock_status status;
    int64_t value;
    bool done;
    edgelock_port_cond cond;
};

// Start the loop thread (after the client is fully built).
edgelock_status blocking_start(Client *c);
// Stop the loop thread: everything completes with SHUTDOWN; waits for callers.
void blocking_stop(Client *c);
// Run r on the loop thread and wait for its result. Any thread but the loop's.
edgelock_status blocking_call(Client *c, BlockingRequest *r, int64_t *value);
// The two halves of blocking_call, so one thread can have requests running on
// several clients at once (RedLock). Every post that returned OK needs its wait.
edgelock_status blocking_post(Client *c, BlockingRequest *r);
edgelock_status blocking_wait(Client *c, BlockingRequest *r, int64_t *value);
// Run a local request directly (on the loop thread or in event-loop mode).
void run_local(Client *c, BlockingRequest *r);
edgelock_status stats(Client *c, edgelock_stats *out);

} // namespace edgelock
