// SPDX-License-Identifier: BSD-3-Clause
/* What the lock Redis keeps once every worker has left (report.h's leftovers). */
#ifndef EDGELOCK_CHAOS_KEYS_H
#define EDGELOCK_CHAOS_KEYS_H

#include "report.h"
#include "resp.h"

/* Walks the lock Redis's keys with SCAN and sorts them out. */
void keys_left(struct resp_conn *lock_redis, const char *const *lock_names, int nlocks,
               struct leftovers *out);

#endif
