/* product: gain·a·b·c·d with c, d unbound (1), against the closed form and
 * its integral through the rig; a and b must be bound. */
#include "signal_rig.h"

/* a = t, b = 2 sin 2πt, d = −0.5, gain 3: output = −3 t sin 2πt;
 * ∫₀ᵗ τ sin wτ dτ = (sin wt − wt cos wt)/w², so
 * ld.omega = −3 (sin wt − wt cos wt)/w² (RK4: 1e-10 over 2 s). */
START_TEST(test_product) {
  dg_graph *g = signal_rig("\"type\":\"product\",\"gain\":3,"
                           "\"inputs\":{\"a\":\"r.value\",\"b\":\"s.value\",\"d\":-0.5}");
  dg_sim *sim = dg_test_sim(g);
  for (int k = 1; k <= 20; k++) {
    signal_rig_run_to(sim, 0.1 * k);
    double t = dg_sim_time(sim), w = 2 * SIGNAL_RIG_PI;
    ck_assert_double_eq_tol(dg_test_signal(sim, "c.output"), -3 * t * sin(w * t), 1e-12);
    ck_assert_double_eq_tol(dg_test_signal(sim, "ld.omega"),
                            -3 * (sin(w * t) - w * t * cos(w * t)) / (w * w), 1e-10);
  }
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

START_TEST(test_unbound) {
  signal_rig_error("/blocks/c/inputs",
                   "input \"b\" (second factor) must be bound: \"inputs\": { \"b\": "
                   "\"<channel>\" | \"<block>.<signal>\" | number }",
                   "\"type\":\"product\",\"inputs\":{\"a\":2}");
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("product");
  TCase *tc = tcase_create("product");
  tcase_add_test(tc, test_product);
  tcase_add_test(tc, test_unbound);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return dg_test_run(suite()); }
