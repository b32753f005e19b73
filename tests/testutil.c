#include "testutil.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

#ifndef DG_SOURCE_ROOT
#define DG_SOURCE_ROOT "."
#endif

void dg_test_path(char *buf, size_t size, const char *relative) {
  const char *root = getenv("DG_SOURCE_ROOT");
  snprintf(buf, size, "%s/%s", root ? root : DG_SOURCE_ROOT, relative);
}

char *dg_test_read_source(const char *relative) {
  char path[1024];
  dg_test_path(path, sizeof path, relative);
  FILE *f = fopen(path, "rb");
  ck_assert_msg(f != NULL, "cannot open %s", path);
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  rewind(f);
  char *buf = malloc((size_t)n + 1);
  ck_assert_ptr_nonnull(buf);
  ck_assert_int_eq(fread(buf, 1, (size_t)n, f), n);
  buf[n] = '\0';
  fclose(f);
  return buf;
}

void dg_test_first_line(char *buf, size_t size, const char *path) {
  FILE *f = fopen(path, "r");
  ck_assert_msg(f != NULL, "no %s", path);
  ck_assert(fgets(buf, (int)size, f) != NULL);
  fclose(f);
  buf[strcspn(buf, "\n")] = '\0';
}

dg_graph *dg_test_graph(const char *json) { return dg_test_graph_reg(NULL, json); }

dg_graph *dg_test_graph_file(const char *relative) {
  char path[1024];
  dg_test_path(path, sizeof path, relative);
  dg_error err;
  dg_graph *g = dg_graph_load_file(NULL, path, &err);
  ck_assert_msg(g != NULL, "%s: %s %s", path, err.path, err.text);
  return g;
}

int dg_test_dof_of(const dg_sim *sim, const char *port) {
  char buf[128];
  for (int j = 0; j < dg_sim_dof_count(sim); j++) {
    dg_sim_dof_describe(sim, j, buf, sizeof buf);
    if (strcmp(buf, port) == 0)
      return j;
  }
  ck_abort_msg("no DOF on %s", port);
  return -1;
}

/* vsnprintf that fails the test when the text does not fit. */
static void vformat(char *buf, size_t size, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));
static void vformat(char *buf, size_t size, const char *fmt, va_list ap) {
  int n = vsnprintf(buf, size, fmt, ap);
  ck_assert_int_lt(n, (int)size);
}

dg_graph *dg_test_graph_regf(const dg_registry *reg, const char *fmt, ...) {
  char json[8192];
  va_list ap;
  va_start(ap, fmt);
  vformat(json, sizeof json, fmt, ap);
  va_end(ap);
  return dg_test_graph_reg(reg, json);
}

dg_graph *dg_test_chain(const char *src, const char *type, const char *id, const char *params,
                        const char *load) {
  return dg_test_graphf("{\"drivegraph\":1,\"blocks\":{"
                        "\"src\":{\"type\":\"torque_source\",%s},"
                        "\"%s\":{\"type\":\"%s\"%s%s},"
                        "\"ld\":{\"type\":\"load\",%s}},"
                        "\"connections\":[[\"src.out\",\"%s.in\"],[\"%s.out\",\"ld.in\"]]}",
                        src, id, type, params[0] ? "," : "", params, load, id, id);
}

dg_graph *dg_test_graph_reg(const dg_registry *reg, const char *json) {
  dg_error err;
  dg_graph *g = dg_graph_load_string(reg, json, "test.json", &err);
  if (!g) {
    char msg[1024];
    dg_error_format(&err, msg, sizeof msg);
    ck_abort_msg("graph did not load: %s", msg);
  }
  return g;
}

dg_error dg_test_graph_error(const char *json) {
  dg_error err;
  dg_graph *g = dg_graph_load_string(NULL, json, "test.json", &err);
  if (g) {
    dg_graph_free(g);
    ck_abort_msg("graph loaded but should have failed");
  }
  return err;
}

void dg_test_graph_error_at(const char *path, const char *text, const char *fmt, ...) {
  char json[8192];
  va_list ap;
  va_start(ap, fmt);
  vformat(json, sizeof json, fmt, ap);
  va_end(ap);
  dg_error err = dg_test_graph_error(json);
  ck_assert_str_eq(err.path, path);
  ck_assert_str_eq(err.text, text);
}

void dg_test_count_diag(const dg_error *err, void *user) {
  (void)err;
  (*(int *)user)++;
}

int dg_test_block_index(const dg_graph *g, const char *id) {
  for (int i = 0; i < dg_graph_block_count(g); i++)
    if (strcmp(dg_graph_block_id(g, i), id) == 0)
      return i;
  ck_abort_msg("no block %s", id);
  return -1;
}

dg_sim *dg_test_sim(const dg_graph *g) {
  dg_error err;
  dg_sim *sim = dg_sim_new(g, &err);
  if (!sim) {
    char msg[1024];
    dg_error_format(&err, msg, sizeof msg);
    ck_abort_msg("simulation not created: %s", msg);
  }
  return sim;
}

double dg_test_signal(const dg_sim *sim, const char *name) {
  int id = dg_sim_signal_find(sim, name);
  ck_assert_msg(id >= 0, "unknown signal %s", name);
  return dg_sim_signal(sim, id);
}

void dg_test_check_balance(const dg_sim *sim, double rel) {
  dg_energy e;
  dg_sim_energy(sim, &e);
  ck_assert_msg(fabs(e.balance_error) <= rel * e.work_in, "balance error %g J of %g J in",
                e.balance_error, e.work_in);
}

void dg_test_set_initial(dg_sim *sim, int n, const char *const *names, const double *values) {
  int ids[8];
  ck_assert_int_le(n, 8);
  for (int i = 0; i < n; i++) {
    ids[i] = dg_sim_signal_find(sim, names[i]);
    ck_assert_msg(ids[i] >= 0, "no signal %s", names[i]);
  }
  dg_error err;
  int rc = dg_sim_set_initial(sim, n, ids, values, &err);
  ck_assert_msg(rc == DG_OK, "set_initial: %s", err.text);
}

void dg_test_set_initial1(dg_sim *sim, const char *name, double value) {
  dg_test_set_initial(sim, 1, &name, &value);
}

void dg_test_set_input(dg_sim *sim, const char *name, double value) {
  int id = dg_sim_input_find(sim, name);
  ck_assert_msg(id >= 0, "unknown input %s", name);
  dg_sim_set_input(sim, id, value);
}

void dg_test_step(dg_sim *sim, int n, double dt) {
  for (int i = 0; i < n; i++) {
    int rc = dg_sim_step(sim, dt);
    ck_assert_msg(rc == DG_OK, "step failed: %s", dg_sim_last_error(sim)->text);
  }
}

double *dg_test_record(dg_sim *sim, long steps, double dt) {
  int n = dg_sim_signal_count(sim);
  double *v = malloc(sizeof *v * (size_t)(n * steps + 1));
  ck_assert_ptr_nonnull(v);
  for (long k = 0; k < steps; k++) {
    int rc = dg_sim_step(sim, dt);
    ck_assert_msg(rc == DG_OK, "step %ld: %s", k, dg_sim_last_error(sim)->text);
    for (int i = 0; i < n; i++)
      v[k * n + i] = dg_sim_signal(sim, i);
  }
  return v;
}

void dg_test_same_records(const double *a, const double *b, const dg_sim *sim, long steps) {
  int n = dg_sim_signal_count(sim);
  for (long k = 0; k < steps; k++)
    for (int i = 0; i < n; i++)
      ck_assert_msg(memcmp(&a[k * n + i], &b[k * n + i], sizeof(double)) == 0,
                    "%s, step %ld: %s differs (%.17g vs %.17g)", dg_graph_file(dg_sim_graph(sim)), k,
                    dg_sim_signal_name(sim, i), a[k * n + i], b[k * n + i]);
}

json_t *dg_test_json_take(char *text) {
  json_error_t je;
  json_t *doc = json_loads(text, 0, &je);
  ck_assert_msg(doc != NULL, "the output is not JSON: %s", je.text);
  free(text);
  return doc;
}

json_t *dg_test_json_block(const json_t *doc, const char *id) {
  json_t *b = json_object_get(json_object_get(doc, "blocks"), id);
  ck_assert_msg(b != NULL, "no block %s", id);
  return b;
}

double dg_test_json_num(const json_t *obj, const char *key) {
  json_t *v = json_object_get(obj, key);
  ck_assert_msg(json_is_number(v), "%s is not a number", key);
  return json_number_value(v);
}

const char *dg_test_json_str(const json_t *obj, const char *key) {
  json_t *v = json_object_get(obj, key);
  ck_assert_msg(json_is_string(v), "%s is not a string", key);
  return json_string_value(v);
}

bool dg_test_json_connected(const json_t *doc, const char *from, const char *to) {
  size_t i;
  json_t *c;
  json_array_foreach(json_object_get(doc, "connections"), i, c) {
    if (strcmp(json_string_value(json_array_get(c, 0)), from) == 0 &&
        strcmp(json_string_value(json_array_get(c, 1)), to) == 0)
      return true;
  }
  return false;
}

int dg_test_run(Suite *suite) {
  SRunner *sr = srunner_create(suite);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

void dg_test_compare_init(const dg_sim *sim, dg_test_compare *c, int n) {
  for (int i = 0; i < n; i++) {
    c[i].id = dg_sim_signal_find(sim, c[i].signal);
    ck_assert_msg(c[i].id >= 0, "no signal %s", c[i].signal);
    c[i].worst = c[i].worst_t = 0.0;
  }
}

void dg_test_compare_value(dg_test_compare *c, double fw, double twin, double t) {
  double rel = fabs(fw - twin) / fmax(fmax(fabs(fw), fabs(twin)), c->floor);
  if (!(rel <= c->worst)) { /* a NaN is the worst */
    c->worst = rel;
    c->worst_t = t;
  }
}

void dg_test_compare_check(const dg_test_compare *c, int n, double dt, double tol) {
  for (int i = 0; i < n; i++) {
    printf("dt %g: %-16s worst relative difference %.2e at t = %g s\n", dt, c[i].signal,
           c[i].worst, c[i].worst_t);
    ck_assert_msg(c[i].worst <= tol, "%s differs by %.3g relative at t = %g s", c[i].signal,
                  c[i].worst, c[i].worst_t);
  }
}

dg_test_drive dg_test_start(const char *graph, const char *scenario) {
  dg_test_drive r = {0};
  char path[1024];
  dg_error err;
  r.g = dg_test_graph_file(graph);
  dg_test_path(path, sizeof path, scenario);
  r.scn = dg_scenario_load_file(path, &err);
  ck_assert_msg(r.scn, "%s: %s: %s", scenario, err.path, err.text);
  r.sim = dg_test_sim(r.g);
  r.drv = dg_driver_new(r.scn, r.sim, &err);
  ck_assert_msg(r.drv, "%s: %s: %s", scenario, err.path, err.text);
  return r;
}

void dg_test_finish(dg_test_drive *r) {
  dg_driver_free(r->drv);
  dg_sim_free(r->sim);
  dg_scenario_free(r->scn);
  dg_graph_free(r->g);
  *r = (dg_test_drive){0};
}
