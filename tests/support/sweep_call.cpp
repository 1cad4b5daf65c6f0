// SPDX-License-Identifier: BSD-3-Clause
#include "sweep_call.hpp"

#include <hiredis/hiredis.h>
#include <stdio.h>

#include <string>

#include "alloc_pause.hpp"
#include "check.hpp"
#include "clients.hpp"
#include "redis_cluster.hpp"
#include "redis_sentinels.hpp"
#include "test_certs.hpp"
#include "tls_server.hpp"

const SweptCall kLockCalls[6] = {
    {"a wait, the loop thread handing over", EDGELOCK_REENTRANT, Call::LockWaits, true},
    {"a wait, the caller leading", EDGELOCK_REENTRANT, Call::LockWaits, false},
    {"a fair wait, the loop thread handing over", EDGELOCK_FAIR, Call::LockWaits, true},
    {"a fair wait, the caller leading", EDGELOCK_FAIR, Call::LockWaits, false},
    {"a lock granted, the loop thread handing over", EDGELOCK_REENTRANT, Call::LockFree, true},
    {"a fair lock granted, the caller leading", EDGELOCK_FAIR, Call::LockFree, false},
};

SweptCall on_shared_cluster(SweptCall how)
{
    if (!alloc_pause::available())
        return how; // nothing will be swept: no cluster to start
    static std::string url;
    RedisCluster &cl = shared_cluster();
    url = "redis-cluster://127.0.0.1:" + std::to_string(cl.node(0).port());
    how.url = url.c_str();
    how.keys = &cl.master_of((uint16_t)redis_integer(cl.node(0), "CLUSTER KEYSLOT anywhere"));
    return how;
}

static void trust_test_ca(edgelock_config *cfg)
{
    static std::string ca = test_cert("ca.crt");
    cfg->tls_ca = ca.c_str();
}

// Whether the servers a sweep needs are up: null when it will not run here
// (hiredis 0.14), else started by start() on first use, a failure when not.
template <typename T> static T *servers_for_sweeping(T *(*start)())
{
    if (!alloc_pause::available())
        return nullptr; // hiredis 0.14: nothing will be swept
    T *servers = start();
    CHECK(servers != nullptr);
    return servers;
}

SweptCall over_shared_tls(SweptCall how)
{
    TlsServer *server = servers_for_sweeping(shared_tls_server);
    if (!server)
        return how;
    static std::string url;
    url = server->url();
    how.url = url.c_str();
    how.keys = &server->r;
    how.config = trust_test_ca;
    return how;
}

SweptCall via_shared_sentinels(SweptCall how)
{
    SentinelSetup *setup = servers_for_sweeping(shared_sentinels);
    if (!setup)
        return how;
    how.url = setup->url.c_str();
    how.keys = &setup->master;
    return how;
}

static SweptCall while_connecting(SweptCall how)
{
    how.while_connecting = true;
    return how;
}

const SweptCall kWaitWhileConnecting =
    while_connecting({"a wait made as the client connects", EDGELOCK_REENTRANT, Call::LockWaits, false});
const SweptCall kJustConnecting =
    while_connecting({"the client connecting, no call", EDGELOCK_REENTRANT, Call::None, false});

const SweptCall kThreeCalls[3] = {kLockCalls[0], kLockCalls[3], kLockCalls[4]};

void reset_keys(RedisServer &r, Call call)
{
    freeReplyObject(
        r.command("DEL anywhere redisson_lock_queue:{anywhere} redisson_lock_timeout:{anywhere}"));
    if (call == Call::LockWaits) {
        freeReplyObject(r.command("HSET anywhere other:1 1"));
        freeReplyObject(r.command("PEXPIRE anywhere 120000"));
    }
}

CallOnThread::CallOnThread(RedisServer &r, const SweptCall &how) : how_(how)
{
    if (!how_.url)
        how_.url = r.url();
    reset_keys(r, how.call);
    if (!how.while_connecting)
        start();
}

edgelock_status CallOnThread::call()
{
    if (how_.call == Call::None)
        return EDGELOCK_OK; // the client connects, nothing else
    if (how_.while_connecting) {
        edgelock_status made = edgelock_lock_new_kind(c, how_.kind, "anywhere", 8, &lk);
        if (made != EDGELOCK_OK)
            return made; // the call ended before its handle was made
    }
    if (how_.call == Call::Unlock)
        return edgelock_unlock(c, lk, nullptr);
    return edgelock_try_lock(c, lk, how_.call == Call::LockWaits ? 60000 : 0, 30000);
}

// The client, its lock handle and the caller's thread, ready to call. While
// connecting the handle is made on the caller's thread, as part of the call:
// lock_new waits for the lead, which the client's loop thread holds while it
// connects, paused there perhaps until the test acts.
void CallOnThread::start()
{
    c = make_client(how_.url, how_.config);
    if (!c)
        return;
    if (!how_.while_connecting)
        CHECK_ST(edgelock_lock_new_kind(c, how_.kind, "anywhere", 8, &lk), EDGELOCK_OK);
    auto take_first = [this] {
        if (how_.call == Call::Unlock) // before the sweep arms its pause
            CHECK_ST(edgelock_try_lock(c, lk, 0, 30000), EDGELOCK_OK);
    };
    auto unlock_if_granted = [this](edgelock_status st) {
        bool granted = how_.call == Call::LockFree || how_.call == Call::LockWaits;
        if (st == EDGELOCK_OK && granted && how_.unlock_if_granted)
            CHECK_ST(edgelock_unlock(c, lk, nullptr), EDGELOCK_OK);
    };
    caller_.start(
        take_first, [this] { return call(); }, unlock_if_granted);
    // The loop thread takes the lead once the client has been idle for the
    // grace (20 ms with the default lease); a call right away leads itself.
    if (how_.loop_leads && !how_.while_connecting)
        sleep_ms(100);
}

CallOnThread::~CallOnThread()
{
    caller_.join();
    edgelock_client_destroy(c);
}

bool CallOnThread::go_paused_at(int step)
{
    alloc_pause::arm(step);
    caller_.go(); // while connecting: the caller calls once its thread starts
    if (how_.while_connecting) {
        start(); // the connection's steps are the call's first ones
        CHECK(c != nullptr);
        if (!c)
            return false;
    }
    return alloc_pause::reached(kQuietMs);
}

void GatedCall::start(std::function<void()> setup, std::function<edgelock_status()> call,
                      std::function<void(edgelock_status)> after)
{
    thread_ = std::thread([this, setup, call, after] {
        owner_ = edgelock_current_owner();
        if (setup)
            setup();
        ready_ = true;
        while (!go_.load())
            sleep_ms(1);
        edgelock_status st = call();
        status_ = st;
        done_ = true;
        if (after)
            after(st);
    });
    while (!ready_.load())
        sleep_ms(1);
}

edgelock_status GatedCall::join()
{
    if (thread_.joinable())
        thread_.join();
    return (edgelock_status)status_.load();
}

bool sweep_allocations(const char *name, const std::function<bool(int n)> &step)
{
    if (!alloc_pause::available()) {
        printf("  hiredis 0.14: no allocator hooks, nothing swept\n");
        return false;
    }
    alloc_pause::mark_test_thread();
    alloc_pause::install();
    int n = 1;
    while (n <= kMaxSteps && step(n))
        n++;
    alloc_pause::uninstall();
    printf("  %s: %d allocations swept\n", name, n - 1);
    CHECK(n > 1);          // the call allocated at all: the sweep saw it
    CHECK(n <= kMaxSteps); // and came to its end
    return true;
}

void sweep_steps(const SweptCall &given, bool (*step)(RedisServer &, const SweptCall &, int))
{
    SweptCall how = given;
    RedisServer &r = how.keys ? *how.keys : shared_server();
    if (!how.url)
        how.url = r.url();
    if (sweep_allocations(how.name, [&](int n) { return step(r, how, n); }))
        reset_keys(r, Call::LockFree);
}
