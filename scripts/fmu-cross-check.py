#!/usr/bin/env python3
"""The FMI cross-check files of the example FMUs (examples/fmu/<Model>/).

    scripts/fmu-cross-check.py DRIVEGRAPH OUT_DIR [--fmi 3|2|both] [MODEL...]

For each example and FMI version it writes, in the cross-check repository's
layout (fmus/<3.0|2.0>/cs/<x86_64-linux|linux64>/drivegraph/<version>/<Model>/):

  <Model>.fmu       `drivegraph fmu GRAPH --scenario S --outputs ...`
  <Model>_in.csv    the example's input trace (when the FMU has inputs)
  <Model>_ref.csv   `drivegraph sim` of the same graph, with the scenario and
                    the input trace as its schedules, every 17 digits, at the
                    FMU's communication points
  <Model>_ref.opt   StartTime, StopTime, StepSize (the communication step),
                    RelTol

The reference is drivegraph's own simulation of the graph: an importer that
steps the FMU at StepSize with the inputs of <Model>_in.csv set at each
communication point (linear between its rows, a repeated time a jump, the
later row holding from it) gets it bit for bit (tests/test_fmu.sh checks
this with the project's importer, tests/fmu_import.c). The input traces are
held between communication points (their jumps fall on them), so that the
same holds for a master that keeps inputs constant over a step, as FMI 3
co-simulation does.
"""
import csv
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = os.path.join(ROOT, "examples", "fmu")


def fail(msg):
    print(f"fmu-cross-check: {msg}", file=sys.stderr)
    sys.exit(1)


def read_inputs(path):
    """The input trace: names and rows (time first)."""
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    names = rows[0]
    if names[0] != "time":
        fail(f"{path}: the first column must be \"time\"")
    return names[1:], [[float(x) for x in r] for r in rows[1:] if r]


def sim_scenario(scenario_path, inputs_path):
    """The FMU's scenario with the input trace added as schedules."""
    with open(scenario_path) as f:
        scn = json.load(f)
    if inputs_path:
        names, rows = read_inputs(inputs_path)
        scn.setdefault("inputs", {})
        for k, name in enumerate(names):
            scn["inputs"][name] = [[r[0], r[k + 1]] for r in rows]
    return scn


def version(drivegraph):
    out = subprocess.run([drivegraph, "--version"], capture_output=True, text=True)
    return out.stdout.split()[-1] if out.returncode == 0 and out.stdout else "0.1.0"


def export(drivegraph, model, fmi, out_root, ver):
    ex_dir = os.path.join(EXAMPLES, model)
    with open(os.path.join(ex_dir, "example.json")) as f:
        ex = json.load(f)
    graph = ex["graph"]
    graph = os.path.join(ex_dir, graph) if not graph.startswith("graphs/") else os.path.join(ROOT, graph)
    scenario = os.path.join(ex_dir, ex["scenario"])
    inputs = os.path.join(ex_dir, f"{model}_in.csv")
    if not os.path.exists(inputs):
        inputs = None
    platform = "x86_64-linux" if fmi == 3 else "linux64"
    out = os.path.join(out_root, "fmus", f"{fmi}.0", "cs", platform, "drivegraph", ver, model)
    os.makedirs(out, exist_ok=True)
    outputs = ex["outputs"]
    fmu = os.path.join(out, f"{model}.fmu")
    subprocess.run([drivegraph, "fmu", graph, "-o", fmu, "--fmi", str(fmi), "--scenario", scenario,
                    "--outputs", ",".join(outputs)], check=True, stdout=subprocess.DEVNULL)
    scn = sim_scenario(scenario, inputs)
    with tempfile.TemporaryDirectory() as tmp:
        scn_path = os.path.join(tmp, "scenario.json")
        with open(scn_path, "w") as f:
            json.dump(scn, f)
        csv_path = os.path.join(tmp, "sim.csv")
        subprocess.run([drivegraph, "sim", graph, "--scenario", scn_path, "--signals",
                        ",".join(outputs), "--digits", "17", "--csv", csv_path],
                       check=True, stdout=subprocess.DEVNULL)
        with open(csv_path) as f:
            lines = f.read().splitlines()
    header = ",".join(f'"{n}"' for n in ["time"] + outputs)
    with open(os.path.join(out, f"{model}_ref.csv"), "w") as f:
        f.write(header + "\n" + "\n".join(lines[1:]) + "\n")
    if inputs:
        with open(inputs) as src, open(os.path.join(out, f"{model}_in.csv"), "w") as dst:
            dst.write(src.read())
    step = scn.get("output_interval", max(scn.get("dt", 0.001), 0.01))
    with open(os.path.join(out, f"{model}_ref.opt"), "w") as f:
        f.write(f"StartTime, 0.0\nStopTime, {float(scn['duration'])!r}\n"
                f"StepSize, {float(step)!r}\nRelTol, 0.0001\n")
    return out


def main(argv):
    if len(argv) < 3:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    drivegraph, out_root = argv[1], argv[2]
    rest = argv[3:]
    fmis = [3, 2]
    if len(rest) >= 2 and rest[0] == "--fmi":
        fmis = {"3": [3], "2": [2], "both": [3, 2]}.get(rest[1]) or fail("--fmi takes 3, 2 or both")
        rest = rest[2:]
    models = rest or sorted(d for d in os.listdir(EXAMPLES)
                            if os.path.exists(os.path.join(EXAMPLES, d, "example.json")))
    ver = version(drivegraph)
    for model in models:
        for fmi in fmis:
            print(export(drivegraph, model, fmi, out_root, ver))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
