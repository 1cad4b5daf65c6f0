/*
 * `edgelock unlock --force NAME`: Redisson's forceUnlock(): delete the lock
 * whoever holds it and publish the unlock message, so waiters wake at once.
 * A key that is not a lock is refused (exit 76) and left alone.
 */
#include <stdio.h>
#include <string.h>

#include "common.h"

int cmd_unlock(const struct options *o, const char *name)
{
    edgelock_client *c;
    edgelock_lock lk;
    int rc = make_client(o, name, &c, &lk);
    if (rc)
        return rc;
    /* Force unlock deletes the key whatever it holds: look at its type first
     * and refuse a key that is not a lock. */
    edgelock_lock_info info;
    memset(&info, 0, sizeof(info));
    edgelock_status st = edgelock_lock_info_get(c, lk, &info);
    if (st == EDGELOCK_OK && info.state == EDGELOCK_LOCK_WRONG_TYPE) {
        edgelock_client_destroy(c);
        msg("'%s' holds a Redis value that is not a lock; not deleted", name);
        return EXIT_REMOTE;
    }
    int deleted = 0;
    if (st == EDGELOCK_OK)
        st = edgelock_force_unlock(c, lk, &deleted);
    edgelock_client_destroy(c);
    if (st != EDGELOCK_OK) {
        char label[600];
        lock_label(label, sizeof(label), name);
        return report_failure(o->shown_url, "force-unlocking", label, st);
    }
    printf("%s: %s\n", name, deleted ? "force-unlocked (waiters notified)" : "was not held");
    return 0;
}
