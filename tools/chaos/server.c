// SPDX-License-Identifier: BSD-3-Clause
/* Starting and killing the run's redis-servers (server.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clock.h"
#include "resp.h"
#include "server.h"

/* A port nobody listens on now. Another process may take it before the
 * server binds it; server_start then sees someone else answer and tries again. */
static uint16_t free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(a);
    uint16_t port = 0;
    if (fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0 &&
        getsockname(fd, (struct sockaddr *)&a, &len) == 0)
        port = ntohs(a.sin_port);
    if (fd >= 0)
        close(fd);
    return port;
}

static pid_t spawn(const struct server *s)
{
    char port[16], master[16];
    snprintf(port, sizeof(port), "%u", s->port);
    snprintf(master, sizeof(master), "%u", s->replica_of);
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid != 0)
        return pid;
    /* The server dies with the checker, however the checker ends. */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent)
        _exit(127);
    const char *bin = getenv("REDIS_SERVER") ? getenv("REDIS_SERVER") : "redis-server";
    if (s->replica_of)
        execlp(bin, bin, "--port", port, "--bind", "127.0.0.1", "--dir", s->dir, "--save", "", "--appendonly",
               "no", "--daemonize", "no", "--loglevel", "warning", "--logfile", "redis.log", "--replicaof",
               "127.0.0.1", master, (char *)NULL);
    else
        execlp(bin, bin, "--port", port, "--bind", "127.0.0.1", "--dir", s->dir, "--save", "", "--appendonly",
               "no", "--daemonize", "no", "--loglevel", "warning", "--logfile", "redis.log", (char *)NULL);
    _exit(127);
}

/* Waits until our process answers on the port; its run_id into s. */
static int wait_ours(struct server *s)
{
    struct resp_conn *c = malloc(sizeof(*c));
    if (!c)
        return -1;
    resp_init(c, s->port, 1000);
    int ok = -1;
    for (int i = 0; i < 500 && ok != 0; i++) {
        struct resp_reply r;
        char pid[32];
        if (resp_callv(c, &r, "INFO", "server", NULL) == 0 &&
            resp_info_field(&r, "process_id", pid, sizeof(pid)) == 0) {
            if (atol(pid) == (long)s->pid && resp_info_field(&r, "run_id", s->run_id, sizeof(s->run_id)) == 0)
                ok = 0;
            else
                break; /* someone else's server won the port */
        }
        int status;
        if (ok != 0 && waitpid(s->pid, &status, WNOHANG) == s->pid) {
            s->pid = -1; /* exited: the port was taken */
            break;
        }
        if (ok != 0)
            nap_ms(10);
    }
    resp_close(c);
    free(c);
    return ok;
}

int server_start(struct server *s, const char *dir, uint16_t port)
{
    if (dir != s->dir)
        snprintf(s->dir, sizeof(s->dir), "%s", dir);
    if (mkdir(s->dir, 0700) != 0 && errno != EEXIST) {
        fprintf(stderr, "edgelock_chaos: cannot create %s: %s\n", s->dir, strerror(errno));
        return -1;
    }
    for (int attempt = 0; attempt < 5; attempt++) {
        s->port = port ? port : free_port();
        s->pid = spawn(s);
        if (s->pid < 0)
            break;
        if (wait_ours(s) == 0)
            return 0;
        server_kill(s);
        nap_ms(50);
    }
    fprintf(stderr, "edgelock_chaos: cannot start redis-server (port %u, dir %s)\n", s->port, s->dir);
    return -1;
}

void server_kill(struct server *s)
{
    if (s->pid > 0) {
        kill(s->pid, SIGKILL);
        int status;
        while (waitpid(s->pid, &status, 0) < 0 && errno == EINTR) {
        }
    }
    s->pid = -1;
}

int server_restart(struct server *s)
{
    server_kill(s);
    return server_start(s, s->dir, s->port);
}
