// SPDX-License-Identifier: BSD-3-Clause
/*
 * Time for the checker. CLOCK_MONOTONIC is one clock for every process on the
 * machine, so events of different workers and the injector's windows share a
 * time line; CLOCK_REALTIME only where Redis compares (the store's TIME).
 */
#ifndef EDGELOCK_CHAOS_CLOCK_H
#define EDGELOCK_CHAOS_CLOCK_H

#include <stdint.h>

int64_t mono_us(void);
int64_t realtime_ms(void);
/* Sleeps ms, resuming after signals. */
void nap_ms(long ms);

#endif
