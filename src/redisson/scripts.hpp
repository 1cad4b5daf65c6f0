// SPDX-License-Identifier: BSD-3-Clause
// Lua scripts embedded at build time (src/scripts/*.lua, cmake/embed_scripts.cmake).
#pragma once

#include <stddef.h>

namespace edgelock
{

struct Script {
    const char *name;
    const char *text;
    size_t len;
    const char *sha1; // 40 hex digits, what EVALSHA names
};

// Indexes into kScripts; CMakeLists.txt lists the files in this order.
enum ScriptId {
    kScriptAcquire,
    kScriptFairAbandon,
    kScriptFairAcquire,
    kScriptFairForceRelease,
    kScriptFairRelease,
    kScriptFencedAcquire,
    kScriptForceRelease,
    kScriptRelease,
    kScriptRenew,
    kScriptReadAcquire,
    kScriptReadRelease,
    kScriptReadRenew,
    kScriptWriteAcquire,
    kScriptWriteRelease,
    kScriptLockInfo, // not preloaded: rare, sent with EVAL
    // Semaphores and the latch: not preloaded either (a client of locks only
    // should not pay for them); EVALSHA, loaded on the first NOSCRIPT.
    kScriptSemaphoreAcquire,
    kScriptSemaphoreRelease,
    kScriptSemaphoreTrySet,
    kScriptSemaphoreAdd,
    kScriptSemaphoreInfo,
    kScriptPermitAcquire,
    kScriptPermitRelease,
    kScriptPermitReleaseOne,
    kScriptPermitRenew,
    kScriptPermitAdd,
    kScriptLatchTrySet,
    kScriptLatchCountDown,
    // A read-write lock's force unlock and is-locked: rare calls, not
    // preloaded either (EVALSHA, loaded on the first NOSCRIPT).
    kScriptRwForceRelease,
    kScriptRwIsLocked,
    kScriptCount
};

extern const Script kScripts[];
// Scripts loaded on every connection (SCRIPT LOAD) and sent with EVALSHA.
constexpr int kScriptPreloadCount = kScriptLockInfo;

} // namespace edgelock
