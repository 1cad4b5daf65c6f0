// SPDX-License-Identifier: BSD-3-Clause
// Redisson's key and channel names, written into caller buffers.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "base/writer.hpp"

namespace edgelock
{

bool contains_brace(const void *name, size_t len);

// prefix_name(p, n): "p:{n}", or "p:n" when n already contains '{'.
void write_prefix_name(Writer &w, const char *prefix, const void *name, size_t len);

// suffix_name(n, s): "{n}:s", or "n:s" when n already contains '{'.
void write_suffix_name(Writer &w, const void *name, size_t len, const void *suffix, size_t suffix_len);

// A fresh client id, as Redisson's: a random (version 4) UUID, 36 characters
// and the terminating NUL.
void write_client_id(char out[37]);

// Owner field "<client id>:<owner id>".
void write_owner(Writer &w, const char *client_id, uint64_t owner);

// Longest owner field: 63-byte client id, ':', 20 digits.
constexpr size_t kMaxOwnerLen = 63 + 1 + 20;

// Longest channel name for a lock name of `len` bytes: a fair waiter's own
// channel, "redisson_lock__channel:{name}:<owner field>".
size_t channel_len(size_t name_len);

extern const char kLockChannelPrefix[];
extern const char kUnlockLatchPrefix[];
extern const char kLockQueuePrefix[];
extern const char kLockTimeoutPrefix[];
extern const char kLockTokenPrefix[];
extern const char kRwChannelPrefix[];
extern const char kUnlockMessage[]; // "0": an unlock; wakes one waiter
extern const char kWriteSuffix[];   // ":write", appended to a writer's owner field
// Semaphores (both kinds): channel prefix_name("redisson_sc", name); the
// expirable kind's permits are in the zset suffix_name(name, "timeout").
extern const char kSemaphoreChannelPrefix[];
extern const char kPermitTimeoutSuffix[];
// Countdown latch: channel "redisson_countdownlatch__channel__{name}".
extern const char kLatchChannelPrefix[];
extern const char kLatchOpenMessage[];     // "0": the count reached zero; opens every waiter
extern const char kLatchNewCountMessage[]; // "1": a count was set; opens nobody
void write_latch_channel(Writer &w, const void *name, size_t len);

} // namespace edgelock
