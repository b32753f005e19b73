#!/usr/bin/env python3
"""Road-load energies of FASTSim's vehicles over UDDS and HWFET, by hand.

An independent reference for tests/test_import_fastsim.c, from FASTSim's
documented conventions (docs/import.md, "FASTSim vehicles") and its data
only (tests/data/fastsim): the vehicle mass from the table's components
(or veh_override_kg), air density 1.2 kg/m^3, g = 9.81 m/s^2, and 1 s
steps whose drag and rolling resistance are taken at the step's mean speed.

For each light-duty conventional and battery-electric vehicle of the
benchmark it prints, against master_benchmark_vars.csv:
  - FASTSim's step sums recomputed (they match to ~1e-10: the conventions
    are FASTSim's);
  - the exact energies of the linearly interpolated trace (what a
    simulation that follows the trace exactly integrates): the drag
    integral of v^3 over each linear piece, (v0^3 + v0^2 v1 + v0 v1^2 + v1^3)/4 dt, differs from
    the step-mean cubed by 0.032 % over UDDS and 0.0028 % over HWFET; the
    other terms are the same sums.

Usage: scripts/ref/fastsim_roadload.py [DATA_DIR]   (default tests/data/fastsim)
"""
import csv
import os
import sys

G = 9.81
RHO = 1.2


def num(x):
    try:
        return float(x)
    except ValueError:
        return 0.0


def mass(v):
    """FASTSim's vehicle mass rule (docs/import.md)."""
    if num(v["veh_override_kg"]) > 0:
        return num(v["veh_override_kg"])
    k = num(v["comp_mass_multiplier"])
    m = num(v["cargo_kg"]) + num(v["glider_kg"]) + num(v["trans_kg"]) * k
    if num(v["fc_max_kw"]) > 0:
        m += (num(v["fc_max_kw"]) / num(v["fc_kw_per_kg"]) + num(v["fc_base_kg"])) * k
    if num(v["fs_max_kw"]) > 0 and num(v["fs_kwh_per_kg"]) > 0:
        m += num(v["fs_kwh"]) / num(v["fs_kwh_per_kg"]) * k
    if num(v["mc_max_kw"]) > 0:
        m += (num(v["mc_pe_base_kg"]) + num(v["mc_pe_kg_per_kw"]) * num(v["mc_max_kw"])) * k
    if num(v["ess_max_kwh"]) > 0:
        m += (num(v["ess_base_kg"]) + num(v["ess_kg_per_kwh"]) * num(v["ess_max_kwh"])) * k
    return m


def energies(v, t, s, exact):
    """kJ: drag, rolling, accel (+/-), tyre inertia (+/-)."""
    m = mass(v)
    cda = num(v["drag_coef"]) * num(v["frontal_area_m2"])
    crr = num(v["wheel_rr_coef"])
    iw = num(v["wheel_inertia_kg_m2"]) * num(v["num_wheels"])
    r = num(v["wheel_radius_m"])
    e = dict(drag=0.0, rr=0.0, acc_pos=0.0, acc_neg=0.0, tire_pos=0.0, tire_neg=0.0)
    for i in range(1, len(t)):
        dt, v0, v1 = t[i] - t[i - 1], s[i - 1], s[i]
        vm = (v0 + v1) / 2
        cube = (v0**3 + v0**2 * v1 + v0 * v1**2 + v1**3) / 4 if exact else vm**3
        e["drag"] += 0.5 * RHO * cda * cube * dt / 1e3
        e["rr"] += G * crr * m * vm * dt / 1e3
        a = 0.5 * m * (v1**2 - v0**2) / 1e3
        e["acc_pos" if a > 0 else "acc_neg"] += a
        ti = 0.5 * iw * ((v1 / r) ** 2 - (v0 / r) ** 2) / 1e3
        e["tire_pos" if ti > 0 else "tire_neg"] += ti
    return e


def main():
    d = sys.argv[1] if len(sys.argv) > 1 else "tests/data/fastsim"
    vehicles = {int(r["selection"]): r for r in csv.DictReader(open(os.path.join(d, "FASTSim_py_veh_db.csv")))}
    cycles = {}
    for c in ("udds", "hwfet"):
        rows = list(csv.DictReader(open(os.path.join(d, c + ".csv"))))
        cycles[c] = ([float(r["cycSecs"]) for r in rows], [float(r["cycMps"]) for r in rows])
    cols = dict(drag="dragKjPos", rr="rrKjPos", acc_pos="accelKjPos", acc_neg="accelKjNeg",
                tire_pos="cycTireInertiaKjPos", tire_neg="cycTireInertiaKjNeg")
    for b in csv.DictReader(open(os.path.join(d, "master_benchmark_vars.csv"))):
        v = vehicles[int(b["vnum"])]
        if b["cycle"] not in cycles or v["veh_pt_type"] not in ("Conv", "BEV") or int(b["vnum"]) > 24:
            continue
        t, s = cycles[b["cycle"]]
        for exact in (False, True):
            e = energies(v, t, s, exact)
            rel = " ".join("%s %+.2e" % (k, e[k] / float(b[c]) - 1) for k, c in cols.items())
            print("%2s %-5s %-5s %s  mass %.4f kg" % (b["vnum"], b["cycle"], "exact" if exact else "steps", rel, mass(v)))


if __name__ == "__main__":
    main()
