// SPDX-License-Identifier: BSD-3-Clause
/*
 * The OS seam: everything edgelock needs from the operating system, and nothing
 * else. A port supplies these functions plus port_types.h (the mutex, condition
 * and thread types). C linkage so a port can be written in C.
 */
#ifndef EDGELOCK_PORT_H
#define EDGELOCK_PORT_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "edgelock/edgelock.h" /* EDGELOCK_LOG_* */
#include "port_types.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Monotonic milliseconds from an arbitrary origin, counting time the system
 *  spends suspended (leases on the server run on meanwhile); only used for
 *  differences. */
uint64_t edgelock_port_now_ms(void);

/** Wall-clock milliseconds since the Unix epoch (Redisson's fair-lock deadlines). */
int64_t edgelock_port_wall_ms(void);

/** Fill buf with n unpredictable bytes (client ids, unlock request ids, jitter). */
void edgelock_port_random(void *buf, size_t n);

/** An id for the calling thread, unique among live threads of the process. */
uint64_t edgelock_port_thread_id(void);

/** What is at path: 0 nothing (or unreadable), 1 a file, 2 a directory. */
int edgelock_port_path_kind(const char *path);

/** Memory for the tables, called only while a client is created or destroyed. */
void *edgelock_port_alloc(size_t bytes);
void edgelock_port_free(void *p);
/* Zero n bytes at p in a way the compiler may not drop as a dead store: for
 * secrets (a password) in memory about to go out of scope or be freed. */
void edgelock_port_wipe(void *p, size_t n);

/** printf-style diagnostics at an EDGELOCK_LOG_* level (edgelock.h), for a
 *  client without a log_fn (base/log.cpp); the Linux port writes to stderr
 *  when EDGELOCK_LOG is set, and formats nothing otherwise. */
void edgelock_port_vlog(int level, const char *fmt, va_list ap)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 0)))
#endif
    ;

/** A broken invariant (a bug, never bad input): report and abort. */
void edgelock_port_assert_fail(const char *expr, const char *file, int line);

/*
 * SIGPIPE: a write to a socket whose peer closed it raises SIGPIPE, and its
 * default action ends the process. A thread of the library's (or a caller
 * running the library's loop) blocks it for as long as it may write, and on
 * leaving discards one raised meanwhile: the write itself fails with EPIPE,
 * which the connection handles. sigpipe_ignored: 1 when the process ignores
 * SIGPIPE already, and no guard is needed.
 */
int edgelock_port_sigpipe_ignored(void);
void edgelock_port_sigpipe_block(edgelock_port_sigpipe *g);
void edgelock_port_sigpipe_restore(edgelock_port_sigpipe *g);
/** Write to a socket without raising SIGPIPE (MSG_NOSIGNAL) and without
 *  waiting (MSG_DONTWAIT, also on a socket made blocking by
 *  edgelock_port_socket_reads_may_wait): the plain connections' writes with
 *  hiredis 1.x, which need no guard then. Returns the bytes written; 0 when
 *  the socket cannot take any now (write later); -1 on an error, described
 *  in err. */
long edgelock_port_send_quiet(int fd, const void *buf, size_t len, char *err, size_t err_len);
/** Returned by edgelock_port_recv when the peer closed the connection. */
#define EDGELOCK_PORT_RECV_CLOSED (-2)
/** Read from a connected socket. wait 0: never waits (MSG_DONTWAIT). wait 1:
 *  on a socket set up by edgelock_port_socket_reads_may_wait, waits for
 *  bytes at most that call's max_ms (rounded up to the kernel's clock tick).
 *  Returns the bytes read; 0 when none came (none there, the wait ended, or
 *  a signal); EDGELOCK_PORT_RECV_CLOSED at the end of the stream; -1 on an
 *  error, described in err. */
long edgelock_port_recv(int fd, void *buf, size_t len, int wait, char *err, size_t err_len);
/** Let reads of a connected socket wait (edgelock_port_recv's wait 1), for
 *  at most max_ms each: the socket becomes blocking with that receive
 *  timeout. Every other read and write of it must then say not to wait, as
 *  edgelock_port_recv and edgelock_port_send_quiet do. 0 on success; -1 when
 *  it could not, and the socket is as it was. */
int edgelock_port_socket_reads_may_wait(int fd, uint32_t max_ms);
/** 1 when a socket's connection failed or never came up (SO_ERROR set, or
 *  no peer): a TLS handshake that fails on such a socket met no server. */
int edgelock_port_socket_failed(int fd);

/* Blocking facade: a mutex, a condition variable, the loop thread and its alarm. */
void edgelock_port_mutex_init(edgelock_port_mutex *m);
void edgelock_port_mutex_destroy(edgelock_port_mutex *m);
void edgelock_port_mutex_lock(edgelock_port_mutex *m);
void edgelock_port_mutex_unlock(edgelock_port_mutex *m);
void edgelock_port_cond_init(edgelock_port_cond *c);
void edgelock_port_cond_destroy(edgelock_port_cond *c);
void edgelock_port_cond_wait(edgelock_port_cond *c, edgelock_port_mutex *m);
void edgelock_port_cond_signal(edgelock_port_cond *c);
void edgelock_port_cond_broadcast(edgelock_port_cond *c);
/** The loop thread's alarm: a one-shot timer one thread sleeps on and any
 *  thread may set, for a wake-up at a time that keeps moving. Setting it is a
 *  system call, not a wake-up of the sleeper: callers that keep moving the
 *  time away cost the sleeping thread nothing (a condition variable's timed
 *  wait would have to wake to learn the time moved). init: 0 on success, -1
 *  when the OS has no timer left. */
int edgelock_port_alarm_init(edgelock_port_alarm *a);
void edgelock_port_alarm_destroy(edgelock_port_alarm *a);
/** Go off in ms milliseconds (0: at once), in place of any time set before. */
void edgelock_port_alarm_set(edgelock_port_alarm *a, uint32_t ms);
/** Sleep until the alarm goes off, and consume that. It may return early
 *  (a signal): the caller looks at what it waits for and sleeps again. */
void edgelock_port_alarm_wait(edgelock_port_alarm *a);
/** Run fn exactly once per process, however many threads call this at once;
 *  o is a global initialised with EDGELOCK_PORT_ONCE_INIT. */
void edgelock_port_call_once(edgelock_port_once *o, void (*fn)(void));
/** Start fn(arg) on a new thread; 0 on success. */
int edgelock_port_thread_start(edgelock_port_thread *t, void (*fn)(void *), void *arg);
void edgelock_port_thread_join(edgelock_port_thread *t);

#ifdef __cplusplus
}
#endif

#define EDGELOCK_ASSERT(expr) ((expr) ? (void)0 : edgelock_port_assert_fail(#expr, __FILE__, __LINE__))

#endif /* EDGELOCK_PORT_H */
