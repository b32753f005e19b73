/* drivegraph-bench-floor: what a step generated for one mode would cost if
 * it kept the blocks' hooks as they are (issue 19, part 7's design input).
 *
 *   drivegraph-bench-floor GRAPH [STEPS]
 *
 * A step specialized for a mode removes the framework's generic work (the
 * plan's loops, the bookkeeping of events, inputs and segments) but, unless
 * the blocks' code is compiled into it, still calls each block's
 * torque_downstream through its class table with a dg_ctx. This program
 * measures that floor on a graph whose mode needs nothing else: the dense
 * ACCEL stage with B = M⁻¹ Gᵀ, no lossy meshes, no ties, no states, no
 * pre/post/event hooks, no timed inputs (graphs/bench/axle_baseline.json).
 * Its step is what such a generated step would be, written out: the SPEEDS
 * stage over the plan's rows, the hooks with the energy audit's powers,
 * q̇ = B τ, RK4, the audit's quadrature and the finiteness check.
 *
 * It runs the graph with dg_sim_step and with the floor step, from the same
 * start, checks that the two agree to the bit (the same operations in the
 * same order), then times them alternately, the median of 7 runs of STEPS
 * steps (default 10000, 1 ms) each, by the process's CPU clock, and prints
 * both and their ratio. Internal API: linked with the core. */
#include "solver/solver.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define RUNS 7
#define DT 1e-3
#define MAX_DOF 8

static double cpu_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Why the mode is outside what the floor step covers, or NULL. */
static const char *unsupported(const dg_sim *sim) {
  const dg_solver *sv = &sim->sv;
  if (sv->tree.on || !sv->use_B)
    return "its mode does not use the dense ACCEL stage with B";
  if (sv->ndof > MAX_DOF)
    return "its mode has more than 8 DOFs";
  if (sv->ws.nmesh > 0 || sv->ws.nactive > 0)
    return "its mode has lossy meshes or ties";
  if (sim->ns > 0 || sim->n_pre > 0 || sim->n_post > 0 || sim->n_events > 0 || sim->n_timed > 0)
    return "it has states, pre/post hooks, events or timed inputs";
  if (sv->variable_kinematics || sv->mot.np > 0 || sv->n_multi > 0 || sim->n_slots > 0)
    return "its mode has variable kinematics, prescribed speeds, rows of 3+ DOFs or bound signals";
  return NULL;
}

/* The floor's stage: x = G q (the plan's rows), τ from the hooks, q̇ = B τ. */
static void stage(dg_sim *sim, double t, const double *q, double *dq, double *pw) {
  const dg_solver *sv = &sim->sv;
  double *restrict x = sv->xw, *restrict tau = sv->tau;
  int nn = sim->nn, nd = sv->ndof;
  for (int k = 0, n = sv->n_single; k < n; k++)
    x[sv->single_node[k]] = sv->single_val[k] * q[sv->single_dof[k]];
  for (int k = 0, n = sv->n_pair; k < n; k++)
    x[sv->pair_node[k]] = sv->pair_val[2 * k] * q[sv->pair_dof[2 * k]] +
                          sv->pair_val[2 * k + 1] * q[sv->pair_dof[2 * k + 1]];
  memset(tau, 0, sizeof(double) * (size_t)nn);
  dg_ctx *ctx = &sim->ctx;
  ctx->t = t;
  ctx->speed = x;
  const dg_hook_entry *h = sim->torque;
  for (int i = 0, n = sim->n_torque; i < n; i++) {
    ctx->power = 0.0;
    h[i].fn(h[i].b, ctx);
    pw[i] = ctx->power;
  }
  const double *b = sv->B;
  for (int i = 0; i < nd; i++) {
    double s = 0.0;
    for (int j = 0; j < nn; j++)
      s += b[(size_t)i * (size_t)nn + (size_t)j] * tau[j];
    dq[i] = s;
  }
}

/* One step of the floor: RK4 over the mode's DOFs, the audit's quadrature of
 * each hook's power, the committed speeds. False on a non-finite value. */
static bool floor_step(dg_sim *sim, double *work) {
  dg_solver *sv = &sim->sv;
  int nd = sv->ndof, nt = sim->n_torque;
  double t = sim->t, h = DT;
  double k1[MAX_DOF], k2[MAX_DOF], k3[MAX_DOF], k4[MAX_DOF], y[MAX_DOF], q0[MAX_DOF];
  double p[4][64];
  memcpy(q0, sv->q, sizeof(double) * (size_t)nd);
  stage(sim, t, q0, k1, p[0]);
  for (int i = 0; i < nd; i++)
    y[i] = q0[i] + 0.5 * h * k1[i];
  stage(sim, t + 0.5 * h, y, k2, p[1]);
  for (int i = 0; i < nd; i++)
    y[i] = q0[i] + 0.5 * h * k2[i];
  stage(sim, t + 0.5 * h, y, k3, p[2]);
  for (int i = 0; i < nd; i++)
    y[i] = q0[i] + h * k3[i];
  stage(sim, t + h, y, k4, p[3]);
  bool ok = true;
  for (int i = 0; i < nd; i++) {
    double v = q0[i] + h / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]);
    ok = ok && isfinite(v);
    sv->q[i] = v;
  }
  for (int i = 0; i < nt; i++)
    work[i] += h / 6.0 * (p[0][i] + 2.0 * p[1][i] + 2.0 * p[2][i] + p[3][i]);
  sim->t = t + h;
  return ok;
}

static dg_sim *start(const dg_graph *g) {
  dg_error err;
  dg_sim *sim = dg_sim_new(g, &err);
  if (sim && dg_sim_start(sim, &err) != DG_OK) {
    dg_sim_free(sim);
    sim = NULL;
  }
  if (!sim)
    fprintf(stderr, "drivegraph-bench-floor: %s\n", err.text);
  return sim;
}

/* CPU seconds of `steps` steps from the start, with the framework or the
 * floor; the end's DOF speeds in q_end. */
static double run(const dg_graph *g, long steps, bool floor, double *q_end, int *nd) {
  dg_sim *sim = start(g);
  if (!sim)
    return -1.0;
  double work[64] = {0};
  bool ok = true;
  double t0 = cpu_now();
  for (long s = 0; s < steps && ok; s++)
    ok = floor ? floor_step(sim, work) : dg_sim_step(sim, DT) == DG_OK;
  double el = cpu_now() - t0;
  *nd = sim->sv.ndof;
  memcpy(q_end, sim->sv.q, sizeof(double) * (size_t)*nd);
  dg_sim_free(sim);
  return ok ? el : -1.0;
}

int main(int argc, char **argv) {
  if (argc == 2 && strcmp(argv[1], "--help") == 0) {
    printf("usage: drivegraph-bench-floor GRAPH [STEPS]\n"
           "Times GRAPH's step with dg_sim_step and as a step written out for its mode\n"
           "that keeps the blocks' hooks (bench/floor.c), checks that the two agree to\n"
           "the bit, and prints both and their ratio (median of %d runs of STEPS steps\n"
           "of 1 ms, default 10000). Exit status: 0 ok, 1 a graph it cannot load or\n"
           "does not cover, 2 usage error, 3 the two steps disagree.\n",
           RUNS);
    return 0;
  }
  if (argc < 2) {
    fprintf(stderr, "drivegraph-bench-floor: no graph file given\n");
    return 2;
  }
  if (argc > 3) {
    fprintf(stderr, "drivegraph-bench-floor: one graph file and STEPS expected (got '%s' too)\n",
            argv[3]);
    return 2;
  }
  char *end = NULL;
  errno = 0;
  long steps = argc > 2 ? strtol(argv[2], &end, 10) : 10000;
  if (argc > 2 && (errno || *end || steps < 1 || steps > 100000000)) {
    fprintf(stderr, "drivegraph-bench-floor: STEPS: expected a whole number 1 to 1e8, got '%s'\n",
            argv[2]);
    return 2;
  }
  dg_error err;
  dg_graph *g = dg_graph_load_file(NULL, argv[1], &err);
  if (!g) {
    fprintf(stderr, "drivegraph-bench-floor: %s: %s\n", argv[1], err.text);
    return 1;
  }
  dg_sim *probe = start(g);
  const char *why = probe ? unsupported(probe) : "it does not start";
  if (probe && (probe->n_torque > 64 || probe->sv.ndof < 1))
    why = "it has more than 64 torque hooks or no DOF";
  int nn = probe ? probe->nn : 0, nt = probe ? probe->n_torque : 0;
  dg_sim_free(probe);
  if (why) {
    fprintf(stderr, "drivegraph-bench-floor: %s: not covered: %s\n", argv[1], why);
    dg_graph_free(g);
    return 1;
  }
  double qf[MAX_DOF], qb[MAX_DOF];
  int nd = 0;
  double tf[RUNS], tb[RUNS];
  int rc = 0;
  for (int r = 0; r < RUNS && rc == 0; r++) {
    tf[r] = run(g, steps, false, qf, &nd);
    tb[r] = run(g, steps, true, qb, &nd);
    if (tf[r] < 0.0 || tb[r] < 0.0)
      rc = 1;
    else if (memcmp(qf, qb, sizeof(double) * (size_t)nd) != 0)
      rc = 3;
  }
  if (rc == 3)
    fprintf(stderr,
            "drivegraph-bench-floor: the floor step and dg_sim_step disagree "
            "(q[0] %.17g vs %.17g)\n",
            qb[0], qf[0]);
  if (rc == 0) {
    qsort(tf, RUNS, sizeof *tf, cmp);
    qsort(tb, RUNS, sizeof *tb, cmp);
    double nf = tf[RUNS / 2] / (double)steps * 1e9, nb = tb[RUNS / 2] / (double)steps * 1e9;
    printf("graph:            %s (%d DOFs, %d nodes, %d torque hooks)\n", argv[1], nd, nn, nt);
    printf("framework:        %.0f ns per step (median of %d, %ld steps)\n", nf, RUNS, steps);
    printf("floor:            %.0f ns per step (the same step specialized, hooks kept; "
           "bit for bit the same speeds)\n",
           nb);
    printf("framework/floor:  %.2f\n", nf / nb);
  }
  dg_graph_free(g);
  return rc;
}
