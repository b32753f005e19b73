/* vehicle: axle and corner loads with load transfer, road load (coast-down
 * coefficients and physical), grade, stick at rest, position, errors. */
#include "testutil.h"

#include <math.h>

#define G 9.80665

/* A vehicle on its own (no wheels): `params` are its parameters. */
static dg_graph *body_only(const char *params) {
  return dg_test_graphf("{\"drivegraph\":1,\"blocks\":{\"body\":{\"type\":\"vehicle\",%s}},"
                        "\"connections\":[]}",
                        params);
}

static double sig(const dg_sim *sim, const char *name) { return dg_test_signal(sim, name); }

/* ------------------------------------------------------------------------ */
/* Loads                                                                    */

/* At rest: W·b/L in front, W·a_f/L behind (exact up to round-off). */
START_TEST(test_static_loads) {
  dg_graph *g = body_only("\"mass\":1500,\"wheelbase\":2.8,\"cg_to_front\":1.2");
  dg_sim *sim = dg_test_sim(g);
  double M;
  dg_sim_mass_matrix(sim, &M);
  ck_assert_double_eq_tol(M, 1500, 1e-12);
  dg_test_step(sim, 1, 1e-3);
  double w = 1500 * G;
  ck_assert_double_eq_tol(sig(sim, "body.load_front"), w * 1.6 / 2.8, 1e-9);
  ck_assert_double_eq_tol(sig(sim, "body.load_rear"), w * 1.2 / 2.8, 1e-9);
  ck_assert_double_eq(sig(sim, "body.speed"), 0.0);
  dg_sim_free(sim);
  dg_graph_free(g);

  /* default: CG mid-wheelbase */
  g = body_only("\"mass\":1000");
  sim = dg_test_sim(g);
  dg_test_step(sim, 1, 1e-3);
  ck_assert_double_eq_tol(sig(sim, "body.load_front"), 500 * G, 1e-9);
  ck_assert_double_eq_tol(sig(sim, "body.load_rear"), 500 * G, 1e-9);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* Rear-wheel drive with a constant torque: constant acceleration a, and
 * from the second step (the loads use the previous step's a) the axle
 * loads are static ∓ m·a·h/L; the driven wheel reads its axle's load. */
START_TEST(test_longitudinal_transfer) {
  const double m = 1500, L = 2.8, af = 1.2, h = 0.55, R = 0.3, J = 1.0, T = 900;
  dg_graph *g =
      dg_test_graphf("{\"drivegraph\":1,\"blocks\":{"
                     "\"src\":{\"type\":\"torque_source\",\"torque\":%g},"
                     "\"w\":{\"type\":\"wheel\",\"radius\":%g,\"inertia\":%g},"
                     "\"body\":{\"type\":\"vehicle\",\"mass\":%g,\"wheelbase\":%g,"
                     "\"cg_to_front\":%g,\"cg_height\":%g}},"
                     "\"connections\":[[\"src.out\",\"w.hub\"],[\"w.ground\",\"body.rear\"]]}",
                     T, R, J, m, L, af, h);
  dg_sim *sim = dg_test_sim(g);
  dg_test_step(sim, 10, 1e-3);
  double a = T / R / (m + J / (R * R));
  ck_assert_double_eq_tol(sig(sim, "body.accel"), a, 1e-10 * a);
  double dfz = m * a * h / L;
  ck_assert_double_eq_tol(sig(sim, "body.load_front"), m * G * (L - af) / L - dfz, 1e-9);
  ck_assert_double_eq_tol(sig(sim, "body.load_rear"), m * G * af / L + dfz, 1e-9);
  ck_assert_double_eq_tol(sig(sim, "w.fz"), m * G * af / L + dfz, 1e-9);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* Four free wheels at the corners and a lateral acceleration of a_y to the
 * left: each axle moves m·a_y·h·(share)/track to its right wheel, the total
 * stays m·g. A hard enough turn lifts the inside wheels (clamped at 0). */
START_TEST(test_corner_loads) {
  const double m = 1400, L = 2.6, af = 1.1, h = 0.5, tf = 1.5, tr = 1.6;
  dg_graph *g = dg_test_graphf(
      "{\"drivegraph\":1,\"blocks\":{"
      "\"fl\":{\"type\":\"wheel\",\"radius\":0.3},\"fr\":{\"type\":\"wheel\",\"radius\":0.3},"
      "\"rl\":{\"type\":\"wheel\",\"radius\":0.3},\"rr\":{\"type\":\"wheel\",\"radius\":0.3},"
      "\"body\":{\"type\":\"vehicle\",\"mass\":%g,\"wheelbase\":%g,\"cg_to_front\":%g,"
      "\"cg_height\":%g,\"track_front\":%g,\"track_rear\":%g}},"
      "\"connections\":[[\"fl.ground\",\"body.front_left\"],[\"fr.ground\",\"body.front_right\"],"
      "[\"rl.ground\",\"body.rear_left\"],[\"rr.ground\",\"body.rear_right\"]]}",
      m, L, af, h, tf, tr);
  dg_sim *sim = dg_test_sim(g);
  const double ay = 4.0, b = L - af;
  dg_test_set_input(sim, "lateral_accel", ay);
  dg_test_step(sim, 2, 1e-3);
  double front = m * G * b / L, rear = m * G * af / L;
  double dfront = m * ay * h * (b / L) / tf, drear = m * ay * h * (af / L) / tr;
  ck_assert_double_eq_tol(sig(sim, "fl.fz"), front / 2 - dfront, 1e-9);
  ck_assert_double_eq_tol(sig(sim, "fr.fz"), front / 2 + dfront, 1e-9);
  ck_assert_double_eq_tol(sig(sim, "rl.fz"), rear / 2 - drear, 1e-9);
  ck_assert_double_eq_tol(sig(sim, "rr.fz"), rear / 2 + drear, 1e-9);
  double sum = sig(sim, "fl.fz") + sig(sim, "fr.fz") + sig(sim, "rl.fz") + sig(sim, "rr.fz");
  ck_assert_double_eq_tol(sum, m * G, 1e-9);
  /* turning right (a_y < 0) mirrors it */
  dg_test_set_input(sim, "lateral_accel", -ay);
  dg_test_step(sim, 1, 1e-3);
  ck_assert_double_eq_tol(sig(sim, "fl.fz"), front / 2 + dfront, 1e-9);
  ck_assert_double_eq_tol(sig(sim, "rr.fz"), rear / 2 - drear, 1e-9);
  /* 20 m/s²: more than the inside wheels carry */
  dg_test_set_input(sim, "lateral_accel", 20.0);
  dg_test_step(sim, 1, 1e-3);
  ck_assert_double_eq(sig(sim, "fl.fz"), 0.0);
  ck_assert_double_eq(sig(sim, "rl.fz"), 0.0);
  ck_assert_double_gt(sig(sim, "fr.fz"), front);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* A single-track port carries the whole axle, a launch at 1 g of
 * longitudinal transfer onto a short, tall car lifts the front (0). */
START_TEST(test_front_lift) {
  dg_graph *g =
      dg_test_graphf("{\"drivegraph\":1,\"blocks\":{"
                     "\"src\":{\"type\":\"torque_source\",\"torque\":6000},"
                     "\"w\":{\"type\":\"wheel\",\"radius\":0.3,\"inertia\":0},"
                     "\"wf\":{\"type\":\"wheel\",\"radius\":0.3,\"inertia\":0},"
                     "\"body\":{\"type\":\"vehicle\",\"mass\":1000,\"wheelbase\":2,"
                     "\"cg_height\":1.2}},"
                     "\"connections\":[[\"src.out\",\"w.hub\"],[\"w.ground\",\"body.rear\"],"
                     "[\"wf.ground\",\"body.front\"]]}");
  dg_sim *sim = dg_test_sim(g);
  dg_test_step(sim, 3, 1e-3);
  ck_assert_double_eq(sig(sim, "body.load_front"), 0.0);
  ck_assert_double_eq(sig(sim, "wf.fz"), 0.0);
  ck_assert_double_eq_tol(sig(sim, "w.fz"), 1000 * G * 0.5 + 1000 * 20.0 * 1.2 / 2, 1e-9);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* On a grade the normal loads are m·g·cos θ; a car rolling back freely has
 * a = −g·sin θ, so inertia and gravity cancel and there is no transfer. */
START_TEST(test_grade) {
  dg_graph *g = body_only("\"mass\":1200,\"wheelbase\":2.5,\"cg_to_front\":1.0,\"cg_height\":0.6");
  dg_sim *sim = dg_test_sim(g);
  dg_test_set_input(sim, "grade", 0.2);
  dg_test_step(sim, 1000, 1e-3);
  double th = atan(0.2);
  /* constant acceleration: exact up to round-off of 1000 steps */
  ck_assert_double_eq_tol(sig(sim, "body.speed"), -G * sin(th) * 1.0, 1e-12);
  ck_assert_double_eq_tol(sig(sim, "body.x"), -G * sin(th) * 0.5, 1e-12);
  ck_assert_double_eq_tol(sig(sim, "body.accel"), -G * sin(th), 1e-10);
  ck_assert_double_eq_tol(sig(sim, "body.load_front"), 1200 * G * cos(th) * 1.5 / 2.5, 1e-8);
  ck_assert_double_eq_tol(sig(sim, "body.load_rear"), 1200 * G * cos(th) * 1.0 / 2.5, 1e-8);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* Held by its brake facing up a 20 % grade (a = 0): the grade's share
 * m·g·sin θ·h/L moves to the rear axle. */
START_TEST(test_grade_parked) {
  dg_graph *g = dg_test_graphf("{\"drivegraph\":1,\"blocks\":{"
                               "\"w\":{\"type\":\"wheel\",\"radius\":0.3,\"brake_torque\":3000},"
                               "\"body\":{\"type\":\"vehicle\",\"mass\":1200,\"wheelbase\":2.5,"
                               "\"cg_to_front\":1.0,\"cg_height\":0.6}},"
                               "\"connections\":[[\"w.ground\",\"body.rear\"]]}");
  dg_sim *sim = dg_test_sim(g);
  dg_test_set_input(sim, "grade", 0.2);
  dg_test_set_input(sim, "brake", 1.0);
  dg_test_step(sim, 100, 1e-3);
  double th = atan(0.2), w = 1200 * G * cos(th), t = 1200 * G * sin(th) * 0.6 / 2.5;
  ck_assert_double_eq(sig(sim, "body.speed"), 0.0);
  ck_assert_double_eq_tol(sig(sim, "body.load_front"), w * 1.5 / 2.5 - t, 1e-8);
  ck_assert_double_eq_tol(sig(sim, "body.load_rear"), w * 1.0 / 2.5 + t, 1e-8);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Road load                                                                */

/* Coast-down with f0 only: a = f0/m until the stop at t = v0·m/f0 = 10 s
 * (exact linear decay: the Coulomb force is constant within a step), then
 * the body sticks: x = v0²·m/(2 f0) = 50 m, up to the last step's
 * overshoot before the stop (≤ a·dt²/2), and it stays there. */
START_TEST(test_coast_f0) {
  dg_graph *g = body_only("\"mass\":1500,\"road_load\":{\"f0\":1500}");
  dg_sim *sim = dg_test_sim(g);
  dg_test_set_initial1(sim, "body.speed", 10.0);
  dg_test_step(sim, 5000, 1e-3);
  ck_assert_double_eq_tol(sig(sim, "body.speed"), 5.0, 1e-11);
  ck_assert_double_eq_tol(sig(sim, "body.road_load"), -1500, 1e-12);
  dg_test_step(sim, 6000, 1e-3);
  ck_assert_double_eq(sig(sim, "body.stopped"), 1.0);
  ck_assert_double_eq(sig(sim, "body.speed"), 0.0);
  double x = sig(sim, "body.x");
  ck_assert_double_eq_tol(x, 50.0, 1e-6);
  for (int k = 0; k < 4000; k++) {
    ck_assert_int_eq(dg_sim_step(sim, 1e-3), DG_OK);
    ck_assert_double_eq(sig(sim, "body.speed"), 0.0);
  }
  ck_assert_double_eq(sig(sim, "body.x"), x);
  ck_assert_double_eq(sig(sim, "body.road_load"), 0.0);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* Coast-down with f2 only: m dv/dt = −f2 v², so v = v0/(1 + f2 v0 t/m) and
 * x = (m/f2) ln(1 + f2 v0 t/m). RK4 at h·(f2 v/m) ≤ 1.5e-5 is exact to
 * round-off; 1e-9 covers 20 000 steps of it. */
START_TEST(test_coast_f2) {
  const double m = 1000, f2 = 0.5, v0 = 30;
  dg_graph *g = body_only("\"mass\":1000,\"road_load\":{\"f2\":0.5}");
  dg_sim *sim = dg_test_sim(g);
  dg_test_set_initial1(sim, "body.speed", v0);
  dg_test_step(sim, 20000, 1e-3);
  double t = 20.0, k = 1.0 + f2 * v0 * t / m;
  ck_assert_double_eq_tol(sig(sim, "body.speed"), v0 / k, 1e-9);
  ck_assert_double_eq_tol(sig(sim, "body.x"), m / f2 * log(k), 1e-8);
  ck_assert_double_eq(sig(sim, "body.stopped"), 0.0);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* Coast-down with f1 only: exponential v0·exp(−f1 t/m), reversing too. */
START_TEST(test_coast_f1) {
  double v0 = _i == 0 ? 20.0 : -20.0;
  dg_graph *g = body_only("\"mass\":800,\"road_load\":{\"f1\":40}");
  dg_sim *sim = dg_test_sim(g);
  dg_test_set_initial1(sim, "body.speed", v0);
  dg_test_step(sim, 10000, 1e-3);
  ck_assert_double_eq_tol(sig(sim, "body.speed"), v0 * exp(-40.0 * 10.0 / 800.0), 1e-10);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* Physical road load: ½ρ·CdA·v² + c_rr·m·g, opposing the motion either way. */
START_TEST(test_physical_road_load) {
  double v0 = _i == 0 ? 30.0 : -30.0, s = v0 > 0 ? 1.0 : -1.0;
  dg_graph *g = body_only("\"mass\":1200,\"cda\":0.6,\"air_density\":1.2,"
                          "\"rolling_resistance\":0.01");
  dg_sim *sim = dg_test_sim(g);
  dg_test_set_initial1(sim, "body.speed", v0);
  double f = 0.5 * 1.2 * 0.6 * 900 + 0.01 * 1200 * G;
  ck_assert_double_eq_tol(sig(sim, "body.road_load"), -s * f, 1e-9);
  dg_test_step(sim, 1, 1e-3);
  /* over one step the drag changes by ~2·(Δv/v) ≈ 1e-4 of itself */
  ck_assert_double_eq_tol(sig(sim, "body.accel"), -s * f / 1200, 1e-4 * f / 1200);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* Resistance never pushes a car at rest: with f0 = 200 N and a drive of
 * 150 N the car does not move at all; with 250 N it moves off forward at
 * (250 − 200)/m_eff and never backward. */
START_TEST(test_stick_at_rest) {
  double force = _i == 0 ? 150.0 : 250.0;
  dg_graph *g =
      dg_test_graphf("{\"drivegraph\":1,\"blocks\":{"
                     "\"src\":{\"type\":\"torque_source\",\"torque\":%g},"
                     "\"w\":{\"type\":\"wheel\",\"radius\":0.5,\"inertia\":0.5},"
                     "\"body\":{\"type\":\"vehicle\",\"mass\":1000,\"road_load\":{\"f0\":200}}},"
                     "\"connections\":[[\"src.out\",\"w.hub\"],[\"w.ground\",\"body.rear\"]]}",
                     force * 0.5);
  dg_sim *sim = dg_test_sim(g);
  for (int k = 0; k < 2000; k++) {
    ck_assert_int_eq(dg_sim_step(sim, 1e-3), DG_OK);
    ck_assert_double_ge(sig(sim, "body.speed"), 0.0);
  }
  if (_i == 0) {
    ck_assert_double_eq(sig(sim, "body.speed"), 0.0);
    ck_assert_double_eq(sig(sim, "body.x"), 0.0);
    ck_assert_double_eq(sig(sim, "body.stopped"), 1.0);
  } else {
    double a = 50.0 / (1000 + 0.5 / 0.25);
    ck_assert_double_eq(sig(sim, "body.stopped"), 0.0);
    ck_assert_double_eq_tol(sig(sim, "body.accel"), a, 1e-10);
    /* one step held at rest before it moved off */
    ck_assert_double_eq_tol(sig(sim, "body.speed"), a * 1.999, 1e-9);
  }
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* x is a state: settable, and integrated with the speed. */
START_TEST(test_position) {
  dg_graph *g = body_only("\"mass\":1000");
  dg_sim *sim = dg_test_sim(g);
  dg_test_set_initial1(sim, "body.x", 100.0);
  dg_test_set_initial1(sim, "body.speed", -2.0);
  dg_test_step(sim, 1500, 1e-3);
  ck_assert_double_eq_tol(sig(sim, "body.x"), 100.0 - 3.0, 1e-10);
  ck_assert_double_eq_tol(sig(sim, "body.accel"), 0.0, 1e-12);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* validate enumerates the stopped mode too. */
START_TEST(test_validate) {
  dg_graph_info info;
  int n = dg_graph_validate_string(
      NULL,
      "{\"drivegraph\":1,\"blocks\":{\"w\":{\"type\":\"wheel\",\"radius\":0.3},"
      "\"body\":{\"type\":\"vehicle\",\"mass\":1000,\"rolling_resistance\":0.01}},"
      "\"connections\":[[\"w.ground\",\"body.front_left\"]]}",
      "test.json", NULL, NULL, &info);
  ck_assert_int_eq(n, 0);
  ck_assert_int_eq(info.modes, 4);
  ck_assert_int_eq(info.dofs, 1);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Parameter errors                                                         */

static const dg_test_bad_param bad[] = {
    {"\"wheelbase\":2.8", "/blocks/body/mass", "missing required number (kg)"},
    {"\"mass\":0", "/blocks/body/mass", "must be > 0 (got 0)"},
    {"\"mass\":1000,\"wheelbase\":2.8,\"cg_to_front\":3", "/blocks/body/cg_to_front",
     "must be < wheelbase (2.8) (got 3)"},
    {"\"mass\":1000,\"cg_to_front\":2.7", "/blocks/body/cg_to_front",
     "must be < wheelbase (2.7) (got 2.7)"},
    {"\"mass\":1000,\"cg_to_front\":0", "/blocks/body/cg_to_front", "must be > 0 (got 0)"},
    {"\"mass\":1000,\"cg_height\":-0.1", "/blocks/body/cg_height", "must be >= 0 (got -0.1)"},
    {"\"mass\":1000,\"track_rear\":0", "/blocks/body/track_rear", "must be > 0 (got 0)"},
    {"\"mass\":1000,\"cda\":-0.5", "/blocks/body/cda", "must be >= 0 (got -0.5)"},
    {"\"mass\":1000,\"air_density\":0", "/blocks/body/air_density", "must be > 0 (got 0)"},
    {"\"mass\":1000,\"road_load\":{\"f0\":-1}", "/blocks/body/road_load/f0",
     "must be >= 0 (got -1)"},
    {"\"mass\":1000,\"road_load\":{\"f3\":1}", "/blocks/body/road_load/f3",
     "unknown parameter; did you mean \"f0\"?"},
    {"\"mass\":1000,\"cda\":0.6,\"road_load\":{\"f0\":100}", "/blocks/body/road_load",
     "give either road_load or cda and rolling_resistance, not both"},
    {"\"mass\":1000,\"rolling_resistance\":0.01,\"road_load\":{}", "/blocks/body/road_load",
     "give either road_load or cda and rolling_resistance, not both"},
    {"\"mass\":1000,\"wheel_base\":2.8", "/blocks/body/wheel_base",
     "unknown parameter; did you mean \"wheelbase\"?"},
};

START_TEST(test_bad_params) {
  dg_test_graph_error_at(
      bad[_i].path, bad[_i].text,
      "{\"drivegraph\":1,\"blocks\":{\"body\":{\"type\":\"vehicle\",%s}},\"connections\":[]}",
      bad[_i].params);
}
END_TEST

/* Connecting a rotational port to a ground port is a domain error. */
START_TEST(test_bad_connection) {
  dg_error err = dg_test_graph_error(
      "{\"drivegraph\":1,\"blocks\":{\"src\":{\"type\":\"torque_source\"},"
      "\"body\":{\"type\":\"vehicle\",\"mass\":1000}},"
      "\"connections\":[[\"src.out\",\"body.rear\"]]}");
  ck_assert_int_eq(err.code, DG_ERR_PORT);
}
END_TEST

/* ---- the start: nothing given is the car at rest ----------------------- */

/* An engine geared 12:1 to a rolling wheel (R 0.3) with no clutch, on a
 * body with no road load (nothing holds it at rest): with no speed given,
 * the start keeps the car at rest and the engine at 0 rpm, not the car at
 * the engine's idle (800 rpm: 83.78/12·0.3 = 2.09 m/s); the choices say
 * so: the body at rest taken, the engine's idle not. With the engine's
 * speed given, the car rolls with it (the given speed wins). */
START_TEST(test_start_at_rest) {
  dg_graph *g = dg_test_graph(
      "{\"drivegraph\":1,\"blocks\":{\"engine\":{\"type\":\"engine\",\"inertia\":0.15,"
      "\"idle_rpm\":800,\"redline_rpm\":6500,\"full_load\":{\"rpm\":[0,6500],\"torque\":[100,100]}},"
      "\"final\":{\"type\":\"gear\",\"ratio\":12},\"wheel\":{\"type\":\"wheel\",\"radius\":0.3,"
      "\"inertia\":1},\"body\":{\"type\":\"vehicle\",\"mass\":1200}},"
      "\"connections\":[[\"engine.out\",\"final.in\"],[\"final.out\",\"wheel.hub\"],"
      "[\"wheel.ground\",\"body.rear\"]]}");
  for (int given = 0; given < 2; given++) {
    dg_sim *sim = dg_test_sim(g);
    if (given)
      dg_test_set_initial1(sim, "engine.rpm", 1200.0);
    dg_error err;
    ck_assert_msg(dg_sim_start(sim, &err) == DG_OK, "%s", err.text);
    double v = dg_test_signal(sim, "body.speed");
    int n = dg_sim_start_choice(sim, 0, NULL);
    dg_start_choice c[4];
    ck_assert_int_le(n, 4);
    for (int i = 0; i < n; i++)
      ck_assert_int_eq(dg_sim_start_choice(sim, i, &c[i]), n);
    if (!given) {
      ck_assert_double_eq(v, 0.0);
      ck_assert_double_eq(dg_test_signal(sim, "engine.rpm"), 0.0);
      ck_assert_int_eq(n, 2);
      ck_assert_str_eq(c[0].block, "body");
      ck_assert_str_eq(c[0].why, "at rest: no speed given");
      ck_assert_int_eq(c[0].taken, 1);
      ck_assert_int_eq(c[0].linear, 1);
      ck_assert_str_eq(c[1].block, "engine");
      ck_assert_str_eq(c[1].why, "idle");
      ck_assert_int_eq(c[1].taken, 0);
      ck_assert_double_eq_tol(c[1].proposed, 800.0 / 9.549296585513721, 1e-12);
      ck_assert_double_eq(c[1].speed, 0.0);
    } else {
      ck_assert_double_eq_tol(v, 1200.0 / 9.549296585513721 / 12 * 0.3, 1e-12);
      ck_assert_int_eq(n, 1); /* the body's proposal meets the given speed: not taken */
      ck_assert_int_eq(c[0].taken, 0);
      ck_assert_double_eq_tol(c[0].speed, v, 1e-12);
    }
    dg_sim_free(sim);
  }
  dg_graph_free(g);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("vehicle");
  TCase *tc = tcase_create("loads");
  tcase_add_test(tc, test_static_loads);
  tcase_add_test(tc, test_longitudinal_transfer);
  tcase_add_test(tc, test_corner_loads);
  tcase_add_test(tc, test_front_lift);
  tcase_add_test(tc, test_grade);
  tcase_add_test(tc, test_grade_parked);
  suite_add_tcase(s, tc);
  tc = tcase_create("dynamics");
  tcase_add_test(tc, test_coast_f0);
  tcase_add_test(tc, test_coast_f2);
  tcase_add_loop_test(tc, test_coast_f1, 0, 2);
  tcase_add_loop_test(tc, test_physical_road_load, 0, 2);
  tcase_add_loop_test(tc, test_stick_at_rest, 0, 2);
  tcase_add_test(tc, test_position);
  tcase_add_test(tc, test_validate);
  suite_add_tcase(s, tc);
  tc = tcase_create("params");
  tcase_add_loop_test(tc, test_bad_params, 0, (int)(sizeof bad / sizeof bad[0]));
  tcase_add_test(tc, test_bad_connection);
  tcase_add_test(tc, test_start_at_rest);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return dg_test_run(suite()); }
