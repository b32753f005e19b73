/* Batch runs: parameter overrides on graph JSON, the built-in launch input
 * pattern, and many independent simulations on several threads.
 *
 * Overrides edit the graph's JSON object before it is loaded, so a swept
 * value goes through exactly the validation of a value written in the file
 * (types, ranges, cross-checks, every reachable mode).
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
#include "internal.h"

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
  dg_error_set(err, code, name, path, "%s", text);
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
  dg_pointer_append(path, sizeof path, "/blocks", id);
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
    dg_pointer_append(path, sizeof path, path, tok);
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
                          dg_json_type_name(child), next);
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
  dg_error_clear(err);
  dg_diag d;
  dg_diag_init(&d, name, NULL, NULL);
  json_t *root = dg_json_parse(json, name, &d);
  if (!root) {
    dg_diag_to_error(&d, err);
    return NULL;
  }
  char *out = NULL;
  if (!json_is_object(root)) {
    dg_error_set(err, DG_ERR_SCHEMA, name, "", "expected a graph object, got %s",
                 dg_json_type_name(root));
    goto done;
  }
  for (int i = 0; i < n; i++)
    if (apply_one(root, name, &ov[i], err) != DG_OK)
      goto done;
  /* jansson keeps insertion order and prints reals with 17 digits */
  out = json_dumps(root, JSON_COMPACT);
  if (!out)
    dg_error_set(err, DG_ERR_NOMEM, name, "", "out of memory");
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
    dg_pointer_append(buf, size, buf, tok);
    k += len + (dot ? 1 : 0);
  }
}

/* Appends " (suffix)" to an error's text, keeping what fits. */
static void error_suffix(dg_error *err, const char *suffix) {
  size_t len = strlen(err->text);
  snprintf(err->text + len, sizeof err->text - len, " (%s)", suffix);
}

dg_graph *dg_graph_load_overrides(const dg_registry *reg, const char *json, const char *name,
                                  int n, const dg_override *ov, dg_error *err) {
  if (n <= 0)
    return dg_graph_load_string(reg, json, name, err);
  char *text = dg_override_apply(json, name, n, ov, err);
  if (!text)
    return NULL;
  dg_error local;
  dg_graph *g = dg_graph_load_string(reg, text, name, &local);
  free(text);
  if (g) {
    dg_error_clear(err);
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

/* One variant, start to end (see dg_batch_run). */
static void run_variant(const dg_batch_options *o, const dg_batch_variant *v, dg_batch_result *r,
                        double *finals) {
  memset(r, 0, sizeof *r);
  r->t_0_100 = r->top_speed = NAN;
  for (int k = 0; k < o->n_signals; k++)
    finals[k] = NAN;
  dg_error err;
  dg_graph *g = dg_graph_load_overrides(o->reg, o->graph_json, o->graph_name, v->n_overrides,
                                        v->overrides, &err);
  dg_sim *sim = NULL;
  dg_driver *drv = NULL;
  if (!g) {
    result_fail(r, &err);
    return;
  }
  sim = dg_sim_new(g, &err);
  if (!sim) {
    result_fail(r, &err);
    goto done;
  }
  const dg_scenario *scn = o->scenario;
  if (scn) {
    drv = dg_driver_new(scn, sim, &err);
    if (!drv) {
      result_fail(r, &err);
      goto done;
    }
  } else {
    dg_batch_launch_inputs(sim, 0.0);
  }
  double dt = pick(o->dt, dg_scenario_dt(scn), 0.001);
  double duration = pick(o->duration, dg_scenario_duration(scn), 10.0);
  long total = (long)ceil(duration / dt - 1e-9);
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
/* Threads                                                                  */

typedef struct batch_job {
  const dg_batch_options *opt;
  const dg_batch_variant *variants;
  dg_batch_result *results;
  double *finals; /* n × n_signals, or a scratch row when n_signals = 0 */
  int n, first, stride;
} batch_job;

static void *batch_thread(void *arg) {
  const batch_job *j = arg;
  int ns = j->opt->n_signals;
  for (int i = j->first; i < j->n; i += j->stride)
    run_variant(j->opt, &j->variants[i], &j->results[i], j->finals + (size_t)i * (size_t)ns);
  return NULL;
}

static int online_cpus(void) {
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 && n < 4096 ? (int)n : 1;
}

/* Checks the base graph and the signal names once, before any thread. */
static int batch_check(const dg_batch_options *opt, dg_error *err) {
  dg_graph *g = dg_graph_load_string(opt->reg, opt->graph_json, opt->graph_name, err);
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
  dg_graph_free(g);
  return rc;
}

int dg_batch_run(const dg_batch_options *opt, int n, const dg_batch_variant *variants,
                 dg_batch_result *results, double *final_values, dg_error *err) {
  dg_error_clear(err);
  if (!opt || !opt->graph_json || n < 0 || (n > 0 && (!variants || !results)) ||
      (opt->n_signals > 0 && (!opt->signals || (n > 0 && !final_values)))) {
    dg_error_set(err, DG_ERR_USAGE, "", "", "dg_batch_run: missing options, graph or output");
    return DG_ERR_USAGE;
  }
  int rc = batch_check(opt, err);
  if (rc != DG_OK || n == 0)
    return rc;
  int threads = opt->threads > 0 ? opt->threads : online_cpus();
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
    dg_error_set(err, DG_ERR_NOMEM, "", "", "out of memory");
    return DG_ERR_NOMEM;
  }
  for (int k = 0; k < threads; k++)
    jobs[k] = (batch_job){opt, variants, results, finals, n, k, threads};
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
  return DG_OK;
}
