// SPDX-License-Identifier: BSD-3-Clause
/* The workers' event files (events.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "events.h"

int events_open(const char *dir, pid_t pid)
{
    char path[600];
    snprintf(path, sizeof(path), "%s/events.%ld", dir, (long)pid);
    return open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
}

void events_put(int fd, const struct event *e)
{
    /* One write() per line: lines of the loop thread (lost callbacks) and of
     * the main thread never interleave, and a kill -9 cuts between lines. */
    char line[256];
    int n = snprintf(line, sizeof(line),
                     "%c %d %" PRId64 " %" PRId64 " %" PRId64 " %" PRId64 " %" PRId64 " %" PRId64 " %" PRId64
                     " %" PRId64 "\n",
                     e->type, e->lock, e->t, e->t2, e->epoch, e->token, e->a, e->b, e->c, e->d);
    if (n > 0 && (size_t)n < sizeof(line)) {
        ssize_t w;
        do {
            w = write(fd, line, (size_t)n);
        } while (w < 0 && errno == EINTR);
    }
}

static int by_time(const void *x, const void *y)
{
    const struct event *a = x, *b = y;
    return (a->t > b->t) - (a->t < b->t);
}

static int load_file(const char *path, pid_t pid, struct event **out, size_t *n, size_t *cap)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    char line[256];
    while (fgets(line, sizeof(line), f)) {
        struct event e;
        e.pid = pid;
        if (sscanf(line,
                   "%c %d %" SCNd64 " %" SCNd64 " %" SCNd64 " %" SCNd64 " %" SCNd64 " %" SCNd64 " %" SCNd64
                   " %" SCNd64,
                   &e.type, &e.lock, &e.t, &e.t2, &e.epoch, &e.token, &e.a, &e.b, &e.c, &e.d) != 10)
            continue; /* a line cut by kill -9 cannot happen (one write), but skip anything odd */
        if (*n == *cap) {
            size_t nc = *cap ? *cap * 2 : 4096;
            struct event *ne = realloc(*out, nc * sizeof(*ne));
            if (!ne) {
                fclose(f);
                return -1;
            }
            *out = ne;
            *cap = nc;
        }
        (*out)[(*n)++] = e;
    }
    fclose(f);
    return 0;
}

int events_load(const char *dir, struct event **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    size_t cap = 0;
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    struct dirent *de;
    int rc = 0;
    while ((de = readdir(d)) != NULL) {
        if (strncmp(de->d_name, "events.", 7) != 0)
            continue;
        char path[900];
        snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
        if (load_file(path, (pid_t)atol(de->d_name + 7), out, n, &cap) != 0)
            rc = -1;
    }
    closedir(d);
    if (*n > 1)
        qsort(*out, *n, sizeof(**out), by_time);
    return rc;
}
