"""Simulations from Python against `drivegraph sim`: the same rows and the
same summary. The CLI writes its CSV with %.10g by default, so the comparison is of
that text: Result.format_csv prints the float64 arrays the same way, and
every one of the ~10^5 values per run must print identically (a change in
the 10th significant digit anywhere fails). The summary's numbers are
compared at the 10 digits `sim --json` prints. With `--digits 17` the CLI's
CSV is exact, and the arrays equal it bit for bit (test_trace_bit_for_bit)."""
import json
import math

import numpy as np
import pytest

import drivegraph as dg
from conftest import cli

# (graph, scenario): cars and rigs with scenarios of every kind (automatic,
# manual with scripted shifts, EV with regen, dual clutch, Modelica rigs,
# a transfer case on its own channel, a planetary automatic)
RUNS = [
    ("graphs/sedan_rwd_automatic.json", "graphs/scenarios/launch.json"),
    ("graphs/hatchback_fwd_manual.json", "graphs/scenarios/manual_launch.json"),
    ("graphs/ev_single_speed.json", "graphs/scenarios/ev_launch_brake.json"),
    ("graphs/dct.json", "graphs/scenarios/dct_upshifts.json"),
    ("graphs/coupled_clutches.json", "graphs/scenarios/coupled_clutches.json"),
    ("graphs/pickup_4x4.json", "graphs/scenarios/pickup_launch_high.json"),
    ("graphs/planetary_automatic.json", "graphs/scenarios/planetary_automatic.json"),
    ("graphs/gear_train.json", "graphs/scenarios/gear_train_pulse.json"),
]

# keys of `sim --json` that describe the process, not the run
NOT_COMPARED = {"wall_time_s", "ns_per_step", "first_step_cpu_s", "csv", "csv_rows",
                "output_interval_s", "plot"}


def csv_of(tmp_path, *args):
    out = tmp_path / "out.csv"
    cli("sim", *args, "--csv", str(out))
    return out.read_text()


@pytest.mark.parametrize("graph,scenario", RUNS, ids=[r[0].split("/")[-1] for r in RUNS])
def test_trace_matches_cli_csv(tmp_path, graph, scenario):
    r = dg.Graph.load(graph).simulate(scenario=scenario)
    want = csv_of(tmp_path, graph, "--scenario", scenario)
    assert r.t.dtype == np.float64
    assert len(r.t) == len(want.splitlines()) - 1
    assert r.format_csv() == want


@pytest.mark.parametrize("graph,scenario", RUNS[:4], ids=[r[0].split("/")[-1] for r in RUNS[:4]])
def test_trace_bit_for_bit(tmp_path, graph, scenario):
    """With --digits 17 the CLI's CSV reads back to the exact doubles: the
    numpy arrays must equal them bit for bit (not to a tolerance)."""
    r = dg.Graph.load(graph).simulate(scenario=scenario)
    out = tmp_path / "exact.csv"
    cli("sim", graph, "--scenario", scenario, "--csv", str(out), "--digits", "17")
    rows = out.read_text().splitlines()
    assert rows[0].split(",") == ["t"] + r.columns
    want = np.array([[float(v) for v in line.split(",")] for line in rows[1:]])
    got = np.column_stack([r.t] + [r[c] for c in r.columns])
    assert want.shape == got.shape
    assert np.array_equal(want.view(np.uint64), got.view(np.uint64))
    assert r.format_csv(digits=17) == out.read_text()


def test_signals_dt_and_inputs_match_cli(tmp_path):
    g = "graphs/pickup_4x4.json"
    s = "graphs/scenarios/pickup_launch_high.json"
    sig = ["engine.rpm", "body.speed", "gearbox.gear", "transfer.gear", "range", "throttle"]
    r = dg.Graph.load(g).simulate(scenario=s, dt=0.002, duration=6, signals=sig,
                                  inputs={"range": 2})
    want = csv_of(tmp_path, g, "--scenario", s, "--dt", "0.002", "--duration", "6",
                  "--signals", ",".join(sig), "--input", "range=2")
    assert r.columns == sig
    assert r.format_csv() == want
    assert r["transfer.gear"][-1] == 2.0 and r["range"][0] == 2.0


def same10(a, b):
    """Equal at the 10 significant digits `sim --json` prints."""
    if isinstance(a, float) or isinstance(b, float):
        return a is not None and b is not None and float("%.10g" % a) == float(b)
    return a == b


def compare_summary(py, cli_json):
    for key, want in cli_json.items():
        if key in NOT_COMPARED:
            continue
        got = py[key]
        if isinstance(want, dict):
            assert set(got) == set(want), key
            for k in want:
                if isinstance(want[k], dict):
                    for kk in want[k]:
                        assert same10(got[k][kk], want[k][kk]), (key, k, kk)
                else:
                    assert same10(got[k], want[k]), (key, k, got[k], want[k])
        elif isinstance(want, list):
            assert len(got) == len(want), key
            for a, b in zip(got, want):
                for k in b:
                    assert same10(a[k], b[k]), (key, k)
        else:
            assert same10(got, want), (key, got, want)


@pytest.mark.parametrize("graph,scenario", RUNS[:4], ids=[r[0].split("/")[-1] for r in RUNS[:4]])
def test_summary_matches_sim_json(graph, scenario):
    r = dg.Graph.load(graph).simulate(scenario=scenario)
    want = json.loads(cli("sim", graph, "--scenario", scenario, "--json").stdout)
    compare_summary(r.summary, want)


def test_sedan_launch_figures():
    r = dg.Graph.load("graphs/sedan_rwd_automatic.json").simulate(
        scenario="graphs/scenarios/launch.json")
    # docs/graphs.md, "Example graphs" (scripts/figures.py keeps it): 8.2 s with
    # the scenario launch (throttle opened at 1 s) on the dry-road tyre
    assert 8.1 < r.t_0_100 < 8.25
    assert [(s["from"], s["to"]) for s in r.shifts[:3]] == [(1, 2), (2, 3), (3, 4)]
    e = r.energy
    assert abs(e["balance_error_J"]) < 1e-6 * e["work_in_J"]
    # the trace agrees with the summary: 100 km/h first reached right after t_0_100
    v = r["body.speed"]
    k = int(np.argmax(v >= 100 / 3.6))
    assert r.t[k - 1] < r.t_0_100 <= r.t[k]


def test_step_api_is_the_run():
    g = dg.Graph.load("graphs/hatchback_fwd_manual.json")
    s = "graphs/scenarios/manual_launch.json"
    whole = g.simulate(scenario=s)
    sim = g.simulation(scenario=s)
    assert sim.time == 0.0
    sizes = [1, 7, 500, 3, 2000]
    while not sim.stopped:
        sim.step(sizes[sim.steps % len(sizes)])
    pieces = sim.result()
    assert pieces.format_csv() == whole.format_csv()
    assert sim.signal("body.speed") == whole.summary["final_values"]["body.speed"]
    assert sim.time == whole.summary["final_time_s"]


def test_step_api_closed_loop():
    """A speed controller in Python around the step API: throttle from the
    measured speed each 10 ms, holding 50 km/h."""
    g = dg.Graph.load("graphs/ev_single_speed.json")
    sim = g.simulation(duration=40, signals=["body.speed", "throttle"])
    target = 50 / 3.6
    while not sim.stopped:
        v = sim.signal("body.speed")
        sim.set_input("throttle", min(1.0, max(0.0, 0.5 * (target - v))))
        sim.step(10)
    r = sim.result()
    assert abs(r["body.speed"][-1] - target) < 0.5
    assert r["throttle"].max() == 1.0
    assert sim.time == pytest.approx(40.0)


def test_step_callable_is_called_once_per_step_and_is_the_step_api():
    """A callable input is called once per step at its start with the state
    the step starts from, its value held over the step: the same run, bit
    for bit, as the step API's set_input before each step. A P controller
    on the throttle holding 50 km/h, written both ways."""
    g = dg.Graph.load("graphs/sedan_rwd_automatic.json")
    target = 50 / 3.6
    seen = []

    def cruise(ctx):
        seen.append((ctx.step, ctx.time))
        return min(1.0, max(0.0, 0.5 * (target - ctx.signal("body.speed"))))

    a = g.simulate(duration=20, dt=0.002, inputs={"throttle": cruise})
    assert len(seen) == 10000
    assert all(k == i and t == i * 0.002 for i, (k, t) in enumerate(seen))
    sim = g.simulation(duration=20, dt=0.002, inputs={"throttle": 0.0})  # started alike
    while not sim.stopped:
        sim.set_input("throttle", min(1.0, max(0.0, 0.5 * (target - sim.signal("body.speed")))))
        sim.step()
    b = sim.result()
    assert np.array_equal(a.rows, b.rows)
    assert abs(a["body.speed"][-1] - target) < 0.5


def test_callable_input_equals_constant():
    g = dg.Graph.load("graphs/sedan_rwd_automatic.json")
    a = g.simulate(duration=5, inputs={"throttle": 0.7, "gear": 1})
    b = g.simulate(duration=5, inputs={"throttle": dg.of_time(lambda t: 0.7), "gear": 1})
    c = g.simulate(duration=5, inputs={"throttle": lambda ctx: 0.7, "gear": 1})
    assert a.format_csv() == b.format_csv() == c.format_csv()
    assert np.array_equal(a.rows, b.rows) and np.array_equal(a.rows, c.rows)


def test_graph_from_dict_and_yaml_text():
    with open("graphs/open_diff_axle.json") as f:
        d = json.load(f)
    a = dg.Graph.from_dict(d).simulate(scenario="graphs/scenarios/open_diff_spinup.json")
    b = dg.Graph.load("graphs/open_diff_axle.json").simulate(
        scenario="graphs/scenarios/open_diff_spinup.json")
    assert np.array_equal(a.rows, b.rows)
    assert not math.isnan(a["left.omega"][-1])


# (graph, preset, simulate keywords, CLI options): the library's preset
# drivers, as `drivegraph sim --preset` runs them
PRESETS = [
    ("graphs/sedan_rwd_automatic.json", "launch", {}, []),
    ("graphs/hatchback_fwd_manual.json", "launch", {}, []),
    ("graphs/hatchback_fwd_manual.json", "coast", {"from_speed": 80}, ["--from-speed", "80"]),
    ("graphs/sedan_rwd_automatic.json", "brake", {}, []),
    ("graphs/pickup_4x4.json", "launch", {"inputs": {"range": 1}}, ["--input", "range=1"]),
]


@pytest.mark.parametrize("graph,preset,kw,opts", PRESETS,
                         ids=[f"{p[0].split('/')[-1]}-{p[1]}" for p in PRESETS])
def test_presets_match_cli(tmp_path, graph, preset, kw, opts):
    r = dg.Graph.load(graph).simulate(preset=preset, **kw)
    out = tmp_path / "p.csv"
    want = json.loads(cli("sim", graph, "--preset", preset, *opts, "--csv", str(out),
                          "--json").stdout)
    assert r.format_csv() == out.read_text()
    compare_summary(r.summary, want)
    assert r.summary["preset"] == preset


def test_preset_refusals():
    with pytest.raises(dg.UsageError) as info:
        dg.Graph.load("graphs/pickup_4x4.json").simulate(preset="launch")
    assert 'the graph binds the channel "range"' in info.value.message
    with pytest.raises(dg.UsageError, match="has no vehicle block"):
        dg.Graph.load("graphs/gear_train.json").simulate(preset="launch")
    with pytest.raises(dg.UsageError, match='unknown preset "lanch"'):
        dg.Graph.load("graphs/sedan_rwd_automatic.json").simulate(preset="lanch")
    with pytest.raises(dg.UsageError, match="preset drives that channel"):
        dg.Graph.load("graphs/sedan_rwd_automatic.json").simulate(preset="launch",
                                                                 inputs={"throttle": 0.5})


def test_example_launch_script(tmp_path):
    """examples/python/launch.py draws its PNG (matplotlib, Agg)."""
    import os
    import subprocess
    import sys
    pytest.importorskip("matplotlib")
    out = tmp_path / "launch.png"
    p = subprocess.run([sys.executable, "examples/python/launch.py", "--shift-rpm", "4500",
                        "-o", str(out)], capture_output=True, text=True, env=os.environ)
    assert p.returncode == 0, p.stderr
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # the graph's own shift map: the CLI's figure for the same launch
    want = json.loads(cli("sim", "graphs/sedan_rwd_automatic.json", "--preset", "launch",
                          "--json").stdout)["t_0_100_kmh_s"]
    import re
    got = float(re.search(r"graph's shift map: 0-100 km/h ([0-9.]+) s", p.stdout).group(1))
    assert got == pytest.approx(want, abs=1e-9)


def test_ledger_matches_sim_json():
    """The energy ledger (docs/energy.md) of a series hybrid, as `sim --json`
    prints it: the totals and each ledger block's energies."""
    g, s = "graphs/series_hybrid.json", "graphs/scenarios/series_hybrid_city.json"
    r = dg.Graph.load(g).simulate(scenario=s, duration=30)
    want = json.loads(cli("sim", g, "--scenario", s, "--duration", "30", "--json").stdout)
    compare_summary(r.summary, want)
    ledger = r.energy["ledger"]
    assert ledger["fuel_J"] > 0
    assert abs(ledger["balance_error_J"]) < 1e-9 * ledger["energy_in_J"]
    assert abs(ledger["electric_J"]) < 1e-9 * ledger["energy_in_J"]
    blocks = r.energy["block_ledger_J"]
    assert blocks["engine.fuel"] == ledger["fuel_J"]
    assert set(k.split(".")[0] for k in blocks) == {"engine", "gen", "motor", "aux", "battery"}
    # a graph without a ledger: None, as the CLI's null
    assert dg.Graph.load("graphs/gear_train.json").simulate(
        scenario="graphs/scenarios/gear_train_pulse.json").energy["ledger"] is None


def test_every_keeps_only_the_rows_asked_for():
    """every= keeps one row per `every` seconds, the same rows the default
    run has at those times (the output does not change the run: bit for
    bit), signals= only the signals asked for, and the arrays are views of
    the run's one buffer (no copy in result())."""
    g = dg.Graph.load("graphs/sedan_rwd_automatic.json")
    full = g.simulate(preset="launch", duration=3, signals=["body.speed", "engine.rpm"])
    thin = g.simulate(preset="launch", duration=3, signals=["body.speed"], every=0.5)
    assert thin.columns == ["body.speed"]
    assert len(full.t) == 301 and len(thin.t) == 7
    assert list(thin.t) == list(full.t[::50])
    assert list(thin["body.speed"]) == list(full["body.speed"][::50])
    assert np.shares_memory(thin.t, thin.rows) and np.shares_memory(thin["body.speed"], thin.rows)
    assert thin.rows.base is not None  # a view of the buffer the run wrote
    with pytest.raises(dg.UsageError, match="every: 0.0005 s is not a whole number of steps"):
        g.simulate(preset="launch", duration=1, every=0.0005)
    with pytest.raises(dg.UsageError, match="every: expected a number of seconds > 0"):
        g.simulate(preset="launch", duration=1, every=-1)


def test_result_views_survive_more_steps():
    """A result taken mid-run keeps its rows while the run goes on (the
    buffer grows by a new allocation; the view keeps the old one)."""
    sim = dg.Graph.load("graphs/sedan_rwd_automatic.json").simulation(
        preset="launch", signals=["body.speed"], every=0.01)
    sim.step(100)
    first = sim.result()
    t0, v0 = first.t.copy(), first["body.speed"].copy()
    sim.step(2000)
    assert list(first.t) == list(t0) and list(first["body.speed"]) == list(v0)
    later = sim.result()
    assert list(later.t[: len(t0)]) == list(t0)


def test_keep_leaves_out_only_what_it_says():
    """keep= (dg_sim_set_keep): leaving out the work, the angles or both
    changes no signal, to the bit; what is left out is None in the
    summary and energy(), and an angle signal is refused by name when the
    angles are not kept. Kept angles are the default run's, bit for bit."""
    g = dg.Graph.load("graphs/sedan_rwd_automatic.json")
    sig = ["body.speed", "engine.rpm", "gearbox.gear", "final.out.torque"]
    ang = sig + ["engine.out.angle"]
    full = g.simulate(preset="launch", duration=4, signals=ang)
    assert full.energy["work_in_J"] > 0 and full.energy["block_work_J"]["engine"] > 0
    for keep in ((), ("work",), "angles", ["work", "angles"]):
        r = g.simulate(preset="launch", duration=4, signals=ang if "angles" in keep else sig,
                       keep=keep)
        for name in r.columns:
            assert r[name].tobytes() == full[name].tobytes(), (keep, name)
        assert r.t_0_100 == full.t_0_100 and r.shifts == full.shifts
        e = r.energy
        assert e["kinetic_J"] == full.energy["kinetic_J"]
        if "work" in keep:
            assert e["work_in_J"] == full.energy["work_in_J"]
            assert e["balance_error_J"] == full.energy["balance_error_J"]
        else:
            for k in ("work_in_J", "work_out_J", "balance_error_J", "balance_error_relative",
                      "impact_loss_J", "block_work_J"):
                assert e[k] is None, (keep, k)
    sim = g.simulation(preset="launch", duration=1, signals=sig, keep=["work"])
    assert sim.keep == {"work"}
    with pytest.raises(dg.UsageError, match=r'signal "engine.out.angle": a shaft\'s angle, '
                       r'but this simulation keeps no angles'):
        sim.signal("engine.out.angle")
    with pytest.raises(dg.UsageError, match="keeps no angles"):
        g.simulate(preset="launch", duration=1, signals=ang, keep="work")


def test_keep_refusals():
    """Unknown names and non-collections are refused naming the choices; a
    scenario stopping on an angle the simulation does not keep (it could
    never stop) is refused at /stop/signal."""
    g = dg.Graph.load("graphs/bench/axle_baseline.json")
    with pytest.raises(dg.UsageError, match=r"keep: unknown 'heat'; expected names among "
                       r"work, angles"):
        g.simulation(duration=1, keep=["work", "heat"])
    with pytest.raises(dg.UsageError, match="keep: expected names among work, angles"):
        g.simulation(duration=1, keep=3)
    scn = dg.Scenario({"duration": 2, "inputs": {},
                       "stop": {"signal": "motor.out.angle", "above": 3}})
    with pytest.raises(dg.ScenarioError, match="keeps no angles") as ex:
        g.simulation(scenario=scn, keep=["work"])
    assert ex.value.path == "/stop/signal"
    r = g.simulate(scenario=scn, signals=["motor.out.angle"], keep=["angles"])
    # stopped at the first step past 3 rad (the shaft turns < 0.1 rad a step there)
    assert 3 < r.summary["final_values"]["motor.out.angle"] < 3.1
    assert r.summary["stop_reason"].startswith("stop condition")
