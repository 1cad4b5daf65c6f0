// SPDX-License-Identifier: BSD-3-Clause
// The port's alarm (port/port.h edgelock_port_alarm_*): the blocking face's
// loop thread sleeps on it while callers lead, and the callers move it to a
// grace after their calls without waking that thread. What the face needs
// of it: it goes off no sooner than set, a set replaces the one before (a
// time moved away does not go off at its old time), and a set from another
// thread wakes the sleeper. Asserted by order and lower bounds only: a slow
// machine makes these waits longer, never wrong.
#include <atomic>
#include <chrono>
#include <thread>

#include "check.hpp"
#include "port.h"
#include "redis_server.hpp" // mono_ms

namespace
{

// An alarm for one test, made and destroyed with it. A wait that would
// never end is freed after a minute (rescued), instead of holding the suite
// until its timeout.
struct TestAlarm {
    edgelock_port_alarm a;
    bool made;
    std::atomic<bool> done{false}, rescued{false};
    std::thread rescuer;
    TestAlarm() : made(edgelock_port_alarm_init(&a) == 0)
    {
        if (made)
            rescuer = std::thread([this] {
                for (int i = 0; i < 600 && !done.load(); i++)
                    std::this_thread::sleep_for(std::chrono::milliseconds(100));
                if (!done.load()) {
                    rescued = true;
                    edgelock_port_alarm_set(&a, 0);
                }
            });
    }
    ~TestAlarm()
    {
        done = true;
        if (made) {
            rescuer.join();
            edgelock_port_alarm_destroy(&a);
        }
    }
};

// Another thread sets the alarm to go off at once after 300 ms, having
// raised *flag first: a wait that returns with *flag down ended before it.
std::thread set_at_once_later(edgelock_port_alarm *a, std::atomic<bool> *flag)
{
    return std::thread([a, flag] {
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        *flag = true;
        edgelock_port_alarm_set(a, 0);
    });
}

} // namespace

TEST_CASE(set_to_zero_goes_off_at_once)
{
    TestAlarm t;
    REQUIRE(t.made);
    edgelock_port_alarm_set(&t.a, 0);
    edgelock_port_alarm_wait(&t.a);
    CHECK(!t.rescued.load());
}

TEST_CASE(goes_off_no_sooner_than_set)
{
    TestAlarm t;
    REQUIRE(t.made);
    uint64_t t0 = mono_ms();
    edgelock_port_alarm_set(&t.a, 50);
    edgelock_port_alarm_wait(&t.a);
    CHECK(mono_ms() - t0 >= 50);
    CHECK(!t.rescued.load());
}

// Set for 20 ms, then for a minute: the first time is gone, even when the
// setting thread was slow enough for it to pass in between. Another thread
// wakes the sleeper.
TEST_CASE(a_set_replaces_the_one_before_and_another_thread_wakes_the_sleeper)
{
    TestAlarm t;
    REQUIRE(t.made);
    edgelock_port_alarm_set(&t.a, 20);
    edgelock_port_alarm_set(&t.a, 60000);
    std::atomic<bool> woken{false};
    std::thread waker = set_at_once_later(&t.a, &woken);
    edgelock_port_alarm_wait(&t.a);
    CHECK(woken.load()); // not the 20 ms time set first
    CHECK(!t.rescued.load());
    waker.join();
}

// Gone off and consumed: the next wait sleeps until the next set.
TEST_CASE(a_wait_consumes_the_alarm)
{
    TestAlarm t;
    REQUIRE(t.made);
    edgelock_port_alarm_set(&t.a, 0);
    edgelock_port_alarm_wait(&t.a);
    std::atomic<bool> set_again{false};
    std::thread setter = set_at_once_later(&t.a, &set_again);
    edgelock_port_alarm_wait(&t.a);
    CHECK(set_again.load());
    CHECK(!t.rescued.load());
    setter.join();
}
