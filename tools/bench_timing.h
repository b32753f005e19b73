/* The cost of a simulation step, measured the same way for every graph:
 * `drivegraph bench` (tools/cmd_bench.c) and the bench program
 * drivegraph-bench (bench/main.c), which times the hand-written baselines
 * the same way too.
 *
 * The graph runs the built-in launch input pattern (dg_batch_launch_inputs:
 * full throttle from rest, so automatic gearboxes shift and the topology
 * changes on the way) without output. One untimed warm-up run (caches,
 * branch predictors, CPU clock) is followed by R timed runs, each on a new
 * simulation; the median is reported with the spread. Only the stepping
 * loop is timed (setting the four inputs each step included), not the
 * creation of the simulation, and by the thread's CPU clock: on a shared
 * machine the time the thread spends descheduled is not the step's cost
 * (on an idle one the two clocks agree). */
#ifndef DG_TOOL_BENCH_TIMING_H
#define DG_TOOL_BENCH_TIMING_H

#include "tool.h"

#include <drivegraph/drivegraph.h>

#include <stdbool.h>

#define BENCH_DEFAULT_STEPS 10000
#define BENCH_DEFAULT_DT 0.001
#define BENCH_DEFAULT_REPS 5
#define BENCH_MAX_REPS 1000

/* What is run, and how often. */
typedef struct bench_run {
  const char *who;   /* the program in messages ("drivegraph bench") */
  const char *graph; /* the graph file, in messages */
  long steps;        /* per run */
  double dt;         /* s */
  long reps;         /* timed runs, after the warm-up */
  bool compile;      /* the warm-up run compiles the modes it visited (dg_sim_compile) */
  bool lean;         /* the runs keep neither work nor angles (dg_sim_set_keep 0) */
} bench_run;

/* The option table's entries for the run (--steps, --dt, --reps), the same
 * in every program that has them: `f` is the bench_run field of the
 * options struct S, set by bench_run_defaults before parsing. Not
 * formatted: clang-format does not see the entries of a table in a macro. */
/* clang-format off */
#define BENCH_RUN_OPTIONS(S, f)                                                             \
  {.name = "steps", OPT_INT_AT(S, f.steps), .arg = "N", .min = 1, .max = 1e9,               \
   .help = "steps per run (default 10000)"},                                                \
  {.name = "dt", OPT_SECONDS_AT(S, f.dt), .arg = "s", .help = "step size (default 0.001)"}, \
  {.name = "reps", OPT_INT_AT(S, f.reps), .arg = "R", .min = 1, .max = BENCH_MAX_REPS,      \
   .help = "timed runs, 1 to 1000 (default 5)"},                                            \
  {.name = "compile", OPT_FLAG_AT(S, f.compile),                                            \
   .help = "compile the modes the warm-up run visited, at its end, for the timed runs "  \
           "(dg_sim_compile; experimental)"},                                             \
  {.name = "lean", OPT_FLAG_AT(S, f.lean),                                                  \
   .help = "keep neither the energy audit's work nor the shafts' angles, as a hand-written " \
           "step (dg_sim_set_keep 0)"}
/* clang-format on */

/* ns per step over the timed runs. */
typedef struct bench_timing {
  double median, min, max;
} bench_timing;

/* What a graph's warm-up run records. */
typedef struct bench_graph_info {
  int dof_min, dof_max, nodes;
  long topology_changes;
  long stages, compiled_stages; /* --compile: the last timed run's RK4 stages, and those compiled */
} bench_graph_info;

/* One run of r->steps steps: the seconds spent stepping (by
 * bench_cpu_seconds), or a negative number after printing why it failed.
 * `warm_up` is true for the untimed first run, which records what the
 * caller wants to know about the run. */
typedef double (*bench_run_fn)(void *ctx, const bench_run *r, bool warm_up);

/* The defaults of the options, for the program `who`. */
bench_run bench_run_defaults(const char *who);

/* CPU time of the calling thread (s). */
double bench_cpu_seconds(void);

/* One warm-up call of `run`, then r->reps timed ones, summarized as ns per
 * step in `out`. EXIT_OK, or EXIT_INVALID after a message (a failed run,
 * out of memory). */
int bench_measure(const bench_run *r, bench_run_fn run, void *ctx, bench_timing *out);

/* bench_measure for graph `g` through the launch. The warm-up fills `info`
 * and, when n > 0, the values of the signals `signals[0..n-1]` at its end
 * into `final` (NaN for a signal the graph does not have). */
int bench_graph(const bench_run *r, const dg_graph *g, int n, const char *const *signals,
                double *final, bench_graph_info *info, bench_timing *out);

/* R rounds of one timed run of `a` and one of `b` (a first in even
 * rounds, b in odd ones), after both had their warm-up: the median and
 * spread of the ratio of each round's times a/b in `ratio`. A slow phase
 * of a shared machine slows both runs of a round, where the ratio of two
 * medians measured one after the other takes it whole. EXIT_OK, or
 * EXIT_INVALID after a message. */
int bench_paired(const bench_run *r, bench_run_fn a, void *actx, bench_run_fn b, void *bctx,
                 bench_timing *ratio);
/* bench_paired with `a` the graph's launch (after bench_graph: a compiled
 * graph runs compiled). */
int bench_graph_paired(const bench_run *r, const dg_graph *g, bench_run_fn b, void *bctx,
                       bench_timing *ratio);

/* The graph's report: its size, the run, the topology changes, ns per
 * step, steps per second and the real-time factor, one line each on
 * stdout (flushed). */
void bench_print_graph(const bench_run *r, const dg_graph *g, const bench_graph_info *info,
                       const bench_timing *t);

#endif
