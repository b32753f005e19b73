/* The tree room (lib/solver/tree.c): the sparse solve of K = [[I, −Ã],
 * [Aᵀ, 0]] over a forest, against dense Gaussian elimination on random
 * systems of the same structure, and the ACCEL stage it replaces against
 * the dense one on whole simulations.
 *
 * Tolerances. The random systems have entries of order 1 (inertias 0.1-2,
 * coefficients 0.2-2 with signs, κ in (−0.5, 1)) on forests of up to 60
 * vertices whose pivots are sums of positive terms (no cancellation: see
 * tree.c), so both solves are backward stable and agree to a few hundred
 * ulps of the solution's scale: 1e-11 relative to max |z| leaves three
 * decades to spare. A simulation on the tree and on the dense stage
 * integrates the same ODE whose right side differs by round-off at each
 * stage (different orders of operations); over the dissipative launches
 * below that does not grow past ~1e-13 relative, so 1e-9 (the baselines'
 * figure, tests/test_baseline.c) is six decades above it and far below any
 * modelling difference. */
#include "solver/solver.h"
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SOLVE_TOL 1e-11
#define SIM_TOL 1e-9
#define MAXV 128

/* A deterministic generator (tests must not depend on libc's rand). */
static double uniform(unsigned *s) {
  *s = *s * 1664525u + 1013904223u;
  return (double)(*s >> 8) / 16777216.0;
}

typedef struct rig {
  dg_tree_ws t;
  int start[MAXV + 1], nbr[2 * MAXV], order[MAXV], parent[MAXV], step[MAXV];
  int op_v[MAXV], op_u[MAXV], op_first[MAXV + 1], op_r[MAXV], op_x[MAXV], upd_r[2 * MAXV];
  double op_s[MAXV], op_pa[MAXV], op_pb[MAXV], op_f[MAXV], op_b[MAXV];
  double upd_f[2 * MAXV], upd_b[2 * MAXV];
  double kout[2 * MAXV], kin[2 * MAXV], diag0[MAXV], d[MAXV];
  double dense[MAXV * MAXV];
  int fr_v[MAXV], fr_e[MAXV], fr_to[MAXV], fr_first[MAXV + 1], fu_e[2 * MAXV];
  bool fr_pair[MAXV];
} rig;

/* Points the workspace at the rig's arrays. */
static void rig_bind(rig *r, int nv) {
  dg_tree_ws *t = &r->t;
  t->nv = nv;
  t->start = r->start;
  t->nbr = r->nbr;
  t->kout = r->kout;
  t->kin = r->kin;
  t->diag0 = r->diag0;
  t->d = r->d;
  t->order = r->order;
  t->parent = r->parent;
  t->step = r->step;
  t->op_v = r->op_v;
  t->op_u = r->op_u;
  t->op_first = r->op_first;
  t->op_r = r->op_r;
  t->op_x = r->op_x;
  t->op_f = r->op_f;
  t->op_b = r->op_b;
  t->op_s = r->op_s;
  t->op_pa = r->op_pa;
  t->op_pb = r->op_pb;
  t->upd_r = r->upd_r;
  t->upd_f = r->upd_f;
  t->upd_b = r->upd_b;
  t->fr_v = r->fr_v;
  t->fr_e = r->fr_e;
  t->fr_to = r->fr_to;
  t->fr_first = r->fr_first;
  t->fu_e = r->fu_e;
  t->fr_pair = r->fr_pair;
  t->rt_on = false; /* dgp_tree_factor records its eliminations only when asked */
}

/* A random tree of about nv vertices, grown from node 0 by attaching each
 * new vertex to an earlier one of the other kind (so the graph is
 * bipartite and acyclic), then a node below each constraint that has none
 * (a constraint joins its parent shaft to at least one more). Node
 * diagonals are inertias, every zero_every-th exactly 0 (shafts without
 * inertia); constraint diagonals are 0. At edge (n, c), K[c][n] = A and
 * K[n][c] = −(1 + κ) A, κ = 0 or in (−0.5, 1) (a lossy mesh's side b).
 * Returns the vertex count. */
static int random_forest(rig *r, unsigned seed, int nv, int zero_every) {
  unsigned s = seed;
  memset(r, 0, sizeof *r);
  int kind[MAXV], pa[MAXV];
  double va[MAXV], vk[MAXV];
  bool has_child[MAXV] = {false};
  kind[0] = 0;
  pa[0] = -1;
  int n0 = nv;
  nv = 1;
  for (int v = 1; v < MAXV; v++) {
    int p = -1;
    if (v < n0)
      p = (int)(uniform(&s) * v);
    else
      for (int c = 0; c < n0 && p < 0; c++)
        if (kind[c] == 1 && !has_child[c])
          p = c;
    if (p < 0)
      break;
    nv = v + 1;
    pa[v] = p;
    has_child[p] = true;
    kind[v] = 1 - kind[p];
    double mag = 0.2 + 1.8 * uniform(&s);
    va[v] = uniform(&s) < 0.5 ? -mag : mag;
    vk[v] = uniform(&s) < 0.5 ? 0.0 : -0.5 + 1.5 * uniform(&s);
  }
  int deg[MAXV] = {0}, fill[MAXV];
  for (int v = 1; v < nv; v++) {
    deg[v]++;
    deg[pa[v]]++;
  }
  for (int v = 0; v < nv; v++)
    r->start[v + 1] = r->start[v] + deg[v];
  memcpy(fill, r->start, sizeof fill);
  for (int v = 0; v < nv; v++) {
    bool massless = zero_every > 0 && v % zero_every == 1;
    r->diag0[v] = kind[v] == 0 && !massless ? 0.1 + 1.9 * uniform(&s) : 0.0;
    r->dense[v * MAXV + v] = r->diag0[v];
  }
  for (int v = 1; v < nv; v++) {
    int p = pa[v], n = kind[v] == 0 ? v : p, c = kind[v] == 0 ? p : v;
    double k_nc = -(1.0 + vk[v]) * va[v], k_cn = va[v];
    int ev = fill[v]++, ep = fill[p]++;
    r->nbr[ev] = p;
    r->nbr[ep] = v;
    r->kout[ev] = v == n ? k_nc : k_cn; /* edge x→y: kout = K[x][y], kin = K[y][x] */
    r->kin[ev] = v == n ? k_cn : k_nc;
    r->kout[ep] = r->kin[ev];
    r->kin[ep] = r->kout[ev];
    r->dense[n * MAXV + c] = k_nc;
    r->dense[c * MAXV + n] = k_cn;
  }
  rig_bind(r, nv);
  return nv;
}

/* The tree's solution against dense elimination for a random right side
 * (a random forest with shafts without inertia may be singular: then the
 * tree must say so). */
static int check_against_dense(unsigned seed, int nv, int zero_every) {
  static rig r;
  nv = random_forest(&r, seed, nv, zero_every);
  int frc = dgp_tree_factor(&r.t);
  static double s[MAXV * MAXV];
  double x[MAXV], z[MAXV];
  unsigned u = seed ^ 0x9e3779b9u;
  for (int v = 0; v < nv; v++)
    x[v] = z[v] = -1.0 + 2.0 * uniform(&u);
  memcpy(s, r.dense, sizeof s);
  int drc = dgp_solve_dense(s, x, nv, MAXV);
  double scale = 0.0;
  for (int v = 0; drc == 0 && v < nv; v++)
    scale = fmax(scale, fabs(x[v]));
  if (frc != 0) {
    /* a zero pivot with no partner: K is singular (a shaft without inertia
     * that nothing with inertia follows), so dense elimination fails or
     * divides by round-off (a solution 1e8 times the data's scale) */
    ck_assert_msg(drc != 0 || scale > 1e8, "seed %u: the tree found K singular", seed);
    return 0;
  }
  ck_assert_msg(drc == 0, "seed %u: dense elimination found K singular", seed);
  dgp_tree_solve(&r.t, z);
  for (int v = 0; v < nv; v++)
    ck_assert_msg(fabs(z[v] - x[v]) <= SOLVE_TOL * scale,
                  "seed %u vertex %d: tree %.17g dense %.17g", seed, v, z[v], x[v]);
  int pairs = 0;
  for (int k = 0; k < r.t.nops; k++)
    pairs += r.op_u[k] >= 0;
  return pairs > 0 ? 2 : 1;
}

START_TEST(random_forests_with_inertia) {
  for (unsigned seed = 1; seed <= 200; seed++) /* constraints pair with their leaves */
    ck_assert_int_ne(check_against_dense(seed, 2 + (int)(seed % 59), 0), 0);
}
END_TEST

/* Every third vertex of node kind without inertia: more pairs, and the
 * singular systems recognized; most are regular and use pairs. */
START_TEST(random_forests_without_some_inertia) {
  int regular_with_pairs = 0;
  for (unsigned seed = 1; seed <= 200; seed++)
    regular_with_pairs += check_against_dense(seed, 2 + (int)(seed % 59), 3) == 2;
  ck_assert_int_ge(regular_with_pairs, 50);
}
END_TEST

/* A factor made again by dgp_tree_factor_values (the eliminations the
 * last full factor recorded, replayed for new values: a variable ratio's
 * refresh) equals the full factor of the new values bit for bit, pairs
 * (shafts without inertia) included; and a pivot that became zero is
 * refused, for the full factor to decide. */
START_TEST(factor_values_equal_full_factor) {
  static rig r;
  static double want[8][2 * MAXV];
  int replayed = 0, with_pairs = 0, refused = 0;
  for (unsigned seed = 1; seed <= 200; seed++) {
    int nv = random_forest(&r, seed, 2 + (int)(seed % 59), seed % 2 ? 3 : 0);
    dg_tree_ws *t = &r.t;
    t->rt_on = true;
    if (dgp_tree_factor(t) != 0)
      continue; /* singular: nothing recorded */
    ck_assert(t->fr_ok);
    /* new values on the same pattern: each edge pair and each non-zero
     * diagonal scaled */
    unsigned u = seed * 7919u;
    for (int v = 0; v < nv; v++) {
      if (r.diag0[v] != 0.0)
        r.diag0[v] *= 0.5 + uniform(&u);
      for (int e = r.start[v]; e < r.start[v + 1]; e++) {
        int w = r.nbr[e];
        if (w < v)
          continue;
        double f = 0.5 + uniform(&u);
        int back = -1;
        for (int g = r.start[w]; g < r.start[w + 1]; g++)
          if (r.nbr[g] == v)
            back = g;
        r.kout[e] *= f;
        r.kin[e] *= f;
        r.kout[back] = r.kin[e];
        r.kin[back] = r.kout[e];
      }
    }
    ck_assert_int_eq(dgp_tree_factor(t), 0); /* the full factor of the new values */
    int nops = t->nops;
    const double *arr[8] = {r.op_s, r.op_pa, r.op_pb, r.op_f, r.op_b, r.d, r.upd_f, r.upd_b};
    size_t len[8] = {(size_t)nops, (size_t)nops, (size_t)nops, (size_t)nops,
                     (size_t)nops, (size_t)nv,   2 * MAXV,     2 * MAXV};
    for (int a = 0; a < 8; a++)
      memcpy(want[a], arr[a], sizeof(double) * len[a]);
    int pairs = 0;
    for (int k = 0; k < nops; k++)
      pairs += r.op_u[k] >= 0;
    /* the same values factored by the replay, from scrambled outputs */
    for (int a = 0; a < 8; a++)
      for (size_t i = 0; i < len[a]; i++)
        ((double *)arr[a])[i] = 12345.0;
    for (int k = 0; k < nops; k++) /* the pairs' own fields are left as they are */
      if (r.op_u[k] < 0)
        r.op_pa[k] = r.op_pb[k] = want[1][k] = want[2][k] = 0.0;
    ck_assert_int_eq(dgp_tree_factor_values(t), 0);
    for (int k = 0; k < nops; k++)
      if (r.op_u[k] < 0)
        r.op_pa[k] = r.op_pb[k] = 0.0;
    for (int a = 0; a < 8; a++) {
      size_t n = a >= 6 ? (size_t)r.op_first[nops] : len[a];
      ck_assert_msg(memcmp(want[a], arr[a], sizeof(double) * n) == 0,
                    "seed %u: array %d differs from the full factor's", seed, a);
    }
    replayed++;
    with_pairs += pairs > 0;
    /* a pivot that was not zero made zero (a vertex with inertia that no
     * elimination before its own updates): refused */
    bool touched[MAXV] = {false};
    for (int k = 0; k < nops; k++) {
      int v = r.fr_v[k];
      if (!r.fr_pair[k] && r.diag0[v] != 0.0 && !touched[v]) {
        r.diag0[v] = 0.0;
        ck_assert_int_eq(dgp_tree_factor_values(t), -1);
        refused++;
        break;
      }
      for (int i = r.fr_first[k]; i < r.fr_first[k + 1]; i++)
        touched[r.upd_r[i]] = true;
    }
  }
  ck_assert_int_ge(replayed, 150);
  ck_assert_int_ge(with_pairs, 20);
  ck_assert_int_ge(refused, 50);
}
END_TEST

/* K from a list of entries of A (constraint, node, A) over nn nodes of
 * inertia I and nc constraints, lossless: K[n][c] = −A, K[c][n] = A. */
static void rig_from_entries(rig *r, int nn, const double *inertia, int nc, int ne,
                             const int (*ent)[2], const double *val) {
  memset(r, 0, sizeof *r);
  int nv = nn + nc, deg[MAXV] = {0}, fill[MAXV];
  for (int i = 0; i < ne; i++) {
    deg[ent[i][1]]++;
    deg[nn + ent[i][0]]++;
  }
  for (int v = 0; v < nv; v++)
    r->start[v + 1] = r->start[v] + deg[v];
  memcpy(fill, r->start, sizeof fill);
  for (int v = 0; v < nn; v++)
    r->dense[v * MAXV + v] = r->diag0[v] = inertia[v];
  for (int i = 0; i < ne; i++) {
    int n = ent[i][1], c = nn + ent[i][0], en = fill[n]++, ec = fill[c]++;
    r->nbr[en] = c;
    r->nbr[ec] = n;
    r->kout[en] = r->kin[ec] = -val[i];
    r->kin[en] = r->kout[ec] = val[i];
    r->dense[n * MAXV + c] = -val[i];
    r->dense[c * MAXV + n] = val[i];
  }
  rig_bind(r, nv);
}

/* A loop of two shafts with inertia and two constraints between them (a
 * locked differential's outputs: x0 = x1 twice over) cannot be peeled. */
START_TEST(cycle_refused) {
  static rig r;
  const double inertia[2] = {1.0, 2.0};
  const int ent[4][2] = {{0, 0}, {0, 1}, {1, 0}, {1, 1}};
  const double val[4] = {1.0, -1.0, 2.0, -2.0};
  rig_from_entries(&r, 2, inertia, 2, 4, ent, val);
  ck_assert_int_eq(dgp_tree_factor(&r.t), -2);
}
END_TEST

/* An open differential as lib/blocks declares it: the input x2 = r (x0 +
 * x1) / 2 and the carrier x3 = (x0 + x1) / 2, a shaft without inertia that
 * nothing else touches. Both constraints join both outputs (a loop), but
 * the carrier leaves with its constraint first and the rest is a tree: the
 * solution equals dense elimination's. */
START_TEST(differential_carrier_opens_the_loop) {
  static rig r;
  static double s[MAXV * MAXV];
  const double inertia[4] = {0.5, 0.7, 0.02, 0.0}, ratio = 3.5;
  const int ent[6][2] = {{0, 2}, {0, 0}, {0, 1}, {1, 3}, {1, 0}, {1, 1}};
  const double val[6] = {1.0, -ratio / 2, -ratio / 2, 1.0, -0.5, -0.5};
  rig_from_entries(&r, 4, inertia, 2, 6, ent, val);
  ck_assert_int_eq(dgp_tree_factor(&r.t), 0);
  double x[6] = {1.0, -2.0, 30.0, 0.0, 0.0, 0.0}, z[6];
  memcpy(z, x, sizeof z);
  memcpy(s, r.dense, sizeof s);
  ck_assert_int_eq(dgp_solve_dense(s, x, 6, MAXV), 0);
  dgp_tree_solve(&r.t, z);
  double scale = 0.0;
  for (int v = 0; v < 6; v++)
    scale = fmax(scale, fabs(x[v]));
  for (int v = 0; v < 6; v++)
    ck_assert_double_eq_tol(z[v], x[v], SOLVE_TOL * scale);
  int pairs = 0; /* the carrier left with its constraint */
  for (int k = 0; k < r.t.nops; k++)
    pairs += r.op_u[k] >= 0;
  ck_assert_int_eq(pairs, 1);
}
END_TEST

/* The simplest pair: a torque w on a shaft without inertia driving a
 * shaft of inertia I through a gear x_in = r x_out (the link's column
 * A = (1, −r)). The input's balance 0·ẍ_in = w + λ gives λ = −w, the
 * output's I ẍ_out = −r λ gives ẍ_out = r w / I, and ẍ_in = r ẍ_out. */
START_TEST(massless_input_closed_form) {
  static rig r;
  memset(&r, 0, sizeof r);
  /* vertices: 0 input node (I = 0), 1 output node (I = 4), 2 the link
   * x_in − 2.5 x_out = 0: A = (1, −2.5) */
  const double I = 4.0, ratio = 2.5, w = 3.0;
  r.diag0[1] = I;
  r.start[1] = 1;
  r.start[2] = 2;
  r.start[3] = 4;
  r.nbr[0] = 2;
  r.nbr[1] = 2;
  r.nbr[2] = 0;
  r.nbr[3] = 1;
  double a_in = 1.0, a_out = -ratio;
  r.kout[0] = -a_in; /* K[0][2] */
  r.kin[0] = a_in;   /* K[2][0] */
  r.kout[1] = -a_out;
  r.kin[1] = a_out;
  r.kout[2] = a_in;
  r.kin[2] = -a_in;
  r.kout[3] = a_out;
  r.kin[3] = -a_out;
  rig_bind(&r, 3);
  dg_tree_ws *t = &r.t;
  ck_assert_int_eq(dgp_tree_factor(t), 0);
  double z[3] = {w, 0.0, 0.0};
  dgp_tree_solve(t, z);
  ck_assert_double_eq_tol(z[2], -w, 1e-15);
  ck_assert_double_eq_tol(z[1], ratio * w / I, 1e-15);
  ck_assert_double_eq_tol(z[0], ratio * ratio * w / I, 1e-15);
}
END_TEST

/* ---- whole simulations: the tree against the dense stage ---------------- */

/* Steps one simulation held to the dense stage and one on the tree
 * wherever the mode allows for `seconds` of the bench launch and compares
 * every node speed and block state at every step, within `tol` relative.
 * Fails unless the second starts on the tree (want_tree). */
static void compare_sims_tol(dg_graph *g, double seconds, bool want_tree, double tol) {
  dg_sim *a = dg_test_sim(g), *b = dg_test_sim(g);
  a->tree_never = true;
  b->tree_always = true;
  dgp_cache_forget(a); /* the start's plan, kept in the cache, is built again */
  dgp_cache_forget(b);
  ck_assert_int_eq(dgp_solver_change_topology(a), DG_OK);
  ck_assert_int_eq(dgp_solver_change_topology(b), DG_OK);
  ck_assert(!a->sv.tree.on);
  if (want_tree)
    ck_assert(b->sv.tree.on);
  const double dt = 1e-3;
  double worst = 0.0;
  long changes_a = dg_sim_topology_changes(a), changes_b = dg_sim_topology_changes(b);
  int steps = (int)(seconds / dt + 0.5);
  for (int k = 0; k < steps; k++) {
    double t = k * dt;
    dg_batch_launch_inputs(a, t);
    dg_batch_launch_inputs(b, t);
    ck_assert_int_eq(dg_sim_step(a, dt), DG_OK);
    ck_assert_int_eq(dg_sim_step(b, dt), DG_OK);
    ck_assert_int_eq(dg_sim_topology_changes(a) - changes_a,
                     dg_sim_topology_changes(b) - changes_b);
    for (int n = 0; n < a->nn; n++) {
      double x = a->sv.x[n], y = b->sv.x[n];
      worst = fmax(worst, fabs(x - y) / fmax(fmax(fabs(x), fabs(y)), 1.0));
    }
    for (int i = 0; i < a->ns; i++) {
      double x = a->sv.s[i], y = b->sv.s[i];
      worst = fmax(worst, fabs(x - y) / fmax(fmax(fabs(x), fabs(y)), 1.0));
    }
  }
  ck_assert_msg(worst <= tol, "worst relative difference %g", worst);
  dg_sim_free(a);
  dg_sim_free(b);
  dg_graph_free(g);
}

static void compare_sims(dg_graph *g, double seconds, bool want_tree) {
  compare_sims_tol(g, seconds, want_tree, SIM_TOL);
}

START_TEST(sim_chain_of_lossy_gears) {
  compare_sims(dg_test_graph_file("graphs/bench/chain_16.json"), 2.0, true);
}
END_TEST

START_TEST(sim_diff_tree) {
  compare_sims(dg_test_graph_file("graphs/bench/diff_tree_16.json"), 2.0, true);
}
END_TEST

START_TEST(sim_vehicles) {
  compare_sims(dg_test_graph_file("graphs/bench/axle_baseline.json"), 2.0, true);
  compare_sims(dg_test_graph_file("graphs/bench/sedan_baseline.json"), 6.0, false);
  compare_sims(dg_test_graph_file("graphs/bench/awd_3diff.json"), 6.0, false);
  /* At 1.3708 s four events leave a mesh whose load is zero to
   * round-off at the next segment's start: its direction of power flow is
   * then the sign of that round-off (the dense stage keeps +1, the tree
   * takes -1), held over the 1 ms segment while the load grows from zero
   * (loss.c: a reversal is watched only from 1e-9 W). Both are within the
   * model; they part by 3.1e-6 and agree to 2e-15 before it. */
  compare_sims_tol(dg_test_graph_file("graphs/bench/truck_8x8.json"), 6.0, false, 1e-5);
}
END_TEST

/* Aliases: links with one source (a flywheel's far end, a gear's input)
 * make copies, no vertices of the tree: their inertia and torque are
 * folded into the node they copy, across a lossy gear with 1 + κ, and its
 * load is taken from the folded balance. Three lossless gears in a row
 * (folds two levels deep), flywheels and a lossy gear: the tree against
 * the dense stage, and the count of copies. */
START_TEST(sim_aliases) {
  const char *json =
      "{\"drivegraph\":1,\"blocks\":{"
      "\"src\":{\"type\":\"torque_source\",\"inertia\":0.05,\"torque\":20},"
      "\"a\":{\"type\":\"gear\",\"ratio\":2},\"b\":{\"type\":\"gear\",\"ratio\":0.7},"
      "\"m0\":{\"type\":\"inertia\",\"inertia\":0.01},"
      "\"c\":{\"type\":\"gear\",\"ratio\":1.5,\"efficiency\":0.97},"
      "\"m1\":{\"type\":\"inertia\",\"inertia\":0.02},"
      "\"d\":{\"type\":\"gear\",\"ratio\":3},"
      "\"ld\":{\"type\":\"load\",\"inertia\":0.3,\"c1\":0.01}},"
      "\"connections\":[[\"src.out\",\"a.in\"],[\"a.out\",\"b.in\"],[\"b.out\",\"m0.in\"],"
      "[\"m0.out\",\"c.in\"],[\"c.out\",\"m1.in\"],[\"m1.out\",\"d.in\"],[\"d.out\",\"ld.in\"]]}";
  dg_graph *g = dg_test_graphf("%s", json);
  dg_sim *sim = dg_test_sim(g);
  sim->tree_always = true;
  ck_assert_int_eq(dgp_solver_change_topology(sim), DG_OK);
  ck_assert(sim->sv.tree.on);
  /* 7 nodes, one DOF: every link has one source, the lossy gear's too
   * (nothing below it touches a constraint), so six of the nodes are
   * copies and the tree is one vertex */
  ck_assert_int_eq(sim->nn, 7);
  ck_assert_int_eq(sim->sv.tree.nalias, 6);
  ck_assert_int_eq(sim->sv.tree.ncon, 0);
  ck_assert_int_ge(sim->sv.tree.mesh_alias[0], 0);
  dg_sim_free(sim);
  compare_sims(g, 3.0, true);
}
END_TEST

/* Which lossy links fold: a final drive (its input's subtree is the
 * source's shaft alone) folds; hub reductions behind an open differential
 * do not (their inputs are the differential's outputs, which its link
 * touches), so they stay constraints; the tree against the dense stage. */
START_TEST(sim_lossy_links_that_stay) {
  dg_graph *g = dg_test_graphf(
      "{\"drivegraph\":1,\"blocks\":{"
      "\"src\":{\"type\":\"torque_source\",\"inertia\":0.05,\"torque\":30},"
      "\"fd\":{\"type\":\"gear\",\"ratio\":3.5,\"efficiency\":0.96},"
      "\"diff\":{\"type\":\"differential\",\"kind\":\"open\",\"inertia\":0.02},"
      "\"hl\":{\"type\":\"gear\",\"ratio\":2,\"efficiency\":0.97,\"inertia\":0.01},"
      "\"hr\":{\"type\":\"gear\",\"ratio\":2,\"efficiency\":0.97,\"inertia\":0.01},"
      "\"l\":{\"type\":\"load\",\"inertia\":1.0,\"c1\":3},"
      "\"r\":{\"type\":\"load\",\"inertia\":1.3,\"c1\":5}},"
      "\"connections\":[[\"src.out\",\"fd.in\"],[\"fd.out\",\"diff.in\"],"
      "[\"diff.left\",\"hl.in\"],[\"diff.right\",\"hr.in\"],[\"hl.out\",\"l.in\"],"
      "[\"hr.out\",\"r.in\"]]}");
  dg_sim *sim = dg_test_sim(g);
  sim->tree_always = true;
  dgp_cache_forget(sim);
  ck_assert_int_eq(dgp_solver_change_topology(sim), DG_OK);
  ck_assert(sim->sv.tree.on);
  const dg_topo_ws *ws = &sim->sv.ws;
  ck_assert_int_eq(ws->nmesh, 3);
  int folded = 0, kept = 0;
  for (int j = 0; j < ws->nmesh; j++) {
    const char *owner = sim->g->blocks[ws->link_block[ws->mesh_link[j]]].id;
    bool fold = sim->sv.tree.mesh_alias[j] >= 0;
    ck_assert_msg(fold == (strcmp(owner, "fd") == 0), "mesh of %s: folded %d", owner, fold);
    ck_assert(fold || sim->sv.tree.mesh_con[j] >= 0);
    folded += fold;
    kept += !fold;
  }
  ck_assert_int_eq(folded, 1);
  ck_assert_int_eq(kept, 2);
  dg_sim_free(sim);
  compare_sims(g, 3.0, true);
}
END_TEST

/* dg_init_idle: the hooks the blocks' inits name (a gear without friction
 * or tables, an open or locked differential, a load without Coulomb
 * friction, a spring-damper without backlash, a planetary that cannot
 * stick, a wheel without a brake) change nothing when left out: each graph runs 3 s of the bench
 * launch with them left out and with every hook called again, every
 * signal bit for bit the same after every step. */
START_TEST(idle_hooks_change_nothing) {
  static const char *const graphs[] = {
      "graphs/gear_train.json",          "graphs/bench/chain_16.json",
      "graphs/bench/diff_tree_8.json",   "graphs/awd_lsd.json",
      "graphs/pickup_4x4.json",          "graphs/compliant_driveline.json",
      "graphs/planetary_automatic.json", "graphs/power_split_hybrid.json",
      "graphs/sedan_rwd_automatic.json", "graphs/bench/sedan_baseline.json"};
  int dropped_total = 0;
  for (size_t gi = 0; gi < sizeof graphs / sizeof graphs[0]; gi++) {
    dg_graph *g = dg_test_graph_file(graphs[gi]);
    dg_sim *a = dg_test_sim(g), *b = dg_test_sim(g);
    int before = a->n_pre + a->n_torque + a->n_post + a->n_hold + a->n_evb;
    dgp_sim_call_idle_hooks(b);
    int all = b->n_pre + b->n_torque + b->n_post + b->n_hold + b->n_evb;
    ck_assert_int_le(before, all);
    dropped_total += all - before;
    int n = dg_sim_signal_count(a);
    for (int k = 0; k < 3000; k++) {
      dg_batch_launch_inputs(a, k * 1e-3);
      dg_batch_launch_inputs(b, k * 1e-3);
      ck_assert_int_eq(dg_sim_step(a, 1e-3), DG_OK);
      ck_assert_int_eq(dg_sim_step(b, 1e-3), DG_OK);
      for (int i = 0; i < n; i++) {
        double x = dg_sim_signal(a, i), y = dg_sim_signal(b, i);
        ck_assert_msg(memcmp(&x, &y, sizeof x) == 0, "%s, step %d, signal %d: %.17g vs %.17g",
                      graphs[gi], k, i, x, y);
      }
    }
    dg_sim_free(a);
    dg_sim_free(b);
    dg_graph_free(g);
  }
  ck_assert_int_ge(dropped_total, 40); /* the test compares something */
}
END_TEST

/* A spring-damper chain: force elements between shafts of their own (no
 * constraints between them), with a lossy gear at the end. */
START_TEST(sim_spring_chain) {
  compare_sims(dg_test_graphf("{\"drivegraph\": 1, \"blocks\": {"
                              "\"src\": {\"type\": \"torque_source\", \"inertia\": 0.05, "
                              "\"torque\": 20},"
                              "\"s0\": {\"type\": \"spring_damper\", \"stiffness\": 2000, "
                              "\"damping\": 2},"
                              "\"m0\": {\"type\": \"inertia\", \"inertia\": 0.01},"
                              "\"s1\": {\"type\": \"spring_damper\", \"stiffness\": 1500, "
                              "\"damping\": 1, \"inertia\": 0.004},"
                              "\"g\": {\"type\": \"gear\", \"ratio\": 3, \"efficiency\": 0.95},"
                              "\"load\": {\"type\": \"load\", \"inertia\": 0.5, \"c1\": 0.05}},"
                              "\"connections\": [[\"src.out\", \"s0.in\"], [\"s0.out\", "
                              "\"m0.in\"], [\"m0.out\", \"s1.in\"], [\"s1.out\", \"g.in\"], "
                              "[\"g.out\", \"load.in\"]]}"),
               2.0, true);
}
END_TEST

/* Snapshots of a mode on the tree: the tree's arrays are part of the
 * snapshot only while its mode uses them (dgp_buf_add_live). A snapshot
 * taken on the tree, restored after stepping on (into the same
 * simulation and into another of the graph, itself on the dense stage),
 * steps on bit for bit as the original did; one taken on the dense stage
 * (the tree's arrays left out) restored into a simulation on the tree
 * steps as the dense original. The axle's launch (mode changes inside). */
static void launch(dg_sim *s, int k0, int n, double *rec) {
  for (int k = 0; k < n; k++) {
    dg_batch_launch_inputs(s, (k0 + k) * 1e-3);
    ck_assert_int_eq(dg_sim_step(s, 1e-3), DG_OK);
    for (int i = 0; i < s->nn; i++)
      rec[(size_t)k * (size_t)s->nn + (size_t)i] = s->sv.x[i];
  }
}

/* After a snapshot taken at step k0 (r1 holds a's run from there to n):
 * restored into a and into b, each steps on bit for bit as r1, b on the
 * tree. */
static void restores_run_as_before(dg_sim *a, dg_sim *b, const dg_snapshot *snap, int k0, int n,
                                   const double *r1) {
  size_t bytes = sizeof *r1 * (size_t)n * (size_t)a->nn;
  double *r2 = malloc(bytes), *r3 = malloc(bytes);
  ck_assert(r2 && r3);
  dg_error err;
  ck_assert_int_eq(dg_sim_restore(a, snap, &err), DG_OK);
  ck_assert(a->sv.tree.on);
  launch(a, k0, n, r2);
  ck_assert_int_eq(dg_sim_restore(b, snap, &err), DG_OK);
  ck_assert(b->sv.tree.on);
  launch(b, k0, n, r3);
  ck_assert(memcmp(r1, r2, bytes) == 0);
  ck_assert(memcmp(r1, r3, bytes) == 0);
  free(r2);
  free(r3);
}

START_TEST(snapshot_on_the_tree) {
  dg_graph *g = dg_test_graph_file("graphs/bench/axle_baseline.json");
  dg_sim *a = dg_test_sim(g), *b = dg_test_sim(g);
  a->tree_always = true;
  ck_assert_int_eq(dgp_solver_change_topology(a), DG_OK);
  ck_assert(a->sv.tree.on && !b->sv.tree.on);
  enum { N = 400 };
  size_t n = (size_t)N * (size_t)a->nn;
  double *r1 = malloc(sizeof *r1 * n), *r2 = malloc(sizeof *r2 * n);
  ck_assert(r1 && r2);
  launch(a, 0, 300, r1);
  dg_error err;
  dg_snapshot *snap = dg_sim_snapshot(a, &err);
  ck_assert_msg(snap != NULL, "%s", err.text);
  launch(a, 300, N, r1);
  restores_run_as_before(a, b, snap, 300, N, r1); /* b was on the dense stage */
  dg_snapshot_free(snap);
  /* dense → tree: b's snapshot on the dense stage into a on the tree */
  dg_sim *c = dg_test_sim(g);
  launch(c, 0, 300, r1);
  snap = dg_sim_snapshot(c, &err);
  ck_assert(!c->sv.tree.on);
  launch(c, 300, N, r1);
  ck_assert_int_eq(dg_sim_restore(a, snap, &err), DG_OK);
  ck_assert(!a->sv.tree.on);
  launch(a, 300, N, r2);
  ck_assert(memcmp(r1, r2, sizeof *r1 * n) == 0);
  dg_snapshot_free(snap);
  free(r1);
  free(r2);
  dg_sim_free(a);
  dg_sim_free(b);
  dg_sim_free(c);
  dg_graph_free(g);
}
END_TEST

/* ---- memory (issue 19) -------------------------------------------------- */

/* A torque source, n lossy gears (gears true) or spring-dampers, each
 * followed by a flywheel, and a load: scripts/scaling.py's "chain" (one
 * DOF, tools/gen_bench_graphs.py's chain_N) and "spring" (n + 1 DOFs)
 * families. */
static dg_graph *series(int n, bool gears) {
  size_t cap = 400 + (size_t)n * 260, len = 0;
  char *j = malloc(cap);
  ck_assert(j != NULL);
  len += (size_t)snprintf(j + len, cap - len,
                          "{\"drivegraph\": 1, \"blocks\": {\"src\": {\"type\": "
                          "\"torque_source\", \"inertia\": 0.05, \"torque\": 20}");
  for (int i = 0; i < n; i++) {
    if (gears)
      len += (size_t)snprintf(j + len, cap - len,
                              ", \"s%d\": {\"type\": \"gear\", \"ratio\": %g, "
                              "\"efficiency\": 0.999}",
                              i, i % 2 == 0 ? 1.25 : 0.8);
    else
      len += (size_t)snprintf(j + len, cap - len,
                              ", \"s%d\": {\"type\": \"spring_damper\", \"stiffness\": %g, "
                              "\"damping\": 2}",
                              i, 2000.0 + 100.0 * (i % 7));
    len += (size_t)snprintf(j + len, cap - len,
                            ", \"m%d\": {\"type\": \"inertia\", \"inertia\": 0.01}", i);
  }
  len += (size_t)snprintf(j + len, cap - len,
                          ", \"load\": {\"type\": \"load\", \"inertia\": 0.5, \"c1\": 0.05, "
                          "\"c2\": 0.001}}, \"connections\": [[\"src.out\", \"s0.in\"]");
  for (int i = 0; i < n; i++) {
    len += (size_t)snprintf(j + len, cap - len, ", [\"s%d.out\", \"m%d.in\"]", i, i);
    if (i + 1 < n)
      len += (size_t)snprintf(j + len, cap - len, ", [\"m%d.out\", \"s%d.in\"]", i, i + 1);
    else
      len += (size_t)snprintf(j + len, cap - len, ", [\"m%d.out\", \"load.in\"]", i);
  }
  len += (size_t)snprintf(j + len, cap - len, "]}");
  ck_assert(len < cap);
  dg_graph *g = dg_test_graph(j);
  free(j);
  return g;
}

/* The bytes of the solver's arrays a simulation of g has in memory after
 * 50 steps of the bench launch (its sizes in *nn, *nraw, *ndof). */
static size_t resident_after_launch(dg_graph *g, int *nn, int *nraw, int *ndof) {
  dg_sim *sim = dg_test_sim(g);
  for (int k = 0; k < 50; k++) {
    dg_batch_launch_inputs(sim, k * 1e-3);
    ck_assert_int_eq(dg_sim_step(sim, 1e-3), DG_OK);
  }
  ck_assert(sim->sv.tree.on);
  size_t r = dgp_solver_resident_bytes(sim);
  *nn = sim->nn;
  *nraw = sim->sv.ws.nraw;
  *ndof = sim->sv.ndof;
  dg_sim_free(sim);
  dg_graph_free(g);
  return r;
}

/* The solver's arrays are sized for the worst mode of the graph (node ×
 * node), mapped, and written with the strides of the mode's own sizes
 * (lib/solver/buffers.c, docs/solver.md "Memory"): what a simulation has
 * in memory grows with its nodes and its mode's dense rows, not with
 * nodes². A chain of lossy gears (one raw DOF) within 4 kB per node, and
 * twice the gears at most 2.2 times the memory (nodes² would be four); a
 * chain of 256 spring-dampers (257 raw DOFs and DOFs: its rows of R, T, G
 * and M are dense) within its dense rows' bytes and as much per node. */
START_TEST(memory_follows_the_modes) {
  int nn, nn512, nraw, ndof;
  size_t r256 = resident_after_launch(series(256, true), &nn, &nraw, &ndof);
  ck_assert_int_eq(nraw, 1);
  size_t r512 = resident_after_launch(series(512, true), &nn512, &nraw, &ndof);
  if (r256 == 0 || r512 == 0)
    return; /* the system cannot say (mincore) */
  ck_assert_msg(r512 <= 4096 * (size_t)nn512, "chain of 512 gears: %zu bytes for %d nodes", r512,
                nn512);
  ck_assert_msg(r512 <= 2.2 * (double)r256, "chain: %zu bytes at 256 gears, %zu at 512", r256,
                r512);
  size_t s256 = resident_after_launch(series(256, false), &nn, &nraw, &ndof);
  ck_assert_int_eq(ndof, 257);
  size_t dense = sizeof(double) * (3 * (size_t)nn * (size_t)nraw + 3 * (size_t)ndof * (size_t)ndof);
  ck_assert_msg(s256 <= dense + 4096 * (size_t)nn, "256 spring-dampers: %zu bytes (dense rows %zu)",
                s256, dense);
}
END_TEST

/* The process's resident bytes now (/proc/self/statm), 0 where unknown. */
static size_t process_resident(void) {
  FILE *f = fopen("/proc/self/statm", "r");
  long size = 0, res = 0;
  bool ok = f && fscanf(f, "%ld %ld", &size, &res) == 2;
  if (f)
    fclose(f);
  long pg = sysconf(_SC_PAGESIZE);
  return ok && pg > 0 ? (size_t)res * (size_t)pg : 0;
}

/* A snapshot of a graph whose plan is larger than 16 MB (256 lossy gears:
 * node × node arrays of 513 nodes) leaves the plan out and builds it again
 * at restore (lib/state.c): restored into its own simulation and into
 * another of the graph (whose plan numbers are its own), the run goes on
 * bit for bit as it did, and taking the snapshot makes far less than the
 * plan's bytes resident (a whole copy made all of them resident). */
START_TEST(snapshot_of_a_large_plan) {
  dg_graph *g = series(256, true);
  dg_sim *a = dg_test_sim(g), *b = dg_test_sim(g);
  size_t plan = dgp_plan_bytes(a);
  ck_assert_msg(plan > DGP_PLAN_LARGE, "plan of %zu bytes", plan);
  enum { N = 200 };
  size_t n = (size_t)N * (size_t)a->nn;
  double *r1 = malloc(sizeof *r1 * n);
  ck_assert(r1);
  launch(a, 0, 100, r1);
  dg_error err;
  size_t before = process_resident();
  dg_snapshot *snap = dg_sim_snapshot(a, &err);
  ck_assert_msg(snap != NULL, "%s", err.text);
  size_t after = process_resident();
  launch(a, 100, N, r1);
  restores_run_as_before(a, b, snap, 100, N, r1);
  /* mapped arrays only (not under AddressSanitizer, which calloc's them).
   * A whole copy makes more than the plan's bytes resident (89 MB); the
   * rest of the state is 6.7 MB (13.5 MB under valgrind, whose shadow
   * memory counts too): a third of the plan tells them apart */
  if (before > 0 && after > 0 && dgp_solver_resident_bytes(a) > 0)
    ck_assert_msg(after < before + plan / 3, "the snapshot made %zu of the plan's %zu bytes resident",
                  after > before ? after - before : 0, plan);
  dg_snapshot_free(snap);
  free(r1);
  dg_sim_free(a);
  dg_sim_free(b);
  dg_graph_free(g);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("tree");
  TCase *tc = tcase_create("factor");
  tcase_add_test(tc, random_forests_with_inertia);
  tcase_add_test(tc, random_forests_without_some_inertia);
  tcase_add_test(tc, factor_values_equal_full_factor);
  tcase_add_test(tc, cycle_refused);
  tcase_add_test(tc, differential_carrier_opens_the_loop);
  tcase_add_test(tc, massless_input_closed_form);
  suite_add_tcase(s, tc);
  TCase *ts = tcase_create("sim");
  tcase_set_timeout(ts, 60);
  tcase_add_test(ts, sim_chain_of_lossy_gears);
  tcase_add_test(ts, sim_aliases);
  tcase_add_test(ts, idle_hooks_change_nothing);
  tcase_add_test(ts, sim_lossy_links_that_stay);
  tcase_add_test(ts, sim_diff_tree);
  tcase_add_test(ts, sim_vehicles);
  tcase_add_test(ts, sim_spring_chain);
  tcase_add_test(ts, snapshot_on_the_tree);
  tcase_add_test(ts, memory_follows_the_modes);
  tcase_add_test(ts, snapshot_of_a_large_plan);
  suite_add_tcase(s, ts);
  return s;
}

int main(void) { return dg_test_run(suite()); }
