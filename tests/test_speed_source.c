/* speed_source (blocks/speed_source.c): a shaft that follows a given speed
 * exactly, with the torque it takes. Every expectation is a closed form
 * derived in the comments.
 *
 * Tolerances: a prescribed speed is exact to round-off (TOL_EXACT); RK4 of
 * a free DOF coupled to it through a spring is fourth order, its global
 * error about (ω_n dt)⁴ Ω = 0.02⁴ · 3 = 5e-7 for the oscillator below
 * (TOL_RK4; seen: 1e-8); a
 * central-difference derivative of a callback or a sine is good to ~1e-9 of
 * its value (TOL_DIFF). */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define TOL_EXACT 1e-10
#define TOL_RK4 1e-6
#define TOL_DIFF 1e-7

/* source → gear (ratio 2, efficiency eta) → inertia 3 kg·m² */
static dg_graph *geared(double eta, const char *speed) {
  return dg_test_graphf("{\"drivegraph\":1,\"blocks\":{"
                        "\"src\":{\"type\":\"speed_source\",\"inputs\":{\"speed\":%s}},"
                        "\"g\":{\"type\":\"gear\",\"ratio\":2,\"efficiency\":%.17g},"
                        "\"j\":{\"type\":\"inertia\",\"inertia\":3.0}},"
                        "\"connections\":[[\"src.out\",\"g.in\"],[\"g.out\",\"j.in\"]]}",
                        speed, eta);
}

/* speed = 10 t: the inertia turns at 5 t; it sees J = 3 at α = 5, so the
 * gear's input needs 15/2 = 7.5 N·m; the source's work is the inertia's
 * kinetic energy ½·3·(5t)². */
START_TEST(ramp_through_gear) {
  dg_graph *g = geared(1.0, "\"w\"");
  dg_sim *sim = dg_test_sim(g);
  ck_assert_int_eq(dg_sim_dof_count(sim), 0);
  int w = dg_sim_input_find(sim, "w");
  const double t[2] = {0.0, 1.0}, v[2] = {0.0, 10.0};
  ck_assert_int_eq(dg_sim_set_input_schedule(sim, w, 2, t, v, false, NULL), DG_OK);
  for (int k = 1; k <= 4; k++) {
    dg_test_step(sim, 200, 0.001);
    double tt = 0.2 * k;
    ck_assert_double_eq_tol(dg_test_signal(sim, "src.omega"), 10.0 * tt, TOL_EXACT);
    ck_assert_double_eq_tol(dg_test_signal(sim, "j.omega"), 5.0 * tt, TOL_EXACT);
    ck_assert_double_eq_tol(dg_test_signal(sim, "src.torque"), 7.5, TOL_EXACT);
    ck_assert_double_eq_tol(dg_test_signal(sim, "src.power"), 7.5 * 10.0 * tt, TOL_EXACT);
  }
  dg_energy e;
  dg_sim_energy(sim, &e);
  ck_assert_double_eq_tol(e.kinetic, 0.5 * 3.0 * 4.0 * 4.0, TOL_EXACT);
  ck_assert_double_eq_tol(dg_sim_block_work(sim, dg_test_block_index(g, "src")), 24.0, 1e-9);
  ck_assert_double_eq_tol(e.balance_error, 0.0, 1e-9);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* With efficiency 0.9 the driving source pays 7.5 / 0.9; braking the
 * inertia (speed falling at 10 rad/s²) it takes back 7.5 · 0.9. */
START_TEST(ramp_through_lossy_gear) {
  dg_graph *g = geared(0.9, "\"w\"");
  dg_sim *sim = dg_test_sim(g);
  int w = dg_sim_input_find(sim, "w");
  const double t[3] = {0.0, 1.0, 2.0}, v[3] = {0.0, 10.0, 0.0};
  ck_assert_int_eq(dg_sim_set_input_schedule(sim, w, 3, t, v, false, NULL), DG_OK);
  dg_test_step(sim, 500, 0.001);
  ck_assert_double_eq_tol(dg_test_signal(sim, "src.torque"), 7.5 / 0.9, TOL_EXACT);
  dg_test_step(sim, 1000, 0.001);
  ck_assert_double_eq_tol(dg_test_signal(sim, "src.torque"), -7.5 * 0.9, TOL_EXACT);
  dg_energy e;
  dg_sim_energy(sim, &e);
  ck_assert_double_eq_tol(e.balance_error, 0.0, 1e-9);
  ck_assert(e.efficiency_loss < 0.0);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* A constant speed Ω from rest drives inertia J through a spring k and a
 * damper d: the twist e = φ_src − φ_J obeys J ë + d ė + k e = 0 with
 * e(0) = 0, ė(0) = Ω, so e = (Ω/ω_d) e^{−ζω_n t} sin(ω_d t), and the
 * source's torque is the spring's, k e + d ė. */
START_TEST(spring_to_free_inertia) {
  const double J = 2.0, k = 800.0, d = 8.0, W = 3.0;
  dg_graph *g = dg_test_graphf(
      "{\"drivegraph\":1,\"blocks\":{"
      "\"src\":{\"type\":\"speed_source\",\"inputs\":{\"speed\":%g}},"
      "\"sd\":{\"type\":\"spring_damper\",\"stiffness\":%g,\"damping\":%g},"
      "\"j\":{\"type\":\"inertia\",\"inertia\":%g}},"
      "\"connections\":[[\"src.out\",\"sd.in\"],[\"sd.out\",\"j.in\"]]}",
      W, k, d, J);
  dg_sim *sim = dg_test_sim(g);
  ck_assert_int_eq(dg_sim_dof_count(sim), 1);
  double wn = sqrt(k / J), zeta = d / (2.0 * sqrt(k * J)), wd = wn * sqrt(1.0 - zeta * zeta);
  for (int s = 1; s <= 10; s++) {
    dg_test_step(sim, 100, 0.001);
    double t = 0.1 * s, ex = exp(-zeta * wn * t);
    double e = W / wd * ex * sin(wd * t);
    double edot = W * ex * (cos(wd * t) - zeta * wn / wd * sin(wd * t));
    ck_assert_double_eq_tol(dg_test_signal(sim, "src.omega"), W, TOL_EXACT);
    ck_assert_double_eq_tol(dg_test_signal(sim, "j.omega"), W - edot, TOL_RK4);
    ck_assert_double_eq_tol(dg_test_signal(sim, "src.torque"), k * e + d * edot, 1e-6);
  }
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

static double sine_speed(double t, void *user) {
  (void)user;
  return 4.0 * sin(3.0 * t);
}

/* A callback speed 4 sin 3t on the geared inertia: α_J = 6 cos 3t, so the
 * source gives 3·6 cos 3t / 2 = 9 cos 3t (derivative by central
 * difference). */
START_TEST(callback_speed) {
  dg_graph *g = geared(1.0, "\"w\"");
  dg_sim *sim = dg_test_sim(g);
  int w = dg_sim_input_find(sim, "w");
  ck_assert_int_eq(dg_sim_set_input_fn(sim, w, sine_speed, NULL, NULL), DG_OK);
  for (int s = 1; s <= 5; s++) {
    dg_test_step(sim, 137, 0.001);
    double t = 0.137 * s;
    ck_assert_double_eq_tol(dg_test_signal(sim, "j.omega"), 2.0 * sin(3.0 * t), TOL_EXACT);
    ck_assert_double_eq_tol(dg_test_signal(sim, "src.torque"), 9.0 * cos(3.0 * t), TOL_DIFF);
  }
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* Bound to a sine_source: the same motion from a time source's signal. */
START_TEST(sine_source_speed) {
  dg_graph *g = dg_test_graph(
      "{\"drivegraph\":1,\"blocks\":{"
      "\"sine\":{\"type\":\"sine_source\",\"amplitude\":4,\"frequency\":0.477464829275686},"
      "\"src\":{\"type\":\"speed_source\",\"inputs\":{\"speed\":\"sine.value\"}},"
      "\"g\":{\"type\":\"gear\",\"ratio\":2},\"j\":{\"type\":\"inertia\",\"inertia\":3.0}},"
      "\"connections\":[[\"src.out\",\"g.in\"],[\"g.out\",\"j.in\"]]}");
  dg_sim *sim = dg_test_sim(g);
  /* f = 3/(2π): sin(2π f t) = sin 3t */
  dg_test_step(sim, 400, 0.001);
  ck_assert_double_eq_tol(dg_test_signal(sim, "j.omega"), 2.0 * sin(1.2), 1e-12);
  ck_assert_double_eq_tol(dg_test_signal(sim, "src.torque"), 9.0 * cos(1.2), TOL_DIFF);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* A host holds a speed over each step and changes it between steps: the
 * rigid line jumps with it, and the source's work is the kinetic energy
 * (½·3·2.5² after the speed 5 is set). */
START_TEST(held_speed_jumps) {
  dg_graph *g = geared(1.0, "\"w\"");
  dg_sim *sim = dg_test_sim(g);
  dg_test_step(sim, 10, 0.001);
  ck_assert_double_eq_tol(dg_test_signal(sim, "j.omega"), 0.0, TOL_EXACT);
  dg_test_set_input(sim, "w", 5.0);
  dg_test_step(sim, 10, 0.001);
  ck_assert_double_eq_tol(dg_test_signal(sim, "j.omega"), 2.5, TOL_EXACT);
  ck_assert_double_eq_tol(dg_test_signal(sim, "src.torque"), 0.0, TOL_EXACT);
  ck_assert_double_eq_tol(dg_sim_block_work(sim, dg_test_block_index(g, "src")),
                          0.5 * 3.0 * 2.5 * 2.5, 1e-9);
  dg_energy e;
  dg_sim_energy(sim, &e);
  ck_assert_double_eq_tol(e.balance_error, 0.0, 1e-9);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* At the road end: the source takes an `in` port (a host's driveshaft),
 * with a torque source driving the line: the source's torque is what the
 * line delivers, −(T − J α) reflected. A 20 N·m source with 0.5 kg·m² on
 * the shaft held at 10 rad/s: the speed source takes −20 N·m. */
START_TEST(at_the_road_end) {
  dg_graph *g = dg_test_graph(
      "{\"drivegraph\":1,\"blocks\":{"
      "\"eng\":{\"type\":\"torque_source\",\"inertia\":0.5,\"torque\":20},"
      "\"host\":{\"type\":\"speed_source\",\"inputs\":{\"speed\":10}}},"
      "\"connections\":[[\"eng.out\",\"host.in\"]]}");
  dg_sim *sim = dg_test_sim(g);
  dg_test_step(sim, 5, 0.001);
  ck_assert_double_eq_tol(dg_test_signal(sim, "host.omega"), 10.0, TOL_EXACT);
  ck_assert_double_eq_tol(dg_test_signal(sim, "host.torque"), -20.0, TOL_EXACT);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* Bad graphs: a binding without a derivative; a hold and a second
 * prescription on a prescribed shaft (over-constrained). */
START_TEST(refused) {
  dg_error e = dg_test_graph_error(
      "{\"drivegraph\":1,\"blocks\":{"
      "\"eng\":{\"type\":\"torque_source\",\"inertia\":0.5,\"torque\":20},"
      "\"src\":{\"type\":\"speed_source\",\"inputs\":{\"speed\":\"eng.omega\"}},"
      "\"j\":{\"type\":\"inertia\",\"inertia\":1},\"j2\":{\"type\":\"inertia\",\"inertia\":1}},"
      "\"connections\":[[\"src.out\",\"j.in\"],[\"eng.out\",\"j2.in\"]]}");
  ck_assert_str_eq(e.path, "/blocks/src/inputs/speed");
  ck_assert_msg(strstr(e.text, "needs its time derivative") != NULL, "%s", e.text);
  e = dg_test_graph_error("{\"drivegraph\":1,\"blocks\":{"
                          "\"a\":{\"type\":\"speed_source\",\"inputs\":{\"speed\":1}},"
                          "\"b\":{\"type\":\"speed_source\",\"inputs\":{\"speed\":2}}},"
                          "\"connections\":[[\"a.out\",\"b.in\"]]}");
  ck_assert_int_eq(e.code, DG_ERR_OVERCONSTRAINED);
  ck_assert_msg(strstr(e.text, "whose speed block \"b\" prescribes") != NULL, "%s", e.text);
  e = dg_test_graph_error(
      "{\"drivegraph\":1,\"blocks\":{"
      "\"a\":{\"type\":\"speed_source\",\"inputs\":{\"speed\":1}},"
      "\"br\":{\"type\":\"brake\",\"max_torque\":100,\"inputs\":{\"engagement\":1}}},"
      "\"connections\":[[\"a.out\",\"br.in\"]]}");
  ck_assert_int_eq(e.code, DG_ERR_OVERCONSTRAINED);
  ck_assert_msg(strstr(e.text, "whose speed block \"a\" prescribes") != NULL, "%s", e.text);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("speed_source");
  TCase *c = tcase_create("dynamics");
  tcase_add_test(c, ramp_through_gear);
  tcase_add_test(c, ramp_through_lossy_gear);
  tcase_add_test(c, spring_to_free_inertia);
  tcase_add_test(c, callback_speed);
  tcase_add_test(c, sine_source_speed);
  tcase_add_test(c, held_speed_jumps);
  tcase_add_test(c, at_the_road_end);
  suite_add_tcase(s, c);
  TCase *e = tcase_create("errors");
  tcase_add_test(e, refused);
  suite_add_tcase(s, e);
  return s;
}

int main(void) { return dg_test_run(suite()); }
