/* differential: torque split, ratio, efficiency, locked kind, errors.
 * (The coupled-inertia results of open and locked axles are in
 * test_solver.c.) */
#include "testutil.h"

#include <stdio.h>

static dg_graph *rig(const char *diff_params, double src_inertia, double torque) {
  char json[1200];
  snprintf(json, sizeof json,
           "{\"drivegraph\":1,\"blocks\":{"
           "\"src\":{\"type\":\"torque_source\",\"inertia\":%g,\"torque\":%g},"
           "\"diff\":{\"type\":\"differential\"%s%s},"
           "\"a\":{\"type\":\"load\",\"inertia\":1.5},\"b\":{\"type\":\"load\",\"inertia\":1.5}},"
           "\"connections\":[[\"src.out\",\"diff.in\"],[\"diff.left\",\"a.in\"],"
           "[\"diff.right\",\"b.in\"]]}",
           src_inertia, torque, diff_params[0] ? "," : "", diff_params);
  return dg_test_graph(json);
}

/* With a massless input the outputs are independent: each gets r·s·T
 * (resp. r·(1−s)·T) times η and accelerates on its own inertia. */
START_TEST(test_split_ratio_efficiency) {
  dg_graph *g = rig("\"split\":0.3,\"ratio\":2,\"efficiency\":0.9", 0.0, 10.0);
  dg_sim *sim = dg_test_sim(g);
  for (int i = 0; i < 1000; i++)
    ck_assert_int_eq(dg_sim_step(sim, 1e-3), DG_OK);
  ck_assert_double_eq_tol(dg_test_signal(sim, "a.omega"), 0.9 * 2 * 0.3 * 10.0 / 1.5, 1e-11);
  ck_assert_double_eq_tol(dg_test_signal(sim, "b.omega"), 0.9 * 2 * 0.7 * 10.0 / 1.5, 1e-11);
  /* kinematics: ω_in = r (s ω_a + (1 − s) ω_b) */
  double wa = dg_test_signal(sim, "a.omega"), wb = dg_test_signal(sim, "b.omega");
  ck_assert_double_eq_tol(dg_test_signal(sim, "diff.omega"), 2 * (0.3 * wa + 0.7 * wb), 1e-12);
  ck_assert_double_eq_tol(dg_test_signal(sim, "diff.speed_diff"), wa - wb, 1e-12);
  ck_assert_double_eq(dg_test_signal(sim, "diff.locking_torque"), 0.0); /* open: no lock */
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* Locked with equal outputs: the lock carries nothing; speeds equal. */
START_TEST(test_locked_equal_sides) {
  dg_graph *g = rig("\"kind\":\"locked\",\"inertia\":0.1", 0.2, 20.0);
  dg_sim *sim = dg_test_sim(g);
  ck_assert_int_eq(dg_sim_dof_count(sim), 1);
  double m;
  dg_sim_mass_matrix(sim, &m);
  ck_assert_double_eq_tol(m, 3.0 + 0.3, 1e-14); /* input turns with the outputs at r = 1 */
  for (int i = 0; i < 100; i++)
    ck_assert_int_eq(dg_sim_step(sim, 1e-3), DG_OK);
  ck_assert_double_eq_tol(dg_test_signal(sim, "diff.speed_diff"), 0.0, 1e-12);
  ck_assert_double_eq_tol(dg_test_signal(sim, "diff.locking_torque"), 0.0, 1e-10);
  ck_assert_double_eq_tol(dg_test_signal(sim, "a.omega"), 20.0 / 3.3 * 0.1, 1e-12);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

static const struct {
  const char *params, *path, *text;
} bad[] = {
    {"\"kind\":\"opne\"", "/blocks/diff/kind",
     "must be one of \"open\", \"locked\" (got \"opne\"); did you mean \"open\"?"},
    {"\"split\":1", "/blocks/diff/split", "must be < 1 (got 1)"},
    {"\"split\":0", "/blocks/diff/split", "must be > 0 (got 0)"},
    {"\"ratio\":-3.7", "/blocks/diff/ratio", "must be > 0 (got -3.7)"},
    {"\"kind\":1", "/blocks/diff/kind", "expected a string (one of \"open\", \"locked\"), got number"},
};

START_TEST(test_bad_params) {
  char json[1200];
  snprintf(json, sizeof json,
           "{\"drivegraph\":1,\"blocks\":{\"src\":{\"type\":\"torque_source\",\"inertia\":1},"
           "\"diff\":{\"type\":\"differential\",%s},\"a\":{\"type\":\"load\",\"inertia\":1},"
           "\"b\":{\"type\":\"load\",\"inertia\":1}},\"connections\":[[\"src.out\",\"diff.in\"],"
           "[\"diff.left\",\"a.in\"],[\"diff.right\",\"b.in\"]]}",
           bad[_i].params);
  dg_error err = dg_test_graph_error(json);
  ck_assert_str_eq(err.path, bad[_i].path);
  ck_assert_str_eq(err.text, bad[_i].text);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("differential");
  TCase *tc = tcase_create("dynamics");
  tcase_add_test(tc, test_split_ratio_efficiency);
  tcase_add_test(tc, test_locked_equal_sides);
  suite_add_tcase(s, tc);
  tc = tcase_create("params");
  tcase_add_loop_test(tc, test_bad_params, 0, (int)(sizeof bad / sizeof bad[0]));
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return dg_test_run(suite()); }
