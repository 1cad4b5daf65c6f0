// SPDX-License-Identifier: BSD-3-Clause
// A misbehaving "Redis" (a fake server in this file, on loopback): wrong
// reply types, huge or negative lengths, deep nesting, stalls, a close in the
// middle of a reply, replies and messages nobody asked for. Each ends in a
// documented status within the configured timeouts, in bounded memory, and
// the process lives on.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "check.hpp"
#include "clients.hpp"
#include "log_capture.hpp"
#include "edgelock/edgelock.h"
#include "redis_server.hpp"
#include "redisson/scripts.hpp"

using edgelock::kScriptAcquire;
using edgelock::kScriptRelease;
using edgelock::kScripts;

namespace
{

// What the server does with the first acquire (EVALSHA of the lock script);
// everything else gets a plausible answer.
enum class Act {
    Normal,             // nil: acquired
    ExtraReply,         // nil, then "+OK" nobody asked for
    HugeArray,          // "*2000000000"
    StatusReply,        // "+OK": a type the lock script never returns
    StringReply,        // "$3 abc"
    NegativeLength,     // "$-5"
    DeepNesting,        // 40 nested arrays
    Stall,              // no answer at all
    Trickle,            // a long string, a byte a millisecond, never ending in time
    CloseMidReply,      // "*2 :1" then close
    MessageOnCommand,   // a pub/sub message on the command connection, before any command
    HeldThenForeignMsg, // ":300" (held elsewhere); the waiter's SUBSCRIBE gets a message of another channel
    HeldThenAfterSubscribe, // ":300"; the waiter's SUBSCRIBE is confirmed, then gets the server's `after`
    ReplyToIdle // "+OK" on a connection that sent nothing yet (the subscriber's, before any SUBSCRIBE)
};

class HostileServer
{
public:
    // after: for HeldThenAfterSubscribe, what follows the confirmation ("{ch}"
    // stands for the channel, "{len}" for its length).
    explicit HostileServer(Act act, std::string after = "") : act_(act), after_(std::move(after))
    {
        fd_ = socket(AF_INET, SOCK_STREAM, 0);
        int one = 1;
        setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        struct sockaddr_in a;
        memset(&a, 0, sizeof(a));
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t len = sizeof(a);
        if (bind(fd_, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(fd_, 16) != 0 ||
            getsockname(fd_, (struct sockaddr *)&a, &len) != 0)
            return;
        port_ = ntohs(a.sin_port);
        acceptor_ = std::thread([this] { accept_loop(); });
    }
    ~HostileServer()
    {
        stop_ = true;
        if (acceptor_.joinable())
            acceptor_.join();
        std::lock_guard<std::mutex> g(mu_);
        for (auto &t : conns_)
            t.join();
        close(fd_);
    }
    std::string url() const { return "redis://127.0.0.1:" + std::to_string(port_); }
    int acquires() const { return acquires_; }
    bool idle_reply_sent() const { return idle_reply_sent_; }

private:
    void accept_loop()
    {
        while (!stop_) {
            struct pollfd p = {fd_, POLLIN, 0};
            if (poll(&p, 1, 50) <= 0)
                continue;
            int c = accept(fd_, nullptr, nullptr);
            if (c < 0)
                continue;
            std::lock_guard<std::mutex> g(mu_);
            conns_.emplace_back([this, c] { serve(c); });
        }
    }

    static void put(int fd, const std::string &s)
    {
        size_t off = 0;
        while (off < s.size()) {
            ssize_t n = send(fd, s.data() + off, s.size() - off, MSG_NOSIGNAL);
            if (n <= 0)
                return;
            off += (size_t)n;
        }
    }

    // One command (an array of bulk strings) from the front of buf; false when
    // it is not all there yet.
    static bool take_command(std::string &buf, std::vector<std::string> &args)
    {
        args.clear();
        size_t pos = 0;
        auto line = [&](std::string &out) {
            size_t e = buf.find("\r\n", pos);
            if (e == std::string::npos)
                return false;
            out = buf.substr(pos, e - pos);
            pos = e + 2;
            return true;
        };
        std::string l;
        if (!line(l) || l.empty() || l[0] != '*')
            return false;
        long n = atol(l.c_str() + 1);
        for (long i = 0; i < n; i++) {
            if (!line(l) || l.empty() || l[0] != '$')
                return false;
            size_t len = (size_t)atol(l.c_str() + 1);
            if (buf.size() < pos + len + 2)
                return false;
            args.push_back(buf.substr(pos, len));
            pos += len + 2;
        }
        buf.erase(0, pos);
        return true;
    }

    void serve(int fd)
    {
        std::string buf;
        std::vector<std::string> args;
        char chunk[4096];
        int quiet_polls = 0;
        bool heard = false;
        while (!stop_) {
            struct pollfd p = {fd, POLLIN, 0};
            if (poll(&p, 1, 50) <= 0) {
                // Silent since it connected (the command connection sends its
                // setup at once): the subscriber's, subscribed to nothing yet.
                if (act_ == Act::ReplyToIdle && !heard && ++quiet_polls == 4 &&
                    !idle_reply_sent_.exchange(true))
                    put(fd, "+OK\r\n");
                continue;
            }
            heard = true;
            ssize_t n = recv(fd, chunk, sizeof(chunk), 0);
            if (n <= 0)
                break;
            buf.append(chunk, (size_t)n);
            bool closed = false;
            while (!closed && take_command(buf, args))
                closed = !answer(fd, args);
            if (closed)
                break;
        }
        close(fd);
    }

    // False: close the connection.
    bool answer(int fd, const std::vector<std::string> &a)
    {
        if (a.empty())
            return true;
        const std::string &cmd = a[0];
        if (cmd == "SCRIPT") {
            put(fd, "$40\r\n" + std::string(40, '0') + "\r\n");
            return true;
        }
        if (cmd == "SUBSCRIBE" && a.size() > 1) {
            put(fd,
                "*3\r\n$9\r\nsubscribe\r\n$" + std::to_string(a[1].size()) + "\r\n" + a[1] + "\r\n:1\r\n");
            if (act_ == Act::HeldThenForeignMsg)
                put(fd, "*3\r\n$7\r\nmessage\r\n$5\r\nother\r\n$1\r\n0\r\n");
            if (act_ == Act::HeldThenAfterSubscribe)
                put(fd, with_channel(after_, a[1]));
            return true;
        }
        if (cmd == "UNSUBSCRIBE" && a.size() > 1) {
            put(fd,
                "*3\r\n$11\r\nunsubscribe\r\n$" + std::to_string(a[1].size()) + "\r\n" + a[1] + "\r\n:0\r\n");
            return true;
        }
        if (cmd == "EVALSHA" && a.size() > 1 && a[1] == kScripts[kScriptAcquire].sha1) {
            int k = acquires_++;
            if (k > 0) {
                put(fd, "$-1\r\n");
                return true;
            }
            switch (act_) {
            case Act::Normal:
            case Act::ReplyToIdle: put(fd, "$-1\r\n"); return true;
            case Act::MessageOnCommand:
                put(fd, "$-1\r\n*3\r\n$7\r\nmessage\r\n$3\r\nfoo\r\n$1\r\n0\r\n");
                return true;
            case Act::ExtraReply: put(fd, "$-1\r\n+OK\r\n"); return true;
            case Act::HugeArray: put(fd, "*2000000000\r\n"); return true;
            case Act::StatusReply: put(fd, "+OK\r\n"); return true;
            case Act::StringReply: put(fd, "$3\r\nabc\r\n"); return true;
            case Act::NegativeLength: put(fd, "$-5\r\n"); return true;
            case Act::DeepNesting: {
                std::string s;
                for (int i = 0; i < 40; i++)
                    s += "*1\r\n";
                put(fd, s + ":1\r\n");
                return true;
            }
            case Act::Stall: return true;
            case Act::Trickle:
                // Faster than the client's reads that wait give up, slower
                // than its command timeout; the client drops the connection
                // when that ends the call, which ends this.
                put(fd, "$100000\r\n");
                for (int i = 0; i < 100000 && !stop_ && send(fd, "x", 1, MSG_NOSIGNAL) == 1; i++)
                    usleep(1000);
                return false;
            case Act::CloseMidReply: put(fd, "*2\r\n:1\r\n"); return false;
            case Act::HeldThenForeignMsg:
            case Act::HeldThenAfterSubscribe: put(fd, ":300\r\n"); return true;
            }
            return true;
        }
        if (cmd == "EVALSHA" && a.size() > 1 && a[1] == kScripts[kScriptRelease].sha1) {
            put(fd, ":1\r\n");
            return true;
        }
        if (cmd == "SCAN" && a.size() > 1) {
            // Two pages: the first of three names (more than a COUNT of 1
            // asked for, as from a table Redis is resizing), then one.
            if (a[1] == "0")
                put(fd, "*2\r\n$1\r\n7\r\n*3\r\n$2\r\nh1\r\n$2\r\nh2\r\n$2\r\nh3\r\n");
            else
                put(fd, "*2\r\n$1\r\n0\r\n*1\r\n$2\r\nh4\r\n");
            return true;
        }
        if (cmd == "DEL" || cmd == "PUBLISH") {
            put(fd, ":0\r\n");
            return true;
        }
        put(fd, "+OK\r\n");
        return true;
    }

    static std::string with_channel(std::string s, const std::string &channel)
    {
        for (size_t at; (at = s.find("{len}")) != std::string::npos;)
            s.replace(at, 5, std::to_string(channel.size()));
        for (size_t at; (at = s.find("{ch}")) != std::string::npos;)
            s.replace(at, 4, channel);
        return s;
    }

    Act act_;
    std::string after_;
    int fd_ = -1;
    uint16_t port_ = 0;
    std::atomic<bool> stop_{false};
    std::atomic<int> acquires_{0};
    std::atomic<bool> idle_reply_sent_{false};
    std::thread acceptor_;
    std::mutex mu_;
    std::vector<std::thread> conns_;
};

void quick(edgelock_config *cfg)
{
    cfg->command_timeout_ms = 1000;
    cfg->connect_timeout_ms = 1000;
    cfg->reconnect_min_ms = 50;
    cfg->reconnect_max_ms = 200;
}

// The warnings of a client made with quick_logged.
LogCapture g_log;

void quick_logged(edgelock_config *cfg)
{
    quick(cfg);
    g_log.clear();
    g_log.attach(cfg, EDGELOCK_LOG_WARN);
}

// One try_lock (no wait, fixed lease) against a server acting as told.
edgelock_status first_acquire(Act act, int64_t wait_ms = 0, void (*tweak)(edgelock_config *) = quick)
{
    HostileServer s(act);
    edgelock_client *c = make_client(s.url().c_str(), tweak);
    if (!c)
        return EDGELOCK_ERR_INVALID_ARG;
    edgelock_lock lk = make_lock(c, "h:x");
    edgelock_status st = edgelock_try_lock(c, lk, wait_ms, 10000);
    if (st == EDGELOCK_OK)
        edgelock_unlock(c, lk, nullptr);
    edgelock_lock_free(c, lk);
    edgelock_client_destroy(c);
    return st;
}

// The first acquire finds the lock held (":300"): the caller waits, on
// whatever the server then does to its subscriber, and still gets the lock
// (by the message, or when the TTL runs out), and leaves nothing behind.
void waiter_gets_the_lock(const HostileServer &s)
{
    edgelock_client *c = make_client(s.url().c_str(), quick);
    REQUIRE(c);
    edgelock_lock lk = make_lock(c, "h:x");
    CHECK_ST(edgelock_try_lock(c, lk, 10000, 10000), EDGELOCK_OK);
    CHECK(s.acquires() >= 2);
    CHECK_ST(edgelock_unlock(c, lk, nullptr), EDGELOCK_OK);
    CHECK(wait_until(10000, [&] { return tables_idle(c); }));
    edgelock_lock_free(c, lk);
    edgelock_client_destroy(c);
}

long max_rss_kb()
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

} // namespace

TEST_CASE(the_fake_server_is_good_enough_for_a_lock)
{
    CHECK_ST(first_acquire(Act::Normal), EDGELOCK_OK);
}

// hiredis asserts on a reply with no command waiting for it: a gateway would
// die holding the lock it just took. It lives on, holds the lock, and the
// next call goes out on a fresh connection. The log says why the connection
// went (hiredis's own text for a refused reply is "Out of memory").
TEST_CASE(a_reply_nobody_asked_for_drops_the_connection_not_the_process)
{
    HostileServer s(Act::ExtraReply);
    edgelock_client *c = make_client(s.url().c_str(), quick_logged);
    REQUIRE(c);
    edgelock_lock lk = make_lock(c, "h:x");
    CHECK_ST(edgelock_try_lock(c, lk, 0, 10000), EDGELOCK_OK);
    CHECK(wait_until(10000, [&] { return stats_of(c).reconnects >= 1; }));
    CHECK(g_log.has("command connection lost: Redis sent a reply no command asked for"));
    CHECK(!g_log.has("Out of memory"));
    CHECK_ST(edgelock_unlock(c, lk, nullptr), EDGELOCK_OK);
    edgelock_lock_free(c, lk);
    edgelock_client_destroy(c);
}

// 13 bytes that asked hiredis 0.14 for 16 GB.
TEST_CASE(an_array_of_two_billion_elements_is_refused_in_bounded_memory)
{
    long before = max_rss_kb();
    CHECK_ST(first_acquire(Act::HugeArray, 0, quick_logged), EDGELOCK_ERR_CONNECTION);
    CHECK(max_rss_kb() - before < 256 * 1024); // kB: nothing near 16 GB was touched
    CHECK(g_log.has("connection lost: Redis sent an array of more elements than any reply edgelock reads"));
    CHECK(!g_log.has("Out of memory"));
}

TEST_CASE(replies_of_the_wrong_type_are_protocol_errors)
{
    CHECK_ST(first_acquire(Act::StatusReply), EDGELOCK_ERR_PROTOCOL);
    CHECK_ST(first_acquire(Act::StringReply), EDGELOCK_ERR_PROTOCOL);
}

TEST_CASE(malformed_replies_drop_the_connection)
{
    CHECK_ST(first_acquire(Act::NegativeLength), EDGELOCK_ERR_CONNECTION);
    edgelock_status st = first_acquire(Act::DeepNesting);
    // hiredis 0.14 refuses more than 7 levels (the connection drops); 1.x
    // reads them, and the shape is wrong for a lock reply.
    CHECK(st == EDGELOCK_ERR_CONNECTION || st == EDGELOCK_ERR_PROTOCOL);
    CHECK_ST(first_acquire(Act::CloseMidReply), EDGELOCK_ERR_CONNECTION);
}

TEST_CASE(a_server_that_never_answers_is_a_timeout)
{
    CHECK_ST(first_acquire(Act::Stall), EDGELOCK_ERR_TIMEOUT);
}

// Bytes that keep coming, never a whole reply: the blocked caller reading them
// (api/blocking.cpp reads the socket itself while they come) still gets the
// command timeout (1 s here), not long after: the bound only catches a call
// that read for as long as bytes came (51 s when the reads never let the
// loop's timers run).
TEST_CASE(a_reply_that_trickles_in_for_ever_is_a_timeout)
{
    uint64_t start = mono_ms();
    CHECK_ST(first_acquire(Act::Trickle), EDGELOCK_ERR_TIMEOUT);
    CHECK(mono_ms() - start < 20000);
}

// A pub/sub message on the command connection is a reply nobody asked for:
// that connection is replaced; the lock taken stays, the unlock goes out on
// the next connection. (A reply injected while others are due cannot be told
// from theirs: RESP has no request ids. It shifts the replies, and the shapes
// the lock calls check turn that into PROTOCOL errors, not wrong answers.)
TEST_CASE(a_message_on_the_command_connection_is_dropped_with_it)
{
    CHECK_ST(first_acquire(Act::MessageOnCommand), EDGELOCK_OK);
}

// The waiter's subscription hears a message for a channel it never asked
// for: ignored; the waiter gets the lock when the holder's TTL runs out.
TEST_CASE(a_message_for_another_channel_wakes_no_one_and_harms_nothing)
{
    HostileServer s(Act::HeldThenForeignMsg);
    waiter_gets_the_lock(s);
}

// The same on the subscriber connection before it subscribed to anything:
// hiredis asserts there too. The connection goes, the client stays usable.
TEST_CASE(a_reply_to_a_subscriber_that_asked_nothing_drops_the_connection_not_the_process)
{
    HostileServer s(Act::ReplyToIdle);
    edgelock_client *c = make_client(s.url().c_str(), quick);
    REQUIRE(c);
    CHECK(wait_until(10000, [&] { return s.idle_reply_sent(); }));
    sleep_ms(200); // read by the client by now, on a loaded machine or not
    edgelock_lock lk = make_lock(c, "h:x");
    CHECK_ST(edgelock_try_lock(c, lk, 5000, 10000), EDGELOCK_OK);
    CHECK_ST(edgelock_unlock(c, lk, nullptr), EDGELOCK_OK);
    edgelock_lock_free(c, lk);
    edgelock_client_destroy(c);
}

// A subscriber's replies that hiredis routes by their shape, where it trusts
// the server: a confirmation for a channel it holds no callback for (the
// first asserts there; after an unsubscribe in upper case, which hiredis
// reads and edgelock's subscriptions would not, the same), a kind that is no
// string, an unsubscribe without its count, a push on a RESP2 connection
// (it would mark the context as taking pushes: messages would no longer be
// routed). Each drops the subscriber connection, not the process: the waiter
// gets the lock when the holder's TTL runs out, and nothing is left behind.
TEST_CASE(a_subscriber_reply_hiredis_would_assert_on_drops_the_connection_not_the_process)
{
    const char *const kAfter[] = {
        "*3\r\n$9\r\nsubscribe\r\n$5\r\nother\r\n:2\r\n",
        "*3\r\n$11\r\nUNSUBSCRIBE\r\n${len}\r\n{ch}\r\n:0\r\n*3\r\n$9\r\nsubscribe\r\n${len}\r\n{ch}\r\n:"
        "1\r\n",
        "*3\r\n$10\r\npsubscribe\r\n${len}\r\n{ch}\r\n:1\r\n",
        "*3\r\n*1\r\n:1\r\n${len}\r\n{ch}\r\n:1\r\n",
        "*3\r\n$7\r\nmessage\r\n:5\r\n$1\r\n0\r\n",
        "*2\r\n$11\r\nunsubscribe\r\n${len}\r\n{ch}\r\n",
        "*3\r\n$11\r\nunsubscribe\r\n${len}\r\n{ch}\r\n$1\r\n0\r\n",
        ">3\r\n$7\r\nmessage\r\n${len}\r\n{ch}\r\n$1\r\n0\r\n",
        "*3\r\n$-1\r\n$-1\r\n$-1\r\n",
        "*0\r\n",
        "*1\r\n$7\r\nmessage\r\n",
    };
    for (const char *after : kAfter) {
        HostileServer s(Act::HeldThenAfterSubscribe, after);
        waiter_gets_the_lock(s);
    }
}

// A SCAN page larger than the caller's array is a status of its own, with
// the cursor where it was: at the start, a cursor of 0 with OK would read
// as "done" to a loop that checks only the cursor, and miss every name.
TEST_CASE(a_scan_page_larger_than_the_array_says_so_and_keeps_the_cursor)
{
    HostileServer s(Act::Normal);
    edgelock_client *c = make_client(s.url().c_str(), quick);
    REQUIRE(c);
    edgelock_scan_name page[4];
    memset(page, 0, sizeof(page));
    edgelock_scan scan = {"h*", 0, page, 2, 0};
    CHECK_ST(edgelock_scan_locks(c, &scan), EDGELOCK_ERR_PAGE_TOO_SMALL);
    CHECK(scan.count == 3 && scan.cursor == 0);
    CHECK(strcmp(page[0].name, "h1") == 0 && strcmp(page[1].name, "h2") == 0 && page[2].name[0] == 0);
    scan.names_cap = scan.count; // the same page again, with room for it
    CHECK_ST(edgelock_scan_locks(c, &scan), EDGELOCK_OK);
    CHECK(scan.count == 3 && scan.cursor == 7 && strcmp(page[2].name, "h3") == 0);
    CHECK_ST(edgelock_scan_locks(c, &scan), EDGELOCK_OK);
    CHECK(scan.count == 1 && scan.cursor == 0 && strcmp(page[0].name, "h4") == 0);
    CHECK(tables_idle(c));
    edgelock_client_destroy(c);
}
