/* load: Coulomb, viscous and quadratic resisting torque; signals; errors. */
#include "testutil.h"

#include <math.h>

static dg_sim *spinning_load(dg_graph **g, const char *coeffs, double w0) {
  *g = dg_test_graphf(
      "{\"drivegraph\":1,\"blocks\":{\"src\":{\"type\":\"torque_source\"},"
      "\"ld\":{\"type\":\"load\",\"inertia\":2,%s}},\"connections\":[[\"src.out\",\"ld.in\"]]}",
      coeffs);
  dg_sim *sim = dg_test_sim(*g);
  dg_test_set_initial1(sim, "ld.omega", w0);
  return sim;
}

/* Coulomb: constant deceleration c0/J while turning (exact for RK4). */
START_TEST(test_coulomb) {
  dg_graph *g;
  dg_sim *sim = spinning_load(&g, "\"c0\":4", 10.0);
  ck_assert_double_eq_tol(dg_test_signal(sim, "ld.torque"), -4.0, 1e-15);
  ck_assert_double_eq_tol(dg_test_signal(sim, "ld.power"), 40.0, 1e-12);
  for (int i = 0; i < 3000; i++)
    ck_assert_int_eq(dg_sim_step(sim, 1e-3), DG_OK);
  ck_assert_double_eq_tol(dg_test_signal(sim, "ld.omega"), 10.0 - 4.0 / 2.0 * 3.0, 1e-10);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* Viscous: exponential decay ω0 exp(−c1 t / J); RK4 at h λ = 1e-3 is
 * accurate to ~1e-15 per step. */
START_TEST(test_viscous) {
  dg_graph *g;
  dg_sim *sim = spinning_load(&g, "\"c1\":1", 10.0);
  for (int i = 0; i < 2000; i++)
    ck_assert_int_eq(dg_sim_step(sim, 1e-3), DG_OK);
  ck_assert_double_eq_tol(dg_test_signal(sim, "ld.omega"), 10.0 * exp(-1.0 * 2.0 / 2.0), 1e-11);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* The torque opposes rotation in both directions. */
START_TEST(test_opposes_rotation) {
  dg_graph *g;
  dg_sim *sim = spinning_load(&g, "\"c0\":1,\"c1\":0.5,\"c2\":0.1", -10.0);
  ck_assert_double_eq_tol(dg_test_signal(sim, "ld.torque"), 1.0 + 5.0 + 10.0, 1e-12);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

START_TEST(test_bad_params) {
  dg_test_graph_error_at(
      "/blocks/ld/c1", "must be >= 0 (got -1)",
      "{\"drivegraph\":1,\"blocks\":{\"src\":{\"type\":\"torque_source\",\"inertia\":1},"
      "\"ld\":{\"type\":\"load\",\"c1\":-1}},\"connections\":[[\"src.out\",\"ld.in\"]]}");
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("load");
  TCase *tc = tcase_create("dynamics");
  tcase_add_test(tc, test_coulomb);
  tcase_add_test(tc, test_viscous);
  tcase_add_test(tc, test_opposes_rotation);
  suite_add_tcase(s, tc);
  tc = tcase_create("params");
  tcase_add_test(tc, test_bad_params);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return dg_test_run(suite()); }
