// SPDX-License-Identifier: BSD-3-Clause
// The fuzz targets' check of the header's callback rules: a call that returned
// OK calls back exactly once, one that did not never; a failed callback
// carries value 0 and a status the header names.
#pragma once

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "edgelock/edgelock.h"
#include "replies.hpp" // trace

namespace fuzz
{

// What one async call has heard.
struct Call {
    int op = 0;
    int calls = 0;
    edgelock_status st = EDGELOCK_OK;
    int64_t value = 0;
    edgelock_lock_info info;
    edgelock_lock_entry entries[4];
    edgelock_semaphore_info sem_info;
    edgelock_scan scan;
    edgelock_scan_name names[4];
    edgelock_composite composite;
};

[[noreturn]] inline void fail(const char *what, const Call *call)
{
    fprintf(stderr, "fuzz: %s (op %d, calls %d, status %s, value %lld)\n", what, call ? call->op : -1,
            call ? call->calls : 0, call ? edgelock_status_str(call->st) : "-",
            call ? (long long)call->value : 0LL);
    abort();
}

inline void on_result(edgelock_client *, edgelock_lock, edgelock_status st, int64_t value, void *user)
{
    auto *call = static_cast<Call *>(user);
    trace("  callback: op %d %s value %lld\n", call->op, edgelock_status_str(st), (long long)value);
    call->calls++;
    call->st = st;
    call->value = value;
    if (call->calls > 1)
        fail("a second callback for one call", call);
    if (st != EDGELOCK_OK && value != 0)
        fail("a failed call's value is not 0", call);
    if (strcmp(edgelock_status_str(st), "unknown status") == 0)
        fail("a status that is not in the header", call);
}

// A call's return: OK owes one callback, anything else none.
inline void returned(Call *call, edgelock_status st)
{
    trace("  returned %s\n", edgelock_status_str(st));
    if (st != EDGELOCK_OK)
        call->op = -call->op - 1; // owes nothing
    if (st != EDGELOCK_OK && call->calls != 0)
        fail("a callback for a call that failed", call);
}

// After everything: each call that said OK has called back.
template <typename Calls> void all_called_back(const Calls &calls)
{
    for (const Call &c : calls)
        if (c.op >= 0 && c.calls != 1)
            fail("a call that said OK never called back", &c);
}

} // namespace fuzz
