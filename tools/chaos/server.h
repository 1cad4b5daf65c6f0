// SPDX-License-Identifier: BSD-3-Clause
/*
 * The redis-servers a chaos run starts: Debian's redis-server on a free
 * loopback port, its working directory inside the run's temporary directory,
 * no persistence (a kill -9 loses the data set, which is the point of the
 * restart fault). A server counts as started only when the process answering
 * on the port is ours (INFO's process_id), never a Redis the user runs.
 */
#ifndef EDGELOCK_CHAOS_SERVER_H
#define EDGELOCK_CHAOS_SERVER_H

#include <stdint.h>
#include <sys/types.h>

struct server {
    pid_t pid; /* -1 when not running */
    uint16_t port;
    char dir[512]; /* its --dir */
    char run_id[48];
    uint16_t replica_of; /* 0: a master; else the port of the master it follows */
};

/* Starts a server in `dir` (created if missing) on a free port, or on `port`
 * when it is not 0 (a restart); a replica of s->replica_of when set. It loads
 * <dir>/dump.rdb when there is one (only the failover fault leaves one).
 * 0, or -1 (message on stderr). */
int server_start(struct server *s, const char *dir, uint16_t port);

/* kill -9 and reap; the port stays noted for a restart. */
void server_kill(struct server *s);

/* server_kill, then server_start on the same port: an empty data set and a
 * new run_id. A port taken meanwhile by another process fails it. */
int server_restart(struct server *s);

#endif
