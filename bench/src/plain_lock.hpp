// SPDX-License-Identifier: BSD-3-Clause
// A plain client of Redisson's lock protocol over sync hiredis: the reference
// that B (handoff) and C (contention) measure edgelock against (issue 13). It
// sends what edgelock sends (the same acquire and release scripts, keys,
// channel, unlock latch and its DEL), waits for the unlock message on a
// subscriber connection of its own, and does nothing else: no watchdog, no
// tables, no threads, no timeouts. A floor, not a library.
#pragma once

#include <hiredis/hiredis.h>
#include <stdint.h>

#include <string>

namespace bench
{

struct PlainLock {
    redisContext *cmd = nullptr;
    redisContext *sub = nullptr;
    std::string name, channel, owner;
    bool subscribed = false;
    bool del_pending = false; // the last unlock's latch DEL, answered before the next reply
    uint64_t seq = 0;         // unlock request ids
};

// Two connections to 127.0.0.1:port for lock `name`, acting as `owner`
// ("<uuid>:<thread id>", as long as edgelock's). Dies on failure.
void plain_open(PlainLock *p, int port, const std::string &name, const std::string &owner);
void plain_close(PlainLock *p);
// Acquire, waiting as long as it takes: an attempt; if held, subscribe (once)
// and attempt again after each unlock message or after the holder's TTL.
void plain_lock(PlainLock *p, int64_t lease_ms);
// Release (the script publishes the unlock message); the latch DEL is sent
// with the next command, as edgelock does.
void plain_unlock(PlainLock *p, int64_t lease_ms);

} // namespace bench
