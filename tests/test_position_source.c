/* position_source (blocks/position_source.c): a shaft that follows a given
 * angle exactly. Closed forms in the comments. The speed and acceleration
 * of a smooth angle come from central differences (TOL_DIFF, ~1e-8 of the
 * values for the second derivative); the shaft's integrated angle is RK4's
 * quadrature of the exact speed (TOL_QUAD: h⁴ error on a sine, < 1e-11). */
#include "testutil.h"

#include <math.h>

#define TOL_EXACT 1e-10
#define TOL_DIFF 1e-6
#define TOL_QUAD 1e-9

static double angle_fn(double t, void *user) {
  (void)user;
  return 0.5 * sin(2.0 * t);
}

/* φ = ½ sin 2t on 4 kg·m²: ω = cos 2t, ω̇ = −2 sin 2t, torque −8 sin 2t;
 * the shaft's own angle (integrated) is φ. */
START_TEST(sine_angle) {
  dg_graph *g = dg_test_graph("{\"drivegraph\":1,\"blocks\":{"
                              "\"src\":{\"type\":\"position_source\",\"inputs\":{\"angle\":\"phi\"}},"
                              "\"j\":{\"type\":\"inertia\",\"inertia\":4}},"
                              "\"connections\":[[\"src.out\",\"j.in\"]]}");
  dg_sim *sim = dg_test_sim(g);
  ck_assert_int_eq(dg_sim_set_input_fn(sim, dg_sim_input_find(sim, "phi"), angle_fn, NULL, NULL),
                   DG_OK);
  /* at rest before the first step: the start takes the callback's speed */
  for (int k = 1; k <= 4; k++) {
    dg_test_step(sim, 250, 0.001);
    double t = 0.25 * k;
    ck_assert_double_eq_tol(dg_test_signal(sim, "src.angle"), 0.5 * sin(2.0 * t), TOL_EXACT);
    ck_assert_double_eq_tol(dg_test_signal(sim, "j.omega"), cos(2.0 * t), 1e-9);
    ck_assert_double_eq_tol(dg_test_signal(sim, "src.torque"), -8.0 * sin(2.0 * t), TOL_DIFF);
    ck_assert_double_eq_tol(dg_test_signal(sim, "j.in.angle"), 0.5 * sin(2.0 * t), TOL_QUAD);
  }
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* A schedule 0 → 2 rad over [0, 1] s then held: speed 2 rad/s, then 0
 * (the rigid inertia stops at once at t = 1); no torque between. */
START_TEST(schedule_angle) {
  dg_graph *g = dg_test_graph("{\"drivegraph\":1,\"blocks\":{"
                              "\"src\":{\"type\":\"position_source\",\"inputs\":{\"angle\":\"phi\"}},"
                              "\"j\":{\"type\":\"inertia\",\"inertia\":4}},"
                              "\"connections\":[[\"src.out\",\"j.in\"]]}");
  dg_sim *sim = dg_test_sim(g);
  const double t[2] = {0.0, 1.0}, v[2] = {0.0, 2.0};
  ck_assert_int_eq(dg_sim_set_input_schedule(sim, dg_sim_input_find(sim, "phi"), 2, t, v, false,
                                             NULL),
                   DG_OK);
  dg_test_step(sim, 500, 0.001);
  ck_assert_double_eq_tol(dg_test_signal(sim, "j.omega"), 2.0, TOL_EXACT);
  ck_assert_double_eq_tol(dg_test_signal(sim, "src.torque"), 0.0, TOL_EXACT);
  ck_assert_double_eq_tol(dg_test_signal(sim, "j.in.angle"), 1.0, TOL_EXACT);
  dg_test_step(sim, 1000, 0.001);
  ck_assert_double_eq_tol(dg_test_signal(sim, "j.omega"), 0.0, TOL_EXACT);
  ck_assert_double_eq_tol(dg_test_signal(sim, "j.in.angle"), 2.0, TOL_EXACT);
  dg_energy e;
  dg_sim_energy(sim, &e);
  ck_assert_double_eq_tol(e.balance_error, 0.0, 1e-9);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("position_source");
  TCase *c = tcase_create("dynamics");
  tcase_add_test(c, sine_angle);
  tcase_add_test(c, schedule_angle);
  suite_add_tcase(s, c);
  return s;
}

int main(void) { return dg_test_run(suite()); }
