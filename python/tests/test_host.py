"""The Python vehicle host (examples/host/host.py) against the all-in run
of the same car: graphs/sedan_rwd_automatic.json, whose vehicle block
integrates the body inside the drivetrain's step with the wheel blocks'
magic-formula tyres — the law the host's tyre reduces to on a straight
line. The host holds each hub's contact velocity over its 1 ms step."""
import math
import os
import sys

import pytest

import drivegraph as dg
from conftest import ROOT

sys.path.insert(0, os.path.join(ROOT, "examples", "host"))
import host  # noqa: E402

V100 = 100 / 3.6


def all_in_launch(seconds):
    sim = dg.Graph.load("graphs/sedan_rwd_automatic.json").simulation(
        dt=1e-3, inputs={"gear": 1, "throttle": 0.0, "brake": 0.0}, signals=["body.speed"])
    sim.set_input("throttle", 1.0)
    trace, t100 = [0.0], None
    for k in range(1, int(round(seconds / 1e-3)) + 1):
        sim.step()
        trace.append(sim.signal("body.speed"))
        if t100 is None and trace[-1] >= V100:
            t100 = (k - 1 + (V100 - trace[-2]) / (trace[-1] - trace[-2])) * 1e-3
    return t100, trace


def test_python_host_launch_matches_all_in():
    t_all, v_all = all_in_launch(7.5)
    h = host.Host(dg.Graph.load("examples/host/sedan_rwd_hubs.json"), host.Car.sedan())
    t_host, v_host = host.launch(h, limit=7.5)
    assert t_all is not None and t_host is not None
    assert abs(t_host / t_all - 1.0) < 0.005
    worst = max(abs(a - b) / max(a, 1.0) for a, b in zip(v_all, v_host))
    assert worst < 1e-3
    print(f"python host: 0-100 km/h {t_host:.4f} s, all-in {t_all:.4f} s; trace {worst:.1e}")


def test_python_host_tyre_matches_the_magic_formula():
    # on a straight line the host's longitudinal law is the wheel block's
    # magic formula: B 10, C 1.9, D 1, E 0.97 at κ = 0.05, by hand
    t = host.Tyre(damping_ratio=0.0)
    x = 10.0 * 0.05
    want = 4000.0 * math.sin(1.9 * math.atan(x - 0.97 * (x - math.atan(x))))
    assert t.fx(t.peak(), 0.05, 0.0, 4000.0, 0.0, 1.3, 0.32) == pytest.approx(want, abs=1e-9)
    assert t.peak() == pytest.approx(1.0, abs=1e-12)
