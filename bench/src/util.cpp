// SPDX-License-Identifier: BSD-3-Clause
#include "util.hpp"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <time.h>

#include <algorithm>
#include <cmath>

#include "redisson/names.hpp"
#include "redisson/scripts.hpp"

namespace bench
{

uint64_t now_ns()
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t thread_cpu_ns()
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t process_cpu_ns()
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ((uint64_t)ru.ru_utime.tv_sec + (uint64_t)ru.ru_stime.tv_sec) * 1000000000ull +
           ((uint64_t)ru.ru_utime.tv_usec + (uint64_t)ru.ru_stime.tv_usec) * 1000ull;
}

void sleep_us(uint64_t us)
{
    struct timespec ts = {(time_t)(us / 1000000), (long)(us % 1000000) * 1000L};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

long rss_kib()
{
    FILE *f = fopen("/proc/self/status", "r");
    if (!f)
        return -1;
    char line[256];
    long kib = -1;
    while (fgets(line, sizeof(line), f))
        if (strncmp(line, "VmRSS:", 6) == 0)
            kib = strtol(line + 6, nullptr, 10);
    fclose(f);
    return kib;
}

uint32_t rand_u32()
{
    uint32_t v = 0;
    if (getrandom(&v, sizeof(v), 0) != (ssize_t)sizeof(v))
        v = (uint32_t)now_ns();
    return v;
}

double Samples::pct(double p) const
{
    if (v.empty())
        return 0;
    std::vector<double> s(v);
    std::sort(s.begin(), s.end());
    size_t rank = (size_t)(p / 100.0 * (double)s.size() + 0.999999);
    if (rank < 1)
        rank = 1;
    if (rank > s.size())
        rank = s.size();
    return s[rank - 1];
}

double Samples::mean() const
{
    if (v.empty())
        return 0;
    double sum = 0;
    for (double x : v)
        sum += x;
    return sum / (double)v.size();
}

void Json::key(const char *k)
{
    if (!body_.empty())
        body_ += ",";
    body_ += "\"";
    body_ += k;
    body_ += "\":";
}

Json &Json::num(const char *k, double v)
{
    key(k);
    if (!std::isfinite(v)) {
        body_ += "null";
        return *this;
    }
    char buf[64];
    snprintf(buf, sizeof(buf), "%.6g", v);
    body_ += buf;
    return *this;
}

Json &Json::integer(const char *k, long long v)
{
    key(k);
    body_ += std::to_string(v);
    return *this;
}

Json &Json::str(const char *k, const char *v)
{
    key(k);
    body_ += "\"";
    for (const char *p = v; *p; p++) {
        if (*p == '"' || *p == '\\')
            body_ += '\\';
        body_ += *p;
    }
    body_ += "\"";
    return *this;
}

Json &Json::boolean(const char *k, bool v)
{
    key(k);
    body_ += v ? "true" : "false";
    return *this;
}

Json &Json::raw(const char *k, const std::string &json)
{
    key(k);
    body_ += json;
    return *this;
}

Json &Json::latency(const char *prefix, const Samples &s)
{
    std::string p(prefix);
    num((p + "_p50_us").c_str(), s.pct(50) / 1000.0);
    num((p + "_p99_us").c_str(), s.pct(99) / 1000.0);
    num((p + "_mean_us").c_str(), s.mean() / 1000.0);
    integer((p + "_n").c_str(), (long long)s.size());
    return *this;
}

void Json::print() const
{
    printf("%s\n", text().c_str());
    fflush(stdout);
}

std::string json_array(const std::vector<long long> &v)
{
    std::string s = "[";
    for (size_t i = 0; i < v.size(); i++) {
        if (i)
            s += ",";
        s += std::to_string(v[i]);
    }
    return s + "]";
}

Options::Options(int argc, char **argv, int first)
{
    for (int i = first; i < argc; i++)
        args_.push_back(argv[i]);
}

long long Options::get(const char *name, long long def) const
{
    std::string flag = std::string("--") + name;
    for (size_t i = 0; i + 1 < args_.size(); i++)
        if (args_[i] == flag)
            return atoll(args_[i + 1].c_str());
    return def;
}

std::string Options::get_str(const char *name, const char *def) const
{
    std::string flag = std::string("--") + name;
    for (size_t i = 0; i + 1 < args_.size(); i++)
        if (args_[i] == flag)
            return args_[i + 1];
    return def;
}

void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "edgelock_bench: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    exit(1);
}

redisContext *connect_sync(int port)
{
    struct timeval tv = {5, 0};
    redisContext *c = redisConnectWithTimeout("127.0.0.1", port, tv);
    if (!c || c->err)
        die("cannot connect to 127.0.0.1:%d", port);
    return c;
}

static redisReply *vmust(redisContext *c, const char *fmt, va_list ap)
{
    redisReply *r = (redisReply *)redisvCommand(c, fmt, ap);
    if (!r)
        die("redis command failed: %s", c->errstr);
    if (r->type == REDIS_REPLY_ERROR)
        die("redis error: %s", r->str);
    return r;
}

redisReply *must(redisContext *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    redisReply *r = vmust(c, fmt, ap);
    va_end(ap);
    return r;
}

long long must_int(redisContext *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    redisReply *r = vmust(c, fmt, ap);
    va_end(ap);
    long long v = 0;
    if (r->type == REDIS_REPLY_INTEGER)
        v = r->integer;
    else if (r->type == REDIS_REPLY_STRING)
        v = atoll(r->str);
    freeReplyObject(r);
    return v;
}

void load_all_scripts(int port)
{
    redisContext *c = connect_sync(port);
    for (int i = 0; i < edgelock::kScriptCount; i++)
        freeReplyObject(must(c, "SCRIPT LOAD %b", edgelock::kScripts[i].text, edgelock::kScripts[i].len));
    redisFree(c);
}

void check_st(edgelock_status st, const char *what)
{
    if (st != EDGELOCK_OK)
        die("%s: %s", what, edgelock_status_str(st));
}

edgelock_stats stats_of(edgelock_client *c)
{
    edgelock_stats s;
    memset(&s, 0, sizeof(s));
    check_st(edgelock_client_stats(c, &s), "client_stats");
    return s;
}

// Redisson's names for lock `name`: the unlock latch of request i, the channel.
std::string latch_of(const std::string &name, uint64_t i)
{
    char id[40];
    snprintf(id, sizeof(id), ":%016llx%016llx", (unsigned long long)(i * 0x9e3779b97f4a7c15ull),
             (unsigned long long)i);
    return std::string(edgelock::kUnlockLatchPrefix) + ":{" + name + "}" + id;
}

std::string channel_of(const std::string &name)
{
    return std::string(edgelock::kLockChannelPrefix) + ":{" + name + "}";
}

} // namespace bench
