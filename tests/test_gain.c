/* gain: output = k·input + offset against the sine it scales, its integral
 * through the rig, and the required input. */
#include "signal_rig.h"

/* k = −1.5, offset 0.25 on 2 sin 2πt: the output at every step to round-off
 * and ld.omega = 0.25 t − 3 (1 − cos 2πt)/(2π), RK4 on a smooth sine at
 * dt 1e-3 (local error (2π dt)⁵/120 ≈ 8e-14): 1e-10 over 2 s. */
START_TEST(test_scaled_sine) {
  dg_graph *g = signal_rig("\"type\":\"gain\",\"gain\":-1.5,\"offset\":0.25,"
                           "\"inputs\":{\"input\":\"s.value\"}");
  dg_sim *sim = dg_test_sim(g);
  for (int k = 1; k <= 20; k++) {
    signal_rig_run_to(sim, 0.1 * k);
    double t = dg_sim_time(sim), w = 2 * SIGNAL_RIG_PI;
    ck_assert_double_eq_tol(dg_test_signal(sim, "c.output"), 0.25 - 3.0 * sin(w * t), 1e-12);
    ck_assert_double_eq_tol(dg_test_signal(sim, "ld.omega"), 0.25 * t - 3.0 * (1 - cos(w * t)) / w,
                            1e-10);
  }
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

START_TEST(test_unbound) {
  signal_rig_error("/blocks/c/inputs",
                   "input \"input\" (the signal scaled) must be bound: \"inputs\": { \"input\": "
                   "\"<channel>\" | \"<block>.<signal>\" | number }",
                   "\"type\":\"gain\"");
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("gain");
  TCase *tc = tcase_create("gain");
  tcase_add_test(tc, test_scaled_sine);
  tcase_add_test(tc, test_unbound);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return dg_test_run(suite()); }
