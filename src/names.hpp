// Redisson's key and channel names, written into caller buffers.
#pragma once

#include <stddef.h>
#include <stdint.h>

namespace edgelock
{

// Cursor over a fixed buffer; overflow is sticky and reported once at the end.
struct Writer {
    char *buf;
    size_t cap;
    size_t len;
    bool overflow;

    Writer(char *b, size_t c) : buf(b), cap(c), len(0), overflow(false) {}
    void bytes(const void *p, size_t n);
    void str(const char *s);
    void u64(uint64_t v);
    void i64(int64_t v);
};

bool contains_brace(const void *name, size_t len);

// prefix_name(p, n): "p:{n}", or "p:n" when n already contains '{'.
void write_prefix_name(Writer &w, const char *prefix, const void *name, size_t len);

// Owner field "<client id>:<owner id>".
void write_owner(Writer &w, const char *client_id, uint64_t owner);

// Longest owner field: 63-byte client id, ':', 20 digits.
constexpr size_t kMaxOwnerLen = 63 + 1 + 20;

// Channel name length for a lock name of `len` bytes.
size_t channel_len(size_t name_len);

extern const char kLockChannelPrefix[];
extern const char kUnlockLatchPrefix[];

} // namespace edgelock
