/* pid: closed forms of the PI loop on an inertia, the derivative filter,
 * the anti-windup laws and the reset by hand, the states' initial values;
 * parameter and binding errors, algebraic loops. */
#include "testutil.h"

#include <math.h>
#include <stdio.h>

/* RK4 at dt = 1e-3 on these smooth loops (eigenvalues |λ| <= 20/s): a
 * global error of order (λ dt)⁴ ≈ 1e-7 relative at the worst (the filter,
 * τ = 0.05 s), 1e-12 for the PI loop; every switch is a segment end
 * (located saturation, scheduled channel steps). */
static const double RK4_TOL = 1e-9;
static const double DT = 1e-3;

/* Controller "c" (params after "type", `inputs` its inputs object) driving
 * torque_source "src" on a 1 kg·m² load "ld" with its output. */
static dg_graph *loop_rig(const char *params, const char *inputs) {
  return dg_test_graphf(
      "{\"drivegraph\":1,\"blocks\":{\"c\":{\"type\":\"pid\",%s%s\"inputs\":%s},"
      "\"src\":{\"type\":\"torque_source\",\"inputs\":{\"command\":\"c.output\"}},"
      "\"ld\":{\"type\":\"load\",\"inertia\":1}},\"connections\":[[\"src.out\",\"ld.in\"]]}",
      params, params[0] ? "," : "", inputs);
}

/* A channel of the simulation as steps: value v[k] from t[k]. */
static void steps(dg_sim *sim, const char *name, int n, const double *t, const double *v) {
  dg_error err;
  int ch = dg_sim_input_find(sim, name);
  ck_assert_msg(ch >= 0, "no channel %s", name);
  ck_assert_msg(dg_sim_set_input_schedule(sim, ch, n, t, v, true, &err) == DG_OK, "%s", err.text);
}

/* Steps to time t (a multiple of DT from the current time). */
static void run_to(dg_sim *sim, double t) {
  long n = lround((t - dg_sim_time(sim)) / DT);
  dg_test_step(sim, (int)n, DT);
}

/* ---- the PI loop on an inertia ---------------------------------------- */

/* J ω' = u, u = kp (r − ω) + i, i' = ki (r − ω) with J = 1, kp = 2, ki = 5,
 * r = 10 from rest: z = ω − r solves z'' + 2 z' + 5 z = 0, z(0) = −r,
 * z'(0) = kp r, so
 *   ω = r + e^−t (−r cos 2t + r/2 sin 2t),  u = z' = e^−t (2r cos 2t + 1.5 r sin 2t),
 *   i = u + kp z. */
START_TEST(test_pi_inertia) {
  const double r = 10.0, kp = 2.0;
  dg_graph *g = loop_rig("\"kp\":2,\"ki\":5", "{\"setpoint\":10,\"measurement\":\"ld.omega\"}");
  dg_sim *sim = dg_test_sim(g);
  double worst = 0.0;
  for (int k = 1; k <= 50; k++) {
    run_to(sim, 0.1 * k);
    double t = dg_sim_time(sim), ex = exp(-t);
    double z = ex * (-r * cos(2 * t) + 0.5 * r * sin(2 * t));
    double u = ex * (2 * r * cos(2 * t) + 1.5 * r * sin(2 * t));
    double dw = fabs(dg_test_signal(sim, "ld.omega") - (r + z));
    double du = fabs(dg_test_signal(sim, "c.output") - u);
    double di = fabs(dg_test_signal(sim, "c.i") - (u + kp * z));
    worst = fmax(worst, fmax(dw, fmax(du, di)));
    ck_assert_double_eq_tol(dg_test_signal(sim, "c.error"), -z, RK4_TOL);
  }
  printf("pid: PI loop on an inertia, worst |error| over 5 s at dt %g: %.2e\n", DT, worst);
  ck_assert_double_le(worst, RK4_TOL);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* ---- the derivative --------------------------------------------------- */

/* On the measurement, a ramp ω = 2t (a constant 2 N·m): v = −2t, x' =
 * (v − x)/td from x(0) = v(0) = 0, so d = kd (v − x)/td = −2 kd (1 − e^−t/td). */
START_TEST(test_derivative_ramp) {
  const double kd = 0.5, td = 0.1;
  dg_graph *g = dg_test_graph(
      "{\"drivegraph\":1,\"blocks\":{\"c\":{\"type\":\"pid\",\"kp\":0,\"kd\":0.5,\"td\":0.1,"
      "\"inputs\":{\"measurement\":\"ld.omega\"}},"
      "\"src\":{\"type\":\"torque_source\",\"torque\":2},"
      "\"ld\":{\"type\":\"load\",\"inertia\":1}},\"connections\":[[\"src.out\",\"ld.in\"]]}");
  dg_sim *sim = dg_test_sim(g);
  for (int k = 1; k <= 10; k++) {
    run_to(sim, 0.05 * k);
    double t = dg_sim_time(sim);
    ck_assert_double_eq_tol(dg_test_signal(sim, "c.d"), -2.0 * kd * (1.0 - exp(-t / td)),
                            RK4_TOL);
    ck_assert_double_eq_tol(dg_test_signal(sim, "c.output"), dg_test_signal(sim, "c.d"), 1e-15);
  }
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* On the error, a setpoint step of 1 at t = 0.3: the filter's first-order
 * response d = kd/td · e^−(t−0.3)/td. On the measurement the same step
 * gives no derivative at all (no kick), only the proportional step. */
START_TEST(test_derivative_step) {
  const double kd = 2.0, td = 0.05;
  static const double st[] = {0.0, 0.3}, sv[] = {0.0, 1.0};
  for (int on_error = 0; on_error < 2; on_error++) {
    dg_graph *g = loop_rig(on_error ? "\"kp\":0.5,\"kd\":2,\"td\":0.05,\"derivative_on\":\"error\""
                                    : "\"kp\":0.5,\"kd\":2,\"td\":0.05",
                           "{\"setpoint\":\"r\",\"measurement\":0}");
    dg_sim *sim = dg_test_sim(g);
    steps(sim, "r", 2, st, sv);
    run_to(sim, 0.3);
    ck_assert_double_eq(dg_test_signal(sim, "c.d"), 0.0);
    for (int k = 1; k <= 10; k++) {
      run_to(sim, 0.3 + 0.02 * k);
      double t = dg_sim_time(sim);
      double d = on_error ? kd / td * exp(-(t - 0.3) / td) : 0.0;
      ck_assert_double_eq_tol(dg_test_signal(sim, "c.d"), d, RK4_TOL * kd / td);
      ck_assert_double_eq_tol(dg_test_signal(sim, "c.output"), 0.5 + d, RK4_TOL * kd / td);
    }
    dg_sim_free(sim);
    dg_graph_free(g);
  }
}
END_TEST

/* ---- anti-windup, by hand --------------------------------------------- */

/* Open loop (measurement 0) with kp = 1, ki = 2, limits ±3 and the setpoint
 * 1 until t = 3, −1 after: u = e + i. */
static dg_sim *windup_sim(dg_graph **g, const char *law) {
  static const double st[] = {0.0, 3.0}, sv[] = {1.0, -1.0};
  char params[256];
  snprintf(params, sizeof params, "\"kp\":1,\"ki\":2,\"output_min\":-3,\"output_max\":3,%s", law);
  *g = loop_rig(params, "{\"setpoint\":\"r\",\"measurement\":0}");
  dg_sim *sim = dg_test_sim(*g);
  steps(sim, "r", 2, st, sv);
  return sim;
}

typedef struct at {
  double t, i, out;
} at;

static void check_points(dg_sim *sim, const at *pts, int n, double tol) {
  for (int k = 0; k < n; k++) {
    run_to(sim, pts[k].t);
    ck_assert_msg(fabs(dg_test_signal(sim, "c.i") - pts[k].i) <= tol &&
                      fabs(dg_test_signal(sim, "c.output") - pts[k].out) <= tol,
                  "t = %g: i = %.15g (expected %g), output = %.15g (expected %g)", pts[k].t,
                  dg_test_signal(sim, "c.i"), pts[k].i, dg_test_signal(sim, "c.output"),
                  pts[k].out);
  }
}

/* clamp: i = 2t until u = 1 + i reaches 3 (t = 1), then frozen at 2 (the
 * error pushes further in); from t = 3, e = −1 unsaturates at once:
 * i = 2 − 2(t − 3), u = −1 + i, until u = −3 at t = 5, then frozen at −2. */
START_TEST(test_clamp) {
  dg_graph *g;
  dg_sim *sim = windup_sim(&g, "\"anti_windup\":\"clamp\"");
  static const at pts[] = {{0.5, 1.0, 2.0}, {1.0, 2.0, 3.0}, {2.0, 2.0, 3.0}, {3.0, 2.0, 3.0},
                           {3.5, 1.0, 0.0}, {5.0, -2.0, -3.0}, {6.0, -2.0, -3.0}};
  check_points(sim, pts, 7, RK4_TOL);
  dg_sim_free(sim);
  dg_graph_free(g);
  /* the same with the saturation off the step grid: kp = 1, ki = 2 and the
   * limit 2.9005 reached at t = 0.95025 (a located event), i frozen at 1.9005 */
  g = loop_rig("\"kp\":1,\"ki\":2,\"output_max\":2.9005", "{\"setpoint\":1,\"measurement\":0}");
  sim = dg_test_sim(g);
  run_to(sim, 2.0);
  ck_assert_double_eq_tol(dg_test_signal(sim, "c.i"), 1.9005, RK4_TOL);
  ck_assert_int_eq(dg_sim_event_count(sim), 1);
  ck_assert_double_eq_tol(dg_sim_last_event_time(sim), 0.95025, 1e-12);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* none: i = 2t winds up to 6 at t = 3 (output held at 3); from t = 3,
 * i = 6 − 2(t − 3) and the output stays at 3 until u = −1 + i < 3 (t = 4):
 * a second of windup delay; then linear down to −3 at t = 5.5 (i = −2). */
START_TEST(test_none) {
  dg_graph *g;
  dg_sim *sim = windup_sim(&g, "\"anti_windup\":\"none\"");
  static const at pts[] = {{1.0, 2.0, 3.0}, {3.0, 6.0, 3.0}, {4.0, 4.0, 3.0},
                           {4.5, 3.0, 2.0}, {5.5, 1.0, 0.0}, {6.0, 0.0, -1.0}};
  check_points(sim, pts, 6, RK4_TOL);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* back_calculation, Tt = 0.5: i = 2t to t = 1; saturated,
 * i' = 2 + (3 − (1 + i))/Tt → i = 3 − e^−(t−1)/Tt (tends to 2 + 2 Tt = 3);
 * from t = 3 linear (u = −1 + i < 3): i = i₃ − 2(t − 3) until u = −3 at
 * t₅ = 3 + (i₃ + 2)/2; then i' = −2 + (−3 − (−1 + i))/Tt → i = −3 + e^−(t−t₅)/Tt. */
START_TEST(test_back_calculation) {
  const double Tt = 0.5, i3 = 3.0 - exp(-2.0 / Tt), t5 = 3.0 + (i3 + 2.0) / 2.0;
  dg_graph *g;
  dg_sim *sim = windup_sim(&g, "\"anti_windup\":\"back_calculation\",\"tracking_time\":0.5");
  at pts[] = {{1.0, 2.0, 3.0},
              {2.0, 3.0 - exp(-1.0 / Tt), 3.0},
              {3.0, i3, 3.0},
              {4.0, i3 - 2.0, -1.0 + i3 - 2.0},
              {7.0, -3.0 + exp(-(7.0 - t5) / Tt), -3.0}};
  check_points(sim, pts, 5, 1e-8); /* exponentials with Tt = 0.5 s: (dt/Tt)⁴ ≈ 1e-11 per unit */
  /* located on the step's dense output, built from RK4 stages on both sides
   * of the kink back-calculation starts at: ~1e-8 s (the re-integration to
   * the located time is then smooth) */
  printf("pid: back-calculation: lower limit reached at %.15g (closed form %.15g)\n",
         dg_sim_last_event_time(sim), t5);
  ck_assert_double_eq_tol(dg_sim_last_event_time(sim), t5, 1e-7);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* A loop that saturates: the PI on the inertia with |u| <= 4 from rest to
 * r = 10. The clamp's integral slides along the limit (u held at 4 while
 * the error shrinks): at most one located crossing per step, and the loop
 * settles on the setpoint. */
START_TEST(test_saturated_loop) {
  dg_graph *g = loop_rig("\"kp\":2,\"ki\":5,\"output_min\":-4,\"output_max\":4",
                         "{\"setpoint\":10,\"measurement\":\"ld.omega\"}");
  dg_sim *sim = dg_test_sim(g);
  run_to(sim, 1.0);
  ck_assert_double_eq_tol(dg_test_signal(sim, "ld.omega"), 4.0, RK4_TOL); /* ω = 4t */
  ck_assert_double_eq(dg_test_signal(sim, "c.output"), 4.0);
  run_to(sim, 30.0);
  ck_assert_double_eq_tol(dg_test_signal(sim, "ld.omega"), 10.0, 1e-6);
  ck_assert_int_le(dg_sim_segment_count(sim), 2 * dg_sim_step_count(sim));
  printf("pid: saturated loop: %ld segments in %ld steps, %ld events\n",
         dg_sim_segment_count(sim), dg_sim_step_count(sim), dg_sim_event_count(sim));
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* ---- reset, initial values -------------------------------------------- */

/* ki = 1 on a constant error 1: i = t to 2, held at 0 while reset = 1 on
 * [2, 3), then t − 3. */
START_TEST(test_reset) {
  static const double st[] = {0.0, 2.0, 3.0}, sv[] = {0.0, 1.0, 0.0};
  dg_graph *g = loop_rig("\"kp\":0.5,\"ki\":1", "{\"setpoint\":1,\"measurement\":0,\"reset\":\"rst\"}");
  dg_sim *sim = dg_test_sim(g);
  steps(sim, "rst", 3, st, sv);
  static const at pts[] = {{2.0, 2.0, 2.5}, {2.5, 0.0, 0.5}, {3.0, 0.0, 0.5}, {4.0, 1.0, 1.5}};
  check_points(sim, pts, 4, RK4_TOL);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

START_TEST(test_initial_integral) {
  dg_graph *g = loop_rig("\"kp\":0,\"initial_integral\":0.7", "{\"measurement\":0}");
  dg_sim *sim = dg_test_sim(g);
  ck_assert_double_eq(dg_test_signal(sim, "c.i"), 0.7);
  ck_assert_double_eq(dg_test_signal(sim, "c.output"), 0.7);
  dg_test_set_initial1(sim, "c.i", -0.3);
  run_to(sim, 1.0);
  ck_assert_double_eq(dg_test_signal(sim, "c.i"), -0.3); /* ki = 0 */
  ck_assert_double_eq_tol(dg_test_signal(sim, "ld.omega"), -0.3, RK4_TOL);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* The integral is a state, not a feedthrough: it may feed the block's own
 * input (here the feedforward: u = e + 2i with i' = e, e = 1 − 0). */
START_TEST(test_state_is_no_loop) {
  dg_graph *g = loop_rig("\"kp\":1,\"ki\":1",
                         "{\"setpoint\":1,\"measurement\":0,\"feedforward\":\"c.i\"}");
  dg_sim *sim = dg_test_sim(g);
  run_to(sim, 1.0);
  ck_assert_double_eq_tol(dg_test_signal(sim, "c.output"), 3.0, RK4_TOL);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* ---- errors ------------------------------------------------------------ */

static const dg_test_bad_param bad[] = {
    {"\"kp\":-1", "/blocks/c/kp", "must be >= 0 (got -1)"},
    {"\"ki\":-0.5", "/blocks/c/ki", "must be >= 0 (got -0.5)"},
    {"\"td\":0", "/blocks/c/td", "must be > 0 (got 0)"},
    {"\"output_min\":2,\"output_max\":1", "/blocks/c/output_max", "must be > output_min 2 (got 1)"},
    {"\"output_min\":1,\"output_max\":1", "/blocks/c/output_max", "must be > output_min 1 (got 1)"},
    {"\"anti_windup\":\"foo\"", "/blocks/c/anti_windup",
     "must be one of \"clamp\", \"back_calculation\", \"none\" (got \"foo\")"},
    {"\"anti_windup\":\"back_calculation\"", "/blocks/c/tracking_time",
     "required with anti_windup \"back_calculation\""},
    {"\"tracking_time\":1", "/blocks/c/tracking_time",
     "used only with anti_windup \"back_calculation\" (anti_windup is \"clamp\")"},
    {"\"anti_windup\":\"back_calculation\",\"tracking_time\":0", "/blocks/c/tracking_time",
     "must be > 0 (got 0)"},
    {"\"derivative_on\":\"setpoint\"", "/blocks/c/derivative_on",
     "must be one of \"measurement\", \"error\" (got \"setpoint\")"},
};

START_TEST(test_bad_params) {
  dg_test_graph_error_at(
      bad[_i].path, bad[_i].text,
      "{\"drivegraph\":1,\"blocks\":{\"c\":{\"type\":\"pid\",%s,"
      "\"inputs\":{\"measurement\":\"ld.omega\"}},"
      "\"src\":{\"type\":\"torque_source\",\"inputs\":{\"command\":\"c.output\"}},"
      "\"ld\":{\"type\":\"load\",\"inertia\":1}},\"connections\":[[\"src.out\",\"ld.in\"]]}",
      bad[_i].params);
}
END_TEST

#define LOOP_HINT                                                                              \
  " (each signal depends on its block's inputs at the same instant; break the loop through a " \
  "signal that does not, such as a speed or a controller's state)"

static const struct {
  const char *inputs, *path, *text;
} bad_inputs[] = {
    {"{}", "/blocks/c/inputs",
     "input \"measurement\" (measured value y) must be bound: \"inputs\": { \"measurement\": "
     "\"<channel>\" | \"<block>.<signal>\" | number }"},
    {"{\"measurement\":\"c.output\"}", "/blocks/c/inputs/measurement",
     "\"c.output\": input \"measurement\" follows the block's own signal \"output\", which its "
     "inputs make at the same instant: a loop through the block's own output, the input defined "
     "by itself; bind another block's signal, a channel or a number"},
    {"{\"measurement\":\"src.torque\"}", "/blocks/c/inputs",
     "algebraic loop: c.output -> src.command, src.torque -> c.measurement" LOOP_HINT},
    {"{\"measurement\":\"ld.omega\",\"reset\":2}", "/blocks/c/inputs/reset",
     "must be in [0, 1], got 2"},
};

START_TEST(test_bad_inputs) {
  dg_test_graph_error_at(
      bad_inputs[_i].path, bad_inputs[_i].text,
      "{\"drivegraph\":1,\"blocks\":{\"c\":{\"type\":\"pid\",\"inputs\":%s},"
      "\"src\":{\"type\":\"torque_source\",\"inputs\":{\"command\":\"c.output\"}},"
      "\"ld\":{\"type\":\"load\",\"inertia\":1}},\"connections\":[[\"src.out\",\"ld.in\"]]}",
      bad_inputs[_i].inputs);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("pid");
  TCase *tc = tcase_create("dynamics");
  tcase_add_test(tc, test_pi_inertia);
  tcase_add_test(tc, test_derivative_ramp);
  tcase_add_test(tc, test_derivative_step);
  tcase_add_test(tc, test_state_is_no_loop);
  suite_add_tcase(s, tc);
  tc = tcase_create("anti_windup");
  tcase_add_test(tc, test_clamp);
  tcase_add_test(tc, test_none);
  tcase_add_test(tc, test_back_calculation);
  tcase_add_test(tc, test_saturated_loop);
  tcase_add_test(tc, test_reset);
  tcase_add_test(tc, test_initial_integral);
  suite_add_tcase(s, tc);
  tc = tcase_create("errors");
  tcase_add_loop_test(tc, test_bad_params, 0, (int)(sizeof bad / sizeof bad[0]));
  tcase_add_loop_test(tc, test_bad_inputs, 0, (int)(sizeof bad_inputs / sizeof bad_inputs[0]));
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return dg_test_run(suite()); }
