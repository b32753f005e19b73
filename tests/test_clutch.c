/* clutch: engagement (pedal, curve, auto), stick–slip against the closed
 * forms of two inertias coupled by a constant friction torque, unlocking
 * under load and with the pedal, slip losses, modes, errors. */
#include "testutil.h"

#include <math.h>
#include <stdio.h>

/* Constant torques give linear speeds and quadratic angles, which RK4
 * integrates exactly: what is left is round-off, ~1e-16 per operation over
 * ~1e4 steps on speeds of ~100 rad/s. */
#define TOL_EXACT 1e-9

/* src (torque_source, engine side) → cl (clutch) → ld (load). */
static dg_graph *rig(const char *src, const char *cl, const char *ld) {
  return dg_test_chain(src, "clutch", "cl", cl, ld);
}

/* ---------------------------------------------------------------------- */
/* Engagement                                                             */

/* Default curve: e = 1 − pedal, clamped to the pedal range [0, 1]. The
 * signals are read with the sides at different speeds (slipping), so the
 * torque signal is the slipping torque e · max_torque. */
static const double pedal_cases[][2] = {
    {0.0, 1.0}, {0.25, 0.75}, {0.5, 0.5}, {1.0, 0.0}, {1.5, 0.0}, {-0.5, 1.0},
};

START_TEST(test_pedal_linear) {
  dg_graph *g = rig("\"inertia\":0.2", "\"max_torque\":200", "\"inertia\":1");
  dg_sim *sim = dg_test_sim(g);
  dg_test_set_initial(sim, 2, (const char *[]){"src.omega", "ld.omega"}, (double[]){100, 20});
  dg_sim_set_input(sim, DG_INPUT_CLUTCH, pedal_cases[_i][0]);
  ck_assert_double_eq_tol(dg_test_signal(sim, "cl.engagement"), pedal_cases[_i][1], 1e-15);
  ck_assert_double_eq_tol(dg_test_signal(sim, "cl.torque"), 200.0 * pedal_cases[_i][1], 1e-12);
  ck_assert_double_eq_tol(dg_test_signal(sim, "cl.slip_rpm"), 80.0 * DG_RPM_PER_RAD_S, 1e-10);
  ck_assert_double_eq(dg_test_signal(sim, "cl.locked"), 0.0);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* A custom curve, interpolated linearly: a bite point between pedal 0.3
 * and 0.8. At pedal 0.5: 1 + (0.5 − 0.3)/(0.8 − 0.3)·(0.1 − 1) = 0.64. */
static const double curve_cases[][2] = {
    {0.0, 1.0}, {0.3, 1.0}, {0.5, 0.64}, {0.8, 0.1}, {0.9, 0.05}, {1.0, 0.0},
};

START_TEST(test_engagement_curve) {
  dg_graph *g = rig("\"inertia\":0.2",
                    "\"max_torque\":100,\"inertia\":0,\"engagement\":{\"pedal\":[0,0.3,0.8,1],"
                    "\"engagement\":[1,1,0.1,0]}",
                    "\"inertia\":1");
  dg_sim *sim = dg_test_sim(g);
  dg_test_set_initial(sim, 2, (const char *[]){"src.omega", "ld.omega"}, (double[]){10, 30});
  dg_sim_set_input(sim, DG_INPUT_CLUTCH, curve_cases[_i][0]);
  ck_assert_double_eq_tol(dg_test_signal(sim, "cl.engagement"), curve_cases[_i][1], 1e-15);
  /* the gearbox side runs ahead: the clutch drives the engine side */
  ck_assert_double_eq_tol(dg_test_signal(sim, "cl.torque"), -100.0 * curve_cases[_i][1], 1e-12);
  /* one step: constant friction, exact accelerations −T/J_ld and +T/J_src */
  dg_test_step(sim, 1, 1e-3);
  double t = 100.0 * curve_cases[_i][1];
  ck_assert_double_eq_tol(dg_test_signal(sim, "ld.omega"), 30.0 - t * 1e-3, 1e-12);
  ck_assert_double_eq_tol(dg_test_signal(sim, "src.omega"), 10.0 + t / 0.2 * 1e-3, 1e-12);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* Auto mode: e = S(x), x = (rpm − 1000)/(2000 − 1000), S = x²(3 − 2x). */
static const double auto_cases[][2] = {
    {0.0, 0.0},    {900.0, 0.0},    {1000.0, 0.0}, {1250.0, 0.15625},
    {1500.0, 0.5}, {1750.0, 0.84375}, {2000.0, 1.0}, {4000.0, 1.0},
};

START_TEST(test_auto_engagement) {
  dg_graph *g = rig("\"inertia\":0.2",
                    "\"max_torque\":300,\"mode\":\"auto\",\"idle_rpm\":1000,\"launch_rpm\":2000",
                    "\"inertia\":10");
  dg_sim *sim = dg_test_sim(g);
  dg_test_set_initial(sim, 2, (const char *[]){"src.rpm", "ld.omega"},
                      (double[]){auto_cases[_i][0], 0});
  ck_assert_double_eq_tol(dg_test_signal(sim, "cl.engagement"), auto_cases[_i][1], 1e-12);
  ck_assert_double_eq_tol(dg_test_signal(sim, "cl.torque"),
                          auto_cases[_i][0] > 0 ? 300.0 * auto_cases[_i][1] : 0.0, 1e-10);
  /* the pedal still opens an automatic clutch */
  dg_sim_set_input(sim, DG_INPUT_CLUTCH, 0.5);
  ck_assert_double_eq_tol(dg_test_signal(sim, "cl.engagement"), 0.5 * auto_cases[_i][1], 1e-12);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* An automatic launch from rest: a 150 N·m engine (an idle governor below
 * 1000 rpm) against a 10 kg·m² load. The clutch takes S(x)·300 N·m, so the
 * engine settles where 300·S = 150, at x = 0.5 (1500 rpm), and stays there
 * while the load catches up; then the clutch locks and both accelerate
 * together. The engine never drops under idle_rpm (no stall). */
START_TEST(test_auto_launch) {
  dg_graph *g = rig("\"inertia\":0.2,\"torque_vs_rpm\":{\"rpm\":[700,1000],\"torque\":[300,150]}",
                    "\"max_torque\":300,\"mode\":\"auto\",\"idle_rpm\":1000,\"launch_rpm\":2000",
                    "\"inertia\":10");
  dg_sim *sim = dg_test_sim(g);
  dg_test_set_initial(sim, 2, (const char *[]){"src.rpm", "ld.omega"}, (double[]){1000, 0});
  double min_rpm = 1e9, t_lock = -1.0;
  for (int i = 0; i < 20000 && t_lock < 0; i++) {
    dg_test_step(sim, 1, 1e-3);
    min_rpm = fmin(min_rpm, dg_test_signal(sim, "src.rpm"));
    if (dg_test_signal(sim, "cl.locked") == 1.0)
      t_lock = dg_sim_time(sim);
    if (i == 5000) { /* mid-launch: engine held at the balance point */
      ck_assert_double_eq_tol(dg_test_signal(sim, "src.rpm"), 1500.0, 1.0);
      ck_assert_double_eq_tol(dg_test_signal(sim, "cl.torque"), 150.0, 0.1);
    }
  }
  ck_assert_double_ge(min_rpm, 1000.0 - 1e-9);
  /* the load reaches 1500 rpm (157 rad/s) at ~150 N·m: t ≈ 157·10/150 ≈ 10.5 s */
  ck_assert_double_gt(t_lock, 10.0);
  ck_assert_double_lt(t_lock, 11.0);
  dg_test_step(sim, 1000, 1e-3);
  ck_assert_double_eq(dg_test_signal(sim, "cl.locked"), 1.0);
  ck_assert_double_gt(dg_test_signal(sim, "src.rpm"), 1500.0);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* Stick–slip                                                             */

/* Engine side J1 = 0.25 at ω0 with no torque, gearbox side J2 = 1 at rest,
 * friction T = 40: the slip falls at a = T(1/J1 + 1/J2) = 200 rad/s², so
 * the lock comes at t* = ω0/a, and then both turn at J1 ω0/(J1 + J2)
 * (momentum is conserved by the friction and by the lock's projection). */
START_TEST(test_two_inertia_lock) {
  const double J1 = 0.25, J2 = 1.0, T = 40.0, w0 = 210.3, h = 1e-3;
  const double a = T * (1.0 / J1 + 1.0 / J2), t_star = w0 / a; /* 1.0515 s */
  dg_graph *g = rig("\"inertia\":0.25", "\"max_torque\":40,\"inertia\":0", "\"inertia\":1");
  dg_sim *sim = dg_test_sim(g);
  dg_test_set_initial(sim, 2, (const char *[]){"src.omega", "ld.omega"}, (double[]){w0, 0});
  ck_assert_int_eq(dg_sim_dof_count(sim), 2);
  dg_test_step(sim, 500, h);
  /* slipping at t = 0.5: exact linear speeds, exactly T transmitted */
  ck_assert_double_eq_tol(dg_test_signal(sim, "src.omega"), w0 - T / J1 * 0.5, TOL_EXACT);
  ck_assert_double_eq_tol(dg_test_signal(sim, "ld.omega"), T / J2 * 0.5, TOL_EXACT);
  ck_assert_double_eq_tol(dg_test_signal(sim, "cl.torque"), T, 1e-12);
  ck_assert_double_eq(dg_test_signal(sim, "cl.locked"), 0.0);
  double t_lock = -1.0;
  for (int i = 0; i < 2000 && t_lock < 0; i++) {
    dg_test_step(sim, 1, h);
    if (dg_test_signal(sim, "cl.locked") == 1.0)
      t_lock = dg_sim_time(sim);
  }
  /* locked in the step in which the slip crossed zero, at the located
   * event: t* itself (the solver finds it on the step's dense output to
   * ~1e-13 s; 1e-9 s leaves room for the round-off of t* = w0/a) */
  ck_assert_double_gt(t_lock, t_star);
  ck_assert_double_le(t_lock, t_star + h + 1e-12);
  ck_assert_double_eq_tol(dg_sim_last_event_time(sim), t_star, 1e-9);
  ck_assert_int_eq(dg_sim_event_count(sim), 1);
  ck_assert_int_eq(dg_sim_dof_count(sim), 1);
  const double w_final = J1 * w0 / (J1 + J2);
  ck_assert_double_eq_tol(dg_test_signal(sim, "src.omega"), w_final, 1e-9 * w_final);
  ck_assert_double_eq_tol(dg_test_signal(sim, "ld.omega"), w_final, 1e-9 * w_final);

  /* Slip losses: the clutch's work is −∫T·Δω dt = −T·(relative angle)
   * with Δω = w0 − a t up to t*, which is the ideal −½ J_rel Δω0²
   * (J_rel = J1 J2/(J1 + J2)): no overshoot past the lock, so no impact. */
  int cl = dg_test_block_index(g, "cl");
  double work = dg_sim_block_work(sim, cl);
  double ideal = -0.5 * J1 * J2 / (J1 + J2) * w0 * w0;
  ck_assert_double_lt(work, 0.0);
  ck_assert_double_eq_tol(work, ideal, 1e-9 * fabs(ideal));
  dg_energy e;
  dg_sim_energy(sim, &e);
  ck_assert_double_eq_tol(e.impact_loss, 0.0, 1e-9 * e.kinetic_start);
  ck_assert_double_eq_tol(e.kinetic - e.kinetic_start, work + e.impact_loss, 1e-9 * e.kinetic_start);
  ck_assert_double_eq_tol(e.kinetic, 0.5 * (J1 + J2) * w_final * w_final, 1e-8 * e.kinetic);

  /* stays locked with nothing to hold; the lock carries no torque */
  dg_test_step(sim, 1000, h);
  ck_assert_double_eq(dg_test_signal(sim, "cl.locked"), 1.0);
  ck_assert_double_eq_tol(dg_test_signal(sim, "cl.torque"), 0.0, 1e-9);
  ck_assert_double_eq_tol(dg_test_signal(sim, "ld.omega"), w_final, 1e-9 * w_final);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* The lock time of the same engagement does not depend on the step size:
 * the solver locates it inside the step whatever dt is, from a step 1000
 * times shorter than t* to a 34th of it. RK4 integrates these linear
 * speeds exactly, so the located time carries only the root finder's
 * tolerance (1e-10 of the step) and round-off: 1e-9 s. */
static const double lock_dts[] = {1e-3, 2.7e-3, 1e-2, 3.1e-2};

START_TEST(test_lock_time_any_dt) {
  const double J1 = 0.25, J2 = 1.0, T = 40.0, w0 = 210.3, h = lock_dts[_i];
  const double t_star = w0 / (T * (1.0 / J1 + 1.0 / J2));
  dg_graph *g = rig("\"inertia\":0.25", "\"max_torque\":40,\"inertia\":0", "\"inertia\":1");
  dg_sim *sim = dg_test_sim(g);
  dg_test_set_initial(sim, 2, (const char *[]){"src.omega", "ld.omega"}, (double[]){w0, 0});
  while (dg_sim_time(sim) < 1.5)
    dg_test_step(sim, 1, h);
  ck_assert_double_eq(dg_test_signal(sim, "cl.locked"), 1.0);
  ck_assert_int_eq(dg_sim_event_count(sim), 1);
  ck_assert_double_eq_tol(dg_sim_last_event_time(sim), t_star, 1e-9);
  /* and no impact: the slip was exactly zero when it locked */
  dg_energy e;
  dg_sim_energy(sim, &e);
  ck_assert_double_eq_tol(e.impact_loss, 0.0, 1e-9 * e.kinetic_start);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* The same with the gearbox side running ahead: the friction direction
 * and the lock follow the sign of the slip. */
START_TEST(test_two_inertia_lock_reverse) {
  const double J1 = 0.25, J2 = 1.0, w0 = 84.2;
  dg_graph *g = rig("\"inertia\":0.25", "\"max_torque\":40,\"inertia\":0", "\"inertia\":1");
  dg_sim *sim = dg_test_sim(g);
  dg_test_set_initial(sim, 2, (const char *[]){"src.omega", "ld.omega"}, (double[]){0, w0});
  ck_assert_double_eq_tol(dg_test_signal(sim, "cl.torque"), -40.0, 1e-12);
  dg_test_step(sim, 100, 1e-3);
  ck_assert_double_eq_tol(dg_test_signal(sim, "src.omega"), 40.0 / J1 * 0.1, TOL_EXACT);
  dg_test_step(sim, 1000, 1e-3); /* t* = 84.2/200 = 0.421 s */
  ck_assert_double_eq(dg_test_signal(sim, "cl.locked"), 1.0);
  double w_final = J2 * w0 / (J1 + J2);
  ck_assert_double_eq_tol(dg_test_signal(sim, "src.omega"), w_final, 1e-9 * w_final);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* Both shafts at rest at t = 0: the clutch starts slipping (so that initial
 * speeds may differ) and locks at the first step. Locked, a torque at the
 * engine side accelerates J1 + J2 + J_plate together, and the lock carries
 * T·(J2 + J_plate)/(J1 + J2 + J_plate). */
START_TEST(test_locks_at_rest) {
  dg_graph *g = rig("\"inertia\":0.2,\"torque\":30", "\"max_torque\":100", "\"inertia\":0.79");
  dg_sim *sim = dg_test_sim(g);
  ck_assert_int_eq(dg_sim_dof_count(sim), 2);
  ck_assert_double_eq(dg_test_signal(sim, "cl.locked"), 0.0);
  dg_test_step(sim, 1, 1e-3);
  ck_assert_double_eq(dg_test_signal(sim, "cl.locked"), 1.0);
  ck_assert_int_eq(dg_sim_dof_count(sim), 1);
  dg_test_step(sim, 999, 1e-3);
  ck_assert_double_eq_tol(dg_test_signal(sim, "ld.omega"), 30.0 / 1.0 * 1.0, TOL_EXACT);
  ck_assert_double_eq_tol(dg_test_signal(sim, "cl.torque"), 30.0 * 0.8, 1e-9);
  ck_assert_double_eq_tol(dg_test_signal(sim, "cl.slip_rpm"), 0.0, 1e-12);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* A locked clutch under a torque ramp T_src = 100 t (J1 = 0.25, J2 = 1, no
 * plate): the lock carries 0.8·T_src and lets go when that exceeds the
 * static capacity 1.25·100 = 125 N·m, i.e. after t_u = 1.5625 s, which
 * the solver locates inside the step; from then on it transmits exactly
 * the kinetic capacity 100 N·m. Closed forms (RK4 is exact for these
 * polynomial speeds, and the step is split at t_u):
 *   locked:   ω = 40 t²  (both)
 *   slipping: ω_ld = 40 t_u² + 100 (t − t_u)
 *             ω_src = 40 t_u² + 400 [(t²/2 − t) − (t_u²/2 − t_u)]. */
START_TEST(test_unlock_over_capacity) {
  const double h = 1e-3;
  dg_graph *g = rig("\"inertia\":0.25,\"torque_vs_time\":{\"time\":[0,3],\"torque\":[0,300]}",
                    "\"max_torque\":100,\"static_factor\":1.25,\"inertia\":0", "\"inertia\":1");
  dg_sim *sim = dg_test_sim(g);
  dg_test_step(sim, 1, h);
  ck_assert_double_eq(dg_test_signal(sim, "cl.locked"), 1.0);
  dg_test_step(sim, 999, h);
  ck_assert_double_eq_tol(dg_test_signal(sim, "cl.torque"), 80.0, 1e-9);
  ck_assert_double_eq_tol(dg_test_signal(sim, "ld.omega"), 40.0, TOL_EXACT);
  double t_u = -1.0;
  for (int i = 0; i < 1000 && t_u < 0; i++) {
    dg_test_step(sim, 1, h);
    if (dg_test_signal(sim, "cl.locked") == 0.0)
      t_u = dg_sim_time(sim);
  }
  ck_assert_double_gt(t_u, 1.5625);
  ck_assert_double_le(t_u, 1.5625 + h + 1e-12);
  t_u = dg_sim_last_event_time(sim);
  ck_assert_double_eq_tol(t_u, 1.5625, 1e-9);
  ck_assert_double_eq_tol(dg_test_signal(sim, "cl.torque"), 100.0, 1e-12);
  while (dg_sim_time(sim) < 2.0 - 0.5 * h)
    dg_test_step(sim, 1, h);
  double t = dg_sim_time(sim);
  ck_assert_double_eq(dg_test_signal(sim, "cl.locked"), 0.0);
  ck_assert_double_eq_tol(dg_test_signal(sim, "cl.torque"), 100.0, 1e-12);
  ck_assert_double_eq_tol(dg_test_signal(sim, "ld.omega"), 40.0 * t_u * t_u + 100.0 * (t - t_u),
                          TOL_EXACT);
  ck_assert_double_eq_tol(dg_test_signal(sim, "src.omega"),
                          40.0 * t_u * t_u +
                              400.0 * ((t * t / 2 - t) - (t_u * t_u / 2 - t_u)),
                          TOL_EXACT);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* A locked clutch opens in the very step the pedal is pressed (the
 * gearbox side then coasts), transmits the reduced capacity at half pedal
 * while the engine runs ahead, and does not lock again while it runs ahead. */
/* a (1 kg·m², 1 rad/s, −5 N·m) → clutch of 1 N·m (static_factor 1) → b
 * (1 kg·m², at rest): slipping, ω_a = 1 − 6 t and ω_b = t, so the slip
 * closes at t = 1/7 s; holding the pair would take 2.5 N·m > 1, so the
 * slip reverses at once: ω_a = 1/7 − 4 (t − 1/7), ω_b = 1/7 − (t − 1/7)
 * (formerly the known bug clutch_reversal: the clutch held to 0.2 s). */
START_TEST(test_reversal_at_once) {
  dg_graph *g = dg_test_graph(
      "{\"drivegraph\":1,\"blocks\":{\"drive\":{\"type\":\"torque_source\",\"torque\":-5},"
      "\"a\":{\"type\":\"inertia\",\"inertia\":1},"
      "\"c\":{\"type\":\"clutch\",\"max_torque\":1,\"static_factor\":1,\"inertia\":0},"
      "\"b\":{\"type\":\"inertia\",\"inertia\":1}},"
      "\"connections\":[[\"drive.out\",\"a.in\"],[\"a.out\",\"c.in\"],[\"c.out\",\"b.in\"]]}");
  dg_sim *sim = dg_test_sim(g);
  static const char *const names[] = {"a.omega", "b.omega"};
  static const double w0[] = {1.0, 0.0};
  dg_test_set_initial(sim, 2, names, w0);
  const double tl = 1.0 / 7.0;
  double worst = 0.0;
  for (int k = 1; k <= 4; k++) {
    dg_test_step(sim, 1, 0.1);
    double t = dg_sim_time(sim);
    double a = t < tl ? 1.0 - 6.0 * t : tl - 4.0 * (t - tl);
    double b = t < tl ? t : tl - (t - tl);
    worst = fmax(worst, fmax(fabs(dg_test_signal(sim, "a.omega") - a),
                             fabs(dg_test_signal(sim, "b.omega") - b)));
  }
  ck_assert_double_le(worst, TOL_EXACT);
  ck_assert_double_eq(dg_test_signal(sim, "c.locked"), 0.0);
  ck_assert_double_eq_tol(dg_test_signal(sim, "c.torque"), -1.0, 1e-15);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* A shift command passing 0 inside a step, as in a chain of clutches under
 * sine commands: j0 turns at 1 rad/s driven by 10 N·m; c1's command
 * e1 = sin(2π (t − t0)) turns positive at t0 = 0.01234 s (inside a step),
 * after which c1 slips, carrying 5 e1 N·m to j1 (at rest until then); c2
 * (command below 0 all along: no capacity) sits between j1 and j2, both at
 * rest. Closed form while c1 slips: ω1 = 5 (1 − cos 2π(t − t0)) / (2π),
 * ω0 = 1 + 10 t − ω1 (unit inertias), ω2 = 0.
 *
 * Two things are checked. The command's zero is an event of c1 (g2), so
 * no segment straddles the corner of c1's torque, and c2's slip, which
 * leaves zero only from t0 on, is located there, not at false roots of
 * the dense output's cubic before it (the solver confirms each point it
 * locates on the RK4 step to it). Before both, the run had 31 sliver
 * segments of ~250 ns with nothing switched and missed the closed form by
 * 1.2e-7; now RK4 meets it to ~3e-13. */
START_TEST(test_command_through_zero) {
  const double t0 = 0.01234, pi = 3.14159265358979323846;
  dg_graph *g = dg_test_graphf(
      "{\"drivegraph\":1,\"blocks\":{"
      "\"src\":{\"type\":\"torque_source\",\"inertia\":0,\"torque\":10},"
      "\"j0\":{\"type\":\"inertia\",\"inertia\":1},"
      "\"e1\":{\"type\":\"sine_source\",\"amplitude\":1,\"frequency\":1,\"phase\":%.17g},"
      "\"c1\":{\"type\":\"clutch\",\"max_torque\":5,\"inertia\":0,"
      "\"inputs\":{\"engagement\":\"e1.value\"}},"
      "\"j1\":{\"type\":\"inertia\",\"inertia\":1},"
      "\"e2\":{\"type\":\"sine_source\",\"amplitude\":1,\"frequency\":1,\"phase\":%.17g},"
      "\"c2\":{\"type\":\"clutch\",\"max_torque\":5,\"inertia\":0,"
      "\"inputs\":{\"engagement\":\"e2.value\"}},"
      "\"j2\":{\"type\":\"inertia\",\"inertia\":1}},"
      "\"connections\":[[\"src.out\",\"j0.in\"],[\"j0.out\",\"c1.in\"],[\"c1.out\",\"j1.in\"],"
      "[\"j1.out\",\"c2.in\"],[\"c2.out\",\"j2.in\"]]}",
      2.0 * pi * (1.0 - t0), pi + 0.1);
  dg_sim *sim = dg_test_sim(g);
  dg_test_set_initial(sim, 1, (const char *[]){"j0.omega"}, (double[]){1.0});
  dg_test_step(sim, 200, 1e-3);
  double t = dg_sim_time(sim), w1 = 5.0 * (1.0 - cos(2.0 * pi * (t - t0))) / (2.0 * pi);
  ck_assert_double_eq_tol(dg_test_signal(sim, "j1.omega"), w1, 1e-11);
  ck_assert_double_eq_tol(dg_test_signal(sim, "j0.omega"), 1.0 + 10.0 * t - w1, 1e-11);
  ck_assert_double_eq(dg_test_signal(sim, "j2.omega"), 0.0);
  ck_assert_double_eq(dg_test_signal(sim, "c1.locked"), 0.0);
  /* c1's command at t0, c2's slip leaving zero just after it: two events,
   * two extra segments */
  ck_assert_int_eq(dg_sim_event_count(sim), 2);
  ck_assert_int_eq(dg_sim_segment_count(sim), 202);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

START_TEST(test_pedal_opens) {
  const double h = 1e-3;
  dg_graph *g = rig("\"inertia\":0.25,\"torque\":30", "\"max_torque\":100,\"inertia\":0",
                    "\"inertia\":1");
  dg_sim *sim = dg_test_sim(g);
  dg_test_step(sim, 500, h);
  ck_assert_double_eq(dg_test_signal(sim, "cl.locked"), 1.0);
  double w = dg_test_signal(sim, "ld.omega"); /* 30/1.25 · 0.5 = 12 */
  ck_assert_double_eq_tol(w, 12.0, TOL_EXACT);
  dg_sim_set_input(sim, DG_INPUT_CLUTCH, 1.0);
  dg_test_step(sim, 1, h);
  ck_assert_double_eq(dg_test_signal(sim, "cl.locked"), 0.0);
  ck_assert_int_eq(dg_sim_dof_count(sim), 2);
  dg_test_step(sim, 499, h);
  ck_assert_double_eq_tol(dg_test_signal(sim, "ld.omega"), w, 1e-12);
  ck_assert_double_eq_tol(dg_test_signal(sim, "src.omega"), w + 30.0 / 0.25 * 0.5, TOL_EXACT);
  ck_assert_double_eq(dg_test_signal(sim, "cl.torque"), 0.0);
  /* half pedal: 50 N·m of friction; the engine (30 N·m) keeps falling back */
  dg_sim_set_input(sim, DG_INPUT_CLUTCH, 0.5);
  dg_test_step(sim, 100, h);
  ck_assert_double_eq_tol(dg_test_signal(sim, "cl.torque"), 50.0, 1e-12);
  ck_assert_double_eq_tol(dg_test_signal(sim, "ld.omega"), w + 50.0 * 0.1, TOL_EXACT);
  ck_assert_double_eq_tol(dg_test_signal(sim, "src.omega"), w + 60.0 - 20.0 / 0.25 * 0.1,
                          TOL_EXACT);
  /* slip 60 − 8 − 5 = 47 rad/s, closing at 80 + 50 = 130 rad/s²: locks
   * within 0.37 s and then holds (it needs 24 N·m of 55) */
  dg_test_step(sim, 400, h);
  ck_assert_double_eq(dg_test_signal(sim, "cl.locked"), 1.0);
  ck_assert_double_eq_tol(dg_test_signal(sim, "cl.torque"), 24.0, 1e-9);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* A lock that is asked for more than the static capacity lets go where it
 * is found so — here at t = 0, the segment's start, not at the first
 * step's end — and then slips in the direction the lock was pushing,
 * without locking again (no chatter): 100 N·m on the engine side of a
 * 20 N·m clutch, from rest. Holding would take 100 · 1/1.25 = 80 N·m > 22. */
START_TEST(test_no_chatter) {
  dg_graph *g = rig("\"inertia\":0.25,\"torque\":100", "\"max_torque\":20,\"inertia\":0",
                    "\"inertia\":1");
  dg_sim *sim = dg_test_sim(g);
  long changes = dg_sim_topology_changes(sim);
  dg_test_step(sim, 1, 1e-3); /* let go at t = 0 */
  ck_assert_double_eq(dg_test_signal(sim, "cl.locked"), 0.0);
  ck_assert_double_eq_tol(dg_test_signal(sim, "ld.omega"), 20.0 * 1e-3, TOL_EXACT);
  dg_test_step(sim, 999, 1e-3);
  ck_assert_int_eq(dg_sim_topology_changes(sim) - changes, 2); /* lock, unlock */
  ck_assert_double_eq_tol(dg_test_signal(sim, "cl.torque"), 20.0, 1e-12);
  /* slipping from t = 0: the load at 20/J2 rad/s² */
  ck_assert_double_eq_tol(dg_test_signal(sim, "ld.omega"), 20.0, TOL_EXACT);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* Modes                                                                  */

/* validate enumerates slipping and locked; with the gearbox side free
 * (a coupler in its free mode, like a gearbox in neutral) the plate inertia
 * is all the `out` side has, so the default plate inertia matters. */
START_TEST(test_validate_modes) {
  dg_registry *reg = dg_test_registry();
  const char *fmt =
      "{\"drivegraph\":1,\"blocks\":{\"src\":{\"type\":\"torque_source\",\"inertia\":0.2},"
      "\"cl\":{\"type\":\"clutch\",\"max_torque\":100%s},"
      "\"cp\":{\"type\":\"test_coupler\"},\"ld\":{\"type\":\"load\",\"inertia\":1}},"
      "\"connections\":[[\"src.out\",\"cl.in\"],[\"cl.out\",\"cp.in\"],[\"cp.out\",\"ld.in\"]]}";
  char json[1024];
  snprintf(json, sizeof json, fmt, "");
  dg_graph_info info;
  int problems = 0;
  ck_assert_int_eq(
      dg_graph_validate_string(reg, json, "c.json", dg_test_count_diag, &problems, &info), 0);
  ck_assert_int_eq(info.modes, 4);
  ck_assert_int_eq(info.dofs, 2); /* start mode: slipping, coupled */
  snprintf(json, sizeof json, fmt, ",\"inertia\":0");
  ck_assert_int_eq(
      dg_graph_validate_string(reg, json, "c.json", dg_test_count_diag, &problems, NULL), 1);
  dg_registry_free(reg);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* Errors                                                                 */

static const dg_test_bad_param bad[] = {
    {"\"inertia\":0.1", "/blocks/cl/max_torque", "missing required number (N*m)"},
    {"\"max_torque\":-5", "/blocks/cl/max_torque", "must be > 0 (got -5)"},
    {"\"max_torque\":100,\"static_factor\":0.9", "/blocks/cl/static_factor",
     "must be >= 1 (got 0.9)"},
    {"\"max_torque\":100,\"inertia\":-0.01", "/blocks/cl/inertia", "must be >= 0 (got -0.01)"},
    {"\"max_torque\":100,\"mode\":\"automatic\"", "/blocks/cl/mode",
     "must be one of \"pedal\", \"auto\" (got \"automatic\")"},
    {"\"max_torque\":100,\"mode\":\"pedl\"", "/blocks/cl/mode",
     "must be one of \"pedal\", \"auto\" (got \"pedl\"); did you mean \"pedal\"?"},
    {"\"max_torque\":100,\"mode\":\"auto\",\"idle_rpm\":1500,\"launch_rpm\":1200",
     "/blocks/cl/launch_rpm", "must be > idle_rpm (1500) (got 1200)"},
    {"\"max_torque\":100,\"mode\":\"auto\",\"idle_rpm\":2500", "/blocks/cl/launch_rpm",
     "must be > idle_rpm (2500) (got 2000)"},
    {"\"max_torque\":100,\"idle_rpm\":900", "/blocks/cl/idle_rpm",
     "only used with mode \"auto\""},
    {"\"max_torque\":100,\"mode\":\"pedal\",\"launch_rpm\":1900", "/blocks/cl/launch_rpm",
     "only used with mode \"auto\""},
    {"\"max_torque\":100,\"engagement\":{\"pedal\":[0,0.5,1.2],\"engagement\":[1,0.5,0]}",
     "/blocks/cl/engagement/pedal/2", "must be <= 1 (got 1.2)"},
    {"\"max_torque\":100,\"engagement\":{\"pedal\":[-0.1,1],\"engagement\":[1,0]}",
     "/blocks/cl/engagement/pedal/0", "must be >= 0 (got -0.1)"},
    {"\"max_torque\":100,\"engagement\":{\"pedal\":[0,1],\"engagement\":[1.5,0]}",
     "/blocks/cl/engagement/engagement/0", "must be <= 1 (got 1.5)"},
    {"\"max_torque\":100,\"engagement\":{\"pedal\":[0,1],\"engagment\":[1,0]}",
     "/blocks/cl/engagement/engagment", "unknown key; did you mean \"engagement\"?"},
    {"\"max_torque\":100,\"engagement\":{\"pedal\":[0,0],\"engagement\":[1,0]}",
     "/blocks/cl/engagement/pedal/1", "must be strictly increasing (0 after 0)"},
    {"\"max_torque\":100,\"static_factr\":1.2", "/blocks/cl/static_factr",
     "unknown parameter; did you mean \"static_factor\"?"},
};

START_TEST(test_bad_params) {
  dg_test_graph_error_at(
      bad[_i].path, bad[_i].text,
      "{\"drivegraph\":1,\"blocks\":{\"src\":{\"type\":\"torque_source\",\"inertia\":1},"
      "\"cl\":{\"type\":\"clutch\",%s},\"ld\":{\"type\":\"load\",\"inertia\":1}},"
      "\"connections\":[[\"src.out\",\"cl.in\"],[\"cl.out\",\"ld.in\"]]}",
      bad[_i].params);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("clutch");
  TCase *tc = tcase_create("engagement");
  tcase_add_loop_test(tc, test_pedal_linear, 0, (int)(sizeof pedal_cases / sizeof pedal_cases[0]));
  tcase_add_loop_test(tc, test_engagement_curve, 0,
                      (int)(sizeof curve_cases / sizeof curve_cases[0]));
  tcase_add_loop_test(tc, test_auto_engagement, 0, (int)(sizeof auto_cases / sizeof auto_cases[0]));
  tcase_add_test(tc, test_auto_launch);
  suite_add_tcase(s, tc);
  tc = tcase_create("dynamics");
  tcase_add_test(tc, test_two_inertia_lock);
  tcase_add_loop_test(tc, test_lock_time_any_dt, 0, (int)(sizeof lock_dts / sizeof lock_dts[0]));
  tcase_add_test(tc, test_two_inertia_lock_reverse);
  tcase_add_test(tc, test_locks_at_rest);
  tcase_add_test(tc, test_unlock_over_capacity);
  tcase_add_test(tc, test_command_through_zero);
  tcase_add_test(tc, test_pedal_opens);
  tcase_add_test(tc, test_no_chatter);
  tcase_add_test(tc, test_reversal_at_once);
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
