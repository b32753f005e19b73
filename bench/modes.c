/* drivegraph-bench-modes: what a switch into a visited mode costs with the
 * mode cache (lib/solver/cache.c) and without it, in one process.
 *
 *   drivegraph-bench-modes GRAPH [STEPS]
 *
 * Steps the graph STEPS times (1 ms; default 5000) with its cache, and
 * reports how many of its mode changes were taken from the cache. Then,
 * in the mode the run ended in (a mode visited: its plan is in a slot),
 * times REPS changes of topology (dgp_solver_change_topology: the hooks,
 * the plan, the momentum projection, the tie forces) with the cache, and
 * as many with the cache freed (every one a full build): the median of 5
 * rounds each, and their ratio. Internal API: linked with the core. */
#include "solver/solver.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define REPS 20000
#define ROUNDS 5

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Median over ROUNDS of the µs per change of topology. */
static double per_change(dg_sim *sim) {
  double r[ROUNDS];
  for (int k = 0; k < ROUNDS; k++) {
    double t0 = now();
    for (int i = 0; i < REPS; i++)
      if (dgp_solver_change_topology(sim) != DG_OK)
        return -1.0;
    r[k] = (now() - t0) / REPS * 1e6;
  }
  qsort(r, ROUNDS, sizeof r[0], cmp);
  return r[ROUNDS / 2];
}

#define USAGE "usage: drivegraph-bench-modes GRAPH [STEPS]\n"

int main(int argc, char **argv) {
  if (argc == 2 && strcmp(argv[1], "--help") == 0) {
    printf(USAGE "Times a switch into a visited mode with the mode cache and built in full, after\n"
                 "STEPS steps of 1 ms (default 5000) of GRAPH (scripts/switches.py --write-graphs\n"
                 "writes clutch chains); lib/solver/cache.c, docs/performance.md.\n");
    return 0;
  }
  if (argc < 2 || argc > 3) {
    fprintf(stderr, "drivegraph-bench-modes: %s\n" USAGE,
            argc < 2 ? "no graph file given" : "one graph and one step count at most");
    return 2;
  }
  long steps = 5000;
  if (argc > 2) {
    char *end;
    errno = 0;
    steps = strtol(argv[2], &end, 10);
    if (errno || end == argv[2] || *end || steps < 0 || steps > 100000000) {
      fprintf(stderr, "drivegraph-bench-modes: STEPS: expected a whole number from 0 to 1e8 "
                      "(got '%s')\n",
              argv[2]);
      return 2;
    }
  }
  dg_error err;
  dg_graph *g = dg_graph_load_file(NULL, argv[1], &err);
  dg_sim *sim = g ? dg_sim_new(g, &err) : NULL;
  if (!sim) {
    fprintf(stderr, "drivegraph-bench-modes: %s: %s\n", argv[1], err.text);
    dg_graph_free(g);
    return 1;
  }
  if (!sim->cache) {
    printf("%s: no mode cache (its plan is over the budget, or its kinematics vary)\n", argv[1]);
    dg_sim_free(sim);
    dg_graph_free(g);
    return 0;
  }
  for (long k = 0; k < steps; k++)
    if (dg_sim_step(sim, 1e-3) != DG_OK) {
      fprintf(stderr, "drivegraph-bench-modes: %s: %s\n", argv[1], dg_sim_last_error(sim)->text);
      dg_sim_free(sim);
      dg_graph_free(g);
      return 1;
    }
  long hits, misses, fail;
  dgp_cache_stats(sim, &hits, &misses, &fail);
  double cached = per_change(sim);
  dgp_cache_free(sim);
  double full = per_change(sim);
  printf("%s: %ld steps, %ld mode changes: %ld from the cache, %ld built\n", argv[1], steps,
         hits + misses, hits, misses);
  printf("a switch into a visited mode: %.3f us with the cache, %.3f us built (ratio %.2f)\n",
         cached, full, full > 0.0 ? cached / full : 0.0);
  dg_sim_free(sim);
  dg_graph_free(g);
  return cached < 0.0 || full < 0.0;
}
