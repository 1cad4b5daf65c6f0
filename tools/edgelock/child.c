// SPDX-License-Identifier: BSD-3-Clause
/*
 * Starting CMD for `edgelock run` (child.h): PATH search, CMD's environment,
 * and what the child does between fork and exec.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include "child.h"
#include "common.h"

/* File descriptors open when edgelock started: CMD inherits these and only
 * these (the library's sockets are closed in the child). */
static unsigned char inherited_fd[TRACKED_FDS];

void note_inherited_fds(void)
{
    for (int fd = 0; fd < TRACKED_FDS; fd++)
        inherited_fd[fd] = fcntl(fd, F_GETFD) != -1;
}

/* Before fork, where only async-signal-safe calls are allowed. */
int resolve_cmd(const char *cmd, char *out, size_t cap)
{
    struct stat sb;
    if (!*cmd)
        return EXIT_NOT_FOUND;
    if (strchr(cmd, '/')) {
        if ((size_t)snprintf(out, cap, "%s", cmd) >= cap)
            return EXIT_NOT_FOUND;
        if (stat(out, &sb) != 0)
            return EXIT_NOT_FOUND;
        return S_ISREG(sb.st_mode) && access(out, X_OK) == 0 ? 0 : EXIT_CANNOT_EXEC;
    }
    const char *path = getenv("PATH");
    if (!path || !*path)
        path = "/usr/local/bin:/usr/bin:/bin";
    int result = EXIT_NOT_FOUND;
    for (const char *p = path;;) {
        const char *colon = strchr(p, ':');
        size_t dlen = colon ? (size_t)(colon - p) : strlen(p);
        int n = dlen ? snprintf(out, cap, "%.*s/%s", (int)dlen, p, cmd) : snprintf(out, cap, "./%s", cmd);
        if (n > 0 && (size_t)n < cap && stat(out, &sb) == 0 && S_ISREG(sb.st_mode)) {
            if (access(out, X_OK) == 0)
                return 0;
            result = EXIT_CANNOT_EXEC;
        }
        if (!colon)
            break;
        p = colon + 1;
    }
    return result;
}

/* The variables `run` sets for CMD. Inherited values are dropped, so that
 * CMD never mistakes an outer `edgelock run`'s token for its own. */
static const char *const child_vars[] = {"EDGELOCK_TOKEN=", "EDGELOCK_VALIDITY_MS=", "EDGELOCK_PERMIT_ID="};
_Static_assert(sizeof(child_vars) / sizeof(child_vars[0]) == CHILD_VARS, "child.h's CHILD_VARS");

extern char **environ;

static const char url_var[] = "EDGELOCK_URL=";
/* EDGELOCK_URL as CMD gets it: "EDGELOCK_URL=" and the URL without its
 * credentials (the redacted form is at most 4 bytes longer than the URL). */
static char url_for_cmd[sizeof(url_var) + 4096 + 8];

/* The EDGELOCK_URL entry `var` as CMD gets it: itself when it carries no
 * credentials, the URL without "user:password@" when it does, NULL (dropped)
 * when it is not a URL the library accepts (it may hold a secret in a form
 * that cannot be told) or too long to rewrite here. */
static char *url_without_credentials(char *var)
{
    const char *url = var + sizeof(url_var) - 1;
    char *out = url_for_cmd + sizeof(url_var) - 1;
    size_t cap = sizeof(url_for_cmd) - (sizeof(url_var) - 1);
    if (strlen(url) + 5 > cap || edgelock_url_redact(url, out, cap) != EDGELOCK_OK)
        return NULL;
    if (strcmp(out, url) == 0)
        return var; /* redacting changed nothing: no credentials */
    /* The library writes credentials as "***@" right after "scheme://"
     * (edgelock_url_redact): take that out, and the rest is the URL. */
    char *at = strstr(out, "://");
    if (!at || strncmp(at + 3, "***@", 4) != 0)
        return NULL;
    memmove(at + 3, at + 7, strlen(at + 7) + 1);
    memcpy(url_for_cmd, url_var, sizeof(url_var) - 1);
    return url_for_cmd;
}

/* edgelock's environment without child_vars, plus the non-NULL `add` strings
 * ("NAME=value"). Built before fork. NULL when out of memory. */
char **child_environment(char *const add[CHILD_VARS])
{
    size_t n = 0;
    for (char **e = environ; e && *e; e++)
        n++;
    char **env = malloc((n + CHILD_VARS + 1) * sizeof(*env));
    if (!env)
        return NULL;
    size_t k = 0;
    for (char **e = environ; e && *e; e++) {
        int ours = 0;
        for (size_t v = 0; v < CHILD_VARS; v++)
            ours |= strncmp(*e, child_vars[v], strlen(child_vars[v])) == 0;
        if (ours)
            continue;
        if (strncmp(*e, url_var, sizeof(url_var) - 1) == 0) {
            char *kept = url_without_credentials(*e);
            if (kept)
                env[k++] = kept;
            continue;
        }
        env[k++] = *e;
    }
    for (size_t v = 0; v < CHILD_VARS; v++)
        if (add[v])
            env[k++] = add[v];
    env[k] = NULL;
    return env;
}

/* In the child, between fork and exec: async-signal-safe calls only. */
void exec_child(const char *path, char **argv, char **envp, const sigset_t *orig_mask, pid_t parent,
                int restore_sigchld_ignore)
{
#ifdef __linux__
    /* If edgelock dies (even by SIGKILL), CMD must not run on unprotected. */
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent)
        _exit(128 + SIGTERM); /* it died before prctl() */
#else
    (void)parent;
#endif
    if (restore_sigchld_ignore)
        signal(SIGCHLD, SIG_IGN);
    sigprocmask(SIG_SETMASK, orig_mask, NULL);
    for (int fd = 3; fd < TRACKED_FDS; fd++)
        if (!inherited_fd[fd])
            close(fd);
    execve(path, argv, envp);
    int err = errno;
    static const char m1[] = "edgelock: cannot execute ";
    static const char m2[] = "\n";
    ssize_t w = write(2, m1, sizeof(m1) - 1);
    w = write(2, path, strlen(path));
    w = write(2, m2, 1);
    (void)w;
    _exit(err == ENOENT ? EXIT_NOT_FOUND : EXIT_CANNOT_EXEC);
}
