// SPDX-License-Identifier: BSD-3-Clause
/* `edgelock list [PATTERN] [--json]`: the Redisson-style locks present, for
 * the operator who asks who holds what across the fleet. Pages of SCAN over
 * hash keys (edgelock_scan_locks), then each candidate's snapshot
 * (edgelock_lock_info_get); hashes that are no lock are left out. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "deadline.h"
#include "escape.h"

/* Names asked for per page (SCAN COUNT is half of it) and holders read per
 * lock (the count says how many more there are). */
#define LIST_PAGE 128
#define LIST_HOLDERS 8
/* The deadline of a whole listing, in command timeouts: a bounded scan of a
 * large keyspace stops there and says so (exit 0: what was read is right). */
#define LIST_CALLS 10u

struct listed {
    char name[EDGELOCK_SCAN_NAME_MAX + 1];
    size_t name_len;
    edgelock_lock_info info;
    edgelock_lock_entry holders[LIST_HOLDERS];
};

/* "<anything>:<decimal>" or "<anything>:<decimal>:write": an owner field as
 * Redisson writes it. */
static int owner_like(const char *s, size_t len)
{
    if (len > 6 && memcmp(s + len - 6, ":write", 6) == 0)
        len -= 6;
    size_t digits = 0;
    while (digits < len && s[len - 1 - digits] >= '0' && s[len - 1 - digits] <= '9')
        digits++;
    return digits > 0 && digits < len && s[len - 1 - digits] == ':';
}

/* A lock's hash: held, every field an owner with a hold count (and "mode"). */
static int is_lock(const edgelock_lock_info *info)
{
    if (info->state != EDGELOCK_LOCK_HELD || info->holder_count == 0)
        return 0;
    size_t n = info->holder_count < info->holders_cap ? info->holder_count : info->holders_cap;
    for (size_t i = 0; i < n; i++) {
        const edgelock_lock_entry *e = &info->holders[i];
        size_t len = e->owner_len < sizeof(e->owner) - 1 ? e->owner_len : sizeof(e->owner) - 1;
        if (e->value <= 0 || e->value == EDGELOCK_INFO_INVALID || !owner_like(e->owner, len))
            return 0;
    }
    return 1;
}

/* What Redis shows of the lock's kind. A fair lock without waiters looks like
 * a reentrant one (its queue keys are gone then). */
static const char *kind_of(const edgelock_lock_info *info)
{
    if (info->mode[0])
        return "read-write";
    if (info->queue_count > 0)
        return "fair";
    if (info->has_token)
        return "fenced";
    return "reentrant";
}

static int64_t waiters_of(const edgelock_lock_info *info)
{
    return strcmp(kind_of(info), "fair") == 0 ? (int64_t)info->queue_count : info->subscribers;
}

static void print_text_row(const struct listed *l)
{
    const edgelock_lock_info *info = &l->info;
    put_text(stdout, l->name, l->name_len);
    printf("  %s", kind_of(info));
    if (info->mode[0]) {
        printf(" (");
        put_text(stdout, info->mode, strlen(info->mode));
        printf(")");
    }
    if (info->ttl_ms >= 0) {
        printf("  expires in ");
        put_secs(stdout, info->ttl_ms);
    } else {
        printf("  no expiry");
    }
    printf("  %" PRId64 " waiting\n", waiters_of(info));
    size_t n = info->holder_count < LIST_HOLDERS ? info->holder_count : LIST_HOLDERS;
    for (size_t i = 0; i < n; i++) {
        printf("    ");
        put_text(stdout, l->holders[i].owner, entry_owner_len(&l->holders[i]));
        printf("  count %" PRId64 "\n", l->holders[i].value);
    }
    if (n < info->holder_count)
        printf("    ... and %zu more\n", info->holder_count - n);
}

static void print_json_row(const struct listed *l, int first)
{
    const edgelock_lock_info *info = &l->info;
    printf("%s{\"name\":", first ? "" : ",");
    put_json_string(stdout, l->name, l->name_len);
    printf(",\"kind\":\"%s\",\"mode\":", kind_of(info));
    if (info->mode[0])
        put_json_string(stdout, info->mode, strlen(info->mode));
    else
        printf("null");
    printf(",\"ttl_ms\":");
    if (info->ttl_ms >= 0)
        printf("%" PRId64, info->ttl_ms);
    else
        printf("null");
    printf(",\"holder_count\":%zu,\"holders\":[", info->holder_count);
    size_t n = info->holder_count < LIST_HOLDERS ? info->holder_count : LIST_HOLDERS;
    for (size_t i = 0; i < n; i++) {
        printf("%s{\"owner\":", i ? "," : "");
        put_json_string(stdout, l->holders[i].owner, entry_owner_len(&l->holders[i]));
        printf(",\"count\":%" PRId64 "}", l->holders[i].value);
    }
    printf("],\"waiters\":%" PRId64 ",\"server\":", waiters_of(info));
    put_json_string(stdout, info->server, strlen(info->server));
    printf("}");
}

static int by_name(const void *a, const void *b)
{
    const struct listed *x = a, *y = b;
    size_t n = x->name_len < y->name_len ? x->name_len : y->name_len;
    int d = memcmp(x->name, y->name, n);
    return d ? d : (x->name_len > y->name_len) - (x->name_len < y->name_len);
}

int cmd_list(const struct options *o, const char *pattern, int json)
{
    if (strlen(pattern) > EDGELOCK_SCAN_PATTERN_MAX)
        return usage_error("list: the pattern is longer than %u bytes", EDGELOCK_SCAN_PATTERN_MAX);
    edgelock_client *c;
    int code = create_client(o->url, 2, EDGELOCK_SCAN_NAME_MAX, REDIS_TIMEOUT_MS, 30000, NULL, NULL, &c);
    forget_secrets(); /* the only client: the last use of the URL and password */
    if (code)
        return code;
    code = deadline_start(LIST_CALLS, command_timeout_for(REDIS_TIMEOUT_MS), "list",
                          "Redis did not answer in time", EXIT_UNAVAILABLE);
    if (code) {
        edgelock_client_destroy(c);
        return code;
    }
    edgelock_scan_name *page = calloc(LIST_PAGE, sizeof(*page));
    size_t cap = 64, n = 0, skipped_long = 0;
    struct listed *found = malloc(cap * sizeof(*found));
    int complete = 0;
    edgelock_scan scan = {pattern, 0, page, LIST_PAGE, 0};
    if (!page || !found) {
        msg("cannot allocate the list");
        code = EXIT_OSERR;
        goto out;
    }
    /* Pages, and a snapshot per candidate, while the deadline has room for
     * one more call: what does not fit is said, not waited for. */
    while (deadline_room()) {
        edgelock_status st = edgelock_scan_locks(c, &scan);
        if (st != EDGELOCK_OK && st != EDGELOCK_ERR_PAGE_TOO_SMALL) {
            code = report_failure(o->shown_url, "scanning", "the locks", st);
            goto out;
        }
        size_t got = st == EDGELOCK_OK ? scan.count : 0; /* else: read again, below */
        for (size_t i = 0; i < got && deadline_room(); i++) {
            if (scan.names[i].len > EDGELOCK_SCAN_NAME_MAX) {
                skipped_long++;
                continue;
            }
            if (n == cap) {
                struct listed *more = realloc(found, 2 * cap * sizeof(*found));
                if (!more) {
                    msg("cannot allocate the list");
                    code = EXIT_OSERR;
                    goto out;
                }
                found = more;
                cap *= 2;
            }
            struct listed *l = &found[n];
            memset(l, 0, sizeof(*l));
            memcpy(l->name, scan.names[i].name, scan.names[i].len);
            l->name_len = scan.names[i].len;
            edgelock_lock lk;
            if (edgelock_lock_new(c, l->name, l->name_len, &lk) != EDGELOCK_OK)
                continue;
            l->info.holders = l->holders;
            l->info.holders_cap = LIST_HOLDERS;
            st = edgelock_lock_info_get(c, lk, &l->info);
            edgelock_lock_free(c, lk);
            if (st != EDGELOCK_OK) {
                char label[600];
                lock_label(label, sizeof(label), l->name);
                code = report_failure(o->shown_url, "reading", label, st);
                goto out;
            }
            if (is_lock(&l->info))
                n++;
            /* found[] may move (realloc): read the holders from l->holders */
            l->info.holders = NULL;
            l->info.holders_cap = 0;
        }
        if (st == EDGELOCK_ERR_PAGE_TOO_SMALL) {
            /* More than the array held (SCAN's COUNT is a hint): the cursor
             * stayed; the same page again with room for all of it. */
            edgelock_scan_name *bigger = realloc(page, scan.count * sizeof(*page));
            if (!bigger) {
                msg("cannot allocate the list");
                code = EXIT_OSERR;
                goto out;
            }
            page = bigger;
            scan.names = page;
            scan.names_cap = scan.count;
            continue;
        }
        if (scan.cursor == 0) {
            complete = 1;
            break;
        }
    }
    deadline_stop();
    qsort(found, n, sizeof(*found), by_name); /* SCAN's order is the table's */
    if (json) {
        printf("{\"locks\":[");
        for (size_t i = 0; i < n; i++)
            print_json_row(&found[i], i == 0);
        printf("],\"complete\":%s}\n", complete ? "true" : "false");
    } else {
        for (size_t i = 0; i < n; i++)
            print_text_row(&found[i]);
        if (n == 0)
            printf("no locks%s\n", complete ? "" : " found so far");
    }
    if (skipped_long)
        msg("%zu name%s longer than %u bytes left out", skipped_long, skipped_long == 1 ? "" : "s",
            EDGELOCK_SCAN_NAME_MAX);
    if (!complete)
        msg("the scan stopped at its deadline: more locks may exist (narrow the pattern)");
out:
    deadline_stop();
    free(page);
    free(found);
    edgelock_client_destroy(c);
    return code;
}
