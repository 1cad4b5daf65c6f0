// SPDX-License-Identifier: BSD-3-Clause
#include "redis_sentinels.hpp"

#include <fcntl.h>
#include <hiredis/hiredis.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clients.hpp"

bool Sentinel::start(const std::string &dir, int index, uint16_t master_port, int quorum,
                     const std::string &extra)
{
    port = free_loopback_port();
    std::string conf = dir + "/sentinel" + std::to_string(index) + ".conf";
    FILE *f = fopen(conf.c_str(), "w");
    if (!f)
        return false;
    fprintf(f,
            "port %u\nbind 127.0.0.1\nlogfile \"\"\ndir %s\n%s"
            "sentinel monitor mymaster 127.0.0.1 %u %d\n"
            "sentinel down-after-milliseconds mymaster 1000\n"
            "sentinel failover-timeout mymaster 5000\n",
            port, dir.c_str(), extra.c_str(), master_port, quorum);
    fclose(f);
    pid = fork();
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        int null = open("/dev/null", 1);
        dup2(null, 1);
        execlp("redis-server", "redis-server", conf.c_str(), "--sentinel", (char *)nullptr);
        _exit(127);
    }
    return wait_until(10000, [&] { return command_int("PING") == -1; });
}

long long Sentinel::command_int(const char *cmd)
{
    redisContext *c = redisConnect("127.0.0.1", port);
    long long v = -2;
    if (c && !c->err) {
        redisReply *r = (redisReply *)redisCommand(c, cmd);
        if (r) {
            v = r->type == REDIS_REPLY_INTEGER ? r->integer
                : r->type == REDIS_REPLY_ARRAY ? (long long)r->elements
                                               : -1;
            freeReplyObject(r);
        }
    }
    if (c)
        redisFree(c);
    return v;
}

std::string Sentinel::client_list()
{
    redisContext *c = redisConnect("127.0.0.1", port);
    std::string out;
    if (c && !c->err) {
        redisReply *r = (redisReply *)redisCommand(c, "CLIENT LIST");
        if (r && r->type == REDIS_REPLY_STRING)
            out.assign(r->str, r->len);
        if (r)
            freeReplyObject(r);
    }
    if (c)
        redisFree(c);
    return out;
}

uint16_t Sentinel::master_port()
{
    redisContext *c = redisConnect("127.0.0.1", port);
    uint16_t p = 0;
    if (c && !c->err) {
        redisReply *r = (redisReply *)redisCommand(c, "SENTINEL get-master-addr-by-name mymaster");
        if (r && r->type == REDIS_REPLY_ARRAY && r->elements == 2)
            p = (uint16_t)atoi(r->element[1]->str);
        if (r)
            freeReplyObject(r);
    }
    if (c)
        redisFree(c);
    return p;
}

void Sentinel::stop()
{
    if (pid > 0) {
        kill(pid, SIGKILL);
        waitpid(pid, nullptr, 0);
    }
    pid = -1;
}

TempDir::TempDir(const char *what)
{
    snprintf(path, sizeof(path), "/tmp/edgelock-sentinel-%s-XXXXXX", what);
    ok = mkdtemp(path) != nullptr;
}

TempDir::~TempDir()
{
    std::string rm = std::string("rm -rf '") + path + "'";
    if (ok && system(rm.c_str()) != 0)
        fprintf(stderr, "cannot remove %s\n", path);
}

SentinelSetup::SentinelSetup()
{
    if (!dir.ok || !master.start(0, "--repl-diskless-sync-delay", "0")) // replicas sync at once
        return;
    std::string mport = std::to_string(master.port());
    // A replica writes the master's snapshot to its dir: the test's temp dir.
    const char *extra[] = {"--replicaof", "127.0.0.1", mport.c_str(), "--dir", dir.path, nullptr};
    if (!replica.start_args(0, extra))
        return;
    if (!wait_until(30000, [&] { return redis_integer(master, "WAIT %d %d", 1, 100) == 1; }))
        return;
    url = "redis-sentinel://";
    for (int i = 0; i < 3; i++) {
        if (!s[i].start(dir.path, i, master.port()))
            return;
        url += (i ? ",127.0.0.1:" : "127.0.0.1:") + std::to_string(s[i].port);
    }
    url += "/mymaster";
    // Every sentinel knows the replica and the other sentinels.
    ok = wait_until(60000, [&] {
        for (auto &x : s)
            if (x.command_int("SENTINEL replicas mymaster") < 1 ||
                x.command_int("SENTINEL sentinels mymaster") < 2)
                return false;
        return true;
    });
}

SentinelSetup *shared_sentinels()
{
    static SentinelSetup setup; // stopped at exit, as shared_server()'s
    return setup.ok ? &setup : nullptr;
}
