/* A running simulation seen from a host that keeps it between steps:
 * number parameters changed in place between steps (dgp_sim_tune) and the
 * simulation's state as bytes (lib/state.c), what the FMU runtime (fmu/)
 * needs for tunable parameters and serialized FMU states. See simstate.h. */
#include "run/simstate.h"

#include "sim.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* Parameters                                                               */

static const dg_param_def *def_named(const dg_param_def *defs, const char *key, size_t len) {
  for (const dg_param_def *d = defs; d && d->key; d++)
    if (strlen(d->key) == len && strncmp(d->key, key, len) == 0)
      return d;
  return NULL;
}

/* Whether a parameter with a `present` flag was given (or set by a field). */
static bool given(const unsigned char *base, const dg_param_def *d) {
  if (!d->present)
    return true;
  bool v;
  memcpy(&v, base + d->present - 1, sizeof v);
  return v;
}

double *dgp_graph_param_number(dg_graph *g, const char *key, const dg_param_def **def, int *block) {
  const char *dot = key ? strchr(key, '.') : NULL;
  if (!g || !dot || dot == key)
    return NULL;
  int b = dgp_graph_block_find_n(g, key, (size_t)(dot - key));
  if (b < 0 || !g->blocks[b].klass || !g->blocks[b].params)
    return NULL;
  const dg_param_def *defs = g->blocks[b].klass->params;
  unsigned char *base = g->blocks[b].params;
  for (const char *tok = dot + 1;;) {
    const char *end = strchr(tok, '.');
    size_t len = end ? (size_t)(end - tok) : strlen(tok);
    const dg_param_def *d = len ? def_named(defs, tok, len) : NULL;
    if (!d || !given(base, d))
      return NULL;
    if (!end) {
      if (d->kind != DG_PARAM_NUMBER)
        return NULL;
      if (def)
        *def = d;
      if (block)
        *block = b;
      return (double *)(void *)(base + d->offset);
    }
    if (d->kind != DG_PARAM_OBJECT)
      return NULL;
    base += d->offset;
    defs = d->fields;
    tok = end + 1;
  }
}

/* The blocks' data as init leaves it for graph g's current parameters. */
/* The blocks' data as init leaves it (a simulation created, its blocks
 * initialized, nothing built or evaluated: a memo a signal fills, keyed on
 * the parameters, must not come across). */
static unsigned char *fresh_data(const dg_graph *g, size_t size, unsigned *idle, dg_error *err) {
  dg_diag d;
  dgp_diag_init(&d, g->file, NULL, NULL);
  dg_sim *s = dgp_sim_create(g, &d);
  if (!s) {
    dgp_diag_to_error(&d, err);
    return NULL;
  }
  unsigned char *out = malloc(size ? size : 1);
  if (!out)
    dgp_error_set(err, DG_ERR_NOMEM, g->file, "", "out of memory");
  else
    dgp_sim_data_copy(s, out);
  if (idle) /* the hooks the inits do without, with these values */
    memcpy(idle, s->idle, sizeof *idle * (size_t)s->nb);
  dg_sim_free(s);
  return out;
}

/* One number parameter that a tuning moves: where it is and its new value. */
typedef struct tune_move {
  double *at;
  double value;
  double old;
} tune_move;

typedef struct tune_walk {
  tune_move *moves;
  int n, cap;
  bool bad; /* a number that may not change differs, or no memory */
} tune_walk;

/* Every number of one block's parameters (object `defs` at base `cur` in
 * the running graph, `want` in the checked load) that differs: the
 * dynamics' ones move, any other one is refused. `dynamic`: inside an
 * object flagged DG_P_DYNAMICS. */
static void tune_collect(tune_walk *w, const dg_param_def *defs, unsigned char *cur,
                         const unsigned char *want, bool dynamic) {
  for (const dg_param_def *d = defs; d && d->key; d++) {
    if (d->present && given(cur, d) != given(want, d)) {
      w->bad = true; /* presence cannot change while running */
      continue;
    }
    if (!given(cur, d))
      continue;
    bool dyn = dynamic || (d->flags & DG_P_DYNAMICS);
    if (d->kind == DG_PARAM_OBJECT) {
      tune_collect(w, d->fields, cur + d->offset, want + d->offset, dyn);
      continue;
    }
    if (d->kind != DG_PARAM_NUMBER)
      continue; /* tables, arrays, enums: the overrides never name them */
    double a, b;
    memcpy(&a, cur + d->offset, sizeof a);
    memcpy(&b, want + d->offset, sizeof b);
    if (memcmp(&a, &b, sizeof a) == 0)
      continue;
    if (!dyn) {
      w->bad = true;
      continue;
    }
    if (w->n == w->cap) {
      int cap = w->cap ? 2 * w->cap : 16;
      tune_move *m = realloc(w->moves, sizeof *m * (size_t)cap);
      if (!m) {
        w->bad = true;
        return;
      }
      w->moves = m;
      w->cap = cap;
    }
    w->moves[w->n++] = (tune_move){(double *)(void *)(cur + d->offset), b, a};
  }
}

int dgp_sim_tune(dg_sim *sim, const char *json, const char *name, int n, const dg_override *ov,
                dg_error *err_out) {
  dg_error local;
  dg_error *err = err_out ? err_out : &local;
  dgp_error_clear(err);
  if (!sim || !json || n < 0 || (n > 0 && !ov)) {
    dgp_error_set(err, DG_ERR_USAGE, "", "", "no simulation, graph text or overrides given");
    return DG_ERR_USAGE;
  }
  dg_graph *g = (dg_graph *)sim->g;
  const char *file = name ? name : g->file;
  /* every key a number the dynamics alone read */
  for (int i = 0; i < n; i++) {
    const dg_param_def *def = NULL;
    const double *inertia = NULL;
    unsigned effect = dgp_graph_override_effect(g, ov[i].key, &def, &inertia);
    char *end = NULL;
    double v = ov[i].value ? strtod(ov[i].value, &end) : NAN;
    if (effect != DG_P_DYNAMICS || !dgp_graph_param_number(g, ov[i].key, NULL, NULL)) {
      dgp_error_set(err, DG_ERR_USAGE, file, "",
                   "parameter %s cannot change while the simulation runs (only numbers that "
                   "the dynamics alone read can)",
                   ov[i].key ? ov[i].key : "(null)");
      return DG_ERR_USAGE;
    }
    if (!end || end == ov[i].value || *end || !isfinite(v)) {
      dgp_error_set(err, DG_ERR_RANGE, file, "", "parameter %s: expected a finite number (got %s)",
                   ov[i].key, ov[i].value ? ov[i].value : "(null)");
      return DG_ERR_RANGE;
    }
  }
  /* checked as loading checks them (ranges, the classes' own checks); the
   * checked load has every parameter's new value */
  char *text = n > 0 ? dg_override_apply(json, file, n, ov, err) : NULL;
  dg_graph *want = n == 0 || text ? dgp_graph_load_string_opts(g->reg, text ? text : json, file,
                                                              DG_LOAD_NO_MODE_CHECK, err)
                                  : NULL;
  free(text);
  if (!want)
    return err->code ? err->code : DG_ERR_RANGE;
  tune_walk w = {0};
  bool same_shape = want->num_blocks == g->num_blocks;
  for (int b = 0; same_shape && b < g->num_blocks; b++) {
    if (want->blocks[b].klass != g->blocks[b].klass || strcmp(want->blocks[b].id, g->blocks[b].id))
      same_shape = false;
    else
      tune_collect(&w, g->blocks[b].klass->params, g->blocks[b].params, want->blocks[b].params,
                   false);
  }
  dg_graph_free(want);
  int rc = DG_OK;
  if (!same_shape || w.bad) {
    dgp_error_set(err, DG_ERR_USAGE, file, "",
                 "the graph's text and the running graph differ in more than the numbers the "
                 "dynamics read");
    rc = DG_ERR_USAGE;
  }
  size_t size = dgp_sim_data_size(sim);
  unsigned char *before = NULL, *after = NULL;
  unsigned *idle = NULL;
  if (rc == DG_OK && w.n > 0) {
    idle = calloc((size_t)sim->nb + 1, sizeof *idle);
    if (!idle) {
      dgp_error_set(err, DG_ERR_NOMEM, file, "", "out of memory");
      rc = DG_ERR_NOMEM;
    }
  }
  if (rc == DG_OK && w.n > 0) {
    before = fresh_data(g, size, NULL, err);
    rc = before ? DG_OK : err->code ? err->code : DG_ERR_NOMEM;
  }
  if (rc == DG_OK && w.n > 0) {
    for (int i = 0; i < w.n; i++)
      *w.moves[i].at = w.moves[i].value;
    after = fresh_data(g, size, idle, err);
    if (!after) { /* the old values back: nothing changed */
      for (int i = w.n - 1; i >= 0; i--)
        *w.moves[i].at = w.moves[i].old;
      rc = err->code ? err->code : DG_ERR_NOMEM;
    }
  }
  if (rc == DG_OK && w.n > 0) {
    /* what init derives from the parameters: the bytes the change moved */
    const unsigned char *p = before, *q = after;
    for (int b = 0; b < sim->nb; b++) {
      size_t ds = sim->blocks[b].klass->data_size;
      unsigned char *d = sim->blocks[b].data;
      for (size_t k = 0; k < ds; k++)
        if (p[k] != q[k])
          d[k] = q[k];
      p += ds;
      q += ds;
    }
    sim->input_epoch++; /* caches of the state's values go (port torques) */
    sim->params_epoch++; /* and the blocks' memos (dg_ctx_params_epoch) */
    g->tunes++;          /* and units compiled with the old values (compile.c) */
    /* a hook that init left out for the old values (a load without
     * friction has no torque) may have work with the new ones */
    dgp_sim_set_idle(sim, idle);
    sim->sv.ports.valid = false;
    dgp_bind_eval(sim);
  }
  if (rc == DG_OK)
    dgp_error_clear(err);
  free(before);
  free(after);
  free(idle);
  free(w.moves);
  return rc;
}
