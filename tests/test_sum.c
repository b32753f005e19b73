/* sum: a weighted sum, a difference, unbound terms 0, and its integral
 * through the rig. */
#include "signal_rig.h"

/* a = 2 sin 2πt, b = t, c unbound, d = 3 (a constant); k = (1, −1, 5, 0.5):
 * output = 2 sin 2πt − t + 1.5, exact at every step;
 * ld.omega = 2(1 − cos 2πt)/(2π) − t²/2 + 1.5 t (RK4: 1e-10 over 2 s). */
START_TEST(test_difference) {
  dg_graph *g = signal_rig("\"type\":\"sum\",\"k_b\":-1,\"k_c\":5,\"k_d\":0.5,"
                           "\"inputs\":{\"a\":\"s.value\",\"b\":\"r.value\",\"d\":3}");
  dg_sim *sim = dg_test_sim(g);
  for (int k = 1; k <= 20; k++) {
    signal_rig_run_to(sim, 0.1 * k);
    double t = dg_sim_time(sim), w = 2 * SIGNAL_RIG_PI;
    ck_assert_double_eq_tol(dg_test_signal(sim, "c.output"), 2 * sin(w * t) - t + 1.5, 1e-12);
    ck_assert_double_eq_tol(dg_test_signal(sim, "ld.omega"),
                            2 * (1 - cos(w * t)) / w - t * t / 2 + 1.5 * t, 1e-10);
  }
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* With nothing bound the sum is 0 and the load stays at rest. */
START_TEST(test_empty) {
  dg_graph *g = signal_rig("\"type\":\"sum\"");
  dg_sim *sim = dg_test_sim(g);
  signal_rig_run_to(sim, 0.5);
  ck_assert_double_eq(dg_test_signal(sim, "c.output"), 0.0);
  ck_assert_double_eq(dg_test_signal(sim, "ld.omega"), 0.0);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("sum");
  TCase *tc = tcase_create("sum");
  tcase_add_test(tc, test_difference);
  tcase_add_test(tc, test_empty);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return dg_test_run(suite()); }
