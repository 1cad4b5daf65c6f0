// SPDX-License-Identifier: BSD-3-Clause
/*
 * Blocking API from several threads.
 *
 * Four worker threads share ONE edgelock client. Created with base == NULL, the
 * client runs its own event loop on a thread of its own, and the blocking
 * calls (edgelock_try_lock, edgelock_unlock, ...) may be made from any number
 * of threads at once. As in Redisson, the owner of a lock taken by a blocking
 * call is the calling thread: another thread of the same process waits for it
 * like a remote process would.
 *
 * The protected resource is a counter in Redis, updated with a deliberately
 * racy read-modify-write (GET, think, SET). Without the lock, updates get lost;
 * with it, the final count is exact.
 *
 * Run: EDGELOCK_URL=redis://127.0.0.1:6379 ./example_blocking_threads
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <edgelock/edgelock.h>
#include <hiredis/hiredis.h>

#define THREADS 4
#define ROUNDS 25

static edgelock_client *client; /* shared by every thread */
static edgelock_lock counter_lock;
static char redis_host[256] = "127.0.0.1";
static int redis_port = 6379;

static void sleep_us(long us)
{
    struct timespec ts = {0, us * 1000};
    nanosleep(&ts, NULL);
}

/* The critical section: a read-modify-write on the counter. It takes the lock
 * a second time on purpose, to show that the lock is reentrant: the same thread
 * may take it again, and must unlock as many times. */
static int add_one(redisContext *redis)
{
    edgelock_status st =
        edgelock_try_lock(client, counter_lock, EDGELOCK_WAIT_FOREVER, EDGELOCK_LEASE_WATCHDOG);
    if (st != EDGELOCK_OK)
        return -1;
    int64_t holds = 0;
    edgelock_hold_count(client, counter_lock, &holds); /* 2: the caller's hold and this one */

    redisReply *r = redisCommand(redis, "GET example:counter");
    long n = r && r->type == REDIS_REPLY_STRING ? atol(r->str) : 0;
    if (r)
        freeReplyObject(r);
    sleep_us(200); /* the race window: another writer would slip in here */
    r = redisCommand(redis, "SET example:counter %ld", n + 1);
    if (r)
        freeReplyObject(r);

    edgelock_unlock(client, counter_lock, NULL);
    return holds == 2 ? 0 : -1;
}

static void *worker(void *arg)
{
    long failures = 0;
    (void)arg;
    /* hiredis contexts are not thread-safe: one per thread. */
    redisContext *redis = redisConnect(redis_host, redis_port);
    if (!redis || redis->err)
        return (void *)1;

    for (int i = 0; i < ROUNDS; i++) {
        /* Wait at most 10 s for the lock; the watchdog keeps it while we hold it. */
        edgelock_status st = edgelock_try_lock(client, counter_lock, 10000, EDGELOCK_LEASE_WATCHDOG);
        if (st != EDGELOCK_OK) {
            fprintf(stderr, "lock: %s\n", edgelock_status_str(st));
            failures++;
            continue;
        }
        if (add_one(redis) != 0)
            failures++;
        int released = 0;
        st = edgelock_unlock(client, counter_lock, &released);
        if (st != EDGELOCK_OK || !released)
            failures++; /* released: the last hold is gone */
    }
    redisFree(redis);
    return (void *)failures;
}

int main(void)
{
    const char *url = getenv("EDGELOCK_URL");
    if (!url)
        url = "redis://127.0.0.1:6379";
    /* The counter is read with plain hiredis: host and port from the URL
     * (this example does not handle credentials). */
    sscanf(url, "redis://%255[^:/]:%d", redis_host, &redis_port);

    edgelock_config cfg;
    edgelock_config_init(&cfg);
    cfg.url = url;
    if (edgelock_client_create(&cfg, NULL, &client) != EDGELOCK_OK)
        return 1;
    edgelock_lock_new(client, "example:counter-lock", 20, &counter_lock);

    redisContext *redis = redisConnect(redis_host, redis_port);
    if (!redis || redis->err)
        return 1;
    freeReplyObject(redisCommand(redis, "SET example:counter 0"));

    pthread_t threads[THREADS];
    for (int i = 0; i < THREADS; i++)
        pthread_create(&threads[i], NULL, worker, NULL);
    long failures = 0;
    for (int i = 0; i < THREADS; i++) {
        void *ret;
        pthread_join(threads[i], &ret);
        failures += (long)ret;
    }

    redisReply *r = redisCommand(redis, "GET example:counter");
    long count = r && r->type == REDIS_REPLY_STRING ? atol(r->str) : -1;
    if (r)
        freeReplyObject(r);
    redisFree(redis);

    edgelock_lock_free(client, counter_lock);
    edgelock_client_destroy(client);

    printf("%d threads x %d increments: counter = %ld (want %d), %ld failed calls\n", THREADS, ROUNDS, count,
           THREADS * ROUNDS, failures);
    return count == THREADS * ROUNDS && failures == 0 ? 0 : 1;
}
