/* comparator: 2 sin 2πt against on_above 1 / off_below −1, the state's
 * switch times located, the switched output's integral, the start rule,
 * its boolean state driving a boolean input, bad thresholds. */
#include "signal_rig.h"

/* The state turns 1 where 2 sin 2πt rises to 1 (t = 1/12 + n) and 0 where
 * it falls to −1 (t = 7/12 + n); output a = 3 while 1, b = −1 while 0, so
 * by t = 0.5 the load has 3·(5/12) − 1/12 = 14/12 and by t = 2 (on 1 s,
 * off 1 s) 3 − 1 = 2. A step of 2.5 ms puts every switch inside a step. */
START_TEST(test_hysteresis) {
  dg_graph *g = signal_rig("\"type\":\"comparator\",\"on_above\":1,\"off_below\":-1,"
                           "\"inputs\":{\"input\":\"s.value\",\"a\":3,\"b\":-1}");
  dg_sim *sim = dg_test_sim(g);
  const double dt = 2.5e-3;
  ck_assert_double_eq(dg_test_signal(sim, "c.state"), 0.0);
  dg_test_step(sim, 200, dt);
  ck_assert_double_eq(dg_test_signal(sim, "c.state"), 1.0);
  ck_assert_double_eq(dg_test_signal(sim, "c.output"), 3.0);
  ck_assert_double_eq_tol(dg_test_signal(sim, "ld.omega"), 14.0 / 12.0, 1e-12);
  dg_test_step(sim, 100, dt); /* t = 0.75: off since 7/12 */
  ck_assert_double_eq(dg_test_signal(sim, "c.state"), 0.0);
  dg_test_step(sim, 500, dt);
  ck_assert_double_eq_tol(dg_test_signal(sim, "ld.omega"), 2.0, 1e-12);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* The start: the input 0.5 between the thresholds takes initial_state;
 * at or above on_above it starts 1 whatever initial_state says. */
START_TEST(test_start) {
  static const struct {
    const char *extra;
    double input, state;
  } c[] = {{"", 0.5, 0.0}, {",\"initial_state\":true", 0.5, 1.0}, {"", 1.0, 1.0},
           {",\"initial_state\":true", -1.5, 0.0}};
  for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
    char block[256];
    snprintf(block, sizeof block,
             "\"type\":\"comparator\",\"on_above\":1,\"off_below\":-1%s,"
             "\"inputs\":{\"input\":%g}",
             c[i].extra, c[i].input);
    dg_graph *g = signal_rig(block);
    dg_sim *sim = dg_test_sim(g);
    signal_rig_run_to(sim, 0.1);
    ck_assert_double_eq(dg_test_signal(sim, "c.state"), c[i].state);
    ck_assert_double_eq_tol(dg_test_signal(sim, "ld.omega"), 0.1 * c[i].state, 1e-14);
    dg_sim_free(sim);
    dg_graph_free(g);
  }
}
END_TEST

/* `state` is boolean: it may drive a motor's drive cut; a sum's
 * output (not boolean) may not. */
START_TEST(test_boolean) {
  const char *fmt =
      "{\"drivegraph\":1,\"blocks\":{\"c\":{\"type\":\"comparator\",\"on_above\":1,"
      "\"inputs\":{\"input\":\"s.value\"}},\"u\":{\"type\":\"sum\",\"inputs\":{\"a\":1}},"
      "\"s\":{\"type\":\"sine_source\"},"
      "\"e\":{\"type\":\"motor\",\"inertia\":0.2,\"max_torque\":100,\"max_rpm\":9000,\"inputs\":{\"throttle\":1,\"throttle_cut\":\"%s\"}},"
      "\"ld\":{\"type\":\"load\",\"inertia\":1}},\"connections\":[[\"e.out\",\"ld.in\"]]}";
  dg_graph *g = dg_test_graphf(fmt, "c.state");
  dg_graph_free(g);
  dg_error err = dg_test_graph_error(
      "{\"drivegraph\":1,\"blocks\":{\"u\":{\"type\":\"sum\",\"inputs\":{\"a\":1}},"
      "\"e\":{\"type\":\"motor\",\"inertia\":0.2,\"max_torque\":100,\"max_rpm\":9000,\"inputs\":{\"throttle\":1,\"throttle_cut\":\"u.output\"}},"
      "\"ld\":{\"type\":\"load\",\"inertia\":1}},\"connections\":[[\"e.out\",\"ld.in\"]]}");
  ck_assert_str_eq(err.path, "/blocks/e/inputs/throttle_cut");
}
END_TEST

START_TEST(test_bad_thresholds) {
  signal_rig_error(
      "/blocks/c/off_below", "must be <= on_above 1 (got 2)",
      "\"type\":\"comparator\",\"on_above\":1,\"off_below\":2,\"inputs\":{\"input\":1}");
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("comparator");
  TCase *tc = tcase_create("comparator");
  tcase_add_test(tc, test_hysteresis);
  tcase_add_test(tc, test_start);
  tcase_add_test(tc, test_boolean);
  tcase_add_test(tc, test_bad_thresholds);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return dg_test_run(suite()); }
