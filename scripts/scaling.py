#!/usr/bin/env python3
"""How the cost of a step grows with the size of the drivetrain (issue 19).

Generates three families of graphs at N = 2, 4, ..., 512 into a temporary
directory (or --keep DIR):

  chain    N lossy gears (efficiency 0.999), each followed by a flywheel, as
           graphs/bench/chain_N.json (tools/gen_bench_graphs.py): one DOF,
           2N + 1 nodes, N lossy meshes
  tree     N loads behind a binary tree of N - 1 open differentials, as
           graphs/bench/diff_tree_N.json: N DOFs, one lossy mesh (the final
           gear)
  spring   N spring-dampers in series, each followed by a flywheel, between
           a torque source and a load: N + 1 DOFs, no ties between them

runs each with the built CLI (`drivegraph bench GRAPH --steps S --reps R`:
the fixed launch, CPU time of the stepping loop only), and reports per N:
ns per step (median of the reps), peak RSS of the process (os.wait4's
ru_maxrss), and with --callgrind the instructions per step of dg_sim_step
(valgrind --tool=callgrind --toggle-collect=dg_sim_step; steps counted over
the warm-up run and the reps). The cost exponent of each family is the least
squares slope of log(cost) over log(N) for N in [--fit-min, --fit-max]
(default 32 ... 256).

  python3 scripts/scaling.py                      # the table on stdout
  python3 scripts/scaling.py --markdown out.md    # and as a markdown table
  python3 scripts/scaling.py --families chain --max-n 128 --callgrind

Python 3 standard library only.
"""
import argparse
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


sys.path.insert(0, os.path.join(ROOT, "tools"))
from gen_bench_graphs import chain_graph as chain, diff_tree_graph as tree  # noqa: E402


def spring(n):
    blocks = {"src": {"type": "torque_source", "inertia": 0.05, "torque": 20}}
    conns = []
    prev = "src.out"
    for i in range(n):
        s, m = "s%d" % i, "m%d" % i
        blocks[s] = {"type": "spring_damper", "stiffness": 2000.0 + 100.0 * (i % 7),
                     "damping": 2.0}
        blocks[m] = {"type": "inertia", "inertia": 0.01}
        conns += [[prev, s + ".in"], [s + ".out", m + ".in"]]
        prev = m + ".out"
    blocks["load"] = {"type": "load", "inertia": 0.5, "c1": 0.05, "c2": 0.001}
    conns.append([prev, "load.in"])
    return {"drivegraph": 1, "name": "Scaling: chain of %d spring-dampers" % n,
            "blocks": blocks, "connections": conns}


FAMILIES = {"chain": chain, "tree": tree, "spring": spring}


def run(cmd):
    """Runs cmd; (stdout, stderr, return code)."""
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out, err = p.communicate()
    return out, err, p.returncode


def run_rss(cmd):
    t0 = time.monotonic()
    pid = os.fork()
    if pid == 0:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        try:
            os.execv(cmd[0], cmd)
        finally:
            os._exit(127)
    _, status, ru = os.wait4(pid, 0)
    return os.waitstatus_to_exitcode(status), time.monotonic() - t0, ru.ru_maxrss / 1024.0


def bench(exe, graph, steps, reps):
    out, err, rc = run([exe, "bench", graph, "--steps", str(steps), "--reps", str(reps)])
    if rc != 0:
        raise RuntimeError("bench failed on %s: %s" % (graph, err.strip() or out.strip()))
    m = re.search(r"ns per step:\s+(\d+)", out)
    return float(m.group(1))


def callgrind(exe, graph, steps):
    with tempfile.TemporaryDirectory() as d:
        out_file = os.path.join(d, "cg.out")
        cmd = ["valgrind", "--tool=callgrind", "--toggle-collect=dg_sim_step",
               "--callgrind-out-file=" + out_file, exe, "bench", graph, "--steps", str(steps),
               "--reps", "1"]
        _, err, rc = run(cmd)
        if rc != 0:
            raise RuntimeError("callgrind failed on %s: %s" % (graph, err[-400:]))
        with open(out_file) as f:
            for line in f:
                if line.startswith("summary:") or line.startswith("totals:"):
                    total = float(line.split()[1])
                    return total / (2 * steps)  # the warm-up run and one timed run
    raise RuntimeError("no totals in callgrind's output for %s" % graph)


def fit(points, lo, hi):
    xs = [math.log(n) for n, v in points if lo <= n <= hi and v and v > 0]
    ys = [math.log(v) for n, v in points if lo <= n <= hi and v and v > 0]
    if len(xs) < 2:
        return float("nan")
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx


def fmt(v, digits=0):
    if v is None:
        return "-"
    if isinstance(v, float) and math.isnan(v):
        return "-"
    return "{:,.{}f}".format(v, digits).replace(",", " ")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--exe", default=os.path.join(ROOT, "build", "drivegraph"))
    ap.add_argument("--families", default="chain,tree,spring")
    ap.add_argument("--min-n", type=int, default=2)
    ap.add_argument("--max-n", type=int, default=512)
    ap.add_argument("--fit-min", type=int, default=32)
    ap.add_argument("--fit-max", type=int, default=256)
    ap.add_argument("--budget", type=float, default=0.25,
                    help="seconds of stepping per timed run (default 0.25)")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--callgrind", action="store_true",
                    help="instructions per step of dg_sim_step (valgrind; slow)")
    ap.add_argument("--callgrind-max-n", type=int, default=256)
    ap.add_argument("--markdown", metavar="FILE", help="also write the table as markdown")
    ap.add_argument("--keep", metavar="DIR", help="write the graphs there and keep them")
    args = ap.parse_args()
    exe = os.path.abspath(args.exe)
    if not os.access(exe, os.X_OK):
        sys.exit("scaling.py: no executable %s (build first: make)" % exe)
    if args.callgrind and not shutil.which("valgrind"):
        print("scaling.py: valgrind not found, no instruction counts", file=sys.stderr)
        args.callgrind = False
    gdir = args.keep or tempfile.mkdtemp(prefix="dg-scaling-")
    os.makedirs(gdir, exist_ok=True)
    sizes = []
    n = 2
    while n <= args.max_n:
        if n >= args.min_n:
            sizes.append(n)
        n *= 2
    rows = []
    fits = []
    for fam in args.families.split(","):
        pts_t, pts_i, pts_m = [], [], []
        for n in sizes:
            graph = os.path.join(gdir, "%s_%d.json" % (fam, n))
            with open(graph, "w") as f:
                json.dump(FAMILIES[fam](n), f, indent=1)
            probe = bench(exe, graph, 5, 1)
            steps = int(max(10, min(20000, args.budget * 1e9 / max(probe, 1.0))))
            ns = bench(exe, graph, steps, args.reps)
            rc, secs, rss = run_rss([exe, "bench", graph, "--steps", "10", "--reps", "1"])
            ir = None
            if args.callgrind and n <= args.callgrind_max_n:
                ir = callgrind(exe, graph, max(2, min(200, int(2e8 / max(ns * 50, 1.0)))))
            rows.append((fam, n, steps, ns, ir, rss))
            pts_t.append((n, ns))
            pts_i.append((n, ir))
            pts_m.append((n, rss))
            print("%-7s N=%-4d steps=%-6d %12s ns/step %14s Ir/step %8.1f MiB" %
                  (fam, n, steps, fmt(ns), fmt(ir), rss), file=sys.stderr, flush=True)
        fits.append((fam, fit(pts_t, args.fit_min, args.fit_max),
                     fit(pts_i, args.fit_min, args.fit_max)))
    head = "| family | N | ns/step | Ir/step | peak RSS (MiB) |"
    lines = [head, "|---|---|---|---|---|"]
    for fam, n, steps, ns, ir, rss in rows:
        lines.append("| %s | %d | %s | %s | %.1f |" % (fam, n, fmt(ns), fmt(ir), rss))
    lines.append("")
    lines.append("| family | exponent, time (N = %d…%d) | exponent, Ir |" %
                 (args.fit_min, args.fit_max))
    lines.append("|---|---|---|")
    for fam, et, ei in fits:
        lines.append("| %s | %s | %s |" % (fam, fmt(et, 2), fmt(ei, 2)))
    text = "\n".join(lines) + "\n"
    print(text)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(text)
    if not args.keep:
        shutil.rmtree(gdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
