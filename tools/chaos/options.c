// SPDX-License-Identifier: BSD-3-Clause
/* The checker's command line (options.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "options.h"
#include "pool.h"

#define FULL_FAULTS                                                                                          \
    "redis-stop,redis-restart,kill-normal,kill-pubsub,pause-write,freeze-wd,freeze-fixed,kill-holder-wd,"    \
    "kill-holder-fixed"
/* The ctest form: a few workers, the faults that lose no data, about 25 s. */
#define SHORT_FAULTS "kill-normal,kill-pubsub,redis-stop:2000,freeze-wd:4000"

static const char kHelp[] =
    "usage: edgelock_chaos [options]\n"
    "\n"
    "Fault-injection checker (docs/RELIABILITY.md). Starts its own lock Redis and\n"
    "store Redis (redis-server on free loopback ports, in a temporary directory),\n"
    "runs worker processes that loop acquire -> fenced writes -> release on two\n"
    "fenced locks (watchdog, fixed lease), applies the faults one window each,\n"
    "and reports per window. Exit 0 passed, 1 failed, 2 could not run, 64 usage.\n"
    "\n"
    "  --workers N            worker processes (default 8)\n"
    "  --faults LIST          comma list, in order (default all):\n"
    "                           redis-stop[:MS] redis-restart kill-normal kill-pubsub\n"
    "                           pause-write[:MS] freeze-wd[:MS] freeze-fixed[:MS]\n"
    "                           kill-holder-wd kill-holder-fixed\n"
    "  --rounds N             apply the list N times (default 1)\n"
    "  --warmup MS            before the first fault (default 5000)\n"
    "  --quiet MS             after each fault, before the next (default 8000)\n"
    "  --lease MS             watchdog lease and fixed lease (default 3000)\n"
    "  --command-timeout MS   the workers' command_timeout_ms (default 1000)\n"
    "  --wait MS              each try_lock's wait (default 2000)\n"
    "  --margin MS            write only with more than MS of the hold left (default 200)\n"
    "  --writes N             writes per hold (default 4), --gap MS between them (default 40)\n"
    "  --recovery-bound MS    fail when recovery takes longer (default 10000)\n"
    "  --exit-bound MS        time the workers have to leave after the end (default 30000)\n"
    "  --no-epoch             tokens without the epoch: shows why it is needed (fails)\n"
    "  --replica              start a replica of the lock Redis, for the fault\n"
    "                           failover[:MS] (the master alone for MS, then replaced\n"
    "                           by the replica's data on its port; default 1000)\n"
    "  --wait-replicas N      the workers' cfg.wait_replicas (0 or 1; 1 needs --replica)\n"
    "  --short                the ctest form: 3 workers, " SHORT_FAULTS ",\n"
    "                         warm-up 2000, quiet 3000\n"
    "  --keep                 keep the run's directory (it is kept anyway on failure)\n";

static int number(const char *opt, const char *s, int64_t min, int64_t max, int64_t *out)
{
    char *end;
    long long v = s ? strtoll(s, &end, 10) : 0;
    if (!s || !*s || *end || v < min || v > max) {
        fprintf(stderr, "edgelock_chaos: %s wants a number from %lld to %lld\n", opt, (long long)min,
                (long long)max);
        return -1;
    }
    *out = v;
    return 0;
}

static void defaults(struct options *o)
{
    memset(o, 0, sizeof(*o));
    o->workers = 8;
    o->faults = FULL_FAULTS;
    o->rounds = 1;
    o->warmup_ms = 5000;
    o->quiet_ms = 8000;
    o->lease_ms = 3000;
    o->command_timeout_ms = 1000;
    o->wait_ms = 2000;
    o->margin_ms = 200;
    /* Holds of about 150 ms: long enough that a holder is still writing when
     * the lock Redis comes back empty, so the data-loss window shows what the
     * fence does; short enough for hundreds of holds per window. */
    o->writes_per_hold = 4;
    o->write_gap_ms = 40;
    o->exit_bound_ms = 30000;
    o->recovery_bound_ms = 10000;
}

static int build_windows(struct options *o)
{
    memset(&o->windows[0], 0, sizeof(o->windows[0]));
    o->windows[0].kind = FAULT_NONE;
    o->windows[0].lock = -1;
    o->windows[0].applied = 1;
    o->nwindows = 1;
    for (int r = 0; r < o->rounds; r++)
        if (plan_parse(o->faults, o->windows, PLAN_MAX_WINDOWS, &o->nwindows) != 0)
            return -1;
    return 0;
}

int options_parse(int argc, char **argv, struct options *o)
{
    defaults(o);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int64_t n = 0;
        int rc = 0, takes = 1;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            fputs(kHelp, stdout);
            return 1;
        } else if (strcmp(a, "--short") == 0) {
            o->workers = 3;
            o->faults = SHORT_FAULTS;
            o->warmup_ms = 2000;
            o->quiet_ms = 3000;
            takes = 0;
        } else if (strcmp(a, "--no-epoch") == 0) {
            o->no_epoch = 1;
            takes = 0;
        } else if (strcmp(a, "--replica") == 0) {
            o->replica = 1;
            takes = 0;
        } else if (strcmp(a, "--wait-replicas") == 0) {
            rc = number(a, v, 0, 1, &n);
            o->wait_replicas = (int)n;
        } else if (strcmp(a, "--keep") == 0) {
            o->keep = 1;
            takes = 0;
        } else if (strcmp(a, "--faults") == 0) {
            if (!v)
                rc = -1;
            o->faults = v;
        } else if (strcmp(a, "--workers") == 0) {
            rc = number(a, v, 1, POOL_MAX_WORKERS, &n);
            o->workers = (int)n;
        } else if (strcmp(a, "--rounds") == 0) {
            rc = number(a, v, 1, 100, &n);
            o->rounds = (int)n;
        } else if (strcmp(a, "--writes") == 0) {
            rc = number(a, v, 1, 1000, &n);
            o->writes_per_hold = (int)n;
        } else if (strcmp(a, "--gap") == 0) {
            rc = number(a, v, 0, 10000, &n);
            o->write_gap_ms = (int)n;
        } else {
            struct {
                const char *name;
                int64_t *field, min, max;
            } ms[] = {{"--warmup", &o->warmup_ms, 0, 3600000},
                      {"--quiet", &o->quiet_ms, 0, 3600000},
                      {"--lease", &o->lease_ms, 100, 600000},
                      {"--command-timeout", &o->command_timeout_ms, 10, 600000},
                      {"--wait", &o->wait_ms, 0, 600000},
                      {"--margin", &o->margin_ms, 0, 600000},
                      {"--recovery-bound", &o->recovery_bound_ms, 1, 3600000},
                      {"--exit-bound", &o->exit_bound_ms, 1000, 3600000}};
            size_t k = 0;
            while (k < sizeof(ms) / sizeof(ms[0]) && strcmp(a, ms[k].name) != 0)
                k++;
            if (k == sizeof(ms) / sizeof(ms[0])) {
                fprintf(stderr, "edgelock_chaos: unknown option '%s' (see --help)\n", a);
                return 64;
            }
            rc = number(a, v, ms[k].min, ms[k].max, ms[k].field);
        }
        if (rc != 0) {
            if (!v)
                fprintf(stderr, "edgelock_chaos: %s wants a value\n", a);
            return 64;
        }
        i += takes;
    }
    if (o->wait_replicas > 0 && !o->replica) {
        fprintf(stderr, "edgelock_chaos: --wait-replicas needs --replica\n");
        return 64;
    }
    return build_windows(o) == 0 ? 0 : 64;
}
