// SPDX-License-Identifier: BSD-3-Clause
// The waiters of each channel (waiter_channels.hpp): doubly linked through
// the waiter slots, newest first, so that joining and leaving cost the same
// however long the list.
#include "locks/waiter_channels.hpp"

#include "base/writer.hpp"
#include "locks/acquire.hpp"
#include "locks/client.hpp"
#include "locks/handles.hpp"
#include "locks/permits.hpp"
#include "redisson/names.hpp"

namespace edgelock
{

static Waiter *waiter(Client *c, uint32_t index)
{
    return c->waiters.get(index);
}

edgelock_status channel_join(Client *c, uint32_t index)
{
    Waiter *w = waiter(c, index);
    char chan[kMaxChannelLen];
    Writer wr(chan, sizeof(chan));
    write_waiter_channel(wr, c->protocol, lock_ref(c, w->lock_id), w->owner);
    EDGELOCK_ASSERT(!wr.overflow);
    edgelock_status st = pubsub_join(&c->pubsub, chan, wr.len, &w->sub_index);
    if (st == EDGELOCK_OK)
        channel_add_waiter(c, index);
    else
        w->sub_index = kNoIndex;
    return st;
}

void channel_add_waiter(Client *c, uint32_t index)
{
    Waiter *w = waiter(c, index);
    uint32_t *head = &c->channel_waiters[w->sub_index];
    w->prev_on_channel = kNoIndex;
    w->next_on_channel = *head;
    if (*head != kNoIndex)
        waiter(c, *head)->prev_on_channel = index;
    *head = index;
}

void channel_remove_waiter(Client *c, uint32_t index)
{
    Waiter *w = waiter(c, index);
    if (w->prev_on_channel != kNoIndex)
        waiter(c, w->prev_on_channel)->next_on_channel = w->next_on_channel;
    else
        c->channel_waiters[w->sub_index] = w->next_on_channel;
    if (w->next_on_channel != kNoIndex)
        waiter(c, w->next_on_channel)->prev_on_channel = w->prev_on_channel;
}

bool channel_messages_awaited(Client *c)
{
    PubSub *ps = &c->pubsub;
    if (ps->subs.used() == 0)
        return false;
    if (ps->subs.used() > 1 || ps->due_head != kNoSub || c->waiters.used() != 1)
        return true;
    // The one waiter: free slots are reused newest first, so it sits near
    // the start; a long look is not worth what it saves.
    constexpr uint32_t kMaxLook = 8;
    for (uint32_t i = 0; i < c->waiters.end() && i < kMaxLook; i++) {
        const Waiter *w = waiter(c, i);
        if (!w)
            continue;
        return w->state != WaiterState::Attempting || w->sub_index == kNoIndex ||
               ps->subs.get(w->sub_index)->state != SubState::Subscribed;
    }
    return true;
}

// Marked first, then woken: should a wake end waiters at once (and their
// callers' callbacks start or cancel lock calls), the list changes under the
// walk. The waiter just woken, while still there, leads to the next; when it
// is gone the walk starts over at the head and skips the ones already woken.
// Waiters that join meanwhile are not marked: a join to a live subscription
// attempts at once.
void channel_wake_all(Client *c, uint32_t sub_index)
{
    for (uint32_t i = c->channel_waiters[sub_index]; i != kNoIndex; i = waiter(c, i)->next_on_channel)
        waiter(c, i)->wake_due = true;
    uint32_t i = c->channel_waiters[sub_index];
    while (i != kNoIndex && !c->closing) {
        Waiter *w = waiter(c, i);
        if (!w->wake_due) {
            i = w->next_on_channel;
            continue;
        }
        w->wake_due = false;
        uint64_t seq = w->seq;
        acquire_wake(c, i);
        w = waiter(c, i);
        i = w && w->seq == seq ? w->next_on_channel : c->channel_waiters[sub_index];
    }
}

// One unlock frees the lock for one taker: wake the oldest idle waiter on the
// list at head, or failing that mark the oldest one whose attempt is in
// flight (it tries again when that attempt answers).
static void wake_one(Client *c, uint32_t head)
{
    uint32_t best = kNoIndex, best_busy = kNoIndex;
    for (uint32_t i = head; i != kNoIndex; i = waiter(c, i)->next_on_channel) {
        Waiter *w = waiter(c, i);
        if (w->state != WaiterState::Attempting) {
            if (best == kNoIndex || w->seq < waiter(c, best)->seq)
                best = i;
        } else if (!w->wake_pending) {
            if (best_busy == kNoIndex || w->seq < waiter(c, best_busy)->seq)
                best_busy = i;
        }
    }
    if (best != kNoIndex)
        acquire_wake(c, best);
    else if (best_busy != kNoIndex)
        acquire_wake(c, best_busy);
}

void channel_on_subscribed(void *client, uint32_t sub_index)
{
    channel_wake_all(static_cast<Client *>(client), sub_index);
}

void channel_on_message(void *client, uint32_t sub_index, const char *msg, size_t len)
{
    auto *c = static_cast<Client *>(client);
    uint32_t head = c->channel_waiters[sub_index];
    if (head == kNoIndex)
        return; // its last waiter is gone; the channel is left at the loop's next turn
    edgelock_lock_kind kind = lock_kind(c, waiter(c, head)->lock_id);
    if (!kind_serves(kind, KindClass::Lock)) {
        permits_on_message(c, sub_index, kind, msg, len);
        return;
    }
    // Redisson: "0" (unlock) wakes one waiter, "1" (read unlock) and anything
    // else wake all.
    if (!(len == 1 && msg[0] == kUnlockMessage[0])) {
        channel_wake_all(c, sub_index);
        return;
    }
    wake_one(c, head);
}

void channel_pass_wake(Client *c, uint32_t sub_index)
{
    uint32_t head = c->channel_waiters[sub_index];
    if (head == kNoIndex)
        return;
    if (kind_serves(lock_kind(c, waiter(c, head)->lock_id), KindClass::Lock))
        wake_one(c, head);
    else
        channel_wake_all(c, sub_index); // permits: every one tries, as for a message
}

} // namespace edgelock
