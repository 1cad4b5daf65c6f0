// SPDX-License-Identifier: BSD-3-Clause
// The engine under a hostile server, coverage-guided: the input is a script
// of async calls on every kind of lock, replies of any shape to the commands
// they send, pub/sub pushes, steps of the clock, connections that drop and
// come back with any answer to their setup, all on the fake loop and link
// (tests/unit/fake), against one server, a cluster of three masters (slot
// maps of any shape, MOVED and ASK; with hiredis 1.x also with sharded pub/sub
// over RESP3), or a master found through sentinels. What must hold whatever
// the bytes:
// - no crash, no memory error (ASan, UBSan) and no leak;
// - a call that returned OK gets its callback exactly once, one that did
//   not gets none; a failed callback carries value 0 (the header's rule);
// - once every command is answered and every wait is over, no waiter is
//   left in the table and no command waits for an answer.
// FUZZ_TRACE=1 in the environment prints each step and the library's log.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <deque>
#include <string>
#include <vector>

#include "fake/fake_engine.hpp"
#include "fake/harness.hpp"
#include "locks/calls.hpp"
#include "redis/link.hpp"
#include "calls.hpp"
#include "replies.hpp"

using namespace edgelock;
using namespace fake;
using namespace fuzz;

namespace
{

// A CLUSTER SLOTS answer: mostly the whole range split among the fuzz
// cluster's three masters, sometimes bounds, hosts or ports out of the way.
std::string slots_map(Input &s)
{
    static const char *const kHosts[] = {"10.0.0.1", "10.0.0.2", "10.0.0.3", "", "h"};
    static const long kPorts[] = {7000, 7001, 7002, 0, 70000};
    if (s.n == 0) // the input used up (settling): the three masters, whole
        return "*3\r\n*3\r\n:0\r\n:5460\r\n*2\r\n" + resp_bulk("10.0.0.1") + ":7000\r\n" +
               "*3\r\n:5461\r\n:10922\r\n*2\r\n" + resp_bulk("10.0.0.2") + ":7001\r\n" +
               "*3\r\n:10923\r\n:16383\r\n*2\r\n" + resp_bulk("10.0.0.3") + ":7002\r\n";
    uint32_t n = s.byte() % 5;
    std::string out = "*" + std::to_string(n) + "\r\n";
    long lo = 0;
    for (uint32_t k = 0; k < n; k++) {
        uint8_t b = s.byte();
        long hi = k + 1 == n ? 16383 : lo + (16384 / (long)n) - 1;
        if (b % 16 == 15)
            hi = (long)s.u64() % 20000 - 100; // anywhere, backwards or out of range
        uint32_t node = b / 16 % 5, port = b % 16 < 12 ? node % 3 : s.byte() % 5;
        out += "*3\r\n:" + std::to_string(lo) + "\r\n:" + std::to_string(hi) + "\r\n*2\r\n" +
               resp_bulk(kHosts[node]) + ":" + std::to_string(kPorts[port]) + "\r\n";
        lo = hi + 1;
    }
    return out;
}

bool is_cluster_slots(const std::string &bytes)
{
    std::vector<std::string> a = resp_args(bytes);
    return a.size() == 2 && a[0] == "CLUSTER" && a[1] == "SLOTS";
}

uint8_t g_tweaks;

// The server, by the input's first byte (replies.hpp's Mode).
Mode mode()
{
    return mode_of(g_tweaks);
}

bool cluster_mode()
{
    return mode() == Mode::Cluster || mode() == Mode::Sharded;
}

bool sentinel_mode()
{
    return mode() == Mode::Sentinel;
}

void log_line(void *, edgelock_log_level, const char *msg)
{
    trace("  log: %s\n", msg);
}

void tweak(edgelock_config *cfg)
{
    if (g_trace) {
        cfg->log_fn = log_line;
        cfg->log_level = EDGELOCK_LOG_DEBUG;
    }
    if (g_tweaks & 1) { // tables that fill up
        cfg->max_locks = 4;
        cfg->max_holds = 2;
        cfg->max_waiters = 2;
        cfg->max_subscriptions = 1;
        cfg->max_commands = 4;
    }
    if (g_tweaks & 2)
        cfg->wait_replicas = 1;
    if (g_tweaks & 4)
        cfg->watchdog_lease_ms = 30;
    if (g_tweaks & 8)
        cfg->command_timeout_ms = 200;
    if (g_tweaks & 16)
        cfg->fair_wait_ms = 50;
    if (g_tweaks & 32)
        cfg->unlock_latch_ttl_ms = 10;
    if (cluster_mode()) { // a cluster of three masters, two of them seeds
        cfg->url = "redis-cluster://10.0.0.1:7000,10.0.0.2:7001";
        // Sharded: on, or as the probe's answer decides.
        cfg->sharded_pubsub = mode() == Mode::Cluster ? EDGELOCK_SHARDED_OFF
                              : g_tweaks & 8          ? EDGELOCK_SHARDED_ON
                                                      : EDGELOCK_SHARDED_AUTO;
        cfg->max_nodes = g_tweaks & 1 ? 2 : 4;
    }
    if (sentinel_mode()) // a master found through two sentinels
        cfg->url = "redis-sentinel://10.0.0.1:26379,10.0.0.2:26380/mymaster";
}

// The fake link takes RESP3 pushes (as hiredis 1.x's) in the sharded mode:
// set before the clients are made, put back after.
struct PushReplies {
    PushReplies() { FakeLink::ops.push = mode() == Mode::Sharded; }
    ~PushReplies() { FakeLink::ops.push = false; }
};

// The answer to a connection's setup command: a map to CLUSTER SLOTS, the
// master's address to SENTINEL get-master-addr-by-name, "master" to ROLE,
// a run_id to INFO, +OK to the rest; with `any`, anything at all.
std::string setup_answer(const std::string &command, Input &s, bool any)
{
    std::vector<std::string> a = resp_args(command);
    if (is_cluster_slots(command))
        return slots_map(s);
    if (any)
        return reply_of(s);
    if (!a.empty() && a[0] == "SENTINEL")
        return resp_array({resp_bulk(s.byte() % 4 == 3 ? "10.0.0.6" : "10.0.0.5"), resp_bulk("6379")});
    if (!a.empty() && a[0] == "ROLE")
        return resp_array({resp_bulk(s.byte() % 8 == 7 ? "slave" : "master"), ":0\r\n", "*0\r\n"});
    if (!a.empty() && a[0] == "INFO")
        return resp_bulk("# Server\r\nrun_id:" + std::string(40, (char)('a' + s.byte() % 3)) + "\r\n");
    return "+OK\r\n";
}

const char *const kNames[] = {"a", "b", "{a}c"};

struct Run {
    std::deque<Call> calls; // addresses stay put; outlives the clients
    PushReplies push_replies;
    Harness h;
    edgelock_lock locks[6] = {};
    // One server: a second client on the same loop and link, another
    // server to the engine, for MultiLock and RedLock across two clients.
    Client *b = nullptr;
    edgelock_lock b_locks[3] = {};

    Run() : h(tweak, mode() == Mode::Single)
    {
        if (!h.c || mode() != Mode::Single)
            return;
        edgelock_config cfg;
        edgelock_config_init(&cfg);
        tweak(&cfg);
        cfg.url = "redis://fake:2";
        cfg.client_id = "unit2";
        edgelock_status st;
        b = client_create(&cfg, h.loop.loop, false, &FakeLink::ops, &st);
        if (!b)
            return;
        client_start(b);
        h.link.accept(&b->cmd_conn);
        h.link.accept(&b->sub_conn);
    }
    ~Run() { destroy_b(); }
    // Its calls end with SHUTDOWN, composites over it give back the rest.
    void destroy_b()
    {
        if (!b)
            return;
        trace("  destroy client 2\n");
        const Connection *mine[] = {&b->cmd_conn, &b->sub_conn};
        client_destroy(b);
        b = nullptr;
        for (FakeLink::Conn &fc : h.link.conns)
            if (fc.conn == mine[0] || fc.conn == mine[1])
                fc.conn = nullptr; // gone with its client
    }
    edgelock_client *client() { return reinterpret_cast<edgelock_client *>(h.c); }
    Call *call(int op)
    {
        calls.emplace_back();
        calls.back().op = op;
        return &calls.back();
    }

    // The connections the client has, with a property: the n-th of them
    // (n taken modulo their number), or null when none has it.
    template <typename Want> Connection *pick(uint8_t n, Want want)
    {
        std::vector<Connection *> found;
        for (FakeLink::Conn &fc : h.link.conns)
            if (fc.conn && want(fc))
                found.push_back(fc.conn);
        return found.empty() ? nullptr : found[n % found.size()];
    }
    // A connection with a command waiting for its reply: a command
    // connection, or a RESP3 subscriber's PING (what a subscriber hears comes
    // as pushes).
    static bool awaits_reply(FakeLink::Conn &fc)
    {
        return (!fc.conn->pubsub || fc.conn->push_replies) && !fc.pending.empty();
    }
    static bool connecting(FakeLink::Conn &fc)
    {
        return fc.open && fc.conn->state == ConnState::Connecting && !fc.conn->tcp_up;
    }
    const char *name_of(const Connection *conn)
    {
        static char buf[64];
        snprintf(buf, sizeof(buf), "%s %s:%u#%zu", conn->pubsub ? "sub" : "cmd", conn->host,
                 (unsigned)conn->port, h.link.of(const_cast<Connection *>(conn)).opens.size());
        return buf;
    }

    // A connection the client is (re)opening gets its answer: up, with any
    // answer to each setup command (a slot map to CLUSTER SLOTS), or refused.
    void open_answer(Connection *conn, Input &s)
    {
        if (!conn)
            return;
        FakeLink::Conn &fc = h.link.of(conn);
        if (!connecting(fc))
            return;
        uint8_t how = s.byte();
        trace("  open %s: %s\n", name_of(conn),
              how % 8 == 7   ? "refused"
              : how % 8 == 6 ? "any setup answers"
                             : "up");
        if (how % 8 == 7) {
            // As hiredis: the link is gone before the callback, and what was
            // queued on it is answered with NULL as the context is freed.
            fc.open = false;
            std::deque<FakeLink::Sent> queued;
            queued.swap(fc.pending);
            conn->link = nullptr;
            conn_link_connected(conn, false, "refused by the fuzzer");
            for (const FakeLink::Sent &q : queued)
                conn_link_reply(conn, nullptr, q.privdata);
            return;
        }
        conn_link_connected(conn, true, "");
        for (size_t setup = fc.pending.size(); setup > 0 && !fc.pending.empty() && conn->link; setup--)
            h.link.reply(conn, setup_answer(fc.pending.front().bytes, s, how % 8 == 6));
    }

    // The server answers the oldest command on a connection.
    void answer(Connection *conn, Input &s)
    {
        if (!conn)
            return;
        FakeLink::Conn &fc = h.link.of(conn);
        bool map = is_cluster_slots(fc.pending.front().bytes) && (s.n == 0 || s.byte() % 4 != 0);
        std::string r = map ? slots_map(s) : reply_of(s);
        trace("  %s: %s <- %s\n", name_of(conn), shown(fc.pending.front().bytes).c_str(), shown(r).c_str());
        h.link.reply(conn, r);
    }

    // A pub/sub push: the confirmation of a (un)subscribe the client sent, a
    // message on one of its channels, or anything at all.
    void push(Connection *conn, Input &s)
    {
        if (!conn)
            return;
        FakeLink::Conn &sub = h.link.of(conn);
        uint8_t what = s.byte();
        std::vector<std::string> args;
        if (!sub.log.empty())
            args = resp_args(sub.log[sub.log.size() - 1 - s.byte() % sub.log.size()]);
        std::string channel = args.size() >= 2 ? args[1] : "redisson_lock__channel:{a}";
        std::string msg;
        switch (what % 4) {
        case 0: {
            if (args.empty())
                return;
            std::string kind = args[0];
            for (auto &ch : kind)
                ch = (char)tolower(ch);
            msg = resp_array(
                {resp_bulk(kind), resp_bulk(channel), ":" + std::to_string(s.byte() % 3) + "\r\n"});
            break;
        }
        case 1:
        case 2: {
            std::string payload =
                channel == "+switch-master" && what % 8 < 6
                    ? std::string("mymaster 10.0.0.5 6379 10.0.0.") + (what & 32 ? "6" : "5") + " 6379"
                : what % 8 < 4 ? kNumbers[s.byte() % 6]
                               : s.bytes(24);
            msg = resp_array(
                {resp_bulk(what & 16 ? "smessage" : "message"), resp_bulk(channel), resp_bulk(payload)});
            break;
        }
        default: msg = reply_of(s); break;
        }
        // A RESP3 subscriber hears them as pushes (now and then as arrays).
        if (conn->push_replies && what % 4 != 3 && what % 128 < 120)
            msg[0] = '>';
        trace("  push %s: %s\n", name_of(conn), shown(msg).c_str());
        h.link.push(conn, msg);
    }

    void step(Input &s)
    {
        uint8_t op = s.byte();
        uint8_t which = s.byte();
        bool second = b && which % 4 == 3; // the call goes to the second client
        edgelock_client *cl = second ? reinterpret_cast<edgelock_client *>(b) : client();
        edgelock_lock lk = second ? b_locks[which / 4 % 3] : locks[which / 4 % 6];
        uint64_t owner = 1 + s.byte() % 3;
        trace("t=%llu op %d client %d lock %llu owner %llu\n", (unsigned long long)h.loop.now, op % 31,
              second ? 2 : 1, (unsigned long long)lk.id, (unsigned long long)owner);
        static const int64_t kWaits[] = {0, 0, 1, 50, 1000, 5000};
        static const int64_t kLeases[] = {EDGELOCK_LEASE_WATCHDOG, EDGELOCK_LEASE_WATCHDOG, 1, 100, 10000, 0};
        switch (op % 31) {
        case 0:
        case 1: { // a handle
            uint8_t k = s.byte();
            edgelock_lock out;
            const char *name = kNames[k % 3];
            if (lock_new(second ? b : h.c, (edgelock_lock_kind)(k / 3 % 8), name, strlen(name), &out) ==
                EDGELOCK_OK) {
                if (second)
                    b_locks[s.byte() % 3] = out;
                else
                    locks[s.byte() % 6] = out;
            }
            break;
        }
        case 2: lock_free(second ? b : h.c, lk); break;
        case 3:
        case 4:
        case 5: {
            Call *c = call(op % 31);
            int64_t wait = kWaits[s.byte() % 6], lease = kLeases[s.byte() % 6];
            returned(c, edgelock_lock_async(cl, lk, owner, wait, lease, on_result, c));
            break;
        }
        case 6:
        case 7: {
            Call *c = call(6);
            returned(c, edgelock_unlock_async(cl, lk, owner, on_result, c));
            break;
        }
        case 8: {
            Call *c = call(8);
            returned(c, edgelock_force_unlock_async(cl, lk, on_result, c));
            break;
        }
        case 9: {
            Call *c = call(9);
            switch (s.byte() % 4) {
            case 0: returned(c, edgelock_is_locked_async(cl, lk, on_result, c)); break;
            case 1: returned(c, edgelock_hold_count_async(cl, lk, owner, on_result, c)); break;
            case 2: returned(c, edgelock_remaining_ttl_async(cl, lk, on_result, c)); break;
            default: {
                uint8_t caps = s.byte(); // arrays of 0 to 2 entries each, or none
                c->info.holders = caps % 3 ? c->entries : nullptr;
                c->info.holders_cap = caps % 3;
                c->info.queue = caps / 3 % 3 ? c->entries + 2 : nullptr;
                c->info.queue_cap = caps / 3 % 3;
                returned(c, edgelock_lock_info_async(cl, lk, &c->info, on_result, c));
                break;
            }
            }
            break;
        }
        case 10: {
            Call *c = call(10);
            memset(&c->scan, 0, sizeof(c->scan));
            c->scan.pattern = s.byte() % 2 ? "*" : nullptr;
            c->scan.names = c->names;
            c->scan.names_cap = 1 + s.byte() % 4;
            c->scan.cursor = s.byte() % 2 ? 0 : s.u64();
            returned(c, edgelock_scan_locks_async(cl, &c->scan, on_result, c));
            break;
        }
        case 11: {
            Call *c = call(11);
            uint32_t permits = s.byte() % 4;
            int64_t wait = kWaits[s.byte() % 6], lease = kLeases[s.byte() % 6];
            returned(c, edgelock_semaphore_acquire_async(cl, lk, owner, permits, wait, lease, on_result, c));
            break;
        }
        case 12: {
            Call *c = call(12);
            int64_t n = (int64_t)(s.byte() % 5) - 1;
            switch (s.byte() % 4) {
            case 0: returned(c, edgelock_semaphore_try_set_permits_async(cl, lk, n, on_result, c)); break;
            case 1: returned(c, edgelock_semaphore_add_permits_async(cl, lk, n, on_result, c)); break;
            case 2: returned(c, edgelock_semaphore_info_async(cl, lk, &c->sem_info, on_result, c)); break;
            default: {
                char id[33];
                if (edgelock_permit_id(cl, lk, owner, s.byte() % 3, id) != EDGELOCK_OK)
                    snprintf(id, sizeof(id), "%s", s.byte() % 2 ? "00112233445566778899aabbccddeeff" : "zz");
                returned(c, edgelock_permit_release_async(cl, lk, id, on_result, c));
                break;
            }
            }
            break;
        }
        case 13: {
            Call *c = call(13);
            int64_t n = (int64_t)(s.byte() % 4) - 1;
            switch (s.byte() % 4) {
            case 0: returned(c, edgelock_latch_try_set_count_async(cl, lk, n, on_result, c)); break;
            case 1: returned(c, edgelock_latch_count_down_async(cl, lk, on_result, c)); break;
            case 2: returned(c, edgelock_latch_count_async(cl, lk, on_result, c)); break;
            default:
                returned(c, edgelock_latch_await_async(cl, lk, owner, kWaits[s.byte() % 6], on_result, c));
                break;
            }
            break;
        }
        case 14: edgelock_cancel(cl, owner); break;
        case 15: {
            int64_t left;
            uint64_t server;
            edgelock_lock_valid(cl, lk, owner, &left);
            edgelock_token_server(cl, lk, owner, &server);
            edgelock_stats st;
            edgelock_client_stats(cl, &st);
            break;
        }
        case 16:
        case 17:
        case 18:
        case 19:
        case 20: answer(pick(s.byte(), awaits_reply), s); break;
        case 21:
        case 22:
            push(pick(s.byte(),
                      [](FakeLink::Conn &fc) {
                          return fc.open && fc.conn->pubsub && fc.conn->state == ConnState::Ready;
                      }),
                 s);
            break;
        case 23: {
            static const uint64_t kSteps[] = {1, 5, 30, 100, 1000, 5000, 10000, 31000};
            uint64_t ms = kSteps[s.byte() % 8];
            trace("  advance %llu\n", (unsigned long long)ms);
            h.loop.advance(ms);
            break;
        }
        case 24: // a connection drops
            if (Connection *conn = pick(s.byte(), [](FakeLink::Conn &fc) { return fc.open; })) {
                trace("  drop %s\n", name_of(conn));
                h.link.drop(conn);
            }
            break;
        case 25: open_answer(pick(s.byte(), connecting), s); break;
        case 26: // writes fail at once: the link is going away, and goes
            if (h.link.fail_sends)
                sends_work_again();
            else
                h.link.fail_sends = s.byte() % 4 == 0;
            trace("  sends %s\n", h.link.fail_sends ? "fail" : "work");
            break;
        case 27: h.link.send_takes_ms = s.byte() % 4 == 0 ? 40 : 0; break;
        case 28:
        case 29: { // MultiLock or RedLock over members of either client
            edgelock_member m[3];
            size_t n = 1 + s.byte() % 3;
            for (size_t i = 0; i < n; i++) {
                uint8_t k = s.byte();
                bool other = b && k % 2;
                m[i].client = other ? reinterpret_cast<edgelock_client *>(b) : client();
                m[i].lock = other ? b_locks[k / 2 % 3] : locks[k / 2 % 6];
            }
            Call *c = call(op % 31);
            bool red = s.byte() % 2;
            int64_t wait = kWaits[s.byte() % 6], lease = kLeases[s.byte() % 6];
            edgelock_composite *st = &c->composite;
            if (op % 31 == 28)
                returned(c, red ? edgelock_redlock_lock_async(st, m, n, owner, wait, lease, on_result, c)
                                : edgelock_multi_lock_async(st, m, n, owner, wait, lease, on_result, c));
            else
                returned(c, red ? edgelock_redlock_unlock_async(st, m, n, owner, on_result, c)
                                : edgelock_multi_unlock_async(st, m, n, owner, on_result, c));
            break;
        }
        default:
            if (s.byte() % 8 == 0) // rarely: the rest of the input has one client less
                destroy_b();
            break;
        }
    }

    // A link whose writes failed goes down (hiredis refuses a command only
    // while its context is being torn down).
    void sends_work_again()
    {
        h.link.fail_sends = false;
        while (Connection *conn = pick(0, [](FakeLink::Conn &fc) { return fc.open; }))
            h.link.drop(conn);
    }

    // Every connection being opened comes up, its setup answered (the whole
    // map to CLUSTER SLOTS).
    int open_all()
    {
        Input none{nullptr, 0};
        int k = 0;
        for (; k < 100; k++) {
            Connection *conn = pick(0, connecting);
            if (!conn)
                break;
            open_answer(conn, none);
        }
        return k;
    }

    // Everything answered (a nil: a grant, a release, an empty answer), the
    // connections up, the clock past every wait: nothing may still wait.
    void settle()
    {
        if (h.link.fail_sends)
            sends_work_again();
        h.link.send_takes_ms = 0;
        Input none{nullptr, 0};
        // A minute (past every wait, command timeout and reconnect backoff
        // the script can set), timer by timer: what each sends (a renewal, a
        // retry, a refresh) is answered before the next fires, never timed out.
        const uint64_t end_ms = h.loop.now + 60000;
        for (int step = 0; step < 3000; step++) {
            // Until what the answers set going (a connection to a node a
            // redirect named, a retry) is answered too.
            for (int pass = 0, done = 1; done > 0 && pass < 50; pass++) {
                done = open_all();
                for (; done < 1000; done++) {
                    Connection *conn = pick(0, awaits_reply);
                    if (!conn)
                        break;
                    answer(conn, none); // a nil, or the whole map
                }
            }
            uint64_t due = h.loop.next_due();
            if (due > end_ms)
                break;
            h.loop.advance(due > h.loop.now ? due - h.loop.now : 1);
        }
        all_called_back(calls);
        if (h.c->waiters.used() != 0 || (b && b->waiters.used() != 0))
            fail("a waiter left in the table", nullptr);
        if (b && b->queue.cmds.used() != 0)
            fail("a command left in the second client's queue", nullptr);
        // Except a give-back (patient: it waits for Redis as long as it
        // takes) to a master that max_nodes left out of the node table, as
        // the header says of max_nodes.
        uint32_t left = 0;
        for (uint32_t i = 0; i < h.c->queue.cmds.end(); i++)
            if (const Command *cmd = h.c->queue.cmds.get(i))
                left += !(cluster_mode() && cmd->patient && h.c->cluster.slot_owner[cmd->slot] == kNoNode);
        if (left != 0) {
            for (uint32_t i = 0; i < h.c->queue.cmds.end(); i++)
                if (const Command *cmd = h.c->queue.cmds.get(i)) {
                    alignas(LockCall) unsigned char raw[sizeof(LockCall)];
                    memcpy(raw, cmd->args.bytes, sizeof(raw));
                    const LockCall &call = *reinterpret_cast<const LockCall *>(raw);
                    fprintf(stderr,
                            "left: op %d cleanup %d %s patient %d slot %u conn %s deadline %llu (now %llu)\n",
                            (int)call.op, call.cleanup, cmd->state == CmdState::Sent ? "sent" : "queued",
                            cmd->patient, cmd->slot, cmd->conn ? name_of(cmd->conn) : "-",
                            (unsigned long long)cmd->deadline_ms, (unsigned long long)h.loop.now);
                }
            fail("a command left in the queue", nullptr);
        }
    }
};

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    Input s{data, size};
    g_tweaks = s.byte();
    {
        Run run;
        if (!run.h.c)
            return 0;
        run.open_all(); // a cluster's seeds, the sentinels and the master (one server's are up)
        for (int i = 0; run.b && i < 3; i++) {
            const char *name = kNames[i];
            lock_new(run.b, (edgelock_lock_kind)(s.byte() % 8), name, strlen(name), &run.b_locks[i]);
        }
        for (int i = 0; i < 3; i++) {
            const char *name = kNames[i];
            lock_new(run.h.c, (edgelock_lock_kind)(s.byte() % 8), name, strlen(name), &run.locks[i]);
        }
        for (int i = 0; i < 400 && s.n > 0; i++)
            run.step(s);
        run.settle();
    }
    return 0;
}
