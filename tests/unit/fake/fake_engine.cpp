// SPDX-License-Identifier: BSD-3-Clause
#include "fake_engine.hpp"

#include <hiredis/hiredis.h>
#include <hiredis/read.h>
#include <stdio.h>
#include <stdlib.h>

#include <algorithm>

#include "redis/connection.hpp"

using namespace edgelock;

// ---- FakeLoop ----------------------------------------------------------------

static FakeLoop *fake_of(Loop *loop)
{
    return static_cast<FakeLoop *>(loop->impl);
}

static uint64_t fake_now(Loop *loop)
{
    return fake_of(loop)->now;
}

static FakeLoop::Record *record_of(Timer *t)
{
    return static_cast<FakeLoop::Record *>(t->impl);
}

static bool fake_init(Timer *t)
{
    auto *r = new FakeLoop::Record{t, 0, false};
    t->impl = r;
    fake_of(t->loop)->timers.push_back(r);
    return true;
}

static void fake_arm(Timer *t, uint64_t delay_ms)
{
    FakeLoop *f = fake_of(t->loop);
    const uint64_t step = f->coarse_step_ms;
    const uint64_t from = step ? f->now - f->now % step : f->now; // the coarse clock's reading
    uint64_t due = delay_ms > UINT64_MAX - from - step ? UINT64_MAX : from + delay_ms;
    if (step && due != UINT64_MAX && due % step)
        due += step - due % step; // the coarse clock reaches it at its next step
    record_of(t)->due_ms = due;
    record_of(t)->armed = true;
}

static void fake_cancel(Timer *t)
{
    record_of(t)->armed = false;
}

static void fake_fini(Timer *t)
{
    auto &v = fake_of(t->loop)->timers;
    v.erase(std::remove(v.begin(), v.end(), record_of(t)), v.end());
    delete record_of(t);
    t->impl = nullptr;
}

static const LoopOps kFakeLoopOps = {fake_now, fake_init, fake_arm, fake_cancel, fake_fini};

FakeLoop::FakeLoop()
{
    loop.ops = &kFakeLoopOps;
    loop.base = nullptr;
    loop.impl = this;
}

uint64_t FakeLoop::next_due() const
{
    uint64_t best = UINT64_MAX;
    for (Record *r : timers)
        if (r->armed && r->due_ms < best)
            best = r->due_ms;
    return best;
}

void FakeLoop::advance(uint64_t ms)
{
    const uint64_t target = now + ms;
    for (;;) {
        Record *first = nullptr;
        for (Record *r : timers)
            if (r->armed && r->due_ms <= target && (!first || r->due_ms < first->due_ms))
                first = r;
        if (!first)
            break;
        if (first->due_ms > now)
            now = first->due_ms;
        first->armed = false;
        timer_expired(first->timer);
    }
    now = target;
}

// ---- FakeLink ------------------------------------------------------------------

static FakeLink *g_link = nullptr;

static bool link_open(Connection *conn)
{
    FakeLink::Conn &fc = g_link->of(conn);
    fc.opens.push_back(g_link->clock ? g_link->clock->now : 0);
    if (g_link->refuse)
        return false;
    fc.open = true;
    conn->link = &fc;
    return true;
}

static bool link_send(Connection *conn, const char *buf, size_t len, void *privdata, bool)
{
    FakeLink::Conn &fc = g_link->of(conn);
    if (!fc.open || g_link->fail_sends)
        return false;
    // A push_replies connection's (un)subscribe commands are answered by
    // pushes only (FakeLink::push), as hiredis queues no reply callback for
    // them (link_hiredis.cpp).
    if (!conn->push_replies || privdata)
        fc.pending.push_back(FakeLink::Sent{std::string(buf, len), privdata});
    fc.log.push_back(std::string(buf, len));
    if (g_link->clock)
        g_link->clock->now += g_link->send_takes_ms; // no timers fire: the sender is still inside send()
    return true;
}

static void link_close(Connection *conn)
{
    FakeLink::Conn &fc = g_link->of(conn);
    conn->link = nullptr;
    fc.open = false;
    std::deque<FakeLink::Sent> due;
    due.swap(fc.pending);
    for (auto &s : due)
        conn_link_reply(conn, nullptr, s.privdata);
}

static void link_flush(Connection *) {}

LinkOps FakeLink::ops = {link_open, link_send, link_close, link_flush, nullptr, false, true};

FakeLink::FakeLink()
{
    conns.reserve(16); // Conn references stay valid
    g_link = this;
}

FakeLink::~FakeLink()
{
    g_link = nullptr;
}

FakeLink::Conn &FakeLink::of(Connection *conn)
{
    for (auto &c : conns)
        if (c.conn == conn)
            return c;
    conns.emplace_back();
    conns.back().conn = conn;
    return conns.back();
}

static redisReply *parse(const std::string &resp)
{
    redisReader *r = redisReaderCreate();
    redisReaderFeed(r, resp.data(), resp.size());
    void *reply = nullptr;
    if (redisReaderGetReply(r, &reply) != REDIS_OK || !reply) {
        fprintf(stderr, "fake link: not one whole RESP reply: %s\n", resp.c_str());
        abort();
    }
    redisReaderFree(r);
    return static_cast<redisReply *>(reply);
}

void FakeLink::accept(Connection *conn)
{
    conn_link_connected(conn, true, "");
    Conn &fc = of(conn);
    // The setup only: what goes out once it is done (queued commands) waits
    // for the test's own replies.
    for (size_t setup = fc.pending.size(); setup > 0; setup--)
        reply(conn, "+OK\r\n");
}

void FakeLink::reply(Connection *conn, const std::string &resp)
{
    Conn &fc = of(conn);
    if (fc.pending.empty()) {
        fprintf(stderr, "fake link: a reply but no command waits for one\n");
        abort();
    }
    Sent s = fc.pending.front();
    fc.pending.pop_front();
    redisReply *r = parse(resp);
    conn_link_reply(conn, r, s.privdata);
    freeReplyObject(r);
}

void FakeLink::push(Connection *conn, const std::string &resp)
{
    redisReply *r = parse(resp);
    conn_link_reply(conn, r, nullptr);
    freeReplyObject(r);
}

void FakeLink::drop(Connection *conn)
{
    link_close(conn);
    conn_link_down(conn, EDGELOCK_ERR_CONNECTION, "dropped by the test");
}

// ---- RESP helpers ------------------------------------------------------------

std::string resp_bulk(const std::string &s)
{
    return "$" + std::to_string(s.size()) + "\r\n" + s + "\r\n";
}

std::string resp_array(const std::vector<std::string> &elements)
{
    std::string out = "*" + std::to_string(elements.size()) + "\r\n";
    for (auto &e : elements)
        out += e;
    return out;
}

std::vector<std::string> resp_args(const std::string &command)
{
    std::vector<std::string> out;
    size_t p = command.find("\r\n");
    size_t n = (size_t)atol(command.c_str() + 1);
    p += 2;
    for (size_t i = 0; i < n; i++) {
        size_t e = command.find("\r\n", p);
        size_t len = (size_t)atol(command.c_str() + p + 1);
        out.push_back(command.substr(e + 2, len));
        p = e + 2 + len + 2;
    }
    return out;
}
