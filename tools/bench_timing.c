/* Timing a simulation step (bench_timing.h): the launch, the warm-up and
 * timed runs, the report. */
#include "bench_timing.h"

#include "tool.h"

#include <drivegraph/drivegraph.h>

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

bench_run bench_run_defaults(const char *who) {
  return (bench_run){
      .who = who, .steps = BENCH_DEFAULT_STEPS, .dt = BENCH_DEFAULT_DT, .reps = BENCH_DEFAULT_REPS};
}

double bench_cpu_seconds(void) {
  struct timespec ts;
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
    return now_seconds();
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static bench_timing summarize(double *ns, int n) {
  qsort(ns, (size_t)n, sizeof *ns, cmp_double);
  double med = n % 2 ? ns[n / 2] : 0.5 * (ns[n / 2 - 1] + ns[n / 2]);
  return (bench_timing){med, ns[0], ns[n - 1]};
}

int bench_measure(const bench_run *r, bench_run_fn run, void *ctx, bench_timing *out) {
  double *ns = calloc((size_t)r->reps, sizeof *ns);
  if (!ns) {
    fprintf(stderr, "%s: out of memory\n", r->who);
    return EXIT_INVALID;
  }
  int rc = EXIT_OK;
  for (long k = -1; k < r->reps && rc == EXIT_OK; k++) {
    double s = run(ctx, r, k < 0);
    if (s < 0.0)
      rc = EXIT_INVALID;
    else if (k >= 0)
      ns[k] = 1e9 * s / (double)r->steps;
  }
  if (rc == EXIT_OK)
    *out = summarize(ns, (int)r->reps);
  free(ns);
  return rc;
}

int bench_paired(const bench_run *r, bench_run_fn a, void *actx, bench_run_fn b, void *bctx,
                 bench_timing *ratio) {
  double *q = calloc((size_t)r->reps, sizeof *q);
  if (!q) {
    fprintf(stderr, "%s: out of memory\n", r->who);
    return EXIT_INVALID;
  }
  int rc = EXIT_OK;
  for (long k = 0; k < r->reps && rc == EXIT_OK; k++) {
    double sa, sb; /* a first in even rounds: a drift within a round cancels over two */
    if (k % 2 == 0) {
      sa = a(actx, r, false);
      sb = sa < 0.0 ? -1.0 : b(bctx, r, false);
    } else {
      sb = b(bctx, r, false);
      sa = sb < 0.0 ? -1.0 : a(actx, r, false);
    }
    if (sa < 0.0 || sb < 0.0)
      rc = EXIT_INVALID;
    else
      q[k] = sb > 0.0 ? sa / sb : 0.0;
  }
  if (rc == EXIT_OK)
    *ratio = summarize(q, (int)r->reps);
  free(q);
  return rc;
}

/* ------------------------------------------------------------------------ */
/* A graph through the launch                                               */

typedef struct graph_ctx {
  const dg_graph *g;
  int n; /* signals recorded at the warm-up's end */
  const char *const *signals;
  double *final;
  bench_graph_info *info;
} graph_ctx;

static double run_graph(void *ctx, const bench_run *r, bool warm_up) {
  const graph_ctx *c = ctx;
  bench_graph_info *info = warm_up ? c->info : NULL;
  dg_error err;
  dg_sim *sim = dg_sim_new(c->g, &err);
  if (!sim) {
    print_error(stderr, &err, r->graph);
    return -1.0;
  }
  if (r->lean && dg_sim_set_keep(sim, 0, &err) != DG_OK) {
    print_error(stderr, &err, r->graph);
    dg_sim_free(sim);
    return -1.0;
  }
  if (info) {
    info->dof_min = info->dof_max = dg_sim_dof_count(sim);
    info->nodes = dg_sim_node_count(sim);
  }
  double start = bench_cpu_seconds();
  for (long k = 0; k < r->steps; k++) {
    dg_batch_launch_inputs(sim, (double)k * r->dt);
    if (dg_sim_step(sim, r->dt) != DG_OK) {
      fprintf(stderr, "%s: step %ld (from t = %g s) failed:\n", r->who, k + 1, (double)k * r->dt);
      print_error(stderr, dg_sim_last_error(sim), r->graph);
      dg_sim_free(sim);
      return -1.0;
    }
    if (info) {
      int n = dg_sim_dof_count(sim);
      info->dof_min = n < info->dof_min ? n : info->dof_min;
      info->dof_max = n > info->dof_max ? n : info->dof_max;
    }
  }
  double seconds = bench_cpu_seconds() - start;
  /* --compile: the warm-up run's end compiles the modes it visited (the
   * graph keeps them: the timed runs' simulations take them) */
  if (warm_up && r->compile && dg_sim_compile(sim, &err) != DG_OK) {
    fprintf(stderr, "%s: --compile: %s\n", r->who, err.text);
    dg_sim_free(sim);
    return -1.0;
  }
  if (!warm_up) { /* the last timed run's */
    c->info->compiled_stages = dg_sim_compiled_stage_count(sim);
    c->info->stages = dg_sim_stage_count(sim);
  }
  if (info) {
    info->topology_changes = dg_sim_topology_changes(sim);
    for (int i = 0; i < c->n; i++) /* NaN for a missing signal */
      c->final[i] = dg_sim_signal(sim, dg_sim_signal_find(sim, c->signals[i]));
  }
  dg_sim_free(sim);
  return seconds;
}

int bench_graph(const bench_run *r, const dg_graph *g, int n, const char *const *signals,
                double *final, bench_graph_info *info, bench_timing *out) {
  graph_ctx c = {.g = g, .n = n, .signals = signals, .final = final, .info = info};
  return bench_measure(r, run_graph, &c, out);
}

int bench_graph_paired(const bench_run *r, const dg_graph *g, bench_run_fn b, void *bctx,
                       bench_timing *ratio) {
  bench_graph_info info = {0};
  graph_ctx c = {.g = g, .info = &info};
  return bench_paired(r, run_graph, &c, b, bctx, ratio);
}

void bench_print_graph(const bench_run *r, const dg_graph *g, const bench_graph_info *info,
                       const bench_timing *t) {
  printf("graph:              %s (%d blocks, %d nodes, ", r->graph, dg_graph_block_count(g),
         info->nodes);
  if (info->dof_min == info->dof_max)
    printf("%d DOFs)\n", info->dof_min);
  else
    printf("%d-%d DOFs)\n", info->dof_min, info->dof_max);
  printf("run:                launch, %ld steps of %g s (%g s), median of %ld after a "
         "warm-up run\n",
         r->steps, r->dt, (double)r->steps * r->dt, r->reps);
  printf("topology changes:   %ld per run\n", info->topology_changes);
  if (r->lean)
    printf("keeps:              neither the work nor the angles (--lean)\n");
  if (r->compile)
    printf("compiled stages:    %ld of the run's %ld RK4 stages (the modes the warm-up run "
           "visited, compiled at its end)\n",
           info->compiled_stages, info->stages);
  printf("ns per step:        %.0f median (min %.0f, max %.0f)\n", t->median, t->min, t->max);
  printf("steps per second:   %.0f\n", 1e9 / t->median);
  printf("real-time factor:   %.0f at dt = %g s\n", r->dt * 1e9 / t->median, r->dt);
  fflush(stdout);
}
