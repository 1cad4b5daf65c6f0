// SPDX-License-Identifier: BSD-3-Clause
#include <stdint.h>
#include <string.h>

#include "edgelock/edgelock.h"

extern "C" const char *edgelock_status_str(edgelock_status status)
{
    // A C caller may pass any int: read it as one (loading a value outside
    // the enum's range as the enum is undefined in C++).
    int32_t s;
    static_assert(sizeof(s) == sizeof(status), "edgelock_status is an int");
    memcpy(&s, &status, sizeof(s));
    switch (s) {
    case EDGELOCK_OK: return "ok";
    case EDGELOCK_ERR_INVALID_ARG: return "invalid argument";
    case EDGELOCK_ERR_TABLE_FULL: return "table full";
    case EDGELOCK_ERR_WAIT_TIMEOUT: return "not acquired within the wait time";
    case EDGELOCK_ERR_NOT_OWNER: return "not the owner";
    case EDGELOCK_ERR_LOST: return "lock lost";
    case EDGELOCK_ERR_CONNECTION: return "connection to Redis failed";
    case EDGELOCK_ERR_TIMEOUT: return "Redis did not answer in time";
    case EDGELOCK_ERR_REDIS: return "Redis returned an error";
    case EDGELOCK_ERR_SHUTDOWN: return "client shutting down";
    case EDGELOCK_ERR_STALE_HANDLE: return "stale handle";
    case EDGELOCK_ERR_WRONG_THREAD: return "wrong thread";
    case EDGELOCK_ERR_BUSY: return "lock busy";
    case EDGELOCK_ERR_NO_MEMORY: return "out of memory";
    case EDGELOCK_ERR_PROTOCOL: return "unexpected reply from Redis";
    case EDGELOCK_ERR_TLS: return "TLS failed (certificate, name or handshake)";
    case EDGELOCK_ERR_NOT_REPLICATED: return "not acknowledged by enough replicas";
    case EDGELOCK_ERR_CANCELLED: return "cancelled";
    case EDGELOCK_ERR_PAGE_TOO_SMALL: return "the page held more names than the array";
    case EDGELOCK_ERR_AUTH:
        return "Redis refused the connection setup (password, ACL user, database or command permission)";
    }
    return "unknown status";
}
