/* torque_source: constant, over time, over speed; errors. */
#include "testutil.h"

#include <math.h>

static dg_graph *rig(const char *params) {
  return dg_test_graphf(
      "{\"drivegraph\":1,\"blocks\":{\"src\":{\"type\":\"torque_source\",\"inertia\":0.5%s%s},"
      "\"ld\":{\"type\":\"load\",\"inertia\":1.5}},\"connections\":[[\"src.out\",\"ld.in\"]]}",
      params[0] ? "," : "", params);
}

/* T = 10 t on J = 2 for t in [0, 1]: ω = 2.5 t² — a polynomial RK4
 * integrates exactly when steps land on the table's breakpoints. */
START_TEST(test_torque_vs_time) {
  dg_graph *g = rig("\"torque_vs_time\":{\"time\":[0,1,2],\"torque\":[0,10,10]}");
  dg_sim *sim = dg_test_sim(g);
  for (int i = 0; i < 1000; i++)
    ck_assert_int_eq(dg_sim_step(sim, 1e-3), DG_OK);
  ck_assert_double_eq_tol(dg_test_signal(sim, "src.omega"), 2.5, 1e-11);
  for (int i = 0; i < 1000; i++)
    ck_assert_int_eq(dg_sim_step(sim, 1e-3), DG_OK);
  ck_assert_double_eq_tol(dg_test_signal(sim, "src.omega"), 2.5 + 5.0, 1e-11);
  ck_assert_double_eq_tol(dg_test_signal(sim, "src.torque"), 10.0, 1e-12);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* T = T0 (1 − ω/ω_max): ω = ω_max (1 − exp(−T0 t / (J ω_max))). */
START_TEST(test_torque_vs_rpm) {
  const double w_max = 3000.0 / 9.549296585513720, T0 = 100.0, J = 2.0;
  dg_graph *g = rig("\"torque_vs_rpm\":{\"rpm\":[0,3000],\"torque\":[100,0]}");
  dg_sim *sim = dg_test_sim(g);
  for (int i = 0; i < 5000; i++)
    ck_assert_int_eq(dg_sim_step(sim, 1e-3), DG_OK);
  double expect = w_max * (1.0 - exp(-T0 * 5.0 / (J * w_max)));
  ck_assert_double_eq_tol(dg_test_signal(sim, "src.omega"), expect, 1e-9 * w_max);
  ck_assert_double_eq_tol(dg_test_signal(sim, "src.power"),
                          dg_test_signal(sim, "src.torque") * expect, 1e-6);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

START_TEST(test_constant_and_default) {
  dg_graph *g = rig("\"torque\":-4");
  dg_sim *sim = dg_test_sim(g);
  ck_assert_int_eq(dg_sim_step(sim, 0.5), DG_OK);
  ck_assert_double_eq_tol(dg_test_signal(sim, "ld.omega"), -1.0, 1e-14);
  dg_sim_free(sim);
  dg_graph_free(g);
  g = rig(""); /* no torque at all: a free inertia */
  sim = dg_test_sim(g);
  ck_assert_int_eq(dg_sim_step(sim, 0.5), DG_OK);
  ck_assert_double_eq(dg_test_signal(sim, "ld.omega"), 0.0);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

static const dg_test_bad_param bad[] = {
    {"\"torque\":1,\"torque_vs_rpm\":{\"rpm\":[0,1],\"torque\":[1,1]}", "/blocks/src",
     "give only one of torque, torque_vs_time, torque_vs_rpm"},
    {"\"torque_vs_time\":{\"time\":[0,2,1],\"torque\":[0,1,1]}", "/blocks/src/torque_vs_time/time/2",
     "must be strictly increasing (1 after 2)"},
    {"\"torque_vs_time\":{\"time\":[0,1,2],\"torque\":[0,1]}",
     "/blocks/src/torque_vs_time/torque", "must have 3 elements like \"time\" (got 2)"},
    {"\"torque_vs_rpm\":{\"rmp\":[0,1],\"torque\":[0,1]}", "/blocks/src/torque_vs_rpm/rmp",
     "unknown key; did you mean \"rpm\"?"},
};

START_TEST(test_bad_params) {
  dg_test_graph_error_at(
      bad[_i].path, bad[_i].text,
      "{\"drivegraph\":1,\"blocks\":{\"src\":{\"type\":\"torque_source\",\"inertia\":0.5,%s},"
      "\"ld\":{\"type\":\"load\",\"inertia\":1.5}},\"connections\":[[\"src.out\",\"ld.in\"]]}",
      bad[_i].params);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("torque_source");
  TCase *tc = tcase_create("dynamics");
  tcase_add_test(tc, test_torque_vs_time);
  tcase_add_test(tc, test_torque_vs_rpm);
  tcase_add_test(tc, test_constant_and_default);
  suite_add_tcase(s, tc);
  tc = tcase_create("params");
  tcase_add_loop_test(tc, test_bad_params, 0, (int)(sizeof bad / sizeof bad[0]));
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return dg_test_run(suite()); }
