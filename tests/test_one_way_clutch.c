/* one_way_clutch: a driven flywheel overrunning while the source is
 * slower, locking when the source catches up, unlocking when the source
 * torque reverses (times by hand), the start with `in` ahead, modes and
 * bad parameters. */
#include "testutil.h"

#include <math.h>
#include <stdio.h>

/* Speeds are polynomials of degree <= 2 in t between the events, which
 * RK4 integrates exactly, and the events are located to 1e-10 of a step. */
#define TOL_EXACT 1e-9

/* Source J1 = 1 with the torque 4 N·m until 4 s, then 4 − 2 (t − 4),
 * driving the load J2 = 2 (no drag) that coasts at w0 = 10.002 rad/s:
 *   overrunning: ω_in = 4 t catches up at t_l = w0/4 = 2.5005 s (event);
 *   locked: both at w0 + 4/3 (t − t_l) until 4 s, then the torque falls
 *     and the lock carries T = J2/(J1 + J2) · T_src = (2/3) T_src, which
 *     reverses at t_u = 6 s (event; located where T = −tol_T, ~1e-9 N·m,
 *     7.5e-10 s later), at w6 = w0 + 4/3 (4 − t_l) + (8 − 4)/3;
 *   overrunning again: the load coasts at w6, the source slows,
 *     ω_in = w6 − (t − 6)². */
START_TEST(test_catch_and_overrun) {
  dg_graph *g = dg_test_chain(
      "\"inertia\":1,\"torque_vs_time\":{\"time\":[0,4,8],\"torque\":[4,4,-4]}", "one_way_clutch",
      "ow", "", "\"inertia\":2");
  dg_sim *sim = dg_test_sim(g);
  const double w0 = 10.002, tl = w0 / 4.0, w6 = w0 + 4.0 / 3.0 * (4.0 - tl) + 4.0 / 3.0;
  dg_test_set_initial1(sim, "ld.omega", w0);
  dg_test_step(sim, 2000, 1e-3);
  ck_assert_double_eq(dg_test_signal(sim, "ow.locked"), 0.0);
  ck_assert_double_eq_tol(dg_test_signal(sim, "ow.omega"), 8.0, TOL_EXACT);
  ck_assert_double_eq_tol(dg_test_signal(sim, "ow.omega_out"), w0, TOL_EXACT);
  ck_assert_double_eq_tol(dg_test_signal(sim, "ow.slip_rpm"), (8.0 - w0) * DG_RPM_PER_RAD_S, 1e-8);
  ck_assert_double_eq(dg_test_signal(sim, "ow.torque"), 0.0);
  ck_assert_int_eq(dg_sim_dof_count(sim), 2);
  dg_test_step(sim, 1000, 1e-3);
  ck_assert_double_eq(dg_test_signal(sim, "ow.locked"), 1.0);
  ck_assert_int_eq(dg_sim_event_count(sim), 1);
  ck_assert_double_eq_tol(dg_sim_last_event_time(sim), tl, 1e-9);
  ck_assert_double_eq_tol(dg_test_signal(sim, "ld.omega"), w0 + 4.0 / 3.0 * (3.0 - tl), TOL_EXACT);
  ck_assert_double_eq_tol(dg_test_signal(sim, "ow.torque"), 8.0 / 3.0, 1e-9);
  ck_assert_int_eq(dg_sim_dof_count(sim), 1);
  dg_test_step(sim, 2000, 1e-3); /* t = 5: T_src = 2, T = 4/3 */
  ck_assert_double_eq(dg_test_signal(sim, "ow.locked"), 1.0);
  ck_assert_double_eq_tol(dg_test_signal(sim, "ow.torque"), 4.0 / 3.0, 1e-9);
  dg_test_step(sim, 2000, 1e-3); /* t = 7 */
  ck_assert_double_eq(dg_test_signal(sim, "ow.locked"), 0.0);
  ck_assert_int_eq(dg_sim_event_count(sim), 2);
  ck_assert_double_eq_tol(dg_sim_last_event_time(sim), 6.0, 2e-9);
  ck_assert_double_eq_tol(dg_test_signal(sim, "ld.omega"), w6, TOL_EXACT);
  ck_assert_double_eq_tol(dg_test_signal(sim, "src.omega"), w6 - 1.0, TOL_EXACT);
  ck_assert_double_eq(dg_test_signal(sim, "ow.torque"), 0.0);
  /* nothing lost: the lock came at zero slip, the freewheel does no work */
  dg_energy e;
  dg_sim_energy(sim, &e);
  ck_assert_double_eq_tol(e.impact_loss, 0.0, 1e-9);
  ck_assert_double_le(fabs(e.balance_error), 1e-9);
  ck_assert_double_eq_tol(dg_sim_block_work(sim, dg_test_block_index(g, "ow")), 0.0, 1e-9);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* A source driving a load through the freewheel from rest: locked at the
 * first step (equal speeds), both accelerate at T/(J1 + J2); a braking
 * torque on the load side alone (the load's speed running ahead) never
 * pulls the source along. */
START_TEST(test_drives_from_rest) {
  dg_graph *g = dg_test_chain("\"inertia\":0.5,\"torque\":3", "one_way_clutch", "ow",
                              "\"inertia\":0.5", "\"inertia\":1");
  dg_sim *sim = dg_test_sim(g);
  dg_test_step(sim, 1000, 1e-3);
  ck_assert_double_eq(dg_test_signal(sim, "ow.locked"), 1.0);
  ck_assert_double_eq_tol(dg_test_signal(sim, "ld.omega"), 3.0 / 2.0, TOL_EXACT);
  /* the race (0.5) and the load (1) take 1.5/2 of the torque */
  ck_assert_double_eq_tol(dg_test_signal(sim, "ow.torque"), 3.0 * 1.5 / 2.0, 1e-9);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* `in` given ahead of `out` at the start: the freewheel locks at once, a
 * plastic impact conserving momentum (J1 ω1 + J2 ω2)/(J1 + J2). */
START_TEST(test_start_ahead) {
  dg_graph *g = dg_test_chain("\"inertia\":1", "one_way_clutch", "ow", "", "\"inertia\":3");
  dg_sim *sim = dg_test_sim(g);
  dg_test_set_initial(sim, 2, (const char *[]){"src.omega", "ld.omega"}, (double[]){8, 0});
  dg_test_step(sim, 1, 1e-3);
  ck_assert_double_eq(dg_test_signal(sim, "ow.locked"), 1.0);
  ck_assert_double_eq_tol(dg_test_signal(sim, "ld.omega"), 2.0, 1e-12);
  dg_energy e;
  dg_sim_energy(sim, &e);
  ck_assert_double_eq_tol(e.impact_loss, 0.5 * 4 * 2 * 2 - 0.5 * 64, 1e-9 * 32);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* A freewheel and a clutch of 10 N·m in parallel between a and b
 * (1 kg·m² each, at rest), 1 N·m pulling b ahead (the freewheel's overrun
 * direction): the clutch holds the pair together (0.5 rad/s² each) until
 * its engagement drops to 0 at 0.5 s; then b runs ahead at 1 rad/s² and a
 * coasts: ω_a = 0.25, ω_b = 0.25 + (t − 0.5), ω_b − ω_a = t − 0.5. The
 * freewheel, locked beside the clutch with no torque, would carry −0.5 N·m
 * once the clutch lets go; it lets go in the same instant (hold_check at
 * the segment's start), not one step later (formerly the known bug
 * freewheel_release: ω_b − ω_a = t − 0.5 − dt). */
START_TEST(test_parallel_clutch_lets_go) {
  dg_graph *g = dg_test_graph(
      "{\"drivegraph\":1,\"blocks\":{\"a\":{\"type\":\"inertia\",\"inertia\":1},"
      "\"fw\":{\"type\":\"one_way_clutch\",\"inertia\":0},"
      "\"c\":{\"type\":\"clutch\",\"max_torque\":10,\"static_factor\":1,\"inertia\":0,"
      "\"inputs\":{\"engagement\":\"e\"}},"
      "\"b\":{\"type\":\"inertia\",\"inertia\":1},\"pull\":{\"type\":\"torque_source\","
      "\"torque\":1}},"
      "\"connections\":[[\"a.out\",\"fw.in\",\"c.in\"],[\"fw.out\",\"c.out\",\"b.in\","
      "\"pull.out\"]]}");
  dg_sim *sim = dg_test_sim(g);
  double worst = 0.0;
  for (int k = 1; k <= 8; k++) {
    dg_test_set_input(sim, "e", k <= 5 ? 1.0 : 0.0);
    dg_test_step(sim, 1, 0.1);
    double t = dg_sim_time(sim);
    double a = t <= 0.5 + 1e-12 ? 0.5 * t : 0.25, b = t <= 0.5 + 1e-12 ? 0.5 * t : 0.25 + (t - 0.5);
    worst = fmax(worst, fmax(fabs(dg_test_signal(sim, "a.omega") - a),
                             fabs(dg_test_signal(sim, "b.omega") - b)));
  }
  ck_assert_double_le(worst, TOL_EXACT);
  ck_assert_double_eq(dg_test_signal(sim, "fw.locked"), 0.0);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

START_TEST(test_validate_modes) {
  dg_graph_info info;
  int problems = 0;
  ck_assert_int_eq(
      dg_graph_validate_string(
          NULL,
          "{\"drivegraph\":1,\"blocks\":{\"src\":{\"type\":\"torque_source\",\"inertia\":1},"
          "\"ow\":{\"type\":\"one_way_clutch\"},\"ld\":{\"type\":\"load\",\"inertia\":1}},"
          "\"connections\":[[\"src.out\",\"ow.in\"],[\"ow.out\",\"ld.in\"]]}",
          "o.json", dg_test_count_diag, &problems, &info),
      0);
  ck_assert_int_eq(info.modes, 2);
  ck_assert_int_eq(info.dofs, 2);
}
END_TEST

static const dg_test_bad_param bad[] = {
    {"\"inertia\":-0.1", "/blocks/ow/inertia", "must be >= 0 (got -0.1)"},
    {"\"max_torque\":10", "/blocks/ow/max_torque", "unknown parameter"},
};

START_TEST(test_bad_params) {
  dg_test_graph_error_at(
      bad[_i].path, bad[_i].text,
      "{\"drivegraph\":1,\"blocks\":{\"src\":{\"type\":\"torque_source\",\"inertia\":1},"
      "\"ow\":{\"type\":\"one_way_clutch\",%s},\"ld\":{\"type\":\"load\",\"inertia\":1}},"
      "\"connections\":[[\"src.out\",\"ow.in\"],[\"ow.out\",\"ld.in\"]]}",
      bad[_i].params);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("one_way_clutch");
  TCase *tc = tcase_create("dynamics");
  tcase_add_test(tc, test_catch_and_overrun);
  tcase_add_test(tc, test_drives_from_rest);
  tcase_add_test(tc, test_start_ahead);
  tcase_add_test(tc, test_parallel_clutch_lets_go);
  suite_add_tcase(s, tc);
  tc = tcase_create("modes");
  tcase_add_test(tc, test_validate_modes);
  suite_add_tcase(s, tc);
  tc = tcase_create("params");
  tcase_add_loop_test(tc, test_bad_params, 0, (int)(sizeof bad / sizeof bad[0]));
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return dg_test_run(suite()); }
