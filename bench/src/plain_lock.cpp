// SPDX-License-Identifier: BSD-3-Clause
// The plain Redisson-protocol client (plain_lock.hpp).
#include "plain_lock.hpp"

#include <poll.h>

#include "redisson/scripts.hpp"
#include "util.hpp"

namespace bench
{

void plain_open(PlainLock *p, int port, const std::string &name, const std::string &owner)
{
    p->cmd = connect_sync(port);
    p->sub = connect_sync(port);
    p->name = name;
    p->channel = channel_of(name);
    p->owner = owner;
    // Unlock request ids must differ between clients (the latch key is the
    // request's): each starts at a random point of its own.
    p->seq = (uint64_t)rand_u32() << 32;
}

void plain_close(PlainLock *p)
{
    redisFree(p->cmd);
    redisFree(p->sub);
    p->cmd = p->sub = nullptr;
}

// The reply of the command sent last; the pending latch DEL's reply first.
static redisReply *reply_of(PlainLock *p)
{
    void *r = nullptr;
    if (p->del_pending) {
        if (redisGetReply(p->cmd, &r) != REDIS_OK)
            die("plain: DEL reply");
        freeReplyObject(r);
        p->del_pending = false;
    }
    if (redisGetReply(p->cmd, &r) != REDIS_OK)
        die("plain: reply");
    return static_cast<redisReply *>(r);
}

// One acquire attempt: -1 acquired, else the holder's TTL in ms.
static long long attempt(PlainLock *p, int64_t lease_ms)
{
    redisAppendCommand(p->cmd, "EVALSHA %s 1 %s %lld %s", edgelock::kScripts[edgelock::kScriptAcquire].sha1,
                       p->name.c_str(), (long long)lease_ms, p->owner.c_str());
    redisReply *r = reply_of(p);
    long long ttl = r->type == REDIS_REPLY_NIL ? -1 : r->type == REDIS_REPLY_INTEGER ? r->integer : -2;
    freeReplyObject(r);
    if (ttl == -2)
        die("plain: acquire reply");
    return ttl;
}

// Wait up to ms for something on the subscriber connection; true when a
// message came. Every message counts as a wake-up (the channel is the lock's).
static bool wait_message(PlainLock *p, int ms)
{
    void *m = nullptr;
    if (redisReaderGetReply(p->sub->reader, &m) == REDIS_OK && m) { // already read
        freeReplyObject(m);
        return true;
    }
    struct pollfd pfd = {p->sub->fd, POLLIN, 0};
    if (poll(&pfd, 1, ms) <= 0)
        return false;
    if (redisBufferRead(p->sub) != REDIS_OK)
        die("plain: subscriber read");
    if (redisReaderGetReply(p->sub->reader, &m) == REDIS_OK && m) {
        freeReplyObject(m);
        return true;
    }
    return false;
}

void plain_lock(PlainLock *p, int64_t lease_ms)
{
    if (attempt(p, lease_ms) < 0)
        return;
    if (!p->subscribed) {
        freeReplyObject(must(p->sub, "SUBSCRIBE %s", p->channel.c_str()));
        p->subscribed = true;
    }
    for (;;) {
        while (wait_message(p, 0)) {
        } // unlock messages from before this attempt wake nobody
        long long ttl = attempt(p, lease_ms);
        if (ttl < 0)
            return;
        wait_message(p, ttl > 0 && ttl < 60000 ? (int)ttl : 60000);
    }
}

void plain_unlock(PlainLock *p, int64_t lease_ms)
{
    std::string latch = latch_of(p->name, ++p->seq);
    redisAppendCommand(p->cmd, "EVALSHA %s 3 %s %s %s 0 %lld %s publish 16000",
                       edgelock::kScripts[edgelock::kScriptRelease].sha1, p->name.c_str(), p->channel.c_str(),
                       latch.c_str(), (long long)lease_ms, p->owner.c_str());
    redisReply *r = reply_of(p);
    if (r->type != REDIS_REPLY_INTEGER || r->integer < 1) // 1 + the subscribers told
        die("plain: release reply");
    freeReplyObject(r);
    redisAppendCommand(p->cmd, "DEL %s", latch.c_str());
    p->del_pending = true;
}

} // namespace bench
