// SPDX-License-Identifier: BSD-3-Clause
/*
 * The overall deadline of the Redis calls a subcommand makes without a wait
 * the user gave: `status`, `unlock --force`, and the release at the end of
 * `run`.
 *
 * The library bounds each call by its command timeout, but a subcommand may
 * make several (status re-reads a lock whose holders keep arriving, unlock
 * reads before it deletes, a MultiLock releases member after member), and a
 * slow or misbehaving server can make each of them take nearly the whole
 * timeout. So the calls share one budget: a further call is started only when
 * it can end before the deadline, and a watchdog thread ends the process with
 * a message and an exit code if the deadline passes anyway (a call that did
 * not keep to its own timeout): the command never outlives its deadline.
 */
#ifndef EDGELOCK_CLI_DEADLINE_H
#define EDGELOCK_CLI_DEADLINE_H

#include <stdint.h>

/* Starts the deadline for `calls` calls that each take at most call_ms (the
 * client's command timeout): calls * call_ms from now. If it passes before
 * deadline_stop(), the watchdog says "<what> did not finish within N ms:
 * <why_late>" and ends the process with exit_code. 0, or EXIT_OSERR when no
 * thread could be started (message said). */
int deadline_start(unsigned calls, uint32_t call_ms, const char *what, const char *why_late, int exit_code);

/* 1 when one more call of call_ms can end before the deadline. */
int deadline_room(void);

/* Stops the watchdog before anything is printed: after this the process is
 * no longer ended by it. */
void deadline_stop(void);

#endif
