/* accel_source (blocks/accel_source.c): a shaft that follows a given
 * acceleration exactly from its initial speed. Closed forms in the
 * comments; a constant or linear acceleration is integrated by RK4 without
 * truncation, so TOL_EXACT is round-off. */
#include "testutil.h"

#include <math.h>

#define TOL_EXACT 1e-10

/* a = 2 rad/s² from ω0 = 1 rad/s on 3 kg·m²: ω = 1 + 2t, torque 6 N·m, the
 * shaft's angle t + t², the work ½·3·(ω² − 1). */
START_TEST(constant_accel) {
  dg_graph *g = dg_test_graph("{\"drivegraph\":1,\"blocks\":{"
                              "\"src\":{\"type\":\"accel_source\",\"initial_speed\":1,"
                              "\"inputs\":{\"accel\":2}},"
                              "\"j\":{\"type\":\"inertia\",\"inertia\":3}},"
                              "\"connections\":[[\"src.out\",\"j.in\"]]}");
  dg_sim *sim = dg_test_sim(g);
  dg_test_step(sim, 1500, 0.001);
  ck_assert_double_eq_tol(dg_test_signal(sim, "src.omega"), 4.0, TOL_EXACT);
  ck_assert_double_eq_tol(dg_test_signal(sim, "j.omega"), 4.0, TOL_EXACT);
  ck_assert_double_eq_tol(dg_test_signal(sim, "src.torque"), 6.0, TOL_EXACT);
  ck_assert_double_eq_tol(dg_test_signal(sim, "j.in.angle"), 1.5 + 2.25, TOL_EXACT);
  ck_assert_double_eq_tol(dg_sim_block_work(sim, dg_test_block_index(g, "src")),
                          0.5 * 3.0 * (16.0 - 1.0), 1e-9);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* a = t (a channel ramp): ω = ω0 + t²/2 with ω0 set as an initial value
 * (0.5), torque 3t on 3 kg·m². */
START_TEST(ramped_accel_initial_value) {
  dg_graph *g = dg_test_graph("{\"drivegraph\":1,\"blocks\":{"
                              "\"src\":{\"type\":\"accel_source\",\"inputs\":{\"accel\":\"a\"}},"
                              "\"j\":{\"type\":\"inertia\",\"inertia\":3}},"
                              "\"connections\":[[\"src.out\",\"j.in\"]]}");
  dg_sim *sim = dg_test_sim(g);
  dg_test_set_initial1(sim, "src.omega", 0.5);
  const double t[2] = {0.0, 10.0}, v[2] = {0.0, 10.0};
  ck_assert_int_eq(dg_sim_set_input_schedule(sim, dg_sim_input_find(sim, "a"), 2, t, v, false,
                                             NULL),
                   DG_OK);
  dg_test_step(sim, 2000, 0.001);
  ck_assert_double_eq_tol(dg_test_signal(sim, "j.omega"), 0.5 + 2.0, TOL_EXACT);
  ck_assert_double_eq_tol(dg_test_signal(sim, "src.torque"), 6.0, TOL_EXACT);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

START_TEST(accel_required) {
  dg_error e = dg_test_graph_error("{\"drivegraph\":1,\"blocks\":{"
                                   "\"src\":{\"type\":\"accel_source\"},"
                                   "\"j\":{\"type\":\"inertia\",\"inertia\":3}},"
                                   "\"connections\":[[\"src.out\",\"j.in\"]]}");
  ck_assert_str_eq(e.path, "/blocks/src/inputs");
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("accel_source");
  TCase *c = tcase_create("dynamics");
  tcase_add_test(c, constant_accel);
  tcase_add_test(c, ramped_accel_initial_value);
  tcase_add_test(c, accel_required);
  suite_add_tcase(s, c);
  return s;
}

int main(void) { return dg_test_run(suite()); }
