/* lookup: a table of the ramp r = t with ends held and extrapolated, the
 * output at points, its integral through the rig with the breakpoints
 * located (a step that does not divide them), the piece, bad tables. */
#include "signal_rig.h"

/* Points (1, 0), (2, 3), (4, −1). f and its integral F from 0, by hand:
 * hold:   f = 0 (t < 1), 3(t − 1) (1..2), 3 − 2(t − 2) (2..4), −1 (t > 4)
 * linear: 3(t − 1) below 1 too, −1 − 2(t − 4) above 4. */
static double f_of(double t, bool linear) {
  if (t < 1)
    return linear ? 3 * (t - 1) : 0.0;
  if (t < 2)
    return 3 * (t - 1);
  if (t < 4)
    return 3 - 2 * (t - 2);
  return linear ? -1 - 2 * (t - 4) : -1.0;
}

static double F_of(double t, bool linear) {
  /* piece integrals: [0,1] hold 0, linear ∫3(τ−1) = −1.5; [1,2]: 1.5;
   * [2,4]: ∫ 3 − 2u du over u in [0, 2] = 6 − 4 = 2 */
  if (t < 1)
    return linear ? 1.5 * (t - 1) * (t - 1) - 1.5 : 0.0;
  double base = linear ? -1.5 : 0.0;
  if (t < 2)
    return base + 1.5 * (t - 1) * (t - 1);
  if (t < 4)
    return base + 1.5 + 3 * (t - 2) - (t - 2) * (t - 2);
  double u = t - 4;
  return base + 3.5 + (linear ? -u - u * u : -u);
}

static void check(bool linear) {
  char block[256];
  snprintf(block, sizeof block,
           "\"type\":\"lookup\",\"table\":{\"x\":[1,2,4],\"y\":[0,3,-1]},"
           "\"extrapolation\":\"%s\",\"inputs\":{\"input\":\"r.value\"}",
           linear ? "linear" : "hold");
  dg_graph *g = signal_rig(block);
  dg_sim *sim = dg_test_sim(g);
  const double dt = 3e-3; /* 1, 2 and 4 s fall inside steps */
  double worst = 0.0;
  for (int k = 1; k <= 30; k++) {
    dg_test_step(sim, 60, dt);
    double t = dg_sim_time(sim);
    ck_assert_double_eq_tol(dg_test_signal(sim, "c.output"), f_of(t, linear), 1e-12);
    worst = fmax(worst, fabs(dg_test_signal(sim, "ld.omega") - F_of(t, linear)));
    double piece = t < 1 ? -1 : t < 2 ? 0 : t < 4 ? 1 : 2;
    ck_assert_double_eq(dg_test_signal(sim, "c.piece"), piece);
  }
  printf("lookup (%s): integral over 5.4 s at dt %g, breakpoints located: worst error %.2e\n",
         linear ? "linear" : "hold", dt, worst);
  ck_assert_double_le(worst, 1e-11);
  dg_sim_free(sim);
  dg_graph_free(g);
}

START_TEST(test_hold) { check(false); }
END_TEST

START_TEST(test_linear) { check(true); }
END_TEST

/* One point: a constant. */
START_TEST(test_one_point) {
  dg_graph *g = signal_rig("\"type\":\"lookup\",\"table\":{\"x\":[0],\"y\":[2.5]},"
                           "\"extrapolation\":\"linear\",\"inputs\":{\"input\":\"s.value\"}");
  dg_sim *sim = dg_test_sim(g);
  signal_rig_run_to(sim, 0.4);
  ck_assert_double_eq(dg_test_signal(sim, "c.output"), 2.5);
  ck_assert_double_eq_tol(dg_test_signal(sim, "ld.omega"), 1.0, 1e-12);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

START_TEST(test_bad_table) {
  signal_rig_error(
      "/blocks/c/table/x/2", "must be strictly increasing (1 after 2)",
      "\"type\":\"lookup\",\"table\":{\"x\":[0,2,1],\"y\":[0,1,2]},\"inputs\":{\"input\":1}");
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("lookup");
  TCase *tc = tcase_create("lookup");
  tcase_add_test(tc, test_hold);
  tcase_add_test(tc, test_linear);
  tcase_add_test(tc, test_one_point);
  tcase_add_test(tc, test_bad_table);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return dg_test_run(suite()); }
