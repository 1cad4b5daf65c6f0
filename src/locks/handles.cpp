// SPDX-License-Identifier: BSD-3-Clause
// Lock handles: a name in the lock table. Purely local; no Redis call.
#include <string.h>

#include "locks/handles.hpp"

#include "base/name_hash.hpp"
#include "locks/client.hpp"
#include "locks/holds.hpp"

namespace edgelock
{

static bool valid_kind(edgelock_lock_kind kind)
{
    switch (kind) {
    case EDGELOCK_REENTRANT:
    case EDGELOCK_FAIR:
    case EDGELOCK_READ:
    case EDGELOCK_WRITE:
    case EDGELOCK_FENCED:
    case EDGELOCK_SEMAPHORE:
    case EDGELOCK_PERMIT_SEMAPHORE:
    case EDGELOCK_LATCH: return true;
    }
    return false;
}

bool kind_serves(edgelock_lock_kind kind, KindClass cls)
{
    bool semaphore = kind == EDGELOCK_SEMAPHORE || kind == EDGELOCK_PERMIT_SEMAPHORE;
    switch (cls) {
    case KindClass::Lock: return !semaphore && kind != EDGELOCK_LATCH;
    case KindClass::LockOrSemaphore: return kind != EDGELOCK_LATCH;
    case KindClass::Semaphore: return semaphore;
    case KindClass::Expirable: return kind == EDGELOCK_PERMIT_SEMAPHORE;
    case KindClass::Latch: return kind == EDGELOCK_LATCH;
    }
    return false;
}

static uint32_t *name_bucket(Client *c, uint32_t hash)
{
    return &c->lock_buckets[hash % c->locks.capacity()];
}

uint32_t lock_next_twin(Client *c, uint64_t lock_id, uint32_t from)
{
    const uint32_t own = id_index(lock_id);
    const LockEntry *le = lock_get(c, lock_id);
    if (!le)
        return kNoIndex; // (a freed handle names nothing)
    uint32_t i = from == kNoIndex ? *name_bucket(c, le->name_hash) : c->locks.get(from)->next_same_hash;
    while (i != kNoIndex) {
        const LockEntry *o = c->locks.get(i);
        if (i != own && o->name_hash == le->name_hash && same_lock_name(c, c->locks.id_of(i), lock_id))
            return i;
        i = o->next_same_hash;
    }
    return kNoIndex;
}

edgelock_status lock_new(Client *c, edgelock_lock_kind kind, const void *name, size_t len, edgelock_lock *out)
{
    if (!name || !out || len == 0 || len > c->cfg.max_name_len || !valid_kind(kind))
        return EDGELOCK_ERR_INVALID_ARG;
    if (c->closing)
        return EDGELOCK_ERR_SHUTDOWN;
    uint32_t i;
    LockEntry *le = c->locks.alloc(&i);
    if (!le)
        return EDGELOCK_ERR_TABLE_FULL;
    le->name_len = (uint32_t)len;
    le->kind = (uint8_t)kind;
    memcpy(c->lock_names + (size_t)i * c->cfg.max_name_len, name, len);
    le->name_hash = name_hash(name, len);
    uint32_t *bucket = name_bucket(c, le->name_hash);
    le->next_same_hash = *bucket;
    *bucket = i;
    out->id = c->locks.id_of(i);
    return EDGELOCK_OK;
}

edgelock_status lock_free(Client *c, edgelock_lock lock)
{
    LockEntry *le = lock_get(c, lock.id);
    if (!le)
        return EDGELOCK_ERR_STALE_HANDLE;
    if (le->refs > 0)
        return EDGELOCK_ERR_BUSY;
    EDGELOCK_ASSERT(le->calls_in_flight == 0); // its waiters are counted in refs
    uint64_t now = loop_now(&c->loop);
    // Most handles have no hold left: no scan of the hold table then.
    for (uint32_t i = 0; le->holds > 0 && i < c->holds.end(); i++) {
        Hold *h = c->holds.get(i);
        if (h && h->lock_id == lock.id && (hold_active(h, now) || h->pending || h->renewing))
            return EDGELOCK_ERR_BUSY;
    }
    // What is left are loss markers and lapsed fixed leases: they go with it.
    for (uint32_t i = 0; le->holds > 0 && i < c->holds.end(); i++) {
        Hold *h = c->holds.get(i);
        if (h && h->lock_id == lock.id)
            hold_free(c, i);
    }
    uint32_t *link = name_bucket(c, le->name_hash);
    while (*link != id_index(lock.id))
        link = &c->locks.get(*link)->next_same_hash;
    *link = le->next_same_hash;
    c->locks.release(id_index(lock.id));
    return EDGELOCK_OK;
}

edgelock_status lock_check_call(Client *c, edgelock_lock lock, edgelock_result_fn cb, KindClass cls)
{
    if (!cb)
        return EDGELOCK_ERR_INVALID_ARG;
    if (c->closing)
        return EDGELOCK_ERR_SHUTDOWN;
    LockEntry *le = lock_get(c, lock.id);
    if (!le)
        return EDGELOCK_ERR_STALE_HANDLE;
    if (!kind_serves((edgelock_lock_kind)le->kind, cls))
        return EDGELOCK_ERR_INVALID_ARG;
    return EDGELOCK_OK;
}

} // namespace edgelock
