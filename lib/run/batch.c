/* Batch runs: parameter overrides on graph JSON, the built-in launch input
 * pattern, and many independent simulations on several threads.
 *
 * Overrides edit the graph's JSON object before it is loaded, so a swept
 * value goes through exactly the validation of a value written in the file
 * (types, ranges, cross-checks, every reachable mode).
 *
 * The every-mode check runs once per distinct structure, not once per
 * variant. Before the threads start, dg_batch_run loads the base graph in
 * full and sorts each variant's overrides by what they can do to that
 * check, as the parameter tables say (DG_P_DYNAMICS, DG_P_INERTIA in
 * block.h):
 *   - only dynamics parameters (torque maps, capacities, tyre coefficients,
 *     shift speeds, road load, ...): the check comes out as the base
 *     graph's (or its structure's, below), so the variant is loaded
 *     without it (DG_LOAD_NO_MODE_CHECK);
 *   - inertias too: the check sees an inertia only in M = Gᵀ diag(I) G,
 *     tested mode by mode for positive definiteness by a Cholesky whose
 *     pivots must exceed PIVOT_EPS times M's largest diagonal entry. M is
 *     affine in the inertias, a pivot (a Schur complement) is concave in
 *     them where the pivots before it are positive, and the largest
 *     diagonal is convex, so the inertias that pass form a convex set:
 *     when the values at the corners of a box pass, every value inside
 *     does (in exact arithmetic: rounding moves a pivot by some 1e-16 of
 *     the scale against a threshold of 1e-10, so only a corner within a
 *     hair of the threshold could disagree, as any check there may). So
 *     the batch checks the corners of the boxes its variants span around
 *     the base values ("probes": full loads of the base graph with those
 *     inertias) and loads the variants inside boxes that passed without
 *     the check. Zero is no special case: if 0 leaves a degree of freedom
 *     without inertia, the probe at 0 fails and the variants on that side
 *     are checked in full. (Nor is zero the only value that fails: the
 *     pivot test is relative, so 1e-12 kg·m² beside a 0.5 kg·m² flywheel
 *     counts as none, and the probes catch that too);
 *   - anything else (a ratio, a kind, an unknown key, a parameter of a
 *     plugin's class, whose table has no flags) is structural.
 * Variants with the same structural overrides (same keys and value texts,
 * in the same order) share one structure: the base graph with those
 * overrides. When the variants that would reuse its check outnumber the
 * checks it costs (its own and its probes), it is loaded in full once and
 * its variants are sorted against it as above; otherwise, and when it
 * fails, each is checked in full. (A variant in which a structural override
 * and another one overlap, "gearbox.shift" and "gearbox.shift.mode", is not
 * its structure plus the others: it is checked in full.)
 * Everything else about loading (syntax, parameters, did-you-mean, ranges,
 * the classes' checks) runs for every variant, and a variant that reuses
 * a check is one that the full check accepts, so results and error
 * messages are those of loading every variant in full.
 *
 * Threads. dg_batch_run starts T POSIX threads; thread k runs variants
 * k, k + T, k + 2T, ... one after another, each as a complete simulation of
 * its own (graph, sim, driver created and freed by that thread). What the
 * threads share is read-only (the options, the variants, the scenario, the
 * registry) and each writes only its own variants' result slots: there is
 * no lock, no atomic counter and no shared mutable state, so a variant's
 * result is bit-for-bit the result of running it alone. The static
 * assignment costs at most one run of imbalance at the end when variants
 * take about as long as each other, the case of a sweep. */
#include "run/batch.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* 100 km/h in m/s, the 0–100 mark. */
#define KMH100 (100.0 / 3.6)
/* Seconds of a manual gear in the launch pattern. */
#define LAUNCH_GEAR_TIME 2.0

/* ------------------------------------------------------------------------ */
/* Overrides                                                                */

/* "key=value" of an override for messages (truncated to fit). */
static void override_label(const dg_override *o, char *buf, size_t size) {
  snprintf(buf, size, "%s=%s", o->key ? o->key : "", o->value ? o->value : "");
}

/* The value's JSON: JSON text, else the text as a string. */
static json_t *override_value(const char *text) {
  json_error_t je;
  json_t *v = json_loads(text, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, &je);
  return v ? v : json_string(text);
}

static int override_error(dg_error *err, int code, const char *name, const char *path,
                          const dg_override *o, const char *fmt, ...) DG_PRINTF(6, 7);
static int override_error(dg_error *err, int code, const char *name, const char *path,
                          const dg_override *o, const char *fmt, ...) {
  /* sized so that "override LABEL: WHAT" always fits the error text */
  char what[180], label[120], text[DG_ERROR_TEXT_LEN];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  override_label(o, label, sizeof label);
  snprintf(text, sizeof text, "override %s: %s", label, what);
  dgp_error_set(err, code, name, path, "%s", text);
  return code;
}

/* Applies one override to the parsed graph `root`. */
static int apply_one(json_t *root, const char *name, const dg_override *o, dg_error *err) {
  if (!o->key || !o->value)
    return override_error(err, DG_ERR_USAGE, name, "", o, "no key or no value");
  const char *dot = strchr(o->key, '.');
  if (!dot || dot == o->key || dot[1] == '\0')
    return override_error(err, DG_ERR_USAGE, name, "", o,
                          "the key must be BLOCK.PARAM (or BLOCK.PARAM.FIELD)");
  json_t *blocks = json_object_get(root, "blocks");
  if (!json_is_object(blocks))
    return override_error(err, DG_ERR_SCHEMA, name, "/blocks", o, "the graph has no blocks object");
  size_t idlen = (size_t)(dot - o->key);
  char *id = malloc(idlen + 1);
  char *rest = strdup(dot + 1);
  json_t *value = override_value(o->value);
  int rc = DG_OK;
  char path[DG_ERROR_PATH_LEN];
  if (!id || !rest || !value) {
    rc = override_error(err, DG_ERR_NOMEM, name, "", o, "out of memory");
    goto done;
  }
  memcpy(id, o->key, idlen);
  id[idlen] = '\0';
  dgp_pointer_append(path, sizeof path, "/blocks", id);
  json_t *obj = json_object_get(blocks, id);
  if (!json_is_object(obj)) {
    size_t nb = json_object_size(blocks), k = 0;
    const char **ids = calloc(nb ? nb : 1, sizeof *ids);
    const char *bid;
    json_t *bv;
    json_object_foreach(blocks, bid, bv) {
      if (ids)
        ids[k++] = bid;
    }
    const char *close = ids ? dg_suggest(id, ids, (int)k) : NULL;
    if (obj)
      rc = override_error(err, DG_ERR_SCHEMA, name, path, o, "block \"%s\" is not an object", id);
    else if (close)
      rc = override_error(err, DG_ERR_UNKNOWN, name, path, o,
                          "no block \"%s\" in the graph; did you mean \"%s\"?", id, close);
    else
      rc = override_error(err, DG_ERR_UNKNOWN, name, path, o, "no block \"%s\" in the graph", id);
    free(ids);
    goto done;
  }
  /* walk BLOCK.a.b.c: objects down to the last key (created when absent) */
  char *save = NULL;
  char *tok = strtok_r(rest, ".", &save);
  while (tok) {
    char *next = strtok_r(NULL, ".", &save);
    dgp_pointer_append(path, sizeof path, path, tok);
    if (!next) {
      if (json_object_set(obj, tok, value) != 0)
        rc = override_error(err, DG_ERR_NOMEM, name, path, o, "out of memory");
      break;
    }
    json_t *child = json_object_get(obj, tok);
    if (!child) {
      child = json_object();
      if (!child || json_object_set_new(obj, tok, child) != 0) {
        rc = override_error(err, DG_ERR_NOMEM, name, path, o, "out of memory");
        break;
      }
    } else if (!json_is_object(child)) {
      rc = override_error(err, DG_ERR_SCHEMA, name, path, o,
                          "\"%s\" is not an object (got %s), so it has no field \"%s\"", tok,
                          dgp_json_type_name(child), next);
      break;
    }
    obj = child;
    tok = next;
  }
  if (!tok && rc == DG_OK)
    rc = override_error(err, DG_ERR_USAGE, name, path, o, "empty parameter name");
done:
  json_decref(value);
  free(id);
  free(rest);
  return rc;
}

char *dg_override_apply(const char *json, const char *name, int n, const dg_override *ov,
                        dg_error *err) {
  if (!name)
    name = "<string>";
  dgp_error_clear(err);
  dg_diag d;
  dgp_diag_init(&d, name, NULL, NULL);
  json_t *root = dgp_json_parse(json, name, &d);
  if (!root) {
    dgp_diag_to_error(&d, err);
    return NULL;
  }
  char *out = NULL;
  if (!json_is_object(root)) {
    dgp_error_set(err, DG_ERR_SCHEMA, name, "", "expected a graph object, got %s",
                 dgp_json_type_name(root));
    goto done;
  }
  for (int i = 0; i < n; i++)
    if (apply_one(root, name, &ov[i], err) != DG_OK)
      goto done;
  /* jansson keeps insertion order and prints reals with 17 digits */
  out = json_dumps(root, JSON_COMPACT);
  if (!out)
    dgp_error_set(err, DG_ERR_NOMEM, name, "", "out of memory");
done:
  json_decref(root);
  return out;
}

/* Is JSON pointer `prefix` equal to `path` or one of its ancestors? */
static bool pointer_within(const char *prefix, const char *path) {
  size_t n = strlen(prefix);
  return strncmp(prefix, path, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

/* The pointer an override writes (/blocks/id/param/field). */
static void override_pointer(const dg_override *o, char *buf, size_t size) {
  snprintf(buf, size, "/blocks");
  const char *k = o->key ? o->key : "";
  while (*k) {
    const char *dot = strchr(k, '.');
    size_t len = dot ? (size_t)(dot - k) : strlen(k);
    char tok[DG_ERROR_PATH_LEN];
    snprintf(tok, sizeof tok, "%.*s", (int)len, k);
    dgp_pointer_append(buf, size, buf, tok);
    k += len + (dot ? 1 : 0);
  }
}

/* Appends " (suffix)" to an error's text, keeping what fits. */
static void error_suffix(dg_error *err, const char *suffix) {
  size_t len = strlen(err->text);
  snprintf(err->text + len, sizeof err->text - len, " (%s)", suffix);
}

/* dg_graph_load_overrides with load options (DG_LOAD_*). */
static dg_graph *load_overrides(const dg_registry *reg, const char *json, const char *name, int n,
                                const dg_override *ov, unsigned opts, dg_error *err) {
  if (n <= 0)
    return dgp_graph_load_string_opts(reg, json, name, opts, err);
  char *text = dg_override_apply(json, name, n, ov, err);
  if (!text)
    return NULL;
  dg_error local;
  dg_graph *g = dgp_graph_load_string_opts(reg, text, name, opts, &local);
  free(text);
  if (g) {
    dgp_error_clear(err);
    return g;
  }
  char ptr[DG_ERROR_PATH_LEN], label[DG_ERROR_TEXT_LEN / 2], suffix[DG_ERROR_TEXT_LEN / 2 + 16];
  int which = -1;
  for (int i = n - 1; i >= 0 && which < 0; i--) { /* the last override of a path wins */
    override_pointer(&ov[i], ptr, sizeof ptr);
    if (pointer_within(ptr, local.path))
      which = i;
  }
  if (which >= 0) {
    override_label(&ov[which], label, sizeof label);
    snprintf(suffix, sizeof suffix, "override %s", label);
  } else {
    snprintf(suffix, sizeof suffix, "with %d override%s", n, n == 1 ? "" : "s");
  }
  error_suffix(&local, suffix);
  if (err)
    *err = local;
  return NULL;
}

dg_graph *dg_graph_load_overrides(const dg_registry *reg, const char *json, const char *name,
                                  int n, const dg_override *ov, dg_error *err) {
  return load_overrides(reg, json, name, n, ov, 0, err);
}

/* ------------------------------------------------------------------------ */
/* The launch input pattern                                                 */

void dg_batch_launch_inputs(dg_sim *sim, double t) {
  dg_sim_set_input(sim, DG_INPUT_THROTTLE, 1.0);
  dg_sim_set_input(sim, DG_INPUT_BRAKE, 0.0);
  dg_sim_set_input(sim, DG_INPUT_CLUTCH, 0.0);
  dg_sim_set_input(sim, DG_INPUT_GEAR, 1.0 + floor(t / LAUNCH_GEAR_TIME));
}

/* ------------------------------------------------------------------------ */
/* One run                                                                  */

void dg_batch_options_init(dg_batch_options *o) {
  memset(o, 0, sizeof *o);
  o->dt = NAN;
  o->duration = NAN;
}

static double pick(double given, double from_scenario, double fallback) {
  if (given > 0.0 && isfinite(given))
    return given;
  if (from_scenario > 0.0 && isfinite(from_scenario))
    return from_scenario;
  return fallback;
}

/* Speed signal id: the option's name, else "<id>.speed" of the first
 * vehicle block; -1 when there is none. */
static int speed_signal(const dg_sim *sim, const char *name) {
  if (name)
    return dg_sim_signal_find(sim, name);
  const dg_graph *g = dg_sim_graph(sim);
  for (int i = 0; i < dg_graph_block_count(g); i++) {
    if (strcmp(dg_graph_block_type(g, i), "vehicle") != 0)
      continue;
    char buf[DG_ERROR_PATH_LEN];
    snprintf(buf, sizeof buf, "%s.speed", dg_graph_block_id(g, i));
    return dg_sim_signal_find(sim, buf);
  }
  return -1;
}

static void result_fail(dg_batch_result *r, const dg_error *e) {
  r->code = e->code ? e->code : DG_ERR_BLOCK;
  r->error = *e;
}

/* The first problem a dg_diag_fn reports, into *err. */
typedef struct first_of {
  dg_error *err;
  bool have;
} first_of;

static void keep_first_of(const dg_error *e, void *user) {
  first_of *f = user;
  if (!f->have) {
    *f->err = *e;
    f->have = true;
  }
}

/* One variant, start to end (see dg_batch_run), or only its loading
 * (`load_only`, dg_batch_validate); `opts` are its load options
 * (DG_LOAD_NO_MODE_CHECK when it reuses the base graph's check). */
static void run_variant(const dg_batch_options *o, const dg_batch_variant *v, unsigned opts,
                        bool load_only, dg_batch_result *r, double *finals) {
  memset(r, 0, sizeof *r);
  r->t_0_100 = r->top_speed = NAN;
  for (int k = 0; k < o->n_signals; k++)
    finals[k] = NAN;
  dg_error err;
  dg_graph *g = load_overrides(o->reg, o->graph_json, o->graph_name, v->n_overrides,
                               v->overrides, opts, &err);
  dg_sim *sim = NULL;
  dg_driver *drv = NULL;
  if (!g) {
    result_fail(r, &err);
    return;
  }
  if (load_only)
    goto done;
  sim = dg_sim_new(g, &err);
  if (!sim) {
    result_fail(r, &err);
    goto done;
  }
  const dg_scenario *scn = o->scenario;
  {
    /* the steps keep what the run reads: the work (its energy figures),
     * the angles only for a final value or a stop condition that reads one */
    unsigned keep = DG_KEEP_WORK | dg_scenario_keep(scn, sim);
    for (int k = 0; k < o->n_signals; k++)
      keep |= dg_sim_signal_keep(sim, dg_sim_signal_find(sim, o->signals[k]));
    if (dg_sim_set_keep(sim, keep, &err) != DG_OK) {
      result_fail(r, &err);
      goto done;
    }
  }
  if (scn) {
    drv = dg_driver_new(scn, sim, &err);
    if (!drv) {
      result_fail(r, &err);
      goto done;
    }
  } else if (dg_graph_channel_count(g) > 0) {
    /* the launch pattern gives the standard channels only: a channel the
     * graph binds by name would stay at 0 — a plausible wrong answer */
    dgp_error_set(&err, DG_ERR_USAGE, dg_graph_file(g), dg_graph_channel_path(g, 0),
                 "the launch pattern gives throttle, brake, clutch and gear only, but the graph "
                 "binds the channel \"%s\": give a scenario that gives it",
                 dg_graph_channel_name(g, 0));
    result_fail(r, &err);
    goto done;
  } else {
    dg_batch_launch_inputs(sim, 0.0);
    if (dg_sim_start(sim, &err) != DG_OK) {
      result_fail(r, &err);
      goto done;
    }
  }
  double dt = pick(o->dt, dg_scenario_dt(scn), 0.001);
  double duration = pick(o->duration, dg_scenario_duration(scn), 10.0);
  long total = (long)ceil(duration / dt - 1e-9);
  {
    first_of fo = {.err = &err};
    if (dg_graph_check_step(g, dt, keep_first_of, &fo) > 0) {
      result_fail(r, &err);
      goto done;
    }
  }
  int sp = speed_signal(sim, o->speed_signal);
  double v_prev = sp >= 0 ? dg_sim_signal(sim, sp) : NAN, t_prev = dg_sim_time(sim);
  if (sp >= 0) {
    r->top_speed = v_prev;
    if (v_prev >= KMH100)
      r->t_0_100 = t_prev;
  }
  bool stopped = dg_driver_should_stop(drv);
  for (long k = 0; k < total && !stopped; k++) {
    double t = (double)k * dt;
    if (drv)
      dg_driver_apply(drv, t);
    else
      dg_batch_launch_inputs(sim, t);
    int rc = dg_sim_step(sim, dt);
    r->steps = k + 1;
    if (rc != DG_OK) {
      result_fail(r, dg_sim_last_error(sim));
      break;
    }
    if (sp >= 0) {
      double vel = dg_sim_signal(sim, sp), tn = dg_sim_time(sim);
      if (vel > r->top_speed)
        r->top_speed = vel;
      if (isnan(r->t_0_100) && vel >= KMH100)
        r->t_0_100 = t_prev + (tn - t_prev) * ((KMH100 - v_prev) / (vel - v_prev));
      v_prev = vel;
      t_prev = tn;
    }
    stopped = dg_driver_should_stop(drv);
  }
  r->final_time = dg_sim_time(sim);
  r->topology_changes = dg_sim_topology_changes(sim);
  dg_energy e;
  dg_sim_energy(sim, &e);
  r->balance_error = e.balance_error;
  r->work_in = e.work_in;
  for (int k = 0; k < o->n_signals; k++)
    finals[k] = dg_sim_signal(sim, dg_sim_signal_find(sim, o->signals[k]));
done:
  dg_driver_free(drv);
  dg_sim_free(sim);
  dg_graph_free(g);
}

/* ------------------------------------------------------------------------ */
/* Which variants reuse an every-mode check                                 */

/* Inertia parameters the variants of one structure may vary and still
 * reuse its check. The probes are points of {base, lo, hi}^k, so at most
 * 3^k - 1 = 26 of them. */
#define MAX_AXES 3
#define MAX_POINTS 27 /* 3^MAX_AXES */

/* Where a variant's inertia lies on its axis: the digit of a probe point. */
enum { SIDE_BASE, SIDE_LOW, SIDE_HIGH };

/* What a variant's other overrides can do to its structure's check. */
enum { VARIANT_FULL, VARIANT_SAME, VARIANT_INERTIA };

typedef struct axis {
  const double *param; /* the structure graph's parsed value: identifies the parameter */
  const char *key;     /* an override key naming it (a variant's, borrowed) */
  double base, lo, hi; /* the structure's value, the smallest and largest a variant gives */
} axis;

/* A structure: the base graph with the structural overrides of variant
 * `v` (none for v < 0: the base graph itself), and the variants that
 * share it. */
typedef struct group {
  int v;
  const int *members;
  int m;
  bool valid;                 /* its every-mode check passed */
  int n_axes;                 /* the inertias its members vary */
  axis axes[MAX_AXES];
  int n_inertia, n_same;      /* members by kind */
  bool needed[MAX_POINTS];    /* probe points its members' boxes need */
  int n_points;
  bool passed[MAX_POINTS];    /* probe points that passed */
} group;

/* A full load the plan needs: group g's structure (point 0), or one of
 * its probe points. The structure's job also sorts the group's members
 * against the loaded graph. */
typedef struct check_job {
  group *g;
  int point;
  bool passed;
} check_job;

typedef struct plan {
  const dg_batch_options *opt;
  const dg_graph *base; /* loaded and checked in full */
  const dg_batch_variant *variants;
  int threads;
  int *first;                /* per variant: its first override's index in `structural` */
  unsigned char *structural; /* per override: 1 when it may change the check (on the base graph) */
  unsigned char *kind;       /* per variant: VARIANT_* */
  unsigned char (*side)[MAX_AXES];
  unsigned char *reuse;      /* per variant: 1 to load it without the check */
  dg_batch_stats stats;
} plan;

static const int pow3[MAX_AXES + 1] = {1, 3, 9, 27};

static const dg_override *override_at(const plan *p, int v, int k) {
  return &p->variants[v].overrides[k];
}
static bool is_structural(const plan *p, int v, int k) { return p->structural[p->first[v] + k]; }

/* The next level of an override key as the override walks it
 * (dg_override_apply: the block id up to the first '.', then the
 * non-empty names between dots); its length, 0 at the end. */
static size_t key_level(const char **k) {
  while (**k == '.')
    (*k)++;
  return strcspn(*k, ".");
}

/* Do two override keys set the same value, or one a value inside the
 * other's? Then their order matters and they do not commute. */
static bool keys_overlap(const char *a, const char *b) {
  if (!a || !b)
    return true;
  size_t la = strcspn(a, "."), lb = strcspn(b, ".");
  if (la != lb || strncmp(a, b, la) != 0)
    return false;
  a += la;
  b += lb;
  for (;;) {
    la = key_level(&a);
    lb = key_level(&b);
    if (la == 0 || lb == 0)
      return true;
    if (la != lb || strncmp(a, b, la) != 0)
      return false;
    a += la;
    b += lb;
  }
}

/* The order of structures: the structural overrides in order, key then
 * value; equal lists are one structure. */
static int structure_cmp(const plan *p, int a, int b) {
  const dg_batch_variant *va = &p->variants[a], *vb = &p->variants[b];
  int i = 0, j = 0;
  for (;;) {
    while (i < va->n_overrides && !is_structural(p, a, i))
      i++;
    while (j < vb->n_overrides && !is_structural(p, b, j))
      j++;
    if (i == va->n_overrides || j == vb->n_overrides)
      return (i < va->n_overrides) - (j < vb->n_overrides);
    const dg_override *x = override_at(p, a, i++), *y = override_at(p, b, j++);
    int c = strcmp(x->key ? x->key : "", y->key ? y->key : "");
    if (c == 0)
      c = strcmp(x->value ? x->value : "", y->value ? y->value : "");
    if (c != 0)
      return c;
  }
}

typedef struct sort_item {
  const plan *p;
  int v;
} sort_item;

static int sort_item_cmp(const void *x, const void *y) {
  const sort_item *a = x, *b = y;
  int c = structure_cmp(a->p, a->v, b->v);
  return c ? c : (a->v > b->v) - (a->v < b->v);
}

/* One override's inertia value (what the loader parses), the variant's
 * last one for that parameter winning. */
typedef struct inertia_value {
  const double *param;
  const char *key;
  double value;
} inertia_value;

/* Sorts variant v by its overrides that are not structural against
 * `graph`, group g's structure (VARIANT_*); for VARIANT_INERTIA, side[a]
 * says where its value lies on axis a of g (added as variants need them). */
static int classify(const plan *p, const dg_graph *graph, group *g, int v,
                    unsigned char side[MAX_AXES]) {
  inertia_value iv[MAX_AXES];
  int m = 0;
  memset(side, SIDE_BASE, MAX_AXES);
  for (int k = 0; k < p->variants[v].n_overrides; k++) {
    if (is_structural(p, v, k))
      continue; /* in the structure already */
    const dg_override *o = override_at(p, v, k);
    const dg_param_def *def = NULL;
    const double *param = NULL;
    unsigned effect = dgp_graph_override_effect(graph, o->key, &def, &param);
    if (effect == DG_P_DYNAMICS)
      continue;
    if (effect != DG_P_INERTIA || !o->value)
      return VARIANT_FULL;
    json_t *j = override_value(o->value);
    bool number = j && json_is_number(j);
    double x = number ? json_number_value(j) : 0.0;
    json_decref(j);
    /* a value parsing refuses never reaches the check: load it in full */
    if (!number || !dgp_param_value_ok(def, x))
      return VARIANT_FULL;
    int at = 0;
    while (at < m && iv[at].param != param)
      at++;
    if (at == MAX_AXES)
      return VARIANT_FULL;
    iv[at] = (inertia_value){param, o->key, x};
    m = at == m ? m + 1 : m;
  }
  int axis_of[MAX_AXES], added = 0;
  for (int i = 0; i < m; i++) {
    axis_of[i] = -1;
    if (iv[i].value == *iv[i].param) /* the structure's own value: nothing changes */
      continue;
    for (int a = 0; a < g->n_axes && axis_of[i] < 0; a++)
      if (g->axes[a].param == iv[i].param)
        axis_of[i] = a;
    if (axis_of[i] < 0)
      axis_of[i] = g->n_axes + added++;
  }
  if (g->n_axes + added > MAX_AXES)
    return VARIANT_FULL;
  bool any = false;
  for (int i = 0; i < m; i++) {
    int a = axis_of[i];
    if (a < 0)
      continue;
    if (a >= g->n_axes) {
      double b = *iv[i].param;
      g->axes[a] = (axis){iv[i].param, iv[i].key, b, b, b};
      g->n_axes = a + 1;
    }
    axis *ax = &g->axes[a];
    double x = iv[i].value;
    side[a] = x < ax->base ? SIDE_LOW : SIDE_HIGH;
    ax->lo = fmin(ax->lo, x);
    ax->hi = fmax(ax->hi, x);
    any = true;
  }
  return any ? VARIANT_INERTIA : VARIANT_SAME;
}

/* The probe points a variant's box needs: its corners other than the
 * structure's own values, as base-3 numbers (digit a: SIDE_* on axis a).
 * Returns how many. */
static int box_corners(const unsigned char side[MAX_AXES], int corners[MAX_POINTS]) {
  int dev[MAX_AXES], m = 0, n = 0;
  for (int a = 0; a < MAX_AXES; a++)
    if (side[a] != SIDE_BASE)
      dev[m++] = a;
  for (int mask = 1; mask < (1 << m); mask++) {
    int point = 0;
    for (int j = 0; j < m; j++)
      if (mask & (1 << j))
        point += side[dev[j]] * pow3[dev[j]];
    corners[n++] = point;
  }
  return n;
}

/* Sorts group g's members against `graph` (its structure, or the base
 * graph standing in for it to count what checking it would save): their
 * kinds and sides, g's axes and the probe points their boxes need. */
static void sort_members(plan *p, const dg_graph *graph, group *g) {
  int corners[MAX_POINTS];
  g->n_axes = g->n_inertia = g->n_same = g->n_points = 0;
  memset(g->needed, 0, sizeof g->needed);
  for (int i = 0; i < g->m; i++) {
    int v = g->members[i];
    p->kind[v] = (unsigned char)classify(p, graph, g, v, p->side[v]);
    g->n_same += p->kind[v] == VARIANT_SAME;
    g->n_inertia += p->kind[v] == VARIANT_INERTIA;
    if (p->kind[v] != VARIANT_INERTIA)
      continue;
    int c = box_corners(p->side[v], corners);
    for (int k = 0; k < c; k++) {
      g->n_points += !g->needed[corners[k]];
      g->needed[corners[k]] = true;
    }
  }
}

/* Whether the probes of g are worth their cost: a probe costs what a
 * variant's own check does, so only when the variants it serves outnumber
 * the probes. */
static bool worth_probing(const group *g) { return g->n_points < g->n_inertia; }

/* Whether checking g's structure saves checks: the variants that would
 * reuse it outnumber the checks it costs, its own and its probes. */
static bool worth_checking(const group *g) {
  bool probe = worth_probing(g);
  return g->n_same + (probe ? g->n_inertia : 0) > 1 + (probe ? g->n_points : 0);
}

/* Runs one check job: loads the base graph with the structural overrides
 * of its group and, for a probe, the inertias of its point, in full. */
static void run_check(plan *p, check_job *job) {
  group *g = job->g;
  int ns = g->v >= 0 ? p->variants[g->v].n_overrides : 0, n = 0;
  dg_override *ov = malloc(sizeof *ov * (size_t)(ns + MAX_AXES));
  char text[MAX_AXES][32];
  job->passed = false;
  if (!ov)
    return;
  for (int k = 0; k < ns; k++)
    if (is_structural(p, g->v, k))
      ov[n++] = *override_at(p, g->v, k);
  for (int a = 0; a < g->n_axes; a++) {
    int digit = job->point / pow3[a] % 3;
    if (digit == SIDE_BASE)
      continue;
    /* 17 significant digits read back as the same double */
    snprintf(text[a], sizeof text[a], "%.17g", digit == SIDE_LOW ? g->axes[a].lo : g->axes[a].hi);
    ov[n++] = (dg_override){g->axes[a].key, text[a]};
  }
  dg_error err;
  dg_graph *graph = dg_graph_load_overrides(p->opt->reg, p->opt->graph_json, p->opt->graph_name,
                                            n, ov, &err);
  free(ov);
  job->passed = graph != NULL;
  /* the structure's own check: sort its members against it (each job
   * writes only its group and its members' entries) */
  if (graph && job->point == 0)
    sort_members(p, graph, g);
  dg_graph_free(graph);
}

typedef struct check_share {
  plan *p;
  check_job *jobs;
  int n, first, stride;
} check_share;

static void *check_thread(void *arg) {
  const check_share *s = arg;
  for (int i = s->first; i < s->n; i += s->stride)
    run_check(s->p, &s->jobs[i]);
  return NULL;
}

/* Runs the jobs on the batch's threads (the caller is one of them; a
 * thread that cannot start leaves its share to the caller). */
static void run_checks(plan *p, check_job *jobs, int n) {
  int threads = p->threads < n ? p->threads : n;
  check_share *share = calloc((size_t)threads + 1, sizeof *share);
  pthread_t *tids = calloc((size_t)threads + 1, sizeof *tids);
  bool *started = calloc((size_t)threads + 1, sizeof *started);
  if (!share || !tids || !started) /* then the caller runs them all */
    threads = 1;
  check_share alone = {p, jobs, n, 0, 1};
  for (int k = 0; share && k < threads; k++)
    share[k] = (check_share){p, jobs, n, k, threads};
  for (int k = 1; k < threads; k++)
    started[k] = pthread_create(&tids[k], NULL, check_thread, &share[k]) == 0;
  check_thread(share && threads > 1 ? &share[0] : &alone);
  for (int k = 1; k < threads; k++) {
    if (started[k])
      pthread_join(tids[k], NULL);
    else
      check_thread(&share[k]);
  }
  free(share);
  free(tids);
  free(started);
  p->stats.mode_checks += n;
}

/* Sets p->reuse[i] = 1 for the variants to load without the every-mode
 * check. Variants are grouped by their structural overrides (those that
 * may change the check). The base graph's structure is checked already;
 * another is checked once when the variants that would reuse it outnumber
 * the checks it costs (its own and its probes), counted against the base
 * graph; then its members are sorted against it, and the probes it needs
 * run. The checks run on the batch's threads. */
static int plan_variants(plan *p, int n) {
  int total = 0;
  for (int i = 0; i < n; i++)
    total += p->variants[i].n_overrides > 0 ? p->variants[i].n_overrides : 0;
  p->first = malloc(sizeof *p->first * ((size_t)n + 1));
  p->structural = malloc((size_t)total + 1);
  p->kind = calloc((size_t)n + 1, 1);
  p->side = malloc(sizeof *p->side * ((size_t)n + 1));
  sort_item *order = malloc(sizeof *order * ((size_t)n + 1));
  int *members = malloc(sizeof *members * ((size_t)n + 1));
  group *groups = calloc((size_t)n + 1, sizeof *groups);
  check_job *jobs = NULL;
  int rc = p->first && p->structural && p->kind && p->side && order && members && groups
               ? DG_OK
               : DG_ERR_NOMEM;
  int m = 0, n_groups = 0;
  for (int i = 0, at = 0; rc == DG_OK && i < n; i++) {
    const dg_batch_variant *v = &p->variants[i];
    p->first[i] = at;
    for (int k = 0; k < v->n_overrides; k++) {
      const dg_param_def *def;
      const double *param;
      unsigned effect = dgp_graph_override_effect(p->base, v->overrides[k].key, &def, &param);
      p->structural[at++] = effect == 0;
    }
    /* a structural override and another that overlap do not commute: the
     * variant is not its structure plus the others */
    bool apart = true;
    for (int a = 0; a < v->n_overrides && apart; a++)
      for (int b = 0; b < v->n_overrides && apart; b++)
        apart = !is_structural(p, i, a) || is_structural(p, i, b) ||
                !keys_overlap(v->overrides[a].key, v->overrides[b].key);
    if (apart)
      order[m++] = (sort_item){p, i};
  }
  if (rc == DG_OK)
    qsort(order, (size_t)m, sizeof *order, sort_item_cmp);
  for (int a = 0; rc == DG_OK && a < m;) {
    group *g = &groups[n_groups++];
    g->members = members + a;
    while (a + g->m < m && structure_cmp(p, order[a].v, order[a + g->m].v) == 0) {
      members[a + g->m] = order[a + g->m].v;
      g->m++;
    }
    bool none = true;
    for (int k = 0; k < p->variants[order[a].v].n_overrides && none; k++)
      none = !is_structural(p, order[a].v, k);
    g->v = none ? -1 : order[a].v;
    a += g->m;
    /* the base graph's structure passed already; another is counted
     * against the base graph to see whether checking it saves checks */
    sort_members(p, p->base, g);
    g->valid = none;
  }
  jobs = rc == DG_OK ? calloc((size_t)n_groups * MAX_POINTS + 1, sizeof *jobs) : NULL;
  rc = rc == DG_OK && !jobs ? DG_ERR_NOMEM : rc;
  /* the structures worth checking, each sorting its members */
  int k = 0;
  for (int i = 0; rc == DG_OK && i < n_groups; i++)
    if (groups[i].v >= 0 && worth_checking(&groups[i]))
      jobs[k++] = (check_job){&groups[i], 0, false};
  if (rc == DG_OK)
    run_checks(p, jobs, k);
  for (int i = 0; rc == DG_OK && i < k; i++)
    jobs[i].g->valid = jobs[i].passed;
  /* then the probes of every structure that passed */
  k = 0;
  for (int i = 0; rc == DG_OK && i < n_groups; i++) {
    group *g = &groups[i];
    for (int point = 1; g->valid && worth_probing(g) && point < MAX_POINTS; point++)
      if (g->needed[point])
        jobs[k++] = (check_job){g, point, false};
  }
  if (rc == DG_OK)
    run_checks(p, jobs, k);
  for (int i = 0; rc == DG_OK && i < k; i++)
    jobs[i].g->passed[jobs[i].point] = jobs[i].passed;
  int corners[MAX_POINTS];
  for (int i = 0; rc == DG_OK && i < n_groups; i++) {
    const group *g = &groups[i];
    for (int j = 0; g->valid && j < g->m; j++) {
      int v = g->members[j];
      bool ok = p->kind[v] == VARIANT_SAME;
      if (p->kind[v] == VARIANT_INERTIA && worth_probing(g)) {
        int c = box_corners(p->side[v], corners);
        ok = true;
        for (int q = 0; q < c; q++)
          ok = ok && g->passed[corners[q]];
      }
      p->reuse[v] = ok;
    }
  }
  for (int i = 0; rc == DG_OK && i < n; i++) {
    p->stats.reused += p->reuse[i];
    p->stats.full += !p->reuse[i];
  }
  free(p->first);
  free(p->structural);
  free(p->kind);
  free(p->side);
  free(order);
  free(members);
  free(groups);
  free(jobs);
  return rc;
}

/* ------------------------------------------------------------------------ */
/* Threads                                                                  */

typedef struct batch_job {
  const dg_batch_options *opt;
  const dg_batch_variant *variants;
  const unsigned char *reuse; /* per variant: load without the every-mode check */
  dg_batch_result *results;
  double *finals; /* n × n_signals, or a scratch row when n_signals = 0 */
  int n, first, stride;
  bool load_only;
} batch_job;

static void *batch_thread(void *arg) {
  const batch_job *j = arg;
  int ns = j->opt->n_signals;
  for (int i = j->first; i < j->n; i += j->stride)
    run_variant(j->opt, &j->variants[i], j->reuse[i] ? DG_LOAD_NO_MODE_CHECK : 0, j->load_only,
                &j->results[i], j->finals + (size_t)i * (size_t)ns);
  return NULL;
}

static int online_cpus(void) {
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 && n < 4096 ? (int)n : 1;
}

/* Checks the base graph (in full) and the signal names once, before any
 * thread; the base graph stays loaded in *base. */
static int batch_check(const dg_batch_options *opt, dg_graph **base, dg_error *err) {
  dg_graph *g = dg_graph_load_string(opt->reg, opt->graph_json, opt->graph_name, err);
  *base = NULL;
  if (!g)
    return err ? err->code : DG_ERR_SCHEMA;
  dg_sim *sim = dg_sim_new(g, err);
  int rc = sim ? DG_OK : (err ? err->code : DG_ERR_BLOCK);
  for (int k = 0; sim && k < opt->n_signals && rc == DG_OK; k++)
    rc = dg_sim_signal_by_name(sim, opt->signals[k], NULL, err);
  if (sim && rc == DG_OK && opt->speed_signal)
    rc = dg_sim_signal_by_name(sim, opt->speed_signal, NULL, err);
  if (rc != DG_OK && err && !err->file[0])
    snprintf(err->file, sizeof err->file, "%s", opt->graph_name ? opt->graph_name : "<string>");
  dg_sim_free(sim);
  if (rc == DG_OK)
    *base = g;
  else
    dg_graph_free(g);
  return rc;
}

/* dg_batch_run, or with `load_only` dg_batch_validate. */
static int batch_run(const dg_batch_options *opt, int n, const dg_batch_variant *variants,
                     dg_batch_result *results, double *final_values, bool load_only,
                     dg_batch_stats *stats, dg_error *err) {
  dgp_error_clear(err);
  if (stats)
    memset(stats, 0, sizeof *stats);
  if (!opt || !opt->graph_json || n < 0 || (n > 0 && (!variants || !results)) ||
      (opt->n_signals > 0 && (!opt->signals || (n > 0 && !final_values)))) {
    dgp_error_set(err, DG_ERR_USAGE, "", "", "%s: missing options, graph or output",
                 load_only ? "dg_batch_validate" : "dg_batch_run");
    return DG_ERR_USAGE;
  }
  dg_graph *base;
  int rc = batch_check(opt, &base, err);
  if (rc != DG_OK)
    return rc;
  int threads = opt->threads > 0 ? opt->threads : online_cpus();
  unsigned char *reuse = calloc((size_t)n + 1, 1);
  plan p = {.opt = opt, .base = base, .variants = variants, .threads = threads, .reuse = reuse,
            .stats = {.mode_checks = 1}};
  rc = reuse ? plan_variants(&p, n) : DG_ERR_NOMEM;
  dg_graph_free(base);
  if (stats)
    *stats = p.stats;
  if (rc != DG_OK || n == 0) {
    free(reuse);
    if (rc != DG_OK)
      dgp_error_set(err, rc, "", "", "out of memory");
    return rc;
  }
  if (threads > n)
    threads = n;
  double scratch = 0.0; /* finals of zero signals: never written */
  double *finals = opt->n_signals > 0 ? final_values : &scratch;
  batch_job *jobs = calloc((size_t)threads, sizeof *jobs);
  pthread_t *tids = calloc((size_t)threads, sizeof *tids);
  bool *started = calloc((size_t)threads, sizeof *started);
  if (!jobs || !tids || !started) {
    free(jobs);
    free(tids);
    free(started);
    free(reuse);
    dgp_error_set(err, DG_ERR_NOMEM, "", "", "out of memory");
    return DG_ERR_NOMEM;
  }
  for (int k = 0; k < threads; k++)
    jobs[k] = (batch_job){opt, variants, reuse, results, finals, n, k, threads, load_only};
  /* thread 0 is the caller; a thread that cannot start leaves its share to
   * the caller too, so results never depend on how many threads ran */
  for (int k = 1; k < threads; k++)
    started[k] = pthread_create(&tids[k], NULL, batch_thread, &jobs[k]) == 0;
  batch_thread(&jobs[0]);
  for (int k = 1; k < threads; k++) {
    if (started[k])
      pthread_join(tids[k], NULL);
    else
      batch_thread(&jobs[k]);
  }
  free(jobs);
  free(tids);
  free(started);
  free(reuse);
  return DG_OK;
}

int dgp_batch_run_stats(const dg_batch_options *opt, int n, const dg_batch_variant *variants,
                       dg_batch_result *results, double *final_values, dg_batch_stats *stats,
                       dg_error *err) {
  return batch_run(opt, n, variants, results, final_values, false, stats, err);
}

int dg_batch_run(const dg_batch_options *opt, int n, const dg_batch_variant *variants,
                 dg_batch_result *results, double *final_values, dg_error *err) {
  return batch_run(opt, n, variants, results, final_values, false, NULL, err);
}

int dgp_batch_validate_stats(const dg_batch_options *opt, int n, const dg_batch_variant *variants,
                            dg_batch_result *results, dg_batch_stats *stats, dg_error *err) {
  if (!opt)
    return batch_run(opt, n, variants, results, NULL, true, stats, err);
  /* only the loading: no signals to look up or report */
  dg_batch_options o = *opt;
  o.n_signals = 0;
  o.signals = NULL;
  o.speed_signal = NULL;
  return batch_run(&o, n, variants, results, NULL, true, stats, err);
}

int dg_batch_validate(const dg_batch_options *opt, int n, const dg_batch_variant *variants,
                      dg_batch_result *results, dg_error *err) {
  return dgp_batch_validate_stats(opt, n, variants, results, NULL, err);
}
