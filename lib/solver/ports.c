/* The ports room: the torque passing through every port, read between steps
 * ("block.port.torque": what a host reads off a spindle or a driveshaft).
 *
 * At a node (a shaft) every block that has a port there applies a torque
 * τ_b = (its hooks' torques there) + (its constraints' forces there)
 * − (its own inertia there)·ẍ, and these sum to zero: the shaft itself has
 * no inertia. The constraint forces come from the multipliers of every
 * constraint of the mode — each link (x_dst − Σ c x_src), each active tie
 * and each prescribed speed, owned by the block that declared it, the
 * columns of A over nodes: the node residual r = I ẍ_f − w of the stage
 * (ẍ_f = G_f q̇, w the applied torques with the inertial forces of the
 * prescribed and varying rows) lies in range(A), so λ = (AᵀA)⁻¹ Aᵀ r
 * exactly, and block b's force at node n is Σ_{c of b} A[n, c] λ_c. The
 * hooks' torques are taken by running each torque hook alone; the lossy
 * meshes' loss torques belong to the mesh's block. Computed on demand at
 * the committed state and kept until the state, the mode or an input
 * changes. Workspace: dg_port_ws (lib/sim.h). */
#include "solver.h"

#include <math.h>
#include <string.h>

/* The first of block b's ports on node n, or -1. */
static int port_on(const dg_sim *sim, int b, int n) {
  const dg_block *blk = &sim->blocks[b];
  for (int p = 0; p < sim->g->blocks[b].num_ports; p++)
    if (blk->node[p] == n)
      return p;
  return -1;
}

/* The constraints of the mode as columns of A over nodes, with their
 * owners, and AᵀA's factor; the number of columns, or -1. */
static int constraint_basis(dg_sim *sim) {
  dg_port_ws *pw = &sim->sv.ports;
  const dg_topo_ws *ws = &sim->sv.ws;
  size_t st = (size_t)sim->nn;
  int nn = sim->nn, K = 0;
  if (!ws->links_complete)
    return -1;
  for (int c = 0; c < nn; c++)
    memset(pw->cA + (size_t)c * st, 0, sizeof(double) * st);
  for (int k = 0; k < ws->nlinks && K < nn; k++, K++) {
    double *col = pw->cA + (size_t)K * st;
    col[ws->link_dst[k]] += 1.0;
    for (int i = ws->link_first[k], e = i + ws->link_n[k]; i < e; i++)
      col[ws->link_src[i]] -= ws->link_coef[i];
    pw->owner[K] = ws->link_block[k];
  }
  for (int t = 0; t < ws->nties; t++) {
    const dg_tie *tie = &ws->ties[t];
    if (tie->active < 0)
      continue;
    if (K >= nn)
      return -1;
    double *col = pw->cA + (size_t)K * st;
    for (int i = tie->first; i < tie->first + tie->n; i++)
      col[ws->tie_node[i]] += ws->tie_coef[i];
    pw->owner[K++] = tie->block;
  }
  for (int k = 0; k < ws->nraw; k++) {
    if (!ws->raw_presc[k])
      continue;
    bool by_tie = false;
    for (int t = 0; t < ws->nties && !by_tie; t++)
      by_tie = ws->ties[t].presc == k;
    if (by_tie)
      continue;
    if (K >= nn)
      return -1;
    pw->cA[(size_t)K * st + (size_t)ws->raw_node[k]] = 1.0;
    pw->owner[K++] = ws->raw_owner[k];
  }
  for (int i = 0; i < K; i++)
    for (int j = 0; j <= i; j++) {
      double v = dgp_dot(pw->cA + (size_t)i * st, pw->cA + (size_t)j * st, nn);
      pw->cAtA[(size_t)i * st + (size_t)j] = pw->cAtA[(size_t)j * st + (size_t)i] = v;
    }
  return dgp_cholesky(pw->cAtA, pw->cAtA, K, st) == 0 ? K : -1;
}

/* Each torque hook alone at the point the last stage evaluated: the
 * torque each block applies at each of its ports. */
static void hook_torques(dg_sim *sim) {
  dg_port_ws *pw = &sim->sv.ports;
  dg_ctx *ctx = &sim->ctx;
  double *scratch = sim->sv.scratch;
  memset(scratch, 0, sizeof(double) * (size_t)sim->nn);
  memset(pw->applied, 0, sizeof(double) * (size_t)sim->n_ports);
  ctx->torque = scratch;
  ctx->state_rate = pw->rate; /* the hooks' rates, not wanted here */
  for (int i = 0; i < sim->n_torque; i++) {
    const dg_block *b = sim->torque[i].b;
    ctx->power = 0.0;
    sim->torque[i].fn(sim->torque[i].b, ctx);
    int np = sim->g->blocks[b->index].num_ports;
    for (int p = 0; p < np; p++) {
      int n = b->node[p];
      if (port_on(sim, b->index, n) == p)
        pw->applied[pw->base[b->index] + p] += scratch[n];
    }
    for (int p = 0; p < np; p++)
      scratch[b->node[p]] = 0.0;
  }
  ctx->torque = sim->sv.tau;
  ctx->state_rate = NULL;
}

/* The lossy meshes' loss torques, to the blocks of the meshes. */
static void loss_torques(dg_sim *sim) {
  dg_port_ws *pw = &sim->sv.ports;
  const dg_topo_ws *ws = &sim->sv.ws;
  for (int j = 0; j < ws->nmesh; j++) {
    double f = sim->sv.loss.kap[j] * sim->sv.loss.lam[j];
    if (f == 0.0)
      continue;
    int owner = ws->mesh_link[j] >= 0 ? ws->link_block[ws->mesh_link[j]]
                                      : ws->ties[ws->mesh_tie[j]].block;
    const int *bn = sim->sv.loss.bn + sim->sv.loss.b0[j];
    const double *bv = sim->sv.loss.bv + sim->sv.loss.b0[j];
    for (int k = 0; k < sim->sv.loss.nb[j]; k++) {
      int p = port_on(sim, owner, bn[k]);
      if (p >= 0)
        pw->applied[pw->base[owner] + p] += f * bv[k];
    }
  }
}

static int compute_port_torques(dg_sim *sim) {
  dg_port_ws *pw = &sim->sv.ports;
  size_t st = (size_t)sim->nn;
  int nn = sim->nn, nd = sim->sv.ndof;
  int K = constraint_basis(sim);
  if (K < 0)
    return DG_ERR_NUMERIC;
  dg_ctx saved = sim->ctx;
  double *y = sim->sv.rk.y0, *dy = sim->sv.rk.ysave;
  dgp_rk4_gather(sim, y);
  dgp_rk4_derivative(sim, sim->t, y, dy);
  /* r = I G_f q̇ − w, and the true accelerations */
  double *r = sim->sv.gvec, *acc = pw->acc, *lam = sim->sv.f;
  const int *start = sim->sv.row_start, *dof = sim->sv.gs_dof;
  const double *val = sim->sv.gs_val;
  for (int n = 0; n < nn; n++) {
    double a = 0.0;
    for (int k = start[n]; k < start[n + 1]; k++)
      a += val[k] * dy[dof[k]];
    r[n] = sim->sv.inertia[n] * a - sim->sv.tau[n];
    acc[n] = a;
  }
  const dg_motion_ws *m = &sim->sv.mot;
  for (int k = 0; k < m->n_gp; k++)
    acc[m->gp_node[k]] += m->gp_val[k] * m->vd[m->gp_col[k]];
  if (sim->sv.variable_kinematics)
    for (int n = 0; n < nn; n++) {
      const double *gd = sim->sv.kin.Gd + (size_t)n * dgp_gst(sim);
      for (int j = 0; j < nd; j++)
        acc[n] += gd[j] * y[j];
      for (int i = 0; i < m->np; i++)
        acc[n] += gd[nd + i] * m->v[i];
    }
  for (int c = 0; c < K; c++)
    lam[c] = dgp_dot(pw->cA + (size_t)c * st, r, nn);
  dgp_cholesky_solve(pw->cAtA, K, st, lam);
  hook_torques(sim);
  loss_torques(sim);
  for (int b = 0; b < sim->nb; b++) {
    const dg_block *blk = &sim->blocks[b];
    for (int p = 0; p < sim->g->blocks[b].num_ports; p++) {
      int i = pw->base[b] + p, n = blk->node[p];
      if (port_on(sim, b, n) != p) {
        pw->torque[i] = 0.0; /* a second port of the block on one shaft */
        continue;
      }
      double f = 0.0;
      for (int c = 0; c < K; c++)
        if (pw->owner[c] == b)
          f += pw->cA[(size_t)c * st + (size_t)n] * lam[c];
      pw->torque[i] = pw->applied[i] + f - pw->inertia[i] * acc[n];
    }
  }
  sim->ctx = saved;
  dgp_bind_eval(sim);
  return DG_OK;
}

double dgp_solver_port_torque(dg_sim *sim, int block, int port) {
  dg_port_ws *pw = &sim->sv.ports;
  if (!(pw->valid && pw->t == sim->t && pw->segments == sim->segments &&
        pw->topo_changes == sim->topo_changes && pw->inputs == sim->input_epoch)) {
    if (sim->failed || compute_port_torques(sim) != DG_OK)
      return NAN;
    pw->valid = true;
    pw->t = sim->t;
    pw->segments = sim->segments;
    pw->topo_changes = sim->topo_changes;
    pw->inputs = sim->input_epoch;
  }
  return pw->torque[pw->base[block] + port];
}

/* The arrays this room owns (buffers.c). */
void dgp_ports_buffers(dg_sim *sim, dgp_buf_list *l) {
  size_t nn = (size_t)sim->nn, np = (size_t)sim->n_ports;
  dgp_buf_add(l, &sim->sv.ports.base, (size_t)sim->nb + 1, sizeof(int));
  dgp_buf_add_decl(l, &sim->sv.ports.inertia, np, sizeof(double)); /* dg_topo_inertia */
  dgp_buf_add(l, &sim->sv.ports.applied, np, sizeof(double));
  dgp_buf_add(l, &sim->sv.ports.torque, np, sizeof(double));
  dgp_buf_add_plan(l, &sim->sv.ports.cA, nn * nn, sizeof(double));
  dgp_buf_add_plan(l, &sim->sv.ports.cAtA, nn * nn, sizeof(double));
  dgp_buf_add_plan(l, &sim->sv.ports.owner, nn, sizeof(int));
  dgp_buf_add(l, &sim->sv.ports.rate, (size_t)sim->ns, sizeof(double));
  dgp_buf_add(l, &sim->sv.ports.acc, nn, sizeof(double));
}
