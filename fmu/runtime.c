/* One instance of a drivegraph FMU (runtime.h). */
#include "runtime.h"

#include "internal.h"
#include "run/simstate.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The largest resource file read (a graph, a scenario). */
#define MAX_RESOURCE (64u << 20)

const char *const fmu_log_category[LOG_NCAT] = {"logStatusWarning", "logStatusDiscard",
                                                "logStatusError", "logStatusFatal", "logCalls"};

static const char *const mode_names[] = {"Instantiated", "Initialization Mode", "Step Mode",
                                         "Terminated", "an error state"};

/* ------------------------------------------------------------------------ */
/* Logging                                                                  */

static int category_of(fmu_status status) {
  switch (status) {
  case FMU_WARNING:
    return LOG_WARNING;
  case FMU_DISCARD:
    return LOG_DISCARD;
  case FMU_ERROR:
    return LOG_ERROR;
  case FMU_FATAL:
    return LOG_FATAL;
  default:
    return LOG_CALLS;
  }
}

/* '#' is the standards' escape character in messages: doubled. */
static void escape_hashes(const char *in, char *out, size_t size) {
  size_t o = 0;
  for (; *in && o + 2 < size; in++) {
    if (*in == '#')
      out[o++] = '#';
    out[o++] = *in;
  }
  out[o] = '\0';
}

static void vlog(fmu_instance *in, fmu_status status, const char *fmt, va_list ap) {
  int cat = category_of(status);
  bool on = in->cat_on[cat] || (in->errors_always && cat != LOG_CALLS);
  if (!in->log || !on)
    return;
  char raw[1200], msg[2400];
  vsnprintf(raw, sizeof raw, fmt, ap);
  escape_hashes(raw, msg, sizeof msg);
  in->log(in->log_env, in->name, status, fmu_log_category[cat], msg);
}

fmu_status fmu_log(fmu_instance *in, fmu_status status, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vlog(in, status, fmt, ap);
  va_end(ap);
  return status;
}

fmu_status fmu_fail(fmu_instance *in, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vlog(in, FMU_ERROR, fmt, ap);
  va_end(ap);
  in->mode = MODE_ERROR;
  return FMU_ERROR;
}

bool fmu_allowed(fmu_instance *in, const char *what, unsigned modes) {
  if (modes & IN_MODE(in->mode))
    return true;
  fmu_fail(in, "%s is not allowed in %s", what, mode_names[in->mode]);
  return false;
}

fmu_status fmu_set_debug_logging(fmu_instance *in, bool on, size_t n, const char *const *cats) {
  if (n == 0) {
    for (int c = 0; c < LOG_NCAT; c++)
      in->cat_on[c] = on;
    return FMU_OK;
  }
  for (size_t i = 0; i < n; i++) {
    int found = -1;
    for (int c = 0; c < LOG_NCAT && found < 0; c++)
      if (cats && cats[i] && strcmp(cats[i], fmu_log_category[c]) == 0)
        found = c;
    if (found < 0)
      return fmu_fail(in,
                      "unknown log category \"%s\" (the categories are logStatusWarning, "
                      "logStatusDiscard, logStatusError, logStatusFatal, logCalls)",
                      cats && cats[i] ? cats[i] : "(null)");
    in->cat_on[found] = on;
  }
  return FMU_OK;
}

/* ------------------------------------------------------------------------ */
/* Instantiation                                                            */

static int hexval(char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

bool fmu_uri_to_path(const char *uri, char *buf, size_t size) {
  if (!uri || strncmp(uri, "file:", 5) != 0 || size == 0)
    return false;
  const char *p = uri + 5;
  if (strncmp(p, "//", 2) == 0) { /* an authority: empty or localhost */
    p += 2;
    if (strncmp(p, "localhost/", 10) == 0)
      p += 9;
    else if (*p != '/')
      return false;
  }
  if (*p != '/')
    return false;
  size_t o = 0;
  for (; *p; p++) {
    char c = *p;
    if (c == '%') {
      int hi = hexval(p[1]), lo = hi >= 0 ? hexval(p[2]) : -1;
      if (hi < 0 || lo < 0)
        return false;
      c = (char)(hi * 16 + lo);
      p += 2;
      if (c == '\0')
        return false;
    }
    if (o + 1 >= size)
      return false;
    buf[o++] = c;
  }
  buf[o] = '\0';
  return true;
}

typedef struct report_ctx {
  fmu_instance *in;
} report_ctx;

static void report_to_log(void *user, const char *text) {
  fmu_log(((report_ctx *)user)->in, FMU_ERROR, "%s", text);
}

static char *read_resource(fmu_instance *in, const char *dir, const char *file, bool required) {
  char path[4096];
  size_t n = strlen(dir);
  int len = snprintf(path, sizeof path, "%s%s%s", dir, n > 0 && dir[n - 1] == '/' ? "" : "/", file);
  if (len < 0 || (size_t)len >= sizeof path) {
    fmu_log(in, FMU_ERROR, "the resource path is too long");
    return NULL;
  }
  char *text = fmu_read_file(path, MAX_RESOURCE);
  if (!text && required)
    fmu_log(in, FMU_ERROR, "cannot read the FMU's resource %s", path);
  return text;
}

/* The instance without its model: name, logging; NULL when out of memory. */
static fmu_instance *instance_new(int fmi, const char *name, fmu_log_fn log, void *env,
                                  bool logging_on) {
  fmu_instance *in = calloc(1, sizeof *in);
  if (!in)
    return NULL;
  in->fmi = fmi;
  in->log = log;
  in->log_env = env;
  in->name = strdup(name && *name ? name : "drivegraph");
  for (int c = 0; c < LOG_NCAT; c++)
    in->cat_on[c] = logging_on;
  in->errors_always = fmi == 2;
  if (!in->name) {
    free(in);
    return NULL;
  }
  return in;
}

/* The model from the three texts, checked against the token. */
static bool instance_load(fmu_instance *in, const char *token, const char *config,
                          const char *graph, const char *scenario) {
  report_ctx rc = {in};
  in->m = fmu_model_load(config, graph, scenario, report_to_log, &rc);
  if (!in->m)
    return false;
  if (in->m->fmi != in->fmi) {
    fmu_log(in, FMU_ERROR, "the resources describe an FMI %d FMU, this binary is FMI %d's",
            in->m->fmi, in->fmi);
    return false;
  }
  if (!token || strcmp(token, in->m->token) != 0) {
    fmu_log(in, FMU_ERROR,
            "the instantiation token \"%s\" is not this FMU's: modelDescription.xml and the "
            "resources (\"%s\") do not belong together",
            token ? token : "(null)", in->m->token);
    return false;
  }
  in->val = calloc((size_t)in->m->nvars + 1, sizeof *in->val);
  in->interp = calloc((size_t)in->m->nvars + 1, sizeof *in->interp);
  if (!in->val || !in->interp) {
    fmu_log(in, FMU_FATAL, "out of memory");
    return false;
  }
  fmu_reset(in);
  fmu_log(in, FMU_OK, "instantiated %s (%d variables, internal step %g s)", in->m->model_name,
          in->m->nvars, in->m->dt);
  return true;
}

static bool name_blank(const char *name) {
  bool blank = true;
  for (const char *p = name; p && *p && blank; p++)
    blank = *p == ' ' || *p == '\t' || *p == '\n' || *p == '\r';
  return blank;
}

fmu_instance *fmu_instantiate(int fmi, const char *name, const char *token,
                              const char *resource_dir, fmu_log_fn log, void *env,
                              bool logging_on) {
  fmu_instance *in = instance_new(fmi, name, log, env, logging_on);
  if (!in)
    return NULL;
  if (name_blank(name)) {
    fmu_log(in, FMU_ERROR, "the instance name must not be empty");
    fmu_free(in);
    return NULL;
  }
  if (!resource_dir) {
    fmu_log(in, FMU_ERROR,
            "no resource location given: the FMU needs its resources folder "
            "(the graph and the scenario)");
    fmu_free(in);
    return NULL;
  }
  char *config = read_resource(in, resource_dir, "fmu.json", true);
  char *graph = config ? read_resource(in, resource_dir, "graph.json", true) : NULL;
  char *scenario = graph ? read_resource(in, resource_dir, "scenario.json", false) : NULL;
  bool ok = graph && instance_load(in, token, config, graph, scenario);
  free(config);
  free(graph);
  free(scenario);
  if (!ok) {
    fmu_free(in);
    return NULL;
  }
  return in;
}

fmu_instance *fmu_instantiate_texts(int fmi, const char *name, const char *token,
                                    const char *config, const char *graph, const char *scenario,
                                    fmu_log_fn log, void *env, bool logging_on) {
  fmu_instance *in = instance_new(fmi, name, log, env, logging_on);
  if (in && (!config || !graph || !instance_load(in, token, config, graph, scenario))) {
    fmu_free(in);
    in = NULL;
  }
  return in;
}

static void drop_sim(fmu_instance *in) {
  dg_driver_free(in->drv);
  dg_sim_free(in->sim);
  dg_scenario_free(in->scn);
  dg_graph_free(in->graph);
  free(in->run_text);
  in->drv = NULL;
  in->sim = NULL;
  in->scn = NULL;
  in->graph = NULL;
  in->run_text = NULL;
}

void fmu_free(fmu_instance *in) {
  if (!in)
    return;
  drop_sim(in);
  fmu_model_free(in->m);
  free(in->val);
  free(in->interp);
  free(in->name);
  free(in);
}

fmu_status fmu_reset(fmu_instance *in) {
  drop_sim(in);
  for (int i = 0; i < in->m->nvars; i++) {
    in->val[i] = in->m->vars[i].start;
    in->interp[i] = (fmu_interp){0};
  }
  in->mode = MODE_INSTANTIATED;
  in->start_time = 0.0;
  in->stop_defined = false;
  in->stop_time = 0.0;
  in->k = 0;
  in->t_base = 0.0;
  in->stopped = false;
  in->last_successful = 0.0;
  in->dirty = true;
  return FMU_OK;
}

/* ------------------------------------------------------------------------ */
/* The running simulation                                                   */

static double sim_time(const fmu_instance *in) { return in->t_base + (double)in->k * in->m->dt; }

/* The value of an interpolated input at simulation time t. */
static double interp_value(double t, void *user) {
  const fmu_interp *ip = user;
  double dt = t - ip->t0, v = ip->u0, p = 1.0;
  for (int k = 0; k < FMU_MAX_ORDER; k++) {
    p *= dt / (double)(k + 1);
    v += ip->d[k] * p;
  }
  return v;
}

/* Gives input variable i's value to the simulation: a constant, or (FMI 2
 * with derivatives) the polynomial. No allocation. */
static void apply_input(fmu_instance *in, int i) {
  const fmu_var *v = &in->m->vars[i];
  if (in->interp[i].active)
    dg_sim_set_input_fn(in->sim, v->index, interp_value, &in->interp[i], NULL);
  else
    dg_sim_set_input(in->sim, v->index, in->val[i]);
}

static bool same_bits(double a, double b) { return memcmp(&a, &b, sizeof a) == 0; }

/* Overrides ("%.17g" values) for the parameters whose value differs from
 * the file's, fixed (`tunable` false) or tunable ones. */
typedef struct override_set {
  int n;
  dg_override *ov;
  char (*text)[32];
} override_set;

static bool overrides_of(const fmu_instance *in, const double *val, bool tunable, override_set *s) {
  const fmu_model *m = in->m;
  s->n = 0;
  s->ov = calloc((size_t)m->nparams + 1, sizeof *s->ov);
  s->text = calloc((size_t)m->nparams + 1, sizeof *s->text);
  if (!s->ov || !s->text)
    return false;
  for (int k = 0; k < m->nparams; k++) {
    const fmu_var *v = &m->vars[m->params[k]];
    if (v->tunable != tunable || same_bits(val[m->params[k]], v->start))
      continue;
    snprintf(s->text[s->n], sizeof s->text[s->n], "%.17g", val[m->params[k]]);
    s->ov[s->n] = (dg_override){v->key, s->text[s->n]};
    s->n++;
  }
  return true;
}

static void overrides_free(override_set *s) {
  free(s->ov);
  free(s->text);
}

/* The scenario with every FMU input given as a constant at `val`'s value
 * (so that dg_driver_new starts the run with them, as `drivegraph sim`
 * starts it with the inputs its scenario gives at t = 0). */
static char *augmented_scenario(const fmu_instance *in, const double *val) {
  const fmu_model *m = in->m;
  const char **names = calloc((size_t)m->ninputs + 1, sizeof *names);
  double *values = calloc((size_t)m->ninputs + 1, sizeof *values);
  bool *integer = calloc((size_t)m->ninputs + 1, sizeof *integer);
  char *text = NULL;
  if (names && values && integer) {
    for (int k = 0; k < m->ninputs; k++) {
      const fmu_var *v = &m->vars[m->inputs[k]];
      names[k] = v->name;
      values[k] = val[m->inputs[k]];
      integer[k] = v->integer;
    }
    text = fmu_scenario_with_inputs(m->scenario_json, m->ninputs, names, values, integer);
  }
  free(names);
  free(values);
  free(integer);
  return text;
}

/* Writes the tunable parameters of `val` into graph g's parameters. */
static void write_tunables(const fmu_instance *in, dg_graph *g, const double *val) {
  const fmu_model *m = in->m;
  for (int k = 0; k < m->nparams; k++) {
    const fmu_var *v = &m->vars[m->params[k]];
    double *at = v->tunable ? dgp_graph_param_number(g, v->key, NULL, NULL) : NULL;
    if (at)
      *at = val[m->params[k]];
  }
  g->tunes++; /* a unit compiled with the old values stands aside (compile.c) */
}

/* A simulation of graph g with the scenario's schedules and the inputs of
 * `val`, started as the scenario starts it. */
static int new_run(fmu_instance *in, const dg_graph *g, const double *val, dg_sim **sim_out,
                   dg_scenario **scn_out, dg_driver **drv_out, dg_error *err) {
  *sim_out = NULL;
  *scn_out = NULL;
  *drv_out = NULL;
  char *text = augmented_scenario(in, val);
  if (!text) {
    dgp_error_set(err, DG_ERR_NOMEM, "scenario.json", "", "out of memory");
    return DG_ERR_NOMEM;
  }
  *scn_out = dg_scenario_load_string(text, "scenario.json", err);
  free(text);
  if (!*scn_out)
    return err->code;
  *sim_out = dg_sim_new(g, err);
  if (*sim_out) {
    /* The FMU reports no energy audit, and angles only where an output or
     * the stop condition reads one: the steps keep nothing more. */
    unsigned keep = dg_scenario_keep(*scn_out, *sim_out);
    for (int k = 0; k < in->m->noutputs; k++)
      keep |= dg_sim_signal_keep(*sim_out, in->m->vars[in->m->outputs[k]].index);
    if (dg_sim_set_keep(*sim_out, keep, err) != DG_OK)
      return err->code;
    *drv_out = dg_driver_new(*scn_out, *sim_out, err);
  }
  return *drv_out ? DG_OK : err->code;
}

static void log_dg_error(fmu_instance *in, const char *what, const dg_error *err) {
  char msg[900];
  dg_error_format(err, msg, sizeof msg);
  fmu_log(in, FMU_ERROR, "%s: %s", what, msg);
}

/* (Re)builds the simulation from the current values (before the start).
 * FMU_OK or FMU_ERROR after logging why. */
static fmu_status build(fmu_instance *in) {
  drop_sim(in);
  fmu_model *m = in->m;
  override_set fixed = {0}, tunable = {0};
  dg_error err;
  fmu_status st = FMU_OK;
  if (!overrides_of(in, in->val, false, &fixed) || !overrides_of(in, in->val, true, &tunable))
    st = fmu_log(in, FMU_ERROR, "out of memory");
  if (st == FMU_OK) {
    in->run_text = fixed.n > 0
                       ? dg_override_apply(m->graph_json, "graph.json", fixed.n, fixed.ov, &err)
                       : strdup(m->graph_json);
    if (!in->run_text)
      st = fmu_log(in, FMU_ERROR, "the parameters: %s", fixed.n ? err.text : "out of memory");
  }
  if (st == FMU_OK) {
    in->graph =
        dg_graph_load_overrides(NULL, in->run_text, "graph.json", tunable.n, tunable.ov, &err);
    if (!in->graph) {
      log_dg_error(in, "the parameters given", &err);
      st = FMU_ERROR;
    }
  }
  if (st == FMU_OK &&
      new_run(in, in->graph, in->val, &in->sim, &in->scn, &in->drv, &err) != DG_OK) {
    log_dg_error(in, "the start", &err);
    st = FMU_ERROR;
  }
  overrides_free(&fixed);
  overrides_free(&tunable);
  if (st != FMU_OK) {
    drop_sim(in);
    return st;
  }
  for (int k = 0; k < m->ninputs; k++)
    apply_input(in, m->inputs[k]);
  in->k = 0;
  in->t_base = 0.0;
  in->stopped = in->drv && dg_driver_should_stop(in->drv);
  in->dirty = false;
  return FMU_OK;
}

/* The simulation, built when values changed before the start. */
static fmu_status ensure_sim(fmu_instance *in) {
  if (in->sim && !in->dirty)
    return FMU_OK;
  if (in->mode != MODE_INSTANTIATED && in->mode != MODE_INIT && !in->sim)
    return fmu_log(in, FMU_ERROR, "there is no simulation (restore a state or reset)");
  return in->sim && !in->dirty ? FMU_OK : build(in);
}

/* ------------------------------------------------------------------------ */
/* Modes                                                                    */

fmu_status fmu_enter_init(fmu_instance *in, double start, bool stop_defined, double stop) {
  if (!fmu_allowed(in, "entering Initialization Mode", IN_MODE(MODE_INSTANTIATED)))
    return FMU_ERROR;
  if (!isfinite(start) || (stop_defined && !(stop >= start)))
    return fmu_fail(in, "the experiment's times are not valid (start %g, stop %g)", start, stop);
  in->start_time = start;
  in->stop_defined = stop_defined;
  in->stop_time = stop;
  in->last_successful = start;
  in->mode = MODE_INIT;
  return FMU_OK;
}

fmu_status fmu_exit_init(fmu_instance *in) {
  if (!fmu_allowed(in, "exiting Initialization Mode", IN_MODE(MODE_INIT)))
    return FMU_ERROR;
  if (ensure_sim(in) != FMU_OK) {
    in->mode = MODE_ERROR;
    return FMU_ERROR;
  }
  in->mode = MODE_STEP;
  return FMU_OK;
}

fmu_status fmu_terminate(fmu_instance *in) {
  if (!fmu_allowed(in, "terminating", IN_MODE(MODE_STEP) | IN_MODE(MODE_INIT)))
    return FMU_ERROR;
  in->mode = MODE_TERMINATED;
  return FMU_OK;
}

/* ------------------------------------------------------------------------ */
/* Values                                                                   */

static const char *kind_name(const fmu_var *v) {
  switch (v->kind) {
  case VAR_TIME:
    return "the time";
  case VAR_INPUT:
    return "an input";
  case VAR_OUTPUT:
    return "an output";
  default:
    return v->tunable ? "a tunable parameter" : "a fixed parameter";
  }
}

/* The variable of value reference vr with the type asked for, or NULL
 * after an error. */
static const fmu_var *var_of(fmu_instance *in, unsigned vr, bool integer, const char *what) {
  int i = fmu_model_var(in->m, vr);
  if (i < 0) {
    fmu_fail(in, "%s: no variable has value reference %u", what, vr);
    return NULL;
  }
  const fmu_var *v = &in->m->vars[i];
  if (v->integer != integer) {
    fmu_fail(in, "%s: variable %s (value reference %u) is %s, not %s", what, v->name, vr,
             v->integer ? "an integer" : "a float", integer ? "an integer" : "a float");
    return NULL;
  }
  return v;
}

fmu_status fmu_get(fmu_instance *in, const unsigned *vr, size_t n, double *out, bool integer) {
  if (!fmu_allowed(in, "getting values",
                   IN_MODE(MODE_INSTANTIATED) | IN_MODE(MODE_INIT) | IN_MODE(MODE_STEP) |
                       IN_MODE(MODE_TERMINATED) | IN_MODE(MODE_ERROR)))
    return FMU_ERROR;
  if (n > 0 && (!vr || !out))
    return fmu_fail(in, "getting values: no value references or no values given");
  for (size_t i = 0; i < n; i++) {
    const fmu_var *v = var_of(in, vr[i], integer, "getting values");
    if (!v)
      return FMU_ERROR;
    switch (v->kind) {
    case VAR_TIME:
      out[i] = in->start_time + sim_time(in);
      break;
    case VAR_INPUT:
      out[i] = in->interp[v->vr].active && in->sim ? dg_sim_get_input(in->sim, v->index)
                                                   : in->val[v->vr];
      break;
    case VAR_PARAM:
      out[i] = in->val[v->vr];
      break;
    case VAR_OUTPUT:
      if ((in->mode == MODE_INSTANTIATED || in->mode == MODE_INIT) && ensure_sim(in) != FMU_OK)
        return fmu_fail(in, "the outputs cannot be computed (see the messages before)");
      if (!in->sim)
        return fmu_fail(in, "output %s: there is no simulation", v->name);
      out[i] = dg_sim_signal(in->sim, v->index);
      break;
    }
  }
  return FMU_OK;
}

/* Applies the tunable parameters' values to the running simulation.
 * FMU_OK, or FMU_DISCARD after logging why (nothing changed). */
static fmu_status retune(fmu_instance *in, const double *val) {
  override_set s = {0};
  if (!overrides_of(in, val, true, &s)) {
    overrides_free(&s);
    return fmu_log(in, FMU_ERROR, "out of memory");
  }
  dg_error err;
  int rc = dgp_sim_tune(in->sim, in->run_text, "graph.json", s.n, s.ov, &err);
  overrides_free(&s);
  if (rc == DG_OK)
    return FMU_OK;
  char msg[900];
  dg_error_format(&err, msg, sizeof msg);
  return fmu_log(in, FMU_DISCARD, "at t = %.17g s: the parameters were not changed: %s",
                 in->start_time + sim_time(in), msg);
}

fmu_status fmu_set(fmu_instance *in, const unsigned *vr, size_t n, const double *v, bool integer) {
  if (!fmu_allowed(in, "setting values",
                   IN_MODE(MODE_INSTANTIATED) | IN_MODE(MODE_INIT) | IN_MODE(MODE_STEP)))
    return FMU_ERROR;
  if (n > 0 && (!vr || !v))
    return fmu_fail(in, "setting values: no value references or no values given");
  bool running = in->mode == MODE_STEP;
  /* every value checked before any is taken: a refused call changes nothing */
  bool tune = false;
  for (size_t i = 0; i < n; i++) {
    const fmu_var *var = var_of(in, vr[i], integer, "setting values");
    if (!var)
      return FMU_ERROR;
    if (var->kind == VAR_TIME || var->kind == VAR_OUTPUT)
      return fmu_fail(in, "variable %s is %s: it cannot be set", var->name, kind_name(var));
    if (var->kind == VAR_PARAM && !var->tunable && running)
      return fmu_fail(in,
                      "parameter %s is fixed: it can be set before the end of "
                      "Initialization Mode only",
                      var->name);
    if (!isfinite(v[i]))
      return fmu_log(in, FMU_DISCARD, "%s %s: %g is not a finite number: not taken", kind_name(var),
                     var->name, v[i]);
    if (var->kind == VAR_PARAM && var->def && !dgp_param_value_ok(var->def, v[i])) {
      char range[64];
      dgp_range_text(range, sizeof range, var->def->flags, var->def->min, var->def->max,
                    DG_RANGE_BOUNDS);
      return fmu_log(in, FMU_DISCARD, "parameter %s must be %s (got %.17g): not taken", var->name,
                     range, v[i]);
    }
    if (var->kind == VAR_INPUT &&
        ((var->has_min && v[i] < var->min) || (var->has_max && v[i] > var->max)))
      fmu_log(in, FMU_WARNING, "%s %s = %.17g is outside [%g, %g] (the blocks clamp it)",
              kind_name(var), var->name, v[i], var->has_min ? var->min : -INFINITY,
              var->has_max ? var->max : INFINITY);
    tune = tune || (var->kind == VAR_PARAM && running && !same_bits(v[i], in->val[var->vr]));
  }
  if (tune) {
    double *next = malloc(sizeof *next * (size_t)in->m->nvars);
    if (!next)
      return fmu_log(in, FMU_ERROR, "out of memory");
    memcpy(next, in->val, sizeof *next * (size_t)in->m->nvars);
    for (size_t i = 0; i < n; i++)
      next[vr[i]] = v[i];
    fmu_status st = retune(in, next);
    free(next);
    if (st != FMU_OK)
      return st;
  }
  for (size_t i = 0; i < n; i++) {
    const fmu_var *var = &in->m->vars[vr[i]];
    in->val[var->vr] = v[i];
    if (var->kind == VAR_INPUT) {
      in->interp[var->vr].active = false; /* a new value: held until set again */
      if (running && in->sim)
        apply_input(in, (int)var->vr);
    }
  }
  if (!running)
    in->dirty = true;
  return FMU_OK;
}

fmu_status fmu_set_input_derivatives(fmu_instance *in, const unsigned *vr, size_t n,
                                     const int *order, const double *v) {
  if (!fmu_allowed(in, "setting input derivatives",
                   IN_MODE(MODE_INSTANTIATED) | IN_MODE(MODE_INIT) | IN_MODE(MODE_STEP)))
    return FMU_ERROR;
  if (n > 0 && (!vr || !order || !v))
    return fmu_fail(in, "setting input derivatives: arguments missing");
  for (size_t i = 0; i < n; i++) {
    const fmu_var *var = var_of(in, vr[i], false, "setting input derivatives");
    if (!var)
      return FMU_ERROR;
    if (var->kind != VAR_INPUT)
      return fmu_fail(in, "setting input derivatives: %s is not a real input", var->name);
    if (order[i] < 1 || order[i] > FMU_MAX_ORDER)
      return fmu_fail(in, "setting input derivatives: order %d of %s (1 to %d)", order[i],
                      var->name, FMU_MAX_ORDER);
    if (!isfinite(v[i]))
      return fmu_log(in, FMU_DISCARD, "input %s: derivative %g is not finite: not taken", var->name,
                     v[i]);
  }
  double t = sim_time(in);
  for (size_t i = 0; i < n; i++) {
    fmu_interp *ip = &in->interp[vr[i]];
    if (!ip->active || ip->t0 != t) { /* a new polynomial from the value now */
      double u = ip->active ? interp_value(t, ip) : in->val[vr[i]];
      *ip = (fmu_interp){.active = true, .t0 = t, .u0 = u};
    }
    ip->d[order[i] - 1] = v[i];
    if (in->mode == MODE_STEP && in->sim)
      apply_input(in, (int)vr[i]);
  }
  if (in->mode != MODE_STEP)
    in->dirty = true;
  return FMU_OK;
}

/* ------------------------------------------------------------------------ */
/* Stepping                                                                 */

/* A failed step: the block and the time, from the simulation's error. */
static fmu_status step_failed(fmu_instance *in, double t) {
  const dg_error *e = dg_sim_last_error(in->sim);
  char block[128] = "";
  if (strncmp(e->path, "/blocks/", 8) == 0) {
    const char *id = e->path + 8;
    snprintf(block, sizeof block, "block \"%.*s\": ", (int)strcspn(id, "/"), id);
  }
  return fmu_fail(in,
                  "the step from t = %.17g s failed: %s%s (%s; restore a state taken "
                  "before, or reset)",
                  in->start_time + t, block, e->text, dg_code_name(e->code));
}

fmu_status fmu_do_step(fmu_instance *in, double t, double h, bool *early, bool *terminate,
                       double *last) {
  *early = false;
  *terminate = in->stopped;
  *last = in->start_time + sim_time(in);
  if (!fmu_allowed(in, "a step", IN_MODE(MODE_STEP)))
    return FMU_ERROR;
  double dt = in->m->dt, now = in->start_time + sim_time(in);
  if (!(h > 0.0) || !isfinite(h))
    return fmu_fail(in, "the communication step size must be > 0 (got %g)", h);
  double tol = 1e-9 * fmax(fabs(now), fmax(h, dt));
  if (!(fabs(t - now) <= tol))
    return fmu_fail(in,
                    "the communication point %.17g s is not the FMU's time %.17g s (set a "
                    "state to go back)",
                    t, now);
  /* whole steps of dt when h is a multiple of it (to 1e-9), else the
   * remainder as one shorter step at the end */
  double r = h / dt;
  long n = lround(r);
  bool whole = n >= 1 && fabs(r - (double)n) <= 1e-9 * fmax(1.0, r);
  double rest = 0.0;
  if (!whole) {
    n = (long)floor(r);
    rest = h - (double)n * dt;
  }
  if (in->stop_defined && t + h > in->stop_time + tol)
    return fmu_fail(in, "the step to %.17g s goes past the stop time %.17g s", t + h,
                    in->stop_time);
  for (long i = 0; i < n; i++) {
    double ts = sim_time(in);
    dg_driver_apply(in->drv, ts);
    if (dg_sim_step(in->sim, dt) != DG_OK)
      return step_failed(in, ts);
    in->k++;
    in->last_successful = in->start_time + sim_time(in);
    if (!in->stopped && dg_driver_should_stop(in->drv)) {
      in->stopped = true;
      fmu_log(in, FMU_OK, "t = %.17g s: the scenario's stop condition holds", in->last_successful);
      if (in->fmi == 2 || in->early_return_allowed) {
        *terminate = true;
        *last = in->last_successful;
        if (in->fmi == 2)
          return fmu_log(in, FMU_DISCARD,
                         "t = %.17g s: the scenario's stop condition ends "
                         "the run here",
                         *last);
        *early = true;
        return FMU_OK;
      }
    }
  }
  if (rest > 1e-12 * dt) {
    double ts = sim_time(in);
    dg_driver_apply(in->drv, ts);
    if (dg_sim_step(in->sim, rest) != DG_OK)
      return step_failed(in, ts);
    /* off the grid of dt from here on: the clock restarts at the end */
    in->t_base = t + h - in->start_time;
    in->k = 0;
    in->last_successful = t + h;
    if (!in->stopped && dg_driver_should_stop(in->drv))
      in->stopped = true;
  }
  *terminate = in->stopped;
  *last = in->start_time + sim_time(in);
  return FMU_OK;
}

/* ------------------------------------------------------------------------ */
/* FMU states                                                               */

#define STATE_MAGIC "DGFMUST"

typedef struct fmu_state {
  char magic[8];
  const fmu_model *model; /* the instance's (checked when set) */
  int nvars;
  fmu_mode mode;
  double start_time, stop_time;
  bool stop_defined, dirty, stopped, early_return_allowed;
  long k;
  double t_base, last_successful;
  double *val;
  fmu_interp *interp;
  /* the simulation's state: NULL before one was built */
  dg_graph *graph; /* retained */
  char *run_text;
  dg_snapshot *snap;
} fmu_state;

static void state_clear(fmu_state *s) {
  dg_snapshot_free(s->snap);
  if (s->graph)
    dg_graph_free(s->graph);
  free(s->run_text);
  s->snap = NULL;
  s->graph = NULL;
  s->run_text = NULL;
}

static void state_free(fmu_state *s) {
  if (!s)
    return;
  state_clear(s);
  free(s->val);
  free(s->interp);
  free(s);
}

static fmu_state *state_new(const fmu_model *m) {
  fmu_state *s = calloc(1, sizeof *s);
  if (!s)
    return NULL;
  memcpy(s->magic, STATE_MAGIC, sizeof s->magic);
  s->model = m;
  s->nvars = m->nvars;
  s->val = calloc((size_t)m->nvars + 1, sizeof *s->val);
  s->interp = calloc((size_t)m->nvars + 1, sizeof *s->interp);
  if (!s->val || !s->interp) {
    state_free(s);
    return NULL;
  }
  return s;
}

static fmu_state *state_of(fmu_instance *in, void *p, const char *what) {
  fmu_state *s = p;
  if (!s || memcmp(s->magic, STATE_MAGIC, sizeof s->magic) != 0 || s->model != in->m) {
    fmu_fail(in, "%s: not an FMU state of this instance", what);
    return NULL;
  }
  return s;
}

fmu_status fmu_get_state(fmu_instance *in, void **state) {
  if (!state)
    return fmu_fail(in, "getting the FMU state: no place for it given");
  fmu_state *s = *state ? state_of(in, *state, "getting the FMU state") : state_new(in->m);
  if (!s)
    return *state ? FMU_ERROR : fmu_log(in, FMU_ERROR, "out of memory");
  state_clear(s);
  if (in->sim && !in->dirty) {
    dg_error err = {0};
    s->snap = dg_sim_snapshot(in->sim, &err);
    s->run_text = strdup(in->run_text);
    if (!s->snap || !s->run_text) {
      if (!*state)
        state_free(s);
      else
        state_clear(s);
      return fmu_fail(in, "the FMU state cannot be taken: %s",
                      in->sim ? err.text : "out of memory");
    }
    dgp_graph_retain(in->graph);
    s->graph = in->graph;
  }
  s->mode = in->mode;
  s->start_time = in->start_time;
  s->stop_time = in->stop_time;
  s->stop_defined = in->stop_defined;
  s->dirty = in->dirty || !in->sim;
  s->stopped = in->stopped;
  s->early_return_allowed = in->early_return_allowed;
  s->k = in->k;
  s->t_base = in->t_base;
  s->last_successful = in->last_successful;
  memcpy(s->val, in->val, sizeof *s->val * (size_t)in->m->nvars);
  memcpy(s->interp, in->interp, sizeof *s->interp * (size_t)in->m->nvars);
  *state = s;
  return FMU_OK;
}

fmu_status fmu_set_state(fmu_instance *in, void *state) {
  fmu_state *s = state_of(in, state, "setting the FMU state");
  if (!s)
    return FMU_ERROR;
  if (s->snap && (s->graph != in->graph || !in->sim)) {
    /* a state of another run (before a reset, or other fixed parameters):
     * a simulation of its graph, as it was started */
    drop_sim(in);
    dgp_graph_retain(s->graph);
    in->graph = s->graph;
    in->run_text = strdup(s->run_text);
    dg_error err;
    if (!in->run_text ||
        new_run(in, in->graph, s->val, &in->sim, &in->scn, &in->drv, &err) != DG_OK) {
      drop_sim(in);
      return fmu_fail(in, "setting the FMU state: %s", in->run_text ? err.text : "out of memory");
    }
  }
  if (s->snap) {
    write_tunables(in, in->graph, s->val);
    dg_error err;
    if (dg_sim_restore(in->sim, s->snap, &err) != DG_OK)
      return fmu_fail(in, "setting the FMU state: %s", err.text);
  } else {
    drop_sim(in);
  }
  in->mode = s->mode;
  in->start_time = s->start_time;
  in->stop_time = s->stop_time;
  in->stop_defined = s->stop_defined;
  in->dirty = s->dirty;
  in->stopped = s->stopped;
  in->early_return_allowed = s->early_return_allowed;
  in->k = s->k;
  in->t_base = s->t_base;
  in->last_successful = s->last_successful;
  memcpy(in->val, s->val, sizeof *in->val * (size_t)in->m->nvars);
  memcpy(in->interp, s->interp, sizeof *in->interp * (size_t)in->m->nvars);
  if (in->sim)
    for (int k = 0; k < in->m->ninputs; k++)
      apply_input(in, in->m->inputs[k]);
  return FMU_OK;
}

fmu_status fmu_free_state(fmu_instance *in, void **state) {
  if (!state || !*state)
    return FMU_OK;
  fmu_state *s = state_of(in, *state, "freeing the FMU state");
  if (!s)
    return FMU_ERROR;
  state_free(s);
  *state = NULL;
  return FMU_OK;
}

/* ---- serialized states ----------------------------------------------------
 * header, the scalars, the values and interpolations, the graph's text,
 * then the simulation's bytes (dgp_sim_state_write) and the mask of its
 * blocks' data, when there is a simulation.
 *
 * The mask marks the bytes of the blocks' data that were still what the
 * blocks' init left them (for the state's parameters): the reader takes
 * those from its own init instead. That is what makes a state portable to
 * another instance or process: an address a block's init stores (a
 * torque converter's tables, in its graph or in the binary's static data)
 * is the reader's own, and every other such byte is equal on both sides.
 * (A block that changed an address while running would not be portable;
 * no built-in block does.) */

#define SER_MAGIC "DGFMUS2"

typedef struct ser_header {
  char magic[8];
  char token[40];
  uint32_t nvars;
  uint32_t mode;
  uint8_t stop_defined, dirty, stopped, early_return_allowed;
  int64_t k;
  double start_time, stop_time, t_base, last_successful;
  uint64_t text_len; /* 0: no simulation */
  uint64_t sim_len;
  uint64_t mask_len;
  uint64_t mask_sum; /* FNV-1a of the mask (the simulation's bytes carry their own) */
} ser_header;

/* The blocks' data as init leaves it in a simulation of graph g with the
 * tunable parameters of `val` (g's own values are put back). */
static unsigned char *fresh_data_with(fmu_instance *in, dg_graph *g, const double *val,
                                      size_t *size, dg_error *err) {
  const fmu_model *m = in->m;
  double *keep = malloc(sizeof *keep * ((size_t)m->nparams + 1));
  if (!keep) {
    dgp_error_set(err, DG_ERR_NOMEM, "graph.json", "", "out of memory");
    return NULL;
  }
  for (int k = 0; k < m->nparams; k++) {
    const fmu_var *v = &m->vars[m->params[k]];
    double *at = v->tunable ? dgp_graph_param_number(g, v->key, NULL, NULL) : NULL;
    keep[k] = at ? *at : 0.0;
  }
  write_tunables(in, g, val);
  dg_sim *sim = dg_sim_new(g, err);
  unsigned char *d = sim ? malloc(dgp_sim_data_size(sim) + 1) : NULL;
  if (d) {
    *size = dgp_sim_data_size(sim);
    dgp_sim_data_copy(sim, d);
  } else if (sim) {
    dgp_error_set(err, DG_ERR_NOMEM, "graph.json", "", "out of memory");
  }
  dg_sim_free(sim);
  for (int k = 0; k < m->nparams; k++) {
    const fmu_var *v = &m->vars[m->params[k]];
    double *at = v->tunable ? dgp_graph_param_number(g, v->key, NULL, NULL) : NULL;
    if (at)
      *at = keep[k];
  }
  free(keep);
  return d;
}

/* A scratch simulation of the state's graph holding its snapshot, and the
 * mask of its blocks' data (see above). */
static int scratch_of(fmu_instance *in, const fmu_state *s, dg_sim **sim, dg_scenario **scn,
                      dg_driver **drv, unsigned char **mask, size_t *mask_len, dg_error *err) {
  *mask = NULL;
  int rc = new_run(in, s->graph, s->val, sim, scn, drv, err);
  if (rc == DG_OK)
    rc = dg_sim_restore(*sim, s->snap, err);
  unsigned char *fresh = rc == DG_OK ? fresh_data_with(in, s->graph, s->val, mask_len, err) : NULL;
  unsigned char *now = fresh ? malloc(*mask_len + 1) : NULL;
  if (rc == DG_OK && (!now || dgp_sim_data_size(*sim) != *mask_len)) {
    if (!err->code)
      dgp_error_set(err, DG_ERR_NOMEM, "graph.json", "", "out of memory");
    rc = err->code;
  }
  if (rc == DG_OK) {
    dgp_sim_data_copy(*sim, now);
    for (size_t i = 0; i < *mask_len; i++)
      now[i] = now[i] == fresh[i];
    *mask = now;
    now = NULL;
  }
  free(now);
  free(fresh);
  return rc;
}

static void scratch_free(dg_sim *sim, dg_scenario *scn, dg_driver *drv, unsigned char *mask) {
  dg_driver_free(drv);
  dg_sim_free(sim);
  dg_scenario_free(scn);
  free(mask);
}

fmu_status fmu_state_size(fmu_instance *in, void *state, size_t *size) {
  fmu_state *s = state_of(in, state, "sizing the FMU state");
  if (!s)
    return FMU_ERROR;
  if (!size)
    return fmu_fail(in, "sizing the FMU state: no place for the size");
  size_t n = sizeof(ser_header) + (sizeof(double) + sizeof(fmu_interp)) * (size_t)s->nvars;
  if (s->snap) {
    dg_sim *sim = NULL;
    dg_scenario *scn = NULL;
    dg_driver *drv = NULL;
    unsigned char *mask = NULL;
    size_t mask_len = 0;
    dg_error err = {0};
    if (scratch_of(in, s, &sim, &scn, &drv, &mask, &mask_len, &err) != DG_OK) {
      scratch_free(sim, scn, drv, mask);
      return fmu_fail(in, "sizing the FMU state: %s", err.text);
    }
    n += strlen(s->run_text) + dgp_sim_state_size(sim) + mask_len;
    scratch_free(sim, scn, drv, mask);
  }
  *size = n;
  return FMU_OK;
}

fmu_status fmu_serialize_state(fmu_instance *in, void *state, unsigned char *buf, size_t size) {
  fmu_state *s = state_of(in, state, "serializing the FMU state");
  if (!s)
    return FMU_ERROR;
  size_t need;
  if (fmu_state_size(in, state, &need) != FMU_OK)
    return FMU_ERROR;
  if (!buf || size < need)
    return fmu_fail(in, "serializing the FMU state: %zu bytes given, %zu needed", size, need);
  ser_header h;
  memset(&h, 0, sizeof h);
  memcpy(h.magic, SER_MAGIC, sizeof h.magic);
  memcpy(h.token, in->m->token, sizeof h.token);
  h.nvars = (uint32_t)s->nvars;
  h.mode = (uint32_t)s->mode;
  h.stop_defined = s->stop_defined;
  h.dirty = s->dirty;
  h.stopped = s->stopped;
  h.early_return_allowed = s->early_return_allowed;
  h.k = s->k;
  h.start_time = s->start_time;
  h.stop_time = s->stop_time;
  h.t_base = s->t_base;
  h.last_successful = s->last_successful;
  unsigned char *p = buf + sizeof h;
  memcpy(p, s->val, sizeof(double) * (size_t)s->nvars);
  p += sizeof(double) * (size_t)s->nvars;
  memcpy(p, s->interp, sizeof(fmu_interp) * (size_t)s->nvars);
  p += sizeof(fmu_interp) * (size_t)s->nvars;
  if (s->snap) {
    h.text_len = strlen(s->run_text);
    memcpy(p, s->run_text, h.text_len);
    p += h.text_len;
    dg_sim *sim = NULL;
    dg_scenario *scn = NULL;
    dg_driver *drv = NULL;
    unsigned char *mask = NULL;
    size_t mask_len = 0;
    dg_error err = {0};
    if (scratch_of(in, s, &sim, &scn, &drv, &mask, &mask_len, &err) != DG_OK) {
      scratch_free(sim, scn, drv, mask);
      return fmu_fail(in, "serializing the FMU state: %s", err.text);
    }
    h.sim_len = dgp_sim_state_write(sim, p, size - (size_t)(p - buf));
    p += h.sim_len;
    if (h.sim_len > 0 && (size_t)(p - buf) + mask_len <= size) {
      memcpy(p, mask, mask_len);
      h.mask_len = mask_len;
      h.mask_sum = dgp_fnv1a(mask, mask_len);
    }
    scratch_free(sim, scn, drv, mask);
    if (h.sim_len == 0 || h.mask_len != mask_len)
      return fmu_fail(in, "serializing the FMU state: the simulation's state does not fit");
  }
  memcpy(buf, &h, sizeof h);
  return FMU_OK;
}

fmu_status fmu_deserialize_state(fmu_instance *in, const unsigned char *buf, size_t size,
                                 void **state) {
  if (!state || !buf)
    return fmu_fail(in, "deserializing an FMU state: arguments missing");
  ser_header h;
  size_t fixed = sizeof h + (sizeof(double) + sizeof(fmu_interp)) * (size_t)in->m->nvars;
  if (size < sizeof h)
    return fmu_fail(in, "deserializing an FMU state: %zu bytes are too few", size);
  memcpy(&h, buf, sizeof h);
  bool ok = memcmp(h.magic, SER_MAGIC, sizeof h.magic) == 0 &&
            memcmp(h.token, in->m->token, sizeof h.token) == 0 &&
            h.nvars == (uint32_t)in->m->nvars && h.mode <= MODE_ERROR && size >= fixed &&
            h.text_len <= size - fixed && h.sim_len <= size - fixed - h.text_len &&
            h.mask_len == size - fixed - h.text_len - h.sim_len &&
            (h.text_len == 0) == (h.sim_len == 0) &&
            dgp_fnv1a(buf + size - h.mask_len, (size_t)h.mask_len) == h.mask_sum;
  if (!ok)
    return fmu_fail(in, "deserializing an FMU state: the bytes are not a serialized state of "
                        "this FMU");
  fmu_state *s = state_new(in->m);
  if (!s)
    return fmu_log(in, FMU_ERROR, "out of memory");
  s->mode = (fmu_mode)h.mode;
  s->stop_defined = h.stop_defined;
  s->dirty = h.dirty;
  s->stopped = h.stopped;
  s->early_return_allowed = h.early_return_allowed;
  s->k = (long)h.k;
  s->start_time = h.start_time;
  s->stop_time = h.stop_time;
  s->t_base = h.t_base;
  s->last_successful = h.last_successful;
  const unsigned char *p = buf + sizeof h;
  memcpy(s->val, p, sizeof(double) * (size_t)s->nvars);
  p += sizeof(double) * (size_t)s->nvars;
  memcpy(s->interp, p, sizeof(fmu_interp) * (size_t)s->nvars);
  p += sizeof(fmu_interp) * (size_t)s->nvars;
  if (h.text_len == 0) {
    *state = s;
    return FMU_OK;
  }
  s->run_text = malloc((size_t)h.text_len + 1);
  if (!s->run_text) {
    state_free(s);
    return fmu_log(in, FMU_ERROR, "out of memory");
  }
  memcpy(s->run_text, p, (size_t)h.text_len);
  s->run_text[h.text_len] = '\0';
  p += h.text_len;
  dg_error err = {0};
  /* the running graph when the text is the same, else a load of its own
   * with the state's tunable parameters */
  if (in->graph && strcmp(in->run_text, s->run_text) == 0) {
    dgp_graph_retain(in->graph);
    s->graph = in->graph;
  } else {
    s->graph = dg_graph_load_string(NULL, s->run_text, "graph.json", &err);
    if (s->graph)
      write_tunables(in, s->graph, s->val);
  }
  fmu_status st = s->graph ? FMU_OK : fmu_fail(in, "deserializing an FMU state: %s", err.text);
  dg_sim *sim = NULL;
  dg_scenario *scn = NULL;
  dg_driver *drv = NULL;
  unsigned char *fresh = NULL;
  size_t fresh_len = 0;
  if (st == FMU_OK && new_run(in, s->graph, s->val, &sim, &scn, &drv, &err) != DG_OK)
    st = fmu_fail(in, "deserializing an FMU state: %s", err.text);
  if (st == FMU_OK) {
    fresh = fresh_data_with(in, s->graph, s->val, &fresh_len, &err);
    if (!fresh)
      st = fmu_fail(in, "deserializing an FMU state: %s", err.text);
    else if (fresh_len != h.mask_len)
      st = fmu_fail(in, "deserializing an FMU state: the bytes are of another build");
  }
  if (st == FMU_OK &&
      dgp_sim_state_read(sim, p, (size_t)h.sim_len, p + h.sim_len, fresh, &err) != DG_OK)
    st = fmu_fail(in, "deserializing an FMU state: %s", err.text);
  if (st == FMU_OK) {
    s->snap = dg_sim_snapshot(sim, &err);
    if (!s->snap)
      st = fmu_fail(in, "deserializing an FMU state: %s", err.text);
  }
  free(fresh);
  scratch_free(sim, scn, drv, NULL);
  if (st != FMU_OK) {
    state_free(s);
    return st;
  }
  *state = s;
  return FMU_OK;
}
