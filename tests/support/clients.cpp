// SPDX-License-Identifier: BSD-3-Clause
#include "clients.hpp"

#include "redis_server.hpp"

#include <stdio.h>
#include <string.h>

edgelock_client *make_client(const char *url, void (*tweak)(edgelock_config *))
{
    edgelock_config cfg;
    edgelock_config_init(&cfg);
    cfg.url = url;
    if (tweak)
        tweak(&cfg);
    edgelock_client *c = nullptr;
    edgelock_status st = edgelock_client_create(&cfg, nullptr, &c);
    if (st != EDGELOCK_OK)
        fprintf(stderr, "client_create: %s\n", edgelock_status_str(st));
    return c;
}

edgelock_lock make_lock(edgelock_client *c, const char *name)
{
    edgelock_lock lk = {0};
    edgelock_status st = edgelock_lock_new(c, name, strlen(name), &lk);
    if (st != EDGELOCK_OK)
        fprintf(stderr, "lock_new(%s): %s\n", name, edgelock_status_str(st));
    return lk;
}

bool tables_idle(edgelock_client *c)
{
    edgelock_stats s;
    bool idle = false;
    // The unlock latch DEL (and an UNSUBSCRIBE confirmation) may still be in
    // flight right after the last call returned: allow them a moment.
    for (int i = 0; i < 200 && !idle; i++) {
        if (i)
            sleep_ms(10);
        if (edgelock_client_stats(c, &s) != EDGELOCK_OK)
            return false;
        idle = s.holds == 0 && s.waiters == 0 && s.subscriptions == 0 && s.commands == 0;
    }
    if (!idle)
        fprintf(stderr, "  tables not idle: holds %u waiters %u subs %u commands %u\n", s.holds, s.waiters,
                s.subscriptions, s.commands);
    return idle;
}

edgelock_stats stats_of(edgelock_client *c)
{
    edgelock_stats s;
    memset(&s, 0, sizeof(s));
    if (edgelock_client_stats(c, &s) != EDGELOCK_OK)
        fprintf(stderr, "  client_stats failed\n");
    return s;
}
