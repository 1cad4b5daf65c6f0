// SPDX-License-Identifier: BSD-3-Clause
/*
 * `edgelock run`: take the lock, run CMD while holding it, release it.
 *
 * What `run` holds
 * ----------------
 * - one lock of one kind (reentrant, fair, read, write, fenced): one client,
 *   one handle, edgelock_try_lock_token() (the token is 0 except for fenced);
 * - --permits N: one permit of the expirable semaphore NAME (sized N with
 *   edgelock_semaphore_try_set_permits() unless it exists), taken with
 *   edgelock_try_lock() and kept, lost and given back as a lock is;
 * - --multi: a MultiLock over NAME and the listed names, all on the --url
 *   server: one client, one handle per name, edgelock_multi_try_lock();
 * - --redlock: a RedLock of NAME over the --url server and the listed ones:
 *   one client per server, edgelock_redlock_try_lock(), always with a fixed
 *   lease (no renewal), the validity it returns being how long CMD may run.
 *
 * How `run` is put together
 * -------------------------
 * - Every signal `run` reacts to (INT, TERM, HUP, CHLD, USR1) is blocked in
 *   every thread before the clients (and their loop threads) exist; the main
 *   thread alone takes them with sigwaitinfo(). No signal handler runs, so
 *   there is nothing async-signal-unsafe to get wrong. Of INT, TERM and HUP,
 *   one ignored when `run` starts is left out (neither blocked nor taken): it
 *   stays ignored, for `run` and for CMD.
 * - A helper "lock thread" (lock_thread.c) makes the blocking calls: the
 *   reachability check, the acquire and, when CMD is done, the release.
 * - The lock-lost callback runs on a library loop thread: it sets an atomic
 *   flag and wakes the main thread with SIGUSR1 too.
 * - The main thread (this file) forks CMD (child.c), forwards INT/TERM/HUP to
 *   it, reaps it on SIGCHLD, and sends it SIGTERM when the lock is lost or its
 *   fixed lease (or RedLock validity) runs out, then SIGKILL if CMD is still
 *   running --kill-after ms later.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "child.h"
#include "deadline.h"
#include "escape.h"
#include "lock_thread.h"

/* Phase 1: waits for the lock thread to report its acquire. 0 then; or, when
 * INT, TERM or HUP comes first, 128+N (a lock taken just now is given back
 * first; while the acquire is still under way, the process leaves at once). */
static int wait_for_acquire(struct run_state *s, pthread_t th, const sigset_t *handled)
{
    const struct run_args *a = s->a;
    for (;;) {
        siginfo_t si;
        int sig = sigwaitinfo(handled, &si);
        if (sig < 0)
            continue; /* EINTR */
        pthread_mutex_lock(&s->mu);
        int done = s->acquire_done;
        if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP) {
            pthread_mutex_unlock(&s->mu);
            if (done && s->acquire_st == EDGELOCK_OK) { /* got it just now: give it back */
                finish_lock_thread(s, th);
                destroy_clients(s);
                msg("%s received; %s released without running the command", signal_name(sig), a->label);
                return 128 + sig;
            }
            /* Cancel the wait: the lock call ends at once (or when the reply
             * of an attempt on the wire comes, giving back a lock it took), a
             * fair waiter leaves the queue, and the clients go cleanly. If
             * Redis does not answer that attempt in time, or the thread is
             * still in its first query (no lock call made, none to come),
             * leave at once: a client must not be destroyed under a thread
             * inside it. */
            if (!cancel_lock_thread(
                    s, (int)(a->shape == RUN_REDLOCK ? REDLOCK_TIMEOUT_MS : REDIS_TIMEOUT_MS) + 1000)) {
                msg("%s received while waiting for %s; gave up", signal_name(sig), a->label);
                _exit(128 + sig);
            }
            if (s->acquire_st == EDGELOCK_OK) {
                finish_lock_thread(s, th); /* it came first: give it back */
                destroy_clients(s);
                msg("%s received; %s released without running the command", signal_name(sig), a->label);
                return 128 + sig;
            }
            pthread_join(th, NULL);
            destroy_clients(s);
            msg("%s received while waiting for %s; gave up", signal_name(sig), a->label);
            return 128 + sig;
        }
        pthread_mutex_unlock(&s->mu);
        if (done)
            return 0;
    }
}

/* The acquire did not succeed: joins the lock thread, frees the clients and
 * says why. The exit code. */
static int acquire_failed(const struct options *o, struct run_state *s, pthread_t th)
{
    const struct run_args *a = s->a;
    edgelock_status st = s->acquire_st;
    pthread_join(th, NULL);
    destroy_clients(s);
    if (st == EDGELOCK_ERR_WAIT_TIMEOUT) {
        msg("%s not acquired within %" PRId64 " ms", a->label, a->wait_ms);
        return a->not_acquired_exit;
    }
    if (s->lease_over) {
        msg("%s: its fixed lease of %" PRId64 " ms was over when the acquire's answer came (the round "
            "trip took longer than the lease); nothing is held, the command did not run",
            a->label, a->lease_ms);
        return EXIT_LOST;
    }
    if (st == EDGELOCK_ERR_LOST || st == EDGELOCK_ERR_NOT_OWNER) {
        /* --multi: a member taken early was lost while a later one was
         * awaited; the others were given back, CMD did not run. */
        msg("%s: a lock taken while the others were awaited was lost meanwhile (%s); nothing is held, "
            "the command did not run",
            a->label, edgelock_status_str(st));
        return EXIT_LOST;
    }
    if (a->shape == RUN_REDLOCK && is_unreachable(st)) {
        if (s->check_st != EDGELOCK_OK)
            msg("cannot reach Redis: %zu of the %zu RedLock servers answered, a majority (%zu) is "
                "needed",
                s->reachable, a->n, a->n / 2 + 1);
        else
            msg("cannot reach Redis: a majority of the %zu RedLock servers did not answer while "
                "acquiring %s",
                a->n, a->label);
        return EXIT_UNAVAILABLE;
    }
    return report_failure(o->shown_url, s->check_st != EDGELOCK_OK ? "checking" : "acquiring", a->label, st);
}

/* -v: how long the wait took and what lease the lock has. */
static void say_acquired(const struct run_state *s, uint64_t wait_start)
{
    const struct run_args *a = s->a;
    uint64_t waited = s->acquired_at - wait_start;
    char extra[64] = "";
    if (a->kind == EDGELOCK_FENCED)
        snprintf(extra, sizeof(extra), "token %" PRId64 ", ", s->token);
    if (a->kind == EDGELOCK_PERMIT_SEMAPHORE && s->permit_id[0])
        snprintf(extra, sizeof(extra), "id %s, ", s->permit_id);
    if (a->shape == RUN_REDLOCK)
        msg("acquired %s after %" PRIu64 " ms (fixed lease %" PRId64 " ms, validity %" PRId64 " ms)",
            a->label, waited, a->lease_ms, s->validity_ms);
    else if (a->lease_ms == EDGELOCK_LEASE_WATCHDOG)
        msg("acquired %s after %" PRIu64 " ms (%swatchdog lease %u ms, renewed every %u ms)", a->label,
            waited, extra, a->watchdog_ms, a->watchdog_ms / 3);
    else
        msg("acquired %s after %" PRIu64 " ms (%sfixed lease %" PRId64 " ms, %" PRId64 " ms of it left)",
            a->label, waited, extra, a->lease_ms, s->validity_ms);
}

/* Forks CMD with its environment (EDGELOCK_TOKEN, EDGELOCK_VALIDITY_MS,
 * EDGELOCK_PERMIT_ID). Its pid, or -1 with errno set. */
static pid_t start_cmd(const struct run_state *s, const char *path, const sigset_t *orig_mask,
                       int sigchld_was_ignored)
{
    const struct run_args *a = s->a;
    char token_var[64], validity_var[64], permit_var[64];
    char *add[CHILD_VARS] = {NULL, NULL, NULL};
    if (a->kind == EDGELOCK_FENCED) {
        snprintf(token_var, sizeof(token_var), "EDGELOCK_TOKEN=%" PRId64, s->token);
        add[0] = token_var;
    }
    if (a->shape == RUN_REDLOCK || a->lease_ms > 0) {
        /* From CMD's start: what went by since the acquire returned is gone too. */
        uint64_t end = s->acquired_at + (uint64_t)s->validity_ms, now = now_ms();
        snprintf(validity_var, sizeof(validity_var), "EDGELOCK_VALIDITY_MS=%" PRIu64,
                 end > now ? end - now : 0);
        add[1] = validity_var;
    }
    if (a->kind == EDGELOCK_PERMIT_SEMAPHORE && s->permit_id[0]) {
        snprintf(permit_var, sizeof(permit_var), "EDGELOCK_PERMIT_ID=%s", s->permit_id);
        add[2] = permit_var;
    }
    char **envp = child_environment(add);
    if (!envp) {
        errno = ENOMEM;
        return -1;
    }
    pid_t parent = getpid();
    pid_t child = fork();
    if (child == 0)
        exec_child(path, a->cmd, envp, orig_mask, parent, sigchld_was_ignored);
    int err = errno;
    free(envp);
    errno = err;
    return child;
}

/* Phase 2: CMD runs while the lock is held. Forwards signals to it, stops it
 * when the lock is lost or its fixed lease (or RedLock validity) runs out, and
 * reaps it. CMD's exit code; *lost_reported is set when the lock was lost. */
static int supervise(struct run_state *s, pid_t child, const sigset_t *handled, int *lost_reported)
{
    const struct run_args *a = s->a;
    int status = 0;
    /* A fixed lease, or a RedLock's validity, ends at a known time: the lock is
     * then gone (nothing renews it), whether or not anyone else notices. */
    uint64_t lease_end = 0;
    if (a->shape == RUN_REDLOCK || a->lease_ms > 0)
        lease_end = s->acquired_at + (uint64_t)s->validity_ms; /* counted from the send, not the answer */
    /* Once the lock is gone, CMD runs unprotected: after SIGTERM it gets
     * --kill-after ms to end, then SIGKILL. */
    int kill_pending = 0;
    uint64_t kill_at = 0;
    for (;;) {
        siginfo_t si;
        int sig;
        /* Checked on every turn, not only on SIGUSR1: the lost callback's
         * SIGUSR1 may have merged with the lock thread's, taken in phase 1. */
        int lost = atomic_load(&s->lost);
        if (lost && !*lost_reported) {
            *lost_reported = 1;
            char which[700] = "", shown[600];
            if (a->shape == RUN_MULTI)
                snprintf(which, sizeof(which), "lock '%s' of the ",
                         text_shown(shown, sizeof(shown), a->names[lost - 1]));
            msg("%s%s was lost while the command was running (renewal failed: key "
                "deleted or expired, or Redis gone for a whole lease); sending SIGTERM to "
                "the command (pid %ld)",
                which, a->label, (long)child);
            kill(child, SIGTERM);
            kill_pending = 1;
            kill_at = now_ms() + (uint64_t)a->kill_after_ms;
        }
        /* The wait ends at the SIGKILL due, or else at the end of the lease. */
        uint64_t wake_at = kill_pending ? kill_at : lease_end && !*lost_reported ? lease_end : 0;
        if (wake_at) {
            uint64_t now = now_ms();
            uint64_t left = wake_at > now ? wake_at - now : 0;
            struct timespec ts = {(time_t)(left / 1000), (long)(left % 1000) * 1000000L};
            sig = sigtimedwait(handled, &si, &ts);
            if (sig < 0 && errno == EAGAIN && kill_pending) {
                if (now_ms() >= kill_at) {
                    msg("the command (pid %ld) did not end within %" PRId64 " ms of SIGTERM "
                        "(--kill-after); sending SIGKILL",
                        (long)child, a->kill_after_ms);
                    kill(child, SIGKILL);
                    kill_pending = 0;
                }
                continue;
            }
            if (sig < 0 && errno == EAGAIN) {
                *lost_reported = 1;
                if (a->shape == RUN_REDLOCK)
                    msg("RedLock validity of %" PRId64 " ms on %s ran out while the command was "
                        "running (a RedLock is not renewed: give --lease room for the command); "
                        "sending SIGTERM to the command (pid %ld)",
                        s->validity_ms, a->label, (long)child);
                else
                    msg("fixed lease of %" PRId64 " ms on %s ran out while the command was "
                        "running; sending SIGTERM to the command (pid %ld)",
                        a->lease_ms, a->label, (long)child);
                kill(child, SIGTERM);
                kill_pending = 1;
                kill_at = now_ms() + (uint64_t)a->kill_after_ms;
                continue;
            }
        } else {
            sig = sigwaitinfo(handled, &si);
        }
        if (sig < 0)
            continue;
        if (sig == SIGCHLD) {
            pid_t r = waitpid(child, &status, WNOHANG);
            if (r == child)
                break;
        } else if (sig == SIGUSR1) {
            /* a wake-up: the lost flag is checked at the top of the loop */
        } else {
            /* The terminal sends its signals to the whole foreground process
             * group, CMD included (SI_KERNEL): forwarding would double them.
             * A forwarded signal is never followed by SIGKILL: the lock is
             * still held, CMD may handle it as it likes (SIGHUP: reload), and
             * whoever sent it can escalate. */
            if (si.si_code != SI_KERNEL) {
                kill(child, sig);
                if (verbose)
                    msg("forwarded %s to the command (pid %ld)", signal_name(sig), (long)child);
            }
        }
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 1;
}

/* Has the lock thread release the lock (it owns the hold) and says how that
 * went. 1 when the lock turned out to be lost, else lost_reported. `code` is
 * CMD's: if the release does not end by its deadline, the process exits with
 * it (or 70) from there. */
static int release(struct run_state *s, pthread_t th, int lost_reported, int code)
{
    const struct run_args *a = s->a;
    /* The release has no wait of the user's to bound it: a deadline of its
     * own, one command timeout per member released in turn (a MultiLock) and
     * one to spare. */
    uint32_t call_ms = command_timeout_for(a->shape == RUN_REDLOCK ? REDLOCK_TIMEOUT_MS : REDIS_TIMEOUT_MS);
    unsigned calls = a->shape == RUN_MULTI ? (unsigned)a->n + 1 : 2;
    char what[1200];
    snprintf(what, sizeof(what), "releasing %s", a->label);
    int guarded = deadline_start(calls, call_ms, what,
                                 "Redis did not answer in time; the lock expires on its own within its lease",
                                 lost_reported ? EXIT_LOST : code) == 0;
    finish_lock_thread(s, th);
    if (guarded)
        deadline_stop();
    edgelock_status rst = s->release_st;
    if (rst == EDGELOCK_OK) {
        if (verbose)
            msg("released %s after %" PRIu64 " ms", a->label, now_ms() - s->acquired_at);
    } else if (rst == EDGELOCK_ERR_NOT_REPLICATED) {
        msg("released %s, but fewer than %u replica%s acknowledged it within %u ms: a replica promoted "
            "now may still show it held until its lease ends",
            a->label, replicas.n, replicas.n == 1 ? "" : "s", replicas.timeout_ms);
    } else if (rst == EDGELOCK_ERR_LOST || rst == EDGELOCK_ERR_NOT_OWNER) {
        if (!lost_reported)
            msg("%s was lost before the command finished (%s)", a->label, edgelock_status_str(rst));
        lost_reported = 1;
    } else if (rst == EDGELOCK_ERR_REDIS) {
        /* Redis keeps a script's writes up to its error: the DEL may have run. */
        msg("Redis refused part of the release of %s (an ACL that forbids PUBLISH, say; EDGELOCK_LOG=1 "
            "shows the error): it may be released without its waiters woken (they retry within its "
            "lease), or else it expires within its lease",
            a->label);
    } else {
        msg("could not release %s: %s; it expires on its own within its lease", a->label,
            edgelock_status_str(rst));
    }
    return lost_reported;
}

int cmd_run(const struct options *o, const struct run_args *a)
{
    char path[PATH_MAX];
    int rc = resolve_cmd(a->cmd[0], path, sizeof(path));
    if (rc) {
        char shown[600]; /* CMD may be a mistyped URL with its password: arg_shown() */
        msg("%s: %s", arg_shown(shown, sizeof(shown), a->cmd[0]),
            rc == EXIT_NOT_FOUND ? "command not found" : "permission denied");
        return rc;
    }

    /* SIGCHLD must not be ignored (children would be reaped by the kernel). */
    struct sigaction old_chld;
    sigaction(SIGCHLD, NULL, &old_chld);
    int sigchld_was_ignored = old_chld.sa_handler == SIG_IGN;
    signal(SIGCHLD, SIG_DFL);

    /* INT, TERM and HUP, less any ignored at start: those stay ignored, for
     * run and for CMD (exec keeps SIG_IGN; orig_mask, restored in the child,
     * is the mask edgelock started with). */
    sigset_t handled, orig_mask;
    sigemptyset(&handled);
    add_unignored_stop_signals(&handled);
    sigaddset(&handled, SIGCHLD);
    sigaddset(&handled, SIGUSR1);
    /* Before any thread exists, so the loop and lock threads inherit the mask. */
    pthread_sigmask(SIG_BLOCK, &handled, &orig_mask);
    note_inherited_fds();

    static struct run_state s; /* static: the loop threads' callback points at it */
    memset(&s, 0, sizeof(s));
    pthread_mutex_init(&s.mu, NULL);
    pthread_cond_init(&s.cv, NULL);
    s.main_thread = pthread_self();
    s.a = a;
    atomic_init(&s.lost, 0);

    rc = make_members(o, a, &s);
    forget_secrets(); /* every client is made: the last use of the URLs and password */
    if (rc)
        return rc;

    pthread_t th;
    if (pthread_create(&th, NULL, lock_thread, &s) != 0) {
        msg("cannot start a thread");
        destroy_clients(&s);
        return EXIT_OSERR;
    }

    uint64_t wait_start = now_ms();
    rc = wait_for_acquire(&s, th, &handled);
    if (rc)
        return rc;
    if (s.acquire_st != EDGELOCK_OK)
        return acquire_failed(o, &s, th);
    if (verbose)
        say_acquired(&s, wait_start);

    pid_t child = start_cmd(&s, path, &orig_mask, sigchld_was_ignored);
    if (child < 0) {
        int err = errno;
        finish_lock_thread(&s, th);
        destroy_clients(&s);
        msg("cannot start the command: %s", strerror(err));
        return EXIT_OSERR;
    }
    int lost_reported = 0;
    int code = supervise(&s, child, &handled, &lost_reported);
    lost_reported = release(&s, th, lost_reported, code);
    destroy_clients(&s);
    pthread_mutex_destroy(&s.mu);
    pthread_cond_destroy(&s.cv);
    return lost_reported ? EXIT_LOST : code;
}
