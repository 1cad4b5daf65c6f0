// SPDX-License-Identifier: BSD-3-Clause
/* The lock Redis's keys at the end of the run (keys.h). */
#include <string.h>

#include "keys.h"

#define PAGE_MAX 1000 /* SCAN's COUNT is a hint: room for well over it */
#define NAME_MAX_BYTES 256

/* Appends "name: field xN pttl MS" to out->holders: whose hold was left. */
static void describe_holders(struct resp_conn *c, const char *name, struct leftovers *out)
{
    struct resp_reply r;
    size_t used = strlen(out->holders);
    long long pttl = -3;
    if (resp_callv(c, &r, "PTTL", name, NULL) == 0 && r.type == RESP_INTEGER)
        pttl = (long long)r.integer;
    used += (size_t)snprintf(out->holders + used, sizeof(out->holders) - used,
                             "%s%s (pttl %lld):", used ? "; " : "", name, pttl);
    if (used >= sizeof(out->holders) || resp_callv(c, &r, "HGETALL", name, NULL) != 0 || r.type != RESP_ARRAY)
        return;
    for (size_t i = 0; i + 1 < r.n && used < sizeof(out->holders); i += 2)
        used += (size_t)snprintf(out->holders + used, sizeof(out->holders) - used, " %.*s x%.*s",
                                 (int)r.elems[i].len, r.elems[i].str, (int)r.elems[i + 1].len,
                                 r.elems[i + 1].str);
}

static void sort_out(struct resp_conn *c, const char *name, const char *const *lock_names, int nlocks,
                     struct leftovers *out)
{
    out->total++;
    if (strncmp(name, "redisson_lock_token:", 20) == 0) {
        out->tokens++;
        return;
    }
    for (int i = 0; i < nlocks; i++)
        if (strcmp(name, lock_names[i]) == 0) {
            out->locks++;
            describe_holders(c, name, out);
            return;
        }
    struct resp_reply r;
    if (resp_callv(c, &r, "PTTL", name, NULL) != 0 || r.type != RESP_INTEGER)
        out->persistent++;
    else if (r.integer >= 0)
        out->with_ttl++;
    else if (r.integer == -2)
        out->total--; /* expired meanwhile */
    else
        out->persistent++;
}

void keys_left(struct resp_conn *c, const char *const *lock_names, int nlocks, struct leftovers *out)
{
    static char names[PAGE_MAX][NAME_MAX_BYTES];
    memset(out, 0, sizeof(*out));
    char cursor[32] = "0";
    do {
        struct resp_reply r;
        if (resp_callv(c, &r, "SCAN", cursor, "COUNT", "200", NULL) != 0 || r.type != RESP_ARRAY ||
            r.n != 2 || r.elems[0].type != RESP_STRING || r.elems[0].len >= sizeof(cursor) ||
            r.elems[1].type != RESP_ARRAY)
            return;
        memcpy(cursor, r.elems[0].str, r.elems[0].len);
        cursor[r.elems[0].len] = '\0';
        /* Copy the page's names first: each PTTL reuses the reply's buffer. */
        size_t n = 0;
        for (size_t i = 0; i < r.elems[1].n && n < PAGE_MAX; i++) {
            const struct resp_reply *k = &r.elems[1].elems[i];
            if (k->type != RESP_STRING || k->len >= NAME_MAX_BYTES) {
                out->total++;
                out->persistent++; /* not ours to have: count it as left behind */
                continue;
            }
            memcpy(names[n], k->str, k->len);
            names[n][k->len] = '\0';
            n++;
        }
        for (size_t i = 0; i < n; i++)
            sort_out(c, names[i], lock_names, nlocks, out);
    } while (strcmp(cursor, "0") != 0);
    out->read_ok = 1;
}
