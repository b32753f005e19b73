/* drivegraph bench: the cost of a step, measured the same way for every graph.
 *
 * The graph runs the built-in launch input pattern (dg_batch_launch_inputs:
 * full throttle from rest, so automatic gearboxes shift and the topology
 * changes on the way) without output. One untimed warm-up run (caches,
 * branch predictors, CPU clock) is followed by R timed runs, each on a new
 * simulation; the median is reported with the spread. Only the stepping
 * loop is timed (setting the four inputs each step included), not the
 * creation of the simulation, and by the thread's CPU clock: on a shared
 * machine the time the thread spends descheduled is not the step's cost
 * (on an idle one the two clocks agree).
 *
 * With a hand-written baseline's graph twin (graphs/bench/sedan_baseline.json
 * or axle_baseline.json, found by its name) the baseline (tests/baseline_
 * sedan.c, baseline_axle.c, linked from the dgbaseline library) runs the
 * same way, and the framework/baseline cost ratio is printed once the two
 * trajectories are seen to agree. */
#include "plugin.h"
#include "tool.h"

#include "tests/baseline_axle.h"
#include "tests/baseline_sedan.h"

#include <drivegraph/drivegraph.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define DEFAULT_STEPS 10000
#define DEFAULT_REPS 5
#define MAX_REPS 1000
/* The trajectories of a baseline and its twin agree to ~1e-15 (see
 * tests/test_baseline.c, test_baseline_axle.c); anything above this means
 * the graph was edited. */
#define AGREE_TOL 1e-9
#define MAX_COMPARED 3

typedef struct bench_opts {
  const char *graph;
  long steps;
  double dt;
  long reps;
  opt_list plugins;
} bench_opts;

static const option_def bench_options[] = {
    {.name = "steps", OPT_INT_AT(bench_opts, steps), .arg = "N", .min = 1, .max = 1e9,
     .help = "steps per run (default 10000)"},
    {.name = "dt", OPT_SECONDS_AT(bench_opts, dt), .arg = "s",
     .help = "step size (default 0.001)"},
    {.name = "reps", OPT_INT_AT(bench_opts, reps), .arg = "R", .min = 1, .max = MAX_REPS,
     .help = "timed runs, 1 to 1000 (default 5)"},
    OPT_PLUGIN_AT(bench_opts, plugins),
    {0},
};

/* ------------------------------------------------------------------------ */
/* Runs                                                                     */

/* CPU time of the calling thread (s). */
static double cpu_seconds(void) {
  struct timespec ts;
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
    return now_seconds();
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* What the untimed warm-up run records. */
typedef struct bench_info {
  int dof_min, dof_max, nodes;
  long topology_changes;
  double final[MAX_COMPARED]; /* the baseline's compared values at the end, if any */
} bench_info;

/* ------------------------------------------------------------------------ */
/* The hand-written baselines                                               */

/* A baseline and how to run and compare it: the launch from rest (the
 * baselines hold full throttle, the only input that reaches them), then
 * the values compared with the twin's signals at the end. */
typedef struct baseline_def {
  const char *graph_name; /* the twin graph's "name" */
  const char *source;     /* for the report */
  const char *signals[MAX_COMPARED]; /* the twin's signals, in final()'s order */
  size_t size;                       /* bytes of the baseline's state */
  void (*init)(void *state);
  void (*step)(void *state, double dt);
  void (*final)(const void *state, double *values, long *topology_changes);
} baseline_def;

static void sedan_init(void *state) {
  baseline_sedan_params p;
  baseline_sedan_defaults(&p);
  baseline_sedan_init(state, &p);
}
static void sedan_step(void *state, double dt) { baseline_sedan_step(state, 1.0, dt); }
static void sedan_final(const void *state, double *values, long *topology_changes) {
  const baseline_sedan *s = state;
  values[0] = baseline_sedan_engine_speed(s);
  values[1] = s->v;
  values[2] = s->x;
  *topology_changes = s->topology_changes;
}

static void axle_init(void *state) {
  baseline_axle_params p;
  baseline_axle_defaults(&p);
  baseline_axle_init(state, &p);
}
static void axle_step(void *state, double dt) { baseline_axle_step(state, dt); }
static void axle_final(const void *state, double *values, long *topology_changes) {
  const baseline_axle *s = state;
  values[0] = baseline_axle_source_speed(s);
  values[1] = s->w[BA_LEFT];
  values[2] = s->w[BA_RIGHT];
  *topology_changes = 0;
}

static const baseline_def baselines[] = {
    {BASELINE_SEDAN_NAME, "tests/baseline_sedan.c", {"engine.omega", "body.speed", "body.x"},
     sizeof(baseline_sedan), sedan_init, sedan_step, sedan_final},
    {BASELINE_AXLE_NAME, "tests/baseline_axle.c", {"motor.omega", "left.omega", "right.omega"},
     sizeof(baseline_axle), axle_init, axle_step, axle_final},
};

static const baseline_def *baseline_for(const dg_graph *g) {
  for (size_t i = 0; i < sizeof baselines / sizeof baselines[0]; i++)
    if (strcmp(dg_graph_name(g), baselines[i].graph_name) == 0)
      return &baselines[i];
  return NULL;
}

/* One run of the launch; returns the seconds spent stepping, or a negative
 * number after printing the failure. `info` (warm-up only) is filled, with
 * the signals `bl` compares when there is a baseline. */
static double run_graph(const bench_opts *o, const dg_graph *g, const baseline_def *bl,
                        bench_info *info) {
  dg_error err;
  dg_sim *sim = dg_sim_new(g, &err);
  if (!sim) {
    print_error(stderr, &err, o->graph);
    return -1.0;
  }
  if (info) {
    info->dof_min = info->dof_max = dg_sim_dof_count(sim);
    info->nodes = dg_sim_node_count(sim);
  }
  double start = cpu_seconds();
  for (long k = 0; k < o->steps; k++) {
    dg_batch_launch_inputs(sim, (double)k * o->dt);
    if (dg_sim_step(sim, o->dt) != DG_OK) {
      fprintf(stderr, "drivegraph bench: step %ld (from t = %g s) failed:\n", k + 1,
              (double)k * o->dt);
      print_error(stderr, dg_sim_last_error(sim), o->graph);
      dg_sim_free(sim);
      return -1.0;
    }
    if (info) {
      int n = dg_sim_dof_count(sim);
      info->dof_min = n < info->dof_min ? n : info->dof_min;
      info->dof_max = n > info->dof_max ? n : info->dof_max;
    }
  }
  double seconds = cpu_seconds() - start;
  if (info) {
    info->topology_changes = dg_sim_topology_changes(sim);
    for (int i = 0; bl && i < MAX_COMPARED; i++) /* NaN for a missing signal */
      info->final[i] = dg_sim_signal(sim, dg_sim_signal_find(sim, bl->signals[i]));
  }
  dg_sim_free(sim);
  return seconds;
}

/* The baseline, run like the graph (the same launch every step). */
static double run_baseline(const bench_opts *o, const baseline_def *bl, bench_info *info) {
  void *s = malloc(bl->size);
  if (!s) {
    fprintf(stderr, "drivegraph bench: out of memory\n");
    return -1.0;
  }
  bl->init(s);
  double start = cpu_seconds();
  for (long k = 0; k < o->steps; k++)
    bl->step(s, o->dt);
  double seconds = cpu_seconds() - start;
  if (info)
    bl->final(s, info->final, &info->topology_changes);
  free(s);
  return seconds;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

typedef struct timing {
  double median, min, max; /* ns per step */
} timing;

static timing summarize(double *ns, int n) {
  qsort(ns, (size_t)n, sizeof *ns, cmp_double);
  double med = n % 2 ? ns[n / 2] : 0.5 * (ns[n / 2 - 1] + ns[n / 2]);
  return (timing){med, ns[0], ns[n - 1]};
}

/* Warm-up, then o->reps timed runs of the graph (g != NULL) or of the
 * baseline `bl`; a graph's warm-up records the signals `bl` compares. */
static int measure(const bench_opts *o, const dg_graph *g, const baseline_def *bl,
                   bench_info *info, timing *out) {
  double *ns = calloc((size_t)o->reps, sizeof *ns);
  if (!ns) {
    fprintf(stderr, "drivegraph bench: out of memory\n");
    return EXIT_INVALID;
  }
  int rc = EXIT_OK;
  for (int r = -1; r < o->reps && rc == EXIT_OK; r++) {
    bench_info *rec = r < 0 ? info : NULL;
    double s = g ? run_graph(o, g, bl, rec) : run_baseline(o, bl, rec);
    if (s < 0.0)
      rc = EXIT_INVALID;
    else if (r >= 0)
      ns[r] = 1e9 * s / (double)o->steps;
  }
  if (rc == EXIT_OK)
    *out = summarize(ns, (int)o->reps);
  free(ns);
  return rc;
}

static double rel_diff(double a, double b) {
  return fabs(a - b) / fmax(fmax(fabs(a), fabs(b)), 1.0);
}

/* The baseline's cost, once its trajectory is seen to match the graph's. */
static int bench_baseline(const bench_opts *o, const baseline_def *def, const bench_info *fw,
                          const timing *tf) {
  bench_info bl;
  timing tb;
  int rc = measure(o, NULL, def, &bl, &tb);
  if (rc != EXIT_OK)
    return rc;
  double diff = 0.0;
  for (int i = 0; i < MAX_COMPARED; i++) { /* a NaN (missing signal) sticks and fails below */
    double d = rel_diff(fw->final[i], bl.final[i]);
    diff = d > diff || isnan(d) ? d : diff;
  }
  if (!(diff <= AGREE_TOL) || fw->topology_changes != bl.topology_changes) {
    printf("baseline:           not compared: this graph's launch differs from "
           "%s (relative difference %.2g, %ld vs %ld topology changes); "
           "was the graph edited?\n",
           def->source, diff, fw->topology_changes, bl.topology_changes);
    return EXIT_OK;
  }
  printf("baseline:           %.0f ns per step median (min %.0f, max %.0f), hand-written "
         "%s, same launch (relative difference %.1e)\n",
         tb.median, tb.min, tb.max, def->source, diff);
  printf("framework/baseline: %.2f\n", tf->median / tb.median);
  return EXIT_OK;
}

static int cmd_bench(const command *cmd, int argc, char **argv) {
  bench_opts o = {.steps = DEFAULT_STEPS, .dt = 0.001, .reps = DEFAULT_REPS};
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
  o.graph = args.v[0];
  dg_error err;
  dg_graph *g = dg_graph_load_file(reg, o.graph, &err);
  if (!g) {
    print_error(stderr, &err, o.graph);
    dg_registry_free(reg);
    return EXIT_INVALID;
  }
  const baseline_def *bl = baseline_for(g);
  bench_info info;
  timing t;
  rc = measure(&o, g, bl, &info, &t);
  if (rc == EXIT_OK) {
    printf("graph:              %s (%d blocks, %d nodes, ", o.graph, dg_graph_block_count(g),
           info.nodes);
    if (info.dof_min == info.dof_max)
      printf("%d DOFs)\n", info.dof_min);
    else
      printf("%d-%d DOFs)\n", info.dof_min, info.dof_max);
    printf("run:                launch, %ld steps of %g s (%g s), median of %ld after a "
           "warm-up run\n",
           o.steps, o.dt, (double)o.steps * o.dt, o.reps);
    printf("topology changes:   %ld per run\n", info.topology_changes);
    printf("ns per step:        %.0f median (min %.0f, max %.0f)\n", t.median, t.min, t.max);
    printf("steps per second:   %.0f\n", 1e9 / t.median);
    printf("real-time factor:   %.0f at dt = %g s\n", o.dt * 1e9 / t.median, o.dt);
    fflush(stdout);
    if (bl)
      rc = bench_baseline(&o, bl, &info, &t);
  }
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
            "With graphs/bench/sedan_baseline.json or axle_baseline.json (recognized\n"
            "by their names) the hand-written baseline tests/baseline_sedan.c or\n"
            "baseline_axle.c runs the same way and the framework/baseline cost ratio\n"
            "is printed, once their trajectories agree.\n"
            "GRAPH is graph JSON or a YAML vehicle config (.yaml, .yml).\n",
    .options = bench_options,
    .footer = "Exit status: 0 ok, 1 invalid graph, a plugin failed to load or a failed\n"
              "simulation, 2 usage error.\n",
    .run = cmd_bench,
};
