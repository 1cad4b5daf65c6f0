// SPDX-License-Identifier: BSD-3-Clause
/* The run's table and verdict (report.h). */
#include <inttypes.h>
#include <stdio.h>

#include "report.h"

static const char kLegend[] =
    "\ncolumns: acq acquisitions; fail acquire calls that failed (wait timeout, Redis away);\n"
    "  ovl overlaps outside data loss; ovl-dl overlaps from a data loss to a lease after it;\n"
    "  writes accepted; stale stale writes accepted; refused stale writes the store refused;\n"
    "  lost on_lock_lost callbacks; skips writes edgelock_lock_valid() stopped; late writes that\n"
    "  reached the store after the writer's own deadline; leaked holds an unlock reported\n"
    "  released but Redis kept; recov ms from the fault's end to the next acquisition of every\n"
    "  lock it affects; hung workers that did not leave by themselves.\n";

static void recovery_text(int64_t ms, char *buf, size_t cap)
{
    if (ms == RECOVERY_NONE)
        snprintf(buf, cap, "-");
    else if (ms == RECOVERY_NEVER)
        snprintf(buf, cap, "never");
    else
        snprintf(buf, cap, "%" PRId64, ms);
}

static void row(FILE *f, const char *label, const char *name, double at_s, const struct window_stats *s,
                const char *note)
{
    char rec[24];
    recovery_text(s->recovery_ms, rec, sizeof(rec));
    fprintf(f,
            "%-3s %-22s %6.1f %6" PRId64 " %5" PRId64 " %4" PRId64 " %6" PRId64 " %6" PRId64 " %5" PRId64
            " %7" PRId64 " %5" PRId64 " %5" PRId64 " %5" PRId64 " %6" PRId64 " %7s %4d  %s\n",
            label, name, at_s, s->acquisitions, s->acquire_fails, s->overlaps, s->overlaps_data_loss,
            s->accepted, s->stale_accepted, s->refused, s->lost, s->skips, s->late, s->leaked, rec, s->hung,
            note);
}

void report_print(FILE *f, const struct run_record *run, const struct window_stats *stats,
                  const struct window_stats *total, const struct leftovers *left,
                  const struct store_counts *sc)
{
    const int64_t t0 = run->windows[0].start_us;
    fprintf(f, "\n%-3s %-22s %6s %6s %5s %4s %6s %6s %5s %7s %5s %5s %5s %6s %7s %4s  %s\n", "win", "fault",
            "at s", "acq", "fail", "ovl", "ovl-dl", "writes", "stale", "refused", "lost", "skips", "late",
            "leaked", "recov", "hung", "what was hit");
    for (int i = 0; i < run->nwindows; i++) {
        const struct window *w = &run->windows[i];
        char label[16], name[40];
        snprintf(label, sizeof(label), "%d", i);
        plan_name(w, name, sizeof(name));
        row(f, label, name, (double)(w->start_us - t0) / 1e6, &stats[i],
            w->applied ? w->note : "NOT APPLIED");
    }
    double run_s = (double)(run->windows[run->nwindows - 1].end_us - t0) / 1e6;
    row(f, "all", "", run_s, total, "");
    fputs(kLegend, f);
    fprintf(f,
            "also: %" PRId64 " acquisitions given back for an unknown epoch, %" PRId64
            " run_id reads failed or changed,\n",
            total->epoch_unknown, total->run_id_errors);
    fprintf(f, "  %" PRId64 " order inversions, %" PRId64 " duplicate tokens, %" PRId64 " store errors;\n",
            total->inversions, total->duplicates, total->store_errors);
    fprintf(f,
            "  unlocks: %" PRId64 " LOST, %" PRId64 " of unknown outcome (timeout, connection), %" PRId64
            " other errors\n",
            total->unlock_lost, total->unlock_uncertain, total->unlock_other);
    if (sc->read_ok)
        fprintf(f,
                "store's own counts: %" PRId64 " accepted, %" PRId64 " refused (the workers noted %" PRId64
                " and %" PRId64 "; a worker killed mid-write notes nothing)\n",
                sc->accepted, sc->refused, total->accepted, total->refused);
    if (!left->read_ok) {
        fprintf(f, "keys left in the lock Redis: could not be read\n");
        return;
    }
    fprintf(f,
            "keys left in the lock Redis: %ld (%ld token counters, %ld lock hashes, %ld expiring by "
            "themselves, %ld other without TTL)\n",
            left->total, left->tokens, left->locks, left->with_ttl, left->persistent);
    if (left->locks > 0)
        fprintf(f, "  lock hashes left: %s\n", left->holders);
}

int report_verdict(FILE *f, const struct run_record *run, const struct window_stats *stats,
                   const struct window_stats *total, int64_t recovery_bound_ms)
{
    int failures = 0;
    for (int i = 0; i < run->nwindows; i++) {
        const struct window_stats *s = &stats[i];
        char name[40];
        plan_name(&run->windows[i], name, sizeof(name));
#define FAIL_IF(cond, ...)                                                                                   \
    do {                                                                                                     \
        if (cond) {                                                                                          \
            fprintf(f, "FAIL window %d (%s): ", i, name);                                                    \
            fprintf(f, __VA_ARGS__);                                                                         \
            fputc('\n', f);                                                                                  \
            failures++;                                                                                      \
        }                                                                                                    \
    } while (0)
        FAIL_IF(s->stale_accepted > 0, "%" PRId64 " stale writes accepted", s->stale_accepted);
        FAIL_IF(s->overlaps > 0, "%" PRId64 " overlaps outside a data-loss window", s->overlaps);
        FAIL_IF(s->inversions > 0, "%" PRId64 " tokens older than one received before the call",
                s->inversions);
        FAIL_IF(s->duplicates > 0, "%" PRId64 " tokens given twice", s->duplicates);
        FAIL_IF(s->hung > 0, "%d hung workers", s->hung);
        FAIL_IF(s->leaked > 0, "%" PRId64 " holds that unlock reported released were still in Redis",
                s->leaked);
        FAIL_IF(s->recovery_ms != RECOVERY_NONE && s->recovery_ms > recovery_bound_ms,
                "no acquisition within %" PRId64 " ms of the fault's end", recovery_bound_ms);
        FAIL_IF(!run->windows[i].applied, "the fault could not be applied (%s)", run->windows[i].note);
        FAIL_IF(s->store_errors > 0, "%" PRId64 " store errors: the check is void", s->store_errors);
#undef FAIL_IF
    }
    int crashes = pool_crashes(run->pool);
    if (crashes > 0) {
        fprintf(f, "FAIL %d workers died on their own (not killed by a fault, status not 0)\n", crashes);
        failures++;
    }
    if (total->acquisitions == 0) {
        fprintf(f, "FAIL no acquisition at all\n");
        failures++;
    }
    fprintf(f, "%s: %d failures\n", failures ? "FAILED" : "PASSED", failures);
    return failures;
}
