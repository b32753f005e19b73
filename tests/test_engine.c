/* engine: torque map and curves, rev limiter, idle control, engine braking,
 * stall, throttle cut, energy audit; parameter errors. */
#include "testutil.h"

#include <math.h>
#include <stdio.h>

#define RPM 9.549296585513720 /* rpm per rad/s */

/* Table lookups are a handful of multiply-adds on exact decimal data: a few
 * ulps of 300 N·m. */
#define TOL_LOOKUP 1e-12

/* engine "eng" → load "ld"; `engine` and `load` are the parameter lists. */
static dg_graph *rig(const char *engine, const char *load) {
  return dg_test_graphf(
      "{\"drivegraph\":1,\"blocks\":{\"eng\":{\"type\":\"engine\",%s},"
      "\"ld\":{\"type\":\"load\"%s%s}},\"connections\":[[\"eng.out\",\"ld.in\"]]}",
      engine, load[0] ? "," : "", load);
}

static void set_rpm(dg_sim *sim, double rpm) { dg_test_set_initial1(sim, "eng.rpm", rpm); }

/* Net torque and effective throttle at a given speed and driver throttle
 * (no step: the signal hook evaluates the characteristic at the current
 * state). */
static double torque_at(dg_sim *sim, double rpm, double throttle) {
  set_rpm(sim, rpm);
  dg_sim_set_input(sim, DG_INPUT_THROTTLE, throttle);
  return dg_test_signal(sim, "eng.torque");
}

/* ------------------------------------------------------------------------ */
/* Characteristic                                                           */

#define BASE "\"inertia\":0.2,\"idle_rpm\":800,"

/* rows = throttle 0.2, 0.6, 1.0; columns = 1000, 3000, 5000 rpm */
static const char map_engine[] =
    BASE "\"redline_rpm\":7000,\"torque_map\":{\"rpm\":[1000,3000,5000],"
         "\"throttle\":[0.2,0.6,1.0],\"torque\":[[-10,-20,-30],[100,140,120],[180,260,220]]}";

START_TEST(test_map_bilinear) {
  dg_graph *g = rig(map_engine, "\"inertia\":0.05");
  dg_sim *sim = dg_test_sim(g);
  /* a breakpoint returns the stored value */
  ck_assert_double_eq_tol(torque_at(sim, 3000, 0.6), 140.0, TOL_LOOKUP);
  /* a cell centre is the mean of its four corners */
  ck_assert_double_eq_tol(torque_at(sim, 2000, 0.4), (-10 - 20 + 100 + 140) / 4.0, TOL_LOOKUP);
  ck_assert_double_eq_tol(torque_at(sim, 4000, 0.8), (140 + 120 + 260 + 220) / 4.0, TOL_LOOKUP);
  ck_assert_double_eq_tol(dg_test_signal(sim, "eng.throttle"), 0.8, 1e-15);
  /* along one axis: linear (2500 rpm is 3/4 of the way at throttle 1) */
  ck_assert_double_eq_tol(torque_at(sim, 2500, 1.0), 180 + 0.75 * 80, TOL_LOOKUP);
  /* above the last rpm breakpoint the last column holds */
  ck_assert_double_eq_tol(torque_at(sim, 6000, 1.0), 220.0, TOL_LOOKUP);
  ck_assert_double_eq_tol(torque_at(sim, 6500, 0.8), (120 + 220) / 2.0, TOL_LOOKUP);
  /* below the first throttle breakpoint the first row holds */
  ck_assert_double_eq_tol(torque_at(sim, 3000, 0.1), -20.0, TOL_LOOKUP);
  ck_assert_double_eq_tol(torque_at(sim, 4000, 0.0), -25.0, TOL_LOOKUP);
  /* between idle and the first rpm breakpoint the first column holds */
  ck_assert_double_eq_tol(torque_at(sim, 900, 1.0), 180.0, TOL_LOOKUP);
  /* the driver throttle is clamped to [0, 1] */
  ck_assert_double_eq_tol(torque_at(sim, 3000, 1.7), 260.0, TOL_LOOKUP);
  ck_assert_double_eq(dg_test_signal(sim, "eng.throttle"), 1.0);
  ck_assert_double_eq_tol(torque_at(sim, 3000, -0.5), -20.0, TOL_LOOKUP);
  ck_assert_double_eq(dg_test_signal(sim, "eng.throttle"), 0.0);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

START_TEST(test_curves) {
  dg_graph *g = rig(BASE "\"redline_rpm\":7500,"
                         "\"full_load\":{\"rpm\":[1000,4000],\"torque\":[150,240]},"
                         "\"closed_throttle\":{\"rpm\":[0,2000,6000],\"torque\":[0,-20,-40]}",
                    "\"inertia\":0.05");
  dg_sim *sim = dg_test_sim(g);
  /* 3000 rpm: full = 150 + 90·2/3 = 210, closed = −20 − 20·1/4 = −25,
   * T = closed + θ (full − closed) = −25 + 0.25·235 */
  ck_assert_double_eq_tol(torque_at(sim, 3000, 0.25), -25 + 0.25 * 235, TOL_LOOKUP);
  ck_assert_double_eq_tol(torque_at(sim, 3000, 0.0), -25.0, TOL_LOOKUP);
  ck_assert_double_eq_tol(torque_at(sim, 3000, 1.0), 210.0, TOL_LOOKUP);
  /* each curve clamps on its own axis: full 240 above 4000, closed −40 at 7000 */
  ck_assert_double_eq_tol(torque_at(sim, 7000, 0.5), -40 + 0.5 * 280, TOL_LOOKUP);
  dg_sim_free(sim);
  dg_graph_free(g);

  /* without closed_throttle the closed curve is 0: T = θ · full */
  g = rig(BASE "\"redline_rpm\":7500,\"full_load\":{\"rpm\":[1000,4000],\"torque\":[150,240]}",
          "\"inertia\":0.05");
  sim = dg_test_sim(g);
  ck_assert_double_eq_tol(torque_at(sim, 3000, 0.5), 105.0, TOL_LOOKUP);
  ck_assert_double_eq_tol(torque_at(sim, 3000, 0.0), 0.0, TOL_LOOKUP);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* The friction curve is subtracted; a stalled engine keeps only friction. */
START_TEST(test_friction) {
  dg_graph *g = rig(BASE "\"redline_rpm\":7000,\"stall_rpm\":500,"
                         "\"torque_map\":{\"rpm\":[0,8000],\"throttle\":[0,1],"
                         "\"torque\":[[-10,-10],[200,200]]},"
                         "\"friction\":{\"rpm\":[0,6000],\"torque\":[5,35]}",
                    "\"inertia\":0.05");
  dg_sim *sim = dg_test_sim(g);
  /* F(3000) = 20 */
  ck_assert_double_eq_tol(torque_at(sim, 3000, 1.0), 200.0 - 20.0, TOL_LOOKUP);
  ck_assert_double_eq_tol(torque_at(sim, 3000, 0.0), -10.0 - 20.0, TOL_LOOKUP);
  ck_assert_double_eq_tol(torque_at(sim, 3000, 0.5), 95.0 - 20.0, TOL_LOOKUP);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Dynamics                                                                 */

/* Flat map: closed −30 N·m, full 200 N·m at every rpm. */
#define FLAT_MAP \
  "\"torque_map\":{\"rpm\":[0,8000],\"throttle\":[0,1],\"torque\":[[-30,-30],[200,200]]}"

/* A free engine (J = 0.19 + 0.01) at full throttle: up at 200/0.2 = 1000
 * rad/s² to the redline, then down at 30/0.2 = 150 rad/s² to redline −
 * hysteresis, and so on. Both crossings are located inside the step, so the
 * speed is the closed-form sawtooth: from 5000 rpm, a rise of 1000 rpm to
 * the first cut at t1, then falls of 100 rpm (Td) and rises of 100 rpm (Tu).
 * The torque is constant on each piece, so RK4 is exact there; what is left
 * is where the crossings were located: within EVENT_TOL (1e-10) of a 1 ms
 * step each, 1e-13 s, late (the segment ends where g <= 0). Over the ~50
 * crossings of 4 s at ~10^4 rpm/s that is < 1e-7 rpm, hence 1e-6. */
START_TEST(test_rev_limiter) {
  const double U = 1000.0 * RPM, D = 150.0 * RPM; /* rpm/s */
  const double t1 = 1000.0 / U, Td = 100.0 / D, Tu = 100.0 / U, P = Td + Tu;
  dg_graph *g = rig("\"inertia\":0.19,\"idle_rpm\":800,\"redline_rpm\":6000,"
                    "\"limiter_hysteresis_rpm\":100," FLAT_MAP,
                    "\"inertia\":0.01");
  dg_sim *sim = dg_test_sim(g);
  set_rpm(sim, 5000);
  dg_sim_set_input(sim, DG_INPUT_THROTTLE, 1.0);
  int cuts = 0;
  double prev_limiter = 0;
  for (int i = 1; i <= 4000; i++) {
    ck_assert_int_eq(dg_sim_step(sim, 1e-3), DG_OK);
    double t = i * 1e-3, rpm = dg_test_signal(sim, "eng.rpm");
    double lim = dg_test_signal(sim, "eng.limiter");
    double expect, phase = t < t1 ? -1.0 : fmod(t - t1, P);
    bool cut = phase >= 0.0 && phase < Td;
    if (phase < 0.0)
      expect = 5000.0 + U * t;
    else
      expect = cut ? 6000.0 - D * phase : 5900.0 + U * (phase - Td);
    ck_assert_msg(fabs(rpm - expect) < 1e-6, "t = %g s: %.12g rpm, closed form %.12g", t, rpm,
                  expect);
    ck_assert_double_le(rpm, 6000.0 + 1e-6);
    if (t > t1)
      ck_assert_double_ge(rpm, 5900.0 - 1e-6);
    /* the limiter's state and the torque as the next step sees them */
    if (fabs(phase) > 1e-9 && fabs(phase - Td) > 1e-9) {
      ck_assert_double_eq(lim, cut ? 1.0 : 0.0);
      ck_assert_double_eq(dg_test_signal(sim, "eng.torque"), cut ? -30.0 : 200.0);
    }
    if (lim == 1.0 && prev_limiter == 0.0)
      cuts++;
    prev_limiter = lim;
  }
  /* a cut at t1 and at t1 + k P up to 4 s (none within 1e-9 s of the end) */
  ck_assert_int_eq(cuts, 1 + (int)floor((4.0 - t1) / P));
  ck_assert_int_gt(dg_sim_event_count(sim), 2 * cuts - 2);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* Idle hold, declutched: engine → load with viscous drag c1 = 0.01. With the
 * flat map T = −20 + 220 θ and θ = g (800 − n), g = 0.02/rpm, the balance
 * −20 + 220 g (800 − n) = c1 n / RPM gives n = (220 g 800 − 20) / (220 g +
 * c1 / RPM) = 795.27 rpm. The loop's rate (220 g RPM + c1)/J ≈ 200 /s
 * settles in 3 s to round-off (e^-400), hence 1e-6 rpm. */
START_TEST(test_idle_hold) {
  const double gain = 0.02, c1 = 0.01;
  const double expect = (220 * gain * 800 - 20) / (220 * gain + c1 / RPM);
  for (int from_rest = 0; from_rest < 2; from_rest++) {
    dg_graph *g = rig("\"inertia\":0.2,\"idle_rpm\":800,\"redline_rpm\":6000,\"stall_rpm\":400,"
                      "\"torque_map\":{\"rpm\":[0,8000],\"throttle\":[0,1],"
                      "\"torque\":[[-20,-20],[200,200]]}",
                      "\"inertia\":0.01,\"c1\":0.01");
    dg_sim *sim = dg_test_sim(g);
    /* from 1500 rpm it coasts down to idle; from rest the idle controller
     * cranks it (the stall check arms only once 400 rpm is reached) */
    if (!from_rest)
      set_rpm(sim, 1500);
    for (int i = 0; i < 3000; i++) {
      ck_assert_int_eq(dg_sim_step(sim, 1e-3), DG_OK);
      ck_assert_double_eq(dg_test_signal(sim, "eng.stalled"), 0.0);
    }
    double rpm = dg_test_signal(sim, "eng.rpm");
    ck_assert_double_eq_tol(rpm, expect, 1e-6);
    ck_assert_double_eq_tol(rpm, 800.0, 5.0);
    ck_assert_double_eq_tol(dg_test_signal(sim, "eng.throttle"), gain * (800 - rpm), 1e-12);
    dg_sim_free(sim);
    dg_graph_free(g);
  }
}
END_TEST

/* Closed-throttle coast: T(n) = −10 − 25 (n − 1000)/5000 = a + b ω with
 * a = −5, b = −0.005 RPM, on J = 0.25 (no load drag, above idle so idle
 * control is off). At 5000 rpm T = −30, so ω̇ = −120 rad/s²; over time
 * ω(t) = (ω0 + a/b) e^{b t / J} − a/b. RK4 at h b/J = 2e-4 is exact to
 * round-off; 1e-9 rad/s. */
START_TEST(test_engine_braking) {
  const double J = 0.25, a = -5.0, b = -0.005 * RPM, w0 = 5000 / RPM;
  dg_graph *g = rig("\"inertia\":0.24,\"idle_rpm\":800,\"redline_rpm\":6500,"
                    "\"torque_map\":{\"rpm\":[1000,6000],\"throttle\":[0,1],"
                    "\"torque\":[[-10,-35],[200,300]]}",
                    "\"inertia\":0.01");
  dg_sim *sim = dg_test_sim(g);
  set_rpm(sim, 5000);
  ck_assert_double_eq_tol(dg_test_signal(sim, "eng.torque"), -30.0, TOL_LOOKUP);
  ck_assert_double_eq(dg_test_signal(sim, "eng.throttle"), 0.0);
  /* one short step: (ω1 − ω0)/h = T/J · (e^{λh} − 1)/(λh), λh = b h/J ≈ −1.9e-5,
   * so −120 to 1e-5 relative */
  ck_assert_int_eq(dg_sim_step(sim, 1e-4), DG_OK);
  double accel = (dg_test_signal(sim, "eng.omega") - w0) / 1e-4;
  ck_assert_double_eq_tol(accel, -30.0 / J, 120 * 2e-5);
  set_rpm(sim, 5000);
  dg_test_step(sim, 1000, 1e-3);
  double expect = (w0 + a / b) * exp(b * 1.0 / J) - a / b;
  ck_assert_double_eq_tol(dg_test_signal(sim, "eng.omega"), expect, 1e-9);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* Without idle control a closed-throttle engine coasts to rest and stays
 * there: the drag fades out within 10 rpm of standstill instead of driving
 * it backwards. */
START_TEST(test_coast_to_rest) {
  dg_graph *g = rig("\"inertia\":0.24,\"idle_rpm\":800,\"redline_rpm\":6500,\"idle_gain\":0,"
                    "\"torque_map\":{\"rpm\":[0,8000],\"throttle\":[0,1],"
                    "\"torque\":[[-10,-10],[200,200]]}",
                    "\"inertia\":0.01");
  dg_sim *sim = dg_test_sim(g);
  set_rpm(sim, 300);
  for (int i = 0; i < 3000; i++) {
    ck_assert_int_eq(dg_sim_step(sim, 1e-3), DG_OK);
    ck_assert_double_ge(dg_test_signal(sim, "eng.rpm"), 0.0);
  }
  /* 300 → 10 rpm at −40 rad/s² takes 0.76 s; then e^{−t/26 ms} */
  ck_assert_double_lt(dg_test_signal(sim, "eng.rpm"), 1e-9);
  /* at 5 rpm half of the drag, backwards the drag pushes forwards */
  ck_assert_double_eq_tol(torque_at(sim, 5, 0), -5.0, TOL_LOOKUP);
  ck_assert_double_eq_tol(torque_at(sim, -5, 0), 5.0, TOL_LOOKUP);
  ck_assert_double_eq_tol(torque_at(sim, -100, 0), 10.0, TOL_LOOKUP);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* A Coulomb load of 150 N·m beats the 100 N·m full-throttle torque: from
 * 1000 rpm the engine slows at (100 − 150)/0.25 = 200 rad/s², stalls where
 * its speed reaches 500 rpm, at t = 500 / (200 RPM) = 0.2618 s (located
 * inside the step: the speed is linear there, so the stall is exact but for
 * the event's tolerance), and stays stalled with zero torque (no friction
 * curve): the load's friction then brings it to rest. */
START_TEST(test_stall) {
  const double t_stall = 500.0 / (200.0 * RPM);
  dg_graph *g = rig("\"inertia\":0.2,\"idle_rpm\":800,\"redline_rpm\":6000,\"stall_rpm\":500,"
                    "\"torque_map\":{\"rpm\":[0,8000],\"throttle\":[0,1],"
                    "\"torque\":[[-20,-20],[100,100]]}",
                    "\"inertia\":0.05,\"c0\":150");
  dg_sim *sim = dg_test_sim(g);
  set_rpm(sim, 1000);
  dg_sim_set_input(sim, DG_INPUT_THROTTLE, 1.0);
  int stalled_at = -1;
  for (int i = 1; i <= 2000; i++) {
    ck_assert_int_eq(dg_sim_step(sim, 1e-3), DG_OK);
    double t = i * 1e-3, st = dg_test_signal(sim, "eng.stalled");
    double rpm = dg_test_signal(sim, "eng.rpm");
    if (stalled_at < 0 && st == 1.0)
      stalled_at = i;
    if (t < t_stall) {
      ck_assert_double_eq(st, 0.0);
      ck_assert_double_eq_tol(rpm, 1000.0 - 200.0 * RPM * t, 1e-9);
      ck_assert_double_eq_tol(dg_test_signal(sim, "eng.torque"), 100.0, TOL_LOOKUP);
    } else {
      /* after the stall the only torque is the load's 150 N·m: −600 rad/s² */
      ck_assert_double_eq(st, 1.0);
      ck_assert_double_eq(dg_test_signal(sim, "eng.torque"), 0.0);
      ck_assert_double_eq(dg_test_signal(sim, "eng.throttle"), 0.0);
      double w = 500.0 - 600.0 * RPM * (t - t_stall);
      ck_assert_double_eq_tol(rpm, w > 0.0 ? w : 0.0, 1e-6);
    }
  }
  ck_assert_int_eq(stalled_at, (int)ceil(t_stall / 1e-3));
  dg_sim_free(sim);
  dg_graph_free(g);

  /* stalled with a friction curve: only the friction remains */
  g = rig("\"inertia\":0.2,\"idle_rpm\":800,\"redline_rpm\":6000,\"stall_rpm\":500,"
          "\"torque_map\":{\"rpm\":[0,8000],\"throttle\":[0,1],\"torque\":[[-20,-20],[100,100]]},"
          "\"friction\":{\"rpm\":[0,1000],\"torque\":[4,8]}",
          "\"inertia\":0.05,\"c0\":150");
  sim = dg_test_sim(g);
  set_rpm(sim, 600);
  dg_sim_set_input(sim, DG_INPUT_THROTTLE, 1.0);
  dg_test_step(sim, 100, 1e-3);
  ck_assert_double_eq(dg_test_signal(sim, "eng.stalled"), 1.0);
  ck_assert_double_eq_tol(torque_at(sim, 250, 1.0), -5.0, TOL_LOOKUP);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* ---- throttle cut: the input bound to a channel of that name ---- */

START_TEST(test_throttle_cut) {
  dg_registry *reg = dg_test_registry();
  dg_graph *g = dg_test_graph_reg(
      reg, "{\"drivegraph\":1,\"blocks\":{\"eng\":{\"type\":\"engine\",\"inertia\":0.2,"
           "\"idle_rpm\":800,\"redline_rpm\":6000,\"inputs\":{\"throttle_cut\":\"throttle_cut\"},"
           FLAT_MAP "},"
           "\"cut\":{\"type\":\"test_speedo\"},"
           "\"ld\":{\"type\":\"load\",\"inertia\":0.05}},"
           "\"connections\":[[\"eng.out\",\"cut.in\"],[\"cut.out\",\"ld.in\"]]}");
  dg_sim *sim = dg_test_sim(g);
  int cut = dg_sim_input_find(sim, "throttle_cut");
  ck_assert_int_ge(cut, 0);
  dg_sim_set_input(sim, DG_INPUT_THROTTLE, 1.0);
  /* steps of 1 µs move the speed by < 0.01 rpm; signals are read at the
   * state after the step, so they are compared with its own rpm */
  set_rpm(sim, 3000);
  ck_assert_int_eq(dg_sim_step(sim, 1e-6), DG_OK);
  ck_assert_double_eq(dg_test_signal(sim, "eng.torque"), 200.0);
  dg_sim_set_input(sim, cut, 1.0);
  ck_assert_int_eq(dg_sim_step(sim, 1e-6), DG_OK);
  ck_assert_double_eq(dg_test_signal(sim, "eng.torque"), -30.0);
  ck_assert_double_eq(dg_test_signal(sim, "eng.throttle"), 0.0);
  dg_sim_set_input(sim, cut, 0.4); /* below 0.5: no cut */
  ck_assert_int_eq(dg_sim_step(sim, 1e-6), DG_OK);
  ck_assert_double_eq(dg_test_signal(sim, "eng.torque"), 200.0);
  /* cut below idle: the idle controller still acts, θ = 0.02 (800 − n) */
  dg_sim_set_input(sim, cut, 1.0);
  set_rpm(sim, 790);
  ck_assert_int_eq(dg_sim_step(sim, 1e-6), DG_OK);
  double rpm = dg_test_signal(sim, "eng.rpm");
  double th = 0.02 * (800 - rpm);
  ck_assert_double_eq_tol(th, 0.2, 1e-3);
  ck_assert_double_eq_tol(dg_test_signal(sim, "eng.throttle"), th, 1e-12);
  ck_assert_double_eq_tol(dg_test_signal(sim, "eng.torque"), -30 + 230 * th, 1e-9);
  dg_sim_free(sim);
  dg_graph_free(g);
  dg_registry_free(reg);
}
END_TEST

/* Energy audit at constant torque: 150 N·m on J = 0.5 from 1000 rpm for
 * 0.5 s (to 2432 rpm, below the redline, above idle). The angle turned is
 * ω0 t + T t²/(2J), the work T·angle, and equals the kinetic energy gained.
 * RK4 integrates polynomials of this degree exactly: 1e-9 relative. */
START_TEST(test_energy) {
  const double T = 150, J = 0.5, w0 = 1000 / RPM, t = 0.5;
  dg_graph *g = rig("\"inertia\":0.4,\"idle_rpm\":800,\"redline_rpm\":6000,"
                    "\"torque_map\":{\"rpm\":[0,8000],\"throttle\":[0,1],"
                    "\"torque\":[[-30,-30],[150,150]]}",
                    "\"inertia\":0.1");
  dg_sim *sim = dg_test_sim(g);
  set_rpm(sim, 1000);
  dg_sim_set_input(sim, DG_INPUT_THROTTLE, 1.0);
  dg_test_step(sim, 500, 1e-3);
  double angle = w0 * t + T * t * t / (2 * J);
  double work = dg_sim_block_work(sim, dg_test_block_index(g, "eng"));
  ck_assert_double_eq_tol(work, T * angle, 1e-9 * T * angle);
  ck_assert_double_eq_tol(dg_test_signal(sim, "eng.omega"), w0 + T / J * t, 1e-9);
  dg_energy e;
  dg_sim_energy(sim, &e);
  ck_assert_double_eq_tol(e.kinetic - e.kinetic_start, work, 1e-9 * work);
  ck_assert_double_eq_tol(e.balance_error, 0.0, 1e-9 * work);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Parameter errors                                                         */

/* ------------------------------------------------------------------------ */
/* Fuel                                                                     */

/* The engine "eng" (`engine` after the base parameters; full load 100 N·m
 * flat, closed throttle −10 N·m flat) held at `rpm` by a speed source, at
 * driver throttle `throttle`: the torque, the fuel rate and the states are
 * then constants of time, so RK4 integrates them exactly. */
static dg_sim *held(dg_graph **g, const char *engine, double rpm, double throttle) {
  *g = dg_test_graphf(
      "{\"drivegraph\":1,\"blocks\":{\"eng\":{\"type\":\"engine\",\"inertia\":0.2,"
      "\"idle_rpm\":800,\"redline_rpm\":6000,\"idle_gain\":0,"
      "\"full_load\":{\"rpm\":[0,8000],\"torque\":[100,100]},"
      "\"closed_throttle\":{\"rpm\":[0,8000],\"torque\":[-10,-10]},%s},"
      "\"src\":{\"type\":\"speed_source\",\"inputs\":{\"speed\":%.17g}}},"
      "\"connections\":[[\"eng.out\",\"src.in\"]]}",
      engine, rpm / RPM);
  dg_sim *sim = dg_test_sim(*g);
  dg_sim_set_input(sim, DG_INPUT_THROTTLE, throttle);
  return sim;
}

/* fuel_map over rpm × torque, bilinear: at 2500 rpm and throttle 0.5 the
 * torque is −10 + 0.5·110 = 45 N·m; between rpm 2000 and 3000 and torque
 * 0 and 60 of the map (g/s) [[0.2, 0.3], [1.6, 2.4]]:
 *   ṁ = lerp(lerp(0.2, 0.3, 0.5), lerp(1.6, 2.4, 0.5), 45/60)
 *     = lerp(0.25, 2.0, 0.75) = 1.5625 g/s.
 * Over 10 s: 15.625 g; the fuel's energy 15.625e-3 · 43e6 J; the heat
 * that minus T·ω·t; the ledger W = E_f − Q. */
START_TEST(test_fuel_map) {
  dg_graph *g;
  dg_sim *sim = held(&g,
                     "\"fuel_map\":{\"rpm\":[2000,3000],\"torque\":[0,60],"
                     "\"fuel_rate\":[[0.2,0.3],[1.6,2.4]]}",
                     2500, 0.5);
  ck_assert_double_eq_tol(dg_test_signal(sim, "eng.torque"), 45.0, TOL_LOOKUP);
  ck_assert_double_eq_tol(dg_test_signal(sim, "eng.fuel_rate"), 1.5625, 1e-14);
  ck_assert_double_eq_tol(dg_test_signal(sim, "eng.fuel_power"), 1.5625e-3 * 43e6, 1e-6);
  double w = 2500 / RPM, pf = 1.5625e-3 * 43e6;
  ck_assert_double_eq_tol(dg_test_signal(sim, "eng.efficiency"), 45.0 * w / pf, 1e-12);
  ck_assert_double_eq(dg_test_signal(sim, "eng.fuel_model"), 1.0);
  dg_test_step(sim, 1000, 1e-2);
  ck_assert_double_eq_tol(dg_test_signal(sim, "eng.fuel_used"), 15.625e-3, 1e-15);
  ck_assert_double_eq_tol(dg_test_signal(sim, "eng.fuel_volume"), 15.625e-3 / 0.75, 1e-15);
  ck_assert_double_eq_tol(dg_test_signal(sim, "eng.fuel_energy"), pf * 10.0, 1e-6);
  ck_assert_double_eq_tol(dg_test_signal(sim, "eng.heat"), (pf - 45.0 * w) * 10.0, 1e-6);
  dg_block_energy e;
  ck_assert_int_eq(dg_sim_block_energy(sim, dg_test_block_index(g, "eng"), &e), DG_OK);
  ck_assert(e.ledger);
  ck_assert_double_eq_tol(e.work, 45.0 * w * 10.0, 1e-6);
  ck_assert_double_eq_tol(e.error, 0.0, 1e-8);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* bsfc_map: 250 g/kWh at 3000 rpm and full throttle (100 N·m): P = 100 ·
 * 3000/RPM = 31.416 kW, ṁ = 250 · 31.416 / 3600 = 2.1817 g/s. */
START_TEST(test_bsfc_map) {
  dg_graph *g;
  dg_sim *sim = held(&g,
                     "\"bsfc_map\":{\"rpm\":[1000,5000],\"torque\":[0,200],"
                     "\"bsfc\":[[250,250],[250,250]]}",
                     3000, 1.0);
  double p = 100.0 * 3000 / RPM;
  ck_assert_double_eq_tol(dg_test_signal(sim, "eng.fuel_rate"), 250.0 * p / 3.6e6, 1e-12);
  ck_assert_double_eq_tol(dg_test_signal(sim, "eng.efficiency"), 3.6e6 / (250e-3 * 43e6), 1e-12);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* efficiency over the fraction of rated power (FASTSim's form): rated
 * 50 kW; at 3000 rpm and throttle 0.6, T = −10 + 0.6·110 = 56 N·m,
 * P = 17.593 kW, the fraction 0.35186 between 0.2 (η 0.30) and 0.4
 * (η 0.36): η = 0.30 + 0.06 · 0.75930 = 0.34556; P_f = P / η. */
START_TEST(test_efficiency_form) {
  dg_graph *g;
  dg_sim *sim = held(&g,
                     "\"efficiency\":{\"power_fraction\":[0,0.2,0.4,1],"
                     "\"efficiency\":[0.1,0.3,0.36,0.33]},\"rated_power\":50000",
                     3000, 0.6);
  double p = 56.0 * 3000 / RPM, f = p / 50000.0, eta = 0.30 + 0.06 * (f - 0.2) / 0.2;
  ck_assert_double_eq_tol(dg_test_signal(sim, "eng.fuel_power"), p / eta, 1e-8);
  ck_assert_double_eq_tol(dg_test_signal(sim, "eng.efficiency"), eta, 1e-12);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* accessory_power adds to the brake power the efficiency is read at and
 * the fuel is burnt for, not to the shaft: 3 kW of accessories at the
 * point above, P_o = 17.593 + 3 kW, fraction 0.41186 between 0.4 (η 0.36)
 * and 1 (η 0.33): η = 0.36 − 0.03 · 0.01977 = 0.35941; P_f = P_o / η.
 * The torque is unchanged (56 N·m), the accessories' 3 kW are heat, and
 * the ledger closes; at zero throttle and the fuel cut off, P_f = 3 kW /
 * η(0.06) = 3000 / 0.16. */
START_TEST(test_accessory_power) {
  dg_graph *g;
  dg_sim *sim = held(&g,
                     "\"efficiency\":{\"power_fraction\":[0,0.2,0.4,1],"
                     "\"efficiency\":[0.1,0.3,0.36,0.33]},\"rated_power\":50000,"
                     "\"accessory_power\":3000",
                     3000, 0.6);
  double p = 56.0 * 3000 / RPM, po = p + 3000.0, f = po / 50000.0;
  double eta = 0.36 - 0.03 * (f - 0.4) / 0.6;
  ck_assert_double_eq_tol(dg_test_signal(sim, "eng.torque"), 56.0, TOL_LOOKUP);
  ck_assert_double_eq_tol(dg_test_signal(sim, "eng.fuel_power"), po / eta, 1e-8);
  dg_test_step(sim, 1000, 1e-2);
  ck_assert_double_eq_tol(dg_test_signal(sim, "eng.heat"), (po / eta - p) * 10.0, 1e-6);
  dg_block_energy e;
  ck_assert_int_eq(dg_sim_block_energy(sim, dg_test_block_index(g, "eng"), &e), DG_OK);
  ck_assert_double_eq_tol(e.error, 0.0, 1e-8);
  dg_sim_free(sim);
  dg_graph_free(g);
  sim = held(&g,
             "\"efficiency\":{\"power_fraction\":[0,0.2,0.4,1],"
             "\"efficiency\":[0.1,0.3,0.36,0.33]},\"rated_power\":50000,"
             "\"accessory_power\":3000,\"fuel_cut\":false",
             3000, 0.0);
  ck_assert_double_eq_tol(dg_test_signal(sim, "eng.fuel_power"), 3000.0 / 0.16, 1e-8);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* Idle fuel is a floor while fuelled; the fuel is cut on overrun (throttle
 * 0 above fuel_cut_rpm), where the engine is motored: no fuel, and the
 * heat is the friction work, Q̇ = −T·ω = 10 N·m · ω. */
START_TEST(test_idle_and_cut) {
  const char *bsfc = "\"bsfc_map\":{\"rpm\":[1000,5000],\"torque\":[0,200],"
                     "\"bsfc\":[[250,250],[250,250]]},\"idle_fuel_rate\":0.2";
  dg_graph *g;
  /* throttle 0.1: T = 1 N·m, bsfc gives 0.0218 g/s, below the idle floor */
  dg_sim *sim = held(&g, bsfc, 3000, 0.1);
  ck_assert_double_eq_tol(dg_test_signal(sim, "eng.fuel_rate"), 0.2, 1e-15);
  ck_assert_double_eq(dg_test_signal(sim, "eng.fuel_cut"), 0.0);
  dg_sim_free(sim);
  dg_graph_free(g);
  sim = held(&g, bsfc, 3000, 0.0);
  ck_assert_double_eq(dg_test_signal(sim, "eng.fuel_rate"), 0.0);
  ck_assert_double_eq(dg_test_signal(sim, "eng.fuel_cut"), 1.0);
  dg_test_step(sim, 100, 1e-2);
  ck_assert_double_eq(dg_test_signal(sim, "eng.fuel_used"), 0.0);
  ck_assert_double_eq_tol(dg_test_signal(sim, "eng.heat"), 10.0 * 3000 / RPM * 1.0, 1e-8);
  dg_sim_free(sim);
  dg_graph_free(g);
  /* below fuel_cut_rpm the engine idles on idle fuel */
  sim = held(&g, "\"bsfc_map\":{\"rpm\":[1000,5000],\"torque\":[0,200],"
                 "\"bsfc\":[[250,250],[250,250]]},\"idle_fuel_rate\":0.2,\"fuel_cut_rpm\":3500",
             3000, 0.0);
  ck_assert_double_eq(dg_test_signal(sim, "eng.fuel_rate"), 0.2);
  dg_sim_free(sim);
  dg_graph_free(g);
  /* fuel_cut off: idle fuel on overrun too */
  sim = held(&g, "\"bsfc_map\":{\"rpm\":[1000,5000],\"torque\":[0,200],"
                 "\"bsfc\":[[250,250],[250,250]]},\"idle_fuel_rate\":0.2,\"fuel_cut\":false",
             3000, 0.0);
  ck_assert_double_eq(dg_test_signal(sim, "eng.fuel_rate"), 0.2);
  dg_test_set_initial1(sim, "eng.fuel_used", 1.5); /* a reading to start from */
  ck_assert_double_eq(dg_test_signal(sim, "eng.fuel_used"), 1.5);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

#define MAP2 "\"torque_map\":{\"rpm\":[0,8000],\"throttle\":[0,1],\"torque\":[[-10,-10],[100,100]]}"
#define FULL "\"full_load\":{\"rpm\":[0,8000],\"torque\":[100,100]}"
#define ENG(extra) "\"inertia\":0.2,\"idle_rpm\":800,\"redline_rpm\":6000," extra

static const dg_test_bad_param bad[] = {
    {ENG("\"stall_rpm\":0"), "/blocks/eng", "give one of torque_map, full_load"},
    {ENG(MAP2 "," FULL), "/blocks/eng", "give only one of torque_map, full_load"},
    {ENG(MAP2 ",\"closed_throttle\":{\"rpm\":[0,1],\"torque\":[0,0]}"),
     "/blocks/eng/closed_throttle",
     "only valid with full_load (torque_map has its own closed-throttle row)"},
    {"\"inertia\":0.2,\"idle_rpm\":800,\"redline_rpm\":700," MAP2, "/blocks/eng/redline_rpm",
     "must be > idle_rpm (800) (got 700)"},
    {"\"inertia\":0.2,\"idle_rpm\":800,\"redline_rpm\":1000,\"limiter_hysteresis_rpm\":300," MAP2,
     "/blocks/eng/limiter_hysteresis_rpm", "must be < redline_rpm - idle_rpm (200) (got 300)"},
    {ENG("\"stall_rpm\":900," MAP2), "/blocks/eng/stall_rpm", "must be < idle_rpm (800) (got 900)"},
    {ENG("\"torque_map\":{\"rpm\":[0,8000],\"throttle\":[-0.5,1],\"torque\":[[0,0],[1,1]]}"),
     "/blocks/eng/torque_map/throttle/0", "must be >= 0 (got -0.5)"},
    {ENG("\"torque_map\":{\"rpm\":[0,8000],\"throttle\":[0,1.5],\"torque\":[[0,0],[1,1]]}"),
     "/blocks/eng/torque_map/throttle/1", "must be <= 1 (got 1.5)"},
    {ENG("\"torque_map\":{\"rpm\":[-100,8000],\"throttle\":[0,1],\"torque\":[[0,0],[1,1]]}"),
     "/blocks/eng/torque_map/rpm/0", "must be >= 0 (got -100)"},
    {ENG("\"torque_map\":{\"rpm\":[0,8000],\"throttle\":[1,0],\"torque\":[[0,0],[1,1]]}"),
     "/blocks/eng/torque_map/throttle/1", "must be strictly increasing (0 after 1)"},
    {ENG("\"torque_map\":{\"rpm\":[0,8000],\"throttle\":[0,1],\"torque\":[[0,0]]}"),
     "/blocks/eng/torque_map/torque", "must have 2 rows like \"throttle\" (got 1)"},
    {ENG("\"torque_map\":{\"rpm\":[0,8000],\"throttle\":[0,1],\"torque\":[[0,0],[1,1,1]]}"),
     "/blocks/eng/torque_map/torque/1", "must have 2 values like \"rpm\" (got 3)"},
    {ENG("\"full_load\":{\"rpm\":[-5,8000],\"torque\":[1,1]}"), "/blocks/eng/full_load/rpm/0",
     "must be >= 0 (got -5)"},
    {ENG(FULL ",\"closed_throttle\":{\"rpm\":[-5,1],\"torque\":[0,0]}"),
     "/blocks/eng/closed_throttle/rpm/0", "must be >= 0 (got -5)"},
    {ENG(MAP2 ",\"friction\":{\"rpm\":[-5,1],\"torque\":[0,0]}"), "/blocks/eng/friction/rpm/0",
     "must be >= 0 (got -5)"},
    {ENG(MAP2 ",\"friction\":{\"rpm\":[0,1],\"torque\":[5,-1]}"), "/blocks/eng/friction/torque/1",
     "must be >= 0 (got -1)"},
    {"\"inertia\":0,\"idle_rpm\":800,\"redline_rpm\":6000," MAP2, "/blocks/eng/inertia",
     "must be > 0 (got 0)"},
    {"\"idle_rpm\":800,\"redline_rpm\":6000," MAP2, "/blocks/eng/inertia",
     "missing required number (kg*m^2)"},
    {"\"inertia\":0.2,\"redline_rpm\":6000," MAP2, "/blocks/eng/idle_rpm",
     "missing required number (rpm)"},
    {"\"inertia\":0.2,\"idle_rpm\":800," MAP2, "/blocks/eng/redline_rpm",
     "missing required number (rpm)"},
    {ENG(MAP2 ",\"idle_gain\":-1"), "/blocks/eng/idle_gain", "must be >= 0 (got -1)"},
    {ENG(MAP2 ",\"stall_rpm\":-1"), "/blocks/eng/stall_rpm", "must be >= 0 (got -1)"},
    {ENG(MAP2 ",\"limiter_hysteresis_rpm\":-1"), "/blocks/eng/limiter_hysteresis_rpm",
     "must be >= 0 (got -1)"},
    {ENG(MAP2 ",\"idle_rmp\":800"), "/blocks/eng/idle_rmp",
     "unknown parameter; did you mean \"idle_rpm\"?"},
    {ENG(MAP2 ",\"fuel_map\":{\"rpm\":[0,1],\"torque\":[0,1],\"fuel_rate\":[[0,0],[1,1]]},"
              "\"bsfc_map\":{\"rpm\":[0,1],\"torque\":[0,1],\"bsfc\":[[1,1],[1,1]]}"),
     "/blocks/eng", "give only one of fuel_map, bsfc_map, efficiency"},
    {ENG(MAP2 ",\"efficiency\":{\"power_fraction\":[0,1],\"efficiency\":[0.2,0.3]}"), "/blocks/eng",
     "missing rated_power (the efficiency table is over its fractions)"},
    {ENG(MAP2 ",\"rated_power\":50000"), "/blocks/eng/rated_power", "only valid with efficiency"},
    {ENG(MAP2 ",\"accessory_power\":700"), "/blocks/eng/accessory_power", "only valid with efficiency"},
    {ENG(MAP2 ",\"fuel_map\":{\"rpm\":[0,1],\"torque\":[0,1],\"fuel_rate\":[[0,-1],[1,1]]}"),
     "/blocks/eng/fuel_map/fuel_rate/0/1", "must be >= 0 (got -1)"},
    {ENG(MAP2 ",\"heating_value\":0"), "/blocks/eng/heating_value", "must be > 0 (got 0)"},
};

START_TEST(test_bad_params) {
  dg_test_graph_error_at(
      bad[_i].path, bad[_i].text,
      "{\"drivegraph\":1,\"blocks\":{\"eng\":{\"type\":\"engine\",%s},"
      "\"ld\":{\"type\":\"load\",\"inertia\":1}},\"connections\":[[\"eng.out\",\"ld.in\"]]}",
      bad[_i].params);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("engine");
  TCase *tc = tcase_create("characteristic");
  tcase_add_test(tc, test_map_bilinear);
  tcase_add_test(tc, test_curves);
  tcase_add_test(tc, test_friction);
  suite_add_tcase(s, tc);
  tc = tcase_create("dynamics");
  tcase_add_test(tc, test_rev_limiter);
  tcase_add_test(tc, test_idle_hold);
  tcase_add_test(tc, test_engine_braking);
  tcase_add_test(tc, test_coast_to_rest);
  tcase_add_test(tc, test_stall);
  tcase_add_test(tc, test_throttle_cut);
  tcase_add_test(tc, test_energy);
  suite_add_tcase(s, tc);
  tc = tcase_create("fuel");
  tcase_add_test(tc, test_fuel_map);
  tcase_add_test(tc, test_bsfc_map);
  tcase_add_test(tc, test_efficiency_form);
  tcase_add_test(tc, test_accessory_power);
  tcase_add_test(tc, test_idle_and_cut);
  suite_add_tcase(s, tc);
  tc = tcase_create("params");
  tcase_add_loop_test(tc, test_bad_params, 0, (int)(sizeof bad / sizeof bad[0]));
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return dg_test_run(suite()); }
