"""drivegraph: simulate vehicle drivetrains built as graphs of blocks.

    import drivegraph as dg
    g = dg.Graph.load("graphs/sedan_rwd_automatic.json")
    r = g.simulate(scenario="graphs/scenarios/launch.json")
    r.t, r["engine.rpm"], r.t_0_100, r.shifts

The numbers are libdrivegraph's (the package is a CFFI module over it):
the same as `drivegraph sim` and `drivegraph sweep` print, bit for bit.
See docs/python.md.
"""
from ._core import (CallbackError, Error, Graph, GraphError, Result, Scenario, ScenarioError,
                    ShiftContext, Simulation, SimulationError, StepContext, TyreState, UsageError,
                    of_time, validate)
from ._drivegraph import ffi as _ffi
from ._drivegraph import lib as _lib
from ._sweep import expand_variants, sweep

__version__ = "0.1.0"
library_version = __version__

__all__ = ["Error", "GraphError", "ScenarioError", "SimulationError", "UsageError",
           "CallbackError", "Graph", "Scenario", "Simulation", "Result", "ShiftContext",
           "StepContext", "TyreState", "of_time",
           "validate", "sweep", "expand_variants"]
