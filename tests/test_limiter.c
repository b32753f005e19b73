/* limiter: 2 sin 2πt within [−1, 1] (constant bounds) and within
 * [−inf, t] (a moving upper bound), against closed forms and through the
 * rig with the crossings located; `limited`. */
#include "signal_rig.h"

START_TEST(test_constant_bounds) {
  dg_graph *g = signal_rig("\"type\":\"limiter\","
                           "\"inputs\":{\"input\":\"s.value\",\"lower\":-1,\"upper\":1}");
  dg_sim *sim = dg_test_sim(g);
  double worst = 0.0;
  for (int k = 1; k <= 25; k++) {
    signal_rig_run_to(sim, 0.117 * k);
    double t = dg_sim_time(sim), x = 2 * sin(2 * SIGNAL_RIG_PI * t);
    ck_assert_double_eq_tol(dg_test_signal(sim, "c.output"), fmin(fmax(x, -1), 1), 1e-12);
    ck_assert_double_eq(dg_test_signal(sim, "c.limited"), x > 1 ? 1.0 : x < -1 ? -1.0 : 0.0);
    worst = fmax(worst, fabs(dg_test_signal(sim, "ld.omega") -
                             signal_rig_clamped_sine_integral(t, -1, 1)));
  }
  printf("limiter: [-1, 1] integral over 2.9 s, crossings located: worst error %.2e\n", worst);
  ck_assert_double_le(worst, 1e-10);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* upper = t + 0.1 (the ramp and an offset; the bound is a sum block's
 * output), no lower: the output is min(2 sin 2πt, t + 0.1). The crossing
 * t₁ (2 sin 2πt₁ = t₁ + 0.1, ≈ 0.0087, by Newton here) is located, so
 * ∫₀^0.3 = 2(1 − cos 2πt₁)/(2π) + [τ²/2 + 0.1 τ] from t₁ to 0.3, to RK4's
 * accuracy. */
START_TEST(test_moving_bound) {
  dg_graph *g = dg_test_graphf(
      "{\"drivegraph\":1,\"blocks\":{\"c\":{\"type\":\"limiter\","
      "\"inputs\":{\"input\":\"s.value\",\"upper\":\"u.output\"}},"
      "\"u\":{\"type\":\"sum\",\"inputs\":{\"a\":\"r.value\",\"b\":0.1}},"
      "\"s\":{\"type\":\"sine_source\",\"amplitude\":2,\"frequency\":1},"
      "\"r\":{\"type\":\"table_source\",\"table\":{\"time\":[0,10],\"value\":[0,10]}},"
      "\"src\":{\"type\":\"torque_source\",\"inputs\":{\"command\":\"c.output\"}},"
      "\"ld\":{\"type\":\"load\",\"inertia\":1}},\"connections\":[[\"src.out\",\"ld.in\"]]}");
  const double w = 2 * SIGNAL_RIG_PI;
  double t1 = 0.01;
  for (int i = 0; i < 50; i++)
    t1 -= (2 * sin(w * t1) - t1 - 0.1) / (2 * w * cos(w * t1) - 1);
  dg_sim *sim = dg_test_sim(g);
  for (int k = 1; k <= 20; k++) {
    signal_rig_run_to(sim, 0.05 * k);
    double t = dg_sim_time(sim), x = 2 * sin(w * t);
    ck_assert_double_eq_tol(dg_test_signal(sim, "c.output"), fmin(x, t + 0.1), 1e-12);
    if (k == 6) {
      double want = 2 * (1 - cos(w * t1)) / w + (0.045 + 0.03) - (t1 * t1 / 2 + 0.1 * t1);
      double err = fabs(dg_test_signal(sim, "ld.omega") - want);
      printf("limiter: moving bound, crossing at %.6f s located: integral error %.2e\n", t1, err);
      ck_assert_double_le(err, 1e-10);
    }
  }
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("limiter");
  TCase *tc = tcase_create("limiter");
  tcase_add_test(tc, test_constant_bounds);
  tcase_add_test(tc, test_moving_bound);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return dg_test_run(suite()); }
