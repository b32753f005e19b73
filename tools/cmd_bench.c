/* drivegraph bench: the cost of a step of any graph, measured the same way
 * for every graph (bench_timing.h: the launch, a warm-up run, the median of
 * R timed runs by the thread's CPU clock).
 *
 * The comparison with the hand-written baselines (bench/baseline_sedan.c,
 * baseline_axle.c) is not here: it is the bench program drivegraph-bench
 * (bench/main.c), which is not installed, so the tool carries no test
 * code. */
#include "bench_timing.h"
#include "plugin.h"
#include "tool.h"

#include <drivegraph/drivegraph.h>

#include <stdio.h>

typedef struct bench_opts {
  bench_run run;
  opt_list plugins;
} bench_opts;

static const option_def bench_options[] = {
    BENCH_RUN_OPTIONS(bench_opts, run),
    OPT_PLUGIN_AT(bench_opts, plugins),
    {0},
};

static int cmd_bench(const command *cmd, int argc, char **argv) {
  bench_opts o = {.run = bench_run_defaults("drivegraph bench")};
  operands args;
  int rc = parse_options(cmd, argc, argv, &o, &args);
  if (rc == EXIT_OK && args.n == 0)
    rc = usage_error(cmd, "no graph file given");
  if (rc == EXIT_OK && args.n > 1)
    rc = usage_error(cmd, "one graph file expected (got '%s' too)", args.v[1]);
  /* the built-in classes plus the plugins' (outlives the graph) */
  dg_registry *reg = rc == EXIT_OK ? plugin_registry(o.plugins.n, o.plugins.v) : NULL;
  if (rc == EXIT_OK && !reg)
    rc = EXIT_INVALID; /* plugin_registry said why */
  options_free(cmd, &o);
  if (rc != EXIT_OK)
    return rc == HELP_SHOWN ? EXIT_OK : rc;
  o.run.graph = args.v[0];
  dg_error err;
  dg_graph *g = dg_graph_load_file(reg, o.run.graph, &err);
  if (!g) {
    print_error(stderr, &err, o.run.graph);
    dg_registry_free(reg);
    return EXIT_INVALID;
  }
  bench_graph_info info;
  bench_timing t;
  rc = bench_graph(&o.run, g, 0, NULL, NULL, &info, &t);
  if (rc == EXIT_OK)
    bench_print_graph(&o.run, g, &info, &t);
  dg_graph_free(g);
  dg_registry_free(reg);
  return rc;
}

const command dg_cmd_bench = {
    .name = "bench",
    .operands = "GRAPH",
    .summary = "Measure the cost of a simulation step (ns per RK4 step).",
    .help = "Runs the graph through a fixed launch without output: full throttle from rest,\n"
            "brake and clutch pedal released, gear input 1 + floor(t / 2 s) (manual\n"
            "gearboxes shift up every 2 s; automatic ones shift on their own), so mode\n"
            "changes are part of the cost. After one untimed warm-up run it times R runs\n"
            "(a new simulation each; only the stepping loop is timed, by the thread's\n"
            "CPU clock) and prints the median and spread of the ns per step, steps per\n"
            "second, the real-time factor at dt and the number of topology changes per\n"
            "run.\n\n"
            "The framework/baseline cost ratio of graphs/bench/sedan_baseline.json and\n"
            "axle_baseline.json against their hand-written C twins is printed by the\n"
            "bench program drivegraph-bench (`make bench`; built, not installed).\n"
            "GRAPH is graph JSON or a YAML vehicle config (.yaml, .yml).\n",
    .options = bench_options,
    .footer = "Exit status: 0 ok, 1 invalid graph, a plugin failed to load or a failed\n"
              "simulation, 2 usage error.\n",
    .run = cmd_bench,
};
