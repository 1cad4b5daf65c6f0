// SPDX-License-Identifier: BSD-3-Clause
// Redisson's names (src/names.hpp): prefix_name with and without '{', the
// owner field, and the Writer's sticky overflow.
#include <stdint.h>
#include <string.h>

#include "check.hpp"
#include "redisson/names.hpp"

using namespace edgelock;

static bool written(const Writer &w, const void *want, size_t n)
{
    return !w.overflow && w.len == n && memcmp(w.buf, want, n) == 0;
}
static bool written(const Writer &w, const char *want)
{
    return written(w, want, strlen(want));
}

TEST_CASE(prefix_name_wraps_a_name_without_brace_in_braces)
{
    char buf[128];
    Writer w(buf, sizeof(buf));
    write_prefix_name(w, kLockChannelPrefix, "firmware-update", 15);
    CHECK(written(w, "redisson_lock__channel:{firmware-update}"));

    Writer w2(buf, sizeof(buf));
    write_prefix_name(w2, kUnlockLatchPrefix, "a", 1);
    CHECK(written(w2, "redisson_unlock_latch:{a}"));

    // A closing brace alone is no hash tag: braces are still added.
    Writer w3(buf, sizeof(buf));
    write_prefix_name(w3, "p", "x}y", 3);
    CHECK(written(w3, "p:{x}y}"));
}

TEST_CASE(prefix_name_keeps_a_name_with_brace_as_is)
{
    char buf[128];
    Writer w(buf, sizeof(buf));
    write_prefix_name(w, kLockChannelPrefix, "{order}:42", 10);
    CHECK(written(w, "redisson_lock__channel:{order}:42"));

    Writer w2(buf, sizeof(buf));
    write_prefix_name(w2, "p", "ab{", 3);
    CHECK(written(w2, "p:ab{"));

    CHECK(contains_brace("a{b", 3));
    CHECK(!contains_brace("a}b", 3));
    CHECK(!contains_brace("", 0));
    // Only the given length counts: a '{' after it is not part of the name.
    CHECK(!contains_brace("ab{", 2));
}

TEST_CASE(prefix_name_is_binary_safe)
{
    const char name[] = {'a', '\0', (char)0xff, '\n', ' ', 'z'};
    char buf[128];
    Writer w(buf, sizeof(buf));
    write_prefix_name(w, "p", name, sizeof(name));
    const char want[] = {'p', ':', '{', 'a', '\0', (char)0xff, '\n', ' ', 'z', '}'};
    CHECK(written(w, want, sizeof(want)));

    // A '{' after an embedded NUL still counts.
    const char braced[] = {'a', '\0', '{', 'b'};
    Writer w2(buf, sizeof(buf));
    write_prefix_name(w2, "p", braced, sizeof(braced));
    const char want2[] = {'p', ':', 'a', '\0', '{', 'b'};
    CHECK(written(w2, want2, sizeof(want2)));
}

TEST_CASE(channel_len_fits_the_longest_channel)
{
    // The longest channel is a fair waiter's own:
    // prefix + ":{" + name + "}" + ":" + "<63-byte client id>:<20-digit owner>".
    CHECK_EQ(channel_len(0), strlen(kLockChannelPrefix) + 3 + 1 + kMaxOwnerLen);
    CHECK_EQ(channel_len(100), strlen(kLockChannelPrefix) + 103 + 1 + kMaxOwnerLen);
    char name[64];
    memset(name, 'n', sizeof(name));
    char client_id[64];
    memset(client_id, 'c', 63);
    client_id[63] = 0;
    char buf[512];
    Writer w(buf, channel_len(sizeof(name)));
    write_prefix_name(w, kLockChannelPrefix, name, sizeof(name));
    w.bytes(":", 1);
    write_owner(w, client_id, UINT64_MAX);
    CHECK(!w.overflow);
    CHECK_EQ(w.len, channel_len(sizeof(name)));
}

TEST_CASE(owner_field_is_client_id_colon_decimal_owner)
{
    char buf[128];
    Writer w(buf, sizeof(buf));
    write_owner(w, "0b5c8f4e-8a1d-4c2b-9e3f-123456789abc", 4242);
    CHECK(written(w, "0b5c8f4e-8a1d-4c2b-9e3f-123456789abc:4242"));

    Writer w0(buf, sizeof(buf));
    write_owner(w0, "gw", 0);
    CHECK(written(w0, "gw:0"));

    Writer wmax(buf, sizeof(buf));
    write_owner(wmax, "gw", UINT64_MAX);
    CHECK(written(wmax, "gw:18446744073709551615"));

    // The longest owner field fits kMaxOwnerLen exactly.
    char id[64];
    memset(id, 'c', 63);
    id[63] = 0;
    Writer wl(buf, kMaxOwnerLen);
    write_owner(wl, id, UINT64_MAX);
    CHECK(!wl.overflow);
    CHECK_EQ(wl.len, kMaxOwnerLen);
}

TEST_CASE(writer_numbers)
{
    char buf[64];
    Writer w(buf, sizeof(buf));
    w.i64(INT64_MIN);
    w.str(" ");
    w.i64(-1);
    w.str(" ");
    w.i64(0);
    w.str(" ");
    w.i64(INT64_MAX);
    w.str(" ");
    w.u64(10);
    CHECK(written(w, "-9223372036854775808 -1 0 9223372036854775807 10"));
}

TEST_CASE(writer_overflow_is_sticky_and_writes_nothing_past_cap)
{
    char buf[8];
    memset(buf, 'x', sizeof(buf));
    Writer w(buf, 4);
    w.str("abc");
    CHECK(!w.overflow);
    w.str("de"); // does not fit: nothing of it is written
    CHECK(w.overflow);
    CHECK_EQ(w.len, 3);
    w.str("f"); // would fit, but overflow is sticky
    CHECK(w.overflow);
    CHECK_EQ(w.len, 3);
    CHECK(memcmp(buf, "abcxxxxx", 8) == 0);

    Writer z(buf, 0);
    z.bytes("", 0);
    CHECK(!z.overflow);
    z.u64(1);
    CHECK(z.overflow);

    // A prefixed name that does not fit sets overflow.
    Writer p(buf, sizeof(buf));
    write_prefix_name(p, kLockChannelPrefix, "n", 1);
    CHECK(p.overflow);
}

// Semaphores and the latch (docs/SEMAPHORES.md): the semaphore channel is a
// prefix_name; the latch's always wraps the raw name in braces, even a name
// with braces of its own (Redisson's edge case, kept).
TEST_CASE(semaphore_and_latch_channels)
{
    char buf[128];
    Writer w(buf, sizeof(buf));
    write_prefix_name(w, kSemaphoreChannelPrefix, "uplink", 6);
    CHECK(written(w, "redisson_sc:{uplink}"));

    Writer w2(buf, sizeof(buf));
    write_suffix_name(w2, "uplink", 6, kPermitTimeoutSuffix, strlen(kPermitTimeoutSuffix));
    CHECK(written(w2, "{uplink}:timeout"));

    Writer w3(buf, sizeof(buf));
    write_latch_channel(w3, "boot", 4);
    CHECK(written(w3, "redisson_countdownlatch__channel__{boot}"));

    Writer w4(buf, sizeof(buf));
    write_latch_channel(w4, "{a}b", 4);
    CHECK(written(w4, "redisson_countdownlatch__channel__{{a}b}"));

    // The longest latch channel fits what the pub/sub table allots a channel.
    CHECK(strlen(kLatchChannelPrefix) + 2 <= channel_len(0));
}
