#!/usr/bin/env python3
"""Independent reference for the Modelica example
Modelica.Mechanics.Rotational.Examples.CoupledClutches: four flywheels
coupled by three Coulomb stick-slip clutches.

Writes tests/data/ref/coupled_clutches.csv (or --output PATH): columns
t,w1,w2,w3,w4 (rad/s) on the 1 ms grid over [0, 1.5] s, after comments
with the modes at t = 0 and one line per mode change,
`# event t=<%.17g> clutch=<k> stick|slip|open`. --check [PATH] recomputes
and compares with the committed CSV (or PATH): "ok - ..." / "FAIL - ..."
per check, "N passed, M failed", exit 1 on a failure. Needs numpy and
scipy (Debian: python3-numpy, python3-scipy); no drivegraph code involved.

The system (SI units): flywheels J1..J4 = 1 kg*m^2 in series,
J1 -clutch1- J2 -clutch2- J3 -clutch3- J4, nothing grounded but the source
tau(t) = 10 sin(2 pi 5 t) on J1. J1 starts at 10 rad/s, J2..J4 at rest.
Clutch k: normal force f_k clamped to [0, 1], f_1 = sin(2 pi 0.2 t + 1.57),
f_2 = [t >= 0.4], f_3 = [t >= 0.9]; kinetic capacity T_cap = 10 f_k N*m,
static 1.1 T_cap. No plate inertia, no other friction.

Clutch laws (exact Coulomb, no regularization), slip s_k = w_k - w_(k+1).
Open while f_k <= 0: transmits nothing, never sticks. Slipping in
direction d = +-1: T_k = d T_cap from left to right (-T_k on J_k, +T_k on
J_(k+1)). Stuck: the torque that keeps both sides together; stuck clutches
join flywheels into rigid groups, a group accelerates at (sum of applied
torques)/(sum of inertias), and a stuck clutch carries what the group's
part left of it needs, T_k = F_left - J_left a (the Lagrange multiplier).

Integration: piecewise scipy.integrate.solve_ivp (DOP853, rtol = atol =
1e-12, max_step 1 ms), split where a clutch opens or closes (the jumps at
0.4 and 0.9 s and f_1's zero (pi - 1.57)/(0.4 pi) ~ 1.2506 s, known in
closed form, so each piece knows its open clutches), and stopped by
terminal events: a slipping clutch's d s_k, or a stuck clutch's margin
1.1 T_cap - |T_k|, falling through zero. At each stop the modes are
decided again: an open clutch is open; one with |s| > 1e-9 rad/s slips
with d = sign(s); every other one (stuck before, its slip just reached
zero, closing at zero slip) is made stuck, except one whose breakaway
event fired, which slips the way its torque pushed; then, while a stuck
clutch needs more than its static capacity, the worst (largest
|T|/(1.1 T_cap)) is released the way its torque pushes and the group
dynamics are recomputed (a new stick can release another clutch at the
same instant). Every zero-slip slipping clutch must then leave zero in its
direction (d ds/dt > 0), else the script stops. A stuck group's speeds are
set to their inertia-weighted mean (removes the ~1e-14 rad/s left by the
event's root finding; momentum unchanged).

Checks asserted before writing, on the grid, for both runs: momentum,
sum(w) = 10 + (1 - cos(10 pi t))/pi (the integral of tau), to 1e-9 rad/s;
energy, KE(t) - KE(0) = W_tau - D (W_tau = integral of tau w1, D = integral
of sum T_k s_k over slipping clutches, both extra states) to 1e-9 J, with
D non-decreasing and no slipping clutch at d s_k < -1e-9 (friction only
dissipates); a stuck clutch's |T_k| within 1.1 T_cap + 1e-9 N*m. A second
run with Radau (rtol = atol = 1e-11) must give the same events (times to
1e-8 s) and speeds to 1e-8 rad/s. The CSV holds the DOP853 run; --check
compares to 1e-9 (rad/s, s), the reference's accuracy.
"""
import math
import os
import sys

try:
    import numpy as np
    import refcsv  # this folder: the CSV's writer and --check
except ImportError as e:
    sys.exit("coupled_clutches.py: %s; install numpy and scipy (Debian: python3-numpy "
             "python3-scipy, `make deps`)" % e)

J, W0 = np.array([1.0, 1.0, 1.0, 1.0]), [10.0, 0.0, 0.0, 0.0]   # kg*m^2, rad/s
CAP_MAX, STATIC, DURATION = 10.0, 1.1, 1.5   # N*m kinetic at f = 1, static/kinetic, s
STEP_TIMES = (0.4, 0.9)              # f_2, f_3 jump to 1
F1_PHASE = 1.57
SLIP_TOL = 1e-9                      # rad/s: a slip this small is zero
MAX_STEP = 1e-3
RUNS = (("DOP853", 1e-12), ("Radau", 1e-11))
TOL_MOMENTUM, TOL_ENERGY, TOL_STUCK = 1e-9, 1e-9, 1e-9   # rad/s, J, N*m
AGREE = 1e-8                         # rad/s and s, between the two runs
CHECK_TOL = 1e-9                     # --check: rad/s and s against the CSV
KINDS = {None: "open", 0: "stick", 1: "slip", -1: "slip"}

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
DEFAULT_OUT = os.path.join(ROOT, "tests", "data", "ref", "coupled_clutches.csv")


def tau(t):
    return 10.0 * math.sin(2 * math.pi * 5 * t)


def forces(t):
    return (math.sin(2 * math.pi * 0.2 * t + F1_PHASE), float(t >= STEP_TIMES[0]),
            float(t >= STEP_TIMES[1]))


def caps(t):
    return [CAP_MAX * min(max(f, 0.0), 1.0) for f in forces(t)]


def split_times():
    """Where a clutch opens or closes: the jumps, f_1's zeros, the end."""
    zeros = [(n * math.pi - F1_PHASE) / (0.4 * math.pi) for n in range(1, 100)]
    return sorted(set(STEP_TIMES) | {DURATION} | {z for z in zeros if 0 < z < DURATION})


def groups(modes):
    """(first, last) flywheel of each rigid group (joined by stuck clutches)."""
    out, a = [], 0
    while a < 4:
        b = a
        while b < 3 and modes[b] == 0:
            b += 1
        out.append((a, b))
        a = b + 1
    return out


def dynamics(t, w, modes):
    """Accelerations and clutch torques. modes[k]: None open, 0 stuck, +-1 slipping."""
    cap = caps(t)
    F = [tau(t), 0.0, 0.0, 0.0]
    T = [0.0, 0.0, 0.0]
    for k, m in enumerate(modes):
        if m in (1, -1):
            T[k] = m * cap[k]
            F[k] -= T[k]
            F[k + 1] += T[k]
    dw = [0.0] * 4
    for a, b in groups(modes):
        acc = sum(F[a:b + 1]) / sum(J[a:b + 1])
        dw[a:b + 1] = [acc] * (b + 1 - a)
        for k in range(a, b):
            T[k] = sum(F[a:k + 1]) - sum(J[a:k + 1]) * acc
    return dw, T


def decide(t, t_next, w, prev, event):
    """Modes for the piece [t, t_next] (see the docstring); event is the
    (kind, k) of the terminal event that ended the last piece, or None."""
    fmid, cap = forces(0.5 * (t + t_next)), caps(t)
    modes, zero = [None] * 3, []
    for k in range(3):
        s = w[k] - w[k + 1]
        if fmid[k] <= 0:
            continue
        if event == ("break", k):
            modes[k] = 1 if dynamics(t, w, prev)[1][k] > 0 else -1
            zero.append(k)
        elif prev[k] == 0 or event == ("slip", k) or abs(s) <= SLIP_TOL:
            modes[k] = 0
            zero.append(k)
        else:
            modes[k] = 1 if s > 0 else -1
    while True:
        dw, T = dynamics(t, w, modes)
        over = [(abs(T[k]) / (STATIC * cap[k]), k) for k in range(3)
                if modes[k] == 0 and abs(T[k]) > STATIC * cap[k]]
        if not over:
            break
        k = max(over)[1]
        modes[k] = 1 if T[k] > 0 else -1
    for k in zero:
        if modes[k] != 0 and not modes[k] * (dw[k] - dw[k + 1]) > 0:
            sys.exit("coupled_clutches.py: t=%.17g: no consistent mode for clutch %d "
                     "(modes %s)" % (t, k + 1, modes))
    return modes


def event_fn(k, modes):
    def g(t, y):
        if modes[k] == 0:
            return STATIC * caps(t)[k] - abs(dynamics(t, y[:4], modes)[1][k])
        return modes[k] * (y[k] - y[k + 1])
    g.kind, g.terminal, g.direction = ("break" if modes[k] == 0 else "slip", k), True, -1
    return g


def simulate(method, tol):
    """Pieces (t0, t1, dense solution, modes), the initial modes, the events."""
    y = np.array(W0 + [0.0, 0.0])    # + work of tau, friction loss
    splits = split_times()
    initial = decide(0.0, splits[0], y[:4], [None] * 3, None)

    def rhs(t, y, modes):
        dw, T = dynamics(t, y[:4], modes)
        loss = sum(T[k] * (y[k] - y[k + 1]) for k in range(3) if modes[k] in (1, -1))
        return dw + [tau(t) * y[0], loss]

    def switch(t, t_next, y, modes, event):
        new = decide(t, t_next, y[:4], modes, event)
        for a, b in (g for g in groups(new) if g[1] > g[0]):
            y[a:b + 1] = np.dot(J[a:b + 1], y[a:b + 1]) / sum(J[a:b + 1])
        return new, [(t, k + 1, KINDS[new[k]]) for k in range(3) if new[k] != modes[k]]

    pieces, events = refcsv.piecewise(
        "coupled_clutches.py", y, splits, DURATION, initial, rhs,
        lambda modes: [event_fn(k, modes) for k in range(3) if modes[k] is not None], switch,
        method, tol, MAX_STEP)
    return initial, pieces, events


def checks(label, grid, pieces):
    """Samples the run on the grid and asserts the checks of the docstring."""
    found, y = refcsv.sample(grid, pieces)
    w = y[:, :4]
    mom = np.max(np.abs((w * J).sum(axis=1) - (10 + (1 - np.cos(10 * np.pi * grid)) / np.pi)))
    ke = 0.5 * (w ** 2 * J).sum(axis=1)
    energy = np.max(np.abs(ke - ke[0] - y[:, 4] + y[:, 5]))
    worst_stuck, worst_dir = -math.inf, 0.0
    for t, wi, p in zip(grid, w, found):
        T, cap, m = dynamics(t, wi, p[3])[1], caps(t), p[3]
        for k in range(3):
            if m[k] == 0:
                worst_stuck = max(worst_stuck, abs(T[k]) - STATIC * cap[k])
            elif m[k] is not None:
                worst_dir = max(worst_dir, -m[k] * (wi[k] - wi[k + 1]))
    dloss = np.min(np.diff(y[:, 5]))
    print("%s: momentum error %.2g rad/s, energy balance error %.2g J (friction loss %.6g J, "
          "work of tau %.6g J), stuck clutches' |T| - 1.1 T_cap at most %.3g N*m"
          % (label, mom, energy, y[-1, 5], y[-1, 4], worst_stuck))
    if not (mom <= TOL_MOMENTUM and energy <= TOL_ENERGY and worst_stuck <= TOL_STUCK
            and worst_dir <= SLIP_TOL and dloss >= -TOL_ENERGY):
        sys.exit("coupled_clutches.py: %s fails a sanity check (slip against its direction "
                 "%.3g, smallest loss increment %.3g)" % (label, worst_dir, dloss))
    return w


COLS = ["t", "w1", "w2", "w3", "w4"]


def compute():
    return refcsv.two_runs("coupled_clutches.py", RUNS, DURATION, simulate, checks, AGREE, "clutch",
                           COLS)


def modes(i):
    return ", ".join("clutch%d %s" % (k + 1, KINDS[m]) for k, m in enumerate(i))


def main():
    refcsv.main(__doc__, DEFAULT_OUT, compute,
                "coupled_clutches: Modelica.Mechanics.Rotational.Examples.CoupledClutches, "
                "piecewise solve_ivp (DOP853) from scripts/ref/coupled_clutches.py (rad/s)",
                modes, "clutch", int, COLS, CHECK_TOL)


if __name__ == "__main__":
    main()
