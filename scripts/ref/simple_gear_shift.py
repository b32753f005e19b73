#!/usr/bin/env python3
"""Independent reference for the Modelica example
Modelica.Mechanics.Rotational.Examples.SimpleGearShift: a planetary gear
shifted from reduction to direct drive by a brake and a clutch.

Writes tests/data/ref/simple_gear_shift.csv (or --output PATH): columns
t,w_sun,w_ring,w_carrier (rad/s) on the 1 ms grid over [0, 5] s, after
comments with the modes at t = 0 and one line per mode change,
`# event t=<%.17g> element=brake|clutch stick|slip|open`. --check [PATH]
recomputes and compares with the committed CSV (or PATH): "ok - ..." /
"FAIL - ..." per check, "N passed, M failed", exit 1 on a failure. Needs
numpy and scipy (Debian: python3-numpy, python3-scipy); no drivegraph code
involved.

The system (SI units), all at rest at t = 0: the engine, J_s = 1 kg*m^2 on
the sun, driven by tau_e = 20 N*m from t = 0.5 s (0 before); an ideal
planetary with S = 50 sun and R = 75 ring teeth, massless members; the
load, J_c = 10 kg*m^2 on the carrier, with the drag -20 (w_c/w_n)^2 (sign
opposing w_c), w_n = 10.471975511966 rad/s (100 rpm); nothing on the ring
but a brake to ground and a clutch from the sun, both without inertia.
Brake command b(t) = 1 until 2 s, falling linearly to 0 at 2.1 s; clutch
command c(t) = 1 - b(t). Kinetic capacities 100 b and 100 c N*m, static =
kinetic (Modelica's peak = 1).

Formulation (not drivegraph's: no elimination, no normalized tie). The
velocities v = (w_s, w_r, w_c), M = diag(J_s, 0, J_c), and the active
constraints A v = 0 with rows: the planetary (S, R, -(S + R)) always (Willis:
S w_s + R w_r = (S + R) w_c), the stuck brake (0, 1, 0), the stuck clutch
(1, -1, 0). The accelerations and multipliers solve the KKT system
[[M, -A^T], [A, 0]] [a; mu] = [F; 0], F the applied torques: tau_e at the
sun, the drag at the carrier, a slipping clutch's -d T_c at the sun and
+d T_c at the ring (d = sign of the slip w_s - w_r), a slipping brake's
-d T_b at the ring (d = sign of w_r). A^T mu is the constraint torque at
each member, so the stuck brake holds with mu_b and the stuck clutch
carries T = -mu_cl from sun to ring. The KKT matrix is regular in every
mode (the massless ring is always fixed by the planetary's row). Only
w_s and w_c are integrated; w_r follows from Willis.

Element laws (exact Coulomb, no regularization), as coupled_clutches.py:
open while its command is 0 over the piece; slipping in direction d with
T = d T_cap; stuck while |T| <= T_cap, released the way its torque pushes
(the brake's shaft moves against mu_b, the clutch's sun side runs ahead
for T > 0). Pieces split where a command's ramp starts or ends (0.5, 2,
2.1 s) and stopped by terminal events: a slipping element's d * slip, or
a stuck one's margin T_cap - |T|, falling through zero. At each stop the
modes are decided again exactly as in coupled_clutches.py (stick at zero
slip, release the worst over-capacity stuck element and repeat, every
zero-slip slipping element must leave zero its way), and the speeds are
projected onto the new constraints conserving momentum (min of the
kinetic-energy norm of the change; it removes only the ~1e-14 rad/s the
root finding leaves).

Checks asserted before writing, on the grid, for both runs: energy,
KE(t) - KE(0) = W_e + W_drag - D (W_e = integral of tau_e w_s, W_drag of
the drag times w_c, D of the slipping elements' friction power, extra
states) to 1e-9 J with D non-decreasing; the Willis relation to 1e-12
rad/s (it holds by construction); a stuck element's |T| within T_cap +
1e-9 N*m; the ratio w_c / w_s = S/(S+R) = 0.4 to 1e-12 while the brake
holds (after 0.5 s) and 1 once the clutch sticks with the brake open. A
second run with Radau (rtol = atol = 1e-11) must give the same events
(times to 1e-8 s) and speeds to 1e-8 rad/s. The CSV holds the DOP853 run;
--check compares to 1e-9 (rad/s, s).
"""
import math
import os
import sys

try:
    import numpy as np
    import refcsv  # this folder: the CSV's writer and --check
except ImportError as e:
    sys.exit("simple_gear_shift.py: %s; install numpy and scipy (Debian: python3-numpy "
             "python3-scipy, `make deps`)" % e)

J_S, J_C = 1.0, 10.0                  # kg*m^2: engine on the sun, load on the carrier
S, R = 50.0, 75.0                     # teeth
TAU_E, T_STEP = 20.0, 0.5             # N*m from s
W_N, TAU_N = 10.471975511966, 20.0    # drag 20 (w/w_n)^2
CAP, RAMP_AT, RAMP_LEN = 100.0, 2.0, 0.1
DURATION = 5.0
NAMES = ("brake", "clutch")
SLIP_TOL = 1e-9
ACC_TOL = 1e-9                        # rad/s^2: see decide()
MAX_STEP = 1e-3
RUNS = (("DOP853", 1e-12), ("Radau", 1e-11))
TOL_ENERGY, TOL_STUCK, TOL_RATIO = 1e-9, 1e-9, 1e-12
AGREE, CHECK_TOL = 1e-8, 1e-9
KINDS = {None: "open", 0: "stick", 1: "slip", -1: "slip"}
PLANET = np.array([S, R, -(S + R)])
ROWS = (np.array([0.0, 1.0, 0.0]), np.array([1.0, -1.0, 0.0]))   # brake, clutch stuck

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
DEFAULT_OUT = os.path.join(ROOT, "tests", "data", "ref", "simple_gear_shift.csv")


def commands(t):
    x = min(max((t - RAMP_AT) / RAMP_LEN, 0.0), 1.0)
    return 1.0 - x, x                    # brake, clutch


def caps(t):
    return [CAP * c for c in commands(t)]


def tau_e(t):
    return TAU_E if t >= T_STEP else 0.0


def drag(wc):
    return -TAU_N * wc * abs(wc) / (W_N * W_N)


def ring(ws, wc):
    return ((S + R) * wc - S * ws) / R


def slips(v):
    return [v[1], v[0] - v[1]]           # brake: w_r; clutch: w_s - w_r


def dynamics(t, ws, wc, modes):
    """Accelerations (a_s, a_r, a_c) and element torques [mu_b, T_cl]: the
    brake's torque on the ring, the clutch's torque from sun to ring."""
    cap, v = caps(t), (ws, ring(ws, wc), wc)
    F = np.array([tau_e(t), 0.0, drag(wc)])
    T = [0.0, 0.0]
    if modes[0] in (1, -1):
        T[0] = -modes[0] * cap[0]
        F[1] += T[0]
    if modes[1] in (1, -1):
        T[1] = modes[1] * cap[1]
        F[0] -= T[1]
        F[1] += T[1]
    rows = [PLANET] + [ROWS[k] for k in range(2) if modes[k] == 0]
    A = np.array(rows)
    n = len(rows)
    K = np.zeros((3 + n, 3 + n))
    K[:3, :3] = np.diag([J_S, 0.0, J_C])
    K[:3, 3:] = -A.T
    K[3:, :3] = A
    sol = np.linalg.solve(K, np.concatenate([F, np.zeros(n)]))
    a, mu = sol[:3], sol[3:]
    i = 1
    for k in range(2):
        if modes[k] == 0:
            T[k] = mu[i] if k == 0 else -mu[i]
            i += 1
    return a, T, v


def decide(t, t_next, ws, wc, prev, event):
    """Modes for the piece [t, t_next]; event: (kind, k) that ended the last
    piece, or None (see coupled_clutches.py)."""
    cmid, cap = commands(0.5 * (t + t_next)), caps(t)
    s = slips((ws, ring(ws, wc), wc))
    modes, zero = [None, None], []
    for k in range(2):
        if cmid[k] <= 0:
            continue
        if event == ("break", k):
            Tk = dynamics(t, ws, wc, prev)[1][k]
            modes[k] = (-1 if Tk > 0 else 1) if k == 0 else (1 if Tk > 0 else -1)
            zero.append(k)
        elif prev[k] == 0 or event == ("slip", k) or abs(s[k]) <= SLIP_TOL:
            modes[k] = 0
            zero.append(k)
        else:
            modes[k] = 1 if s[k] > 0 else -1
    while True:
        a, T, _ = dynamics(t, ws, wc, modes)
        over = [(abs(T[k]) / cap[k] if cap[k] > 0 else math.inf, k) for k in range(2)
                if modes[k] == 0 and abs(T[k]) > cap[k]]
        if not over:
            break
        k = max(over)[1]
        modes[k] = (-1 if T[k] > 0 else 1) if k == 0 else (1 if T[k] > 0 else -1)
    # a zero-slip slipping element must leave zero its way; with static =
    # kinetic capacity an element let go at its breakaway starts with zero
    # slip acceleration (the slipping torque equals the torque it held) and
    # leaves at second order, so zero (to round-off) is accepted
    ds = slips(a)
    for k in zero:
        if modes[k] not in (0, None) and not modes[k] * ds[k] > -ACC_TOL:
            sys.exit("simple_gear_shift.py: t=%.17g: no consistent mode for the %s (modes %s)"
                     % (t, NAMES[k], modes))
    return modes


def project(ws, wc, modes):
    """Momentum-conserving projection of (w_s, w_c) onto the stuck rows."""
    rows = [ROWS[k] for k in range(2) if modes[k] == 0]
    if not rows:
        return ws, wc
    # v = B q with q = (w_s, w_c): the planetary eliminated
    B = np.array([[1.0, 0.0], [-S / R, (S + R) / R], [0.0, 1.0]])
    C = np.array(rows) @ B
    Mq = np.diag([J_S, J_C])             # the ring is massless
    q0 = np.array([ws, wc])
    n = C.shape[0]
    K = np.zeros((2 + n, 2 + n))
    K[:2, :2], K[:2, 2:], K[2:, :2] = Mq, C.T, C
    q = np.linalg.lstsq(K, np.concatenate([Mq @ q0, np.zeros(n)]), rcond=None)[0][:2]
    return q[0], q[1]


def event_fn(k, modes):
    def g(t, y):
        if modes[k] == 0:
            return caps(t)[k] - abs(dynamics(t, y[0], y[1], modes)[1][k])
        return modes[k] * slips((y[0], ring(y[0], y[1]), y[1]))[k]
    g.kind, g.terminal, g.direction = ("break" if modes[k] == 0 else "slip", k), True, -1
    return g


def simulate(method, tol):
    y = np.zeros(5)                      # w_s, w_c, work of tau_e, of the drag, friction loss
    splits = sorted({T_STEP, RAMP_AT, RAMP_AT + RAMP_LEN, DURATION})
    initial = decide(0.0, splits[0], 0.0, 0.0, [None, None], None)

    def rhs(t, y, modes):
        a, T, v = dynamics(t, y[0], y[1], modes)
        s = slips(v)
        loss = 0.0
        for k in range(2):
            if modes[k] in (1, -1):
                loss += abs(T[k]) * abs(s[k]) if k == 0 else T[k] * s[k]
        return [a[0], a[2], tau_e(t) * y[0], drag(y[1]) * y[1], loss]

    def switch(t, t_next, y, modes, event):
        new = decide(t, t_next, y[0], y[1], modes, event)
        y[0], y[1] = project(y[0], y[1], new)
        return new, [(t, NAMES[k], KINDS[new[k]]) for k in range(2) if new[k] != modes[k]]

    pieces, events = refcsv.piecewise(
        "simple_gear_shift.py", y, splits, DURATION, initial, rhs,
        lambda modes: [event_fn(k, modes) for k in range(2) if modes[k] is not None], switch,
        method, tol, MAX_STEP)
    return initial, pieces, events


def checks(label, grid, pieces):
    found, y = refcsv.sample(grid, pieces)
    ws, wc = y[:, 0], y[:, 1]
    wr = ring(ws, wc)
    ke = 0.5 * (J_S * ws ** 2 + J_C * wc ** 2)
    energy = np.max(np.abs(ke - ke[0] - y[:, 2] - y[:, 3] + y[:, 4]))
    worst_stuck, worst_ratio = -math.inf, 0.0
    for t, a, b, p in zip(grid, ws, wc, found):
        m = p[3]
        T, cap = dynamics(t, a, b, m)[1], caps(t)
        for k in range(2):
            if m[k] == 0:
                worst_stuck = max(worst_stuck, abs(T[k]) - cap[k])
        if t > T_STEP and m[0] == 0 and m[1] is None:
            worst_ratio = max(worst_ratio, abs(b / a - S / (S + R)))
        if m[1] == 0 and m[0] is None:
            worst_ratio = max(worst_ratio, abs(b / a - 1.0))
    dloss = np.min(np.diff(y[:, 4]))
    print("%s: energy balance error %.2g J (friction loss %.6g J, engine %.6g J, drag %.6g J), "
          "stuck |T| - T_cap at most %.3g N*m, ratio error %.2g"
          % (label, energy, y[-1, 4], y[-1, 2], y[-1, 3], worst_stuck, worst_ratio))
    if not (energy <= TOL_ENERGY and worst_stuck <= TOL_STUCK and worst_ratio <= TOL_RATIO
            and dloss >= -TOL_ENERGY):
        sys.exit("simple_gear_shift.py: %s fails a sanity check (smallest loss increment %.3g)"
                 % (label, dloss))
    return np.column_stack([ws, wr, wc])


COLS = ["t", "w_sun", "w_ring", "w_carrier"]


def compute():
    return refcsv.two_runs("simple_gear_shift.py", RUNS, DURATION, simulate, checks, AGREE, "element",
                           COLS)


def modes(i):
    return ", ".join("%s %s" % (NAMES[k], KINDS[m]) for k, m in enumerate(i))


def main():
    refcsv.main(__doc__, DEFAULT_OUT, compute,
                "simple_gear_shift: Modelica.Mechanics.Rotational.Examples.SimpleGearShift, "
                "piecewise solve_ivp (DOP853) from scripts/ref/simple_gear_shift.py (rad/s)",
                modes, "element", str, COLS, CHECK_TOL)


if __name__ == "__main__":
    main()
