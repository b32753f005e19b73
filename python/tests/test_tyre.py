"""A vehicle host's side of the package: Simulation.set_tyre (a hub's tyre
model as a Python callable), boundary_motion, boundary_ports and
check_coupling, each against a closed form (tests/test_hub.c and
tests/test_boundary.c have the same rigs in C)."""
import math

import numpy as np
import pytest

import drivegraph as dg

HUB_RIG = {"drivegraph": 1, "blocks": {
    "drive": {"type": "torque_source", "torque": 300},
    "w": {"type": "hub", "radius": 0.3, "inertia": 1.2, "inputs": {"vx": "vx", "fz": "fz"}}},
    "connections": [["drive.out", "w.hub"]]}


def hub_sim():
    sim = dg.Graph.from_dict(HUB_RIG).simulation(inputs={"vx": 10.0, "fz": 4000.0},
                                                 signals=["w.fx"])
    return sim


def test_set_tyre_linear_tyre_steady_slip():
    # 300 N·m on a 0.3 m wheel: Fx = 1000 N; a linear tyre of 2e5 N per
    # unit slip at 4 kN settles at κ = 1000 / 2e5, turning at vx (1 + κ)/R
    sim = hub_sim()
    seen = []

    def tyre(s):
        assert isinstance(s, dg.TyreState)
        seen.append(s.t)
        return 2e5 * s.slip * (s.fz / 4000.0)

    sim.set_tyre("w", tyre)
    sim.step(3000)
    assert sim.signal("w.slip") == pytest.approx(0.005, abs=1e-9)
    assert sim.signal("w.fx") == pytest.approx(1000.0, abs=1e-6)
    assert sim.signal("w.omega") == pytest.approx(10.0 * 1.005 / 0.3, abs=1e-6)
    assert len(seen) >= 4 * 3000  # every RK4 stage


def test_set_tyre_restore_and_errors():
    sim = hub_sim()
    sim.set_tyre("w", lambda s: 0.0)
    sim.set_tyre("w", None)  # the hub's magic formula again
    sim.step(10)
    assert sim.signal("w.fx") != 0.0
    with pytest.raises(dg.UsageError, match='block "drive" is not a hub'):
        sim.set_tyre("drive", lambda s: 0.0)
    with pytest.raises(dg.UsageError, match='no block "nope"'):
        sim.set_tyre("nope", lambda s: 0.0)
    with pytest.raises(dg.UsageError, match="callable"):
        sim.set_tyre("w", 3.0)


def test_set_tyre_exception_stops_the_step():
    sim = hub_sim()

    def broken(s):
        raise RuntimeError("tyre model broke")

    sim.set_tyre("w", broken)
    with pytest.raises(RuntimeError, match="tyre model broke"):
        sim.step()


def test_boundary_motion_geared_inertia():
    # speed_source → gear 2 → inertia 3 with a viscous load 8: J = 3/2² and
    # the load's 8·(v/2) at the output is 2v at the source
    g = dg.Graph.from_dict({"drivegraph": 1, "blocks": {
        "src": {"type": "speed_source", "inputs": {"speed": "w"}},
        "g": {"type": "gear", "ratio": 2},
        "ld": {"type": "load", "inertia": 3, "c1": 8}},
        "connections": [["src.out", "g.in"], ["g.out", "ld.in"]]})
    sim = g.simulation(inputs={"w": 12.0})
    sim.step(5)
    J, D = sim.boundary_motion(["src"])
    assert J.shape == (1, 1)
    assert J[0, 0] == pytest.approx(0.75, abs=1e-12)
    assert D[0, 0] == pytest.approx(2.0, abs=1e-7)
    with pytest.raises(dg.UsageError, match="prescribes no speed"):
        sim.boundary_motion("g")


def test_boundary_ports_and_check_coupling():
    # engine 0.5 → gear 3 (0.1 on its input) → inertia 2: the inertia at the
    # engine shaft is 0.6 + 2/9; at the output 9 times it
    g = dg.Graph.from_dict({"drivegraph": 1, "blocks": {
        "eng": {"type": "torque_source", "inertia": 0.5},
        "g": {"type": "gear", "ratio": 3, "inertia": 0.1},
        "j": {"type": "inertia", "inertia": 2}},
        "connections": [["eng.out", "g.in"], ["g.out", "j.in"]]})
    sim = g.simulation(duration=1.0)
    m = 0.6 + 2.0 / 9.0
    y = sim.boundary_ports(["eng.out", "j.in"])
    assert np.allclose(y, np.array([[1, 1 / 3], [1 / 3, 1 / 9]]) / m, rtol=0, atol=1e-12)
    ok, msg = sim.check_coupling("eng.out", 1000.0, 1e-3)
    assert ok and msg == ""
    ok, msg = sim.check_coupling("eng.out", 1000.0, 2 * m / 1000.0 * 1.001)
    assert not ok
    assert "an explicit coupling at eng.out cannot be stable" in msg
    assert f"take dt below 2J/c = {2 * m / 1000.0:g} s" in msg
    with pytest.raises(dg.UsageError, match="no port"):
        sim.boundary_ports("j.nope")
