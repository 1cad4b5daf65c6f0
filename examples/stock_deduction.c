// SPDX-License-Identifier: BSD-3-Clause
/*
 * Stock deduction: one lock versus segmented locks.
 *
 * Several gateways (here: threads, each with its own edgelock client, as
 * separate devices would have) sell from one stock kept in Redis. Every sale is
 * a read-modify-write (GET, process the order, SET), so it needs a lock.
 *
 * 1. One lock: the stock is one key, guarded by one lock. Correct, but every
 *    sale in the whole fleet waits for every other one.
 * 2. Segmented locks: the stock is split over SEGMENTS keys, each with its own
 *    lock, and each gateway sells from its "home" segment. Sales on different
 *    segments run in parallel. When the home segment runs short of an order,
 *    the gateway merges: it takes the locks of ALL segments, in index order (a
 *    fixed order, so two merging gateways cannot deadlock), deducts the order
 *    across them, and moves its home to the fullest segment.
 *
 * Both phases must end with no oversell: stock 0, units sold == initial stock.
 * The throughput of each is printed, so the gain of the finer lock shows.
 *
 * Run: EDGELOCK_URL=redis://127.0.0.1:6379 ./example_stock_deduction
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <edgelock/edgelock.h>
#include <hiredis/hiredis.h>

#define GATEWAYS 4
#define SEGMENTS 4
#define INITIAL_STOCK 400
#define ORDER_WORK_US 1000 /* processing an order inside the lock (payment check, ...) */

static const char *url;
static char redis_host[256] = "127.0.0.1";
static int redis_port = 6379;

struct gateway {
    int id;
    int segmented;
    pthread_t thread;
    long sold, orders, merges, errors;
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void sleep_us(long us)
{
    struct timespec ts = {0, us * 1000};
    nanosleep(&ts, NULL);
}

static long get_stock(redisContext *r, const char *key)
{
    redisReply *rep = redisCommand(r, "GET %s", key);
    long v = rep && rep->type == REDIS_REPLY_STRING ? atol(rep->str) : -1;
    if (rep)
        freeReplyObject(rep);
    return v;
}

static void set_stock(redisContext *r, const char *key, long v)
{
    redisReply *rep = redisCommand(r, "SET %s %ld", key, v);
    if (rep)
        freeReplyObject(rep);
}

static void segment_key(char *buf, size_t cap, int i)
{
    snprintf(buf, cap, "example:stock:%d", i);
}

/* Phase 1: one key, one lock. Returns 0 when the stock is sold out. */
static int sell_single(struct gateway *g, edgelock_client *c, edgelock_lock lk, redisContext *r, long qty)
{
    if (edgelock_try_lock(c, lk, EDGELOCK_WAIT_FOREVER, EDGELOCK_LEASE_WATCHDOG) != EDGELOCK_OK) {
        g->errors++;
        return 1;
    }
    long stock = get_stock(r, "example:stock");
    long take = stock < qty ? stock : qty;
    if (take > 0) {
        sleep_us(ORDER_WORK_US);
        set_stock(r, "example:stock", stock - take);
        g->sold += take;
        g->orders++;
    }
    if (edgelock_unlock(c, lk, NULL) != EDGELOCK_OK)
        g->errors++;
    return stock > 0;
}

/* Phase 2: sell from the home segment; merge all segments when it runs short.
 * Returns 0 when every segment is sold out. */
static int sell_segmented(struct gateway *g, edgelock_client *c, const edgelock_lock *locks, redisContext *r,
                          long qty, int *home)
{
    char key[64];
    segment_key(key, sizeof(key), *home);
    if (edgelock_try_lock(c, locks[*home], EDGELOCK_WAIT_FOREVER, EDGELOCK_LEASE_WATCHDOG) != EDGELOCK_OK) {
        g->errors++;
        return 1;
    }
    long stock = get_stock(r, key);
    if (stock >= qty) { /* the fast path: only this segment is locked */
        sleep_us(ORDER_WORK_US);
        set_stock(r, key, stock - qty);
        g->sold += qty;
        g->orders++;
        if (edgelock_unlock(c, locks[*home], NULL) != EDGELOCK_OK)
            g->errors++;
        return 1;
    }
    if (edgelock_unlock(c, locks[*home], NULL) != EDGELOCK_OK)
        g->errors++;

    /* Merge. Locks are taken in index order by everyone: no deadlock. */
    g->merges++;
    long seg[SEGMENTS], total = 0;
    int fullest = 0;
    for (int i = 0; i < SEGMENTS; i++) {
        if (edgelock_try_lock(c, locks[i], EDGELOCK_WAIT_FOREVER, EDGELOCK_LEASE_WATCHDOG) != EDGELOCK_OK) {
            g->errors++; /* give back what we hold and try again later */
            while (--i >= 0)
                edgelock_unlock(c, locks[i], NULL);
            return 1;
        }
    }
    for (int i = 0; i < SEGMENTS; i++) {
        segment_key(key, sizeof(key), i);
        seg[i] = get_stock(r, key);
        total += seg[i];
    }
    long take = total < qty ? total : qty; /* the last order may be filled in part */
    if (take > 0) {
        sleep_us(ORDER_WORK_US);
        long left = take;
        for (int k = 0; k < SEGMENTS && left > 0; k++) {
            int i = (*home + k) % SEGMENTS; /* home first, then the others */
            long t = seg[i] < left ? seg[i] : left;
            if (t == 0)
                continue;
            seg[i] -= t;
            left -= t;
            segment_key(key, sizeof(key), i);
            set_stock(r, key, seg[i]);
        }
        g->sold += take;
        g->orders++;
    }
    for (int i = 0; i < SEGMENTS; i++)
        if (seg[i] > seg[fullest])
            fullest = i;
    *home = fullest; /* sell from where the stock is */
    for (int i = SEGMENTS - 1; i >= 0; i--)
        if (edgelock_unlock(c, locks[i], NULL) != EDGELOCK_OK)
            g->errors++;
    return total > 0;
}

static void *gateway_main(void *arg)
{
    struct gateway *g = arg;
    /* Each gateway is its own client, as separate devices would be. */
    edgelock_config cfg;
    edgelock_config_init(&cfg);
    cfg.url = url;
    edgelock_client *c;
    if (edgelock_client_create(&cfg, NULL, &c) != EDGELOCK_OK) {
        g->errors++;
        return NULL;
    }
    redisContext *r = redisConnect(redis_host, redis_port);
    if (!r || r->err) {
        g->errors++;
        edgelock_client_destroy(c);
        return NULL;
    }

    edgelock_lock single, segment[SEGMENTS];
    edgelock_lock_new(c, "example:stock-lock", strlen("example:stock-lock"), &single);
    for (int i = 0; i < SEGMENTS; i++) {
        char name[64];
        int n = snprintf(name, sizeof(name), "example:stock-lock:%d", i);
        edgelock_lock_new(c, name, (size_t)n, &segment[i]);
    }

    unsigned seed = (unsigned)g->id * 7919u + 1u;
    int home = g->id % SEGMENTS;
    for (;;) {
        long qty = 1 + rand_r(&seed) % 3; /* an order of 1 to 3 units */
        int more =
            g->segmented ? sell_segmented(g, c, segment, r, qty, &home) : sell_single(g, c, single, r, qty);
        if (!more)
            break;
    }

    edgelock_lock_free(c, single);
    for (int i = 0; i < SEGMENTS; i++)
        edgelock_lock_free(c, segment[i]);
    redisFree(r);
    edgelock_client_destroy(c);
    return NULL;
}

/* Runs one phase; returns 0 when there was no oversell. */
static int run_phase(int segmented, redisContext *r, double *orders_per_s)
{
    char key[64];
    long remaining = 0;
    if (segmented) {
        for (int i = 0; i < SEGMENTS; i++) {
            segment_key(key, sizeof(key), i);
            set_stock(r, key, INITIAL_STOCK / SEGMENTS);
        }
    } else {
        set_stock(r, "example:stock", INITIAL_STOCK);
    }

    struct gateway gw[GATEWAYS];
    memset(gw, 0, sizeof(gw));
    double t0 = now_s();
    for (int i = 0; i < GATEWAYS; i++) {
        gw[i].id = i;
        gw[i].segmented = segmented;
        pthread_create(&gw[i].thread, NULL, gateway_main, &gw[i]);
    }
    long sold = 0, orders = 0, merges = 0, errors = 0;
    for (int i = 0; i < GATEWAYS; i++) {
        pthread_join(gw[i].thread, NULL);
        sold += gw[i].sold;
        orders += gw[i].orders;
        merges += gw[i].merges;
        errors += gw[i].errors;
    }
    double secs = now_s() - t0;

    int negative = 0;
    if (segmented) {
        for (int i = 0; i < SEGMENTS; i++) {
            segment_key(key, sizeof(key), i);
            long v = get_stock(r, key);
            negative |= v < 0;
            remaining += v;
        }
    } else {
        remaining = get_stock(r, "example:stock");
    }
    *orders_per_s = (double)orders / secs;
    printf("%-22s %ld units in %ld orders, %.2f s: %.0f orders/s",
           segmented ? "segmented locks:" : "one lock:", sold, orders, secs, *orders_per_s);
    if (segmented)
        printf(" (%ld merges)", merges);
    printf("; stock left %ld\n", remaining);
    int ok = sold == INITIAL_STOCK && remaining == 0 && !negative && errors == 0;
    if (!ok)
        printf("  OVERSELL OR ERROR: sold %ld of %d, left %ld, %ld errors\n", sold, INITIAL_STOCK, remaining,
               errors);
    return ok ? 0 : 1;
}

int main(void)
{
    url = getenv("EDGELOCK_URL");
    if (!url)
        url = "redis://127.0.0.1:6379";
    sscanf(url, "redis://%255[^:/]:%d", redis_host, &redis_port); /* no credentials here */
    redisContext *r = redisConnect(redis_host, redis_port);
    if (!r || r->err) {
        fprintf(stderr, "cannot connect to Redis\n");
        return 1;
    }
    printf("%d gateways selling %d units, %d us of work per order inside the lock\n", GATEWAYS, INITIAL_STOCK,
           ORDER_WORK_US);
    double single_rate, segmented_rate;
    int bad = run_phase(0, r, &single_rate);
    bad |= run_phase(1, r, &segmented_rate);
    printf("segmented over %d keys: %.1fx the throughput of one lock\n", SEGMENTS,
           segmented_rate / single_rate);
    redisFree(r);
    return bad;
}
