/* abs: |2 sin 2πt| and its integral through the rig, whose kinks at the
 * zero crossings are located events (so RK4 keeps its order); the sign. */
#include "signal_rig.h"

/* ∫₀ᵗ |2 sin wτ| dτ over whole half periods is 4/w each; within the n-th
 * half period (t = n/2 + u) add 2(1 − cos wu)/w. */
static double abs_integral(double t) {
  double w = 2 * SIGNAL_RIG_PI;
  double n = floor(2 * t), u = t - n / 2;
  return n * 4 / w + 2 * (1 - cos(w * u)) / w;
}

START_TEST(test_abs_sine) {
  dg_graph *g = signal_rig("\"type\":\"abs\",\"inputs\":{\"input\":\"s.value\"}");
  dg_sim *sim = dg_test_sim(g);
  double worst = 0;
  /* times off the crossings (every 0.5 s): the held sign is the sine's */
  for (int k = 1; k <= 25; k++) {
    signal_rig_run_to(sim, 0.123 * k);
    double t = dg_sim_time(sim), x = 2 * sin(2 * SIGNAL_RIG_PI * t);
    ck_assert_double_eq_tol(dg_test_signal(sim, "c.output"), fabs(x), 1e-12);
    ck_assert_double_eq(dg_test_signal(sim, "c.sign"), x > 0 ? 1.0 : -1.0);
    worst = fmax(worst, fabs(dg_test_signal(sim, "ld.omega") - abs_integral(t)));
  }
  printf("abs: |2 sin 2 pi t| integrated over 3 s at dt %g, kinks located: worst error %.2e\n",
         SIGNAL_RIG_DT, worst);
  ck_assert_double_le(worst, 1e-10);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* The same at a step that does not divide the crossings' times (dt = 3e-3
 * puts 0.5 s inside a step): only a located crossing keeps the error at
 * RK4's (without location it would be of order dt² · |x'| ≈ 1e-4). */
START_TEST(test_abs_located) {
  dg_graph *g = signal_rig("\"type\":\"abs\",\"inputs\":{\"input\":\"s.value\"}");
  dg_sim *sim = dg_test_sim(g);
  dg_test_step(sim, 500, 3e-3);
  double t = dg_sim_time(sim);
  ck_assert_double_eq_tol(t, 1.5, 1e-12);
  ck_assert_double_eq_tol(dg_test_signal(sim, "ld.omega"), abs_integral(t), 1e-9);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("abs");
  TCase *tc = tcase_create("abs");
  tcase_add_test(tc, test_abs_sine);
  tcase_add_test(tc, test_abs_located);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return dg_test_run(suite()); }
