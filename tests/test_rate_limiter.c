/* rate_limiter: an input stepping 0 → 1 → 0, followed at the rising and
 * falling rates and then as a lag, with the switch times located; the
 * start, the initial value and `limited`, all against closed forms. */
#include "signal_rig.h"

/* rising 2/s, falling 4/s, tau 0.05 s; the channel x steps 0 → 1 at
 * t = 0.2 and back to 0 at t = 1.
 *  t < 0.2:        y = 0 (y starts at the input)
 *  0.2 … 0.65:     ramp at 2/s: y = 2 (t − 0.2), until the lag's rate
 *                  (1 − y)/tau falls to 2, at y = 0.9, t = 0.65
 *  0.65 … 1:       lag: y = 1 − 0.1 e^−(t−0.65)/tau
 *  1 … t₃:         ramp at −4/s from y₁ = y(1) until −y/tau = −4, y = 0.2:
 *                  t₃ = 1 + (y₁ − 0.2)/4
 *  t₃ …:           lag: y = 0.2 e^−(t−t₃)/tau
 * RK4 on the lag at dt 1e-3 (λ dt = 0.02: 3e-11 relative a step): 1e-9. */
static double ramp_closed_form(double t) {
  const double tau = 0.05, y1 = 1 - 0.1 * exp(-(1 - 0.65) / tau), t3 = 1 + (y1 - 0.2) / 4;
  if (t <= 0.2)
    return 0.0;
  if (t <= 0.65)
    return 2 * (t - 0.2);
  if (t <= 1.0)
    return 1 - 0.1 * exp(-(t - 0.65) / tau);
  if (t <= t3)
    return y1 - 4 * (t - 1);
  return 0.2 * exp(-(t - t3) / tau);
}

START_TEST(test_steps) {
  static const double st[] = {0.0, 0.2, 1.0}, sv[] = {0.0, 1.0, 0.0};
  dg_graph *g = signal_rig("\"type\":\"rate_limiter\",\"rising\":2,\"falling\":4,\"tau\":0.05,"
                           "\"inputs\":{\"input\":\"x\"}");
  dg_sim *sim = dg_test_sim(g);
  signal_rig_steps(sim, "x", 3, st, sv);
  static const struct {
    double t;
    int limited;
  } at[] = {{0.1, 0}, {0.3, 1}, {0.5, 1}, {0.64, 1}, {0.66, 0}, {0.8, 0},
            {1.05, -1}, {1.15, -1}, {1.3, 0}, {1.5, 0}};
  double worst = 0.0;
  for (size_t i = 0; i < sizeof at / sizeof at[0]; i++) {
    signal_rig_run_to(sim, at[i].t);
    double t = dg_sim_time(sim);
    worst = fmax(worst, fabs(dg_test_signal(sim, "c.output") - ramp_closed_form(t)));
    ck_assert_double_eq(dg_test_signal(sim, "c.limited"), at[i].limited);
  }
  printf("rate_limiter: steps followed at 2 and 4 per second, then lagged: worst error %.2e\n",
         worst);
  ck_assert_double_le(worst, 1e-9);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* `initial` 3 with the input 0 and falling = rising = 1 (falling left
 * out): y = 3 − t until −y/tau = −1, y = 0.05 at t = 2.95, then
 * 0.05 e^−(t−2.95)/0.05. The initial value set through the signal works
 * the same way (y from 2: the lag from y = 0.05 at t = 1.95). */
START_TEST(test_initial) {
  for (int how = 0; how < 2; how++) {
    dg_graph *g = signal_rig(how == 0 ? "\"type\":\"rate_limiter\",\"rising\":1,\"tau\":0.05,"
                                        "\"initial\":3,\"inputs\":{\"input\":0}"
                                      : "\"type\":\"rate_limiter\",\"rising\":1,\"tau\":0.05,"
                                        "\"inputs\":{\"input\":0}");
    dg_sim *sim = dg_test_sim(g);
    double y0 = 3.0;
    if (how == 1) {
      dg_test_set_initial1(sim, "c.output", 2.0);
      y0 = 2.0;
    }
    double t_end = y0 - 0.05;
    signal_rig_run_to(sim, 1.0);
    ck_assert_double_eq_tol(dg_test_signal(sim, "c.output"), y0 - 1.0, 1e-12);
    ck_assert_double_eq_tol(dg_test_signal(sim, "c.rate"), -1.0, 1e-12);
    signal_rig_run_to(sim, t_end + 0.1);
    ck_assert_double_eq_tol(dg_test_signal(sim, "c.output"), 0.05 * exp(-2.0), 1e-9);
    dg_sim_free(sim);
    dg_graph_free(g);
  }
}
END_TEST

START_TEST(test_bad) {
  signal_rig_error(
      "/blocks/c/falling", "must be > 0 (got -1)",
      "\"type\":\"rate_limiter\",\"rising\":1,\"falling\":-1,\"inputs\":{\"input\":1}");
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("rate_limiter");
  TCase *tc = tcase_create("rate_limiter");
  tcase_add_test(tc, test_steps);
  tcase_add_test(tc, test_initial);
  tcase_add_test(tc, test_bad);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return dg_test_run(suite()); }
