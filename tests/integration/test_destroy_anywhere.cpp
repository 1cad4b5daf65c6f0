// SPDX-License-Identifier: BSD-3-Clause
// edgelock_client_destroy at every step of a blocking call on that client,
// against a real redis-server. hiredis's allocator (hiredis 1.x) pauses the
// Nth allocation the client's threads make after the call starts, whichever
// thread makes it (the caller leading its loop, or the client's loop thread),
// until destroy has begun; N runs from 1 until the call no longer reaches an
// Nth allocation. At each step destroy must return, and the call with OK (it
// was done) or SHUTDOWN. A stop landing in the loop thread's hand-over of the
// lead to a caller once hung both for ever (the aarch64 suite under qemu):
// the sweep that starts with the loop thread leading lands there at N = 1.
// Outcomes and order only; the sleeps only choose who leads.
#include <hiredis/hiredis.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <atomic>
#include <thread>

#include "check.hpp"
#include "clients.hpp"
#include "edgelock/edgelock.h"
#include "redis_server.hpp"

#if HIREDIS_MAJOR >= 1

namespace
{

const unsigned kHangMs = 20000; // only catches a hang
const unsigned kQuietMs = 1000; // no Nth allocation this long: the call went quiet
const unsigned kMaxSteps = 400; // a bound on the sweep, far above a call's allocations

struct Pause {
    std::atomic<int> countdown{0}; // allocations to let through, then pause one
    std::atomic<bool> paused{false}, destroying{false};
};
Pause g_pause;
thread_local bool t_test_thread; // the test's own threads never pause

void maybe_pause()
{
    if (t_test_thread || g_pause.countdown.load() <= 0 || g_pause.countdown.fetch_sub(1) != 1)
        return;
    g_pause.paused = true;
    while (!g_pause.destroying.load())
        sleep_ms(1);
    sleep_ms(50); // destroy asks the client to stop first thing: let it
}
void *pause_malloc(size_t n)
{
    maybe_pause();
    return malloc(n);
}
void *pause_calloc(size_t n, size_t size)
{
    maybe_pause();
    return calloc(n, size);
}
void *pause_realloc(void *p, size_t n)
{
    maybe_pause();
    return realloc(p, n);
}
char *pause_strdup(const char *s)
{
    maybe_pause();
    return strdup(s);
}

enum class Call { LockFree, LockWaits, Unlock };

// Each step starts from the same keys: free, or held by someone else
// (written as Redisson would), so that the call waits.
void reset_keys(RedisServer &r, Call call)
{
    freeReplyObject(
        r.command("DEL anywhere redisson_lock_queue:{anywhere} redisson_lock_timeout:{anywhere}"));
    if (call == Call::LockWaits) {
        freeReplyObject(r.command("HSET anywhere other:1 1"));
        freeReplyObject(r.command("PEXPIRE anywhere 120000"));
    }
}

// One step: a fresh client, the call on another thread, the pause at the
// step-th allocation, destroy. True while the call still reached that
// allocation (the sweep goes on).
bool destroy_at_step(RedisServer &r, edgelock_lock_kind kind, Call call, bool loop_leads, int step)
{
    reset_keys(r, call);
    edgelock_client *c = make_client(r.url());
    if (!c) {
        CHECK(c);
        return false;
    }
    edgelock_lock lk = {0};
    CHECK_ST(edgelock_lock_new_kind(c, kind, "anywhere", 8, &lk), EDGELOCK_OK);
    std::atomic<bool> ready{false}, go{false};
    std::atomic<int> st{1};
    std::thread caller([&] {
        t_test_thread = true;
        if (call == Call::Unlock)
            CHECK_ST(edgelock_try_lock(c, lk, 0, 30000), EDGELOCK_OK);
        t_test_thread = false;
        ready = true;
        while (!go.load())
            sleep_ms(1);
        if (call == Call::Unlock)
            st = edgelock_unlock(c, lk, nullptr);
        else
            st = edgelock_try_lock(c, lk, call == Call::LockWaits ? 60000 : 0, 30000);
    });
    while (!ready.load())
        sleep_ms(1);
    // The loop thread takes the lead once the client has been idle for the
    // grace (20 ms with the default lease); a call right away leads itself.
    if (loop_leads)
        sleep_ms(100);
    g_pause.paused = false;
    g_pause.destroying = false;
    g_pause.countdown = step;
    go = true;
    // Allocations after the call returned count too (what it left to the
    // loop: an UNSUBSCRIBE, the unlock latch's DEL).
    bool reached = wait_until(kQuietMs, [&] { return g_pause.paused.load(); });
    if (!reached && g_pause.countdown.exchange(0) <= 0)
        reached = true; // taken just now
    std::atomic<bool> destroyed{false};
    std::thread destroyer([&] {
        t_test_thread = true;
        g_pause.destroying = true;
        edgelock_client_destroy(c);
        destroyed = true;
    });
    if (!wait_until(kHangMs, [&] { return destroyed.load(); })) {
        fprintf(stderr, "edgelock_client_destroy hung at allocation %d of the call\n", step);
        _exit(1); // the threads cannot be joined
    }
    destroyer.join();
    caller.join();
    if (st != EDGELOCK_OK && st != EDGELOCK_ERR_SHUTDOWN) {
        fprintf(stderr, "  allocation %d: the call returned %s\n", step,
                edgelock_status_str((edgelock_status)st.load()));
        CHECK(false);
    }
    return reached;
}

void sweep(edgelock_lock_kind kind, Call call, bool loop_leads)
{
    RedisServer &r = shared_server();
    t_test_thread = true;
    hiredisAllocFuncs pausing = {pause_malloc, pause_calloc, pause_realloc, pause_strdup, free};
    hiredisSetAllocators(&pausing);
    int step = 1;
    while (step <= (int)kMaxSteps && destroy_at_step(r, kind, call, loop_leads, step))
        step++;
    hiredisResetAllocators();
    printf("  %d allocations swept\n", step - 1);
    CHECK(step > 1);               // the call allocated at all: the sweep saw it
    CHECK(step <= (int)kMaxSteps); // and came to its end
    freeReplyObject(
        r.command("DEL anywhere redisson_lock_queue:{anywhere} redisson_lock_timeout:{anywhere}"));
}

} // namespace

TEST_CASE(destroy_anywhere_in_a_wait_the_loop_thread_hands_over)
{
    sweep(EDGELOCK_REENTRANT, Call::LockWaits, true);
}

TEST_CASE(destroy_anywhere_in_a_wait_the_caller_leads)
{
    sweep(EDGELOCK_REENTRANT, Call::LockWaits, false);
}

TEST_CASE(destroy_anywhere_in_a_fair_wait)
{
    sweep(EDGELOCK_FAIR, Call::LockWaits, true);
    sweep(EDGELOCK_FAIR, Call::LockWaits, false);
}

TEST_CASE(destroy_anywhere_in_a_lock_that_is_granted)
{
    sweep(EDGELOCK_REENTRANT, Call::LockFree, true);
    sweep(EDGELOCK_REENTRANT, Call::LockFree, false);
}

TEST_CASE(destroy_anywhere_in_an_unlock)
{
    sweep(EDGELOCK_REENTRANT, Call::Unlock, true);
    sweep(EDGELOCK_FAIR, Call::Unlock, false);
}

#endif
