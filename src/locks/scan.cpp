// SPDX-License-Identifier: BSD-3-Clause
// One SCAN page of lock candidates (scan.hpp).
#include "locks/scan.hpp"

#include <hiredis/hiredis.h>
#include <string.h>

#include "base/resp.hpp"
#include "locks/callbacks.hpp"
#include "locks/calls.hpp"
#include "locks/client.hpp"
#include "redisson/format.hpp"

namespace edgelock
{

// The caller's cursor: Redis's own in the low 56 bits, and on a cluster the
// index of the master being scanned in the top 8 (Redis's cursors stay far
// below 2^56: they index its table).
static constexpr int kNodeShift = 56;
static constexpr uint64_t kRedisCursorMask = (1ull << kNodeShift) - 1;

static uint32_t page_count(const edgelock_scan *scan)
{
    // SCAN's COUNT is a hint that a page may exceed: ask for less than fits.
    size_t n = scan->names_cap / 2;
    return n == 0 ? 1u : n > 1000 ? 1000u : (uint32_t)n;
}

void format_scan_page(RespCommand &rc, const edgelock_scan *scan)
{
    format_scan(rc, scan->cursor & kRedisCursorMask, scan->pattern ? scan->pattern : "*", page_count(scan));
}

static bool parse_cursor(const redisReply *r, uint64_t *out)
{
    if (r->type != REDIS_REPLY_STRING || r->len == 0 || r->len > 20)
        return false;
    uint64_t v = 0;
    for (size_t i = 0; i < r->len; i++) {
        if (r->str[i] < '0' || r->str[i] > '9')
            return false;
        uint64_t d = (uint64_t)(r->str[i] - '0');
        if (v > (UINT64_MAX - d) / 10)
            return false;
        v = v * 10 + d;
    }
    *out = v;
    return true;
}

static void scan_done(Client *c, const LockCall *call, uint64_t, uint64_t, redisReply *reply,
                      edgelock_status st)
{
    edgelock_scan *scan = call->scan;
    uint64_t next = 0;
    if (st == EDGELOCK_OK) {
        if (reply->type != REDIS_REPLY_ARRAY || reply->elements != 2 ||
            !parse_cursor(reply->element[0], &next) || next > kRedisCursorMask ||
            reply->element[1]->type != REDIS_REPLY_ARRAY) {
            st = EDGELOCK_ERR_PROTOCOL;
        } else {
            const redisReply *names = reply->element[1];
            for (size_t i = 0; i < names->elements; i++)
                if (names->element[i]->type != REDIS_REPLY_STRING)
                    st = EDGELOCK_ERR_PROTOCOL;
            if (st == EDGELOCK_OK) {
                scan->count = names->elements;
                for (size_t i = 0; i < names->elements && i < scan->names_cap; i++) {
                    const redisReply *n = names->element[i];
                    size_t len = n->len < EDGELOCK_SCAN_NAME_MAX ? n->len : EDGELOCK_SCAN_NAME_MAX;
                    memcpy(scan->names[i].name, n->str, len);
                    scan->names[i].name[len] = 0;
                    scan->names[i].len = n->len;
                }
            }
        }
    }
    if (st == EDGELOCK_OK && scan->count > scan->names_cap)
        st = EDGELOCK_ERR_PAGE_TOO_SMALL; // the cursor stays, for the same page with more room
    if (st == EDGELOCK_OK) {
        // The page fitted: move on (to the next master when this one is done).
        uint32_t node = (uint32_t)(scan->cursor >> kNodeShift);
        if (next == 0 && c->url.cluster) {
            node++;
            next = cluster_master_from(&c->cluster, &node) ? (uint64_t)node << kNodeShift : 0;
        } else {
            next |= (uint64_t)node << kNodeShift;
        }
        scan->cursor = next;
    }
    invoke_result(c, call->cb, 0, st, 0, call->user);
}

edgelock_status scan_start(Client *c, edgelock_scan *scan, edgelock_result_fn cb, void *user)
{
    if (!cb || !scan || !scan->names || scan->names_cap == 0 ||
        (scan->pattern && strlen(scan->pattern) > EDGELOCK_SCAN_PATTERN_MAX))
        return EDGELOCK_ERR_INVALID_ARG;
    if (c->closing)
        return EDGELOCK_ERR_SHUTDOWN;
    Connection *pin = nullptr;
    if (c->url.cluster) {
        uint32_t node = (uint32_t)(scan->cursor >> kNodeShift);
        pin = cluster_master_from(&c->cluster, &node);
        if (!pin)
            return EDGELOCK_ERR_CONNECTION; // no slot map yet, or no master left from there
        // A node that is no master (any more): the next one, from its start.
        if (node != (uint32_t)(scan->cursor >> kNodeShift))
            scan->cursor = (uint64_t)node << kNodeShift;
    } else if (scan->cursor > kRedisCursorMask) {
        return EDGELOCK_ERR_INVALID_ARG;
    }
    scan->count = 0;
    LockCall call(LockOp::Scan, 0, scan_done);
    call.scan = scan;
    call.cb = cb;
    call.user = user;
    uint64_t id;
    if (!call_new(c, call, &id))
        return EDGELOCK_ERR_TABLE_FULL;
    if (pin)
        call_pin(c, id, pin);
    call_submit(c, id);
    return EDGELOCK_OK;
}

} // namespace edgelock
