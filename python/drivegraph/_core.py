"""Graphs, simulations and their results over libdrivegraph (the CFFI module
drivegraph._drivegraph). Every number comes from the C library: Python
chooses what to run, the library steps it (pydg_advance, one C call per
run or per sim.step(n), made without the GIL)."""
import json
import math
import os
import sys
import tempfile

import numpy as np

from ._drivegraph import ffi, lib

__all__ = ["Error", "GraphError", "ScenarioError", "SimulationError", "UsageError",
           "CallbackError", "Graph", "Scenario", "Simulation", "Result", "ShiftContext",
           "TyreState", "validate"]

RPM_PER_RAD_S = 30.0 / math.pi
# Mode-change impacts above this share of the work in are a visible part of
# it: the summary's "impact_warning" (tools/summary.c, IMPACT_WARN_SHARE).
IMPACT_WARN_SHARE = 1e-3
# what a Simulation's steps may keep besides the state (dg_sim_set_keep)
KEEP_NAMES = ("work", "angles")


# --------------------------------------------------------------------------
# Errors


class Error(Exception):
    """A drivegraph error: `code` ("ERR_RANGE"), `code_value` (the dg_code),
    `file`, `path` (a JSON pointer, "" for the whole document), `line` and
    `column` (1-based for syntax errors, else 0) and `message` (the text).
    str(error) is dg_error_format's "file: /path: text". `problems` lists
    every problem found when more than the first is known (validation)."""

    def __init__(self, code=0, file="", path="", line=0, column=0, message="", problems=None):
        self.code_value = int(code)
        self.code = ffi.string(lib.dg_code_name(self.code_value)).decode()
        self.file = file
        self.path = path
        self.line = int(line)
        self.column = int(column)
        self.message = message
        self.problems = list(problems) if problems else []
        super().__init__(self._format())

    def _format(self):
        text, f = self.message, self.file
        if self.line > 0:
            where = f"{f}:" if f else ""
            if self.column > 0:
                return f"{where}{self.line}:{self.column}: {text}"
            return f"{where}{self.line}: {text}"
        parts = [p for p in (f, self.path) if p]
        return ": ".join(parts + [text])

    @classmethod
    def from_c(cls, err, fallback_file="", problems=None):
        """From a dg_error (cdata); `fallback_file` names the file when the
        library left it empty."""
        file = ffi.string(err.file).decode(errors="replace") or fallback_file
        text = ffi.string(err.text).decode(errors="replace")
        if not text:
            text = ffi.string(lib.dg_code_name(err.code)).decode()
        return cls(err.code, file, ffi.string(err.path).decode(errors="replace"), err.line,
                   err.column, text, problems)

    def __reduce__(self):  # picklable: results cross process boundaries (Dask)
        return (self.__class__, (self.code_value, self.file, self.path, self.line, self.column,
                                 self.message, self.problems))


class GraphError(Error):
    """A graph that does not load (syntax, schema, range, topology, ...)."""


class ScenarioError(Error):
    """A scenario that does not load or does not fit the graph."""


class SimulationError(Error):
    """A step that failed (a diverged state, a non-finite input ...)."""


class UsageError(Error):
    """A bad argument: an unknown signal, preset or option."""


class CallbackError(Error):
    """Never raised itself: an exception inside a Python callback stops the
    simulation and is re-raised as it was."""


def _usage(message, path=""):
    return UsageError(lib.DG_ERR_USAGE, "", path, 0, 0, message)


def _collect():
    """A dg_diag_fn collecting Error objects: (handle, list)."""
    problems = []
    return ffi.new_handle(problems), problems


@ffi.def_extern()
def pydg_diag_cb(err, user):
    ffi.from_handle(user).append(Error.from_c(err))


def _cycle_path(cycle):
    """The file of a built-in cycle ($DRIVEGRAPH_CYCLE_DIR, the build tree's
    data/cycles, DATADIR/drivegraph/cycles of this Python's prefix), or the
    path given."""
    i = lib.dg_cycle_builtin_find(str(cycle).encode())
    if i < 0:
        if _is_path(cycle) and (os.path.exists(cycle) or str(cycle).endswith(".csv")
                                or os.sep in str(cycle)):
            return os.fspath(cycle)
        names = [ffi.string(lib.dg_cycle_builtin_name(k)).decode()
                 for k in range(lib.dg_cycle_builtin_count())]
        raise UsageError(lib.DG_ERR_USAGE, message="unknown cycle %r (the cycles: %s, or a "
                         "CSV file)" % (str(cycle), ", ".join(names)))
    file = ffi.string(lib.dg_cycle_builtin_file(i)).decode()
    here = os.path.dirname(os.path.abspath(__file__))
    dirs = [os.environ.get("DRIVEGRAPH_CYCLE_DIR") or "",
            os.path.join(here, "..", "..", "data", "cycles"),
            os.path.join(sys.prefix, "share", "drivegraph", "cycles")]
    for d in dirs:
        if d and os.path.isfile(os.path.join(d, file)):
            return os.path.join(d, file)
    raise Error(lib.DG_ERR_IO, message="the built-in cycle %s is not installed (looked in %s; "
                "DRIVEGRAPH_CYCLE_DIR names its directory)" % (cycle, ", ".join(d for d in dirs if d)))


def _num(v):
    return v if math.isfinite(v) else None


def _cycle_report(r, label):
    """The dict of a dg_cycle_report, keyed as `drivegraph cycle --json`."""
    t = r.trace
    out = {
        "cycle": label, "mode": "backward" if r.backward else "forward", "dt_s": r.dt,
        "steps": r.steps, "steps_tried": r.steps_tried, "time_s": r.time,
        "distance_m": r.distance,
        "trace_distance_m": r.trace_distance,
        "trace": {"speed_tolerance_kmh": 3.6 * t.speed_tol, "time_tolerance_s": t.time_tol,
                  "samples": t.samples, "violations": t.violations,
                  "violation_time_s": t.violation_time, "worst_time_s": _num(t.worst_time),
                  "worst_excess_kmh": 3.6 * t.worst_excess},
        "fuel": None, "electricity": None, "charge_balance": None, "backward": None,
    }
    if r.engines:
        out["fuel"] = {"fuel_g": 1e3 * r.fuel_kg, "fuel_L": r.fuel_L,
                       "L_per_100km": _num(r.fuel_L_per_100km), "mpg": _num(r.mpg),
                       "fuel_J": r.fuel_J, "engine_work_J": r.engine_work_J}
    if r.batteries:
        out["electricity"] = {"battery_J": r.battery_J, "terminal_J": r.battery_terminal_J,
                              "Wh_per_km": _num(r.electricity_Wh_per_km),
                              "soc_start": r.soc_start, "soc_end": r.soc_end,
                              "soc_min": r.soc_min, "soc_max": r.soc_max,
                              "soc_swing": r.soc_max - r.soc_min}
    if r.engines and r.batteries:
        out["charge_balance"] = {"battery_share": _num(r.battery_share),
                                 "balanced": bool(r.battery_share <= 0.01),
                                 "fuel_equivalent_g": _num(1e3 * r.fuel_equivalent_kg),
                                 "corrected_L_per_100km": _num(r.fuel_corrected_L_per_100km)}
    l = r.ledger
    out["energy"] = {
        "fuel_J": r.fuel_J, "battery_J": r.battery_J, "regen_J": r.regen_J,
        "friction_brake_J": r.friction_brake_J, "mesh_loss_J": -l.efficiency_loss,
        "heat_J": l.heat, "road_J": -r.road_J, "drag_J": _num(r.drag_J),
        "rolling_J": _num(r.rolling_J), "grade_J": _num(r.grade_J), "kinetic_J": _num(r.kinetic_J),
        "accel_J": r.accel_J, "energy_in_J": l.energy_in, "balance_error_J": l.balance_error,
    }
    if r.backward:
        out["backward"] = {"enforcement_in_J": r.enforcement_in_J,
                           "enforcement_out_J": r.enforcement_out_J,
                           "enforcement_peak_N": r.enforcement_peak_N}
    return out


def _is_path(source):
    if isinstance(source, os.PathLike):
        return True
    s = source.lstrip()
    return not (s.startswith("{") or "\n" in s)


def _read_text(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def _yaml_to_json(path):
    err = ffi.new("dg_error *")
    text = lib.dg_import_yaml_to_json(os.fsencode(path), ffi.NULL, ffi.NULL, err)
    if text == ffi.NULL:
        raise GraphError.from_c(err, str(path))
    try:
        return ffi.string(text).decode()
    finally:
        lib.free(text)


def validate(source, name=None):
    """Every problem of a graph (a path to graph JSON or a YAML config, or
    graph JSON text, or a dict): a list of Error, each with its file, JSON
    pointer path, line and column; [] for a valid graph."""
    handle, problems = _collect()
    if isinstance(source, dict):
        source = json.dumps(source)
    if _is_path(source):
        lib.dg_graph_validate_file(ffi.NULL, os.fsencode(source), lib.pydg_diag_cb, handle,
                                   ffi.NULL)
    else:
        lib.dg_graph_validate_string(ffi.NULL, source.encode(),
                                     (name or "<string>").encode(), lib.pydg_diag_cb, handle,
                                     ffi.NULL)
    # warnings (code DG_OK, "warning: ...") are not problems: Graph.warnings
    return [GraphError(p.code_value, p.file, p.path, p.line, p.column, p.message)
            for p in problems if p.code_value != 0]


# --------------------------------------------------------------------------
# Graphs and scenarios


class Graph:
    """A loaded, checked graph (read-only: one Graph may back simulations in
    several threads at once). Build it with Graph.load or Graph.from_dict."""

    def __init__(self, text, name, path=None):
        """Use Graph.load or Graph.from_dict."""
        err = ffi.new("dg_error *")
        if path is not None:
            # the library's own file loader (JSON, or a YAML config by its
            # extension): errors and validation exactly as the CLI's
            ptr = lib.dg_graph_load_file(ffi.NULL, os.fsencode(path), err)
            if ptr == ffi.NULL:
                raise GraphError.from_c(err, name, problems=validate(path))
            text = _yaml_to_json(path) if path.endswith((".yaml", ".yml")) else _read_text(path)
        else:
            ptr = lib.dg_graph_load_string(ffi.NULL, text.encode(), name.encode(), err)
            if ptr == ffi.NULL:
                raise GraphError.from_c(err, name, problems=validate(text, name))
        self._ptr = ffi.gc(ptr, lib.dg_graph_free)
        self.text = text  # the graph JSON (what a YAML config converts to)
        self.file = name  # named in errors, as the CLI names it

    @classmethod
    def load(cls, source, name=None):
        """From a file (graph JSON, or a YAML vehicle config: .yaml, .yml) or
        from graph JSON text; raises GraphError with every problem in
        .problems."""
        if _is_path(source):
            path = os.fspath(source)
            return cls(None, name or path, path=path)
        return cls(source, name or "<string>")

    @classmethod
    def from_dict(cls, data, name=None):
        """From a dict shaped as a graph file ({"drivegraph": 1, "blocks":
        ..., "connections": ...}); floats keep every bit (repr)."""
        return cls(json.dumps(data), name or "<dict>")

    def validate(self):
        """Every problem of this graph's text: [] (it loaded)."""
        return validate(self.text, self.file)

    @property
    def name(self):
        return ffi.string(lib.dg_graph_name(self._ptr)).decode()

    @property
    def warnings(self):
        """What the graph loads with but probably does not mean (an element
        that can never act, a start that is locked, a driver with no
        vehicle): a list of "file: /path: warning: text" strings, as
        `drivegraph validate` prints them."""
        out = []
        for i in range(lib.dg_graph_warning_count(self._ptr)):
            e = Error.from_c(lib.dg_graph_warning(self._ptr, i), self.file)
            out.append(str(e))
        return out

    @property
    def blocks(self):
        """{block id: type} in file order."""
        n = lib.dg_graph_block_count(self._ptr)
        return {ffi.string(lib.dg_graph_block_id(self._ptr, i)).decode():
                ffi.string(lib.dg_graph_block_type(self._ptr, i)).decode() for i in range(n)}

    def cycle(self, cycle, backward=False, dt=None, iterate=False):
        """Drives the graph over a drive cycle, as `drivegraph cycle` does
        (docs/energy.md, "Drive cycles"): `cycle` is a built-in name ("udds",
        "hwfet", "us06", "wltc3b") or a cycle CSV file; forward with the
        graph's driver block, or `backward` with the body on the trace
        (`iterate`: each step repeated to zero the prescription's work). The
        whole run is one C call made without the GIL. Returns a dict with the
        keys of `drivegraph cycle --json` that the run fills: distance_m,
        trace, fuel, electricity, energy, backward (None where they do not
        apply). Raises UsageError for an unknown cycle name, Error for a bad
        cycle file or a graph without a driver block, SimulationError for a
        failed step."""
        path = _cycle_path(cycle)
        err = ffi.new("dg_error *")
        c = lib.dg_cycle_load_file(os.fsencode(path), err)
        if c == ffi.NULL:
            raise Error.from_c(err, path)
        c = ffi.gc(c, lib.dg_cycle_free)
        opt = ffi.new("dg_cycle_options *")
        lib.dg_cycle_options_init(opt)
        text = ffi.new("char[]", self.text.encode())
        name = ffi.new("char[]", self.file.encode())
        opt.graph_json = text
        opt.graph_name = name
        opt.dt = float(dt) if dt is not None else math.nan
        opt.backward = bool(backward)
        opt.iterate = bool(iterate) and bool(backward)
        run = lib.dg_cycle_run_new(opt, c, err)
        if run == ffi.NULL:
            raise Error.from_c(err, self.file)
        run = ffi.gc(run, lib.dg_cycle_run_free)
        if lib.dg_cycle_run_all(run) != lib.DG_OK:
            raise SimulationError.from_c(lib.dg_sim_last_error(lib.dg_cycle_run_sim(run)),
                                         self.file)
        r = ffi.new("dg_cycle_report *")
        lib.dg_cycle_run_report(run, r)
        return _cycle_report(r, cycle if lib.dg_cycle_builtin_find(str(cycle).encode()) >= 0
                             else path)

    def simulation(self, **kwargs):
        """A Simulation for the step API (arguments as simulate)."""
        return Simulation(self, **kwargs)

    def simulate(self, scenario=None, preset=None, dt=None, duration=None, signals=None,
                 inputs=None, shift_policy=None, gearbox=None, from_speed=None, every=None,
                 keep=None):
        """Runs to the end (the duration, the scenario's stop condition or the
        preset's goal) in one C call without the GIL, like `drivegraph sim`:
        returns a Result with `t` and each signal as numpy arrays (one row
        per output interval) and the summary figures. Only the rows and
        signals asked for are kept: `signals` (names; default every signal
        and channel) and `every` (s between rows, a multiple of dt; default
        the scenario's output interval, else 0.01 s); the arrays are views
        of the one buffer the run wrote, not copies. `keep` says what the
        steps keep besides the state (as Simulation's)."""
        sim = Simulation(self, scenario=scenario, preset=preset, dt=dt, duration=duration,
                         signals=signals, inputs=inputs, shift_policy=shift_policy,
                         gearbox=gearbox, from_speed=from_speed, every=every, keep=keep)
        sim.run()
        return sim.result()

    def __repr__(self):
        return f"<drivegraph.Graph {self.file!r}>"


class Scenario:
    """A scenario file (inputs over time, initial values, stop condition)."""

    def __init__(self, source, name=None):
        err = ffi.new("dg_error *")
        if isinstance(source, dict):
            source = json.dumps(source)
            name = name or "<dict>"
        if _is_path(source):
            path = os.fspath(source)
            ptr = lib.dg_scenario_load_file(os.fsencode(path), err)
            self.file = name or path
            if ptr == ffi.NULL:
                handle, problems = _collect()
                lib.dg_scenario_validate_file(os.fsencode(path), lib.pydg_diag_cb, handle)
                raise ScenarioError.from_c(err, path, problems=problems)
            self.text = _read_text(path)
        else:
            self.file = name or "<string>"
            ptr = lib.dg_scenario_load_string(source.encode(), self.file.encode(), err)
            if ptr == ffi.NULL:
                handle, problems = _collect()
                lib.dg_scenario_validate_string(source.encode(), self.file.encode(),
                                                lib.pydg_diag_cb, handle)
                raise ScenarioError.from_c(err, self.file, problems=problems)
            self.text = source
        self._ptr = ffi.gc(ptr, lib.dg_scenario_free)

    @property
    def duration(self):
        return lib.dg_scenario_duration(self._ptr)

    @property
    def dt(self):
        return lib.dg_scenario_dt(self._ptr)

    @property
    def output_interval(self):
        return lib.dg_scenario_output_interval(self._ptr)


def _scenario(s):
    if s is None or isinstance(s, Scenario):
        return s
    return Scenario(s)


# --------------------------------------------------------------------------
# Simulations


class ShiftContext:
    """What a shift policy sees (dg_shift_context), once per step segment."""
    __slots__ = ("time", "engine_rpm", "output_rpm", "current_gear", "num_gears",
                 "vehicle_speed", "throttle", "brake")

    def __init__(self, c):
        for k in self.__slots__:
            setattr(self, k, getattr(c, k))

    def __repr__(self):
        inside = ", ".join(f"{k}={getattr(self, k)!r}" for k in self.__slots__)
        return f"ShiftContext({inside})"


class of_time:
    """Wraps f(t) -> value to give a channel as a function of time alone,
    evaluated at every RK4 substep's time (dg_sim_set_input_fn): a schedule
    in closed form, which keeps RK4 fourth order through a ramp. A plain
    callable is called once per step with a StepContext instead."""
    __slots__ = ("fn",)

    def __init__(self, fn):
        if not callable(fn):
            raise TypeError(f"of_time: expected a callable f(t), got {fn!r}")
        self.fn = fn


class StepContext:
    """What an input given as a callable sees, once per step at its start
    (the value it returns is held over the step): the time, the step size
    and number, and every signal and channel at the state the step starts
    from, through signal(name)."""
    __slots__ = ("time", "dt", "step", "_sim")

    def __init__(self, sim, t):
        self._sim = sim
        self.time = t
        self.dt = sim.dt
        self.step = sim.steps

    def signal(self, name):
        """A signal ("body.speed") or a channel ("throttle") now."""
        return self._sim.signal(name)

    def __repr__(self):
        return f"StepContext(time={self.time!r}, dt={self.dt!r}, step={self.step!r})"


class _Preset:
    """A preset driver of the library (dg_preset: launch, coast, brake), as
    `drivegraph sim --preset` drives: `inputs` are the channels the caller
    gives itself (the CLI's --input)."""

    def __init__(self, graph, name, from_speed, inputs):
        given = [ffi.new("char[]", k.encode()) for k in (inputs or {})]
        given_c = ffi.new("const char *[]", given or [ffi.NULL])
        handle, problems = _collect()
        err = ffi.new("dg_error *")
        kmh = math.nan if from_speed is None else float(from_speed)
        ptr = lib.dg_preset_new(ffi.NULL, graph._ptr, graph.text.encode(), str(name).encode(),
                                kmh, len(given), given_c, lib.pydg_diag_cb, handle, err)
        if ptr == ffi.NULL:
            raise UsageError.from_c(err, graph.file, problems=problems)
        self._ptr = ffi.gc(ptr, lib.dg_preset_free)
        self.name = ffi.string(lib.dg_preset_name(ptr)).decode()
        self.limit = lib.dg_preset_time_limit(ptr)
        # coast and brake: the preset's copy of the graph, starting in gear
        # (owned by the preset, which this Graph keeps alive)
        g = Graph.__new__(Graph)
        g._ptr = lib.dg_preset_graph(ptr)
        g._owner = self
        g.text, g.file = graph.text, graph.file
        self.graph = g

    def start(self, sim):
        err = ffi.new("dg_error *")
        if lib.dg_preset_start(self._ptr, sim, err) != 0:
            raise UsageError.from_c(err, self.graph.file)

    def apply(self, sim, t):
        lib.dg_preset_apply(self._ptr, sim, t)


class TyreState:
    """What a hub's tyre model sees at every RK4 stage (dg_tyre_state):
    the relaxed slip state `slip` (within ±1), the normal load `fz` (N),
    the contact velocity `vx` (m/s), the wheel speed `omega` (rad/s), the
    rolling `radius` (m) and the stage's time `t` (s)."""
    __slots__ = ("slip", "fz", "vx", "omega", "radius", "t")

    def __init__(self, c):
        self.slip = c.slip
        self.fz = c.fz
        self.vx = c.vx
        self.omega = c.omega
        self.radius = c.radius
        self.t = c.t

    def __repr__(self):
        inside = ", ".join(f"{k}={getattr(self, k)!r}" for k in self.__slots__)
        return f"TyreState({inside})"


class _Callbacks:
    """The Python side of one simulation's callbacks: the first exception
    raised inside one is kept and the run is stopped (run.abort)."""

    def __init__(self):
        self.run = None
        self.exc = None
        self.inputs = {}  # input index -> f(t), at every substep (of_time)
        self.step_inputs = {}  # input index -> (name, f(StepContext)), once per step
        self.sim = None
        self.policy = None
        self.tyres = {}  # hub id -> f(TyreState) -> Fx
        self.policy_gearbox = None

    def fail(self, exc):
        if self.exc is None:
            self.exc = exc
        if self.run is not None:
            self.run.abort = 1


@ffi.def_extern()
def pydg_input_cb(t, user):
    cb, index = ffi.from_handle(user)
    if cb.exc is not None:
        return math.nan
    try:
        return float(cb.inputs[index](t))
    except BaseException as e:  # noqa: BLE001 - re-raised in the caller
        cb.fail(e)
        return math.nan


@ffi.def_extern()
def pydg_step_cb(user, t):
    cb = ffi.from_handle(user)
    if cb.exc is not None:
        return 1
    try:
        sim = cb.sim
        ctx = StepContext(sim, t)
        for i, (name, f) in list(cb.step_inputs.items()):
            v = f(ctx)
            if isinstance(v, bool) or not isinstance(v, (int, float, np.floating, np.integer)):
                raise TypeError(f"input {name}: the callable returned {v!r}; expected a number")
            v = float(v)
            if not math.isfinite(v):
                raise ValueError(f"input {name}: the callable returned {v!r} at t = {t:g} s; "
                                 "expected a finite number")
            if lib.dg_sim_input_is_integer(sim._sim, i) and v != math.floor(v):
                raise ValueError(f"input {name}: the callable returned {v:g} at t = {t:g} s; "
                                 "the channel takes integers (a gear)")
            lib.dg_sim_set_input(sim._sim, i, v)
        return 0
    except BaseException as e:  # noqa: BLE001 - re-raised in the caller
        cb.fail(e)
        return 1


@ffi.def_extern()
def pydg_shift_cb(ctx, user):
    cb = ffi.from_handle(user)
    if cb.exc is not None:
        return ctx.current_gear
    try:
        gear = cb.policy(ShiftContext(ctx))
        if isinstance(gear, bool) or not isinstance(gear, (int, float, np.integer, np.floating)) \
                or not math.isfinite(gear) or int(gear) != gear:
            raise TypeError(f"shift policy of gearbox {cb.policy_gearbox!r} returned {gear!r} "
                            f"at t = {ctx.time:g} s; expected an int gear")
        if not -1 <= int(gear) <= ctx.num_gears:
            raise ValueError(f"shift policy of gearbox {cb.policy_gearbox!r} returned gear "
                             f"{int(gear)} at t = {ctx.time:g} s; the gearbox has gears -1 (R), "
                             f"0 (neutral) and 1..{ctx.num_gears}")
        return int(gear)
    except BaseException as e:  # noqa: BLE001
        cb.fail(e)
        return ctx.current_gear


@ffi.def_extern()
def pydg_tyre_cb(state, user):
    cb, hub = ffi.from_handle(user)
    if cb.exc is not None:
        return 0.0
    try:
        fx = cb.tyres[hub](TyreState(state))
        if isinstance(fx, bool) or not isinstance(fx, (int, float, np.floating, np.integer)):
            raise TypeError(f"tyre model of {hub}: returned {fx!r}; expected a force (N)")
        fx = float(fx)
        if not math.isfinite(fx):
            raise ValueError(f"tyre model of {hub}: returned {fx!r} at t = {state.t:g} s; "
                             "expected a finite force")
        return fx
    except BaseException as e:  # noqa: BLE001 - re-raised in the caller
        cb.fail(e)
        return 0.0


class Simulation:
    """One simulation of a graph, started as `drivegraph sim` starts it:
    by a scenario (its inputs, initial values and stop condition), or by a
    preset driver, or with no driver at all (then `duration` is needed for
    run()). `inputs` holds channels at constants ({"range": 1}, as the
    CLI's --input), or gives them as callables f(ctx) called once per step
    at its start with a StepContext (time, dt, signal(name): a controller
    in Python; the value is held over the step), or as of_time(f): f(t)
    evaluated at each RK4 substep's time (dg_input_fn, a function of t
    alone);
    `shift_policy` is a callable taking a ShiftContext and returning the
    gear wanted, installed on `gearbox` (default: the graph's first
    gearbox); it is called once per step segment, as the C callback is.

    Step API: sim.step(n=1) advances n steps of dt (the scenario's inputs
    applied at t = k dt, as in a run); sim.set_input(name, value) holds a
    channel (or gives it a callable); sim.signal(name) reads a signal or
    channel; sim.time. run() steps to the end; result() gives the rows and
    the summary so far.

    `keep` says what the steps keep besides the state, the speeds and the
    signals (docs/library.md, "What a step keeps"): "work" (the energy
    audit: energy(), the summary's energy figures) and "angles" (the
    ports' `angle` signals); default both. What is left out is not
    computed, which makes each step cheaper: the audit's figures are then
    None, and asking for an angle signal is an error."""

    def __init__(self, graph, scenario=None, preset=None, dt=None, duration=None, signals=None,
                 inputs=None, shift_policy=None, gearbox=None, from_speed=None, every=None,
                 keep=None):
        if not isinstance(graph, Graph):
            graph = Graph.load(graph)
        if preset is not None:
            self._preset = _Preset(graph, preset, from_speed, inputs)
            graph = self._preset.graph
        else:
            self._preset = None
            if from_speed is not None:
                raise _usage("from_speed goes with preset 'coast' or 'brake'")
        if scenario is not None and preset is not None:
            raise _usage("scenario and preset exclude each other")
        self.graph = graph
        self.scenario = _scenario(scenario)
        self._cb = _Callbacks()
        self._handles = []
        self._step_handle = None
        self._drv = ffi.NULL
        err = ffi.new("dg_error *")
        sim = lib.dg_sim_new(graph._ptr, err)
        if sim == ffi.NULL:
            raise GraphError.from_c(err, graph.file)
        self._sim = ffi.gc(sim, lib.dg_sim_free)
        self._graph_keep = graph  # the sim keeps the graph alive in C too
        self._set_keep(keep)
        self._timing(dt, duration, every)
        # a source faster than the step can sample (a sine above 1/(2 dt))
        handle, problems = _collect()
        if lib.dg_graph_check_step(graph._ptr, self.dt, lib.pydg_diag_cb, handle) > 0:
            p = problems[0]
            raise UsageError(p.code_value, p.file or graph.file, p.path, p.line, p.column,
                             p.message, problems)
        self._start(inputs, shift_policy, gearbox)
        self._columns(signals)
        self._summary = ffi.new("dg_summary *")
        if lib.dg_summary_init(self._summary, self._sim) != 0:
            raise MemoryError("dg_summary_init")
        self._summary_keep = ffi.gc(self._summary, lib.dg_summary_free)
        self._setup_run()

    # -- set-up, in the order of tools/cmd_sim.c (sim_timing, sim_start) --

    def _set_keep(self, keep):
        if keep is None:
            keep = KEEP_NAMES
        elif isinstance(keep, str):
            keep = [k.strip() for k in keep.split(",") if k.strip()]
        try:
            names = set(keep)
        except TypeError:
            raise _usage(f"keep: expected names among {', '.join(KEEP_NAMES)} "
                         f"(got {keep!r})") from None
        bad = sorted(str(k) for k in names if k not in KEEP_NAMES)
        if bad:
            raise _usage(f"keep: unknown {', '.join(repr(b) for b in bad)}; expected names "
                         f"among {', '.join(KEEP_NAMES)}")
        bits = (lib.DG_KEEP_WORK if "work" in names else 0) | \
            (lib.DG_KEEP_ANGLES if "angles" in names else 0)
        err = ffi.new("dg_error *")
        if lib.dg_sim_set_keep(self._sim, bits, err) != 0:
            raise _usage(ffi.string(err.text).decode())
        self.keep = frozenset(names)

    def _timing(self, dt, duration, every=None):
        scn = self.scenario._ptr if self.scenario else ffi.NULL
        s_dt = lib.dg_scenario_dt(scn) if scn else math.nan
        s_dur = lib.dg_scenario_duration(scn) if scn else math.nan
        s_out = lib.dg_scenario_output_interval(scn) if scn else math.nan
        if self._preset is not None:
            s_dur = self._preset.limit
        for what, v in (("dt", dt), ("duration", duration)):
            if v is not None and not (isinstance(v, (int, float)) and v > 0 and math.isfinite(v)):
                raise _usage(f"{what}: expected a number of seconds > 0 (got {v!r})")
        self.dt = float(dt) if dt is not None else (s_dt if not math.isnan(s_dt) else 0.001)
        if every is not None:
            if not (isinstance(every, (int, float)) and math.isfinite(every) and every > 0):
                raise _usage(f"every: expected a number of seconds > 0 (got {every!r})")
            steps = round(every / self.dt)
            if steps < 1 or abs(steps * self.dt - every) > 1e-9 * every:
                raise _usage(f"every: {every:g} s is not a whole number of steps of dt "
                             f"{self.dt:g} s")
            s_out = float(every)
        self.duration = float(duration) if duration is not None else s_dur
        self._run = ffi.new("pydg_run *")
        # the step API may go on without a duration (NaN: open-ended); run() needs one
        self._open_ended = math.isnan(self.duration)
        rt = ffi.new("dg_run_timing *")
        if lib.dg_run_timing_init(rt, self.dt, self.duration, s_out) < 0:
            raise _usage(f"duration {self.duration:g} s at dt {self.dt:g} s is too many steps")
        self._run.dt = self.dt
        self._run.total_steps = rt.total_steps
        self._run.steps_per_row = rt.steps_per_row
        self._run.interval = rt.interval
        if self._open_ended:
            self.duration = math.inf
        else:
            self.output_interval = rt.interval

    def _start(self, inputs, shift_policy, gearbox):
        err = ffi.new("dg_error *")
        if self.scenario is not None:
            handle, problems = _collect()
            if lib.dg_scenario_check(self.scenario._ptr, self._sim, lib.pydg_diag_cb, handle) > 0:
                p = problems[0]
                raise ScenarioError(p.code_value, p.file, p.path, p.line, p.column, p.message,
                                    problems)
            drv = lib.dg_driver_new(self.scenario._ptr, self._sim, err)
            if drv == ffi.NULL:
                raise ScenarioError.from_c(err, self.scenario.file)
            self._drv = ffi.gc(drv, lib.dg_driver_free)
        if self._preset is not None:
            self._preset.start(self._sim)
        given = dict(inputs or {})
        for name, value in given.items():
            self._set_input(name, value, preset=self._preset is not None)
        if shift_policy is not None:
            self._set_policy(shift_policy, gearbox)
        if self._preset is not None or given or shift_policy is not None:
            # inputs changed after the start: made consistent again (a lever
            # given here engages now); a preset's inputs are those of its
            # first step
            if self._preset is not None:
                self._preset.apply(self._sim, lib.dg_sim_time(self._sim))
            if lib.dg_sim_start(self._sim, err) != 0:
                raise SimulationError.from_c(err, self.graph.file)

    def _input_index(self, name):
        i = lib.dg_sim_input_find(self._sim, name.encode())
        if i < 0:
            names = [ffi.string(lib.dg_sim_input_name(self._sim, k)).decode()
                     for k in range(lib.dg_sim_input_count(self._sim))]
            raise _usage(f'the graph reads no channel "{name}" (channels: {", ".join(names)})')
        return i

    def _set_input(self, name, value, preset=False):
        i = self._input_index(name)
        if preset and i < 4:
            raise _usage(f"input {name}: the preset drives that channel")
        self._cb.step_inputs.pop(i, None)
        if callable(value) and not isinstance(value, of_time):
            self._cb.step_inputs[i] = (name, value)
            self._cb.inputs.pop(i, None)
            if self._step_handle is None:
                self._step_handle = ffi.new_handle(self._cb)
                self._cb.sim = self
            self._run.step_user = self._step_handle
            return
        if isinstance(value, of_time):
            self._cb.inputs[i] = value.fn
            h = ffi.new_handle((self._cb, i))
            self._handles.append(h)
            err = ffi.new("dg_error *")
            if lib.dg_sim_set_input_fn(self._sim, i, lib.pydg_input_cb, h, err) != 0:
                raise UsageError.from_c(err, self.graph.file)
            return
        v = float(value)
        if not math.isfinite(v):
            raise _usage(f"input {name}: expected a finite number (got {value!r})")
        if lib.dg_sim_input_is_integer(self._sim, i) and v != math.floor(v):
            raise _usage(f"input {name}: must be an integer (a gear), got {v:g}")
        self._cb.inputs.pop(i, None)
        if not self._cb.step_inputs:
            self._run.step_user = ffi.NULL
        lib.dg_sim_set_input(self._sim, i, v)

    def _set_policy(self, policy, gearbox):
        if not callable(policy):
            raise _usage("shift_policy: expected a callable(ShiftContext) -> gear")
        if gearbox is None:
            types = self.graph.blocks
            boxes = [b for b, t in types.items() if t == "gearbox"]
            if not boxes:
                raise _usage("shift_policy: the graph has no gearbox")
            gearbox = boxes[0]
        self._cb.policy = policy
        self._cb.policy_gearbox = gearbox
        h = ffi.new_handle(self._cb)
        self._handles.append(h)
        err = ffi.new("dg_error *")
        if lib.dg_sim_set_shift_policy(self._sim, gearbox.encode(), lib.pydg_shift_cb, h,
                                       err) != 0:
            raise UsageError.from_c(err, self.graph.file)

    # -- a vehicle host's side (docs/host.md) --

    def set_tyre(self, hub, model):
        """Installs a host's tyre model on the `hub` block `hub`
        (dg_sim_set_tyre): model(TyreState) -> Fx (N, forward positive on
        the host's chassis; the hub gets −Fx·R), called at every RK4 stage
        of every step (and for reads of the hub's fx), so it must be a
        function of its argument (and of what the host holds over the
        step). None restores the hub's magic formula. An exception inside
        it stops the step and is re-raised by step()."""
        err = ffi.new("dg_error *")
        if model is None:
            self._cb.tyres.pop(hub, None)
            if lib.dg_sim_set_tyre(self._sim, str(hub).encode(), ffi.NULL, ffi.NULL, err) != 0:
                raise UsageError.from_c(err, self.graph.file)
            return
        if not callable(model):
            raise _usage("set_tyre: expected a callable(TyreState) -> force")
        self._cb.tyres[hub] = model
        h = ffi.new_handle((self._cb, hub))
        self._handles.append(h)
        if lib.dg_sim_set_tyre(self._sim, str(hub).encode(), lib.pydg_tyre_cb, h, err) != 0:
            self._cb.tyres.pop(hub, None)
            raise UsageError.from_c(err, self.graph.file)

    def boundary_motion(self, ids):
        """At the blocks `ids` that prescribe a speed now (speed_source,
        accel_source, position_source), the drivetrain's effective inertia
        J (n × n, kg·m²) and dforce/dspeed (n × n, N·m per rad/s, state
        held) as numpy arrays (dg_sim_boundary_motion)."""
        ids = [ids] if isinstance(ids, str) else list(ids)
        n = len(ids)
        keep = [ffi.new("char[]", str(i).encode()) for i in ids]
        c_ids = ffi.new("const char *[]", keep or [ffi.NULL])
        inertia = np.zeros((n, n))
        damping = np.zeros((n, n))
        err = ffi.new("dg_error *")
        if lib.dg_sim_boundary_motion(self._sim, n, c_ids, ffi.from_buffer("double[]", inertia),
                                      ffi.from_buffer("double[]", damping), err) != 0:
            raise UsageError.from_c(err, self.graph.file)
        return inertia, damping

    def boundary_ports(self, ports):
        """The mobility Y (n × n: accelerations per unit torques) at the
        ports ("block.port") of free shafts (dg_sim_boundary_ports); the
        effective inertia there is its inverse."""
        ports = [ports] if isinstance(ports, str) else list(ports)
        n = len(ports)
        keep = [ffi.new("char[]", str(p).encode()) for p in ports]
        c_ports = ffi.new("const char *[]", keep or [ffi.NULL])
        y = np.zeros((n, n))
        err = ffi.new("dg_error *")
        if lib.dg_sim_boundary_ports(self._sim, n, c_ports, ffi.from_buffer("double[]", y),
                                     err) != 0:
            raise UsageError.from_c(err, self.graph.file)
        return y

    def check_coupling(self, port, dtorque_dspeed, dt):
        """Whether an explicit (one host step late) coupling at `port` with
        the law's slope dtorque_dspeed (N·m per rad/s) can be stable at the
        host's step dt (dg_sim_check_coupling): (True, "") or (False, the
        library's message with J, c·dt/J and the remedies)."""
        err = ffi.new("dg_error *")
        rc = lib.dg_sim_check_coupling(self._sim, str(port).encode(), float(dtorque_dspeed),
                                       float(dt), err)
        if rc == 0:
            return True, ""
        text = ffi.string(err.text).decode(errors="replace")
        if rc == lib.DG_ERR_RANGE:
            return False, text
        raise UsageError.from_c(err, self.graph.file)

    def _columns(self, signals):
        cols = []
        if signals is None:
            cols = list(range(lib.dg_sim_signal_count(self._sim)))
            cols += [-(k + 1) for k in range(lib.dg_sim_input_count(self._sim))]
        else:
            if isinstance(signals, str):
                signals = [s.strip() for s in signals.split(",") if s.strip()]
            for name in signals:
                cols.append(self._column(name))
            if not cols:
                raise _usage("signals: no signal names")
        self._cols = cols
        self.columns = [self._column_name(c) for c in cols]

    def _column(self, name):
        i = lib.dg_sim_signal_find(self._sim, name.encode())
        if i >= 0:
            if lib.dg_sim_signal_keep(self._sim, i) & ~lib.dg_sim_keep(self._sim):
                raise _usage(f'signal "{name}": a shaft\'s angle, but this simulation keeps no '
                             f'angles (keep={sorted(self.keep)!r}: add "angles")')
            return i
        if "." not in name:
            ch = lib.dg_sim_input_find(self._sim, name.encode())
            if ch >= 0:
                return -(ch + 1)
            raise _usage(f'unknown channel "{name}" (signals are "block.signal")')
        names = [self._column_name(k) for k in range(lib.dg_sim_signal_count(self._sim))]
        import difflib
        close = difflib.get_close_matches(name, names, n=1)
        hint = f'; did you mean "{close[0]}"?' if close else ""
        raise _usage(f'unknown signal "{name}"{hint}')

    def _column_name(self, c):
        if c >= 0:
            return ffi.string(lib.dg_sim_signal_name(self._sim, c)).decode()
        return ffi.string(lib.dg_sim_input_name(self._sim, -c - 1)).decode()

    def _setup_run(self):
        r = self._run
        r.sim = self._sim
        r.drv = self._drv if self._drv != ffi.NULL else ffi.NULL
        r.sum = self._summary
        self._cols_c = ffi.new("int[]", self._cols or [0])
        r.ncols = len(self._cols)
        r.cols = self._cols_c
        self._cb.run = r
        if self._preset is not None:
            r.preset = self._preset._ptr
            self._summary.rest_speed = lib.dg_preset_rest_speed(self._preset._ptr)
        self._grow(self._expected_rows())

    def _expected_rows(self):
        if self._open_ended:
            return 1024
        return self._run.total_steps // self._run.steps_per_row + 2

    def _grow(self, rows):
        old = getattr(self, "_rows", None)
        new = np.empty((rows, 1 + len(self._cols)), dtype=np.float64)
        if old is not None:
            new[: self._run.nrows] = old[: self._run.nrows]
        self._rows = new
        self._rows_c = ffi.from_buffer("double[]", new)
        self._run.rows = self._rows_c
        self._run.max_rows = rows

    # -- stepping --

    def _advance(self, n):
        r = self._run
        if self._open_ended:
            need = r.nrows + n // r.steps_per_row + 2
            if need > r.max_rows:
                self._grow(max(need, 2 * r.max_rows))
        rc = lib.pydg_advance(r, n)
        if self._cb.exc is not None:
            exc, self._cb.exc = self._cb.exc, None
            self._failed = True
            raise exc
        if rc != 0:
            self._failed = True
            raise SimulationError.from_c(lib.dg_sim_last_error(self._sim), self.graph.file)

    def step(self, n=1):
        """Advances n steps of dt (fewer at the end of the run or once the
        stop condition holds); returns the time (s)."""
        if getattr(self, "_failed", False):
            raise _usage("the simulation failed; it cannot be stepped again")
        self._advance(int(n))
        return self.time

    def run(self):
        """Steps to the end: the duration, the scenario's stop condition or
        the preset's goal."""
        if self._open_ended:
            raise _usage("no duration: give duration=, a preset or a scenario with one")
        if getattr(self, "_failed", False):
            raise _usage("the simulation failed; it cannot be stepped again")
        self._advance(self._run.total_steps)
        return self

    @property
    def time(self):
        """Simulation time (s): steps taken × dt, as the CLI counts it."""
        return self._run.steps * self.dt

    @property
    def steps(self):
        return self._run.steps

    @property
    def topology_changes(self):
        """Mode changes so far (dg_sim_topology_changes): a host sees from
        it that a step ended in a mode change (a gear engaging)."""
        return lib.dg_sim_topology_changes(self._sim)

    @property
    def stopped(self):
        """True once the stop condition (or the preset's goal) holds, or the
        duration is reached."""
        r = self._run
        return bool(r.stopped) or r.steps >= r.total_steps

    def set_input(self, name, value):
        """Holds channel `name` at `value` from now on (replacing a
        scenario's schedule for it), or gives it a callable f(ctx) called
        once per step, or of_time(f) evaluated at every substep."""
        self._set_input(name, value)

    def signal(self, name):
        """The current value of a signal ("engine.rpm") or channel ("throttle")."""
        return lib.pydg_column(self._sim, self._column(name))

    @property
    def signal_names(self):
        return [self._column_name(k) for k in range(lib.dg_sim_signal_count(self._sim))]

    @property
    def channel_names(self):
        return [self._column_name(-(k + 1)) for k in range(lib.dg_sim_input_count(self._sim))]

    def unit(self, name):
        i = self._column(name)
        return ffi.string(lib.dg_sim_signal_unit(self._sim, i)).decode() if i >= 0 else ""

    def energy(self):
        """The energy audit (J), with the block works. Without "work" in
        `keep`, what comes from the work (all but the kinetic energies and
        the ledger blocks' own figures) is None."""
        e = ffi.new("dg_energy *")
        lib.dg_sim_energy(self._sim, e)
        if not lib.dg_sim_keep(self._sim) & lib.DG_KEEP_WORK:
            ledger, block_ledger = self._ledger()
            return {"kinetic_J": e.kinetic, "kinetic_start_J": e.kinetic_start,
                    "work_in_J": None, "work_out_J": None, "efficiency_loss_J": None,
                    "impact_loss_J": None, "impact_loss_relative": None,
                    "impact_warning": None, "balance_error_J": None,
                    "balance_error_relative": None, "block_work_J": None,
                    "ledger": ledger, "block_ledger_J": block_ledger}
        scale = e.work_in if e.work_in > 0.0 else max(abs(e.kinetic_start), 1.0)
        blocks = {}
        g = self.graph._ptr
        for i in range(lib.dg_graph_block_count(g)):
            w = lib.dg_sim_block_work(self._sim, i)
            if w != 0.0:
                blocks[ffi.string(lib.dg_graph_block_id(g, i)).decode()] = w
        ledger, block_ledger = self._ledger()
        return {"kinetic_J": e.kinetic, "kinetic_start_J": e.kinetic_start,
                "work_in_J": e.work_in, "work_out_J": e.work_out,
                "efficiency_loss_J": e.efficiency_loss, "impact_loss_J": e.impact_loss,
                "impact_loss_relative": abs(e.impact_loss) / scale,
                "impact_warning": abs(e.impact_loss) / scale > IMPACT_WARN_SHARE,
                "balance_error_J": e.balance_error,
                "balance_error_relative": abs(e.balance_error) / scale,
                "block_work_J": blocks, "ledger": ledger, "block_ledger_J": block_ledger}

    def _ledger(self):
        """The energy ledger (docs/energy.md): the totals (None when no block
        keeps one) and each ledger block's fuel, stored, electric and heat
        energies as "<id>.<kind>" (J), as `sim --json` has them."""
        l = ffi.new("dg_energy_ledger *")
        lib.dg_sim_energy_ledger(self._sim, l)
        blocks = {}
        g = self.graph._ptr
        e = ffi.new("dg_block_energy *")
        for i in range(lib.dg_graph_block_count(g)):
            if lib.dg_sim_block_energy(self._sim, i, e) != 0 or not e.ledger:
                continue
            bid = ffi.string(lib.dg_graph_block_id(g, i)).decode()
            for kind in ("fuel", "stored", "electric", "heat"):
                blocks[bid + "." + kind] = getattr(e, kind)
        if l.ledger_blocks == 0:
            return None, blocks
        keys = ("fuel", "stored", "electric", "heat", "work_in_other", "work_out_other",
                "efficiency_loss", "impact_loss", "kinetic_change", "energy_in", "balance_error")
        totals = {k + "_J": _num(getattr(l, k)) for k in keys}
        totals["balance_error_relative"] = _num(abs(l.balance_error) / max(l.energy_in, 1.0))
        return totals, blocks

    def _start_choices(self):
        """What the start chose for shafts no initial value fixed
        (dg_sim_start_choice), as `sim --json`'s start_choices."""
        c = ffi.new("dg_start_choice *")
        out = []
        for i in range(lib.dg_sim_start_choice(self._sim, 0, ffi.NULL)):
            lib.dg_sim_start_choice(self._sim, i, c)
            out.append({"shaft": ffi.string(c.shaft).decode(),
                        "block": ffi.string(c.block).decode(),
                        "why": ffi.string(c.why).decode(),
                        "proposed": c.proposed if math.isfinite(c.proposed) else None,
                        "speed": c.speed if math.isfinite(c.speed) else None,
                        "unit": "m/s" if c.linear else "rad/s", "taken": bool(c.taken)})
        return out

    def summary(self):
        """The figures of `drivegraph sim --json` (same keys and units; None
        where a figure does not apply), from the library's dg_summary."""
        s = self._summary
        sim = self._sim

        def read(i):
            return lib.dg_sim_signal(sim, i) if i >= 0 else math.nan

        def num(x):
            return x if math.isfinite(x) else None

        def cstr(p):
            return ffi.string(p).decode() if p != ffi.NULL else None

        has = s.id_speed >= 0
        from_rest = has and s.v_start <= 0.1  # DG_SUMMARY_FROM_REST
        v_end = read(s.id_speed)
        out = {
            "graph": self.graph.file,
            "name": self.graph.name,
            "blocks": lib.dg_graph_block_count(self.graph._ptr),
            "dofs": lib.dg_sim_dof_count(sim),
            "preset": self._preset.name if self._preset is not None else None,
            "scenario": self.scenario.file if self.scenario is not None else None,
            "steps": self._run.steps,
            "dt_s": self.dt,
            "duration_s": num(self.duration),
            "final_time_s": self._run.steps * self.dt,
            "topology_changes": lib.dg_sim_topology_changes(sim),
            "stop_reason": self.stop_reason,
            "vehicle": cstr(s.vehicle),
            "start_speed_kmh": num(3.6 * s.v_start if has else math.nan),
            "final_speed_kmh": num(3.6 * v_end if has else math.nan),
            "top_speed_kmh": num(3.6 * s.v_top if has else math.nan),
            "top_speed_time_s": num(s.t_top if has else math.nan),
            "distance_m": num(read(s.id_x) - s.x_start if has else math.nan),
            "t_0_100_kmh_s": num(s.t_100 if from_rest else math.nan),
            "t_0_400_m_s": num(s.t_400 if from_rest else math.nan),
            "v_400_m_kmh": num(3.6 * s.v_400 if from_rest else math.nan),
            "rest_speed_kmh": num(3.6 * s.rest_speed if has else math.nan),
            "time_to_rest_s": num(s.t_rest),
            "distance_to_rest_m": num(s.x_rest),
            "peak_wheel_slip": num(s.slip_peak if s.nwheels > 0 else math.nan),
            "peak_wheel_slip_wheel": cstr(s.wheel[s.slip_wheel]) if s.slip_wheel >= 0 else None,
            "peak_wheel_slip_time_s": num(s.slip_t),
            "gearbox": cstr(s.gearbox),
            "start_gear": s.gear_start if s.id_gear >= 0 else None,
            "shift_rpm_signal": cstr(s.rpm_name),
            "shifts_total": s.shifts_total,
            "start_choices": self._start_choices(),
            "shifts": [{"time_s": num(s.shifts[i].t), "from": getattr(s.shifts[i], "from"),
                        "to": s.shifts[i].to, "rpm": num(s.shifts[i].rpm)}
                       for i in range(s.nshifts)],
            "final_values": {self._column_name(c): num(lib.pydg_column(sim, c))
                             for c in self._cols},
            "energy": {k: (num(v) if isinstance(v, float) else v)
                       for k, v in self.energy().items()},
        }
        return out

    @property
    def stop_reason(self):
        r = self._run
        if self._preset is not None and r.stopped:
            return ffi.string(r.reason).decode()
        if r.stopped and self.scenario is not None:
            return f"stop condition of {self.scenario.file} met"
        if r.steps >= r.total_steps and not self._open_ended:
            what = "time limit" if self._preset is not None else "duration"
            return f"{what} {self.duration:g} s reached"
        return None

    def result(self):
        """The rows recorded so far (a view of the run's buffer, no copy)
        and the summary."""
        # a view: the rows written never change (more steps write after
        # them, and a larger buffer keeps the old one alive for this view)
        rows = self._rows[: self._run.nrows]
        return Result(rows, self.columns, self.summary(), self.output_interval
                      if not self._open_ended else self._run.interval)


class Result:
    """A run's trace and summary: `t` and `result["engine.rpm"]` (or
    result.signals[...]) are numpy float64 arrays, one value per output
    interval, the values `drivegraph sim --csv` writes (it prints them with
    %.10g: format_csv gives that text); `summary` holds the figures of
    `sim --json`, also as attributes (t_0_100, shifts, energy)."""

    def __init__(self, rows, columns, summary, interval):
        self.rows = rows
        self.columns = list(columns)
        self.t = rows[:, 0]
        self.signals = {name: rows[:, 1 + i] for i, name in enumerate(self.columns)}
        self.summary = summary
        self.output_interval = interval

    def __getitem__(self, name):
        if name == "t":
            return self.t
        return self.signals[name]

    def __contains__(self, name):
        return name == "t" or name in self.signals

    @property
    def t_0_100(self):
        """0-100 km/h (s), None when not reached or not from rest."""
        return self.summary["t_0_100_kmh_s"]

    @property
    def shifts(self):
        return self.summary["shifts"]

    @property
    def energy(self):
        return self.summary["energy"]

    def format_csv(self, digits=10):
        """The CSV text `drivegraph sim --csv [--digits N]` writes for the
        same run (digits: significant digits, 1..17; 17 is exact)."""
        if not 1 <= int(digits) <= 17:
            raise ValueError("digits: 1..17 expected (got %r)" % (digits,))
        fmt = "%%.%dg" % int(digits)
        lines = [",".join(["t"] + self.columns)]
        for row in self.rows:
            lines.append(",".join(fmt % x for x in row))
        return "\n".join(lines) + "\n"

    def __repr__(self):
        return f"<drivegraph.Result {len(self.t)} rows x {len(self.columns)} signals>"
