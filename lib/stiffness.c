/* Stiffness: can RK4 take the chosen step size?
 *
 * RK4 applied to ẏ = λy multiplies y by R(λ·dt) per step, with
 *     R(z) = 1 + z + z²/2 + z³/6 + z⁴/24,
 * so a mode that decays or oscillates (Re λ <= 0) is integrated stably only
 * while |R(λ·dt)| <= 1: up to |λ|·dt = 2.785 on the negative real axis and
 * 2√2 = 2.83 on the imaginary axis. A light shaft between heavy inertias, a
 * stiff viscous coupling on a small inertia or a stiff tyre (contact
 * stiffness Fz·B·C·D/σ against the wheel inertia) makes |λ| large; past the
 * limit the error grows by |R| every step and the run blows up, which the
 * solver's guard then reports, late and without saying why.
 *
 * The check linearizes the right-hand side of the solver,
 *     q̇ = M⁻¹ Gᵀ (e ∘ τ(G q, s)),   ṡ = g(G q, s),
 * around the current state y = [q; s] in the current mode: J = ∂ẏ/∂y by
 * central differences. Column k uses steps h, 2h and 4h (h = 1e-6·max(|y_k|,
 * 1)). For a smooth entry the three agree. A jump at y (Coulomb friction
 * c0·sign(ω) at exactly ω = 0) gives J(h) = a + D/h: the differences halve
 * with each doubling of h, and Richardson's 2·J(2h) − J(h) recovers the
 * smooth part a — a jump is not a stiffness RK4 could resolve with a smaller
 * step. Anything else (a kink of a piecewise-linear table within 4h) takes
 * the estimate of smallest magnitude, so the check errs towards silence.
 *
 * The eigenvalues of J come from a reduction to Hessenberg form (Gaussian
 * similarity with pivoting) and a complex single-shift QR iteration with
 * Wilkinson shifts. For each eigenvalue with Re λ <= 0 the largest stable
 * step is found along its ray: the smallest r with |R(r·λ/|λ|)| > 1, by a
 * scan and bisection, gives dt_max = r/|λ|. The mode with the smallest
 * dt_max binds; its eigenvector (inverse iteration) names the DOF speeds and
 * internal states that move most in it, and so the blocks to look at.
 *
 * The right-hand side is the solver's own (dgp_solver_rhs), so the
 * linearization cannot drift from what RK4 integrates. Nothing of the simulation changes:
 * the substep states are set back to the committed ones at the end (which is
 * what the next step starts from anyway), and the context and error are
 * restored. */
#include "sim.h"

#include <complex.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef double complex cplx;

/* Relative agreement of the three difference quotients of a smooth entry. */
#define FD_REL_TOL 1e-5
/* Eigenvalues with Re λ above this fraction of |λ| grow: physics, not dt. */
#define GROWTH_TOL 1e-6
/* |R| above 1 by more than this is unstable (round-off in R itself). */
#define R_TOL 1e-12
/* Larger systems are not checked: the Jacobian costs 6n evaluations of an
 * O(n²) right-hand side and QR O(n³); drivetrains have tens of states. */
#define MAX_STATES 400

/* Scratch of one linearization. */
typedef struct lin_ws {
  int n, nd;
  double *full; /* the solver's ẏ: ndof + ns + energy-audit rates */
  double *y0, *yp, *fp, *fm, *f0;
  double *J;   /* n × n, row-major */
  double *D1, *D2, *D4; /* difference quotients of one column at h, 2h, 4h */
  cplx *H;     /* n × n */
  cplx *ev;    /* n eigenvalues */
  cplx *v, *b; /* eigenvector iteration */
  int *piv;
} lin_ws;

static void lin_free(lin_ws *ws) {
  void *all[] = {ws->full, ws->y0, ws->yp, ws->fp, ws->fm, ws->f0, ws->J,
                 ws->D1, ws->D2, ws->D4, ws->H, ws->ev, ws->v, ws->b, ws->piv};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
    free(all[i]);
}

static bool lin_alloc(lin_ws *ws, const dg_sim *sim) {
  size_t n = (size_t)(sim->sv.ndof + sim->ns) + 1;
  ws->nd = sim->sv.ndof;
  ws->n = sim->sv.ndof + sim->ns;
  ws->full = calloc(n + (size_t)sim->sv.audit.ne, sizeof(double));
  ws->y0 = calloc(n, sizeof(double));
  ws->yp = calloc(n, sizeof(double));
  ws->fp = calloc(n, sizeof(double));
  ws->fm = calloc(n, sizeof(double));
  ws->f0 = calloc(n, sizeof(double));
  ws->J = calloc(n * n, sizeof(double));
  ws->D1 = calloc(n, sizeof(double));
  ws->D2 = calloc(n, sizeof(double));
  ws->D4 = calloc(n, sizeof(double));
  ws->H = calloc(n * n, sizeof(cplx));
  ws->ev = calloc(n, sizeof(cplx));
  ws->v = calloc(n, sizeof(cplx));
  ws->b = calloc(n, sizeof(cplx));
  ws->piv = calloc(n, sizeof(int));
  return ws->full && ws->y0 && ws->yp && ws->fp && ws->fm && ws->f0 &&
         ws->J && ws->D1 && ws->D2 && ws->D4 && ws->H && ws->ev && ws->v && ws->b && ws->piv;
}

/* ------------------------------------------------------------------------ */
/* The right-hand side                                                      */

/* ẏ at y = [q; s] and the committed time: the solver's own right-hand side
 * (dgp_solver_rhs).
 * Returns false if a block failed or a variable-kinematics rebuild did. */
static bool rhs(dg_sim *sim, lin_ws *ws, const double *y, double *dy) {
  dgp_solver_rhs(sim, sim->t, y, ws->full);
  memcpy(dy, ws->full, sizeof(double) * (size_t)ws->n);
  return !sim->failed;
}

/* The committed state [q; s]. */
static void committed_state(const dg_sim *sim, double *y) {
  memcpy(y, sim->sv.q, sizeof(double) * (size_t)sim->sv.ndof);
  if (sim->ns > 0)
    memcpy(y + sim->sv.ndof, sim->sv.s, sizeof(double) * (size_t)sim->ns);
}

/* Central difference of column k at step h into d. */
static bool column(dg_sim *sim, lin_ws *ws, int k, double h, double *d) {
  int n = ws->n;
  memcpy(ws->yp, ws->y0, sizeof(double) * (size_t)n);
  ws->yp[k] = ws->y0[k] + h;
  if (!rhs(sim, ws, ws->yp, ws->fp))
    return false;
  ws->yp[k] = ws->y0[k] - h;
  if (!rhs(sim, ws, ws->yp, ws->fm))
    return false;
  for (int i = 0; i < n; i++)
    d[i] = (ws->fp[i] - ws->fm[i]) / (2.0 * h);
  return true;
}

/* One Jacobian entry from the quotients at h, 2h and 4h (see the top). */
static double entry(double a, double b, double c, double noise) {
  double tol = FD_REL_TOL * (fabs(a) + fabs(b) + fabs(c)) + noise;
  if (fabs(a - b) <= tol && fabs(b - c) <= tol)
    return a;
  if (fabs((a - b) - 2.0 * (b - c)) <= tol + FD_REL_TOL * fabs(a - b))
    return 2.0 * b - a; /* a jump at y: J(h) = a + D/h */
  double m = a;
  if (fabs(b) < fabs(m))
    m = b;
  if (fabs(c) < fabs(m))
    m = c;
  return m;
}

static bool jacobian(dg_sim *sim, lin_ws *ws) {
  int n = ws->n;
  if (!rhs(sim, ws, ws->y0, ws->f0))
    return false;
  for (int k = 0; k < n; k++) {
    double h = 1e-6 * fmax(fabs(ws->y0[k]), 1.0);
    if (!column(sim, ws, k, h, ws->D1) || !column(sim, ws, k, 2.0 * h, ws->D2) ||
        !column(sim, ws, k, 4.0 * h, ws->D4))
      return false;
    for (int i = 0; i < n; i++) {
      /* round-off of a difference quotient: a few ulps of ẏ over h */
      double noise = 64.0 * DBL_EPSILON * (fabs(ws->f0[i]) + 1e-300) / h;
      ws->J[(size_t)i * (size_t)n + (size_t)k] = entry(ws->D1[i], ws->D2[i], ws->D4[i], noise);
    }
  }
  return true;
}

/* ------------------------------------------------------------------------ */
/* Eigenvalues                                                              */

/* Reduces the n×n matrix a (row-major) to upper Hessenberg form by
 * stabilized elementary similarity transformations (Gaussian elimination
 * with row/column interchanges). */
static void hessenberg(cplx *a, int n) {
  size_t st = (size_t)n;
  for (int m = 1; m < n - 1; m++) {
    int p = m;
    double best = 0.0;
    for (int i = m; i < n; i++)
      if (cabs(a[(size_t)i * st + (size_t)(m - 1)]) > best) {
        best = cabs(a[(size_t)i * st + (size_t)(m - 1)]);
        p = i;
      }
    if (best == 0.0)
      continue;
    if (p != m) {
      for (int j = m - 1; j < n; j++) {
        cplx t = a[(size_t)p * st + (size_t)j];
        a[(size_t)p * st + (size_t)j] = a[(size_t)m * st + (size_t)j];
        a[(size_t)m * st + (size_t)j] = t;
      }
      for (int i = 0; i < n; i++) {
        cplx t = a[(size_t)i * st + (size_t)p];
        a[(size_t)i * st + (size_t)p] = a[(size_t)i * st + (size_t)m];
        a[(size_t)i * st + (size_t)m] = t;
      }
    }
    cplx x = a[(size_t)m * st + (size_t)(m - 1)];
    for (int i = m + 1; i < n; i++) {
      cplx y = a[(size_t)i * st + (size_t)(m - 1)];
      if (y == 0.0)
        continue;
      y /= x;
      a[(size_t)i * st + (size_t)(m - 1)] = 0.0;
      for (int j = m; j < n; j++)
        a[(size_t)i * st + (size_t)j] -= y * a[(size_t)m * st + (size_t)j];
      for (int j = 0; j < n; j++)
        a[(size_t)j * st + (size_t)m] += y * a[(size_t)j * st + (size_t)i];
    }
  }
}

/* Eigenvalues of the upper Hessenberg matrix h (destroyed) into ev by the
 * shifted QR iteration with Givens rotations on the active window, Wilkinson
 * shifts and exceptional shifts at 10 and 20 iterations. Returns false if
 * some eigenvalue did not converge in 60 iterations. */
static bool hessenberg_qr(cplx *h, int n, cplx *ev) {
  size_t st = (size_t)n;
#define H(i, j) h[(size_t)(i) * st + (size_t)(j)]
  double norm = 0.0;
  for (int i = 0; i < n; i++)
    for (int j = i > 0 ? i - 1 : 0; j < n; j++)
      norm += cabs(H(i, j));
  if (norm == 0.0) {
    for (int i = 0; i < n; i++)
      ev[i] = 0.0;
    return true;
  }
  double *cs = malloc(st * sizeof(double));
  cplx *sn = malloc(st * sizeof(cplx));
  if (!cs || !sn) {
    free(cs);
    free(sn);
    return false;
  }
  bool ok = true;
  int hi = n - 1, iter = 0;
  while (hi >= 0) {
    int l = hi;
    for (; l > 0; l--) {
      double s = cabs(H(l - 1, l - 1)) + cabs(H(l, l));
      if (s == 0.0)
        s = norm;
      if (cabs(H(l, l - 1)) <= DBL_EPSILON * s) {
        H(l, l - 1) = 0.0;
        break;
      }
    }
    if (l == hi) {
      ev[hi] = H(hi, hi);
      hi--;
      iter = 0;
      continue;
    }
    if (++iter > 60) {
      ok = false;
      break;
    }
    cplx mu;
    if (iter == 10 || iter == 20) {
      mu = H(hi, hi) + cabs(H(hi, hi - 1)) + (hi - 2 >= l ? cabs(H(hi - 1, hi - 2)) : 0.0);
    } else {
      /* the eigenvalue of the trailing 2×2 closer to its last entry */
      cplx a = H(hi - 1, hi - 1), b = H(hi - 1, hi), c = H(hi, hi - 1), d = H(hi, hi);
      cplx half = 0.5 * (a - d), disc = csqrt(half * half + b * c);
      cplx m1 = 0.5 * (a + d) + disc, m2 = 0.5 * (a + d) - disc;
      mu = cabs(m1 - d) < cabs(m2 - d) ? m1 : m2;
    }
    for (int k = l; k <= hi; k++)
      H(k, k) -= mu;
    for (int k = l; k < hi; k++) {
      cplx x = H(k, k), y = H(k + 1, k);
      double ax = cabs(x), ay = cabs(y), r = hypot(ax, ay);
      double c;
      cplx s;
      if (ay == 0.0) {
        c = 1.0;
        s = 0.0;
      } else if (ax == 0.0) {
        c = 0.0;
        s = conj(y) / ay;
      } else {
        c = ax / r;
        s = (x / ax) * conj(y) / r;
      }
      cs[k] = c;
      sn[k] = s;
      for (int j = k; j <= hi; j++) {
        cplx t1 = H(k, j), t2 = H(k + 1, j);
        H(k, j) = c * t1 + s * t2;
        H(k + 1, j) = -conj(s) * t1 + c * t2;
      }
    }
    for (int k = l; k < hi; k++) {
      double c = cs[k];
      cplx s = sn[k];
      int last = k + 2 < hi ? k + 2 : hi;
      for (int i = l; i <= last; i++) {
        cplx t1 = H(i, k), t2 = H(i, k + 1);
        H(i, k) = t1 * c + t2 * conj(s);
        H(i, k + 1) = -t1 * s + t2 * c;
      }
    }
    for (int k = l; k <= hi; k++)
      H(k, k) += mu;
  }
#undef H
  free(cs);
  free(sn);
  return ok;
}

/* Solves (J − σI) v = b in place over b by Gaussian elimination with
 * partial pivoting on a (complex copy, n×n, destroyed). Zero pivots are
 * nudged: for inverse iteration a nearly singular system is the point. */
static void shifted_solve(const double *J, int n, cplx sigma, cplx *a, int *piv, cplx *b) {
  size_t st = (size_t)n;
  double scale = 0.0;
  for (size_t i = 0; i < st * st; i++)
    scale = fmax(scale, fabs(J[i]));
  scale = fmax(scale, cabs(sigma));
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      a[(size_t)i * st + (size_t)j] = J[(size_t)i * st + (size_t)j] - (i == j ? sigma : 0.0);
  for (int k = 0; k < n; k++) {
    int p = k;
    for (int i = k + 1; i < n; i++)
      if (cabs(a[(size_t)i * st + (size_t)k]) > cabs(a[(size_t)p * st + (size_t)k]))
        p = i;
    piv[k] = p;
    if (p != k) {
      for (int j = 0; j < n; j++) {
        cplx t = a[(size_t)k * st + (size_t)j];
        a[(size_t)k * st + (size_t)j] = a[(size_t)p * st + (size_t)j];
        a[(size_t)p * st + (size_t)j] = t;
      }
      cplx t = b[k];
      b[k] = b[p];
      b[p] = t;
    }
    if (cabs(a[(size_t)k * st + (size_t)k]) < 1e-14 * scale + DBL_MIN)
      a[(size_t)k * st + (size_t)k] = 1e-14 * scale + DBL_MIN;
    for (int i = k + 1; i < n; i++) {
      cplx m = a[(size_t)i * st + (size_t)k] / a[(size_t)k * st + (size_t)k];
      if (m == 0.0)
        continue;
      for (int j = k; j < n; j++)
        a[(size_t)i * st + (size_t)j] -= m * a[(size_t)k * st + (size_t)j];
      b[i] -= m * b[k];
    }
  }
  for (int i = n - 1; i >= 0; i--) {
    cplx sum = b[i];
    for (int j = i + 1; j < n; j++)
      sum -= a[(size_t)i * st + (size_t)j] * b[j];
    b[i] = sum / a[(size_t)i * st + (size_t)i];
  }
}

/* Eigenvector of J for the eigenvalue lam by inverse iteration, normalized
 * to a largest component of modulus 1, into ws->b. */
static void eigenvector(lin_ws *ws, cplx lam) {
  int n = ws->n;
  cplx sigma = lam + 1e-9 * (cabs(lam) + 1e-300);
  for (int i = 0; i < n; i++)
    ws->b[i] = 1.0 + 0.1 * i;
  for (int it = 0; it < 3; it++) {
    shifted_solve(ws->J, n, sigma, ws->H, ws->piv, ws->b);
    double m = 0.0;
    for (int i = 0; i < n; i++)
      m = fmax(m, cabs(ws->b[i]));
    if (!(m > 0.0) || !isfinite(m))
      break;
    for (int i = 0; i < n; i++)
      ws->b[i] /= m;
  }
}

/* ------------------------------------------------------------------------ */
/* RK4's stability region                                                   */

static double rk4_gain(cplx z) {
  return cabs(1.0 + z * (1.0 + z * (0.5 + z * (1.0 / 6.0 + z / 24.0))));
}

/* The largest r such that |R(r·u)| <= 1 along the unit direction u, for
 * every r' up to it (first crossing: scan, then bisection). */
static double rk4_reach(cplx u) {
  double lo = 0.0, hi = -1.0;
  for (double r = 0.005; r <= 4.0; r += 0.005) {
    if (rk4_gain(r * u) > 1.0 + R_TOL) {
      hi = r;
      break;
    }
    lo = r;
  }
  if (hi < 0.0)
    return 4.0;
  for (int i = 0; i < 60; i++) {
    double mid = 0.5 * (lo + hi);
    if (rk4_gain(mid * u) > 1.0 + R_TOL)
      hi = mid;
    else
      lo = mid;
  }
  return lo;
}

/* The largest of 1, 2, 5 × 10^k not above x (x a hair above a round number,
 * as 2/|λ| with |λ| a few ulps off, counts as that number). */
static double round_down_nice(double x) {
  if (!(x > 0.0) || !isfinite(x))
    return x;
  x *= 1.0 + 1e-9;
  double p = pow(10.0, floor(log10(x)));
  double best = p;
  if (2.0 * p <= x)
    best = 2.0 * p;
  if (5.0 * p <= x)
    best = 5.0 * p;
  if (10.0 * p <= x) /* log10 round-off */
    best = 10.0 * p;
  return best;
}

/* ------------------------------------------------------------------------ */
/* Naming the mode                                                          */

/* Component k of y: the owning block and a description. */
static int describe_component(const dg_sim *sim, int k, char *buf, size_t size) {
  if (k < sim->sv.ndof) {
    /* the DOF's shaft: both ports of its node when it joins two blocks */
    int raw = sim->sv.ws.col_raw[k];
    int owner = sim->sv.ws.raw_owner[raw];
    const dg_gnode *gn = &sim->g->nodes[sim->sv.ws.raw_node[raw]];
    char shaft[160] = "";
    size_t len = 0;
    for (int i = 0; i < gn->n; i++) {
      if (len >= sizeof shaft)
        continue;
      const dg_gblock *gb = &sim->g->blocks[gn->block[i]];
      len += (size_t)snprintf(shaft + len, sizeof shaft - len, "%s%s.%s", len ? " = " : "",
                              gb->id, gb->klass->ports[gn->port[i]].name);
    }
    snprintf(buf, size, "speed of %s (block \"%s\")", shaft, sim->g->blocks[owner].id);
    return owner;
  }
  int off = k - sim->sv.ndof;
  for (int i = 0; i < sim->n_state_blocks; i++) {
    const dg_block *b = &sim->blocks[sim->state_blocks[i]];
    int first = b->state;
    if (off >= first && off < first + b->klass->num_states) {
      snprintf(buf, size, "internal state %d of block \"%s\" (%s)", off - first, b->id,
               b->klass->type);
      return b->index;
    }
  }
  snprintf(buf, size, "state %d", k);
  return -1;
}

/* The up to three largest components of the eigenvector in ws->b that are
 * at least a third of the largest, into out->where and out->block; the
 * first two (whole) into brief, for the message. */
static void name_mode(const dg_sim *sim, lin_ws *ws, dg_stiffness *out, char *brief,
                      size_t brief_size) {
  int n = ws->n, picked[3] = {-1, -1, -1};
  size_t len = 0;
  out->where[0] = '\0';
  out->block = -1;
  for (int r = 0; r < 3; r++) {
    int best = -1;
    double bm = 0.0;
    for (int k = 0; k < n; k++) {
      if (k == picked[0] || k == picked[1])
        continue;
      double m = cabs(ws->b[k]);
      if (isfinite(m) && m > bm) {
        bm = m;
        best = k;
      }
    }
    if (best < 0 || (r > 0 && bm < 1.0 / 3.0))
      break;
    picked[r] = best;
    char what[160];
    int blk = describe_component(sim, best, what, sizeof what);
    if (r == 0)
      out->block = blk;
    if (len < sizeof out->where)
      len += (size_t)snprintf(out->where + len, sizeof out->where - len, "%s%s", r ? ", " : "",
                              what);
    if (r < 2 && len < brief_size && len < sizeof out->where) {
      memcpy(brief, out->where, len);
      brief[len] = '\0';
    }
  }
}

/* ------------------------------------------------------------------------ */
/* The check                                                                */

/* A copy of `sim` (a snapshot restored into a new simulation of its graph:
 * inputs, channels, modes, states and speeds) advanced by one short step
 * (at most 1 µs: enough for the bodies to publish their loads, too short to
 * move the state away from where it is checked), or NULL when it cannot be
 * made. */
static dg_sim *stepped_copy(dg_sim *sim, double dt) {
  dg_error e;
  dg_sim *c = dg_sim_new(sim->g, &e);
  dg_snapshot *snap = c ? dg_sim_snapshot(sim, &e) : NULL;
  bool ok = snap && dg_sim_restore(c, snap, &e) == DG_OK && dg_sim_step(c, fmin(dt, 1e-6)) == DG_OK;
  dg_snapshot_free(snap);
  if (!ok) {
    dg_sim_free(c);
    return NULL;
  }
  return c;
}

/* Linearizes `sim` and fills out; DG_OK, or a code with `why`. */
static int analyze(dg_sim *sim, double dt, dg_stiffness *out, char *brief, size_t brief_size,
                   char *why, size_t why_size) {
  lin_ws ws = {0};
  int rc = DG_OK;
  if (!lin_alloc(&ws, sim)) {
    snprintf(why, why_size, "out of memory");
    lin_free(&ws);
    return DG_ERR_NOMEM;
  }
  int n = ws.n;
  out->size = n;
  dg_ctx saved_ctx = sim->ctx;
  dg_error saved_err = sim->err;
  bool saved_failed = sim->failed;
  committed_state(sim, ws.y0);
  bool ok = jacobian(sim, &ws);
  if (!ok && sim->failed)
    snprintf(why, why_size, "a block failed while the system was linearized: %.200s", sim->err.text);
  else if (!ok)
    snprintf(why, why_size, "the topology could not be rebuilt while linearizing: %.200s",
             sim->sv.ws.errmsg);
  /* back to the committed state: substep states, and G for a CVT */
  sim->failed = false;
  rhs(sim, &ws, ws.y0, ws.fp);
  sim->ctx = saved_ctx;
  sim->err = saved_err;
  sim->failed = saved_failed;
  if (!ok) {
    lin_free(&ws);
    return DG_ERR_BLOCK;
  }
  for (size_t i = 0; i < (size_t)n * (size_t)n; i++) {
    if (!isfinite(ws.J[i])) {
      snprintf(why, why_size, "the linearized system is not finite at t = %g s", sim->t);
      lin_free(&ws);
      return DG_ERR_BLOCK;
    }
    ws.H[i] = ws.J[i];
  }
  hessenberg(ws.H, n);
  if (!hessenberg_qr(ws.H, n, ws.ev)) {
    snprintf(why, why_size, "the eigenvalues of the linearized system did not converge");
    lin_free(&ws);
    return DG_ERR_BLOCK;
  }
  double lim = INFINITY, rmax = 0.0;
  int bind = -1;
  for (int i = 0; i < n; i++) {
    cplx lam = ws.ev[i];
    double m = cabs(lam);
    if (!(m > 0.0) || creal(lam) > GROWTH_TOL * m)
      continue;
    rmax = fmax(rmax, m);
    cplx u = (fmin(creal(lam), 0.0) + I * cimag(lam)) / m;
    double r = rk4_reach(u / cabs(u));
    double d = r / m;
    if (d < lim) {
      lim = d;
      bind = i;
    }
  }
  out->max_rate = rmax;
  out->dt_limit = lim;
  if (bind < 0) {
    out->recommended_dt = INFINITY;
    lin_free(&ws);
    return rc;
  }
  cplx lam = ws.ev[bind];
  out->rate = cabs(lam);
  out->lambda_re = creal(lam);
  out->lambda_im = cimag(lam);
  out->recommended_dt = round_down_nice(fmin(2.0 / out->rate, 0.9 * lim));
  out->stiff = dt > lim;
  eigenvector(&ws, lam);
  name_mode(sim, &ws, out, brief, brief_size);
  lin_free(&ws);
  return rc;
}

/* "-1.2e+04" or "-3 ± 1.2e+04i" */
static void fmt_lambda(char *buf, size_t size, const dg_stiffness *s) {
  if (fabs(s->lambda_im) <= 1e-9 * s->rate)
    snprintf(buf, size, "%.3g", s->lambda_re);
  else
    snprintf(buf, size, "%.3g +/- %.3gi", s->lambda_re, fabs(s->lambda_im));
}

int dg_sim_check_stiffness(dg_sim *sim, double dt, dg_stiffness *out, dg_error *err) {
  dg_stiffness local;
  if (!out)
    out = &local;
  memset(out, 0, sizeof *out);
  out->dt = dt;
  out->block = -1;
  out->dt_limit = out->recommended_dt = INFINITY;
  dgp_error_clear(err);
  if (!sim) {
    dgp_error_set(err, DG_ERR_USAGE, "", "", "no simulation given");
    return DG_ERR_USAGE;
  }
  const char *file = sim->g->file;
  if (!(dt > 0.0) || !isfinite(dt)) {
    dgp_error_set(err, DG_ERR_USAGE, file, "", "step size must be > 0 (got %g)", dt);
    return DG_ERR_USAGE;
  }
  if (sim->failed) {
    dgp_error_set(err, DG_ERR_USAGE, file, "", "the simulation has failed: %s", sim->err.text);
    return DG_ERR_USAGE;
  }
  if (sim->sv.ndof + sim->ns > MAX_STATES) {
    out->size = sim->sv.ndof + sim->ns;
    return DG_OK;
  }
  /* Before the first step the bodies have not published normal loads: a
   * tyre without load has no stiffness. Linearize a copy one step on. */
  dg_sim *target = sim;
  dg_sim *copy = sim->steps == 0 ? stepped_copy(sim, dt) : NULL;
  if (copy)
    target = copy;
  char why[DG_ERROR_TEXT_LEN] = "", where[160] = "";
  int rc = analyze(target, dt, out, where, sizeof where, why, sizeof why);
  if (!where[0]) /* a first component longer than the message has room for */
    snprintf(where, sizeof where, "%.150s", out->where);
  char path[DG_ERROR_PATH_LEN] = "";
  if (out->block >= 0)
    dgp_pointer_append(path, sizeof path, "/blocks", sim->g->blocks[out->block].id);
  dg_sim_free(copy);
  if (rc != DG_OK) {
    dgp_error_set(err, rc, file, "", "cannot check the step size: %s", why);
    return rc;
  }
  if (!out->stiff)
    return DG_OK;
  char lam[64];
  fmt_lambda(lam, sizeof lam, out);
  dgp_error_set(err, DG_ERR_NUMERIC, file, path,
               "step size %g s is too large for RK4: a mode with eigenvalue %s 1/s "
               "(|eigenvalue|*dt = %.3g, stable below %.3g) moves mostly %s; "
               "use dt <= %g s",
               dt, lam, out->rate * dt, out->rate * out->dt_limit, where, out->recommended_dt);
  return DG_ERR_NUMERIC;
}
