/* The motion room (lib/solver/motion.c): prescribed columns that share rows
 * with free DOFs (a differential's input prescribed, its sides free), the
 * momentum-conserving projection when a prescribed speed jumps, and node
 * angles. The rig: speed_source → open differential (ratio 1) → wheels of
 * I_L = 1 and I_R = 3 kg·m², no torques. With the input at Ω and
 * d = ω_L − ω_R free: ω_L = Ω + d/2, ω_R = Ω − d/2,
 *   M_ff = (I_L + I_R)/4 = 1,   M_fp = (I_L − I_R)/2 = −1,
 * so a ramp Ω̇ = a drives ḋ = −M_fp a / M_ff = a, the wheels accelerate at
 * 1.5 a and 0.5 a, and the source gives I_L·1.5a + I_R·0.5a = 3a (the open
 * differential's equal split: T/2 = 1.5a on each side). A jump of Ω from 0
 * keeps the free momentum (I_L ω_L − I_R ω_R)/2 = 0: d = −2Ω(I_L − I_R)/(I_L + I_R)
 * = Ω. Both are exact in floating point up to round-off. */
#include "testutil.h"

#include <math.h>

#define TOL_EXACT 1e-10

static dg_graph *diff_rig(void) {
  return dg_test_graph("{\"drivegraph\":1,\"blocks\":{"
                       "\"src\":{\"type\":\"speed_source\",\"inputs\":{\"speed\":\"w\"}},"
                       "\"d\":{\"type\":\"differential\",\"kind\":\"open\"},"
                       "\"l\":{\"type\":\"inertia\",\"inertia\":1},"
                       "\"r\":{\"type\":\"inertia\",\"inertia\":3}},"
                       "\"connections\":[[\"src.out\",\"d.in\"],[\"d.left\",\"l.in\"],"
                       "[\"d.right\",\"r.in\"]]}");
}

START_TEST(ramp_into_differential) {
  dg_graph *g = diff_rig();
  dg_sim *sim = dg_test_sim(g);
  ck_assert_int_eq(dg_sim_dof_count(sim), 1);
  const double t[2] = {0.0, 1.0}, v[2] = {0.0, 2.0}; /* a = 2 */
  ck_assert_int_eq(
      dg_sim_set_input_schedule(sim, dg_sim_input_find(sim, "w"), 2, t, v, false, NULL), DG_OK);
  dg_test_step(sim, 500, 0.001);
  ck_assert_double_eq_tol(dg_test_signal(sim, "l.omega"), 1.5 * 2.0 * 0.5, TOL_EXACT);
  ck_assert_double_eq_tol(dg_test_signal(sim, "r.omega"), 0.5 * 2.0 * 0.5, TOL_EXACT);
  ck_assert_double_eq_tol(dg_test_signal(sim, "src.torque"), 6.0, TOL_EXACT);
  /* angles: ½ · 3 · 0.5² and ½ · 1 · 0.5² */
  ck_assert_double_eq_tol(dg_test_signal(sim, "l.in.angle"), 0.375, TOL_EXACT);
  ck_assert_double_eq_tol(dg_test_signal(sim, "r.in.angle"), 0.125, TOL_EXACT);
  ck_assert_double_eq_tol(dg_test_signal(sim, "src.out.angle"), 0.25, TOL_EXACT);
  dg_energy e;
  dg_sim_energy(sim, &e);
  ck_assert_double_eq_tol(e.balance_error, 0.0, 1e-9);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

START_TEST(jump_keeps_free_momentum) {
  dg_graph *g = diff_rig();
  dg_sim *sim = dg_test_sim(g);
  dg_test_step(sim, 3, 0.001);
  dg_test_set_input(sim, "w", 4.0);
  dg_test_step(sim, 3, 0.001);
  ck_assert_double_eq_tol(dg_test_signal(sim, "l.omega"), 6.0, TOL_EXACT);
  ck_assert_double_eq_tol(dg_test_signal(sim, "r.omega"), 2.0, TOL_EXACT);
  /* the source's work is the kinetic energy it gave, ½(36 + 3·4) = 24 */
  ck_assert_double_eq_tol(dg_sim_block_work(sim, dg_test_block_index(g, "src")), 24.0, 1e-9);
  dg_energy e;
  dg_sim_energy(sim, &e);
  ck_assert_double_eq_tol(e.kinetic, 24.0, TOL_EXACT);
  ck_assert_double_eq_tol(e.balance_error, 0.0, 1e-9);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* An initial angle set by name is where the shaft's angle starts. */
START_TEST(initial_angle) {
  dg_graph *g = diff_rig();
  dg_sim *sim = dg_test_sim(g);
  dg_test_set_initial1(sim, "l.in.angle", 1.25);
  dg_test_set_input(sim, "w", 2.0);
  dg_test_step(sim, 100, 0.001);
  /* ω_L = 2 + d/2 with d = −2·2·(−2)/4 = 2: 3 rad/s for 0.1 s */
  ck_assert_double_eq_tol(dg_test_signal(sim, "l.in.angle"), 1.25 + 0.3, TOL_EXACT);
  /* the inertia's other port is the same shaft: it starts at the same angle */
  ck_assert_double_eq_tol(dg_test_signal(sim, "l.out.angle"), 1.25 + 0.3, TOL_EXACT);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* The ports room (lib/solver/ports.c): torques through ports. An engine
 * (20 N·m, 0.5 kg·m²) drives a gear (ratio 3, 0.1 kg·m² on its input) into
 * a host's shaft that accelerates at a = 2 rad/s²: the gear's input turns
 * at 3a = 6 rad/s². The engine gives its shaft 20 − 0.5·6 = 17 N·m, the
 * gear takes −17 there and gives 3·(17 − 0.1·6) = 49.2 N·m at its output,
 * which the host takes (−49.2, its prescription's force too). A lossy
 * gear (η = 0.8, driving) gives 0.8 of that. */
static void engine_gear_host(double eta, double out) {
  dg_graph *g = dg_test_graphf(
      "{\"drivegraph\":1,\"blocks\":{"
      "\"eng\":{\"type\":\"torque_source\",\"inertia\":0.5,\"torque\":20},"
      "\"g\":{\"type\":\"gear\",\"ratio\":3,\"inertia\":0.1,\"efficiency\":%g},"
      "\"host\":{\"type\":\"speed_source\",\"inputs\":{\"speed\":\"w\"}}},"
      "\"connections\":[[\"eng.out\",\"g.in\"],[\"g.out\",\"host.in\"]]}",
      eta);
  dg_sim *sim = dg_test_sim(g);
  const double t[2] = {0.0, 10.0}, v[2] = {0.0, 20.0};
  ck_assert_int_eq(
      dg_sim_set_input_schedule(sim, dg_sim_input_find(sim, "w"), 2, t, v, false, NULL), DG_OK);
  dg_test_step(sim, 20, 0.001);
  ck_assert_double_eq_tol(dg_test_signal(sim, "eng.out.torque"), 17.0, TOL_EXACT);
  ck_assert_double_eq_tol(dg_test_signal(sim, "g.in.torque"), -17.0, TOL_EXACT);
  ck_assert_double_eq_tol(dg_test_signal(sim, "g.out.torque"), out, TOL_EXACT);
  ck_assert_double_eq_tol(dg_test_signal(sim, "host.in.torque"), -out, TOL_EXACT);
  ck_assert_double_eq_tol(dg_test_signal(sim, "host.torque"), -out, TOL_EXACT);
  /* the same after an input changes between steps: the cache follows */
  dg_test_set_input(sim, "w", 0.04); /* held: no acceleration */
  ck_assert_double_eq_tol(dg_test_signal(sim, "eng.out.torque"), 20.0, TOL_EXACT);
  dg_sim_free(sim);
  dg_graph_free(g);
}

START_TEST(port_torques_gear) { engine_gear_host(1.0, 49.2); }
END_TEST

START_TEST(port_torques_lossy_gear) { engine_gear_host(0.8, 0.8 * 49.2); }
END_TEST

/* An open differential splits equally: a 30 N·m torque source on the
 * input, wheels of 1 and 3 kg·m²: each side gets 15 N·m, and the input
 * shaft carries 30 (the source's 30 less nothing: no inertia there). */
START_TEST(port_torques_differential) {
  dg_graph *g = dg_test_graph("{\"drivegraph\":1,\"blocks\":{"
                              "\"src\":{\"type\":\"torque_source\",\"torque\":30},"
                              "\"d\":{\"type\":\"differential\",\"kind\":\"open\"},"
                              "\"l\":{\"type\":\"inertia\",\"inertia\":1},"
                              "\"r\":{\"type\":\"inertia\",\"inertia\":3}},"
                              "\"connections\":[[\"src.out\",\"d.in\"],[\"d.left\",\"l.in\"],"
                              "[\"d.right\",\"r.in\"]]}");
  dg_sim *sim = dg_test_sim(g);
  dg_test_step(sim, 10, 0.001);
  ck_assert_double_eq_tol(dg_test_signal(sim, "d.left.torque"), 15.0, TOL_EXACT);
  ck_assert_double_eq_tol(dg_test_signal(sim, "d.right.torque"), 15.0, TOL_EXACT);
  ck_assert_double_eq_tol(dg_test_signal(sim, "l.in.torque"), -15.0, TOL_EXACT);
  ck_assert_double_eq_tol(dg_test_signal(sim, "d.in.torque"), -30.0, TOL_EXACT);
  ck_assert_double_eq_tol(dg_test_signal(sim, "src.out.torque"), 30.0, TOL_EXACT);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("motion");
  TCase *c = tcase_create("prescribed");
  tcase_add_test(c, ramp_into_differential);
  tcase_add_test(c, jump_keeps_free_momentum);
  tcase_add_test(c, initial_angle);
  suite_add_tcase(s, c);
  TCase *p = tcase_create("ports");
  tcase_add_test(p, port_torques_gear);
  tcase_add_test(p, port_torques_lossy_gear);
  tcase_add_test(p, port_torques_differential);
  suite_add_tcase(s, p);
  return s;
}

int main(void) { return dg_test_run(suite()); }
