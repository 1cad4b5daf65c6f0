// SPDX-License-Identifier: BSD-3-Clause
// The engine on the fake loop and link (fake_engine.hpp) as unit tests drive
// it: one client, both connections up, results and losses recorded.
#pragma once

#include <stdint.h>
#include <string.h>

#include <string>
#include <vector>

#include "fake/fake_engine.hpp"
#include "locks/client.hpp"
#include "locks/handles.hpp"

namespace fake
{
using namespace edgelock;

struct Result {
    int calls = 0;
    edgelock_status st = EDGELOCK_OK;
    int64_t value = 0;
};

inline void record(edgelock_client *, edgelock_lock, edgelock_status st, int64_t value, void *user)
{
    auto *r = static_cast<Result *>(user);
    r->calls++;
    r->st = st;
    r->value = value;
}

struct Lost {
    int calls = 0;
    uint64_t owner = 0;
};

inline void on_lost(edgelock_client *, edgelock_lock, uint64_t owner, void *user)
{
    auto *l = static_cast<Lost *>(user);
    l->calls++;
    l->owner = owner;
}

// One client on the fake loop and link, both connections up.
struct Harness {
    FakeLoop loop;
    FakeLink link;
    Client *c = nullptr;
    Lost lost;

    explicit Harness(void (*tweak)(edgelock_config *) = nullptr, bool connect = true)
    {
        link.clock = &loop;
        edgelock_config cfg;
        edgelock_config_init(&cfg);
        cfg.url = "redis://fake:1";
        cfg.client_id = "unit";
        cfg.on_lock_lost = on_lost;
        cfg.on_lock_lost_user = &lost;
        if (tweak)
            tweak(&cfg);
        edgelock_status st;
        c = client_create(&cfg, loop.loop, false, &FakeLink::ops, &st);
        if (!c)
            return;
        client_start(c);
        if (connect) {
            link.accept(&c->cmd_conn);
            link.accept(&c->sub_conn);
        }
    }
    ~Harness()
    {
        if (c)
            client_destroy(c);
    }
    FakeLink::Conn &cmd() { return link.of(&c->cmd_conn); }
    FakeLink::Conn &sub() { return link.of(&c->sub_conn); }
    std::vector<std::string> last_cmd() { return resp_args(cmd().log.back()); }
    edgelock_lock lock(const char *name, edgelock_lock_kind kind = EDGELOCK_REENTRANT)
    {
        edgelock_lock lk = {0};
        lock_new(c, kind, name, strlen(name), &lk);
        return lk;
    }
    void reply(const std::string &resp) { link.reply(&c->cmd_conn, resp); }
};

constexpr char kNil[] = "$-1\r\n";

inline std::string subscribed(const std::string &channel)
{
    return resp_array({resp_bulk("subscribe"), resp_bulk(channel), ":1\r\n"});
}

inline std::string renew_reply(size_t n, size_t zero_at = SIZE_MAX)
{
    std::string out = "*" + std::to_string(n) + "\r\n";
    for (size_t i = 0; i < n; i++)
        out += i == zero_at ? ":0\r\n" : ":1\r\n";
    return out;
}

} // namespace fake
