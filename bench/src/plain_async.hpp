// SPDX-License-Identifier: BSD-3-Clause
// B's reference for the async face: the plain Redisson-protocol client of
// plain_lock.hpp, rebuilt over hiredis async on one libevent loop, as
// edgelock's async handoff runs (both clients' connections on one thread).
// The same scripts, keys, channel and unlock latch; nothing else.
#pragma once

#include <event2/event.h>
#include <hiredis/async.h>
#include <stdint.h>

#include <string>

namespace bench
{

class PlainAsyncHandoff
{
public:
    // Three connections to 127.0.0.1:port (A's, B's, B's subscriber) on a
    // loop of their own, run on the calling thread by once(). Dies on failure.
    PlainAsyncHandoff(int port, const std::string &name, const std::string &owner_prefix);
    ~PlainAsyncHandoff();
    // A takes the lock, B tries and waits for the unlock message, A lets go
    // after 3-8 ms: ns from A's release being sent to B's grant being read.
    double once();

private:
    static void a_locked(redisAsyncContext *, void *reply, void *self);
    static void a_released(redisAsyncContext *, void *reply, void *self);
    static void b_tried(redisAsyncContext *, void *reply, void *self);
    static void b_released(redisAsyncContext *, void *reply, void *self);
    static void b_heard(redisAsyncContext *, void *reply, void *self);
    static void release_now(evutil_socket_t, short, void *self);
    void b_try();
    void release(redisAsyncContext *ac, const std::string &owner, redisCallbackFn *done);
    void drop_latch(redisAsyncContext *ac);

    struct event_base *base_;
    redisAsyncContext *a_, *b_, *b_sub_;
    struct event *hold_timer_;
    std::string name_, channel_, a_owner_, b_owner_, latch_;
    uint64_t seq_;
    bool subscribed_ = false, waiting_ = false, heard_while_trying_ = false;
    bool done_ = false, hold_armed_ = false;
    uint64_t t0_ = 0, t1_ = 0;
};

} // namespace bench
