"""drivegraph.sweep against `drivegraph sweep`: the CLI writes every number
in its shortest exact form, so parsed lines compare bit for bit."""
import json

import pytest

import drivegraph as dg
from conftest import cli_json_lines

GRAPH = "graphs/bench/sedan_baseline.json"
GRID = {"engine.inertia": [0.15, 0.25], "final.ratio": [3.9, 4.3]}
SIGNALS = ["body.speed", "gearbox.gear", "engine.rpm"]


def grid_args(grid):
    args = []
    for k, vals in grid.items():
        args += ["--set", f"{k}={','.join(json.dumps(v) for v in vals)}"]
    return args


def test_grid_matches_cli():
    want = cli_json_lines("sweep", GRAPH, *grid_args(GRID), "--duration", "3",
                          "--signals", ",".join(SIGNALS))
    got = dg.sweep(GRAPH, grid=GRID, duration=3, signals=SIGNALS, jobs=2)
    assert got == want
    assert [v["variant"] for v in got] == [0, 1, 2, 3]
    assert got[1]["overrides"] == {"engine.inertia": 0.15, "final.ratio": 4.3}


def test_variants_with_errors_and_scenario_match_cli(tmp_path):
    lines = [{"gearbox.shift.upshift_rpm": 5000}, {"engine.inertia": -1},
             {"final.ratio": 4.1, "engine.inertia": 0.2}]
    f = tmp_path / "v.jsonl"
    f.write_text("\n".join(json.dumps(v) for v in lines) + "\n")
    grid = {"body.mass": [1400, 1600.5]}
    sc = "graphs/scenarios/launch.json"
    want = [json.loads(x) for x in dg_cli_lines("sweep", GRAPH, "--variants", str(f),
                                                *grid_args(grid), "--scenario", sc,
                                                "--duration", "4")]
    got = dg.sweep(GRAPH, grid=grid, variants=lines, scenario=sc, duration=4)
    assert len(got) == 6
    assert "error" in got[2] and "/blocks/engine/inertia" in got[2]["error"]
    assert got == want


def dg_cli_lines(*args):
    from conftest import cli
    p = cli(*args, check=False)
    assert p.returncode == 1  # a variant failed
    return [x for x in p.stdout.splitlines() if x.strip()]


def test_bad_grid_values_refused_before_running():
    """As `drivegraph sweep` checks each --set value alone first: every bad
    one named with the library's error and its path, nothing run."""
    grid = {"engine.inertia": [0.2, -1], "final.ratio": [0, 4]}
    p = __import__("conftest").cli("sweep", GRAPH, *grid_args(grid), "--duration", "1",
                                   check=False)
    assert p.returncode != 0 and p.stdout == ""
    with pytest.raises(dg.UsageError) as info:
        dg.sweep(GRAPH, grid=grid, duration=1)
    e = info.value
    assert [x.path for x in e.problems] == ["/blocks/engine/inertia", "/blocks/final/ratio"]
    assert "grid engine.inertia=-1: " in e.message and "grid final.ratio=0: " in e.message
    # the CLI stops at the first, with the same text
    first = e.problems[0]
    assert first.message.split(": ", 1)[1] in p.stderr
    assert "must be > 0 (got -1)" in first.message


def test_expand_variants_order():
    v = dg.expand_variants({"a.x": [1, 2], "b.y": [3, 4, 5]}, [{"c.z": 0}, {"c.z": 9}])
    assert len(v) == 12
    assert v[0] == [("c.z", 0), ("a.x", 1), ("b.y", 3)]
    assert v[1] == [("c.z", 0), ("a.x", 1), ("b.y", 4)]
    assert v[3] == [("c.z", 0), ("a.x", 2), ("b.y", 3)]
    assert v[6] == [("c.z", 9), ("a.x", 1), ("b.y", 3)]


def test_local_cluster_equals_threads():
    distributed = pytest.importorskip("distributed")
    grid = {"engine.inertia": [0.12, 0.15, 0.2, 0.25], "final.ratio": [3.7, 3.9, 4.1, 4.3]}
    threaded = dg.sweep(GRAPH, grid=grid, duration=2, signals=SIGNALS, jobs=2)
    want = cli_json_lines("sweep", GRAPH, *grid_args(grid), "--duration", "2",
                          "--signals", ",".join(SIGNALS))
    assert threaded == want
    with distributed.LocalCluster(n_workers=4, processes=True, threads_per_worker=1,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        on_dask = dg.sweep(GRAPH, grid=grid, duration=2, signals=SIGNALS, client=client,
                           chunk_size=3)
        workers = client.run(lambda: __import__("os").getpid())
    assert len(set(workers.values())) == 4
    assert on_dask == threaded


@pytest.mark.parametrize("value,what", [(lambda: 1, "a callable"), (float("nan"), "not a finite"),
                                        (float("inf"), "not a finite"), (object(), "is of type object")])
def test_grid_values_that_are_not_values(value, what):
    """A grid value that cannot be JSON is a UsageError naming the key and
    the value's place, before anything runs (not a bare TypeError)."""
    with pytest.raises(dg.UsageError) as info:
        dg.sweep(GRAPH, grid={"engine.inertia": [0.2, value]}, duration=1)
    assert "grid key engine.inertia, value 1: " in info.value.message
    assert what in info.value.message
    with pytest.raises(dg.UsageError) as info:
        dg.expand_variants(variants=[{"engine.inertia": 0.2}, {"final.ratio": value}])
    assert "variant 1, key final.ratio: " in info.value.message
