// SPDX-License-Identifier: BSD-3-Clause
// The plain Redisson-protocol handoff over hiredis async (plain_async.hpp).
#include "plain_async.hpp"

#include <hiredis/adapters/libevent.h>
#include <hiredis/hiredis.h>
#include <string.h>

#include "redisson/scripts.hpp"
#include "util.hpp"

namespace bench
{

static const int64_t kLeaseMs = 10000;

static redisAsyncContext *connect_async(int port, struct event_base *base)
{
    redisAsyncContext *ac = redisAsyncConnect("127.0.0.1", port);
    if (!ac || ac->err)
        die("plain async: connect");
    redisLibeventAttach(ac, base);
    return ac;
}

PlainAsyncHandoff::PlainAsyncHandoff(int port, const std::string &name, const std::string &owner_prefix)
    : base_(event_base_new()), name_(name), channel_(channel_of(name))
{
    if (!base_)
        die("plain async: event_base_new");
    a_ = connect_async(port, base_);
    b_ = connect_async(port, base_);
    b_sub_ = connect_async(port, base_);
    a_owner_ = owner_prefix + "5";
    b_owner_ = owner_prefix + "6";
    // Unlock request ids differ from every other client's (see plain_open).
    seq_ = (uint64_t)rand_u32() << 32;
    hold_timer_ = event_new(base_, -1, 0, release_now, this);
}

PlainAsyncHandoff::~PlainAsyncHandoff()
{
    event_free(hold_timer_);
    redisAsyncFree(a_);
    redisAsyncFree(b_);
    redisAsyncFree(b_sub_);
    event_base_free(base_);
}

static redisReply *as_reply(void *reply, const char *what)
{
    if (!reply)
        die(what);
    return static_cast<redisReply *>(reply);
}

static void acquire(redisAsyncContext *ac, const std::string &name, const std::string &owner,
                    redisCallbackFn *cb, void *self)
{
    redisAsyncCommand(ac, cb, self, "EVALSHA %s 1 %s %lld %s",
                      edgelock::kScripts[edgelock::kScriptAcquire].sha1, name.c_str(), (long long)kLeaseMs,
                      owner.c_str());
}

void PlainAsyncHandoff::release(redisAsyncContext *ac, const std::string &owner, redisCallbackFn *done)
{
    latch_ = latch_of(name_, ++seq_);
    redisAsyncCommand(ac, done, this, "EVALSHA %s 3 %s %s %s 0 %lld %s publish 16000",
                      edgelock::kScripts[edgelock::kScriptRelease].sha1, name_.c_str(), channel_.c_str(),
                      latch_.c_str(), (long long)kLeaseMs, owner.c_str());
}

// The latch's DEL once the release has answered, as edgelock and Redisson
// send it (before the answer, a lost reply could not be told from a release
// that never ran).
void PlainAsyncHandoff::drop_latch(redisAsyncContext *ac)
{
    redisAsyncCommand(ac, nullptr, nullptr, "DEL %s", latch_.c_str());
}

double PlainAsyncHandoff::once()
{
    done_ = hold_armed_ = false;
    t0_ = t1_ = 0;
    acquire(a_, name_, a_owner_, a_locked, this);
    while (!done_)
        event_base_loop(base_, EVLOOP_ONCE);
    return (double)(t1_ - t0_);
}

void PlainAsyncHandoff::a_locked(redisAsyncContext *, void *reply, void *self)
{
    if (as_reply(reply, "plain async: A acquire")->type != REDIS_REPLY_NIL)
        die("plain async: A did not acquire");
    static_cast<PlainAsyncHandoff *>(self)->b_try();
}

void PlainAsyncHandoff::b_try()
{
    waiting_ = heard_while_trying_ = false;
    acquire(b_, name_, b_owner_, b_tried, this);
}

void PlainAsyncHandoff::b_tried(redisAsyncContext *, void *reply, void *self)
{
    auto *h = static_cast<PlainAsyncHandoff *>(self);
    redisReply *r = as_reply(reply, "plain async: B acquire");
    if (r->type == REDIS_REPLY_NIL) {
        h->t1_ = now_ns();
        if (h->t0_ == 0)
            die("plain async: B acquired before A released");
        h->release(h->b_, h->b_owner_, b_released);
        return;
    }
    if (r->type != REDIS_REPLY_INTEGER)
        die("plain async: B acquire reply");
    if (!h->subscribed_) {
        // Once: the subscriber stays on the channel; its confirmation tries again.
        h->subscribed_ = true;
        redisAsyncCommand(h->b_sub_, b_heard, h, "SUBSCRIBE %s", h->channel_.c_str());
        return;
    }
    if (h->heard_while_trying_) { // the message came while this attempt was out
        h->b_try();
        return;
    }
    h->waiting_ = true;
    if (!h->hold_armed_) { // B waits: A lets go in 3-8 ms
        h->hold_armed_ = true;
        struct timeval tv = {0, (suseconds_t)(3000 + rand_u32() % 5000)};
        event_add(h->hold_timer_, &tv);
    }
}

void PlainAsyncHandoff::b_heard(redisAsyncContext *, void *reply, void *self)
{
    auto *h = static_cast<PlainAsyncHandoff *>(self);
    redisReply *r = static_cast<redisReply *>(reply);
    if (!r || r->type != REDIS_REPLY_ARRAY || r->elements < 1 || r->element[0]->type != REDIS_REPLY_STRING)
        return;
    const char *kind = r->element[0]->str;
    if (strcmp(kind, "subscribe") == 0) {
        h->b_try();
        return;
    }
    if (strcmp(kind, "message") != 0)
        return;
    if (h->waiting_)
        h->b_try();
    else
        h->heard_while_trying_ = true; // B's own unlock's message, or one during an attempt
}

void PlainAsyncHandoff::release_now(evutil_socket_t, short, void *self)
{
    auto *h = static_cast<PlainAsyncHandoff *>(self);
    h->t0_ = now_ns();
    h->release(h->a_, h->a_owner_, a_released);
}

void PlainAsyncHandoff::a_released(redisAsyncContext *ac, void *reply, void *self)
{
    redisReply *r = as_reply(reply, "plain async: A release");
    if (r->type != REDIS_REPLY_INTEGER)
        die("plain async: A release reply");
    static_cast<PlainAsyncHandoff *>(self)->drop_latch(ac);
}

void PlainAsyncHandoff::b_released(redisAsyncContext *ac, void *reply, void *self)
{
    redisReply *r = as_reply(reply, "plain async: B release");
    if (r->type != REDIS_REPLY_INTEGER)
        die("plain async: B release reply");
    auto *h = static_cast<PlainAsyncHandoff *>(self);
    h->drop_latch(ac);
    h->done_ = true;
}

} // namespace bench
