// SPDX-License-Identifier: BSD-3-Clause
// Redis Cluster's key slot (the cluster specification's HASH_SLOT): CRC16
// (XMODEM) of the key, or of its hash tag, modulo 16384. Redisson puts every
// key and the channel of one lock under the lock name's hash tag ("{name}"),
// so that all of them land in one slot; this is how a client finds the node
// that serves it.
#pragma once

#include <stddef.h>
#include <stdint.h>

namespace edgelock
{

constexpr uint16_t kClusterSlots = 16384;

// CRC16-CCITT (XMODEM: polynomial 0x1021, initial value 0, no reflection).
uint16_t crc16_xmodem(const void *data, size_t len);

// The slot of a key: when it has a '{' followed later by a '}' with at least
// one byte between them, only the bytes between the first '{' and the first
// '}' after it count (the hash tag); otherwise the whole key does.
uint16_t key_hash_slot(const void *key, size_t len);

// The rest of a MOVED or ASK error after its verb: "<slot> <host>:<port>".
// True when slot is decimal digits naming 0..16383 and the address is
// well formed (split_node_address); *addr, *addr_len: the address's bytes.
bool parse_redirect(const char *s, size_t len, uint16_t *slot, const char **addr, size_t *addr_len);

// "host:port" (the host possibly an IPv6 address with colons of its own, or
// empty: the node answering): the host copied into host[host_cap] (NUL
// ended), the port decimal digits naming 1..65535. False, host and port
// unset, otherwise.
bool split_node_address(const char *addr, size_t len, char *host, size_t host_cap, uint16_t *port);

} // namespace edgelock
