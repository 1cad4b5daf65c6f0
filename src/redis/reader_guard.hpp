// SPDX-License-Identifier: BSD-3-Clause
// What hiredis's reader may build from a server's bytes. Its reply objects are
// made through a table of functions; the guard wraps them so that
// - no array is allocated for more than kMaxReplyElements elements (hiredis
//   0.14 callocs whatever count a reply announces: "*2000000000" asks for 16
//   GB), and
// - a reply nobody asked for on a connection that is not subscribed (a
//   subscriber before its first SUBSCRIBE included; hiredis asserts on one:
//   the process would die, maybe holding locks) is refused before hiredis
//   sees it, and
// - on a subscribed connection, a reply hiredis routes by its pub/sub shape
//   must have the shape hiredis asserts (a kind and a channel that are
//   strings, an integer count on an unsubscribe, a confirmation only for a
//   channel the owner asked for: ConnChannelFn), and a RESP3 push must not
//   be one hiredis takes for a RESP2 subscriber's reply; kinds in another
//   case, patterns' kinds and pushes on a RESP2 connection are refused too,
//   so that hiredis and the connection's owner read every reply alike.
// Refusing an object makes the reader fail: hiredis drops the connection, the
// commands on it complete with EDGELOCK_ERR_CONNECTION and it reconnects.
#pragma once

#include <stdint.h>

struct redisReader;

namespace edgelock
{

struct Connection;

// The most elements of one array in any reply edgelock reads: a renewal batch
// has 100, ROLE lists the replicas; anything near this is not Redis talking.
constexpr uint64_t kMaxReplyElements = 65536;

// Wrap r's object functions for conn (its replies_due and pubsub fields).
void reader_guard_attach(struct redisReader *r, Connection *conn);

} // namespace edgelock
