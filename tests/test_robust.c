/* Hostile input that tests/data/invalid cannot hold (its harness reads at
 * most 64 KB as a C string): NUL bytes, megabyte files, a million levels of
 * nesting, thousands of problems, directories; the scenario loader's
 * answers to the same; and extreme driver inputs. Every case must end in a
 * well-formed error (or a clean success) quickly, without a crash — the
 * sanitizer and valgrind runs of this suite check the memory side. */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char tmp_path[256];

/* DG_SOAK_SHORT (set for the sanitizer and valgrind runs) makes the big
 * inputs ten times smaller: the shapes are the same, the cost is not. */
static size_t scaled(size_t n) {
  const char *s = getenv("DG_SOAK_SHORT");
  return s && s[0] ? n / 10 : n;
}

static const char *write_tmp(const char *data, size_t len) {
  snprintf(tmp_path, sizeof tmp_path, "/tmp/dg_robust_%ld.json", (long)getpid());
  FILE *f = fopen(tmp_path, "wb");
  ck_assert_ptr_nonnull(f);
  ck_assert_uint_eq(fwrite(data, 1, len, f), len);
  ck_assert_int_eq(fclose(f), 0);
  return tmp_path;
}


typedef struct counter {
  int n;
  dg_error first, last;
} counter;
static void count(const dg_error *err, void *user) {
  counter *c = user;
  if (c->n++ == 0)
    c->first = *err;
  c->last = *err;
}

/* ------------------------------------------------------------------------ */
/* Graph files                                                              */

START_TEST(test_nul_byte) {
  static const char text[] = "{\"drivegraph\": 1}\0{\"trailing\": 1}";
  const char *path = write_tmp(text, sizeof text - 1);
  dg_error err;
  ck_assert_ptr_null(dg_graph_load_file(NULL, path, &err));
  ck_assert_int_eq(err.code, DG_ERR_SYNTAX);
  ck_assert_str_eq(err.text, "file contains a NUL byte; expected JSON text");
  ck_assert_str_eq(err.file, path);
  counter c = {0};
  ck_assert_int_eq(dg_graph_validate_file(NULL, path, count, &c, NULL), 1);
  ck_assert_str_eq(c.first.text, "file contains a NUL byte; expected JSON text");
  /* a scenario file too: the text after the NUL is not silently dropped */
  ck_assert_ptr_null(dg_scenario_load_file(path, &err));
  ck_assert_int_eq(err.code, DG_ERR_SYNTAX);
  ck_assert_str_eq(err.text, "file contains a NUL byte; expected JSON text");
  remove(path);
}
END_TEST

START_TEST(test_directory_and_missing) {
  dg_error err;
  ck_assert_ptr_null(dg_graph_load_file(NULL, "/", &err));
  ck_assert_int_eq(err.code, DG_ERR_IO);
  ck_assert_ptr_null(dg_scenario_load_file("/", &err));
  ck_assert_int_eq(err.code, DG_ERR_IO);
  ck_assert_ptr_null(dg_graph_load_file(NULL, "/nonexistent/graph.json", &err));
  ck_assert_int_eq(err.code, DG_ERR_IO);
  ck_assert_ptr_null(dg_graph_load_file(NULL, NULL, &err));
  ck_assert_int_eq(err.code, DG_ERR_USAGE);
  ck_assert_ptr_null(dg_graph_load_string(NULL, NULL, NULL, &err));
  ck_assert_int_eq(err.code, DG_ERR_USAGE);
  ck_assert_ptr_null(dg_scenario_load_string(NULL, NULL, &err));
  ck_assert_int_eq(err.code, DG_ERR_USAGE);
  /* NULL error pointers are allowed everywhere */
  ck_assert_ptr_null(dg_graph_load_file(NULL, "/", NULL));
  ck_assert_ptr_null(dg_graph_load_string(NULL, "{", NULL, NULL));
  ck_assert_ptr_null(dg_scenario_load_string("[", NULL, NULL));
}
END_TEST

/* A 2.4 MB file: a torque curve of 200 000 points, with one out of order
 * (at 75 %) when `bad`. */
static char *huge_graph(bool bad) {
  size_t n = scaled(200000), cap = n * 24 + 1024, len = 0;
  char *buf = malloc(cap);
  ck_assert_ptr_nonnull(buf);
  len += (size_t)snprintf(buf + len, cap - len,
                          "{\"drivegraph\": 1, \"blocks\": {\"ld\": {\"type\": \"load\", "
                          "\"inertia\": 1}, \"src\": {\"type\": \"torque_source\", \"inertia\": 1, "
                          "\"torque_vs_time\": {\"time\": [");
  for (size_t i = 0; i < n; i++)
    len += (size_t)snprintf(buf + len, cap - len, "%s%zu", i ? "," : "",
                            bad && i == n / 4 * 3 ? (size_t)3 : i);
  len += (size_t)snprintf(buf + len, cap - len, "], \"torque\": [");
  for (size_t i = 0; i < n; i++)
    len += (size_t)snprintf(buf + len, cap - len, "%s1.5", i ? "," : "");
  snprintf(buf + len, cap - len, "]}}}, \"connections\": [[\"src.out\", \"ld.in\"]]}");
  ck_assert_uint_gt(strlen(buf), n * 8);
  return buf;
}

START_TEST(test_huge_file) {
  char *buf = huge_graph(true);
  counter c = {0};
  ck_assert_int_eq(dg_graph_validate_string(NULL, buf, "huge.json", count, &c, NULL), 1);
  size_t at = scaled(200000) / 4 * 3;
  char want_path[128], want_text[128];
  snprintf(want_path, sizeof want_path, "/blocks/src/torque_vs_time/time/%zu", at);
  snprintf(want_text, sizeof want_text, "must be strictly increasing (3 after %zu)", at - 1);
  ck_assert_str_eq(c.first.path, want_path);
  ck_assert_str_eq(c.first.text, want_text);
  free(buf);
  buf = huge_graph(false);
  dg_error err;
  dg_graph *g = dg_graph_load_string(NULL, buf, "huge.json", &err);
  ck_assert_msg(g != NULL, "%s", err.text);
  free(buf);
  dg_sim *sim = dg_test_sim(g);
  for (int k = 0; k < 100; k++)
    ck_assert_int_eq(dg_sim_step(sim, 0.001), DG_OK);
  /* 1.5 N·m on 2 kg·m² for 0.1 s */
  ck_assert_double_eq_tol(dg_test_signal(sim, "src.omega"), 1.5 / 2.0 * 0.1, 1e-12);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* A million levels of nesting: jansson stops at its depth limit (2048), no
 * stack overflow. */
START_TEST(test_deep_nesting) {
  size_t depth = scaled(1000000);
  char *buf = malloc(2 * depth + 64);
  ck_assert_ptr_nonnull(buf);
  size_t len = 0;
  len += (size_t)sprintf(buf, "{\"drivegraph\": 1, \"name\": ");
  memset(buf + len, '[', depth);
  len += depth;
  memset(buf + len, ']', depth);
  len += depth;
  strcpy(buf + len, "}");
  dg_error err;
  ck_assert_ptr_null(dg_graph_load_string(NULL, buf, "deep.json", &err));
  ck_assert_int_eq(err.code, DG_ERR_SYNTAX);
  ck_assert_msg(strstr(err.text, "maximum parsing depth reached") != NULL, "%s", err.text);
  ck_assert_ptr_null(dg_scenario_load_string(buf, "deep.json", &err));
  ck_assert_msg(strstr(err.text, "maximum parsing depth reached") != NULL, "%s", err.text);
  free(buf);
}
END_TEST

/* 3000 broken connections: every problem is reported, each well-formed. */
START_TEST(test_many_problems) {
  size_t cap = 3000 * 40 + 512, len = 0;
  char *buf = malloc(cap);
  ck_assert_ptr_nonnull(buf);
  len += (size_t)snprintf(buf, cap,
                          "{\"drivegraph\": 1, \"blocks\": {\"src\": {\"type\": \"torque_source\", "
                          "\"inertia\": 1}, \"ld\": {\"type\": \"load\", \"inertia\": 1}}, "
                          "\"connections\": [[\"src.out\", \"ld.in\"]");
  for (int i = 0; i < 3000; i++)
    len += (size_t)snprintf(buf + len, cap - len, ", [\"nowhere%d.out\", \"ld.in\"]", i);
  snprintf(buf + len, cap - len, "]}");
  counter c = {0};
  ck_assert_int_eq(dg_graph_validate_string(NULL, buf, "many.json", count, &c, NULL), 3000);
  ck_assert_int_eq(c.n, 3000);
  ck_assert_str_eq(c.first.path, "/connections/1/0");
  ck_assert_str_eq(c.last.path, "/connections/3000/0");
  ck_assert_str_eq(c.last.text, "unknown block \"nowhere2999\"");
  free(buf);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Scenario files: the same hostile shapes                                  */

typedef struct scn_case {
  const char *text;
  int code;
  const char *where; /* "line:column" or the JSON pointer */
  const char *message;
} scn_case;

static const scn_case scn_cases[] = {
    {"", DG_ERR_SYNTAX, "1:1", "empty file, expected a JSON object"},
    {"{\"dt\": NaN}", DG_ERR_SYNTAX, "1:8",
     "invalid number 'NaN': NaN and Infinity are not allowed in JSON"},
    {"{\"duration\": 1e400}", DG_ERR_SYNTAX, "1:14", "real number overflow near '1e400'"},
    {"{\"duration\": 1e-400}", DG_ERR_RANGE, "/duration", "must be > 0 (got 0)"},
    {"{\"dt\": 1, \"dt\": 2}", DG_ERR_SYNTAX, "1:11", "duplicate object key \"dt\""},
    {"[1, 2]", DG_ERR_SCHEMA, "", "expected an object, got array"},
    {"{\"inputs\": {\"throttle\": [[0, 1], [1, [[[2]]]]]}}", DG_ERR_SCHEMA,
     "/inputs/throttle/1/1", "expected a number, got array"},
    {"{\"inputs\": {\"gear\": [[0, 1.5]]}}", DG_ERR_RANGE, "/inputs/gear/0/1",
     "must be an integer (got 1.5)"},
    {"{\"inputs\": {\"throttle\": [[1, 0], [0.5, 1]]}}", DG_ERR_RANGE, "/inputs/throttle/1/0",
     "breakpoint times must be non-decreasing (0.5 after 1)"},
    {"{\"inputs\": {\"throttle\": []}}", DG_ERR_SCHEMA, "/inputs/throttle",
     "expected at least one [time, value] breakpoint"},
    {"{\"initial\": {\"a/b~c.rpm\": \"fast\"}}", DG_ERR_SCHEMA, "/initial/a~1b~0c.rpm",
     "expected a number, got string"},
    {"{\"stop\": {\"signal\": \"body.speed\", \"above\": 1, \"below\": 2}}", DG_ERR_SCHEMA, "/stop",
     "expected exactly one of \"above\" or \"below\""},
    {"{\"drivegraph\": 1, \"blocks\": {}}", DG_ERR_UNKNOWN, "/drivegraph",
     "unknown key (expected duration, dt, output_interval, inputs, initial, stop)"},
    {"\xff\xfe", DG_ERR_SYNTAX, "1:1", "unable to decode byte 0xff"},
};

START_TEST(test_scenario_hostile) {
  const scn_case *k = &scn_cases[_i];
  dg_error err;
  ck_assert_ptr_null(dg_scenario_load_string(k->text, "s.json", &err));
  ck_assert_int_eq(err.code, k->code);
  ck_assert_str_eq(err.file, "s.json");
  char where[DG_ERROR_PATH_LEN];
  if (err.line > 0)
    snprintf(where, sizeof where, "%d:%d", err.line, err.column);
  else
    snprintf(where, sizeof where, "%s", err.path);
  ck_assert_str_eq(where, k->where);
  ck_assert_str_eq(err.text, k->message);
}
END_TEST

/* A huge input table in a scenario: 300 000 breakpoints (one per second)
 * load, and the driver walks them in O(1) per call. */
START_TEST(test_scenario_huge_table) {
  size_t n = scaled(300000), cap = n * 32 + 128, len = 0;
  char *buf = malloc(cap);
  ck_assert_ptr_nonnull(buf);
  len += (size_t)snprintf(buf, cap, "{\"duration\": 300000, \"inputs\": {\"throttle\": [");
  for (size_t i = 0; i < n; i++)
    len += (size_t)snprintf(buf + len, cap - len, "%s[%zu, %d]", i ? "," : "", i, (int)(i % 2));
  snprintf(buf + len, cap - len, "]}}");
  dg_error err;
  dg_scenario *scn = dg_scenario_load_string(buf, "big.json", &err);
  ck_assert_msg(scn != NULL, "%s", err.text);
  free(buf);
  char path[1024];
  dg_test_path(path, sizeof path, "graphs/gear_train.json");
  dg_graph *g = dg_graph_load_file(NULL, path, &err);
  ck_assert_ptr_nonnull(g);
  dg_sim *sim = dg_test_sim(g);
  dg_driver *drv = dg_driver_new(scn, sim, &err);
  ck_assert_ptr_nonnull(drv);
  for (long k = 0; k < (long)n - 1; k++) { /* the last one holds after it */
    dg_driver_apply(drv, (double)k); /* at a breakpoint: exact */
    ck_assert_double_eq(dg_sim_get_input(sim, DG_INPUT_THROTTLE), (double)(k % 2));
    dg_driver_apply(drv, (double)k + 0.25); /* between: linear */
    ck_assert_double_eq(dg_sim_get_input(sim, DG_INPUT_THROTTLE), (k % 2 ? 0.75 : 0.25));
  }
  dg_driver_free(drv);
  dg_sim_free(sim);
  dg_graph_free(g);
  dg_scenario_free(scn);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Extreme driver inputs                                                    */

/* Out-of-range but finite inputs are clamped by the blocks: a run stays
 * finite. A NaN or infinite input cannot be turned into a meaningful
 * torque: the step that uses it fails with an error (it never produces
 * NaN silently). */
START_TEST(test_extreme_inputs) {
  char path[1024];
  dg_test_path(path, sizeof path, "graphs/sedan_rwd_automatic.json");
  dg_error err;
  dg_graph *g = dg_graph_load_file(NULL, path, &err);
  ck_assert_ptr_nonnull(g);
  static const double values[] = {-1e9, -2, 2, 1e9, 1e308};
  for (size_t v = 0; v < sizeof values / sizeof values[0]; v++) {
    for (int input = 0; input < DG_NUM_STD_INPUTS; input++) {
      dg_sim *sim = dg_test_sim(g);
      dg_sim_set_input(sim, DG_INPUT_THROTTLE, 0.5);
      dg_sim_set_input(sim, input, values[v]);
      for (int k = 0; k < (int)scaled(2000); k++) {
        int rc = dg_sim_step(sim, 0.001);
        ck_assert_msg(rc == DG_OK, "input %d = %g: %s", input, values[v],
                      dg_sim_last_error(sim)->text);
      }
      for (int i = 0; i < dg_sim_signal_count(sim); i++)
        ck_assert_msg(isfinite(dg_sim_signal(sim, i)), "input %d = %g: %s = %g", input, values[v],
                      dg_sim_signal_name(sim, i), dg_sim_signal(sim, i));
      dg_sim_free(sim);
    }
  }
  static const double bad[] = {NAN, INFINITY, -INFINITY};
  for (size_t v = 0; v < sizeof bad / sizeof bad[0]; v++) {
    for (int input = 0; input < DG_NUM_STD_INPUTS; input++) {
      dg_sim *sim = dg_test_sim(g);
      dg_sim_set_input(sim, DG_INPUT_THROTTLE, 0.5);
      dg_sim_set_input(sim, input, bad[v]);
      /* refused: the step says which input and what value, at once */
      ck_assert_int_eq(dg_sim_get_input(sim, DG_INPUT_THROTTLE), 0.5);
      ck_assert_int_eq(dg_sim_step(sim, 0.001), DG_ERR_RANGE);
      char want[DG_ERROR_TEXT_LEN];
      snprintf(want, sizeof want, "at t = 0 s: input \"%s\" was set to %g; inputs must be finite",
               dg_sim_input_name(sim, input), bad[v]);
      ck_assert_str_eq(dg_sim_last_error(sim)->text, want);
      ck_assert_int_eq(dg_sim_step(sim, 0.001), DG_ERR_RANGE); /* and stays failed */
      dg_sim_free(sim);
    }
  }
  dg_graph_free(g);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("robust");
  TCase *tc = tcase_create("graph files");
  tcase_add_test(tc, test_nul_byte);
  tcase_add_test(tc, test_directory_and_missing);
  tcase_add_test(tc, test_huge_file);
  tcase_add_test(tc, test_deep_nesting);
  tcase_add_test(tc, test_many_problems);
  suite_add_tcase(s, tc);
  tc = tcase_create("scenario files");
  tcase_add_loop_test(tc, test_scenario_hostile, 0, (int)(sizeof scn_cases / sizeof scn_cases[0]));
  tcase_add_test(tc, test_scenario_huge_table);
  suite_add_tcase(s, tc);
  tc = tcase_create("inputs");
  tcase_add_test(tc, test_extreme_inputs);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return dg_test_run(suite()); }
