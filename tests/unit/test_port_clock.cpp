// SPDX-License-Identifier: BSD-3-Clause
// The port's clock (port/port.h edgelock_port_now_ms) is the kernel's
// CLOCK_BOOTTIME where there is one: it goes on while the system is
// suspended, as the leases on the Redis server do, so a gateway that slept
// past a lease finds the hold gone (lock_valid, the watchdog's loss check).
// CLOCK_MONOTONIC stops meanwhile, and a hold counted by it would seem to
// have time left that Redis no longer gives it.
//
// A suspend cannot be made here, but a time namespace (Linux 5.6) can give
// CLOCK_BOOTTIME an offset from CLOCK_MONOTONIC, as a suspend of that length
// would: a process in one reads the port's clock that far ahead of the
// monotonic one. Where no time namespace can be made (an older kernel, a
// sandbox without the rights, qemu-user), that case says so and checks only
// that the clock read is the boot-time one.
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.hpp"
#include "port.h"

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif

namespace
{

constexpr uint64_t kSleptMs = 100000; // the "suspend": 100 s

uint64_t clock_ms(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

bool write_file(const char *path, const char *text)
{
    int fd = open(path, O_WRONLY);
    if (fd < 0)
        return false;
    bool ok = write(fd, text, strlen(text)) == (ssize_t)strlen(text);
    close(fd);
    return ok;
}

// In a child: a time namespace whose boot time is kSleptMs ahead, and in it a
// grandchild that compares the clocks. Exit 0: the port's clock is ahead by
// the offset; 1: it is not; 2: no time namespace here.
int run_in_a_time_namespace()
{
    pid_t child = fork();
    if (child == 0) {
        uid_t uid = getuid();
        gid_t gid = getgid();
        int flags = CLONE_NEWTIME | (uid == 0 ? 0 : CLONE_NEWUSER);
        if (unshare(flags) != 0)
            _exit(2);
        char map[64];
        if (uid != 0) {
            snprintf(map, sizeof(map), "0 %u 1", (unsigned)uid);
            write_file("/proc/self/setgroups", "deny");
            if (!write_file("/proc/self/uid_map", map))
                _exit(2);
            snprintf(map, sizeof(map), "0 %u 1", (unsigned)gid);
            if (!write_file("/proc/self/gid_map", map))
                _exit(2);
        }
        snprintf(map, sizeof(map), "boottime %llu 0", (unsigned long long)(kSleptMs / 1000));
        if (!write_file("/proc/self/timens_offsets", map))
            _exit(2);
        pid_t inner = fork(); // only children enter the namespace
        if (inner == 0) {
            uint64_t monotonic = clock_ms(CLOCK_MONOTONIC);
            uint64_t port = edgelock_port_now_ms();
            _exit(port >= monotonic + kSleptMs ? 0 : 1);
        }
        int st = 0;
        if (inner < 0 || waitpid(inner, &st, 0) != inner || !WIFEXITED(st))
            _exit(2);
        _exit(WEXITSTATUS(st));
    }
    int st = 0;
    if (child < 0 || waitpid(child, &st, 0) != child || !WIFEXITED(st))
        return 2;
    return WEXITSTATUS(st);
}

} // namespace

TEST_CASE(the_ports_clock_counts_suspended_time)
{
    for (int i = 0; i < 100; i++) {
        uint64_t before = clock_ms(CLOCK_BOOTTIME);
        uint64_t now = edgelock_port_now_ms();
        uint64_t after = clock_ms(CLOCK_BOOTTIME);
        CHECK(before <= now && now <= after);
    }
    int verdict = run_in_a_time_namespace();
    if (verdict == 2)
        printf("  no time namespace here: the offset case was not run\n");
    CHECK(verdict != 1);
}
