// SPDX-License-Identifier: BSD-3-Clause
/* Linux port of port.h: clocks, randomness, thread ids, pthreads, stderr log. */
#define _GNU_SOURCE
#include "port.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

uint64_t edgelock_port_now_ms(void)
{
    struct timespec ts;
    /* CLOCK_BOOTTIME goes on while the system is suspended, as the TTLs on the
     * Redis server do; CLOCK_MONOTONIC stops. A gateway that slept past its
     * lease must find its hold gone (lock_valid, the watchdog's loss check),
     * not counted as still running for the time it slept. Kernels before
     * 2.6.39 lack it, and then always fail: monotonic it is. */
#ifdef CLOCK_BOOTTIME
    if (clock_gettime(CLOCK_BOOTTIME, &ts) != 0)
#endif
        clock_gettime(CLOCK_MONOTONIC, &ts);
    /* 64-bit arithmetic throughout: time_t is 32 bits on armhf. */
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

int64_t edgelock_port_wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + (int64_t)ts.tv_nsec / 1000000;
}

void edgelock_port_random(void *buf, size_t n)
{
    unsigned char *p = (unsigned char *)buf;
    while (n > 0) {
        ssize_t got = getrandom(p, n, 0);
        if (got <= 0) {
            /* getrandom only fails before the pool is seeded or when interrupted;
             * fall back to the clock rather than leave bytes unset. */
            uint64_t t = edgelock_port_now_ms() ^ (uint64_t)(uintptr_t)p;
            *p = (unsigned char)(t * 2654435761u >> 13);
            got = 1;
        }
        p += got;
        n -= (size_t)got;
    }
}

/* gettid() once per thread: every blocking call asks. A child of fork() has
 * one thread with a new id, so the copy it inherits is forgotten there. */
static __thread uint64_t cached_tid;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

static void forget_tid(void)
{
    cached_tid = 0;
}
static void register_atfork(void)
{
    pthread_atfork(NULL, NULL, forget_tid);
}

uint64_t edgelock_port_thread_id(void)
{
    if (cached_tid == 0) {
        pthread_once(&atfork_once, register_atfork);
        cached_tid = (uint64_t)syscall(SYS_gettid);
    }
    return cached_tid;
}

void *edgelock_port_alloc(size_t bytes)
{
    return calloc(1, bytes);
}

void edgelock_port_free(void *p)
{
    free(p);
}

void edgelock_port_wipe(void *p, size_t n)
{
    explicit_bzero(p, n);
}

void edgelock_port_vlog(int level, const char *fmt, va_list ap)
{
    static const char *const names[] = {"error", "warn", "info", "debug"};
    const char *env = getenv("EDGELOCK_LOG");
    if (env == NULL || level > atoi(env))
        return;
    fprintf(stderr, "edgelock %s: ", names[level & 3]);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
}

void edgelock_port_assert_fail(const char *expr, const char *file, int line)
{
    fprintf(stderr, "edgelock: invariant broken: %s (%s:%d)\n", expr, file, line);
    abort();
}

void edgelock_port_mutex_init(edgelock_port_mutex *m)
{
    pthread_mutex_init(m, NULL);
}
void edgelock_port_mutex_destroy(edgelock_port_mutex *m)
{
    pthread_mutex_destroy(m);
}
void edgelock_port_mutex_lock(edgelock_port_mutex *m)
{
    pthread_mutex_lock(m);
}
void edgelock_port_mutex_unlock(edgelock_port_mutex *m)
{
    pthread_mutex_unlock(m);
}

void edgelock_port_cond_init(edgelock_port_cond *c)
{
    pthread_condattr_t a;
    pthread_condattr_init(&a);
    pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
    pthread_cond_init(c, &a);
    pthread_condattr_destroy(&a);
}
void edgelock_port_cond_destroy(edgelock_port_cond *c)
{
    pthread_cond_destroy(c);
}
void edgelock_port_cond_wait(edgelock_port_cond *c, edgelock_port_mutex *m)
{
    pthread_cond_wait(c, m);
}
void edgelock_port_cond_signal(edgelock_port_cond *c)
{
    pthread_cond_signal(c);
}
void edgelock_port_cond_broadcast(edgelock_port_cond *c)
{
    pthread_cond_broadcast(c);
}
/* A timerfd: timerfd_settime moves the time without waking the reader. A
 * relative time, so the timer's clock (monotonic) need not be the port's. */
int edgelock_port_alarm_init(edgelock_port_alarm *a)
{
    a->fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
    return a->fd < 0 ? -1 : 0;
}
void edgelock_port_alarm_destroy(edgelock_port_alarm *a)
{
    close(a->fd);
    a->fd = -1;
}
void edgelock_port_alarm_set(edgelock_port_alarm *a, uint32_t ms)
{
    struct itimerspec when;
    memset(&when, 0, sizeof(when));
    when.it_value.tv_sec = (time_t)(ms / 1000u);
    when.it_value.tv_nsec = (long)(ms % 1000u) * 1000000L;
    if (ms == 0)
        when.it_value.tv_nsec = 1; /* all zero would disarm it */
    timerfd_settime(a->fd, 0, &when, NULL);
}
void edgelock_port_alarm_wait(edgelock_port_alarm *a)
{
    uint64_t expirations;
    /* EINTR or anything else: return, and the caller looks again. */
    ssize_t n = read(a->fd, &expirations, sizeof(expirations));
    (void)n;
}

void edgelock_port_call_once(edgelock_port_once *o, void (*fn)(void))
{
    pthread_once(o, fn);
}

static void *thread_trampoline(void *arg)
{
    edgelock_port_thread *t = (edgelock_port_thread *)arg;
    t->fn(t->arg);
    return NULL;
}

int edgelock_port_thread_start(edgelock_port_thread *t, void (*fn)(void *), void *arg)
{
    t->fn = fn;
    t->arg = arg;
    return pthread_create(&t->handle, NULL, thread_trampoline, t) == 0 ? 0 : -1;
}

void edgelock_port_thread_join(edgelock_port_thread *t)
{
    pthread_join(t->handle, NULL);
}

int edgelock_port_path_kind(const char *path)
{
    struct stat st;
    if (!path || stat(path, &st) != 0)
        return 0;
    return S_ISDIR(st.st_mode) ? 2 : 1;
}

int edgelock_port_sigpipe_ignored(void)
{
    struct sigaction sa;
    return sigaction(SIGPIPE, NULL, &sa) == 0 && sa.sa_handler == SIG_IGN;
}

long edgelock_port_send_quiet(int fd, const void *buf, size_t len, char *err, size_t err_len)
{
    ssize_t n = send(fd, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n >= 0)
        return (long)n;
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
        return 0;
    if (err && err_len > 0)
        snprintf(err, err_len, "%s", strerror(errno));
    return -1;
}

long edgelock_port_recv(int fd, void *buf, size_t len, int wait, char *err, size_t err_len)
{
    ssize_t n = recv(fd, buf, len, wait ? 0 : MSG_DONTWAIT);
    if (n > 0)
        return (long)n;
    if (n == 0)
        return EDGELOCK_PORT_RECV_CLOSED;
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
        return 0;
    if (err && err_len > 0)
        snprintf(err, err_len, "%s", strerror(errno));
    return -1;
}

int edgelock_port_socket_reads_may_wait(int fd, uint32_t max_ms)
{
    // The timeout first: a blocking socket without one would wait for ever.
    struct timeval tv;
    tv.tv_sec = (time_t)(max_ms / 1000);
    tv.tv_usec = (suseconds_t)((max_ms % 1000) * 1000);
    if (max_ms == 0 || setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) != 0)
        return -1;
    int flags = fcntl(fd, F_GETFL);
    if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0)
        return -1;
    return 0;
}

int edgelock_port_socket_failed(int fd)
{
    int err = 0;
    socklen_t len = sizeof(err);
    if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err != 0)
        return 1;
    struct sockaddr_storage peer;
    socklen_t peer_len = sizeof(peer);
    return getpeername(fd, (struct sockaddr *)&peer, &peer_len) != 0;
}

void edgelock_port_sigpipe_block(edgelock_port_sigpipe *g)
{
    sigset_t pipe_only;
    sigemptyset(&pipe_only);
    sigaddset(&pipe_only, SIGPIPE);
    g->blocked = pthread_sigmask(SIG_BLOCK, &pipe_only, &g->saved) == 0 && !sigismember(&g->saved, SIGPIPE);
}

void edgelock_port_sigpipe_restore(edgelock_port_sigpipe *g)
{
    if (!g->blocked)
        return; /* blocked by the caller before us: theirs to handle */
    sigset_t pending, pipe_only;
    sigemptyset(&pipe_only);
    sigaddset(&pipe_only, SIGPIPE);
    /* A SIGPIPE raised by our write is pending on this thread: take it, so
     * that unblocking does not deliver it. */
    if (sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE)) {
        struct timespec now = {0, 0};
        while (sigtimedwait(&pipe_only, NULL, &now) < 0 && errno == EINTR)
            ;
    }
    pthread_sigmask(SIG_SETMASK, &g->saved, NULL);
    g->blocked = 0;
}
