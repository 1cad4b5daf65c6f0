#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Per-file entry counts along a recorded call path (see trace_path.sh).

Reads the <seq> <tid> <E|X> <addr> events written by driver.c, resolves each
function address with `addr2line -f -C -e BINARY`, keeps only functions defined
in files under --src, and rebuilds each thread's call stack. A file *entry* is a
call whose callee's file differs from its nearest kept caller's file, or a
top-level call (no kept caller: called from libevent, hiredis or the driver).
Each entry is printed in sequence order (threads merged) as one tree line,
indented by the entries open on that thread, with its direction by layer
(api > locks > redisson > redis > event > base):
  down = into a lower layer, up = into a higher one (callbacks on the way back),
  same = another file of the same layer, top = top-level.
Then a table: per file, the number of entries, split by phase and by direction.
A function that hiredis or libevent calls back (FROM_BELOW: the link's reply
and connection callbacks, the reader guard, the event seam's timer, the
blocking face's wake event) counts as top-level even when a kept frame is open
below it on that thread: since the blocking caller runs the loop itself, the
reply arrives inside its own blocking_call, through libevent frames that are
not recorded.
Phase: the way down lasts until control first re-enters the library from below,
i.e. a top-level entry into the redis or event layer (the reply callback from
hiredis/libevent); everything from there on is the way back. The criterion
"each file entered at most once on the way down and once on the way back" holds
when both phase columns are <= 1; files where it fails are listed.

  trace_path.py --src SRC_DIR --binary DRIVER [--no-headers] A.events [B.events ...]

--no-headers: frames in .hpp files are transparent (only .cpp files count).
Python 3 standard library only.
"""
import argparse
import re
import collections
import os
import subprocess
import sys

LAYERS = ["api", "locks", "redisson", "redis", "event", "base"]


def resolve(binary, addrs):
    """addr -> (function, file path or None).

    The file is where the function is declared (nm -l, from DWARF): for an
    inline function kept from one translation unit's copy, addr2line names the
    line table of that unit (its #include line), not the header that defines it.
    addr2line is the fallback for addresses nm does not name."""
    addrs = sorted(addrs)
    by_addr = {}
    nm = subprocess.run(["nm", "-l", "-C", binary], capture_output=True, text=True, check=True).stdout
    for line in nm.splitlines():
        parts = line.split(None, 2)
        if len(parts) < 3 or "\t" not in parts[2]:
            continue
        name, loc = parts[2].rsplit("\t", 1)
        by_addr["0x" + parts[0].lstrip("0")] = (name, os.path.realpath(loc.rsplit(":", 1)[0]))
    out = subprocess.run(["addr2line", "-f", "-C", "-e", binary], input="\n".join(addrs) + "\n",
                         capture_output=True, text=True, check=True).stdout.splitlines()
    res = {}
    for i, a in enumerate(addrs):
        key = "0x" + a.lower().replace("0x", "").lstrip("0")
        if key in by_addr:
            res[a] = by_addr[key]
            continue
        fn, loc = out[2 * i], out[2 * i + 1]
        path = loc.rsplit(":", 1)[0]
        res[a] = (fn, None if path.startswith("??") else os.path.realpath(path))
    return res


def layer(f):
    top = f.split("/", 1)[0]
    return LAYERS.index(top) if top in LAYERS else len(LAYERS)


FROM_BELOW = re.compile(r"^edgelock::(reply_cb|connect_cb|disconnect_cb|guarded_\w+|fire|wake_cb|deferred_free)\b")


def direction(caller, callee):
    if caller is None:
        return "top"
    a, b = layer(caller), layer(callee)
    return "down" if b > a else "up" if b < a else "same"


def analyse(path, binary, src, no_headers):
    main_tid, events = None, []
    with open(path) as fh:
        for line in fh:
            if line.startswith("# main"):
                main_tid = line.split()[2]
            elif line.strip():
                seq, tid, kind, addr = line.split()
                events.append((int(seq), tid, kind, addr))
    events.sort()
    names = resolve(binary, {e[3] for e in events})

    def src_file(addr):
        fn, p = names[addr]
        if p is None or not p.startswith(src + os.sep):
            return None
        rel = os.path.relpath(p, src)
        return None if no_headers and rel.endswith(".hpp") else rel

    labels = {main_tid: "caller"}
    stacks = collections.defaultdict(list)  # tid -> [(addr, file or None, is_entry)]
    counts = collections.defaultdict(collections.Counter)
    lines = []
    phase = "way-down"
    for seq, tid, kind, addr in events:
        if tid not in labels:
            labels[tid] = "loop" if len(labels) == 1 else "thread%d" % len(labels)
        st = stacks[tid]
        if kind == "X":
            # Pop to the matching frame; exits of frames opened before recording are ignored.
            for i in range(len(st) - 1, -1, -1):
                if st[i][0] == addr:
                    del st[i:]
                    break
            continue
        f = src_file(addr)
        caller = next((fr[1] for fr in reversed(st) if fr[1] is not None), None)
        if f is not None and FROM_BELOW.match(names[addr][0]):
            caller = None  # called back by hiredis/libevent, whatever is open below
        entry = f is not None and f != caller
        if entry:
            d = direction(caller, f)
            if d == "top" and layer(f) >= LAYERS.index("redis"):
                phase = "way-back"
            counts[f][d] += 1
            counts[f][phase] += 1
            counts[f][phase + "@" + labels[tid]] += 1
            depth = sum(1 for fr in st if fr[2])
            lines.append("%6d %-6s %s%-4s %s:%s" % (seq, labels[tid], "  " * depth, d, f, names[addr][0]))
        st.append((addr, f, entry))
    return lines, counts, labels


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--src", required=True)
    ap.add_argument("--binary", required=True)
    ap.add_argument("--no-headers", action="store_true")
    ap.add_argument("--leaf", default="base,event",
                    help="layers of leaf services (they call nothing back), listed but not judged")
    ap.add_argument("events", nargs="+")
    args = ap.parse_args()
    src = os.path.realpath(args.src)
    for path in args.events:
        lines, counts, labels = analyse(path, args.binary, src, args.no_headers)
        name = os.path.basename(path).rsplit(".", 1)[0]
        print("=== scenario %s (%s): %d file entries, threads: %s ===" % (
            name, path, len(lines), ", ".join("%s=%s" % (v, k) for k, v in labels.items())))
        print("%6s %-6s %s" % ("seq", "thread", "direction file:function (indent = entries open)"))
        print("\n".join(lines))
        print("\n--- scenario %s: entries per file ---" % name)
        cols = ["way-down", "way-back", "top", "down", "up", "same"]
        print("%-26s %7s" % ("file", "entries") + "".join(" %8s" % k for k in cols))
        for f in sorted(counts, key=lambda f: (layer(f), f)):
            c = counts[f]
            print("%-26s %7d" % (f, c["way-down"] + c["way-back"]) + "".join(" %8d" % c[k] for k in cols))
        # Judged per thread: the blocking hand-off enters api/blocking.cpp once on
        # the caller's thread and once on the loop thread that runs the call.
        leaf = set(args.leaf.split(",")) if args.leaf else set()
        judged = [f for f in counts if f.split("/", 1)[0] not in leaf]
        over = sorted(f for f in judged
                      if any(v > 1 for k, v in counts[f].items() if k.startswith(("way-down@", "way-back@"))))
        print("criterion (each file entered at most once on the way down and once on the way back, per "
              "thread; leaf layers %s not judged): %d of %d files fail%s\n"
              % (",".join(sorted(leaf)) or "none", len(over), len(judged),
                 ": " + ", ".join(over) if over else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
