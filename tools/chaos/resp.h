// SPDX-License-Identifier: BSD-3-Clause
/*
 * A small blocking Redis client for the checker's own side channels: the
 * fenced store, the run_id reads of the epoch recipe and the injector's admin
 * commands. The tool may use the public edgelock header only (tests/layering),
 * so it speaks RESP itself rather than through hiredis; it needs nothing but
 * arrays of bulk strings out and the five reply types back.
 *
 * Every call has a deadline (timeout_ms). Any failure (refused, timed out,
 * closed, unparsable) closes the connection; the next call connects again, so
 * a caller never has to tell a dead connection from a live one.
 */
#ifndef EDGELOCK_CHAOS_RESP_H
#define EDGELOCK_CHAOS_RESP_H

#include <stddef.h>
#include <stdint.h>

#define RESP_BUF_BYTES 65536 /* the largest reply taken (SCAN pages, INFO) */
#define RESP_MAX_NODES 1024  /* replies and array elements in one reply */
#define RESP_MAX_ARGS 16

enum resp_type { RESP_NIL, RESP_STATUS, RESP_ERROR, RESP_INTEGER, RESP_STRING, RESP_ARRAY };

struct resp_reply {
    enum resp_type type;
    int64_t integer;                /* RESP_INTEGER */
    const char *str;                /* STATUS, ERROR, STRING: not NUL-terminated; valid until the next call */
    size_t len;                     /* its length */
    size_t n;                       /* RESP_ARRAY: element count */
    const struct resp_reply *elems; /* RESP_ARRAY: the elements */
};

struct resp_conn {
    int fd; /* -1 when not connected */
    uint16_t port;
    int timeout_ms;
    char buf[RESP_BUF_BYTES];
    size_t len; /* bytes in buf */
    struct resp_reply nodes[RESP_MAX_NODES];
    size_t used; /* nodes taken by the current reply */
};

/* A connection to 127.0.0.1:port; nothing is opened until the first call. */
void resp_init(struct resp_conn *c, uint16_t port, int timeout_ms);
void resp_close(struct resp_conn *c);

/* Sends argv (NULL-terminated, at most RESP_MAX_ARGS strings) and reads one
 * reply into *out (valid until the next call on c). 0 on a reply of any type,
 * Redis errors included; -1 when there was none (the connection is closed). */
int resp_call(struct resp_conn *c, struct resp_reply *out, const char *const *argv);

/* resp_call with the arguments inline: resp_callv(c, &r, "PING", NULL). */
int resp_callv(struct resp_conn *c, struct resp_reply *out, ...) __attribute__((sentinel));

/* The value of `field` in an INFO reply's text ("field:value\r\n") into out
 * (cap bytes, NUL-terminated). 0, or -1 when absent or too long. */
int resp_info_field(const struct resp_reply *info, const char *field, char *out, size_t cap);

/* Whether a reply is the string s exactly. */
int resp_is(const struct resp_reply *r, const char *s);

#endif
