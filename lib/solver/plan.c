/* The plan room: the current mode's plan, built between steps.
 *
 * After the topology room's elimination (q_raw = T q):
 *     G = R T,   M = Gᵀ diag(I) G   (Cholesky-factored once per mode),
 * G's non-zeros by node for the SPEEDS stage, M⁻¹ and B = M⁻¹ Gᵀ for the
 * ACCEL stage of small modes, and the tie-multiplier map: in raw DOFs
 * Rᵀ(diag(I) ẍ − τ) = Cᵀ λ, solved as λ = P g with P = (C Cᵀ)⁻¹ C of the
 * independent ties, kept over nodes as Λ = P Rᵀ. A DOF whose column of M is
 * zero has no inertia and is reported with the shafts that can turn freely.
 *
 * A mode change projects the node speeds onto the new mode conserving
 * generalized momentum: q' = M'⁻¹ G'ᵀ diag(I) x. */
#include "solver.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* scratch holds the node speeds of a motion without inertia */
static bool node_moves(const dg_sim *sim, int n, int unused) {
  (void)unused;
  return sim->sv.scratch[n] != 0.0;
}

/* Cholesky stopped at column j: M is singular there. The motion that costs
 * no kinetic energy is v = [−L₁₁⁻ᵀ l_j; 1; 0…] (M v = 0); the nodes it moves
 * are the shafts without inertia, named in the message. */
static void report_zero_inertia(dg_sim *sim, int j) {
  size_t mst = dgp_mst(sim);
  double *v = sim->sv.f;
  for (int k = 0; k < sim->sv.ndof; k++)
    v[k] = 0.0;
  for (int k = 0; k < j; k++)
    v[k] = sim->sv.L[(size_t)j * mst + (size_t)k];
  for (int i = j - 1; i >= 0; i--) { /* L₁₁ᵀ w = l_j */
    double sum = v[i];
    for (int k = i + 1; k < j; k++)
      sum -= sim->sv.L[(size_t)k * mst + (size_t)i] * v[k];
    v[i] = sum / sim->sv.L[(size_t)i * mst + (size_t)i];
  }
  for (int k = 0; k < j; k++)
    v[k] = -v[k];
  v[j] = 1.0;
  double vmax = 0.0;
  for (int n = 0; n < sim->nn; n++) {
    double x = 0.0;
    for (int k = 0; k <= j; k++)
      x += sim->sv.G[(size_t)n * dgp_gst(sim) + (size_t)k] * v[k];
    sim->sv.scratch[n] = x;
    vmax = fmax(vmax, fabs(x));
  }
  for (int n = 0; n < sim->nn; n++)
    if (fabs(sim->sv.scratch[n]) <= 1e-9 * vmax)
      sim->sv.scratch[n] = 0.0;
  char nodes[200], blocks[160];
  int first;
  dgp_describe_nodes(sim, node_moves, 0, nodes, sizeof nodes, blocks, sizeof blocks, &first);
  dgp_topo_error(sim, first, DG_ERR_INERTIA,
             "a degree of freedom has no inertia: %s can turn without moving anything that has "
             "inertia (blocks: %s); give one of them an inertia",
             nodes, blocks);
}

/* Λ = P Rᵀ over nodes, so that the acceleration stage gets λ = Λ r from the
 * node residuals r = I ẍ − w with no pass over the raw DOFs. */
static void build_lambda_map(dg_sim *sim) {
  dg_topo_ws *ws = &sim->sv.ws;
  size_t st = dgp_rst(sim);
  int na = ws->nactive, nraw = ws->nraw;
  sim->sv.kin.lam_stale = false;
  int nz = 0;
  for (int i = 0; i < na; i++) {
    const double *p = ws->P + (size_t)i * st;
    sim->sv.lam.start[i] = nz;
    for (int node = 0; node < sim->nn; node++) {
      const double *r = dgp_row_of(sim, node);
      double v = 0.0;
      for (int k = 0; k < nraw; k++)
        v += p[k] * r[k];
      if (v != 0.0) {
        sim->sv.lam.node[nz] = node;
        sim->sv.lam.coef[nz++] = v;
      }
    }
  }
  sim->sv.lam.start[na] = nz;
}

/* P = (C Cᵀ)⁻¹ C over the active ties. */
static void build_multiplier_map(dg_sim *sim) {
  dg_topo_ws *ws = &sim->sv.ws;
  /* C and P over the raw DOFs; A is na × na (na <= nraw <= nn) */
  size_t st = dgp_rst(sim), ma = (size_t)ws->nactive;
  int na = ws->nactive, nraw = ws->nraw;
  if (na == 0)
    return;
  /* active-row → tie index */
  int *idx = ws->active_tie;
  for (int t = 0; t < ws->nties; t++)
    if (ws->ties[t].active >= 0)
      idx[ws->ties[t].active] = t;
  double *a = ws->A;
  for (int i = 0; i < na; i++)
    for (int j = 0; j <= i; j++) {
      const double *ci = ws->C + (size_t)idx[i] * st, *cj = ws->C + (size_t)idx[j] * st;
      double v = 0.0;
      for (int k = 0; k < nraw; k++)
        if (!ws->raw_presc[k]) /* prescribed speeds: no part of the fit */
          v += ci[k] * cj[k];
      a[(size_t)i * ma + (size_t)j] = a[(size_t)j * ma + (size_t)i] = v;
    }
  /* factor in place: a's lower triangle becomes L */
  if (dgp_cholesky(a, a, na, ma) != 0) {
    dgp_topo_error(sim, ws->ties[idx[0]].block, DG_ERR_OVERCONSTRAINED,
               "constraints are numerically dependent");
    return;
  }
  double *col = sim->sv.f;
  for (int k = 0; k < nraw; k++) {
    for (int i = 0; i < na; i++)
      col[i] = ws->raw_presc[k] ? 0.0 : ws->C[(size_t)idx[i] * st + (size_t)k];
    dgp_cholesky_solve(a, na, ma, col);
    for (int i = 0; i < na; i++)
      ws->P[(size_t)i * st + (size_t)k] = col[i];
  }
  if (!sim->in_check) /* the every-mode check reads no tie forces */
    build_lambda_map(sim);
}

/* Adds the contributions I·g gᵀ of the nodes `on` selects (all when NULL,
 * else those whose flag equals `want`) to M. */
static void add_node_inertia(dg_sim *sim, const unsigned char *on, unsigned char want) {
  size_t st = dgp_mst(sim);
  for (int n = 0; n < sim->nn; n++) {
    double in = sim->sv.inertia[n];
    if (in == 0.0 || (on && on[n] != want))
      continue;
    for (int i = sim->sv.row_start[n]; i < sim->sv.row_start[n + 1]; i++) {
      double *mi = sim->sv.M + (size_t)sim->sv.gs_dof[i] * st;
      double gi = in * sim->sv.gs_val[i];
      for (int k = sim->sv.row_start[n]; k < sim->sv.row_start[n + 1]; k++)
        mi[sim->sv.gs_dof[k]] += gi * sim->sv.gs_val[k];
    }
  }
}

/* M = Gᵀ diag(I) G from G's non-zeros, and its Cholesky factor; M⁻¹ too
 * for a mode with constant kinematics (a substep is then one matrix-vector
 * product). With variable kinematics the part of M from the rows that do
 * not change is kept (Mfix), a refresh adds the changing rows to it, and a
 * substep solves with the factor (no inverse per refresh). */
int dgp_plan_mass(dg_sim *sim, bool refresh) {
  size_t st = dgp_mst(sim);
  int nred = sim->sv.ndof;
  const unsigned char *dirty = sim->sv.variable_kinematics ? sim->sv.ws.row_dirty : NULL;
  for (int j = 0; j < nred; j++)
    memset(sim->sv.M + (size_t)j * st, 0, sizeof(double) * (size_t)nred);
  if (!dirty) {
    add_node_inertia(sim, NULL, 0);
  } else {
    if (!refresh) {
      add_node_inertia(sim, dirty, 0);
      for (int j = 0; j < nred; j++)
        memcpy(sim->sv.kin.Mfix + (size_t)j * st, sim->sv.M + (size_t)j * st, sizeof(double) * (size_t)nred);
    } else {
      for (int j = 0; j < nred; j++)
        memcpy(sim->sv.M + (size_t)j * st, sim->sv.kin.Mfix + (size_t)j * st, sizeof(double) * (size_t)nred);
    }
    add_node_inertia(sim, dirty, 1);
  }
  int rc = dgp_cholesky(sim->sv.M, sim->sv.L, nred, st);
  if (rc != 0) {
    if (refresh)
      return -1; /* let a full build name the shafts */
    report_zero_inertia(sim, -1 - rc);
    return sim->sv.ws.error;
  }
  sim->sv.use_B = false;
  if (dirty || sim->in_check) /* the every-mode check needs the factor only */
    return DG_OK;
  /* dense B only where it is the smaller product (small graphs); else
   * f = Gᵀ w over the non-zeros and M⁻¹ f (measured: the sedan's 15 nodes
   * and 6 DOFs are faster sparse, the 2-DOF axle dense); built by
   * dgp_plan_inverse unless the tree room takes the ACCEL stage */
  sim->sv.use_B = nred * sim->nn <= 2 * sim->sv.nnz;
  return DG_OK;
}

/* M⁻¹ once per mode, and the ACCEL stage's map B = M⁻¹ Gᵀ from node
 * torques to accelerations: a substep is then one dense product
 * q̇ = B w with no divisions and no indirection (for drivetrain sizes
 * cheaper than f = Gᵀ w over the non-zeros and two triangular solves). */
void dgp_plan_inverse(dg_sim *sim) {
  size_t st = dgp_mst(sim);
  int nred = sim->sv.ndof;
  for (int c = 0; c < nred; c++) {
    double *col = sim->sv.f;
    for (int i = 0; i < nred; i++)
      col[i] = i == c ? 1.0 : 0.0;
    dgp_cholesky_solve(sim->sv.L, nred, st, col);
    for (int i = 0; i < nred; i++)
      sim->sv.Minv[(size_t)i * st + (size_t)c] = col[i];
  }
  for (int i = 0; sim->sv.use_B && i < nred; i++) {
    double *bi = sim->sv.B + (size_t)i * (size_t)sim->nn; /* ndof × nn */
    const double *mi = sim->sv.Minv + (size_t)i * st;
    for (int n = 0; n < sim->nn; n++) {
      double v = 0.0;
      for (int a = sim->sv.row_start[n]; a < sim->sv.row_start[n + 1]; a++)
        v += mi[sim->sv.gs_dof[a]] * sim->sv.gs_val[a];
      bi[n] = v;
    }
  }
}

/* out = Gᵀ v for a node vector v (ndof), over G's non-zeros. */
void dgp_g_transpose(const dg_sim *sim, const double *v, double *out) {
  for (int d = 0; d < sim->sv.ndof; d++)
    out[d] = 0.0;
  for (int a = 0; a < sim->sv.nnz; a++)
    out[sim->sv.gs_dof[a]] += sim->sv.gs_val[a] * v[sim->sv.gs_node[a]];
}

int dgp_solver_build(dg_sim *sim) {
  dg_topo_ws *ws = &sim->sv.ws;
  size_t st = (size_t)sim->nn;
  bool cached = dgp_cache_begin(sim); /* on a free slot of the mode cache (cache.c) */
  ws->error = 0;
  ws->errmsg[0] = '\0';
  ws->errblock = -1;
  ws->err_ratio_loop = false;
  ws->nraw = ws->nties = ws->nterms = 0;
  ws->nlinks = 0;
  sim->sv.kin.refreshable = sim->sv.variable_kinematics;
  memset(ws->has_row, 0, st);
  memset(ws->row_dirty, 0, st);
  memset(sim->sv.inertia, 0, sizeof(double) * st);
  memset(sim->sv.ports.inertia, 0, sizeof(double) * (size_t)sim->n_ports);
  ws->nmesh = 0;
  ws->links_complete = true;
  sim->sv.topo.sim = sim;
  const dg_graph *g = sim->g;
  /* locals: the hooks write through pointers the compiler cannot tell
   * from these */
  const int *order = g->order;
  dg_block *blocks = sim->blocks;
  dg_topo *topo = &sim->sv.topo;
  for (int i = 0, nb = sim->nb; i < nb && !ws->error; i++) {
    dg_block *b = &blocks[order[i]];
    void (*hook)(dg_block *, dg_topo *) = b->klass->state_upstream;
    if (hook) {
      hook(b, topo);
      continue;
    }
    int np = g->blocks[b->index].num_ports;
    for (int p = 0; p < np; p++)
      if (b->klass->ports[p].dir != DG_PORT_OUT)
        dgp_topo_ensure_row(sim, b->node[p], b->index);
  }
  for (int n = 0; n < sim->nn; n++) {
    dgp_topo_ensure_row(sim, n, g->nodes[n].block[0]);
  }
  if (cached && dgp_cache_lookup(sim))
    return DG_OK; /* a mode visited before: its plan as it was built */
  if (ws->error)
    return ws->error;
  sim->plan_gen = ++sim->plan_builds; /* a new plan (lib/state.c) */
  dgp_topo_rows(sim);
  int nred = dgp_topo_eliminate(sim);
  if (ws->error)
    return ws->error;
  int np = 0; /* the prescribed columns are the last (dgp_topo_eliminate) */
  while (np < nred && ws->raw_presc[ws->col_raw[nred - 1 - np]])
    np++;
  sim->sv.ndof = nred - np;
  sim->sv.mot.np = np; /* G's row stride is nred (dgp_gst) */
  size_t gst = dgp_gst(sim);
  /* G = R T and its non-zeros by node */
  sim->sv.nnz = 0;
  for (int n = 0; n < sim->nn; n++) {
    double *gr = sim->sv.G + (size_t)n * gst;
    dgp_reduced_row(sim, n, nred, gr);
    for (int j = 0; j < nred; j++) {
      if (fabs(gr[j]) < 1e-15)
        gr[j] = 0.0; /* exact zeros keep the sparsity of eliminated rows */
    }
  }
  if (sim->sv.variable_kinematics) /* Ġ = Ṙ T (ties are constant) */
    for (int n = 0; n < sim->nn; n++) {
      double *gd = sim->sv.kin.Gd + (size_t)n * gst;
      const double *rd = ws->Rd + (size_t)n * dgp_rst(sim);
      for (int j = 0; j < nred; j++) {
        double v = 0.0;
        for (int k = 0; k < ws->nraw; k++)
          v += rd[k] * ws->T[(size_t)k * dgp_rst(sim) + (size_t)j];
        gd[j] = v;
      }
    }
  build_multiplier_map(sim);
  dgp_loss_check_ties(sim);
  dgp_motion_plan(sim, nred);
  if (np > 0)
    sim->sv.kin.refreshable = false; /* prescribed columns: every substep builds in full */
  for (int n = 0; n < sim->nn; n++) {
    const double *gr = sim->sv.G + (size_t)n * gst;
    sim->sv.row_start[n] = sim->sv.nnz;
    for (int j = 0; j < nred - np; j++)
      if (gr[j] != 0.0) {
        sim->sv.gs_node[sim->sv.nnz] = n;
        sim->sv.gs_dof[sim->sv.nnz] = j;
        sim->sv.gs_val[sim->sv.nnz] = gr[j];
        sim->sv.nnz++;
      }
  }
  sim->sv.row_start[sim->nn] = sim->sv.nnz;
  if (ws->error)
    return ws->error;
  if (!sim->sv.loss.hold) /* a full build inside a segment (a ratio changing) keeps them */
    for (int j = 0; j < ws->nmesh; j++)
      sim->sv.loss.dir[j] = 0;
  dgp_plan_speed_rows(sim);
  int rc = dgp_plan_mass(sim, false);
  if (rc != DG_OK || sim->in_check) /* the every-mode check steps no mode */
    return rc;
  dgp_tree_build(sim, NULL);
  if (!sim->sv.tree.on) /* the tree's ACCEL stage needs neither M⁻¹ nor B */
    dgp_plan_inverse(sim);
  rc = dgp_loss_build(sim);
  if (cached)
    dgp_cache_store(sim, rc);
  return rc;
}

/* Rows of three terms or more (or none) compared with each other in a
 * small mode: at most this many. */
#define COPY_ROWS_MAX 64

/* Whether G's rows of nodes n and m are the same, term by term and bit by
 * bit (so they compute the same value). */
static bool same_row(const dg_solver *sv, int n, int m) {
  int a = sv->row_start[n], b = sv->row_start[n + 1], c = sv->row_start[m];
  return sv->row_start[m + 1] - c == b - a &&
         memcmp(sv->gs_dof + a, sv->gs_dof + c, sizeof(int) * (size_t)(b - a)) == 0 &&
         memcmp(sv->gs_val + a, sv->gs_val + c, sizeof(double) * (size_t)(b - a)) == 0;
}

/* A row of three terms or more (or none) that is another's (a shaft or
 * flywheel block passes its speed on with the factor 1.0, so its two ends
 * have the same row; nodes held at rest have the empty row) is computed
 * once: the others copy its value (n_copy), the same bits, for a load and
 * a store instead of the products. Rows of one or two terms are left as
 * they are (a product or two cost about what the copy does, measured);
 * so are large modes (the comparison is quadratic) and variable
 * kinematics (its rows are recomputed every substep). */
static void copy_rows(dg_sim *sim) {
  dg_solver *sv = &sim->sv;
  sv->n_copy = 0;
  if (sv->variable_kinematics || sv->n_multi > COPY_ROWS_MAX)
    return;
  int kept = 0;
  for (int k = 0; k < sv->n_multi; k++) {
    int n = sv->multi_node[k], src = -1;
    for (int l = 0; l < kept && src < 0; l++)
      if (same_row(sv, n, sv->multi_node[l]))
        src = sv->multi_node[l];
    if (src >= 0) {
      sv->copy_node[sv->n_copy] = n;
      sv->copy_src[sv->n_copy++] = src;
      continue;
    }
    sv->multi_node[kept++] = n;
  }
  sv->n_multi = kept;
}

/* The SPEEDS stage's plan: G's rows of one non-zero (most shafts: a gear's
 * output, a wheel's hub) as a flat list, the others (differential inputs,
 * rows without motion) by node over the non-zeros. */
void dgp_plan_speed_rows(dg_sim *sim) {
  dg_solver *sv = &sim->sv;
  sv->n_single = sv->n_pair = sv->n_multi = 0;
  for (int n = 0; n < sim->nn; n++) {
    int a = sv->row_start[n], b = sv->row_start[n + 1];
    if (b - a == 1) {
      sv->single_node[sv->n_single] = n;
      sv->single_dof[sv->n_single] = sv->gs_dof[a];
      sv->single_val[sv->n_single++] = sv->gs_val[a];
    } else if (b - a == 2) { /* a differential's input: two DOFs */
      int k = sv->n_pair++;
      sv->pair_node[k] = n;
      sv->pair_dof[2 * k] = sv->gs_dof[a];
      sv->pair_dof[2 * k + 1] = sv->gs_dof[a + 1];
      sv->pair_val[2 * k] = sv->gs_val[a];
      sv->pair_val[2 * k + 1] = sv->gs_val[a + 1];
    } else {
      sv->multi_node[sv->n_multi++] = n;
    }
  }
  copy_rows(sim);
}

/* SPEEDS' rows of three terms or more (or none), then their copies; out
 * of line, so the common modes' (rows of one and two terms) keep the
 * registers. */
static DGP_OUTLINE void multi_rows(const dg_sim *sim, const double *q, double *x) {
  const int *start = sim->sv.row_start, *dof = sim->sv.gs_dof;
  const double *val = sim->sv.gs_val;
  for (int k = 0; k < sim->sv.n_multi; k++) {
    int n = sim->sv.multi_node[k];
    double v = 0.0;
    for (int a = start[n]; a < start[n + 1]; a++)
      v += val[a] * q[dof[a]];
    x[n] = v;
  }
  const int *cn = sim->sv.copy_node, *cs = sim->sv.copy_src;
  for (int k = 0, nc = sim->sv.n_copy; k < nc; k++) /* the same row: the same bits */
    x[cn[k]] = x[cs[k]];
}

void dgp_solver_speeds(const dg_sim *sim, const double *q, double *x) {
  const int *sn = sim->sv.single_node, *sd = sim->sv.single_dof;
  const double *sv = sim->sv.single_val;
  int ns = sim->sv.n_single, np = sim->sv.n_pair; /* locals: x may alias, to the compiler */
  if (sim->sv.ndof == 1 && ns == sim->nn) { /* a chain: every node's row one multiple of the
                                                * one DOF, in node order (sn[k] = k) */
    double q0 = q[0], *restrict xr = x;
    const double *restrict svr = sv;
    int k = 0;
    for (; k + 1 < ns; k += 2) { /* two at a time: packed SSE2 */
      double a0 = svr[k], a1 = svr[k + 1];
      xr[k] = a0 * q0;
      xr[k + 1] = a1 * q0;
    }
    for (; k < ns; k++)
      xr[k] = svr[k] * q0;
  } else if (sim->sv.ndof == 1) {
    double q0 = q[0];
    for (int k = 0; k < ns; k++)
      x[sn[k]] = sv[k] * q0;
  } else {
    for (int k = 0; k < ns; k++)
      x[sn[k]] = sv[k] * q[sd[k]];
  }
  const int *pn = sim->sv.pair_node, *pd = sim->sv.pair_dof;
  const double *pv = sim->sv.pair_val;
  for (int k = 0; k < np; k++)
    x[pn[k]] = pv[2 * k] * q[pd[2 * k]] + pv[2 * k + 1] * q[pd[2 * k + 1]];
  if (sim->sv.n_multi + sim->sv.n_copy > 0)
    multi_rows(sim, q, x);
  if (sim->sv.mot.n_gp > 0)
    dgp_motion_add_speeds(sim, x);
}

/* Projection: q = M⁻¹ G_fᵀ diag(I) (x − G_p v), the free DOFs closest to
 * x in kinetic energy (conserving their generalized momentum). */
void dgp_plan_project(dg_sim *sim, const double *x, double *q) {
  for (int j = 0; j < sim->sv.ndof; j++)
    q[j] = 0.0;
  for (int a = 0; a < sim->sv.nnz; a++) {
    int n = sim->sv.gs_node[a];
    q[sim->sv.gs_dof[a]] += sim->sv.gs_val[a] * sim->sv.inertia[n] * x[n];
  }
  const dg_motion_ws *m = &sim->sv.mot;
  for (int k = 0; k < m->n_gp; k++) { /* minus G_fᵀ I G_p v */
    int n = m->gp_node[k];
    double xp = sim->sv.inertia[n] * m->gp_val[k] * m->v[m->gp_col[k]];
    for (int a = sim->sv.row_start[n]; a < sim->sv.row_start[n + 1]; a++)
      q[sim->sv.gs_dof[a]] -= sim->sv.gs_val[a] * xp;
  }
  dgp_cholesky_solve(sim->sv.L, sim->sv.ndof, dgp_mst(sim), q);
}

void dgp_fail_topology(dg_sim *sim, int rc) {
  const dg_topo_ws *ws = &sim->sv.ws;
  char path[DG_ERROR_PATH_LEN] = "";
  if (ws->errblock >= 0)
    dgp_pointer_append(path, sizeof path, "/blocks", sim->g->blocks[ws->errblock].id);
  dgp_error_set(&sim->err, rc, sim->g->file, path, "at t = %.6g s: %s", sim->t, ws->errmsg);
  sim->failed = true;
}

int dgp_solver_change_topology(dg_sim *sim) {
  double ke_before = dg_sim_kinetic_energy(sim);
  /* The build leaves sim->sv.x (the committed speeds) alone, while it uses the
   * scratch arrays: project from x itself. */
  int rc = dgp_solver_build(sim);
  if (rc != DG_OK) {
    dgp_fail_topology(sim, rc);
    return rc;
  }
  dgp_motion_eval(sim, sim->t);
  dgp_plan_project(sim, sim->sv.x, sim->sv.q);
  dgp_solver_speeds(sim, sim->sv.q, sim->sv.x);
  sim->sv.audit.impact_loss += dg_sim_kinetic_energy(sim) - ke_before;
  sim->topo_changes++;
  dgp_lambda_at(sim, sim->t, NULL);
  return DG_OK;
}

/* The arrays this room owns (buffers.c). */
void dgp_plan_buffers(dg_sim *sim, dgp_buf_list *l) {
  size_t nn = (size_t)sim->nn;
  dgp_buf_add_decl(l, &sim->sv.inertia, nn, sizeof(double)); /* dg_topo_inertia */
  dgp_buf_add(l, &sim->sv.x, nn, sizeof(double));
  dgp_buf_add(l, &sim->sv.normal_load, nn, sizeof(double));
  dgp_buf_add(l, &sim->sv.xw, nn, sizeof(double));
  dgp_buf_add(l, &sim->sv.tau, nn, sizeof(double));
  dgp_buf_add(l, &sim->sv.gvec, nn, sizeof(double));
  dgp_buf_add_plan(l, &sim->sv.G, nn * nn, sizeof(double));
  dgp_buf_add_plan(l, &sim->sv.gs_node, nn * nn, sizeof(int));
  dgp_buf_add_plan(l, &sim->sv.gs_dof, nn * nn, sizeof(int));
  dgp_buf_add_plan(l, &sim->sv.gs_val, nn * nn, sizeof(double));
  dgp_buf_add_plan(l, &sim->sv.row_start, nn + 1, sizeof(int));
  dgp_buf_add_plan(l, &sim->sv.single_node, nn, sizeof(int));
  dgp_buf_add_plan(l, &sim->sv.single_dof, nn, sizeof(int));
  dgp_buf_add_plan(l, &sim->sv.single_val, nn, sizeof(double));
  dgp_buf_add_plan(l, &sim->sv.multi_node, nn, sizeof(int));
  dgp_buf_add_plan(l, &sim->sv.copy_node, nn, sizeof(int));
  dgp_buf_add_plan(l, &sim->sv.copy_src, nn, sizeof(int));
  dgp_buf_add_plan(l, &sim->sv.pair_node, nn, sizeof(int));
  dgp_buf_add_plan(l, &sim->sv.pair_dof, 2 * nn, sizeof(int));
  dgp_buf_add_plan(l, &sim->sv.pair_val, 2 * nn, sizeof(double));
  dgp_buf_add_plan(l, &sim->sv.M, nn * nn, sizeof(double));
  dgp_buf_add_plan(l, &sim->sv.Minv, nn * nn, sizeof(double));
  dgp_buf_add_plan(l, &sim->sv.B, nn * nn, sizeof(double));
  dgp_buf_add_plan(l, &sim->sv.L, nn * nn, sizeof(double));
  dgp_buf_add(l, &sim->sv.q, nn, sizeof(double));
  dgp_buf_add(l, &sim->sv.s, (size_t)sim->ns, sizeof(double));
  dgp_buf_add(l, &sim->sv.f, nn, sizeof(double));
  dgp_buf_add(l, &sim->sv.scratch, nn, sizeof(double));
}
