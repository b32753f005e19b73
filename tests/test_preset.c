/* Tests for lib/run/preset.c: the preset drivers of `drivegraph sim
 * --preset` (the CLI suites run them on every example car; these check
 * the library API: goals, the start in gear, refusals). */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DT 0.001

/* Runs a preset to its goal or limit; returns the steps taken. */
static long drive(dg_preset *p, dg_sim *sim, char *reason, size_t size) {
  long limit = lround(dg_preset_time_limit(p) / DT), k = 0;
  dg_error err;
  ck_assert_int_eq(dg_preset_start(p, sim, &err), DG_OK);
  dg_preset_apply(p, sim, 0.0);
  ck_assert_int_eq(dg_sim_start(sim, &err), DG_OK);
  while (k < limit && !dg_preset_done(p, sim, (double)k * DT, reason, size)) {
    dg_preset_apply(p, sim, (double)k * DT);
    ck_assert_int_eq(dg_sim_step(sim, DT), DG_OK);
    k++;
  }
  return k;
}

START_TEST(test_launch_reaches_its_goal) {
  char *text = dg_test_read_source("graphs/sedan_rwd_automatic.json");
  dg_graph *g = dg_test_graph_file("graphs/sedan_rwd_automatic.json");
  dg_error err;
  dg_preset *p = dg_preset_new(NULL, g, text, "launch", NAN, 0, NULL, NULL, NULL, &err);
  ck_assert_ptr_nonnull(p);
  ck_assert_ptr_eq(dg_preset_graph(p), g);
  ck_assert_str_eq(dg_preset_name(p), "launch");
  ck_assert_double_eq(dg_preset_time_limit(p), 60.0);
  dg_sim *sim = dg_sim_new(dg_preset_graph(p), &err);
  char reason[160] = "";
  long steps = drive(p, sim, reason, sizeof reason);
  ck_assert_str_eq(reason, "preset launch: 400 m covered and 100 km/h reached");
  ck_assert(steps > 10000 && steps < 20000);
  double x;
  ck_assert_int_eq(dg_sim_signal_by_name(sim, "body.x", &x, &err), DG_OK);
  ck_assert(x >= 400.0);
  dg_sim_free(sim);
  dg_preset_free(p);
  dg_graph_free(g);
  free(text);
}
END_TEST

/* Coast starts rolling at the start speed in a gear of the copy graph and
 * ends below 1 km/h or creeping. */
START_TEST(test_coast_starts_in_gear) {
  char *text = dg_test_read_source("graphs/hatchback_fwd_manual.json");
  dg_graph *g = dg_test_graph_file("graphs/hatchback_fwd_manual.json");
  dg_error err;
  dg_preset *p = dg_preset_new(NULL, g, text, "coast", 80.0, 0, NULL, NULL, NULL, &err);
  ck_assert_ptr_nonnull(p);
  ck_assert_ptr_ne(dg_preset_graph(p), g);
  ck_assert_double_eq_tol(dg_preset_start_speed(p), 80.0 / 3.6, 1e-12);
  ck_assert_double_eq_tol(dg_preset_rest_speed(p), 1.0 / 3.6, 1e-12);
  dg_sim *sim = dg_sim_new(dg_preset_graph(p), &err);
  char reason[160] = "";
  dg_error e;
  ck_assert_int_eq(dg_preset_start(p, sim, &e), DG_OK);
  double v, gear;
  ck_assert_int_eq(dg_sim_signal_by_name(sim, "body.speed", &v, &e), DG_OK);
  ck_assert_double_eq_tol(v, 80.0 / 3.6, 1e-9);
  drive(p, sim, reason, sizeof reason);
  ck_assert_msg(strncmp(reason, "preset coast: ", 14) == 0, "%s", reason);
  ck_assert_int_eq(dg_sim_signal_by_name(sim, "gearbox.gear", &gear, &e), DG_OK);
  dg_sim_free(sim);
  dg_preset_free(p);
  dg_graph_free(g);
  free(text);
}
END_TEST

/* Every refusal reported, the first in err. */
START_TEST(test_refusals) {
  dg_error err;
  char *rig_text = dg_test_read_source("graphs/gear_train.json");
  dg_graph *rig = dg_test_graph_file("graphs/gear_train.json");
  ck_assert_ptr_null(dg_preset_new(NULL, rig, rig_text, "launch", NAN, 0, NULL, NULL, NULL, &err));
  ck_assert_int_eq(err.code, DG_ERR_USAGE);
  ck_assert_msg(strstr(err.text, "has no vehicle block") != NULL, "%s", err.text);
  ck_assert_ptr_null(dg_preset_new(NULL, rig, rig_text, "lanch", NAN, 0, NULL, NULL, NULL, &err));
  ck_assert_msg(strstr(err.text, "unknown preset \"lanch\"") != NULL, "%s", err.text);
  ck_assert_int_eq(dg_preset_find("brake"), 3);
  ck_assert_int_eq(dg_preset_find("nothing"), 0);
  dg_graph_free(rig);
  free(rig_text);

  char *text = dg_test_read_source("graphs/pickup_4x4.json");
  dg_graph *g = dg_test_graph_file("graphs/pickup_4x4.json");
  int count = 0;
  ck_assert_ptr_null(
      dg_preset_new(NULL, g, text, "launch", NAN, 0, NULL, dg_test_count_diag, &count, &err));
  ck_assert_int_eq(count, 1);
  ck_assert_str_eq(err.text, "the graph binds the channel \"range\" (/blocks/transfer/inputs/gear), "
                             "which the preset does not drive: give it with --input range=VALUE, "
                             "or use --scenario");
  const char *given[] = {"range"};
  dg_preset *p = dg_preset_new(NULL, g, text, "launch", NAN, 1, given, NULL, NULL, &err);
  ck_assert_ptr_nonnull(p);
  dg_preset_free(p);
  dg_preset_free(NULL);
  dg_graph_free(g);
  free(text);
}
END_TEST

static Suite *preset_suite(void) {
  Suite *s = suite_create("preset");
  TCase *tc = tcase_create("drivers");
  tcase_add_test(tc, test_launch_reaches_its_goal);
  tcase_add_test(tc, test_coast_starts_in_gear);
  tcase_add_test(tc, test_refusals);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return dg_test_run(preset_suite()); }
