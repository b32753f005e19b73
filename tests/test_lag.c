/* lag: a step response, the start without a transient, `initial`, the
 * initial value through the signal, and a lag in a loop (its output is a
 * state: no algebraic loop), against closed forms. */
#include "signal_rig.h"

/* T = 0.2, k = 2, the channel x steps 0 → 1 at 0.5: y = 0 before,
 * 2 (1 − e^−(t−0.5)/T) after (RK4, λ dt = 0.005: 1e-12). */
START_TEST(test_step) {
  static const double st[] = {0.0, 0.5}, sv[] = {0.0, 1.0};
  dg_graph *g = signal_rig("\"type\":\"lag\",\"time_constant\":0.2,\"gain\":2,"
                           "\"inputs\":{\"input\":\"x\"}");
  dg_sim *sim = dg_test_sim(g);
  signal_rig_steps(sim, "x", 2, st, sv);
  for (int k = 1; k <= 20; k++) {
    signal_rig_run_to(sim, 0.1 * k);
    double t = dg_sim_time(sim);
    double want = t <= 0.5 ? 0.0 : 2 * (1 - exp(-(t - 0.5) / 0.2));
    ck_assert_double_eq_tol(dg_test_signal(sim, "c.output"), want, 1e-11);
  }
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* The input 3, k = 2: y starts at 6 and stays (no transient from the
 * start); with `initial` 1: y = 6 − 5 e^−t/T; set to 4 as an initial
 * value: 6 − 2 e^−t/T. */
START_TEST(test_start) {
  static const char *const blocks[] = {
      "\"type\":\"lag\",\"time_constant\":0.2,\"gain\":2,\"inputs\":{\"input\":3}",
      "\"type\":\"lag\",\"time_constant\":0.2,\"gain\":2,\"initial\":1,\"inputs\":{\"input\":3}",
      "\"type\":\"lag\",\"time_constant\":0.2,\"gain\":2,\"inputs\":{\"input\":3}",
  };
  static const double y0[] = {6.0, 1.0, 4.0};
  for (int i = 0; i < 3; i++) {
    dg_graph *g = signal_rig(blocks[i]);
    dg_sim *sim = dg_test_sim(g);
    if (i == 2)
      dg_test_set_initial1(sim, "c.output", 4.0);
    dg_error err;
    ck_assert_msg(dg_sim_start(sim, &err) == DG_OK, "%s", err.text);
    ck_assert_double_eq_tol(dg_test_signal(sim, "c.output"), y0[i], 1e-15);
    signal_rig_run_to(sim, 0.3);
    ck_assert_double_eq_tol(dg_test_signal(sim, "c.output"), 6 + (y0[i] - 6) * exp(-1.5), 1e-11);
    dg_sim_free(sim);
    dg_graph_free(g);
  }
}
END_TEST

/* A lag in a loop: its input is 1 − y (a sum of 1 and a gain of −1 on its
 * own output, which is a state, so no algebraic loop): T y' = 1 − 2y from
 * y(0) = 0 (`initial`), y = 0.5 (1 − e^−2t/T); T = 0.5, at t = 0.5. */
START_TEST(test_loop) {
  dg_graph *g = dg_test_graphf(
      "{\"drivegraph\":1,\"blocks\":{\"c\":{\"type\":\"lag\",\"time_constant\":0.5,"
      "\"initial\":0,\"inputs\":{\"input\":\"u.output\"}},"
      "\"n\":{\"type\":\"gain\",\"gain\":-1,\"inputs\":{\"input\":\"c.output\"}},"
      "\"u\":{\"type\":\"sum\",\"inputs\":{\"a\":1,\"b\":\"n.output\"}},"
      "\"src\":{\"type\":\"torque_source\",\"inputs\":{\"command\":\"c.output\"}},"
      "\"ld\":{\"type\":\"load\",\"inertia\":1}},\"connections\":[[\"src.out\",\"ld.in\"]]}");
  dg_sim *sim = dg_test_sim(g);
  signal_rig_run_to(sim, 0.5);
  ck_assert_double_eq_tol(dg_test_signal(sim, "c.output"), 0.5 * (1 - exp(-2.0)), 1e-11);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("lag");
  TCase *tc = tcase_create("lag");
  tcase_add_test(tc, test_step);
  tcase_add_test(tc, test_start);
  tcase_add_test(tc, test_loop);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return dg_test_run(suite()); }
