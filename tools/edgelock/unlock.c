// SPDX-License-Identifier: BSD-3-Clause
/*
 * `edgelock unlock --force NAME`: Redisson's forceUnlock(): delete the lock
 * whoever holds it and publish the unlock message, so waiters wake at once.
 * A key that is not a lock is refused (exit 76) and left alone.
 */
#include <stdio.h>
#include <string.h>

#include "common.h"
#include "deadline.h"
#include "escape.h"

/* The deadline of `unlock --force`: the type check and the delete, a whole
 * command timeout each. */
#define UNLOCK_CALLS 2u

int cmd_unlock(const struct options *o, const char *name)
{
    edgelock_client *c;
    edgelock_lock lk;
    char label[600], what[1200];
    lock_label(label, sizeof(label), name);
    snprintf(what, sizeof(what), "force-unlocking %s at %s", label, o->shown_url);
    int rc = deadline_start(UNLOCK_CALLS, command_timeout_for(REDIS_TIMEOUT_MS), what,
                            "Redis did not answer in time; the lock may or may not have been deleted "
                            "('edgelock status NAME' tells)",
                            EXIT_UNAVAILABLE);
    if (rc)
        return rc;
    rc = make_client(o, name, &c, &lk);
    if (rc) {
        deadline_stop();
        return rc;
    }
    /* Force unlock deletes the key whatever it holds: look at its type first
     * and refuse a key that is not a lock. */
    edgelock_lock_info info;
    memset(&info, 0, sizeof(info));
    edgelock_status st = edgelock_lock_info_get(c, lk, &info);
    if (st == EDGELOCK_OK && info.state == EDGELOCK_LOCK_WRONG_TYPE) {
        deadline_stop();
        edgelock_client_destroy(c);
        msg("%s holds a Redis value that is not a lock; not deleted", label);
        return EXIT_REMOTE;
    }
    int deleted = 0;
    int in_time = 1;
    if (st == EDGELOCK_OK) {
        in_time = deadline_room();
        if (in_time)
            st = edgelock_force_unlock(c, lk, &deleted);
    }
    deadline_stop();
    edgelock_client_destroy(c);
    if (!in_time) {
        msg("Redis at %s answered too slowly to force-unlock %s in time; nothing was deleted", o->shown_url,
            label);
        return EXIT_UNAVAILABLE;
    }
    if (st != EDGELOCK_OK)
        return report_failure(o->shown_url, "force-unlocking", label, st);
    put_text(stdout, name, strlen(name));
    printf(": %s\n", deleted ? "force-unlocked (waiters notified)" : "was not held");
    return 0;
}
