/* Scenarios: driver inputs over time, initial values and a stop condition.
 *
 * A scenario file is
 *
 *   { "duration": s, "dt": s, "output_interval": s,
 *     "inputs":  { "<input>": [[t0, v0], [t1, v1], ...], ... },
 *     "initial": { "<block>.<signal>": value, ... },
 *     "stop":    { "signal": "<block>.<signal>", "above" | "below": value } }
 *
 * Every key is optional. An input is piecewise linear in t between its
 * breakpoints, holds its first value before the first breakpoint and its last
 * value after the last one:
 *
 *   v(t) = v_k + (v_{k+1} - v_k) (t - t_k) / (t_{k+1} - t_k)
 *
 * where k is the last breakpoint with t_k <= t. Times are non-decreasing; two
 * equal times make a step, and at the step time the later value holds (v is
 * continuous from the right). Integer inputs ("gear") do not interpolate:
 * v(t) = v_k.
 *
 * A scenario is parsed once and is read-only afterwards; a dg_driver binds it
 * to one simulation, resolving every name once so that dg_driver_apply does
 * no string work and allocates nothing. */
#include "internal.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct scn_input {
  const char *name;
  int n;           /* breakpoints, >= 1 */
  const double *t; /* non-decreasing */
  const double *v;
  bool steps; /* integer input: hold v_k until t_{k+1} */
} scn_input;

typedef struct scn_initial {
  const char *name;
  double value;
} scn_initial;

typedef enum scn_stop_kind { STOP_NONE, STOP_ABOVE, STOP_BELOW } scn_stop_kind;

struct dg_scenario {
  dg_arena *arena; /* owns everything below */
  const char *file;
  double duration, dt, output_interval; /* NaN when absent */
  int num_inputs;
  scn_input *inputs;
  int num_initial;
  scn_initial *initial;
  scn_stop_kind stop_kind;
  const char *stop_signal;
  double stop_value;
};

/* State while parsing: where errors go and where memory comes from. */
typedef struct scn_parse {
  dg_scenario *scn;
  dg_diag *diag;
} scn_parse;

/* ------------------------------------------------------------------------ */
/* Small JSON helpers                                                       */

static void report_nomem(scn_parse *p, const char *path) {
  dgp_diag_add(p->diag, DG_ERR_NOMEM, path, "out of memory");
}

/* A name of the file ("engine.rpm", a channel) in the arena, in Unicode's
 * composed form (NFC) as the graph keeps its ids, so that another spelling
 * of an id finds it; as written when it is not UTF-8 (it matches nothing
 * then, and is named escaped). */
static const char *name_copy(scn_parse *p, const char *name) {
  char *nfc = dgp_text_nfc(name);
  const char *c = dgp_arena_strdup(p->scn->arena, nfc ? nfc : name);
  free(nfc);
  return c;
}

/* A JSON number (integer or real) into *out; reports anything else. */
static bool get_number(scn_parse *p, const json_t *v, const char *path, double *out) {
  if (!json_is_number(v)) {
    dgp_diag_add(p->diag, DG_ERR_SCHEMA, path, "expected a number, got %s", dgp_json_type_name(v));
    return false;
  }
  *out = json_number_value(v);
  return true;
}

static bool expect_object(scn_parse *p, const json_t *v, const char *path) {
  if (json_is_object(v))
    return true;
  dgp_diag_add(p->diag, DG_ERR_SCHEMA, path, "expected an object, got %s", dgp_json_type_name(v));
  return false;
}

/* Reports an unknown object key with "did you mean" over `keys`. */
static void report_unknown_key(scn_parse *p, const char *path, const char *key,
                               const char *const *keys, int n) {
  const char *close = dg_suggest(key, keys, n);
  if (close) {
    dgp_diag_add(p->diag, DG_ERR_UNKNOWN, path, "unknown key; did you mean \"%s\"?", close);
    return;
  }
  char list[DG_ERROR_TEXT_LEN] = "";
  size_t used = 0;
  for (int i = 0; i < n && used < sizeof list; i++)
    used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", i ? ", " : "", keys[i]);
  dgp_diag_add(p->diag, DG_ERR_UNKNOWN, path, "unknown key (expected %s)", list);
}

/* ------------------------------------------------------------------------ */
/* Top-level numbers                                                        */

/* A time step or length: finite and > 0. */
static void parse_positive(scn_parse *p, const json_t *v, const char *path, double *out) {
  double x;
  if (!get_number(p, v, path, &x))
    return;
  if (!(x > 0) || !isfinite(x)) {
    dgp_diag_add(p->diag, DG_ERR_RANGE, path, "must be > 0 (got %g)", x);
    return;
  }
  *out = x;
}

/* ------------------------------------------------------------------------ */
/* Inputs                                                                   */

/* Integer inputs step instead of interpolating. The simulator does not say
 * which inputs are integers, so the standard one is known by name. */
static bool input_is_integer(const char *name) { return strcmp(name, "gear") == 0; }

/* One [time, value] pair at `path` into t[i], v[i]. `prev_t` is the time of
 * the previous breakpoint (NaN for the first). */
static bool parse_breakpoint(scn_parse *p, const json_t *bp, const char *path, bool integer,
                             double prev_t, double *t, double *v) {
  if (!json_is_array(bp) || json_array_size(bp) != 2) {
    if (json_is_array(bp))
      dgp_diag_add(p->diag, DG_ERR_SCHEMA, path,
                  "expected a [time, value] pair, got an array of %zu", json_array_size(bp));
    else
      dgp_diag_add(p->diag, DG_ERR_SCHEMA, path, "expected a [time, value] pair, got %s",
                  dgp_json_type_name(bp));
    return false;
  }
  char tpath[DG_ERROR_PATH_LEN], vpath[DG_ERROR_PATH_LEN];
  dgp_pointer_index(tpath, sizeof tpath, path, 0);
  dgp_pointer_index(vpath, sizeof vpath, path, 1);
  bool ok_t = get_number(p, json_array_get(bp, 0), tpath, t);
  bool ok_v = get_number(p, json_array_get(bp, 1), vpath, v);
  if (ok_t && (!(*t >= 0) || !isfinite(*t))) {
    dgp_diag_add(p->diag, DG_ERR_RANGE, tpath, "must be >= 0 (got %g)", *t);
    ok_t = false;
  }
  if (ok_t && *t < prev_t) { /* false for the first breakpoint: prev_t is NaN */
    dgp_diag_add(p->diag, DG_ERR_RANGE, tpath,
                "breakpoint times must be non-decreasing (%g after %g)", *t, prev_t);
    ok_t = false;
  }
  if (ok_v && integer && *v != floor(*v)) {
    dgp_diag_add(p->diag, DG_ERR_RANGE, vpath, "must be an integer (got %g)", *v);
    ok_v = false;
  }
  return ok_t && ok_v;
}

static void parse_input(scn_parse *p, const char *name, const json_t *arr, const char *path,
                        scn_input *out) {
  if (!json_is_array(arr)) {
    dgp_diag_add(p->diag, DG_ERR_SCHEMA, path,
                "expected an array of [time, value] breakpoints, got %s",
                dgp_json_type_name(arr));
    return;
  }
  size_t n = json_array_size(arr);
  if (n == 0) {
    dgp_diag_add(p->diag, DG_ERR_SCHEMA, path, "expected at least one [time, value] breakpoint");
    return;
  }
  double *t = dgp_arena_alloc(p->scn->arena, n * sizeof *t);
  double *v = dgp_arena_alloc(p->scn->arena, n * sizeof *v);
  out->name = name_copy(p, name);
  if (!t || !v || !out->name) {
    report_nomem(p, path);
    return;
  }
  out->steps = input_is_integer(name);
  /* Once a time is bad the order check against it means nothing, so later
   * breakpoints are compared with the last good time only. */
  double prev_t = NAN;
  for (size_t i = 0; i < n; i++) {
    char bpath[DG_ERROR_PATH_LEN];
    dgp_pointer_index(bpath, sizeof bpath, path, i);
    if (parse_breakpoint(p, json_array_get(arr, i), bpath, out->steps, prev_t, &t[i], &v[i]))
      prev_t = t[i];
  }
  out->n = (int)n;
  out->t = t;
  out->v = v;
}

static void parse_inputs(scn_parse *p, json_t *obj, const char *path) {
  if (!expect_object(p, obj, path))
    return;
  size_t n = json_object_size(obj);
  scn_input *inputs = dgp_arena_alloc(p->scn->arena, (n ? n : 1) * sizeof *inputs);
  if (!inputs) {
    report_nomem(p, path);
    return;
  }
  const char *name;
  json_t *arr;
  int i = 0;
  json_object_foreach(obj, name, arr) {
    char ipath[DG_ERROR_PATH_LEN];
    dgp_pointer_append(ipath, sizeof ipath, path, name);
    parse_input(p, name, arr, ipath, &inputs[i++]);
  }
  p->scn->inputs = inputs;
  p->scn->num_inputs = i;
}

/* ------------------------------------------------------------------------ */
/* Initial values and stop condition                                        */

static void parse_initial(scn_parse *p, json_t *obj, const char *path) {
  if (!expect_object(p, obj, path))
    return;
  size_t n = json_object_size(obj);
  scn_initial *initial = dgp_arena_alloc(p->scn->arena, (n ? n : 1) * sizeof *initial);
  if (!initial) {
    report_nomem(p, path);
    return;
  }
  const char *name;
  json_t *v;
  int i = 0;
  json_object_foreach(obj, name, v) {
    char vpath[DG_ERROR_PATH_LEN];
    dgp_pointer_append(vpath, sizeof vpath, path, name);
    double x;
    if (!get_number(p, v, vpath, &x))
      continue;
    initial[i].name = name_copy(p, name);
    if (!initial[i].name) {
      report_nomem(p, vpath);
      return;
    }
    initial[i++].value = x;
  }
  p->scn->initial = initial;
  p->scn->num_initial = i;
}

static const char *const stop_keys[] = {"signal", "above", "below"};

static void parse_stop(scn_parse *p, json_t *obj, const char *path) {
  if (!expect_object(p, obj, path))
    return;
  const char *key;
  json_t *v;
  json_object_foreach(obj, key, v) {
    char kpath[DG_ERROR_PATH_LEN];
    dgp_pointer_append(kpath, sizeof kpath, path, key);
    if (strcmp(key, "signal") == 0) {
      if (!json_is_string(v))
        dgp_diag_add(p->diag, DG_ERR_SCHEMA, kpath, "expected a string, got %s",
                    dgp_json_type_name(v));
      else if (!(p->scn->stop_signal = name_copy(p, json_string_value(v))))
        report_nomem(p, kpath);
    } else if (strcmp(key, "above") != 0 && strcmp(key, "below") != 0) {
      report_unknown_key(p, kpath, key, stop_keys, 3);
    }
  }
  const json_t *above = json_object_get(obj, "above");
  const json_t *below = json_object_get(obj, "below");
  if (!json_object_get(obj, "signal"))
    dgp_diag_add(p->diag, DG_ERR_SCHEMA, path, "missing required key \"signal\"");
  if (!above == !below) {
    dgp_diag_add(p->diag, DG_ERR_SCHEMA, path, "expected exactly one of \"above\" or \"below\"");
    return;
  }
  char tpath[DG_ERROR_PATH_LEN];
  dgp_pointer_append(tpath, sizeof tpath, path, above ? "above" : "below");
  double x;
  if (!get_number(p, above ? above : below, tpath, &x))
    return;
  if (!isfinite(x)) {
    dgp_diag_add(p->diag, DG_ERR_RANGE, tpath, "must be a finite number (got %g)", x);
    return;
  }
  /* Any error above fails the whole load, so a half-parsed condition is
   * never used. */
  p->scn->stop_kind = above ? STOP_ABOVE : STOP_BELOW;
  p->scn->stop_value = x;
}

/* ------------------------------------------------------------------------ */
/* The document                                                             */

static const char *const top_keys[] = {"duration", "dt",      "output_interval",
                                       "inputs",   "initial", "stop"};
enum { NUM_TOP_KEYS = sizeof top_keys / sizeof top_keys[0] };

static void parse_key(scn_parse *p, const char *key, json_t *v) {
  char path[DG_ERROR_PATH_LEN];
  dgp_pointer_append(path, sizeof path, "", key);
  dg_scenario *s = p->scn;
  if (strcmp(key, "duration") == 0)
    parse_positive(p, v, path, &s->duration);
  else if (strcmp(key, "dt") == 0)
    parse_positive(p, v, path, &s->dt);
  else if (strcmp(key, "output_interval") == 0)
    parse_positive(p, v, path, &s->output_interval);
  else if (strcmp(key, "inputs") == 0)
    parse_inputs(p, v, path);
  else if (strcmp(key, "initial") == 0)
    parse_initial(p, v, path);
  else if (strcmp(key, "stop") == 0)
    parse_stop(p, v, path);
  else
    report_unknown_key(p, path, key, top_keys, NUM_TOP_KEYS);
}

static void parse_document(scn_parse *p, json_t *root) {
  if (!expect_object(p, root, ""))
    return;
  const char *key;
  json_t *v;
  json_object_foreach(root, key, v) {
    parse_key(p, key, v);
  }
}

static dg_scenario *scenario_new(const char *file) {
  dg_scenario *s = calloc(1, sizeof *s);
  if (!s)
    return NULL;
  s->arena = dgp_arena_new();
  s->file = s->arena ? dgp_arena_strdup(s->arena, file) : NULL;
  if (!s->file) {
    dgp_arena_free(s->arena);
    free(s);
    return NULL;
  }
  s->duration = s->dt = s->output_interval = NAN;
  s->stop_kind = STOP_NONE;
  return s;
}

dg_scenario *dg_scenario_load_string(const char *json, const char *name, dg_error *err) {
  const char *file = name ? name : "<string>";
  if (!json) {
    dgp_error_set(err, DG_ERR_USAGE, file, "", "no scenario text");
    return NULL;
  }
  dg_diag diag;
  dgp_diag_init(&diag, file, NULL, NULL);
  json_t *root = dgp_json_parse(json, file, &diag);
  if (!root) {
    dgp_diag_to_error(&diag, err);
    return NULL;
  }
  dg_scenario *scn = scenario_new(file);
  if (!scn) {
    json_decref(root);
    dgp_error_set(err, DG_ERR_NOMEM, file, "", "out of memory");
    return NULL;
  }
  scn_parse p = {.scn = scn, .diag = &diag};
  parse_document(&p, root);
  json_decref(root);
  if (diag.count > 0) {
    dgp_diag_to_error(&diag, err);
    dg_scenario_free(scn);
    return NULL;
  }
  if (err)
    dgp_error_clear(err);
  return scn;
}

/* Every problem of a scenario's text through fn (load refuses on the first
 * of the same list). */
int dg_scenario_validate_string(const char *json, const char *name, dg_diag_fn fn, void *user) {
  const char *file = name ? name : "<string>";
  dg_diag diag;
  dgp_diag_init(&diag, file, fn, user);
  if (!json) {
    dgp_diag_add(&diag, DG_ERR_USAGE, "", "no scenario text");
    return diag.count;
  }
  json_t *root = dgp_json_parse(json, file, &diag);
  if (!root)
    return diag.count;
  dg_scenario *scn = scenario_new(file);
  if (!scn) {
    json_decref(root);
    dgp_diag_add(&diag, DG_ERR_NOMEM, "", "out of memory");
    return diag.count;
  }
  scn_parse p = {.scn = scn, .diag = &diag};
  parse_document(&p, root);
  json_decref(root);
  dg_scenario_free(scn);
  return diag.count;
}

int dg_scenario_validate_file(const char *path, dg_diag_fn fn, void *user) {
  dg_error err;
  dg_scenario *scn = dg_scenario_load_file(path, &err);
  if (scn) {
    dg_scenario_free(scn);
    return 0;
  }
  if (err.code == DG_ERR_IO || err.code == DG_ERR_USAGE ||
      strstr(err.text, "NUL byte")) { /* no text to read: the one problem */
    if (fn)
      fn(&err, user);
    return 1;
  }
  size_t len;
  char why[DG_ERROR_TEXT_LEN];
  char *text = dgp_read_input(path, &len, why, sizeof why);
  int n = text ? dg_scenario_validate_string(text, path, fn, user) : 1;
  free(text);
  return n;
}

dg_scenario *dg_scenario_load_file(const char *path, dg_error *err) {
  if (!path) {
    dgp_error_set(err, DG_ERR_USAGE, "", "", "no scenario file given");
    return NULL;
  }
  size_t len;
  char why[DG_ERROR_TEXT_LEN];
  char *text = dgp_read_input(path, &len, why, sizeof why);
  if (!text) {
    /* strerror is capitalised; our messages are not. */
    static const char lead[] = "cannot read file: ";
    char *c = why + sizeof lead - 1;
    if (strncmp(why, lead, sizeof lead - 1) == 0 && *c >= 'A' && *c <= 'Z')
      *c = (char)(*c - 'A' + 'a');
    dgp_error_set(err, DG_ERR_IO, path, "", "%s", why);
    return NULL;
  }
  /* The text ends at a NUL: whatever follows would be ignored silently (as
   * graph files, such a file is refused). */
  if (strlen(text) != len) {
    free(text);
    dgp_error_set(err, DG_ERR_SYNTAX, path, "", "file contains a NUL byte; expected JSON text");
    return NULL;
  }
  dg_scenario *scn = dg_scenario_load_string(text, path, err);
  free(text);
  return scn;
}

void dg_scenario_free(dg_scenario *scn) {
  if (!scn)
    return;
  dgp_arena_free(scn->arena);
  free(scn);
}

double dg_scenario_duration(const dg_scenario *scn) { return scn ? scn->duration : NAN; }
double dg_scenario_dt(const dg_scenario *scn) { return scn ? scn->dt : NAN; }
double dg_scenario_output_interval(const dg_scenario *scn) {
  return scn ? scn->output_interval : NAN;
}

/* ------------------------------------------------------------------------ */
/* Driver                                                                   */

typedef struct drv_input {
  const scn_input *src;
  int index; /* simulation input */
} drv_input;

struct dg_driver {
  const dg_scenario *scn;
  dg_sim *sim;
  int num_inputs;
  drv_input *inputs;
  scn_stop_kind stop_kind;
  int stop_id;
  double stop_value;
};

/* Fills `buf` with the hint that follows "unknown input; ": "did you mean
 * "x"?" when a name is close, else the known names, as many as fit. `kind` is
 * singular ("input"). */
static void name_hint(char *buf, size_t size, const char *word, const char *kind,
                      const char *const *names, int n) {
  const char *close = dg_suggest(word, names, n);
  if (close) {
    snprintf(buf, size, "did you mean \"%s\"?", close);
    return;
  }
  if (n == 0) {
    snprintf(buf, size, "there are no %ss", kind);
    return;
  }
  static const char more[] = ", ...";
  size_t used = (size_t)snprintf(buf, size, "known %ss: ", kind);
  for (int i = 0; i < n && used < size; i++) {
    const char *sep = i ? ", " : "";
    size_t need = strlen(sep) + strlen(names[i]);
    if (used + need + sizeof more > size) { /* always leave room to mark the cut */
      snprintf(buf + used, size - used, "%s", more);
      return;
    }
    used += (size_t)snprintf(buf + used, size - used, "%s%s", sep, names[i]);
  }
}

typedef const char *(*name_at_fn)(const dg_sim *sim, int i);

/* "unknown <kind>; did you mean ..." into a collector. */
static void unknown_name(dg_diag *d, const dg_sim *sim, const char *path, const char *name,
                         const char *kind, int n, name_at_fn name_at) {
  const char **names = calloc((size_t)(n > 0 ? n : 1), sizeof *names);
  /* shorter than dg_error.text, which also holds "unknown <kind>; " */
  char hint[DG_ERROR_TEXT_LEN - 32] = "";
  if (names) {
    for (int i = 0; i < n; i++)
      names[i] = name_at(sim, i);
    name_hint(hint, sizeof hint, name, kind, names, n);
  }
  free(names);
  dgp_diag_add(d, DG_ERR_UNKNOWN, path, "unknown %s; %s", kind, hint);
}

/* Every block input the channel of `src` feeds (bound by name in the
 * file, or following it by default) must take each of its values: its
 * kind (integers for a gear, 0 or 1 for a boolean) and its range. The
 * first value that does not fit is reported for each such input, at the
 * scenario's breakpoint, naming the input's place in the graph. */
static void check_channel_values(dg_diag *d, const scn_input *src, const char *path,
                                 const dg_graph *g) {
  for (int b = 0; b < g->num_blocks; b++) {
    const dg_gblock *gb = &g->blocks[b];
    for (int i = 0; i < gb->num_inputs; i++) {
      const dg_gbind *bi = &gb->bind[i];
      if (bi->kind != DG_BIND_CHANNEL || strcmp(bi->channel, src->name) != 0)
        continue;
      const dg_input_def *in = &gb->klass->inputs[i];
      dg_range r;
      dgp_input_limits(gb, i, &r);
      int bad = -1, more = 0;
      for (int k = 0; k < src->n; k++)
        if (!dgp_input_accepts(in, &r, src->v[k]))
          bad < 0 ? (void)(bad = k) : (void)more++;
      if (bad < 0)
        continue;
      char kpath[DG_ERROR_PATH_LEN], vpath[DG_ERROR_PATH_LEN], want[96];
      char bpath[DG_ERROR_PATH_LEN], ipath[DG_ERROR_PATH_LEN], place[DG_ERROR_PATH_LEN];
      dgp_pointer_index(kpath, sizeof kpath, path, (size_t)bad);
      dgp_pointer_index(vpath, sizeof vpath, kpath, 1);
      dgp_pointer_append(bpath, sizeof bpath, "/blocks", gb->id);
      dgp_pointer_append(ipath, sizeof ipath, bpath, "inputs");
      dgp_pointer_append(place, sizeof place, ipath, in->name);
      dgp_input_describe(in, &r, want, sizeof want);
      char others[48] = "";
      if (more)
        snprintf(others, sizeof others, "; %d later value%s neither", more, more > 1 ? "s" : "");
      dgp_diag_add(d, DG_ERR_RANGE, vpath,
                  "must be %s (got %g): channel \"%s\" feeds input \"%s\" of %s \"%s\" (%s: "
                  "%s%s)%s",
                  want, src->v[bad], src->name, in->name, gb->klass->type, gb->id,
                  dg_graph_file(g), bi->given ? place : bpath, bi->given ? "" : ", by default",
                  others);
    }
  }
}

int dg_scenario_check(const dg_scenario *scn, const dg_sim *sim, dg_diag_fn fn, void *user) {
  dg_diag d;
  dgp_diag_init(&d, scn ? scn->file : "", fn, user);
  if (!scn || !sim) {
    dgp_diag_add(&d, DG_ERR_USAGE, "", "no scenario or simulation");
    return d.count;
  }
  for (int i = 0; i < scn->num_inputs; i++) {
    const scn_input *src = &scn->inputs[i];
    char path[DG_ERROR_PATH_LEN];
    dgp_pointer_append(path, sizeof path, "/inputs", src->name);
    int index = dg_sim_input_find(sim, src->name);
    if (index < 0) {
      unknown_name(&d, sim, path, src->name, "input", dg_sim_input_count(sim), dg_sim_input_name);
      continue;
    }
    check_channel_values(&d, src, path, dg_sim_graph(sim));
  }
  const dg_graph *g = dg_sim_graph(sim);
  for (int c = 0; c < dg_graph_channel_count(g); c++) {
    const char *name = dg_graph_channel_name(g, c);
    bool given = false;
    for (int i = 0; i < scn->num_inputs && !given; i++)
      given = strcmp(scn->inputs[i].name, name) == 0;
    if (!given)
      dgp_diag_add(&d, DG_ERR_UNKNOWN, "/inputs",
                  "channel \"%s\" is not given, but the graph %s binds it (%s): add \"%s\": "
                  "[[t, value], ...]",
                  name, dg_graph_file(g), dg_graph_channel_path(g, c), name);
  }
  for (int i = 0; i < scn->num_initial; i++) {
    if (dg_sim_signal_find(sim, scn->initial[i].name) >= 0)
      continue;
    char path[DG_ERROR_PATH_LEN];
    dgp_pointer_append(path, sizeof path, "/initial", scn->initial[i].name);
    unknown_name(&d, sim, path, scn->initial[i].name, "signal", dg_sim_signal_count(sim),
                 dg_sim_signal_name);
  }
  if (scn->stop_kind != STOP_NONE) {
    if (dg_sim_signal_find(sim, scn->stop_signal) < 0)
      unknown_name(&d, sim, "/stop/signal", scn->stop_signal, "signal", dg_sim_signal_count(sim),
                   dg_sim_signal_name);
    else if (dg_scenario_keep(scn, sim) & ~dg_sim_keep(sim))
      dgp_diag_add(&d, DG_ERR_USAGE, "/stop/signal",
                   "the stop condition reads \"%s\", a shaft's angle, but the simulation keeps "
                   "no angles (dg_sim_set_keep without DG_KEEP_ANGLES): it could never stop",
                   scn->stop_signal);
  }
  return d.count;
}

unsigned dg_scenario_keep(const dg_scenario *scn, const dg_sim *sim) {
  if (!scn || !sim || scn->stop_kind == STOP_NONE)
    return 0u;
  int id = dg_sim_signal_find(sim, scn->stop_signal);
  return id >= 0 ? dg_sim_signal_keep(sim, id) : 0u;
}

static int resolve_inputs(dg_driver *drv, dg_error *err) {
  const dg_scenario *scn = drv->scn;
  drv->inputs = calloc((size_t)(scn->num_inputs ? scn->num_inputs : 1), sizeof *drv->inputs);
  if (!drv->inputs) {
    dgp_error_set(err, DG_ERR_NOMEM, scn->file, "/inputs", "out of memory");
    return DG_ERR_NOMEM;
  }
  for (int i = 0; i < scn->num_inputs; i++) {
    const scn_input *src = &scn->inputs[i];
    int index = dg_sim_input_find(drv->sim, src->name);
    DG_ASSERT(index >= 0); /* dg_scenario_check has vouched for every name */
    drv->inputs[i] = (drv_input){.src = src, .index = index};
    /* the simulation evaluates the schedule inside its steps */
    char path[DG_ERROR_PATH_LEN];
    dgp_pointer_append(path, sizeof path, "/inputs", src->name);
    /* a channel feeding an integer input (a gear, a range) steps (its
     * values are integers: dg_scenario_check) */
    bool steps = src->steps || dg_sim_input_is_integer(drv->sim, index);
    dg_error e;
    int rc = dg_sim_set_input_schedule(drv->sim, index, src->n, src->t, src->v, steps, &e);
    if (rc != DG_OK) {
      dgp_error_set(err, rc, scn->file, path, "%s", e.text);
      return rc;
    }
  }
  drv->num_inputs = scn->num_inputs;
  return DG_OK;
}

/* A signal name dg_scenario_check has vouched for. */
static int resolve_signal(const dg_driver *drv, const char *name) {
  int id = dg_sim_signal_find(drv->sim, name);
  DG_ASSERT(id >= 0);
  return id;
}

/* Sets every `initial` value at once: the projection onto the constraints
 * must see every given speed together. */
static int apply_initial(dg_driver *drv, dg_error *err) {
  const dg_scenario *scn = drv->scn;
  int n = scn->num_initial;
  if (n == 0)
    return DG_OK;
  int *ids = malloc((size_t)n * sizeof *ids);
  double *values = malloc((size_t)n * sizeof *values);
  int rc = DG_OK;
  if (!ids || !values) {
    dgp_error_set(err, DG_ERR_NOMEM, scn->file, "/initial", "out of memory");
    rc = DG_ERR_NOMEM;
  }
  for (int i = 0; rc == DG_OK && i < n; i++) {
    ids[i] = resolve_signal(drv, scn->initial[i].name);
    values[i] = scn->initial[i].value;
  }
  if (rc == DG_OK) {
    dg_error e;
    dgp_error_clear(&e);
    rc = dg_sim_set_initial(drv->sim, n, ids, values, &e);
    if (rc != DG_OK)
      dgp_error_set(err, rc, scn->file, "/initial", "%s", e.text);
  }
  free(ids);
  free(values);
  return rc;
}

static void resolve_stop(dg_driver *drv) {
  const dg_scenario *scn = drv->scn;
  drv->stop_kind = scn->stop_kind;
  drv->stop_value = scn->stop_value;
  drv->stop_id = -1;
  if (scn->stop_kind != STOP_NONE)
    drv->stop_id = resolve_signal(drv, scn->stop_signal);
}

typedef struct first_problem {
  bool have;
  dg_error err;
} first_problem;

static void keep_first(const dg_error *e, void *user) {
  first_problem *fp = user;
  if (!fp->have) {
    fp->have = true;
    fp->err = *e;
  }
}

dg_driver *dg_driver_new(const dg_scenario *scn, dg_sim *sim, dg_error *err) {
  if (!scn || !sim) {
    dgp_error_set(err, DG_ERR_USAGE, scn ? scn->file : "", "", "no scenario or simulation");
    return NULL;
  }
  dg_driver *drv = calloc(1, sizeof *drv);
  if (!drv) {
    dgp_error_set(err, DG_ERR_NOMEM, scn->file, "", "out of memory");
    return NULL;
  }
  drv->scn = scn;
  drv->sim = sim;
  /* every problem of the binding is known before anything is set; the
   * first is returned (dg_scenario_check reports them all) */
  {
    first_problem fp = {0};
    if (dg_scenario_check(scn, sim, keep_first, &fp) > 0) {
      if (err)
        *err = fp.err;
      dg_driver_free(drv);
      return NULL;
    }
  }
  /* Inputs before initial values: the pedals and the gear decide which
   * constraints the initial speeds are projected onto. */
  int rc = resolve_inputs(drv, err);
  resolve_stop(drv);
  if (rc == DG_OK) {
    dg_driver_apply(drv, dg_sim_time(sim));
    rc = apply_initial(drv, err);
  }
  if (rc == DG_OK) { /* what the scenario leaves out, made consistent */
    dg_error e;
    rc = dg_sim_start(sim, &e);
    if (rc != DG_OK)
      dgp_error_set(err, rc, scn->file, "/initial", "%s", e.text);
  }
  if (rc != DG_OK) {
    dg_driver_free(drv);
    return NULL;
  }
  if (err)
    dgp_error_clear(err);
  return drv;
}

void dg_driver_free(dg_driver *drv) {
  if (!drv)
    return;
  free(drv->inputs);
  free(drv);
}

/* The schedules were handed to the simulation (dg_driver_new), which
 * evaluates them inside each step; this only shows their values at t. An
 * input the caller has since set to a constant keeps that constant. */
void dg_driver_apply(dg_driver *drv, double t) {
  if (drv)
    dg_sim_apply_inputs(drv->sim, t);
}

/* Strict comparisons, so a NaN signal never stops a run. */
bool dg_driver_should_stop(const dg_driver *drv) {
  if (!drv || drv->stop_kind == STOP_NONE)
    return false;
  double x = dg_sim_signal(drv->sim, drv->stop_id);
  return drv->stop_kind == STOP_ABOVE ? x > drv->stop_value : x < drv->stop_value;
}
