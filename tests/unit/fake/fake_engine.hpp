// SPDX-License-Identifier: BSD-3-Clause
// Fakes for the engine's two seams, so unit tests run the real engine without
// Redis, without sockets and without sleeping:
// - FakeLoop (event/loop.hpp): a clock that moves only when the test says so;
//   advance() fires the due timers in order, each at its own due time.
// - FakeLink (redis/link.hpp): records the bytes each connection sends and
//   delivers replies that the test writes as RESP bytes, parsed by hiredis's
//   own reader, in order, to the command that is next in line.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include <deque>
#include <string>
#include <vector>

#include "event/loop.hpp"
#include "redis/link.hpp"

namespace edgelock
{
struct Connection;
}

class FakeLoop
{
public:
    FakeLoop();
    edgelock::Loop loop;
    uint64_t now = 1000000;
    // Non-zero: timers run on a clock that moves in steps of this many ms, as
    // libevent's default CLOCK_MONOTONIC_COARSE does. A timer is then due by
    // that clock: armed between two steps, it fires up to a step early.
    uint64_t coarse_step_ms = 0;
    // Move the clock by ms, firing every timer that falls due on the way
    // (those armed by a callback included).
    void advance(uint64_t ms);
    // When the earliest armed timer is due, or UINT64_MAX.
    uint64_t next_due() const;
    struct Record {
        edgelock::Timer *timer;
        uint64_t due_ms;
        bool armed;
    };
    std::vector<Record *> timers; // one per initialised Timer (Timer::impl)
};

class FakeLink
{
public:
    struct Sent {
        std::string bytes;
        void *privdata;
    };
    struct Conn {
        edgelock::Connection *conn = nullptr;
        bool open = false;
        std::deque<Sent> pending;     // sent, reply due
        std::vector<std::string> log; // every command sent on it, in order
        std::vector<uint64_t> opens;  // FakeLoop time of every open() of it
    };

    FakeLink(); // becomes the one fake in use (the LinkOps are plain functions)
    ~FakeLink();
    // Not const: a test may play an older hiredis (hears_subscribed_ping
    // false) or a RESP3-capable one (push true: a sharded subscriber's
    // (un)subscribes then wait for no reply, their answers come by push())
    // for its client's lifetime, and puts it back after.
    static edgelock::LinkOps ops;

    bool refuse = false;     // open() fails at once
    bool fail_sends = false; // send() fails on an open link (a write that failed at once)
    FakeLoop *clock = nullptr;
    // The clock moves this much inside every send on an open link: the bytes
    // are written at once (a real link may), then the sending thread is
    // preempted before it reads the clock again; Redis meanwhile runs them.
    uint64_t send_takes_ms = 0;

    Conn &of(edgelock::Connection *conn);
    // The connection opens: connected, then "+OK" to every setup command
    // (and to nothing sent after it).
    void accept(edgelock::Connection *conn);
    // Deliver one reply (RESP bytes) to the oldest command waiting on conn.
    void reply(edgelock::Connection *conn, const std::string &resp);
    // Deliver a push (a pub/sub message) on conn, not tied to a command.
    void push(edgelock::Connection *conn, const std::string &resp);
    // The link drops: replies due are delivered as NULL, then "down".
    void drop(edgelock::Connection *conn);
    std::vector<Conn> conns;
};

// RESP helpers.
std::string resp_bulk(const std::string &s);
std::string resp_array(const std::vector<std::string> &elements); // already encoded elements
// The arguments of one RESP command (multibulk of bulk strings).
std::vector<std::string> resp_args(const std::string &command);
