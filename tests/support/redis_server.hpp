// SPDX-License-Identifier: BSD-3-Clause
// A throwaway redis-server on a free loopback port, for one test binary.
// No persistence, so a restart loses every key, like a crashed Redis would.
#pragma once

#include <hiredis/hiredis.h>
#include <stdint.h>
#include <sys/types.h>

class RedisServer
{
public:
    RedisServer() = default;
    ~RedisServer() { stop(); }
    RedisServer(const RedisServer &) = delete;
    RedisServer &operator=(const RedisServer &) = delete;

    // Start on a free port (or the given one); false if it did not come up.
    bool start(uint16_t port = 0, const char *extra_arg1 = nullptr, const char *extra_arg2 = nullptr);
    // The same with any number of extra arguments (null-terminated list, at most 34).
    bool start_args(uint16_t port, const char *const *extra);
    void stop();    // SIGKILL, like a crash; waits for the process
    bool restart(); // same port, empty data
    uint16_t port() const { return port_; }
    pid_t pid() const { return pid_; }
    const char *url() const { return url_; }

    // A synchronous hiredis connection for inspecting state; caller frees.
    redisContext *connect() const;
    // Run one command and return its reply (caller frees with freeReplyObject).
    redisReply *command(const char *fmt, ...) const;

private:
    pid_t pid_ = -1;
    uint16_t port_ = 0;
    char url_[64] = {0};
};

// Shorthands over RedisServer::command.
long long redis_integer(const RedisServer &r, const char *fmt, ...);
// How many times the server ran command ("ping", "subscribe"; INFO commandstats).
long long command_calls(const RedisServer &r, const char *command);
// Copies a bulk-string reply (or "" for nil) into out.
void redis_string(const RedisServer &r, char *out, size_t cap, const char *fmt, ...);

uint16_t free_loopback_port();
void sleep_ms(unsigned ms);
uint64_t mono_ms();

// The binary's one server, started on first use (aborts the binary if it
// cannot start: every integration test needs it).
RedisServer &shared_server();
