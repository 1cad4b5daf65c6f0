// SPDX-License-Identifier: BSD-3-Clause
// edgelock_scan_locks(): one page of SCAN over the names that may be locks
// (hash keys), for `edgelock list`. On a cluster the pages go over the
// masters one after the other; the cursor's top byte says which.
#pragma once

#include "edgelock/edgelock.h"

namespace edgelock
{

struct Client;
class RespCommand;

edgelock_status scan_start(Client *c, edgelock_scan *scan, edgelock_result_fn cb, void *user);
// The SCAN command of a page (wire.cpp, when it is sent).
void format_scan_page(RespCommand &rc, const edgelock_scan *scan);

} // namespace edgelock
