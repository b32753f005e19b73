/* The model an FMU exposes: configuration, variables, modelDescription.xml
 * and the instantiation token (model.h). */
#include "model.h"

#include "internal.h"
#include "run/simstate.h"
#include "strbuf.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* Reporting                                                                */

typedef struct loader {
  fmu_report_fn report;
  void *user;
  int problems;
} loader;

static void problem(loader *l, const char *fmt, ...) DG_PRINTF(2, 3);
static void problem(loader *l, const char *fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  l->problems++;
  if (l->report)
    l->report(l->user, buf);
}

static void load_error(loader *l, const char *what, const dg_error *err) {
  char msg[900];
  dg_error_format(err, msg, sizeof msg);
  problem(l, "%s: %s", what, msg);
}

/* ------------------------------------------------------------------------ */
/* Files and the token                                                      */

char *fmu_read_file(const char *path, size_t max) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  size_t cap = 4096, n = 0;
  char *buf = malloc(cap);
  while (buf) {
    if (n + 1 >= cap) {
      if (cap > max) {
        free(buf);
        buf = NULL;
        errno = EFBIG;
        break;
      }
      char *b = realloc(buf, cap * 2);
      if (!b) {
        free(buf);
        buf = NULL;
        break;
      }
      buf = b;
      cap *= 2;
    }
    size_t got = fread(buf + n, 1, cap - n - 1, f);
    n += got;
    if (got == 0) {
      if (ferror(f)) {
        free(buf);
        buf = NULL;
        errno = EIO;
      }
      break;
    }
  }
  fclose(f);
  if (buf && n > max) {
    free(buf);
    errno = EFBIG;
    return NULL;
  }
  if (buf)
    buf[n] = '\0';
  return buf;
}

static uint64_t fnv1a(uint64_t h, const char *s) {
  /* a text's length first, so that the three texts cannot run into each other */
  size_t n = s ? strlen(s) : 0;
  for (int i = 0; i < 8; i++) {
    h ^= (unsigned char)(n >> (8 * i));
    h *= 1099511628211ull;
  }
  for (size_t i = 0; i < n; i++) {
    h ^= (unsigned char)s[i];
    h *= 1099511628211ull;
  }
  return h;
}

void fmu_token(const char *config_json, const char *graph_json, const char *scenario_json,
               char buf[40]) {
  uint64_t a = 1469598103934665603ull, b = 0x9e3779b97f4a7c15ull;
  const char *texts[3] = {config_json, graph_json, scenario_json};
  for (int i = 0; i < 3; i++) {
    a = fnv1a(a, texts[i]);
    b = fnv1a(b ^ (uint64_t)(i + 1), texts[i]);
  }
  snprintf(buf, 40, "{%08x-%04x-%04x-%04x-%012llx}", (unsigned)(a >> 32),
           (unsigned)((a >> 16) & 0xffff), (unsigned)(a & 0xffff), (unsigned)(b >> 48),
           (unsigned long long)(b & 0xffffffffffffull));
}

char *fmu_scenario_with_inputs(const char *scenario_json, int n, const char *const *names,
                               const double *values, const bool *integer) {
  json_t *root = scenario_json ? json_loads(scenario_json, JSON_REJECT_DUPLICATES, NULL)
                               : json_object();
  if (!root || !json_is_object(root)) {
    json_decref(root);
    return NULL;
  }
  json_t *inputs = json_object_get(root, "inputs");
  if (!inputs) {
    inputs = json_object();
    if (json_object_set_new(root, "inputs", inputs) != 0)
      inputs = NULL;
  }
  bool ok = json_is_object(inputs);
  for (int k = 0; ok && k < n; k++) {
    json_t *value = integer[k] ? json_integer((json_int_t)values[k]) : json_real(values[k]);
    json_t *point = json_pack("[[i, o]]", 0, value);
    ok = point && json_object_set_new(inputs, names[k], point) == 0;
  }
  char *text = ok ? json_dumps(root, JSON_PRESERVE_ORDER | JSON_COMPACT | JSON_REAL_PRECISION(17))
                  : NULL;
  json_decref(root);
  return text;
}

/* ------------------------------------------------------------------------ */
/* The configuration                                                        */

static bool identifier_ok(const char *s) {
  if (!s || !*s || !((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || *s == '_'))
    return false;
  for (; *s; s++)
    if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') ||
          *s == '_'))
      return false;
  return true;
}

static char *dup_or_null(const char *s) { return s ? strdup(s) : NULL; }

typedef struct config {
  json_t *root;
  json_t *outputs; /* borrowed from root */
  bool scenario;
} config;

static bool parse_config(loader *l, fmu_model *m, const char *text, config *c) {
  json_error_t je;
  c->root = json_loads(text, JSON_REJECT_DUPLICATES, &je);
  if (!c->root) {
    problem(l, "fmu.json:%d:%d: %s", je.line, je.column, je.text);
    return false;
  }
  if (!json_is_object(c->root)) {
    problem(l, "fmu.json: expected an object");
    return false;
  }
  static const char *const keys[] = {"drivegraph_fmu",   "fmi",         "model_name",
                                     "model_identifier", "description", "dt",
                                     "outputs",          "scenario",    NULL};
  const char *key;
  json_t *v;
  json_object_foreach(c->root, key, v) {
    bool known = false;
    for (int i = 0; keys[i] && !known; i++)
      known = strcmp(keys[i], key) == 0;
    if (!known)
      problem(l, "fmu.json: unknown key \"%s\"", key);
  }
  json_t *layout = json_object_get(c->root, "drivegraph_fmu");
  if (!json_is_integer(layout) || json_integer_value(layout) != FMU_LAYOUT)
    problem(l, "fmu.json: \"drivegraph_fmu\" must be %d (the layout this runtime reads)",
            FMU_LAYOUT);
  json_t *fmi = json_object_get(c->root, "fmi");
  if (!json_is_integer(fmi) || (json_integer_value(fmi) != 2 && json_integer_value(fmi) != 3))
    problem(l, "fmu.json: \"fmi\" must be 2 or 3");
  else
    m->fmi = (int)json_integer_value(fmi);
  const char *name = json_string_value(json_object_get(c->root, "model_name"));
  const char *ident = json_string_value(json_object_get(c->root, "model_identifier"));
  json_t *desc = json_object_get(c->root, "description");
  if (!name || !*name)
    problem(l, "fmu.json: \"model_name\" must be a non-empty string");
  if (!identifier_ok(ident))
    problem(l, "fmu.json: \"model_identifier\" must be a C identifier (letters, digits, '_')");
  if (desc && !json_is_string(desc))
    problem(l, "fmu.json: \"description\" must be a string");
  m->model_name = dup_or_null(name);
  m->model_identifier = dup_or_null(ident);
  m->description = dup_or_null(json_string_value(desc));
  json_t *dt = json_object_get(c->root, "dt");
  m->dt = json_is_number(dt) ? json_number_value(dt) : NAN;
  if (!(m->dt > 0.0) || !isfinite(m->dt) || m->dt > 1e3)
    problem(l, "fmu.json: \"dt\" must be a number of seconds > 0 and <= 1000");
  c->outputs = json_object_get(c->root, "outputs");
  if (!json_is_array(c->outputs) || json_array_size(c->outputs) == 0) {
    problem(l, "fmu.json: \"outputs\" must be a non-empty array of signal names");
    c->outputs = NULL;
  } else {
    size_t i;
    json_array_foreach(c->outputs, i, v) {
      if (!json_is_string(v) || !*json_string_value(v)) {
        problem(l, "fmu.json: /outputs/%zu must be a signal name", i);
        c->outputs = NULL;
        break;
      }
    }
  }
  json_t *scn = json_object_get(c->root, "scenario");
  if (!json_is_boolean(scn))
    problem(l, "fmu.json: \"scenario\" must be true or false");
  c->scenario = json_is_true(scn);
  return l->problems == 0;
}

/* ------------------------------------------------------------------------ */
/* Variables                                                                */

static fmu_var *add_var(fmu_model *m, const char *name, fmu_var_kind kind) {
  fmu_var *grown = realloc(m->vars, sizeof *grown * (size_t)(m->nvars + 1));
  if (!grown)
    return NULL;
  m->vars = grown;
  fmu_var *v = &m->vars[m->nvars];
  memset(v, 0, sizeof *v);
  v->name = strdup(name);
  v->unit = strdup("");
  v->description = strdup("");
  if (!v->name || !v->unit || !v->description) {
    free(v->name);
    free(v->unit);
    free(v->description);
    return NULL;
  }
  v->vr = (unsigned)m->nvars;
  v->kind = kind;
  v->index = -1;
  m->nvars++;
  return v;
}

static void set_text(char **dst, const char *text) {
  char *s = strdup(text ? text : "");
  if (s) {
    free(*dst);
    *dst = s;
  }
}

static int find_var(const fmu_model *m, const char *name) {
  for (int i = 0; i < m->nvars; i++)
    if (strcmp(m->vars[i].name, name) == 0)
      return i;
  return -1;
}

static const dg_block_class *class_of(const dg_graph *g, int block) {
  return dgp_class_find(NULL, dg_graph_block_type(g, block));
}

static int block_of(const dg_graph *g, const char *id, size_t len) {
  for (int b = 0; b < dg_graph_block_count(g); b++) {
    const char *bid = dg_graph_block_id(g, b);
    if (strlen(bid) == len && strncmp(bid, id, len) == 0)
      return b;
  }
  return -1;
}

/* The channels the scenario's "inputs" drive (a JSON object's keys). */
static bool scenario_drives(json_t *scn, const char *channel) {
  json_t *in = scn ? json_object_get(scn, "inputs") : NULL;
  return in && json_object_get(in, channel) != NULL;
}

static void add_inputs(loader *l, fmu_model *m, const dg_graph *g, const dg_sim *sim, json_t *scn) {
  for (int b = 0; b < dg_graph_block_count(g); b++) {
    const dg_block_class *k = class_of(g, b);
    for (int i = 0; k && k->inputs && k->inputs[i].name; i++) {
      const dg_input_def *in = &k->inputs[i];
      const char *ch = dg_graph_input_channel(g, b, in->name);
      if (!ch || scenario_drives(scn, ch))
        continue;
      int at = find_var(m, ch);
      char read_by[256];
      snprintf(read_by, sizeof read_by, "%s.%s", dg_graph_block_id(g, b), in->name);
      if (at >= 0) { /* read by another block too: the ranges meet */
        fmu_var *v = &m->vars[at];
        if ((in->flags & DG_P_MIN) && (!v->has_min || in->min > v->min)) {
          v->has_min = true;
          v->min = in->min;
        }
        if ((in->flags & DG_P_MAX) && (!v->has_max || in->max < v->max)) {
          v->has_max = true;
          v->max = in->max;
        }
        char desc[1024];
        snprintf(desc, sizeof desc, "%s, %s", v->description, read_by);
        set_text(&v->description, desc);
        continue;
      }
      if (strcmp(ch, "time") == 0) {
        problem(l, "the channel \"time\" cannot be an input of an FMU (the name is its time)");
        continue;
      }
      fmu_var *v = add_var(m, ch, VAR_INPUT);
      if (!v) {
        problem(l, "out of memory");
        return;
      }
      v->index = dg_sim_input_find(sim, ch);
      v->integer = dg_sim_input_is_integer(sim, v->index);
      v->start = dg_sim_get_input(sim, v->index);
      v->has_min = (in->flags & DG_P_MIN) != 0;
      v->min = in->min;
      v->has_max = (in->flags & DG_P_MAX) != 0;
      v->max = in->max;
      set_text(&v->unit, in->unit);
      char desc[1024];
      snprintf(desc, sizeof desc, "channel %s: %s; read by %s", ch, in->doc ? in->doc : "",
               read_by);
      set_text(&v->description, desc);
    }
  }
}

/* The doc of signal `name` ("block.signal" or "block.port.torque"). */
static void signal_doc(const dg_graph *g, const char *name, char *buf, size_t size) {
  buf[0] = '\0';
  const char *dot = strchr(name, '.');
  int b = dot ? block_of(g, name, (size_t)(dot - name)) : -1;
  const dg_block_class *k = b >= 0 ? class_of(g, b) : NULL;
  if (!k)
    return;
  const char *rest = dot + 1, *dot2 = strchr(rest, '.');
  if (!dot2) {
    for (int i = 0; k->signals && k->signals[i].name; i++)
      if (strcmp(k->signals[i].name, rest) == 0)
        snprintf(buf, size, "%s", k->signals[i].doc ? k->signals[i].doc : "");
    return;
  }
  size_t plen = (size_t)(dot2 - rest);
  const char *port_doc = "";
  for (int i = 0; k->ports && k->ports[i].name; i++)
    if (strlen(k->ports[i].name) == plen && strncmp(k->ports[i].name, rest, plen) == 0)
      port_doc = k->ports[i].doc ? k->ports[i].doc : "";
  if (strcmp(dot2 + 1, "torque") == 0)
    snprintf(buf, size, "torque block %.*s applies to its shaft at port %.*s (%s)",
             (int)(dot - name), name, (int)plen, rest, port_doc);
  else
    snprintf(buf, size, "angle of the shaft at %.*s.%.*s (%s)", (int)(dot - name), name, (int)plen,
             rest, port_doc);
}

static void add_outputs(loader *l, fmu_model *m, const dg_graph *g, const dg_sim *sim,
                        json_t *outputs) {
  size_t i;
  json_t *o;
  json_array_foreach(outputs, i, o) {
    const char *name = json_string_value(o);
    int id = dg_sim_signal_find(sim, name);
    if (id < 0) {
      int n = dg_sim_signal_count(sim);
      const char **names = calloc((size_t)n + 1, sizeof *names);
      const char *close = NULL;
      if (names) {
        for (int k = 0; k < n; k++)
          names[k] = dg_sim_signal_name(sim, k);
        close = dg_suggest(name, names, n);
      }
      if (close)
        problem(l, "output \"%s\": no such signal; did you mean \"%s\"?", name, close);
      else if (dg_sim_input_find(sim, name) >= 0)
        problem(l, "output \"%s\": a channel, not a signal (outputs are \"block.signal\")", name);
      else
        problem(l,
                "output \"%s\": no such signal (outputs are \"block.signal\" or "
                "\"block.port.torque\")",
                name);
      free(names);
      continue;
    }
    if (find_var(m, name) >= 0) {
      problem(l, "output \"%s\" is given twice or is also an input", name);
      continue;
    }
    fmu_var *v = add_var(m, name, VAR_OUTPUT);
    if (!v) {
      problem(l, "out of memory");
      return;
    }
    v->index = id;
    set_text(&v->unit, dg_sim_signal_unit(sim, id));
    char doc[512];
    signal_doc(g, name, doc, sizeof doc);
    set_text(&v->description, doc);
  }
}

/* Every number parameter of one block (its table `defs`, keys under
 * `prefix`) that no structure depends on. */
static void add_params_of(loader *l, fmu_model *m, dg_graph *g, const dg_sim *sim,
                          const dg_param_def *defs, const char *prefix) {
  for (const dg_param_def *d = defs; d && d->key && l->problems == 0; d++) {
    char key[512];
    snprintf(key, sizeof key, "%s.%s", prefix, d->key);
    if (d->kind == DG_PARAM_OBJECT) {
      add_params_of(l, m, g, sim, d->fields, key);
      continue;
    }
    if (d->kind != DG_PARAM_NUMBER)
      continue;
    const dg_param_def *def = NULL;
    const double *inertia = NULL;
    unsigned effect = dgp_graph_override_effect(g, key, &def, &inertia);
    const double *value = dgp_graph_param_number(g, key, NULL, NULL);
    if ((effect != DG_P_DYNAMICS && effect != DG_P_INERTIA) || !value)
      continue;
    char name[600];
    snprintf(name, sizeof name, "%s", key);
    /* a signal or channel of that name (chosen as a variable or not) */
    if (find_var(m, name) >= 0 || dg_sim_signal_find(sim, name) >= 0 ||
        dg_sim_input_find(sim, name) >= 0)
      snprintf(name, sizeof name, "%s:param", key);
    fmu_var *v = add_var(m, name, VAR_PARAM);
    if (!v) {
      problem(l, "out of memory");
      return;
    }
    v->key = strdup(key);
    if (!v->key) {
      problem(l, "out of memory");
      return;
    }
    v->def = d;
    v->tunable = effect == DG_P_DYNAMICS;
    v->start = *value;
    v->has_min = (d->flags & DG_P_MIN) && !(d->flags & DG_P_MIN_EXCL);
    v->min = d->min;
    v->has_max = (d->flags & DG_P_MAX) && !(d->flags & DG_P_MAX_EXCL);
    v->max = d->max;
    set_text(&v->unit, d->unit);
    char range[64], doc[900];
    dgp_range_text(range, sizeof range, d->flags, d->min, d->max, DG_RANGE_BOUNDS);
    snprintf(doc, sizeof doc, "%s%s%s%s", d->doc ? d->doc : "", range[0] ? " (" : "", range,
             range[0] ? ")" : "");
    set_text(&v->description, doc);
  }
}

static void index_lists(fmu_model *m) {
  m->inputs = calloc((size_t)m->nvars + 1, sizeof *m->inputs);
  m->outputs = calloc((size_t)m->nvars + 1, sizeof *m->outputs);
  m->params = calloc((size_t)m->nvars + 1, sizeof *m->params);
  if (!m->inputs || !m->outputs || !m->params)
    return;
  for (int i = 0; i < m->nvars; i++) {
    if (m->vars[i].kind == VAR_INPUT)
      m->inputs[m->ninputs++] = i;
    else if (m->vars[i].kind == VAR_OUTPUT)
      m->outputs[m->noutputs++] = i;
    else if (m->vars[i].kind == VAR_PARAM)
      m->params[m->nparams++] = i;
  }
}

fmu_model *fmu_model_load(const char *config_json, const char *graph_json,
                          const char *scenario_json, fmu_report_fn report, void *user) {
  loader l = {report, user, 0};
  fmu_model *m = calloc(1, sizeof *m);
  if (!m) {
    problem(&l, "out of memory");
    return NULL;
  }
  m->stop_time = NAN;
  m->config_json = dup_or_null(config_json);
  m->graph_json = dup_or_null(graph_json);
  m->scenario_json = dup_or_null(scenario_json);
  if (!m->config_json || !m->graph_json || (scenario_json && !m->scenario_json)) {
    problem(&l, "out of memory");
    fmu_model_free(m);
    return NULL;
  }
  fmu_token(config_json, graph_json, scenario_json, m->token);
  config c = {0};
  json_t *scn_json = NULL;
  dg_graph *g = NULL;
  dg_scenario *scn = NULL;
  dg_sim *sim = NULL;
  dg_error err;
  if (parse_config(&l, m, config_json, &c)) {
    if (c.scenario != (scenario_json != NULL))
      problem(&l, c.scenario ? "fmu.json names a scenario but there is no scenario.json"
                             : "there is a scenario.json but fmu.json names none");
  }
  if (l.problems == 0) {
    g = dg_graph_load_string(NULL, graph_json, "graph.json", &err);
    if (!g)
      load_error(&l, "the graph", &err);
  }
  if (l.problems == 0 && scenario_json) {
    scn = dg_scenario_load_string(scenario_json, "scenario.json", &err);
    if (!scn)
      load_error(&l, "the scenario", &err);
    scn_json = json_loads(scenario_json, 0, NULL);
    m->has_stop = scn_json && json_object_get(scn_json, "stop") != NULL;
    m->stop_time = dg_scenario_duration(scn);
  }
  if (l.problems == 0) {
    sim = dg_sim_new(g, &err);
    if (!sim)
      load_error(&l, "the graph", &err);
  }
  if (l.problems == 0) {
    dg_run_timing rt;
    double interval = scn ? dg_scenario_output_interval(scn) : NAN;
    if (dg_run_timing_init(&rt, m->dt, NAN, interval) >= 0)
      m->step_size = rt.interval;
    else
      m->step_size = m->dt;
    fmu_var *t = add_var(m, "time", VAR_TIME);
    if (!t)
      problem(&l, "out of memory");
    else {
      set_text(&t->unit, "s");
      set_text(&t->description, "simulation time");
    }
  }
  if (l.problems == 0)
    add_inputs(&l, m, g, sim, scn_json);
  if (l.problems == 0)
    add_outputs(&l, m, g, sim, c.outputs);
  for (int b = 0; l.problems == 0 && b < dg_graph_block_count(g); b++) {
    const dg_block_class *k = class_of(g, b);
    if (k)
      add_params_of(&l, m, g, sim, k->params, dg_graph_block_id(g, b));
  }
  if (l.problems == 0) {
    index_lists(m);
    if (!m->inputs || !m->outputs || !m->params)
      problem(&l, "out of memory");
  }
  dg_sim_free(sim);
  dg_scenario_free(scn);
  dg_graph_free(g);
  json_decref(scn_json);
  json_decref(c.root);
  if (l.problems > 0) {
    fmu_model_free(m);
    return NULL;
  }
  return m;
}

void fmu_model_free(fmu_model *m) {
  if (!m)
    return;
  for (int i = 0; i < m->nvars; i++) {
    free(m->vars[i].name);
    free(m->vars[i].unit);
    free(m->vars[i].description);
    free(m->vars[i].key);
  }
  free(m->vars);
  free(m->inputs);
  free(m->outputs);
  free(m->params);
  free(m->model_name);
  free(m->model_identifier);
  free(m->description);
  free(m->config_json);
  free(m->graph_json);
  free(m->scenario_json);
  free(m);
}

/* ------------------------------------------------------------------------ */
/* Units: the seven SI base units and rad, from drivegraph's unit strings   */

typedef struct unit_dim {
  int e[8]; /* kg m s A K mol cd rad */
  double factor;
} unit_dim;

static const char *const base_names[8] = {"kg", "m", "s", "A", "K", "mol", "cd", "rad"};

typedef struct named_unit {
  const char *name;
  int e[8];
  double factor;
} named_unit;

#define PI 3.14159265358979323846
static const named_unit known_units[] = {
    {"kg", {1, 0, 0, 0, 0, 0, 0, 0}, 1},         {"g", {1, 0, 0, 0, 0, 0, 0, 0}, 1e-3},
    {"m", {0, 1, 0, 0, 0, 0, 0, 0}, 1},          {"km", {0, 1, 0, 0, 0, 0, 0, 0}, 1e3},
    {"mm", {0, 1, 0, 0, 0, 0, 0, 0}, 1e-3},      {"s", {0, 0, 1, 0, 0, 0, 0, 0}, 1},
    {"ms", {0, 0, 1, 0, 0, 0, 0, 0}, 1e-3},      {"min", {0, 0, 1, 0, 0, 0, 0, 0}, 60},
    {"h", {0, 0, 1, 0, 0, 0, 0, 0}, 3600},       {"A", {0, 0, 0, 1, 0, 0, 0, 0}, 1},
    {"K", {0, 0, 0, 0, 1, 0, 0, 0}, 1},          {"rad", {0, 0, 0, 0, 0, 0, 0, 1}, 1},
    {"deg", {0, 0, 0, 0, 0, 0, 0, 1}, PI / 180}, {"rev", {0, 0, 0, 0, 0, 0, 0, 1}, 2 * PI},
    {"rpm", {0, 0, -1, 0, 0, 0, 0, 1}, PI / 30}, {"Hz", {0, 0, -1, 0, 0, 0, 0, 0}, 1},
    {"N", {1, 1, -2, 0, 0, 0, 0, 0}, 1},         {"J", {1, 2, -2, 0, 0, 0, 0, 0}, 1},
    {"W", {1, 2, -3, 0, 0, 0, 0, 0}, 1},         {"kW", {1, 2, -3, 0, 0, 0, 0, 0}, 1e3},
    {"Pa", {1, -1, -2, 0, 0, 0, 0, 0}, 1},       {"V", {1, 2, -3, -1, 0, 0, 0, 0}, 1},
};

typedef struct unit_parser {
  const char *p;
  bool ok;
} unit_parser;

static void unit_expr(unit_parser *up, unit_dim *out);

static void unit_mul(unit_dim *a, const unit_dim *b, int sign) {
  for (int i = 0; i < 8; i++)
    a->e[i] += sign * b->e[i];
  a->factor = sign > 0 ? a->factor * b->factor : a->factor / b->factor;
}

/* atom ('^' integer)? */
static void unit_factor(unit_parser *up, unit_dim *out) {
  *out = (unit_dim){{0}, 1.0};
  if (*up->p == '(') {
    up->p++;
    unit_expr(up, out);
    if (*up->p != ')')
      up->ok = false;
    else
      up->p++;
  } else if (*up->p == '1') {
    up->p++;
  } else {
    size_t n = 0;
    while ((up->p[n] >= 'a' && up->p[n] <= 'z') || (up->p[n] >= 'A' && up->p[n] <= 'Z'))
      n++;
    bool found = false;
    for (size_t i = 0; i < sizeof known_units / sizeof known_units[0] && !found; i++)
      if (strlen(known_units[i].name) == n && strncmp(known_units[i].name, up->p, n) == 0) {
        memcpy(out->e, known_units[i].e, sizeof out->e);
        out->factor = known_units[i].factor;
        found = true;
      }
    if (!found || n == 0)
      up->ok = false;
    up->p += n;
  }
  if (*up->p == '^') {
    up->p++;
    int sign = 1;
    if (*up->p == '-') {
      sign = -1;
      up->p++;
    }
    if (*up->p < '1' || *up->p > '9') {
      up->ok = false;
      return;
    }
    int k = sign * (*up->p++ - '0');
    unit_dim base = *out;
    *out = (unit_dim){{0}, 1.0};
    for (int i = 0; i < (k < 0 ? -k : k); i++)
      unit_mul(out, &base, k < 0 ? -1 : 1);
  }
}

static void unit_expr(unit_parser *up, unit_dim *out) {
  unit_factor(up, out);
  while (up->ok && (*up->p == '*' || *up->p == '/')) {
    int sign = *up->p == '*' ? 1 : -1;
    up->p++;
    unit_dim f;
    unit_factor(up, &f);
    unit_mul(out, &f, sign);
  }
}

/* The unit's dimensions, false when the string is not a product of known
 * units with integer exponents ("rad/s/sqrt(N*m)"). */
static bool unit_parse(const char *s, unit_dim *out) {
  unit_parser up = {s, true};
  unit_expr(&up, out);
  return up.ok && *up.p == '\0';
}

/* ------------------------------------------------------------------------ */
/* modelDescription.xml                                                     */

/* Numbers as xs:double: every digit, so the value reads back exactly. */
static void put_double(strbuf *b, const char *attr, double v) {
  strbuf_printf(b, " %s=\"%.17g\"", attr, v);
}

static void put_units(strbuf *b, const fmu_model *m) {
  bool any = false;
  for (int i = 0; i < m->nvars; i++) {
    const char *u = m->vars[i].unit;
    bool seen = !*u;
    for (int j = 0; j < i && !seen; j++)
      seen = strcmp(m->vars[j].unit, u) == 0;
    if (seen)
      continue;
    if (!any)
      strbuf_puts(b, "  <UnitDefinitions>\n");
    any = true;
    strbuf_puts(b, "    <Unit");
    strbuf_attr(b, "name", u);
    unit_dim d;
    if (!unit_parse(u, &d)) {
      strbuf_puts(b, "/>\n");
      continue;
    }
    strbuf_puts(b, ">\n      <BaseUnit");
    for (int k = 0; k < 8; k++)
      if (d.e[k])
        strbuf_printf(b, " %s=\"%d\"", base_names[k], d.e[k]);
    if (d.factor != 1.0)
      put_double(b, "factor", d.factor);
    strbuf_puts(b, "/>\n    </Unit>\n");
  }
  if (any)
    strbuf_puts(b, "  </UnitDefinitions>\n");
}

static void put_log_categories(strbuf *b) {
  strbuf_puts(b, "  <LogCategories>\n"
                 "    <Category name=\"logStatusWarning\" description=\"warnings\"/>\n"
                 "    <Category name=\"logStatusDiscard\" description=\"calls that changed "
                 "nothing (a value out of range)\"/>\n"
                 "    <Category name=\"logStatusError\" description=\"errors: the simulation's "
                 "failures with the block and the time, and calls not allowed\"/>\n"
                 "    <Category name=\"logStatusFatal\" description=\"fatal errors\"/>\n"
                 "    <Category name=\"logCalls\" description=\"every FMI call\"/>\n"
                 "  </LogCategories>\n");
}

static void put_default_experiment(strbuf *b, const fmu_model *m) {
  strbuf_puts(b, "  <DefaultExperiment startTime=\"0\"");
  if (isfinite(m->stop_time))
    put_double(b, "stopTime", m->stop_time);
  put_double(b, "stepSize", m->step_size);
  strbuf_puts(b, "/>\n");
}

static const char *causality_of(const fmu_var *v) {
  switch (v->kind) {
  case VAR_TIME:
    return "independent";
  case VAR_INPUT:
    return "input";
  case VAR_OUTPUT:
    return "output";
  default:
    return "parameter";
  }
}

static const char *variability_of(const fmu_var *v) {
  if (v->kind == VAR_PARAM)
    return v->tunable ? "tunable" : "fixed";
  return v->integer ? "discrete" : "continuous";
}

/* The value attributes of a variable: start (inputs and parameters), min,
 * max. */
static void put_values(strbuf *b, const fmu_var *v) {
  bool has_start = v->kind == VAR_INPUT || v->kind == VAR_PARAM;
  if (v->integer) {
    if (has_start)
      strbuf_printf(b, " start=\"%d\"", (int)v->start);
    if (v->has_min)
      strbuf_printf(b, " min=\"%d\"", (int)ceil(v->min));
    if (v->has_max)
      strbuf_printf(b, " max=\"%d\"", (int)floor(v->max));
    return;
  }
  if (has_start)
    put_double(b, "start", v->start);
  if (v->has_min)
    put_double(b, "min", v->min);
  if (v->has_max)
    put_double(b, "max", v->max);
}

static void put_fmi3_variables(strbuf *b, const fmu_model *m) {
  strbuf_puts(b, "  <ModelVariables>\n");
  for (int i = 0; i < m->nvars; i++) {
    const fmu_var *v = &m->vars[i];
    strbuf_printf(b, "    <%s", v->integer ? "Int32" : "Float64");
    strbuf_attr(b, "name", v->name);
    strbuf_printf(b, " valueReference=\"%u\"", v->vr);
    if (*v->description)
      strbuf_attr(b, "description", v->description);
    strbuf_printf(b, " causality=\"%s\" variability=\"%s\"", causality_of(v), variability_of(v));
    if (!v->integer && *v->unit)
      strbuf_attr(b, "unit", v->unit);
    put_values(b, v);
    strbuf_puts(b, "/>\n");
  }
  strbuf_puts(b, "  </ModelVariables>\n  <ModelStructure>\n");
  for (int k = 0; k < m->noutputs; k++)
    strbuf_printf(b, "    <Output valueReference=\"%u\"/>\n", m->vars[m->outputs[k]].vr);
  for (int k = 0; k < m->noutputs; k++)
    strbuf_printf(b, "    <InitialUnknown valueReference=\"%u\"/>\n", m->vars[m->outputs[k]].vr);
  strbuf_puts(b, "  </ModelStructure>\n");
}

static void put_fmi2_variables(strbuf *b, const fmu_model *m) {
  strbuf_puts(b, "  <ModelVariables>\n");
  for (int i = 0; i < m->nvars; i++) {
    const fmu_var *v = &m->vars[i];
    strbuf_printf(b, "    <!-- index %d -->\n    <ScalarVariable", i + 1);
    strbuf_attr(b, "name", v->name);
    strbuf_printf(b, " valueReference=\"%u\"", v->vr);
    if (*v->description)
      strbuf_attr(b, "description", v->description);
    strbuf_printf(b, " causality=\"%s\" variability=\"%s\"", causality_of(v), variability_of(v));
    if (v->kind == VAR_PARAM)
      strbuf_puts(b, " initial=\"exact\"");
    strbuf_printf(b, ">\n      <%s", v->integer ? "Integer" : "Real");
    if (!v->integer && *v->unit)
      strbuf_attr(b, "unit", v->unit);
    put_values(b, v);
    strbuf_puts(b, "/>\n    </ScalarVariable>\n");
  }
  strbuf_puts(b, "  </ModelVariables>\n  <ModelStructure>\n");
  if (m->noutputs > 0) {
    strbuf_puts(b, "    <Outputs>\n");
    for (int k = 0; k < m->noutputs; k++)
      strbuf_printf(b, "      <Unknown index=\"%d\"/>\n", m->outputs[k] + 1);
    strbuf_puts(b, "    </Outputs>\n    <InitialUnknowns>\n");
    for (int k = 0; k < m->noutputs; k++)
      strbuf_printf(b, "      <Unknown index=\"%d\"/>\n", m->outputs[k] + 1);
    strbuf_puts(b, "    </InitialUnknowns>\n");
  }
  strbuf_puts(b, "  </ModelStructure>\n");
}

char *fmu_model_description(const fmu_model *m) {
  strbuf b;
  strbuf_init(&b);
  strbuf_puts(&b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<fmiModelDescription");
  strbuf_printf(&b, " fmiVersion=\"%s\"", m->fmi == 3 ? "3.0" : "2.0");
  strbuf_attr(&b, "modelName", m->model_name);
  strbuf_attr(&b, m->fmi == 3 ? "instantiationToken" : "guid", m->token);
  if (m->description && *m->description)
    strbuf_attr(&b, "description", m->description);
  strbuf_attr(&b, "generationTool", "drivegraph " DG_VERSION_STRING);
  strbuf_puts(&b, " variableNamingConvention=\"flat\"");
  if (m->fmi == 2)
    strbuf_puts(&b, " numberOfEventIndicators=\"0\"");
  strbuf_puts(&b, ">\n  <CoSimulation");
  strbuf_attr(&b, "modelIdentifier", m->model_identifier);
  strbuf_puts(&b, " canHandleVariableCommunicationStepSize=\"true\"");
  if (m->fmi == 3) {
    put_double(&b, "fixedInternalStepSize", m->dt);
    strbuf_puts(&b, " canGetAndSetFMUState=\"true\" canSerializeFMUState=\"true\""
                    " hasEventMode=\"false\"");
    if (m->has_stop)
      strbuf_puts(&b, " mightReturnEarlyFromDoStep=\"true\"");
  } else {
    strbuf_puts(&b, " canInterpolateInputs=\"true\" canGetAndSetFMUstate=\"true\""
                    " canSerializeFMUstate=\"true\" canNotUseMemoryManagementFunctions=\"true\"");
  }
  strbuf_puts(&b, "/>\n");
  put_units(&b, m);
  put_log_categories(&b);
  put_default_experiment(&b, m);
  if (m->fmi == 3)
    put_fmi3_variables(&b, m);
  else
    put_fmi2_variables(&b, m);
  strbuf_puts(&b, "</fmiModelDescription>\n");
  return strbuf_take(&b);
}
