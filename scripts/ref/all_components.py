#!/usr/bin/env python3
"""Independent reference for the drive of inertia5 ... inertia6 in
ModelicaTest.Rotational.AllComponents (MSL 4.0.0): a friction clutch, an
ideal gear, a planetary, a spring and a damper, a SpringDamper with an
offset, an ElastoBacklash of 1e-5 degrees, bearing friction and a brake.

Writes tests/data/ref/all_components.csv (or --output PATH): the signals
the MSL's regression compares, in Modelica's names and sign conventions
(phi_rel = phi(flange_b) - phi(flange_a), w_rel its rate), on the 1 ms
grid over [0, 0.9] s, after comments with the friction elements' modes at
t = 0 and one line per mode change, `# event t=<%.17g> element=<name>
stuck|forward|backward|free`. --check [PATH] recomputes and compares with
the committed CSV. --msl PATH (the MSL's reference.csv of the model, e.g.
tests/data/msl/ModelicaTest.Rotational.AllComponents/reference.csv) also
prints how far that reference is from this solution, in csv-compare's tube
(tests/test_msl.py's rule) and at equal times. Needs numpy and scipy
(Debian: python3-numpy, python3-scipy); no drivegraph code involved.

The system, written from the Modelica source (SI units), every shaft a
rigid body, angles and speeds absolute, torques into a body positive:

  A    inertia6 (2 kg*m^2) and inertia3 (2), joined by a LossyGear of
       ratio 1 with the ideal loss table (a rigid joint): J_A = 4,
       phi_A(0) = 1 deg, w_A(0) = 2 rad/s
  1    inertia1 (2): flange_a on springDamper, flange_b on the planetary's
       carrier and elastoBacklash's flange_a
  4    inertia4 (2) behind elastoBacklash, on BearingFriction (2 N*m
       sliding, 1.1 x 2 N*m stuck)
  i    `inertia` (3): flange_a on the clutch, flange_b on an IdealGear of
       ratio 3 (w_i = 3 w_sun) whose flange_b is the planetary's sun
  5    inertia5 (3) on the clutch's flange_a
  2    inertia2 (4): on the spring (1e4 N*m/rad) and damper (10 N*m*s/rad)
       from the planetary's ring, on a brake and a torque sin(2 pi t) N*m
  ring the planetary's ring (ratio 3: 4 w_carrier = w_sun + 3 w_ring) has
       no inertia: w_ring = (4 w_1 - w_i/3)/3

Elements, each with Modelica's tau = flange_b.tau: the body on its
flange_b gets -tau, the body on its flange_a +tau:

  springDamper   flange_a = A, flange_b = 1: tau_sd = 1e4 (phi_rel -
                 phi_rel0) + 10 w_rel, phi_rel0 = 1e-3 deg
  elastoBacklash flange_a = 1, flange_b = 4: c = 1e4, d = 20, b = 1e-5 deg,
                 ElastoBacklash's law: tau_c = c (phi_rel -+ b/2) outside
                 the band |phi_rel| <= b/2 (0 inside), tau_d = d w_rel;
                 beyond +b/2: tau = 0 if tau_c + tau_d <= 0 else tau_c +
                 min(tau_c, tau_d); beyond -b/2: tau = 0 if tau_c + tau_d
                 >= 0 else tau_c + max(tau_c, tau_d); inside: 0. The law is
                 continuous in the state (that is its point), so it is
                 evaluated as written, with no held contact mode.
  spring+damper  flange_a = ring, flange_b = 2: tau_r = 1e4 phi_rel + 10
                 w_rel. The massless ring carries tau_r: the planetary's
                 torques sun : ring : carrier = 1 : 3 : -4 give the sun
                 tau_r/3, hence `inertia` -tau_r/9 through the ideal gear,
                 and the carrier (inertia1) +4 tau_r/3.
  clutch         flange_a = 5, flange_b = i: slipping, tau_cl = sign(w_rel)
                 x 1.56 f (mu 1 x cgeo 1.2 x fn_max 1.3), f = sin(2 pi t)
                 while > 0 (free while <= 0); stuck up to 1.1 x 1.56 f
  brake          on 2: 0.5 f sliding (mu 0.5, fn_max 1), stuck up to the
                 same (peak 1), f = sin(2 pi t) while > 0 (free else)
  bearing        on 4: 2 N*m sliding, stuck up to 2.2 N*m

  J_A w_A' = tau_sd
  J_1 w_1' = -tau_sd + tau_eb + 4 tau_r / 3
  J_4 w_4' = -tau_eb - T_bearing
  J_i w_i' = -tau_cl - tau_r / 9
  J_5 w_5' = tau_cl
  J_2 w_2' = -tau_r + sin(2 pi t) - T_brake

with every relative angle zero at t = 0 (springDamper's spring then holds
-1e4 phi_rel0 = -0.1745 N*m), w_1 = w_4 = 2, w_i = w_5 = 24 (through the
planetary with the ring at rest, w_sun = 4 w_1, and the gear), w_2 = 0.

Friction (exact Coulomb, as Modelica's friction elements): a free element
(f <= 0) transmits nothing; a sliding one the kinetic torque against its
slip; a stuck one the torque that keeps its slip zero (the Lagrange
multiplier; the three elements act on disjoint bodies, so each is solved
alone: the clutch's group i+5 accelerates at the sum of its torques over
J_i + J_5). Modes are held between terminal events: a sliding element's
slip reaching zero (then stuck if the multiplier is within the static
capacity, else sliding on the other way), a stuck element's multiplier
reaching its static capacity (then sliding the way it pushes); the clutch
and brake are free from f's zero at 0.5 s (a split of the integration).
At t = 0, f = 0: both start free (Modelica's mode 2) and engage at once;
the tie (0 <= 0) is decided by looking 1e-9 s ahead.

Integration: piecewise scipy.integrate.solve_ivp (DOP853, rtol = atol =
1e-12, max_step 0.1 ms) between the events; a second run with Radau (rtol =
atol = 1e-11) must give the same events (times to 1e-8 s) and every column
within 1e-8. Checked on the grid before writing: the energy balance, KE +
the springs' energy - (work of the torque source) + (friction and damper
losses) + (work taken by elastoBacklash) constant to 1e-9 J; a stuck
element within its static capacity. The CSV holds the DOP853 run; --check
compares to 1e-9.
"""
import math
import os
import sys

try:
    import numpy as np
    import refcsv  # this folder: the CSV's writer and --check
except ImportError as e:
    sys.exit("all_components.py: %s; install numpy and scipy (Debian: python3-numpy "
             "python3-scipy, `make deps`)" % e)

DEG = math.pi / 180.0
J_A, J_1, J_4, J_I, J_5, J_2 = 4.0, 2.0, 2.0, 3.0, 3.0, 4.0
K_SD, D_SD, PHI_REL0 = 1e4, 10.0, 1e-3 * DEG
K_EB, D_EB, B_EB = 1e4, 20.0, 1e-5 * DEG
K_D, D_D = 1e4, 10.0
GEAR, PLANET = 3.0, 3.0
CLUTCH_CAP, CLUTCH_PEAK = 1.0 * 1.2 * 1.3, 1.1
BRAKE_CAP, BRAKE_PEAK = 0.5, 1.0
BEARING_CAP, BEARING_PEAK = 2.0, 1.1
DURATION = 0.9
SPLITS = [0.5, DURATION]
MAX_STEP = 1e-4
RUNS = (("DOP853", 1e-12), ("Radau", 1e-11))
AGREE, CHECK_TOL, TOL_ENERGY, TOL_STUCK = 1e-8, 1e-9, 1e-9, 1e-9
LOOK = 1e-9

ELEMENTS = ("clutch", "brake", "bearingFriction")
FREE, STUCK = None, 0
KINDS = {None: "free", 0: "stuck", 1: "forward", -1: "backward"}

# the state vector
(PHI_A, W_A, W_1, W_4, W_I, W_5, PHI_2, W_2, REL_SD, REL_EB, REL_D, REL_CL,
 E_SRC, E_LOSS, E_EB) = range(15)
N = 15

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
DEFAULT_OUT = os.path.join(ROOT, "tests", "data", "ref", "all_components.csv")


def engagement(t):
    return max(math.sin(2.0 * math.pi * t), 0.0)


def caps(t):
    f = engagement(t)
    return CLUTCH_CAP * f, BRAKE_CAP * f, BEARING_CAP


PEAKS = (CLUTCH_PEAK, BRAKE_PEAK, BEARING_PEAK)


def w_ring(y):
    return (4.0 * y[W_1] - y[W_I] / GEAR) / PLANET


def tau_eb(phi, w):
    """ElastoBacklash's torque (Modelica's flange_b.tau) at phi_rel, w_rel."""
    h = 0.5 * B_EB
    td = D_EB * w
    if phi > h:
        tc = K_EB * (phi - h)
        return 0.0 if tc + td <= 0.0 else tc + min(tc, td)
    if phi < -h:
        tc = K_EB * (phi + h)
        return 0.0 if tc + td >= 0.0 else tc + max(tc, td)
    return 0.0


def torques(t, y):
    """The compliant elements' torques (tau_sd, tau_eb, tau_r)."""
    t_sd = K_SD * (y[REL_SD] - PHI_REL0) + D_SD * (y[W_1] - y[W_A])
    t_eb = tau_eb(y[REL_EB], y[W_4] - y[W_1])
    t_r = K_D * y[REL_D] + D_D * (y[W_2] - w_ring(y))
    return t_sd, t_eb, t_r


def slips(y):
    """Each friction element's slip: clutch w_rel = w_i - w_5, brake w_2,
    bearing w_4."""
    return y[W_I] - y[W_5], y[W_2], y[W_4]


def dynamics(t, y, modes):
    """The accelerations (A, 1, 4, i, 5, 2) and the friction torques (the
    clutch's tau, the torque the brake and the bearing take from their
    bodies)."""
    t_sd, t_eb, t_r = torques(t, y)
    cap = caps(t)
    # the other torques on each body, before friction
    f_a, f_1, f_4 = t_sd, -t_sd + t_eb + 4.0 * t_r / 3.0, -t_eb
    f_i, f_5, f_2 = -t_r / GEAR ** 2, 0.0, -t_r + math.sin(2.0 * math.pi * t)
    fr = [0.0, 0.0, 0.0]
    m = modes[0]
    if m == STUCK:
        a = (f_i + f_5) / (J_I + J_5)
        fr[0] = J_5 * a - f_5  # tau_cl: +tau on 5, -tau on i
        a_i = a_5 = a
    else:
        fr[0] = 0.0 if m is FREE else m * cap[0]
        a_i, a_5 = (f_i - fr[0]) / J_I, (f_5 + fr[0]) / J_5
    for k, (f, J) in ((1, (f_2, J_2)), (2, (f_4, J_4))):
        if modes[k] == STUCK:
            fr[k] = f
        else:
            fr[k] = 0.0 if modes[k] is FREE else modes[k] * cap[k]
    a_2 = 0.0 if modes[1] == STUCK else (f_2 - fr[1]) / J_2
    a_4 = 0.0 if modes[2] == STUCK else (f_4 - fr[2]) / J_4
    return (f_a / J_A, f_1 / J_1, a_4, a_i, a_5, a_2), fr, (t_sd, t_eb, t_r)


def rhs(t, y, modes):
    (a_a, a_1, a_4, a_i, a_5, a_2), fr, (t_sd, t_eb, t_r) = dynamics(t, y, modes)
    s = slips(y)
    w_rel_d = y[W_2] - w_ring(y)
    w_rel_sd = y[W_1] - y[W_A]
    w_rel_eb = y[W_4] - y[W_1]
    dy = np.zeros(N)
    dy[PHI_A], dy[W_A], dy[W_1], dy[W_4] = y[W_A], a_a, a_1, a_4
    dy[W_I], dy[W_5], dy[PHI_2], dy[W_2] = a_i, a_5, y[W_2], a_2
    dy[REL_SD], dy[REL_EB], dy[REL_D], dy[REL_CL] = w_rel_sd, w_rel_eb, w_rel_d, s[0]
    dy[E_SRC] = math.sin(2.0 * math.pi * t) * y[W_2]
    # friction losses (sliding; a stuck element's slip is zero) and the dampers'
    dy[E_LOSS] = sum(fr[k] * s[k] for k in range(3) if modes[k] not in (FREE, STUCK)) \
        + D_SD * w_rel_sd ** 2 + D_D * w_rel_d ** 2
    dy[E_EB] = t_eb * w_rel_eb  # the work elastoBacklash takes from the bodies
    return dy


def energy(y):
    ke = 0.5 * (J_A * y[:, W_A] ** 2 + J_1 * y[:, W_1] ** 2 + J_4 * y[:, W_4] ** 2
                + J_I * y[:, W_I] ** 2 + J_5 * y[:, W_5] ** 2 + J_2 * y[:, W_2] ** 2)
    pe = 0.5 * K_SD * (y[:, REL_SD] - PHI_REL0) ** 2 + 0.5 * K_D * y[:, REL_D] ** 2
    return ke + pe - y[:, E_SRC] + y[:, E_LOSS] + y[:, E_EB]


def decide(t, y, prev, event):
    """The modes from t on; event is the (kind, k) that ended the last piece."""
    cap = caps(t + LOOK)  # f is 0 at t = 0 and 0.5: the capacity just after
    s = slips(y)
    modes = list(prev)
    for k in range(3):
        if cap[k] <= 0.0:
            modes[k] = FREE
        elif event == ("slip", k) or (prev[k] is FREE and s[k] == 0.0):
            modes[k] = STUCK
            if k == 0:  # the pair at its inertia-weighted speed (momentum kept)
                y[W_I] = y[W_5] = (J_I * y[W_I] + J_5 * y[W_5]) / (J_I + J_5)
            else:
                y[(W_2, W_4)[k - 1]] = 0.0
        elif prev[k] is FREE:
            modes[k] = 1 if s[k] > 0 else -1
    for k in range(3):  # a stuck element that cannot hold lets go the way it pushes
        if modes[k] != STUCK:
            continue
        t_look = t + LOOK if t == 0.0 else t
        y_look = y + (t_look - t) * rhs(t, y, modes)
        fr = dynamics(t_look, y_look, modes)[1][k]
        if abs(fr) > PEAKS[k] * caps(t_look)[k]:
            # the slip accelerates the way the multiplier would have to resist
            modes[k] = 1 if fr > 0 else -1
    for k in range(3):
        if modes[k] in (1, -1) and s[k] == 0.0:
            t_look = t + LOOK if t == 0.0 else t  # f = 0 at t = 0: just after
            a = dynamics(t_look, y + (t_look - t) * rhs(t, y, modes), modes)[0]
            ds = (a[3] - a[4], a[5], a[2])[k]
            if not modes[k] * ds > 0.0:
                sys.exit("all_components.py: t=%.17g: %s slides %+d but its slip does not "
                         "follow (%.3g)" % (t, ELEMENTS[k], modes[k], ds))
    return modes


def events_for(modes):
    evs = []
    for k in range(3):
        if modes[k] is FREE:
            continue
        if modes[k] == STUCK:
            def g(t, y, k=k):
                return PEAKS[k] * caps(t)[k] - abs(dynamics(t, y, modes)[1][k])
            g.kind = ("break", k)
        else:
            def g(t, y, k=k):
                return modes[k] * slips(y)[k]
            g.kind = ("slip", k)
        g.terminal, g.direction = True, -1
        evs.append(g)
    return evs


def simulate(method, tol):
    y = np.zeros(N)
    y[PHI_A], y[W_A], y[W_1], y[W_4] = DEG, 2.0, 2.0, 2.0
    y[W_I] = y[W_5] = GEAR * (1.0 + PLANET) * 2.0
    initial = (FREE, FREE, 1)
    modes0 = decide(0.0, y, initial, None)

    def switch(t, t_next, y, modes, event):
        if event is not None and event[0] == "break":
            fr = dynamics(t, y, modes)[1][event[1]]
            new = list(modes)
            new[event[1]] = 1 if fr > 0 else -1
            new = decide(t, y, new, None)
        else:
            new = decide(t, y, modes, event)
        return new, [(t, ELEMENTS[k], KINDS[new[k]]) for k in range(3) if new[k] != modes[k]]

    pieces, events = refcsv.piecewise("all_components.py", y, SPLITS, DURATION, modes0, rhs,
                                      events_for, switch, method, tol, MAX_STEP)
    events = [(0.0, ELEMENTS[k], KINDS[modes0[k]]) for k in range(3)
              if modes0[k] != initial[k]] + events
    return initial, pieces, events


def columns(grid, y):
    """The MSL's signals (Modelica's conventions) from the states."""
    wr = (4.0 * y[:, W_1] - y[:, W_I] / GEAR) / PLANET
    return np.column_stack([
        y[:, REL_CL], y[:, W_I] - y[:, W_5],
        y[:, REL_D], y[:, W_2] - wr,
        y[:, REL_EB], y[:, W_4] - y[:, W_1],
        y[:, PHI_2], y[:, W_2],
        y[:, PHI_A], y[:, W_A],
        y[:, REL_SD], y[:, W_1] - y[:, W_A]])


COLS = ["t", "clutch.phi_rel", "clutch.w_rel", "damper.phi_rel", "damper.w_rel",
        "elastoBacklash.phi_rel", "elastoBacklash.w_rel", "inertia2.phi", "inertia2.w",
        "inertia3.phi", "inertia3.w", "springDamper.phi_rel", "springDamper.w_rel"]


def checks(label, grid, pieces):
    found, y = refcsv.sample(grid, pieces)
    e = energy(y)
    err = np.max(np.abs(e - e[0]))
    worst_stuck = -math.inf
    for t, yi, p in zip(grid, y, found):
        fr = dynamics(t, yi, p[3])[1]
        for k in range(3):
            if p[3][k] == STUCK:
                worst_stuck = max(worst_stuck, abs(fr[k]) - PEAKS[k] * caps(t)[k])
    print("%s: energy balance error %.2g J (work of the source %.6g J, losses %.6g J, taken by "
          "elastoBacklash %.6g J); stuck elements' |T| - capacity at most %.3g N*m"
          % (label, err, y[-1, E_SRC], y[-1, E_LOSS], y[-1, E_EB], worst_stuck))
    if not (err <= TOL_ENERGY and worst_stuck <= TOL_STUCK):
        sys.exit("all_components.py: %s fails a sanity check" % label)
    return columns(grid, y)


def compute():
    return refcsv.two_runs("all_components.py", RUNS, DURATION, simulate, checks, AGREE,
                           "element", COLS)


def compare_msl(path):
    """How far the MSL's reference is from this solution: csv-compare's
    tube (tests/test_msl.py) and the largest deviation at equal times."""
    sys.path.insert(0, os.path.join(ROOT, "tests"))
    import test_msl
    header, cols = test_msl.read_csv(path)
    ref = dict(zip(header, cols))
    _, pieces, _ = simulate(*RUNS[0])
    grid = np.array(ref["time"])
    ours = columns(grid, refcsv.sample(grid, pieces)[1])
    for c, name in enumerate(COLS[1:]):
        u, ut, ueq, dy = test_msl.tube(list(grid), ref[name], list(grid), list(ours[:, c]))
        d = np.abs(np.array(ref[name]) - ours[:, c])
        print("MSL reference vs this: %-22s max |diff| %.3g at t = %.4g s = %.3g tube "
              "heights (tube usage %.3g)" % (name, d.max(), grid[d.argmax()], d.max() / dy, u))


def modes(i):
    return ", ".join("%s %s" % (ELEMENTS[k], KINDS[m]) for k, m in enumerate(i))


def main():
    if "--msl" in sys.argv:
        at = sys.argv.index("--msl")
        path = sys.argv[at + 1]
        del sys.argv[at:at + 2]
        compare_msl(path)
        if len(sys.argv) == 1:
            return
    refcsv.main(__doc__, DEFAULT_OUT, compute,
                "all_components: the drive of inertia5 ... inertia6 of ModelicaTest.Rotational."
                "AllComponents, piecewise solve_ivp (DOP853) from scripts/ref/all_components.py "
                "(rad, rad/s; Modelica's signals)", modes, "element", str, COLS, CHECK_TOL)


if __name__ == "__main__":
    main()
