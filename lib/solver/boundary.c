/* The boundary room: what a host coupling to the drivetrain needs to know
 * about it at its ports, from the current mode's matrices (docs/host.md).
 *
 * At prescribed shafts (a host gives their speeds: speed_source at a
 * driveshaft or a spindle) the drivetrain answers with the prescriptions'
 * forces f. With M split into free (f) and prescribed (p) columns, the
 * free DOFs follow M_ff q̇ = G_fᵀ w − M_fp v̇, so
 *     f = (M_pp − M_pf M_ff⁻¹ M_fp) v̇ + (terms in q, v, states)
 * and the drivetrain's effective inertia there is the Schur complement
 *     J = M_pp − M_pf M_ff⁻¹ M_fp     (n × n over the prescriptions);
 * ∂f/∂v (at the state's q, v̇ and block states held) is taken by central
 * differences of the forces, the speeds moved by ±1e-6 (relative).
 *
 * At free shafts (a host applies torques: torque_source bound to a
 * channel), a torque τ at ports P accelerates them by Y τ with the
 * mobility Y = G_P M_ff⁻¹ G_Pᵀ, so the effective inertia there is Y⁻¹. */
#include "solver.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The prescribed column of block `b`, or -1. */
static int column_of(const dg_sim *sim, int b) {
  for (int i = 0; i < sim->sv.mot.np; i++)
    if (sim->sv.mot.block[i] == b)
      return i;
  return -1;
}

/* out (nd) = G_fᵀ I G_p[:, i] */
static void m_fp_column(const dg_sim *sim, int i, double *out) {
  const dg_motion_ws *m = &sim->sv.mot;
  for (int d = 0; d < sim->sv.ndof; d++)
    out[d] = 0.0;
  for (int k = 0; k < m->n_gp; k++) {
    if (m->gp_col[k] != i)
      continue;
    int n = m->gp_node[k];
    double in = sim->sv.inertia[n] * m->gp_val[k];
    for (int a = sim->sv.row_start[n]; a < sim->sv.row_start[n + 1]; a++)
      out[sim->sv.gs_dof[a]] += sim->sv.gs_val[a] * in;
  }
}

/* Σ_n I_n G_p[n, i] G_p[n, j] */
static double m_pp(const dg_sim *sim, int i, int j) {
  const dg_motion_ws *m = &sim->sv.mot;
  double v = 0.0;
  for (int a = 0; a < m->n_gp; a++) {
    if (m->gp_col[a] != i)
      continue;
    for (int b = 0; b < m->n_gp; b++)
      if (m->gp_col[b] == j && m->gp_node[b] == m->gp_node[a])
        v += sim->sv.inertia[m->gp_node[a]] * m->gp_val[a] * m->gp_val[b];
  }
  return v;
}

/* The prescriptions' forces at the committed state with the speeds v
 * (v̇ and everything else held), into f (np). */
static void forces_at(dg_sim *sim, const double *v, double *f) {
  dg_motion_ws *m = &sim->sv.mot;
  double *y = sim->sv.rk.y0, *dy = sim->sv.rk.ysave;
  memcpy(m->v, v, sizeof(double) * (size_t)m->np);
  dgp_rk4_gather(sim, y);
  m->frozen = true;
  dgp_rk4_derivative(sim, sim->t, y, dy);
  m->frozen = false;
  memcpy(f, m->force, sizeof(double) * (size_t)m->np);
}

int dgp_solver_motion_boundary(dg_sim *sim, int n, const int *blocks, double *inertia,
                              double *dforce, char *why, size_t why_size) {
  dg_motion_ws *m = &sim->sv.mot;
  int nd = sim->sv.ndof, np = m->np;
  int *col = calloc((size_t)(n > 0 ? n : 1), sizeof *col);
  double *a = calloc((size_t)(nd > 0 ? nd : 1), sizeof *a);
  double *b = calloc((size_t)(nd > 0 ? nd : 1), sizeof *b);
  double *v0 = calloc((size_t)(np > 0 ? 3 * np : 1), sizeof *v0);
  int rc = DG_OK;
  if (!col || !a || !b || !v0) {
    rc = DG_ERR_NOMEM;
    snprintf(why, why_size, "out of memory");
    goto done;
  }
  for (int i = 0; i < n; i++) {
    col[i] = column_of(sim, blocks[i]);
    if (col[i] < 0) {
      rc = DG_ERR_USAGE;
      snprintf(why, why_size, "block \"%s\" prescribes no speed in the current mode",
               sim->blocks[blocks[i]].id);
      goto done;
    }
  }
  /* J_ij = M_pp − M_fp,iᵀ M_ff⁻¹ M_fp,j */
  for (int i = 0; inertia && i < n; i++) {
    m_fp_column(sim, col[i], a);
    dgp_cholesky_solve(sim->sv.L, nd, dgp_mst(sim), a);
    for (int j = 0; j < n; j++) {
      m_fp_column(sim, col[j], b);
      inertia[(size_t)i * (size_t)n + (size_t)j] = m_pp(sim, col[i], col[j]) - dgp_dot(a, b, nd);
    }
  }
  if (dforce) {
    double *v = v0 + np, *fp = v0 + 2 * np, *fm = sim->sv.ports.acc; /* scratch, nn >= np */
    dg_ctx saved = sim->ctx;
    sim->ctx.state = sim->sv.s;
    dgp_motion_eval(sim, sim->t);
    memcpy(v0, m->v, sizeof(double) * (size_t)np);
    for (int j = 0; j < n; j++) {
      double h = 1e-6 * fmax(1.0, fabs(v0[col[j]]));
      memcpy(v, v0, sizeof(double) * (size_t)np);
      v[col[j]] = v0[col[j]] + h;
      forces_at(sim, v, fp);
      v[col[j]] = v0[col[j]] - h;
      forces_at(sim, v, fm);
      for (int i = 0; i < n; i++)
        dforce[(size_t)i * (size_t)n + (size_t)j] = (fp[col[i]] - fm[col[i]]) / (2.0 * h);
    }
    memcpy(m->v, v0, sizeof(double) * (size_t)np);
    sim->ctx = saved;
    dgp_bind_eval(sim);
  }
done:
  free(col);
  free(a);
  free(b);
  free(v0);
  return rc;
}

int dgp_solver_port_mobility(dg_sim *sim, int n, const int *nodes, double *y) {
  int nd = sim->sv.ndof;
  double *a = calloc((size_t)(nd > 0 ? nd : 1), sizeof *a);
  if (!a)
    return DG_ERR_NOMEM;
  for (int i = 0; i < n; i++) {
    /* a = M⁻¹ g_i with g_i node i's row of G_f */
    for (int d = 0; d < nd; d++)
      a[d] = 0.0;
    for (int k = sim->sv.row_start[nodes[i]]; k < sim->sv.row_start[nodes[i] + 1]; k++)
      a[sim->sv.gs_dof[k]] = sim->sv.gs_val[k];
    dgp_cholesky_solve(sim->sv.L, nd, dgp_mst(sim), a);
    for (int j = 0; j < n; j++) {
      double v = 0.0;
      for (int k = sim->sv.row_start[nodes[j]]; k < sim->sv.row_start[nodes[j] + 1]; k++)
        v += sim->sv.gs_val[k] * a[sim->sv.gs_dof[k]];
      y[(size_t)i * (size_t)n + (size_t)j] = v;
    }
  }
  free(a);
  return DG_OK;
}
