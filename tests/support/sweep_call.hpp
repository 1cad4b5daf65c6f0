// SPDX-License-Identifier: BSD-3-Clause
// One blocking call on a fresh client, made on a thread of its own, for the
// tests that act at every step of it (alloc_pause.hpp): test_destroy_anywhere,
// test_cancel_anywhere.
#pragma once

#include <atomic>
#include <functional>
#include <thread>

#include "edgelock/edgelock.h"
#include "redis_server.hpp"

const unsigned kHangMs = 20000; // only catches a hang
const unsigned kQuietMs = 1000; // no Nth allocation this long: the call went quiet
const int kMaxSteps = 400;      // a bound on a sweep, far above a call's allocations

enum class Call {
    LockFree,  // try_lock on a free lock (wait 0)
    LockWaits, // try_lock on a lock someone else holds (a long wait)
    Unlock,    // unlock of a lock the caller took before
    None,      // no call: the client connects (while_connecting), nothing else
};

struct SweptCall {
    const char *name; // printed with the sweep's length
    edgelock_lock_kind kind;
    Call call;
    bool loop_leads;                             // the client idle first, so that its loop thread leads
    bool unlock_if_granted = false;              // a granted try_lock is unlocked on the caller's thread
    const char *url = nullptr;                   // the client's; null: the shared server's
    RedisServer *keys = nullptr;                 // where lock "anywhere" lives; null: the shared server
    void (*config)(edgelock_config *) = nullptr; // the client's config beyond the URL; may be null
    // The client is created once the pause is armed and called at once: its
    // connecting (a sentinel's answer, the master's link) is swept too. The
    // new client's loop thread leads then, whatever loop_leads says. The
    // pause may then come before the caller has entered its call: fine for
    // a cancel (it is repeated until the call returns), not for a destroy
    // (the header promises SHUTDOWN to calls already running, and a call
    // made after destroy uses a freed client), so destroy sweeps Call::None.
    bool while_connecting = false;
};

// The keys of lock "anywhere" as each step starts: free, or held by someone
// else (written as Redisson would) for LockWaits.
void reset_keys(RedisServer &r, Call call);

// A thread that makes one call when the test lets it go: setup first (what
// the call needs done before the sweep arms its pause, which is no step of
// it), the call once go() was called, then after(its status). start()
// returns once setup has run; go() may come before or after start().
class GatedCall
{
public:
    ~GatedCall() { join(); }
    void start(std::function<void()> setup, std::function<edgelock_status()> call,
               std::function<void(edgelock_status)> after = nullptr);
    void go() { go_ = true; }
    uint64_t owner() const { return owner_.load(); } // the thread's edgelock_current_owner()
    bool done() const { return done_.load(); }       // the call returned
    edgelock_status join();                          // its status, once the thread ended

private:
    std::atomic<uint64_t> owner_{0};
    std::atomic<bool> ready_{false}, go_{false}, done_{false};
    std::atomic<int> status_{1};
    std::thread thread_;
};

struct CallOnThread {
    edgelock_client *c = nullptr; // destroyed by the destructor unless null
    edgelock_lock lk = {0};

    CallOnThread(RedisServer &r, const SweptCall &how); // the caller ready, not started; r: how.keys
    ~CallOnThread();
    bool ok() const { return c != nullptr || how_.while_connecting; } // else created in go_paused_at
    // The call starts, its step-th allocation paused (alloc_pause); whether
    // it reached that allocation within kQuietMs (else nothing pauses).
    bool go_paused_at(int step);
    uint64_t owner() const { return caller_.owner(); }
    bool done() const { return caller_.done(); }
    edgelock_status join() { return caller_.join(); } // its status, once it returned

private:
    void start();
    edgelock_status call(); // on the caller's thread
    SweptCall how_;         // its url set
    GatedCall caller_;
};

// The lock calls every sweep covers: a wait (reentrant and fair; the loop
// thread or the caller leading), and a lock that is granted.
extern const SweptCall kLockCalls[6];
extern const SweptCall kWaitWhileConnecting; // a wait made as the client connects
extern const SweptCall kJustConnecting;      // Call::None while connecting
extern const SweptCall kThreeCalls[3];       // a wait each way, a lock granted: on a cluster, over TLS

// how on the shared Redis Cluster (redis_cluster.hpp), started if need be:
// the client's URL seeds it from its first node, the keys on their master.
// The cluster sweeps cover kThreeCalls: a cluster call has three times the
// steps of one on a single Redis.
SweptCall on_shared_cluster(SweptCall how);

// how over TLS to the binary's shared TLS server (tls_server.hpp), started
// if need be; the client trusts the tests' CA. Only in a build with TLS
// (edgelock_tls_available()). TLS writes stay in hiredis_ssl's handlers, so a
// call's steps differ from a plain connection's.
SweptCall over_shared_tls(SweptCall how);

// how through the binary's shared sentinels (redis_sentinels.hpp), started if
// need be: the client finds the master by asking them, the keys on it.
SweptCall via_shared_sentinels(SweptCall how);

// Runs step(n) for n = 1, 2, ... while it returns true (the call reached
// its nth allocation), with the pausing allocator installed, and prints name
// with the count; false when nothing could be swept (hiredis 0.14), else the
// sweep came to its end within kMaxSteps (checked).
bool sweep_allocations(const char *name, const std::function<bool(int n)> &step);

// Runs step(r, how, n) for n = 1, 2, ... while it returns true (the call
// reached its nth allocation), with the pausing allocator installed; r is
// the server of how.keys (the shared server by default), and how.url is set.
void sweep_steps(const SweptCall &how, bool (*step)(RedisServer &, const SweptCall &, int));
