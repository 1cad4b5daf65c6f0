// SPDX-License-Identifier: BSD-3-Clause
#include "redis_server.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <string>

uint16_t free_loopback_port()
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = 0;
    socklen_t len = sizeof(a);
    if (bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0 ||
        getsockname(fd, (struct sockaddr *)&a, &len) != 0) {
        close(fd);
        return 0;
    }
    close(fd);
    return ntohs(a.sin_port);
}

void sleep_ms(unsigned ms)
{
    struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, nullptr);
}

uint64_t mono_ms()
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

// True when the server on c says its process id is pid.
static bool answers_as(redisContext *c, pid_t pid)
{
    redisReply *r = (redisReply *)redisCommand(c, "INFO server");
    bool same = false;
    if (r && r->type == REDIS_REPLY_STRING)
        if (const char *p = strstr(r->str, "process_id:"))
            same = atoll(p + strlen("process_id:")) == (long long)pid;
    if (r)
        freeReplyObject(r);
    return same;
}

bool RedisServer::start(uint16_t port, const char *extra1, const char *extra2)
{
    const char *extra[3] = {extra1, extra1 ? extra2 : nullptr, nullptr};
    return start_args(port, extra);
}

bool RedisServer::start_args(uint16_t port, const char *const *extra)
{
    for (int attempt = 0; attempt < 5; attempt++) {
        port_ = port ? port : free_loopback_port();
        char port_s[16];
        snprintf(port_s, sizeof(port_s), "%u", port_);
        const char *bin = getenv("REDIS_SERVER") ? getenv("REDIS_SERVER") : "redis-server";
        pid_ = fork();
        if (pid_ == 0) {
            // Die with the test: a test killed by its timeout leaves no server.
            prctl(PR_SET_PDEATHSIG, SIGKILL);
            const char *argv[48];
            int n = 0;
            argv[n++] = bin;
            argv[n++] = "--port";
            argv[n++] = port_s;
            argv[n++] = "--bind";
            argv[n++] = "127.0.0.1";
            argv[n++] = "--save";
            argv[n++] = "";
            argv[n++] = "--appendonly";
            argv[n++] = "no";
            argv[n++] = "--loglevel";
            argv[n++] = "warning";
            argv[n++] = "--logfile";
            argv[n++] = "/dev/null";
            for (int k = 0; extra && extra[k] && k < 34; k++)
                argv[n++] = extra[k];
            argv[n] = nullptr;
            execvp(bin, (char *const *)argv);
            _exit(127);
        }
        snprintf(url_, sizeof(url_), "redis://127.0.0.1:%u", port_);
        for (int i = 0; i < 500; i++) {
            redisContext *c = connect();
            if (c) {
                redisReply *r = (redisReply *)redisCommand(c, "PING");
                // Any answer means it is up (NOAUTH too, with --requirepass),
                // if the server answering is this one: another test's server
                // may have won the port, and this one is about to exit.
                bool ok = r != nullptr;
                if (r && r->type != REDIS_REPLY_ERROR)
                    ok = answers_as(c, pid_);
                if (r)
                    freeReplyObject(r);
                redisFree(c);
                if (ok)
                    return true;
            }
            int status;
            if (waitpid(pid_, &status, WNOHANG) == pid_) { // exited: port taken?
                pid_ = -1;
                break;
            }
            sleep_ms(10);
        }
        stop();
        // A fixed port (a restart) taken meanwhile, say as the local port of
        // another test's connection, is free again once that closes: wait
        // and try the same port again rather than fail the test.
        if (port)
            sleep_ms(200);
    }
    return false;
}

void RedisServer::stop()
{
    if (pid_ > 0) {
        kill(pid_, SIGKILL);
        int status;
        waitpid(pid_, &status, 0);
    }
    pid_ = -1;
}

bool RedisServer::restart()
{
    stop();
    return start(port_);
}

redisContext *RedisServer::connect() const
{
    struct timeval tv = {1, 0};
    redisContext *c = redisConnectWithTimeout("127.0.0.1", port_, tv);
    if (c && c->err) {
        redisFree(c);
        return nullptr;
    }
    return c;
}

static redisReply *vcommand(const RedisServer &r, const char *fmt, va_list ap)
{
    redisContext *c = r.connect();
    if (!c)
        return nullptr;
    redisReply *reply = (redisReply *)redisvCommand(c, fmt, ap);
    redisFree(c);
    return reply;
}

redisReply *RedisServer::command(const char *fmt, ...) const
{
    va_list ap;
    va_start(ap, fmt);
    redisReply *reply = vcommand(*this, fmt, ap);
    va_end(ap);
    return reply;
}

long long command_calls(const RedisServer &r, const char *command)
{
    redisReply *rep = r.command("INFO commandstats");
    long long n = 0;
    std::string key = std::string("cmdstat_") + command + ":calls=";
    if (rep && rep->type == REDIS_REPLY_STRING)
        if (const char *p = strstr(rep->str, key.c_str()))
            n = atoll(p + key.size());
    if (rep)
        freeReplyObject(rep);
    return n;
}

long long redis_integer(const RedisServer &r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    redisReply *reply = vcommand(r, fmt, ap);
    va_end(ap);
    long long v = -999999;
    if (reply && reply->type == REDIS_REPLY_INTEGER)
        v = reply->integer;
    if (reply && reply->type == REDIS_REPLY_STRING)
        v = atoll(reply->str);
    if (reply && reply->type == REDIS_REPLY_NIL)
        v = 0;
    if (reply)
        freeReplyObject(reply);
    return v;
}

void redis_string(const RedisServer &r, char *out, size_t cap, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    redisReply *reply = vcommand(r, fmt, ap);
    va_end(ap);
    out[0] = 0;
    if (reply && (reply->type == REDIS_REPLY_STRING || reply->type == REDIS_REPLY_STATUS ||
                  reply->type == REDIS_REPLY_ERROR))
        snprintf(out, cap, "%.*s", (int)reply->len, reply->str);
    if (reply)
        freeReplyObject(reply);
}

RedisServer &shared_server()
{
    static RedisServer server;
    if (server.pid() <= 0 && !server.start()) {
        fprintf(stderr, "cannot start redis-server (is it installed?)\n");
        exit(2);
    }
    return server;
}
