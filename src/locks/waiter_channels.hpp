// SPDX-License-Identifier: BSD-3-Clause
// The waiters of each channel: a waiter is on its subscription's list
// (Client::channel_waiters, by subscription index) from its join to the end
// of its lock call, so that a message or a confirmed subscription visits the
// waiters of that channel only, however many wait on others.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "edgelock/edgelock.h"

namespace edgelock
{

struct Client;

// The waiter at index joins the channel its lock announces unlocks on:
// its subscription (sub_index; subscribing when the first), and that
// subscription's list. TABLE_FULL without a subscription slot (sub_index
// then kNoIndex).
edgelock_status channel_join(Client *c, uint32_t index);
// The waiter at index has just joined its subscription (its sub_index set).
void channel_add_waiter(Client *c, uint32_t index);
// The waiter at index is ending (before its slot is released).
void channel_remove_waiter(Client *c, uint32_t index);
// Every waiter on the channel tries again (messages may have been missed,
// or the message frees the lock for all).
void channel_wake_all(Client *c, uint32_t sub_index);
// A waiter told to try again (wake_pending) ended without taking what the
// message freed (cancelled, an error): the wake goes to the channel's others,
// or a lock freed for one taker would sit idle until its holder's TTL.
void channel_pass_wake(Client *c, uint32_t sub_index);

// Whether a message or confirmation on the subscriber connection may be due
// to someone now (the blocking face reads a reply itself only when none is):
// false with no subscription, or when the one subscription is the one
// waiter's, confirmed, with no leave due, and that waiter's attempt is on the
// wire. A message then can only tell the waiter to try again, which a "held"
// answer asks for anyway at the loop's next pass (wake_pending).
bool channel_messages_awaited(Client *c);

// PubSubHooks, with the Client as ctx.
void channel_on_subscribed(void *client, uint32_t sub_index); // first time or after a reconnect
void channel_on_message(void *client, uint32_t sub_index, const char *msg, size_t len);

} // namespace edgelock
