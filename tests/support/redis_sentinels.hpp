// SPDX-License-Identifier: BSD-3-Clause
// Redis Sentinel for the tests: one sentinel process, a temp dir, and the
// usual topology (a master, a replica and three sentinels watching them as
// "mymaster"), all started on free loopback ports and killed at the end.
#pragma once

#include <stdint.h>
#include <sys/types.h>

#include <string>

#include "redis_server.hpp"

// One redis-server in sentinel mode, from a config file in a temp dir.
struct Sentinel {
    pid_t pid = -1;
    uint16_t port = 0;
    // extra: more config lines (TLS); quorum 1 for a sentinel alone.
    bool start(const std::string &dir, int index, uint16_t master_port, int quorum = 2,
               const std::string &extra = "");
    long long command_int(const char *cmd); // an integer reply, -1 for a status (PONG), -2 for no answer
    std::string client_list(); // CLIENT LIST as this sentinel has it ("" when it does not answer)
    uint16_t master_port();    // the port of the master this sentinel names now (0: none)
    void stop();
    ~Sentinel() { stop(); }
};

// A temp dir for sentinel.conf and a replica's snapshot, removed with it.
struct TempDir {
    char path[64];
    bool ok;
    explicit TempDir(const char *what);
    ~TempDir();
};

// A master, its replica and three sentinels that all know both and each
// other; url is the redis-sentinel:// URL naming the three.
struct SentinelSetup {
    TempDir dir{"setup"};
    RedisServer master, replica;
    Sentinel s[3];
    std::string url;
    bool ok = false; // false: something did not start, or the sentinels did not meet
    SentinelSetup();
};

// The binary's one SentinelSetup, started on first use; null when it did not come up.
SentinelSetup *shared_sentinels();
