// SPDX-License-Identifier: BSD-3-Clause
/*
 * A C99 consumer of the public header, built with -std=c99 -pedantic -Werror
 * and linked by the C compiler without the C++ runtime: it shows the header is
 * plain C and that libedgelock.a needs neither libstdc++ nor exception support.
 *
 * Usage: consumer [redis://host:port]   (else $EDGELOCK_REDIS_URL, else the default)
 * Prints one line and exits 0 when lock, re-entry, unlock and the queries work,
 * and when values C may pass outside the enums' ranges are refused or named.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "edgelock/edgelock.h"

static int fail(const char *what, edgelock_status st)
{
    printf("c99 consumer: %s failed: %s\n", what, edgelock_status_str(st));
    return 1;
}

int main(int argc, char **argv)
{
    edgelock_config cfg;
    edgelock_client *client = NULL;
    edgelock_lock lock;
    edgelock_status st;
    const char *url = argc > 1 ? argv[1] : getenv("EDGELOCK_REDIS_URL");
    static const char name[] = "c99-consumer";
    int released = -1, locked = -1;
    int64_t count = -1;
    int rc = 0;

    edgelock_config_init(&cfg);
    if (url != NULL)
        cfg.url = url;
    cfg.client_id = "c99-consumer";
    st = edgelock_client_create(&cfg, NULL, &client);
    if (st != EDGELOCK_OK)
        return fail("client_create", st);
    st = edgelock_lock_new(client, name, strlen(name), &lock);
    if (st != EDGELOCK_OK) {
        edgelock_client_destroy(client);
        return fail("lock_new", st);
    }

    if ((st = edgelock_try_lock(client, lock, 5000, 10000)) != EDGELOCK_OK)
        rc = fail("try_lock", st);
    else if ((st = edgelock_acquire(client, lock)) != EDGELOCK_OK)
        rc = fail("acquire (re-entry)", st);
    else if ((st = edgelock_hold_count(client, lock, &count)) != EDGELOCK_OK || count != 2)
        rc = fail("hold_count", st);
    else if ((st = edgelock_unlock(client, lock, &released)) != EDGELOCK_OK || released != 0)
        rc = fail("first unlock", st);
    else if ((st = edgelock_unlock(client, lock, &released)) != EDGELOCK_OK || released != 1)
        rc = fail("second unlock", st);
    else if ((st = edgelock_is_locked(client, lock, &locked)) != EDGELOCK_OK || locked != 0)
        rc = fail("is_locked", st);
    else if ((st = edgelock_lock_free(client, lock)) != EDGELOCK_OK)
        rc = fail("lock_free", st);

    if (rc == 0) {
        /* C converts any int to an enum: the library must refuse it, not
         * load it as its C++ enum (undefined; UBSan watches in CI). */
        static const int bad_kinds[] = {8, 99, -1};
        edgelock_lock bad;
        size_t i;
        for (i = 0; i < sizeof(bad_kinds) / sizeof(bad_kinds[0]) && rc == 0; i++)
            if ((st = edgelock_lock_new_kind(client, (edgelock_lock_kind)bad_kinds[i], name, strlen(name),
                                             &bad)) != EDGELOCK_ERR_INVALID_ARG)
                rc = fail("lock_new_kind with a kind out of range", st);
        if (rc == 0 && strcmp(edgelock_status_str((edgelock_status)-1000), "unknown status") != 0)
            rc = fail("status_str of a status out of range", EDGELOCK_OK);
    }
    if (rc == 0) {
        /* The semaphore and latch calls, from C. */
        static const char sem_name[] = "c99-consumer-sem", latch_name[] = "c99-consumer-latch";
        edgelock_lock sem, latch;
        char id[33];
        int set = 0;
        int64_t left = -1;
        if ((st = edgelock_lock_new_kind(client, EDGELOCK_PERMIT_SEMAPHORE, sem_name, strlen(sem_name),
                                         &sem)) != EDGELOCK_OK ||
            (st = edgelock_semaphore_try_set_permits(client, sem, 1, &set)) != EDGELOCK_OK ||
            (st = edgelock_semaphore_try_acquire(client, sem, 1, 0, EDGELOCK_LEASE_WATCHDOG)) !=
                EDGELOCK_OK ||
            (st = edgelock_permit_id(client, sem, edgelock_current_owner(), 0, id)) != EDGELOCK_OK ||
            strlen(id) != 32 || (st = edgelock_unlock(client, sem, NULL)) != EDGELOCK_OK ||
            (st = edgelock_lock_free(client, sem)) != EDGELOCK_OK)
            rc = fail("semaphore", st);
        else if ((st = edgelock_lock_new_kind(client, EDGELOCK_LATCH, latch_name, strlen(latch_name),
                                              &latch)) != EDGELOCK_OK ||
                 (st = edgelock_latch_try_set_count(client, latch, 1, &set)) != EDGELOCK_OK ||
                 (st = edgelock_latch_count_down(client, latch, &left)) != EDGELOCK_OK || left != 0 ||
                 (st = edgelock_latch_await(client, latch, 0)) != EDGELOCK_OK ||
                 (st = edgelock_lock_free(client, latch)) != EDGELOCK_OK)
            rc = fail("latch", st);
    }
    if (rc == 0)
        printf("c99 consumer: locked, re-entered (count %lld), unlocked (released %d): ok\n",
               (long long)count, released);
    edgelock_client_destroy(client);
    return rc;
}
