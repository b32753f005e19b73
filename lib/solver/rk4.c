/* The RK4 room: one stage SPEEDS → FORCES → ACCEL over the plan, RK4's
 * stages and continuous extension, and the tie forces a block asks for.
 *
 * Every stage: x = G q; blocks add node torques τ (and write their states'
 * rates); q̇ = M⁻¹ Gᵀ τ with the lossy meshes' loss torques (loss.c); tie
 * multipliers λ = Λ (I ẍ − τ) when wanted. Workspaces: dg_rk4_ws,
 * dg_lambda_ws (lib/sim.h). */
#include "solver.h"

#include <string.h>

/* out = A v for the rows × n matrix A of row stride st: two rows at a time,
 * each row's sum in its plain order (results bit for bit those of a row
 * after row) while v is read once for both; the compiler keeps the two
 * sums in one SSE2 register. */
static inline void mat_vec(double *out, const double *A, size_t st, int rows, const double *v,
                           int n) {
  int i = 0;
  for (; i + 1 < rows; i += 2) {
    const double *a0 = A + (size_t)i * st, *a1 = a0 + st;
    double s0 = 0.0, s1 = 0.0;
    for (int j = 0; j < n; j++) {
      double vj = v[j];
      s0 += a0[j] * vj;
      s1 += a1[j] * vj;
    }
    out[i] = s0;
    out[i + 1] = s1;
  }
  if (i < rows)
    out[i] = dgp_dot(A + (size_t)i * st, v, n);
}

/* One RK4 stage: ẏ at (t, y), y = [q; s], in three stages over the plan.
 * SPEEDS: x = G q. FORCES: the torque hooks add node torques and write the
 * states' rates (their powers booked for the energy audit), then the
 * efficiency factors. ACCEL: q̇ = M⁻¹ Gᵀ w, and the tie forces when wanted.
 * With a variable ratio the plan's rows are refreshed first. */
void dgp_rk4_derivative(dg_sim *sim, double t, const double *y, double *dy) {
  sim->stages++;
  if (sim->compiled && dgp_compiled_stage(sim, t, y, dy)) /* compile.c */
    return;
  int nd = sim->sv.ndof;
  const double *s = y + nd;
  if (sim->sv.variable_kinematics) {
    sim->sv.topo_state = s;
    int rc = dgp_kin_update(sim);
    sim->sv.topo_state = sim->sv.s;
    if (rc != DG_OK && !sim->failed)
      dgp_fail_topology(sim, rc);
  }
  dg_ctx *ctx = &sim->ctx;
  int np = sim->sv.mot.np;
  if (np > 0 && !sim->sv.mot.frozen) { /* MOTION: the prescribed speeds at t (motion.c) */
    ctx->state = s;
    ctx->t = t;
    dgp_bind_eval_motion(sim); /* the prescribed speeds' inputs; the rest after SPEEDS */
    dgp_motion_eval(sim, t);
  }
  /* SPEEDS */
  double *x = sim->sv.xw, *tau = sim->sv.tau, *w = tau; /* w: tau after efficiency, in place */
  sim->sv.xw_end = false;
  if (sim->sv.xw_committed) { /* G q at this very q and plan: the committed speeds */
    memcpy(x, sim->sv.x, sizeof(double) * (size_t)sim->nn);
    sim->sv.xw_committed = false;
  } else {
    dgp_solver_speeds(sim, y, x);
  }
  /* FORCES */
  memset(tau, 0, sizeof(double) * (size_t)sim->nn);
  ctx->t = t;
  ctx->speed = x;
  ctx->torque = tau;
  ctx->state = s;
  ctx->state_rate = dy + nd;
  ctx->state_commit = NULL;
  dgp_bind_eval(sim); /* inputs bound to signals, at this point */
  if (sim->ns > 0)
    memset(dy + nd, 0, sizeof(double) * (size_t)sim->ns);
  double *de = sim->sv.audit.pcur; /* energy audit: each torque hook's power */
  for (int i = 0; i < sim->n_torque; i++) {
    ctx->power = 0.0;
    sim->torque[i].fn(sim->torque[i].b, ctx);
    de[i] = ctx->power;
  }
  if (sim->sv.variable_kinematics)
    dgp_kin_bias(sim, y, w);
  if (np > 0)
    dgp_motion_inertial(sim, w);
  /* ACCEL */
  if (sim->sv.tree.on) { /* one sparse solve, the meshes' losses included */
    de[sim->n_torque] = dgp_tree_accel(sim, dy, w);
  } else if (!sim->sv.use_B) { /* f = Gᵀ w, then M⁻¹ f (or the factor of this substep's M) */
    double *f = sim->sv.f;
    dgp_g_transpose(sim, w, f);
    if (sim->sv.variable_kinematics) {
      memcpy(dy, f, sizeof(double) * (size_t)nd);
      dgp_cholesky_solve(sim->sv.L, nd, dgp_mst(sim), dy);
    } else {
      mat_vec(dy, sim->sv.Minv, dgp_mst(sim), nd, f, nd);
    }
  } else { /* q̇ = B w, B = M⁻¹ Gᵀ of the mode */
    mat_vec(dy, sim->sv.B, (size_t)sim->nn, nd, w, sim->nn);
  }
  /* the lossy meshes' loss torques, with the accelerations they change */
  if (!sim->sv.tree.on)
    de[sim->n_torque] = sim->sv.ws.nmesh > 0 ? dgp_loss_apply(sim, y, dy, w) : 0.0;
  if (sim->n_motion > 0) { /* each prescription's power f_i v_i */
    double *pm = de + sim->n_torque + 1, *fm = sim->sv.mot.force;
    for (int k = 0; k < sim->n_motion; k++)
      pm[k] = 0.0;
    dgp_motion_forces(sim, dy, w, fm);
    for (int i = 0; i < np; i++)
      pm[sim->motion_slot[sim->sv.mot.block[i]]] += fm[i] * sim->sv.mot.v[i];
  }
  ctx->state_rate = NULL;
  if (sim->sv.lam.want) {
    if (sim->sv.kin.lam_stale)
      dgp_kin_refresh_lambda(sim);
    /* ACCEL stage, tie forces: λ = Λ (I ẍ − w) at the nodes Λ reaches,
     * with ẍ = G q̇ row by row */
    const int *start = sim->sv.row_start, *dof = sim->sv.gs_dof;
    const double *val = sim->sv.gs_val;
    for (int a = 0; a < sim->sv.ws.nactive; a++) {
      double v = 0.0;
      for (int k = sim->sv.lam.start[a]; k < sim->sv.lam.start[a + 1]; k++) {
        int n = sim->sv.lam.node[k];
        double acc = 0.0;
        for (int z = start[n]; z < start[n + 1]; z++)
          acc += val[z] * dy[dof[z]];
        v += sim->sv.lam.coef[k] * (sim->sv.inertia[n] * acc - w[n]);
      }
      sim->sv.lam.value[a] = v;
      sim->sv.lam.factor[a] = 1.0;
    }
    for (int j = 0; j < sim->sv.ws.nmesh; j++) {
      int t = sim->sv.ws.mesh_tie[j];
      if (t >= 0 && sim->sv.ws.ties[t].active >= 0)
        sim->sv.lam.factor[sim->sv.ws.ties[t].active] = 1.0 + sim->sv.loss.kap[j];
    }
    if (np > 0) /* the prescriptions' forces at this point too */
      memcpy(sim->sv.mot.lam_force, sim->sv.mot.force, sizeof(double) * (size_t)np);
    sim->sv.lam.valid = true;
  }
}

void dgp_solver_rhs(dg_sim *sim, double t, const double *y, double *dy) {
  bool want = sim->sv.lam.want;
  sim->sv.lam.want = false;
  dgp_rk4_derivative(sim, t, y, dy);
  sim->sv.lam.want = want;
}

/* y = [q; s] */
void dgp_rk4_gather(dg_sim *sim, double *y) {
  memcpy(y, sim->sv.q, sizeof(double) * (size_t)sim->sv.ndof);
  if (sim->ns > 0)
    memcpy(y + sim->sv.ndof, sim->sv.s, sizeof(double) * (size_t)sim->ns);
}

/* RK4 stages 2-4 and the combination from y0 and k1 over h; the result is
 * left in yt. */
void dgp_rk4_stages(dg_sim *sim, double t, double h, int ny) {
  if (sim->compiled && dgp_compiled_stages(sim, t, h)) /* compile.c */
    return;
  const double *y0 = sim->sv.rk.y0, *k1 = sim->sv.rk.k1;
  double *yt = sim->sv.rk.yt, *k2 = sim->sv.rk.k2, *k3 = sim->sv.rk.k3, *k4 = sim->sv.rk.k4;
  int ne = sim->sv.audit.ne;
  int nn = sim->nn;
  const double *xw = sim->sv.xw;
  /* the node angles' quadrature x1 + 2 x2 + 2 x3 + x4, where the commit
   * cannot take it from the DOFs' (dgp_angles_linear): nn = 0 */
  double *xs = sim->sv.mot.xsum;
  if (dgp_angles_linear(&sim->sv))
    nn = 0;
  dgp_axpy(yt, y0, 0.5 * h, k1, ny);
  dgp_inputs_at(sim, t + 0.5 * h);
  sim->sv.audit.pcur = sim->sv.audit.pw + ne;
  dgp_rk4_derivative(sim, t + 0.5 * h, yt, k2);
  dgp_axpy(xs, sim->sv.mot.x1, 2.0, xw, nn);
  dgp_axpy(yt, y0, 0.5 * h, k2, ny);
  sim->sv.audit.pcur = sim->sv.audit.pw + 2 * ne;
  dgp_rk4_derivative(sim, t + 0.5 * h, yt, k3);
  dgp_axpy(xs, xs, 2.0, xw, nn);
  dgp_axpy(yt, y0, h, k3, ny);
  dgp_inputs_at(sim, t + h);
  sim->sv.audit.pcur = sim->sv.audit.pw + 3 * ne;
  dgp_rk4_derivative(sim, t + h, yt, k4);
  dgp_axpy(xs, xs, 1.0, xw, nn); /* 1·x is x: xs + xw */
  if (sim->sv.ws.nmesh > 0)
    memcpy(sim->sv.loss.p4, sim->sv.loss.p, sizeof(double) * (size_t)sim->sv.ws.nmesh);
  sim->sv.audit.pcur = sim->sv.audit.pw + 4 * ne; /* other evaluations book nothing */
  double c = h / 6.0; /* y0 + h/6 (k1 + 2 k2 + 2 k3 + k4), in pairs as dgp_axpy */
  int i = 0;
  for (; i + 1 < ny; i += 2) {
    double s0 = k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i];
    double s1 = k1[i + 1] + 2.0 * k2[i + 1] + 2.0 * k3[i + 1] + k4[i + 1];
    double a0 = y0[i], a1 = y0[i + 1];
    yt[i] = a0 + c * s0;
    yt[i + 1] = a1 + c * s1;
  }
  if (i < ny)
    yt[i] = y0[i] + c * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]);
}

/* The node angles of a segment of length h: with RK4's weights on the
 * stages' node speeds, or G times the DOFs' quadrature h q0 + h²/6 (k1 +
 * k2 + k3) where x = G q (dgp_angles_linear; compile.c writes the same
 * expressions). */
void dgp_commit_angles(dg_sim *sim, double h, int nd) {
  double *theta = sim->sv.mot.theta, *xs = sim->sv.mot.xsum;
  if (!dgp_angles_linear(&sim->sv)) {
    dgp_axpy(theta, theta, h / 6.0, xs, sim->nn);
    return;
  }
  const double *y0 = sim->sv.rk.y0, *k1 = sim->sv.rk.k1, *k2 = sim->sv.rk.k2, *k3 = sim->sv.rk.k3;
  double *qa = sim->sv.mot.x1, c2 = h * h / 6.0; /* x1 is free: nd <= nn */
  for (int j = 0; j < nd; j++)
    qa[j] = h * y0[j] + c2 * (k1[j] + k2[j] + k3[j]);
  dgp_solver_speeds(sim, qa, xs);
  for (int n = 0; n < sim->nn; n++)
    theta[n] = theta[n] + xs[n];
}

/* The state at t + θh on RK4's continuous extension (third order, exact at
 * θ = 0 and 1), into ydense. */
void dgp_rk4_dense(dg_sim *sim, double theta, double h, int ny) {
  double t2 = theta * theta, t3 = t2 * theta;
  double b1 = theta - 1.5 * t2 + 2.0 / 3.0 * t3, b23 = t2 - 2.0 / 3.0 * t3,
         b4 = -0.5 * t2 + 2.0 / 3.0 * t3;
  for (int i = 0; i < ny; i++)
    sim->sv.rk.ydense[i] = sim->sv.rk.y0[i] + h * (b1 * sim->sv.rk.k1[i] + b23 * (sim->sv.rk.k2[i] + sim->sv.rk.k3[i]) +
                                       b4 * sim->sv.rk.k4[i]);
}

/* Tie forces where no stage has computed them (the end of a segment, the
 * state after a mode change): one more force pass at that point, made only
 * when a block asks. (The last RK4 stage's forces are no substitute: its
 * state y0 + h·k3 is O(h²) off the segment's end, which moved the hold
 * forces of a launching AWD car by 1e-3 of their value and changed its
 * stick-slip decisions.) */
void dgp_rk4_compute_lambda(dg_sim *sim) {
  dg_ctx saved = sim->ctx;
  const double *y = sim->sv.lam.y;
  if (!y) {
    dgp_rk4_gather(sim, sim->sv.rk.y0);
    y = sim->sv.rk.y0;
  }
  sim->sv.lam.want = true;
  dgp_rk4_derivative(sim, sim->sv.lam.t, y, sim->sv.rk.ysave);
  sim->sv.lam.want = false;
  sim->ctx = saved;
  dgp_bind_eval(sim); /* back at the asking hook's point */
}

/* The active row of a tie with its forces computed at the asked point, or
 * -1 (no such tie, or redundant). */
static int tie_row(dg_ctx *ctx, int tie) {
  dg_sim *sim = ctx->sim;
  if (tie < 0 || tie >= sim->sv.ws.nties || sim->sv.ws.ties[tie].active < 0)
    return -1;
  if (!sim->sv.lam.valid)
    dgp_rk4_compute_lambda(sim);
  return sim->sv.ws.ties[tie].active;
}

double dg_ctx_tie_force(dg_ctx *ctx, int tie) {
  int a = tie_row(ctx, tie);
  return a < 0 ? 0.0 : ctx->sim->sv.lam.value[a];
}

double dg_ctx_tie_factor(dg_ctx *ctx, int tie) {
  int a = tie_row(ctx, tie);
  return a < 0 ? 1.0 : ctx->sim->sv.lam.factor[a];
}

/* The arrays this room owns (buffers.c). */
void dgp_rk4_buffers(dg_sim *sim, dgp_buf_list *l) {
  size_t nn = (size_t)sim->nn, ny = (size_t)(sim->nn + sim->ns), mt = (size_t)sim->sv.ws.max_ties;
  dgp_buf_add(l, &sim->sv.lam.factor, mt, sizeof(double));
  dgp_buf_add(l, &sim->sv.rk.y0, ny, sizeof(double));
  dgp_buf_add(l, &sim->sv.rk.yt, ny, sizeof(double));
  dgp_buf_add(l, &sim->sv.rk.k1, ny, sizeof(double));
  dgp_buf_add(l, &sim->sv.rk.k2, ny, sizeof(double));
  dgp_buf_add(l, &sim->sv.rk.k3, ny, sizeof(double));
  dgp_buf_add(l, &sim->sv.rk.k4, ny, sizeof(double));
  dgp_buf_add(l, &sim->sv.lam.value, mt, sizeof(double));
  dgp_buf_add_plan(l, &sim->sv.lam.start, mt + 1, sizeof(int));
  /* Λ: a row per active tie (at most nn), at most nn entries each */
  dgp_buf_add_plan(l, &sim->sv.lam.node, nn * nn, sizeof(int));
  dgp_buf_add_plan(l, &sim->sv.lam.coef, nn * nn, sizeof(double));
  dgp_buf_add(l, &sim->sv.rk.ydense, ny, sizeof(double));
  dgp_buf_add(l, &sim->sv.rk.ysave, ny, sizeof(double));
}
