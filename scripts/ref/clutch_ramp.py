#!/usr/bin/env python3
"""Independent reference for graphs/clutch_ramp.json with
graphs/scenarios/clutch_ramp.json: a clutch engaged by a pedal ramp.

Writes tests/data/ref/clutch_ramp.csv (or the path given with --output):
columns t,omega_source,omega_load (rad/s) on the 1 ms grid from 0 to 2 s,
after a header comment with the lock time, `# lock_time=<%.17g>`.
tests/test_reference.c compares the framework with it; the meson test
`ref_clutch_ramp` reruns this script and checks the committed CSV.

Needs numpy and scipy (Debian: python3-numpy, python3-scipy).

The system (SI units, no drivegraph code involved):

  source  constant torque T_s = 150 N*m, inertia I_e = 0.2 kg*m^2
  clutch  pedal p(t) = 1 - t on [0, 1] s, 0 after; engagement e = 1 - p,
          kinetic capacity T_cap = 300 e, static capacity 1.1 T_cap;
          driven plate without inertia
  load    inertia I_L = 8 kg*m^2, viscous drag c = 2 N*m*s (c0 = c2 = 0)

everything at rest at t = 0.

Slipping (0 < t <= t_lock, where t_lock < 1 so e = t). At t = 0 the slip
and the capacity are both zero; the source has the torque and the load
none, so the source runs ahead at once and the friction torque is
+T_cap (from the source to the load) throughout:

  I_e w_e' = T_s - 300 t      =>  w_e(t) = (150 t - 150 t^2) / 0.2
  I_L w_L' = 300 t - c w_L    =>  w_L' + k w_L = a t,  k = c/I_L = 1/4,
                                  a = 300/I_L = 37.5

The load's equation is linear with polynomial forcing: try w_L = A t + B,
A + k (A t + B) = a t gives A = a/k = 150, B = -A/k = -600; add the
homogeneous solution C exp(-k t) with C = 600 so that w_L(0) = 0:

  w_L(t) = 150 t - 600 (1 - exp(-t/4)) = 150 t + 600 expm1(-t/4)

(expm1 keeps the small-t values accurate). The slip

  s(t) = w_e - w_L = 600 t - 750 t^2 - 600 expm1(-t/4)

is positive just after 0 (s ~ 750 t) and negative at t = 1 (-17.3 rad/s):
its root in (0.5, 1) is the lock time (brentq, xtol 1e-13).

Locked (t > t_lock): one shaft, (I_e + I_L) w' = T_s - c w from the common
speed w_0 = w_e(t_lock) = w_L(t_lock) (no impact: the slip is exactly zero
at the lock):

  w(t) = T_s/c + (w_0 - T_s/c) exp(-c (t - t_lock) / (I_e + I_L)).

The lock holds while the torque it transmits, T = T_s - I_e w' (from the
source's equation), stays within the static capacity 1.1 * 300 e(t); that
is checked on a fine grid (it is about 147 N*m against at least 322 N*m,
so the clutch never lets go and no unstick event is needed).

Cross-check: the same system integrated numerically with
scipy.integrate.solve_ivp (DOP853, rtol = atol = 1e-12): the slipping phase
as two ODEs with a terminal event on the slip (direction -1), then the
locked phase as one ODE from the event's state. The closed form and the
numerical solution must agree (lock time to 1e-9 s, speeds to 1e-9 of the
largest speed; they agree to ~1e-12). The CSV holds the closed form.
"""
import argparse
import math
import os
import sys

try:
    import numpy as np
    from scipy.integrate import solve_ivp
    from scipy.optimize import brentq
except ImportError as e:
    sys.exit("clutch_ramp.py: %s; install numpy and scipy (Debian: python3-numpy "
             "python3-scipy, `make deps`)" % e)

T_SOURCE = 150.0      # N*m
I_SOURCE = 0.2        # kg*m^2
MAX_TORQUE = 300.0    # N*m at full engagement
STATIC_FACTOR = 1.1
I_LOAD = 8.0          # kg*m^2
C_LOAD = 2.0          # N*m*s
RAMP_END = 1.0        # s: pedal 1 -> 0 over [0, RAMP_END]
DURATION = 2.0        # s
GRID_MS = 1           # output grid (ms)
LOCK_XTOL = 1e-13     # s
IVP_TOL = 1e-12
AGREE_LOCK = 1e-9     # s: closed form vs solve_ivp
AGREE_SPEED = 1e-9    # relative to the largest speed

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
DEFAULT_OUT = os.path.join(ROOT, "tests", "data", "ref", "clutch_ramp.csv")


def engagement(t):
    """e = 1 - pedal, pedal = 1 - t on [0, RAMP_END], held at the ends."""
    return min(max(t / RAMP_END, 0.0), 1.0)


def capacity(t):
    return MAX_TORQUE * engagement(t)


# -- closed form --------------------------------------------------------------

def omega_source_slipping(t):
    return (T_SOURCE * t - 0.5 * MAX_TORQUE / RAMP_END * t * t) / I_SOURCE


def omega_load_slipping(t):
    k = C_LOAD / I_LOAD
    a = MAX_TORQUE / RAMP_END / I_LOAD
    # a/k t - a/k^2 (1 - exp(-k t))
    return a / k * t + a / (k * k) * math.expm1(-k * t)


def slip(t):
    return omega_source_slipping(t) - omega_load_slipping(t)


def closed_form():
    """Lock time and the speeds as functions of t."""
    t_lock = brentq(slip, 0.5 * RAMP_END, RAMP_END, xtol=LOCK_XTOL, rtol=4 * np.finfo(float).eps,
                    maxiter=200)
    w0 = omega_source_slipping(t_lock)
    i_sum = I_SOURCE + I_LOAD
    w_inf = T_SOURCE / C_LOAD

    def speeds(t):
        if t <= t_lock:
            return omega_source_slipping(t), omega_load_slipping(t)
        w = w_inf + (w0 - w_inf) * math.exp(-C_LOAD * (t - t_lock) / i_sum)
        return w, w

    return t_lock, speeds


def check_stays_locked(t_lock, speeds):
    """The lock torque stays within the static capacity after t_lock."""
    i_sum = I_SOURCE + I_LOAD
    worst = 0.0
    for t in np.linspace(t_lock, DURATION, 20001):
        w = speeds(t)[0]
        dw = (T_SOURCE - C_LOAD * w) / i_sum
        torque = T_SOURCE - I_SOURCE * dw
        limit = STATIC_FACTOR * capacity(t)
        worst = max(worst, abs(torque) / limit)
    if not worst < 1.0:
        sys.exit("clutch_ramp.py: the lock torque exceeds the static capacity (ratio %.3g): "
                 "the clutch would slip again; model the unstick event" % worst)
    return worst


# -- numerical solution ---------------------------------------------------------

def numerical(grid):
    """solve_ivp through the lock event; returns the lock time and the
    speeds on `grid` (two columns)."""

    def slipping(t, y):
        cap = capacity(t)  # the source is ahead: friction +cap on the load
        return [(T_SOURCE - cap) / I_SOURCE, (cap - C_LOAD * y[1]) / I_LOAD]

    def slip_event(t, y):
        return y[0] - y[1]
    slip_event.terminal = True
    slip_event.direction = -1

    first = solve_ivp(slipping, (0.0, DURATION), [0.0, 0.0], method="DOP853", rtol=IVP_TOL,
                      atol=IVP_TOL, events=slip_event, dense_output=True)
    if first.status != 1 or len(first.t_events[0]) != 1:
        sys.exit("clutch_ramp.py: solve_ivp found no lock (status %d: %s)"
                 % (first.status, first.message))
    t_lock = first.t_events[0][0]
    y_lock = first.y_events[0][0]
    w0 = 0.5 * (y_lock[0] + y_lock[1])

    def locked(t, y):
        return [(T_SOURCE - C_LOAD * y[0]) / (I_SOURCE + I_LOAD)]

    second = solve_ivp(locked, (t_lock, DURATION), [w0], method="DOP853", rtol=IVP_TOL,
                       atol=IVP_TOL, dense_output=True)
    if second.status != 0:
        sys.exit("clutch_ramp.py: solve_ivp failed in the locked phase: %s" % second.message)
    out = np.empty((len(grid), 2))
    for i, t in enumerate(grid):
        if t <= t_lock:
            out[i] = first.sol(t)
        else:
            out[i] = second.sol(t)[0]
    return t_lock, out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--output", "-o", default=DEFAULT_OUT, help="CSV to write (default %(default)s)")
    args = ap.parse_args()

    n = int(round(DURATION * 1000 / GRID_MS))
    grid = [k * GRID_MS / 1000.0 for k in range(n + 1)]

    t_lock, speeds = closed_form()
    exact = np.array([speeds(t) for t in grid])
    ratio = check_stays_locked(t_lock, speeds)

    t_lock_num, num = numerical(grid)
    scale = np.max(np.abs(exact))
    d_lock = abs(t_lock_num - t_lock)
    d_speed = np.max(np.abs(num - exact)) / scale
    print("lock time: closed form %.17g s, solve_ivp %.17g s (difference %.2g s)"
          % (t_lock, t_lock_num, d_lock))
    print("speeds: closed form vs solve_ivp, largest difference %.2g of max|omega| = %.6g rad/s"
          % (d_speed, scale))
    print("locked phase: lock torque at most %.3f of the static capacity (stays locked)" % ratio)
    if not (d_lock <= AGREE_LOCK and d_speed <= AGREE_SPEED):
        sys.exit("clutch_ramp.py: the closed form and solve_ivp disagree")

    os.makedirs(os.path.dirname(os.path.abspath(args.output)), exist_ok=True)
    tmp = args.output + ".tmp"
    with open(tmp, "w") as f:
        f.write("# clutch_ramp: graphs/clutch_ramp.json with graphs/scenarios/clutch_ramp.json, "
                "closed form from scripts/ref/clutch_ramp.py (rad/s)\n")
        f.write("# lock_time=%.17g\n" % t_lock)
        f.write("t,omega_source,omega_load\n")
        for t, (we, wl) in zip(grid, exact):
            f.write("%.17g,%.17g,%.17g\n" % (t, we, wl))
    os.replace(tmp, args.output)
    print("wrote %s (%d rows)" % (os.path.relpath(args.output), len(grid)))


if __name__ == "__main__":
    main()
