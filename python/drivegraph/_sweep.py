"""drivegraph.sweep: many variants of one graph, each an independent run of
dg_batch_run (lib/run/batch.c), locally on the library's threads or as
chunks of variants on a Dask cluster. A variant's results are bit for bit
those of `drivegraph sweep` (the same library call on the same graph text,
overrides and options; results do not depend on threads or chunks)."""
import json
import math
import os

import numpy as np

from ._core import Error, Graph, Scenario, UsageError, _usage, ffi, lib

__all__ = ["sweep", "expand_variants"]

# Variants per thread in one dg_batch_run call, as `drivegraph sweep`
# (tools/cmd_sweep.c, CHUNK_PER_THREAD): a call shares the every-mode
# checks of its variants' structures.
CHUNK_PER_THREAD = 1024


def _value_text(v):
    """An override value as JSON text (floats in their shortest exact form,
    as the CLI writes them); a str that is not JSON stays a string."""
    if isinstance(v, str):
        try:
            json.loads(v)
        except ValueError:
            return json.dumps(v)
        return v
    return json.dumps(v, allow_nan=False)


def _check_value(v, where):
    """An override value must become JSON: a number (finite), a string, a
    bool, None, or a list or dict of them; anything else is a UsageError
    naming `where` (the grid key, or the variant and its key)."""
    if isinstance(v, bool) or v is None or isinstance(v, str):
        return
    if isinstance(v, (int, np.integer)):
        return
    if isinstance(v, (float, np.floating)):
        if not math.isfinite(v):
            raise _usage(f"{where}: {v!r} is not a finite number (JSON has no NaN or Infinity)")
        return
    if isinstance(v, (list, tuple)):
        for k, x in enumerate(v):
            _check_value(x, f"{where}[{k}]")
        return
    if isinstance(v, dict):
        for k, x in v.items():
            if not isinstance(k, str):
                raise _usage(f"{where}: key {k!r} is not a string")
            _check_value(x, f"{where}.{k}")
        return
    what = "a callable" if callable(v) else f"of type {type(v).__name__}"
    raise _usage(f"{where}: {v!r} is {what}, not a value (expected a number, a string, a "
                 "bool or a list of them)")


def expand_variants(grid=None, variants=None):
    """The overrides of every variant, as `drivegraph sweep` numbers them
    (tools/cmd_sweep.c): the grid {key: [values]} is the Cartesian product
    of its keys in order, the last varying fastest; with a list of variants
    (dicts of overrides, the --variants file's lines) each line is combined
    with each grid point, index = line * grid size + point, the line's
    overrides first. Returns a list of [(key, value), ...]."""
    grid = dict(grid or {})
    keys = [(k, list(v) if isinstance(v, (list, tuple)) else [v]) for k, v in grid.items()]
    for k, vals in keys:
        if not vals:
            raise _usage(f"grid key {k}: no values")
        for i, v in enumerate(vals):
            _check_value(v, f"grid key {k}, value {i}")
    size = 1
    for _, vals in keys:
        size *= len(vals)
    lines = [list(dict(v).items()) for v in variants] if variants is not None else None
    for n, line in enumerate(lines or []):
        for k, v in line:
            _check_value(v, f"variant {n}, key {k}")
    if lines is not None and not lines:
        raise _usage("variants: empty list")
    out = []
    for line in lines if lines is not None else [[]]:
        for point in range(size):
            ov = list(line)
            div = size
            for k, vals in keys:
                div //= len(vals)
                ov.append((k, vals[(point // div) % len(vals)]))
            out.append(ov)
    return out


def _num(x):
    return x if math.isfinite(x) else None


def _error_text(err, graph_name):
    e = ffi.new("dg_error *", err)
    if not ffi.string(e.file):
        name = graph_name.encode()[:255]
        ffi.memmove(e.file, name + b"\0", len(name) + 1)
    buf = ffi.new("char[]", 1024)
    lib.dg_error_format(e, buf, 1024)
    return ffi.string(buf).decode(errors="replace")


def _run_batch(graph_text, graph_name, scenario, dt, duration, signals, threads, variants):
    """dg_batch_run over [(index, [(key, value), ...]), ...]: the result
    dicts (the keys of a `drivegraph sweep` line)."""
    keep = []

    def cs(s):
        b = ffi.new("char[]", s.encode())
        keep.append(b)
        return b

    n = len(variants)
    opt = ffi.new("dg_batch_options *")
    lib.dg_batch_options_init(opt)
    opt.graph_json = cs(graph_text)
    opt.graph_name = cs(graph_name)
    scn = None
    if scenario is not None:
        text, name = scenario
        scn = Scenario(text, name)
        opt.scenario = scn._ptr
    opt.dt = math.nan if dt is None else float(dt)
    opt.duration = math.nan if duration is None else float(duration)
    opt.threads = int(threads)
    sig = [cs(s) for s in signals]
    sig_c = ffi.new("const char *[]", sig or [ffi.NULL])
    opt.n_signals = len(signals)
    opt.signals = sig_c
    vars_c = ffi.new("dg_batch_variant[]", max(n, 1))
    texts = []
    for i, (_, ov) in enumerate(variants):
        ov_c = ffi.new("dg_override[]", max(len(ov), 1))
        keep.append(ov_c)
        vt = []
        for j, (k, v) in enumerate(ov):
            t = _value_text(v)
            vt.append(t)
            ov_c[j].key = cs(k)
            ov_c[j].value = cs(t)
        texts.append(vt)
        vars_c[i].n_overrides = len(ov)
        vars_c[i].overrides = ov_c
    res = ffi.new("dg_batch_result[]", max(n, 1))
    finals = ffi.new("double[]", max(n * len(signals), 1))
    err = ffi.new("dg_error *")
    if lib.dg_batch_run(opt, n, vars_c, res, finals, err) != 0:
        raise Error.from_c(err, graph_name)
    out = []
    for i, (index, ov) in enumerate(variants):
        r = res[i]
        line = {"variant": index,
                "overrides": {k: json.loads(t) for (k, _), t in zip(ov, texts[i])}}
        if r.code != 0:
            line["error"] = _error_text(r.error, graph_name)
            out.append(line)
            continue
        wi = r.work_in
        line.update({
            "t_0_100_kmh_s": _num(r.t_0_100),
            "top_speed_kmh": _num(3.6 * r.top_speed),
            "final_time_s": _num(r.final_time),
            "steps": r.steps,
            "topology_changes": r.topology_changes,
            "energy": {"work_in_J": _num(wi), "balance_error_J": _num(r.balance_error),
                       "balance_error_relative":
                           _num(abs(r.balance_error) / wi if wi > 0.0 else math.nan)},
            "final_values": {s: _num(finals[i * len(signals) + k])
                             for k, s in enumerate(signals)},
        })
        out.append(line)
    return out


def _check_grid(graph, grid):
    """Every grid value alone on the base graph, as `drivegraph sweep`
    checks its --set values before anything runs (dg_batch_validate): a
    UsageError naming every bad key=value with the library's error (its
    JSON pointer in .path of each problem)."""
    pairs = [(k, v) for k, vals in (grid or {}).items()
             for v in (vals if isinstance(vals, (list, tuple)) else [vals])]
    if not pairs:
        return
    keep = []

    def cs(s):
        b = ffi.new("char[]", s.encode())
        keep.append(b)
        return b

    ov = ffi.new("dg_override[]", len(pairs))
    var = ffi.new("dg_batch_variant[]", len(pairs))
    for i, (k, v) in enumerate(pairs):
        ov[i].key = cs(k)
        ov[i].value = cs(_value_text(v))
        var[i].n_overrides = 1
        var[i].overrides = ov + i
    opt = ffi.new("dg_batch_options *")
    lib.dg_batch_options_init(opt)
    opt.graph_json = cs(graph.text)
    opt.graph_name = cs(graph.file)
    res = ffi.new("dg_batch_result[]", len(pairs))
    err = ffi.new("dg_error *")
    if lib.dg_batch_validate(opt, len(pairs), var, res, err) != 0:
        raise Error.from_c(err, graph.file)
    problems = []
    for i, (k, v) in enumerate(pairs):
        if res[i].code != 0:
            e = Error.from_c(res[i].error, graph.file)
            e.message = f"grid {k}={_value_text(v)}: {e.message}"
            problems.append(e)
    if problems:
        p = problems[0]
        raise UsageError(p.code_value, p.file, p.path, p.line, p.column,
                         "; ".join(x.message for x in problems), problems)


def _run_chunk(payload):
    """One Dask task: a chunk of variants on one thread of a worker."""
    return _run_batch(*payload)


def sweep(graph, grid=None, variants=None, scenario=None, dt=None, duration=None, signals=None,
          jobs=None, client=None, chunk_size=None):
    """Runs every variant of `graph` (a Graph, a path or graph JSON text):
    the grid {"block.param": [values], ...} and/or a list of override dicts
    (see expand_variants), with a scenario (default: the launch of
    `drivegraph bench`, 10 s at 1 ms), dt and duration overriding its own.
    Returns one dict per variant in variant order, with the keys and values
    of a `drivegraph sweep` line ("error" instead of the results for a
    variant that failed). `signals`: final values to report (default: every
    signal of the base graph).

    Without `client` the variants run here, on `jobs` threads of the
    library (default: every CPU) in one C call per chunk, without the GIL.
    With a dask.distributed Client they run on its workers, `chunk_size`
    variants per task (default: about four tasks per worker thread), each
    task one dg_batch_run on one thread; the graph and scenario travel as
    text, so workers need the package, not the files."""
    if not isinstance(graph, Graph):
        graph = Graph.load(graph)
    scn = None
    if scenario is not None:
        s = scenario if isinstance(scenario, Scenario) else Scenario(scenario)
        scn = (s.text, s.file)
    if signals is None:
        sim = graph.simulation(duration=1.0)
        signals = sim.signal_names
    elif isinstance(signals, str):
        signals = [x.strip() for x in signals.split(",") if x.strip()]
    else:
        signals = list(signals)
        probe = graph.simulation(duration=1.0)
        for name in signals:
            if lib.dg_sim_signal_find(probe._sim, name.encode()) < 0:
                raise _usage(f'signals: unknown signal "{name}"')
    for x, what in ((dt, "dt"), (duration, "duration")):
        if x is not None and not (x > 0 and math.isfinite(x)):
            raise _usage(f"{what}: expected a number of seconds > 0 (got {x!r})")
    all_variants = list(enumerate(expand_variants(grid, variants)))
    _check_grid(graph, grid)
    common = (graph.text, graph.file, scn, dt, duration, signals)
    if client is None:
        threads = int(jobs) if jobs else (os.cpu_count() or 1)
        chunk = chunk_size or threads * CHUNK_PER_THREAD
        out = []
        for i in range(0, len(all_variants), chunk):
            out += _run_batch(*common, threads, all_variants[i:i + chunk])
        return out
    if chunk_size is None:
        nthreads = sum(client.nthreads().values()) or 1
        chunk_size = max(1, math.ceil(len(all_variants) / (4 * nthreads)))
    payloads = [common + (1, all_variants[i:i + chunk_size])
                for i in range(0, len(all_variants), chunk_size)]
    futures = client.map(_run_chunk, payloads, pure=False)
    out = []
    for part in client.gather(futures):
        out += part
    out.sort(key=lambda line: line["variant"])
    return out
