#!/usr/bin/env python3
"""What mode switches cost (issue 19, part 3).

N clutches in series (N = 1, 2, 4, 8, 16 by default) between flywheels,
driven by a 20 N*m sine torque, each clutch's engagement a sine of its own
frequency (0.7 + 0.37 i Hz), so that they stick and slip many times a
second: the issue's "16 clutches in series under sine engagements". Its
twin has the same sine sources with amplitude 0: the same blocks and the
same evaluations, every clutch open all the time ("all open").

For each N, with the built CLI (`drivegraph bench GRAPH`: the CPU time of
the stepping loop, median of the reps), it reports the ns per step of
both, their ratio, the topology changes per run, and the extra time per
switch, (ns_switching - ns_open) * steps / changes: what a switch costs
all told (the solver rebuilt for the new mode, the event located inside
the step, the segments after it). With --callgrind it also counts the
instructions of the rebuilds alone (dgp_solver_change_topology,
inclusive) per switch.

  python3 scripts/switches.py
  python3 scripts/switches.py --max-n 16 --callgrind --markdown out.md
  python3 scripts/switches.py --write-graphs /tmp/sw   # then, for the mode cache:
  build/bench/drivegraph-bench-modes /tmp/sw/clutches_16_sine.json

Python 3 standard library only.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def clutches(n, amplitude):
    blocks = {"drive": {"type": "sine_source", "amplitude": 20, "frequency": 1.3},
              "torque": {"type": "torque_source", "inertia": 0,
                         "inputs": {"command": "drive.value"}},
              "j0": {"type": "inertia", "inertia": 1}}
    conns = [["torque.out", "j0.in"]]
    for i in range(1, n + 1):
        e, c, j = "e%d" % i, "clutch%d" % i, "j%d" % i
        blocks[e] = {"type": "sine_source", "amplitude": amplitude,
                     "frequency": round(0.7 + 0.37 * i, 6), "phase": 0.5 * i}
        blocks[c] = {"type": "clutch", "max_torque": 10 + i, "static_factor": 1.1, "inertia": 0,
                     "inputs": {"engagement": e + ".value"}}
        blocks[j] = {"type": "inertia", "inertia": 1}
        conns += [["j%d.out" % (i - 1), c + ".in"], [c + ".out", j + ".in"]]
    what = "sine engagements" if amplitude else "all open"
    return {"drivegraph": 1, "name": "Switches: %d clutches in series, %s" % (n, what),
            "blocks": blocks, "connections": conns}


def run(cmd):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return p.stdout, p.stderr, p.returncode


def bench(exe, graph, steps, reps):
    out, err, rc = run([exe, "bench", graph, "--steps", str(steps), "--reps", str(reps)])
    if rc != 0:
        raise RuntimeError("bench failed on %s: %s" % (graph, err.strip() or out.strip()))
    ns = float(re.search(r"ns per step:\s+(\d+)", out).group(1))
    changes = int(re.search(r"topology changes:\s+(\d+)", out).group(1))
    return ns, changes


def rebuild_ir(exe, graph, steps):
    """Instructions inside dgp_solver_change_topology per call (callgrind)."""
    with tempfile.TemporaryDirectory() as d:
        out_file = os.path.join(d, "cg.out")
        _, err, rc = run(["valgrind", "--tool=callgrind", "--callgrind-out-file=" + out_file,
                          exe, "bench", graph, "--steps", str(steps), "--reps", "1"])
        if rc != 0:
            raise RuntimeError("callgrind failed on %s: %s" % (graph, err[-400:]))
        out, err, rc = run(["callgrind_annotate", "--inclusive=yes", "--threshold=100", out_file])
        for line in out.splitlines():
            if "dgp_solver_change_topology" in line and "[" in line and "=>" not in line:
                m = re.match(r"\s*([\d,]+)", line)
                if m:
                    total = float(m.group(1).replace(",", ""))
                    break
        else:
            return None
        calls = None
        for line in out.splitlines():
            m = re.search(r"=> .*dgp_solver_change_topology \((\d+)x\)", line)
            if m:
                calls = (calls or 0) + int(m.group(1))
        return total / calls if calls else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--exe", default=os.path.join(ROOT, "build", "drivegraph"))
    ap.add_argument("--max-n", type=int, default=16)
    ap.add_argument("--steps", type=int, default=5000)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--callgrind", action="store_true",
                    help="instructions per rebuild (valgrind; slow)")
    ap.add_argument("--markdown", metavar="FILE", help="also write the table as markdown")
    ap.add_argument("--write-graphs", metavar="DIR",
                    help="only write the graphs (clutches_N_sine.json, clutches_N_open.json) "
                         "into DIR: for build/bench/drivegraph-bench-modes")
    args = ap.parse_args()
    if args.write_graphs:
        os.makedirs(args.write_graphs, exist_ok=True)
        n = 1
        while n <= args.max_n:
            for amp in (1.0, 0.0):
                p = os.path.join(args.write_graphs,
                                 "clutches_%d_%s.json" % (n, "sine" if amp else "open"))
                with open(p, "w") as f:
                    json.dump(clutches(n, amp), f, indent=1)
            n *= 2
        return
    exe = os.path.abspath(args.exe)
    if not os.access(exe, os.X_OK):
        sys.exit("switches.py: no executable %s (build first: make)" % exe)
    if args.callgrind and not (shutil.which("valgrind") and shutil.which("callgrind_annotate")):
        print("switches.py: valgrind not found, no instruction counts", file=sys.stderr)
        args.callgrind = False
    lines = ["| clutches | ns/step, switching | ns/step, all open | ratio | switches per run "
             "| µs per switch, all told | instructions per rebuild |",
             "|---|---|---|---|---|---|---|"]
    with tempfile.TemporaryDirectory() as d:
        n = 1
        while n <= args.max_n:
            paths = []
            for amp in (1.0, 0.0):
                p = os.path.join(d, "clutches_%d_%s.json" % (n, "sine" if amp else "open"))
                with open(p, "w") as f:
                    json.dump(clutches(n, amp), f, indent=1)
                paths.append(p)
            ns_s, ch = bench(exe, paths[0], args.steps, args.reps)
            ns_o, _ = bench(exe, paths[1], args.steps, args.reps)
            per = (ns_s - ns_o) * args.steps / ch / 1e3 if ch else float("nan")
            ir = rebuild_ir(exe, paths[0], min(args.steps, 2000)) if args.callgrind else None
            lines.append("| %d | %.0f | %.0f | %.2f | %d | %.1f | %s |" %
                         (n, ns_s, ns_o, ns_s / ns_o, ch, per,
                          "%.0f" % ir if ir else "-"))
            print(lines[-1], file=sys.stderr, flush=True)
            n *= 2
    text = "\n".join(lines) + "\n"
    print(text)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
