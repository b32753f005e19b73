/* The topology room: the dg_topo_* calls of the blocks' state_upstream
 * hooks, and the elimination of ties.
 *
 * Blocks are visited from the road back to the sources; their hooks give
 * each node a row over "raw" DOFs: x = R q_raw. Ties Σ c·x = 0 (locked
 * diffs, holding brakes, loops) become rows of C = c·R over the raw DOFs
 * and are eliminated one at a time by Gaussian elimination with the largest
 * pivot, which yields q_raw = T q with q the DOFs of the mode (G = R T, in
 * plan.c). An equality tie that leaves a node it joins with no motion at
 * all contradicts the rigid ratios of a loop (over-constrained); two holds
 * on one shaft are refused. Workspace: dg_topo_ws (lib/sim.h). */
#include "solver.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void dgp_topo_error(dg_sim *sim, int block, int code, const char *fmt, ...) {
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

/* The node gets a new raw DOF of its own (its row of R, e_k, is written
 * with the others by dgp_topo_rows). */
void dgp_topo_new_raw(dg_sim *sim, int node, int owner) {
  dg_topo_ws *ws = &sim->sv.ws;
  int k = ws->nraw++;
  ws->has_row[node] = 1;
  ws->raw_owner[k] = owner;
  ws->raw_node[k] = node;
  ws->raw_presc[k] = 0;
}

/* A port the block's class does not have: the report, out of the hooks'
 * path. */
static DGP_NOINLINE void bad_port(dg_sim *sim, const dg_block *b, int port) {
  dgp_topo_error(sim, b->index, DG_ERR_BLOCK, "block class %s used port index %d of %d",
                 b->klass->type, port, sim->g->blocks[b->index].num_ports);
}

/* Whether the block has the port: its count from the ports room's table
 * (the graph's ports, block by block). */
static inline bool valid_port(dg_sim *sim, const dg_block *b, int port) {
  const int *base = sim->sv.ports.base + b->index;
  if ((unsigned)port < (unsigned)(base[1] - base[0]))
    return true;
  bad_port(sim, b, port);
  return false;
}

void dg_topo_dof(dg_topo *t, const dg_block *b, int port) {
  if (t->sim->sv.ws.refreshing)
    return;
  if (valid_port(t->sim, b, port))
    dgp_topo_ensure_row(t->sim, b->node[port], b->index);
}

/* A lossy mesh of this build: a link (link >= 0) or a tie (tie >= 0). */
static void add_mesh(dg_sim *sim, const dg_block *b, int link, int tie, double eta,
                     double eta_b) {
  dg_topo_ws *ws = &sim->sv.ws;
  if (ws->nmesh >= sim->nn) { /* independent constraints are fewer than nodes */
    dgp_topo_error(sim, b->index, DG_ERR_OVERCONSTRAINED,
               "over-constrained: more lossy meshes than the drivetrain has shafts");
    return;
  }
  int j = ws->nmesh++;
  ws->mesh_link[j] = link;
  ws->mesh_tie[j] = tie;
  ws->mesh_eta[j] = eta;
  ws->mesh_eta_b[j] = eta_b;
  ws->mesh_tab_a[j] = ws->mesh_tab_b[j] = NULL;
  if (tie >= 0)
    ws->ties[tie].mesh = j;
}

/* The tie Σ coef·x = 0 over nodes; with acoef (side a's coefficients) and
 * eta < 1 a lossy mesh. */
static int add_tie(dg_sim *sim, const dg_block *b, int n, const int *node, const double *coef,
                   const double *acoef, double eta, double eta_b) {
  dg_topo_ws *ws = &sim->sv.ws;
  if (ws->nties >= ws->max_ties || ws->nterms + n > ws->max_terms) {
    dgp_topo_error(sim, b->index, DG_ERR_BLOCK, "too many ties in one mode (limit %d)", ws->max_ties);
    return -1;
  }
  int id = ws->nties++;
  dg_tie *tie = &ws->ties[id];
  *tie = (dg_tie){b->index, ws->nterms, n, n == 1, -1, -1, -1, false};
  for (int i = 0; i < n; i++) { /* its row of C: dgp_topo_rows */
    dgp_topo_ensure_row(sim, node[i], b->index);
    if (ws->row_dirty[node[i]])
      sim->sv.kin.refreshable = false; /* the elimination would change with the ratio */
    ws->tie_node[ws->nterms] = node[i];
    ws->tie_coef[ws->nterms] = coef[i];
    ws->tie_acoef[ws->nterms] = acoef ? acoef[i] : 0.0;
    ws->nterms++;
  }
  if (acoef && (eta < 1.0 || eta_b < 1.0))
    add_mesh(sim, b, -1, id, eta, eta_b);
  return id;
}

/* Build: the link, so that a refresh can recompute the rows after it and
 * the lossy meshes can name it; returns its index, -1 past the bounds. */
static DGP_INLINE int record_link(dg_sim *sim, const dg_block *b, int dnode, int n,
                                  const int *nodes, const double *coef, const double *coef_rate) {
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

/* dg_topo_link_rate's arguments out of range: the report, out of the
 * hooks' path (the count of sources first, then the efficiencies). */
static DGP_NOINLINE void link_error(dg_sim *sim, const dg_block *b, int n, double efficiency,
                                    double eta_b) {
  if (n < 1 || n > 16)
    dgp_topo_error(sim, b->index, DG_ERR_BLOCK, "dg_topo_link with %d sources (1..16)", n);
  else
    dgp_topo_error(sim, b->index, DG_ERR_BLOCK, "efficiency %g outside (0, 1]",
                   efficiency > 0.0 && efficiency <= 1.0 ? eta_b : efficiency);
}

/* A link to a node already determined from elsewhere (a loop): the
 * constraint x_dst − Σ c·x_src = 0 (lossy: side a is dst, as for a
 * link). */
static DGP_OUTLINE void link_tie(dg_sim *sim, const dg_block *b, int dnode, int n,
                                 const int *src_nodes, const double *coef, double efficiency,
                                 double eta_b) {
  int nodes[17];
  double coefs[17], acoef[17] = {1.0};
  nodes[0] = dnode;
  coefs[0] = 1.0;
  for (int i = 0; i < n; i++) {
    nodes[i + 1] = src_nodes[i];
    coefs[i + 1] = -coef[i];
  }
  add_tie(sim, b, n + 1, nodes, coefs, acoef, efficiency, eta_b);
}

/* dg_topo_link_rate with an efficiency per driving side: eta_b while the
 * sources drive (power flows to dst), efficiency while dst drives. Inline
 * in each of the calls that take it (dg_topo_ratio is the commonest of
 * every build's hooks). */
static DGP_INLINE void link_rate(dg_topo *t, const dg_block *b, int dst, int n, const int *src,
                                 const double *coef, const double *coef_rate, double efficiency,
                                 double eta_b) {
  dg_sim *sim = t->sim;
  dg_topo_ws *ws = &sim->sv.ws;
  if (ws->refreshing) {
    dgp_kin_refresh_link(sim, b, dst, n, coef, coef_rate);
    return;
  }
  if (!valid_port(sim, b, dst))
    return;
  if (n < 1 || n > 16 || !(efficiency > 0.0 && efficiency <= 1.0) ||
      !(eta_b > 0.0 && eta_b <= 1.0)) {
    link_error(sim, b, n, efficiency, eta_b);
    return;
  }
  int nodes[16];
  for (int i = 0; i < n; i++) {
    if (!valid_port(sim, b, src[i]))
      return;
    nodes[i] = b->node[src[i]];
    dgp_topo_ensure_row(sim, nodes[i], b->index);
  }
  int dnode = b->node[dst];
  if (ws->has_row[dnode]) {
    link_tie(sim, b, dnode, n, nodes, coef, efficiency, eta_b);
    return;
  }
  ws->has_row[dnode] = 1; /* its row of R: dgp_topo_rows, from the record */
  int k = record_link(sim, b, dnode, n, nodes, coef, coef_rate);
  if (k < 0) { /* cannot happen: a mode has fewer links than nodes */
    dgp_topo_error(sim, b->index, DG_ERR_BLOCK, "too many links in one mode (limit %d)",
                   ws->max_links);
    return;
  }
  if (efficiency < 1.0 || eta_b < 1.0)
    add_mesh(sim, b, k, -1, efficiency, eta_b);
}

void dg_topo_link(dg_topo *t, const dg_block *b, int dst, int n, const int *src, const double *coef,
                  double efficiency) {
  link_rate(t, b, dst, n, src, coef, NULL, efficiency, efficiency);
}

void dg_topo_link_rate(dg_topo *t, const dg_block *b, int dst, int n, const int *src,
                       const double *coef, const double *coef_rate, double efficiency) {
  link_rate(t, b, dst, n, src, coef, coef_rate, efficiency, efficiency);
}

void dg_topo_ratio_directed(dg_topo *t, const dg_block *b, int dst, int src, double ratio,
                            double efficiency_dst, double efficiency_src) {
  link_rate(t, b, dst, 1, &src, &ratio, NULL, efficiency_dst, efficiency_src);
}

void dg_topo_mesh_tables(dg_topo *t, const dg_block *b, const dg_table1d *efficiency_dst,
                         const dg_table1d *efficiency_src) {
  dg_topo_ws *ws = &t->sim->sv.ws;
  if (ws->refreshing)
    return;
  int j = ws->nmesh - 1;
  bool mine = j >= 0 && (ws->mesh_link[j] >= 0 ? ws->link_block[ws->mesh_link[j]] == b->index
                                               : ws->ties[ws->mesh_tie[j]].block == b->index);
  if (!mine) {
    dgp_topo_error(t->sim, b->index, DG_ERR_BLOCK,
                   "dg_topo_mesh_tables without a lossy link of the block before it");
    return;
  }
  ws->mesh_tab_a[j] = efficiency_dst && efficiency_dst->n > 0 ? efficiency_dst : NULL;
  ws->mesh_tab_b[j] = efficiency_src && efficiency_src->n > 0 ? efficiency_src : NULL;
}

void dg_topo_ratio(dg_topo *t, const dg_block *b, int dst, int src, double ratio,
                   double efficiency) {
  link_rate(t, b, dst, 1, &src, &ratio, NULL, efficiency, efficiency);
}

static DGP_INLINE int topo_tie(dg_topo *t, const dg_block *b, int n, const int *port,
                               const double *coef, const double *coef_a, double efficiency) {
  dg_sim *sim = t->sim;
  int nodes[16];
  if (sim->sv.ws.refreshing) /* a tie in a refreshed mode: the structure is kept */
    return -1;
  if (n < 1 || n > 16) {
    dgp_topo_error(sim, b->index, DG_ERR_BLOCK, "dg_topo_tie with %d ports (1..16)", n);
    return -1;
  }
  if (!(efficiency > 0.0 && efficiency <= 1.0)) {
    dgp_topo_error(sim, b->index, DG_ERR_BLOCK, "efficiency %g outside (0, 1]", efficiency);
    return -1;
  }
  for (int i = 0; i < n; i++) {
    if (!valid_port(sim, b, port[i]))
      return -1;
    nodes[i] = b->node[port[i]];
  }
  return add_tie(sim, b, n, nodes, coef, coef_a, efficiency, efficiency);
}

int dg_topo_tie(dg_topo *t, const dg_block *b, int n, const int *port, const double *coef) {
  return topo_tie(t, b, n, port, coef, NULL, 1.0);
}

int dg_topo_lock(dg_topo *t, const dg_block *b, int port_a, int port_b) {
  const int ports[2] = {port_a, port_b};
  static const double coef[2] = {1.0, -1.0};
  return topo_tie(t, b, 2, ports, coef, NULL, 1.0);
}

int dg_topo_tie_lossy(dg_topo *t, const dg_block *b, int n, const int *port, const double *coef,
                      const double *coef_a, double efficiency) {
  return topo_tie(t, b, n, port, coef, coef_a, efficiency);
}

void dg_topo_tie_yielding(dg_topo *t, const dg_block *b, int tie) {
  dg_sim *sim = t->sim;
  dg_topo_ws *ws = &sim->sv.ws;
  if (ws->refreshing || tie < 0)
    return;
  if (tie >= ws->nties || ws->ties[tie].block != b->index || !ws->ties[tie].ground) {
    dgp_topo_error(sim, b->index, DG_ERR_BLOCK,
                   "dg_topo_tie_yielding: tie %d is not a hold (a one-port dg_topo_tie) of this "
                   "block",
                   tie);
    return;
  }
  ws->ties[tie].yields = true;
}

const double *dg_topo_state(const dg_topo *t, const dg_block *b) {
  return t->sim->sv.topo_state + b->state;
}

static DGP_NOINLINE void inertia_error(dg_sim *sim, const dg_block *b, double inertia) {
  dgp_topo_error(sim, b->index, DG_ERR_BLOCK, "inertia %g must be finite and >= 0", inertia);
}

void dg_topo_inertia(dg_topo *t, const dg_block *b, int port, double inertia) {
  dg_sim *sim = t->sim;
  if (sim->sv.ws.refreshing || !valid_port(sim, b, port))
    return;
  if (!(inertia >= 0.0 && inertia <= DBL_MAX)) { /* NaN, < 0, +inf */
    inertia_error(sim, b, inertia);
    return;
  }
  sim->sv.inertia[b->node[port]] += inertia;
  dgp_ports_add_inertia(sim, b, port, inertia);
}

/* The shaft at `port` follows the block's motion hook: its own raw DOF,
 * prescribed (never a pivot of the elimination, so it stays a column of
 * G: x = G_f q + G_p v); or, for a shaft whose speed other blocks already
 * expressed, a new prescribed raw DOF k and the rheonomic tie
 * R_node·q_raw − q_k = 0 (the elimination then expresses a free raw DOF
 * through k). Either way the shaft's speed is exactly column k's value. */
void dg_topo_prescribe(dg_topo *t, const dg_block *b, int port) {
  dg_sim *sim = t->sim;
  dg_topo_ws *ws = &sim->sv.ws;
  if (ws->refreshing || !valid_port(sim, b, port))
    return;
  if (!b->klass->motion) {
    dgp_topo_error(sim, b->index, DG_ERR_BLOCK,
                   "block class %s prescribes a speed but has no motion hook", b->klass->type);
    return;
  }
  for (int k = 0; k < ws->nraw; k++)
    if (ws->raw_presc[k] && ws->raw_owner[k] == b->index) {
      dgp_topo_error(sim, b->index, DG_ERR_BLOCK, "block class %s prescribes two speeds in one mode",
                     b->klass->type);
      return;
    }
  int node = b->node[port];
  if (!ws->has_row[node]) {
    dgp_topo_new_raw(sim, node, b->index);
    ws->raw_presc[ws->nraw - 1] = 1;
    return;
  }
  if (ws->nraw >= sim->nn) { /* cannot happen: the node has no raw DOF of its own */
    dgp_topo_error(sim, b->index, DG_ERR_BLOCK, "too many raw degrees of freedom");
    return;
  }
  int k = ws->nraw++;
  ws->raw_owner[k] = b->index;
  ws->raw_node[k] = node;
  ws->raw_presc[k] = 1;
  static const double one = 1.0;
  int id = add_tie(sim, b, 1, &node, &one, NULL, 1.0, 1.0);
  if (id < 0)
    return;
  ws->ties[id].presc = k; /* its row of C gets −1 at k (dgp_topo_rows) */
  ws->ties[id].ground = false; /* not a hold: it fixes the shaft to a speed */
}

/* R, Ṙ and C from the hooks' declarations, once they are all made (a mode
 * the cache has needs none of it: cache.c): each raw DOF's own row e_k,
 * then each link's row from its sources' (in the order declared: a
 * source's row is final before any link reads it), then each tie's row of
 * C from its nodes' rows (and −1 at a prescribed raw DOF). Every row is
 * final once written, so the sums are those the declarations would have
 * made at once, term for term. */
void dgp_topo_rows(dg_sim *sim) {
  dg_topo_ws *ws = &sim->sv.ws;
  size_t rst = dgp_rst(sim); /* the rows' stride: nraw */
  bool var = sim->sv.variable_kinematics; /* Ṙ is kept only then (sized 0 else) */
  int nraw = ws->nraw;
  unsigned char *own = ws->row_own; /* raw k has its node's row (not a prescription's own) */
  memset(own, 1, (size_t)nraw);
  for (int t = 0; t < ws->nties; t++)
    if (ws->ties[t].presc >= 0 && ws->raw_node[ws->ties[t].presc] >= 0)
      own[ws->ties[t].presc] = 0;
  for (int k = 0; k < nraw; k++) {
    if (!own[k])
      continue;
    double *r = dgp_row_of(sim, ws->raw_node[k]);
    memset(r, 0, sizeof(double) * rst);
    if (var)
      memset(ws->Rd + (size_t)ws->raw_node[k] * rst, 0, sizeof(double) * rst);
    r[k] = 1.0;
  }
  for (int l = 0; l < ws->nlinks; l++) {
    int dnode = ws->link_dst[l], f = ws->link_first[l];
    double *r = dgp_row_of(sim, dnode), *rd = var ? ws->Rd + (size_t)dnode * rst : NULL;
    memset(r, 0, sizeof(double) * rst);
    if (rd)
      memset(rd, 0, sizeof(double) * rst);
    for (int i = 0; i < ws->link_n[l]; i++) {
      int src = ws->link_src[f + i];
      double c = ws->link_coef[f + i], cr = ws->link_rate[f + i];
      const double *sr = dgp_row_of(sim, src);
      for (int k = 0; k < nraw; k++)
        r[k] += c * sr[k];
      if (!rd)
        continue;
      const double *srd = ws->Rd + (size_t)src * rst;
      /* d/dt (c · x_src) = ċ · x_src + c · ẋ_src-part from the source's own rate */
      for (int k = 0; k < nraw; k++)
        rd[k] += c * srd[k] + (cr != 0.0 ? cr * sr[k] : 0.0);
    }
  }
  for (int t = 0; t < ws->nties; t++) {
    const dg_tie *tie = &ws->ties[t];
    double *c = ws->C + (size_t)t * rst;
    memset(c, 0, sizeof(double) * rst);
    for (int i = tie->first; i < tie->first + tie->n; i++) {
      const double *r = dgp_row_of(sim, ws->tie_node[i]);
      for (int k = 0; k < nraw; k++)
        c[k] += ws->tie_coef[i] * r[k];
    }
    if (tie->presc >= 0)
      c[tie->presc] = -1.0;
  }
}

/* "block.port" of a node, for messages. */
void dgp_node_label(const dg_sim *sim, int node, char *buf, size_t size) {
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
  dgp_node_label(sim, sim->sv.ws.raw_node[sim->sv.ws.col_raw[dof]], lab, sizeof lab);
  return snprintf(buf, size, "%s", lab);
}

/* Lists the nodes (and their blocks) for which `on(node)` holds. */
void dgp_describe_nodes(const dg_sim *sim, bool (*on)(const dg_sim *, int, int), int arg,
                           char *nodes, size_t nsize, char *blocks, size_t bsize, int *first) {
  size_t nl = 0, bl = 0;
  nodes[0] = blocks[0] = '\0';
  *first = -1;
  unsigned char *seen = calloc((size_t)sim->nb, 1);
  for (int n = 0; n < sim->nn; n++) {
    if (!on(sim, n, arg))
      continue;
    char lab[128];
    dgp_node_label(sim, n, lab, sizeof lab);
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

static bool row_nonzero(const double *r, int n) {
  for (int k = 0; k < n; k++)
    if (r[k] != 0.0)
      return true;
  return false;
}

/* Node rows of G = R T restricted to one node. */
void dgp_reduced_row(const dg_sim *sim, int node, int nred, double *out) {
  const double *r = dgp_row_of(sim, node);
  const dg_topo_ws *ws = &sim->sv.ws;
  for (int j = 0; j < nred; j++)
    out[j] = 0.0;
  for (int k = 0; k < ws->nraw; k++) {
    if (r[k] == 0.0)
      continue;
    const double *tk = ws->T + (size_t)k * dgp_rst(sim);
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
      if (!row_nonzero(dgp_row_of(sim, node), ws->nraw))
        continue;
      dgp_reduced_row(sim, node, nred, red);
      if (!row_nonzero(red, nred)) {
        sim->sv.scratch[node] = 1.0;
        bad = true;
      }
    }
    if (!bad)
      continue;
    char nodes[160], blocks[160];
    int first;
    dgp_describe_nodes(sim, node_zeroed, nred, nodes, sizeof nodes, blocks, sizeof blocks, &first);
    bool mine = sim->sv.ws.error == 0; /* dgp_topo_error keeps the first error */
    dgp_topo_error(sim, tie->block, DG_ERR_OVERCONSTRAINED,
               "over-constrained: a constraint of block \"%s\" contradicts the ratios of a loop "
               "(it would hold %s at rest; blocks involved: %s)",
               sim->g->blocks[tie->block].id, nodes, blocks);
    sim->sv.ws.err_ratio_loop = sim->sv.ws.err_ratio_loop || mine;
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
    if (!a->ground || a->yields)
      continue;
    int node = ws->tie_node[a->first];
    for (int u = 0; u < t; u++) {
      const dg_tie *b = &ws->ties[u];
      if (!b->ground || b->yields || b->block == a->block || ws->tie_node[b->first] != node)
        continue;
      char lab[128];
      dgp_node_label(sim, node, lab, sizeof lab);
      dgp_topo_error(sim, a->block, DG_ERR_OVERCONSTRAINED,
                 "over-constrained: blocks \"%s\" and \"%s\" both hold the shaft %s to ground; "
                 "two holds on one shaft cannot share the torque they hold: use one (a brake "
                 "with the capacities added)",
                 sim->g->blocks[b->block < a->block ? b->block : a->block].id,
                 sim->g->blocks[b->block < a->block ? a->block : b->block].id, lab);
      return;
    }
  }
}

/* A tie that would fix a prescribed speed: a hold, a lock or a ratio
 * between shafts whose speeds blocks prescribe, or a second prescription. */
static void prescribed_conflict(dg_sim *sim, const dg_tie *tie, int owner) {
  char lab[128];
  dgp_node_label(sim, sim->sv.ws.tie_node[tie->first], lab, sizeof lab);
  dgp_topo_error(sim, tie->block, DG_ERR_OVERCONSTRAINED,
                   "over-constrained: block \"%s\" constrains %s, whose speed block \"%s\" "
                   "prescribes: a prescribed speed cannot also be held, locked or geared to "
                   "another prescribed speed",
                   sim->g->blocks[tie->block].id, lab, sim->g->blocks[owner].id);
}

/* The prescribed columns after the free ones (a stable partition of the
 * columns of T and col_raw), so that q = G's first columns and the
 * prescribed speeds the last. */
static void prescribed_last(dg_sim *sim, int nred) {
  dg_topo_ws *ws = &sim->sv.ws;
  size_t st = dgp_rst(sim);
  int nf = 0;
  for (int j = 0; j < nred; j++)
    nf += !ws->raw_presc[ws->col_raw[j]];
  if (nf == nred)
    return;
  int *perm = ws->active_tie; /* scratch (max_ties > 2 nn): rebuilt by the multiplier map */
  int a = 0, b = nf;
  for (int j = 0; j < nred; j++)
    perm[ws->raw_presc[ws->col_raw[j]] ? b++ : a++] = j;
  double *row = sim->sv.gvec;
  for (int k = 0; k < ws->nraw; k++) {
    double *tk = ws->T + (size_t)k * st;
    for (int j = 0; j < nred; j++)
      row[j] = tk[perm[j]];
    memcpy(tk, row, sizeof(double) * (size_t)nred);
  }
  int *cr = perm + sim->nn;
  for (int j = 0; j < nred; j++)
    cr[j] = ws->col_raw[perm[j]];
  memcpy(ws->col_raw, cr, sizeof(int) * (size_t)nred);
}

/* Gaussian elimination of the ties; fills T (nraw × nred) and returns nred,
 * the prescribed columns last. */
int dgp_topo_eliminate(dg_sim *sim) {
  dg_topo_ws *ws = &sim->sv.ws;
  check_double_holds(sim);
  if (ws->error)
    return ws->nraw;
  size_t st = dgp_rst(sim);
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
  /* links and locks first, then holds, then the holds that yield: a hold
   * another one makes redundant is the yielding one (multiplier 0) */
  for (int pass = 0; pass < 3; pass++) {
    for (int t = 0; t < ws->nties; t++) {
      dg_tie *tie = &ws->ties[t];
      int tie_pass = !tie->ground ? 0 : tie->yields ? 2 : 1;
      if (tie_pass != pass)
        continue;
      tie->active = -1;
      const double *crow = ws->C + (size_t)t * st;
      double scale = 0.0;
      for (int k = 0; k < nraw; k++)
        scale = fmax(scale, fabs(crow[k]));
      if (scale == 0.0)
        continue;
      int jp = -1, jq = -1;
      double best = 0.0, bestq = 0.0;
      for (int j = 0; j < nred; j++) {
        double v = 0.0;
        for (int k = 0; k < nraw; k++)
          v += crow[k] * ws->T[(size_t)k * st + (size_t)j];
        c[j] = v;
        if (ws->raw_presc[ws->col_raw[j]]) { /* a prescribed speed: never a pivot */
          if (fabs(v) > bestq) {
            bestq = fabs(v);
            jq = j;
          }
        } else if (fabs(v) > best) {
          best = fabs(v);
          jp = j;
        }
      }
      if (jp < 0 || best <= DGP_PIVOT_EPS * scale) {
        if (jq >= 0 && bestq > DGP_PIVOT_EPS * scale)
          prescribed_conflict(sim, tie, ws->raw_owner[ws->col_raw[jq]]);
        continue; /* redundant: already implied by earlier ties */
      }
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
  prescribed_last(sim, nred);
  return nred;
}

/* The arrays this room owns (buffers.c); the declarations of the hooks
 * (dgp_buf_add_decl) are what the calls above write. */
void dgp_topo_buffers(dg_sim *sim, dgp_buf_list *l) {
  const dg_topo_ws *ws = &sim->sv.ws;
  size_t nn = (size_t)sim->nn, mt = (size_t)ws->max_ties, ml = (size_t)ws->max_links;
  dgp_buf_add_plan(l, &sim->sv.ws.R, nn * nn, sizeof(double));
  /* Ṙ only for a graph with variable kinematics (a CVT) */
  dgp_buf_add_plan(l, &sim->sv.ws.Rd, sim->sv.variable_kinematics ? nn * nn : 0, sizeof(double));
  dgp_buf_add_decl(l, &sim->sv.ws.has_row, nn, 1);
  dgp_buf_add_decl(l, &sim->sv.ws.raw_owner, nn, sizeof(int));
  dgp_buf_add_decl(l, &sim->sv.ws.raw_node, nn, sizeof(int));
  dgp_buf_add_decl(l, &sim->sv.ws.raw_presc, nn, sizeof(int));
  dgp_buf_add_plan(l, &sim->sv.ws.T, nn * nn, sizeof(double));
  dgp_buf_add_plan(l, &sim->sv.ws.col_raw, nn, sizeof(int));
  dgp_buf_add_decl(l, &sim->sv.ws.ties, mt, sizeof(dg_tie));
  dgp_buf_add_decl(l, &sim->sv.ws.tie_node, (size_t)ws->max_terms, sizeof(int));
  dgp_buf_add_decl(l, &sim->sv.ws.tie_coef, (size_t)ws->max_terms, sizeof(double));
  dgp_buf_add_plan(l, &sim->sv.ws.C, mt * nn, sizeof(double));
  /* P and A over the active ties, at most nn (each eliminates a raw DOF) */
  dgp_buf_add_plan(l, &sim->sv.ws.P, nn * nn, sizeof(double));
  dgp_buf_add_plan(l, &sim->sv.ws.A, nn * nn, sizeof(double));
  dgp_buf_add_plan(l, &sim->sv.ws.active_tie, mt, sizeof(int));
  dgp_buf_add_decl(l, &sim->sv.ws.tie_acoef, (size_t)ws->max_terms, sizeof(double));
  dgp_buf_add_decl(l, &sim->sv.ws.mesh_link, nn, sizeof(int));
  dgp_buf_add_decl(l, &sim->sv.ws.mesh_tie, nn, sizeof(int));
  dgp_buf_add_decl(l, &sim->sv.ws.mesh_eta, nn, sizeof(double));
  dgp_buf_add_decl(l, &sim->sv.ws.mesh_eta_b, nn, sizeof(double));
  dgp_buf_add_decl(l, &sim->sv.ws.mesh_tab_a, nn, sizeof(const dg_table1d *));
  dgp_buf_add_decl(l, &sim->sv.ws.mesh_tab_b, nn, sizeof(const dg_table1d *));
  dgp_buf_add_decl(l, &sim->sv.ws.link_dst, ml, sizeof(int));
  dgp_buf_add_decl(l, &sim->sv.ws.link_first, ml, sizeof(int));
  dgp_buf_add_decl(l, &sim->sv.ws.link_n, ml, sizeof(int));
  dgp_buf_add_decl(l, &sim->sv.ws.link_block, ml, sizeof(int));
  dgp_buf_add_decl(l, &sim->sv.ws.link_var, ml, 1);
  dgp_buf_add_decl(l, &sim->sv.ws.link_src, (size_t)ws->max_terms, sizeof(int));
  dgp_buf_add_decl(l, &sim->sv.ws.link_coef, (size_t)ws->max_terms, sizeof(double));
  dgp_buf_add_decl(l, &sim->sv.ws.link_rate, (size_t)ws->max_terms, sizeof(double));
  dgp_buf_add_decl(l, &sim->sv.ws.row_dirty, nn, 1);
  dgp_buf_add_plan(l, &sim->sv.ws.row_own, nn, 1);
}
