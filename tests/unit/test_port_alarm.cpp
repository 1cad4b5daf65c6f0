// SPDX-License-Identifier: BSD-3-Clause
// The port's alarm (port/port.h edgelock_port_alarm_*): the blocking face's
// loop thread sleeps on it while callers lead, and each caller's leave moves
// it to the end of the grace without waking that thread. What the face needs
// of it: it goes off no sooner than set, a set replaces the one before (a
// time moved away does not go off at its old time), and a set from another
// thread wakes the sleeper. Asserted by order and lower bounds only: a slow
// machine makes these waits longer, never wrong.
#include <time.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "check.hpp"
#include "port.h"

namespace
{

uint64_t monotonic_ms()
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

// A wait that would never end frees itself after a minute and says so,
// instead of holding the suite until its timeout.
struct Rescue {
    edgelock_port_alarm *alarm;
    std::atomic<bool> done{false}, fired{false};
    std::thread thread;
    explicit Rescue(edgelock_port_alarm *a) : alarm(a)
    {
        thread = std::thread([this] {
            for (int i = 0; i < 600 && !done.load(); i++)
                std::this_thread::sleep_for(std::chrono::milliseconds(100));
            if (!done.load()) {
                fired = true;
                edgelock_port_alarm_set(alarm, 0);
            }
        });
    }
    ~Rescue()
    {
        done = true;
        thread.join();
    }
};

} // namespace

TEST_CASE(set_to_zero_goes_off_at_once)
{
    edgelock_port_alarm a;
    REQUIRE(edgelock_port_alarm_init(&a) == 0);
    Rescue rescue(&a);
    edgelock_port_alarm_set(&a, 0);
    edgelock_port_alarm_wait(&a);
    CHECK(!rescue.fired.load());
    rescue.done = true;
    edgelock_port_alarm_destroy(&a);
}

TEST_CASE(goes_off_no_sooner_than_set)
{
    edgelock_port_alarm a;
    REQUIRE(edgelock_port_alarm_init(&a) == 0);
    Rescue rescue(&a);
    uint64_t t0 = monotonic_ms();
    edgelock_port_alarm_set(&a, 50);
    edgelock_port_alarm_wait(&a);
    CHECK(monotonic_ms() - t0 >= 50);
    CHECK(!rescue.fired.load());
    rescue.done = true;
    edgelock_port_alarm_destroy(&a);
}

// Set for 20 ms, then for a minute: the first time is gone, even when the
// setting thread was slow enough for it to pass in between. Another thread
// wakes the sleeper after 300 ms with a set to zero.
TEST_CASE(a_set_replaces_the_one_before_and_another_thread_wakes_the_sleeper)
{
    edgelock_port_alarm a;
    REQUIRE(edgelock_port_alarm_init(&a) == 0);
    Rescue rescue(&a);
    edgelock_port_alarm_set(&a, 20);
    edgelock_port_alarm_set(&a, 60000);
    std::atomic<bool> woken{false};
    std::thread waker([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        woken = true;
        edgelock_port_alarm_set(&a, 0);
    });
    edgelock_port_alarm_wait(&a);
    CHECK(woken.load()); // not the 20 ms time set first
    CHECK(!rescue.fired.load());
    waker.join();
    rescue.done = true;
    edgelock_port_alarm_destroy(&a);
}

// Gone off and consumed: the next wait sleeps until the next set.
TEST_CASE(a_wait_consumes_the_alarm)
{
    edgelock_port_alarm a;
    REQUIRE(edgelock_port_alarm_init(&a) == 0);
    Rescue rescue(&a);
    edgelock_port_alarm_set(&a, 0);
    edgelock_port_alarm_wait(&a);
    std::atomic<bool> set_again{false};
    std::thread setter([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        set_again = true;
        edgelock_port_alarm_set(&a, 0);
    });
    edgelock_port_alarm_wait(&a);
    CHECK(set_again.load());
    CHECK(!rescue.fired.load());
    setter.join();
    rescue.done = true;
    edgelock_port_alarm_destroy(&a);
}
