# SPDX-License-Identifier: BSD-3-Clause
"""Reference rows for `make bench`: redis-py's Lock (Debian python3-redis).

Same scenarios as edgelock_bench, at redis-py's default retry settings
(Lock.acquire polls every `sleep=0.1` s while the lock is held elsewhere).
One JSON object per call on stdout.

    python3 redispy_bench.py a --port P [--pairs N --samples FILE]
    python3 redispy_bench.py b --port P [--pairs K --handoffs N --samples FILE]
    python3 redispy_bench.py c --port P [--clients 8 --ms 2000]
"""
import argparse
import json
import random
import statistics
import threading
import time

import redis

LEASE_S = 10  # the same fixed lease edgelock's rows use


def pct(values, p):
    s = sorted(values)
    if not s:
        return 0.0
    rank = max(1, min(len(s), int(p / 100.0 * len(s) + 0.999999)))
    return s[rank - 1]


def latency(prefix, ns):
    us = [v / 1000.0 for v in ns]
    return {prefix + "_p50_us": pct(us, 50), prefix + "_p99_us": pct(us, 99),
            prefix + "_mean_us": statistics.fmean(us) if us else 0.0, prefix + "_n": len(us)}


def client(port):
    return redis.Redis(host="127.0.0.1", port=port)


def scenario_a(args):
    r = client(args.port)
    warm, n = 200, args.pairs
    lat = []
    start = 0
    for i in range(warm + n):
        if i == warm:
            start = time.perf_counter_ns()
        t0 = time.perf_counter_ns()
        lk = r.lock("bench:py:a:%d" % (i % 1000), timeout=LEASE_S)
        if not lk.acquire():
            raise SystemExit("acquire failed")
        lk.release()
        t1 = time.perf_counter_ns()
        if i >= warm:
            lat.append(t1 - t0)
    elapsed = (time.perf_counter_ns() - start) / 1e9
    if args.samples:
        with open(args.samples, "w") as f:
            for v in lat:
                f.write("%.3f\n" % (v / 1000.0))
    out = {"scenario": "a", "library": "redis-py", "pairs_per_s": n / elapsed, "ops_total": warm + n}
    out.update(latency("pair", lat))
    return out


def scenario_b(args):
    # `pairs` independent (A, B) pairs on distinct locks run side by side, each
    # doing handoffs/pairs handoffs one after another, so that releases land at
    # random points of B's 100 ms polling cycle without taking minutes.
    per_pair = max(1, args.handoffs // args.pairs)
    samples = []
    lock = threading.Lock()
    errors = []

    def run_pair(k):
        ra, rb = client(args.port), client(args.port)
        name = "bench:py:b:%d" % k
        for _ in range(per_pair):
            a = ra.lock(name, timeout=LEASE_S)
            if not a.acquire():
                errors.append("A acquire")
                return
            got = {}

            def waiter():
                b = rb.lock(name, timeout=LEASE_S)
                if b.acquire():  # blocking, default sleep=0.1
                    got["t1"] = time.perf_counter_ns()
                    b.release()

            t = threading.Thread(target=waiter)
            t.start()
            # Hold for a random time spanning a whole polling interval.
            time.sleep(0.005 + random.random() * 0.1)
            t0 = time.perf_counter_ns()
            a.release()
            t.join()
            if "t1" not in got:
                errors.append("B acquire")
                return
            with lock:
                samples.append(got["t1"] - t0)

    threads = [threading.Thread(target=run_pair, args=(k,)) for k in range(args.pairs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise SystemExit("handoff failed: %s" % errors[0])
    if args.samples:
        with open(args.samples, "w") as f:
            for v in samples:
                f.write("%.3f\n" % (v / 1000.0))
    out = {"scenario": "b", "library": "redis-py", "concurrent_pairs": args.pairs, "ops_total": len(samples)}
    out.update(latency("handoff", samples))
    return out


def scenario_c(args):
    admin = client(args.port)
    admin.delete("bench:py:c:counter", "bench:py:c:lock")
    counts = [0] * args.clients
    holders = [0]
    overlaps = [0]
    guard = threading.Lock()
    ready = threading.Barrier(args.clients + 1)
    deadline = [0.0]

    def worker(i):
        r = client(args.port)
        r.ping()
        ready.wait()
        n = 0
        while time.perf_counter() < deadline[0]:
            lk = r.lock("bench:py:c:lock", timeout=LEASE_S)
            lk.acquire()  # blocking, default sleep=0.1
            with guard:
                holders[0] += 1
                if holders[0] != 1:
                    overlaps[0] += 1
            v = int(r.get("bench:py:c:counter") or 0)
            r.set("bench:py:c:counter", v + 1)
            n += 1
            with guard:
                holders[0] -= 1
            lk.release()
        counts[i] = n

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(args.clients)]
    for t in threads:
        t.start()
    start = time.perf_counter()
    deadline[0] = start + args.ms / 1000.0
    ready.wait()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - start
    total = sum(counts)
    counter = int(admin.get("bench:py:c:counter") or 0)
    return {"scenario": "c", "library": "redis-py", "kind": "plain", "clients": args.clients,
            "seconds": elapsed, "acquisitions": total, "ops_total": total, "acquisitions_per_s": total / elapsed,
            "per_client_min": min(counts), "per_client_max": max(counts), "per_client": counts,
            "counter": counter, "overlaps": overlaps[0],
            "exclusion_ok": counter == total and overlaps[0] == 0}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("scenario", choices=["a", "b", "c"])
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--pairs", type=int, default=None)
    p.add_argument("--handoffs", type=int, default=200)
    p.add_argument("--samples", default="")
    p.add_argument("--clients", type=int, default=8)
    p.add_argument("--ms", type=int, default=2000)
    args = p.parse_args()
    if args.scenario == "a":
        args.pairs = args.pairs or 2000
        out = scenario_a(args)
    elif args.scenario == "b":
        args.pairs = args.pairs or 4
        out = scenario_b(args)
    else:
        out = scenario_c(args)
    out["version"] = redis.__version__
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
