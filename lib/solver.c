/* The solver: topology build, coupled inertia matrix, RK4 and events.
 *
 * Topology (on every mode change). Blocks are visited from the road back to
 * the sources; their state_upstream hooks give each node a row over "raw"
 * DOFs: x = R q_raw. Ties Σ c·x = 0 (locked diffs, holding brakes, loops)
 * become rows of C = c·R over the raw DOFs and are eliminated one at a time
 * by Gaussian elimination with the largest pivot, which yields
 * q_raw = T q with q the DOFs of the mode. Then
 *     G = R T,   M = Gᵀ diag(I) G   (Cholesky-factored once per mode).
 * An equality tie that leaves a node it joins with no motion at all
 * contradicts the rigid ratios of a loop (over-constrained); a DOF whose
 * column of M is zero has no inertia. Both are reported with the blocks.
 *
 * Every RK4 substep: x = G q; blocks add node torques τ; each node's torque
 * is scaled by its efficiency path factor e (η when the torque drives its
 * node, τ·x ≥ 0, and 1/η when it brakes it), f = Gᵀ(e∘τ), and M q̇ = f.
 *
 * Tie multipliers (reaction torques of locked elements): in raw DOFs
 * R ᵀ(diag(I) ẍ − e∘τ) = Cᵀ λ, solved as λ = P g with P = (C Cᵀ)⁻¹ C of the
 * independent ties, computed once per mode.
 *
 * A mode change projects the node speeds onto the new mode conserving
 * generalized momentum: q' = M'⁻¹ G'ᵀ diag(I) x. */
#include "sim.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Relative size under which a pivot counts as zero: ratios in drivetrains
 * span a few decades, so 1e-10 separates round-off from real coefficients. */
#define PIVOT_EPS 1e-10
/* Speeds above this (rad/s or m/s) are a blow-up, not a drivetrain. */
#define SPEED_LIMIT 1e9

/* Every buffer the solver owns, with its size: one table for allocation,
 * freeing and snapshots (sizes depend only on the graph). `slot` is the
 * address of the pointer member (of whatever pointer type); it is read and
 * written with memcpy, as object pointers share one representation here. */
typedef struct buf_spec {
  void *slot;
  size_t bytes;
} buf_spec;

static void *buf_get(const buf_spec *b) {
  void *p;
  memcpy(&p, b->slot, sizeof p);
  return p;
}
static void buf_set(const buf_spec *b, void *p) { memcpy(b->slot, &p, sizeof p); }

#define MAX_SOLVER_BUFFERS 120
static int solver_buffers(dg_sim *sim, buf_spec *out) {
  const dg_topo_ws *ws = &sim->sv.ws;
  size_t nn = (size_t)sim->nn, ny = (size_t)(sim->nn + sim->ns), mt = (size_t)ws->max_ties;
  size_t ml = (size_t)ws->max_links;
  int n = 0;
#define SPEC(slot_, count_, size_) \
  (out[n++] = (buf_spec){(void *)(slot_), (size_t)(count_) * (size_t)(size_)})
  SPEC(&sim->sv.ws.R, nn * nn, sizeof(double));
  SPEC(&sim->sv.ws.Rd, nn * nn, sizeof(double));
  SPEC(&sim->sv.kin.Gd, nn * nn, sizeof(double));
  SPEC(&sim->sv.ws.has_row, nn, 1);
  SPEC(&sim->sv.ws.raw_owner, nn, sizeof(int));
  SPEC(&sim->sv.ws.raw_node, nn, sizeof(int));
  SPEC(&sim->sv.ws.T, nn * nn, sizeof(double));
  SPEC(&sim->sv.ws.col_raw, nn, sizeof(int));
  SPEC(&sim->sv.ws.ties, mt, sizeof(dg_tie));
  SPEC(&sim->sv.ws.tie_node, (size_t)ws->max_terms, sizeof(int));
  SPEC(&sim->sv.ws.tie_coef, (size_t)ws->max_terms, sizeof(double));
  SPEC(&sim->sv.ws.C, mt * nn, sizeof(double));
  SPEC(&sim->sv.ws.P, mt * nn, sizeof(double));
  SPEC(&sim->sv.ws.A, mt * mt, sizeof(double));
  SPEC(&sim->sv.ws.active_tie, mt, sizeof(int));
  SPEC(&sim->sv.ws.tie_acoef, (size_t)ws->max_terms, sizeof(double));
  SPEC(&sim->sv.ws.mesh_link, nn, sizeof(int));
  SPEC(&sim->sv.ws.mesh_tie, nn, sizeof(int));
  SPEC(&sim->sv.ws.mesh_eta, nn, sizeof(double));
  SPEC(&sim->sv.ws.link_dst, ml, sizeof(int));
  SPEC(&sim->sv.ws.link_first, ml, sizeof(int));
  SPEC(&sim->sv.ws.link_n, ml, sizeof(int));
  SPEC(&sim->sv.ws.link_block, ml, sizeof(int));
  SPEC(&sim->sv.ws.link_var, ml, 1);
  SPEC(&sim->sv.ws.link_src, (size_t)ws->max_terms, sizeof(int));
  SPEC(&sim->sv.ws.link_coef, (size_t)ws->max_terms, sizeof(double));
  SPEC(&sim->sv.ws.link_rate, (size_t)ws->max_terms, sizeof(double));
  SPEC(&sim->sv.ws.row_dirty, nn, 1);
  SPEC(&sim->sv.inertia, nn, sizeof(double));
  SPEC(&sim->sv.x, nn, sizeof(double));
  SPEC(&sim->sv.normal_load, nn, sizeof(double));
  SPEC(&sim->sv.audit.work, (size_t)sim->nb, sizeof(double));
  SPEC(&sim->sv.xw, nn, sizeof(double));
  SPEC(&sim->sv.tau, nn, sizeof(double));
  SPEC(&sim->sv.gvec, nn, sizeof(double));
  SPEC(&sim->sv.G, nn * nn, sizeof(double));
  SPEC(&sim->sv.gs_node, nn * nn, sizeof(int));
  SPEC(&sim->sv.gs_dof, nn * nn, sizeof(int));
  SPEC(&sim->sv.gs_val, nn * nn, sizeof(double));
  SPEC(&sim->sv.row_start, nn + 1, sizeof(int));
  SPEC(&sim->sv.single_node, nn, sizeof(int));
  SPEC(&sim->sv.single_dof, nn, sizeof(int));
  SPEC(&sim->sv.single_val, nn, sizeof(double));
  SPEC(&sim->sv.multi_node, nn, sizeof(int));
  SPEC(&sim->sv.pair_node, nn, sizeof(int));
  SPEC(&sim->sv.pair_dof, 2 * nn, sizeof(int));
  SPEC(&sim->sv.pair_val, 2 * nn, sizeof(double));
  SPEC(&sim->sv.loss.u, nn * nn, sizeof(double));
  SPEC(&sim->sv.loss.b, nn * nn, sizeof(double));
  SPEC(&sim->sv.loss.h, nn * nn, sizeof(double));
  SPEC(&sim->sv.loss.d, nn * nn, sizeof(double));
  SPEC(&sim->sv.loss.ga, nn * nn, sizeof(double));
  SPEC(&sim->sv.loss.gb, nn * nn, sizeof(double));
  SPEC(&sim->sv.loss.W, nn * nn, sizeof(double));
  SPEC(&sim->sv.loss.S, nn * nn, sizeof(double));
  SPEC(&sim->sv.loss.lam0, nn, sizeof(double));
  SPEC(&sim->sv.loss.lam, nn, sizeof(double));
  SPEC(&sim->sv.loss.kap, nn, sizeof(double));
  SPEC(&sim->sv.loss.z, nn, sizeof(double));
  SPEC(&sim->sv.loss.dir, nn, sizeof(int));
  SPEC(&sim->sv.loss.p, nn, sizeof(double));
  SPEC(&sim->sv.loss.p4, nn, sizeof(double));
  SPEC(&sim->sv.loss.watch, nn, 1);
  SPEC(&sim->sv.loss.kf, nn, sizeof(double));
  SPEC(&sim->sv.loss.kb, nn, sizeof(double));
  SPEC(&sim->sv.loss.un, nn * nn, sizeof(int));
  SPEC(&sim->sv.loss.bn, nn * nn, sizeof(int));
  SPEC(&sim->sv.loss.uv, nn * nn, sizeof(double));
  SPEC(&sim->sv.loss.bv, nn * nn, sizeof(double));
  SPEC(&sim->sv.loss.nu, nn, sizeof(int));
  SPEC(&sim->sv.loss.nb, nn, sizeof(int));
  SPEC(&sim->sv.loss.cA, nn * nn, sizeof(double));
  SPEC(&sim->sv.loss.cAtA, nn * nn, sizeof(double));
  SPEC(&sim->sv.lam.factor, mt, sizeof(double));
  SPEC(&sim->sv.M, nn * nn, sizeof(double));
  SPEC(&sim->sv.Minv, nn * nn, sizeof(double));
  SPEC(&sim->sv.kin.Mfix, nn * nn, sizeof(double));
  SPEC(&sim->sv.B, nn * nn, sizeof(double));
  SPEC(&sim->sv.L, nn * nn, sizeof(double));
  SPEC(&sim->sv.q, nn, sizeof(double));
  SPEC(&sim->sv.s, (size_t)sim->ns, sizeof(double));
  SPEC(&sim->sv.rk.y0, ny, sizeof(double));
  SPEC(&sim->sv.rk.yt, ny, sizeof(double));
  SPEC(&sim->sv.rk.k1, ny, sizeof(double));
  SPEC(&sim->sv.rk.k2, ny, sizeof(double));
  SPEC(&sim->sv.rk.k3, ny, sizeof(double));
  SPEC(&sim->sv.rk.k4, ny, sizeof(double));
  SPEC(&sim->sv.f, nn, sizeof(double));
  SPEC(&sim->sv.scratch, nn, sizeof(double));
  SPEC(&sim->sv.lam.value, mt, sizeof(double));
  SPEC(&sim->sv.audit.pw, 5 * (size_t)sim->sv.audit.ne, sizeof(double));
  SPEC(&sim->sv.lam.start, mt + 1, sizeof(int));
  SPEC(&sim->sv.lam.node, mt * nn, sizeof(int));
  SPEC(&sim->sv.lam.coef, mt * nn, sizeof(double));
  SPEC(&sim->sv.ev.g0, (size_t)sim->n_events + nn + 1, sizeof(double));
  SPEC(&sim->sv.ev.g1, (size_t)sim->n_events + nn + 1, sizeof(double));
  SPEC(&sim->sv.ev.gt, (size_t)sim->n_events + nn + 1, sizeof(double));
  SPEC(&sim->sv.rk.ydense, ny, sizeof(double));
  SPEC(&sim->sv.rk.ysave, ny, sizeof(double));
#undef SPEC
  DG_ASSERT(n <= MAX_SOLVER_BUFFERS);
  return n;
}

int dg_solver_alloc(dg_sim *sim) {
  sim->sv.audit.ne = sim->n_torque + 1;
  dg_topo_ws *ws = &sim->sv.ws;
  ws->max_ties = 2 * sim->nn + 4 * sim->nb + 8;
  ws->max_terms = 8 * ws->max_ties;
  ws->max_links = 2 * sim->nn + 4 * sim->nb + 8;
  buf_spec spec[MAX_SOLVER_BUFFERS];
  int n = solver_buffers(sim, spec);
  int rc = DG_OK;
  for (int i = 0; i < n; i++) {
    void *p = calloc(spec[i].bytes ? spec[i].bytes : 1, 1);
    buf_set(&spec[i], p);
    if (!p)
      rc = DG_ERR_NOMEM;
  }
  sim->sv.topo_state = sim->sv.s;
  if (sim->sv.audit.pw)
    sim->sv.audit.pcur = sim->sv.audit.pw + 4 * sim->sv.audit.ne;
  return rc;
}

void dg_solver_free(dg_sim *sim) {
  buf_spec spec[MAX_SOLVER_BUFFERS];
  int n = solver_buffers(sim, spec);
  for (int i = 0; i < n; i++) {
    free(buf_get(&spec[i]));
    buf_set(&spec[i], NULL);
  }
}

/* Snapshots: the solver's arrays, copied whole. */
size_t dg_solver_state_bytes(dg_sim *sim) {
  buf_spec spec[MAX_SOLVER_BUFFERS];
  int n = solver_buffers(sim, spec);
  size_t total = 0;
  for (int i = 0; i < n; i++)
    total += spec[i].bytes;
  return total;
}

void dg_solver_save(dg_sim *sim, unsigned char *out) {
  buf_spec spec[MAX_SOLVER_BUFFERS];
  int n = solver_buffers(sim, spec);
  for (int i = 0; i < n; i++) {
    memcpy(out, buf_get(&spec[i]), spec[i].bytes);
    out += spec[i].bytes;
  }
}

void dg_solver_load(dg_sim *sim, const dg_solver *saved, const unsigned char *in) {
  dg_solver keep = sim->sv;
  sim->sv = *saved; /* the scalars; the pointers are put back below */
  buf_spec spec[MAX_SOLVER_BUFFERS];
  int n = solver_buffers(sim, spec);
  for (int i = 0; i < n; i++) {
    size_t off = (size_t)((char *)spec[i].slot - (char *)&sim->sv);
    memcpy(spec[i].slot, (char *)&keep + off, sizeof(void *));
    memcpy(buf_get(&spec[i]), in, spec[i].bytes);
    in += spec[i].bytes;
  }
  sim->sv.audit.pcur = sim->sv.audit.pw + 4 * sim->sv.audit.ne;
  sim->sv.topo_state = sim->sv.s;
  sim->sv.topo.sim = sim;
  /* tie forces saved at the committed state stay valid; any other point's
   * are computed again when asked for */
  if (saved->lam.y != NULL)
    sim->sv.lam.valid = false;
  sim->sv.lam.y = NULL;
}

/* ------------------------------------------------------------------------ */
/* Topology building: the dg_topo_* calls of state_upstream                 */

static void topo_error(dg_sim *sim, int block, int code, const char *fmt, ...) DG_PRINTF(4, 5);
static void topo_error(dg_sim *sim, int block, int code, const char *fmt, ...) {
  dg_topo_ws *ws = &sim->sv.ws;
  if (ws->error)
    return;
  ws->error = code;
  ws->errblock = block;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(ws->errmsg, sizeof ws->errmsg, fmt, ap);
  va_end(ap);
}

static double *row_of(const dg_sim *sim, int node) { return sim->sv.ws.R + (size_t)node * (size_t)sim->nn; }

/* The node gets a new raw DOF of its own. */
static void new_raw(dg_sim *sim, int node, int owner) {
  dg_topo_ws *ws = &sim->sv.ws;
  int k = ws->nraw++;
  double *r = row_of(sim, node);
  memset(r, 0, sizeof(double) * (size_t)sim->nn);
  memset(ws->Rd + (size_t)node * (size_t)sim->nn, 0, sizeof(double) * (size_t)sim->nn);
  r[k] = 1.0;
  ws->has_row[node] = 1;
  ws->raw_owner[k] = owner;
  ws->raw_node[k] = node;
}

static void ensure_row(dg_sim *sim, int node, int owner) {
  if (!sim->sv.ws.has_row[node])
    new_raw(sim, node, owner);
}

static bool valid_port(dg_sim *sim, const dg_block *b, int port) {
  if (port < 0 || port >= sim->g->blocks[b->index].num_ports) {
    topo_error(sim, b->index, DG_ERR_BLOCK, "block class %s used port index %d of %d",
               b->klass->type, port, sim->g->blocks[b->index].num_ports);
    return false;
  }
  return true;
}

void dg_topo_dof(dg_topo *t, const dg_block *b, int port) {
  if (t->sim->sv.ws.refreshing)
    return;
  if (valid_port(t->sim, b, port))
    ensure_row(t->sim, b->node[port], b->index);
}

/* A lossy mesh of this build: a link (link >= 0) or a tie (tie >= 0). */
static void add_mesh(dg_sim *sim, const dg_block *b, int link, int tie, double eta) {
  dg_topo_ws *ws = &sim->sv.ws;
  if (ws->nmesh >= sim->nn) { /* independent constraints are fewer than nodes */
    topo_error(sim, b->index, DG_ERR_OVERCONSTRAINED,
               "over-constrained: more lossy meshes than the drivetrain has shafts");
    return;
  }
  int j = ws->nmesh++;
  ws->mesh_link[j] = link;
  ws->mesh_tie[j] = tie;
  ws->mesh_eta[j] = eta;
  if (tie >= 0)
    ws->ties[tie].mesh = j;
}

/* The tie Σ coef·x = 0 over nodes; with acoef (side a's coefficients) and
 * eta < 1 a lossy mesh. */
static int add_tie(dg_sim *sim, const dg_block *b, int n, const int *node, const double *coef,
                   const double *acoef, double eta) {
  dg_topo_ws *ws = &sim->sv.ws;
  if (ws->nties >= ws->max_ties || ws->nterms + n > ws->max_terms) {
    topo_error(sim, b->index, DG_ERR_BLOCK, "too many ties in one mode (limit %d)", ws->max_ties);
    return -1;
  }
  int id = ws->nties++;
  dg_tie *tie = &ws->ties[id];
  *tie = (dg_tie){b->index, ws->nterms, n, n == 1, -1, -1};
  double *c = ws->C + (size_t)id * (size_t)sim->nn;
  memset(c, 0, sizeof(double) * (size_t)sim->nn);
  for (int i = 0; i < n; i++) {
    ensure_row(sim, node[i], b->index);
    if (ws->row_dirty[node[i]])
      sim->sv.kin.refreshable = false; /* the elimination would change with the ratio */
    ws->tie_node[ws->nterms] = node[i];
    ws->tie_coef[ws->nterms] = coef[i];
    ws->tie_acoef[ws->nterms] = acoef ? acoef[i] : 0.0;
    ws->nterms++;
    const double *r = row_of(sim, node[i]);
    for (int k = 0; k < ws->nraw; k++)
      c[k] += coef[i] * r[k];
  }
  if (acoef && eta < 1.0)
    add_mesh(sim, b, -1, id, eta);
  return id;
}

int dg_topo_lock(dg_topo *t, const dg_block *b, int port_a, int port_b) {
  const int ports[2] = {port_a, port_b};
  static const double coef[2] = {1.0, -1.0};
  return dg_topo_tie(t, b, 2, ports, coef);
}

void dg_topo_link(dg_topo *t, const dg_block *b, int dst, int n, const int *src,
                  const double *coef, double efficiency) {
  dg_topo_link_rate(t, b, dst, n, src, coef, NULL, efficiency);
}

/* Refresh: the link's new coefficients, checked against the build's. */
static void refresh_link(dg_sim *sim, const dg_block *b, int dst, int n, const double *coef,
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

/* Build: the link, so that a refresh can recompute the rows after it and
 * the lossy meshes can name it; returns its index, -1 past the bounds. */
static int record_link(dg_sim *sim, const dg_block *b, int dnode, int n, const int *nodes,
                       const double *coef, const double *coef_rate) {
  dg_topo_ws *ws = &sim->sv.ws;
  int k = ws->nlinks;
  int f = k > 0 ? ws->link_first[k - 1] + ws->link_n[k - 1] : 0;
  if (k >= ws->max_links || f + n > ws->max_terms) {
    sim->sv.kin.refreshable = false; /* too many to record: every substep builds in full */
    ws->links_complete = false;
    return -1;
  }
  ws->nlinks++;
  ws->link_dst[k] = dnode;
  ws->link_first[k] = f;
  ws->link_n[k] = n;
  ws->link_block[k] = b->index;
  ws->link_var[k] = (b->klass->flags & DG_CLASS_VARIABLE_KINEMATICS) != 0;
  bool dirty = ws->link_var[k];
  for (int i = 0; i < n; i++) {
    ws->link_src[f + i] = nodes[i];
    ws->link_coef[f + i] = coef[i];
    ws->link_rate[f + i] = coef_rate ? coef_rate[i] : 0.0;
    dirty = dirty || ws->row_dirty[nodes[i]];
  }
  ws->row_dirty[dnode] = dirty && sim->sv.variable_kinematics;
  return k;
}

void dg_topo_link_rate(dg_topo *t, const dg_block *b, int dst, int n, const int *src,
                       const double *coef, const double *coef_rate, double efficiency) {
  dg_sim *sim = t->sim;
  dg_topo_ws *ws = &sim->sv.ws;
  if (ws->refreshing) {
    refresh_link(sim, b, dst, n, coef, coef_rate);
    return;
  }
  if (!valid_port(sim, b, dst))
    return;
  if (n < 1 || n > 16) {
    topo_error(sim, b->index, DG_ERR_BLOCK, "dg_topo_link with %d sources (1..16)", n);
    return;
  }
  if (!(efficiency > 0.0 && efficiency <= 1.0)) {
    topo_error(sim, b->index, DG_ERR_BLOCK, "efficiency %g outside (0, 1]", efficiency);
    return;
  }
  int nodes[17];
  double coefs[17];
  for (int i = 0; i < n; i++) {
    if (!valid_port(sim, b, src[i]))
      return;
    nodes[i + 1] = b->node[src[i]];
    coefs[i + 1] = -coef[i];
    ensure_row(sim, nodes[i + 1], b->index);
  }
  int dnode = b->node[dst];
  if (ws->has_row[dnode]) {
    /* Already determined from elsewhere (a loop): the link is a constraint
     * (lossy: side a is dst, as for a link). */
    double acoef[17] = {1.0};
    nodes[0] = dnode;
    coefs[0] = 1.0;
    add_tie(sim, b, n + 1, nodes, coefs, acoef, efficiency);
    return;
  }
  double *r = row_of(sim, dnode), *rd = ws->Rd + (size_t)dnode * (size_t)sim->nn;
  memset(r, 0, sizeof(double) * (size_t)sim->nn);
  memset(rd, 0, sizeof(double) * (size_t)sim->nn);
  for (int i = 0; i < n; i++) {
    const double *sr = row_of(sim, nodes[i + 1]);
    const double *srd = ws->Rd + (size_t)nodes[i + 1] * (size_t)sim->nn;
    for (int k = 0; k < ws->nraw; k++) {
      r[k] += coef[i] * sr[k];
      /* d/dt (c · x_src) = ċ · x_src + c · ẋ_src-part from the source's own rate */
      rd[k] += coef[i] * srd[k] + (coef_rate ? coef_rate[i] * sr[k] : 0.0);
    }
  }
  ws->has_row[dnode] = 1;
  int k = record_link(sim, b, dnode, n, nodes + 1, coef, coef_rate);
  if (efficiency < 1.0) {
    if (k < 0)
      topo_error(sim, b->index, DG_ERR_BLOCK, "too many links in one mode (limit %d)",
                 ws->max_links);
    else
      add_mesh(sim, b, k, -1, efficiency);
  }
}

void dg_topo_ratio(dg_topo *t, const dg_block *b, int dst, int src, double ratio,
                   double efficiency) {
  dg_topo_link(t, b, dst, 1, &src, &ratio, efficiency);
}

static int topo_tie(dg_topo *t, const dg_block *b, int n, const int *port, const double *coef,
                    const double *coef_a, double efficiency) {
  dg_sim *sim = t->sim;
  int nodes[16];
  if (sim->sv.ws.refreshing) /* a tie in a refreshed mode: the structure is kept */
    return -1;
  if (n < 1 || n > 16) {
    topo_error(sim, b->index, DG_ERR_BLOCK, "dg_topo_tie with %d ports (1..16)", n);
    return -1;
  }
  if (!(efficiency > 0.0 && efficiency <= 1.0)) {
    topo_error(sim, b->index, DG_ERR_BLOCK, "efficiency %g outside (0, 1]", efficiency);
    return -1;
  }
  for (int i = 0; i < n; i++) {
    if (!valid_port(sim, b, port[i]))
      return -1;
    nodes[i] = b->node[port[i]];
  }
  return add_tie(sim, b, n, nodes, coef, coef_a, efficiency);
}

int dg_topo_tie(dg_topo *t, const dg_block *b, int n, const int *port, const double *coef) {
  return topo_tie(t, b, n, port, coef, NULL, 1.0);
}

int dg_topo_tie_lossy(dg_topo *t, const dg_block *b, int n, const int *port, const double *coef,
                      const double *coef_a, double efficiency) {
  return topo_tie(t, b, n, port, coef, coef_a, efficiency);
}

const double *dg_topo_state(const dg_topo *t, const dg_block *b) {
  return t->sim->sv.topo_state + b->state;
}

void dg_topo_inertia(dg_topo *t, const dg_block *b, int port, double inertia) {
  if (t->sim->sv.ws.refreshing)
    return;
  if (!valid_port(t->sim, b, port))
    return;
  if (!(inertia >= 0.0) || !isfinite(inertia)) {
    topo_error(t->sim, b->index, DG_ERR_BLOCK, "inertia %g must be finite and >= 0", inertia);
    return;
  }
  t->sim->sv.inertia[b->node[port]] += inertia;
}

/* ------------------------------------------------------------------------ */
/* Dense helpers (stride nn)                                                */

/* In-place Cholesky of the leading n×n of a (lower triangle used) into l.
 * Returns -1 - j for the first column whose pivot is not positive. */
static int cholesky(const double *a, double *l, int n, size_t stride) {
  double scale = 0.0;
  for (int j = 0; j < n; j++)
    scale = fmax(scale, a[(size_t)j * stride + (size_t)j]);
  for (int j = 0; j < n; j++) {
    for (int i = j; i < n; i++) {
      double sum = a[(size_t)i * stride + (size_t)j];
      for (int k = 0; k < j; k++)
        sum -= l[(size_t)i * stride + (size_t)k] * l[(size_t)j * stride + (size_t)k];
      if (i == j) {
        if (!(sum > PIVOT_EPS * scale))
          return -1 - j;
        l[(size_t)j * stride + (size_t)j] = sqrt(sum);
      } else {
        l[(size_t)i * stride + (size_t)j] = sum / l[(size_t)j * stride + (size_t)j];
      }
    }
  }
  return 0;
}

/* Solves L Lᵀ x = b in place. */
static void cholesky_solve(const double *l, int n, size_t stride, double *x) {
  for (int i = 0; i < n; i++) {
    double sum = x[i];
    const double *li = l + (size_t)i * stride;
    for (int k = 0; k < i; k++)
      sum -= li[k] * x[k];
    x[i] = sum / li[i];
  }
  for (int i = n - 1; i >= 0; i--) {
    double sum = x[i];
    for (int k = i + 1; k < n; k++)
      sum -= l[(size_t)k * stride + (size_t)i] * x[k];
    x[i] = sum / l[(size_t)i * stride + (size_t)i];
  }
}

/* "block.port" of a node, for messages. */
static void node_label(const dg_sim *sim, int node, char *buf, size_t size) {
  const dg_gnode *n = &sim->g->nodes[node];
  int b = n->out_block >= 0 ? n->out_block : n->in_block >= 0 ? n->in_block : n->block[0];
  int p = n->out_block >= 0 ? n->out_port : n->in_block >= 0 ? n->in_port : n->port[0];
  snprintf(buf, size, "%s.%s", sim->g->blocks[b].id, sim->g->blocks[b].klass->ports[p].name);
}

int dg_sim_dof_describe(const dg_sim *sim, int dof, char *buf, size_t size) {
  if (dof < 0 || dof >= sim->sv.ndof) {
    if (size)
      buf[0] = '\0';
    return 0;
  }
  char lab[128];
  node_label(sim, sim->sv.ws.raw_node[sim->sv.ws.col_raw[dof]], lab, sizeof lab);
  return snprintf(buf, size, "%s", lab);
}

/* Lists the nodes (and their blocks) for which `on(node)` holds. */
static void describe_nodes(const dg_sim *sim, bool (*on)(const dg_sim *, int, int), int arg,
                           char *nodes, size_t nsize, char *blocks, size_t bsize, int *first) {
  size_t nl = 0, bl = 0;
  nodes[0] = blocks[0] = '\0';
  *first = -1;
  unsigned char *seen = calloc((size_t)sim->nb, 1);
  for (int n = 0; n < sim->nn; n++) {
    if (!on(sim, n, arg))
      continue;
    char lab[128];
    node_label(sim, n, lab, sizeof lab);
    if (nl < nsize)
      nl += (size_t)snprintf(nodes + nl, nsize - nl, "%s%s", nl ? ", " : "", lab);
    const dg_gnode *gn = &sim->g->nodes[n];
    for (int i = 0; i < gn->n; i++) {
      int b = gn->block[i];
      if (seen && seen[b])
        continue;
      if (seen)
        seen[b] = 1;
      if (*first < 0)
        *first = b;
      if (bl < bsize)
        bl += (size_t)snprintf(blocks + bl, bsize - bl, "%s%s", bl ? ", " : "",
                               sim->g->blocks[b].id);
    }
  }
  free(seen);
}

/* scratch holds the node speeds of a motion without inertia */
static bool node_moves(const dg_sim *sim, int n, int unused) {
  (void)unused;
  return sim->sv.scratch[n] != 0.0;
}

/* Cholesky stopped at column j: M is singular there. The motion that costs
 * no kinetic energy is v = [−L₁₁⁻ᵀ l_j; 1; 0…] (M v = 0); the nodes it moves
 * are the shafts without inertia, named in the message. */
static void report_zero_inertia(dg_sim *sim, int j) {
  size_t st = (size_t)sim->nn;
  double *v = sim->sv.f;
  for (int k = 0; k < sim->sv.ndof; k++)
    v[k] = 0.0;
  for (int k = 0; k < j; k++)
    v[k] = sim->sv.L[(size_t)j * st + (size_t)k];
  for (int i = j - 1; i >= 0; i--) { /* L₁₁ᵀ w = l_j */
    double sum = v[i];
    for (int k = i + 1; k < j; k++)
      sum -= sim->sv.L[(size_t)k * st + (size_t)i] * v[k];
    v[i] = sum / sim->sv.L[(size_t)i * st + (size_t)i];
  }
  for (int k = 0; k < j; k++)
    v[k] = -v[k];
  v[j] = 1.0;
  double vmax = 0.0;
  for (int n = 0; n < sim->nn; n++) {
    double x = 0.0;
    for (int k = 0; k <= j; k++)
      x += sim->sv.G[(size_t)n * st + (size_t)k] * v[k];
    sim->sv.scratch[n] = x;
    vmax = fmax(vmax, fabs(x));
  }
  for (int n = 0; n < sim->nn; n++)
    if (fabs(sim->sv.scratch[n]) <= 1e-9 * vmax)
      sim->sv.scratch[n] = 0.0;
  char nodes[200], blocks[160];
  int first;
  describe_nodes(sim, node_moves, 0, nodes, sizeof nodes, blocks, sizeof blocks, &first);
  topo_error(sim, first, DG_ERR_INERTIA,
             "a degree of freedom has no inertia: %s can turn without moving anything that has "
             "inertia (blocks: %s); give one of them an inertia",
             nodes, blocks);
}

static bool row_nonzero(const double *r, int n) {
  for (int k = 0; k < n; k++)
    if (r[k] != 0.0)
      return true;
  return false;
}

/* Node rows of G = R T restricted to one node. */
static void reduced_row(const dg_sim *sim, int node, int nred, double *out) {
  const double *r = row_of(sim, node);
  const dg_topo_ws *ws = &sim->sv.ws;
  for (int j = 0; j < nred; j++)
    out[j] = 0.0;
  for (int k = 0; k < ws->nraw; k++) {
    if (r[k] == 0.0)
      continue;
    const double *tk = ws->T + (size_t)k * (size_t)sim->nn;
    for (int j = 0; j < nred; j++)
      out[j] += r[k] * tk[j];
  }
}

/* scratch holds 1 for the nodes check_overconstrained flagged */
static bool node_zeroed(const dg_sim *sim, int n, int unused) {
  (void)unused;
  return sim->sv.scratch[n] != 0.0;
}

/* After the equality ties: a node they join that had motion and has none
 * left means the ties contradict the kinematics (a loop of unequal ratios). */
static void check_overconstrained(dg_sim *sim, int nred) {
  dg_topo_ws *ws = &sim->sv.ws;
  double *red = sim->sv.f;
  for (int t = 0; t < ws->nties && !ws->error; t++) {
    const dg_tie *tie = &ws->ties[t];
    if (tie->ground)
      continue;
    bool bad = false;
    memset(sim->sv.scratch, 0, sizeof(double) * (size_t)sim->nn);
    for (int i = 0; i < tie->n; i++) {
      int node = ws->tie_node[tie->first + i];
      if (!row_nonzero(row_of(sim, node), ws->nraw))
        continue;
      reduced_row(sim, node, nred, red);
      if (!row_nonzero(red, nred)) {
        sim->sv.scratch[node] = 1.0;
        bad = true;
      }
    }
    if (!bad)
      continue;
    char nodes[160], blocks[160];
    int first;
    describe_nodes(sim, node_zeroed, nred, nodes, sizeof nodes, blocks, sizeof blocks, &first);
    topo_error(sim, tie->block, DG_ERR_OVERCONSTRAINED,
               "over-constrained: a constraint of block \"%s\" contradicts the ratios of a loop "
               "(it would hold %s at rest; blocks involved: %s)",
               sim->g->blocks[tie->block].id, nodes, blocks);
  }
}

/* Two blocks holding one shaft to ground in one mode (two brakes, a brake
 * and a parking lock, a brake and a stuck Coulomb load): the second hold
 * is redundant, so its force is 0 and its capacity is never used — the
 * holds would take turns instead of pooling. Refused, naming both. */
static void check_double_holds(dg_sim *sim) {
  dg_topo_ws *ws = &sim->sv.ws;
  for (int t = 0; t < ws->nties && !ws->error; t++) {
    const dg_tie *a = &ws->ties[t];
    if (!a->ground)
      continue;
    int node = ws->tie_node[a->first];
    for (int u = 0; u < t; u++) {
      const dg_tie *b = &ws->ties[u];
      if (!b->ground || b->block == a->block || ws->tie_node[b->first] != node)
        continue;
      char lab[128];
      node_label(sim, node, lab, sizeof lab);
      topo_error(sim, a->block, DG_ERR_OVERCONSTRAINED,
                 "over-constrained: blocks \"%s\" and \"%s\" both hold the shaft %s to ground; "
                 "two holds on one shaft cannot share the torque they hold: use one (a brake "
                 "with the capacities added)",
                 sim->g->blocks[b->block < a->block ? b->block : a->block].id,
                 sim->g->blocks[b->block < a->block ? a->block : b->block].id, lab);
      return;
    }
  }
}

/* Gaussian elimination of the ties; fills T (nraw × nred) and returns nred. */
static int eliminate_ties(dg_sim *sim) {
  dg_topo_ws *ws = &sim->sv.ws;
  check_double_holds(sim);
  if (ws->error)
    return ws->nraw;
  size_t st = (size_t)sim->nn;
  int nraw = ws->nraw, nred = nraw;
  for (int k = 0; k < nraw; k++) {
    double *tk = ws->T + (size_t)k * st;
    memset(tk, 0, sizeof(double) * st);
    tk[k] = 1.0;
    ws->col_raw[k] = k;
  }
  ws->nactive = 0;
  sim->sv.lam.start[0] = 0;
  double *c = sim->sv.gvec;
  for (int pass = 0; pass < 2; pass++) {
    for (int t = 0; t < ws->nties; t++) {
      dg_tie *tie = &ws->ties[t];
      if (tie->ground != (pass == 1))
        continue;
      tie->active = -1;
      const double *crow = ws->C + (size_t)t * st;
      double scale = 0.0;
      for (int k = 0; k < nraw; k++)
        scale = fmax(scale, fabs(crow[k]));
      if (scale == 0.0)
        continue;
      int jp = -1;
      double best = 0.0;
      for (int j = 0; j < nred; j++) {
        double v = 0.0;
        for (int k = 0; k < nraw; k++)
          v += crow[k] * ws->T[(size_t)k * st + (size_t)j];
        c[j] = v;
        if (fabs(v) > best) {
          best = fabs(v);
          jp = j;
        }
      }
      if (jp < 0 || best <= PIVOT_EPS * scale)
        continue; /* redundant: already implied by earlier ties */
      for (int k = 0; k < nraw; k++) {
        double *tk = ws->T + (size_t)k * st;
        double pivot = tk[jp];
        if (pivot != 0.0)
          for (int j = 0; j < nred; j++)
            if (j != jp)
              tk[j] -= c[j] / c[jp] * pivot;
        for (int j = jp; j < nred - 1; j++)
          tk[j] = tk[j + 1];
        tk[nred - 1] = 0.0;
      }
      for (int j = jp; j < nred - 1; j++)
        ws->col_raw[j] = ws->col_raw[j + 1];
      nred--;
      tie->active = ws->nactive++;
    }
    if (pass == 0)
      check_overconstrained(sim, nred);
  }
  return nred;
}

static void build_lambda_map(dg_sim *sim);
static void build_speed_plan(dg_sim *sim);

/* After a refresh of the rows: Λ's entries at the changed rows (a row that
 * changes is its build value times the changing coefficients, so the
 * entries that were zero stay zero). */
static void refresh_lambda_map(dg_sim *sim) {
  const dg_topo_ws *ws = &sim->sv.ws;
  size_t st = (size_t)sim->nn;
  for (int a = 0; a < ws->nactive; a++) {
    const double *p = ws->P + (size_t)a * st;
    for (int k = sim->sv.lam.start[a]; k < sim->sv.lam.start[a + 1]; k++) {
      int node = sim->sv.lam.node[k];
      if (!ws->row_dirty[node])
        continue;
      const double *r = row_of(sim, node);
      double v = 0.0;
      for (int j = 0; j < ws->nraw; j++)
        v += p[j] * r[j];
      sim->sv.lam.coef[k] = v;
    }
  }
  sim->sv.kin.lam_stale = false;
}

/* P = (C Cᵀ)⁻¹ C over the active ties. */
static void build_multiplier_map(dg_sim *sim) {
  dg_topo_ws *ws = &sim->sv.ws;
  size_t st = (size_t)sim->nn, ma = (size_t)ws->max_ties;
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
        v += ci[k] * cj[k];
      a[(size_t)i * ma + (size_t)j] = a[(size_t)j * ma + (size_t)i] = v;
    }
  /* factor in place: a's lower triangle becomes L */
  if (cholesky(a, a, na, ma) != 0) {
    topo_error(sim, ws->ties[idx[0]].block, DG_ERR_OVERCONSTRAINED,
               "constraints are numerically dependent");
    return;
  }
  double *col = sim->sv.f;
  for (int k = 0; k < nraw; k++) {
    for (int i = 0; i < na; i++)
      col[i] = ws->C[(size_t)idx[i] * st + (size_t)k];
    cholesky_solve(a, na, ma, col);
    for (int i = 0; i < na; i++)
      ws->P[(size_t)i * st + (size_t)k] = col[i];
  }
  build_lambda_map(sim);
}

/* Λ = P Rᵀ over nodes, so that the acceleration stage gets λ = Λ r from the
 * node residuals r = I ẍ − w with no pass over the raw DOFs. */
static void build_lambda_map(dg_sim *sim) {
  dg_topo_ws *ws = &sim->sv.ws;
  size_t st = (size_t)sim->nn;
  int na = ws->nactive, nraw = ws->nraw;
  sim->sv.kin.lam_stale = false;
  int nz = 0;
  for (int i = 0; i < na; i++) {
    const double *p = ws->P + (size_t)i * st;
    sim->sv.lam.start[i] = nz;
    for (int node = 0; node < sim->nn; node++) {
      const double *r = row_of(sim, node);
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

/* Adds the contributions I·g gᵀ of the nodes `on` selects (all when NULL,
 * else those whose flag equals `want`) to M. */
static void add_node_inertia(dg_sim *sim, const unsigned char *on, unsigned char want) {
  size_t st = (size_t)sim->nn;
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
static int assemble_mass(dg_sim *sim, bool refresh) {
  size_t st = (size_t)sim->nn;
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
  int rc = cholesky(sim->sv.M, sim->sv.L, nred, st);
  if (rc != 0) {
    if (refresh)
      return -1; /* let a full build name the shafts */
    report_zero_inertia(sim, -1 - rc);
    return sim->sv.ws.error;
  }
  sim->sv.use_B = false;
  if (dirty)
    return DG_OK;
  /* M⁻¹ once per mode, and the ACCEL stage's map B = M⁻¹ Gᵀ from node
   * torques to accelerations: a substep is then one dense product
   * q̇ = B w with no divisions and no indirection (for drivetrain sizes
   * cheaper than f = Gᵀ w over the non-zeros and two triangular solves). */
  for (int c = 0; c < nred; c++) {
    double *col = sim->sv.f;
    for (int i = 0; i < nred; i++)
      col[i] = i == c ? 1.0 : 0.0;
    cholesky_solve(sim->sv.L, nred, st, col);
    for (int i = 0; i < nred; i++)
      sim->sv.Minv[(size_t)i * st + (size_t)c] = col[i];
  }
  /* dense B only where it is the smaller product (small graphs); else
   * f = Gᵀ w over the non-zeros and M⁻¹ f (measured: the sedan's 15 nodes
   * and 6 DOFs are faster sparse, the 2-DOF axle dense) */
  sim->sv.use_B = nred * sim->nn <= 2 * sim->sv.nnz;
  for (int i = 0; sim->sv.use_B && i < nred; i++) {
    double *bi = sim->sv.B + (size_t)i * st;
    const double *mi = sim->sv.Minv + (size_t)i * st;
    for (int n = 0; n < sim->nn; n++) {
      double v = 0.0;
      for (int a = sim->sv.row_start[n]; a < sim->sv.row_start[n + 1]; a++)
        v += mi[sim->sv.gs_dof[a]] * sim->sv.gs_val[a];
      bi[n] = v;
    }
  }
  return DG_OK;
}

/* ------------------------------------------------------------------------ */
/* Losses: each lossy mesh loses (1 − η) of the power it transmits          */

/* A lossy tie that the elimination found redundant carries no determined
 * force: rigid shafts cannot say which of two parallel paths carries the
 * torque, so neither can they say what it loses. Refused, unless its mesh
 * does not move in this mode (a planetary turning as one block: no
 * meshing power, no loss whatever it carries). */
static void check_lossy_ties(dg_sim *sim) {
  dg_topo_ws *ws = &sim->sv.ws;
  size_t st = (size_t)sim->nn;
  for (int t = 0; t < ws->nties && !ws->error; t++) {
    const dg_tie *tie = &ws->ties[t];
    if (tie->mesh < 0 || tie->active >= 0)
      continue;
    double moves = 0.0, scale = 0.0;
    for (int d = 0; d < sim->sv.ndof; d++) {
      double v = 0.0;
      for (int i = tie->first; i < tie->first + tie->n; i++) {
        double g = sim->sv.G[(size_t)ws->tie_node[i] * st + (size_t)d];
        v += ws->tie_acoef[i] * g;
        scale = fmax(scale, fabs(ws->tie_coef[i] * g));
      }
      moves = fmax(moves, fabs(v));
    }
    if (moves > PIVOT_EPS * scale)
      topo_error(sim, tie->block, DG_ERR_OVERCONSTRAINED,
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

/* out = Gᵀ v for a node vector v (ndof), over G's non-zeros. */
static void g_transpose(const dg_sim *sim, const double *v, double *out) {
  for (int d = 0; d < sim->sv.ndof; d++)
    out[d] = 0.0;
  for (int a = 0; a < sim->sv.nnz; a++)
    out[sim->sv.gs_dof[a]] += sim->sv.gs_val[a] * v[sim->sv.gs_node[a]];
}

/* The maps of the lossy meshes for the current rows (docs/solver.md,
 * "Losses"). The constraints of the mode over nodes are the columns of A:
 * each recorded link (e_dst − Σ c e_src) and each active tie. G spans the
 * speeds A allows, so the residual r = I ẍ − w − L of any motion obeying
 * the equations lies in range(A) and the multipliers are λ = (AᵀA)⁻¹Aᵀ r:
 * mesh j's is u_j·r with u_j = A (AᵀA)⁻¹ e_j. */
static int build_mesh_maps(dg_sim *sim) {
  dg_solver *sv = &sim->sv;
  dg_topo_ws *ws = &sv->ws;
  size_t st = (size_t)sim->nn;
  int nn = sim->nn, nd = sv->ndof, m = ws->nmesh;
  if (m == 0)
    return DG_OK;
  if (!ws->links_complete) {
    topo_error(sim, sim->g->order[0], DG_ERR_BLOCK, "too many links in one mode (limit %d)",
               ws->max_links);
    return ws->error;
  }
  int K = ws->nlinks + ws->nactive;
  for (int c = 0; c < K; c++)
    memset(sv->loss.cA + (size_t)c * st, 0, sizeof(double) * st);
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
  if (cholesky(sv->loss.cAtA, sv->loss.cAtA, K, st) != 0) {
    topo_error(sim, sim->g->order[0], DG_ERR_OVERCONSTRAINED,
               "constraints are numerically dependent");
    return ws->error;
  }
  double *a = sv->scratch, *z = sv->loss.z, *tmp = sv->f;
  for (int j = 0; j < m; j++) {
    double *rows[] = {sv->loss.u, sv->loss.b, sv->loss.h, sv->loss.d, sv->loss.ga, sv->loss.gb};
    int t = ws->mesh_tie[j];
    if (t >= 0 && ws->ties[t].active < 0) { /* redundant and idle (check_lossy_ties) */
      for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++)
        memset(rows[r] + (size_t)j * st, 0, sizeof(double) * st);
      continue;
    }
    int col = ws->mesh_link[j] >= 0 ? ws->mesh_link[j] : ws->nlinks + ws->ties[t].active;
    for (int c = 0; c < K; c++)
      z[c] = c == col ? 1.0 : 0.0;
    cholesky_solve(sv->loss.cAtA, K, st, z);
    double *u = sv->loss.u + (size_t)j * st, *b = sv->loss.b + (size_t)j * st;
    memset(u, 0, sizeof(double) * st);
    for (int c = 0; c < K; c++) {
      const double *ac = sv->loss.cA + (size_t)c * st;
      for (int n = 0; n < nn; n++)
        u[n] += z[c] * ac[n];
    }
    mesh_sides(sim, j, a, b);
    g_transpose(sim, a, sv->loss.ga + (size_t)j * st);
    g_transpose(sim, b, sv->loss.gb + (size_t)j * st);
    double *d = sv->loss.d + (size_t)j * st;
    memcpy(d, sv->loss.gb + (size_t)j * st, sizeof(double) * (size_t)nd);
    cholesky_solve(sv->L, nd, st, d);
    for (int n = 0; n < nn; n++)
      tmp[n] = sv->inertia[n] * u[n];
    g_transpose(sim, tmp, sv->loss.h + (size_t)j * st);
  }
  for (int j = 0; j < m; j++) { /* the stage's sparse copies */
    const double *u = sv->loss.u + (size_t)j * st, *b = sv->loss.b + (size_t)j * st;
    int nu = 0, nb = 0;
    for (int n = 0; n < nn; n++) {
      if (u[n] != 0.0) {
        sv->loss.un[(size_t)j * st + (size_t)nu] = n;
        sv->loss.uv[(size_t)j * st + (size_t)nu++] = u[n];
      }
      if (b[n] != 0.0) {
        sv->loss.bn[(size_t)j * st + (size_t)nb] = n;
        sv->loss.bv[(size_t)j * st + (size_t)nb++] = b[n];
      }
    }
    sv->loss.nu[j] = nu;
    sv->loss.nb[j] = nb;
    sv->loss.kf[j] = 1.0 / ws->mesh_eta[j] - 1.0;
    sv->loss.kb[j] = ws->mesh_eta[j] - 1.0;
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

/* Solves S x = rhs (m × m, stride st) in place by Gaussian elimination with
 * partial pivoting; -1 when singular. */
static int solve_dense(double *S, double *x, int m, size_t st) {
  for (int c = 0; c < m; c++) {
    int p = c;
    for (int r = c + 1; r < m; r++)
      if (fabs(S[(size_t)r * st + (size_t)c]) > fabs(S[(size_t)p * st + (size_t)c]))
        p = r;
    if (!(fabs(S[(size_t)p * st + (size_t)c]) > 1e-300))
      return -1;
    if (p != c) {
      for (int k = 0; k < m; k++) {
        double tmp = S[(size_t)c * st + (size_t)k];
        S[(size_t)c * st + (size_t)k] = S[(size_t)p * st + (size_t)k];
        S[(size_t)p * st + (size_t)k] = tmp;
      }
      double tmp = x[c];
      x[c] = x[p];
      x[p] = tmp;
    }
    for (int r = c + 1; r < m; r++) {
      double f = S[(size_t)r * st + (size_t)c] / S[(size_t)c * st + (size_t)c];
      if (f == 0.0)
        continue;
      for (int k = c; k < m; k++)
        S[(size_t)r * st + (size_t)k] -= f * S[(size_t)c * st + (size_t)k];
      x[r] -= f * x[c];
    }
  }
  for (int c = m - 1; c >= 0; c--) {
    double v = x[c];
    for (int k = c + 1; k < m; k++)
      v -= S[(size_t)c * st + (size_t)k] * x[k];
    x[c] = v / S[(size_t)c * st + (size_t)c];
  }
  return 0;
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
  return solve_dense(sv->loss.S, lam, m, st);
}

static double dot(const double *a, const double *b, int n) {
  double v = 0.0;
  for (int i = 0; i < n; i++)
    v += a[i] * b[i];
  return v;
}

/* The ACCEL stage's losses, after the lossless q̇₀ = M⁻¹Gᵀw is in dq: the
 * multipliers of the lossy meshes with their loss torques κ_j λ_j b_j
 * included, (1 − W K) λ = λ₀, for the directions of power flow that the
 * solution itself gives (κ_j = 1/η − 1 when side b drives, η − 1 when side
 * a drives, 0 when no power flows or is about to; the directions of the
 * last solve are the first guess). Then q̇ += Σ κ_j λ_j d_j and w += the
 * loss torques. Returns the loss power (≤ 0). */
static double mesh_losses(dg_sim *sim, const double *q, double *dq, double *w) {
  dg_solver *sv = &sim->sv;
  size_t st = (size_t)sim->nn;
  int nd = sv->ndof, m = sv->ws.nmesh;
  double *lam0 = sv->loss.lam0, *lam = sv->loss.lam, *kap = sv->loss.kap;
  int *dir = sv->loss.dir;
  for (int j = 0; j < m; j++) {
    const int *un = sv->loss.un + (size_t)j * st;
    const double *uv = sv->loss.uv + (size_t)j * st;
    double v = dot(sv->loss.h + (size_t)j * st, dq, nd);
    for (int k = 0; k < sv->loss.nu[j]; k++)
      v -= uv[k] * w[un[k]];
    lam0[j] = v;
  }
  /* inside a segment the directions of its first stage hold (one solve);
   * a reversal is an event (event_values) */
  int iterations = sv->loss.hold ? 1 : 2 * m + 3;
  for (int it = 0; it < iterations; it++) {
    for (int j = 0; j < m; j++)
      kap[j] = dir[j] > 0 ? sv->loss.kf[j] : dir[j] < 0 ? sv->loss.kb[j] : 0.0;
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
      const double *ga = sv->loss.ga + (size_t)j * st;
      double v = dot(ga, q, nd);
      if (v == 0.0) { /* at rest: the power about to flow */
        v = dot(ga, dq, nd);
        for (int i = 0; i < m; i++)
          v += kap[i] * lam[i] * dot(ga, sv->loss.d + (size_t)i * st, nd);
      }
      double p = lam[j] * v;
      int nd_dir = p > 0.0 ? 1 : p < 0.0 ? -1 : (lam[j] == 0.0 ? dir[j] : 0);
      if (nd_dir != dir[j]) {
        dir[j] = nd_dir;
        same = false;
      }
    }
    if (same)
      break;
  }
  double p_loss = 0.0;
  for (int j = 0; j < m; j++) {
    sv->loss.p[j] = lam[j] * dot(sv->loss.ga + (size_t)j * st, q, nd);
    double f = kap[j] * lam[j];
    if (f == 0.0)
      continue;
    const double *d = sv->loss.d + (size_t)j * st;
    const int *bn = sv->loss.bn + (size_t)j * st;
    const double *bv = sv->loss.bv + (size_t)j * st;
    for (int i = 0; i < nd; i++)
      dq[i] += f * d[i];
    for (int k = 0; k < sv->loss.nb[j]; k++)
      w[bn[k]] += f * bv[k];
    p_loss += f * dot(sv->loss.gb + (size_t)j * st, q, nd);
  }
  return p_loss;
}

int dg_solver_build(dg_sim *sim) {
  dg_topo_ws *ws = &sim->sv.ws;
  size_t st = (size_t)sim->nn;
  ws->error = 0;
  ws->errmsg[0] = '\0';
  ws->errblock = -1;
  ws->nraw = ws->nties = ws->nterms = 0;
  ws->nlinks = 0;
  sim->sv.kin.refreshable = sim->sv.variable_kinematics;
  memset(ws->has_row, 0, st);
  memset(ws->row_dirty, 0, st);
  memset(sim->sv.inertia, 0, sizeof(double) * st);
  ws->nmesh = 0;
  ws->links_complete = true;
  sim->sv.topo.sim = sim;
  const dg_graph *g = sim->g;
  for (int i = 0; i < sim->nb && !ws->error; i++) {
    dg_block *b = &sim->blocks[g->order[i]];
    if (b->klass->state_upstream) {
      b->klass->state_upstream(b, &sim->sv.topo);
      continue;
    }
    int np = g->blocks[b->index].num_ports;
    for (int p = 0; p < np; p++)
      if (b->klass->ports[p].dir != DG_PORT_OUT)
        ensure_row(sim, b->node[p], b->index);
  }
  for (int n = 0; n < sim->nn; n++) {
    ensure_row(sim, n, g->nodes[n].block[0]);
  }
  if (ws->error)
    return ws->error;
  int nred = eliminate_ties(sim);
  if (ws->error)
    return ws->error;
  sim->sv.ndof = nred;
  /* G = R T and its non-zeros by node */
  sim->sv.nnz = 0;
  for (int n = 0; n < sim->nn; n++) {
    double *gr = sim->sv.G + (size_t)n * st;
    reduced_row(sim, n, nred, gr);
    for (int j = 0; j < nred; j++) {
      if (fabs(gr[j]) < 1e-15)
        gr[j] = 0.0; /* exact zeros keep the sparsity of eliminated rows */
    }
  }
  if (sim->sv.variable_kinematics) /* Ġ = Ṙ T (ties are constant) */
    for (int n = 0; n < sim->nn; n++) {
      double *gd = sim->sv.kin.Gd + (size_t)n * st;
      const double *rd = ws->Rd + (size_t)n * st;
      for (int j = 0; j < nred; j++) {
        double v = 0.0;
        for (int k = 0; k < ws->nraw; k++)
          v += rd[k] * ws->T[(size_t)k * st + (size_t)j];
        gd[j] = v;
      }
    }
  build_multiplier_map(sim);
  check_lossy_ties(sim);
  for (int n = 0; n < sim->nn; n++) {
    const double *gr = sim->sv.G + (size_t)n * st;
    sim->sv.row_start[n] = sim->sv.nnz;
    for (int j = 0; j < nred; j++)
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
  build_speed_plan(sim);
  int rc = assemble_mass(sim, false);
  if (rc != DG_OK || sim->in_check) /* the every-mode check steps no mode */
    return rc;
  return build_mesh_maps(sim);
}

/* ------------------------------------------------------------------------ */
/* Variable kinematics: a refresh of the rows that change                   */

/* Every substep of a mode with a variable-ratio block (a CVT): instead of
 * building the topology again, ask the variable blocks for their new
 * coefficients (their state_upstream in refresh mode: dg_topo_link_rate
 * records the values, the other dg_topo_* calls do nothing), recompute the
 * node rows that depend on them from the recorded links (R and Ṙ), then
 * those rows of G = R T and Ġ = Ṙ T, and M with its factor. The ties and
 * the elimination T do not change: a mode whose ties reach a changing row
 * is not refreshable and builds in full. Returns DG_OK, or -1 when the
 * refresh cannot be made (the structure differs: build in full). */
static int refresh_rows(dg_sim *sim) {
  dg_topo_ws *ws = &sim->sv.ws;
  size_t st = (size_t)sim->nn;
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
    double *r = row_of(sim, dst), *rd = ws->Rd + (size_t)dst * st;
    for (int j = 0; j < nraw; j++)
      r[j] = rd[j] = 0.0;
    for (int i = ws->link_first[k], e = i + ws->link_n[k]; i < e; i++) {
      const double *sr = row_of(sim, ws->link_src[i]);
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
    double *gr = sim->sv.G + (size_t)n * st, *gd = sim->sv.kin.Gd + (size_t)n * st;
    reduced_row(sim, n, nred, gr);
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
  build_speed_plan(sim);
  if (assemble_mass(sim, true) != DG_OK)
    return -1;
  return build_mesh_maps(sim) == DG_OK ? DG_OK : -1;
}

/* The kinematics at the point a substep evaluates (variable kinematics). */
static int solver_kinematics(dg_sim *sim) {
  if (sim->sv.kin.refreshable && !sim->no_refresh && refresh_rows(sim) == DG_OK) {
    sim->refreshes++;
    return DG_OK;
  }
  return dg_solver_build(sim);
}

/* The SPEEDS stage's plan: G's rows of one non-zero (most shafts: a gear's
 * output, a wheel's hub) as a flat list, the others (differential inputs,
 * rows without motion) by node over the non-zeros. */
static void build_speed_plan(dg_sim *sim) {
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
}

void dg_solver_speeds(const dg_sim *sim, const double *q, double *x) {
  const int *sn = sim->sv.single_node, *sd = sim->sv.single_dof;
  const double *sv = sim->sv.single_val;
  for (int k = 0; k < sim->sv.n_single; k++)
    x[sn[k]] = sv[k] * q[sd[k]];
  const int *pn = sim->sv.pair_node, *pd = sim->sv.pair_dof;
  const double *pv = sim->sv.pair_val;
  for (int k = 0; k < sim->sv.n_pair; k++)
    x[pn[k]] = pv[2 * k] * q[pd[2 * k]] + pv[2 * k + 1] * q[pd[2 * k + 1]];
  const int *start = sim->sv.row_start, *dof = sim->sv.gs_dof;
  const double *val = sim->sv.gs_val;
  for (int k = 0; k < sim->sv.n_multi; k++) {
    int n = sim->sv.multi_node[k];
    double v = 0.0;
    for (int a = start[n]; a < start[n + 1]; a++)
      v += val[a] * q[dof[a]];
    x[n] = v;
  }
}

/* Projection: q = M⁻¹ Gᵀ diag(I) x. */
static void project(dg_sim *sim, const double *x, double *q) {
  for (int j = 0; j < sim->sv.ndof; j++)
    q[j] = 0.0;
  for (int a = 0; a < sim->sv.nnz; a++) {
    int n = sim->sv.gs_node[a];
    q[sim->sv.gs_dof[a]] += sim->sv.gs_val[a] * sim->sv.inertia[n] * x[n];
  }
  cholesky_solve(sim->sv.L, sim->sv.ndof, (size_t)sim->nn, q);
}

/* The point the next tie-force query refers to: (t, y), or the committed
 * state when y is NULL; computed when first asked for. */
static void lambda_at(dg_sim *sim, double t, const double *y) {
  sim->sv.lam.t = t;
  sim->sv.lam.y = y;
  sim->sv.lam.valid = false;
}

static void fail_topology(dg_sim *sim, int rc) {
  const dg_topo_ws *ws = &sim->sv.ws;
  char path[DG_ERROR_PATH_LEN] = "";
  if (ws->errblock >= 0)
    dg_pointer_append(path, sizeof path, "/blocks", sim->g->blocks[ws->errblock].id);
  dg_error_set(&sim->err, rc, sim->g->file, path, "at t = %.6g s: %s", sim->t, ws->errmsg);
  sim->failed = true;
}

int dg_solver_change_topology(dg_sim *sim) {
  double ke_before = dg_sim_kinetic_energy(sim);
  /* The build leaves sim->sv.x (the committed speeds) alone, while it uses the
   * scratch arrays: project from x itself. */
  int rc = dg_solver_build(sim);
  if (rc != DG_OK) {
    fail_topology(sim, rc);
    return rc;
  }
  project(sim, sim->sv.x, sim->sv.q);
  dg_solver_speeds(sim, sim->sv.q, sim->sv.x);
  sim->sv.audit.impact_loss += dg_sim_kinetic_energy(sim) - ke_before;
  sim->topo_changes++;
  lambda_at(sim, sim->t, NULL);
  return DG_OK;
}

/* ------------------------------------------------------------------------ */
/* RK4                                                                      */

/* ẏ at (t, y): y = [q; s]. Leaves node torques in tau and w. */
/* One RK4 stage: ẏ at (t, y), y = [q; s], in three stages over the plan.
 * SPEEDS: x = G q. FORCES: the torque hooks add node torques and write the
 * states' rates (their powers booked for the energy audit), then the
 * efficiency factors. ACCEL: q̇ = M⁻¹ Gᵀ w, and the tie forces when wanted.
 * With a variable ratio the plan's rows are refreshed first. */
static void derivative(dg_sim *sim, double t, const double *y, double *dy) {
  int nd = sim->sv.ndof;
  const double *s = y + nd;
  if (sim->sv.variable_kinematics) {
    sim->sv.topo_state = s;
    int rc = solver_kinematics(sim);
    sim->sv.topo_state = sim->sv.s;
    if (rc != DG_OK && !sim->failed)
      fail_topology(sim, rc);
  }
  /* SPEEDS */
  double *x = sim->sv.xw, *tau = sim->sv.tau, *w = tau; /* w: tau after efficiency, in place */
  dg_solver_speeds(sim, y, x);
  /* FORCES */
  memset(tau, 0, sizeof(double) * (size_t)sim->nn);
  dg_ctx *ctx = &sim->ctx;
  ctx->t = t;
  ctx->speed = x;
  ctx->torque = tau;
  ctx->state = s;
  ctx->state_rate = dy + nd;
  ctx->state_commit = NULL;
  dg_bind_eval(sim); /* inputs bound to signals, at this point */
  if (sim->ns > 0)
    memset(dy + nd, 0, sizeof(double) * (size_t)sim->ns);
  double *de = sim->sv.audit.pcur; /* energy audit: each torque hook's power */
  for (int i = 0; i < sim->n_torque; i++) {
    ctx->power = 0.0;
    sim->torque[i].fn(sim->torque[i].b, ctx);
    de[i] = ctx->power;
  }
  if (sim->sv.variable_kinematics) {
    /* Kane / d'Alembert with x = G(t) q: the nodes also accelerate by Ġ q,
     * whose inertial force −I Ġ q joins the applied torques. It keeps
     * d(KE)/dt equal to the applied power when a ratio changes. */
    for (int n = 0; n < sim->nn; n++) {
      if (sim->sv.inertia[n] == 0.0 || !sim->sv.ws.row_dirty[n]) /* Ġ is zero elsewhere */
        continue;
      const double *gd = sim->sv.kin.Gd + (size_t)n * (size_t)sim->nn;
      double bias = 0.0;
      for (int j = 0; j < nd; j++)
        bias += gd[j] * y[j];
      w[n] -= sim->sv.inertia[n] * bias;
    }
  }
  /* ACCEL */
  if (!sim->sv.use_B) { /* f = Gᵀ w, then M⁻¹ f (or the factor of this substep's M) */
    double *f = sim->sv.f;
    g_transpose(sim, w, f);
    if (sim->sv.variable_kinematics) {
      memcpy(dy, f, sizeof(double) * (size_t)nd);
      cholesky_solve(sim->sv.L, nd, (size_t)sim->nn, dy);
    } else {
      for (int i = 0; i < nd; i++) {
        const double *mi = sim->sv.Minv + (size_t)i * (size_t)sim->nn;
        double v = 0.0;
        for (int j = 0; j < nd; j++)
          v += mi[j] * f[j];
        dy[i] = v;
      }
    }
  } else { /* q̇ = B w, B = M⁻¹ Gᵀ of the mode */
    int nn = sim->nn;
    for (int i = 0; i < nd; i++) {
      const double *bi = sim->sv.B + (size_t)i * (size_t)nn;
      double v = 0.0;
      for (int n = 0; n < nn; n++)
        v += bi[n] * w[n];
      dy[i] = v;
    }
  }
  /* the lossy meshes' loss torques, with the accelerations they change */
  de[sim->n_torque] = sim->sv.ws.nmesh > 0 ? mesh_losses(sim, y, dy, w) : 0.0;
  ctx->state_rate = NULL;
  if (sim->sv.lam.want) {
    if (sim->sv.kin.lam_stale)
      refresh_lambda_map(sim);
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
    sim->sv.lam.valid = true;
  }
}

void dg_solver_rhs(dg_sim *sim, double t, const double *y, double *dy) {
  bool want = sim->sv.lam.want;
  sim->sv.lam.want = false;
  derivative(sim, t, y, dy);
  sim->sv.lam.want = want;
}

/* y = [q; s] */
static void gather_state(dg_sim *sim, double *y) {
  memcpy(y, sim->sv.q, sizeof(double) * (size_t)sim->sv.ndof);
  if (sim->ns > 0)
    memcpy(y + sim->sv.ndof, sim->sv.s, sizeof(double) * (size_t)sim->ns);
}

/* The block and port behind a non-finite or runaway value, for the error. */
static bool check_finite(dg_sim *sim, const double *y) {
  int nd = sim->sv.ndof;
  for (int j = 0; j < nd; j++) {
    if (isfinite(y[j]) && fabs(y[j]) < SPEED_LIMIT)
      continue;
    int raw = sim->sv.ws.col_raw[j];
    int node = sim->sv.ws.raw_node[raw], owner = sim->sv.ws.raw_owner[raw];
    char lab[128], path[DG_ERROR_PATH_LEN];
    node_label(sim, node, lab, sizeof lab);
    dg_pointer_append(path, sizeof path, "/blocks", sim->g->blocks[owner].id);
    dg_error_set(&sim->err, DG_ERR_NUMERIC, sim->g->file, path,
                 "simulation diverged at t = %.6g s: speed of %s became %g (block \"%s\"); "
                 "reduce dt or check the parameters",
                 sim->t, lab, y[j], sim->g->blocks[owner].id);
    sim->failed = true;
    return false;
  }
  for (int i = 0; i < sim->n_state_blocks; i++) {
    const dg_block *b = &sim->blocks[sim->state_blocks[i]];
    int off = b->state;
    for (int k = 0; k < b->klass->num_states; k++) {
      double v = y[nd + off + k];
      if (isfinite(v))
        continue;
      char path[DG_ERROR_PATH_LEN];
      dg_pointer_append(path, sizeof path, "/blocks", b->id);
      dg_error_set(&sim->err, DG_ERR_NUMERIC, sim->g->file, path,
                   "simulation diverged at t = %.6g s: internal state %d of block \"%s\" (%s) "
                   "became %g; reduce dt or check the parameters",
                   sim->t, k, b->id, b->klass->type, v);
      sim->failed = true;
      return false;
    }
  }
  return true;
}

/* pre_step / post_step: the committed state, readable and writable */
static void run_hooks(dg_sim *sim, const dg_hook_entry *list, int n) {
  sim->ctx.state = sim->sv.s;
  sim->ctx.state_commit = sim->sv.s;
  sim->ctx.state_rate = NULL;
  dg_bind_eval(sim);
  for (int i = 0; i < n && !sim->failed; i++)
    list[i].fn(list[i].b, &sim->ctx);
  sim->ctx.state_commit = NULL;
}

/* ------------------------------------------------------------------------ */
/* Inputs inside the step                                                   */

/* Breakpoints and segment ends closer than this are the same time: a step
 * time accumulated over many steps differs from a breakpoint written in a
 * file by round-off (~1e-13 s after 10⁴ steps), never by a billionth of a
 * step. */
static double time_tol(double t, double h) { return 1e-9 * h + 8.0 * DBL_EPSILON * fabs(t); }

/* Value of a schedule on piece k at t: linear on [t_k, t_k+1], held outside. */
static double piece_value(const dg_timed_input *ti, int k, double t) {
  if (k < 0)
    return ti->v[0];
  if (k >= ti->n - 1 || ti->stepped)
    return ti->v[k];
  double t0 = ti->t[k], t1 = ti->t[k + 1];
  return ti->v[k] + (ti->v[k + 1] - ti->v[k]) * ((t - t0) / (t1 - t0));
}

static bool input_finite(dg_sim *sim, const dg_timed_input *ti, double v, double t) {
  if (isfinite(v))
    return true;
  if (!sim->failed)
    dg_sim_fail(sim, DG_ERR_NUMERIC, "at t = %.6g s: input \"%s\" became %g (its callback must "
                "return finite values)", t, sim->input_names[ti->input], v);
  sim->input[ti->input] = 0.0;
  return false;
}

void dg_solver_inputs_start(dg_sim *sim, double t) {
  double tol = time_tol(t, sim->ctx.dt > 0.0 ? sim->ctx.dt : 1e-3);
  for (int i = 0; i < sim->n_timed; i++) {
    dg_timed_input *ti = &sim->timed[i];
    if (ti->fn) {
      double v = ti->fn(t, ti->user);
      if (input_finite(sim, ti, v, t))
        sim->input[ti->input] = v;
      continue;
    }
    /* the last breakpoint at or before t (right-continuous: at a jump the
     * later value), moving from where the previous segment left it */
    int k = ti->piece;
    while (k + 1 < ti->n && ti->t[k + 1] <= t + tol)
      k++;
    while (k >= 0 && ti->t[k] > t + tol)
      k--;
    ti->piece = k;
    sim->input[ti->input] = piece_value(ti, k, t);
  }
}

/* Continuous inputs at a time inside the current segment: each schedule
 * follows the piece the segment started on, so a segment that ends at a
 * breakpoint sees the value from the left there. */
static void inputs_at(dg_sim *sim, double t) {
  for (int i = 0; i < sim->n_timed; i++) {
    const dg_timed_input *ti = &sim->timed[i];
    if (ti->stepped)
      continue;
    double v = ti->fn ? ti->fn(t, ti->user) : piece_value(ti, ti->piece, t);
    if (input_finite(sim, ti, v, t))
      sim->input[ti->input] = v;
  }
}

/* The end of a segment starting at ta: t_end, or the first breakpoint of a
 * continuous schedule inside (ta, t_end). */
static double next_break(const dg_sim *sim, double ta, double t_end, double tol) {
  double tb = t_end;
  for (int i = 0; i < sim->n_timed; i++) {
    const dg_timed_input *ti = &sim->timed[i];
    if (ti->fn || ti->stepped || ti->piece + 1 >= ti->n)
      continue;
    double tk = ti->t[ti->piece + 1];
    if (tk > ta + tol && tk < tb - tol)
      tb = tk;
  }
  return tb;
}

/* ------------------------------------------------------------------------ */
/* The step: EVENTS_PRE → PREPARE → 4 × {SPEEDS → FORCES → ACCEL} →         */
/* COMBINE → COMMIT → EVENTS_POST, in segments ended by input breakpoints   */
/* and located events                                                       */

/* A step is cut into at most this many segments; past it, decisions are
 * taken at segment ends only (a block chattering between modes). */
#define MAX_SEGMENTS 32
/* An event is located to this fraction of the segment (and 1e-14 s). */
#define EVENT_TOL 1e-10


/* Event functions of every block at the context's point; returns how many
 * blocks have a condition that applies. */
/* Below this power (W) a mesh's reversal is not located: a mesh carrying
 * round-off would end a segment at every step. */
#define MESH_WATCH_POWER 1e-9

/* Event functions in all: the blocks', then one per lossy mesh. */
static int event_count(const dg_sim *sim) { return sim->n_events + sim->sv.ws.nmesh; }

/* At a segment's first stage: the meshes whose power reversal the segment
 * locates (those carrying power; their direction is held over it). */
static void mesh_watch_start(dg_sim *sim) {
  for (int j = 0; j < sim->sv.ws.nmesh; j++)
    sim->sv.loss.watch[j] =
        sim->sv.loss.dir[j] != 0 && fabs(sim->sv.loss.p[j]) > MESH_WATCH_POWER;
}

/* The event functions: the blocks' (event_values hooks) at the context's
 * point, then each watched mesh's power `p` in its held direction, d·P (it
 * reverses where it reaches 0), 1 for the others. The powers are those of
 * the derivative evaluated at that point (the first stage, a point on the
 * dense output) — at a segment's end, those of its fourth stage (y0 + h k3,
 * O(h²) from the end): the reversal is then located with evaluations on
 * the dense output, and one missed within O(h²) of the end costs O(h⁴),
 * without a fifth evaluation in every segment. */
static int event_values(dg_sim *sim, double *g, const double *p) {
  int active = 0;
  for (int i = 0; i < sim->n_evb; i++) {
    const dg_block *b = sim->evb[i].b;
    active += b->klass->event_values(b, &sim->ctx, g + sim->ev_off[i]) != 0;
  }
  for (int j = 0; j < sim->sv.ws.nmesh; j++) {
    bool on = sim->sv.loss.watch[j];
    g[sim->n_events + j] = on ? sim->sv.loss.dir[j] * p[j] : 1.0;
    active += on;
  }
  return active;
}

/* RK4 stages 2-4 and the combination from y0 and k1 over h; the result is
 * left in yt. */
static void rk4_stages(dg_sim *sim, double t, double h, int ny) {
  const double *y0 = sim->sv.rk.y0, *k1 = sim->sv.rk.k1;
  double *yt = sim->sv.rk.yt, *k2 = sim->sv.rk.k2, *k3 = sim->sv.rk.k3, *k4 = sim->sv.rk.k4;
  int ne = sim->sv.audit.ne;
  for (int i = 0; i < ny; i++)
    yt[i] = y0[i] + 0.5 * h * k1[i];
  inputs_at(sim, t + 0.5 * h);
  sim->sv.audit.pcur = sim->sv.audit.pw + ne;
  derivative(sim, t + 0.5 * h, yt, k2);
  for (int i = 0; i < ny; i++)
    yt[i] = y0[i] + 0.5 * h * k2[i];
  sim->sv.audit.pcur = sim->sv.audit.pw + 2 * ne;
  derivative(sim, t + 0.5 * h, yt, k3);
  for (int i = 0; i < ny; i++)
    yt[i] = y0[i] + h * k3[i];
  inputs_at(sim, t + h);
  sim->sv.audit.pcur = sim->sv.audit.pw + 3 * ne;
  derivative(sim, t + h, yt, k4);
  memcpy(sim->sv.loss.p4, sim->sv.loss.p, sizeof(double) * (size_t)sim->sv.ws.nmesh);
  sim->sv.audit.pcur = sim->sv.audit.pw + 4 * ne; /* other evaluations book nothing */
  for (int i = 0; i < ny; i++)
    yt[i] = y0[i] + h / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]);
}

/* The state at t + θh on RK4's continuous extension (third order, exact at
 * θ = 0 and 1), into ydense. */
static void dense_state(dg_sim *sim, double theta, double h, int ny) {
  double t2 = theta * theta, t3 = t2 * theta;
  double b1 = theta - 1.5 * t2 + 2.0 / 3.0 * t3, b23 = t2 - 2.0 / 3.0 * t3,
         b4 = -0.5 * t2 + 2.0 / 3.0 * t3;
  for (int i = 0; i < ny; i++)
    sim->sv.rk.ydense[i] = sim->sv.rk.y0[i] + h * (b1 * sim->sv.rk.k1[i] + b23 * (sim->sv.rk.k2[i] + sim->sv.rk.k3[i]) +
                                       b4 * sim->sv.rk.k4[i]);
}

/* Event functions at t + θh on the dense output (a full right-hand side
 * there, so speeds, states, inputs and tie forces are those of that time). */
static void events_at(dg_sim *sim, double t, double theta, double h, int ny) {
  dense_state(sim, theta, h, ny);
  inputs_at(sim, t + theta * h);
  sim->sv.lam.want = sim->sv.ws.nactive > 0;
  derivative(sim, t + theta * h, sim->sv.rk.ydense, sim->sv.rk.ysave);
  sim->sv.lam.want = false;
  sim->sv.lam.t = t + theta * h; /* the tie forces are this point's */
  sim->sv.lam.y = sim->sv.rk.ydense;
  sim->ctx.t = t + theta * h;
  event_values(sim, sim->sv.ev.gt, sim->sv.loss.p);
}

/* Finds the first θ in (0, 1] where an event function that is > 0 at θ = 0
 * (g0) is <= 0 (it is at θ = 1: g1). Regula falsi on the earliest crossing
 * with bisection when a side stalls; returns the right end of the final
 * bracket, where the crossing has happened. */
static double locate_event(dg_sim *sim, double t, double h, int ny) {
  int ne = event_count(sim);
  double lo = 0.0, hi = 1.0;
  double *ghi = sim->sv.ev.g1;
  double tol = fmax(EVENT_TOL, 1e-14 / h);
  int stall = 0, last = 0;
  /* g at the bracket's ends: at lo in g0, at hi in g1 */
  for (int it = 0; it < 100 && hi - lo > tol && !sim->failed; it++) {
    /* the earliest secant root among the functions that have crossed at hi */
    double est = hi;
    for (int i = 0; i < ne; i++) {
      if (!(sim->sv.ev.g0[i] > 0.0) || ghi[i] > 0.0)
        continue;
      double r = lo + (hi - lo) * sim->sv.ev.g0[i] / (sim->sv.ev.g0[i] - ghi[i]);
      if (r < est)
        est = r;
    }
    double w = hi - lo;
    if (stall >= 2 || !(est > lo + 1e-3 * w && est < hi - 1e-3 * w))
      est = lo + 0.5 * w;
    events_at(sim, t, est, h, ny);
    bool crossed = false;
    for (int i = 0; i < ne && !crossed; i++)
      crossed = sim->sv.ev.g0[i] > 0.0 && sim->sv.ev.gt[i] <= 0.0;
    int side = crossed ? 1 : -1;
    stall = side == last ? stall + 1 : 0;
    last = side;
    if (crossed) {
      hi = est;
      memcpy(ghi, sim->sv.ev.gt, sizeof(double) * (size_t)ne);
    } else {
      lo = est;
      memcpy(sim->sv.ev.g0, sim->sv.ev.gt, sizeof(double) * (size_t)ne);
    }
  }
  return hi;
}

/* Integrates one segment from sim->t towards t_end (a breakpoint or the
 * step's end, or earlier at an event) and commits it. */
static int step_segment(dg_sim *sim, double t_end, int segs_left) {
  dg_ctx *ctx = &sim->ctx;
  double t = sim->t;
  /* EVENTS_PRE: inputs at the segment start, discrete decisions, mode */
  dg_solver_inputs_start(sim, t);
  double tol = time_tol(t, t_end - t);
  double tb = segs_left > 1 ? next_break(sim, t, t_end, tol) : t_end;
  double h = tb - t;
  ctx->dt = h;
  ctx->t = t;
  ctx->speed = sim->sv.x;
  ctx->torque = sim->sv.tau;
  sim->topo_request = false;
  run_hooks(sim, sim->pre, sim->n_pre);
  if (!sim->failed && sim->topo_request)
    dg_solver_change_topology(sim);
  if (sim->failed)
    return sim->err.code;

  /* PREPARE, then the first stage (with tie forces when events need them) */
  int nd = sim->sv.ndof, ny = sim->sv.ndof + sim->ns;
  bool events = event_count(sim) > 0 && segs_left > 1;
  gather_state(sim, sim->sv.rk.y0);
  sim->sv.lam.want = events && sim->sv.ws.nactive > 0;
  sim->sv.audit.pcur = sim->sv.audit.pw; /* stage 1's powers */
  derivative(sim, t, sim->sv.rk.y0, sim->sv.rk.k1); /* the meshes take their directions */
  sim->sv.audit.pcur = sim->sv.audit.pw + 4 * sim->sv.audit.ne;
  sim->sv.lam.want = false;
  sim->sv.loss.hold = true; /* ... and keep them to the segment's end */
  for (int j = 0; j < sim->sv.ws.nmesh; j++)
    sim->sv.loss.watch[j] = 0;
  if (events) {
    ctx->t = t;
    mesh_watch_start(sim);
    events = event_values(sim, sim->sv.ev.g0, sim->sv.loss.p) > 0; /* none: nothing to locate */
  }
  rk4_stages(sim, t, h, ny);
  if (sim->failed) {
    sim->sv.loss.hold = false;
    return sim->err.code;
  }

  /* EVENTS: a switching condition crossed inside the segment ends it there */
  if (events) {
    dg_solver_speeds(sim, sim->sv.rk.yt, sim->sv.xw);
    ctx->t = tb;
    ctx->speed = sim->sv.xw;
    ctx->state = sim->sv.rk.yt + nd;
    lambda_at(sim, tb, sim->sv.rk.yt);
    dg_bind_eval(sim);
    event_values(sim, sim->sv.ev.g1, sim->sv.loss.p4);
    bool crossed = false;
    for (int i = 0; i < event_count(sim) && !crossed; i++)
      crossed = sim->sv.ev.g0[i] > 0.0 && sim->sv.ev.g1[i] <= 0.0;
    if (crossed) {
      double theta = locate_event(sim, t, h, ny);
      if (!sim->failed && theta * h < h - tol) {
        h = theta * h;
        tb = t + h;
        sim->events++;
        sim->last_event = tb;
        rk4_stages(sim, t, h, ny); /* k1 is the same: one RK4 step to the event */
        lambda_at(sim, tb, NULL);
      } else {
        inputs_at(sim, tb);
      }
    }
    if (sim->failed) {
      sim->sv.loss.hold = false;
      return sim->err.code;
    }
  }
  sim->sv.loss.hold = false; /* the segment is integrated: its directions are free again */
  if (!check_finite(sim, sim->sv.rk.yt))
    return sim->err.code;

  /* COMMIT */
  const double *yt = sim->sv.rk.yt;
  memcpy(sim->sv.q, yt, sizeof(double) * (size_t)nd);
  memcpy(sim->sv.s, yt + nd, sizeof(double) * (size_t)sim->ns);
  /* the energy audit: each hook's work over the segment, with RK4's
   * weights on the stages' powers (what RK4 gives a state whose rate is
   * the power, without carrying those states through the stages) */
  const double *p1 = sim->sv.audit.pw, *p2 = p1 + sim->sv.audit.ne, *p3 = p2 + sim->sv.audit.ne, *p4 = p3 + sim->sv.audit.ne;
  for (int i = 0; i < sim->n_torque; i++)
    sim->sv.audit.work[sim->torque[i].b->index] += h / 6.0 * (p1[i] + 2.0 * p2[i] + 2.0 * p3[i] + p4[i]);
  int ie = sim->n_torque;
  sim->sv.audit.eff_loss += h / 6.0 * (p1[ie] + 2.0 * p2[ie] + 2.0 * p3[ie] + p4[ie]);
  sim->segments++;
  sim->t = tb;
  dg_solver_speeds(sim, sim->sv.q, sim->sv.x);
  if (sim->sv.lam.valid && sim->sv.lam.y == sim->sv.rk.yt)
    sim->sv.lam.y = NULL; /* the events asked for them at this very state */
  else
    lambda_at(sim, tb, NULL);

  /* EVENTS_POST: decisions at the segment's end (inputs from the left) */
  ctx->t = sim->t;
  ctx->dt = h;
  ctx->speed = sim->sv.x;
  sim->topo_request = false;
  run_hooks(sim, sim->post, sim->n_post);
  if (!sim->failed && sim->topo_request)
    dg_solver_change_topology(sim);
  ctx->speed = sim->sv.x;
  return sim->failed ? sim->err.code : DG_OK;
}

int dg_solver_step(dg_sim *sim, double dt) {
  double t_end = sim->t + dt;
  for (int seg = 0; seg < MAX_SEGMENTS; seg++) {
    int rc = step_segment(sim, t_end, MAX_SEGMENTS - seg);
    if (rc != DG_OK)
      return rc;
    if (sim->t >= t_end - time_tol(t_end, dt))
      break;
  }
  sim->t = t_end;
  sim->ctx.t = t_end;
  sim->ctx.speed = sim->sv.x;
  sim->ctx.state = sim->sv.s;
  dg_bind_eval(sim); /* what signal reads between steps see */
  sim->steps++;
  return DG_OK;
}

/* Tie forces where no stage has computed them (the end of a segment, the
 * state after a mode change): one more force pass at that point, made only
 * when a block asks. (The last RK4 stage's forces are no substitute: its
 * state y0 + h·k3 is O(h²) off the segment's end, which moved the hold
 * forces of a launching AWD car by 1e-3 of their value and changed its
 * stick-slip decisions.) */
static void compute_lambda(dg_sim *sim) {
  dg_ctx saved = sim->ctx;
  const double *y = sim->sv.lam.y;
  if (!y) {
    gather_state(sim, sim->sv.rk.y0);
    y = sim->sv.rk.y0;
  }
  sim->sv.lam.want = true;
  derivative(sim, sim->sv.lam.t, y, sim->sv.rk.ysave);
  sim->sv.lam.want = false;
  sim->ctx = saved;
  dg_bind_eval(sim); /* back at the asking hook's point */
}

void dg_ctx_request_topology(dg_ctx *ctx) { ctx->sim->topo_request = true; }

/* The active row of a tie with its forces computed at the asked point, or
 * -1 (no such tie, or redundant). */
static int tie_row(dg_ctx *ctx, int tie) {
  dg_sim *sim = ctx->sim;
  if (tie < 0 || tie >= sim->sv.ws.nties || sim->sv.ws.ties[tie].active < 0)
    return -1;
  if (!sim->sv.lam.valid)
    compute_lambda(sim);
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

/* ------------------------------------------------------------------------ */
/* Initial speeds                                                           */

/* Meets x[node[i]] = value[i] exactly (Gaussian elimination of the affine
 * conditions, q = T z + c) and fills the remaining freedom z by minimizing
 * the kinetic-energy distance to the current speeds, (q − q0)ᵀ M (q − q0). */
int dg_solver_set_speeds(dg_sim *sim, int n, const int *node, const double *value, char *why,
                         size_t why_size) {
  int nd = sim->sv.ndof;
  size_t st = (size_t)sim->nn, snd = (size_t)(nd ? nd : 1);
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
  int nz = nd;
  for (int i = 0; i < n; i++) {
    const double *gr = sim->sv.G + (size_t)node[i] * st;
    double b = value[i], scale = 0.0;
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
    if (jp < 0 || best <= PIVOT_EPS * fmax(scale, 1e-300)) {
      if (fabs(b) > 1e-9 * (fabs(value[i]) + 1.0)) {
        char lab[128];
        node_label(sim, node[i], lab, sizeof lab);
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
        mi += sim->sv.M[(size_t)i * st + (size_t)j] * tmp[j];
      v += T[(size_t)i * snd + (size_t)k] * mi;
    }
    rhs[k] = v;
    for (int l = 0; l < nz; l++) {
      double m = 0.0;
      for (int i = 0; i < nd; i++)
        for (int j = 0; j < nd; j++)
          m += T[(size_t)i * snd + (size_t)k] * sim->sv.M[(size_t)i * st + (size_t)j] *
               T[(size_t)j * snd + (size_t)l];
      A[(size_t)k * snd + (size_t)l] = m;
    }
  }
  if (nz > 0 && cholesky(A, A, nz, snd) != 0) {
    rc = DG_ERR_INERTIA;
    snprintf(why, why_size, "initial speeds leave a degree of freedom without inertia");
    goto done;
  }
  if (nz > 0)
    cholesky_solve(A, nz, snd, rhs);
  for (int j = 0; j < nd; j++) {
    double v = c[j];
    for (int k = 0; k < nz; k++)
      v += T[(size_t)j * snd + (size_t)k] * rhs[k];
    sim->sv.q[j] = v;
  }
  dg_solver_speeds(sim, sim->sv.q, sim->sv.x);
  lambda_at(sim, sim->t, NULL);
done:
  free(T);
  free(c);
  free(a);
  free(A);
  free(rhs);
  free(tmp);
  return rc;
}
