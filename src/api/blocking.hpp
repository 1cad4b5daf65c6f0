// SPDX-License-Identifier: BSD-3-Clause
// The blocking face: leader/follower over the client's own event loop. One
// thread at a time drives the engine (runs the loop and every engine call):
// a blocked caller itself while it waits, or the client's loop thread when no
// caller is inside the library. Each blocked caller provides its request's
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
    Scan,
    Valid,
    Server,
    Cancel,
    Semaphore,  // a semaphore or latch call: sem_op
    LatchAwait, // Acquire of a latch: wait for zero
    PermitId,   // local
};

struct BlockingRequest;
struct BlockingPin;

// Who drives the engine now.
enum class Leader : uint8_t { None, Loop, Caller };

// The owned loop's thread and the lead; allocated by blocking_start. Every
// field is read and written under `mutex`; so is every change of leader, which
// is what orders one leader's engine writes before the next leader's reads.
struct BlockingFace {
    edgelock_port_thread thread;
    edgelock_port_mutex mutex;
    // The loop thread sleeps on this alarm while it does not lead: set to go
    // off at once when it is wanted (loop_kicked), else when the grace after
    // the last caller's leave ends (alarm_due_ms; 0: not set).
    edgelock_port_alarm loop_alarm;
    bool alarm_ok; // loop_alarm was made (blocking_start)
    bool loop_kicked;
    uint64_t alarm_due_ms;
    edgelock_port_cond idle_cond; // blocking_stop waits here for the callers to leave
    BlockingRequest *inbox;       // posted, not started yet (newest first)
    BlockingRequest *followers;   // callers asleep who may take the lead
    uint32_t blocking_callers;    // inside a call, or pinned (BlockingPin)
    BlockingPin *pins;
    uint32_t loop_requests; // posted by blocking_post: only a leader that stays may drive them
    uint32_t want_lead;     // followers that found the loop thread leading: it steps down
    uint64_t idle_since_ms; // when the last caller gave up the lead
    // When a leader last ran a pass of the loop (its timers and every
    // socket); the leader's reads that wait (lead_until_done) skip it for
    // at most lead_grace_ms. Only the leader touches it.
    uint64_t loop_pass_ms;
    // The process does not ignore SIGPIPE: a thread that runs the loop or
    // sends blocks it meanwhile (a peer's close would end the process).
    bool guard_sigpipe;
    uint32_t lead_grace_ms; // the loop thread leads after this long without a caller
    Leader leader;
    bool loop_stop;
    struct event *wake_event; // runs the inbox on the leader's thread
};

struct BlockingRequest {
    BlockingRequest *next;          // in the inbox
    BlockingRequest *next_follower; // in BlockingFace::followers
    uint64_t thread_id;             // the caller's, for when it is handed the lead
    bool may_lead;                  // blocking_call: its caller waits in the library
    bool promoted;                  // handed the lead by the leader leaving
    ReqOp op;
    edgelock_lock lock;
    edgelock_lock_kind kind;
    uint64_t owner;
    int64_t wait_ms, lease_ms;
    bool give_up_on_connection_error;  // Acquire: see acquire_start()
    bool locks_only;                   // a composite's member: INVALID_ARG on other kinds
    const bool *abandoned;             // Acquire of a member: once true (__atomic), SHUTDOWN at entry
    bool renewed_before;               // Acquire of a member: the owner's hold was under the watchdog
    bool end_watchdog;                 // Extend: the watchdog lets go first (hold_end_watchdog);
                                       // Release (give_back): it lets go if the release cannot start
    bool give_back;                    // Release: a composite's, of a member it took (give_back_not_queued)
    edgelock_lock_info *info;          // Info
    edgelock_scan *scan;               // Scan
    uint32_t permits;                  // Acquire of a semaphore (0: 1); PermitId: k
    LockOp sem_op;                     // Semaphore
    int64_t count;                     // Semaphore: the op's number
    const char *permit_hex;            // Semaphore (ReleasePermit)
    edgelock_semaphore_info *sem_info; // Semaphore (SemaphoreInfo)
    char *hex_out;                     // PermitId
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
// Run r and wait for its result, leading when no one else does (the call then
// runs on the calling thread, and so does the loop until r is done). Any
// thread but the one driving the engine (that would wait on itself).
edgelock_status blocking_call(Client *c, BlockingRequest *r, int64_t *value);
// The two halves of a call that does not lead, so one thread can have requests
// running on several clients at once (RedLock): the loop thread (or a caller
// leading meanwhile) drives r. Every post that returned OK needs its wait.
edgelock_status blocking_post(Client *c, BlockingRequest *r);
edgelock_status blocking_wait(Client *c, BlockingRequest *r, int64_t *value);
// A blocking call that spans clients (a MultiLock or RedLock on several)
// pins each of them for its whole length, so that no member's client is freed
// under it between its calls there. A client being destroyed waits for its
// pins to go, as for its own callers, and first runs each pin's on_stop once,
// on the destroying thread with no mutex held: it ends what the call waits
// for on its other clients, so the wait does not hold up the destroy. (The
// engine's ClientWatch is the async composites' counterpart, on the loop.)
struct BlockingPin {
    BlockingPin *next;
    void (*on_stop)(BlockingPin *pin, void *user);
    void *user;
    bool stopping; // on_stop runs now
    bool stopped;  // on_stop ran
    bool leaving;  // blocking_unpin_begin passed: no on_stop any more
};
// OK (pinned; calls on c still return SHUTDOWN once it stops), or SHUTDOWN,
// WRONG_THREAD as a blocking call's entry.
edgelock_status blocking_pin(Client *c, BlockingPin *pin, void (*on_stop)(BlockingPin *, void *), void *user);
// Leaving takes two passes over a call's clients: the first waits out an
// on_stop running for the pin and rules out later ones (an on_stop may call
// the call's other clients, which must all stay pinned until it ends); the
// second unpins, and the client may then be freed.
void blocking_unpin_begin(Client *c, BlockingPin *pin);
void blocking_unpin(Client *c, BlockingPin *pin);

// What a request does on the engine (request.cpp), on the thread driving it.
// Whether op needs no round trip (lock_new, lock_free, the local queries).
bool request_is_local(ReqOp op);
// Run a local request directly (while driving the engine, or in event-loop mode).
void run_local(Client *c, BlockingRequest *r);
// Start the engine call for a request that is not local: OK, and done fires
// once with r as its user pointer; or why not, and done never fires.
edgelock_status request_start(Client *c, BlockingRequest *r, edgelock_result_fn done);
edgelock_status stats(Client *c, edgelock_stats *out);

} // namespace edgelock
