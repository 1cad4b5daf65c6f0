// SPDX-License-Identifier: BSD-3-Clause
/*
 * `edgelock status NAME [--json]`: what Redis holds for a lock, from one
 * atomic snapshot read by edgelock_lock_info_get(). Exit 0 whether the lock is
 * free or held; 76 when NAME is a Redis value of another type.
 * `status NAME --permits`: a semaphore (edgelock_semaphore_info_get());
 * `status NAME --latch`: a countdown latch (edgelock_latch_count()).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "deadline.h"
#include "escape.h"

/* Whether a number of the snapshot can be shown as what it stands for. A
 * writer other than Redisson may leave anything: the library gives
 * EDGELOCK_INFO_INVALID for what is not a number, and values no lock holds
 * (a count below 1, a negative token or TTL other than -1, a deadline before
 * the epoch or further away than the longest wait) are judged here. Those
 * print as "invalid", and no arithmetic is done on them. */
/* redis-cluster:// or rediss-cluster://: the text names the node. */
static int is_cluster_url(const char *url)
{
    return url && (strncmp(url, "redis-cluster://", 16) == 0 || strncmp(url, "rediss-cluster://", 17) == 0);
}

static int count_valid(int64_t count)
{
    return count >= 1;
}

static int token_valid(int64_t token)
{
    return token >= 0;
}

static int ttl_valid(int64_t ttl_ms)
{
    return ttl_ms >= -1; /* -1: no expiry */
}

/* A queued waiter's deadline (not -1, its "none") against Redis's time `now`
 * (>= 0): both non-negative, so their difference cannot overflow. */
static int deadline_valid(int64_t deadline, int64_t now)
{
    return deadline >= 0 && (deadline <= now || deadline - now <= EDGELOCK_MAX_TIME_MS);
}

/* Entries read before a larger array is tried; most locks have one holder and
 * no queue. */
#define INFO_FIRST_CAP 32
/* Reads left when holders or waiters keep arriving faster than the arrays grow. */
#define INFO_READS 8
/* The deadline of `status`: two reads (the first and one re-read) of a whole
 * command timeout each; a further re-read only while it can end in time. */
#define STATUS_CALLS 2u

/* The snapshot of `lk` with every holder and waiter in it: read with small
 * arrays and, while Redis has more entries than they hold, again with arrays of
 * the size the last read reported (and some room). 0, or an exit code
 * (message said). */
static int read_all(edgelock_client *c, edgelock_lock lk, const struct options *o, const char *name,
                    edgelock_lock_info *info, edgelock_lock_entry **holders, edgelock_lock_entry **queue)
{
    size_t hcap = INFO_FIRST_CAP, qcap = INFO_FIRST_CAP;
    for (int read = 0;; read++) {
        free(*holders);
        free(*queue);
        *holders = malloc(hcap * sizeof(**holders));
        *queue = malloc(qcap * sizeof(**queue));
        if (!*holders || !*queue) {
            msg("cannot allocate the list of holders and waiters of '%s'", name);
            return EXIT_OSERR;
        }
        memset(info, 0, sizeof(*info));
        info->holders = *holders;
        info->holders_cap = hcap;
        info->queue = *queue;
        info->queue_cap = qcap;
        edgelock_status st = edgelock_lock_info_get(c, lk, info);
        if (st != EDGELOCK_OK) {
            char label[600];
            lock_label(label, sizeof(label), name);
            return report_failure(o->shown_url, "reading", label, st);
        }
        /* Complete, or as much as could be had (the counts say what is
         * missing): after INFO_READS reads, or when another read might not
         * end before the deadline. */
        if ((info->holder_count <= hcap && info->queue_count <= qcap) || read + 1 == INFO_READS ||
            !deadline_room())
            return 0;
        if (info->holder_count > hcap)
            hcap = info->holder_count + info->holder_count / 2;
        if (info->queue_count > qcap)
            qcap = info->queue_count + info->queue_count / 2;
    }
}

/* read_all() on a client of its own. *holders and *queue are malloc'ed, also
 * on failure (free them). */
static int read_lock_info(const struct options *o, const char *name, edgelock_lock_info *info,
                          edgelock_lock_entry **holders, edgelock_lock_entry **queue)
{
    edgelock_client *c;
    edgelock_lock lk;
    *holders = NULL;
    *queue = NULL;
    int code = make_client(o, name, &c, &lk);
    if (code)
        return code;
    code = read_all(c, lk, o, name, info, holders, queue);
    edgelock_client_destroy(c);
    return code;
}

static void print_json(const char *name, const edgelock_lock_info *info, size_t nholders, size_t nq)
{
    int held = info->state == EDGELOCK_LOCK_HELD;
    printf("{\"name\":");
    put_json_string(stdout, name, strlen(name));
    printf(",\"state\":\"%s\",\"ttl_ms\":", held ? "held" : "free");
    if (held && !ttl_valid(info->ttl_ms))
        printf("\"invalid\"");
    else if (held && info->ttl_ms >= 0)
        printf("%" PRId64, info->ttl_ms);
    else
        printf("null");
    printf(",\"mode\":");
    if (info->mode[0])
        put_json_string(stdout, info->mode, strlen(info->mode));
    else
        printf("null");
    printf(",\"holders\":[");
    for (size_t i = 0; i < nholders; i++) {
        const edgelock_lock_entry *e = &info->holders[i];
        printf("%s{\"owner\":", i ? "," : "");
        put_json_string(stdout, e->owner, entry_owner_len(e));
        if (count_valid(e->value))
            printf(",\"count\":%" PRId64 "}", e->value);
        else
            printf(",\"count\":\"invalid\"}");
    }
    printf("],\"queue\":[");
    for (size_t i = 0; i < nq; i++) {
        if (i)
            putchar(',');
        put_json_string(stdout, info->queue[i].owner, entry_owner_len(&info->queue[i]));
    }
    printf("],\"waiters\":[");
    for (size_t i = 0; i < nq; i++) {
        const edgelock_lock_entry *e = &info->queue[i];
        printf("%s{\"owner\":", i ? "," : "");
        put_json_string(stdout, e->owner, entry_owner_len(e));
        if (e->value == -1)
            printf(",\"deadline_ms\":null,\"expires_in_ms\":null}");
        else if (deadline_valid(e->value, info->redis_time_ms))
            printf(",\"deadline_ms\":%" PRId64 ",\"expires_in_ms\":%" PRId64 "}", e->value,
                   e->value - info->redis_time_ms);
        else
            printf(",\"deadline_ms\":\"invalid\",\"expires_in_ms\":\"invalid\"}");
    }
    printf("],\"token\":");
    if (info->has_token && token_valid(info->token))
        printf("%" PRId64, info->token);
    else if (info->has_token)
        printf("\"invalid\"");
    else
        printf("null");
    /* Clients listening for its unlock message: those waiting for it. */
    printf(",\"subscribers\":%" PRId64, info->subscribers);
    /* Where it was read: on a cluster, the master serving the lock's slot. */
    printf(",\"server\":");
    put_json_string(stdout, info->server, strlen(info->server));
    printf("}\n");
}

static void print_text(const char *name, const edgelock_lock_info *info, size_t nholders, size_t nq,
                       int cluster)
{
    put_text(stdout, name, strlen(name));
    if (info->state != EDGELOCK_LOCK_HELD) {
        printf(": free\n");
    } else {
        printf(": held");
        if (info->mode[0]) {
            printf(" (mode ");
            put_text(stdout, info->mode, strlen(info->mode));
            printf(")");
        }
        if (!ttl_valid(info->ttl_ms)) {
            printf(", expiry invalid (PTTL %" PRId64 ")\n", info->ttl_ms);
        } else if (info->ttl_ms >= 0) {
            printf(", expires in ");
            put_secs(stdout, info->ttl_ms);
            putchar('\n');
        } else {
            printf(", no expiry\n");
        }
        printf("  %zu holder%s:\n", info->holder_count, info->holder_count == 1 ? "" : "s");
        for (size_t i = 0; i < nholders; i++) {
            printf("    ");
            put_text(stdout, info->holders[i].owner, entry_owner_len(&info->holders[i]));
            if (count_valid(info->holders[i].value))
                printf("  count %" PRId64 "\n", info->holders[i].value);
            else
                printf("  count invalid (not a hold count)\n");
        }
        if (nholders < info->holder_count)
            printf("    ... and %zu more (they kept arriving faster than they could be read in time)\n",
                   info->holder_count - nholders);
    }
    if (info->queue_count) {
        int64_t now = info->redis_time_ms;
        printf("  %zu queued (served in this order):\n", info->queue_count);
        for (size_t i = 0; i < nq; i++) {
            const edgelock_lock_entry *e = &info->queue[i];
            printf("    %zu. ", i + 1);
            put_text(stdout, e->owner, entry_owner_len(e));
            if (e->value == -1) {
                printf("  (no deadline)\n");
            } else if (!deadline_valid(e->value, now)) {
                printf("  deadline invalid (not a time)\n");
            } else if (e->value >= now) {
                printf("  deadline in ");
                put_secs(stdout, e->value - now);
                putchar('\n');
            } else {
                printf("  deadline passed ");
                put_secs(stdout, now - e->value);
                printf(" ago (dropped at the next attempt)\n");
            }
        }
        if (nq < info->queue_count)
            printf("    ... and %zu more (they kept arriving faster than they could be read in time)\n",
                   info->queue_count - nq);
    }
    if (info->subscribers > 0)
        printf("  %" PRId64 " client%s waiting (subscribed to its unlock channel)\n", info->subscribers,
               info->subscribers == 1 ? "" : "s");
    if (info->has_token && token_valid(info->token))
        printf("  fencing token: %" PRId64 " (the last one issued)\n", info->token);
    else if (info->has_token)
        printf("  fencing token: invalid (the token key holds no token)\n");
    if (cluster) {
        printf("  served by ");
        put_text(stdout, info->server, strlen(info->server));
        printf(" (the master of the lock's slot)\n");
    }
}

int cmd_status(const struct options *o, const char *name, int json)
{
    /* One snapshot, read by the library in one atomic step: the hash and its
     * TTL, a fair lock's queue with each waiter's deadline, a fenced lock's
     * last token, and Redis's own time to read the deadlines against. */
    edgelock_lock_info info;
    edgelock_lock_entry *holders, *queue;
    char label[600], what[1200];
    lock_label(label, sizeof(label), name);
    snprintf(what, sizeof(what), "reading %s at %s", label, o->shown_url);
    int code = deadline_start(STATUS_CALLS, command_timeout_for(REDIS_TIMEOUT_MS), what,
                              "Redis did not answer in time", EXIT_UNAVAILABLE);
    if (code)
        return code;
    code = read_lock_info(o, name, &info, &holders, &queue);
    deadline_stop();
    if (!code && info.state == EDGELOCK_LOCK_WRONG_TYPE) {
        char shown[600], type[64];
        msg("'%s' is a Redis %s, not a lock", text_shown(shown, sizeof(shown), name),
            text_shown(type, sizeof(type), info.redis_type));
        code = EXIT_REMOTE;
    }
    if (!code) {
        size_t nholders = info.holder_count < info.holders_cap ? info.holder_count : info.holders_cap;
        size_t nq = info.queue_count < info.queue_cap ? info.queue_count : info.queue_cap;
        if (info.state != EDGELOCK_LOCK_HELD)
            nholders = 0;
        if (json)
            print_json(name, &info, nholders, nq);
        else
            print_text(name, &info, nholders, nq, is_cluster_url(o->shown_url)); /* o->url may be wiped */
        code = fflush(stdout) == 0 ? 0 : EXIT_OSERR;
    }
    free(holders);
    free(queue);
    return code;
}

/* One read of a semaphore or a latch on a client of its own, within the
 * deadline of `status`. `read` makes the call; label names NAME. 0, or an
 * exit code (message said). */
typedef edgelock_status (*read_fn)(edgelock_client *c, edgelock_lock lk, void *out);

static int read_one(const struct options *o, const char *name, edgelock_lock_kind kind, const char *label,
                    read_fn read, void *out)
{
    char what[1200];
    snprintf(what, sizeof(what), "reading %s at %s", label, o->shown_url);
    int code = deadline_start(STATUS_CALLS, command_timeout_for(REDIS_TIMEOUT_MS), what,
                              "Redis did not answer in time", EXIT_UNAVAILABLE);
    if (code)
        return code;
    edgelock_client *c;
    edgelock_lock lk;
    code = make_client_kind(o, name, kind, &c, &lk);
    if (code) {
        deadline_stop();
        return code;
    }
    edgelock_status st = read(c, lk, out);
    deadline_stop();
    edgelock_client_destroy(c);
    return st == EDGELOCK_OK ? 0 : report_failure(o->shown_url, "reading", label, st);
}

static edgelock_status read_semaphore(edgelock_client *c, edgelock_lock lk, void *out)
{
    return edgelock_semaphore_info_get(c, lk, out);
}

static edgelock_status read_latch(edgelock_client *c, edgelock_lock lk, void *out)
{
    return edgelock_latch_count(c, lk, out);
}

int cmd_status_semaphore(const struct options *o, const char *name, int json)
{
    /* Read as an expirable semaphore: the counter of free permits (shared
     * with a plain RSemaphore of the same name), the permits taken with a
     * lease, and the clients waiting on its channel. Permits whose lease ran
     * out are given back first, as Redisson's availablePermits() does. */
    edgelock_semaphore_info info;
    char label[600];
    kind_label(label, sizeof(label), "semaphore", name);
    int code = read_one(o, name, EDGELOCK_PERMIT_SEMAPHORE, label, read_semaphore, &info);
    if (code)
        return code;
    int exists = info.available != -1;
    int64_t available = exists ? info.available : 0;
    if (json) {
        printf("{\"name\":");
        put_json_string(stdout, name, strlen(name));
        printf(",\"kind\":\"semaphore\",\"available\":%" PRId64 ",\"acquired\":%" PRId64
               ",\"subscribers\":%" PRId64 ",\"exists\":%s}\n",
               available, info.acquired, info.subscribers, exists ? "true" : "false");
    } else {
        put_text(stdout, name, strlen(name));
        printf(": semaphore%s\n", exists ? "" : " (absent: no permits until it is sized)");
        printf("  free permits: %" PRId64 "\n", available);
        printf("  permits taken: %" PRId64 "\n", info.acquired);
        printf("  waiting clients: %" PRId64 "\n", info.subscribers);
    }
    return fflush(stdout) == 0 ? 0 : EXIT_OSERR;
}

int cmd_status_latch(const struct options *o, const char *name, int json)
{
    int64_t count = 0;
    char label[600];
    kind_label(label, sizeof(label), "latch", name);
    int code = read_one(o, name, EDGELOCK_LATCH, label, read_latch, &count);
    if (code)
        return code;
    if (json) {
        printf("{\"name\":");
        put_json_string(stdout, name, strlen(name));
        printf(",\"kind\":\"latch\",\"count\":%" PRId64 "}\n", count);
    } else {
        put_text(stdout, name, strlen(name));
        printf(": latch, count %" PRId64 "%s\n", count, count > 0 ? "" : " (open)");
    }
    return fflush(stdout) == 0 ? 0 : EXIT_OSERR;
}
