/* sine_source: exact values, the start as an event, a port-less block in a
 * graph; errors. */
#include "testutil.h"

#include <math.h>

#define TWO_PI 6.28318530717958647692

/* The sine (its params after "type") beside a torque_source driven by it,
 * on a 1 kg·m² load: ω is the integral of the value. */
static dg_graph *rig(const char *params) {
  return dg_test_graphf(
      "{\"drivegraph\":1,\"blocks\":{\"sine\":{\"type\":\"sine_source\"%s%s},"
      "\"src\":{\"type\":\"torque_source\",\"inputs\":{\"command\":\"sine.value\"}},"
      "\"ld\":{\"type\":\"load\",\"inertia\":1}},\"connections\":[[\"src.out\",\"ld.in\"]]}",
      params[0] ? "," : "", params);
}

/* The value is the formula of the step's end time: the same expression, so
 * only the time's round-off (n·dt summed step by step) separates them. */
START_TEST(test_values) {
  const double A = 2.0, f = 5.0, phi = 0.3, off = 1.0, ts = 0.25, dt = 1e-3;
  dg_graph *g = rig("\"amplitude\":2,\"frequency\":5,\"phase\":0.3,\"offset\":1,"
                    "\"start_time\":0.25");
  dg_sim *sim = dg_test_sim(g);
  ck_assert_double_eq(dg_test_signal(sim, "sine.value"), off); /* t = 0 < start_time */
  for (int i = 1; i <= 1000; i++) {
    dg_test_step(sim, 1, dt);
    double t = i * dt;
    double expect = t < ts ? off : off + A * sin(TWO_PI * f * (t - ts) + phi);
    /* dvalue/dt <= 2π f A ≈ 63/s times the time's round-off (~1e-15 s) */
    ck_assert_double_eq_tol(dg_test_signal(sim, "sine.value"), expect, 1e-12);
  }
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* Defaults: amplitude 1, 1 Hz, no phase, no offset, from t = 0. */
START_TEST(test_defaults) {
  dg_graph *g = rig("");
  dg_sim *sim = dg_test_sim(g);
  dg_test_step(sim, 1, 0.25);
  ck_assert_double_eq_tol(dg_test_signal(sim, "sine.value"), 1.0, 1e-15);
  dg_test_step(sim, 1, 0.5);
  ck_assert_double_eq_tol(dg_test_signal(sim, "sine.value"), -1.0, 1e-15);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* A jump at a start inside a step (phase π/2: the value leaps from offset to
 * offset + A at ts = 0.2505): the event ends a segment there, so RK4
 * integrates ω = ∫ value exactly up to its own error:
 *   ω(t) = off·t + A/(2πf) (cos φ − cos(2πf (t − ts) + φ))     (t >= ts).
 * Without the event one step straddles the jump and ω is off by up to
 * A·dt/2 = 1e-3. */
START_TEST(test_start_event) {
  const double A = 2.0, f = 1.5, phi = 1.5707963267948966, off = 0.5, ts = 0.2505, dt = 1e-3;
  dg_graph *g = rig("\"amplitude\":2,\"frequency\":1.5,\"phase\":1.5707963267948966,"
                    "\"offset\":0.5,\"start_time\":0.2505");
  dg_sim *sim = dg_test_sim(g);
  dg_test_step(sim, 1000, dt);
  double w = off * 1.0 + A / (TWO_PI * f) * (cos(phi) - cos(TWO_PI * f * (1.0 - ts) + phi));
  /* RK4 at dt = 1e-3 on a sine of 1.5 Hz: global error ~ (2πf dt)⁴ ≈ 1e-11 */
  ck_assert_double_eq_tol(dg_test_signal(sim, "ld.omega"), w, 1e-10);
  ck_assert_int_eq(dg_sim_event_count(sim), 1);
  ck_assert_double_eq_tol(dg_sim_last_event_time(sim), ts, 1e-12);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* A start on a step boundary (and at 0) is no event. */
START_TEST(test_start_on_step) {
  dg_graph *g = rig("\"start_time\":0.5");
  dg_sim *sim = dg_test_sim(g);
  dg_test_step(sim, 100, 0.01);
  ck_assert_int_eq(dg_sim_event_count(sim), 0);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

static const dg_test_bad_param bad[] = {
    {"\"frequency\":-1", "/blocks/sine/frequency", "must be >= 0 (got -1)"},
    {"\"amplitude\":\"big\"", "/blocks/sine/amplitude", NULL},
    {"\"freq\":1", "/blocks/sine/freq", "unknown parameter"},
};

START_TEST(test_bad_params) {
  const char *fmt =
      "{\"drivegraph\":1,\"blocks\":{\"sine\":{\"type\":\"sine_source\",%s},"
      "\"src\":{\"type\":\"torque_source\",\"inputs\":{\"command\":\"sine.value\"}},"
      "\"ld\":{\"type\":\"load\",\"inertia\":1}},\"connections\":[[\"src.out\",\"ld.in\"]]}";
  if (bad[_i].text) {
    dg_test_graph_error_at(bad[_i].path, bad[_i].text, fmt, bad[_i].params);
  } else {
    char json[1024];
    snprintf(json, sizeof json, fmt, bad[_i].params);
    dg_error e = dg_test_graph_error(json);
    ck_assert_str_eq(e.path, bad[_i].path);
  }
}
END_TEST

/* A sine's signal is no feedthrough: a source may read it while the sine
 * reads nothing; and a port-less block beside the mechanics is no
 * "unconnected" block. */
START_TEST(test_portless_in_graph) {
  dg_graph *g = rig("");
  ck_assert_int_eq(dg_graph_block_count(g), 3);
  ck_assert_int_eq(dg_graph_connection_count(g), 1);
  dg_graph_free(g);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("sine_source");
  TCase *tc = tcase_create("values");
  tcase_add_test(tc, test_values);
  tcase_add_test(tc, test_defaults);
  tcase_add_test(tc, test_start_event);
  tcase_add_test(tc, test_start_on_step);
  tcase_add_test(tc, test_portless_in_graph);
  suite_add_tcase(s, tc);
  tc = tcase_create("params");
  tcase_add_loop_test(tc, test_bad_params, 0, (int)(sizeof bad / sizeof bad[0]));
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return dg_test_run(suite()); }
