#!/usr/bin/env python3
"""docs/performance.md's "Numbers" tables, measured again on this machine.

  scripts/perf_table.py [--build DIR] [--reps R] [--write]

For each graph of the two tables (example graphs, and the families that
grow with N) it runs the built CLI's fixed launch (`drivegraph bench GRAPH
--reps R`: CPU time of the stepping loop, median of R runs after a warm-up
run) for the ns per step, the graph's nodes and DOFs and its topology
changes per run, and callgrind (`valgrind --tool=callgrind
--toggle-collect=dg_sim_step`, 2,000 steps, warm-up run and one timed run)
for the instructions per step. The two hand-written baselines
(bench/baseline_axle.c, baseline_sedan.c) are measured the same way
through `drivegraph-bench` (their step functions toggled), and the axle
and the sedan also with `--compile` and with `--compile --lean` (keeping
neither the audit's work nor the angles, as the hand-written steps do).
The bench compiles the modes its warm-up run visited at that run's end:
the compiled figure is the timed run's, the total less the generic
warm-up's (a lean warm-up's for --lean).

Without --write it prints the tables as Markdown; with --write it replaces
the text between <!--perf:NAME--> and <!--/perf--> in docs/performance.md
(NAME: examples, growth). The figures are this machine's at this moment:
time varies with the load of a shared machine (instructions do not), so the
tests do not check them.

Python 3 standard library and valgrind.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")

EXAMPLES = [
    ("gear_train.json", "(rig)", None),
    ("open_diff_axle.json", "(rig)", None),
    ("bench/axle_baseline.json", "", "axle"),
    ("ev_single_speed.json", "", None),
    ("bench/sedan_baseline.json", "", "sedan"),
    ("bench/awd_3diff.json", "(3 diffs)", None),
    ("sedan_rwd_automatic.json", "", None),
    ("hatchback_fwd_manual.json", "", None),
    ("awd_lsd.json", "", None),
    ("bench/truck_8x8.json", "(8 wheels, 7 diffs)", None),
    ("imported/hmmwv_cvt.json", "(CVT)", None),
]
GROWTH = ["bench/diff_tree_%d.json" % n for n in (2, 4, 8, 16)] + \
         ["bench/chain_%d.json" % n for n in (4, 16, 64, 256)]
CALLGRIND_STEPS = 2000


def run(args):
    r = subprocess.run(args, cwd=ROOT, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit("perf_table: %s failed (%d): %s" % (" ".join(args), r.returncode,
                                                      r.stderr.strip()[-500:]))
    return r.stdout


def field(text, pattern, what):
    m = re.search(pattern, text, re.M)
    if not m:
        sys.exit("perf_table: no %s in:\n%s" % (what, text))
    return m.group(1)


def bench(exe, graph, reps, extra=()):
    out = run([exe, "bench", "graphs/" + graph, "--reps", str(reps)] + list(extra))
    return {
        "nodes": int(field(out, r"^graph:.*?(\d+) nodes", "nodes")),
        "dofs": field(out, r"^graph:.*nodes, ([0-9-]+) DOFs?", "DOFs"),
        "changes": int(field(out, r"^topology changes:\s+(\d+)", "topology changes")),
        "ns": int(field(out, r"^ns per step:\s+(\d+) median", "ns per step")),
    }


def callgrind(args, toggle, steps):
    """Instructions per step of function `toggle` over `steps` steps."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "cg.out")
        run(["valgrind", "--tool=callgrind", "--callgrind-out-file=" + out,
             "--toggle-collect=" + toggle] + args)
        text = run(["callgrind_annotate", out])
    total = int(field(text, r"^\s*([0-9,]+) \(100\.0%\)\s+PROGRAM TOTALS", "totals")
                .replace(",", ""))
    return round(total / steps)


def framework_ir(exe, graph, extra=()):
    return callgrind([exe, "bench", "graphs/" + graph, "--steps", str(CALLGRIND_STEPS),
                      "--reps", "1"] + list(extra), "dg_sim_step", 2 * CALLGRIND_STEPS)


def baseline(bench_exe, graph, name, reps):
    """The hand-written step's ns and Ir, and the framework/baseline ratios
    (generic, compiled) of two drivegraph-bench runs: the paired ones (a
    framework run and a baseline run per round), which a shared machine's
    slow phases disturb least."""
    out = run([bench_exe, "graphs/" + graph, "--reps", str(reps)])
    ns = int(field(out, r"^baseline:\s+(\d+) ns per step", "baseline ns"))
    ratio = [float(field(out, r"^paired:\s+([0-9.]+)", "paired ratio"))]
    for extra in (["--compile"], ["--compile", "--lean"]):
        out = run([bench_exe, "graphs/" + graph, "--reps", str(reps)] + extra)
        ratio.append(float(field(out, r"^paired:\s+([0-9.]+)", "paired ratio")))
    # the baseline runs a warm-up, one timed run and one paired round
    ir = callgrind([bench_exe, "graphs/" + graph, "--steps", str(CALLGRIND_STEPS), "--reps", "1"],
                   "baseline_%s_step" % name, 3 * CALLGRIND_STEPS)
    return ns, ir, ratio


def group(n):
    return "{:,}".format(n).replace(",", "\u202f") if n >= 10000 else str(n)


def compiled_row(exe, graph, reps, extra, label, ir):
    """The row of the graph compiled (--compile and `extra`): the warm-up run
    is generic (the compile is at its end), so the compiled run's
    instructions a step are the two runs' total less `ir` a step, the
    generic run's with the same `extra`."""
    c = bench(exe, graph, reps, ["--compile"] + extra)
    both = framework_ir(exe, graph, ["--compile"] + extra) * 2 * CALLGRIND_STEPS
    cir = round((both - ir * CALLGRIND_STEPS) / CALLGRIND_STEPS)
    return "| — with %s | | | %d | %s | %s |" % (label, c["changes"], group(c["ns"]), group(cir))


def examples_table(exe, bench_exe, reps):
    rows = ["| graph | nodes | DOFs | mode changes | ns/step | Ir/step |",
            "|---|---|---|---|---|---|"]
    for graph, note, twin in EXAMPLES:
        b = bench(exe, graph, reps)
        ir = framework_ir(exe, graph)
        name = "`%s`%s" % (graph, " " + note if note else "")
        rows.append("| %s | %d | %s | %d | %s | %s |" % (name, b["nodes"], b["dofs"], b["changes"],
                                                       group(b["ns"]), group(ir)))
        print("  %s: %d ns, %d Ir" % (graph, b["ns"], ir), file=sys.stderr)
        if twin:
            rows.append(compiled_row(exe, graph, reps, [], "`--compile`", ir))
            rows.append(compiled_row(exe, graph, reps, ["--lean"],
                                     "`--compile --lean` (neither work nor angles kept)",
                                     framework_ir(exe, graph, ["--lean"])))
            ns, bir, ratio = baseline(bench_exe, graph, twin, reps)
            rows.append("| — hand-written `bench/baseline_%s.c` (the framework %.2f×, compiled "
                        "%.2f×, compiled lean %.2f×, paired with it in one process) | | | | %s "
                        "| %s |" % (twin, ratio[0], ratio[1], ratio[2], group(ns), group(bir)))
    return "\n".join(rows)


def growth_table(exe, reps):
    rows = ["| graph | nodes | DOFs | ns/step | Ir/step |", "|---|---|---|---|---|"]
    for graph in GROWTH:
        b = bench(exe, graph, reps)
        ir = framework_ir(exe, graph)
        rows.append("| `%s` | %d | %s | %s | %s |" % (os.path.basename(graph)[:-5], b["nodes"],
                                                    b["dofs"], group(b["ns"]), group(ir)))
        print("  %s: %d ns, %d Ir" % (graph, b["ns"], ir), file=sys.stderr)
    return "\n".join(rows)


def write(doc, name, table):
    # the text up to the first closing marker (not another table's)
    pat = re.compile(r"(<!--perf:%s-->\n)(?:(?!<!--perf:).)*?(<!--/perf-->)" % name, re.S)
    if not pat.search(doc):
        sys.exit("perf_table: docs/performance.md has no <!--perf:%s--> ... <!--/perf-->" % name)
    return pat.sub(lambda m: m.group(1) + table + "\n" + m.group(2), doc)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--write", action="store_true")
    a = ap.parse_args()
    exe = os.path.abspath(os.path.join(a.build, "drivegraph"))
    bench_exe = os.path.abspath(os.path.join(a.build, "bench", "drivegraph-bench"))
    for p in (exe, bench_exe):
        if not os.access(p, os.X_OK):
            sys.exit("perf_table: %s is not built (make bench)" % p)
    tables = {"examples": examples_table(exe, bench_exe, a.reps), "growth": growth_table(exe, a.reps)}
    if not a.write:
        for k, t in tables.items():
            print("%s:\n%s\n" % (k, t))
        return
    path = os.path.join(ROOT, "docs", "performance.md")
    with open(path) as f:
        doc = f.read()
    for k, t in tables.items():
        doc = write(doc, k, t)
    with open(path, "w") as f:
        f.write(doc)


if __name__ == "__main__":
    main()
