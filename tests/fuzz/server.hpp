// SPDX-License-Identifier: BSD-3-Clause
// The hostile server of the fuzz targets that drive the real hiredis link
// (fuzz_wire, fuzz_blocking): listening sockets in this process, one per
// node, the connections the client makes to them read into commands, and
// what the input makes the server write back (Server::step): plausible
// answers, answers of any shape cut anywhere, messages, bytes that are no
// RESP, closes. The input's first byte picks the deployment it plays
// (Mode): one Redis on a unix socket, or over loopback TCP a cluster (plain
// or sharded pub/sub, the latter with RESP3 subscribers) or a master behind
// a sentinel. A target includes it once: it defines connect() and
// getaddrinfo() for the whole program. Built with EDGELOCK_FUZZ_TLS
// (fuzz_tls), every connection is TLS (tls_side.hpp), over loopback TCP in
// every deployment.
#pragma once

#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include <deque>
#include <string>
#include <vector>

#include "edgelock/edgelock.h"
#include "replies.hpp"
#if EDGELOCK_FUZZ_TLS
#include "tls_side.hpp"
#endif

namespace fuzz
{

// The server's listening sockets, one per process: a unix socket in a
// directory of its own for the single server, and loopback TCP ports on
// free port numbers for the nodes of a cluster or a sentinel deployment.
struct Listener {
    std::string dir, path;
    int fd = -1;
    uint16_t port = 0;
    Listener() // unix
    {
        const char *tmp = getenv("TMPDIR");
        std::string tmpl = std::string(tmp && *tmp ? tmp : "/tmp") + "/edgelock-fuzz-XXXXXX";
        std::vector<char> buf(tmpl.begin(), tmpl.end());
        buf.push_back(0);
        if (!mkdtemp(buf.data())) {
            perror("fuzz: mkdtemp");
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
            perror("fuzz: listen");
            abort();
        }
    }
    explicit Listener(int) // loopback TCP
    {
        struct sockaddr_in a;
        memset(&a, 0, sizeof(a));
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t len = sizeof(a);
        fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(fd, 64) != 0 ||
            getsockname(fd, (struct sockaddr *)&a, &len) != 0) {
            perror("fuzz: listen");
            abort();
        }
        port = ntohs(a.sin_port);
    }
    Listener(const Listener &) = delete;
    ~Listener()
    {
        close(fd);
        if (!path.empty()) {
            unlink(path.c_str());
            rmdir(dir.c_str());
        }
    }
};

inline Listener &listener()
{
    static Listener l;
    return l;
}

// Node k of a cluster (0 and 1 are the client's seeds, 2 is only named by
// slot maps and redirections), or with a sentinel: 0 the sentinel, 1 and 2
// the master it names and the one a failover announces.
constexpr int kNodes = 3;

inline Listener &node(int k)
{
    static Listener nodes[kNodes] = {Listener(0), Listener(0), Listener(0)};
    return nodes[k];
}

inline std::string node_address(int k)
{
    return "127.0.0.1:" + std::to_string(node(k).port);
}

// Whatever an input makes the server say, the client reaches nothing beyond
// this process: a connect to any address but the listeners' is refused, and
// a host name is never looked up (a redirection or a slot map may name
// any). The library's hiredis calls these two through the dynamic linker or
// the static link, so the definitions here take their place.
inline bool ours(const struct sockaddr *addr, socklen_t len)
{
    if (addr->sa_family == AF_UNIX)
        return true;
    if (addr->sa_family != AF_INET || len < sizeof(struct sockaddr_in))
        return false;
    const auto *in = reinterpret_cast<const struct sockaddr_in *>(addr);
    if (in->sin_addr.s_addr != htonl(INADDR_LOOPBACK))
        return false;
    for (int k = 0; k < kNodes; k++)
        if (ntohs(in->sin_port) == node(k).port)
            return true;
    return false;
}

} // namespace fuzz

extern "C" int connect(int fd, const struct sockaddr *addr, socklen_t len)
{
    if (!addr || !fuzz::ours(addr, len)) {
        if (fuzz::g_trace)
            fuzz::trace_line("  connect refused: not one of the fuzz server's sockets\n");
        errno = ECONNREFUSED;
        return -1;
    }
    return (int)syscall(SYS_connect, fd, addr, len);
}

extern "C" int getaddrinfo(const char *node, const char *service, const struct addrinfo *hints,
                           struct addrinfo **res)
{
    using Fn = int (*)(const char *, const char *, const struct addrinfo *, struct addrinfo **);
    static Fn next = reinterpret_cast<Fn>(dlsym(RTLD_NEXT, "getaddrinfo"));
    struct addrinfo numeric;
    if (hints)
        numeric = *hints;
    else {
        memset(&numeric, 0, sizeof(numeric));
        numeric.ai_family = AF_UNSPEC;
    }
    numeric.ai_flags |= AI_NUMERICHOST; // no name service
    return next ? next(node, service, &numeric, res) : EAI_FAIL;
}

namespace fuzz
{

// One whole command (a multibulk of bulk strings, as hiredis writes them) off
// the front of `in`, or false while it has not all arrived.
inline bool take_command(std::string &in, std::vector<std::string> *args)
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

inline std::string upper(std::string s)
{
    for (auto &ch : s)
        ch = (char)toupper((unsigned char)ch);
    return s;
}

inline std::string lower(std::string s)
{
    for (auto &ch : s)
        ch = (char)tolower((unsigned char)ch);
    return s;
}

inline Mode g_mode;

inline bool cluster_mode()
{
    return g_mode == Mode::Cluster || g_mode == Mode::Sharded;
}

#if EDGELOCK_FUZZ_TLS
constexpr bool kTls = true;
#else
constexpr bool kTls = false;
struct ssl_st;
#endif

// A connection the client made, from the server's side.
struct Peer {
    int fd = -1;
    int id = 0;
    int node = -1;                                   // the listener it came to: -1 the unix one
    bool resp3 = false;                              // answered HELLO 3: pushes where RESP2 has arrays
    std::string in;                                  // read, not yet a whole command
    std::deque<std::vector<std::string>> unanswered; // read, oldest first
    std::vector<std::string> channels;               // named by its (un)subscribes
    struct ssl_st *ssl = nullptr;                    // fuzz_tls: the server's TLS (freed by Server::drop)
};

// Bytes to a connection's socket (MSG_NOSIGNAL: the client may have closed
// it; that is the server's SIGPIPE, not the client's): as TLS records unless
// `raw`. False when the socket took none.
inline bool put_out(Peer &p, const char *data, size_t n, bool raw = false)
{
#if EDGELOCK_FUZZ_TLS
    std::string records;
    if (!raw) {
        records = tls_wrap(p.ssl, data, n);
        data = records.data();
        n = records.size();
    }
#else
    (void)raw;
#endif
    return n == 0 || send(p.fd, data, n, MSG_NOSIGNAL) >= 0;
}

// Bytes read from a connection's socket, into p.in as the server reads them
// (decrypted with TLS; the handshake's answer goes out). False: the client
// broke the TLS session, and the server drops the connection.
inline bool take_in(Peer &p, const char *raw, size_t n)
{
#if EDGELOCK_FUZZ_TLS
    bool ok = tls_take(p.ssl, raw, n, &p.in);
    std::string out = tls_pending(p.ssl);
    if (!out.empty())
        (void)send(p.fd, out.data(), out.size(), MSG_NOSIGNAL);
    return ok;
#else
    p.in.append(raw, n);
    return true;
#endif
}

// An array, or on a RESP3 connection a push (pub/sub's replies and messages).
inline std::string pubsub_reply(const Peer &p, const std::vector<std::string> &parts)
{
    std::string out = resp_array(parts);
    if (p.resp3)
        out[0] = '>';
    return out;
}

// A CLUSTER SLOTS answer over the listeners: the range split between the
// seeds (the answer when the input has run out), on one node, or over all
// three.
inline std::string slots_map(Input &s)
{
    static const int kLayouts[4][3] = {{0, 1, -1}, {0, -1, -1}, {1, 0, 2}, {2, 1, -1}};
    const int *layout = kLayouts[s.byte() % 4];
    int n = layout[1] < 0 ? 1 : layout[2] < 0 ? 2 : 3;
    std::string out = "*" + std::to_string(n) + "\r\n";
    for (int k = 0; k < n; k++) {
        long lo = 16384L * k / n, hi = 16384L * (k + 1) / n - 1;
        out += "*3\r\n:" + std::to_string(lo) + "\r\n:" + std::to_string(hi) + "\r\n*2\r\n" +
               resp_bulk("127.0.0.1") + ":" + std::to_string(node(layout[k]).port) + "\r\n";
    }
    return out;
}

// The addresses replies.hpp's errors name (written for the fake engine's
// hosts), turned into the listeners', so that a redirection reaches a node.
inline std::string local_addresses(std::string bytes)
{
    static const char *const kNamed[] = {"10.0.0.1:7000", "10.0.0.2:7001", "10.0.0.3:7002", "127.0.0.1:6381"};
    static const int kTo[] = {0, 1, 2, 2};
    for (int k = 0; k < 4; k++)
        for (size_t at; (at = bytes.find(kNamed[k])) != std::string::npos;)
            bytes.replace(at, strlen(kNamed[k]), node_address(kTo[k]));
    return bytes;
}

// A plausible answer to a command (what Redis would say, in kind), made from
// the input where there is a choice.
inline std::string plausible(Peer &p, const std::vector<std::string> &a, Input &s)
{
    std::string cmd = a.empty() ? "" : upper(a[0]);
    std::string sub = a.size() > 1 ? upper(a[1]) : "";
    if (cmd.find("SUBSCRIBE") != std::string::npos)
        return pubsub_reply(p, {resp_bulk(lower(a[0])), resp_bulk(a.size() > 1 ? a[1] : ""),
                                ":" + std::to_string(s.byte() % 3) + "\r\n"});
    if (cmd == "PING")
        return p.channels.empty() ? "+PONG\r\n"
                                  : pubsub_reply(p, {resp_bulk("pong"), resp_bulk(a.size() > 1 ? a[1] : "")});
    if (cmd == "INFO")
        return resp_bulk("# Server\r\nrun_id:" + std::string(40, (char)('a' + s.byte() % 3)) + "\r\n");
    if (cmd == "SCRIPT")
        return resp_bulk(std::string(40, 'f'));
    if (cmd == "CLUSTER" && sub == "SLOTS")
        return slots_map(s);
    if (cmd == "PUBSUB") // the sharded probe: Redis 7 knows SHARDNUMSUB, 6 does not
        return g_mode == Mode::Sharded && s.byte() % 4 != 3
                   ? "*2\r\n" + resp_bulk(a.size() > 2 ? a[2] : "") + ":0\r\n"
                   : "-ERR unknown subcommand 'SHARDNUMSUB'\r\n";
    if (cmd == "HELLO") {
#ifdef REDIS_REPLY_PUSH
        if (s.byte() % 8 != 7) {
            p.resp3 = a.size() > 1 && a[1] == "3";
            return "%2\r\n" + resp_bulk("server") + resp_bulk("redis") + resp_bulk("proto") + ":" +
                   (p.resp3 ? "3" : "2") + "\r\n";
        }
#endif
        return "-NOPROTO unsupported protocol version\r\n";
    }
    if (cmd == "SENTINEL") // get-master-addr-by-name: node 1, or after a failover node 2
        return resp_array(
            {resp_bulk("127.0.0.1"), resp_bulk(std::to_string(node(1 + s.byte() % 4 / 3).port))});
    if (cmd == "ROLE")
        return resp_array({resp_bulk(s.byte() % 8 == 7 ? "slave" : "master"), ":0\r\n", "*0\r\n"});
    if (cmd == "EVALSHA" || cmd == "EVAL") {
        uint8_t t = s.byte();
        switch (t % 6) {
        case 0: return kNilBulk; // granted, released
        case 1: return ":1\r\n";
        case 2: return ":0\r\n";
        case 3: return ":" + std::to_string(100 * (t / 6)) + "\r\n"; // held: its TTL
        case 4:
            if (cluster_mode() && t & 64) // the key's slot is elsewhere, for good or for one command
                return std::string(t & 128 ? "-ASK " : "-MOVED ") + std::to_string(s.byte() * 64) + " " +
                       node_address(s.byte() % kNodes) + "\r\n";
            return "-NOSCRIPT No matching script. Please use EVAL.\r\n";
        default: return reply_of(s);
        }
    }
    if (cmd == "DEL" || cmd == "PUBLISH" || cmd == "SPUBLISH" || cmd == "EXISTS")
        return ":" + std::to_string(s.byte() % 3) + "\r\n";
    return s.byte() % 2 ? "+OK\r\n" : reply_of(s);
}

// The server's side of the client's connections, and what the input makes
// it do. pump() is the target's: its client's loop runs (or its threads get
// a moment) and the server takes what was written.
struct Server {
    std::vector<Peer> peers;
    int next_id = 0;

    virtual void pump() = 0;

    virtual ~Server()
    {
        accept_all();
        while (!peers.empty())
            drop(&peers.back());
    }

    // A connection closed by the server, or found closed by the client.
    void drop(Peer *p)
    {
        close(p->fd);
#if EDGELOCK_FUZZ_TLS
        SSL_free(p->ssl);
#endif
        peers.erase(peers.begin() + (p - peers.data()));
    }

    void accept_all()
    {
        for (int k = kTls ? 0 : -1; k < kNodes; k++) {
            if (k > (kTls ? 0 : -1) && g_mode == Mode::Single)
                break; // one Redis: on the unix socket, or with TLS node 0
            for (;;) {
                int fd = accept4(k < 0 ? listener().fd : node(k).fd, nullptr, nullptr,
                                 SOCK_NONBLOCK | SOCK_CLOEXEC);
                if (fd < 0)
                    break;
                Peer p;
                p.fd = fd;
                p.id = next_id++;
                p.node = k;
#if EDGELOCK_FUZZ_TLS
                p.ssl = tls_accept(tls_side(listener().dir), p.id);
#endif
                trace("  accepted connection %d (node %d)\n", p.id, k);
                peers.push_back(p);
            }
        }
    }

    // What the client wrote, read into whole commands. A connection the
    // client closed goes (one that reconnects every few ms would otherwise
    // pile up thousands).
    void read_all()
    {
        for (size_t i = 0; i < peers.size();) {
            Peer &p = peers[i];
            char buf[4096];
            ssize_t n = 0;
            bool broken = false;
            while (!broken && (n = read(p.fd, buf, sizeof(buf))) > 0)
                broken = !take_in(p, buf, (size_t)n);
            if (broken || n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) {
                trace("  connection %d closed by the client%s\n", p.id, broken ? " (TLS)" : "");
                drop(&p);
                continue;
            }
            i++;
            std::vector<std::string> a;
            while (take_command(p.in, &a)) {
                trace("  connection %d read: %s\n", p.id, shown(a.empty() ? "" : a[0]).c_str());
                if (!a.empty() && upper(a[0]).find("SUBSCRIBE") != std::string::npos && a.size() > 1)
                    p.channels.push_back(a[1]);
                p.unanswered.push_back(a);
            }
        }
    }

    Peer *peer(uint8_t n)
    {
        return peers.empty() ? nullptr : &peers[n % peers.size()];
    }
    Peer *find(int id)
    {
        for (Peer &p : peers)
            if (p.id == id)
                return &p;
        return nullptr;
    }

    // Bytes to the client, at most in two pieces with a pump() between (a
    // reply cut anywhere, as TCP may deliver it; with TLS, two records).
    // What the socket does not take is lost, as with a server that gives up
    // on a slow reader. raw: past TLS, bytes that are no record.
    void write_out(Peer *p, const std::string &any_bytes, Input &s, bool raw = false)
    {
        const std::string bytes = g_mode == Mode::Single ? any_bytes : local_addresses(any_bytes);
        size_t cut = s.n == 0 ? bytes.size() : s.byte() % (bytes.size() + 1);
        trace("  connection %d write%s: %s\n", p->id, raw && kTls ? " (no TLS)" : "", shown(bytes).c_str());
        if (cut > 0 && !put_out(*p, bytes.data(), cut, raw))
            return;
        if (cut < bytes.size()) {
            int id = p->id;
            pump(); // may accept connections: `p` may move
            if (Peer *still = find(id))
                (void)put_out(*still, bytes.data() + cut, bytes.size() - cut, raw);
        }
    }

    // Every command read and not yet answered gets Redis's answer, and so do
    // the commands of the connections those answers lead to (a slot map's
    // nodes, the master a sentinel names), up to `rounds` times.
    void answer_all(int rounds)
    {
        Input none{nullptr, 0};
        for (int round = 0; round < rounds; round++) {
            bool answered = false;
            std::vector<int> ids;
            for (const Peer &p : peers)
                ids.push_back(p.id);
            for (int id : ids) {
                while (Peer *p = find(id)) {
                    if (p->unanswered.empty())
                        break;
                    std::vector<std::string> a = p->unanswered.front();
                    p->unanswered.pop_front();
                    write_out(p, plausible(*p, a, none), none);
                    answered = true;
                }
            }
            if (!answered)
                break;
            pump();
        }
    }

    // What the server does on its own, by the op's number (9-13; false for
    // the others): answer the oldest command on a connection, send a
    // message, send anything, close.
    bool step(uint8_t op, Input &s)
    {
        switch (op) {
        case 9:
        case 10: { // the oldest command on a connection is answered
            Peer *p = peer(s.byte());
            if (!p || p->unanswered.empty())
                return true;
            std::vector<std::string> a = p->unanswered.front();
            p->unanswered.pop_front();
            write_out(p, s.byte() % 4 ? plausible(*p, a, s) : reply_of(s), s);
            return true;
        }
        case 11: { // a message on a channel it named, or on any
            Peer *p = peer(s.byte());
            if (!p)
                return true;
            uint8_t what = s.byte();
            std::string channel =
                !p->channels.empty() && what % 4 ? p->channels[s.byte() % p->channels.size()] : s.bytes(30);
            std::string payload = what / 4 % 2 ? kNumbers[s.byte() % 6] : s.bytes(20);
            if (g_mode == Mode::Sentinel && what & 128) // a failover, from and to either master
                payload = "mymaster 127.0.0.1 " + std::to_string(node(1 + s.byte() % 2).port) +
                          " 127.0.0.1 " + std::to_string(node(1 + s.byte() % 2).port);
            write_out(p,
                      pubsub_reply(*p, {resp_bulk(what & 64 ? "smessage" : "message"), resp_bulk(channel),
                                        resp_bulk(payload)}),
                      s);
            return true;
        }
        case 12: { // anything: a reply nobody asked for, or bytes that are no RESP at all (no TLS either)
            Peer *p = peer(s.byte());
            if (!p)
                return true;
            if (s.byte() % 2)
                write_out(p, reply_of(s), s);
            else
                write_out(p, s.bytes(64), s, true);
            return true;
        }
        case 13: { // the server closes a connection (at once, or its writing half; with TLS, said or not)
            uint8_t n = s.byte();
            if (Peer *p = peer(n)) {
                trace("  connection %d closed\n", p->id);
#if EDGELOCK_FUZZ_TLS
                if (n & 64) {
                    std::string notify = tls_close_notify(p->ssl);
                    (void)put_out(*p, notify.data(), notify.size(), true);
                }
#endif
                if (n & 128)
                    shutdown(p->fd, SHUT_WR);
                else
                    drop(p);
            }
            return true;
        }
        default: return false;
        }
    }
};

inline void log_line(void *, edgelock_log_level, const char *msg)
{
    trace("  log: %s\n", msg);
}

// The client's configuration: the URL of the mode's server (kept in *url),
// and what the input's first byte asks, timeouts short enough that a few
// waits of a few ms reach them.
inline void configure(edgelock_config *cfg, std::string *url, uint8_t tweaks)
{
    edgelock_config_init(cfg);
    if (cluster_mode()) {
        *url = "redis-cluster://" + node_address(0) + "," + node_address(1);
        // Sharded: on, or as the cluster's answer decides.
        cfg->sharded_pubsub = g_mode == Mode::Cluster ? EDGELOCK_SHARDED_OFF
                              : tweaks & 16           ? EDGELOCK_SHARDED_ON
                                                      : EDGELOCK_SHARDED_AUTO;
    } else if (g_mode == Mode::Sentinel) {
        *url = "redis-sentinel://" + node_address(0) + "/mymaster";
    } else {
        *url = kTls ? "redis://" + node_address(0) : "unix://" + listener().path;
    }
#if EDGELOCK_FUZZ_TLS
    url->insert(5, "s"); // rediss://, rediss-cluster://, rediss-sentinel://
    cfg->tls_ca = tls_side(listener().dir).ca_path.c_str();
#endif
    cfg->url = url->c_str();
    if (g_trace) {
        cfg->log_fn = log_line;
        cfg->log_level = EDGELOCK_LOG_DEBUG;
    }
    cfg->command_timeout_ms = tweaks & 1 ? 5 : 40;
    cfg->connect_timeout_ms = tweaks & 2 ? 5 : 40;
    cfg->reconnect_min_ms = 1;
    cfg->reconnect_max_ms = 4;
    if (tweaks & 4)
        cfg->watchdog_lease_ms = 30; // renewals every 10 ms
    if (tweaks & 8) {                // tables that fill up
        cfg->max_locks = 4;
        cfg->max_holds = 2;
        cfg->max_waiters = 2;
        cfg->max_subscriptions = 1;
        cfg->max_commands = 4;
        cfg->max_nodes = 2;
    }
    if (tweaks & 16)
        cfg->unlock_latch_ttl_ms = 10;
}

// The handles an input starts with: a reentrant lock, a fair lock, a
// semaphore and a latch, on two names.
inline void first_handles(edgelock_client *c, edgelock_lock locks[4])
{
    static const edgelock_lock_kind kKinds[] = {EDGELOCK_REENTRANT, EDGELOCK_FAIR, EDGELOCK_SEMAPHORE,
                                                EDGELOCK_LATCH};
    for (int i = 0; i < 4; i++)
        edgelock_lock_new_kind(c, kKinds[i], i % 2 ? "b" : "a", 1, &locks[i]);
}

// One input through a target's Run (a Server with a client `c`, its
// `locks`, start(), step() and finish()): the first byte picks the mode and
// the client's configuration, and whether the connections' setup is
// answered for it (unless & 32), then up to 300 steps.
template <typename Run> int run_input(const uint8_t *data, size_t size)
{
#if !defined(HIREDIS_MAJOR) || HIREDIS_MAJOR < 1 || EDGELOCK_FUZZ_TLS
    // hiredis 0.14 writes with a plain write(), OpenSSL with its own: the
    // application ignores SIGPIPE, as the header asks.
    signal(SIGPIPE, SIG_IGN);
#endif
    Input s{data, size};
    uint8_t tweaks = s.byte();
    g_mode = mode_of(tweaks);
    Run run(tweaks);
    if (!run.c)
        return 0;
    first_handles(run.c, run.locks);
    run.start(!(tweaks & 32));
    for (int i = 0; i < 300 && s.n > 0; i++)
        run.step(s);
    run.finish();
    return 0;
}

// A handle of any kind on one of three names (two in one slot), by `k`.
inline edgelock_status new_handle(edgelock_client *c, uint8_t k, edgelock_lock *out)
{
    static const char *const kNames[] = {"a", "b", "{a}c"};
    const char *name = kNames[k / 8 % 3];
    return edgelock_lock_new_kind(c, (edgelock_lock_kind)(k % 8), name, strlen(name), out);
}

} // namespace fuzz
