// SPDX-License-Identifier: BSD-3-Clause
// Stops a client's thread at a chosen step of its work: hiredis's allocator
// (hiredis 1.x; hiredisSetAllocators) pauses the Nth allocation made by a
// thread the test did not mark as its own (the client's loop thread, or a
// caller leading the loop) until the test acts, then a moment longer. A test
// sweeps N from 1 until its call no longer reaches an Nth allocation, and
// acts (destroy, cancel) at each: every window between two allocations.
#pragma once

namespace alloc_pause
{

bool available(); // false with hiredis 0.14: no allocator hooks
void install();   // the pausing allocator, for hiredis's every allocation
void uninstall(); // hiredis's own again; no client may run meanwhile

// The calling thread's allocations never pause (the test's threads).
void mark_test_thread();
// Pause the nth allocation from now (n >= 1) by an unmarked thread.
void arm(int n);
// Whether the armed allocation was reached (its thread paused, or pausing)
// within quiet_ms; if not, disarmed.
bool reached(unsigned quiet_ms);
// The test is about to act: the paused thread goes on a moment after.
void acting();

} // namespace alloc_pause
