// SPDX-License-Identifier: BSD-3-Clause
// The real link under a hostile server: a client of the public API on a
// libevent base, hiredis reading real sockets, against a "server" in this
// file on a unix socket that does what the input says: answers of any shape
// to the commands it read (most of them plausible), bytes of any kind,
// answers cut anywhere, pub/sub messages, replies nobody asked for, closes,
// and short waits in real time so that timeouts, renewals and reconnects
// run. fuzz_engine covers the engine's logic on the fake link; this covers
// what lies under it: hiredis's reader and edgelock's guard on it
// (reader_guard.cpp), the link and its events (link_hiredis.cpp,
// link_events.cpp), and the connections' setup and drops. What must hold
// whatever the bytes: no crash, no memory error or leak (ASan, UBSan), no
// SIGPIPE with hiredis 1.x (the header's promise for plain connections),
// every call that said OK calls back exactly once (a failed one with value
// 0), and once the client is destroyed every call has called back.
// FUZZ_TRACE=1 in the environment prints each step and the library's log.
#include <event2/event.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <deque>
#include <string>
#include <vector>

#include "calls.hpp"
#include "edgelock/edgelock.h"
#include "replies.hpp"

using namespace fuzz;

namespace
{

// The server's listening socket: one per process, in a directory of its own.
struct Listener {
    std::string dir, path;
    int fd = -1;
    Listener()
    {
        const char *tmp = getenv("TMPDIR");
        std::string tmpl = std::string(tmp && *tmp ? tmp : "/tmp") + "/edgelock-fuzz-wire-XXXXXX";
        std::vector<char> buf(tmpl.begin(), tmpl.end());
        buf.push_back(0);
        if (!mkdtemp(buf.data())) {
            perror("fuzz_wire: mkdtemp");
            abort();
        }
        dir = buf.data();
        path = dir + "/redis.sock";
        struct sockaddr_un a;
        memset(&a, 0, sizeof(a));
        a.sun_family = AF_UNIX;
        snprintf(a.sun_path, sizeof(a.sun_path), "%s", path.c_str());
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(fd, 64) != 0) {
            perror("fuzz_wire: listen");
            abort();
        }
    }
    ~Listener()
    {
        close(fd);
        unlink(path.c_str());
        rmdir(dir.c_str());
    }
};

Listener &listener()
{
    static Listener l;
    return l;
}

// One whole command (a multibulk of bulk strings, as hiredis writes them) off
// the front of `in`, or false while it has not all arrived.
bool take_command(std::string &in, std::vector<std::string> *args)
{
    args->clear();
    if (in.empty())
        return false;
    if (in[0] != '*') { // not what hiredis writes: drop it all
        in.clear();
        return false;
    }
    size_t p = in.find("\r\n");
    if (p == std::string::npos)
        return false;
    long n = atol(in.c_str() + 1);
    p += 2;
    for (long k = 0; k < n; k++) {
        size_t e = in.find("\r\n", p);
        if (e == std::string::npos || in[p] != '$')
            return false;
        size_t len = (size_t)atol(in.c_str() + p + 1);
        if (e + 2 + len + 2 > in.size())
            return false;
        args->push_back(in.substr(e + 2, len));
        p = e + 2 + len + 2;
    }
    in.erase(0, p);
    return true;
}

std::string upper(std::string s)
{
    for (auto &ch : s)
        ch = (char)toupper((unsigned char)ch);
    return s;
}

std::string lower(std::string s)
{
    for (auto &ch : s)
        ch = (char)tolower((unsigned char)ch);
    return s;
}

// A connection the client made, from the server's side.
struct Peer {
    int fd = -1;
    int id = 0;
    std::string in;                                  // read, not yet a whole command
    std::deque<std::vector<std::string>> unanswered; // read, oldest first
    std::vector<std::string> channels;               // named by its (un)subscribes
};

// A plausible answer to a command (what Redis would say, in kind), made from
// the input where there is a choice.
std::string plausible(const Peer &p, const std::vector<std::string> &a, Input &s)
{
    std::string cmd = a.empty() ? "" : upper(a[0]);
    if (cmd.find("SUBSCRIBE") != std::string::npos)
        return resp_array({resp_bulk(lower(a[0])), resp_bulk(a.size() > 1 ? a[1] : ""),
                           ":" + std::to_string(s.byte() % 3) + "\r\n"});
    if (cmd == "PING")
        return p.channels.empty() ? "+PONG\r\n"
                                  : resp_array({resp_bulk("pong"), resp_bulk(a.size() > 1 ? a[1] : "")});
    if (cmd == "INFO")
        return resp_bulk("# Server\r\nrun_id:" + std::string(40, (char)('a' + s.byte() % 3)) + "\r\n");
    if (cmd == "SCRIPT")
        return resp_bulk(std::string(40, 'f'));
    if (cmd == "EVALSHA" || cmd == "EVAL") {
        uint8_t t = s.byte();
        switch (t % 6) {
        case 0: return kNilBulk; // granted, released
        case 1: return ":1\r\n";
        case 2: return ":0\r\n";
        case 3: return ":" + std::to_string(100 * (t / 6)) + "\r\n"; // held: its TTL
        case 4: return "-NOSCRIPT No matching script. Please use EVAL.\r\n";
        default: return reply_of(s);
        }
    }
    if (cmd == "DEL" || cmd == "PUBLISH" || cmd == "EXISTS")
        return ":" + std::to_string(s.byte() % 3) + "\r\n";
    return s.byte() % 2 ? "+OK\r\n" : reply_of(s);
}

struct Run {
    event_base *base = nullptr;
    edgelock_client *c = nullptr;
    std::deque<Call> calls; // addresses stay put; outlives the client
    std::vector<Peer> peers;
    int next_id = 0;
    long waited_us = 0;
    static constexpr long kMaxWaitUs = 50000;
    edgelock_lock locks[4] = {};

    static void log_line(void *, edgelock_log_level, const char *msg) { trace("  log: %s\n", msg); }

    Run(uint8_t tweaks)
    {
        base = event_base_new();
        edgelock_config cfg;
        edgelock_config_init(&cfg);
        std::string url = "unix://" + listener().path;
        cfg.url = url.c_str();
        cfg.client_id = "wire";
        if (g_trace) {
            cfg.log_fn = log_line;
            cfg.log_level = EDGELOCK_LOG_DEBUG;
        }
        // Short enough that a few waits of a few ms reach them.
        cfg.command_timeout_ms = tweaks & 1 ? 5 : 40;
        cfg.connect_timeout_ms = tweaks & 2 ? 5 : 40;
        cfg.reconnect_min_ms = 1;
        cfg.reconnect_max_ms = 4;
        if (tweaks & 4)
            cfg.watchdog_lease_ms = 30; // renewals every 10 ms
        if (tweaks & 8) {               // tables that fill up
            cfg.max_locks = 4;
            cfg.max_holds = 2;
            cfg.max_waiters = 2;
            cfg.max_subscriptions = 1;
            cfg.max_commands = 4;
        }
        if (tweaks & 16)
            cfg.unlock_latch_ttl_ms = 10;
        if (!base || edgelock_client_create(&cfg, base, &c) != EDGELOCK_OK)
            c = nullptr;
    }

    ~Run()
    {
        // The client goes first: every call still pending ends (SHUTDOWN).
        if (c) {
            trace("destroy\n");
            edgelock_client_destroy(c);
            for (int i = 0; i < 3; i++)
                event_base_loop(base, EVLOOP_NONBLOCK);
        }
        all_called_back(calls);
        accept_all();
        for (Peer &p : peers)
            close(p.fd);
        if (base)
            event_base_free(base);
    }

    void accept_all()
    {
        for (;;) {
            int fd = accept4(listener().fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
            if (fd < 0)
                return;
            Peer p;
            p.fd = fd;
            p.id = next_id++;
            trace("  accepted connection %d\n", p.id);
            peers.push_back(p);
        }
    }

    // What the client wrote, read into whole commands.
    void read_all()
    {
        for (Peer &p : peers) {
            char buf[4096];
            ssize_t n;
            while ((n = read(p.fd, buf, sizeof(buf))) > 0)
                p.in.append(buf, (size_t)n);
            std::vector<std::string> a;
            while (take_command(p.in, &a)) {
                trace("  connection %d read: %s\n", p.id, shown(a.empty() ? "" : a[0]).c_str());
                if (!a.empty() && upper(a[0]).find("SUBSCRIBE") != std::string::npos && a.size() > 1)
                    p.channels.push_back(a[1]);
                p.unanswered.push_back(a);
            }
        }
    }

    // The loop runs what is ready, the server takes what was written.
    void pump()
    {
        for (int i = 0; i < 3; i++) {
            event_base_loop(base, EVLOOP_NONBLOCK);
            accept_all();
            read_all();
        }
    }

    Peer *peer(uint8_t n) { return peers.empty() ? nullptr : &peers[n % peers.size()]; }
    Peer *find(int id)
    {
        for (Peer &p : peers)
            if (p.id == id)
                return &p;
        return nullptr;
    }

    // Bytes to the client, at most in two pieces with a pass of its loop
    // between (a reply cut anywhere, as TCP may deliver it).
    void write_out(Peer *p, const std::string &bytes, Input &s)
    {
        size_t cut = bytes.empty() ? 0 : s.byte() % (bytes.size() + 1);
        trace("  connection %d write: %s\n", p->id, shown(bytes).c_str());
        // MSG_NOSIGNAL: the client may have closed it (this is the server's
        // SIGPIPE, not the client's). What the socket does not take is lost,
        // as with a server that gives up on a slow reader.
        if (cut > 0 && send(p->fd, bytes.data(), cut, MSG_NOSIGNAL) < 0)
            return;
        if (cut < bytes.size()) {
            int id = p->id;
            pump(); // may accept connections: `p` may move
            if (Peer *still = find(id))
                (void)send(still->fd, bytes.data() + cut, bytes.size() - cut, MSG_NOSIGNAL);
        }
    }

    // What the connections sent on their way up (INFO, SCRIPT LOAD) gets
    // Redis's answers, so that the input's bytes go to what comes after.
    void answer_setup()
    {
        Input none{nullptr, 0};
        for (size_t i = 0; i < peers.size(); i++) {
            int id = peers[i].id;
            while (Peer *p = find(id)) {
                if (p->unanswered.empty())
                    break;
                std::vector<std::string> a = p->unanswered.front();
                p->unanswered.pop_front();
                write_out(p, plausible(*p, a, none), none);
            }
        }
    }

    Call *call(int op)
    {
        calls.emplace_back();
        calls.back().op = op;
        return &calls.back();
    }

    void step(Input &s)
    {
        uint8_t op = s.byte();
        uint8_t which = s.byte();
        edgelock_lock lk = locks[which % 4];
        uint64_t owner = 1 + which / 4 % 3;
        static const int64_t kWaits[] = {0, 1, 20, 1000};
        static const int64_t kLeases[] = {EDGELOCK_LEASE_WATCHDOG, 1, 100, 10000};
        trace("op %d lock %d owner %llu\n", op % 16, which % 4, (unsigned long long)owner);
        switch (op % 16) {
        case 0: { // a handle
            static const char *const kNames[] = {"a", "b", "{a}c"};
            uint8_t k = s.byte();
            edgelock_lock out;
            if (edgelock_lock_new_kind(c, (edgelock_lock_kind)(k % 8), kNames[k / 8 % 3],
                                       strlen(kNames[k / 8 % 3]), &out) == EDGELOCK_OK)
                locks[which % 4] = out;
            break;
        }
        case 1: edgelock_lock_free(c, lk); break;
        case 2:
        case 3: {
            Call *cl = call(2);
            uint8_t w = s.byte();
            returned(cl, edgelock_lock_async(c, lk, owner, kWaits[w % 4], kLeases[w / 4 % 4], on_result, cl));
            break;
        }
        case 4: {
            Call *cl = call(4);
            returned(cl, edgelock_unlock_async(c, lk, owner, on_result, cl));
            break;
        }
        case 5: {
            Call *cl = call(5);
            switch (s.byte() % 5) {
            case 0: returned(cl, edgelock_is_locked_async(c, lk, on_result, cl)); break;
            case 1: returned(cl, edgelock_force_unlock_async(c, lk, on_result, cl)); break;
            case 2: returned(cl, edgelock_remaining_ttl_async(c, lk, on_result, cl)); break;
            case 3:
                cl->info.holders = cl->entries;
                cl->info.holders_cap = 2;
                cl->info.queue = cl->entries + 2;
                cl->info.queue_cap = 2;
                returned(cl, edgelock_lock_info_async(c, lk, &cl->info, on_result, cl));
                break;
            default:
                memset(&cl->scan, 0, sizeof(cl->scan));
                cl->scan.names = cl->names;
                cl->scan.names_cap = 4;
                returned(cl, edgelock_scan_locks_async(c, &cl->scan, on_result, cl));
                break;
            }
            break;
        }
        case 6: {
            Call *cl = call(6);
            uint8_t w = s.byte();
            returned(cl,
                     w % 2 ? edgelock_semaphore_acquire_async(c, lk, owner, 1 + w / 2 % 2, kWaits[w / 4 % 4],
                                                              EDGELOCK_LEASE_WATCHDOG, on_result, cl)
                           : edgelock_latch_await_async(c, lk, owner, kWaits[w / 4 % 4], on_result, cl));
            break;
        }
        case 7: edgelock_cancel(c, owner); break;
        case 8: {
            int64_t left;
            edgelock_lock_valid(c, lk, owner, &left);
            edgelock_stats st;
            edgelock_client_stats(c, &st);
            break;
        }
        case 9:
        case 10: { // the oldest command on a connection is answered
            Peer *p = peer(s.byte());
            if (!p || p->unanswered.empty())
                break;
            std::vector<std::string> a = p->unanswered.front();
            p->unanswered.pop_front();
            write_out(p, s.byte() % 4 ? plausible(*p, a, s) : reply_of(s), s);
            break;
        }
        case 11: { // a message on a channel it named, or on any
            Peer *p = peer(s.byte());
            if (!p)
                break;
            uint8_t what = s.byte();
            std::string channel =
                !p->channels.empty() && what % 4 ? p->channels[s.byte() % p->channels.size()] : s.bytes(30);
            std::string payload = what / 4 % 2 ? kNumbers[s.byte() % 6] : s.bytes(20);
            write_out(p,
                      resp_array({resp_bulk(what & 64 ? "smessage" : "message"), resp_bulk(channel),
                                  resp_bulk(payload)}),
                      s);
            break;
        }
        case 12: { // anything: a reply nobody asked for, or bytes that are no RESP at all
            Peer *p = peer(s.byte());
            if (p)
                write_out(p, s.byte() % 2 ? reply_of(s) : s.bytes(64), s);
            break;
        }
        case 13: { // the server closes a connection (at once, or its writing half)
            uint8_t n = s.byte();
            if (Peer *p = peer(n)) {
                trace("  connection %d closed\n", p->id);
                if (n & 128) {
                    shutdown(p->fd, SHUT_WR);
                } else {
                    close(p->fd);
                    peers.erase(peers.begin() + (p - peers.data()));
                }
            }
            break;
        }
        case 14: { // real time passes: timeouts, renewals, reconnects
            struct timeval tv = {0, (suseconds_t)(1000 * (1 + s.byte() % 8))};
            if (waited_us + tv.tv_usec > kMaxWaitUs)
                break; // the input's time is spent: the corpus replays in seconds
            waited_us += tv.tv_usec;
            trace("  wait %ld us\n", (long)tv.tv_usec);
            event_base_loopexit(base, &tv);
            event_base_dispatch(base);
            break;
        }
        default: break; // the loop only
        }
        pump();
    }
};

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
#if !defined(HIREDIS_MAJOR) || HIREDIS_MAJOR < 1
    // hiredis 0.14 writes with a plain write(): on the caller's loop the
    // application ignores SIGPIPE, as the header asks.
    signal(SIGPIPE, SIG_IGN);
#endif
    Input s{data, size};
    uint8_t tweaks = s.byte();
    {
        Run run(tweaks);
        if (!run.c)
            return 0;
        static const edgelock_lock_kind kKinds[] = {EDGELOCK_REENTRANT, EDGELOCK_FAIR, EDGELOCK_SEMAPHORE,
                                                    EDGELOCK_LATCH};
        for (int i = 0; i < 4; i++)
            edgelock_lock_new_kind(run.c, kKinds[i], i % 2 ? "b" : "a", 1, &run.locks[i]);
        run.pump();
        if (!(tweaks & 32))
            run.answer_setup();
        for (int i = 0; i < 300 && s.n > 0; i++)
            run.step(s);
        run.pump();
    }
    return 0;
}
