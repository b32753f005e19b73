/* A running simulation seen from a host that keeps it between steps:
 * number parameters changed in place between steps (dgp_sim_tune) and the
 * simulation's state as bytes (dgp_sim_state_write / _read), what the FMU
 * runtime (fmu/) needs for tunable parameters and serialized FMU states.
 * See simstate.h. */
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

size_t dgp_sim_data_size(const dg_sim *sim) {
  size_t n = 0;
  for (int i = 0; i < sim->nb; i++)
    n += sim->blocks[i].klass->data_size;
  return n;
}

void dgp_sim_data_copy(const dg_sim *sim, unsigned char *out) {
  for (int i = 0; i < sim->nb; i++) {
    size_t ds = sim->blocks[i].klass->data_size;
    if (ds)
      memcpy(out, sim->blocks[i].data, ds);
    out += ds;
  }
}

/* The blocks' data as init leaves it for graph g's current parameters. */
/* The blocks' data as init leaves it (a simulation created, its blocks
 * initialized, nothing built or evaluated: a memo a signal fills, keyed on
 * the parameters, must not come across). */
static unsigned char *fresh_data(const dg_graph *g, size_t size, dg_error *err) {
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
  if (rc == DG_OK && w.n > 0) {
    before = fresh_data(g, size, err);
    rc = before ? DG_OK : err->code ? err->code : DG_ERR_NOMEM;
  }
  if (rc == DG_OK && w.n > 0) {
    for (int i = 0; i < w.n; i++)
      *w.moves[i].at = w.moves[i].value;
    after = fresh_data(g, size, err);
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
    sim->sv.ports.valid = false;
    dgp_bind_eval(sim);
  }
  if (rc == DG_OK)
    dgp_error_clear(err);
  free(before);
  free(after);
  free(w.moves);
  return rc;
}

/* ------------------------------------------------------------------------ */
/* State as bytes                                                           */

#define STATE_MAGIC "DGSTATE1"

typedef struct state_header {
  char magic[8];
  uint32_t solver_size; /* sizeof(dg_solver) of the writer */
  int32_t nb, nn, ns, n_inputs, n_channels;
  uint64_t data_size, hot_size, total;
  uint64_t checksum; /* FNV-1a of everything after the header */
} state_header;

typedef struct state_scalars {
  double t, ctx_t, ctx_dt, last_event;
  int64_t steps, topo_changes, events, segments;
} state_scalars;

static size_t hot_size(dg_sim *sim) { return dgp_solver_state_bytes(sim); }

size_t dgp_sim_state_size(const dg_sim *csim) {
  dg_sim *sim = (dg_sim *)csim; /* the solver's list of arrays is built from a non-const sim */
  return sizeof(state_header) + sizeof(dg_solver) + sizeof(state_scalars) + hot_size(sim) +
         dgp_sim_data_size(sim) + sizeof(double) * (size_t)(sim->n_inputs + sim->n_channels) +
         sizeof(int32_t) * (size_t)sim->n_inputs;
}

static uint64_t fnv1a(const unsigned char *p, size_t n) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; i++) {
    h ^= p[i];
    h *= 1099511628211ull;
  }
  return h;
}

static void header_of(dg_sim *sim, state_header *h) {
  memset(h, 0, sizeof *h);
  memcpy(h->magic, STATE_MAGIC, sizeof h->magic);
  h->solver_size = (uint32_t)sizeof(dg_solver);
  h->nb = sim->nb;
  h->nn = sim->nn;
  h->ns = sim->ns;
  h->n_inputs = sim->n_inputs;
  h->n_channels = sim->n_channels;
  h->data_size = dgp_sim_data_size(sim);
  h->hot_size = hot_size(sim);
  h->total = dgp_sim_state_size(sim);
}

static const dg_timed_input *timed_of(const dg_sim *sim, int input) {
  for (int k = 0; k < sim->n_timed; k++)
    if (sim->timed[k].input == input)
      return &sim->timed[k];
  return NULL;
}

static size_t state_write(dg_sim *sim, unsigned char *buf, size_t size, bool checksum) {
  if (!sim || !buf || sim->failed)
    return 0;
  size_t total = dgp_sim_state_size(sim);
  if (size < total)
    return 0;
  state_header h;
  header_of(sim, &h);
  unsigned char *p = buf + sizeof h;
  memcpy(p, &sim->sv, sizeof(dg_solver));
  p += sizeof(dg_solver);
  state_scalars sc = {sim->t,     sim->ctx.t,        sim->ctx.dt, sim->last_event,
                      sim->steps, sim->topo_changes, sim->events, sim->segments};
  memcpy(p, &sc, sizeof sc);
  p += sizeof sc;
  dgp_solver_save(sim, p);
  p += h.hot_size;
  dgp_sim_data_copy(sim, p);
  p += h.data_size;
  memcpy(p, sim->input, sizeof(double) * (size_t)sim->n_inputs);
  p += sizeof(double) * (size_t)sim->n_inputs;
  for (int i = 0; i < sim->n_inputs; i++) {
    const dg_timed_input *ti = timed_of(sim, i);
    int32_t piece = ti ? ti->piece : -1;
    memcpy(p, &piece, sizeof piece);
    p += sizeof piece;
  }
  if (sim->n_channels > 0)
    memcpy(p, sim->channel, sizeof(double) * (size_t)sim->n_channels);
  h.checksum = checksum ? fnv1a(buf + sizeof h, total - sizeof h) : 0;
  memcpy(buf, &h, sizeof h);
  return total;
}

size_t dgp_sim_state_write(dg_sim *sim, unsigned char *buf, size_t size) {
  return state_write(sim, buf, size, true);
}

size_t dgp_sim_state_save(dg_sim *sim, unsigned char *buf, size_t size) {
  return state_write(sim, buf, size, false);
}

static int state_refused(dg_error *err, const dg_sim *sim, const char *why) {
  dgp_error_set(err, DG_ERR_USAGE, sim ? sim->g->file : "", "", "not a state of this simulation: %s",
               why);
  return DG_ERR_USAGE;
}

static int state_read(dg_sim *sim, const unsigned char *buf, size_t size, const unsigned char *keep,
                      const unsigned char *keep_values, bool checksum, dg_error *err) {
  dgp_error_clear(err);
  if (!sim || !buf)
    return state_refused(err, sim, "no bytes given");
  state_header want, h;
  header_of(sim, &want);
  if (size < sizeof h)
    return state_refused(err, sim, "too short");
  memcpy(&h, buf, sizeof h);
  if (memcmp(h.magic, STATE_MAGIC, sizeof h.magic) != 0)
    return state_refused(err, sim, "no state header");
  if (h.solver_size != want.solver_size || h.nb != want.nb || h.nn != want.nn || h.ns != want.ns ||
      h.n_inputs != want.n_inputs || h.n_channels != want.n_channels ||
      h.data_size != want.data_size || h.hot_size != want.hot_size || h.total != want.total)
    return state_refused(err, sim, "written for another graph or build");
  if (size != want.total)
    return state_refused(err, sim, "wrong size");
  if (checksum && fnv1a(buf + sizeof h, size - sizeof h) != h.checksum)
    return state_refused(err, sim, "checksum mismatch (damaged bytes)");
  const unsigned char *p = buf + sizeof h;
  dg_solver saved;
  memcpy(&saved, p, sizeof saved);
  p += sizeof saved;
  if (saved.ndof < 0 || saved.ndof > sim->nn)
    return state_refused(err, sim, "bad degree-of-freedom count");
  state_scalars sc;
  memcpy(&sc, p, sizeof sc);
  p += sizeof sc;
  dgp_solver_load(sim, &saved, p);
  p += h.hot_size;
  for (int b = 0; b < sim->nb; b++) {
    size_t ds = sim->blocks[b].klass->data_size;
    unsigned char *d = sim->blocks[b].data;
    for (size_t k = 0; k < ds; k++)
      if (!keep || !keep[k])
        d[k] = p[k];
      else if (keep_values)
        d[k] = keep_values[k];
    p += ds;
    if (keep)
      keep += ds;
    if (keep_values)
      keep_values += ds;
  }
  memcpy(sim->input, p, sizeof(double) * (size_t)sim->n_inputs);
  p += sizeof(double) * (size_t)sim->n_inputs;
  for (int i = 0; i < sim->n_inputs; i++) {
    int32_t piece;
    memcpy(&piece, p, sizeof piece);
    p += sizeof piece;
    dg_timed_input *ti = (dg_timed_input *)timed_of(sim, i);
    if (ti && !ti->fn)
      ti->piece = piece < ti->n ? piece : ti->n - 1;
  }
  if (sim->n_channels > 0)
    memcpy(sim->channel, p, sizeof(double) * (size_t)sim->n_channels);
  /* as dg_sim_restore leaves a simulation */
  sim->t = sc.t;
  sim->last_event = sc.last_event;
  sim->steps = (long)sc.steps;
  sim->topo_changes = (long)sc.topo_changes;
  sim->events = (long)sc.events;
  sim->segments = (long)sc.segments;
  sim->ctx.t = sc.ctx_t;
  sim->ctx.dt = sc.ctx_dt;
  sim->ctx.speed = sim->sv.x;
  sim->ctx.torque = sim->sv.tau;
  sim->ctx.normal_load = sim->sv.normal_load;
  sim->ctx.state = sim->sv.s;
  sim->ctx.state_rate = sim->ctx.state_commit = NULL;
  sim->topo_request = false;
  sim->failed = false;
  dgp_error_clear(&sim->err);
  sim->sv.ports.valid = false;
  dgp_bind_eval(sim);
  return DG_OK;
}

int dgp_sim_state_read(dg_sim *sim, const unsigned char *buf, size_t size, const unsigned char *keep,
                      const unsigned char *keep_values, dg_error *err) {
  return state_read(sim, buf, size, keep, keep_values, true, err);
}

int dgp_sim_state_load(dg_sim *sim, const unsigned char *buf, size_t size) {
  return state_read(sim, buf, size, NULL, NULL, false, NULL);
}
