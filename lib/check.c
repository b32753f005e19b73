/* Loading and validating a graph: the parse and structural checks of
 * graph.c, then, when those are clean, the check of every reachable mode
 * (dgp_sim_check_modes: over-constrained ties and DOFs without inertia),
 * unless the caller knows how that check comes out (DG_LOAD_NO_MODE_CHECK:
 * batch runs, whose overrides the parameter tables say cannot change it).
 * Kept apart from graph.c so that parsing a graph does not depend on the
 * simulation: the mode check runs the blocks' topology hooks on instances
 * of them, which only a simulation of the graph has. The mode check itself
 * is the second half of this file: it covers the combinations by
 * structure (independent groups of switching blocks, each group's
 * combinations built with the others in their start modes). */
#include "sim.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Parses, then checks the modes if the structure is clean. */
static dg_graph *load(const dg_registry *reg, const char *text, const char *file, unsigned opts,
                      dg_diag *d, dg_graph_info *info) {
  int before = d->count;
  dg_graph *g = dgp_graph_parse(reg, text, file, d, info);
  if (g && d->count == before && g->order && !(opts & DG_LOAD_NO_MODE_CHECK))
    dgp_sim_check_modes(g, d, info);
  d->graph = NULL;
  return g;
}

static dg_graph *load_checked(const dg_registry *reg, const char *text, const char *file,
                              unsigned opts, dg_error *err) {
  dg_diag d;
  dgp_diag_init(&d, file, NULL, NULL);
  dgp_error_clear(err);
  dg_graph *g = load(reg, text, file, opts, &d, NULL);
  if (d.count > 0) {
    dgp_diag_to_error(&d, err);
    dgp_graph_release(g);
    return NULL;
  }
  return g;
}

dg_graph *dgp_graph_load_string_opts(const dg_registry *reg, const char *json, const char *name,
                                    unsigned opts, dg_error *err) {
  if (!json) {
    dgp_error_set(err, DG_ERR_USAGE, name ? name : "<string>", "", "no JSON text given");
    return NULL;
  }
  return load_checked(reg, json, name ? name : "<string>", opts, err);
}

dg_graph *dg_graph_load_string(const dg_registry *reg, const char *json, const char *name,
                               dg_error *err) {
  return dgp_graph_load_string_opts(reg, json, name, 0, err);
}

static char *read_or_report(const char *path, dg_diag *d) {
  size_t len;
  char why[DG_ERROR_TEXT_LEN];
  char *text = dgp_read_input(path, &len, why, sizeof why);
  if (!text) {
    dgp_diag_add(d, DG_ERR_IO, "", "%s", why);
    return NULL;
  }
  if (strlen(text) != len) {
    dgp_diag_add(d, DG_ERR_SYNTAX, "", "file contains a NUL byte; expected JSON text");
    free(text);
    return NULL;
  }
  return text;
}

dg_graph *dgp_graph_load_json_file(const dg_registry *reg, const char *path, dg_error *err) {
  dg_diag d;
  dgp_error_clear(err);
  if (!path) {
    dgp_error_set(err, DG_ERR_USAGE, "", "", "no file name given");
    return NULL;
  }
  dgp_diag_init(&d, path, NULL, NULL);
  char *text = read_or_report(path, &d);
  if (!text) {
    dgp_diag_to_error(&d, err);
    return NULL;
  }
  dg_graph *g = load_checked(reg, text, path, 0, err);
  free(text);
  return g;
}

/* Hands the graph `load` made to *graph when there were no problems (and
 * graph is not NULL); releases it otherwise. */
static int keep_if_valid(dg_graph *g, const dg_diag *d, dg_graph **graph) {
  if (graph && d->count == 0)
    *graph = g;
  else
    dgp_graph_release(g);
  return d->count;
}

int dgp_graph_validate_text(const dg_registry *reg, const char *json, const char *name,
                            dg_diag_fn fn, void *user, dg_graph_info *info, dg_graph **graph) {
  dg_diag d;
  dgp_diag_init(&d, name ? name : "<string>", fn, user);
  if (info)
    memset(info, 0, sizeof *info);
  if (graph)
    *graph = NULL;
  dg_graph *g = load(reg, json ? json : "", name ? name : "<string>", 0, &d, info);
  return keep_if_valid(g, &d, graph);
}

int dg_graph_validate_string(const dg_registry *reg, const char *json, const char *name,
                             dg_diag_fn fn, void *user, dg_graph_info *info) {
  return dgp_graph_validate_text(reg, json, name, fn, user, info, NULL);
}

int dgp_graph_validate_json_file(const dg_registry *reg, const char *path, dg_diag_fn fn,
                                 void *user, dg_graph_info *info, dg_graph **graph) {
  dg_diag d;
  dgp_diag_init(&d, path ? path : "", fn, user);
  if (info)
    memset(info, 0, sizeof *info);
  if (graph)
    *graph = NULL;
  char *text = path ? read_or_report(path, &d) : NULL;
  if (!text)
    return d.count ? d.count : 1;
  dg_graph *g = load(reg, text, path, 0, &d, info);
  free(text);
  return keep_if_valid(g, &d, graph);
}

/* ------------------------------------------------------------------------ */
/* Every reachable mode                                                     */

/* A group of switching blocks (below) is checked in every combination of
 * its blocks' modes up to this many; a larger one in the combinations with
 * at most L of its blocks out of their start modes, L as large as keeps
 * them within this many (at least 1: each block alone), and the check says
 * so (dg_graph_info, and validate's line). */
#define MAX_MODE_COMBINATIONS 4096
/* At most this many modes are built in all: groups are taken smallest
 * first, and a group past the budget is checked to a lower level. */
#define MAX_MODE_BUILDS (4 * MAX_MODE_COMBINATIONS)
/* A tie-up of friction elements locked together (a dual-clutch box with
 * both clutches locked and a gear engaged on each shaft) is a mode the
 * elements' own lock conditions never reach in a run (both slips can be
 * zero only at rest), but the check cannot yet tell it from a graph
 * error. A graph of at most MAX_MODE_COMBINATIONS combinations has always
 * refused it; a larger one, whose check used to stop at each block alone
 * and so never met one, passes over a loop of contradicting ratios that
 * two or more blocks out of their start modes close (and only that). */

static int block_modes(const dg_block *b) {
  return b->klass->mode_count && b->klass->mode_set ? b->klass->mode_count(b) : 1;
}

/* "c1=locked, c2=slipping, ...": every switching block's mode; when that
 * does not fit, the blocks out of their start modes only. */
static void describe_mode(const dg_sim *sim, const int *mode, char *buf, size_t size) {
  for (int pass = 0; pass < 2; pass++) {
    size_t len = 0;
    buf[0] = '\0';
    for (int i = 0; i < sim->nb && len < size; i++) {
      const dg_block *b = &sim->blocks[i];
      if (block_modes(b) <= 1 || (pass == 1 && mode[i] == 0))
        continue;
      const char *name = b->klass->mode_name ? b->klass->mode_name(b, mode[i]) : NULL;
      if (name)
        len += (size_t)snprintf(buf + len, size - len, "%s%s=%s", len ? ", " : "", b->id, name);
      else
        len += (size_t)snprintf(buf + len, size - len, "%s%s=%d", len ? ", " : "", b->id, mode[i]);
    }
    if (pass == 1 && len < size)
      snprintf(buf + len, size - len, "%sthe others in their start modes", len ? ", " : "");
    if (len < size)
      return;
  }
}

static void set_modes(dg_sim *sim, const int *mode) {
  for (int i = 0; i < sim->nb; i++) {
    dg_block *b = &sim->blocks[i];
    if (block_modes(b) > 1)
      b->klass->mode_set(b, mode[i]);
  }
}

/* Problems already reported (the same DOF fails in many combinations). */
typedef struct seen_list {
  char (*text)[DG_ERROR_TEXT_LEN];
  int n, cap;
} seen_list;

static bool seen_before(seen_list *s, const char *text) {
  for (int i = 0; i < s->n; i++)
    if (strcmp(s->text[i], text) == 0)
      return true;
  if (s->n == s->cap) {
    int cap = s->cap ? 2 * s->cap : 8;
    char(*t)[DG_ERROR_TEXT_LEN] = realloc(s->text, sizeof *t * (size_t)cap);
    if (!t)
      return true;
    s->text = t;
    s->cap = cap;
  }
  snprintf(s->text[s->n++], DG_ERROR_TEXT_LEN, "%s", text);
  return false;
}

/* ------------------------------------------------------------------------ */
/* Elements that can never act, drivetrains that cannot move               */

/* What the modes built so far have shown. */
typedef struct mode_facts {
  int built;             /* modes built without an error */
  int locked;            /* of them, modes in which no shaft can move */
  bool start_locked;     /* the start mode is one */
  char start_by[DG_ERROR_TEXT_LEN / 2]; /* the blocks holding it */
  bool *acts;            /* per block (DG_CLASS_COMPLIANCE): its ends moved apart in some mode */

  bool allow_tieups; /* a large graph: tie-ups are not errors (MAX_MODE_COMBINATIONS) */
  int tieups;        /* modes passed over as tie-ups */
} mode_facts;

/* Whether nodes a and b have one row of G (free and prescribed columns):
 * they turn as one shaft in this mode. */
static bool same_row(const dg_sim *sim, int a, int b) {
  int nred = sim->sv.ndof + sim->sv.mot.np;
  size_t st = (size_t)nred; /* G's row stride (solver.h: dgp_gst) */
  const double *ra = sim->sv.G + (size_t)a * st, *rb = sim->sv.G + (size_t)b * st;
  for (int j = 0; j < nred; j++)
    if (fabs(ra[j] - rb[j]) > 1e-12 * (fabs(ra[j]) + fabs(rb[j])) + 1e-15)
      return false;
  return true;
}

/* "brake \"b1\", brake \"b2\"": the blocks whose ties hold shafts at rest in
 * the mode just built (or, with none, every block with a tie). */
static int holders(const dg_sim *sim, char *buf, size_t size) {
  const dg_topo_ws *ws = &sim->sv.ws;
  size_t used = 0;
  int count = 0;
  buf[0] = '\0';
  for (int pass = 0; pass < 2 && !buf[0]; pass++)
    for (int b = 0; b < sim->nb && used < size; b++) {
      bool holds = false;
      for (int k = 0; k < ws->nties && !holds; k++)
        holds = ws->ties[k].block == b && ws->ties[k].active >= 0 && (pass || ws->ties[k].ground);
      if (holds) {
        count++;
        used += (size_t)snprintf(buf + used, size - used, "%s%s \"%s\"", used ? ", " : "",
                                 sim->blocks[b].klass->type, sim->blocks[b].id);
      }
    }
  return count;
}

static void observe(dg_sim *sim, mode_facts *f, const int *mode) {
  f->built++;
  if (sim->nn > 0 && sim->sv.ndof == 0 && sim->sv.mot.np == 0) {
    f->locked++;
    /* Other modes may lock legitimately (a parked car, a brake rig holding
     * its shaft); the start mode is what a run begins in. A run that the
     * blocks' first decisions lock is named by the tools
     * (dg_sim_locked_by). */
    if (!mode) {
      f->start_locked = true;
      holders(sim, f->start_by, sizeof f->start_by);
    }
  }
  for (int b = 0; f->acts && b < sim->nb; b++) {
    const dg_block *blk = &sim->blocks[b];
    if ((blk->klass->flags & DG_CLASS_COMPLIANCE) && !f->acts[b] &&
        dgp_class_num_ports(blk->klass) >= 2 && !same_row(sim, blk->node[0], blk->node[1]))
      f->acts[b] = true;
  }
}

int dg_sim_locked_by(const dg_sim *sim, char *buf, size_t size) {
  if (size > 0)
    buf[0] = '\0';
  if (!sim || sim->nn == 0 || sim->sv.ndof > 0 || sim->sv.mot.np > 0)
    return 0;
  if (size > 0)
    holders(sim, buf, size);
  return 1;
}

static void report_facts(const dg_sim *sim, const mode_facts *f, dg_diag *diag) {
  if (f->built == 0)
    return;
  if (f->start_locked && f->locked == f->built)
    dgp_diag_add(diag, DG_ERR_TOPOLOGY, "",
                "the drivetrain is locked by %s in every mode: no shaft can ever turn (0 degrees "
                "of freedom); release one of them, or give it an input that can",
                f->start_by);
  else if (f->start_locked)
    dgp_diag_warn(diag, "",
                 "the drivetrain is locked by %s: in the start mode no shaft can turn (0 degrees "
                 "of freedom) until one of them lets go",
                 f->start_by);

  for (int b = 0; f->acts && b < sim->nb; b++) {
    const dg_block *blk = &sim->blocks[b];
    if (!(blk->klass->flags & DG_CLASS_COMPLIANCE) || f->acts[b] ||
        dgp_class_num_ports(blk->klass) < 2)
      continue;
    char path[DG_ERROR_PATH_LEN];
    dgp_pointer_append(path, sizeof path, "/blocks", blk->id);
    dgp_diag_warn(diag, path,
                 "%s \"%s\" can never act: its ends %s.%s and %s.%s turn as one shaft in every "
                 "mode (other blocks tie them rigidly), so it never twists and carries no torque",
                 blk->klass->type, blk->id, blk->id, blk->klass->ports[0].name, blk->id,
                 blk->klass->ports[1].name);
  }
}

/* Whether the mode just built failed as a tie-up: a loop of contradicting
 * ratios (check_overconstrained in lib/solver/topo.c) closed by two or
 * more blocks out of their start modes. */
static bool tieup(const dg_sim *sim, int rc, const int *mode) {
  int away = 0;
  for (int i = 0; i < sim->nb; i++)
    away += mode[i] != 0;
  return rc == DG_ERR_OVERCONSTRAINED && away >= 2 && sim->sv.ws.err_ratio_loop;
}

/* A failed build of the start mode (block -1) or of a block alone in one
 * of its modes, kept by discover_groups so that the check reports it in
 * its own order without building the mode again. */
typedef struct alone_failure {
  int block, mode, rc, errblock;
  char errmsg[DG_ERROR_TEXT_LEN];
} alone_failure;

/* What discover_groups built: the modes it observed, and its failures. */
typedef struct mode_cache {
  bool *done; /* per block: its modes alone were built (and observed) */
  bool start_done;
  int built;
  alone_failure *fail;
  int nfail, cap;
} mode_cache;

/* False when there is no memory to keep it: the check then builds the
 * mode again. */
static bool cache_failure(mode_cache *c, const dg_sim *sim, int rc, int block, int mode) {
  if (c->nfail == c->cap) {
    int cap = c->cap ? 2 * c->cap : 8;
    alone_failure *f = realloc(c->fail, sizeof *f * (size_t)cap);
    if (!f)
      return false;
    c->fail = f;
    c->cap = cap;
  }
  alone_failure *f = &c->fail[c->nfail++];
  *f = (alone_failure){.block = block, .mode = mode, .rc = rc, .errblock = sim->sv.ws.errblock};
  snprintf(f->errmsg, sizeof f->errmsg, "%s", sim->sv.ws.errmsg);
  return true;
}

/* The cached result of `mode` when it is the start or one block alone and
 * discover_groups built it: *failure is its failure (NULL: it built).
 * False when the mode must be built. */
static bool cached(const mode_cache *c, const dg_sim *sim, const int *mode,
                   const alone_failure **failure) {
  int away = 0, block = -1;
  for (int i = 0; i < sim->nb && away < 2; i++)
    if (mode[i] != 0) {
      away++;
      block = i;
    }
  if (away >= 2 || (away == 1 && !c->done[block]) || (away == 0 && !c->start_done))
    return false;
  *failure = NULL;
  for (int k = 0; k < c->nfail; k++)
    if (c->fail[k].block == block && (block < 0 || c->fail[k].mode == mode[block]))
      *failure = &c->fail[k];
  return true;
}

static void report_failure(const dg_sim *sim, int rc, int errblock, const char *errmsg,
                           const int *mode, seen_list *seen, dg_diag *diag) {
  if (seen_before(seen, errmsg))
    return;
  char desc[DG_ERROR_TEXT_LEN / 2] = "";
  if (mode)
    describe_mode(sim, mode, desc, sizeof desc);
  char path[DG_ERROR_PATH_LEN] = "";
  if (errblock >= 0)
    dgp_pointer_append(path, sizeof path, "/blocks", sim->g->blocks[errblock].id);
  if (desc[0])
    dgp_diag_add(diag, rc, path, "%s (in mode %s)", errmsg, desc);
  else
    dgp_diag_add(diag, rc, path, "%s", errmsg);
}

/* Checks one mode, or reports what discover_groups found of it. Returns
 * whether it was built. */
static bool check_one(dg_sim *sim, const int *mode, const mode_cache *cache, seen_list *seen,
                      mode_facts *facts, dg_diag *diag) {
  const alone_failure *f;
  if (cached(cache, sim, mode, &f)) {
    if (f)
      report_failure(sim, f->rc, f->errblock, f->errmsg, mode, seen, diag);
    return false;
  }
  set_modes(sim, mode);
  int rc = dgp_solver_build(sim);
  if (rc == DG_OK)
    observe(sim, facts, mode);
  if (rc != DG_OK && facts->allow_tieups && tieup(sim, rc, mode)) {
    facts->tieups++;
    return true;
  }
  if (rc != DG_OK)
    report_failure(sim, rc, sim->sv.ws.errblock, sim->sv.ws.errmsg, mode, seen, diag);
  return true;
}

/* ------------------------------------------------------------------------ */
/* Structure: which switching blocks can change each other's verdicts      */

/* What the check asks of a mode is local to the rigid groups of shafts the
 * mode has: a degree of freedom without inertia, a loop of contradicting
 * ratios, two holds on one shaft, a tie on a prescribed speed are each a
 * property of the shafts that one group's links and ties join. So the
 * check looks at the coupling graph: a vertex per node and one for ground,
 * an edge between the nodes of every link and tie any mode declares (the
 * nodes of one link or tie all pairwise, so that they stay together). Its
 * biconnected components meet at articulation vertices; a component's
 * switching blocks can change only what happens inside it, and two
 * components meeting at a vertex v are independent when v is ground (no
 * motion to share) or a shaft with inertia in every mode while nothing
 * prescribes a speed: a motion of both sides without kinetic energy holds
 * v still (it has inertia), so it is a motion of each side with the other
 * at rest, and each side alone shows it. Components that meet elsewhere are
 * merged; so are the components of one switching block's couplings, and
 * those at a shaft where a switching block's inertia changes with its mode.
 * What is left are groups of switching blocks: a mode fails exactly when
 * its restriction to some group fails with the other groups in their start
 * modes, so the combinations within each group (the others at start) cover
 * the product of the groups' combinations with the sum of them.
 *
 * The couplings are read from builds of the start mode and of each
 * switching block alone in each of its modes (a block's links and ties
 * depend on its own mode); a mode that fails to build leaves its block's
 * couplings unknown, so that block joins every group at its shafts and
 * ground, and an unknown start mode makes one group of all. */

typedef struct mode_edge {
  int a, b;  /* vertices: nodes, and nn for ground */
  int block; /* the block that declared it */
} mode_edge;

typedef struct mode_structure {
  int nv; /* nodes + ground (the last) */
  mode_edge *e;
  int ne, cap;
  double *in_min, *in_max; /* per port: the inertia its block declared there, over its modes */
  bool *wild;              /* per block: a mode of it did not build, its couplings are unknown */
  bool prescribed;         /* some mode prescribes a speed */
  bool unknown;            /* the start mode did not build: one group of all */
  bool nomem;
} mode_structure;

static void add_edge(mode_structure *s, int a, int b, int block) {
  if (a == b || s->nomem)
    return;
  if (s->ne == s->cap) {
    int cap = s->cap ? 2 * s->cap : 64;
    mode_edge *e = realloc(s->e, sizeof *e * (size_t)cap);
    if (!e) {
      s->nomem = true;
      return;
    }
    s->e = e;
    s->cap = cap;
  }
  s->e[s->ne++] = (mode_edge){a, b, block};
}

static void add_clique(mode_structure *s, const int *v, int n, int block) {
  for (int i = 0; i < n; i++)
    for (int j = i + 1; j < n; j++)
      add_edge(s, v[i], v[j], block);
}

/* The couplings of the mode just built (rc): every block's (only < 0), or
 * block `only`'s. */
static void record_couplings(const dg_sim *sim, int rc, int only, mode_structure *s) {
  const dg_topo_ws *ws = &sim->sv.ws;
  if (rc != DG_OK || !ws->links_complete) {
    if (only < 0)
      s->unknown = true;
    else
      s->wild[only] = true;
    return;
  }
  int v[18];
  for (int t = 0; t < ws->nties; t++) {
    const dg_tie *tie = &ws->ties[t];
    if (only >= 0 && tie->block != only)
      continue;
    int n = 0;
    for (int i = 0; i < tie->n && n < 16; i++)
      v[n++] = ws->tie_node[tie->first + i];
    if (tie->ground)
      v[n++] = s->nv - 1;
    add_clique(s, v, n, tie->block);
  }
  for (int k = 0; k < ws->nlinks; k++) {
    if (only >= 0 && ws->link_block[k] != only)
      continue;
    int n = 0;
    v[n++] = ws->link_dst[k];
    for (int i = 0; i < ws->link_n[k] && n < 17; i++)
      v[n++] = ws->link_src[ws->link_first[k] + i];
    add_clique(s, v, n, ws->link_block[k]);
  }
  for (int k = 0; k < ws->nraw; k++)
    s->prescribed = s->prescribed || ws->raw_presc[k];
  for (int b = only < 0 ? 0 : only; b < (only < 0 ? sim->nb : only + 1); b++)
    for (int p = sim->sv.ports.base[b]; p < sim->sv.ports.base[b + 1]; p++) {
      double x = sim->sv.ports.inertia[p];
      s->in_min[p] = fmin(s->in_min[p], x);
      s->in_max[p] = fmax(s->in_max[p], x);
    }
}

/* The biconnected components of the coupling graph: comp[e] for each edge
 * (Tarjan's, iterative; over edge ids, so that parallel edges make a
 * cycle). Returns how many, or -1 out of memory. */
static int biconnected(const mode_structure *s, int *comp) {
  int nv = s->nv, ne = s->ne, nc = 0;
  int *head = calloc((size_t)nv + 1, sizeof *head);
  int *adj = malloc(sizeof *adj * (2 * (size_t)ne + 1));
  int *disc = malloc(sizeof *disc * (size_t)nv), *low = malloc(sizeof *low * (size_t)nv);
  int *it = malloc(sizeof *it * (size_t)nv), *pe = malloc(sizeof *pe * (size_t)nv);
  int *st = malloc(sizeof *st * (size_t)nv), *es = malloc(sizeof *es * ((size_t)ne + 1));
  if (!head || !adj || !disc || !low || !it || !pe || !st || !es) {
    nc = -1;
    goto done;
  }
  for (int e = 0; e < ne; e++) {
    head[s->e[e].a + 1]++;
    head[s->e[e].b + 1]++;
  }
  for (int v = 0; v < nv; v++) {
    head[v + 1] += head[v];
    it[v] = head[v];
    disc[v] = -1;
  }
  for (int e = 0; e < ne; e++) {
    adj[it[s->e[e].a]++] = e;
    adj[it[s->e[e].b]++] = e;
  }
  int clock = 0, nes = 0;
  for (int r = 0; r < nv; r++) {
    if (disc[r] >= 0 || head[r] == head[r + 1])
      continue;
    int sp = 0;
    disc[r] = low[r] = clock++;
    pe[r] = -1;
    it[r] = head[r];
    st[sp++] = r;
    while (sp > 0) {
      int v = st[sp - 1];
      if (it[v] < head[v + 1]) {
        int e = adj[it[v]++];
        if (e == pe[v])
          continue;
        int w = s->e[e].a == v ? s->e[e].b : s->e[e].a;
        if (disc[w] < 0) {
          es[nes++] = e;
          pe[w] = e;
          disc[w] = low[w] = clock++;
          it[w] = head[w];
          st[sp++] = w;
        } else if (disc[w] < disc[v]) { /* a back edge (its other side is skipped) */
          es[nes++] = e;
          low[v] = low[v] < disc[w] ? low[v] : disc[w];
        }
        continue;
      }
      if (--sp == 0)
        break;
      int u = st[sp - 1];
      low[u] = low[u] < low[v] ? low[u] : low[v];
      if (low[v] >= disc[u]) { /* u separates v's subtree: one component */
        int e;
        do {
          e = es[--nes];
          comp[e] = nc;
        } while (e != pe[v]);
        nc++;
      }
    }
  }
done:
  free(head);
  free(adj);
  free(disc);
  free(low);
  free(it);
  free(pe);
  free(st);
  free(es);
  return nc;
}

static int uf_find(int *parent, int x) {
  while (parent[x] != x) {
    parent[x] = parent[parent[x]];
    x = parent[x];
  }
  return x;
}

static void uf_join(int *parent, int a, int b) {
  a = uf_find(parent, a);
  b = uf_find(parent, b);
  if (a != b)
    parent[a > b ? a : b] = a < b ? a : b;
}

/* Block b (element `be` of the union) with everything at vertex x. */
static void join_vertex(const mode_structure *s, const int *comp, int *parent, int be, int vbase,
                        int x) {
  uf_join(parent, be, vbase + x);
  for (int e = 0; e < s->ne; e++)
    if (s->e[e].a == x || s->e[e].b == x)
      uf_join(parent, be, comp[e]);
}

/* The group of each switching block (group[b], -1 for the others);
 * returns how many groups, or -1 out of memory. */
static int mode_groups(const dg_sim *sim, const int *count, const mode_structure *s, int *group) {
  int nb = sim->nb, nv = s->nv, ng = 0;
  for (int b = 0; b < nb; b++)
    group[b] = count[b] > 1 && s->unknown ? 0 : -1;
  if (s->unknown) {
    for (int b = 0; b < nb; b++)
      ng = ng || count[b] > 1;
    return ng;
  }
  int *comp = malloc(sizeof *comp * ((size_t)s->ne + 1));
  int nc = comp ? biconnected(s, comp) : -1;
  double *lb = calloc((size_t)nv, sizeof *lb);
  int *parent = nc >= 0 ? malloc(sizeof *parent * ((size_t)nc + (size_t)nv + (size_t)nb)) : NULL;
  int *label = malloc(sizeof *label * ((size_t)nc + (size_t)nv + (size_t)nb + 1));
  if (!comp || nc < 0 || !lb || !parent || !label) {
    ng = -1;
    goto done;
  }
  int vbase = nc, bbase = nc + nv, n = nc + nv + nb;
  for (int i = 0; i < n; i++) {
    parent[i] = i;
    label[i] = -1;
  }
  /* the inertia every mode leaves at each shaft */
  for (int b = 0; b < nb; b++)
    for (int p = 0; p < sim->g->blocks[b].num_ports; p++)
      lb[sim->blocks[b].node[p]] += s->in_min[sim->sv.ports.base[b] + p];
  /* components meeting at a vertex that does not separate them merge */
  for (int e = 0; e < s->ne; e++) {
    int end[2] = {s->e[e].a, s->e[e].b};
    for (int k = 0; k < 2; k++)
      if (end[k] != nv - 1 && !(lb[end[k]] > 0.0 && !s->prescribed))
        uf_join(parent, vbase + end[k], comp[e]);
  }
  for (int e = 0; e < s->ne; e++)
    if (count[s->e[e].block] > 1)
      uf_join(parent, bbase + s->e[e].block, comp[e]);
  for (int b = 0; b < nb; b++) {
    if (count[b] <= 1)
      continue;
    for (int p = 0; p < sim->g->blocks[b].num_ports; p++) {
      int q = sim->sv.ports.base[b] + p;
      if (s->wild[b] || s->in_min[q] != s->in_max[q])
        join_vertex(s, comp, parent, bbase + b, vbase, sim->blocks[b].node[p]);
    }
    if (s->wild[b])
      join_vertex(s, comp, parent, bbase + b, vbase, nv - 1);
  }
  for (int b = 0; b < nb; b++) {
    if (count[b] <= 1)
      continue;
    int root = uf_find(parent, bbase + b);
    if (label[root] < 0)
      label[root] = ng++;
    group[b] = label[root];
  }
done:
  free(comp);
  free(lb);
  free(parent);
  free(label);
  return ng;
}

/* One build of discover_groups: its couplings (when `structure`), what it
 * shows (observe), and its failure kept for the check to report. */
static void discover_one(dg_sim *sim, const int *mode, int block, bool structure, mode_structure *s,
                         mode_cache *cache, mode_facts *facts) {
  set_modes(sim, mode);
  int rc = dgp_solver_build(sim);
  cache->built++;
  if (structure)
    record_couplings(sim, rc, block, s);
  bool kept = rc == DG_OK || cache_failure(cache, sim, rc, block, block < 0 ? 0 : mode[block]);
  if (rc == DG_OK)
    observe(sim, facts, block < 0 ? NULL : mode);
  if (block < 0)
    cache->start_done = kept;
  else if (!kept)
    cache->done[block] = false;
}

/* Builds the start mode and each switching block alone in each of its
 * modes, observing them and keeping their failures for the check (cache),
 * and groups the switching blocks (group[b]). Returns how many groups, or
 * -1 out of memory. */
static int discover_groups(dg_sim *sim, const int *count, int *mode, int *group, mode_cache *cache,
                           mode_facts *facts, dg_graph_info *info) {
  int nb = sim->nb;
  bool structure = false;
  for (int b = 0; b < nb; b++)
    structure = structure || count[b] > 1;
  mode_structure s = {.nv = sim->nn + 1};
  s.in_min = malloc(sizeof *s.in_min * ((size_t)sim->n_ports + 1));
  s.in_max = malloc(sizeof *s.in_max * ((size_t)sim->n_ports + 1));
  s.wild = calloc((size_t)nb + 1, sizeof *s.wild);
  int ng = -1;
  if (!s.in_min || !s.in_max || !s.wild)
    goto done;
  for (int p = 0; p < sim->n_ports; p++) {
    s.in_min[p] = INFINITY;
    s.in_max[p] = -INFINITY;
  }
  memset(mode, 0, sizeof *mode * (size_t)nb);
  discover_one(sim, mode, -1, structure, &s, cache, facts);
  if (info && sim->sv.ws.error == 0)
    info->dofs = sim->sv.ndof;
  for (int b = 0; b < nb && structure && !s.unknown; b++) {
    cache->done[b] = true;
    for (int m = 1; m < count[b]; m++) {
      mode[b] = m;
      discover_one(sim, mode, b, structure, &s, cache, facts);
      mode[b] = 0;
    }
  }
  set_modes(sim, mode);
  if (!s.nomem)
    ng = structure ? mode_groups(sim, count, &s, group) : 0;
done:
  free(s.e);
  free(s.in_min);
  free(s.in_max);
  free(s.wild);
  return ng;
}

/* ------------------------------------------------------------------------ */
/* The check                                                                */

/* How many combinations of the `n` blocks idx take exactly `level` of them
 * out of their start mode: the sum over subsets of that size of
 * Π (count − 1), by the recurrence over blocks (e[l] of the blocks so far). */
static double combos_at_level(const int *count, const int *idx, int n, int level) {
  double e[65] = {1.0};
  int top = level < 64 ? level : 64;
  for (int i = 0; i < n; i++)
    for (int l = top; l >= 1; l--)
      e[l] += e[l - 1] * (count[idx[i]] - 1);
  return e[top];
}

/* The combinations of the blocks idx with at most `level` of them out of
 * their start mode. */
static double combos_up_to(const int *count, const int *idx, int n, int level) {
  double sum = 0.0;
  for (int l = 0; l <= level && l <= n; l++)
    sum += combos_at_level(count, idx, n, l);
  return sum;
}

/* Every combination of the `n` blocks idx with exactly `level` of them out
 * of their start mode, the other blocks at start: subsets of that size in
 * lexicographic order, each with every choice of their other modes (an
 * odometer over modes 1..count−1). Returns how many were built. */
static int check_level(dg_sim *sim, const int *count, const int *idx, int n, int level, int *mode,
                       const mode_cache *cache, seen_list *seen, mode_facts *facts, dg_diag *diag) {
  int built = 0;
  int pick[64];
  if (level > n || level > 64)
    return 0;
  for (int k = 0; k < level; k++)
    pick[k] = k;
  for (;;) {
    memset(mode, 0, sizeof *mode * (size_t)sim->nb);
    for (int k = 0; k < level; k++)
      mode[idx[pick[k]]] = 1;
    for (;;) {
      built += check_one(sim, mode, cache, seen, facts, diag);
      int k = 0;
      while (k < level && ++mode[idx[pick[k]]] == count[idx[pick[k]]])
        mode[idx[pick[k++]]] = 1;
      if (k == level)
        break;
    }
    int k = level - 1; /* the next subset */
    while (k >= 0 && pick[k] == n - level + k)
      k--;
    if (k < 0)
      return built;
    pick[k]++;
    for (int j = k + 1; j < level; j++)
      pick[j] = pick[j - 1] + 1;
  }
}

/* One group's modes, the other blocks in their start modes: with `level`
 * = n every combination of its `n` blocks (idx) but the start (an
 * odometer, the first block turning fastest, as the whole graph's would
 * meet them), else those with 1 .. `level` of them out of their start
 * mode. Returns how many were built. */
static int check_group(dg_sim *sim, const int *count, const int *idx, int n, int level, int *mode,
                       const mode_cache *cache, seen_list *seen, mode_facts *facts, dg_diag *diag) {
  int built = 0;
  if (level < n) {
    for (int l = 1; l <= level; l++)
      built += check_level(sim, count, idx, n, l, mode, cache, seen, facts, diag);
    return built;
  }
  memset(mode, 0, sizeof *mode * (size_t)sim->nb);
  for (;;) {
    int k = 0;
    while (k < n && ++mode[idx[k]] == count[idx[k]])
      mode[idx[k++]] = 0;
    if (k == n)
      return built;
    built += check_one(sim, mode, cache, seen, facts, diag);
  }
}

/* The level group idx is checked to: every combination (n), or at most
 * `level` blocks away from start while its combinations exceed
 * MAX_MODE_COMBINATIONS or the builds MAX_MODE_BUILDS. */
static int group_level(const int *count, const int *idx, int n, int built) {
  int level = n;
  while (level > 1) {
    double c = combos_up_to(count, idx, n, level);
    if (c <= MAX_MODE_COMBINATIONS && built + c <= MAX_MODE_BUILDS)
      break;
    level--;
  }
  return level;
}

/* Checks every group, smallest first (group_level). Returns the modes
 * built. */
static int check_groups(dg_sim *sim, const int *count, const int *group, int ng, int *mode,
                        const mode_cache *cache, seen_list *seen, mode_facts *facts, dg_diag *diag,
                        dg_graph_info *info) {
  int nb = sim->nb, built = 0;
  int *idx = malloc(sizeof *idx * ((size_t)nb + 1));
  int *order = malloc(sizeof *order * ((size_t)ng + 1));
  double *all = malloc(sizeof *all * ((size_t)ng + 1));
  if (!idx || !order || !all) {
    dgp_diag_add(diag, DG_ERR_NOMEM, "", "out of memory");
    goto done;
  }
  for (int g = 0; g < ng; g++) { /* insertion sort by size */
    all[g] = 1.0;
    for (int b = 0; b < nb; b++)
      if (group[b] == g)
        all[g] *= count[b];
    int k = g;
    while (k > 0 && all[order[k - 1]] > all[g]) {
      order[k] = order[k - 1];
      k--;
    }
    order[k] = g;
  }
  double covered = 1.0;
  for (int k = 0; k < ng; k++) {
    int g = order[k], n = 0;
    for (int b = 0; b < nb; b++)
      if (group[b] == g)
        idx[n++] = b;
    int level = group_level(count, idx, n, built);
    built += check_group(sim, count, idx, n, level, mode, cache, seen, facts, diag);
    covered *= combos_up_to(count, idx, n, level);
    if (info && level < n) {
      info->mode_level = info->mode_level ? (level < info->mode_level ? level : info->mode_level)
                                          : level;
      info->partial_groups++;
      if (all[g] > info->largest_group_modes) {
        info->largest_group_modes = all[g];
        info->largest_group = n;
      }
    }
  }
  if (info) {
    info->modes_covered = covered;
    info->mode_groups = ng;
  }
done:
  free(idx);
  free(order);
  free(all);
  return built;
}

int dgp_sim_check_modes(const dg_graph *g, dg_diag *diag, dg_graph_info *info) {
  return dgp_sim_check_modes_opts(g, 0, diag, info);
}

int dgp_sim_check_modes_opts(const dg_graph *g, unsigned opts, dg_diag *diag, dg_graph_info *info) {
  int before = diag->count;
  dg_sim *sim = dgp_sim_create(g, diag);
  if (!sim)
    return diag->count - before;
  sim->in_check = true; /* modes are built to be checked, not stepped */
  int nb = sim->nb;
  int *mode = calloc((size_t)nb + 1, sizeof *mode);
  int *count = calloc((size_t)nb + 1, sizeof *count);
  int *group = calloc((size_t)nb + 1, sizeof *group);
  mode_cache cache = {.done = calloc((size_t)nb + 1, sizeof *cache.done)};
  seen_list seen = {0};
  mode_facts facts = {.acts = calloc((size_t)nb + 1, sizeof *facts.acts)};
  if (!mode || !count || !group || !cache.done || !facts.acts) {
    dgp_diag_add(diag, DG_ERR_NOMEM, "", "out of memory");
    goto done;
  }
  /* The start mode is whatever init left; mode_set(start) must restore it,
   * so blocks report their current mode as the first (index 0). */
  double combos = 1.0;
  int switching = 0;
  for (int i = 0; i < nb; i++) {
    count[i] = block_modes(&sim->blocks[i]);
    combos *= count[i];
    switching += count[i] > 1;
  }
  if (info)
    info->modes_covered = 1.0;
  int ng = discover_groups(sim, count, mode, group, &cache, &facts, info);
  if (ng < 0) {
    dgp_diag_add(diag, DG_ERR_NOMEM, "", "out of memory");
    goto done;
  }
  if (opts & DGP_CHECK_NO_GROUPS) {
    for (int b = 0; b < nb; b++)
      group[b] = count[b] > 1 ? 0 : -1;
    ng = switching > 0;
  }
  int checked = cache.built;
  const alone_failure *start; /* mode: the start, all zero */
  if (cached(&cache, sim, mode, &start) && start) {
    report_failure(sim, start->rc, start->errblock, start->errmsg, NULL, &seen, diag);
  } else if (!cache.start_done) { /* it failed, with no memory to keep why: again */
    set_modes(sim, mode);
    int rc = dgp_solver_build(sim);
    checked++;
    if (rc != DG_OK)
      report_failure(sim, rc, sim->sv.ws.errblock, sim->sv.ws.errmsg, NULL, &seen, diag);
  }
  facts.allow_tieups = combos > MAX_MODE_COMBINATIONS;
  checked += check_groups(sim, count, group, ng, mode, &cache, &seen, &facts, diag, info);
  if (info) {
    info->modes_built = checked;
    info->modes = info->modes_covered < INT_MAX ? (int)info->modes_covered : INT_MAX;
    info->mode_combinations = combos;
    info->switching_blocks = switching;
  }
  if (diag->count == before)
    report_facts(sim, &facts, diag);
done:
  free(facts.acts);
  free(mode);
  free(count);
  free(group);
  free(cache.done);
  free(cache.fail);
  free(seen.text);
  dg_sim_free(sim);
  return diag->count - before;
}
