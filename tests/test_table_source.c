/* table_source: interpolation and held ends, period and offset, the scale
 * input, breakpoints as events (exact integration of what the value
 * drives); errors. */
#include "testutil.h"

#include <math.h>

/* RK4 on a piecewise-linear torque with every breakpoint a segment end is
 * exact for the quadratic speed: only round-off is left. */
static const double EXACT = 1e-12;

/* The table (its params after "type") beside a torque_source whose command
 * is its value, on a 1 kg·m² load: ω is the integral of the value. */
static dg_graph *rig(const char *params) {
  return dg_test_graphf(
      "{\"drivegraph\":1,\"blocks\":{\"tab\":{\"type\":\"table_source\",%s},"
      "\"src\":{\"type\":\"torque_source\",\"inputs\":{\"command\":\"tab.value\"}},"
      "\"ld\":{\"type\":\"load\",\"inertia\":1}},\"connections\":[[\"src.out\",\"ld.in\"]]}",
      params);
}

/* Linear between breakpoints, held before the first and after the last. */
START_TEST(test_interpolation) {
  dg_graph *g = rig("\"table\":{\"time\":[1,2,4],\"value\":[0,10,-2]}");
  dg_sim *sim = dg_test_sim(g);
  static const double t[] = {0.5, 1.5, 2.0, 3.0, 4.0, 5.0};
  static const double v[] = {0.0, 5.0, 10.0, 4.0, -2.0, -2.0};
  double now = 0.0;
  ck_assert_double_eq(dg_test_signal(sim, "tab.value"), 0.0);
  for (int i = 0; i < 6; i++) {
    dg_test_step(sim, 1, t[i] - now);
    now = t[i];
    ck_assert_double_eq_tol(dg_test_signal(sim, "tab.value"), v[i], EXACT);
    ck_assert_double_eq_tol(dg_test_signal(sim, "tab.unscaled"), v[i], EXACT);
  }
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* Period 2 over a table on [0, 1] shifted by 0.5 s: value(t) = table(τ')
 * with τ' = (t − 0.5) mod 2 — a ramp 0 → 1 over [0.5, 1.5], 1 held to 2.5,
 * then again (before 0.5: the previous period's held end, 1). */
START_TEST(test_period_and_offset) {
  dg_graph *g = rig("\"table\":{\"time\":[0,1],\"value\":[0,1]},\"period\":2,\"time_offset\":0.5");
  dg_sim *sim = dg_test_sim(g);
  static const double t[] = {0.25, 1.0, 2.0, 2.5, 2.75, 4.5, 5.25};
  static const double v[] = {1.0, 0.5, 1.0, 0.0, 0.25, 0.0, 0.75};
  double now = 0.0;
  ck_assert_double_eq(dg_test_signal(sim, "tab.value"), 1.0);
  for (int i = 0; i < 7; i++) {
    dg_test_step(sim, 1, t[i] - now);
    now = t[i];
    ck_assert_double_eq_tol(dg_test_signal(sim, "tab.value"), v[i], EXACT);
  }
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* The scale input: a constant, then a channel. */
START_TEST(test_scale) {
  dg_graph *g = rig("\"table\":{\"time\":[0,1],\"value\":[2,2]},\"inputs\":{\"scale\":-1.5}");
  dg_sim *sim = dg_test_sim(g);
  dg_test_step(sim, 1, 0.5);
  ck_assert_double_eq(dg_test_signal(sim, "tab.value"), -3.0);
  ck_assert_double_eq(dg_test_signal(sim, "tab.unscaled"), 2.0);
  ck_assert_double_eq_tol(dg_test_signal(sim, "ld.omega"), -1.5, EXACT);
  dg_sim_free(sim);
  dg_graph_free(g);
  g = rig("\"table\":{\"time\":[0,1],\"value\":[2,2]},\"inputs\":{\"scale\":\"k\"}");
  sim = dg_test_sim(g);
  dg_test_set_input(sim, "k", 0.25);
  dg_test_step(sim, 1, 0.5);
  ck_assert_double_eq(dg_test_signal(sim, "tab.value"), 0.5);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* Breakpoints off the step grid (0.1234 and 0.5678, dt = 0.01): each is
 * an event, so ω = ∫ value is exact —
 *   value: 0 → 3 linearly on [0.1234, 0.5678], 3 after;
 *   ω(1) = 3 · (0.5678 − 0.1234) / 2 + 3 · (1 − 0.5678).
 * With the steps straddling the kinks it would be off by ~1e-5. */
START_TEST(test_breakpoints_are_events) {
  dg_graph *g = rig("\"table\":{\"time\":[0.1234,0.5678],\"value\":[0,3]}");
  dg_sim *sim = dg_test_sim(g);
  dg_test_step(sim, 100, 0.01);
  double w = 3.0 * (0.5678 - 0.1234) / 2.0 + 3.0 * (1.0 - 0.5678);
  ck_assert_double_eq_tol(dg_test_signal(sim, "ld.omega"), w, EXACT);
  ck_assert_int_eq(dg_sim_event_count(sim), 2);
  ck_assert_double_eq_tol(dg_sim_last_event_time(sim), 0.5678, 1e-12);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* A sawtooth (period 1 over a ramp 0 → 1 on [0, 1], shifted by 0.0037 s):
 * the value jumps from 1 to 0 at every wrap, inside a step of 0.01. The
 * segment ending at a wrap sees the end value from the left, so
 *   ω(3) = ∫₀³ frac(t − 0.0037) dt = 1.5
 * to round-off. */
START_TEST(test_sawtooth) {
  dg_graph *g = rig("\"table\":{\"time\":[0,1],\"value\":[0,1]},\"period\":1,"
                    "\"time_offset\":0.0037");
  dg_sim *sim = dg_test_sim(g);
  dg_test_step(sim, 300, 0.01);
  ck_assert_double_eq_tol(dg_test_signal(sim, "ld.omega"), 1.5, EXACT);
  /* the wraps at 0.0037, 1.0037, 2.0037 */
  ck_assert_int_eq(dg_sim_event_count(sim), 3);
  ck_assert_double_eq_tol(dg_sim_last_event_time(sim), 2.0037, 1e-12);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

static const dg_test_bad_param bad[] = {
    {"\"table\":{\"time\":[],\"value\":[]}", "/blocks/tab/table/time",
     "must have at least 2 elements (got 0)"},
    /* one breakpoint is no table: a constant is a number bound to the input */
    {"\"table\":{\"time\":[0],\"value\":[3]}", "/blocks/tab/table/time",
     "must have at least 2 elements (got 1)"},
    {"\"period\":1", "/blocks/tab/table",
     "missing required table {\"time\": [...], \"value\": [...]}"},
    {"\"table\":{\"time\":[0,1],\"value\":[0,1]},\"period\":0.5", "/blocks/tab/period",
     "must be >= the table's time span 1 s (got 0.5)"},
    {"\"table\":{\"time\":[0,1],\"value\":[0,1]},\"period\":0", "/blocks/tab/period",
     "must be > 0 (got 0)"},
    {"\"table\":{\"time\":[0,1],\"value\":[0]}", "/blocks/tab/table/value",
     "must have 2 elements like \"time\" (got 1)"},
    {"\"table\":{\"time\":[0,1],\"value\":[0,1]},\"inputs\":{\"scale\":\"tab.value\"}",
     "/blocks/tab/inputs/scale",
     "\"tab.value\": input \"scale\" follows the block's own signal \"value\", which its "
     "inputs make at the same instant: a loop through the block's own output, the input defined "
     "by itself; bind another block's signal, a channel or a number"},
};

START_TEST(test_bad_params) {
  dg_test_graph_error_at(
      bad[_i].path, bad[_i].text,
      "{\"drivegraph\":1,\"blocks\":{\"tab\":{\"type\":\"table_source\",%s},"
      "\"src\":{\"type\":\"torque_source\",\"inputs\":{\"command\":\"tab.value\"}},"
      "\"ld\":{\"type\":\"load\",\"inertia\":1}},\"connections\":[[\"src.out\",\"ld.in\"]]}",
      bad[_i].params);
}
END_TEST

/* Its unscaled signal is no feedthrough: it may feed its own scale. */
START_TEST(test_unscaled_is_no_loop) {
  dg_graph *g = rig("\"table\":{\"time\":[0,1],\"value\":[2,2]},"
                    "\"inputs\":{\"scale\":\"tab.unscaled\"}");
  dg_sim *sim = dg_test_sim(g);
  dg_test_step(sim, 1, 0.5);
  ck_assert_double_eq(dg_test_signal(sim, "tab.value"), 4.0);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("table_source");
  TCase *tc = tcase_create("values");
  tcase_add_test(tc, test_interpolation);
  tcase_add_test(tc, test_period_and_offset);
  tcase_add_test(tc, test_scale);
  tcase_add_test(tc, test_breakpoints_are_events);
  tcase_add_test(tc, test_sawtooth);
  tcase_add_test(tc, test_unscaled_is_no_loop);
  suite_add_tcase(s, tc);
  tc = tcase_create("params");
  tcase_add_loop_test(tc, test_bad_params, 0, (int)(sizeof bad / sizeof bad[0]));
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return dg_test_run(suite()); }
