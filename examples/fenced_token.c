// SPDX-License-Identifier: BSD-3-Clause
/*
 * Fencing tokens: the defence against a lock holder that was paused past its
 * lease.
 *
 * The problem. A lock in Redis has a lease: if its holder stops answering,
 * the lock expires and someone else may take it. But "stops answering" is not
 * "stops running". A gateway whose CPU was held up (a long flash erase with
 * interrupts off, a watchdog-less RTOS task starved, a VM frozen, SIGSTOP, a
 * link down for longer than the lease) wakes up still believing it holds the
 * lock, and carries on writing. By then another gateway holds the lock and has
 * written too; the late write silently destroys its work. No lock can prevent
 * this on its own: the paused holder cannot know it was paused.
 *
 * The defence. A fenced lock (Redisson's RFencedLock, EDGELOCK_FENCED) hands
 * out a token with every acquire, one higher each time. The holder sends the
 * token along with every write, and the protected resource remembers the
 * highest token it has seen and refuses anything lower. The late write of the
 * paused holder carries an old token: refused.
 *
 * This program plays it out with two gateways (two threads, each with its own
 * edgelock client, as two devices would have) and a "storage" in Redis that
 * checks tokens atomically (a Lua script: check and write in one step, as the
 * resource must do it; a check followed by a separate write would reopen the
 * race). In your system the storage is whatever the lock protects: a config
 * service, a database row with a token column, a device that accepts commands.
 *
 *   time   gateway A                        gateway B
 *   0      lock -> token N, lease 300 ms
 *          write "A v1" (N)   accepted
 *          ... paused (800 ms) ...
 *   300    (lease expired in Redis)         lock -> token N+1
 *                                           write "B v1" (N+1)  accepted
 *   800    wakes, write "A v2" (N)  REFUSED: N < N+1
 *
 * It exits 0 when the stale write was refused and B's data survived, 1 if not.
 *
 * Run: EDGELOCK_URL=redis://127.0.0.1:6379 ./example_fenced_token
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <edgelock/edgelock.h>
#include <hiredis/hiredis.h>

#define LOCK_NAME "example:fenced-config"
#define LEASE_A_MS 300 /* gateway A's lease, */
#define PAUSE_A_MS 800 /* and how long it stalls while "holding" the lock */
#define WAIT_B_MS 5000 /* how long gateway B is willing to wait for it */

static const char *url;
static char redis_host[256] = "127.0.0.1";
static int redis_port = 6379;

/* ------------------------------------------------ the protected resource -- */

/* The storage's write: accepted only when the token is at least the highest
 * seen so far (the same holder may write several times with its token). The
 * check and the write happen in one Lua script, so nothing can slip between. */
static const char storage_script[] = "local seen = tonumber(redis.call('get', KEYS[1]) or '0') "
                                     "local token = tonumber(ARGV[1]) "
                                     "if token < seen then return 0 end "
                                     "redis.call('set', KEYS[1], token) "
                                     "redis.call('set', KEYS[2], ARGV[2]) "
                                     "return 1";

/* 1 accepted, 0 refused (stale token), -1 storage unreachable. */
static int storage_write(redisContext *redis, int64_t token, const char *data)
{
    redisReply *r = redisCommand(redis, "EVAL %s 2 example:fenced:max-token example:fenced:data %lld %s",
                                 storage_script, (long long)token, data);
    int result = r && r->type == REDIS_REPLY_INTEGER ? (int)r->integer : -1;
    if (r)
        freeReplyObject(r);
    return result;
}

/* --------------------------------------------------------- the gateways -- */

/* What happened, for the verdict at the end. */
static struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int a_holds;   /* A has the lock: B may start */
    int b_written; /* B has written: A may "wake up" (see gateway_a) */
    int64_t token_a, token_b;
    int a_first_write, a_late_write, b_write; /* storage_write() results */
} demo = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, 0, 0, -1, -1, -1};

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static uint64_t t0;

/* One gateway's own edgelock client and its handle on the fenced lock. */
static int gateway_open(edgelock_client **client, edgelock_lock *lock)
{
    edgelock_config cfg;
    edgelock_config_init(&cfg);
    cfg.url = url;
    if (edgelock_client_create(&cfg, NULL, client) != EDGELOCK_OK)
        return -1;
    if (edgelock_lock_new_kind(*client, EDGELOCK_FENCED, LOCK_NAME, strlen(LOCK_NAME), lock) != EDGELOCK_OK) {
        edgelock_client_destroy(*client);
        return -1;
    }
    return 0;
}

static void *gateway_a(void *arg)
{
    (void)arg;
    edgelock_client *client;
    edgelock_lock lock;
    redisContext *redis = redisConnect(redis_host, redis_port);
    if (!redis || redis->err || gateway_open(&client, &lock) != 0) {
        fprintf(stderr, "gateway A: cannot connect\n");
        exit(1);
    }

    /* A fixed lease, no watchdog: the watchdog runs on the client's own thread,
     * so in this demo it would keep renewing while gateway A "pauses". A real
     * pause (the whole device stalled, or its link to Redis down) stops the
     * watchdog too; a fixed lease shows that case in one process. */
    int64_t token = 0;
    edgelock_status st = edgelock_try_lock_token(client, lock, 0, LEASE_A_MS, &token);
    if (st != EDGELOCK_OK) {
        fprintf(stderr, "gateway A: lock: %s\n", edgelock_status_str(st));
        exit(1);
    }
    printf("%5llu ms  A: got the lock, token %lld, lease %d ms\n", (unsigned long long)(now_ms() - t0),
           (long long)token, LEASE_A_MS);
    int w = storage_write(redis, token, "A v1");
    printf("%5llu ms  A: write \"A v1\" with token %lld -> %s\n", (unsigned long long)(now_ms() - t0),
           (long long)token, w == 1 ? "accepted" : "REFUSED");

    pthread_mutex_lock(&demo.mu);
    demo.token_a = token;
    demo.a_first_write = w;
    demo.a_holds = 1;
    pthread_cond_broadcast(&demo.cv);
    pthread_mutex_unlock(&demo.mu);

    /* The pause. Gateway A does nothing for PAUSE_A_MS, well past its lease.
     * (So that the story comes out the same on a slow, loaded machine, the
     * pause also lasts until gateway B has written.) */
    printf("%5llu ms  A: ... paused for %d ms (flash erase, frozen VM, link down) ...\n",
           (unsigned long long)(now_ms() - t0), PAUSE_A_MS);
    sleep_ms(PAUSE_A_MS);
    pthread_mutex_lock(&demo.mu);
    while (!demo.b_written)
        pthread_cond_wait(&demo.cv, &demo.mu);
    pthread_mutex_unlock(&demo.mu);

    /* A wakes up and, believing it still holds the lock, writes. Its token is
     * stale: the storage has since seen B's higher one. */
    w = storage_write(redis, token, "A v2 (late)");
    printf("%5llu ms  A: woke up, write \"A v2 (late)\" with token %lld -> %s\n",
           (unsigned long long)(now_ms() - t0), (long long)token,
           w == 1 ? "accepted (B's data is lost!)" : "REFUSED: stale token");
    demo.a_late_write = w;

    /* Its unlock tells it too, but only now, after the fact: the lock expired
     * long ago (LOST; or NOT_OWNER if no trace of the hold is left). */
    st = edgelock_unlock(client, lock, NULL);
    printf("%5llu ms  A: unlock -> %s\n", (unsigned long long)(now_ms() - t0), edgelock_status_str(st));

    edgelock_lock_free(client, lock);
    edgelock_client_destroy(client);
    redisFree(redis);
    return NULL;
}

static void *gateway_b(void *arg)
{
    (void)arg;
    edgelock_client *client;
    edgelock_lock lock;
    redisContext *redis = redisConnect(redis_host, redis_port);
    if (!redis || redis->err || gateway_open(&client, &lock) != 0) {
        fprintf(stderr, "gateway B: cannot connect\n");
        exit(1);
    }
    pthread_mutex_lock(&demo.mu);
    while (!demo.a_holds)
        pthread_cond_wait(&demo.cv, &demo.mu);
    pthread_mutex_unlock(&demo.mu);

    /* B waits for the lock; it gets it when A's lease runs out in Redis. */
    int64_t token = 0;
    edgelock_status st = edgelock_try_lock_token(client, lock, WAIT_B_MS, EDGELOCK_LEASE_WATCHDOG, &token);
    if (st != EDGELOCK_OK) {
        fprintf(stderr, "gateway B: lock: %s\n", edgelock_status_str(st));
        exit(1);
    }
    printf("%5llu ms  B: got the lock (A's lease ran out), token %lld\n", (unsigned long long)(now_ms() - t0),
           (long long)token);
    int w = storage_write(redis, token, "B v1");
    printf("%5llu ms  B: write \"B v1\" with token %lld -> %s\n", (unsigned long long)(now_ms() - t0),
           (long long)token, w == 1 ? "accepted" : "REFUSED");
    st = edgelock_unlock(client, lock, NULL);
    printf("%5llu ms  B: unlock -> %s\n", (unsigned long long)(now_ms() - t0), edgelock_status_str(st));

    pthread_mutex_lock(&demo.mu);
    demo.token_b = token;
    demo.b_write = w;
    demo.b_written = 1;
    pthread_cond_broadcast(&demo.cv);
    pthread_mutex_unlock(&demo.mu);

    edgelock_lock_free(client, lock);
    edgelock_client_destroy(client);
    redisFree(redis);
    return NULL;
}

int main(void)
{
    url = getenv("EDGELOCK_URL");
    if (!url)
        url = "redis://127.0.0.1:6379";
    /* The storage is reached with plain hiredis: host and port from the URL
     * (this example does not handle credentials). */
    sscanf(url, "redis://%255[^:/]:%d", redis_host, &redis_port);

    redisContext *redis = redisConnect(redis_host, redis_port);
    if (!redis || redis->err) {
        fprintf(stderr, "cannot reach Redis at %s\n", url);
        return 1;
    }
    /* A fresh storage. (The lock's token counter, redisson_lock_token:{name},
     * is left alone: tokens only ever grow, across runs too.) */
    freeReplyObject(redisCommand(redis, "DEL example:fenced:max-token example:fenced:data"));

    t0 = now_ms();
    pthread_t a, b;
    pthread_create(&a, NULL, gateway_a, NULL);
    pthread_create(&b, NULL, gateway_b, NULL);
    pthread_join(a, NULL);
    pthread_join(b, NULL);

    redisReply *r = redisCommand(redis, "GET example:fenced:data");
    char data[64] = "";
    if (r && r->type == REDIS_REPLY_STRING)
        snprintf(data, sizeof(data), "%s", r->str);
    if (r)
        freeReplyObject(r);
    redisFree(redis);

    printf("storage holds \"%s\"\n", data);
    int ok = demo.token_b > demo.token_a && demo.a_first_write == 1 && demo.b_write == 1 &&
             demo.a_late_write == 0 && strcmp(data, "B v1") == 0;
    if (ok)
        printf("OK: token %lld > %lld, the paused holder's late write was refused, B's data survived\n",
               (long long)demo.token_b, (long long)demo.token_a);
    else
        printf("FAILED: the stale write was not refused as it should have been\n");
    return ok ? 0 : 1;
}
