// SPDX-License-Identifier: BSD-3-Clause
#include "check.hpp"

#include <stdlib.h>
#include <time.h>

namespace check
{

Test *&registry()
{
    static Test *head = nullptr;
    return head;
}

std::atomic<int> &failures_in_test()
{
    static std::atomic<int> n{0};
    return n;
}

void fail(const char *file, int line, const char *expr, const char *detail)
{
    failures_in_test()++;
    fprintf(stderr, "  FAILED %s:%d: %s%s%s\n", file, line, expr, detail ? " -- " : "", detail ? detail : "");
    fflush(stderr);
}

static double now_s()
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int run_all(int argc, char **argv)
{
    int passed = 0, failed = 0;
    const char *only = argc > 1 ? argv[1] : getenv("CHECK_ONLY");
    for (Test *t = registry(); t; t = t->next) {
        if (only && *only && !strstr(t->name, only))
            continue;
        failures_in_test() = 0;
        printf("[ RUN  ] %s\n", t->name);
        fflush(stdout);
        double t0 = now_s();
        t->fn();
        double dt = now_s() - t0;
        if (failures_in_test() == 0) {
            passed++;
            printf("[  OK  ] %s (%.0f ms)\n", t->name, dt * 1000);
        } else {
            failed++;
            printf("[ FAIL ] %s (%.0f ms)\n", t->name, dt * 1000);
        }
        fflush(stdout);
    }
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}

} // namespace check
