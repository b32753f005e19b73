#!/usr/bin/env python3
"""Independent reference for a self-locking lossy gear with stick-slip:
tests/data/msl/LossyGearDemo1 (Modelica.Mechanics.Rotational.Examples.
LossyGearDemo1 written as our graph: tests/data/msl/LossyGearDemo1/graph.json).

Writes tests/data/ref/lossy_gear.csv (or the path given with --output):
columns t,w_in,w_out (rad/s) on the 1 ms grid from 0 to 0.5 s, after
comments with the events (the mesh sticking, rolling again, its power
reversing). tests/test_reference.c compares the framework with it; the
meson test `ref_lossy_gear` reruns this script and checks the committed CSV.

Needs numpy and scipy (Debian: python3-numpy, python3-scipy).

The system (SI units, no drivegraph code involved):

  in   inertia J1 = 1 kg*m^2, torque T_a(t) = 10 sin(2 pi t) N*m
  gear w_in = r w_out, r = 2, mesh efficiency eta = 0.5 whichever side
       drives, no bearing friction
  out  inertia J2 = 1.5 kg*m^2, torque T_b(t) = -10 + 2.5 t N*m (the ramp
       from -10 to -5 N*m over 2 s)

everything at rest at t = 0. With tau the torque the mesh takes from `in`
(so J1 w_in' = T_a - tau) and tau_out the torque it gives `out`
(J2 w_out' = T_b + tau_out), power flows from `in` when tau w_in > 0:
then tau_out = eta r tau ("in drives"); from `out` when tau w_in < 0:
then tau_out = r tau / eta ("out drives"). Eliminating tau:

  in drives:   w_out' = (T_b + eta r T_a) / (J2 + eta r^2 J1)
  out drives:  w_out' = (eta T_b + r T_a) / (eta J2 + r^2 J1)

At w_out = 0 the mesh can turn forward when
F = min(eta r T_a + T_b, r T_a + eta T_b) > 0 and backward when
B = min(-eta r T_a - T_b, -r T_a - eta T_b) > 0 (the two ways each side
may drive); with neither it is stuck (w_in = w_out = 0; Modelica's
LossyGear "locked" mode). The run is cut into pieces: rolling in one
driving case until the speed reaches zero or tau reverses, stuck until F
or B reaches zero; solve_ivp's events locate those (terminal) and the next
case is decided there (at rest by F and B; a reversal while rolling swaps
the driving side). The speeds here are quadratures of functions of time,
but the piecewise structure with located events is what the framework is
checked against.

Two runs, DOP853 at rtol = atol = 1e-12 and Radau at 1e-11, must give the
same events (times to 1e-8 s) and speeds to 1e-8 rad/s, and the energy
balance (kinetic energy = work of T_a and T_b minus the mesh's loss) must
close to 1e-9 J. The CSV holds the DOP853 run; --check compares to 1e-9.
"""
import math
import os
import sys

try:
    import numpy as np
    import refcsv  # this folder: the CSV's writer and --check
except ImportError as e:
    sys.exit("lossy_gear.py: %s; install numpy and scipy (Debian: python3-numpy python3-scipy, "
             "`make deps`)" % e)

J1, J2, R, ETA = 1.0, 1.5, 2.0, 0.5
DURATION = 0.5
MAX_STEP = 1e-3
RUNS = (("DOP853", 1e-12), ("Radau", 1e-11))
AGREE, CHECK_TOL, TOL_ENERGY = 1e-8, 1e-9, 1e-9
STUCK, IN_DRIVES, OUT_DRIVES = "stuck", "in drives", "out drives"

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
DEFAULT_OUT = os.path.join(ROOT, "tests", "data", "ref", "lossy_gear.csv")


def torques(t):
    return 10.0 * math.sin(2.0 * math.pi * t), -10.0 + 2.5 * t


def excess(t):
    ta, tb = torques(t)
    f = min(ETA * R * ta + tb, R * ta + ETA * tb)
    b = min(-ETA * R * ta - tb, -R * ta - ETA * tb)
    return f, b


def accel(t, case):
    """w_out' and the mesh torque tau taken from `in` in a rolling case."""
    ta, tb = torques(t)
    if case == STUCK:
        return 0.0, ta
    if case == IN_DRIVES:
        a = (tb + ETA * R * ta) / (J2 + ETA * R * R * J1)
    else:
        a = (ETA * tb + R * ta) / (ETA * J2 + R * R * J1)
    return a, ta - J1 * R * a


def decide_at_rest(t):
    """The case at w_out = 0: stuck, or rolling the way F or B says, with
    the driving side whose power flow is consistent with that motion."""
    f, b = excess(t)
    if f <= 0.0 and b <= 0.0:
        return (STUCK, 0)
    s = 1 if f > 0.0 else -1
    for case in (IN_DRIVES, OUT_DRIVES):
        a, tau = accel(t, case)
        if a * s > 0.0 and (tau * s > 0.0) == (case == IN_DRIVES):
            return (case, s)
    sys.exit("lossy_gear.py: no consistent case at rest at t=%g" % t)


def simulate(method, tol):
    y = np.zeros(4)  # w_out, work of T_a, work of T_b, mesh loss (<= 0)
    initial = decide_at_rest(0.0)

    def rhs(t, y, modes):
        case, _ = modes
        a, tau = accel(t, case)
        ta, tb = torques(t)
        w_out = y[0]
        w_in = R * w_out
        loss = 0.0
        if case != STUCK:
            # what the mesh takes from the driving side, (1 - eta) of it lost
            p = tau * w_in if case == IN_DRIVES else -(R * tau / ETA) * w_out
            loss = -(1.0 - ETA) * p
        return [a, ta * w_in, tb * w_out, loss]

    def events_for(modes):
        case, s = modes
        if case == STUCK:
            def g(t, y):
                return -max(excess(t))
            g.kind, g.terminal, g.direction = "roll", True, -1
            return [g]

        def rest(t, y):
            return y[0] * s
        rest.kind, rest.terminal, rest.direction = "stick", True, -1

        def reverse(t, y):
            tau = accel(t, case)[1]
            return tau * s if case == IN_DRIVES else -tau * s
        reverse.kind, reverse.terminal, reverse.direction = "reverse", True, -1
        return [rest, reverse]

    def switch(t, t_next, y, modes, event):
        case, s = modes
        if event == "reverse":
            new = (OUT_DRIVES if case == IN_DRIVES else IN_DRIVES, s)
        else:
            y[0] = 0.0 if event == "stick" else y[0]
            new = decide_at_rest(t + 1e-12 if event == "roll" else t)
        changes = [] if new == modes else [(t, "gear", "%s %+d" % (new[0].replace(" ", "_"), new[1]))]
        return new, changes

    pieces, events = refcsv.piecewise("lossy_gear.py", y, [DURATION], DURATION, initial, rhs,
                                      events_for, switch, method, tol, MAX_STEP)
    return initial, pieces, events


def checks(label, grid, pieces):
    found, y = refcsv.sample(grid, pieces)
    w_out = y[:, 0]
    ke = 0.5 * (J1 * (R * w_out) ** 2 + J2 * w_out ** 2)
    energy = np.max(np.abs(ke - y[:, 1] - y[:, 2] - y[:, 3]))
    print("%s: energy balance error %.2g J (T_a %.6g J, T_b %.6g J, mesh loss %.6g J)"
          % (label, energy, y[-1, 1], y[-1, 2], y[-1, 3]))
    if not energy <= TOL_ENERGY:
        sys.exit("lossy_gear.py: %s fails the energy balance" % label)
    return np.column_stack([R * w_out, w_out])


COLS = ["t", "w_in", "w_out"]


def compute():
    return refcsv.two_runs("lossy_gear.py", RUNS, DURATION, simulate, checks, AGREE, "element",
                           COLS)


def modes(i):
    return "gear %s %+d" % (i[0].replace(" ", "_"), i[1])


def main():
    refcsv.main(__doc__, DEFAULT_OUT, compute,
                "lossy_gear: Modelica.Mechanics.Rotational.Examples.LossyGearDemo1, piecewise "
                "solve_ivp (DOP853) from scripts/ref/lossy_gear.py (rad/s)",
                modes, "element", str, COLS, CHECK_TOL)


if __name__ == "__main__":
    main()
