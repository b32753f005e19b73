#!/usr/bin/env python3
"""Independent reference for the backward mode of `drivegraph cycle`: the
road-load energies of graphs/ev_battery.json's body over the UDDS and the
HWFET (data/cycles/), with the trace linear between its 1 Hz points.

Writes tests/data/ref/cycle_road_load.csv (or the path given with
--output): one row per cycle, columns
  cycle      0 udds, 1 hwfet
  distance_m ∫ v dt
  drag_J     ∫ ½ ρ cda v³ dt        (ρ = 1.225 kg/m³, cda = 0.55 m²)
  rolling_J  ∫ crr m g v dt         (crr = 0.01, m = 1900 kg, g = 9.80665)
  accel_J    Σ over the pieces of max(0, ½ m (v₁² − v₀²)): the kinetic
             energy the body gains where it speeds up
  kinetic_J  ½ m (v_end² − v_start²)
tests/test_cycle.c holds the framework's backward runs to it; the meson
test `ref_cycle_road_load` reruns this script and checks the committed CSV.

The integrals are taken piece by piece with scipy's adaptive Gauss-Kronrod
quadrature (quad, epsabs 0, epsrel 1e-13) of the linear speed, not from the
closed forms the framework's RK4 reproduces (Simpson's rule on a cubic), so
the two are computed independently. No drivegraph code involved; needs
scipy (Debian: python3-scipy).
"""
import argparse
import os

from scipy.integrate import quad

RHO, CDA, CRR, MASS, G = 1.225, 0.55, 0.01, 1900.0, 9.80665
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")


def trace(name):
    t, v = [], []
    with open(os.path.join(ROOT, "data", "cycles", name + ".csv")) as f:
        header = f.readline().strip().split(",")
        it, iv = header.index("cycSecs"), header.index("cycMps")
        for line in f:
            line = line.strip()
            if line:
                fields = line.split(",")
                t.append(float(fields[it]))
                v.append(float(fields[iv]))
    return t, v


def energies(t, v):
    dist = drag = rolling = accel = 0.0
    for k in range(1, len(t)):
        t0, t1, v0, v1 = t[k - 1], t[k], v[k - 1], v[k]

        def speed(s):
            return v0 + (v1 - v0) * (s - t0) / (t1 - t0)

        opts = dict(epsabs=0.0, epsrel=1e-13, limit=200)
        d = quad(speed, t0, t1, **opts)[0]
        dist += d
        drag += quad(lambda s: 0.5 * RHO * CDA * speed(s) ** 3, t0, t1, **opts)[0]
        rolling += CRR * MASS * G * d
        accel += max(0.0, 0.5 * MASS * (v1 * v1 - v0 * v0))
    kinetic = 0.5 * MASS * (v[-1] ** 2 - v[0] ** 2)
    return dist, drag, rolling, accel, kinetic


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--output", default=os.path.join(ROOT, "tests", "data", "ref",
                                                     "cycle_road_load.csv"))
    args = ap.parse_args()
    rows = []
    for i, name in enumerate(["udds", "hwfet"]):
        rows.append([i] + list(energies(*trace(name))))
    with open(args.output, "w") as f:
        f.write("# road-load energies of graphs/ev_battery.json's body over the linear traces\n")
        f.write("cycle,distance_m,drag_J,rolling_J,accel_J,kinetic_J\n")
        for r in rows:
            f.write(",".join("%.17g" % x for x in r) + "\n")
    for r in rows:
        print("cycle %d: %.3f m, drag %.6f J, rolling %.6f J, accel %.6f J" % tuple(r[:5]))


if __name__ == "__main__":
    main()
