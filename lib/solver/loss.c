/* The loss room: each lossy mesh (a gear, gearbox, differential or CVT
 * link with efficiency < 1, or a lossy tie) loses (1 − η) of the power it
 * transmits, whichever way it flows (docs/solver.md, "Losses"). Per mode,
 * the mesh maps; per RK4 stage, the multipliers with their loss torques for
 * the directions of power flow; per segment, which reversals are watched.
 * Workspace: dg_loss_ws (lib/sim.h). */
#include "solver.h"

#include <math.h>
#include <string.h>

/* A lossy tie that the elimination found redundant carries no determined
 * force: rigid shafts cannot say which of two parallel paths carries the
 * torque, so neither can they say what it loses. Refused, unless its mesh
 * does not move in this mode (a planetary turning as one block: no
 * meshing power, no loss whatever it carries). */
void dgp_loss_check_ties(dg_sim *sim) {
  dg_topo_ws *ws = &sim->sv.ws;
  for (int t = 0; t < ws->nties && !ws->error; t++) {
    const dg_tie *tie = &ws->ties[t];
    if (tie->mesh < 0 || tie->active >= 0)
      continue;
    double moves = 0.0, scale = 0.0;
    for (int d = 0; d < sim->sv.ndof + sim->sv.mot.np; d++) {
      double v = 0.0;
      for (int i = tie->first; i < tie->first + tie->n; i++) {
        double g = sim->sv.G[(size_t)ws->tie_node[i] * dgp_gst(sim) + (size_t)d];
        v += ws->tie_acoef[i] * g;
        scale = fmax(scale, fabs(ws->tie_coef[i] * g));
      }
      moves = fmax(moves, fabs(v));
    }
    if (moves > DGP_PIVOT_EPS * scale)
      dgp_topo_error(sim, tie->block, DG_ERR_OVERCONSTRAINED,
                 "over-constrained: the lossy mesh (efficiency %g) closes a loop whose other "
                 "ratios already fix its speeds, so rigid shafts do not determine the torque it "
                 "carries or its loss: give it efficiency 1, or put a spring_damper in the loop",
                 ws->mesh_eta[tie->mesh]);
  }
}

/* Side a and side b of mesh j over nodes (dense, nn each). A link
 * x_dst − Σ c_i x_src_i = 0: a = e_dst, b = −Σ c_i e_src_i. */
static void mesh_sides(const dg_sim *sim, int j, double *a, double *b) {
  const dg_topo_ws *ws = &sim->sv.ws;
  memset(a, 0, sizeof(double) * (size_t)sim->nn);
  memset(b, 0, sizeof(double) * (size_t)sim->nn);
  int k = ws->mesh_link[j];
  if (k >= 0) {
    a[ws->link_dst[k]] += 1.0;
    for (int i = ws->link_first[k], e = i + ws->link_n[k]; i < e; i++)
      b[ws->link_src[i]] -= ws->link_coef[i];
    return;
  }
  const dg_tie *tie = &ws->ties[ws->mesh_tie[j]];
  for (int i = tie->first; i < tie->first + tie->n; i++) {
    a[ws->tie_node[i]] += ws->tie_acoef[i];
    b[ws->tie_node[i]] += ws->tie_coef[i] - ws->tie_acoef[i];
  }
}

/* Whether raw DOF k is prescribed through a rheonomic tie. */
static bool prescribed_by_tie(const dg_topo_ws *ws, int k) {
  for (int t = 0; t < ws->nties; t++)
    if (ws->ties[t].presc == k)
      return true;
  return false;
}

/* G_pᵀ v over the prescribed columns (np values). */
static void gp_transpose(const dg_sim *sim, const double *v, double *out) {
  const dg_motion_ws *m = &sim->sv.mot;
  for (int i = 0; i < m->np; i++)
    out[i] = 0.0;
  for (int k = 0; k < m->n_gp; k++)
    out[m->gp_col[k]] += m->gp_val[k] * v[m->gp_node[k]];
}

/* The maps of the lossy meshes for the current rows (docs/solver.md,
 * "Losses"). The constraints of the mode over nodes are the columns of A:
 * each recorded link (e_dst − Σ c e_src) and each active tie. G spans the
 * speeds A allows, so the residual r = I ẍ − w − L of any motion obeying
 * the equations lies in range(A) and the multipliers are λ = (AᵀA)⁻¹Aᵀ r:
 * mesh j's is u_j·r with u_j = A (AᵀA)⁻¹ e_j. */
int dgp_loss_build(dg_sim *sim) {
  dg_solver *sv = &sim->sv;
  dg_topo_ws *ws = &sv->ws;
  size_t st = (size_t)sim->nn;
  int nn = sim->nn, nd = sv->ndof, m = ws->nmesh;
  if (m == 0)
    return DG_OK;
  if (!ws->links_complete) {
    dgp_topo_error(sim, sim->g->order[0], DG_ERR_BLOCK, "too many links in one mode (limit %d)",
               ws->max_links);
    return ws->error;
  }
  if (sv->tree.on) { /* the tree solves the meshes' multipliers with the stage */
    double *a = sv->scratch, *b = sv->f;
    int at = 0;
    for (int j = 0; j < m; j++) { /* side b's non-zeros, for the ports room */
      int t = ws->mesh_tie[j], nb = 0;
      sv->loss.b0[j] = at;
      if (t < 0 || ws->ties[t].active >= 0) {
        mesh_sides(sim, j, a, b);
        for (int n = 0; n < nn; n++)
          if (b[n] != 0.0) {
            sv->loss.bn[at + nb] = n;
            sv->loss.bv[at + nb++] = b[n];
          }
      }
      at += nb;
      sv->loss.nb[j] = nb;
      sv->loss.kf[j] = 1.0 / ws->mesh_eta_b[j] - 1.0;
      sv->loss.kb[j] = ws->mesh_eta[j] - 1.0;
    }
    return DG_OK;
  }
  int K = ws->nlinks + ws->nactive;
  /* a prescribed shaft with a raw DOF of its own is held to its speed by no
   * tie: its constraint e_node joins A (a rheonomic tie is an active tie) */
  int kp = K;
  for (int k = 0; k < ws->nraw; k++)
    if (ws->raw_presc[k] && !prescribed_by_tie(ws, k))
      K++;
  for (int c = 0; c < K; c++)
    memset(sv->loss.cA + (size_t)c * st, 0, sizeof(double) * st);
  for (int k = 0; k < ws->nraw; k++)
    if (ws->raw_presc[k] && !prescribed_by_tie(ws, k))
      sv->loss.cA[(size_t)kp++ * st + (size_t)ws->raw_node[k]] = 1.0;
  for (int k = 0; k < ws->nlinks; k++) {
    double *col = sv->loss.cA + (size_t)k * st;
    col[ws->link_dst[k]] += 1.0;
    for (int i = ws->link_first[k], e = i + ws->link_n[k]; i < e; i++)
      col[ws->link_src[i]] -= ws->link_coef[i];
  }
  for (int t = 0; t < ws->nties; t++) {
    const dg_tie *tie = &ws->ties[t];
    if (tie->active < 0)
      continue;
    double *col = sv->loss.cA + (size_t)(ws->nlinks + tie->active) * st;
    for (int i = tie->first; i < tie->first + tie->n; i++)
      col[ws->tie_node[i]] += ws->tie_coef[i];
  }
  for (int i = 0; i < K; i++)
    for (int j = 0; j <= i; j++) {
      const double *ci = sv->loss.cA + (size_t)i * st, *cj = sv->loss.cA + (size_t)j * st;
      double v = 0.0;
      for (int n = 0; n < nn; n++)
        v += ci[n] * cj[n];
      sv->loss.cAtA[(size_t)i * st + (size_t)j] = sv->loss.cAtA[(size_t)j * st + (size_t)i] = v;
    }
  if (dgp_cholesky(sv->loss.cAtA, sv->loss.cAtA, K, st) != 0) {
    dgp_topo_error(sim, sim->g->order[0], DG_ERR_OVERCONSTRAINED,
               "constraints are numerically dependent");
    return ws->error;
  }
  double *a = sv->scratch, *z = sv->loss.z, *tmp = sv->f;
  for (int j = 0; j < m; j++) {
    double *rows[] = {sv->loss.u,  sv->loss.b,  sv->loss.h,  sv->loss.d,
                      sv->loss.ga, sv->loss.gb, sv->loss.gap};
    int t = ws->mesh_tie[j];
    if (t >= 0 && ws->ties[t].active < 0) { /* redundant and idle (dgp_loss_check_ties) */
      for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++)
        memset(rows[r] + (size_t)j * st, 0, sizeof(double) * st);
      continue;
    }
    int col = ws->mesh_link[j] >= 0 ? ws->mesh_link[j] : ws->nlinks + ws->ties[t].active;
    for (int c = 0; c < K; c++)
      z[c] = c == col ? 1.0 : 0.0;
    dgp_cholesky_solve(sv->loss.cAtA, K, st, z);
    double *u = sv->loss.u + (size_t)j * st, *b = sv->loss.b + (size_t)j * st;
    memset(u, 0, sizeof(double) * st);
    for (int c = 0; c < K; c++) {
      const double *ac = sv->loss.cA + (size_t)c * st;
      for (int n = 0; n < nn; n++)
        u[n] += z[c] * ac[n];
    }
    mesh_sides(sim, j, a, b);
    dgp_g_transpose(sim, a, sv->loss.ga + (size_t)j * st);
    dgp_g_transpose(sim, b, sv->loss.gb + (size_t)j * st);
    gp_transpose(sim, a, sv->loss.gap + (size_t)j * st);
    double *d = sv->loss.d + (size_t)j * st;
    memcpy(d, sv->loss.gb + (size_t)j * st, sizeof(double) * (size_t)nd);
    dgp_cholesky_solve(sv->L, nd, dgp_mst(sim), d);
    for (int n = 0; n < nn; n++)
      tmp[n] = sv->inertia[n] * u[n];
    dgp_g_transpose(sim, tmp, sv->loss.h + (size_t)j * st);
  }
  for (int j = 0, ua = 0, ba = 0; j < m; j++) { /* the stage's sparse copies, packed */
    const double *u = sv->loss.u + (size_t)j * st, *b = sv->loss.b + (size_t)j * st;
    int nu = 0, nb = 0;
    sv->loss.u0[j] = ua;
    sv->loss.b0[j] = ba;
    for (int n = 0; n < nn; n++) {
      if (u[n] != 0.0) {
        sv->loss.un[ua + nu] = n;
        sv->loss.uv[ua + nu++] = u[n];
      }
      if (b[n] != 0.0) {
        sv->loss.bn[ba + nb] = n;
        sv->loss.bv[ba + nb++] = b[n];
      }
    }
    ua += nu;
    ba += nb;
    sv->loss.nu[j] = nu;
    sv->loss.nb[j] = nb;
    sv->loss.kf[j] = 1.0 / ws->mesh_eta_b[j] - 1.0; /* side b drives */
    sv->loss.kb[j] = ws->mesh_eta[j] - 1.0;          /* side a drives */
  }
  for (int i = 0; i < m; i++)
    for (int j = 0; j < m; j++) {
      const double *hi = sv->loss.h + (size_t)i * st, *dj = sv->loss.d + (size_t)j * st;
      const double *ui = sv->loss.u + (size_t)i * st, *bj = sv->loss.b + (size_t)j * st;
      double v = 0.0;
      for (int d = 0; d < nd; d++)
        v += hi[d] * dj[d];
      for (int n = 0; n < nn; n++)
        v -= ui[n] * bj[n];
      sv->loss.W[(size_t)i * st + (size_t)j] = v;
    }
  return DG_OK;
}

/* (1 − W K) λ = λ₀ for the current κ: one mesh in closed form (1 − W κ > 0
 * for one mesh: −1 ≤ W ≤ 0, κ > −1), two by Cramer's rule, more by
 * elimination. -1 when the system has no sensible solution. */
static int mesh_solve(dg_solver *sv, int m, size_t st) {
  const double *W = sv->loss.W, *kap = sv->loss.kap, *lam0 = sv->loss.lam0;
  double *lam = sv->loss.lam;
  if (m == 1) {
    double den = 1.0 - W[0] * kap[0];
    if (!(den > 0.0))
      return -1;
    lam[0] = lam0[0] / den;
    return 0;
  }
  if (m == 2) {
    double a = 1.0 - W[0] * kap[0], b = -W[1] * kap[1];
    double c = -W[st] * kap[0], d = 1.0 - W[st + 1] * kap[1], det = a * d - b * c;
    if (!(fabs(det) > 1e-300))
      return -1;
    lam[0] = (d * lam0[0] - b * lam0[1]) / det;
    lam[1] = (a * lam0[1] - c * lam0[0]) / det;
    return 0;
  }
  for (int i = 0; i < m; i++) {
    for (int j = 0; j < m; j++)
      sv->loss.S[(size_t)i * st + (size_t)j] =
          (i == j ? 1.0 : 0.0) - W[(size_t)i * st + (size_t)j] * kap[j];
    lam[i] = lam0[i];
  }
  return dgp_solve_dense(sv->loss.S, lam, m, st);
}

/* Side a's speed of mesh j at the stage: a·x. A link's side a is e_dst,
 * so its speed is the SPEEDS stage's x[dst] (sv.xw, of the stage's q): the
 * very products and sums of ga·q + gap·v, read instead of made again
 * (a row with two prescribed terms adds them in another order: the last
 * bit); a tie's, ga·q + gap·v over the DOFs. */
static inline double side_a_speed(const dg_sim *sim, int j, const double *q) {
  const dg_solver *sv = &sim->sv;
  int k = sv->ws.mesh_link[j];
  if (k >= 0)
    return sv->xw[sv->ws.link_dst[k]];
  size_t st = (size_t)sim->nn;
  double v = dgp_dot(sv->loss.ga + (size_t)j * st, q, sv->ndof);
  if (sv->mot.np > 0)
    v += dgp_dot(sv->loss.gap + (size_t)j * st, sv->mot.v, sv->mot.np);
  return v;
}

/* The ACCEL stage's losses, after the lossless q̇₀ = M⁻¹Gᵀw is in dq: the
 * multipliers of the lossy meshes with their loss torques κ_j λ_j b_j
 * included, (1 − W K) λ = λ₀, for the directions of power flow that the
 * solution itself gives (κ_j = 1/η − 1 when side b drives, η − 1 when side
 * a drives, 0 when no power flows or is about to; the directions of the
 * last solve are the first guess). Then q̇ += Σ κ_j λ_j d_j and w += the
 * loss torques. q is the stage's, whose node speeds the SPEEDS stage left
 * in sv.xw. Returns the loss power (≤ 0). */
double dgp_loss_apply(dg_sim *sim, const double *q, double *dq, double *w) {
  dg_solver *sv = &sim->sv;
  size_t st = (size_t)sim->nn;
  int nd = sv->ndof, m = sv->ws.nmesh, np = sv->mot.np;
  double *lam0 = sv->loss.lam0, *lam = sv->loss.lam, *kap = sv->loss.kap;
  int *dir = sv->loss.dir;
  for (int j = 0; j < m; j++) {
    const int *un = sv->loss.un + sv->loss.u0[j];
    const double *uv = sv->loss.uv + sv->loss.u0[j];
    double v = dgp_dot(sv->loss.h + (size_t)j * st, dq, nd);
    for (int k = 0, nu = sv->loss.nu[j]; k < nu; k++)
      v -= uv[k] * w[un[k]];
    lam0[j] = v;
  }
  /* efficiencies over speed: κ at this stage's speed of side a (the mode's
   * build says whether a mesh has a table: tree.tables, set for every mode) */
  for (int j = 0; sv->tree.tables && j < m; j++) {
    const dg_table1d *ta = sv->ws.mesh_tab_a[j], *tb = sv->ws.mesh_tab_b[j];
    if (!ta && !tb)
      continue;
    double v = side_a_speed(sim, j, q);
    if (tb)
      sv->loss.kf[j] = 1.0 / dg_table1d_eval(tb, fabs(v)) - 1.0;
    if (ta)
      sv->loss.kb[j] = dg_table1d_eval(ta, fabs(v)) - 1.0;
  }
  /* inside a segment the directions of its first stage hold (one solve);
   * a reversal is an event (event_values) */
  int iterations = sv->loss.hold ? 1 : 2 * m + 3;
  for (int it = 0; it < iterations; it++) {
    for (int j = 0; j < m; j++)
      kap[j] = dgp_mesh_kappa(sv, j);
    if (mesh_solve(sv, m, st) != 0) {
      for (int j = 0; j < m; j++) { /* self-locking: no loss rather than a blow-up */
        lam[j] = lam0[j];
        kap[j] = 0.0;
      }
      break;
    }
    if (sv->loss.hold)
      break;
    bool same = true;
    for (int j = 0; j < m; j++) {
      double v = side_a_speed(sim, j, q);
      if (v == 0.0) { /* at rest: the power about to flow */
        const double *ga = sv->loss.ga + (size_t)j * st;
        v = dgp_dot(ga, dq, nd);
        if (np > 0)
          v += dgp_dot(sv->loss.gap + (size_t)j * st, sv->mot.vd, np);
        for (int i = 0; i < m; i++)
          v += kap[i] * lam[i] * dgp_dot(ga, sv->loss.d + (size_t)i * st, nd);
      }
      int nd_dir = dgp_mesh_direction(lam[j], v, dir[j]);
      if (nd_dir != dir[j]) {
        dir[j] = nd_dir;
        same = false;
      }
    }
    if (same)
      break;
  }
  /* the loss power f b·x over b's few non-zeros at the stage's node speeds
   * (as the tree does), not Gᵀb·q over the DOFs */
  const double *x = sv->xw;
  double p_loss = 0.0;
  for (int j = 0; j < m; j++) {
    sv->loss.p[j] = lam[j] * side_a_speed(sim, j, q);
    double f = kap[j] * lam[j];
    if (f == 0.0)
      continue;
    const double *d = sv->loss.d + (size_t)j * st;
    const int *bn = sv->loss.bn + sv->loss.b0[j];
    const double *bv = sv->loss.bv + sv->loss.b0[j];
    for (int i = 0; i < nd; i++)
      dq[i] += f * d[i];
    double bx = 0.0;
    for (int k = 0, nb = sv->loss.nb[j]; k < nb; k++) {
      w[bn[k]] += f * bv[k];
      bx += bv[k] * x[bn[k]];
    }
    p_loss += f * bx;
  }
  return p_loss;
}

/* At a segment's first stage: the meshes whose power reversal the segment
 * locates (those carrying power; their direction is held over it). */
void dgp_loss_watch_start(dg_sim *sim) {
  unsigned char *watch = sim->sv.loss.watch;
  const int *dir = sim->sv.loss.dir;
  const double *p = sim->sv.loss.p;
  for (int j = 0, m = sim->sv.ws.nmesh; j < m; j++)
    watch[j] = dir[j] != 0 && fabs(p[j]) > DGP_MESH_WATCH_POWER;
}

/* Each watched mesh's event function: its power p in its held direction,
 * d·p (it reverses where it reaches 0); 1 for the others. Returns how many
 * are watched. */
int dgp_loss_event_values(const dg_sim *sim, double *g, const double *p) {
  const unsigned char *watch = sim->sv.loss.watch;
  const int *dir = sim->sv.loss.dir;
  int active = 0;
  for (int j = 0, m = sim->sv.ws.nmesh; j < m; j++) {
    bool on = watch[j];
    g[j] = on ? dir[j] * p[j] : 1.0;
    active += on;
  }
  return active;
}

/* The arrays this room owns (buffers.c). */
void dgp_loss_buffers(dg_sim *sim, dgp_buf_list *l) {
  size_t nn = (size_t)sim->nn;
  dgp_buf_add_plan(l, &sim->sv.loss.u, nn * nn, sizeof(double));
  dgp_buf_add_plan(l, &sim->sv.loss.b, nn * nn, sizeof(double));
  dgp_buf_add_plan(l, &sim->sv.loss.h, nn * nn, sizeof(double));
  dgp_buf_add_plan(l, &sim->sv.loss.d, nn * nn, sizeof(double));
  dgp_buf_add_plan(l, &sim->sv.loss.ga, nn * nn, sizeof(double));
  dgp_buf_add_plan(l, &sim->sv.loss.gb, nn * nn, sizeof(double));
  dgp_buf_add_plan(l, &sim->sv.loss.gap, nn * nn, sizeof(double));
  dgp_buf_add_plan(l, &sim->sv.loss.W, nn * nn, sizeof(double));
  dgp_buf_add(l, &sim->sv.loss.S, nn * nn, sizeof(double));
  dgp_buf_add(l, &sim->sv.loss.lam0, nn, sizeof(double));
  dgp_buf_add(l, &sim->sv.loss.lam, nn, sizeof(double));
  dgp_buf_add(l, &sim->sv.loss.kap, nn, sizeof(double));
  dgp_buf_add(l, &sim->sv.loss.z, nn, sizeof(double));
  dgp_buf_add(l, &sim->sv.loss.dir, nn, sizeof(int));
  dgp_buf_add(l, &sim->sv.loss.p, nn, sizeof(double));
  dgp_buf_add(l, &sim->sv.loss.p4, nn, sizeof(double));
  dgp_buf_add(l, &sim->sv.loss.watch, nn, 1);
  dgp_buf_add(l, &sim->sv.loss.kf, nn, sizeof(double));
  dgp_buf_add(l, &sim->sv.loss.kb, nn, sizeof(double));
  dgp_buf_add_plan(l, &sim->sv.loss.un, nn * nn, sizeof(int));
  dgp_buf_add_plan(l, &sim->sv.loss.bn, nn * nn, sizeof(int));
  dgp_buf_add_plan(l, &sim->sv.loss.uv, nn * nn, sizeof(double));
  dgp_buf_add_plan(l, &sim->sv.loss.bv, nn * nn, sizeof(double));
  dgp_buf_add_plan(l, &sim->sv.loss.nu, nn, sizeof(int));
  dgp_buf_add_plan(l, &sim->sv.loss.nb, nn, sizeof(int));
  dgp_buf_add_plan(l, &sim->sv.loss.u0, nn, sizeof(int));
  dgp_buf_add_plan(l, &sim->sv.loss.b0, nn, sizeof(int));
  dgp_buf_add_plan(l, &sim->sv.loss.cA, nn * nn, sizeof(double));
  dgp_buf_add_plan(l, &sim->sv.loss.cAtA, nn * nn, sizeof(double));
}
