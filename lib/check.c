/* Loading and validating a graph: the parse and structural checks of
 * graph.c, then, when those are clean, the check of every reachable mode
 * (dgp_sim_check_modes: over-constrained ties and DOFs without inertia),
 * unless the caller knows how that check comes out (DG_LOAD_NO_MODE_CHECK:
 * batch runs, whose overrides the parameter tables say cannot change it).
 * Kept apart from graph.c so that parsing a graph does not depend on the
 * simulation: the mode check runs the blocks' topology hooks on instances
 * of them, which only a simulation of the graph has. The mode check itself
 * is the second half of this file. */
#include "sim.h"

#include <errno.h>
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

int dg_graph_validate_string(const dg_registry *reg, const char *json, const char *name,
                             dg_diag_fn fn, void *user, dg_graph_info *info) {
  dg_diag d;
  dgp_diag_init(&d, name ? name : "<string>", fn, user);
  if (info)
    memset(info, 0, sizeof *info);
  dgp_graph_release(load(reg, json ? json : "", name ? name : "<string>", 0, &d, info));
  return d.count;
}

int dgp_graph_validate_json_file(const dg_registry *reg, const char *path, dg_diag_fn fn,
                                void *user, dg_graph_info *info) {
  dg_diag d;
  dgp_diag_init(&d, path ? path : "", fn, user);
  if (info)
    memset(info, 0, sizeof *info);
  char *text = path ? read_or_report(path, &d) : NULL;
  if (!text)
    return d.count ? d.count : 1;
  dgp_graph_release(load(reg, text, path, 0, &d, info));
  free(text);
  return d.count;
}

/* ------------------------------------------------------------------------ */
/* Every reachable mode                                                     */

/* Up to this many mode combinations are checked exhaustively. Beyond it the
 * combinations are checked in order of how many switching blocks they take
 * out of their start mode (each block alone, then every pair, ...), whole
 * levels only while the total stays within this bound and up to
 * MAX_PARTIAL_LEVEL, and the check says which level it reached
 * (dg_graph_info, and validate's line). */
#define MAX_MODE_COMBINATIONS 4096
/* Pairs and beyond find the tie-ups of friction elements locked together
 * (a dual-clutch box with both clutches locked and a gear engaged on each
 * shaft), which the exhaustive check of a small graph refuses too but which
 * the elements' own lock conditions never reach in a run (both slips can
 * be zero only at rest): until the check can tell a tie-up its elements
 * avoid from a graph error, the partial check stays at each block alone,
 * and says so. */
#define MAX_PARTIAL_LEVEL 1

static int block_modes(const dg_block *b) {
  return b->klass->mode_count && b->klass->mode_set ? b->klass->mode_count(b) : 1;
}

static void describe_mode(const dg_sim *sim, const int *mode, char *buf, size_t size) {
  size_t len = 0;
  buf[0] = '\0';
  for (int i = 0; i < sim->nb && len < size; i++) {
    const dg_block *b = &sim->blocks[i];
    if (block_modes(b) <= 1)
      continue;
    const char *name = b->klass->mode_name ? b->klass->mode_name(b, mode[i]) : NULL;
    if (name)
      len += (size_t)snprintf(buf + len, size - len, "%s%s=%s", len ? ", " : "", b->id, name);
    else
      len += (size_t)snprintf(buf + len, size - len, "%s%s=%d", len ? ", " : "", b->id, mode[i]);
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
} mode_facts;

/* Whether nodes a and b have one row of G (free and prescribed columns):
 * they turn as one shaft in this mode. */
static bool same_row(const dg_sim *sim, int a, int b) {
  size_t st = (size_t)sim->nn;
  const double *ra = sim->sv.G + (size_t)a * st, *rb = sim->sv.G + (size_t)b * st;
  int nred = sim->sv.ndof + sim->sv.mot.np;
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

static void check_one(dg_sim *sim, const int *mode, seen_list *seen, mode_facts *facts,
                      dg_diag *diag) {
  set_modes(sim, mode);
  int rc = dgp_solver_build(sim);
  if (rc == DG_OK)
    observe(sim, facts, mode);
  if (rc == DG_OK || seen_before(seen, sim->sv.ws.errmsg))
    return;
  char desc[DG_ERROR_TEXT_LEN / 2];
  describe_mode(sim, mode, desc, sizeof desc);
  dgp_sim_report_build(sim, rc, desc, diag);
}

/* How many combinations take exactly `level` switching blocks out of their
 * start mode: the sum over subsets of that size of Π (count − 1), by the
 * recurrence over blocks (e[l] of the blocks so far). */
static double combos_at_level(const int *count, int nb, int level) {
  double e[65] = {1.0};
  int top = level < 64 ? level : 64;
  for (int i = 0; i < nb; i++)
    if (count[i] > 1)
      for (int l = top; l >= 1; l--)
        e[l] += e[l - 1] * (count[i] - 1);
  return e[top];
}

/* Every combination with exactly `level` switching blocks out of their start
 * mode: subsets of that size in lexicographic order, each with every
 * choice of their other modes (an odometer over modes 1..count−1). Returns
 * how many were built. */
static int check_level(dg_sim *sim, const int *count, int *mode, int level, seen_list *seen,
                       mode_facts *facts, dg_diag *diag) {
  int nb = sim->nb, built = 0, n = 0;
  int idx[64], pick[64];
  for (int i = 0; i < nb && n < 64; i++)
    if (count[i] > 1)
      idx[n++] = i;
  if (level > n)
    return 0;
  for (int k = 0; k < level; k++)
    pick[k] = k;
  for (;;) {
    memset(mode, 0, sizeof *mode * (size_t)nb);
    for (int k = 0; k < level; k++)
      mode[idx[pick[k]]] = 1;
    for (;;) {
      check_one(sim, mode, seen, facts, diag);
      built++;
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
      break;
    pick[k]++;
    for (int j = k + 1; j < level; j++)
      pick[j] = pick[j - 1] + 1;
  }
  return built;
}

int dgp_sim_check_modes(const dg_graph *g, dg_diag *diag, dg_graph_info *info) {
  int before = diag->count;
  dg_sim *sim = dgp_sim_create(g, diag);
  if (!sim)
    return diag->count - before;
  sim->in_check = true; /* modes are built to be checked, not stepped */
  int nb = sim->nb;
  int *mode = calloc((size_t)nb, sizeof *mode);
  int *count = calloc((size_t)nb, sizeof *count);
  seen_list seen = {0};
  mode_facts facts = {.acts = calloc((size_t)nb + 1, sizeof *facts.acts)};
  if (!mode || !count || !facts.acts) {
    dgp_diag_add(diag, DG_ERR_NOMEM, "", "out of memory");
    goto done;
  }
  /* The start mode is whatever init left; mode_set(start) must restore it,
   * so blocks report their current mode as the first (index 0). */
  double combos = 1.0;
  for (int i = 0; i < nb; i++) {
    count[i] = block_modes(&sim->blocks[i]);
    combos *= count[i];
  }
  int checked = 0;
  int rc = dgp_solver_build(sim);
  if (rc != DG_OK) {
    seen_before(&seen, sim->sv.ws.errmsg);
    dgp_sim_report_build(sim, rc, "", diag);
  } else {
    observe(sim, &facts, NULL);
    if (info)
      info->dofs = sim->sv.ndof;
  }
  checked++;
  if (combos <= MAX_MODE_COMBINATIONS) {
    /* odometer over all combinations, skipping the all-zero start */
    for (;;) {
      int i = 0;
      while (i < nb && ++mode[i] == count[i])
        mode[i++] = 0;
      if (i == nb)
        break;
      check_one(sim, mode, &seen, &facts, diag);
      checked++;
    }
  } else {
    int level = 0, switching = 0;
    for (int i = 0; i < nb; i++)
      switching += count[i] > 1;
    while (level < switching && level < MAX_PARTIAL_LEVEL) {
      double next = combos_at_level(count, nb, level + 1);
      if (checked + next > MAX_MODE_COMBINATIONS)
        break;
      level++;
      checked += check_level(sim, count, mode, level, &seen, &facts, diag);
    }
    if (info) {
      info->mode_level = level;
      info->switching_blocks = switching;
    }
  }
  if (info) {
    info->modes = checked;
    info->mode_combinations = combos;
  }
  if (diag->count == before)
    report_facts(sim, &facts, diag);
done:
  free(facts.acts);
  free(mode);
  free(count);
  free(seen.text);
  dg_sim_free(sim);
  return diag->count - before;
}
