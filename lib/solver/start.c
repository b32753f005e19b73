/* The start room: initial speeds given exactly, the rest projected. */
#include "solver.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* Meets x[node[i]] = value[i] exactly (Gaussian elimination of the affine
 * conditions, q = T z + c) and fills the remaining freedom z by minimizing
 * the kinetic-energy distance to the current speeds, (q − q0)ᵀ M (q − q0). */
int dgp_solver_set_speeds(dg_sim *sim, int n, const int *node, const double *value, char *why,
                         size_t why_size) {
  int nd = sim->sv.ndof;
  size_t snd = (size_t)(nd ? nd : 1);
  double *T = calloc(snd * snd, sizeof(double));
  double *c = calloc(snd, sizeof(double));
  double *a = calloc(snd, sizeof(double));
  double *A = calloc(snd * snd, sizeof(double));
  double *rhs = calloc(snd, sizeof(double));
  double *tmp = calloc(snd, sizeof(double));
  int rc = DG_OK;
  if (!T || !c || !a || !A || !rhs || !tmp) {
    rc = DG_ERR_NOMEM;
    snprintf(why, why_size, "out of memory");
    goto done;
  }
  for (int j = 0; j < nd; j++)
    T[(size_t)j * snd + (size_t)j] = 1.0;
  if (sim->sv.mot.np > 0) { /* prescribed speeds at this time: fixed, not free */
    sim->ctx.state = sim->sv.s;
    dgp_motion_eval(sim, sim->t);
  }
  int nz = nd;
  for (int i = 0; i < n; i++) {
    const double *gr = sim->sv.G + (size_t)node[i] * dgp_gst(sim);
    double b = value[i], scale = 0.0;
    const dg_motion_ws *m = &sim->sv.mot;
    for (int k = 0; k < m->n_gp; k++)
      if (m->gp_node[k] == node[i])
        b -= m->gp_val[k] * m->v[m->gp_col[k]];
    for (int j = 0; j < nd; j++) {
      b -= gr[j] * c[j];
      scale = fmax(scale, fabs(gr[j]));
    }
    int jp = -1;
    double best = 0.0;
    for (int k = 0; k < nz; k++) {
      double v = 0.0;
      for (int j = 0; j < nd; j++)
        v += gr[j] * T[(size_t)j * snd + (size_t)k];
      a[k] = v;
      if (fabs(v) > best) {
        best = fabs(v);
        jp = k;
      }
    }
    if (jp < 0 || best <= DGP_PIVOT_EPS * fmax(scale, 1e-300)) {
      if (fabs(b) > 1e-9 * (fabs(value[i]) + 1.0)) {
        char lab[128];
        dgp_node_label(sim, node[i], lab, sizeof lab);
        snprintf(why, why_size,
                 "initial speed of %s (%g) contradicts the other initial values: the current "
                 "mode connects them rigidly (it would have to be %g)",
                 lab, value[i], value[i] - b);
        rc = DG_ERR_RANGE;
        goto done;
      }
      continue;
    }
    for (int j = 0; j < nd; j++) {
      double *tj = T + (size_t)j * snd;
      double pv = tj[jp];
      c[j] += pv * b / a[jp];
      for (int k = 0; k < nz; k++)
        if (k != jp)
          tj[k] -= pv * a[k] / a[jp];
      for (int k = jp; k < nz - 1; k++)
        tj[k] = tj[k + 1];
    }
    nz--;
  }
  /* (TᵀMT) z = TᵀM(q0 − c) */
  for (int j = 0; j < nd; j++)
    tmp[j] = sim->sv.q[j] - c[j];
  for (int k = 0; k < nz; k++) {
    double v = 0.0;
    for (int i = 0; i < nd; i++) {
      double mi = 0.0;
      for (int j = 0; j < nd; j++)
        mi += sim->sv.M[(size_t)i * dgp_mst(sim) + (size_t)j] * tmp[j];
      v += T[(size_t)i * snd + (size_t)k] * mi;
    }
    rhs[k] = v;
    for (int l = 0; l < nz; l++) {
      double m = 0.0;
      for (int i = 0; i < nd; i++)
        for (int j = 0; j < nd; j++)
          m += T[(size_t)i * snd + (size_t)k] * sim->sv.M[(size_t)i * dgp_mst(sim) + (size_t)j] *
               T[(size_t)j * snd + (size_t)l];
      A[(size_t)k * snd + (size_t)l] = m;
    }
  }
  if (nz > 0 && dgp_cholesky(A, A, nz, snd) != 0) {
    rc = DG_ERR_INERTIA;
    snprintf(why, why_size, "initial speeds leave a degree of freedom without inertia");
    goto done;
  }
  if (nz > 0)
    dgp_cholesky_solve(A, nz, snd, rhs);
  for (int j = 0; j < nd; j++) {
    double v = c[j];
    for (int k = 0; k < nz; k++)
      v += T[(size_t)j * snd + (size_t)k] * rhs[k];
    sim->sv.q[j] = v;
  }
  dgp_solver_speeds(sim, sim->sv.q, sim->sv.x);
  dgp_lambda_at(sim, sim->t, NULL);
done:
  free(T);
  free(c);
  free(a);
  free(A);
  free(rhs);
  free(tmp);
  return rc;
}
