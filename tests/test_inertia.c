/* inertia: pass-through flywheel, either end open, errors. */
#include "testutil.h"

#include <stdio.h>

/* In the middle of a line it adds its inertia and passes torque through. */
START_TEST(test_pass_through) {
  dg_graph *g = dg_test_graph(
      "{\"drivegraph\":1,\"blocks\":{\"src\":{\"type\":\"torque_source\",\"inertia\":0.2,"
      "\"torque\":7},\"fly\":{\"type\":\"inertia\",\"inertia\":0.8},"
      "\"ld\":{\"type\":\"load\",\"inertia\":1}},"
      "\"connections\":[[\"src.out\",\"fly.in\"],[\"fly.out\",\"ld.in\"]]}");
  dg_sim *sim = dg_test_sim(g);
  double m;
  dg_sim_mass_matrix(sim, &m);
  ck_assert_double_eq_tol(m, 2.0, 1e-15);
  for (int i = 0; i < 1000; i++)
    ck_assert_int_eq(dg_sim_step(sim, 1e-3), DG_OK);
  ck_assert_double_eq_tol(dg_test_signal(sim, "fly.omega"), 3.5, 1e-11);
  ck_assert_double_eq_tol(dg_test_signal(sim, "fly.rpm"), 3.5 * 30.0 / 3.14159265358979323846,
                          1e-9);
  ck_assert_double_eq_tol(dg_test_signal(sim, "ld.omega"), 3.5, 1e-11);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* At the end of a line (out open) it is the only inertia. */
START_TEST(test_flywheel_at_end) {
  dg_graph *g = dg_test_graph(
      "{\"drivegraph\":1,\"blocks\":{\"src\":{\"type\":\"torque_source\",\"torque\":3},"
      "\"fly\":{\"type\":\"inertia\",\"inertia\":1.5}},\"connections\":[[\"src.out\",\"fly.in\"]]}");
  dg_sim *sim = dg_test_sim(g);
  ck_assert_int_eq(dg_sim_dof_count(sim), 1);
  for (int i = 0; i < 200; i++)
    ck_assert_int_eq(dg_sim_step(sim, 1e-3), DG_OK);
  ck_assert_double_eq_tol(dg_test_signal(sim, "fly.omega"), 3.0 / 1.5 * 0.2, 1e-12);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

START_TEST(test_bad_params) {
  dg_test_graph_error_at(
      "/blocks/fly/inertia", "missing required number (kg*m^2)",
      "{\"drivegraph\":1,\"blocks\":{\"src\":{\"type\":\"torque_source\",\"torque\":3},"
      "\"fly\":{\"type\":\"inertia\"}},\"connections\":[[\"src.out\",\"fly.in\"]]}");
  dg_test_graph_error_at(
      "/blocks/fly/inertia", "must be > 0 (got 0)",
      "{\"drivegraph\":1,\"blocks\":{\"src\":{\"type\":\"torque_source\",\"torque\":3},"
      "\"fly\":{\"type\":\"inertia\",\"inertia\":0}},\"connections\":[[\"src.out\",\"fly.in\"]]}");
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("inertia");
  TCase *tc = tcase_create("dynamics");
  tcase_add_test(tc, test_pass_through);
  tcase_add_test(tc, test_flywheel_at_end);
  suite_add_tcase(s, tc);
  tc = tcase_create("params");
  tcase_add_test(tc, test_bad_params);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return dg_test_run(suite()); }
