"""A planar vehicle host in Python with drivegraph as its drivetrain: the C
host of examples/host (host.h, host.c) written with the Python package, the
same chassis, tyre and coupling (docs/host.md).

The host owns the chassis (x, y, yaw; body-frame vx, vy, yaw rate r; four
wheels with static and one-step-late longitudinal and lateral load
transfer) and its combined-slip tyre; drivegraph owns the drivetrain and the
wheels' spin, as `hub` blocks (sedan_rwd_hubs.json, awd_lsd_hubs.json).
Each host step:

1. every hub gets its contact-patch velocity in the wheel's heading (yaw
   rate and steering included) and its normal load, as the channels
   "<corner>_vx" and "<corner>_fz" the graphs bind (held over the step);
2. the host's tyre model, installed on every hub with Simulation.set_tyre,
   gives the longitudinal force from the hub's relaxed slip with the
   lateral slip's combined-slip reduction, at every RK4 stage;
3. the host reads each hub's fx and applies it with its lateral forces,
   drag and rolling resistance to the chassis (Heun: the forces at the
   step's start and end).

Run it as a script for a launch of the sedan:

    PYTHONPATH=build/python python3 examples/host/host.py [graph.json]
"""
import math
import os
import sys

import drivegraph as dg

KAPPA_LIMIT = 1.0  # the hub's slip limit (blocks/hub.c)
FL, FR, RL, RR = range(4)
CORNERS = ("fl", "fr", "rl", "rr")


def mf(B, C, D, E, x):
    """Pacejka's magic formula per unit load."""
    bx = B * x
    return D * math.sin(C * math.atan(bx - E * (bx - math.atan(bx))))


class Tyre:
    """The host's tyre (host.h, host_tyre): magic formula in each
    direction, MF 5.2's cosine weighting for combined slip, lateral
    relaxation, the wheel block's tread damping. Defaults as
    host_tyre_default."""

    def __init__(self, **kw):
        self.B, self.C, self.D, self.E = 10.0, 1.9, 1.0, 0.97
        self.By, self.Cy, self.Dy, self.Ey = 10.0, 1.3, 1.0, 0.0
        self.Bxa, self.Cxa, self.Byk, self.Cyk = 12.0, 1.0, 10.0, 1.0
        self.relaxation_length = 0.15
        self.lateral_relaxation = 0.3
        self.damping_ratio = 1.0
        for k, v in kw.items():
            if not hasattr(self, k):
                raise TypeError(f"Tyre: no parameter {k!r}")
            setattr(self, k, float(v))

    def peak(self):
        """max |MF| over 0 <= κ <= 1 (host_tyre_peak)."""
        xmax = self.B * KAPPA_LIMIT
        end = abs(mf(self.B, self.C, self.D, self.E, KAPPA_LIMIT))
        if not self.C > 1.0:
            return end
        target = math.tan(math.pi / (2.0 * self.C))
        if xmax - self.E * (xmax - math.atan(xmax)) <= target:
            return end
        lo, hi = 0.0, xmax
        for _ in range(200):
            mid = 0.5 * (lo + hi)
            if mid - self.E * (mid - math.atan(mid)) < target:
                lo = mid
            else:
                hi = mid
        return abs(mf(self.B, self.C, self.D, self.E, 0.5 * (lo + hi) / self.B))

    def fx(self, peak, kappa, dkappa, fz, alpha, J, R):
        """Longitudinal force (N), host_tyre_fx."""
        if not fz > 0.0:
            return 0.0
        fx = fz * mf(self.B, self.C, self.D, self.E, kappa)
        if self.damping_ratio > 0.0 and J > 0.0:
            sigma = self.relaxation_length
            kx = fz * self.B * self.C * self.D / sigma
            c = 2.0 * self.damping_ratio * math.sqrt(kx * J) / R * sigma
            lim = fz * peak
            fx = min(lim, max(-lim, fx + c * dkappa))
        return fx * math.cos(self.Cxa * math.atan(self.Bxa * alpha))

    def fy(self, alpha, kappa, fz):
        """Lateral force (N, positive to the left), host_tyre_fy."""
        if not fz > 0.0:
            return 0.0
        return (-fz * mf(self.By, self.Cy, self.Dy, self.Ey, alpha)
                * math.cos(self.Cyk * math.atan(self.Byk * kappa)))


def slip_rate(sigma, omega, R, vx, kappa):
    """dκ/dt of the hub's relaxation, held at the slip limit."""
    dk = (omega * R - vx - abs(vx) * kappa) / sigma
    if (kappa >= KAPPA_LIMIT and dk > 0.0) or (kappa <= -KAPPA_LIMIT and dk < 0.0):
        dk = 0.0
    return dk


class Car:
    """The chassis' numbers and, per wheel (FL FR RL RR), the hub, its
    radius and inertia (the graph's) and its tyre."""

    def __init__(self, mass, yaw_inertia, wheelbase, cg_to_front, cg_height, radius, inertia,
                 track=1.55, cda=0.65, air_density=1.225, rolling_resistance=0.012,
                 gravity=9.80665):
        self.mass, self.yaw_inertia = mass, yaw_inertia
        self.wheelbase, self.cg_to_front, self.cg_height = wheelbase, cg_to_front, cg_height
        self.track_front = self.track_rear = track
        self.cda, self.air_density = cda, air_density
        self.rolling_resistance, self.gravity = rolling_resistance, gravity
        self.hub = ["hub_" + c for c in CORNERS]
        self.radius = [radius] * 4
        self.inertia = list(inertia)
        self.tyre = [Tyre() for _ in range(4)]

    @classmethod
    def sedan(cls):
        """graphs/sedan_rwd_automatic.json's body and wheels (host_car_sedan)."""
        return cls(1500.0, 2500.0, 2.8, 1.2, 0.5, 0.32, (1.0, 1.0, 1.3, 1.3))

    @classmethod
    def awd(cls):
        """graphs/awd_lsd.json's (host_car_awd)."""
        return cls(1650.0, 2800.0, 2.65, 1.25, 0.48, 0.33, (1.2,) * 4, cda=0.62)

    def loads(self, ax, ay):
        """Normal loads FL FR RL RR (N) for the CG's accelerations."""
        m, g, L, h = self.mass, self.gravity, self.wheelbase, self.cg_height
        a = self.cg_to_front
        b = L - a
        front = (m * g * b - m * ax * h) / L
        rear = m * g - front
        dfront = m * ay * h * (b / L) / self.track_front
        drear = m * ay * h * (a / L) / self.track_rear
        return [max(0.0, 0.5 * front - dfront), max(0.0, 0.5 * front + dfront),
                max(0.0, 0.5 * rear - drear), max(0.0, 0.5 * rear + drear)]


class Wheel:
    def __init__(self, car, i):
        self.tyre = car.tyre[i]
        self.radius, self.inertia = car.radius[i], car.inertia[i]
        self.peak = self.tyre.peak()
        front = i in (FL, FR)
        track = car.track_front if front else car.track_rear
        self.pos_x = car.cg_to_front if front else car.cg_to_front - car.wheelbase
        self.pos_y = 0.5 * track if i in (FL, RL) else -0.5 * track
        self.delta = self.alpha = self.ta = 0.0
        self.vx = self.vy = 0.0
        self.fz = self.fx = self.fy = 0.0

    def model(self, s):
        """The tyre model the hub calls at every RK4 stage (a TyreState)."""
        dk = slip_rate(self.tyre.relaxation_length, s.omega, s.radius, s.vx, s.slip)
        return self.tyre.fx(self.peak, s.slip, dk, s.fz, self.alpha, self.inertia, s.radius)


class Host:
    """A planar vehicle on a drivegraph drivetrain (hub coupling). The
    driver's throttle, brake, steer (front wheel angle, rad) and gear are
    attributes read at every step; the chassis state is x, y, yaw, vx, vy,
    r."""

    def __init__(self, graph, car, dt=1e-3):
        self.car = car
        self.dt = dt
        self.w = [Wheel(car, i) for i in range(4)]
        fz = car.loads(0.0, 0.0)
        inputs = {"gear": 1, "throttle": 0.0, "brake": 0.0}
        for i, c in enumerate(CORNERS):
            inputs[c + "_vx"] = 0.0
            inputs[c + "_fz"] = fz[i]
        self.sim = dg.Simulation(graph, dt=dt, inputs=inputs, signals=["engine.rpm"])
        for i, wheel in enumerate(self.w):
            self.sim.set_tyre(car.hub[i], wheel.model)
        self.x = self.y = self.yaw = self.vx = self.vy = self.r = 0.0
        self.throttle = self.brake = self.steer = 0.0
        self.gear = 1
        self.ax = self.ay = 0.0
        self.stopped, self.dir = True, 0

    def _wheel_velocity(self, w, vx, vy, r):
        cx, cy = vx - r * w.pos_y, vy + r * w.pos_x
        c, s = math.cos(w.delta), math.sin(w.delta)
        return c * cx + s * cy, -s * cx + c * cy

    def _lateral_rate(self, w, vx, vy, ta):
        return (vy - abs(vx) * ta) / w.tyre.lateral_relaxation

    def _rates(self, st, fx, fy):
        """d/dt (x, y, yaw, vx, vy, r) and the tyres' push along the body x."""
        c = self.car
        x, y, yaw, vx, vy, r = st
        sx = sy = mz = 0.0
        for i, w in enumerate(self.w):
            cd, sd = math.cos(w.delta), math.sin(w.delta)
            bx, by = cd * fx[i] - sd * fy[i], sd * fx[i] + cd * fy[i]
            sx += bx
            sy += by
            mz += w.pos_x * by - w.pos_y * bx
        drag = -0.5 * c.air_density * c.cda * vx * abs(vx)
        roll = -c.rolling_resistance * c.mass * c.gravity * self.dir
        return ([math.cos(yaw) * vx - math.sin(yaw) * vy, math.sin(yaw) * vx + math.cos(yaw) * vy,
                 r, (sx + drag + roll) / c.mass + r * vy, sy / c.mass - r * vx,
                 mz / c.yaw_inertia], sx)

    def step(self):
        sim, dt, c = self.sim, self.dt, self.car
        sim.set_input("throttle", self.throttle)
        sim.set_input("brake", self.brake)
        sim.set_input("gear", self.gear)
        fz = c.loads(self.ax, self.ay)
        state = [self.x, self.y, self.yaw, self.vx, self.vy, self.r]
        fx0, fy0, dta0 = [], [], []
        for i, w in enumerate(self.w):
            w.delta = self.steer if i in (FL, FR) else 0.0
            w.vx, w.vy = self._wheel_velocity(w, self.vx, self.vy, self.r)
            w.fz = fz[i]
            w.alpha = math.atan(w.ta)
            dta0.append(self._lateral_rate(w, w.vx, w.vy, w.ta))
            sim.set_input(CORNERS[i] + "_vx", w.vx)
            sim.set_input(CORNERS[i] + "_fz", fz[i])
        hubs = c.hub
        for i, w in enumerate(self.w):
            fx0.append(sim.signal(hubs[i] + ".fx"))
            fy0.append(w.tyre.fy(w.alpha, sim.signal(hubs[i] + ".slip"), fz[i]))
        d0, push0 = self._rates(state, fx0, fy0)
        modes = sim.topology_changes
        sim.step()
        # a mode change at the step's end (a gear engaging) projects the
        # speeds there: the force after that jump belongs to the next step
        fx1 = [sim.signal(h + ".fx") for h in hubs] if sim.topology_changes == modes else fx0
        fc = c.rolling_resistance * c.mass * c.gravity
        if self.stopped:
            for i, w in enumerate(self.w):
                w.fx, w.fy = fx1[i], 0.0
            self.ax = self.ay = 0.0
            push1 = sum(fx1[i] * math.cos(w.delta) for i, w in enumerate(self.w))
            if abs(push1) <= fc:
                return
            theta = (fc - abs(push0)) / (abs(push1) - abs(push0)) if abs(push0) < fc else 0.0
            self.dir = 1 if push1 > 0.0 else -1
            self.stopped = False
            dv = 0.5 * (1.0 - theta) * dt * (push1 - fc * self.dir) / c.mass
            self.vx += dv
            self.x += dv * (1.0 - theta) * dt / 3.0
            self.ax = dv / dt
            return
        pred = [s + dt * d for s, d in zip(state, d0)]
        fy1, ta1 = [], []
        for i, w in enumerate(self.w):
            pvx, pvy = self._wheel_velocity(w, pred[3], pred[4], pred[5])
            ta_pred = w.ta + dt * dta0[i]
            fy1.append(w.tyre.fy(math.atan(ta_pred), sim.signal(hubs[i] + ".slip"), fz[i]))
            ta1.append(w.ta + 0.5 * dt * (dta0[i] + self._lateral_rate(w, pvx, pvy, ta_pred)))
        d1, _ = self._rates(pred, fx1, fy1)
        d = [0.5 * (a + b) for a, b in zip(d0, d1)]
        self.ax = d[3] - 0.5 * (self.r * self.vy + pred[5] * pred[4])
        self.ay = d[4] + 0.5 * (self.r * self.vx + pred[5] * pred[3])
        self.x, self.y, self.yaw, self.vx, self.vy, self.r = [s + dt * k for s, k in
                                                              zip(state, d)]
        for i, w in enumerate(self.w):
            w.ta, w.fx, w.fy = ta1[i], fx1[i], fy1[i]
        if fc > 0.0 and self.dir != 0 and self.vx * self.dir <= 0.0:
            self.vx = self.vy = self.r = 0.0
            self.stopped = True


def launch(host, limit=20.0):
    """Full throttle from rest: the 0-100 km/h time (s) and the speed trace."""
    host.throttle = 1.0
    v100, t100, trace = 100 / 3.6, None, [0.0]
    for k in range(1, int(round(limit / host.dt)) + 1):
        host.step()
        trace.append(host.vx)
        if t100 is None and host.vx >= v100:
            t100 = (k - 1 + (v100 - trace[-2]) / (host.vx - trace[-2])) * host.dt
            break
    return t100, trace


def main(argv):
    here = os.path.dirname(os.path.abspath(__file__))
    path = argv[1] if len(argv) > 1 else os.path.join(here, "sedan_rwd_hubs.json")
    car = Car.awd() if "awd" in os.path.basename(path) else Car.sedan()
    host = Host(dg.Graph.load(path), car)
    t100, _ = launch(host)
    print(f"{os.path.basename(path)}: 0-100 km/h {t100:.2f} s in the Python host, "
          f"gear {host.sim.signal('gearbox.gear'):.0f} at {host.sim.signal('engine.rpm'):.0f} rpm")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
