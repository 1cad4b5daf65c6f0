// SPDX-License-Identifier: BSD-3-Clause
// What the edgelock tool reads from a person or shows from Redis,
// coverage-guided; the first byte picks the function, the rest is its input:
// - a number or duration from the command line (parse_ms, parse_duration,
//   parse_seconds): taken only when it is one, and then within its bounds;
// - bytes from Redis shown as text (put_text, text_shown): nothing a
//   terminal would act on reaches it, and the escapes read back to the bytes;
// - the same as JSON (put_json_string): a valid JSON string in UTF-8 that
//   reads back to the bytes when they were UTF-8.
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <string>

extern "C" {
#include "edgelock/common.h"
#include "edgelock/escape.h"
}

namespace
{

[[noreturn]] void fail(const char *what, const std::string &input, const std::string &output = "")
{
    fprintf(stderr, "fuzz_cli: %s: \"", what);
    for (unsigned char ch : input)
        fprintf(stderr, ch >= 32 && ch < 127 && ch != '"' ? "%c" : "\\x%02x", ch);
    fprintf(stderr, "\" -> \"");
    for (unsigned char ch : output)
        fprintf(stderr, ch >= 32 && ch < 127 && ch != '"' ? "%c" : "\\x%02x", ch);
    fprintf(stderr, "\"\n");
    abort();
}

// What f's function wrote into a memory stream.
template <typename Write> std::string captured(Write write)
{
    char *buf = nullptr;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        abort();
    write(f);
    fclose(f);
    std::string out(buf, len);
    free(buf);
    return out;
}

// One UTF-8 sequence at s (shortest form, no surrogates, <= U+10FFFF): its
// length and code point, 0 when the bytes are not one.
size_t utf8_at(const std::string &s, size_t i, uint32_t *cp)
{
    auto b = [&](size_t k) { return (unsigned char)s[i + k]; };
    size_t left = s.size() - i;
    unsigned char c = b(0);
    size_t n = c < 0x80 ? 1 : (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 : (c & 0xf8) == 0xf0 ? 4 : 0;
    if (n == 0 || n > left)
        return 0;
    uint32_t v = n == 1 ? c : n == 2 ? c & 0x1f : n == 3 ? c & 0x0f : c & 0x07;
    for (size_t k = 1; k < n; k++) {
        if ((b(k) & 0xc0) != 0x80)
            return 0;
        v = v << 6 | (b(k) & 0x3f);
    }
    static const uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
    if (v < kMin[n] || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
        return 0;
    *cp = v;
    return n;
}

bool valid_utf8(const std::string &s)
{
    uint32_t cp;
    for (size_t i = 0; i < s.size();) {
        size_t n = utf8_at(s, i, &cp);
        if (n == 0)
            return false;
        i += n;
    }
    return true;
}

void put_utf8(std::string *out, uint32_t cp)
{
    if (cp < 0x80) {
        *out += (char)cp;
    } else if (cp < 0x800) {
        *out += (char)(0xc0 | cp >> 6);
        *out += (char)(0x80 | (cp & 0x3f));
    } else if (cp < 0x10000) {
        *out += (char)(0xe0 | cp >> 12);
        *out += (char)(0x80 | (cp >> 6 & 0x3f));
        *out += (char)(0x80 | (cp & 0x3f));
    } else {
        *out += (char)(0xf0 | cp >> 18);
        *out += (char)(0x80 | (cp >> 12 & 0x3f));
        *out += (char)(0x80 | (cp >> 6 & 0x3f));
        *out += (char)(0x80 | (cp & 0x3f));
    }
}

int hex(char c)
{
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
}

// n hex digits at s[i]; -1 when they are not.
long hex_at(const std::string &s, size_t i, size_t n)
{
    if (i + n > s.size())
        return -1;
    long v = 0;
    for (size_t k = 0; k < n; k++) {
        int h = hex(s[i + k]);
        if (h < 0)
            return -1;
        v = v * 16 + h;
    }
    return v;
}

// The text form's escapes read back: \\, \xNN (a byte), \uXXXX (UTF-8).
bool unescape_text(const std::string &t, std::string *out)
{
    for (size_t i = 0; i < t.size(); i++) {
        if (t[i] != '\\') {
            *out += t[i];
            continue;
        }
        if (i + 1 >= t.size())
            return false;
        char e = t[++i];
        long v;
        if (e == '\\') {
            *out += '\\';
        } else if (e == 'x' && (v = hex_at(t, i + 1, 2)) >= 0) {
            *out += (char)v;
            i += 2;
        } else if (e == 'u' && (v = hex_at(t, i + 1, 4)) >= 0) {
            put_utf8(out, (uint32_t)v);
            i += 4;
        } else {
            return false;
        }
    }
    return true;
}

// What a terminal acts on: C0, DEL, C1, U+2028/2029 and the bidi controls.
bool acted_on(uint32_t cp)
{
    return cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) || cp == 0x2028 || cp == 0x2029 ||
           (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069);
}

void text(const std::string &in)
{
    std::string out = captured([&](FILE *f) { put_text(f, in.data(), in.size()); });
    if (!valid_utf8(out))
        fail("put_text wrote bytes that are not UTF-8", in, out);
    uint32_t cp;
    for (size_t i = 0; i < out.size(); i += utf8_at(out, i, &cp))
        if (utf8_at(out, i, &cp) && acted_on(cp))
            fail("put_text wrote what a terminal acts on", in, out);
    std::string back;
    if (!unescape_text(out, &back) || back != in)
        fail("put_text's escapes do not read back to the bytes", in, out);
    // text_shown: NUL-terminated within cap, the same text or a cut of it
    // at an escape's boundary followed by "..." (nothing when that does not
    // fit).
    std::string z(in.c_str()); // up to the first NUL
    std::string whole = captured([&](FILE *f) { put_text(f, z.data(), z.size()); });
    for (size_t cap : {(size_t)1, (size_t)4, (size_t)9, (size_t)24, whole.size() + 1}) {
        std::string buf(cap, '\x7f');
        text_shown(&buf[0], cap, z.c_str());
        if (!memchr(buf.data(), 0, cap))
            fail("text_shown not NUL-terminated within its buffer", in);
        std::string s(buf.c_str());
        if (s == whole || (s.empty() && cap < 4)) // no room for "..."
            continue;
        if (cap > whole.size() || s.size() < 3 || s.compare(s.size() - 3, 3, "...") != 0 ||
            whole.compare(0, s.size() - 3, s, 0, s.size() - 3) != 0)
            fail("text_shown is not the text or a cut of it", in, s);
        std::string part;
        if (!unescape_text(s.substr(0, s.size() - 3), &part) || z.compare(0, part.size(), part) != 0)
            fail("text_shown cut inside an escape", in, s);
    }
}

void json(const std::string &in)
{
    std::string out = captured([&](FILE *f) { put_json_string(f, in.data(), in.size()); });
    if (out.size() < 2 || out.front() != '"' || out.back() != '"' || !valid_utf8(out))
        fail("put_json_string did not write a quoted UTF-8 string", in, out);
    // RFC 8259 string: no raw control characters, '"' and '\' only escaped,
    // escapes from its list; decoded, the input when it was UTF-8.
    std::string back;
    for (size_t i = 1; i + 1 < out.size(); i++) {
        unsigned char c = (unsigned char)out[i];
        if (c < 0x20 || c == '"')
            fail("put_json_string wrote a raw control character or quote", in, out);
        if (c != '\\') {
            back += (char)c;
            continue;
        }
        char e = i + 2 < out.size() ? out[++i] : 0;
        long v;
        switch (e) {
        case '"': back += '"'; break;
        case '\\': back += '\\'; break;
        case '/': back += '/'; break;
        case 'b': back += '\b'; break;
        case 'f': back += '\f'; break;
        case 'n': back += '\n'; break;
        case 'r': back += '\r'; break;
        case 't': back += '\t'; break;
        case 'u':
            if ((v = hex_at(out, i + 1, 4)) < 0 || (v >= 0xd800 && v <= 0xdfff))
                fail("put_json_string wrote a bad \\u escape", in, out);
            put_utf8(&back, (uint32_t)v);
            i += 4;
            break;
        default: fail("put_json_string wrote an escape JSON does not have", in, out);
        }
    }
    if (valid_utf8(in) && back != in)
        fail("put_json_string's string does not read back to the UTF-8 it was given", in, out);
}

void numbers(const std::string &in, uint8_t pick)
{
    std::string s(in.c_str());
    int64_t lo = pick & 1 ? 1 : 0, hi = pick & 2 ? 86400000 : INT64_MAX / 2;
    int64_t v = -12345;
    if (parse_ms(s.c_str(), lo, hi, &v)) {
        bool digits = !s.empty() && s.find_first_not_of("0123456789") == std::string::npos;
        errno = 0;
        long long ref = strtoll(s.c_str(), nullptr, 10);
        if (!digits || errno != 0 || v < lo || v > hi || v != ref)
            fail("parse_ms took what is not a decimal within its bounds", in);
    }
    v = -12345;
    if (parse_duration(s.c_str(), lo, hi, &v) && (v < lo || v > hi))
        fail("parse_duration gave a value out of its bounds", in);
    v = -12345;
    if (parse_seconds(s.c_str(), hi, &v) && (v < 0 || v > hi))
        fail("parse_seconds gave a value out of its bounds", in);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    std::string input(reinterpret_cast<const char *>(data) + 1, size - 1);
    switch (data[0] % 3) {
    case 0: numbers(input, data[0] / 3); break;
    case 1: text(input); break;
    default: json(input); break;
    }
    return 0;
}
