"""The CSV of an independent-reference script, written once for all of them:
a title and the modes at t = 0 as comments, one "# event t=... WHO=... KIND"
line per located event, a header and one row of %.17g values per output
time. `main` gives a script its command line: write the CSV (--output), or
recompute and compare with one (--check: the same events, columns and rows
within a tolerance). tests/test_ref_script.py reruns the scripts and
compares their output with the committed CSV in its own way (relative
tolerances per column), so it does not depend on this module."""
import argparse
import os
import sys
import time

import numpy as np
from scipy.integrate import solve_ivp


def piecewise(script, y, splits, duration, modes, rhs, events_for, switch, method, tol,
              max_step):
    """Integrates mode by mode: solve_ivp in `modes` from one split time (an
    input's kink) or event to the next, the events of events_for(modes)
    terminal; at each stop switch(t, next split, y, modes, event kind)
    projects y in place and returns (new modes, [(t, who, kind), ...]).
    Returns the pieces (t0, t1, dense solution, modes) and the events; exits
    after 100 events (chattering)."""
    t, pieces, events = 0.0, [], []
    while t < duration:
        t_next = min(s for s in splits if s > t)
        evs = events_for(modes)
        sol = solve_ivp(lambda t, y, m=modes: rhs(t, y, m), (t, t_next), y, method=method,
                        rtol=tol, atol=tol, max_step=max_step, events=evs, dense_output=True)
        if sol.status < 0:
            sys.exit("%s: solve_ivp failed at t=%g: %s" % (script, t, sol.message))
        pieces.append((t, sol.t[-1], sol.sol, modes))
        t, y, event = sol.t[-1], sol.y[:, -1].copy(), None
        if sol.status == 1:
            event = evs[min((te[0], i) for i, te in enumerate(sol.t_events) if len(te))[1]].kind
        if t >= duration or len(events) > 100:
            break
        modes, changes = switch(t, min(s for s in splits if s > t), y, modes, event)
        events += changes
    if t < duration:
        sys.exit("%s: more than 100 events at t=%g (chattering?)" % (script, t))
    return pieces, events


def sample(grid, pieces):
    """The pieces' dense solutions on the grid: (the piece of each time, the
    states)."""
    found = [next((p for p in pieces if p[0] <= t < p[1]), pieces[-1]) for t in grid]
    return found, np.array([p[2](t) for t, p in zip(grid, found)])


def two_runs(script, runs, duration, simulate, checks, agree, who, cols):
    """Solves the problem with each of two (method, tolerance) pairs on a
    1 ms output grid and insists that they agree (the same events within
    `agree` s, speeds within `agree`): simulate(method, tol) gives (initial
    modes, pieces, events), checks(method, grid, pieces) the speeds on the
    grid after the script's own sanity checks. Returns (grid, initial,
    events, speeds) of the first."""
    grid = np.arange(int(round(duration * 1000)) + 1) / 1000.0
    out = []
    for method, tol in runs:
        start = time.perf_counter()
        initial, pieces, events = simulate(method, tol)
        out.append((initial, events, checks(method, grid, pieces)))
        print("%s: %d pieces, %.2f s" % (method, len(pieces), time.perf_counter() - start))
    (initial, events, w), (_, events2, w2) = out
    d_w = np.max(np.abs(w - w2))
    d_t = max((abs(a[0] - b[0]) for a, b in zip(events, events2)), default=0.0)
    print("%s vs %s: speeds differ by at most %.2g rad/s, event times by %.2g s"
          % (runs[0][0], runs[1][0], d_w, d_t))
    if not ([e[1:] for e in events] == [e[1:] for e in events2] and d_t <= agree
            and d_w <= agree):
        sys.exit("%s: the two runs disagree (events %s vs %s)" % (script, events, events2))
    for e in events:
        print("event t=%.17g %s=%s %s" % (e[0], who, e[1], e[2]))
    print("t=%g: %s = %s rad/s" % (grid[-1], ", ".join(cols[1:]),
                                   ", ".join("%.12g" % x for x in w[-1])))
    return grid, initial, events, w


def write(path, title, modes, events, who, cols, grid, w):
    """Writes the CSV atomically (a temporary file, then rename)."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    tmp = path + ".tmp"
    fmt = ",".join(["%.17g"] * len(cols)) + "\n"
    with open(tmp, "w") as f:
        f.write("# %s\n" % title)
        f.write("# modes at t=0: %s\n" % modes)
        for e in events:
            f.write("# event t=%.17g %s=%s %s\n" % (e[0], who, e[1], e[2]))
        f.write(",".join(cols) + "\n")
        for t, wi in zip(grid, w):
            f.write(fmt % ((t,) + tuple(wi)))
    os.replace(tmp, path)
    print("wrote %s (%d rows)" % (os.path.relpath(path), len(grid)))


def read(path, who_type):
    """(events, header, rows) of a CSV that write() wrote."""
    ev, header, rows = [], None, []
    with open(path) as f:
        for line in f:
            p = line.split()
            if line.startswith("# event "):
                ev.append((float(p[2][2:]), who_type(p[3].split("=", 1)[1]), p[4]))
            elif line.startswith("#"):
                continue
            elif header is None:
                header = line.strip().split(",")
            elif line.strip():
                rows.append([float(x) for x in line.split(",")])
    return ev, header, np.array(rows)


def check(path, who, who_type, cols, grid, events, w, tol):
    """Compares PATH with this run; prints ok/FAIL lines and exits 0 or 1."""
    n = [0, 0]
    ev, header, rows = read(path, who_type)

    def one(name, ok, detail=""):
        n[0 if ok else 1] += 1
        print(("ok - %s" % name) if ok else ("FAIL - %s: %s" % (name, detail)))
    one("the same events (%s, kind; times within %g s)" % (who, tol),
        len(ev) == len(events) and all(a[1:] == b[1:] and abs(a[0] - b[0]) <= tol
                                       for a, b in zip(ev, events)), "%s vs %s" % (ev, events))
    one("columns %s" % ",".join(cols), header == cols, str(header))
    one("%d rows on the output grid" % len(grid), rows.shape[0] == len(grid)
        and np.max(np.abs(rows[:, 0] - grid)) <= 1e-15, str(rows.shape))
    if rows.shape[0] == len(grid) and header == cols:
        for c in range(1, len(cols)):
            d = np.max(np.abs(rows[:, c] - w[:, c - 1]))
            one("column %s within %g" % (cols[c], tol), d <= tol, "%.3g" % d)
    print("%d passed, %d failed" % tuple(n))
    sys.exit(1 if n[1] else 0)


def main(doc, default_out, compute, title, modes, who, who_type, cols, tol):
    """The command line of a reference script. compute() returns (grid,
    initial modes, events [(t, who, kind)], speeds [rows]); modes(initial)
    the comment text of the modes at t = 0."""
    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    ap.add_argument("--output", "-o", default=default_out,
                    help="CSV to write (default %(default)s)")
    ap.add_argument("--check", nargs="?", const=default_out, metavar="PATH",
                    help="recompute and compare with PATH (default: the committed CSV) "
                    "instead of writing")
    args = ap.parse_args()
    grid, initial, events, w = compute()
    if args.check:
        check(args.check, who, who_type, cols, grid, events, w, tol)
    write(args.output, title, modes(initial), events, who, cols, grid, w)
