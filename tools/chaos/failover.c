// SPDX-License-Identifier: BSD-3-Clause
/*
 * The failover fault (plan.h): the lock Redis is replaced by what its replica
 * had when it stopped following, on the same port, so that the workers need
 * no Sentinel to follow it. This is what a failover to a replica that lagged
 * behind looks like to a client, and what cfg.wait_replicas is for: with it,
 * no lock is granted (or released) unless a replica has it too.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "faults.h"

static int copy_file(const char *from, const char *to)
{
    int in = open(from, O_RDONLY | O_CLOEXEC);
    int out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    int rc = in >= 0 && out >= 0 ? 0 : -1;
    char buf[65536];
    ssize_t n;
    while (rc == 0 && (n = read(in, buf, sizeof(buf))) != 0) {
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 || write(out, buf, (size_t)n) != n)
            rc = -1;
    }
    if (in >= 0)
        close(in);
    if (out >= 0 && close(out) != 0)
        rc = -1;
    return rc;
}

static int ok_reply(struct resp_conn *c, const char *what, const char *a1, const char *a2, const char *a3)
{
    struct resp_reply r;
    if (resp_callv(c, &r, what, a1, a2, a3, NULL) == 0 && resp_is(&r, "OK"))
        return 0;
    fprintf(stderr, "edgelock_chaos: %s %s on the replica failed\n", what, a1 ? a1 : "");
    return -1;
}

int failover_apply(struct injector *inj, struct window *w)
{
    struct server *master = inj->lock_server, *replica = inj->replica;
    if (!replica) {
        w->applied = 0;
        snprintf(w->note, sizeof(w->note), "needs --replica");
        return 0;
    }
    char port[16], from[600], to[600], old[16];
    snprintf(port, sizeof(port), "%u", master->port);
    snprintf(old, sizeof(old), "%.8s", master->run_id);
    /* From here on the master's writes reach nobody else. */
    if (ok_reply(inj->replica_admin, "REPLICAOF", "NO", "ONE", NULL) != 0)
        return -1;
    nap_ms((long)w->param_ms);
    server_kill(master);
    snprintf(from, sizeof(from), "%s/dump.rdb", replica->dir);
    snprintf(to, sizeof(to), "%s/dump.rdb", master->dir);
    if (ok_reply(inj->replica_admin, "SAVE", NULL, NULL, NULL) != 0 || copy_file(from, to) != 0 ||
        server_start(master, master->dir, master->port) != 0) {
        fprintf(stderr, "edgelock_chaos: the failover could not bring the lock Redis back\n");
        return -1;
    }
    /* A later redis-restart must come back empty again. */
    unlink(to);
    resp_close(inj->admin);
    if (ok_reply(inj->replica_admin, "REPLICAOF", "127.0.0.1", port, NULL) != 0)
        return -1;
    snprintf(w->note, sizeof(w->note), "lagged %ldms; run_id %s.. -> %.8s..", (long)w->param_ms, old,
             master->run_id);
    return 0;
}
