/* The motion room: prescribed speeds (dg_topo_prescribe) and node angles.
 *
 * A prescribed shaft is a rheonomic constraint. The topology room keeps its
 * raw DOF out of the elimination's pivots, so after the free columns of G
 * come the prescribed ones:
 *     x = G_f q + G_p v(t),   ẍ = G_f q̇ + G_p v̇(t)
 * with v and v̇ from the blocks' motion hooks at each point evaluated. The
 * free DOFs follow M q̇ = G_fᵀ (w − I G_p v̇) (the inertial force of the
 * prescribed acceleration joins the applied torques), and the force a
 * prescription applies is the generalized residual along its column,
 *     f_i = G_p,iᵀ (I ẍ − w),
 * the torque that keeps its shaft on the speed (its shaft's speed is its
 * column's value, with coefficient 1); its power f_i v_i is booked to the
 * block by the energy audit. A prescribed speed that jumps between segments
 * (a new value held by a host, a breakpoint of a position schedule) moves
 * the free DOFs by the momentum-conserving projection, and the work of that
 * impulse, Σ ½ (v_i + v_i') J_i with J = G_pᵀ I (x' − x), goes to the
 * prescribing blocks.
 *
 * Node angles: θ̇ = x for every node, integrated with RK4's weights from
 * the node speeds of each segment's four stages, so an angle is as exact
 * as the speeds it integrates and continuous through mode changes.
 * Workspace: dg_motion_ws (lib/sim.h). */
#include "solver.h"

#include <math.h>
#include <string.h>

/* The mode's prescribed columns: which block gives each, and G's
 * non-zeros in them (nred = free + prescribed columns). */
void dgp_motion_plan(dg_sim *sim, int nred) {
  dg_motion_ws *m = &sim->sv.mot;
  const dg_topo_ws *ws = &sim->sv.ws;
  int nf = sim->sv.ndof;
  m->np = nred - nf;
  size_t st = dgp_gst(sim);
  m->n_gp = 0;
  m->vt = NAN;
  for (int i = 0; i < m->np; i++)
    m->block[i] = ws->raw_owner[ws->col_raw[nf + i]];
  for (int n = 0; n < sim->nn; n++) {
    const double *gr = sim->sv.G + (size_t)n * st;
    for (int i = 0; i < m->np; i++)
      if (gr[nf + i] != 0.0) {
        m->gp_node[m->n_gp] = n;
        m->gp_col[m->n_gp] = i;
        m->gp_val[m->n_gp++] = gr[nf + i];
      }
  }
}

/* The prescribed speeds and rates at time t, from the blocks' motion hooks
 * with the context's inputs (the caller has put them at t). */
void dgp_motion_eval(dg_sim *sim, double t) {
  dg_motion_ws *m = &sim->sv.mot;
  if (m->np == 0)
    return;
  dg_ctx *ctx = &sim->ctx;
  double saved = ctx->t;
  ctx->t = t;
  for (int i = 0; i < m->np; i++) {
    const dg_block *b = &sim->blocks[m->block[i]];
    double v = 0.0, vd = 0.0;
    b->klass->motion(b, ctx, &v, &vd);
    if (!(isfinite(v) && isfinite(vd)) && !sim->failed) {
      char path[DG_ERROR_PATH_LEN];
      dgp_pointer_append(path, sizeof path, "/blocks", b->id);
      dgp_error_set(&sim->err, DG_ERR_NUMERIC, sim->g->file, path,
                   "at t = %.6g s: the prescribed speed of block \"%s\" became %g (rate %g)", t,
                   b->id, v, vd);
      sim->failed = true;
    }
    m->v[i] = isfinite(v) ? v : 0.0;
    m->vd[i] = isfinite(vd) ? vd : 0.0;
  }
  m->vt = t;
  ctx->t = saved;
}

/* x += G_p v */
void dgp_motion_add_speeds(const dg_sim *sim, double *x) {
  const dg_motion_ws *m = &sim->sv.mot;
  for (int k = 0; k < m->n_gp; k++)
    x[m->gp_node[k]] += m->gp_val[k] * m->v[m->gp_col[k]];
}

/* w −= I G_p v̇: the inertial force of the prescribed accelerations. */
void dgp_motion_inertial(const dg_sim *sim, double *w) {
  const dg_motion_ws *m = &sim->sv.mot;
  for (int k = 0; k < m->n_gp; k++) {
    int n = m->gp_node[k];
    w[n] -= sim->sv.inertia[n] * m->gp_val[k] * m->vd[m->gp_col[k]];
  }
}

/* f_i = G_p,iᵀ (I G_f q̇ − w') with w' the applied torques less the
 * inertial force of the prescribed accelerations (so I ẍ − w exactly),
 * into f (np values). */
void dgp_motion_forces(const dg_sim *sim, const double *dq, const double *w, double *f) {
  const dg_motion_ws *m = &sim->sv.mot;
  const int *start = sim->sv.row_start, *dof = sim->sv.gs_dof;
  const double *val = sim->sv.gs_val;
  for (int i = 0; i < m->np; i++)
    f[i] = 0.0;
  for (int k = 0; k < m->n_gp; k++) {
    int n = m->gp_node[k];
    double acc = 0.0;
    for (int a = start[n]; a < start[n + 1]; a++)
      acc += val[a] * dq[dof[a]];
    f[m->gp_col[k]] += m->gp_val[k] * (sim->sv.inertia[n] * acc - w[n]);
  }
}

/* The prescribed speeds at the segment start (t, inputs right-continuous)
 * differ from those the committed speeds were made with: the free DOFs
 * take the momentum-conserving projection, and the impulse's work is
 * booked to the prescribing blocks. */
void dgp_motion_segment_start(dg_sim *sim, double t) {
  dg_motion_ws *m = &sim->sv.mot;
  if (m->np == 0)
    return;
  double *xold = sim->sv.gvec, *vold = sim->sv.f, *jimp = sim->sv.scratch;
  memcpy(xold, sim->sv.x, sizeof(double) * (size_t)sim->nn);
  memcpy(vold, m->v, sizeof(double) * (size_t)m->np);
  dgp_motion_eval(sim, t);
  bool jump = false;
  for (int i = 0; i < m->np; i++)
    jump = jump || m->v[i] != vold[i];
  if (!jump)
    return;
  dgp_plan_project(sim, xold, sim->sv.q);
  dgp_solver_speeds(sim, sim->sv.q, sim->sv.x);
  /* J_i = G_p,iᵀ I (x' − x), and its work ½ (v_i + v_i') J_i */
  for (int i = 0; i < m->np; i++)
    jimp[i] = 0.0;
  for (int k = 0; k < m->n_gp; k++) {
    int n = m->gp_node[k];
    jimp[m->gp_col[k]] += m->gp_val[k] * sim->sv.inertia[n] * (sim->sv.x[n] - xold[n]);
  }
  for (int i = 0; i < m->np; i++)
    sim->sv.audit.work[m->block[i]] += 0.5 * (m->v[i] + vold[i]) * jimp[i];
}

/* The arrays this room owns (buffers.c). */
void dgp_motion_buffers(dg_sim *sim, dgp_buf_list *l) {
  size_t nn = (size_t)sim->nn;
  dgp_buf_add_plan(l, &sim->sv.mot.block, nn, sizeof(int));
  dgp_buf_add(l, &sim->sv.mot.v, nn, sizeof(double));
  dgp_buf_add(l, &sim->sv.mot.vd, nn, sizeof(double));
  dgp_buf_add(l, &sim->sv.mot.force, nn, sizeof(double));
  dgp_buf_add(l, &sim->sv.mot.lam_force, nn, sizeof(double));
  dgp_buf_add_plan(l, &sim->sv.mot.gp_node, nn * nn, sizeof(int));
  dgp_buf_add_plan(l, &sim->sv.mot.gp_col, nn * nn, sizeof(int));
  dgp_buf_add_plan(l, &sim->sv.mot.gp_val, nn * nn, sizeof(double));
  dgp_buf_add(l, &sim->sv.mot.theta, nn, sizeof(double));
  dgp_buf_add(l, &sim->sv.mot.x1, nn, sizeof(double));
  dgp_buf_add(l, &sim->sv.mot.xsum, nn, sizeof(double));
}

double dg_ctx_motion_torque(dg_ctx *ctx, const dg_block *b) {
  dg_sim *sim = ctx->sim;
  const dg_motion_ws *m = &sim->sv.mot;
  for (int i = 0; i < m->np; i++)
    if (m->block[i] == b->index) {
      if (!sim->sv.lam.valid)
        dgp_rk4_compute_lambda(sim);
      return m->lam_force[i];
    }
  return 0.0;
}

/* At creation: the committed speeds made with the prescribed speeds of the
 * current time and inputs (no work booked: the simulation starts so). */
void dgp_solver_settle_motion(dg_sim *sim) {
  if (sim->sv.mot.np == 0)
    return;
  sim->ctx.state = sim->sv.s;
  dgp_bind_eval(sim);
  dgp_motion_eval(sim, sim->t);
  dgp_plan_project(sim, sim->sv.x, sim->sv.q);
  dgp_solver_speeds(sim, sim->sv.q, sim->sv.x);
}

/* An initial angle: the node's, and every node that turns with it as one
 * shaft in the current mode (the same row of G: an inertia's two ports, a
 * source's), so a block's ports agree. */
void dgp_solver_set_angle(dg_sim *sim, int node, double angle) {
  size_t st = dgp_gst(sim);
  int nred = sim->sv.ndof + sim->sv.mot.np;
  const double *r = sim->sv.G + (size_t)node * st;
  for (int n = 0; n < sim->nn; n++) {
    const double *rn = sim->sv.G + (size_t)n * st;
    bool same = true;
    for (int j = 0; j < nred && same; j++)
      same = rn[j] == r[j];
    if (same)
      sim->sv.mot.theta[n] = angle;
  }
}
