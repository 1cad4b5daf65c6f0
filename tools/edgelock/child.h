// SPDX-License-Identifier: BSD-3-Clause
/*
 * Starting CMD for `edgelock run`: everything that touches the child process
 * before it runs CMD. The parent calls these before fork (PATH search,
 * environment) so that the child, between fork and exec, needs nothing but
 * async-signal-safe calls.
 */
#ifndef EDGELOCK_CLI_CHILD_H
#define EDGELOCK_CLI_CHILD_H

#include <signal.h>
#include <stddef.h>
#include <sys/types.h>

/* Descriptors 0 .. TRACKED_FDS-1 are looked at by note_inherited_fds(). */
#define TRACKED_FDS 1024

/* The variables `run` sets for CMD: EDGELOCK_TOKEN, EDGELOCK_VALIDITY_MS and
 * EDGELOCK_PERMIT_ID, in that order in child_environment()'s `add`. */
#define CHILD_VARS 3

/* Notes the descriptors open now (before the library opens any): CMD
 * inherits these and only these. */
void note_inherited_fds(void);

/* PATH search for `cmd` into out (cap bytes), done before the lock is taken.
 * 0, or EXIT_NOT_FOUND / EXIT_CANNOT_EXEC. */
int resolve_cmd(const char *cmd, char *out, size_t cap);

/* edgelock's environment without any inherited EDGELOCK_TOKEN,
 * EDGELOCK_VALIDITY_MS or EDGELOCK_PERMIT_ID, plus the non-NULL `add` strings ("NAME=value").
 * EDGELOCK_URL loses its credentials ("user:password@"): CMD may run a nested
 * edgelock on the same server, but brings its own password; one that is not
 * a valid URL is dropped. Built before fork; free() the array (not the
 * strings). NULL when out of memory. */
char **child_environment(char *const add[CHILD_VARS]);

/* In the child, between fork and exec: sets the parent-death signal (Linux),
 * restores the signal mask (and SIGCHLD's SIG_IGN when edgelock inherited it),
 * closes the descriptors edgelock did not inherit and execs CMD. Never returns. */
void exec_child(const char *path, char **argv, char **envp, const sigset_t *orig_mask, pid_t parent,
                int restore_sigchld_ignore) __attribute__((noreturn));

#endif
