#!/usr/bin/env python3
"""The Modelica Standard Library's regression suite for its rotational models
(MSL 4.0.0) as a suite of ours. Run by meson as

  test_msl.py <msl_run> <source-root> [--markdown] [MODEL...]

tests/data/msl/models.json lists the 27 models of the MSL's regression for
Modelica.Mechanics.Rotational.Examples and ModelicaTest.Rotational, each
with its status:
- "pass": every signal of the MSL's reference is compared, and passes at
  both steps;
- "partial": the signals of the parts we can write are compared and pass;
  "why" says what is left out and why;
- "fails": written, and failing at the steps of "fails_at" for the reason
  "why" (a solver or block limitation on record): the suite runs it and
  checks that it still fails there, so a fix shows up as a failure here
  that says to mark it "pass" (strict expected failure);
- "not expressible": no graph; "why" names the missing element.
Each model we write has a directory tests/data/msl/<Model>/:

  graph.json, scenario.json   the model as a graph and a scenario
  reference.csv               the MSL's reference result (Dymola 2020x,
                              DASSL at tolerance 1e-6), only the columns we
                              compare (scripts/msl_reference.py copies them)
  signals.txt                 the signals the MSL's regression lists for the
                              model (some are not in its reference's columns)
  compare.json                how each Modelica signal is read from ours:
                              "signals": { "<msl signal>": <terms> }, where
                              <terms> is a signal name or an object
                              { "<our signal>": coefficient, ...,
                                "const": offset } (a linear combination:
                              Modelica's relative quantities, phi_rel =
                              phi(flange_b) - phi(flange_a), and its sign
                              conventions); "not_compared": the signals of
                              the MSL's list we leave out, each with the
                              reason

Each model runs at dt = 1e-3 and 1e-4 s (the scenario's other keys
unchanged) through tests/msl_run.c: the library's scenario driver, one row
at the end of every step with 17 digits, as `drivegraph sim --digits 17`
writes them with an output interval of dt, and one more row at each step's
last located event (the solver's state there; see msl_run.c for why and
how; at dt = 1e-3 the suite checks that the step rows are a plain run's bit
for bit). Every compared signal must pass the tube rule below.

The tube rule (csv-compare's acceptance as the MSL's regression applies it,
implemented here):
- the tube's half-height is dy = 2e-3 * max(range, |min|, 1e-3) of the
  reference signal (range = max - min over the run);
- the time tolerance is dt_tol = 2e-3 * (the reference's last time - its
  first time);
- for each reference sample (t_i, y_i) the simulated curve, linearly
  interpolated between our output rows, must come within dy of y_i
  somewhere in [t_i - dt_tol, t_i + dt_tol] (clipped to the run): the
  deviation d_i is the distance from y_i to the interval of values the
  interpolated curve takes on that window (its minimum and maximum over
  the window: the interpolated values at the window's ends and every
  output row inside), 0 when y_i lies in it;
- a signal passes when max_i d_i <= dy. The figure reported is the tube
  usage max_i d_i / dy (0: inside everywhere; 1: touches the tube's wall),
  with the time of the worst sample; beside it, for information, the same
  deviation with no time tolerance, max_i |y(t_i) - y_i| / dy.
Reference rows at one time (an event's left and right values) are two
samples like any other.

Prints "ok - ..." / "FAIL - ..." per check and "N passed, M failed";
--markdown also prints the table of results, which docs/msl.md holds: a
run of every model checks that the table there is this run's.
"""
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import deque

STEPS = (1e-3, 1e-4)
TOL = 2e-3          # the tube's relative height and time tolerance
MIN_SCALE = 1e-3    # the smallest base of the tube's height

passed = 0
failed = 0


def check(name, ok, detail=""):
    global passed, failed
    if ok:
        passed += 1
        print("ok - %s%s" % (name, ": " + detail if detail else ""))
    else:
        failed += 1
        print("FAIL - %s%s" % (name, ": " + detail if detail else ""))
    sys.stdout.flush()
    return ok


def parse_csv(text):
    """The header and one list of floats per column."""
    lines = text.splitlines()
    header = lines[0].strip().split(",")
    cols = [[] for _ in header]
    for line in lines[1:]:
        line = line.strip()
        if not line:
            continue
        for c, v in zip(cols, line.split(",")):
            c.append(float(v))
    return header, cols


def read_csv(path):
    with open(path) as f:
        return parse_csv(f.read())


class Interp:
    """Linear interpolation of (ts, ys) at nondecreasing query times,
    clamped to the ends (a pointer that only moves forward)."""

    def __init__(self, ts, ys):
        self.ts, self.ys, self.k = ts, ys, 1

    def __call__(self, t):
        ts, ys = self.ts, self.ys
        if t <= ts[0]:
            return ys[0]
        if t >= ts[-1]:
            return ys[-1]
        k = self.k
        while ts[k] <= t:  # ts[k - 1] <= t < ts[k]
            k += 1
        self.k = k
        t0, t1 = ts[k - 1], ts[k]
        return ys[k - 1] + (ys[k] - ys[k - 1]) * (t - t0) / (t1 - t0)


def tube(ref_t, ref_y, sim_t, sim_y):
    """The tube rule (see the top): (usage, time of the worst sample,
    usage at equal times, dy)."""
    lo_ref, hi_ref = min(ref_y), max(ref_y)
    dy = TOL * max(hi_ref - lo_ref, abs(lo_ref), MIN_SCALE)
    dt_tol = TOL * (ref_t[-1] - ref_t[0])
    worst, worst_t, worst_eq = 0.0, ref_t[0], 0.0
    at_a, at_b, at_t = Interp(sim_t, sim_y), Interp(sim_t, sim_y), Interp(sim_t, sim_y)
    qmin, qmax = deque(), deque()  # indices of sim rows in the window, monotone values
    nxt = 0                        # first sim row not yet pushed
    n = len(sim_t)
    first, last = sim_t[0], sim_t[-1]
    for t, y in zip(ref_t, ref_y):
        a, b = max(t - dt_tol, first), min(t + dt_tol, last)
        while nxt < n and sim_t[nxt] <= b:
            v = sim_y[nxt]
            while qmin and sim_y[qmin[-1]] >= v:
                qmin.pop()
            qmin.append(nxt)
            while qmax and sim_y[qmax[-1]] <= v:
                qmax.pop()
            qmax.append(nxt)
            nxt += 1
        while qmin and sim_t[qmin[0]] < a:
            qmin.popleft()
        while qmax and sim_t[qmax[0]] < a:
            qmax.popleft()
        ya, yb = at_a(a), at_b(b)
        lo, hi = (ya, yb) if ya <= yb else (yb, ya)
        if qmin and sim_y[qmin[0]] < lo:
            lo = sim_y[qmin[0]]
        if qmax and sim_y[qmax[0]] > hi:
            hi = sim_y[qmax[0]]
        d = (lo - y if lo > y else (y - hi if y > hi else 0.0)) / dy
        if not d <= worst:  # a NaN is the worst
            worst, worst_t = d, t
        e = abs(at_t(t) - y) / dy
        if not e <= worst_eq:
            worst_eq = e
    return worst, worst_t, worst_eq, dy


def terms_of(spec):
    """{our signal: coefficient}, offset of a compare.json entry."""
    if isinstance(spec, str):
        return {spec: 1.0}, 0.0
    terms = {k: float(v) for k, v in spec.items() if k != "const"}
    return terms, float(spec.get("const", 0.0))


def run_model(runner, root, name, results, fails_at=(), why=""):
    d = os.path.join(root, "tests", "data", "msl", name)
    with open(os.path.join(d, "compare.json")) as f:
        cmp = json.load(f)
    with open(os.path.join(d, "scenario.json")) as f:
        scenario = json.load(f)
    ref_header, ref_cols = read_csv(os.path.join(d, "reference.csv"))
    ref = dict(zip(ref_header, ref_cols))
    signals = cmp["signals"]
    check("%s: every compared signal is in reference.csv" % name,
          ref_header[0] == "time" and sorted(ref_header[1:]) == sorted(signals),
          "reference %s, compare.json %s" % (ref_header[1:], sorted(signals)))
    with open(os.path.join(d, "signals.txt")) as f:
        listed = [line.strip() for line in f if line.strip()]
    left = sorted(set(listed) - set(signals) - set(cmp.get("not_compared", {})))
    check("%s: every signal of the MSL's list is compared or left out with a reason" % name,
          not left and set(signals) <= set(listed), "neither: %s" % left if left else "")
    ours = sorted({s for spec in signals.values() for s in terms_of(spec)[0]})
    t_end = ref["time"][-1]
    check("%s: the scenario runs as long as the reference (%g s)" % (name, t_end),
          abs(scenario.get("duration", -1) - t_end) <= 1e-9 * max(1.0, t_end))
    for dt in STEPS:
        label = "%s dt %g" % (name, dt)
        with tempfile.TemporaryDirectory() as tmp:
            spath = os.path.join(tmp, "scenario.json")
            with open(spath, "w") as f:
                json.dump(dict(scenario, dt=dt), f)
            argv = [runner, os.path.join(d, "graph.json"), spath, repr(dt), ",".join(ours)]
            t0 = time.monotonic()
            run = subprocess.run(argv, capture_output=True, text=True)
            wall = time.monotonic() - t0
            if not check("%s: msl_run exits 0" % label, run.returncode == 0,
                         "" if run.returncode == 0 else run.stderr.strip()):
                results.setdefault(name, {})[dt] = None
                continue
            header, cols = parse_csv(run.stdout)
            if dt == STEPS[0]:
                # the event rows change nothing else: the step rows are a
                # plain run's, bit for bit
                plain = subprocess.run(argv + ["--no-events"], capture_output=True, text=True)
                _, pcols = parse_csv(plain.stdout)
                rows = list(zip(*cols))
                prows = list(zip(*pcols))
                k = 0
                for r in rows:  # the plain rows, in order, among the others
                    if k < len(prows) and r == prows[k]:
                        k += 1
                check("%s: the run with event rows is the plain run at its steps (%d event rows)"
                      % (label, len(rows) - len(prows)),
                      plain.returncode == 0 and k == len(prows))
        sim = dict(zip(header, cols))
        sim_t = sim["t"]
        check("%s: the run reaches %g s" % (label, t_end), abs(sim_t[-1] - t_end) <= 1e-9 + dt / 2,
              "ends at %.17g s" % sim_t[-1])
        expected = dt in fails_at
        worst = (0.0, None, 0.0, 0.0)  # usage, signal, time; the largest usage at equal times
        for msl in sorted(signals):
            terms, offset = terms_of(signals[msl])
            y = [offset] * len(sim_t)
            for s, c in terms.items():
                y = [a + c * b for a, b in zip(y, sim[s])]
            u, ut, ueq, dy = tube(ref["time"], ref[msl], sim_t, y)
            what = ("usage %.3g at t = %.4g s (equal times %.3g; tube half-height %.3g)"
                    % (u, ut, ueq, dy))
            if expected:
                print("  %s: %s %s: %s" % (label, msl, "in the tube" if u <= 1.0 else "OUT", what))
            else:
                check("%s: %s in the tube" % (label, msl), u <= 1.0, what)
            if worst[1] is None or not u <= worst[0]:
                worst = (u, msl, ut, worst[3])
            if not ueq <= worst[3]:
                worst = worst[:3] + (ueq,)
        if expected:
            check("%s: fails as models.json records (%s)" % (label, why), not worst[0] <= 1.0,
                  "worst usage %.3g (%s)%s" % (worst[0], worst[1], "" if not worst[0] <= 1.0 else
                                               ": it passes now, mark it \"pass\""))
        results.setdefault(name, {})[dt] = worst + (wall,)


def fmt_usage(r):
    """A table cell: figures below 1e-3 of the tube are round-off's business
    (the solver's last bits move them), so they show as < 0.001."""
    if r is None:
        return "run failed"
    u, msl, ut, ueq, wall = r
    small = lambda x: "< 0.001" if x < 1e-3 else "%.2g" % x
    if u < 1e-3:
        return "< 0.001 (equal times: %s)" % small(ueq)
    return "%.2g `%s` at %.3g s (equal times: %s)" % (u, msl, ut, small(ueq))


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    markdown = "--markdown" in sys.argv[1:]
    if len(args) < 2:
        sys.exit("usage: %s <msl_run> <source-root> [--markdown] [MODEL...]" % sys.argv[0])
    runner, root, only = args[0], args[1], args[2:]
    with open(os.path.join(root, "tests", "data", "msl", "models.json")) as f:
        models = json.load(f)["models"]
    check("models.json lists the suite's 27 models", len(models) == 27, "%d" % len(models))
    results = {}
    t0 = time.monotonic()
    for m in models:
        name, status = m["name"], m["status"]
        has_dir = os.path.isfile(os.path.join(root, "tests", "data", "msl", name, "graph.json"))
        fails_at = m.get("fails_at", [])
        check("%s: status %s %s a graph" % (name, status, "with" if has_dir else "without"),
              status in ("pass", "partial", "fails", "not expressible")
              and has_dir == (status != "not expressible")
              and bool(m.get("why", "")) == (status != "pass")
              and bool(fails_at) == (status == "fails") and set(fails_at) <= set(STEPS))
        if has_dir and (not only or name in only):
            run_model(runner, root, name, results, fails_at, m.get("why", ""))
    wall = time.monotonic() - t0
    print("wall time %.1f s" % wall)
    table = ["| model | status | signals compared | worst tube usage, dt = 1e-3 | dt = 1e-4 |",
             "|---|---|---|---|---|"]
    for m in models:
        name = m["name"]
        r = results.get(name)
        if r is None:
            table.append("| %s | %s | — | — | — |" % (name, m["status"]))
            continue
        with open(os.path.join(root, "tests", "data", "msl", name, "compare.json")) as f:
            n = len(json.load(f)["signals"])
        table.append("| %s | %s | %d | %s | %s |" % (name, m["status"], n,
                                                    fmt_usage(r.get(STEPS[0])),
                                                    fmt_usage(r.get(STEPS[1]))))
    if not only:
        with open(os.path.join(root, "docs", "msl.md")) as f:
            lines = [line.rstrip("\n") for line in f]
        at = lines.index(table[0]) if table[0] in lines else len(lines)
        doc = lines[at:at + len(table)]
        check("docs/msl.md's table of results is this run's (else: %s --markdown)"
              % " ".join(sys.argv[0:3]), doc == table,
              "" if doc == table else "first difference: %s" % next(
                  ("%r vs %r" % (x, y) for x, y in zip(doc, table) if x != y), "length"))
    if markdown:
        print()
        print("\n".join(table))
    print("%d passed, %d failed" % (passed, failed))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
