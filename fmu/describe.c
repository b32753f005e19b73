/* What `drivegraph fmu` asks the FMU runtime for: every file of the FMU
 * but the binary, made by the code that will run it.
 *
 *   char *drivegraph_fmu_describe(const char *request);
 *   void drivegraph_fmu_free(char *text);
 *
 * Both are exported by libdgfmu3.so and libdgfmu2.so beside the FMI
 * functions (the standard allows further symbols). The request and the
 * answer are JSON, so that the tool and the runtime share no struct:
 *
 *   request: { "abi": 1, "fmi": 3, "graph": TEXT, "graph_name": PATH,
 *              "scenario": TEXT or null, "scenario_name": PATH,
 *              "dt": s or null, "outputs": [NAME...] or null (every signal),
 *              "model_name": TEXT or null, "model_identifier": ID,
 *              "force": false }
 *   answer:  { "ok": true or false, "version": "0.1.0",
 *              "messages": [{ "level": "error" or "warning", "text": ... }],
 *              "files": { "modelDescription.xml": TEXT, "resources/fmu.json": TEXT,
 *                         "resources/graph.json": TEXT, ["resources/scenario.json": TEXT] },
 *              "binary": "binaries/x86_64-linux/ID.so",
 *              "inputs": [...], "outputs": [...], "parameters": N, "tunable": N }
 *
 * The graph and the scenario are checked as `drivegraph validate` checks
 * them (every problem, with the files' names), the scenario against the
 * graph with the FMU's inputs given, and the step size against the start
 * mode as `drivegraph sim` checks it (an error unless "force"). */
#define DG_FMU_BUILD
#include "model.h"

#include "internal.h"

#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DESCRIBE_ABI 1

#define EXPORT __attribute__((visibility("default")))

EXPORT char *drivegraph_fmu_describe(const char *request);
EXPORT void drivegraph_fmu_free(char *text);

typedef struct answer {
  json_t *root;
  json_t *messages;
  bool failed;
} answer;

static void say(answer *a, bool error, const char *fmt, ...) DG_PRINTF(3, 4);
static void say(answer *a, bool error, const char *fmt, ...) {
  char buf[1200];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  json_array_append_new(a->messages,
                        json_pack("{s:s, s:s}", "level", error ? "error" : "warning", "text", buf));
  if (error)
    a->failed = true;
}

/* A problem, or a warning (a dg_error with code DG_OK, its text starting
 * "warning: ", as validation passes a graph's warnings on). */
static void say_error(const dg_error *err, void *user) {
  char msg[1000];
  dg_error_format(err, msg, sizeof msg);
  if (err->code == DG_OK) {
    const char *w = strstr(msg, "warning: ");
    if (w) /* "file: /path: warning: text" as "warning: file: /path: text" */
      memmove(msg + (w - msg) + 0, w + 9, strlen(w + 9) + 1);
  }
  say(user, err->code != DG_OK, "%s", msg);
}

static void say_text(void *user, const char *text) { say(user, true, "%s", text); }

static const char *str(json_t *req, const char *key) {
  return json_string_value(json_object_get(req, key));
}

/* The model's configuration (resources/fmu.json). */
static char *config_text(int fmi, const char *name, const char *ident, const char *desc, double dt,
                         json_t *outputs, bool scenario) {
  json_t *c = json_pack("{s:i, s:i, s:s, s:s, s:f, s:O, s:b}", "drivegraph_fmu", FMU_LAYOUT, "fmi",
                        fmi, "model_name", name, "model_identifier", ident, "dt", dt, "outputs",
                        outputs, "scenario", scenario);
  if (c && desc && *desc)
    json_object_set_new(c, "description", json_string(desc));
  char *text = c ? json_dumps(c, JSON_PRESERVE_ORDER | JSON_INDENT(2) | JSON_REAL_PRECISION(17))
                 : NULL;
  json_decref(c);
  if (!text)
    return NULL;
  size_t n = strlen(text);
  char *out = realloc(text, n + 2); /* a final newline */
  if (!out) {
    free(text);
    return NULL;
  }
  out[n] = '\n';
  out[n + 1] = '\0';
  return out;
}

/* The scenario with the model's inputs at their start values. */
static char *augmented(const fmu_model *m) {
  const char **names = calloc((size_t)m->ninputs + 1, sizeof *names);
  double *values = calloc((size_t)m->ninputs + 1, sizeof *values);
  bool *integer = calloc((size_t)m->ninputs + 1, sizeof *integer);
  char *text = NULL;
  if (names && values && integer) {
    for (int k = 0; k < m->ninputs; k++) {
      names[k] = m->vars[m->inputs[k]].name;
      values[k] = m->vars[m->inputs[k]].start;
      integer[k] = m->vars[m->inputs[k]].integer;
    }
    text = fmu_scenario_with_inputs(m->scenario_json, m->ninputs, names, values, integer);
  }
  free(names);
  free(values);
  free(integer);
  return text;
}

/* The scenario against the graph, and the step size in the start mode. */
static void check_start(answer *a, const fmu_model *m, const char *graph_name,
                        const char *scenario_name, bool force) {
  char *text = augmented(m);
  dg_error err;
  dg_graph *g = dg_graph_load_string(NULL, m->graph_json, graph_name, &err);
  dg_scenario *scn = text ? dg_scenario_load_string(text, scenario_name, &err) : NULL;
  dg_sim *sim = g && scn ? dg_sim_new(g, &err) : NULL;
  if (!sim) {
    say(a, true, "%s", text ? err.text : "out of memory");
  } else if (dg_scenario_check(scn, sim, say_error, a) == 0) {
    dg_driver *drv = dg_driver_new(scn, sim, &err);
    if (!drv)
      say_error(&err, a);
    else if (dg_sim_check_stiffness(sim, m->dt, NULL, &err) == DG_ERR_NUMERIC) {
      char msg[1000];
      dg_error_format(&err, msg, sizeof msg);
      say(a, !force, "%s%s", msg,
          force ? "" : " (give --force to export it anyway, or a smaller --dt)");
    }
    dg_driver_free(drv);
  }
  dg_sim_free(sim);
  dg_scenario_free(scn);
  dg_graph_free(g);
  free(text);
}

/* Every signal of the graph (the default outputs). */
static json_t *all_signals(const char *graph_json) {
  dg_graph *g = dg_graph_load_string(NULL, graph_json, "graph.json", NULL);
  dg_sim *sim = g ? dg_sim_new(g, NULL) : NULL;
  json_t *list = sim ? json_array() : NULL;
  for (int i = 0; list && i < dg_sim_signal_count(sim); i++)
    json_array_append_new(list, json_string(dg_sim_signal_name(sim, i)));
  dg_sim_free(sim);
  dg_graph_free(g);
  return list;
}

static void describe(answer *a, json_t *req) {
  json_t *abi = json_object_get(req, "abi");
  if (!json_is_integer(abi) || json_integer_value(abi) != DESCRIBE_ABI) {
    say(a, true,
        "the FMU runtime speaks request version %d: the drivegraph tool and the runtime "
        "are from different builds",
        DESCRIBE_ABI);
    return;
  }
  int fmi = (int)json_integer_value(json_object_get(req, "fmi"));
  const char *graph = str(req, "graph"), *graph_name = str(req, "graph_name");
  const char *scenario = str(req, "scenario"), *scenario_name = str(req, "scenario_name");
  const char *ident = str(req, "model_identifier"), *name = str(req, "model_name");
  json_t *dtv = json_object_get(req, "dt");
  bool force = json_is_true(json_object_get(req, "force"));
  if ((fmi != 2 && fmi != 3) || !graph || !ident) {
    say(a, true, "the request lacks the FMI version, the graph or the model identifier");
    return;
  }
  graph_name = graph_name ? graph_name : "graph.json";
  scenario_name = scenario_name ? scenario_name : "scenario.json";
  /* every problem of the files, as `drivegraph validate` reports them */
  if (dg_graph_validate_string(NULL, graph, graph_name, say_error, a, NULL) > 0)
    return;
  dg_scenario *scn = NULL;
  if (scenario) {
    if (dg_scenario_validate_string(scenario, scenario_name, say_error, a) > 0)
      return;
    dg_error err;
    scn = dg_scenario_load_string(scenario, scenario_name, &err);
    if (!scn) {
      say_error(&err, a);
      return;
    }
  }
  double dt = json_is_number(dtv) ? json_number_value(dtv) : dg_scenario_dt(scn);
  if (isnan(dt))
    dt = 0.001;
  dg_scenario_free(scn);
  /* the model: its name from the graph's "name" when none is given */
  char graph_title[256] = "";
  json_t *gj = json_loads(graph, 0, NULL);
  snprintf(graph_title, sizeof graph_title, "%s",
           json_string_value(json_object_get(gj, "name"))
               ? json_string_value(json_object_get(gj, "name"))
               : "");
  char gdesc[1024];
  snprintf(gdesc, sizeof gdesc, "%s",
           json_string_value(json_object_get(gj, "description"))
               ? json_string_value(json_object_get(gj, "description"))
               : "");
  json_decref(gj);
  if (!name || !*name)
    name = graph_title[0] ? graph_title : ident;
  json_t *outputs = json_object_get(req, "outputs");
  json_t *all = NULL;
  if (!json_is_array(outputs)) {
    all = all_signals(graph);
    outputs = all;
  }
  char *config = outputs ? config_text(fmi, name, ident, gdesc, dt, outputs, scenario != NULL)
                         : NULL;
  json_decref(all);
  if (!config) {
    say(a, true, "out of memory");
    return;
  }
  fmu_model *m = fmu_model_load(config, graph, scenario, say_text, a);
  if (!m) {
    free(config);
    return;
  }
  check_start(a, m, graph_name, scenario_name, force);
  char *xml = a->failed ? NULL : fmu_model_description(m);
  if (!a->failed && !xml)
    say(a, true, "out of memory");
  if (xml) {
    json_t *files = json_object();
    json_object_set_new(files, "modelDescription.xml", json_string(xml));
    json_object_set_new(files, "resources/fmu.json", json_string(config));
    json_object_set_new(files, "resources/graph.json", json_string(graph));
    if (scenario)
      json_object_set_new(files, "resources/scenario.json", json_string(scenario));
    json_object_set_new(a->root, "files", files);
    char bin[300];
    snprintf(bin, sizeof bin, "binaries/%s/%s.so", fmi == 3 ? "x86_64-linux" : "linux64",
             m->model_identifier);
    json_object_set_new(a->root, "binary", json_string(bin));
    json_t *ins = json_array(), *outs = json_array();
    int tunable = 0;
    for (int k = 0; k < m->ninputs; k++)
      json_array_append_new(ins, json_string(m->vars[m->inputs[k]].name));
    for (int k = 0; k < m->noutputs; k++)
      json_array_append_new(outs, json_string(m->vars[m->outputs[k]].name));
    for (int k = 0; k < m->nparams; k++)
      tunable += m->vars[m->params[k]].tunable;
    json_object_set_new(a->root, "inputs", ins);
    json_object_set_new(a->root, "outputs", outs);
    json_object_set_new(a->root, "parameters", json_integer(m->nparams));
    json_object_set_new(a->root, "tunable", json_integer(tunable));
    json_object_set_new(a->root, "token", json_string(m->token));
  }
  free(xml);
  free(config);
  fmu_model_free(m);
}

char *drivegraph_fmu_describe(const char *request) {
  answer a = {json_object(), json_array(), false};
  if (!a.root || !a.messages) {
    json_decref(a.root);
    json_decref(a.messages);
    return NULL;
  }
  json_t *req = request ? json_loads(request, 0, NULL) : NULL;
  if (!json_is_object(req))
    say(&a, true, "the request is not a JSON object");
  else
    describe(&a, req);
  json_decref(req);
  json_object_set_new(a.root, "ok", json_boolean(!a.failed));
  json_object_set_new(a.root, "version", json_string(DG_VERSION_STRING));
  json_object_set_new(a.root, "messages", a.messages);
  char *text = json_dumps(a.root, JSON_COMPACT);
  json_decref(a.root);
  return text;
}

void drivegraph_fmu_free(char *text) { free(text); }
