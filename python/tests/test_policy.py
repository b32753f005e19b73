"""Shift policies and inputs given as Python callables."""
import numpy as np
import pytest

import drivegraph as dg

SEDAN = "graphs/sedan_rwd_automatic.json"
LAUNCH = "graphs/scenarios/launch.json"
UP_RPM = 4500.0  # the graph's map upshifts near 6000 rpm at full throttle


def early_upshift(log):
    def policy(ctx):
        assert isinstance(ctx, dg.ShiftContext)
        log.append(ctx)
        gear = max(ctx.current_gear, 1)
        if ctx.engine_rpm >= UP_RPM and gear < ctx.num_gears:
            return gear + 1
        return gear
    return policy


def test_policy_shifts_where_the_trace_crosses_the_threshold():
    g = dg.Graph.load(SEDAN)
    log = []
    sim = g.simulation(scenario=LAUNCH, shift_policy=early_upshift(log),
                       signals=["gearbox.rpm", "gearbox.gear", "gearbox.shifting"])
    # one row per step (the step API), to read the crossings off the trace
    t, rpm, gear = [0.0], [sim.signal("gearbox.rpm")], [sim.signal("gearbox.gear")]
    shifting = [sim.signal("gearbox.shifting")]
    while not sim.stopped:
        sim.step()
        t.append(sim.time)
        rpm.append(sim.signal("gearbox.rpm"))
        gear.append(sim.signal("gearbox.gear"))
        shifting.append(sim.signal("gearbox.shifting"))
    rpm, gear, shifting = np.array(rpm), np.array(gear), np.array(shifting)
    shifts = sim.summary()["shifts"]
    assert len(shifts) >= 3
    # the policy is called once per step (no events cut the launch's steps here)
    assert len(log) > 0.9 * sim.steps
    for s in shifts:
        k = round(s["time_s"] / sim.dt)  # the step at whose start the gear was chosen
        assert s["to"] == s["from"] + 1
        # the input speed was at or above the threshold when the gear was chosen ...
        assert rpm[k] >= UP_RPM
        # ... and had just crossed it (still below one step earlier), or the
        # lock-out of the shift before had just ended: with the rear wheels
        # spinning, an upshift through the clutch spins them up instead of
        # slowing the engine, which stays above the threshold (1 -> 2 -> 3)
        assert rpm[k - 1] < UP_RPM or shifting[k - 1] == 1
        # the trace shows the new gear from the end of that step
        assert gear[k] == s["from"] and gear[k + 1] == s["to"]
        assert s["rpm"] < UP_RPM + 150  # the engine is near it too (the converter slips little)


def test_policy_changes_the_launch():
    g = dg.Graph.load(SEDAN)
    base = g.simulate(scenario=LAUNCH)
    early = g.simulate(scenario=LAUNCH, shift_policy=early_upshift([]))
    assert min(s["rpm"] for s in base.shifts) > 5900
    assert max(s["rpm"] for s in early.shifts) < UP_RPM + 150
    assert early.shifts[0]["time_s"] < base.shifts[0]["time_s"]
    assert early.t_0_100 > base.t_0_100  # shifting early is slower


def test_policy_keeping_the_gear():
    r = dg.Graph.load(SEDAN).simulate(scenario=LAUNCH, shift_policy=lambda c: 1, duration=8)
    assert set(r["gearbox.gear"]) == {1.0}
    assert r.shifts == []


def test_exception_in_policy_is_raised_and_stops_the_run():
    class Boom(Exception):
        pass

    calls = []

    def policy(ctx):
        calls.append(ctx.time)
        if ctx.time >= 1.5:
            raise Boom("policy failed")
        return max(ctx.current_gear, 1)

    sim = dg.Graph.load(SEDAN).simulation(scenario=LAUNCH, shift_policy=policy)
    with pytest.raises(Boom):
        sim.run()
    # stopped at the end of the step in which the policy raised
    assert 1.5 <= calls[-1] < sim.time <= calls[-1] + sim.dt + 1e-9
    with pytest.raises(dg.UsageError):
        sim.step()


def test_exception_in_input_callable_is_raised():
    def throttle(t):
        if t > 0.25:
            raise KeyError("sensor")
        return 1.0

    with pytest.raises(KeyError):
        dg.Graph.load(SEDAN).simulate(duration=2, inputs={"throttle": dg.of_time(throttle)})

    calls = []

    def per_step(ctx):
        calls.append(ctx.time)
        if ctx.time >= 0.25:
            raise KeyError("sensor")
        return 1.0

    sim = dg.Graph.load(SEDAN).simulation(duration=2, inputs={"throttle": per_step})
    with pytest.raises(KeyError):
        sim.run()
    # raised before the step at 0.25 s: nothing of it was taken
    assert sim.time == pytest.approx(0.25) and calls[-1] == pytest.approx(0.25)
    with pytest.raises(dg.UsageError):
        sim.step()


def test_policy_returning_a_non_integer():
    with pytest.raises(TypeError):
        dg.Graph.load(SEDAN).simulate(scenario=LAUNCH, shift_policy=lambda c: 1.5)


@pytest.mark.parametrize("gear", [99, -5])
def test_policy_returning_a_gear_the_box_does_not_have(gear):
    """A gear outside -1 .. num_gears is refused, naming the gearbox, the
    gear and the time (the first call, at t = 0)."""
    with pytest.raises(ValueError) as info:
        dg.Graph.load(SEDAN).simulate(scenario=LAUNCH, shift_policy=lambda c: gear)
    text = str(info.value)
    assert f"shift policy of gearbox 'gearbox' returned gear {gear} at t = 0 s" in text
    assert "1..4" in text or "1..5" in text or "1..6" in text


def test_policy_returning_nan():
    with pytest.raises(TypeError) as info:
        dg.Graph.load(SEDAN).simulate(scenario=LAUNCH, shift_policy=lambda c: float("nan"))
    assert "returned nan at t = 0 s" in str(info.value)
