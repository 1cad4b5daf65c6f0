// SPDX-License-Identifier: BSD-3-Clause
/* Escaping any bytes for a terminal or for JSON (escape.h). */
#include <inttypes.h>
#include <stdint.h>
#include <string.h>

#include "escape.h"

/* The longest escaped form of one unit: one UTF-8 sequence of up to 4 bytes,
 * each as "\xNN", and the NUL. */
#define UNIT_MAX 17

/* The length of the valid UTF-8 sequence at s (n > 0 bytes left), its code
 * point in *cp; 0 when the bytes there are not valid UTF-8 (overlong forms,
 * surrogates and code points above U+10FFFF included). */
static size_t utf8_sequence(const unsigned char *s, size_t n, uint32_t *cp)
{
    unsigned char b = s[0];
    size_t len;
    uint32_t c, min;
    if (b < 0x80) {
        *cp = b;
        return 1;
    }
    if (b >= 0xc2 && b <= 0xdf) {
        len = 2, c = b & 0x1fu, min = 0x80;
    } else if (b >= 0xe0 && b <= 0xef) {
        len = 3, c = b & 0x0fu, min = 0x800;
    } else if (b >= 0xf0 && b <= 0xf4) {
        len = 4, c = b & 0x07u, min = 0x10000;
    } else {
        return 0; /* a continuation byte, 0xc0/0xc1 (overlong) or above 0xf4 */
    }
    if (n < len)
        return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        c = c << 6 | (s[i] & 0x3fu);
    }
    if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
        return 0;
    *cp = c;
    return len;
}

static int is_control(uint32_t cp)
{
    return cp < 0x20 || (cp >= 0x7f && cp <= 0x9f);
}

static const char hex[] = "0123456789abcdef";

/* "\xNN" for each of the n bytes at s into out. */
static void bytes_escaped(char *out, const unsigned char *s, size_t n)
{
    for (size_t i = 0; i < n; i++, out += 4) {
        out[0] = '\\';
        out[1] = 'x';
        out[2] = hex[s[i] >> 4];
        out[3] = hex[s[i] & 15];
    }
    *out = 0;
}

/* "\uXXXX" for cp (<= 0xffff) into out. */
static void u_escaped(char *out, uint32_t cp)
{
    out[0] = '\\';
    out[1] = 'u';
    for (int i = 0; i < 4; i++)
        out[2 + i] = hex[(cp >> (12 - 4 * i)) & 15];
    out[6] = 0;
}

/* The text form of the unit at s (n > 0 bytes left) into out; how many bytes
 * of s it stands for. */
static size_t text_unit(const unsigned char *s, size_t n, char out[UNIT_MAX])
{
    uint32_t cp;
    size_t len = utf8_sequence(s, n, &cp);
    if (len == 0) {
        bytes_escaped(out, s, 1);
        return 1;
    }
    if (is_control(cp))
        bytes_escaped(out, s, len);
    else if (cp == 0x2028 || cp == 0x2029 || (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069))
        u_escaped(out, cp);
    else if (cp == '\\')
        memcpy(out, "\\\\", 3);
    else {
        memcpy(out, s, len);
        out[len] = 0;
    }
    return len;
}

/* The JSON form of the unit at s (n > 0 bytes left) into out; how many bytes
 * of s it stands for. */
static size_t json_unit(const unsigned char *s, size_t n, char out[UNIT_MAX])
{
    uint32_t cp;
    size_t len = utf8_sequence(s, n, &cp);
    if (len == 0) {
        memcpy(out, "\\ufffd", 7);
        return 1;
    }
    if (is_control(cp) || cp == 0x2028 || cp == 0x2029)
        u_escaped(out, cp);
    else if (cp == '"')
        memcpy(out, "\\\"", 3);
    else if (cp == '\\')
        memcpy(out, "\\\\", 3);
    else {
        memcpy(out, s, len);
        out[len] = 0;
    }
    return len;
}

void put_text(FILE *f, const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s;
    char unit[UNIT_MAX];
    for (size_t i = 0; i < n;) {
        i += text_unit(p + i, n - i, unit);
        fputs(unit, f);
    }
}

void put_json_string(FILE *f, const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s;
    char unit[UNIT_MAX];
    fputc('"', f);
    for (size_t i = 0; i < n;) {
        i += json_unit(p + i, n - i, unit);
        fputs(unit, f);
    }
    fputc('"', f);
}

char *text_shown(char *out, size_t cap, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t n = strlen(s), len = 0;
    char unit[UNIT_MAX];
    if (cap == 0)
        return out;
    out[0] = 0;
    /* The whole text's length first: when it fits it is not cut, though
     * the room kept for "..." along the way would not have been there. */
    size_t whole = 0;
    for (size_t i = 0; i < n;) {
        i += text_unit(p + i, n - i, unit);
        whole += strlen(unit);
    }
    for (size_t i = 0; i < n;) {
        i += text_unit(p + i, n - i, unit);
        size_t u = strlen(unit);
        if (whole >= cap && len + u + (i < n ? 3 : 0) >= cap) {
            /* Room for "..." is kept while more may follow. */
            if (len + 3 < cap)
                memcpy(out + len, "...", 4);
            return out;
        }
        memcpy(out + len, unit, u + 1);
        len += u;
    }
    return out;
}

void put_secs(FILE *f, int64_t ms)
{
    fprintf(f, "%" PRId64 ".%03" PRId64 " s", ms / 1000, ms % 1000);
}

size_t entry_owner_len(const edgelock_lock_entry *e)
{
    return e->owner_len < sizeof(e->owner) - 1 ? e->owner_len : sizeof(e->owner) - 1;
}
