/* Tests for lib/run/scenario.c: loading scenario files, their errors, and the
 * driver that plays them into a simulation. */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Inputs are computed from a handful of exactly representable breakpoints;
 * 1e-12 allows a few ulps of rounding in the interpolation formula. */
#define TOL 1e-12

/* A source driving a load through one shaft: one DOF, total inertia 1.1. */
static const char *const graph_json =
    "{\"drivegraph\":1,\"blocks\":{"
    "\"src\":{\"type\":\"torque_source\",\"inertia\":0.1,\"torque\":10},"
    "\"ld\":{\"type\":\"load\",\"inertia\":1.0}},"
    "\"connections\":[[\"src.out\",\"ld.in\"]]}";

static dg_scenario *load(const char *json) {
  dg_error err;
  dg_scenario *scn = dg_scenario_load_string(json, "scn.json", &err);
  if (!scn) {
    char msg[1024];
    dg_error_format(&err, msg, sizeof msg);
    ck_abort_msg("scenario did not load: %s", msg);
  }
  return scn;
}

static dg_error load_error(const char *json) {
  dg_error err;
  memset(&err, 0, sizeof err);
  dg_scenario *scn = dg_scenario_load_string(json, "scn.json", &err);
  if (scn) {
    dg_scenario_free(scn);
    ck_abort_msg("scenario loaded but should have failed: %s", json);
  }
  return err;
}

/* ------------------------------------------------------------------------ */
/* Loading                                                                  */

START_TEST(test_getters) {
  dg_scenario *scn = load("{\"duration\": 20, \"dt\": 0.001, \"output_interval\": 0.01}");
  ck_assert_double_eq(dg_scenario_duration(scn), 20.0);
  ck_assert_double_eq(dg_scenario_dt(scn), 0.001);
  ck_assert_double_eq(dg_scenario_output_interval(scn), 0.01);
  dg_scenario_free(scn);
}
END_TEST

START_TEST(test_absent_values_are_nan) {
  dg_scenario *scn = load("{}");
  ck_assert(isnan(dg_scenario_duration(scn)));
  ck_assert(isnan(dg_scenario_dt(scn)));
  ck_assert(isnan(dg_scenario_output_interval(scn)));
  dg_scenario_free(scn);
  dg_scenario_free(NULL);
}
END_TEST

START_TEST(test_full_example_loads) {
  /* The example of DESIGN.md, "Scenario file". */
  dg_scenario *scn = load(
      "{ \"duration\": 20, \"dt\": 0.001, \"output_interval\": 0.01,"
      "  \"inputs\": { \"throttle\": [[0, 0], [0.2, 1]], \"brake\": [[0, 0]],"
      "              \"clutch\": [[0, 0]], \"gear\": [[0, 1]] },"
      "  \"initial\": { \"engine.rpm\": 800, \"body.speed\": 0 },"
      "  \"stop\": { \"signal\": \"body.speed\", \"above\": 27.78 } }");
  ck_assert_double_eq(dg_scenario_duration(scn), 20.0);
  dg_scenario_free(scn);
}
END_TEST

START_TEST(test_load_file) {
  char path[] = "/tmp/dg_test_scenario_XXXXXX";
  int fd = mkstemp(path);
  ck_assert_int_ge(fd, 0);
  FILE *f = fdopen(fd, "w");
  ck_assert_ptr_nonnull(f);
  fputs("{ \"duration\": 3.5,\n  \"dt\": 0 }\n", f);
  fclose(f);
  /* Errors from a file name the file. */
  dg_error err;
  ck_assert_ptr_null(dg_scenario_load_file(path, &err));
  ck_assert_str_eq(err.file, path);
  ck_assert_str_eq(err.path, "/dt");
  ck_assert_str_eq(err.text, "must be > 0 (got 0)");

  f = fopen(path, "w");
  fputs("{ \"duration\": 3.5 }\n", f);
  fclose(f);
  dg_scenario *scn = dg_scenario_load_file(path, &err);
  unlink(path);
  ck_assert_ptr_nonnull(scn);
  ck_assert_int_eq(err.code, DG_OK);
  ck_assert_double_eq(dg_scenario_duration(scn), 3.5);
  dg_scenario_free(scn);
}
END_TEST

START_TEST(test_missing_file) {
  dg_error err;
  ck_assert_ptr_null(dg_scenario_load_file("/nonexistent/scn.json", &err));
  ck_assert_int_eq(err.code, DG_ERR_IO);
  ck_assert_str_eq(err.file, "/nonexistent/scn.json");
  ck_assert_str_eq(err.path, "");
  ck_assert_str_eq(err.text, "cannot read file: no such file or directory");
  /* A NULL error is allowed. */
  ck_assert_ptr_null(dg_scenario_load_file("/nonexistent/scn.json", NULL));
}
END_TEST

START_TEST(test_syntax_error) {
  dg_error err = load_error("{\n  \"dt\": ,\n}\n");
  ck_assert_int_eq(err.code, DG_ERR_SYNTAX);
  ck_assert_str_eq(err.file, "scn.json");
  ck_assert_int_eq(err.line, 2);
  ck_assert_int_gt(err.column, 0);
}
END_TEST

START_TEST(test_default_name) {
  dg_error err;
  ck_assert_ptr_null(dg_scenario_load_string("{\"dt\": -1}", NULL, &err));
  ck_assert_str_eq(err.file, "<string>");
  ck_assert_str_eq(err.text, "must be > 0 (got -1)");
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Load errors: one row per error path (the first error wins)               */

typedef struct bad_case {
  const char *json;
  int code;
  const char *path;
  const char *text;
} bad_case;

static const bad_case bad_cases[] = {
    {"[]", DG_ERR_SCHEMA, "", "expected an object, got array"},
    {"{\"dt\": 0}", DG_ERR_RANGE, "/dt", "must be > 0 (got 0)"},
    {"{\"duration\": -1}", DG_ERR_RANGE, "/duration", "must be > 0 (got -1)"},
    {"{\"output_interval\": \"x\"}", DG_ERR_SCHEMA, "/output_interval",
     "expected a number, got string"},
    {"{\"dt\": 0, \"duration\": 0}", DG_ERR_RANGE, "/dt", "must be > 0 (got 0)"},
    {"{\"dtt\": 0.1}", DG_ERR_UNKNOWN, "/dtt", "unknown key; did you mean \"dt\"?"},
    {"{\"zzzzzzzzzz\": 1}", DG_ERR_UNKNOWN, "/zzzzzzzzzz",
     "unknown key (expected duration, dt, output_interval, inputs, initial, stop)"},
    {"{\"inputs\": []}", DG_ERR_SCHEMA, "/inputs", "expected an object, got array"},
    {"{\"inputs\": {\"throttle\": {}}}", DG_ERR_SCHEMA, "/inputs/throttle",
     "expected an array of [time, value] breakpoints, got object"},
    {"{\"inputs\": {\"throttle\": []}}", DG_ERR_SCHEMA, "/inputs/throttle",
     "expected at least one [time, value] breakpoint"},
    {"{\"inputs\": {\"throttle\": [[0, 0], [0.2, 1], [0.1, 0.5]]}}", DG_ERR_RANGE,
     "/inputs/throttle/2/0", "breakpoint times must be non-decreasing (0.1 after 0.2)"},
    {"{\"inputs\": {\"throttle\": [[0, 0], [1]]}}", DG_ERR_SCHEMA, "/inputs/throttle/1",
     "expected a [time, value] pair, got an array of 1"},
    {"{\"inputs\": {\"throttle\": [[0, 0, 1]]}}", DG_ERR_SCHEMA, "/inputs/throttle/0",
     "expected a [time, value] pair, got an array of 3"},
    {"{\"inputs\": {\"throttle\": [\"x\"]}}", DG_ERR_SCHEMA, "/inputs/throttle/0",
     "expected a [time, value] pair, got string"},
    {"{\"inputs\": {\"throttle\": [[0, \"a\"]]}}", DG_ERR_SCHEMA, "/inputs/throttle/0/1",
     "expected a number, got string"},
    {"{\"inputs\": {\"throttle\": [[\"a\", 0]]}}", DG_ERR_SCHEMA, "/inputs/throttle/0/0",
     "expected a number, got string"},
    {"{\"inputs\": {\"throttle\": [[-1, 0]]}}", DG_ERR_RANGE, "/inputs/throttle/0/0",
     "must be >= 0 (got -1)"},
    {"{\"inputs\": {\"gear\": [[0, 1], [2, 1.5]]}}", DG_ERR_RANGE, "/inputs/gear/1/1",
     "must be an integer (got 1.5)"},
    /* JSON pointer escaping of names with "/" and "~". */
    {"{\"inputs\": {\"a/b~c\": {}}}", DG_ERR_SCHEMA, "/inputs/a~1b~0c",
     "expected an array of [time, value] breakpoints, got object"},
    {"{\"initial\": []}", DG_ERR_SCHEMA, "/initial", "expected an object, got array"},
    {"{\"initial\": {\"engine.rpm\": \"x\"}}", DG_ERR_SCHEMA, "/initial/engine.rpm",
     "expected a number, got string"},
    {"{\"stop\": \"x\"}", DG_ERR_SCHEMA, "/stop", "expected an object, got string"},
    {"{\"stop\": {\"signal\": \"body.speed\"}}", DG_ERR_SCHEMA, "/stop",
     "expected exactly one of \"above\" or \"below\""},
    {"{\"stop\": {\"signal\": \"body.speed\", \"above\": 1, \"below\": 0}}", DG_ERR_SCHEMA,
     "/stop", "expected exactly one of \"above\" or \"below\""},
    {"{\"stop\": {\"above\": 1}}", DG_ERR_SCHEMA, "/stop", "missing required key \"signal\""},
    {"{\"stop\": {\"signal\": [], \"above\": 1}}", DG_ERR_SCHEMA, "/stop/signal",
     "expected a string, got array"},
    {"{\"stop\": {\"signal\": \"body.speed\", \"abov\": 1}}", DG_ERR_UNKNOWN, "/stop/abov",
     "unknown key; did you mean \"above\"?"},
    {"{\"stop\": {\"signal\": \"body.speed\", \"below\": \"x\"}}", DG_ERR_SCHEMA, "/stop/below",
     "expected a number, got string"},
};

START_TEST(test_bad) {
  const bad_case *c = &bad_cases[_i];
  dg_error err = load_error(c->json);
  ck_assert_msg(err.code == c->code, "%s: code %s, expected %s", c->json, dg_code_name(err.code),
                dg_code_name(c->code));
  ck_assert_str_eq(err.file, "scn.json");
  ck_assert_str_eq(err.path, c->path);
  ck_assert_str_eq(err.text, c->text);
  ck_assert_int_eq(err.line, 0);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Driver                                                                   */

static dg_graph *graph;
static dg_sim *sim;

static void sim_setup(void) {
  graph = dg_test_graph(graph_json);
  sim = dg_test_sim(graph);
}

static void sim_teardown(void) {
  dg_sim_free(sim);
  dg_graph_free(graph);
}

static dg_driver *driver(const dg_scenario *scn) {
  dg_error err;
  dg_driver *drv = dg_driver_new(scn, sim, &err);
  if (!drv) {
    char msg[1024];
    dg_error_format(&err, msg, sizeof msg);
    ck_abort_msg("driver not created: %s", msg);
  }
  return drv;
}

static dg_error driver_error(const char *json) {
  dg_scenario *scn = load(json);
  dg_error err;
  memset(&err, 0, sizeof err);
  dg_driver *drv = dg_driver_new(scn, sim, &err);
  ck_assert_msg(drv == NULL, "driver created but should have failed: %s", json);
  dg_scenario_free(scn);
  return err;
}

static double input_at(dg_driver *drv, int input, double t) {
  dg_driver_apply(drv, t);
  return dg_sim_get_input(sim, input);
}

/* Throttle: held at 0.2 until 0.5 s, ramps to 0.6 at 1.5 s, holds, falls to
 * 0 at 3 s and stays there. */
static const char *const ramp_json =
    "{\"inputs\": {\"throttle\": [[0.5, 0.2], [1.5, 0.6], [2.5, 0.6], [3.0, 0.0]]}}";

typedef struct sample {
  double t, v;
} sample;

/* Hand values: slope 0.4/s on [0.5, 1.5], -1.2/s on [2.5, 3]. */
static const sample ramp_samples[] = {
    {0.0, 0.2},  {0.25, 0.2}, {0.5, 0.2}, {1.0, 0.4}, {1.25, 0.5}, {1.5, 0.6}, {2.0, 0.6},
    {2.5, 0.6},  {2.75, 0.3}, {3.0, 0.0}, {10.0, 0.0},
};
enum { NUM_RAMP = sizeof ramp_samples / sizeof ramp_samples[0] };

START_TEST(test_interpolation_forward) {
  dg_scenario *scn = load(ramp_json);
  dg_driver *drv = driver(scn);
  for (int i = 0; i < NUM_RAMP; i++)
    ck_assert_double_eq_tol(input_at(drv, DG_INPUT_THROTTLE, ramp_samples[i].t),
                            ramp_samples[i].v, TOL);
  dg_driver_free(drv);
  dg_scenario_free(scn);
}
END_TEST

START_TEST(test_interpolation_backward) {
  /* The cursor must walk back when time does. */
  dg_scenario *scn = load(ramp_json);
  dg_driver *drv = driver(scn);
  for (int i = NUM_RAMP - 1; i >= 0; i--)
    ck_assert_double_eq_tol(input_at(drv, DG_INPUT_THROTTLE, ramp_samples[i].t),
                            ramp_samples[i].v, TOL);
  dg_driver_free(drv);
  dg_scenario_free(scn);
}
END_TEST

/* Reference: linear search for the last breakpoint with t_k <= t. */
static double reference(const sample *bp, int n, double t) {
  int k = -1;
  for (int i = 0; i < n; i++)
    if (bp[i].t <= t)
      k = i;
  if (k < 0)
    return bp[0].v;
  if (k == n - 1)
    return bp[k].v;
  return bp[k].v + (bp[k + 1].v - bp[k].v) * ((t - bp[k].t) / (bp[k + 1].t - bp[k].t));
}

START_TEST(test_interpolation_random_order) {
  static const sample bp[] = {{0.5, 0.2}, {1.5, 0.6}, {2.5, 0.6}, {3.0, 0.0}};
  dg_scenario *scn = load(ramp_json);
  dg_driver *drv = driver(scn);
  /* A fixed LCG so that the sequence, jumps both ways included, is the
   * same on every run. */
  unsigned long x = 12345;
  for (int i = 0; i < 2000; i++) {
    x = (x * 1103515245ul + 12345ul) & 0x7ffffffful;
    double t = 4.0 * (double)x / 2147483648.0 - 0.5;
    ck_assert_double_eq_tol(input_at(drv, DG_INPUT_THROTTLE, t), reference(bp, 4, t), TOL);
  }
  dg_driver_free(drv);
  dg_scenario_free(scn);
}
END_TEST

START_TEST(test_applied_at_creation) {
  dg_scenario *scn = load(ramp_json);
  dg_driver *drv = driver(scn);
  ck_assert_double_eq_tol(dg_sim_get_input(sim, DG_INPUT_THROTTLE), 0.2, TOL);
  dg_driver_free(drv);
  dg_scenario_free(scn);
}
END_TEST

START_TEST(test_equal_times_step) {
  /* Two breakpoints at 1 s: a step, the later value holding from 1 s on. */
  dg_scenario *scn = load("{\"inputs\": {\"brake\": [[0, 0], [1, 0], [1, 1], [2, 0.5]]}}");
  dg_driver *drv = driver(scn);
  ck_assert_double_eq_tol(input_at(drv, DG_INPUT_BRAKE, 0.999), 0.0, TOL);
  ck_assert_double_eq_tol(input_at(drv, DG_INPUT_BRAKE, 1.0), 1.0, TOL);
  ck_assert_double_eq_tol(input_at(drv, DG_INPUT_BRAKE, 1.5), 0.75, TOL);
  ck_assert_double_eq_tol(input_at(drv, DG_INPUT_BRAKE, 0.5), 0.0, TOL);
  ck_assert_double_eq_tol(input_at(drv, DG_INPUT_BRAKE, 3.0), 0.5, TOL);
  dg_driver_free(drv);
  dg_scenario_free(scn);
}
END_TEST

START_TEST(test_gear_steps) {
  dg_scenario *scn = load("{\"inputs\": {\"gear\": [[1, 1], [2, 2], [4, 3], [5, -1]]}}");
  dg_driver *drv = driver(scn);
  static const sample gear[] = {{0.0, 1}, {1.0, 1}, {1.999, 1}, {2.0, 2}, {3.9, 2},
                                {4.0, 3}, {4.5, 3}, {5.0, -1}, {9.0, -1}, {3.0, 2}};
  for (size_t i = 0; i < sizeof gear / sizeof gear[0]; i++)
    ck_assert_double_eq(input_at(drv, DG_INPUT_GEAR, gear[i].t), gear[i].v);
  dg_driver_free(drv);
  dg_scenario_free(scn);
}
END_TEST

START_TEST(test_single_breakpoint_holds) {
  dg_scenario *scn = load("{\"inputs\": {\"clutch\": [[2, 0.7]]}}");
  dg_driver *drv = driver(scn);
  ck_assert_double_eq_tol(input_at(drv, DG_INPUT_CLUTCH, 0.0), 0.7, TOL);
  ck_assert_double_eq_tol(input_at(drv, DG_INPUT_CLUTCH, 2.0), 0.7, TOL);
  ck_assert_double_eq_tol(input_at(drv, DG_INPUT_CLUTCH, 50.0), 0.7, TOL);
  dg_driver_free(drv);
  dg_scenario_free(scn);
}
END_TEST

START_TEST(test_unscheduled_inputs_untouched) {
  dg_sim_set_input(sim, DG_INPUT_BRAKE, 0.25);
  dg_scenario *scn = load(ramp_json);
  dg_driver *drv = driver(scn);
  dg_driver_apply(drv, 1.0);
  ck_assert_double_eq(dg_sim_get_input(sim, DG_INPUT_BRAKE), 0.25);
  dg_driver_free(drv);
  dg_scenario_free(scn);
  dg_driver_free(NULL);
}
END_TEST

START_TEST(test_initial_speed) {
  /* One rigid shaft: setting the source's speed sets the load's too. */
  dg_scenario *scn = load("{\"initial\": {\"src.omega\": 5}}");
  dg_driver *drv = driver(scn);
  ck_assert_double_eq_tol(dg_test_signal(sim, "ld.omega"), 5.0, 1e-9);
  ck_assert_double_eq_tol(dg_test_signal(sim, "ld.rpm"), 5.0 * DG_RPM_PER_RAD_S, 1e-9);
  dg_driver_free(drv);
  dg_scenario_free(scn);
}
END_TEST

START_TEST(test_stop_condition) {
  dg_scenario *above = load("{\"initial\": {\"src.omega\": 5},"
                            " \"stop\": {\"signal\": \"ld.omega\", \"above\": 4}}");
  dg_scenario *below = load("{\"initial\": {\"src.omega\": 5},"
                            " \"stop\": {\"signal\": \"ld.omega\", \"below\": 4}}");
  dg_scenario *none = load("{\"initial\": {\"src.omega\": 5}}");
  dg_driver *a = driver(above);
  dg_driver *b = driver(below);
  dg_driver *n = driver(none);
  ck_assert(dg_driver_should_stop(a));
  ck_assert(!dg_driver_should_stop(b));
  ck_assert(!dg_driver_should_stop(n));
  dg_driver_free(a);
  dg_driver_free(b);
  dg_driver_free(n);
  dg_scenario_free(above);
  dg_scenario_free(below);
  dg_scenario_free(none);
}
END_TEST

START_TEST(test_stop_while_running) {
  /* The source accelerates the shaft from rest, so the condition turns true
   * after some steps and not at the start. */
  dg_scenario *scn = load("{\"stop\": {\"signal\": \"ld.omega\", \"above\": 1}}");
  dg_driver *drv = driver(scn);
  ck_assert(!dg_driver_should_stop(drv));
  int steps = 0;
  while (!dg_driver_should_stop(drv) && steps < 100000) {
    dg_driver_apply(drv, dg_sim_time(sim));
    ck_assert_int_eq(dg_sim_step(sim, 0.001), DG_OK);
    steps++;
  }
  ck_assert(dg_driver_should_stop(drv));
  ck_assert_int_gt(steps, 1);
  ck_assert_int_lt(steps, 100000);
  dg_driver_free(drv);
  dg_scenario_free(scn);
}
END_TEST

START_TEST(test_unknown_input_close) {
  dg_error err = driver_error("{\"inputs\": {\"throtle\": [[0, 1]]}}");
  ck_assert_int_eq(err.code, DG_ERR_UNKNOWN);
  ck_assert_str_eq(err.file, "scn.json");
  ck_assert_str_eq(err.path, "/inputs/throtle");
  ck_assert_str_eq(err.text, "unknown input; did you mean \"throttle\"?");
}
END_TEST

START_TEST(test_unknown_input_far) {
  dg_error err = driver_error("{\"inputs\": {\"zzzzzzzzzzzz\": [[0, 1]]}}");
  ck_assert_int_eq(err.code, DG_ERR_UNKNOWN);
  ck_assert_str_eq(err.path, "/inputs/zzzzzzzzzzzz");
  /* The standard inputs come first; blocks may add custom ones after them. */
  const char *prefix = "unknown input; known inputs: throttle, brake, clutch, gear";
  ck_assert_msg(strncmp(err.text, prefix, strlen(prefix)) == 0, "got \"%s\"", err.text);
}
END_TEST

START_TEST(test_unknown_initial_signal) {
  dg_error err = driver_error("{\"initial\": {\"src.omega\": 1, \"ld.rmp\": 600}}");
  ck_assert_int_eq(err.code, DG_ERR_UNKNOWN);
  ck_assert_str_eq(err.file, "scn.json");
  ck_assert_str_eq(err.path, "/initial/ld.rmp");
  ck_assert_str_eq(err.text, "unknown signal; did you mean \"ld.rpm\"?");
  /* Nothing was set: the names are all resolved first. */
  ck_assert_double_eq(dg_test_signal(sim, "ld.omega"), 0.0);
}
END_TEST

START_TEST(test_unknown_stop_signal) {
  dg_error err = driver_error("{\"stop\": {\"signal\": \"ld.omegaa\", \"above\": 1}}");
  ck_assert_int_eq(err.code, DG_ERR_UNKNOWN);
  ck_assert_str_eq(err.path, "/stop/signal");
  ck_assert_str_eq(err.text, "unknown signal; did you mean \"ld.omega\"?");
}
END_TEST

START_TEST(test_contradictory_initial) {
  /* src and ld share a shaft, so they cannot turn at 10 and 20 rad/s. */
  dg_error err = driver_error("{\"initial\": {\"src.omega\": 10, \"ld.omega\": 20}}");
  ck_assert_int_ne(err.code, DG_OK);
  ck_assert_str_eq(err.file, "scn.json");
  ck_assert_str_eq(err.path, "/initial");
  ck_assert_str_ne(err.text, "");
}
END_TEST

/* Every problem of a scenario is reported in one pass, each at its place;
 * load refuses with the first of them. */
typedef struct problems {
  int n;
  char paths[8][DG_ERROR_PATH_LEN];
} problems;
static void keep_problem(const dg_error *e, void *user) {
  problems *p = user;
  if (p->n < 8)
    snprintf(p->paths[p->n], sizeof p->paths[0], "%s", e->path);
  p->n++;
}

START_TEST(test_every_problem_at_once) {
  const char *text = "{\"duration\":-1,\"dt\":\"x\",\"inputs\":{\"throttle\":[[0,\"a\"]],"
                     "\"brake\":3},\"bogus\":1}";
  problems p = {0};
  ck_assert_int_eq(dg_scenario_validate_string(text, "s.json", keep_problem, &p), 5);
  ck_assert_int_eq(p.n, 5);
  const char *want[] = {"/duration", "/dt", "/inputs/throttle/0/1", "/inputs/brake", "/bogus"};
  for (int i = 0; i < 5; i++) {
    bool found = false;
    for (int k = 0; k < p.n && !found; k++)
      found = strcmp(p.paths[k], want[i]) == 0;
    ck_assert_msg(found, "no problem reported at %s", want[i]);
  }
  dg_error err;
  ck_assert_ptr_null(dg_scenario_load_string(text, "s.json", &err));
  ck_assert_str_eq(err.path, p.paths[0]);
  ck_assert_int_eq(dg_scenario_validate_string("{\"duration\":1}", "ok.json", keep_problem, &p), 0);
}
END_TEST

static Suite *scenario_suite(void) {
  Suite *s = suite_create("scenario");

  TCase *tc = tcase_create("load");
  tcase_add_test(tc, test_getters);
  tcase_add_test(tc, test_absent_values_are_nan);
  tcase_add_test(tc, test_full_example_loads);
  tcase_add_test(tc, test_load_file);
  tcase_add_test(tc, test_missing_file);
  tcase_add_test(tc, test_syntax_error);
  tcase_add_test(tc, test_default_name);
  suite_add_tcase(s, tc);

  tc = tcase_create("errors");
  tcase_add_loop_test(tc, test_bad, 0, (int)(sizeof bad_cases / sizeof bad_cases[0]));
  suite_add_tcase(s, tc);

  tc = tcase_create("inputs");
  tcase_add_checked_fixture(tc, sim_setup, sim_teardown);
  tcase_add_test(tc, test_interpolation_forward);
  tcase_add_test(tc, test_interpolation_backward);
  tcase_add_test(tc, test_interpolation_random_order);
  tcase_add_test(tc, test_applied_at_creation);
  tcase_add_test(tc, test_equal_times_step);
  tcase_add_test(tc, test_gear_steps);
  tcase_add_test(tc, test_single_breakpoint_holds);
  tcase_add_test(tc, test_unscheduled_inputs_untouched);
  suite_add_tcase(s, tc);

  tc = tcase_create("driver");
  tcase_add_checked_fixture(tc, sim_setup, sim_teardown);
  tcase_add_test(tc, test_initial_speed);
  tcase_add_test(tc, test_stop_condition);
  tcase_add_test(tc, test_stop_while_running);
  tcase_add_test(tc, test_every_problem_at_once);
  tcase_add_test(tc, test_unknown_input_close);
  tcase_add_test(tc, test_unknown_input_far);
  tcase_add_test(tc, test_unknown_initial_signal);
  tcase_add_test(tc, test_unknown_stop_signal);
  tcase_add_test(tc, test_contradictory_initial);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return dg_test_run(scenario_suite()); }
