#!/usr/bin/python3
"""A full-throttle launch from Python: engine speed, vehicle speed and gear
over time, drawn with matplotlib into a PNG.

    /usr/bin/python3 examples/python/launch.py [GRAPH] [--preset launch | --scenario FILE]
                                               [--shift-rpm RPM] [-o OUT.png]

--shift-rpm installs a Python shift policy upshifting at that gearbox input
speed instead of the graph's map (the two runs are drawn together).
Needs the package installed (`make python`) and python3-matplotlib."""
import argparse
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import drivegraph as dg  # noqa: E402

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")


def upshift_at(rpm):
    def policy(ctx):
        gear = max(ctx.current_gear, 1)
        return gear + 1 if ctx.engine_rpm >= rpm and gear < ctx.num_gears else gear
    return policy


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("graph", nargs="?",
                    default=os.path.join(ROOT, "graphs", "sedan_rwd_automatic.json"))
    ap.add_argument("--scenario")
    ap.add_argument("--preset", default="launch")
    ap.add_argument("--shift-rpm", type=float)
    ap.add_argument("-o", "--output", default="launch.png")
    a = ap.parse_args()

    graph = dg.Graph.load(a.graph)
    blocks = graph.blocks
    engine = next((b for b, t in blocks.items() if t in ("engine", "motor")), None)
    body = next(b for b, t in blocks.items() if t == "vehicle")
    gearbox = next((b for b, t in blocks.items() if t == "gearbox"), None)
    signals = [f"{body}.speed"] + ([f"{engine}.rpm"] if engine else []) + \
        ([f"{gearbox}.gear"] if gearbox else [])
    drive = {"scenario": a.scenario} if a.scenario else {"preset": a.preset}

    runs = [("graph's shift map", graph.simulate(signals=signals, **drive))]
    if a.shift_rpm and gearbox:
        runs.append((f"Python policy: up at {a.shift_rpm:.0f} rpm",
                     graph.simulate(signals=signals, shift_policy=upshift_at(a.shift_rpm),
                                    **drive)))

    panels = len(signals)
    fig, axes = plt.subplots(panels, 1, sharex=True, figsize=(8, 2.4 * panels))
    for label, r in runs:
        t100 = r.t_0_100
        text = f"{label}: 0-100 km/h {t100:.2f} s" if t100 else label
        i = 0
        if engine:
            axes[i].plot(r.t, r[f"{engine}.rpm"], label=text)
            axes[i].set_ylabel(f"{engine} speed (rpm)")
            i += 1
        axes[i].plot(r.t, 3.6 * r[f"{body}.speed"], label=text)
        axes[i].set_ylabel("vehicle speed (km/h)")
        if t100:
            axes[i].axvline(t100, ls=":", lw=0.8)
        i += 1
        if gearbox:
            axes[i].step(r.t, r[f"{gearbox}.gear"], where="post", label=text)
            axes[i].set_ylabel("gear")
        print(f"{label}: 0-100 km/h {t100} s, {len(r.shifts)} shifts, "
              f"stopped: {r.summary['stop_reason']}")
    axes[0].legend(loc="lower right", fontsize="small")
    axes[0].set_title(graph.name or a.graph)
    axes[-1].set_xlabel("time (s)")
    for ax in axes:
        ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(a.output, dpi=110)
    print(f"plot: {a.output}")


if __name__ == "__main__":
    main()
