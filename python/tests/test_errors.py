"""Errors: every bad input is an exception derived from drivegraph.Error
carrying code, file, JSON pointer path, line, column and message; validate()
lists every problem, as `drivegraph validate` does."""
import glob
import os

import math

import pytest

import drivegraph as dg
from conftest import ROOT

INVALID = os.path.join(ROOT, "tests", "data", "invalid")


def corpus():
    """The invalid-graph corpus, less the cases that need the test-only
    block classes of tests/testblocks.c."""
    cases = []
    for f in sorted(glob.glob(os.path.join(INVALID, "*.json"))):
        expected = f[:-5] + ".expected"
        with open(expected, encoding="utf-8") as e:
            lines = e.read().splitlines()
        with open(f, "rb") as g:
            if b'"test_' in g.read():
                continue
        cases.append((os.path.basename(f), lines))
    return cases


CASES = corpus()


def shown(p, name):
    """A problem as the .expected files print it (the file by its name)."""
    return str(dg.Error(p.code_value, name, p.path, p.line, p.column, p.message))


@pytest.mark.parametrize("name,expected", CASES, ids=[c[0] for c in CASES])
def test_validate_lists_every_problem(name, expected):
    problems = dg.validate(os.path.join(INVALID, name))
    assert [shown(p, name) for p in problems] == expected
    with pytest.raises(dg.GraphError) as info:
        dg.Graph.load(os.path.join(INVALID, name))
    e = info.value
    assert isinstance(e, dg.Error)
    assert shown(e, name) == expected[0]
    assert [shown(p, name) for p in e.problems] == expected


def test_corpus_is_large():
    assert len(CASES) > 40


def test_range_error_fields():
    g = {"drivegraph": 1,
         "blocks": {"src": {"type": "torque_source", "inertia": -5},
                    "ld": {"type": "load", "inertia": 1}},
         "connections": [["src.out", "ld.in"]]}
    with pytest.raises(dg.GraphError) as info:
        dg.Graph.from_dict(g, name="rig.json")
    e = info.value
    assert e.code == "ERR_RANGE"
    assert e.file == "rig.json"
    assert e.path == "/blocks/src/inertia"
    assert (e.line, e.column) == (0, 0)
    assert e.message == "must be >= 0 (got -5)"
    assert str(e) == f"rig.json: /blocks/src/inertia: {e.message}"


def test_syntax_error_line_and_column():
    with pytest.raises(dg.GraphError) as info:
        dg.Graph.load('{"drivegraph": 1,\n  "blocks": {,}}', name="broken.json")
    e = info.value
    assert e.code == "ERR_SYNTAX"
    assert (e.line, e.column) == (2, 14)
    assert e.path == ""


def test_unknown_param_did_you_mean():
    problems = dg.validate('{"drivegraph": 1, "blocks": {"src": {"type": "torque_source", '
                           '"inertia": 1, "torqe": 3}, "ld": {"type": "load", "inertia": 1}}, '
                           '"connections": [["src.out", "ld.in"]]}')
    assert [p.path for p in problems] == ["/blocks/src/torqe"]
    assert "did you mean" in problems[0].message
    assert dg.validate("graphs/sedan_rwd_automatic.json") == []
    assert dg.Graph.load("graphs/sedan_rwd_automatic.json").validate() == []


def test_scenario_errors():
    g = dg.Graph.load("graphs/sedan_rwd_automatic.json")
    with pytest.raises(dg.ScenarioError) as info:
        g.simulate(scenario={"duration": 1, "inputs": {"throtle": [[0, 1]]}})
    e = info.value
    assert e.path == "/inputs/throtle"
    assert "did you mean" in e.message and "throttle" in e.message
    with pytest.raises(dg.ScenarioError) as info:
        dg.Scenario('{"duration": -1}', name="s.json")
    assert info.value.path == "/duration" and info.value.file == "s.json"


def test_usage_errors():
    g = dg.Graph.load("graphs/sedan_rwd_automatic.json")
    with pytest.raises(dg.UsageError, match='did you mean "engine.rpm"'):
        g.simulate(duration=1, signals=["engine.rmp"])
    with pytest.raises(dg.UsageError, match="no duration"):
        g.simulate()
    with pytest.raises(dg.UsageError):
        g.simulate(duration=1, inputs={"nosuch": 1})
    with pytest.raises(dg.UsageError, match="integer"):
        g.simulate(duration=1, inputs={"gear": 1.5})
    with pytest.raises(dg.UsageError):
        g.simulate(duration=-1)


def test_failed_step_raises_simulation_error():
    g = dg.Graph.load("graphs/sedan_rwd_automatic.json")
    with pytest.raises(dg.SimulationError) as info:
        g.simulate(duration=1,
                   inputs={"throttle": dg.of_time(lambda t: float("nan") if t > 0.5 else 1.0)})
    assert info.value.code == "ERR_NUMERIC"
    assert "throttle" in info.value.message


def test_step_callable_returning_nan_or_a_fraction():
    g = dg.Graph.load("graphs/sedan_rwd_automatic.json")
    with pytest.raises(ValueError, match=r"input throttle: the callable returned nan at t = 0.3"):
        g.simulate(duration=1, inputs={"throttle": lambda c: math.nan if c.time >= 0.3 else 1.0})
    with pytest.raises(ValueError, match="the channel takes integers"):
        g.simulate(duration=1, inputs={"gear": lambda c: 1.5})
    with pytest.raises(TypeError, match="expected a number"):
        g.simulate(duration=1, inputs={"throttle": lambda c: "full"})


def test_missing_file():
    with pytest.raises(dg.GraphError) as info:
        dg.Graph.load("graphs/no_such_graph.json")
    assert info.value.file == "graphs/no_such_graph.json"


def test_warnings_are_kept_not_problems():
    """A spring whose ends turn together loads with a warning: validate()
    lists no problem, Graph.warnings has it."""
    g = {"drivegraph": 1, "blocks": {
        "eng": {"type": "torque_source", "inertia": 0.2, "torque": 50},
        "sd": {"type": "spring_damper", "stiffness": 1000},
        "g": {"type": "gear", "ratio": 1},
        "ld": {"type": "load", "inertia": 2.0}},
        "connections": [["eng.out", "sd.in", "g.in"], ["sd.out", "g.out", "ld.in"]]}
    assert dg.validate(g) == []
    w = dg.Graph.from_dict(g).warnings
    assert len(w) == 1
    assert w[0].startswith("<dict>: /blocks/sd: warning: spring_damper \"sd\" can never act")


def test_source_faster_than_the_step():
    g = {"drivegraph": 1, "blocks": {
        "s": {"type": "sine_source", "amplitude": 10, "frequency": 600},
        "src": {"type": "torque_source", "inertia": 0.2, "inputs": {"command": "s.value"}},
        "ld": {"type": "load", "inertia": 2.0}},
        "connections": [["src.out", "ld.in"]]}
    graph = dg.Graph.from_dict(g)
    with pytest.raises(dg.UsageError) as info:
        graph.simulate(duration=0.1, dt=0.001)
    assert info.value.path == "/blocks/s"
    assert "use dt <= 0.000833333 s" in info.value.message
    assert len(graph.simulate(duration=0.01, dt=0.0005)["t"]) > 1


def test_escaped_ids_in_errors():
    """An id holding ESC[2J or a right-to-left override comes back escaped."""
    problems = dg.validate('{"drivegraph": 1, "blocks": {"a\\u001b[2J\\u202eb": '
                           '{"type": "load", "inertia": 1}}, "connections": []}')
    assert problems[0].path == "/blocks/a\\u001B[2J\\u202Eb"
    assert "\x1b" not in str(problems[0]) and "\u202e" not in str(problems[0])
