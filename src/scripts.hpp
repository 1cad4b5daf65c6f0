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

// Indexes into kScripts; the embed step lists the files in this order.
enum ScriptId {
    kScriptAcquire = 0,
    kScriptForceRelease = 1,
    kScriptRelease = 2,
    kScriptRenew = 3,
    kScriptCount = 4
};

extern const Script kScripts[];

} // namespace edgelock
