// SPDX-License-Identifier: BSD-3-Clause
// A small test harness: no exceptions or RTTI, so the tests build with the
// library's own flags. Each test binary ends with "N passed, N failed".
#pragma once

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <atomic>

namespace check
{

struct Test {
    const char *name;
    void (*fn)();
    Test *next;
};

Test *&registry();
std::atomic<int> &failures_in_test();
void fail(const char *file, int line, const char *expr, const char *detail);
int run_all(int argc, char **argv);

struct Registrar {
    Registrar(Test *t)
    {
        Test **p = &registry();
        while (*p)
            p = &(*p)->next; // keep file order
        *p = t;
    }
};

} // namespace check

#define TEST_CASE(name)                                                                                      \
    static void name();                                                                                      \
    static check::Test name##_test = {#name, name, nullptr};                                                 \
    static check::Registrar name##_registrar(&name##_test);                                                  \
    static void name()

#define CHECK(cond)                                                                                          \
    do {                                                                                                     \
        if (!(cond))                                                                                         \
            check::fail(__FILE__, __LINE__, #cond, nullptr);                                                 \
    } while (0)

#define CHECK_EQ(a, b)                                                                                       \
    do {                                                                                                     \
        long long va_ = (long long)(a), vb_ = (long long)(b);                                                \
        if (va_ != vb_) {                                                                                    \
            char d_[96];                                                                                     \
            snprintf(d_, sizeof(d_), "%lld != %lld", va_, vb_);                                              \
            check::fail(__FILE__, __LINE__, #a " == " #b, d_);                                               \
        }                                                                                                    \
    } while (0)

// Status checks print the status text on failure.
#define CHECK_ST(expr, want)                                                                                 \
    do {                                                                                                     \
        edgelock_status got_ = (expr);                                                                       \
        if (got_ != (want)) {                                                                                \
            char d_[128];                                                                                    \
            snprintf(d_, sizeof(d_), "got %d (%s), want %s", (int)got_, edgelock_status_str(got_), #want);   \
            check::fail(__FILE__, __LINE__, #expr, d_);                                                      \
        }                                                                                                    \
    } while (0)

#define REQUIRE(cond)                                                                                        \
    do {                                                                                                     \
        if (!(cond)) {                                                                                       \
            check::fail(__FILE__, __LINE__, #cond, "required; test stops");                                  \
            return;                                                                                          \
        }                                                                                                    \
    } while (0)
