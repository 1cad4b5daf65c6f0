#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Where B's handoff time goes, by where the scheduler put the waiter.

Runs one threaded B scenario of edgelock_bench (b_mixed --holder 0 by
default: a plain holder, edgelock and the plain client each waiting in turn)
under `perf record -a` with the scheduler's switch and wake-up tracepoints and
the socket system calls, then follows every handoff on the kernel's clock:

  t0      the holder's release script is written (sendto of 250 bytes or more)
  wake    the waiter thread is woken for the unlock message
  run     its poll or epoll_wait returns (it runs)
  attempt the waiter writes its retry (its first sendto after t0)
  end     the waiter reads the grant (a recvfrom that returns "$-1\\r\\n")

and splits them by whether the waiter was woken on the CPU the holder wrote
from, and whether that CPU was idle until then. The waiter of edgelock's
handoffs is the thread that sleeps in epoll_wait (libevent); the plain
client's sleeps in poll. --who-ran names the threads the waiter took its
CPU from. Needs perf (Debian: linux-perf), root or
kernel.perf_event_paranoid <= -1, and x86_64 (it matches system call
numbers); not part of `make bench`. BENCHMARKS.md, sixteenth pass, reads it.

  python3 bench/handoff_sched.py --port 7711 [--handoffs 400] [--holder 0|1]
      [--scenario b_mixed|b_blocking|b_calibrate] [--bench bench/build/edgelock_bench]
      [--who-ran] [--placement]

--placement splits the handoffs by the CPU the waiter slept on (the one it
last left before the holder's release) and the one it was woken on, each
the holder's or the other.
"""
import argparse
import collections
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SENDTO, RECVFROM, POLL, EPOLL_WAIT = 44, 45, 7, 232  # x86_64 system call numbers
LINE = re.compile(r'^\s*(.+?)\s+(\d+)\s+\[(\d+)\]\s+([\d.]+):\s+(\S+):\s*(.*)$')


def record(args, workdir):
    data = os.path.join(workdir, "perf.data")
    calls = "||".join("id==%d" % n for n in (SENDTO, RECVFROM, POLL, EPOLL_WAIT))
    argv = ["perf", "record", "-q", "-a", "-o", data,
            "-e", "sched:sched_switch,sched:sched_wakeup",
            "-e", "raw_syscalls:sys_enter", "--filter", calls,
            "-e", "raw_syscalls:sys_exit", "--filter", calls,
            "--", args.bench, args.scenario, "--port", str(args.port), "--handoffs", str(args.handoffs)]
    if args.scenario == "b_mixed":
        argv += ["--holder", str(args.holder)]
    out = subprocess.run(argv, check=True, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL).stdout
    text = subprocess.run(["perf", "script", "-i", data, "--ns", "-F", "comm,tid,cpu,time,event,trace"],
                          check=True, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL).stdout
    return json.loads(out), text.decode(errors="replace").splitlines()


def parse(lines):
    events = []
    for line in lines:
        m = LINE.match(line)
        if m:
            comm, tid, cpu, t, name, rest = m.groups()
            events.append((float(t) * 1e6, int(tid), int(cpu), name.split(":")[1], rest))
    return events


def call_no(rest):
    m = re.match(r"NR (\d+)", rest)
    return int(m.group(1)) if m else -1


def call_arg(rest, k):
    return int(rest.split("(")[1].split(",")[k].strip(), 16)


def handoffs(events):
    """Per waiter thread, one record per handoff."""
    waits_in = {}  # thread -> the system call it sleeps in
    for t, tid, cpu, name, rest in events:
        if name == "sys_enter" and call_no(rest) in (POLL, EPOLL_WAIT):
            waits_in.setdefault(tid, call_no(rest))
    last_release = None
    slept_on = {}  # thread -> the CPU it last left (sched_switch)
    found = collections.defaultdict(list)
    for i, (t, tid, cpu, name, rest) in enumerate(events):
        if name == "sched_switch":
            m = re.search(r"prev_pid=(\d+) ", rest)
            if m:
                slept_on[int(m.group(1))] = cpu
        if name == "sys_enter" and call_no(rest) == SENDTO and call_arg(rest, 2) >= 250:
            last_release = (i, t, cpu, tid, dict(slept_on))
            continue
        if not (name == "sys_exit" and call_no(rest) == RECVFROM and rest.strip().endswith("= 5")):
            continue
        if last_release is None or last_release[3] == tid:
            continue
        i0, t0, holder_cpu, _, slept_at_release = last_release
        if t - t0 > 5000:  # not this release's grant (a waiter that timed out, a warm-up)
            continue
        span = events[i0:i + 1]
        wakes = [(e[0], int(re.search(r"target_cpu=(\d+)", e[4]).group(1))) for e in span
                 if e[3] == "sched_wakeup" and (" pid=%d " % tid) in e[4]]
        ins = [("prev_pid=0 " in e[4]) for e in span if e[3] == "sched_switch" and ("next_pid=%d " % tid) in e[4]]
        before = [re.search(r"prev_comm=(.*?) prev_pid=(\d+)", e[4]).groups() for e in span
                  if e[3] == "sched_switch" and ("next_pid=%d " % tid) in e[4]]
        sends = [e[0] for e in span if e[1] == tid and e[3] == "sys_enter" and call_no(e[4]) == SENDTO]
        woke = [e[0] for e in span if e[1] == tid and e[3] == "sys_exit" and call_no(e[4]) in (POLL, EPOLL_WAIT)]
        if not wakes or not sends or not ins or not woke or wakes[0][0] > sends[0] or woke[0] > sends[0]:
            continue  # the waiter was not asleep when the message came
        found[tid].append({"total": t - t0, "to_wake": wakes[0][0] - t0, "wake_to_attempt": sends[0] - wakes[0][0],
                           "attempt_to_end": t - sends[0], "run_to_attempt": sends[0] - woke[0], "on_holder_cpu": wakes[0][1] == holder_cpu,
                           "from_idle": ins[0], "ran_before": before[0],
                           "slept_on_holder_cpu": slept_at_release.get(tid) == holder_cpu})
    return found, waits_in


def p50(xs):
    return statistics.median(xs) if xs else float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--handoffs", type=int, default=400)
    ap.add_argument("--scenario", default="b_mixed")
    ap.add_argument("--holder", type=int, default=0)
    ap.add_argument("--bench", default=os.path.join(HERE, "build", "edgelock_bench"))
    ap.add_argument("--who-ran", action="store_true", help="name the thread the waiter took its CPU from")
    ap.add_argument("--placement", action="store_true",
                    help="split by where the waiter slept and where it was woken (BENCHMARKS.md, third pass)")
    args = ap.parse_args()
    if platform.machine() != "x86_64":
        sys.exit("handoff_sched.py: x86_64 only (it matches system call numbers)")
    with tempfile.TemporaryDirectory() as d:
        result, lines = record(args, d)
    found, waits_in = handoffs(parse(lines))
    print("%s: p50 %.1f us against the plain client's %.1f us in the same run (%.3f)" % (
        result.get("scenario"), result["handoff_p50_us"], result.get("plain_handoff_p50_us", float("nan")),
        result.get("p50_vs_plain_interleaved", float("nan"))))
    if args.placement:
        print("%-48s %6s %9s" % ("waiter (CPUs: the holder's or the other)", "n", "p50 us"))
    else:
        print("%-38s %6s %9s %9s %11s %11s %11s" % ("waiter woken", "n", "p50 us", "to wake", "to retry",
                                                   "run->retry", "retry->end"))
    most = max((len(r) for r in found.values()), default=0)
    # A thread with few records is no waiter of the scenario (a probe's reply
    # that looked like a grant).
    kept = {tid: recs for tid, recs in found.items() if len(recs) >= most / 4}
    # Thread ids rise in creation order: the plain pair's waiter, made first
    # (handoff_threads in bench_main.cpp), has the lower one.
    waiters = sorted(kept)
    for tid, recs in sorted(kept.items(), key=lambda kv: waits_in.get(kv[0], 0)):
        who = "epoll_wait (edgelock)" if waits_in.get(tid) == EPOLL_WAIT else "poll (plain client)"
        pair = "the plain pair's" if len(waiters) == 2 and tid == waiters[0] else "the scenario's"
        print("thread %d, %s waiter, sleeps in %s: %d handoffs" % (tid, pair, who, len(recs)))
        if args.placement:
            for slept in (True, False):
                for woken in (True, False):
                    rs = [r for r in recs if r["slept_on_holder_cpu"] == slept and r["on_holder_cpu"] == woken]
                    label = "slept on %s, woken on %s" % ("the holder's" if slept else "the other",
                                                           "the holder's" if woken else "the other")
                    print("  %-46s %6d %9.1f" % (label, len(rs), p50([r["total"] for r in rs])))
            continue
        groups = collections.OrderedDict()
        for on_cpu in (True, False):
            for idle in (False, True):
                groups[(on_cpu, idle)] = [r for r in recs if r["on_holder_cpu"] == on_cpu and r["from_idle"] == idle]
        groups["all"] = recs
        for key, rs in groups.items():
            if not rs:
                continue
            label = "all" if key == "all" else "%s, %s" % ("on the holder's CPU" if key[0] else "on the other CPU",
                                                          "from idle" if key[1] else "after other work")
            print("  %-36s %6d %9.1f %9.1f %11.1f %11.1f %11.1f" % (
                label, len(rs), p50([r["total"] for r in rs]), p50([r["to_wake"] for r in rs]),
                p50([r["wake_to_attempt"] for r in rs]), p50([r["run_to_attempt"] for r in rs]),
                p50([r["attempt_to_end"] for r in rs])))
            if args.who_ran and key != "all" and not key[1]:
                ran = collections.Counter("%s %s" % r["ran_before"] for r in rs)
                print("    ran there before it: " + ", ".join("%s (%d)" % kv for kv in ran.most_common(4)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
