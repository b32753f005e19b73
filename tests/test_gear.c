/* gear: ratio, efficiency, inertia referred to the input, parameter errors. */
#include "testutil.h"

#include <math.h>

static dg_graph *rig(const char *gear_params) {
  return dg_test_chain("\"inertia\":0.3,\"torque\":12", "gear", "g", gear_params, "\"inertia\":2");
}

/* M = I_load + (I_src + I_gear) k² at the load. */
START_TEST(test_inertia_referred_to_input) {
  dg_graph *g = rig("\"ratio\":4,\"inertia\":0.05");
  dg_sim *sim = dg_test_sim(g);
  double m;
  dg_sim_mass_matrix(sim, &m);
  ck_assert_double_eq_tol(m, 2.0 + (0.3 + 0.05) * 16.0, 1e-14);
  for (int i = 0; i < 500; i++)
    ck_assert_int_eq(dg_sim_step(sim, 1e-3), DG_OK);
  /* constant acceleration 12·4/m, integrated exactly up to round-off */
  double w = 12.0 * 4.0 / m * 0.5;
  ck_assert_double_eq_tol(dg_test_signal(sim, "g.omega_out"), w, 1e-12 * w);
  ck_assert_double_eq_tol(dg_test_signal(sim, "g.omega"), 4.0 * w, 4e-12 * w);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* Defaults: efficiency 1 and no inertia. */
START_TEST(test_defaults) {
  dg_graph *g = rig("\"ratio\":2");
  dg_sim *sim = dg_test_sim(g);
  double m;
  dg_sim_mass_matrix(sim, &m);
  ck_assert_double_eq_tol(m, 2.0 + 0.3 * 4.0, 1e-14);
  ck_assert_int_eq(dg_sim_step(sim, 0.01), DG_OK);
  ck_assert_double_eq_tol(dg_test_signal(sim, "ld.omega"), 12.0 * 2.0 / m * 0.01, 1e-14);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

static const dg_test_bad_param bad[] = {
    {"\"ratio\":0", "/blocks/g/ratio", "must be > 0 (got 0)"},
    {"\"ratio\":2,\"efficiency\":0", "/blocks/g/efficiency", "must be > 0 (got 0)"},
    {"\"ratio\":2,\"efficiency\":1.01", "/blocks/g/efficiency", "must be <= 1 (got 1.01)"},
    {"\"ratio\":2,\"inertia\":-0.1", "/blocks/g/inertia", "must be >= 0 (got -0.1)"},
    {"\"ratio\":\"3\"", "/blocks/g/ratio", "expected a number, got string"},
    {"\"ratio\":2,\"effciency\":0.9", "/blocks/g/effciency",
     "unknown parameter; did you mean \"efficiency\"?"},
};

START_TEST(test_bad_params) {
  dg_test_graph_error_at(
      bad[_i].path, bad[_i].text,
      "{\"drivegraph\":1,\"blocks\":{\"src\":{\"type\":\"torque_source\",\"inertia\":0.3},"
      "\"g\":{\"type\":\"gear\",%s},\"ld\":{\"type\":\"load\",\"inertia\":2}},"
      "\"connections\":[[\"src.out\",\"g.in\"],[\"g.out\",\"ld.in\"]]}",
      bad[_i].params);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("gear");
  TCase *tc = tcase_create("dynamics");
  tcase_add_test(tc, test_inertia_referred_to_input);
  tcase_add_test(tc, test_defaults);
  suite_add_tcase(s, tc);
  tc = tcase_create("params");
  tcase_add_loop_test(tc, test_bad_params, 0, (int)(sizeof bad / sizeof bad[0]));
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return dg_test_run(suite()); }
