// SPDX-License-Identifier: BSD-3-Clause
#include "alloc_pause.hpp"

#include <hiredis/hiredis.h>
#include <stdlib.h>
#include <string.h>

#include <atomic>

#include "clients.hpp"
#include "redis_server.hpp"

namespace alloc_pause
{

namespace
{
std::atomic<int> g_countdown{0}; // allocations to let through, then pause one
std::atomic<bool> g_paused{false}, g_acting{false};
thread_local bool t_test_thread;
} // namespace

void mark_test_thread()
{
    t_test_thread = true;
}

void arm(int n)
{
    g_paused = false;
    g_acting = false;
    g_countdown = n;
}

bool reached(unsigned quiet_ms)
{
    if (wait_until(quiet_ms, [] { return g_paused.load(); }))
        return true;
    return g_countdown.exchange(0) <= 0; // taken just now
}

void acting()
{
    g_acting = true;
}

#if HIREDIS_MAJOR >= 1

namespace
{
void maybe_pause()
{
    if (t_test_thread || g_countdown.load() <= 0 || g_countdown.fetch_sub(1) != 1)
        return;
    g_paused = true;
    while (!g_acting.load())
        sleep_ms(1);
    sleep_ms(20); // the act's first steps (destroy's stop, a cancel's post) land first
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
} // namespace

bool available()
{
    return true;
}

void install()
{
    static hiredisAllocFuncs pausing = {pause_malloc, pause_calloc, pause_realloc, pause_strdup, free};
    hiredisSetAllocators(&pausing);
}

void uninstall()
{
    hiredisResetAllocators();
}

#else

bool available()
{
    return false;
}
void install() {}
void uninstall() {}

#endif

} // namespace alloc_pause
