// SPDX-License-Identifier: BSD-3-Clause
/* Parsing and naming the run's fault windows (plan.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan.h"

struct fault_word {
    const char *word;
    enum fault_kind kind;
    int lock;
    int64_t default_ms; /* 0: takes no :MS */
};

static const struct fault_word kWords[] = {
    {"redis-stop", FAULT_REDIS_STOP, -1, 2500},     {"redis-restart", FAULT_REDIS_RESTART, -1, 0},
    {"kill-normal", FAULT_KILL_NORMAL, -1, 0},      {"kill-pubsub", FAULT_KILL_PUBSUB, -1, 0},
    {"pause-write", FAULT_PAUSE_WRITE, -1, 2000},   {"freeze-wd", FAULT_HOLDER_FREEZE, 0, 4500},
    {"freeze-fixed", FAULT_HOLDER_FREEZE, 1, 4500}, {"kill-holder-wd", FAULT_HOLDER_KILL, 0, 0},
    {"kill-holder-fixed", FAULT_HOLDER_KILL, 1, 0}, {"failover", FAULT_FAILOVER, -1, 1000},
};

static int parse_one(const char *item, size_t len, struct window *w)
{
    const char *colon = memchr(item, ':', len);
    size_t wl = colon ? (size_t)(colon - item) : len;
    for (size_t i = 0; i < sizeof(kWords) / sizeof(kWords[0]); i++) {
        const struct fault_word *k = &kWords[i];
        if (strlen(k->word) != wl || memcmp(k->word, item, wl) != 0)
            continue;
        memset(w, 0, sizeof(*w));
        w->kind = k->kind;
        w->lock = k->lock;
        w->param_ms = k->default_ms;
        if (colon) {
            char num[16];
            size_t nl = len - wl - 1;
            char *end;
            if (k->default_ms == 0 || nl == 0 || nl >= sizeof(num))
                return -1;
            memcpy(num, colon + 1, nl);
            num[nl] = '\0';
            long v = strtol(num, &end, 10);
            if (*end || v < 1 || v > 600000)
                return -1;
            w->param_ms = v;
        }
        return 0;
    }
    return -1;
}

int plan_parse(const char *spec, struct window *w, int cap, int *n)
{
    const char *p = spec;
    while (*p) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        if (*n >= cap) {
            fprintf(stderr, "edgelock_chaos: more than %d fault windows\n", cap - 1);
            return -1;
        }
        if (parse_one(p, len, &w[*n]) != 0) {
            fprintf(stderr, "edgelock_chaos: unknown fault '%.*s' (see --help)\n", (int)len, p);
            return -1;
        }
        (*n)++;
        p += len;
        if (*p == ',')
            p++;
    }
    return 0;
}

void plan_name(const struct window *w, char *buf, size_t cap)
{
    if (w->kind == FAULT_NONE) {
        snprintf(buf, cap, "warm-up");
        return;
    }
    for (size_t i = 0; i < sizeof(kWords) / sizeof(kWords[0]); i++) {
        const struct fault_word *k = &kWords[i];
        if (k->kind != w->kind || k->lock != w->lock)
            continue;
        if (k->default_ms)
            snprintf(buf, cap, "%s %ldms", k->word, (long)w->param_ms);
        else
            snprintf(buf, cap, "%s", k->word);
        return;
    }
    snprintf(buf, cap, "?");
}

int plan_data_loss(const struct window *w)
{
    return w->kind == FAULT_REDIS_RESTART || w->kind == FAULT_FAILOVER;
}

unsigned plan_locks(const struct window *w)
{
    if (w->kind == FAULT_NONE)
        return 0;
    if (w->lock >= 0)
        return 1u << w->lock;
    return 3u;
}
