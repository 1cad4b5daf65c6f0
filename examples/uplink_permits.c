// SPDX-License-Identifier: BSD-3-Clause
/*
 * At most N downloads over the site uplink, and "start when every gateway is
 * ready": an expirable semaphore and a countdown latch, as a Java service
 * would use Redisson's RPermitExpirableSemaphore and RCountDownLatch on the
 * same Redis (docs/SEMAPHORES.md).
 *
 * Six "gateways" (threads, each with a client of its own, as separate devices
 * would have) first count down the latch "site-42:ready" and wait for it to
 * open, so that none starts before all are up. Then each downloads while
 * holding one permit of the semaphore "site-42:uplink" (2 permits). The
 * permits are taken under the watchdog: a gateway that loses power mid-
 * download gives its permit back one watchdog lease later, instead of leaking
 * it forever as a plain semaphore would.
 *
 * The program checks what it promises: never more than 2 downloads at once,
 * and nobody started before the latch opened.
 *
 * Run: EDGELOCK_URL=redis://127.0.0.1:6379 ./example_uplink_permits
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <edgelock/edgelock.h>

#define GATEWAYS 6
#define PERMITS 2

static const char *url;
static atomic_int ready;       /* gateways past their count-down */
static atomic_int downloading; /* downloads running now */
static atomic_int most;        /* the most ever running at once */
static atomic_int early;       /* gateways that got past the latch before all counted down */
static atomic_int failures;

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static int check(edgelock_status st, const char *what)
{
    if (st == EDGELOCK_OK)
        return 1;
    fprintf(stderr, "%s: %s\n", what, edgelock_status_str(st));
    atomic_fetch_add(&failures, 1);
    return 0;
}

static void *gateway(void *arg)
{
    int id = (int)(long)arg;
    edgelock_config cfg;
    edgelock_config_init(&cfg);
    cfg.url = url;
    edgelock_client *c = NULL;
    if (!check(edgelock_client_create(&cfg, NULL, &c), "client_create"))
        return NULL;
    edgelock_lock boot, uplink;
    check(edgelock_lock_new_kind(c, EDGELOCK_LATCH, "site-42:ready", 13, &boot), "latch handle");
    check(edgelock_lock_new_kind(c, EDGELOCK_PERMIT_SEMAPHORE, "site-42:uplink", 14, &uplink),
          "semaphore handle");

    /* The first gateway up sizes the semaphore; the others find it sized. */
    check(edgelock_semaphore_try_set_permits(c, uplink, PERMITS, NULL), "try_set_permits");

    /* Ready: count down, then wait until every gateway has. */
    atomic_fetch_add(&ready, 1);
    check(edgelock_latch_count_down(c, boot, NULL), "count_down");
    if (check(edgelock_latch_await(c, boot, 60000), "await") && atomic_load(&ready) < GATEWAYS)
        atomic_fetch_add(&early, 1);

    /* Download holding a permit; wait up to a minute for one. */
    if (check(edgelock_try_lock(c, uplink, 60000, EDGELOCK_LEASE_WATCHDOG), "take a permit")) {
        char permit[33];
        edgelock_permit_id(c, uplink, edgelock_current_owner(), 0, permit);
        int now = atomic_fetch_add(&downloading, 1) + 1;
        for (int m = atomic_load(&most); now > m && !atomic_compare_exchange_weak(&most, &m, now);)
            ;
        printf("gateway %d downloading (permit %.8s..., %d at once)\n", id, permit, now);
        sleep_ms(50 + 10 * id); /* the download */
        atomic_fetch_sub(&downloading, 1);
        check(edgelock_unlock(c, uplink, NULL), "give the permit back");
    }
    edgelock_lock_free(c, boot);
    edgelock_lock_free(c, uplink);
    edgelock_client_destroy(c);
    return NULL;
}

int main(void)
{
    url = getenv("EDGELOCK_URL");
    if (!url)
        url = "redis://127.0.0.1:6379";

    /* Set the latch before any gateway counts down (a site controller's job). */
    edgelock_config cfg;
    edgelock_config_init(&cfg);
    cfg.url = url;
    edgelock_client *c = NULL;
    if (!check(edgelock_client_create(&cfg, NULL, &c), "client_create"))
        return 1;
    edgelock_lock boot;
    int set = 0;
    check(edgelock_lock_new_kind(c, EDGELOCK_LATCH, "site-42:ready", 13, &boot), "latch handle");
    check(edgelock_latch_try_set_count(c, boot, GATEWAYS, &set), "try_set_count");

    pthread_t t[GATEWAYS];
    for (long i = 0; i < GATEWAYS; i++)
        pthread_create(&t[i], NULL, gateway, (void *)i);
    for (int i = 0; i < GATEWAYS; i++)
        pthread_join(t[i], NULL);

    edgelock_lock uplink;
    edgelock_semaphore_info info;
    check(edgelock_lock_new_kind(c, EDGELOCK_PERMIT_SEMAPHORE, "site-42:uplink", 14, &uplink), "handle");
    check(edgelock_semaphore_info_get(c, uplink, &info), "semaphore_info");
    edgelock_lock_free(c, boot);
    edgelock_lock_free(c, uplink);
    edgelock_client_destroy(c);

    printf("most downloads at once: %d (permits %d); started before all were ready: %d; permits free "
           "after: %lld\n",
           atomic_load(&most), PERMITS, atomic_load(&early), (long long)info.available);
    if (!set || atomic_load(&failures) || atomic_load(&most) > PERMITS || atomic_load(&early) ||
        info.available != PERMITS) {
        fprintf(stderr, "FAILED\n");
        return 1;
    }
    puts("ok");
    return 0;
}
