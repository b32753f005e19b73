/* The tree room: the ACCEL stage, losses included, as one sparse solve over
 * the nodes and the constraints of the mode, in time linear in their count
 * where they form a forest (a drivetrain without loops).
 *
 * Unknowns z = [ẍ; λ]: the node accelerations, then one multiplier per
 * constraint (each recorded link e_dst − Σ c e_src, each active tie). With
 * K = [[I, −Ã], [Aᵀ, 0]] the stage solves K z = [w; 0]: the nodes' torque
 * balance I ẍ − w = Ã λ and the kinematics Aᵀ ẍ = 0 (no prescribed
 * speeds; with variable ratios, for ẍ less Ġ q: dgp_tree_build). Ã is A with side b of each lossy
 * mesh j scaled by 1 + κ_j, so Ã λ carries the loss torques κ_j λ_j b_j (loss.c, and
 * docs/solver.md, "Losses"); with all κ = 0 the solution is that of
 * q̇ = M⁻¹ Gᵀ w with ẍ = G q̇. Each DOF is the speed of one node (its raw
 * DOF survived the elimination of ties), so q̇_j = ẍ at that node.
 *
 * Before any of that, links with one source are folded (find_aliases):
 * their dst is a copy of the source, no vertex, its inertia and torque
 * carried across the link with c, or c (1 + κ) across a lossy one, the
 * deepest copies first; a lossy link's load is then its dst's balance
 * (mesh_lambda). On a chain of gears nothing is left to factor.
 *
 * K's pattern is symmetric and its graph is that of nodes and constraints.
 * Eliminated leaf by leaf, a vertex v has one neighbour u left: with a pivot d_v ≠ 0,
 * d_u −= K[u][v] K[v][u] / d_v (a 1×1 pivot, no fill); with d_v = 0 (a
 * shaft without inertia, a constraint whose shafts have none) v's equation
 * K[v][u] z_u = b_v gives z_u at once and u's equation gives z_v after the
 * others: v and u leave together and u's other neighbours only see z_u on
 * their right side (the pair's inverse has a zero where they would couple:
 * again no fill). Node pivots are I_n plus terms (1 + κ) A² / d_c ≥ 0 and
 * constraint pivots sums of such terms, all of one sign: no cancellation,
 * so a pivot is 0 exactly when no inertia reaches it. Workspace:
 * dg_tree_ws (lib/sim.h). */
#include "solver.h"

#include <limits.h>
#include <math.h>
#include <string.h>

/* ---- the factorization, on any K whose graph peels to nothing ----------- */

/* The pivots for the current kout / kin, eliminating leaves (vertices with
 * at most one neighbour left) until none is left: 0; -1 where a pivot is 0
 * with no neighbour left to pair it with (K singular) or not finite; -2
 * when vertices remain that all have two neighbours or more (a loop, which
 * would fill in). Peeling leaves handles any forest, and more: a shaft
 * without inertia that only one constraint defines (an open differential's
 * carrier) leaves with that constraint, which may open a loop through it.
 * Scratch: order (the queue of leaves), parent (neighbours left). */
int dgp_tree_factor(dg_tree_ws *t) {
  int nv = t->nv, nops = 0, head = 0, tail = 0, nup = 0;
  int *queue = t->order, *deg = t->parent, *step = t->step;
  memcpy(t->d, t->diag0, sizeof(double) * (size_t)nv);
  t->factored = false;
  t->fr_ok = false;
  for (int v = 0; v < nv; v++) {
    step[v] = INT_MAX;
    deg[v] = t->start[v + 1] - t->start[v];
    if (v < t->nn && t->gone[v])
      step[v] = -1; /* an alias: no vertex */
    else if (deg[v] <= 1)
      queue[tail++] = v;
  }
  while (head < tail) {
    int v = queue[head++];
    if (step[v] != INT_MAX)
      continue; /* left with a partner */
    int u = -1, e = -1;
    for (int f = t->start[v]; f < t->start[v + 1]; f++)
      if (step[t->nbr[f]] == INT_MAX) {
        u = t->nbr[f];
        e = f;
      }
    double dv = t->d[v];
    if (!isfinite(dv))
      return -1;
    t->op_v[nops] = v;
    t->op_first[nops] = nup;
    if (t->rt_on) { /* the elimination as made, for dgp_tree_factor_values */
      t->fr_v[nops] = v;
      t->fr_e[nops] = e;
      t->fr_pair[nops] = dv == 0.0;
    }
    if (dv != 0.0) { /* z_v = b_v / d_v − (K[v][u] / d_v) z_u */
      t->op_u[nops] = -1;
      t->op_s[nops] = 1.0 / dv;
      step[v] = nops;
      if (u >= 0) {
        t->d[u] -= t->kin[e] * t->kout[e] / dv;
        if (t->rt_on)
          t->fu_e[nup] = e;
        t->upd_r[nup] = u;
        t->upd_f[nup] = t->kin[e];
        t->upd_b[nup++] = t->kout[e] / dv;
        if (--deg[u] == 1)
          queue[tail++] = u;
      }
    } else { /* z_u = b_v / K[v][u]; z_v from u's equation */
      if (u < 0 || t->kout[e] == 0.0 || t->kin[e] == 0.0)
        return -1;
      t->op_u[nops] = u;
      t->op_s[nops] = 1.0 / t->kout[e];
      t->op_pa[nops] = 1.0 / t->kin[e];
      t->op_pb[nops] = t->d[u] / t->kin[e];
      step[v] = step[u] = nops;
      for (int f = t->start[u]; f < t->start[u + 1]; f++) {
        int r = t->nbr[f];
        if (step[r] != INT_MAX)
          continue;
        if (t->rt_on)
          t->fu_e[nup] = f;
        t->upd_r[nup] = r;
        t->upd_f[nup] = t->kin[f];
        t->upd_b[nup++] = t->kout[f] / t->kin[e];
        if (--deg[r] == 1)
          queue[tail++] = r;
      }
    }
    nops++;
  }
  t->op_first[nops] = nup;
  for (int v = 0; v < nv; v++)
    if (step[v] == INT_MAX)
      return -2;
  /* each elimination's first update inline (most have exactly one: a
   * chain's, a tree's); one without updates updates itself by 0 */
  t->simple = true;
  for (int k = 0; k < nops; k++) {
    int i = t->op_first[k];
    bool any = i < t->op_first[k + 1];
    t->op_r[k] = any ? t->upd_r[i] : t->op_v[k];
    t->op_f[k] = any ? t->upd_f[i] : 0.0;
    t->op_b[k] = any ? t->upd_b[i] : 0.0;
    t->op_x[k] = any ? i + 1 : i;
    t->simple = t->simple && t->op_u[k] < 0 && t->op_x[k] == t->op_first[k + 1];
  }
  /* The eliminations that update nothing (a component's last vertex: a
   * wheel or a body on its own, the root of a tree) last: their vertex is
   * touched by no other's forward step after its own, and read by the
   * back steps of earlier ones only, so the solve does each of them
   * between the two passes, its forward and back operations together, and
   * the passes run over the others alone. Kept in order both ways
   * (queue, scratch now, holds the vertices of those moved). */
  int nmain = 0, nroot = 0;
  if (t->rt_on) { /* each elimination's first update, and its place after the move */
    int m = 0, r = 0;
    for (int k = 0; k < nops; k++)
      m += !(t->op_u[k] < 0 && t->op_first[k] == t->op_first[k + 1]);
    for (int k = 0; k < nops; k++)
      t->fr_to[k] = t->op_u[k] < 0 && t->op_first[k] == t->op_first[k + 1] ? m + r++ : k - r;
    memcpy(t->fr_first, t->op_first, sizeof(int) * (size_t)(nops + 1));
  }
  for (int k = 0; k < nops; k++) {
    if (t->op_u[k] < 0 && t->op_first[k] == t->op_first[k + 1]) {
      queue[nroot++] = t->op_v[k];
      continue;
    }
    t->op_v[nmain] = t->op_v[k];
    t->op_u[nmain] = t->op_u[k];
    t->op_first[nmain] = t->op_first[k];
    t->op_r[nmain] = t->op_r[k];
    t->op_x[nmain] = t->op_x[k];
    t->op_s[nmain] = t->op_s[k];
    t->op_f[nmain] = t->op_f[k];
    t->op_b[nmain] = t->op_b[k];
    if (t->op_u[k] >= 0) { /* a pair's own */
      t->op_pa[nmain] = t->op_pa[k];
      t->op_pb[nmain] = t->op_pb[k];
    }
    nmain++;
  }
  for (int i = 0; i < nroot; i++) { /* as the loop above made them: 1 / d_v, no update */
    int k = nmain + i, v = queue[i];
    t->op_v[k] = t->op_r[k] = v;
    t->op_u[k] = -1;
    t->op_first[k] = t->op_x[k] = nup;
    t->op_s[k] = 1.0 / t->d[v]; /* d_v is final once v is eliminated */
    t->op_f[k] = t->op_b[k] = 0.0;
  }
  /* the pairs' eliminations in order, for the solve (deg is done with);
   * only a pair has more than one update, so the rest are all one kind */
  int npair = 0;
  for (int k = 0; k < nmain; k++)
    if (t->op_u[k] >= 0)
      t->parent[npair++] = k;
  t->parent[npair] = nmain; /* npair <= nv / 2: a pair removes two vertices */
  t->npair = npair;
  t->nmain = nmain;
  t->nops = nops;
  t->fr_ok = t->rt_on;
  /* the structure's hash (FNV-1a over its integers): the same for every
   * factor of a mode (the pattern of zero pivots is the inertias', not
   * κ's), which a compiled stage relies on and checks */
  t->shape = 0;
  t->factored = true;
  if (t->no_shape)
    return 0;
  const int counts[2] = {nops, nmain};
  size_t ops = sizeof(int) * (size_t)nops;
  uint64_t h = dgp_fnv1a((const unsigned char *)counts, sizeof counts);
  h = dgp_fnv1a_add(h, t->op_v, ops);
  h = dgp_fnv1a_add(h, t->op_u, ops);
  h = dgp_fnv1a_add(h, t->op_r, ops);
  h = dgp_fnv1a_add(h, t->op_x, ops);
  h = dgp_fnv1a_add(h, t->op_first + 1, ops);
  t->shape = dgp_fnv1a_add(h, t->upd_r, sizeof(int) * (size_t)nup);
  return 0;
}

/* The eliminations without updates (dgp_tree_factor puts them last): each
 * one's forward step, z_v / d_v − 0·(z_v / d_v) (its inline update is of
 * itself by 0), and its back step, the same subtraction again. Not
 * skipped: x − 0·x is x but at −0 (+0) and at inf (NaN), so the values
 * are bit for bit those of the steps in elimination order. */
static inline void tree_roots(const dg_tree_ws *t, double *z) {
  const int *op_v = t->op_v;
  const double *os = t->op_s, *of = t->op_f, *ob = t->op_b;
  for (int k = t->nmain, nops = t->nops; k < nops; k++) {
    int v = op_v[k];
    double zt = z[v] * os[k];
    zt -= of[k] * zt;
    zt -= ob[k] * zt;
    z[v] = zt;
  }
}

/* K z = b in place (z holds b on entry): the eliminations' updates
 * forward, those without updates, then the updates back. */
void dgp_tree_solve(const dg_tree_ws *t, double *z) {
  const int *op_v = t->op_v, *op_u = t->op_u, *op_r = t->op_r, *op_x = t->op_x;
  const int *first = t->op_first, *ur = t->upd_r;
  const double *os = t->op_s, *of = t->op_f, *ob = t->op_b, *uf = t->upd_f, *ub = t->upd_b;
  int nops = t->nmain; /* the passes over the eliminations with updates */
  if (t->simple) { /* the same operations without the pairs' and extra updates' branches */
    for (int k = 0; k < nops; k++) {
      int v = op_v[k];
      double zt = z[v] * os[k];
      z[v] = zt;
      z[op_r[k]] -= of[k] * zt;
    }
    tree_roots(t, z);
    for (int k = nops - 1; k >= 0; k--) {
      int v = op_v[k];
      z[v] -= ob[k] * z[op_r[k]];
    }
    return;
  }
  /* Runs of single eliminations (one update at most, the inline one)
   * between the pairs (listed in parent, then nops): the same operations
   * in the same order as op after op, with the pairs' branches and extra
   * updates' loops only where there are pairs. */
  const int *pair = t->parent;
  int npair = t->npair, k = 0;
  for (int j = 0;; j++) {
    for (int e = pair[j]; k < e; k++) {
      int v = op_v[k];
      double zt = z[v] * os[k]; /* z_v / d_v */
      z[v] = zt;
      z[op_r[k]] -= of[k] * zt;
    }
    if (k >= nops)
      break;
    int v = op_v[k]; /* a pair */
    double zt = z[v] * os[k]; /* its z_u */
    z[v] = zt;
    z[op_r[k]] -= of[k] * zt;
    for (int i = op_x[k]; i < first[k + 1]; i++)
      z[ur[i]] -= uf[i] * zt;
    k++;
  }
  tree_roots(t, z);
  k = nops - 1;
  for (int j = npair - 1;; j--) {
    for (int e = j >= 0 ? pair[j] : -1; k > e; k--) {
      int v = op_v[k];
      z[v] -= ob[k] * z[op_r[k]];
    }
    if (k < 0)
      break;
    int v = op_v[k], u = op_u[k]; /* a pair */
    double sum = z[u] * t->op_pa[k] - z[v] * t->op_pb[k];
    sum -= ob[k] * z[op_r[k]];
    for (int i = op_x[k]; i < first[k + 1]; i++)
      sum -= ub[i] * z[ur[i]];
    z[u] = z[v];
    z[v] = sum;
    k--;
  }
}

/* ---- the mode's system -------------------------------------------------- */

/* K's entries for the multipliers κ in kap (per mesh): at edge n→c,
 * K[n][c] = −(A + κ B) and K[c][n] = A. */
static void tree_values(dg_sim *sim, const double *kap) {
  dg_tree_ws *t = &sim->sv.tree;
  int nn = sim->nn;
  for (int v = 0; v < t->nv; v++)
    for (int e = t->start[v]; e < t->start[v + 1]; e++) {
      int c = v < nn ? t->nbr[e] - nn : v - nn;
      int j = t->con_mesh[c];
      double at = t->a[e] + (j >= 0 && kap ? kap[j] * t->b[e] : 0.0);
      if (v < nn) {
        t->kout[e] = -at;
        t->kin[e] = t->a[e];
      } else {
        t->kout[e] = t->a[e];
        t->kin[e] = -at;
      }
    }
}

/* dgp_tree_factor's values again for new values of K and the diagonal,
 * where the last factor recorded its eliminations (variable ratios): the
 * same eliminations in the same order, the same operations (the same
 * bits), without the peeling. -1 where a pivot is now zero where it was
 * not, or the other way (the caller factors in full). */
int dgp_tree_factor_values(dg_tree_ws *t) {
  int nops = t->nops;
  memcpy(t->d, t->diag0, sizeof(double) * (size_t)t->nv);
  t->factored = false;
  for (int k = 0; k < nops; k++) {
    int v = t->fr_v[k], e = t->fr_e[k], to = t->fr_to[k], i = t->fr_first[k];
    double dv = t->d[v];
    if (!isfinite(dv))
      return -1;
    if (!t->fr_pair[k]) {
      if (dv == 0.0)
        return -1;
      t->op_s[to] = 1.0 / dv;
      if (e >= 0) {
        int u = t->nbr[e];
        t->d[u] -= t->kin[e] * t->kout[e] / dv;
        t->upd_f[i] = t->kin[e];
        t->upd_b[i] = t->kout[e] / dv;
      }
    } else {
      if (dv != 0.0 || t->kout[e] == 0.0 || t->kin[e] == 0.0)
        return -1;
      int u = t->nbr[e];
      t->op_s[to] = 1.0 / t->kout[e];
      t->op_pa[to] = 1.0 / t->kin[e];
      t->op_pb[to] = t->d[u] / t->kin[e];
      for (int end = t->fr_first[k + 1]; i < end; i++) {
        int f = t->fu_e[i];
        t->upd_f[i] = t->kin[f];
        t->upd_b[i] = t->kout[f] / t->kin[e];
      }
    }
  }
  for (int k = 0; k < nops; k++) { /* the first update inline; none for the roots */
    bool any = k < t->nmain && t->op_x[k] > t->op_first[k];
    t->op_f[k] = any ? t->upd_f[t->op_first[k]] : 0.0;
    t->op_b[k] = any ? t->upd_b[t->op_first[k]] : 0.0;
  }
  t->factored = true;
  return 0;
}

/* Factors for kap (NULL: no losses), remembering it: the aliases'
 * inertias folded into the nodes they copy, the deepest first (c times
 * what crosses the link, c (1 + κ) I), then the vertices' diagonal. */
static int tree_refactor(dg_sim *sim, const double *kap) {
  dg_tree_ws *t = &sim->sv.tree;
  int m = sim->sv.ws.nmesh, nn = sim->nn;
  tree_values(sim, kap);
  for (int j = 0; j < m; j++)
    t->kap[j] = kap ? kap[j] : 0.0;
  memcpy(t->ieff, sim->sv.inertia, sizeof(double) * (size_t)nn);
  for (int i = 0; i < t->nalias; i++) {
    int j = t->al_mesh[i];
    t->al_g[i] = t->al_cup[i] * (1.0 + (j >= 0 ? t->kap[j] : 0.0));
    t->ieff[t->al_up[i]] += t->al_cup[i] * t->al_g[i] * t->ieff[t->al_node[i]];
  }
  for (int j = 0; j < m; j++)
    if (t->mesh_alias[j] >= 0)
      t->fm_ic[j] = t->ieff[t->al_node[t->mesh_alias[j]]] * t->al_c[t->mesh_alias[j]];
  memcpy(t->diag0, t->base, sizeof(double) * (size_t)t->nv);
  for (int v = 0; v < nn; v++)
    if (!t->gone[v])
      t->diag0[v] = t->ieff[v];
  if (t->fr_ok && !sim->tree_rebuild && dgp_tree_factor_values(t) == 0) {
    sim->tree_value_factors++;
    return 0;
  }
  return dgp_tree_factor(t);
}

/* Entry e's values a, b as add_entry leaves them: set when
 * the term begins the entry (fresh), else added (the values' refresh
 * replays the build's terms in its order: the same bits). */
static inline void set_or_add(double *ea, double *eb, int e, bool fresh, double a, double b) {
  if (fresh) {
    ea[e] = a;
    eb[e] = b;
  } else {
    ea[e] += a;
    eb[e] += b;
  }
}

/* One entry (constraint c, node n, A, side-b part) of A, merged with an
 * earlier one of the same pair; returns its index, *fresh whether it is
 * new. */
static int add_entry(dg_tree_ws *t, int *ne, int first, int c, int n, double a, double b,
                     bool *fresh) {
  int i = first;
  while (i < *ne && t->ent_n[i] != n)
    i++;
  *fresh = i == *ne;
  if (*fresh) {
    t->ent_c[i] = c;
    t->ent_n[i] = n;
    (*ne)++;
  }
  set_or_add(t->ent_a, t->ent_b, i, *fresh, a, b);
  return i;
}

/* A term of A as the build adds it (add_entry), recorded for the values'
 * refresh where the ratios vary: the link term whose −c it is (coef >= 0)
 * or its constant values. */
static void add_term(dg_tree_ws *t, int *ne, int first, int c, int n, double a, double b,
                     int coef) {
  bool fresh;
  int e = add_entry(t, ne, first, c, n, a, b, &fresh);
  if (!t->rt_on)
    return;
  int i = t->nrt++;
  t->rt_ent[i] = e;
  t->rt_new[i] = fresh;
  t->rt_coef[i] = coef;
  t->rt_a[i] = a;
  t->rt_b[i] = b;
}

/* The aliases of the mode (dg_tree_ws). A link with one source,
 * x_dst = c x_src, makes dst a copy of src. A lossy one (a mesh) is
 * folded too where nothing in dst's subtree (dst and the copies below
 * it) touches a constraint: its load is then that subtree's balance,
 * I_eff ẍ_dst − w_eff, taken after the solve, and what crosses it is
 * scaled by 1 + κ (side b's, as in Ã). Where something does, the link
 * stays a constraint, which touches dst and src in turn: repeated until
 * nothing changes. Fills gone, al_*, mesh_alias; returns per link its
 * constraint (-1: an alias), in scratch of the factor. */
static int *find_aliases(dg_sim *sim) {
  const dg_topo_ws *ws = &sim->sv.ws;
  dg_tree_ws *t = &sim->sv.tree;
  int nn = sim->nn, nl = ws->nlinks;
  /* scratch of the factor, per node or per link (nv >= both) */
  int *lcon = t->parent, *up = t->order, *lk = t->op_v, *touch = t->op_u, *depth = t->step;
  int *dirty = t->op_first, *ord = t->op_r, *lmesh = t->op_x, *count = t->upd_r;
  double *c_up = t->d;
  for (int k = 0; k < nl; k++)
    lmesh[k] = -1;
  for (int j = 0; j < ws->nmesh; j++)
    if (ws->mesh_link[j] >= 0)
      lmesh[ws->mesh_link[j]] = j;
  for (int n = 0; n < nn; n++) {
    up[n] = -1;
    touch[n] = 0;
  }
  for (int k = 0; k < nl; k++) {
    int f = ws->link_first[k];
    if (ws->link_n[k] == 1) {
      up[ws->link_dst[k]] = ws->link_src[f];
      c_up[ws->link_dst[k]] = ws->link_coef[f];
      lk[ws->link_dst[k]] = k;
    } else {
      touch[ws->link_dst[k]] = 1;
      for (int i = f; i < f + ws->link_n[k]; i++)
        touch[ws->link_src[i]] = 1;
    }
  }
  for (int a = 0; a < ws->nactive; a++) {
    const dg_tie *tie = &ws->ties[ws->active_tie[a]];
    for (int i = tie->first; i < tie->first + tie->n; i++)
      touch[ws->tie_node[i]] = 1;
  }
  int maxd;
  for (;;) {
    /* depths (a node's path up, each node once), the deepest first */
    maxd = 0;
    for (int n = 0; n < nn; n++)
      depth[n] = up[n] < 0 ? 0 : -1;
    for (int n = 0; n < nn; n++) {
      int len = 0, r = n;
      while (depth[r] < 0) {
        ord[len++] = r;
        r = up[r];
      }
      while (len > 0) {
        int q = ord[--len];
        depth[q] = depth[up[q]] + 1;
        maxd = depth[q] > maxd ? depth[q] : maxd;
      }
    }
    for (int d = 0; d <= maxd + 1; d++)
      count[d] = 0;
    for (int n = 0; n < nn; n++)
      count[maxd - depth[n] + 1]++;
    for (int d = 0; d <= maxd; d++)
      count[d + 1] += count[d];
    for (int n = 0; n < nn; n++)
      ord[count[maxd - depth[n]]++] = n;
    /* a subtree touching a constraint is dirty; a lossy link under one stays */
    for (int n = 0; n < nn; n++)
      dirty[n] = touch[n];
    for (int i = 0; i < nn; i++) {
      int n = ord[i];
      if (up[n] >= 0 && dirty[n])
        dirty[up[n]] = 1;
    }
    bool changed = false;
    for (int n = 0; n < nn; n++)
      if (up[n] >= 0 && lmesh[lk[n]] >= 0 && dirty[n]) {
        touch[n] = touch[up[n]] = 1;
        up[n] = -1;
        changed = true;
      }
    if (!changed)
      break;
  }
  for (int k = 0, c = 0; k < nl; k++) {
    int dst = ws->link_dst[k];
    lcon[k] = ws->link_n[k] == 1 && up[dst] >= 0 && lk[dst] == k ? -1 : c++;
  }
  for (int j = 0; j < ws->nmesh; j++)
    t->mesh_alias[j] = -1;
  /* per alias, the deepest first (ord): its up node, c, mesh, root and C */
  double *c_root = t->z;
  int *root = dirty;
  for (int i = nn - 1; i >= 0; i--) { /* the shallowest first: the roots' first */
    int n = ord[i];
    root[n] = up[n] < 0 ? n : root[up[n]];
    c_root[n] = up[n] < 0 ? 1.0 : c_up[n] * c_root[up[n]];
  }
  t->nalias = 0;
  for (int i = 0; i < nn; i++) {
    int n = ord[i];
    t->gone[n] = up[n] >= 0;
    if (!t->gone[n])
      continue;
    int a = t->nalias++;
    t->al_node[a] = n;
    t->al_up[a] = up[n];
    t->al_cup[a] = c_up[n];
    t->al_root[a] = root[n];
    t->al_c[a] = c_root[n];
    t->al_mesh[a] = lmesh[lk[n]];
    if (t->rt_on)
      t->al_link[a] = lk[n];
    if (t->al_mesh[a] >= 0)
      t->mesh_alias[t->al_mesh[a]] = a;
  }
  if (t->rt_on) {       /* per alias, its up node's alias (for the values' refresh) */
    int *where = depth; /* scratch, done with */
    for (int a = 0; a < t->nalias; a++)
      where[t->al_node[a]] = a;
    for (int a = 0; a < t->nalias; a++)
      t->al_upa[a] = t->gone[t->al_up[a]] ? where[t->al_up[a]] : -1;
  }
  return lcon;
}

/* The entries of A at an alias moved to its root (times c), merged with
 * one of the same constraint there; returns the count left. */
static int alias_entries(dg_tree_ws *t, int ne) {
  if (t->rt_on) /* the entries before the move, for the values' refresh */
    for (int i = 0; i < ne; i++) {
      t->pe_n[i] = t->ent_n[i];
      t->pe_a[i] = t->ent_a[i];
      t->pe_b[i] = t->ent_b[i];
      t->pe_to[i] = i;
      t->pe_al[i] = -1;
      t->pe_new[i] = true;
    }
  t->npe = t->rt_on ? ne : 0;
  if (t->nalias == 0)
    return ne;
  int *where = t->order; /* per node: its alias's index */
  for (int i = 0; i < t->nalias; i++)
    where[t->al_node[i]] = i;
  int out = 0;
  for (int i = 0, first = 0, prev = -1; i < ne; i++) {
    int n = t->ent_n[i], c = t->ent_c[i];
    if (c != prev) /* a constraint's entries are together */
      first = out;
    prev = c;
    double s = 1.0;
    int al = -1;
    if (t->gone[n]) {
      al = where[n];
      s = t->al_c[al];
      n = t->al_root[al];
    }
    bool fresh;
    int e = add_entry(t, &out, first, c, n, s * t->ent_a[i], s * t->ent_b[i], &fresh);
    if (t->rt_on) {
      t->pe_to[i] = e;
      t->pe_al[i] = al;
      t->pe_new[i] = fresh;
    }
  }
  return out;
}

/* Each mesh's rows (tree ws: mesh_first … mesh_b) from the entries of A
 * before the aliases move (constraint c's in [cfirst[c], cfirst[c+1]) of
 * en, ea, eb) and the folded links' coefficients. */
static void mesh_rows(dg_sim *sim, const int *cfirst, const int *en, const double *ea,
                      const double *eb) {
  const dg_topo_ws *ws = &sim->sv.ws;
  dg_tree_ws *t = &sim->sv.tree;
  int k = 0, kb = 0;
  for (int j = 0; j < ws->nmesh; j++) {
    int c = t->mesh_con[j], l = ws->mesh_link[j];
    t->mesh_first[j] = k;
    t->mesh_bfirst[j] = kb;
    if (t->mesh_alias[j] >= 0) { /* a folded link: side a its dst, side b its source */
      t->mesh_node[k] = ws->link_dst[l];
      t->mesh_ab[k++] = 1.0;
      t->mesh_bnode[kb] = ws->link_src[ws->link_first[l]];
      t->mesh_b[kb++] = -ws->link_coef[ws->link_first[l]];
    }
    for (int i = c >= 0 ? cfirst[c] : 0; c >= 0 && i < cfirst[c + 1]; i++) {
      if (ea[i] - eb[i] != 0.0) {
        t->mesh_node[k] = en[i];
        t->mesh_ab[k++] = ea[i] - eb[i];
      }
      if (eb[i] != 0.0) {
        t->mesh_bnode[kb] = en[i];
        t->mesh_b[kb++] = eb[i];
      }
    }
  }
  t->mesh_first[ws->nmesh] = k;
  t->mesh_bfirst[ws->nmesh] = kb;
}

/* Whether the tree is the cheaper ACCEL stage: the dense stage's
 * multiply-adds (B or M⁻¹, the mesh system) against the tree's vertices
 * and entries, with the weight measured on the families of
 * scripts/scaling.py and the bench graphs (callgrind and time; the
 * dense stage's products vectorize, the tree's solve is indirect): the
 * tree wins where dense > 0.5 tree (chains of 8 lossy gears, trees of 16
 * differentials, 8 spring-dampers, the 8x8 truck), the dense stage below
 * (the axle, the sedan, awd_3diff: within 10 % of each other there). */
static bool tree_pays(const dg_sim *sim, int nentries) {
  const dg_solver *sv = &sim->sv;
  double nd = sv->ndof, nn = sim->nn, m = sv->ws.nmesh;
  double dense = sv->use_B ? nd * nn : sv->nnz + nd * nd;
  if (m > 0)
    dense += m * (nn + 3.0 * nd) + (m > 2 ? m * m * m / 3.0 + m * m : 4.0 * m);
  double tree = 4.0 * (nn + sv->tree.ncon) + 6.0 * nentries + 8.0 * m;
  return dense > 0.5 * tree;
}

/* Builds the mode's system after the dense plan (plan.c): on when the mode
 * has no prescribed speeds, a forest of nodes and constraints, a DOF per
 * node and a regular K, and the tree is the cheaper stage (or the tests ask
 * for it). With variable ratios (a CVT) it is built again from the new
 * coefficients at each refresh (kin.c), with the inertial force −I Ġ q of
 * the changing ratios among the torques it solves for (and factored for
 * the κ of the meshes' directions, kap, which the stage keeps): K z = [w − I Ġ q; 0]
 * gives the ẍ' = G q̈ in range(G) with Gᵀ(I ẍ' − w + I Ġ q) = 0, the q̈ of
 * the dense stage, and the same multipliers. */
void dgp_tree_build(dg_sim *sim, const double *kap) {
  dg_solver *sv = &sim->sv;
  dg_topo_ws *ws = &sv->ws;
  dg_tree_ws *t = &sv->tree;
  int nn = sim->nn;
  t->on = false;
  t->factored = false;
  t->held = false;
  t->tables = false;
  t->no_shape = sv->variable_kinematics; /* never compiled (compile.c) */
  /* with variable ratios, how A's values are made is recorded for the
   * refreshes (dgp_tree_refresh) */
  t->rt_on = sv->variable_kinematics;
  t->rt_ok = false;
  t->fr_ok = false;
  t->nrt = 0;
  for (int j = 0; j < ws->nmesh; j++)
    t->tables = t->tables || ws->mesh_tab_a[j] || ws->mesh_tab_b[j];
  if (sv->mot.np > 0 || !ws->links_complete || sim->in_check)
    return;
  if (nn - (ws->nlinks + ws->nactive) != sv->ndof)
    return;
  t->nn = nn;
  int *lcon = find_aliases(sim); /* per link: its constraint, -1 for an alias */
  int nkept = 0;
  for (int k = 0; k < ws->nlinks; k++)
    nkept += lcon[k] >= 0;
  int K = nkept + ws->nactive;
  t->ncon = K;
  t->nv = nn + K;
  /* the entries of A by constraint: links (not aliases), then active ties */
  int ne = 0;
  for (int k = 0; k < ws->nlinks; k++) {
    int first = ne, c = lcon[k];
    if (c < 0)
      continue;
    add_term(t, &ne, first, c, ws->link_dst[k], 1.0, 0.0, -1);
    for (int i = ws->link_first[k], e = i + ws->link_n[k]; i < e; i++)
      add_term(t, &ne, first, c, ws->link_src[i], -ws->link_coef[i], -ws->link_coef[i], i);
  }
  for (int a = 0; a < ws->nactive; a++) {
    const dg_tie *tie = &ws->ties[ws->active_tie[a]];
    int first = ne;
    for (int i = tie->first; i < tie->first + tie->n; i++)
      add_term(t, &ne, first, nkept + a, ws->tie_node[i], ws->tie_coef[i],
               tie->mesh >= 0 ? ws->tie_coef[i] - ws->tie_acoef[i] : 0.0, -1);
  }
  for (int c = 0; c < K; c++)
    t->con_mesh[c] = -1;
  for (int j = 0; j < ws->nmesh; j++) {
    int k = ws->mesh_link[j], tie = ws->mesh_tie[j];
    int c = k >= 0 ? lcon[k] : ws->ties[tie].active >= 0 ? nkept + ws->ties[tie].active : -1;
    t->mesh_con[j] = c;
    if (c >= 0)
      t->con_mesh[c] = j;
  }
  /* each mesh's entries in a row of their own, for the stages' dot
   * products with node speeds and accelerations: at the nodes themselves
   * (an alias's acceleration is written back after each solve) */
  int *cfirst = t->op_first; /* scratch: constraint c's entries [cfirst[c], cfirst[c+1]) */
  for (int c = 0, i = 0; c <= K; c++) {
    cfirst[c] = i;
    while (i < ne && t->ent_c[i] == c)
      i++;
  }
  if (t->rt_on)
    memcpy(t->pe_cfirst, cfirst, sizeof(int) * (size_t)(K + 1));
  mesh_rows(sim, cfirst, t->ent_n, t->ent_a, t->ent_b);
  t->all_folded = ws->nmesh > 0;
  for (int j = 0; j < ws->nmesh; j++) {
    int a = t->mesh_alias[j];
    t->all_folded = t->all_folded && a >= 0;
    if (a >= 0)
      t->fm_root[j] = t->al_root[a];
  }
  ne = alias_entries(t, ne); /* the entries at an alias moved to its root */
  /* the graph: each entry an edge both ways, by vertex */
  memset(t->start, 0, sizeof(int) * (size_t)(t->nv + 1));
  for (int i = 0; i < ne; i++) {
    t->start[t->ent_n[i] + 1]++;
    t->start[nn + t->ent_c[i] + 1]++;
  }
  for (int v = 0; v < t->nv; v++)
    t->start[v + 1] += t->start[v];
  int *fill = t->step; /* scratch: the next free edge of each vertex */
  memcpy(fill, t->start, sizeof(int) * (size_t)t->nv);
  for (int i = 0; i < ne; i++) {
    int n = t->ent_n[i], c = nn + t->ent_c[i];
    int en = fill[n]++, ec = fill[c]++;
    if (t->rt_on) {
      t->fe_en[i] = en;
      t->fe_ec[i] = ec;
    }
    t->nbr[en] = c;
    t->nbr[ec] = n;
    t->a[en] = t->a[ec] = t->ent_a[i];
    t->b[en] = t->b[ec] = t->ent_b[i];
  }
  t->ne = 2 * ne;
  /* each DOF the speed of one node */
  for (int j = 0; j < sv->ndof; j++) {
    int node = ws->raw_node[ws->col_raw[j]];
    int r = sv->row_start[node];
    if (sv->row_start[node + 1] != r + 1 || sv->gs_dof[r] != j || sv->gs_val[r] != 1.0)
      return;
    t->dof_node[j] = node;
  }
  for (int v = 0; v < t->nv; v++)
    t->base[v] = v < nn && !t->gone[v] ? sv->inertia[v] : 0.0;
  if (sim->tree_never || (!sim->tree_always && !tree_pays(sim, ne)))
    return;
  if (tree_refactor(sim, kap) != 0)
    return;
  t->on = true;
  t->rt_ok = t->rt_on;
}

/* A refresh of a mode on the tree whose ratios vary (kin.c): the same
 * structure, A's values made again from the links' new coefficients as
 * the build made them (the terms it recorded, in its order: the same
 * bits), the meshes' rows, then the factor for kap. Falls back to the
 * build where nothing was recorded (or the tests ask for it). */
void dgp_tree_refresh(dg_sim *sim, const double *kap) {
  dg_tree_ws *t = &sim->sv.tree;
  if (!t->on || !t->rt_ok || sim->tree_rebuild) {
    dgp_tree_build(sim, kap);
    return;
  }
  const dg_topo_ws *ws = &sim->sv.ws;
  const double *coef = ws->link_coef;
  t->factored = false;
  t->held = false;
  /* the aliases' c and C, the shallowest first (C = c times its up
   * node's C, 1 at a root) */
  for (int a = t->nalias - 1; a >= 0; a--) {
    t->al_cup[a] = coef[ws->link_first[t->al_link[a]]];
    t->al_c[a] = t->al_cup[a] * (t->al_upa[a] >= 0 ? t->al_c[t->al_upa[a]] : 1.0);
  }
  /* A's entries before the aliases move, term by term */
  for (int i = 0; i < t->nrt; i++) {
    int k = t->rt_coef[i], e = t->rt_ent[i];
    double a = k >= 0 ? -coef[k] : t->rt_a[i], b = k >= 0 ? -coef[k] : t->rt_b[i];
    set_or_add(t->pe_a, t->pe_b, e, t->rt_new[i], a, b);
  }
  mesh_rows(sim, t->pe_cfirst, t->pe_n, t->pe_a, t->pe_b);
  /* ... moved to the aliases' roots (times C) */
  for (int i = 0; i < t->npe; i++) {
    int e = t->pe_to[i], al = t->pe_al[i];
    double s = al >= 0 ? t->al_c[al] : 1.0;
    set_or_add(t->ent_a, t->ent_b, e, t->pe_new[i], s * t->pe_a[i], s * t->pe_b[i]);
  }
  /* ... on the graph's edges, both ways */
  for (int i = 0; i < t->ne / 2; i++) {
    t->a[t->fe_en[i]] = t->a[t->fe_ec[i]] = t->ent_a[i];
    t->b[t->fe_en[i]] = t->b[t->fe_ec[i]] = t->ent_b[i];
  }
  sim->tree_value_refreshes++;
  if (tree_refactor(sim, kap) != 0)
    t->on = false; /* the caller builds in full */
}

/* Mesh j's side a dotted with a node vector x, and side b into *bx, over
 * its constraint's entries (side a's coefficient A − B, side b's B). */
static inline double mesh_dot(const dg_tree_ws *t, int j, const double *x, double *bx) {
  if (t->all_folded) { /* rows of one entry each, j's at j */
    *bx = t->mesh_b[j] * x[t->mesh_bnode[j]];
    return t->mesh_ab[j] * x[t->mesh_node[j]];
  }
  double ax = 0.0, b = 0.0;
  for (int e = t->mesh_first[j]; e < t->mesh_first[j + 1]; e++)
    ax += t->mesh_ab[e] * x[t->mesh_node[e]];
  for (int e = t->mesh_bfirst[j]; e < t->mesh_bfirst[j + 1]; e++)
    b += t->mesh_b[e] * x[t->mesh_bnode[e]];
  *bx = b;
  return ax;
}

/* z = K⁻¹ [w; 0] for the current factor. */
static void tree_stage_solve(dg_sim *sim, const double *w) {
  dg_tree_ws *t = &sim->sv.tree;
  double *z = t->z;
  const int *an = t->al_node, *au = t->al_up;
  const double *ag = t->al_g;
  memcpy(z, w, sizeof(double) * (size_t)sim->nn);
  memset(z + sim->nn, 0, sizeof(double) * (size_t)t->ncon);
  for (int i = 0, na = t->nalias; i < na; i++) /* an alias's torque, its subtree's in it, at its up node */
    z[au[i]] += ag[i] * z[an[i]];
  dgp_tree_solve(t, z);
}

/* Mesh j's multiplier after a solve: its constraint's, or a folded link's
 * from its dst's balance, I_eff C ẍ_root − w_eff (z at an alias still
 * holds w_eff, until tree_unfold; the dst is side a's one entry). */
static inline double mesh_lambda(const dg_tree_ws *t, int j) {
  int c = t->mesh_con[j], a = t->mesh_alias[j];
  if (c >= 0)
    return t->z[t->nn + c];
  if (a < 0)
    return 0.0;
  return t->fm_ic[j] * t->z[t->fm_root[j]] - t->z[t->mesh_node[t->mesh_first[j]]];
}

/* The meshes' powers p_j = λ_j (a·x), their loss torques κ_j λ_j b_j added
 * to w, for the multipliers in loss.lam. Returns the loss power (≤ 0).
 * Side b is read (b·x) and written (w += f b) in one pass, and only where
 * the mesh loses something (f ≠ 0: b·x is for the loss power alone); x
 * and w are apart, so the values are those of mesh_dot and of adding
 * f b_j after it. */
static double mesh_pass(dg_sim *sim, double *w) {
  dg_solver *sv = &sim->sv;
  const dg_tree_ws *t = &sv->tree;
  const double *x = sv->xw, *lam = sv->loss.lam, *kap = sv->loss.kap;
  const double *mab = t->mesh_ab, *mb = t->mesh_b;
  const int *mn = t->mesh_node, *mbn = t->mesh_bnode;
  double p_loss = 0.0;
  for (int j = 0, m = sv->ws.nmesh; j < m; j++) {
    double ax, bx;
    if (t->all_folded) { /* rows of one entry each, j's at j */
      ax = mab[j] * x[mn[j]];
    } else {
      ax = 0.0;
      for (int e = t->mesh_first[j]; e < t->mesh_first[j + 1]; e++)
        ax += mab[e] * x[mn[e]];
    }
    sv->loss.p[j] = lam[j] * ax;
    double f = kap[j] * lam[j];
    if (f == 0.0)
      continue;
    if (t->all_folded) {
      int n = mbn[j];
      bx = mb[j] * x[n];
      w[n] += f * mb[j];
    } else {
      bx = 0.0;
      for (int e = t->mesh_bfirst[j]; e < t->mesh_bfirst[j + 1]; e++) {
        int n = mbn[e];
        bx += mb[e] * x[n];
        w[n] += f * mb[e];
      }
    }
    p_loss += f * bx;
  }
  return p_loss;
}

/* The aliases' accelerations after a solve, c times their roots' (only a
 * mesh at rest reads them: the DOFs' nodes are never aliases). */
static void tree_unfold(dg_tree_ws *t) {
  for (int i = 0; i < t->nalias; i++)
    t->z[t->al_node[i]] = t->al_c[i] * t->z[t->al_root[i]];
}

/* The ACCEL stage inside a segment whose κ is held (constant
 * efficiencies, the factor of the directions its first stage took): one
 * solve, then per mesh its multiplier, its power and its loss torques in
 * one pass. The same operations as dgp_tree_accel's, in one loop. */
static double tree_accel_held(dg_sim *sim, double *dq, double *w) {
  dg_solver *sv = &sim->sv;
  const dg_tree_ws *t = &sv->tree;
  int m = sv->ws.nmesh;
  const double *z = t->z;
  double *lam = sv->loss.lam;
  tree_stage_solve(sim, w);
  for (int j = 0; j < sv->ndof; j++)
    dq[j] = z[t->dof_node[j]];
  if (!t->all_folded) {
    for (int j = 0; j < m; j++)
      lam[j] = mesh_lambda(t, j);
    return mesh_pass(sim, w);
  }
  /* a chain of gears: each load from its fold, side a its dst (coefficient
   * 1), side b its source, each row one entry at j: all in one pass */
  const double *x = sv->xw, *kap = sv->loss.kap, *fic = t->fm_ic, *mb = t->mesh_b;
  const int *mn = t->mesh_node, *mbn = t->mesh_bnode, *fr = t->fm_root;
  double *p = sv->loss.p, p_loss = 0.0;
  for (int j = 0; j < m; j++) {
    int n = mn[j], src = mbn[j];
    double l = fic[j] * z[fr[j]] - z[n];
    lam[j] = l;
    p[j] = l * x[n];
    double f = kap[j] * l;
    if (f == 0.0)
      continue;
    double bx = mb[j] * x[src];
    w[src] += f * mb[j];
    p_loss += f * bx;
  }
  return p_loss;
}

/* The ACCEL stage on the tree: q̇ into dq with the lossy meshes' loss
 * torques, which are added to w; the directions of power flow chosen as
 * dgp_loss_apply chooses them (the same iteration, each pass one solve,
 * refactored only when κ changes). Returns the loss power (≤ 0). */
double dgp_tree_accel(dg_sim *sim, double *dq, double *w) {
  dg_solver *sv = &sim->sv;
  dg_tree_ws *t = &sv->tree;
  const dg_topo_ws *ws = &sv->ws;
  int m = ws->nmesh;
  const double *x = sv->xw, *z = t->z;
  double *lam = sv->loss.lam, *kap = sv->loss.kap;
  int *dir = sv->loss.dir;
  if (m > 0 && sv->loss.hold && t->held) /* inside a segment: κ and the factor as they are */
    return tree_accel_held(sim, dq, w);
  if (m == 0) {
    if (!t->factored) /* a mode taken from the cache: the pivots are another's */
      tree_refactor(sim, NULL);
    tree_stage_solve(sim, w);
  } else {
    for (int j = 0; t->tables && j < m; j++) { /* efficiencies over speed: κ at side a's speed */
      const dg_table1d *ta = ws->mesh_tab_a[j], *tb = ws->mesh_tab_b[j];
      if (!ta && !tb)
        continue;
      double bx, v = mesh_dot(t, j, x, &bx);
      if (tb)
        sv->loss.kf[j] = 1.0 / dg_table1d_eval(tb, fabs(v)) - 1.0;
      if (ta)
        sv->loss.kb[j] = dg_table1d_eval(ta, fabs(v)) - 1.0;
    }
    int iterations = sv->loss.hold ? 1 : 2 * m + 3;
    /* inside a segment, with constant efficiencies, κ stays that of the
     * directions its first stage took (held) */
    bool keep = sv->loss.hold && t->held;
    t->held = false;
    for (int it = 0; it < iterations; it++) {
      bool same_kap = t->factored;
      for (int j = 0; !keep && j < m; j++) {
        kap[j] = dgp_mesh_kappa(sv, j);
        same_kap = same_kap && kap[j] == t->kap[j];
      }
      bool failed = !keep && !same_kap && tree_refactor(sim, kap) != 0;
      if (failed) { /* no loss rather than a blow-up (as dgp_loss_apply) */
        for (int j = 0; j < m; j++)
          kap[j] = 0.0;
        tree_refactor(sim, kap);
      }
      tree_stage_solve(sim, w);
      for (int j = 0; j < m; j++)
        lam[j] = mesh_lambda(t, j);
      if (failed || sv->loss.hold)
        break;
      bool same = true, unfolded = false;
      for (int j = 0; j < m; j++) {
        double bx, v = mesh_dot(t, j, x, &bx);
        if (v == 0.0) { /* at rest: the power about to flow */
          if (!unfolded)
            tree_unfold(t);
          unfolded = true;
          v = mesh_dot(t, j, z, &bx);
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
    t->held = !t->tables && t->factored;
  }
  for (int j = 0; j < sv->ndof; j++)
    dq[j] = z[t->dof_node[j]];
  return mesh_pass(sim, w);
}

/* The arrays this room owns (buffers.c). */
/* The arrays of this room (buffers.c): meaningful only while the mode's
 * ACCEL stage is on the tree (t->on), so a snapshot of another mode skips
 * them. */
void dgp_tree_buffers(dg_sim *sim, dgp_buf_list *l) {
  const dg_topo_ws *ws = &sim->sv.ws;
  dg_tree_ws *t = &sim->sv.tree;
  size_t nn = (size_t)sim->nn;
  size_t nv = nn + (size_t)ws->max_links + (size_t)ws->max_ties;
  size_t nent = (size_t)ws->max_links + 2 * (size_t)ws->max_terms;
  size_t ncon = (size_t)ws->max_links + (size_t)ws->max_ties;
  dgp_buf_add_plan_live(l, &t->start, nv + 1, sizeof(int), &t->on);
  dgp_buf_add_plan_live(l, &t->nbr, 2 * nent, sizeof(int), &t->on);
  dgp_buf_add_plan_live(l, &t->a, 2 * nent, sizeof(double), &t->on);
  dgp_buf_add_plan_live(l, &t->b, 2 * nent, sizeof(double), &t->on);
  dgp_buf_add_live(l, &t->kout, 2 * nent, sizeof(double), &t->on);
  dgp_buf_add_live(l, &t->kin, 2 * nent, sizeof(double), &t->on);
  dgp_buf_add_plan_live(l, &t->con_mesh, ncon, sizeof(int), &t->on);
  dgp_buf_add_plan_live(l, &t->mesh_con, nn, sizeof(int), &t->on);
  dgp_buf_add_plan_live(l, &t->mesh_first, nn + 1, sizeof(int), &t->on);
  dgp_buf_add_plan_live(l, &t->mesh_node, nent, sizeof(int), &t->on);
  dgp_buf_add_plan_live(l, &t->mesh_ab, nent, sizeof(double), &t->on);
  dgp_buf_add_plan_live(l, &t->mesh_b, nent, sizeof(double), &t->on);
  dgp_buf_add_plan_live(l, &t->mesh_bfirst, nn + 1, sizeof(int), &t->on);
  dgp_buf_add_plan_live(l, &t->mesh_bnode, nent, sizeof(int), &t->on);
  dgp_buf_add_plan_live(l, &t->dof_node, nn, sizeof(int), &t->on);
  dgp_buf_add_plan_live(l, &t->gone, nn, sizeof(bool), &t->on);
  dgp_buf_add_plan_live(l, &t->al_node, nn, sizeof(int), &t->on);
  dgp_buf_add_plan_live(l, &t->al_root, nn, sizeof(int), &t->on);
  dgp_buf_add_plan_live(l, &t->al_c, nn, sizeof(double), &t->on);
  dgp_buf_add_plan_live(l, &t->al_up, nn, sizeof(int), &t->on);
  dgp_buf_add_plan_live(l, &t->al_mesh, nn, sizeof(int), &t->on);
  dgp_buf_add_plan_live(l, &t->al_cup, nn, sizeof(double), &t->on);
  dgp_buf_add_plan_live(l, &t->mesh_alias, nn, sizeof(int), &t->on);
  dgp_buf_add_plan_live(l, &t->fm_root, nn, sizeof(int), &t->on);
  dgp_buf_add_live(l, &t->fm_ic, nn, sizeof(double), &t->on);
  dgp_buf_add_plan_live(l, &t->base, nv, sizeof(double), &t->on);
  dgp_buf_add_live(l, &t->al_g, nn, sizeof(double), &t->on);
  dgp_buf_add_live(l, &t->ieff, nn, sizeof(double), &t->on);
  dgp_buf_add_live(l, &t->diag0, nv, sizeof(double), &t->on);
  dgp_buf_add_live(l, &t->d, nv, sizeof(double), &t->on);
  dgp_buf_add_plan_live(l, &t->order, nv, sizeof(int), &t->on);
  dgp_buf_add_plan_live(l, &t->parent, nv, sizeof(int), &t->on);
  dgp_buf_add_plan_live(l, &t->step, nv, sizeof(int), &t->on);
  dgp_buf_add_plan_live(l, &t->op_v, nv, sizeof(int), &t->on);
  dgp_buf_add_plan_live(l, &t->op_u, nv, sizeof(int), &t->on);
  dgp_buf_add_plan_live(l, &t->op_first, nv + 1, sizeof(int), &t->on);
  dgp_buf_add_plan_live(l, &t->op_r, nv, sizeof(int), &t->on);
  dgp_buf_add_plan_live(l, &t->op_x, nv, sizeof(int), &t->on);
  dgp_buf_add_live(l, &t->op_f, nv, sizeof(double), &t->on);
  dgp_buf_add_live(l, &t->op_b, nv, sizeof(double), &t->on);
  dgp_buf_add_live(l, &t->op_s, nv, sizeof(double), &t->on);
  dgp_buf_add_live(l, &t->op_pa, nv, sizeof(double), &t->on);
  dgp_buf_add_live(l, &t->op_pb, nv, sizeof(double), &t->on);
  /* structure, as op_v … op_x: the mode's (a compiled mode's updates are
   * written from its slot's, compile.c write_tree) */
  dgp_buf_add_plan_live(l, &t->upd_r, 2 * nent, sizeof(int), &t->on);
  dgp_buf_add_live(l, &t->upd_f, 2 * nent, sizeof(double), &t->on);
  dgp_buf_add_live(l, &t->upd_b, 2 * nent, sizeof(double), &t->on);
  dgp_buf_add_live(l, &t->z, nv, sizeof(double), &t->on);
  dgp_buf_add_live(l, &t->kap, nn, sizeof(double), &t->on);
  dgp_buf_add_plan_live(l, &t->ent_c, nent, sizeof(int), &t->on);
  dgp_buf_add_plan_live(l, &t->ent_n, nent, sizeof(int), &t->on);
  dgp_buf_add_plan_live(l, &t->ent_a, nent, sizeof(double), &t->on);
  dgp_buf_add_plan_live(l, &t->ent_b, nent, sizeof(double), &t->on);
  /* the build's record for the values' refresh: variable ratios only */
  size_t var = sim->sv.variable_kinematics ? 1 : 0;
  dgp_buf_add_plan_live(l, &t->rt_ent, var * nent, sizeof(int), &t->on);
  dgp_buf_add_plan_live(l, &t->rt_coef, var * nent, sizeof(int), &t->on);
  dgp_buf_add_plan_live(l, &t->rt_new, var * nent, sizeof(bool), &t->on);
  dgp_buf_add_plan_live(l, &t->rt_a, var * nent, sizeof(double), &t->on);
  dgp_buf_add_plan_live(l, &t->rt_b, var * nent, sizeof(double), &t->on);
  dgp_buf_add_plan_live(l, &t->pe_n, var * nent, sizeof(int), &t->on);
  dgp_buf_add_plan_live(l, &t->pe_to, var * nent, sizeof(int), &t->on);
  dgp_buf_add_plan_live(l, &t->pe_al, var * nent, sizeof(int), &t->on);
  dgp_buf_add_plan_live(l, &t->pe_new, var * nent, sizeof(bool), &t->on);
  dgp_buf_add_live(l, &t->pe_a, var * nent, sizeof(double), &t->on);
  dgp_buf_add_live(l, &t->pe_b, var * nent, sizeof(double), &t->on);
  dgp_buf_add_plan_live(l, &t->pe_cfirst, var * (ncon + 1), sizeof(int), &t->on);
  dgp_buf_add_plan_live(l, &t->fe_en, var * nent, sizeof(int), &t->on);
  dgp_buf_add_plan_live(l, &t->fe_ec, var * nent, sizeof(int), &t->on);
  dgp_buf_add_plan_live(l, &t->al_link, var * nn, sizeof(int), &t->on);
  dgp_buf_add_plan_live(l, &t->al_upa, var * nn, sizeof(int), &t->on);
  dgp_buf_add_plan_live(l, &t->fr_v, var * nv, sizeof(int), &t->on);
  dgp_buf_add_plan_live(l, &t->fr_e, var * nv, sizeof(int), &t->on);
  dgp_buf_add_plan_live(l, &t->fr_to, var * nv, sizeof(int), &t->on);
  dgp_buf_add_plan_live(l, &t->fr_first, var * (nv + 1), sizeof(int), &t->on);
  dgp_buf_add_plan_live(l, &t->fr_pair, var * nv, sizeof(bool), &t->on);
  dgp_buf_add_plan_live(l, &t->fu_e, var * 2 * nent, sizeof(int), &t->on);
}
