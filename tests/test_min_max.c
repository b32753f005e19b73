/* min_max: min(2 sin 2πt, 1) and max(2 sin 2πt, −0.5) against the closed
 * forms, their integrals through the rig with the crossings located, the
 * `selected` signal, and the kind's choices. */
#include "signal_rig.h"

static void check_kind(const char *kind, double lo, double hi, double b) {
  char block[256];
  snprintf(block, sizeof block,
           "\"type\":\"min_max\",\"kind\":\"%s\",\"inputs\":{\"a\":\"s.value\",\"b\":%g}", kind,
           b);
  dg_graph *g = signal_rig(block);
  dg_sim *sim = dg_test_sim(g);
  double worst = 0.0;
  for (int k = 1; k <= 25; k++) {
    signal_rig_run_to(sim, 0.117 * k);
    double t = dg_sim_time(sim), x = 2 * sin(2 * SIGNAL_RIG_PI * t);
    double want = fmin(fmax(x, lo), hi);
    ck_assert_double_eq_tol(dg_test_signal(sim, "c.output"), want, 1e-12);
    ck_assert_double_eq(dg_test_signal(sim, "c.selected"), want == x ? 0.0 : 1.0);
    worst = fmax(worst, fabs(dg_test_signal(sim, "ld.omega") -
                             signal_rig_clamped_sine_integral(t, lo, hi)));
  }
  printf("min_max %s: integral over 2.9 s, crossings located: worst error %.2e\n", kind, worst);
  ck_assert_double_le(worst, 1e-10);
  dg_sim_free(sim);
  dg_graph_free(g);
}

START_TEST(test_min) { check_kind("min", -INFINITY, 1.0, 1.0); }
END_TEST

START_TEST(test_max) { check_kind("max", -0.5, INFINITY, -0.5); }
END_TEST

START_TEST(test_bad_kind) {
  signal_rig_error("/blocks/c/kind",
                   "must be one of \"min\", \"max\" (got \"mid\"); did you mean \"min\"?",
                   "\"type\":\"min_max\",\"kind\":\"mid\",\"inputs\":{\"a\":1,\"b\":2}");
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("min_max");
  TCase *tc = tcase_create("min_max");
  tcase_add_test(tc, test_min);
  tcase_add_test(tc, test_max);
  tcase_add_test(tc, test_bad_kind);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return dg_test_run(suite()); }
