/* The variable-kinematics room: a mode with a variable-ratio block (a CVT)
 * refreshes only the rows that change, every substep, instead of building
 * the topology again; and the inertial force of the changing ratio, −I Ġ q.
 * Workspace: dg_kin_ws (lib/sim.h). */
#include "solver.h"

#include <math.h>
#include <string.h>

/* Refresh: the link's new coefficients, checked against the build's. */
void dgp_kin_refresh_link(dg_sim *sim, const dg_block *b, int dst, int n, const double *coef,
                         const double *coef_rate) {
  dg_topo_ws *ws = &sim->sv.ws;
  /* the block's links in build order: the next one of this block */
  int k = ws->refresh_cursor;
  while (k < ws->nlinks && ws->link_block[k] != b->index)
    k++;
  if (k == ws->nlinks || ws->link_dst[k] != b->node[dst] || ws->link_n[k] != n) {
    ws->refresh_bad = true;
    return;
  }
  ws->refresh_cursor = k + 1;
  int f = ws->link_first[k];
  for (int i = 0; i < n; i++) {
    ws->link_coef[f + i] = coef[i];
    ws->link_rate[f + i] = coef_rate ? coef_rate[i] : 0.0;
  }
}

/* After a refresh of the rows: Λ's entries at the changed rows (a row that
 * changes is its build value times the changing coefficients, so the
 * entries that were zero stay zero). */
void dgp_kin_refresh_lambda(dg_sim *sim) {
  const dg_topo_ws *ws = &sim->sv.ws;
  size_t st = dgp_rst(sim);
  for (int a = 0; a < ws->nactive; a++) {
    const double *p = ws->P + (size_t)a * st;
    for (int k = sim->sv.lam.start[a]; k < sim->sv.lam.start[a + 1]; k++) {
      int node = sim->sv.lam.node[k];
      if (!ws->row_dirty[node])
        continue;
      const double *r = dgp_row_of(sim, node);
      double v = 0.0;
      for (int j = 0; j < ws->nraw; j++)
        v += p[j] * r[j];
      sim->sv.lam.coef[k] = v;
    }
  }
  sim->sv.kin.lam_stale = false;
}

/* Every substep of a mode with a variable-ratio block (a CVT): instead of
 * building the topology again, ask the variable blocks for their new
 * coefficients (their state_upstream in refresh mode: dg_topo_link_rate
 * records the values, the other dg_topo_* calls do nothing), recompute the
 * node rows that depend on them from the recorded links (R and Ṙ), then
 * those rows of G = R T and Ġ = Ṙ T, and M with its factor, or, where the
 * mode's ACCEL stage is the tree room's, the tree's system of the new
 * coefficients (O(n): tree.c, no M). The ties and
 * the elimination T do not change: a mode whose ties reach a changing row
 * is not refreshable and builds in full. Returns DG_OK, or -1 when the
 * refresh cannot be made (the structure differs: build in full). */
static int refresh_rows(dg_sim *sim) {
  sim->plan_gen = ++sim->plan_builds; /* the plan changes (lib/state.c) */
  dg_topo_ws *ws = &sim->sv.ws;
  size_t st = dgp_rst(sim); /* Ṙ and T (nraw is the build's) */
  ws->refreshing = true;
  ws->refresh_bad = false;
  ws->refresh_cursor = 0;
  for (int i = 0; i < sim->n_var_blocks; i++) {
    dg_block *b = &sim->blocks[sim->var_blocks[i]];
    b->klass->state_upstream(b, &sim->sv.topo);
  }
  ws->refreshing = false;
  if (ws->refresh_bad)
    return -1;
  int nraw = ws->nraw, nred = sim->sv.ndof;
  for (int k = 0; k < ws->nlinks; k++) {
    int dst = ws->link_dst[k];
    if (!ws->row_dirty[dst])
      continue;
    double *r = dgp_row_of(sim, dst), *rd = ws->Rd + (size_t)dst * st;
    for (int j = 0; j < nraw; j++)
      r[j] = rd[j] = 0.0;
    for (int i = ws->link_first[k], e = i + ws->link_n[k]; i < e; i++) {
      const double *sr = dgp_row_of(sim, ws->link_src[i]);
      const double *srd = ws->Rd + (size_t)ws->link_src[i] * st;
      double c = ws->link_coef[i], cr = ws->link_rate[i];
      for (int j = 0; j < nraw; j++) {
        r[j] += c * sr[j];
        rd[j] += c * srd[j] + cr * sr[j];
      }
    }
  }
  for (int n = 0; n < sim->nn; n++) {
    if (!ws->row_dirty[n])
      continue;
    double *gr = sim->sv.G + (size_t)n * dgp_gst(sim), *gd = sim->sv.kin.Gd + (size_t)n * dgp_gst(sim);
    dgp_reduced_row(sim, n, nred, gr);
    const double *rd = ws->Rd + (size_t)n * st;
    for (int j = 0; j < nred; j++) {
      double v = 0.0;
      for (int k = 0; k < nraw; k++)
        v += rd[k] * ws->T[(size_t)k * st + (size_t)j];
      gd[j] = v;
    }
    /* the non-zeros keep their places unless a coefficient reached zero */
    int a = sim->sv.row_start[n];
    for (int j = 0; j < nred; j++) {
      if (fabs(gr[j]) < 1e-15)
        gr[j] = 0.0;
      if (gr[j] == 0.0)
        continue;
      if (a >= sim->sv.row_start[n + 1] || sim->sv.gs_dof[a] != j)
        return -1;
      sim->sv.gs_val[a++] = gr[j];
    }
    if (a != sim->sv.row_start[n + 1])
      return -1;
  }
  sim->sv.kin.lam_stale = ws->nactive > 0;
  dgp_plan_speed_rows(sim);
  if (sim->sv.tree.on) {            /* the tree's system of the new coefficients (no M), */
    double *kap = sim->sv.loss.kap; /* factored for the κ the stage will take */
    for (int j = 0; j < ws->nmesh; j++)
      kap[j] = dgp_mesh_kappa(&sim->sv, j);
    dgp_tree_refresh(sim, kap); /* the values alone, the structure kept */
    if (!sim->sv.tree.on)
      return -1;
  } else if (dgp_plan_mass(sim, true) != DG_OK) {
    return -1;
  }
  return dgp_loss_build(sim) == DG_OK ? DG_OK : -1;
}

/* The kinematics at the point a substep evaluates (variable kinematics). */
int dgp_kin_update(dg_sim *sim) {
  if (sim->sv.kin.refreshable && !sim->no_refresh && refresh_rows(sim) == DG_OK) {
    sim->refreshes++;
    return DG_OK;
  }
  return dgp_solver_build(sim);
}

/* Kane / d'Alembert with x = G(t) q: the nodes also accelerate by Ġ q,
 * whose inertial force −I Ġ q joins the applied torques w. It keeps
 * d(KE)/dt equal to the applied power when a ratio changes. */
void dgp_kin_bias(dg_sim *sim, const double *q, double *w) {
  int nd = sim->sv.ndof;
  for (int n = 0; n < sim->nn; n++) {
    if (sim->sv.inertia[n] == 0.0 || !sim->sv.ws.row_dirty[n]) /* Ġ is zero elsewhere */
      continue;
    const double *gd = sim->sv.kin.Gd + (size_t)n * dgp_gst(sim);
    double bias = 0.0;
    for (int j = 0; j < nd; j++)
      bias += gd[j] * q[j];
    for (int i = 0; i < sim->sv.mot.np; i++) /* the prescribed columns' Ġ_p v */
      bias += gd[nd + i] * sim->sv.mot.v[i];
    w[n] -= sim->sv.inertia[n] * bias;
  }
}

/* The arrays this room owns (buffers.c). */
void dgp_kin_buffers(dg_sim *sim, dgp_buf_list *l) {
  size_t nn = (size_t)sim->nn;
  /* only for a graph with variable kinematics (a CVT) */
  size_t var = sim->sv.variable_kinematics ? nn * nn : 0;
  dgp_buf_add_plan(l, &sim->sv.kin.Gd, var, sizeof(double));
  dgp_buf_add_plan(l, &sim->sv.kin.Mfix, var, sizeof(double));
}
