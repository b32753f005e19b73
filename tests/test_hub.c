/* hub (blocks/hub.c): a driven wheel whose contact belongs to a host. The
 * host's contact velocity vx and load fz come in as inputs; the tyre force
 * is evaluated at every RK4 stage. Steady states against closed forms: a
 * hub torque T balanced by the tyre, Fx·R = T, at the slip where
 * fz·MF(κ) = T/R (MF inverted here by bisection, independently of the
 * block), turning at ω = vx (1 + κ) / R. The relaxation settles in
 * σ/vx = 0.015 s and the wheel's spin mode is critically damped (tread
 * damping), so after 2 s the steady state holds to round-off (TOL). */
#include "testutil.h"

#include <math.h>
#include <string.h>

#define TOL 1e-9

static double mf(double k) {
  const double B = 10.0, C = 1.9, D = 1.0, E = 0.97;
  double x = B * k;
  return D * sin(C * atan(x - E * (x - atan(x))));
}

static double mf_inverse(double r) {
  double lo = 0.0, hi = 0.1; /* below the peak */
  for (int i = 0; i < 200; i++) {
    double mid = 0.5 * (lo + hi);
    if (mf(mid) < r)
      lo = mid;
    else
      hi = mid;
  }
  return 0.5 * (lo + hi);
}

static dg_graph *rig(void) {
  return dg_test_graph("{\"drivegraph\":1,\"blocks\":{"
                       "\"drive\":{\"type\":\"torque_source\",\"torque\":300},"
                       "\"w\":{\"type\":\"hub\",\"radius\":0.3,\"inertia\":1.2,"
                       "\"inputs\":{\"vx\":\"vx\",\"fz\":\"fz\"}}},"
                       "\"connections\":[[\"drive.out\",\"w.hub\"]]}");
}

START_TEST(steady_magic_formula) {
  dg_graph *g = rig();
  dg_sim *sim = dg_test_sim(g);
  dg_test_set_input(sim, "vx", 10.0);
  dg_test_set_input(sim, "fz", 4000.0);
  dg_test_set_initial1(sim, "w.omega", 10.0 / 0.3);
  dg_test_step(sim, 2000, 0.001);
  double k = mf_inverse(300.0 / 0.3 / 4000.0);
  ck_assert_double_eq_tol(dg_test_signal(sim, "w.fx"), 1000.0, 1e-6);
  ck_assert_double_eq_tol(dg_test_signal(sim, "w.slip"), k, TOL);
  ck_assert_double_eq_tol(dg_test_signal(sim, "w.omega"), 10.0 * (1.0 + k) / 0.3, 1e-8);
  ck_assert_double_eq_tol(dg_test_signal(sim, "w.torque"), -300.0, 1e-6);
  ck_assert_double_eq_tol(dg_test_signal(sim, "w.hub.torque"), -300.0, 1e-6);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

typedef struct linear_tyre {
  double stiffness; /* N per unit slip */
  int calls;
} linear_tyre;

static double linear_fx(const dg_tyre_state *s, void *user) {
  linear_tyre *lt = user;
  lt->calls++;
  return lt->stiffness * s->slip * (s->fz / 4000.0);
}

/* A host's linear tyre, 2e5 N per unit slip at 4 kN: κ = 1000 / 2e5. */
START_TEST(host_tyre_model) {
  dg_graph *g = rig();
  dg_sim *sim = dg_test_sim(g);
  linear_tyre lt = {2e5, 0};
  dg_error err;
  ck_assert_int_eq(dg_sim_set_tyre(sim, "w", linear_fx, &lt, &err), DG_OK);
  dg_test_set_input(sim, "vx", 10.0);
  dg_test_set_input(sim, "fz", 4000.0);
  dg_test_set_initial1(sim, "w.omega", 10.0 / 0.3);
  dg_test_step(sim, 2000, 0.001);
  ck_assert_double_eq_tol(dg_test_signal(sim, "w.slip"), 1000.0 / 2e5, TOL);
  ck_assert_double_eq_tol(dg_test_signal(sim, "w.fx"), 1000.0, 1e-6);
  ck_assert_int_ge(lt.calls, 4 * 2000); /* every RK4 stage */
  ck_assert_int_eq(dg_sim_set_tyre(sim, "drive", linear_fx, &lt, &err), DG_ERR_USAGE);
  ck_assert_str_eq(err.text, "block \"drive\" is not a hub");
  ck_assert_int_eq(dg_sim_set_tyre(sim, "nope", linear_fx, &lt, &err), DG_ERR_UNKNOWN);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* At rest with no load nothing moves and nothing divides by zero. */
START_TEST(rest) {
  dg_graph *g = dg_test_graph("{\"drivegraph\":1,\"blocks\":{"
                              "\"w\":{\"type\":\"hub\",\"radius\":0.3,"
                              "\"inputs\":{\"vx\":0,\"fz\":0}},"
                              "\"j\":{\"type\":\"inertia\",\"inertia\":1}},"
                              "\"connections\":[[\"j.out\",\"w.hub\"]]}");
  dg_sim *sim = dg_test_sim(g);
  dg_test_step(sim, 100, 0.001);
  ck_assert_double_eq(dg_test_signal(sim, "w.omega"), 0.0);
  ck_assert_double_eq(dg_test_signal(sim, "w.fx"), 0.0);
  ck_assert_double_eq(dg_test_signal(sim, "w.slip_ratio"), 0.0);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* A wheel spun up on the spot (300 N·m against a tyre at vx = 0.5 m/s)
 * drives its slip state to the limit and no further: κ is within ±1 after
 * every step (RK4's stages would carry it past 1 within a step), and once
 * there it stays at exactly 1, the force at MF(1)·fz. */
START_TEST(slip_held_at_limit) {
  dg_graph *g = rig();
  dg_sim *sim = dg_test_sim(g);
  dg_test_set_input(sim, "vx", 0.5);
  dg_test_set_input(sim, "fz", 200.0);
  dg_test_set_initial1(sim, "w.omega", 0.5 / 0.3);
  double top = 0.0;
  for (int k = 0; k < 500; k++) {
    dg_test_step(sim, 1, 0.001);
    top = fmax(top, dg_test_signal(sim, "w.slip"));
    ck_assert_double_le(dg_test_signal(sim, "w.slip"), 1.0);
  }
  ck_assert_double_eq(top, 1.0);
  ck_assert_double_eq(dg_test_signal(sim, "w.slip"), 1.0);
  ck_assert_double_eq_tol(dg_test_signal(sim, "w.fx"), 200.0 * mf(1.0), 1e-9);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("hub");
  TCase *c = tcase_create("tyre");
  tcase_add_test(c, steady_magic_formula);
  tcase_add_test(c, host_tyre_model);
  tcase_add_test(c, rest);
  tcase_add_test(c, slip_held_at_limit);
  suite_add_tcase(s, c);
  return s;
}

int main(void) { return dg_test_run(suite()); }
