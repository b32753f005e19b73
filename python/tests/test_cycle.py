"""Graph.cycle: a drive cycle from Python (lib/run/cycle.c, docs/energy.md),
the same numbers as `drivegraph cycle --json` (which prints 10 significant
digits: compared to 1e-9 of each figure), built-in cycles, backward mode
and the errors."""
import math

import pytest

import drivegraph as dg
from conftest import cli, path

CYCLE = "cycSecs,cycMps,cycGrade\n0,0,0\n5,0,0\n15,8,0.02\n25,8,0.02\n35,0,0\n40,0,0\n"


def close(a, b, rel=1e-9):
    return math.isclose(a, b, rel_tol=rel, abs_tol=1e-9)


@pytest.mark.parametrize("backward", [False, True])
def test_same_as_cli(tmp_path, backward):
    f = tmp_path / "short.csv"
    f.write_text(CYCLE)
    g = dg.Graph.load(path("graphs/ev_battery.json"))
    r = g.cycle(str(f), backward=backward, dt=0.01)
    args = ["cycle", "graphs/ev_battery.json", "--cycle", str(f), "--dt", "0.01", "--json"]
    c = __import__("json").loads(cli(*(args + (["--backward"] if backward else []))).stdout)
    assert r["mode"] == c["mode"]
    assert r["steps"] == c["steps"] == 4000
    assert close(r["distance_m"], c["distance_m"])
    assert r["trace"]["violations"] == c["trace"]["violations"] == 0
    assert r["fuel"] is None and c["fuel"] is None
    for k in ["battery_J", "Wh_per_km", "soc_end"]:
        assert close(r["electricity"][k], c["electricity"][k])
    for k in ["regen_J", "friction_brake_J", "drag_J", "rolling_J", "grade_J", "road_J"]:
        assert close(r["energy"][k], c["energy"][k]), k
    if backward:
        assert close(r["backward"]["enforcement_in_J"], c["backward"]["enforcement_in_J"])
    else:
        assert r["backward"] is None


def test_builtin_and_errors():
    g = dg.Graph.load(path("graphs/ev_battery.json"))
    r = g.cycle("hwfet", backward=True, dt=0.5)
    assert r["cycle"] == "hwfet" and r["steps"] == 1530
    r = g.cycle("hwfet", backward=True, dt=1.0, iterate=True)
    assert r["steps"] == 765 and abs(r["distance_m"] - r["trace_distance_m"]) < 1e-6
    assert abs(r["distance_m"] - r["trace_distance_m"]) < 1e-6
    with pytest.raises(dg.UsageError, match="udds, hwfet, us06, wltc3b"):
        g.cycle("ftp72")
    with pytest.raises(dg.Error, match="no driver block"):
        dg.Graph.load(path("graphs/sedan_rwd_automatic.json")).cycle("udds")
