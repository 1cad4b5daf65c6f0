#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""`make bench`: every scenario of issue 6 in one run, against one throwaway
redis-server, then bench/results.json, the handoff PNGs and BENCHMARKS.md.

    python3 bench/run_bench.py --build bench/build [--rounds 5] [--quick]

Each round measures the floor first and then every scenario, so a ratio is
taken against the floor of its own round; a reported figure is the median over
rounds (of the value, or of the per-round ratio). Nothing here asserts: the
goals are reported as met or missed.
"""
import argparse
import atexit
import datetime
import json
import os
import platform
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
OUT = os.path.join(HERE, "out")  # raw per-run output (gitignored)
# B's scenarios and the library names their samples go under in the plots.
B_LIBS = {"b_async": "edgelock async", "b_blocking": "edgelock blocking", "b_plain": "plain hiredis"}
SYS_PY = "/usr/bin/python3"  # Debian's python3, where python3-redis lives
FLOOR_OWNER = "5b0d3c1e-7a44-4f0e-9a57-0c2f1b9e8d41:4242"

_redis_proc = None


def log(msg):
    print("bench: " + msg, file=sys.stderr, flush=True)


# ---- the throwaway redis-server -------------------------------------------------------

def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def ping(port):
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5) as s:
            s.sendall(b"PING\r\n")
            return s.recv(64).startswith(b"+PONG")
    except OSError:
        return False


def spawn_redis(own_session=False):
    """A throwaway redis-server on a free loopback port: (port, process).
    own_session: in a session of its own (setsid), as a service manager
    starts one; otherwise in ours, as the bench's other processes are. With
    the kernel's autogroup scheduling each session is a scheduling group of
    its own, and that changes how the server and the clients share the CPUs
    (BENCHMARKS.md, B)."""
    for _ in range(5):
        port = free_port()
        proc = subprocess.Popen(
            ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--logfile", "/dev/null", "--loglevel", "warning"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=own_session)
        for _ in range(300):
            if ping(port):
                return port, proc
            if proc.poll() is not None:
                break
            time.sleep(0.01)
        kill_proc(proc)
    raise SystemExit("bench: cannot start redis-server")


def kill_proc(proc):
    if proc and proc.poll() is None:
        proc.kill()
        proc.wait()


def start_redis():
    global _redis_proc
    port, _redis_proc = spawn_redis()
    return port


def stop_redis():
    global _redis_proc
    kill_proc(_redis_proc)
    _redis_proc = None


def run_json_pinned(cmd, timeout=300):
    """cmd with the redis-server on a CPU of its own and cmd on the others
    (their threads share those), then the server's CPUs as before. None when
    the machine has fewer than 2 CPUs for us."""
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2 or not _redis_proc or _redis_proc.poll() is not None:
        return None
    server_cpus = os.sched_getaffinity(_redis_proc.pid)
    try:
        os.sched_setaffinity(_redis_proc.pid, {cpus[-1]})
    except OSError:
        return None
    try:
        return run_json(["taskset", "-c", ",".join(str(c) for c in cpus[:-1])] + cmd, timeout=timeout)
    finally:
        os.sched_setaffinity(_redis_proc.pid, server_cpus)


_cluster_procs = []


def start_cluster(masters=3):
    """A throwaway cluster of `masters` masters (no replicas: F counts the
    client's round trips, not replication), each in a temp dir, every slot
    assigned. Returns the ports."""
    import tempfile
    base = tempfile.mkdtemp(prefix="edgelock-bench-cluster.")
    ports = []
    for i in range(masters):
        d = os.path.join(base, "n%d" % i)
        os.makedirs(d)
        port, bus = free_port(), free_port()
        _cluster_procs.append(subprocess.Popen(
            ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
             "--logfile", "/dev/null", "--loglevel", "warning", "--cluster-enabled", "yes",
             "--cluster-config-file", "nodes.conf", "--cluster-port", str(bus), "--dir", d],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        for _ in range(300):
            if ping(port):
                break
            time.sleep(0.01)
        ports.append((port, bus))
    for i, (port, _) in enumerate(ports):
        lo, hi = 16384 * i // masters, 16384 * (i + 1) // masters - 1
        redis_cli(port, "CLUSTER", "ADDSLOTSRANGE", str(lo), str(hi))
    for port, _ in ports[1:]:
        redis_cli(port, "CLUSTER", "MEET", "127.0.0.1", str(ports[0][0]), str(ports[0][1]))
    for _ in range(600):
        if all("cluster_state:ok" in redis_cli(p, "CLUSTER", "INFO") for p, _ in ports):
            return [p for p, _ in ports]
        time.sleep(0.05)
    raise SystemExit("bench: the cluster did not come up")


def stop_cluster():
    while _cluster_procs:
        p = _cluster_procs.pop()
        if p.poll() is None:
            p.kill()
            p.wait()


def redis_cli(port, *args):
    return subprocess.run(["redis-cli", "-p", str(port)] + list(args), capture_output=True,
                          text=True, timeout=30).stdout.strip()


def flush(port):
    redis_cli(port, "FLUSHALL")


# ---- running one measurement ----------------------------------------------------------

def run_json(cmd, timeout=300, cwd=None):
    """Runs cmd, returns the JSON object on its last stdout line, or an error dict."""
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=cwd)
    except subprocess.TimeoutExpired:
        return {"error": "timed out after %d s: %s" % (timeout, " ".join(cmd))}
    lines = [l for l in p.stdout.splitlines() if l.startswith("{")]
    if p.returncode != 0 or not lines:
        err = (p.stderr.strip().splitlines() or ["exit %d" % p.returncode])[-1]
        return {"error": "%s: %s" % (os.path.basename(cmd[0]) if cmd[0] != SYS_PY and cmd[0] != "node"
                                     else os.path.basename(cmd[1]), err)}
    try:
        return json.loads(lines[-1])
    except ValueError:
        return {"error": "unreadable output: " + lines[-1][:200]}


def redis_benchmark(port, sha, clients, pipeline, n):
    cmd = ["redis-benchmark", "-h", "127.0.0.1", "-p", str(port), "-c", str(clients), "-P", str(pipeline),
           "-n", str(n), "-r", "1000000", "--csv", "EVALSHA", sha, "1", "bench:rb:__rand_int__", "5000",
           FLOOR_OWNER]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    rows = [l for l in p.stdout.splitlines() if l.startswith('"EVALSHA')]
    if not rows:
        return None
    return float(rows[-1].split(",")[1].strip('"'))


# ---- machine, versions, load ------------------------------------------------------------

def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def cpu_times():
    """(total, idle, steal) jiffies of all cores from /proc/stat."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    # user nice system idle iowait irq softirq steal (guest time is inside user)
    v = v[:8] + [0] * (8 - len(v[:8]))
    return sum(v), v[3] + v[4], v[7]


def busy_between(a, b):
    total, idle = b[0] - a[0], b[1] - a[1]
    return 0.0 if total <= 0 else 100.0 * (total - idle) / total


def steal_between(a, b):
    total = b[0] - a[0]
    return 0.0 if total <= 0 else 100.0 * (b[2] - a[2]) / total


def redis_stats(port):
    """(calls per command, server CPU seconds) from INFO."""
    out = redis_cli(port, "INFO", "commandstats") + "\n" + redis_cli(port, "INFO", "cpu")
    calls, cpu = {}, 0.0
    for line in out.splitlines():
        m = re.match(r"cmdstat_([^:]+):calls=(\d+)", line)
        if m:
            calls[m.group(1)] = int(m.group(2))
        m = re.match(r"used_cpu_(sys|user):([\d.]+)", line)
        if m:
            cpu += float(m.group(2))
    return calls, cpu


def redirects(port):
    """MOVED and ASK answers a node has given (INFO errorstats)."""
    n = 0
    for line in redis_cli(port, "INFO", "errorstats").splitlines():
        m = re.match(r"errorstat_(MOVED|ASK):count=(\d+)", line)
        if m:
            n += int(m.group(2))
    return n


def with_calls(ports, cmd):
    """Runs cmd and adds what every node in ports ran per operation (and how
    often one answered MOVED or ASK)."""
    before = [redis_stats(p)[0] for p in ports]
    moved0 = sum(redirects(p) for p in ports)
    obj = run_json(cmd)
    after = [redis_stats(p)[0] for p in ports]
    moved1 = sum(redirects(p) for p in ports)
    n = obj.get("ops_total")
    if "error" in obj or not n:
        return obj
    delta = {}
    for b, a in zip(before, after):
        for k, v in a.items():
            delta[k] = delta.get(k, 0) + v - b.get(k, 0)
    delta.pop("info", None)  # ours, reading these figures
    obj["redis_per_op"] = {k: v / n for k, v in sorted(delta.items()) if v > 0}
    # A pair's own commands, apart from what a connection does once (load the
    # scripts) and a cluster client's map and pub/sub-mode queries.
    setup = ("cluster", "pubsub", "script", "hello", "ping", "client", "command")
    obj["commands_per_op"] = sum(v for k, v in obj["redis_per_op"].items() if not k.startswith(setup))
    obj["setup_commands"] = sum(delta[k] for k in delta if k.startswith(setup) and delta[k] > 0)
    obj["redirects"] = moved1 - moved0
    return obj


def with_floor(port, bench, cmd, timeout=300, count_key=None):
    """Runs one scenario bracketed by floor probes (same seconds, same machine
    state) and by Redis INFO, so its ratios and server cost are its own."""
    before = run_json([bench, "probe", "--port", str(port)])
    calls0, cpu0 = redis_stats(port)
    t0 = time.time()
    obj = run_json(cmd, timeout=timeout)
    wall = time.time() - t0
    calls1, cpu1 = redis_stats(port)
    after = run_json([bench, "probe", "--port", str(port)])
    if "error" in obj:
        return obj
    probe = {}
    for k in ("hot_rtt_mean_us", "hot_rtt_p50_us", "idle_rtt_p50_us"):
        vals = [p[k] for p in (before, after) if k in p]
        probe[k] = sum(vals) / len(vals) if vals else None
    obj["probe"] = probe
    n = obj.get(count_key) if count_key else None
    if n:
        delta = {k: calls1.get(k, 0) - calls0.get(k, 0) for k in calls1}
        delta.pop("info", None)
        obj["redis_per_op"] = {k: v / n for k, v in sorted(delta.items()) if v > 0}
        obj["redis_cpu_us_per_op"] = (cpu1 - cpu0) * 1e6 / n
        obj["redis_cpu_pct_of_core"] = 100.0 * (cpu1 - cpu0) / wall if wall > 0 else None
    return obj


def loadavg():
    with open("/proc/loadavg") as f:
        return [float(x) for x in f.read().split()[:3]]


def cmd_version(cmd, pattern=None):
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=20).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return None
    if pattern:
        m = re.search(pattern, out)
        return m.group(1) if m else None
    return out or None


def dpkg_version(pkg):
    return cmd_version(["dpkg-query", "-W", "-f=${Version}", pkg])


# ---- reference libraries ------------------------------------------------------------------

def prepare_redispy():
    v = cmd_version([SYS_PY, "-c", "import redis; print(redis.__version__)"])
    return (v, None) if v else (None, "python3-redis is not importable by %s" % SYS_PY)


def prepare_redlock():
    if not shutil.which("node") or not shutil.which("npm"):
        return None, "node/npm not installed"
    pkg = os.path.join(HERE, "node_modules", "redlock", "package.json")
    if not os.path.exists(pkg) or not os.path.exists(os.path.join(HERE, "node_modules", "ioredis")):
        log("npm install (redlock, ioredis) into bench/node_modules")
        p = subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--loglevel=error"], cwd=HERE,
                           capture_output=True, text=True, timeout=300)
        if p.returncode != 0 or not os.path.exists(pkg):
            return None, "npm install failed: " + ((p.stderr.strip().splitlines() or ["?"])[-1])
    with open(pkg) as f:
        return json.load(f)["version"], None


# ---- aggregation ------------------------------------------------------------------------

def med(values):
    values = [v for v in values if isinstance(v, (int, float))]
    return statistics.median(values) if values else None


def numeric_medians(runs):
    """{field: median over runs} for every numeric field of the run objects."""
    ok = [r for r in runs if "error" not in r]
    keys = []
    for r in ok:
        for k, v in r.items():
            if isinstance(v, (int, float)) and not isinstance(v, bool) and k not in keys:
                keys.append(k)
    return {k: med([r.get(k) for r in ok]) for k in keys}


def fmt(v, digits=3):
    if v is None:
        return "n/a"
    if isinstance(v, float):
        if abs(v) >= 1000:
            return "{:,.0f}".format(v)
        if abs(v) >= 100:
            return "%.0f" % v
        return ("%." + str(digits) + "g") % v
    return str(v)


def pct(v):
    """A share (0..1) as a whole percentage."""
    return "n/a" if v is None else "%.0f %%" % (100 * v)


def us(v):
    """Microseconds, shown in ms above 10 ms."""
    if v is None:
        return "n/a"
    if v >= 10000:
        return "%.1f ms" % (v / 1000.0)
    return "%.0f µs" % v


# ---- main ----------------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(HERE, "build"))
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--ref-b-rounds", type=int, default=3, help="rounds that include the references' B")
    ap.add_argument("--c-ms", type=int, default=2000)
    ap.add_argument("--quick", action="store_true", help="one short round (for trying the driver)")
    ap.add_argument("--render-only", action="store_true",
                    help="redraw the PNGs and rewrite BENCHMARKS.md from bench/results.json and bench/out/")
    args = ap.parse_args()
    if args.render_only:
        render_only()
        return
    if args.quick:
        args.rounds, args.ref_b_rounds, args.c_ms = 1, 1, 1000

    bench = os.path.join(args.build, "edgelock_bench")
    bench_alloc = os.path.join(args.build, "edgelock_bench_alloc")
    for b in (bench, bench_alloc):
        if not os.access(b, os.X_OK):
            raise SystemExit("bench: %s not built (run `make bench`)" % b)
    os.makedirs(OUT, exist_ok=True)
    for f in os.listdir(OUT):  # last run's raw files (bench/profile.sh keeps its own subfolder)
        if os.path.isfile(os.path.join(OUT, f)):
            os.remove(os.path.join(OUT, f))

    t_start = time.time()
    # The machine's load from others, before we add ours.
    c0 = cpu_times()
    time.sleep(2.0)
    c1 = cpu_times()
    background_busy, background_steal = busy_between(c0, c1), steal_between(c0, c1)
    load_start = loadavg()
    cpu_start = cpu_times()

    port = start_redis()
    atexit.register(stop_redis)
    # B's blocking handoff once more against a server in a session of its
    # own (spawn_redis), as a gateway's local Redis runs under its service
    # manager.
    session_port, session_proc = spawn_redis(own_session=True)
    atexit.register(kill_proc, session_proc)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    log("redis-server on 127.0.0.1:%d" % port)

    info = run_json([bench, "shas"])
    sha = info["acquire"]
    pyv, py_skip = prepare_redispy()
    rlv, rl_skip = prepare_redlock()
    skipped = {}
    if py_skip:
        skipped["redis-py"] = py_skip
        log("skipping redis-py rows: " + py_skip)
    if rl_skip:
        skipped["redlock"] = rl_skip
        log("skipping redlock rows: " + rl_skip)
    ioredis_v = None
    if not rl_skip:
        try:
            with open(os.path.join(HERE, "node_modules", "ioredis", "package.json")) as f:
                ioredis_v = json.load(f)["version"]
        except OSError:
            pass

    runs = {}  # name -> list of per-round objects
    samples = {}  # library -> list of sample files (B)
    samples_a = {}  # the same for A

    def rec(name, obj, rnd):
        obj = dict(obj)
        obj["round"] = rnd
        runs.setdefault(name, []).append(obj)
        if "error" in obj:
            log("  %s: %s" % (name, obj["error"]))
        return obj

    ref_py = os.path.join(HERE, "ref", "redispy_bench.py")
    ref_rl = os.path.join(HERE, "ref", "redlock_bench.js")
    load_per_round = []
    for rnd in range(args.rounds):
        log("round %d/%d (load %s)" % (rnd + 1, args.rounds, " ".join("%.2f" % x for x in loadavg())))
        load_per_round.append(loadavg())
        P = ["--port", str(port)]
        flush(port)
        rec("floor", run_json([bench, "floor"] + P), rnd)
        flush(port)
        rb = {"c50_p16": redis_benchmark(port, sha, 50, 16, 100000),
              "c1_p512": redis_benchmark(port, sha, 1, 512, 100000)}
        rec("server_bound", rb, rnd)
        a_runs = (("a_blocking", [bench, "a_blocking"], "edgelock blocking, handle reused"),
                  ("a_async", [bench, "a_async"], "edgelock async"),
                  # a handle per key (lock_new + lock_free in every pair), as the README does
                  ("a_blocking_fresh", [bench, "a_blocking", "--fresh", "1"], "edgelock blocking, a handle per key"))
        for s, argv, lib in a_runs:
            flush(port)
            f = os.path.join(OUT, "a_%s_%d.txt" % (s, rnd))
            rec(s, with_floor(port, bench, argv + ["--samples", f] + P, count_key="ops_total"), rnd)
            samples_a.setdefault(lib, []).append(f)
        flush(port)
        rec("a2", run_json([bench, "a2"] + P), rnd)
        rb2 = {"c50_p16": redis_benchmark(port, sha, 50, 16, 100000),
               "c1_p512": redis_benchmark(port, sha, 1, 512, 100000)}
        # The bound for A2 is the mean of the runs right before and after it.
        runs["server_bound"][-1] = dict(
            {k: (rb[k] + rb2[k]) / 2 if rb[k] and rb2[k] else rb[k] or rb2[k] for k in rb}, round=rnd)
        for s in ("b_async", "b_blocking", "b_plain"):
            flush(port)
            f = os.path.join(OUT, "%s_%d.txt" % (s, rnd))
            rec(s, with_floor(port, bench, [bench, s, "--samples", f] + P, count_key="ops_total"), rnd)
            samples.setdefault(B_LIBS[s], []).append(f)
        # B's method checked on itself: a plain client in edgelock's place.
        flush(port)
        rec("b_calibrate", run_json([bench, "b_calibrate"] + P), rnd)
        # Which side of B's handoff edgelock's extra time is on: edgelock as
        # the holder with a plain waiter, and the other way round.
        for holder in ("1", "0"):
            flush(port)
            rec("b_mixed_" + ("holder" if holder == "1" else "waiter"),
                run_json([bench, "b_mixed", "--holder", holder] + P), rnd)
        # And with the server on a CPU the clients do not share (as a
        # gateway's Redis is on another machine): see BENCHMARKS.md.
        flush(port)
        pinned = run_json_pinned([bench, "b_blocking"] + P)
        if pinned is not None:
            pinned["scenario"] = "b_blocking_pinned"
            rec("b_blocking_pinned", pinned, rnd)
        for name, argv in (("b_blocking", ["b_blocking"]), ("b_calibrate", ["b_calibrate"]),
                           ("b_mixed_holder", ["b_mixed", "--holder", "1"])):
            flush(session_port)
            obj = run_json([bench] + argv + ["--port", str(session_port)])
            obj["scenario"] = name + "_own_session"
            rec(name + "_own_session", obj, rnd)
        # S: an expirable semaphore (issue 16): take+give-back pairs, and B's handoff.
        flush(port)
        rec("s_pairs", with_floor(port, bench, [bench, "s_pairs"] + P, count_key="ops_total"), rnd)
        flush(port)
        rec("s_handoff", with_floor(port, bench, [bench, "s_handoff"] + P, count_key="ops_total"), rnd)
        # "_shared": the 8 contenders are owners of one client (async task ids,
        # or threads sharing a blocking client), as one process runs them.
        for kind, api, shared in (("reentrant", "async", 0), ("reentrant", "blocking", 0), ("reentrant", "plain", 0),
                                  ("fair", "async", 0), ("fair", "blocking", 0), ("reentrant", "async", 1),
                                  ("reentrant", "blocking", 1)):
            flush(port)
            rec("c_%s_%s%s" % (kind, api, "_shared" if shared else ""),
                with_floor(port, bench, [bench, "c", "--kind", kind, "--api", api, "--ms", str(args.c_ms),
                                         "--shared", str(shared)] + P,
                           count_key="ops_total"), rnd)
        refs = []
        if not py_skip:
            refs.append(("redis-py", [SYS_PY, ref_py]))
        if not rl_skip:
            refs.append(("redlock", ["node", ref_rl]))
        for lib, base in refs:
            flush(port)
            f = os.path.join(OUT, "a_%s_%d.txt" % (lib, rnd))
            rec(lib + "_a", with_floor(port, bench, base + ["a", "--samples", f] + P, count_key="ops_total"), rnd)
            samples_a.setdefault(lib, []).append(f)
            if rnd < args.ref_b_rounds:
                flush(port)
                f = os.path.join(OUT, "b_%s_%d.txt" % (lib, rnd))
                rec(lib + "_b", with_floor(port, bench, base + ["b", "--samples", f] + P, timeout=240,
                                           count_key="ops_total"), rnd)
                samples.setdefault(lib, []).append(f)
            flush(port)
            rec(lib + "_c", with_floor(port, bench, base + ["c", "--ms", str(args.c_ms)] + P,
                                       count_key="ops_total"), rnd)

    log("D: 10,000 holds under the watchdog")
    for rnd in range(1 if args.quick else 3):
        flush(port)
        rec("d", run_json([bench, "d", "--port", str(port)], timeout=120), rnd)
        # A pair's cost beside 10,000 held locks and beside 10: two clients of
        # one process, taking turns in blocks of 100 pairs.
        flush(port)
        rec("d_cost", run_json([bench, "d_cost", "--holds", "10000", "--few", "10", "--port", str(port)],
                               timeout=240), rnd)
        # An async handoff to a client with 10,000 lock calls waiting on other
        # locks, alternated with one to a client with 10.
        flush(port)
        rec("d_waiters", run_json([bench, "d_waiters", "--waiters", "10000", "--port", str(port)], timeout=240), rnd)
    log("E: allocations and RSS")
    for rnd in range(1 if args.quick else 3):
        flush(port)
        rec("e_alloc", run_json([bench_alloc, "--port", str(port)]), rnd)
    # Redis-side cost of edgelock's A without the interleaved floor's own traffic.
    for s_ in ("a_blocking", "a_async"):
        flush(port)
        rec(s_ + "_nofloor", with_floor(port, bench, [bench, s_, "--floor", "0", "--pairs", "2000", "--port", str(port)],
                                         count_key="ops_total"), 0)
    log("F: uncontended pairs on a cluster and on one Redis")
    cluster_ports = start_cluster()
    atexit.register(stop_cluster)
    seed = "redis-cluster://127.0.0.1:%d" % cluster_ports[0]
    for rnd in range(1 if args.quick else 3):
        flush(port)
        rec("f_single", with_calls([port], [bench, "a_url", "--url", "redis://127.0.0.1:%d" % port,
                                            "--port", str(port)]), rnd)
        for p in cluster_ports:
            flush(p)
        rec("f_cluster", with_calls(cluster_ports, [bench, "a_url", "--url", seed,
                                                    "--port", str(cluster_ports[0])]), rnd)
    stop_cluster()
    rss = []
    for locks, fill in ((64, 1), (1000, 1), (10000, 1), (100000, 0)):
        flush(port)
        rss.append(run_json([bench, "e_rss", "--locks", str(locks), "--fill", str(fill), "--port", str(port)]))
    redis_version = redis_cli(port, "INFO", "server")
    m = re.search(r"redis_version:(\S+)", redis_version)
    redis_version = m.group(1) if m else None
    stop_redis()
    kill_proc(session_proc)

    cpu_end = cpu_times()
    elapsed = time.time() - t_start

    # ---- figures ----
    M = {name: numeric_medians(rs) for name, rs in runs.items()}
    by_round = {}
    for name, rs in runs.items():
        for r in rs:
            by_round.setdefault(r["round"], {})[name] = r

    def ratio_median(fn):
        vals = []
        for rnd, objs in sorted(by_round.items()):
            try:
                v = fn(objs)
            except (KeyError, TypeError, ZeroDivisionError):
                v = None
            if v is not None:
                vals.append(v)
        return med(vals)

    # Every A, B and C run carries the floor probed right before and after it.
    def pr(o, k, field):
        return o[k]["probe"][field]

    def floor_pair_rate(o, k):  # pairs/s of 2 hot round trips
        return 1e6 / (2 * pr(o, k, "hot_rtt_mean_us"))

    def c_bound(o, k):  # acquisitions/s of 3 hot round trips
        return 1e6 / (3 * pr(o, k, "hot_rtt_mean_us"))

    def best_bound(o):
        return max(v for k, v in o["server_bound"].items() if k != "round" and isinstance(v, (int, float)))

    ratios = {}
    # edgelock's A and B carry a floor interleaved with them in the same
    # process; the references' use the probes right before and after the run.
    for key in ("a_blocking", "a_blocking_fresh", "a_async"):
        if key in M:
            ratios[key] = {
                "pairs_vs_floor": ratio_median(lambda o, k=key: o[k]["ratio_vs_floor"]),
                "p50_in_rtts": ratio_median(lambda o, k=key: o[k]["p50_in_floor_rtts"]),
                "p99_in_rtts": ratio_median(lambda o, k=key: o[k]["pair_p99_us"] / o[k]["floor_rtt_p50_us"]),
                "floor": "interleaved",
            }
    for key in ("a_blocking", "a_blocking_fresh"):  # issue 13's floor: the same traffic, plain sync hiredis
        if key in M and "ratio_vs_sync_pair" in M[key]:
            ratios[key]["vs_sync_pair"] = ratio_median(lambda o, k=key: o[k]["ratio_vs_sync_pair"])
    if "a_async" in M:
        ratios["a_async"]["vs_hiredis_async_pair"] = ratio_median(lambda o: o["a_async"]["ratio_vs_hiredis_async_pair"])
    for key in ("redis-py_a", "redlock_a"):
        if key in M:
            ratios[key] = {
                "pairs_vs_floor": ratio_median(lambda o, k=key: o[k]["pairs_per_s"] / floor_pair_rate(o, k)),
                "p50_in_rtts": ratio_median(lambda o, k=key: o[k]["pair_p50_us"] / pr(o, k, "hot_rtt_p50_us")),
                "p99_in_rtts": ratio_median(lambda o, k=key: o[k]["pair_p99_us"] / pr(o, k, "hot_rtt_p50_us")),
                "floor": "bracketing",
            }
    for key in ("a_blocking", "a_blocking_fresh", "a_async"):
        if key in M:  # the same bracketing ratio as the references', for comparison
            ratios[key]["pairs_vs_floor_bracketing"] = ratio_median(
                lambda o, k=key: o[k]["pairs_per_s"] / floor_pair_rate(o, k))
    if "a2" in M:
        ratios["a2"] = {
            "vs_server_bound": ratio_median(lambda o: o["a2"]["acquisitions_per_s"] / o["server_bound"]["c50_p16"]),
            "vs_best_server_bound": ratio_median(lambda o: o["a2"]["acquisitions_per_s"] / best_bound(o)),
        }
    for key in ("b_async", "b_blocking", "b_plain"):
        if key in M:
            ratios[key] = {
                "p50_in_idle_rtts": ratio_median(lambda o, k=key: o[k]["p50_in_idle_rtts"]),
                "p99_in_idle_rtts": ratio_median(lambda o, k=key: o[k]["p99_in_idle_rtts"]),
                "p50_in_idle_rtts_bracketing": ratio_median(
                    lambda o, k=key: o[k]["handoff_p50_us"] / pr(o, k, "idle_rtt_p50_us")),
                "floor": "interleaved",
            }
    # Issue 13: against a plain client of the same protocol (plain_lock.cpp).
    # edgelock's B runs interleave the plain client's handoffs with their own,
    # one each in turn in the same process: the p50s divide directly. (Idle
    # round trips, the other normaliser, were measured from a loop thread in
    # one run and a plain thread in the other, and differed by up to 3x in one
    # round on their own.) The references, in processes of their own, are
    # taken in idle round trips of their bracketing probes, divided by the
    # plain run's.
    # The async face against the plain client over hiredis async on one loop
    # (plain_async.cpp), as its two clients share one; the two-thread sync
    # client is shown beside it. b_calibrate puts a plain client in
    # edgelock's place: 1.0 when the method favours neither side.
    # Each is also split by where the waiter's lock call returned (on the CPU
    # the holder's unlock started on, or the other): the share of each and
    # the p50s of like against like, so that the mix of placements, which the
    # kernel chooses for the benchmark's own threads, does not move the ratio.
    threaded = ("b_blocking", "b_calibrate", "b_mixed_holder", "b_mixed_waiter", "b_blocking_pinned",
                "b_blocking_own_session", "b_calibrate_own_session", "b_mixed_holder_own_session")
    for key in threaded:
        if key in M:
            ratios.setdefault(key, {}).update({
                "p50_vs_plain": ratio_median(lambda o, k=key: o[k]["p50_vs_plain_interleaved"]),
                "same_cpu_share": ratio_median(lambda o, k=key: o[k]["same_cpu_share"]),
                "plain_same_cpu_share": ratio_median(lambda o, k=key: o[k]["plain_same_cpu_share"]),
                "p50_vs_plain_same_cpu": ratio_median(
                    lambda o, k=key: o[k]["same_cpu_p50_us"] / o[k]["plain_same_cpu_p50_us"]),
                "p50_vs_plain_other_cpu": ratio_median(
                    lambda o, k=key: o[k]["other_cpu_p50_us"] / o[k]["plain_other_cpu_p50_us"])})
    for key in threaded[1:]:  # b_blocking's idle-RTT figures are set with A's and B's above
        if key in M:
            ratios[key].update({
                "p50_in_idle_rtts": ratio_median(lambda o, k=key: o[k]["p50_in_idle_rtts"]),
                "p99_in_idle_rtts": ratio_median(lambda o, k=key: o[k]["p99_in_idle_rtts"]),
                "floor": "interleaved"})
    if "b_async" in M:
        ratios.setdefault("b_async", {})["p50_vs_plain_sync"] = ratio_median(
            lambda o: o["b_async"]["p50_vs_plain_interleaved"])
        if "p50_vs_plain_async_interleaved" in M["b_async"]:
            ratios["b_async"]["p50_vs_plain"] = ratio_median(
                lambda o: o["b_async"]["p50_vs_plain_async_interleaved"])
            ratios["b_plain_async"] = {
                "p50_in_idle_rtts": ratio_median(
                    lambda o: o["b_async"]["plain_async_handoff_p50_us"] / o["b_async"]["idle_rtt_p50_us"]),
                "p99_in_idle_rtts": ratio_median(
                    lambda o: o["b_async"]["plain_async_handoff_p99_us"] / o["b_async"]["idle_rtt_p50_us"]),
                "floor": "interleaved",
            }
    for key in ("redis-py_b", "redlock_b"):
        if key in M and "b_plain" in M:
            ratios.setdefault(key, {})["p50_vs_plain"] = ratio_median(
                lambda o, k=key: o[k]["handoff_p50_us"] / pr(o, k, "idle_rtt_p50_us") / o["b_plain"]["p50_in_idle_rtts"])
    for key in ("redis-py_b", "redlock_b"):
        if key in M:
            ratios.setdefault(key, {}).update({
                "p50_in_idle_rtts": ratio_median(lambda o, k=key: o[k]["handoff_p50_us"] / pr(o, k, "idle_rtt_p50_us")),
                "p99_in_idle_rtts": ratio_median(lambda o, k=key: o[k]["handoff_p99_us"] / pr(o, k, "idle_rtt_p50_us")),
                "floor": "bracketing",
            })
    for key in ("c_reentrant_async", "c_reentrant_blocking", "c_reentrant_plain", "c_fair_async",
                "c_fair_blocking", "c_reentrant_async_shared", "c_reentrant_blocking_shared", "redis-py_c",
                "redlock_c"):
        if key in M:
            ratios[key] = {
                "vs_plain": ratio_median(lambda o, k=key: o[k]["acquisitions_per_s"]
                                         / o["c_reentrant_plain"]["acquisitions_per_s"]),
                "vs_bound": ratio_median(lambda o, k=key: o[k]["acquisitions_per_s"] / c_bound(o, k)),
                "min_over_max": ratio_median(
                    lambda o, k=key: o[k]["per_client_min"] / o[k]["per_client_max"] if o[k]["per_client_max"] else 0.0),
                "exclusion_ok_all_runs": all(r.get("exclusion_ok") is True for r in runs[key]),
            }
    if "f_single" in M and "f_cluster" in M:
        ratios["f"] = {
            "commands_vs_single": ratio_median(
                lambda o: o["f_cluster"]["commands_per_op"] / o["f_single"]["commands_per_op"]),
            "pairs_vs_single": ratio_median(lambda o: o["f_cluster"]["pairs_per_s"] / o["f_single"]["pairs_per_s"]),
            "floor_ratio_vs_single": ratio_median(
                lambda o: o["f_cluster"]["ratio_vs_floor"] / o["f_single"]["ratio_vs_floor"]),
            "redirects": max(r.get("redirects", 0) for r in runs["f_cluster"]),
        }
    if "d_cost" in M:
        ratios["d_cost"] = {"cpu_10000_vs_10": ratio_median(lambda o: o["d_cost"]["cpu_vs_few"])}
    if "d_waiters" in M:
        ratios["d_waiters"] = {"p50_10000_vs_10": ratio_median(lambda o: o["d_waiters"]["p50_many_vs_few"])}
    # Redis cost per operation (pair, handoff cycle, acquisition), medians over rounds.
    redis_cost = {}
    for key, rs in runs.items():
        if key in ("a_blocking", "a_blocking_fresh", "a_async"):
            continue  # polluted by the interleaved floor; see *_nofloor
        per = [r["redis_per_op"] for r in rs if "redis_per_op" in r]
        if not per:
            continue
        cmds = sorted({c for p in per for c in p})
        redis_cost[key] = {
            "commands_per_op": {c: med([p.get(c, 0) for p in per]) for c in cmds},
            "cpu_us_per_op": med([r.get("redis_cpu_us_per_op") for r in rs]),
            "cpu_pct_of_core": med([r.get("redis_cpu_pct_of_core") for r in rs]),
        }

    # ---- goals ----
    goals = []

    def goal(name, what, value, target, ok):
        goals.append({"goal": name, "measured": what, "value": value, "target": target,
                      "met": None if value is None else bool(ok)})

    for key, label in (("a_blocking", "blocking"), ("a_async", "async")):
        v = ratios.get(key, {}).get("pairs_vs_floor")
        goal("A uncontended (%s)" % label, "pairs/s ÷ floor (1 / 2 hot RTT)", v, ">= 0.95", v is not None and v >= 0.95)
    # Issue 13: the blocking API at the floor, "the same wire traffic sent
    # through plain sync hiredis" (acquire, release, the latch's DEL; chunks
    # interleaved with edgelock's), a handle per key or reused, and its cost
    # in context switches. The 2-hot-RTT goal above is the stricter floor:
    # two acquires on fresh keys cost Redis less than an acquire and a release.
    for key, label, target in (("a_blocking_fresh", "blocking, a handle per key", 0.90),
                               ("a_blocking", "blocking, handle reused", 0.95)):
        v = ratios.get(key, {}).get("vs_sync_pair")
        goal("A uncontended (%s; issue 13)" % label, "pairs/s ÷ plain sync hiredis, same scripts", v, ">= %.2f" % target,
             v is not None and v >= target)
    v = ratios.get("a_async", {}).get("vs_hiredis_async_pair")
    goal("A uncontended (async; issue 13)", "pairs/s ÷ bare hiredis async, same commands", v, ">= 0.95",
         v is not None and v >= 0.95)
    # Counted by getrusage for the whole process: voluntary switches are the
    # sleeps the process takes (on the socket, a futex); involuntary ones are
    # the scheduler preempting it for another task (Redis shares the two
    # cores), which plain sync hiredis gets too (its floor chunks, same run).
    for key, label in (("a_blocking_fresh", "a handle per key"), ("a_blocking", "handle reused")):
        v = M.get(key, {}).get("voluntary_switches_per_pair")
        goal("A context switches (blocking, %s; issue 13)" % label, "voluntary, per uncontended pair, whole process",
             v, "<= 2", v is not None and v <= 2.0)
    v = ratios.get("f", {}).get("commands_vs_single")
    goal("F uncontended pairs on a cluster (issue 14)", "Redis commands per pair ÷ on one Redis (warm slot map)", v,
         "<= 1.0", v is not None and v <= 1.0 + 1e-9)
    v = ratios.get("a2", {}).get("vs_server_bound")
    goal("A2 pipelined", "acquisitions/s ÷ redis-benchmark -P 16", v, ">= 0.8", v is not None and v >= 0.8)
    v2 = ratios.get("a2", {}).get("vs_best_server_bound")
    goal("A2 pipelined (stricter)", "acquisitions/s ÷ best redis-benchmark config", v2, ">= 0.8",
         v2 is not None and v2 >= 0.8)
    for key, label in (("b_async", "async"), ("b_blocking", "blocking")):
        v = ratios.get(key, {}).get("p50_in_idle_rtts")
        goal("B handoff (%s)" % label, "p50 ÷ idle RTT", v, "<= 1.0", v is not None and v <= 1.0)
    for key in ("c_reentrant_async", "c_reentrant_blocking", "c_fair_async", "c_fair_blocking"):
        r = ratios.get(key, {})
        v = r.get("vs_bound")
        label = key[2:].replace("_", ", ")
        goal("C contended (%s)" % label, "acquisitions/s ÷ (1 / 3 hot RTT)", v, ">= 0.5", v is not None and v >= 0.5)
        if "fair" in key:
            f = r.get("min_over_max")
            goal("C fairness (%s)" % label, "slowest ÷ fastest client", f, ">= 0.5", f is not None and f >= 0.5)
        goal("C mutual exclusion (%s)" % label, "counter == acquisitions, no overlap, every run",
             r.get("exclusion_ok_all_runs"), "true", r.get("exclusion_ok_all_runs") is True)
    v = M.get("d", {}).get("renew_calls_per_100_locks")
    goal("D watchdog", "script calls per 100 held locks per period", v, "<= 1", v is not None and v <= 1.0)
    # Issue 13: against a plain client of the same protocol, and the references.
    for key, label in (("b_async", "async"), ("b_blocking", "blocking")):
        v = ratios.get(key, {}).get("p50_vs_plain")
        what = ("p50 ÷ the plain hiredis async client's (one loop), interleaved" if key == "b_async"
                else "p50 ÷ the plain hiredis client's, interleaved")
        goal("B handoff (%s; issue 13)" % label, what, v, "<= 1.0", v is not None and v <= 1.0)
    for key, label in (("c_reentrant_async", "async"), ("c_reentrant_blocking", "blocking")):
        v = ratios.get(key, {}).get("vs_plain")
        goal("C contended (reentrant, %s; issue 13)" % label, "acquisitions/s ÷ plain hiredis clients'", v,
             ">= 1.0", v is not None and v >= 1.0)
        f = ratios.get(key, {}).get("min_over_max")
        goal("C spread (reentrant, %s; issue 13)" % label, "slowest ÷ busiest client", f, ">= 0.2",
             f is not None and f >= 0.2)
    v = ratios.get("d_cost", {}).get("cpu_10000_vs_10")
    goal("D cost (issue 13)", "client CPU per pair beside 10,000 held locks ÷ beside 10", v, "<= 1.2",
         v is not None and v <= 1.2)
    v = ratios.get("d_waiters", {}).get("p50_10000_vs_10")
    goal("D waiters", "handoff p50 beside 10,000 waiting lock calls ÷ beside 10", v, "<= 1.2",
         v is not None and v <= 1.2)

    def ahead(mine, theirs, higher_better):
        if mine is None or not theirs:
            return None
        return all((mine > t) if higher_better else (mine < t) for t in theirs)
    refs_a = [M[k]["pairs_per_s"] for k in ("redis-py_a", "redlock_a") if k in M]
    refs_b = [M[k]["handoff_p50_us"] for k in ("redis-py_b", "redlock_b") if k in M]
    refs_c = [M[k]["acquisitions_per_s"] for k in ("redis-py_c", "redlock_c") if k in M]
    for what, mine, theirs, hb in (
            ("A (blocking, a handle per key)", M.get("a_blocking_fresh", {}).get("pairs_per_s"), refs_a, True),
            ("A (async)", M.get("a_async", {}).get("pairs_per_s"), refs_a, True),
            ("B (blocking)", M.get("b_blocking", {}).get("handoff_p50_us"), refs_b, False),
            ("B (async)", M.get("b_async", {}).get("handoff_p50_us"), refs_b, False),
            ("C (reentrant, blocking)", M.get("c_reentrant_blocking", {}).get("acquisitions_per_s"), refs_c, True),
            ("C (reentrant, async)", M.get("c_reentrant_async", {}).get("acquisitions_per_s"), refs_c, True)):
        ok = ahead(mine, theirs, hb)
        goal("%s ahead of redis-py and node-redlock (issue 13)" % what,
             "pairs/s, handoff p50 or acquisitions/s, medians", ok, "true", ok)

    machine = {"nproc": os.cpu_count(), "cpu_model": cpu_model(), "kernel": platform.release(),
               "mem_total_kib": None}
    try:
        with open("/proc/meminfo") as f:
            machine["mem_total_kib"] = int(f.readline().split()[1])
    except (OSError, ValueError, IndexError):
        pass
    versions = {
        "redis_server": redis_version,
        "redis_server_deb": dpkg_version("redis-server"),
        "hiredis": info.get("hiredis"),
        "libhiredis_deb": dpkg_version("libhiredis-dev"),
        "libevent": info.get("libevent"),
        "python3_redis": pyv,
        "python3_redis_deb": dpkg_version("python3-redis"),
        "python3": cmd_version([SYS_PY, "--version"], r"Python (\S+)"),
        "redlock": rlv,
        "ioredis": ioredis_v,
        "node": cmd_version(["node", "--version"]),
        "gcc": cmd_version(["gcc", "-dumpfullversion"]),
        "edgelock_git": cmd_version(["git", "-C", ROOT, "describe", "--always", "--dirty"]),
    }
    load = {"background_cpu_busy_pct_before": round(background_busy, 1),
            "background_steal_pct_before": round(background_steal, 1),
            "steal_pct_during_run": round(steal_between(cpu_start, cpu_end), 1),
            "loadavg_start": load_start, "loadavg_end": loadavg(),
            "loadavg_per_round": load_per_round,
            "cpu_busy_pct_during_run": round(busy_between(cpu_start, cpu_end), 1),
            "wall_seconds": round(elapsed, 1)}

    results = {
        "generated": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "command": "make bench",
        "rounds": args.rounds,
        "reference_b_rounds": min(args.ref_b_rounds, args.rounds),
        "machine": machine, "versions": versions, "load": load,
        "medians": M, "ratios": ratios, "goals": goals, "redis_cost": redis_cost, "skipped": skipped,
        "rss": rss, "runs": runs,
        "definitions": {
            "floor_pair_rate": "1e6 / (2 * hot_rtt_mean_us): two sequential EVALSHA round trips; hot RTT from "
                               "the probes right before and after the run",
            "c_bound": "1e6 / (3 * hot_rtt_mean_us): GET, SET and the unlock round trip per acquisition",
            "b_ratio": "handoff p50 (or p99) / idle_rtt_p50_us of the probes right before and after the run",
            "server_bound": "redis-benchmark EVALSHA of lock_acquire.lua on random fresh keys, -P 16 -c 50 "
                            "(and -P 512 -c 1)",
            "ratio": "computed per round against that round's floor, then the median over rounds",
        },
    }
    with open(os.path.join(HERE, "results.json"), "w") as f:
        json.dump(results, f, indent=1, sort_keys=False)
        f.write("\n")

    plots = plot_a(samples_a, M) + plot_handoffs(samples, M) + plot_c(runs)
    write_markdown(results, M, ratios, goals, rss, plots, skipped)
    log("done in %.0f s: bench/results.json, BENCHMARKS.md" % elapsed)
    bad = [g["goal"] for g in goals if g["met"] is False]
    log("goals missed: " + (", ".join(bad) if bad else "none"))


def render_only():
    with open(os.path.join(HERE, "results.json")) as f:
        res = json.load(f)
    samples, samples_a = {}, {}
    a_libs = {"a_blocking": "edgelock blocking, handle reused", "a_async": "edgelock async",
              "a_blocking_fresh": "edgelock blocking, a handle per key", "redis-py": "redis-py", "redlock": "redlock"}
    for name in sorted(os.listdir(OUT)) if os.path.isdir(OUT) else []:
        m = re.match(r"(b_async|b_blocking|b_plain)_\d+\.txt$", name)
        if m:
            samples.setdefault(B_LIBS[m.group(1)], []).append(os.path.join(OUT, name))
        m = re.match(r"b_(redis-py|redlock)_\d+\.txt$", name)
        if m:
            samples.setdefault(m.group(1), []).append(os.path.join(OUT, name))
        m = re.match(r"a_(a_blocking_fresh|a_blocking|a_async|redis-py|redlock)_\d+\.txt$", name)
        if m:
            samples_a.setdefault(a_libs[m.group(1)], []).append(os.path.join(OUT, name))
    plots = plot_a(samples_a, res["medians"]) + plot_handoffs(samples, res["medians"]) + plot_c(res["runs"])
    write_markdown(res, res["medians"], res["ratios"], res["goals"], res["rss"], plots, res["skipped"])
    log("rendered BENCHMARKS.md from bench/results.json")


# ---- plots ---------------------------------------------------------------------------------

def read_samples(files):
    vals = []
    for f in files:
        try:
            with open(f) as fh:
                vals += [float(x) for x in fh.read().split()]
        except OSError:
            pass
    return sorted(vals)


def plot_handoffs(samples, M):
    """One histogram PNG per library plus a CDF of all, with gnuplot."""
    if not shutil.which("gnuplot"):
        log("gnuplot not installed: no PNGs")
        return []
    idle_us = M.get("b_async", {}).get("idle_rtt_p50_us") or M.get("floor", {}).get("idle_rtt_p50_us")
    groups = [("edgelock", ["edgelock async", "edgelock blocking", "plain hiredis"], "µs", 1.0),
              ("redis-py", ["redis-py"], "ms", 1000.0), ("redlock", ["redlock"], "ms", 1000.0)]
    made = []
    cdf_series = []
    for name, libs, unit, div in groups:
        series = [(lib, read_samples(samples.get(lib, []))) for lib in libs]
        series = [(lib, v) for lib, v in series if v]
        if not series:
            continue
        lo = min(v[0] for _, v in series) / div
        hi = max(v[max(0, int(len(v) * 0.99) - 1)] for _, v in series) / div
        width = max((hi - lo) / 40.0, 1e-6)
        data_files = []
        for lib, v in series:
            path = os.path.join(OUT, "hist_%s.dat" % lib.replace(" ", "_"))
            counts = {}
            for x in v:
                b = int((x / div - lo) / width)
                b = min(b, 40)  # the slowest 1 % piles up in the last bin
                counts[b] = counts.get(b, 0) + 1
            with open(path, "w") as f:
                for b in range(0, 41):
                    f.write("%g %d\n" % (lo + (b + 0.5) * width, counts.get(b, 0)))
            data_files.append((lib, path, len(v)))
            cdf_series.append((lib, v))
        png = os.path.join(HERE, "handoff_%s.png" % name)
        gp = ["set terminal pngcairo size 800,450 font 'sans,10'",
              "set output '%s'" % png,
              "set title 'Handoff latency, %s: A unlock call -> B acquire returns (all rounds pooled)'" % name,
              "set xlabel 'latency (%s); last bin holds everything above p99'" % unit,
              "set ylabel 'handoffs'", "set grid", "set style fill transparent solid 0.5 border",
              "set boxwidth %g absolute" % (width * 0.9), "set key top right"]
        if name == "edgelock" and idle_us:
            gp.append("set arrow from %g, graph 0 to %g, graph 1 nohead lw 2 dt 2 lc rgb 'black'" % (idle_us, idle_us))
            gp.append("set label 'idle RTT p50' at %g, graph 0.95 offset 0.5,0" % idle_us)
        plots = ", ".join("'%s' using 1:2 with boxes title '%s (n=%d)'" % (p, lib, n) for lib, p, n in data_files)
        gp.append("plot " + plots)
        if run_gnuplot(gp):
            made.append(os.path.relpath(png, ROOT))
    if cdf_series and plot_cdf(cdf_series, "handoff_cdf", "Handoff latency, every library (cumulative, log scale)",
                               idle_us, "idle RTT"):
        made.append(os.path.relpath(os.path.join(HERE, "handoff_cdf.png"), ROOT))
    return made


def plot_cdf(series, name, title, mark_us=None, mark_label=""):
    """bench/NAME.png: the cumulative distribution of each (label, sorted µs values), log x in ms."""
    files = []
    for lib, v in series:
        path = os.path.join(OUT, "cdf_%s_%s.dat" % (name, re.sub(r"[^A-Za-z0-9]+", "_", lib)))
        with open(path, "w") as f:
            for i, x in enumerate(v):
                f.write("%g %g\n" % (x / 1000.0, (i + 1) / len(v)))
        files.append((lib, path))
    png = os.path.join(HERE, name + ".png")
    gp = ["set terminal pngcairo size 800,450 font 'sans,10'", "set output '%s'" % png,
          "set title '%s'" % title, "set xlabel 'latency (ms)'", "set ylabel 'fraction'", "set logscale x",
          "set grid", "set key bottom right", "set yrange [0:1]"]
    if mark_us:
        gp.append("set arrow from %g, graph 0 to %g, graph 1 nohead dt 2 lc rgb 'black'"
                  % (mark_us / 1000.0, mark_us / 1000.0))
        gp.append("set label '%s' at %g, graph 0.5 offset 0.5,0" % (mark_label, mark_us / 1000.0))
    gp.append("plot " + ", ".join("'%s' using 1:2 with lines lw 2 title '%s'" % (p, lib) for lib, p in files))
    return run_gnuplot(gp)


def plot_a(samples_a, M):
    """A: the distribution of one uncontended lock+unlock pair, per library."""
    if not shutil.which("gnuplot"):
        return []
    order = ["edgelock blocking, a handle per key", "edgelock blocking, handle reused", "edgelock async",
             "redis-py", "redlock"]
    series = [(lib, read_samples(samples_a.get(lib, []))) for lib in order]
    series = [(lib, v) for lib, v in series if v]
    floor = M.get("floor", {}).get("pair_sync_p50_us")
    if series and plot_cdf(series, "a_latency_cdf", "A: one uncontended lock+unlock pair (cumulative, all rounds)",
                           floor, "plain sync hiredis p50"):
        return [os.path.relpath(os.path.join(HERE, "a_latency_cdf.png"), ROOT)]
    return []


# C's rows in the plots, in order.
C_LIBS = (("c_reentrant_async", "edgelock reentrant, async"), ("c_reentrant_blocking", "edgelock reentrant, blocking"),
          ("c_reentrant_plain", "plain hiredis, reentrant"), ("c_fair_async", "edgelock fair, async"),
          ("c_fair_blocking", "edgelock fair, blocking"), ("redis-py_c", "redis-py"), ("redlock_c", "node-redlock"))


def plot_c(runs):
    """C: total acquisitions/s per library, and each client's share (busiest first), median round."""
    if not shutil.which("gnuplot"):
        return []
    rows = []
    for key, lib in C_LIBS:
        rs = [r for r in runs.get(key, []) if r.get("per_client") and r.get("acquisitions_per_s")]
        if not rs:
            continue
        rs.sort(key=lambda r: r["acquisitions_per_s"])
        mid = rs[len(rs) // 2]  # the median round by throughput
        per_s = [n / mid["seconds"] for n in sorted(mid["per_client"], reverse=True)]
        rows.append((lib, mid["acquisitions_per_s"], per_s))
    if not rows:
        return []
    made = []
    tp = os.path.join(OUT, "c_throughput.dat")
    with open(tp, "w") as f:
        for i, (lib, total, _) in enumerate(rows):
            f.write('%d "%s" %g\n' % (i, lib, total))
    png = os.path.join(HERE, "c_throughput.png")
    if run_gnuplot(["set terminal pngcairo size 800,450 font 'sans,10'", "set output '%s'" % png,
                    "set title 'C: 8 clients on one lock, acquisitions/s (median round)'",
                    "set ylabel 'acquisitions/s'", "set grid ytics", "set style fill solid 0.6 border",
                    "set boxwidth 0.7", "set xtics rotate by -25", "set yrange [0:*]", "unset key",
                    "plot '%s' using 1:3:xtic(2) with boxes" % tp]):
        made.append(os.path.relpath(png, ROOT))
    spread = os.path.join(OUT, "c_spread.dat")
    with open(spread, "w") as f:
        for lib, _, per_s in rows:
            f.write("# %s\n" % lib)
            for rank, v in enumerate(per_s, 1):
                f.write("%d %g\n" % (rank, v))
            f.write("\n\n")
    png = os.path.join(HERE, "c_spread.png")
    plots = ", ".join("'%s' index %d using 1:2 with linespoints lw 2 title '%s'" % (spread, i, lib)
                      for i, (lib, _, _) in enumerate(rows))
    if run_gnuplot(["set terminal pngcairo size 800,450 font 'sans,10'", "set output '%s'" % png,
                    "set title 'C: acquisitions/s of each client, busiest first (median round)'",
                    "set xlabel 'client (busiest first)'", "set ylabel 'acquisitions/s'", "set grid",
                    "set key outside right", "set xrange [0.5:8.5]", "set yrange [0:*]", "plot " + plots]):
        made.append(os.path.relpath(png, ROOT))
    return made


def run_gnuplot(lines):
    p = subprocess.run(["gnuplot"], input="\n".join(lines) + "\n", capture_output=True, text=True)
    if p.returncode != 0:
        log("gnuplot failed: " + p.stderr.strip()[-300:])
        return False
    return True


# ---- BENCHMARKS.md ------------------------------------------------------------------------

def write_markdown(res, M, ratios, goals, rss, plots, skipped):
    f = M.get("floor", {})
    sb = M.get("server_bound", {})
    L = []
    L.append("| Floor (plain hiredis, same machine, same run) | median |")
    L.append("|---|---|")
    L.append("| hot round trip: sequential `EVALSHA lock_acquire.lua` p50 / p99 / mean | %s / %s / %s |"
             % (us(f.get("hot_rtt_p50_us")), us(f.get("hot_rtt_p99_us")), us(f.get("hot_rtt_mean_us"))))
    L.append("| idle round trip: the same after a %s ms pause, p50 / p99 | %s / %s |"
             % (fmt((f.get("idle_pause_us") or 0) / 1000.0), us(f.get("idle_rtt_p50_us")), us(f.get("idle_rtt_p99_us"))))
    L.append("| floor for A: 1 / (2 × hot RTT mean) | %s pairs/s |"
             % fmt(1e6 / (2 * f["hot_rtt_mean_us"]) if f.get("hot_rtt_mean_us") else None))
    L.append("| edgelock's exact wire traffic per pair through sync hiredis (acquire, release, latch DEL pipelined) | %s pairs/s, p50 %s |"
             % (fmt(f.get("pair_sync_per_s")), us(f.get("pair_sync_p50_us"))))
    L.append("| the same through hiredis async + libevent | %s pairs/s, p50 %s |"
             % (fmt(f.get("pair_async_per_s")), us(f.get("pair_async_p50_us"))))
    L.append("| server bound: `redis-benchmark -P 16` (-c 50) of the acquire EVALSHA | %s calls/s |" % fmt(sb.get("c50_p16")))
    L.append("| the same with `-c 1 -P 512` | %s calls/s |" % fmt(sb.get("c1_p512")))
    floor_table = "\n".join(L)

    def r(key, field):
        return ratios.get(key, {}).get(field)

    L = ["| Scenario | library / API | throughput | p50 | p99 | ratio (median of rounds) | notes |",
         "|---|---|---|---|---|---|---|"]
    for label, key in (("edgelock blocking API, a handle per key", "a_blocking_fresh"),
                       ("edgelock blocking API, handle reused", "a_blocking"), ("edgelock async API", "a_async"),
                       ("redis-py Lock", "redis-py_a"), ("node-redlock", "redlock_a")):
        if key not in M:
            continue
        note = "p50 = %s hot RTTs" % fmt(r(key, "p50_in_rtts"))
        if key.startswith("a_"):
            note += "; client CPU %s µs and %s context switches per pair" % (
                fmt(M[key].get("client_cpu_us_per_pair")), fmt(M[key].get("context_switches_per_pair")))
            if M[key].get("voluntary_switches_per_pair") is not None:
                note += " (%s voluntary; plain sync hiredis: %s, %s voluntary, per two round trips)" % (
                    fmt(M[key].get("voluntary_switches_per_pair")),
                    fmt(M[key].get("floor_context_switches_per_2_rtts")),
                    fmt(M[key].get("floor_voluntary_switches_per_2_rtts")))
        if key == "a_async":
            note += "; **%s** of the same commands through bare hiredis async + libevent (interleaved)" % fmt(
                r(key, "vs_hiredis_async_pair"))
        elif r(key, "vs_sync_pair") is not None:
            note += "; **%s** of the same commands through plain sync hiredis (interleaved)" % fmt(
                r(key, "vs_sync_pair"))
        if key.startswith("a_"):
            note += "; %s against the bracketing floor" % fmt(r(key, "pairs_vs_floor_bracketing"))
        L.append("| **A** uncontended lock+unlock, fresh keys | %s | %s pairs/s | %s | %s | **%s** of floor (%s) | %s |"
                 % (label, fmt(M[key].get("pairs_per_s")), us(M[key].get("pair_p50_us")),
                    us(M[key].get("pair_p99_us")), fmt(r(key, "pairs_vs_floor")), r(key, "floor"), note))
    if "a2" in M:
        a2 = M["a2"]
        L.append("| **A2** pipelined, %d distinct locks in flight, one client | edgelock async API | %s acquisitions/s | | | **%s** of server bound | %s of the best redis-benchmark config; releases %s/s; whole lock+unlock+latch-DEL cycles %s/s |"
                 % (a2.get("window", 0), fmt(a2.get("acquisitions_per_s")), fmt(r("a2", "vs_server_bound")),
                    fmt(r("a2", "vs_best_server_bound")), fmt(a2.get("releases_per_s")), fmt(a2.get("cycles_per_s"))))
    if "b_async" in M and "plain_async_handoff_p50_us" in M["b_async"]:
        M["b_plain_async"] = {"handoff_p50_us": M["b_async"]["plain_async_handoff_p50_us"],
                              "handoff_p99_us": M["b_async"]["plain_async_handoff_p99_us"]}
    for label, key in (("edgelock async API (2 clients, 1 loop)", "b_async"),
                       ("plain hiredis async, same protocol (2 clients, 1 loop)", "b_plain_async"),
                       ("edgelock blocking API (2 clients, 2 threads)", "b_blocking"),
                       ("plain hiredis, same protocol (2 clients, 2 threads)", "b_plain"),
                       ("method check: plain hiredis in edgelock's place (2 threads)", "b_calibrate"),
                       ("edgelock holds, the plain client waits (2 threads)", "b_mixed_holder"),
                       ("the plain client holds, edgelock waits (2 threads)", "b_mixed_waiter"),
                       ("edgelock blocking API, Redis on a CPU of its own (2 threads on the other)",
                        "b_blocking_pinned"),
                       ("edgelock blocking API, Redis in a session of its own (2 threads)",
                        "b_blocking_own_session"),
                       ("method check, Redis in a session of its own", "b_calibrate_own_session"),
                       ("edgelock holds, the plain client waits, Redis in a session of its own",
                        "b_mixed_holder_own_session"),
                       ("redis-py Lock", "redis-py_b"), ("node-redlock", "redlock_b")):
        if key not in M:
            continue
        note = "p99 = %s idle RTT" % fmt(r(key, "p99_in_idle_rtts"))
        if key == "b_async" and r(key, "p50_vs_plain") is not None:
            note += ("; p50 **%s** of the plain async client's, %s of the two-thread plain client's"
                     % (fmt(r(key, "p50_vs_plain")), fmt(r(key, "p50_vs_plain_sync"))))
        elif r(key, "p50_vs_plain") is not None:
            note += "; p50 **%s** of the plain client's" % fmt(r(key, "p50_vs_plain"))
        if r(key, "same_cpu_share") is not None:
            note += ("; the waiter on the holder's CPU in %s of the handoffs (the plain pair's: %s), "
                     "p50 of like placements %s (same CPU) and %s (other CPU) of the plain client's"
                     % (pct(r(key, "same_cpu_share")), pct(r(key, "plain_same_cpu_share")),
                        fmt(r(key, "p50_vs_plain_same_cpu")), fmt(r(key, "p50_vs_plain_other_cpu"))))
        if key == "b_async":
            note += "; A's own release round trip alone: p50 %s" % us(M[key].get("release_rtt_p50_us"))
        if key.startswith("b_") and r(key, "p50_in_idle_rtts_bracketing") is not None:
            note += "; %s idle RTT against the bracketing floor" % fmt(r(key, "p50_in_idle_rtts_bracketing"))
        L.append("| **B** handoff, 200 per round | %s | | %s | %s | **%s** idle RTT (p50; %s) | %s |"
                 % (label, us(M[key].get("handoff_p50_us")), us(M[key].get("handoff_p99_us")),
                    fmt(r(key, "p50_in_idle_rtts")), r(key, "floor"), note))
    if "s_pairs" in M:
        sp = M["s_pairs"]
        L.append("| **S** expirable semaphore (3 permits), take+give back one permit under the watchdog | edgelock blocking API | %s pairs/s | %s | %s | **%s** of the interleaved floor (2 hot RTTs) | %s context switches per pair; the same wire cost as A: two script calls |"
                 % (fmt(sp.get("pairs_per_s")), us(sp.get("pair_p50_us")), us(sp.get("pair_p99_us")),
                    fmt(sp.get("ratio_vs_floor_chunk_median")), fmt(sp.get("context_switches_per_pair"))))
    if "s_handoff" in M:
        sh = M["s_handoff"]
        L.append("| **S** semaphore handoff (1 permit): A gives back, B waiting on `redisson_sc:{name}` takes | edgelock blocking API | | %s | %s | **%s** idle RTT (p50) | p50 %s of a plain lock client's handoff, interleaved |"
                 % (us(sh.get("handoff_p50_us")), us(sh.get("handoff_p99_us")), fmt(sh.get("p50_in_idle_rtts")),
                    fmt(sh.get("p50_vs_plain_interleaved"))))
    for label, key in (("edgelock reentrant, async API", "c_reentrant_async"),
                       ("edgelock reentrant, blocking API", "c_reentrant_blocking"),
                       ("plain hiredis, same protocol (reentrant, a thread per client)", "c_reentrant_plain"),
                       ("edgelock fair, async API", "c_fair_async"),
                       ("edgelock fair, blocking API", "c_fair_blocking"),
                       ("edgelock reentrant, async API, 8 owners of one client", "c_reentrant_async_shared"),
                       ("edgelock reentrant, blocking API, 8 threads sharing one client",
                        "c_reentrant_blocking_shared"),
                       ("redis-py Lock", "redis-py_c"), ("node-redlock", "redlock_c")):
        if key not in M:
            continue
        c = M[key]
        cpu = ""
        if c.get("client_cpu_us_per_acquisition"):
            cpu = "; client CPU %s per acquisition (%s %% of a core)" % (
                us(c["client_cpu_us_per_acquisition"]), fmt(c.get("client_cpu_pct_of_core")))
        if r(key, "vs_plain") is not None and key != "c_reentrant_plain":
            cpu += "; **%s** of the plain clients' acquisitions/s" % fmt(r(key, "vs_plain"))
        L.append("| **C** 8 clients, one lock, lock-GET-SET-unlock | %s | %s acq/s | | | **%s** of 3-RTT bound (bracketing) | per client min %s / max %s (min/max **%s**); counter = acquisitions: %s%s |"
                 % (label, fmt(c.get("acquisitions_per_s")), fmt(r(key, "vs_bound")), fmt(c.get("per_client_min")),
                    fmt(c.get("per_client_max")), fmt(r(key, "min_over_max")),
                    "yes, every run" if r(key, "exclusion_ok_all_runs") else "**NO**", cpu))
    main_table = "\n".join(L)

    d = M.get("d", {})
    e = M.get("e_alloc", {})
    L = ["| D / E | median |", "|---|---|"]
    L.append("| D: held locks under the watchdog | %s (lease %s ms, period %s ms) |"
             % (fmt(d.get("holds")), fmt(d.get("watchdog_lease_ms")), fmt(d.get("period_ms"))))
    L.append("| D: renewal script calls per period | %s = **%s per 100 held locks** |"
             % (fmt(d.get("renew_calls_per_period")), fmt(d.get("renew_calls_per_100_locks"))))
    L.append("| D: client CPU per period (loop thread) | %s ms = %s %% of one core |"
             % (fmt(d.get("cpu_ms_per_period")), fmt(d.get("cpu_pct_of_core"))))
    L.append("| D: taking the 10,000 locks (500 in flight) | %s s wall, %s s CPU |"
             % (fmt(d.get("acquire_s")), fmt(d.get("acquire_cpu_s"))))
    dc = M.get("d_cost", {})
    for holds, pre in ((10, "few_"), (10000, "")):  # the two clients of one d_cost run
        L.append("| D: an uncontended blocking pair (a handle per key) beside %s held locks | %s pairs/s, client CPU %s µs per pair |"
                 % ("{:,}".format(holds), fmt(dc.get(pre + "pairs_per_s")), fmt(dc.get(pre + "client_cpu_us_per_pair"))))
    L.append("| D: client CPU per pair, 10,000 held ÷ 10 held | **%s** |" % fmt(r("d_cost", "cpu_10000_vs_10")))
    dw = M.get("d_waiters", {})
    L.append("| D: an async handoff to a client with 10,000 / 10 lock calls waiting on other locks | p50 %s / %s µs |"
             % (fmt(dw.get("handoff_many_p50_us")), fmt(dw.get("handoff_few_p50_us"))))
    L.append("| D: handoff p50, 10,000 waiting ÷ 10 waiting | **%s** |" % fmt(r("d_waiters", "p50_10000_vs_10")))
    L.append("| E: heap allocations per lock+unlock, plain hiredis async floor (same commands) | %s |"
             % fmt(e.get("hiredis_floor_allocs_per_pair")))
    L.append("| E: … edgelock async API, whole process (edgelock + hiredis + libevent) | %s |"
             % fmt(e.get("edgelock_async_allocs_per_pair")))
    L.append("| E: … edgelock blocking API, whole process (both threads) | %s |"
             % fmt(e.get("edgelock_blocking_allocs_per_pair")))
    L.append("| E: … made by edgelock's own code (caller inside the static library), async / blocking | **%s / %s** |"
             % (fmt(e.get("edgelock_code_async_allocs_per_pair")), fmt(e.get("edgelock_code_blocking_allocs_per_pair"))))
    de_table = "\n".join(L)

    L = ["| max_locks = max_holds = max_waiters | max_subscriptions | max_commands | table_bytes | RSS after create | RSS connected | RSS with every lock held |",
         "|---|---|---|---|---|---|---|"]
    for o in rss:
        if "error" in o:
            L.append("| error: %s | | | | | | |" % o["error"])
            continue
        full = o.get("rss_delta_full_kib")
        L.append("| %s | %s | %s | %s KiB | +%s KiB | +%s KiB | %s |"
                 % ("{:,}".format(o["max_locks"]), "{:,}".format(o["max_subscriptions"]),
                    "{:,}".format(o["max_commands"]), "{:,}".format(o["table_bytes"] // 1024),
                    "{:,}".format(o["rss_delta_created_kib"]), "{:,}".format(o["rss_delta_connected_kib"]),
                    ("+{:,} KiB".format(full)) if full is not None and full >= 0 else "not filled"))
    rss_table = "\n".join(L)

    L = ["| F: 3,000 timed uncontended blocking pairs over 1,000 names | pairs/s | p50 | p99 | pairs/s ÷ floor (2 PINGs to the same node) | Redis commands per pair | redirects (MOVED, ASK) |",
         "|---|---|---|---|---|---|---|"]
    for key, label in (("f_single", "one Redis (`redis://`)"),
                       ("f_cluster", "3-master cluster (`redis-cluster://`, one seed)")):
        o = M.get(key)
        if not o:
            continue
        L.append("| %s | %s | %s | %s | %s | %s | %s |"
                 % (label, fmt(o.get("pairs_per_s")), us(o.get("pair_p50_us")), us(o.get("pair_p99_us")),
                    fmt(o.get("ratio_vs_floor")), fmt(o.get("commands_per_op")),
                    fmt(o.get("redirects", 0)) if key == "f_cluster" else "-"))
    f = ratios.get("f", {})
    if f:
        L.append("| cluster ÷ one Redis (median of rounds) | %s | | | %s | %s | |"
                 % (fmt(f.get("pairs_vs_single")), fmt(f.get("floor_ratio_vs_single")),
                    fmt(f.get("commands_vs_single"))))
    cluster_table = "\n".join(L)

    L = ["| Redis-side cost per operation | script calls | SUBSCRIBE + UNSUBSCRIBE | all commands, incl. inside scripts | Redis CPU per op | Redis CPU during the run |",
         "|---|---|---|---|---|---|"]
    labels = (("a_blocking_nofloor", "A pair, edgelock blocking"), ("a_async_nofloor", "A pair, edgelock async"),
              ("redis-py_a", "A pair, redis-py"), ("redlock_a", "A pair, node-redlock"),
              ("b_async", "B handoff cycle, edgelock async"), ("b_blocking", "B handoff cycle, edgelock blocking"),
              ("redis-py_b", "B handoff cycle, redis-py"), ("redlock_b", "B handoff cycle, node-redlock"),
              ("c_reentrant_async", "C acquisition, edgelock reentrant async"),
              ("c_reentrant_blocking", "C acquisition, edgelock reentrant blocking"),
              ("c_fair_async", "C acquisition, edgelock fair async"),
              ("c_fair_blocking", "C acquisition, edgelock fair blocking"),
              ("redis-py_c", "C acquisition, redis-py"), ("redlock_c", "C acquisition, node-redlock"))
    rc = res.get("redis_cost", {})
    for key, label in labels:
        if key not in rc:
            continue
        cmds = rc[key]["commands_per_op"]
        scripts = (cmds.get("evalsha") or 0) + (cmds.get("eval") or 0)
        pubsub = (cmds.get("subscribe") or 0) + (cmds.get("unsubscribe") or 0)
        total = sum(v for k, v in cmds.items() if v and not k.startswith("script") and k != "ping")
        L.append("| %s | %s | %s | %s | %s | %s %% of a core |" % (label, fmt(scripts), fmt(pubsub), fmt(total),
                 us(rc[key]["cpu_us_per_op"]), fmt(rc[key]["cpu_pct_of_core"])))
    cost_table = "\n".join(L)

    def goal_value(g):
        v = g["value"]
        if isinstance(v, bool):
            return str(v).lower()
        shown = fmt(v)
        # A value that rounds to its bound (2.001 against "<= 2") would read
        # as met beside "missed": show the digits that decide.
        try:
            at_bound = float(shown.replace(",", "")) == float(g["target"].split()[-1])
        except ValueError:
            at_bound = False
        if isinstance(v, float) and at_bound:
            shown = fmt(v, 5)
        return shown

    L = ["| Goal (issue 6) | measured | median | target | |", "|---|---|---|---|---|"]
    for g in goals:
        L.append("| %s | %s | %s | %s | %s |" % (g["goal"], g["measured"], goal_value(g),
                                             g["target"], {True: "met", False: "**missed**", None: "n/a"}[g["met"]]))
    goal_table = "\n".join(L)

    m, v, ld = res["machine"], res["versions"], res["load"]
    machine = ("%s cores (`nproc`), %s (/proc/cpuinfo), Linux %s, %s GiB RAM"
               % (m["nproc"], m["cpu_model"], m["kernel"],
                  fmt(m["mem_total_kib"] / 1048576.0) if m.get("mem_total_kib") else "?"))
    versions = ", ".join("%s %s" % (k, val) for k, val in v.items() if val)
    load = ("before the run, with nothing of ours running, the two cores were %s %% busy, %s %% of it stolen "
            "by the hypervisor for other guests (/proc/stat); load average %s at start, %s at end; during the "
            "run both cores were %s %% busy (ours included), steal %s %%; %s s wall"
            % (ld["background_cpu_busy_pct_before"], ld["background_steal_pct_before"],
               " ".join("%.2f" % x for x in ld["loadavg_start"]), " ".join("%.2f" % x for x in ld["loadavg_end"]),
               ld["cpu_busy_pct_during_run"], ld["steal_pct_during_run"], ld["wall_seconds"]))
    skip = "none" if not skipped else "; ".join("%s: %s" % kv for kv in skipped.items())
    pngs = "\n".join("![%s](%s)" % (os.path.basename(p), p) for p in plots) or "(gnuplot not available)"

    with open(os.path.join(HERE, "BENCHMARKS.md.in")) as fh:
        text = fh.read()
    subs = {"GENERATED": res["generated"], "ROUNDS": str(res["rounds"]),
            "REF_B_ROUNDS": str(res["reference_b_rounds"]), "MACHINE": machine, "VERSIONS": versions,
            "LOAD": load, "FLOOR_TABLE": floor_table, "MAIN_TABLE": main_table, "GOAL_TABLE": goal_table,
            "DE_TABLE": de_table, "COST_TABLE": cost_table, "RSS_TABLE": rss_table, "CLUSTER_TABLE": cluster_table, "PLOTS": pngs, "SKIPPED": skip}
    for k, val in subs.items():
        text = text.replace("{{%s}}" % k, val)
    with open(os.path.join(ROOT, "BENCHMARKS.md"), "w") as fh:
        fh.write(text)


if __name__ == "__main__":
    main()
