// SPDX-License-Identifier: BSD-3-Clause
/* The token epoch from the lock Redis's run_id (epoch.h). */
#include <stdio.h>
#include <string.h>

#include "epoch.h"

static int read_run_id(struct epoch_state *s, char *out)
{
    struct resp_reply r;
    if (resp_callv(s->lock_redis, &r, "INFO", "server", NULL) != 0 ||
        resp_info_field(&r, "run_id", out, RUN_ID_BYTES) != 0)
        return -1;
    return 0;
}

enum epoch_result epoch_before(struct epoch_state *s, char *run_id, int64_t *epoch)
{
    if (s->disabled) {
        *epoch = 0;
        run_id[0] = '\0';
        return EPOCH_OK;
    }
    if (read_run_id(s, run_id) != 0)
        return EPOCH_READ_FAILED;
    if (strcmp(run_id, s->confirmed) == 0) {
        *epoch = s->confirmed_epoch;
        return EPOCH_OK;
    }
    int64_t e;
    if (store_epoch(s->store, s->scripts, run_id, &e) != 0)
        return EPOCH_STORE_FAILED;
    char again[RUN_ID_BYTES];
    if (read_run_id(s, again) != 0)
        return EPOCH_READ_FAILED;
    if (strcmp(again, run_id) != 0)
        return EPOCH_CHANGED;
    /* run_id was alive after its registration: no later server has been
     * registered before it, so the floor may rise to its epoch. */
    if (store_raise_floor(s->store, s->scripts, e) != 0)
        return EPOCH_STORE_FAILED;
    snprintf(s->confirmed, sizeof(s->confirmed), "%s", run_id);
    s->confirmed_epoch = e;
    *epoch = e;
    return EPOCH_OK;
}

enum epoch_result epoch_after(struct epoch_state *s, const char *run_id)
{
    if (s->disabled)
        return EPOCH_OK;
    char now[RUN_ID_BYTES];
    if (read_run_id(s, now) != 0)
        return EPOCH_READ_FAILED;
    return strcmp(now, run_id) == 0 ? EPOCH_OK : EPOCH_CHANGED;
}
