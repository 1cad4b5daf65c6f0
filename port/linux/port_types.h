// SPDX-License-Identifier: BSD-3-Clause
/* Linux port: the OS object types behind port.h. */
#ifndef EDGELOCK_PORT_TYPES_H
#define EDGELOCK_PORT_TYPES_H

#include <pthread.h>
#include <signal.h>

typedef pthread_mutex_t edgelock_port_mutex;
typedef pthread_once_t edgelock_port_once;
#define EDGELOCK_PORT_ONCE_INIT PTHREAD_ONCE_INIT
typedef pthread_cond_t edgelock_port_cond;
typedef struct edgelock_port_alarm {
    int fd; /* a timerfd */
} edgelock_port_alarm;
typedef struct edgelock_port_thread {
    pthread_t handle;
    void (*fn)(void *);
    void *arg;
} edgelock_port_thread;
typedef struct edgelock_port_sigpipe {
    sigset_t saved; /* the thread's mask before */
    int blocked;    /* this guard blocked SIGPIPE (it was not blocked before) */
} edgelock_port_sigpipe;

#endif /* EDGELOCK_PORT_TYPES_H */
