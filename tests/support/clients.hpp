// Client construction shared by the integration tests.
#pragma once

#include "edgelock/edgelock.h"

// A blocking-mode client (owned loop) on url, with cfg adjusted by tweak.
edgelock_client *make_client(const char *url, void (*tweak)(edgelock_config *) = nullptr);
// A lock handle for name (NUL-terminated), or {0} on failure.
edgelock_lock make_lock(edgelock_client *c, const char *name);
// True when every table of c but the locks table is empty, within 2 s (the
// unlock latch DEL may still be in flight when the last call returns).
bool tables_idle(edgelock_client *c);
