#!/usr/bin/env python3
"""Reruns an independent-reference script and checks that it still writes the
committed CSV, so the reference tests/test_reference.c compares against
cannot drift silently (an edited script, a changed scipy). Run by meson as

  test_ref_script.py <source-root> <name>

with an interpreter that has numpy and scipy: runs scripts/ref/<name>.py
--output <temp file> and compares it with tests/data/ref/<name>.csv: the
same comment keys (`# key=value`, values to REL_TOL), the same column
header, the same number of rows, every value within REL_TOL of its
column's largest magnitude. Prints "ok - ..." / "FAIL - ..." per check and
the closing line "N passed, M failed".

REL_TOL = 1e-12: the CSV holds a closed form written with %.17g, so a
rerun on the same machine gives the same bytes. On another libm or scipy
the values move by round-off: the source speed near the lock loses two
digits to cancellation (150 t - 150 t^2 ~ 4 from terms of ~145), ~1e-16 of
the largest speed; brentq reaches the lock time to round-off (slip residual
~2e-13 rad/s, 3e-16 s, although it is only asked for 1e-13 s), and the
locked speeds follow it at ~700 rad/s per s of lock time. A rerun that
stopped brentq anywhere within 1e-13 s would show at ~2e-12 of the load's
largest speed and be flagged, which is wanted: the lock time is the
reference's main figure. Any change to the model moves the values far
beyond the tolerance.

coupled_clutches is a numerical solution (solve_ivp at rtol = atol =
1e-12 between located events), not a closed form: another scipy or libm
moves its values by ~1e-11 (its two solvers agree to 1.7e-11), so it is
compared to 1e-9 of the largest speed, still far below the 1e-3 rad/s the
framework is held to and far below what any change to the model moves.
simple_gear_shift is the same kind of solution (its two solvers agree to
2e-11 rad/s) and is compared to 1e-9 as well, and so is lossy_gear (its two
solvers agree to 7e-13 rad/s, its events to 1e-12 s). all_components is
one too (its two solvers agree to 1.1e-10 in absolute terms); its smallest
columns are relative angles of ~2e-4 rad at most, so it is compared to
1e-8 of each column's largest magnitude (2e-12 rad there), against the
framework's 4e-9 rad and 2e-7 rad/s at dt = 1e-3.
"""
import os
import subprocess
import sys
import tempfile

REL_TOL = 1e-12
REL_TOL_OF = {"coupled_clutches": 1e-9, "simple_gear_shift": 1e-9, "lossy_gear": 1e-9,
              "all_components": 1e-8}

passed = 0
failed = 0


def check(name, ok, detail=""):
    global passed, failed
    if ok:
        passed += 1
        print("ok - %s" % name)
    else:
        failed += 1
        print("FAIL - %s%s" % (name, ": " + detail if detail else ""))


def read_csv(path):
    """Comment keys, column names and rows of floats."""
    keys, header, rows = {}, None, []
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("#"):
                body = line[1:].strip()
                if "=" in body and " " not in body.split("=", 1)[0]:
                    k, v = body.split("=", 1)
                    keys[k] = float(v)
            elif header is None:
                header = line.split(",")
            elif line:
                rows.append([float(x) for x in line.split(",")])
    return keys, header, rows


def compare(label, got, want):
    gk, gh, gr = got
    wk, wh, wr = want
    check("%s: the same comment keys" % label, sorted(gk) == sorted(wk),
          "%s vs %s" % (sorted(gk), sorted(wk)))
    for k in sorted(set(gk) & set(wk)):
        d = abs(gk[k] - wk[k])
        check("%s: %s within %g" % (label, k, REL_TOL), d <= REL_TOL * max(abs(wk[k]), 1.0),
              "%.17g vs %.17g" % (gk[k], wk[k]))
    check("%s: the same columns" % label, gh == wh, "%s vs %s" % (gh, wh))
    check("%s: the same number of rows" % label, len(gr) == len(wr),
          "%d vs %d" % (len(gr), len(wr)))
    if gh != wh or len(gr) != len(wr) or not wr:
        return
    for c, name in enumerate(wh):
        scale = max(max(abs(r[c]) for r in wr), 1e-300)
        worst, at = 0.0, 0
        for i, (g, w) in enumerate(zip(gr, wr)):
            d = abs(g[c] - w[c]) / scale
            if not d <= worst:
                worst, at = d, i
        check("%s: column %s within %g of max|%s|" % (label, name, REL_TOL, name),
              worst <= REL_TOL, "%.3g at row %d" % (worst, at))


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: %s <source-root> <name>" % sys.argv[0])
    root, name = sys.argv[1], sys.argv[2]
    global REL_TOL
    REL_TOL = REL_TOL_OF.get(name, REL_TOL)
    script = os.path.join(root, "scripts", "ref", name + ".py")
    committed = os.path.join(root, "tests", "data", "ref", name + ".csv")
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, name + ".csv")
        run = subprocess.run([sys.executable, script, "--output", out], capture_output=True,
                             text=True)
        sys.stdout.write("".join("  " + l + "\n" for l in run.stdout.splitlines()))
        check("scripts/ref/%s.py runs (exit 0)" % name, run.returncode == 0,
              run.stderr.strip())
        if run.returncode == 0:
            check("tests/data/ref/%s.csv is committed" % name, os.path.isfile(committed))
            if os.path.isfile(committed):
                compare(name, read_csv(out), read_csv(committed))
    print("%d passed, %d failed" % (passed, failed))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
