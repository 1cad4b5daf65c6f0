// SPDX-License-Identifier: BSD-3-Clause
// Small helpers shared by the benchmark binaries: clocks, percentiles, a flat
// JSON writer, command-line options and a synchronous hiredis connection.
#pragma once

#include <event2/event.h>
#include <hiredis/hiredis.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <string>
#include <vector>

#include "edgelock/edgelock.h"

namespace bench
{

uint64_t now_ns();         // CLOCK_MONOTONIC
uint64_t thread_cpu_ns();  // CLOCK_THREAD_CPUTIME_ID
uint64_t process_cpu_ns(); // getrusage(RUSAGE_SELF), user + system
void sleep_us(uint64_t us);
long rss_kib(); // VmRSS of this process
uint32_t rand_u32();

// Latency samples in nanoseconds.
struct Samples {
    std::vector<double> v;
    void add(double ns) { v.push_back(ns); }
    double pct(double p) const; // nearest-rank percentile, 0..100
    double mean() const;
    size_t size() const { return v.size(); }
};

// One JSON object, written as key/value pairs in order.
class Json
{
public:
    Json &num(const char *key, double v);
    Json &integer(const char *key, long long v);
    Json &str(const char *key, const char *v);
    Json &boolean(const char *key, bool v);
    Json &raw(const char *key, const std::string &json);
    Json &latency(const char *prefix, const Samples &s); // prefix_p50_us, _p99_us, _mean_us
    std::string text() const { return "{" + body_ + "}"; }
    void print() const;

private:
    void key(const char *k);
    std::string body_;
};
std::string json_array(const std::vector<long long> &v);

// --name value options after the subcommand.
class Options
{
public:
    Options(int argc, char **argv, int first);
    long long get(const char *name, long long def) const;
    std::string get_str(const char *name, const char *def) const;

private:
    std::vector<std::string> args_;
};

// A synchronous hiredis connection to the benchmark server; exits on failure.
redisContext *connect_sync(int port);
// Runs a command; exits with a message on a NULL or error reply.
redisReply *must(redisContext *c, const char *fmt, ...);
long long must_int(redisContext *c, const char *fmt, ...);
void load_all_scripts(int port);

[[noreturn]] void die(const char *fmt, ...);

// Exits with a message unless st is EDGELOCK_OK.
void check_st(edgelock_status st, const char *what);
// The client's table usage; exits if the call fails.
edgelock_stats stats_of(edgelock_client *c);

// An event base driven by the benchmark thread, for event-loop mode clients.
struct Loop {
    struct event_base *base;
    struct event *tick;
    Loop()
    {
        // BENCH_EPOLL_CHANGELIST=1 (profiling experiments only): libevent's epoll
        // changelist, which folds an add and a delete of the same event within
        // one loop iteration into no epoll_ctl at all.
        struct event_config *cfg = event_config_new();
        if (getenv("BENCH_EPOLL_CHANGELIST"))
            event_config_set_flag(cfg, EVENT_BASE_FLAG_EPOLL_USE_CHANGELIST);
        base = event_base_new_with_config(cfg);
        event_config_free(cfg);
        if (!base)
            die("event_base_new");
        // A 1 ms persistent tick: EVLOOP_ONCE never blocks for long.
        tick = event_new(
            base, -1, EV_PERSIST, [](evutil_socket_t, short, void *) {}, nullptr);
        struct timeval tv = {0, 1000};
        event_add(tick, &tv);
    }
    // No more tick: EVLOOP_ONCE then waits for the next real event. A 1 ms
    // tick on one loop slowed its handoffs by about 30 µs at p50 (the plain
    // async client given the same tick: 114 -> 149 µs), so B measures both
    // clients without one once connected.
    void stop_tick() { event_del(tick); }
    void start_tick()
    {
        struct timeval tv = {0, 1000};
        event_add(tick, &tv);
    }
    ~Loop()
    {
        event_free(tick);
        event_base_free(base);
    }
    template <typename Pred> bool run_until(Pred pred, uint64_t timeout_ms)
    {
        uint64_t end = now_ns() + timeout_ms * 1000000ull;
        while (!pred()) {
            if (now_ns() > end)
                return false;
            event_base_loop(base, EVLOOP_ONCE);
        }
        return true;
    }
    void run_for(uint64_t ms)
    {
        run_until([] { return false; }, ms);
    }
};

// Redisson's unlock latch key of request i for lock `name`, and its channel.
std::string latch_of(const std::string &name, uint64_t i);
std::string channel_of(const std::string &name);

} // namespace bench
