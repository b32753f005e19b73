/* drivegraph-bench: the framework against the hand-written baselines.
 *
 * bench/baseline_sedan.c and baseline_axle.c are plain C twins of
 * graphs/bench/sedan_baseline.json and axle_baseline.json (found by the
 * graph's "name"). The graph is timed as `drivegraph bench` times any graph
 * (tools/bench_timing.h: the launch, a warm-up run, the median of R timed
 * runs), then the baseline runs the same launch the same way, and the
 * framework/baseline cost ratio is printed once the two trajectories are
 * seen to agree.
 *
 * This program is built with the tool (it reuses the tool's option parser
 * and timing objects) but not installed: the baselines are test code, and
 * the baseline suites (tests/test_baseline.c, test_baseline_axle.c) link
 * them too. `make bench` runs it on both twins. */
#include "baseline_axle.h"
#include "baseline_sedan.h"

#include "bench_timing.h"
#include "tool.h"

#include <drivegraph/drivegraph.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROGRAM "drivegraph-bench"
/* The trajectories of a baseline and its twin agree to ~1e-15 (see
 * tests/test_baseline.c, test_baseline_axle.c); anything above this means
 * the graph was edited. */
#define AGREE_TOL 1e-9
#define MAX_COMPARED 3

/* ------------------------------------------------------------------------ */
/* The hand-written baselines                                               */

/* A baseline and how to run and compare it: the launch from rest (the
 * baselines hold full throttle, the only input that reaches them), then
 * the values compared with the twin's signals at the end. */
typedef struct baseline_def {
  const char *graph_name;            /* the twin graph's "name" */
  const char *source;                /* for the report */
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
    {.graph_name = BASELINE_SEDAN_NAME,
     .source = "bench/baseline_sedan.c",
     .signals = {"engine.omega", "body.speed", "body.x"},
     .size = sizeof(baseline_sedan),
     .init = sedan_init,
     .step = sedan_step,
     .final = sedan_final},
    {.graph_name = BASELINE_AXLE_NAME,
     .source = "bench/baseline_axle.c",
     .signals = {"motor.omega", "left.omega", "right.omega"},
     .size = sizeof(baseline_axle),
     .init = axle_init,
     .step = axle_step,
     .final = axle_final},
};
enum { NUM_BASELINES = sizeof baselines / sizeof baselines[0] };

static const baseline_def *baseline_for(const dg_graph *g) {
  for (int i = 0; i < NUM_BASELINES; i++)
    if (strcmp(dg_graph_name(g), baselines[i].graph_name) == 0)
      return &baselines[i];
  return NULL;
}

/* What a baseline's warm-up run records. */
typedef struct baseline_result {
  double final[MAX_COMPARED];
  long topology_changes;
} baseline_result;

typedef struct baseline_ctx {
  const baseline_def *def;
  baseline_result *result;
} baseline_ctx;

/* One run of the baseline, like the graph's (the same launch every step);
 * a bench_run_fn. */
static double run_baseline(void *ctx, const bench_run *r, bool warm_up) {
  const baseline_ctx *c = ctx;
  void *s = malloc(c->def->size);
  if (!s) {
    fprintf(stderr, "%s: out of memory\n", r->who);
    return -1.0;
  }
  c->def->init(s);
  double start = bench_cpu_seconds();
  for (long k = 0; k < r->steps; k++)
    c->def->step(s, r->dt);
  double seconds = bench_cpu_seconds() - start;
  if (warm_up)
    c->def->final(s, c->result->final, &c->result->topology_changes);
  free(s);
  return seconds;
}

static double rel_diff(double a, double b) {
  return fabs(a - b) / fmax(fmax(fabs(a), fabs(b)), 1.0);
}

/* The baseline's cost, once its trajectory is seen to match the graph's
 * (`fw`: the graph's values at the end of its warm-up run). */
static int bench_baseline(const bench_run *r, const dg_graph *g, const baseline_def *def,
                          const double *fw, long fw_topology_changes, const bench_timing *tf) {
  baseline_result bl;
  bench_timing tb;
  baseline_ctx c = {.def = def, .result = &bl};
  int rc = bench_measure(r, run_baseline, &c, &tb);
  if (rc != EXIT_OK)
    return rc;
  double diff = 0.0;
  for (int i = 0; i < MAX_COMPARED; i++) { /* a NaN (missing signal) sticks and fails below */
    double d = rel_diff(fw[i], bl.final[i]);
    diff = d > diff || isnan(d) ? d : diff;
  }
  if (!(diff <= AGREE_TOL) || fw_topology_changes != bl.topology_changes) {
    printf("baseline:           not compared: this graph's launch differs from "
           "%s (relative difference %.2g, %ld vs %ld topology changes); "
           "was the graph edited?\n",
           def->source, diff, fw_topology_changes, bl.topology_changes);
    return EXIT_OK;
  }
  printf("baseline:           %.0f ns per step median (min %.0f, max %.0f), hand-written "
         "%s, same launch (relative difference %.1e)\n",
         tb.median, tb.min, tb.max, def->source, diff);
  printf("framework/baseline: %.2f\n", tf->median / tb.median);
  fflush(stdout);
  /* the same ratio from runs in pairs (bench_paired): the acceptance's
   * figure on a shared machine, whose slow phases the medians above
   * measured one after the other take whole */
  bench_timing q;
  int rc2 = bench_graph_paired(r, g, run_baseline, &c, &q);
  if (rc2 != EXIT_OK)
    return rc2;
  printf("paired:             %.2f median of %ld rounds (min %.2f, max %.2f), each round one "
         "framework run and one baseline run, the order alternating\n",
         q.median, r->reps, q.min, q.max);
  return EXIT_OK;
}

/* ------------------------------------------------------------------------ */
/* main                                                                     */

typedef struct bench_opts {
  bench_run run;
} bench_opts;

static const option_def bench_options[] = {
    BENCH_RUN_OPTIONS(bench_opts, run),
    {0},
};

static const command bench_command = {
    .name = "bench",
    .program = PROGRAM,
    .operands = "GRAPH",
    .summary = "Compare the framework's cost of a step with the hand-written baselines'.",
    .help = "GRAPH is graphs/bench/sedan_baseline.json or axle_baseline.json (recognized\n"
            "by their names, so a copy elsewhere works too), the twins of the hand-written\n"
            "baselines bench/baseline_sedan.c and baseline_axle.c.\n\n"
            "The graph is timed as `drivegraph bench` times any graph (see its --help):\n"
            "a launch from rest at full throttle without output, one untimed warm-up\n"
            "run, then R timed runs of the stepping loop by the thread's CPU clock; the\n"
            "report gives the median and spread of the ns per step, steps per second, the\n"
            "real-time factor at dt and the topology changes per run. The baseline then\n"
            "runs the same launch the same way, and the framework/baseline cost ratio is\n"
            "printed once their trajectories agree; then R rounds of one run of each, the\n"
            "order alternating, give the ratio again as the median of each round's ratio\n"
            "(\"paired\": a slow phase of a shared machine slows both runs of a round).\n",
    .options = bench_options,
    .footer = "Exit status: 0 ok (also when an edited twin is not compared), 1 invalid graph,\n"
              "a graph without a baseline or a failed simulation, 2 usage error.\n",
};

int main(int argc, char **argv) {
  bench_opts o = {.run = bench_run_defaults(PROGRAM)};
  operands args;
  int rc = parse_options(&bench_command, argc, argv, &o, &args);
  if (rc == EXIT_OK && args.n == 0)
    rc = usage_error(&bench_command, "no graph file given");
  if (rc == EXIT_OK && args.n > 1)
    rc = usage_error(&bench_command, "one graph file expected (got '%s' too)", args.v[1]);
  options_free(&bench_command, &o);
  if (rc != EXIT_OK)
    return rc == HELP_SHOWN ? EXIT_OK : rc;
  o.run.graph = args.v[0];
  dg_error err;
  dg_graph *g = dg_graph_load_file(NULL, o.run.graph, &err);
  if (!g) {
    print_error(stderr, &err, o.run.graph);
    return EXIT_INVALID;
  }
  const baseline_def *bl = baseline_for(g);
  if (!bl) {
    fprintf(stderr,
            "%s: %s: no hand-written baseline for the graph \"%s\" (the baselines' twins are "
            "graphs/bench/sedan_baseline.json and axle_baseline.json); `drivegraph bench` "
            "times any graph\n",
            PROGRAM, o.run.graph, dg_graph_name(g));
    dg_graph_free(g);
    return EXIT_INVALID;
  }
  bench_graph_info info;
  bench_timing t;
  double final[MAX_COMPARED];
  rc = bench_graph(&o.run, g, MAX_COMPARED, bl->signals, final, &info, &t);
  if (rc == EXIT_OK) {
    bench_print_graph(&o.run, g, &info, &t);
    rc = bench_baseline(&o.run, g, bl, final, info.topology_changes, &t);
  }
  dg_graph_free(g);
  return rc;
}
