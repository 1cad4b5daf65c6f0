// SPDX-License-Identifier: BSD-3-Clause
/*
 * Bytes from Redis (owner fields, lock modes, key types) and lock names are
 * any bytes: shown to a person or written as JSON, they are escaped here.
 *
 * Text (for a terminal): valid UTF-8 passes through, except what a terminal
 * would act on instead of showing: C0 controls, DEL and C1 controls
 * (U+0080..U+009F, whose 8-bit forms some terminals take as escape
 * sequences) are written as \xNN per byte; bytes that are not valid UTF-8 as
 * \xNN; the line and paragraph separators and the bidirectional controls
 * (U+202A..U+202E, U+2066..U+2069, which reorder what follows) as \uXXXX; a
 * backslash as \\, so every escape reads back unambiguously.
 *
 * JSON: always valid JSON text in UTF-8. '"' and '\' escaped; C0 controls,
 * DEL, C1 controls and U+2028/U+2029 as \u00XX / \u20XX; every byte that is
 * not part of valid UTF-8 (an overlong form, a surrogate, a cut sequence) is
 * replaced by U+FFFD, written \ufffd. The replacement loses the byte's value:
 * the text output, or redis-cli, shows it.
 */
#ifndef EDGELOCK_CLI_ESCAPE_H
#define EDGELOCK_CLI_ESCAPE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "edgelock/edgelock.h"

/* s[0..n) as escaped text on f. */
void put_text(FILE *f, const char *s, size_t n);

/* s[0..n) as a JSON string, quotes included, on f. */
void put_json_string(FILE *f, const char *s, size_t n);

/* The NUL-terminated string s as escaped text into out (cap bytes,
 * NUL-terminated); cut at an escape's boundary when it does not fit, with
 * "..." at the end. out. */
char *text_shown(char *out, size_t cap, const char *s);

/* ms as "S.mmm s" on f (ms >= 0). */
void put_secs(FILE *f, int64_t ms);

/* The bytes of a snapshot entry's owner field that it holds (it may be cut). */
size_t entry_owner_len(const edgelock_lock_entry *e);

#endif
