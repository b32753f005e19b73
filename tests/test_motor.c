/* motor: constant-torque and constant-power regions, max_rpm fade, regen,
 * reverse, throttle cut, energy audit; parameter errors. */
#include "testutil.h"

#include <math.h>
#include <stdio.h>

#define RPM 9.549296585513720 /* rpm per rad/s */

/* The torque envelope is one division or multiply-add: a few ulps. */
#define TOL_TORQUE 1e-9

/* J = 0.04 + 0.01 = 0.05; base speed P/T = 100000/250 = 400 rad/s (3820 rpm);
 * the drive fade starts at 0.95 · 12000 = 11400 rpm. */
#define MOTOR "\"inertia\":0.04,\"max_torque\":250,\"max_power\":100000,\"max_rpm\":12000"

/* motor "mot" → load "ld" (inertia 0.01, no drag) */
static dg_graph *rig(const char *motor) {
  return dg_test_graphf("{\"drivegraph\":1,\"blocks\":{\"mot\":{\"type\":\"motor\",%s},"
                        "\"ld\":{\"type\":\"load\",\"inertia\":0.01}},"
                        "\"connections\":[[\"mot.out\",\"ld.in\"]]}",
                        motor);
}

static void set_rpm(dg_sim *sim, double rpm) { dg_test_set_initial1(sim, "mot.rpm", rpm); }

static double torque_at(dg_sim *sim, double rpm) {
  set_rpm(sim, rpm);
  return dg_test_signal(sim, "mot.torque");
}

/* ------------------------------------------------------------------------ */
/* Drive                                                                    */

/* Below the base speed: ω = T/J · t (constant torque: exact for RK4), and
 * the work is T · angle = T · ½ (T/J) t². */
START_TEST(test_constant_torque) {
  dg_graph *g = rig(MOTOR);
  dg_sim *sim = dg_test_sim(g);
  dg_sim_set_input(sim, DG_INPUT_THROTTLE, 1.0);
  ck_assert_double_eq_tol(dg_test_signal(sim, "mot.torque"), 250.0, TOL_TORQUE);
  dg_test_step(sim, 50, 1e-3);
  ck_assert_double_eq_tol(dg_test_signal(sim, "mot.omega"), 250.0 / 0.05 * 0.05, 1e-9);
  double angle = 0.5 * 250.0 / 0.05 * 0.05 * 0.05;
  double work = dg_sim_block_work(sim, dg_test_block_index(g, "mot"));
  ck_assert_double_eq_tol(work, 250.0 * angle, 1e-9 * work);
  ck_assert_double_eq_tol(dg_test_signal(sim, "mot.power"), 250.0 * 250.0, 1e-6);
  /* partial throttle scales the envelope */
  dg_sim_set_input(sim, DG_INPUT_THROTTLE, 0.4);
  ck_assert_double_eq_tol(torque_at(sim, 2000), 100.0, TOL_TORQUE);
  /* throttle is clamped to [0, 1] */
  dg_sim_set_input(sim, DG_INPUT_THROTTLE, 3.0);
  ck_assert_double_eq_tol(torque_at(sim, 2000), 250.0, TOL_TORQUE);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* Above the base speed T = P/ω, so J ω ω̇ = P: ω² = ω0² + 2 P t / J and the
 * work is P t. From 500 rad/s for 0.2 s: ω = √(250000 + 800000) = 1024.7
 * rad/s (9785 rpm, below the fade). RK4's local error on this smooth ODE is
 * ~h⁵ ω⁽⁵⁾ ≈ 1e-15 rad/s per step: 1e-8 rad/s. */
START_TEST(test_constant_power) {
  const double P = 100000, J = 0.05, w0 = 500;
  dg_graph *g = rig(MOTOR);
  dg_sim *sim = dg_test_sim(g);
  dg_sim_set_input(sim, DG_INPUT_THROTTLE, 1.0);
  ck_assert_double_eq_tol(torque_at(sim, 8000), P / (8000 / RPM), TOL_TORQUE);
  ck_assert_double_eq_tol(dg_test_signal(sim, "mot.power"), P, 1e-9);
  /* the corner: both limits meet at 400 rad/s */
  ck_assert_double_eq_tol(torque_at(sim, 400 * RPM), 250.0, TOL_TORQUE);
  set_rpm(sim, w0 * RPM);
  dg_test_step(sim, 200, 1e-3);
  ck_assert_double_eq_tol(dg_test_signal(sim, "mot.omega"), sqrt(w0 * w0 + 2 * P * 0.2 / J), 1e-8);
  ck_assert_double_eq_tol(dg_sim_block_work(sim, dg_test_block_index(g, "mot")), P * 0.2, 1e-9 * P);
  dg_sim_free(sim);
  dg_graph_free(g);

  /* base_rpm instead of max_power: P = 250 · 3000/RPM = 78540 W */
  g = rig("\"inertia\":0.04,\"max_torque\":250,\"base_rpm\":3000,\"max_rpm\":12000");
  sim = dg_test_sim(g);
  dg_sim_set_input(sim, DG_INPUT_THROTTLE, 1.0);
  ck_assert_double_eq_tol(torque_at(sim, 6000), 125.0, TOL_TORQUE);
  ck_assert_double_eq_tol(torque_at(sim, 2000), 250.0, TOL_TORQUE);
  dg_sim_free(sim);
  dg_graph_free(g);

  /* neither: no power limit */
  g = rig("\"inertia\":0.04,\"max_torque\":250,\"max_rpm\":12000");
  sim = dg_test_sim(g);
  dg_sim_set_input(sim, DG_INPUT_THROTTLE, 1.0);
  ck_assert_double_eq_tol(torque_at(sim, 10000), 250.0, TOL_TORQUE);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* Fade over the last 5 % of max_rpm, 0 at and above max_rpm; a free motor
 * at full throttle creeps up to max_rpm and never passes it: near the end
 * ω̇ ≈ −(ω − ω_max) / τ with τ = 0.05 J ω_max² / P = 40 ms, which RK4 at
 * h/τ = 0.025 follows without overshoot. */
START_TEST(test_max_rpm) {
  dg_graph *g = rig(MOTOR);
  dg_sim *sim = dg_test_sim(g);
  dg_sim_set_input(sim, DG_INPUT_THROTTLE, 1.0);
  ck_assert_double_eq_tol(torque_at(sim, 11400), 100000 / (11400 / RPM), TOL_TORQUE);
  ck_assert_double_eq_tol(torque_at(sim, 11700), 0.5 * 100000 / (11700 / RPM), TOL_TORQUE);
  ck_assert_double_eq(torque_at(sim, 12000), 0.0);
  ck_assert_double_eq(torque_at(sim, 13000), 0.0);
  set_rpm(sim, 0);
  for (int i = 0; i < 2000; i++) {
    ck_assert_int_eq(dg_sim_step(sim, 1e-3), DG_OK);
    ck_assert_double_le(dg_test_signal(sim, "mot.rpm"), 12000.0);
  }
  /* 11400 rpm after ~0.4 s, then 40 τ: 600 rpm · e^-40 */
  ck_assert_double_eq_tol(dg_test_signal(sim, "mot.rpm"), 12000.0, 1e-6);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* Gear −1 reverses the drive torque (unless reverse is off). */
START_TEST(test_reverse) {
  dg_graph *g = rig(MOTOR);
  dg_sim *sim = dg_test_sim(g);
  dg_sim_set_input(sim, DG_INPUT_THROTTLE, 1.0);
  dg_sim_set_input(sim, DG_INPUT_GEAR, -1);
  dg_test_step(sim, 40, 1e-3);
  ck_assert_double_eq_tol(dg_test_signal(sim, "mot.omega"), -250.0 / 0.05 * 0.04, 1e-9);
  ck_assert_double_eq_tol(dg_test_signal(sim, "mot.torque"), -250.0, TOL_TORQUE);
  /* the power limit and the fade use |ω| */
  ck_assert_double_eq_tol(torque_at(sim, -8000), -100000 / (8000 / RPM), TOL_TORQUE);
  ck_assert_double_eq(torque_at(sim, -12000), 0.0);
  dg_sim_set_input(sim, DG_INPUT_GEAR, 0); /* any other gear: forward */
  ck_assert_double_eq_tol(torque_at(sim, 1000), 250.0, TOL_TORQUE);
  dg_sim_free(sim);
  dg_graph_free(g);

  g = rig(MOTOR ",\"reverse\":false");
  sim = dg_test_sim(g);
  dg_sim_set_input(sim, DG_INPUT_THROTTLE, 1.0);
  dg_sim_set_input(sim, DG_INPUT_GEAR, -1);
  ck_assert_double_eq_tol(torque_at(sim, 1000), 250.0, TOL_TORQUE);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Regen                                                                    */

/* regen_fraction 0.5, limits 200 N·m and 60 kW (corner at 300 rad/s =
 * 2865 rpm), fade below 100 rpm. */
#define REGEN MOTOR ",\"regen_fraction\":0.5,\"max_regen_torque\":200,\"max_regen_power\":60000"

START_TEST(test_regen) {
  dg_graph *g = rig(REGEN);
  dg_sim *sim = dg_test_sim(g);
  dg_sim_set_input(sim, DG_INPUT_BRAKE, 1.0);
  /* below the corner: 0.5 · 200, opposing rotation */
  ck_assert_double_eq_tol(torque_at(sim, 2000), -100.0, TOL_TORQUE);
  ck_assert_double_eq_tol(dg_test_signal(sim, "mot.power"), -100.0 * 2000 / RPM, 1e-9);
  ck_assert_double_eq_tol(torque_at(sim, -2000), 100.0, TOL_TORQUE);
  /* above: 0.5 · P/ω */
  ck_assert_double_eq_tol(torque_at(sim, 6000), -0.5 * 60000 / (6000 / RPM), TOL_TORQUE);
  /* fade: half of it at 50 rpm, none at rest */
  ck_assert_double_eq_tol(torque_at(sim, 50), -50.0, TOL_TORQUE);
  ck_assert_double_eq(torque_at(sim, 0), 0.0);
  /* half the pedal, half the torque */
  dg_sim_set_input(sim, DG_INPUT_BRAKE, 0.5);
  ck_assert_double_eq_tol(torque_at(sim, 2000), -50.0, TOL_TORQUE);
  /* a negative throttle is a regen command of its own (full: the limits) */
  dg_sim_set_input(sim, DG_INPUT_BRAKE, 0.0);
  dg_sim_set_input(sim, DG_INPUT_THROTTLE, -1.0);
  ck_assert_double_eq_tol(torque_at(sim, 2000), -200.0, TOL_TORQUE);
  ck_assert_double_eq_tol(torque_at(sim, 6000), -60000 / (6000 / RPM), TOL_TORQUE);
  ck_assert_double_eq_tol(dg_test_signal(sim, "mot.power"), -60000.0, 1e-9);

  /* decelerating at −100/0.05 = −2000 rad/s² (constant torque: exact) */
  dg_sim_set_input(sim, DG_INPUT_THROTTLE, 0.0);
  dg_sim_set_input(sim, DG_INPUT_BRAKE, 1.0);
  set_rpm(sim, 2000);
  dg_test_step(sim, 50, 1e-3);
  ck_assert_double_eq_tol(dg_test_signal(sim, "mot.omega"), 2000 / RPM - 2000 * 0.05, 1e-9);
  /* the energy recovered is the work of the motor: −T·angle */
  double angle = (2000 / RPM) * 0.05 - 0.5 * 2000 * 0.05 * 0.05;
  ck_assert_double_eq_tol(dg_sim_block_work(sim, dg_test_block_index(g, "mot")), -100.0 * angle,
                          1e-9);
  /* and it comes to rest without reversing (fade: rate 100/100·RPM/J = 191 /s) */
  for (int i = 0; i < 1000; i++) {
    ck_assert_int_eq(dg_sim_step(sim, 1e-3), DG_OK);
    ck_assert_double_ge(dg_test_signal(sim, "mot.omega"), 0.0);
  }
  ck_assert_double_lt(dg_test_signal(sim, "mot.rpm"), 1e-9);
  dg_sim_free(sim);
  dg_graph_free(g);

  /* default: the brake pedal does not regenerate; limits default to the drive ones */
  g = rig(MOTOR);
  sim = dg_test_sim(g);
  dg_sim_set_input(sim, DG_INPUT_BRAKE, 1.0);
  ck_assert_double_eq(torque_at(sim, 2000), 0.0);
  dg_sim_set_input(sim, DG_INPUT_THROTTLE, -1.0);
  ck_assert_double_eq_tol(torque_at(sim, 2000), -250.0, TOL_TORQUE);
  ck_assert_double_eq_tol(torque_at(sim, 8000), -100000 / (8000 / RPM), TOL_TORQUE);
  dg_sim_free(sim);
  dg_graph_free(g);

  /* regen_fraction above 1 saturates at the limit */
  g = rig(MOTOR ",\"regen_fraction\":2");
  sim = dg_test_sim(g);
  dg_sim_set_input(sim, DG_INPUT_BRAKE, 0.8);
  ck_assert_double_eq_tol(torque_at(sim, 2000), -250.0, TOL_TORQUE);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* ---- throttle cut: the input bound to a channel of that name ---- */

/* While cut the throttle (either sign) counts as 0; brake regen stays. */
START_TEST(test_throttle_cut) {
  dg_registry *reg = dg_test_registry();
  dg_graph *g =
      dg_test_graph_reg(reg, "{\"drivegraph\":1,\"blocks\":{\"mot\":{\"type\":\"motor\","
                             "\"inputs\":{\"throttle_cut\":\"throttle_cut\"}," REGEN "},"
                             "\"cut\":{\"type\":\"test_speedo\"},"
                             "\"ld\":{\"type\":\"load\",\"inertia\":0.01}},"
                             "\"connections\":[[\"mot.out\",\"cut.in\"],[\"cut.out\",\"ld.in\"]]}");
  dg_sim *sim = dg_test_sim(g);
  int cut = dg_sim_input_find(sim, "throttle_cut");
  ck_assert_int_ge(cut, 0);
  dg_sim_set_input(sim, DG_INPUT_THROTTLE, 1.0);
  dg_sim_set_input(sim, cut, 1.0);
  set_rpm(sim, 2000);
  dg_test_step(sim, 10, 1e-3); /* nothing drives: the speed holds exactly */
  ck_assert_double_eq(dg_test_signal(sim, "mot.torque"), 0.0);
  ck_assert_double_eq_tol(dg_test_signal(sim, "mot.rpm"), 2000.0, 1e-9);
  dg_sim_set_input(sim, DG_INPUT_THROTTLE, -1.0);
  ck_assert_int_eq(dg_sim_step(sim, 1e-6), DG_OK);
  ck_assert_double_eq(dg_test_signal(sim, "mot.torque"), 0.0);
  dg_sim_set_input(sim, DG_INPUT_BRAKE, 1.0);
  ck_assert_int_eq(dg_sim_step(sim, 1e-6), DG_OK);
  ck_assert_double_eq_tol(dg_test_signal(sim, "mot.torque"), -100.0, TOL_TORQUE);
  dg_sim_set_input(sim, DG_INPUT_BRAKE, 0.0);
  dg_sim_set_input(sim, DG_INPUT_THROTTLE, 1.0);
  dg_sim_set_input(sim, cut, 0.0);
  ck_assert_int_eq(dg_sim_step(sim, 1e-6), DG_OK);
  ck_assert_double_eq_tol(dg_test_signal(sim, "mot.torque"), 250.0, TOL_TORQUE);
  dg_sim_free(sim);
  dg_graph_free(g);
  dg_registry_free(reg);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Parameter errors                                                         */

/* ------------------------------------------------------------------------ */
/* Electrical side                                                          */

/* The motor "mot" (MOTOR and `extra`, torque command `cmd`) held at `rpm`
 * by a speed source: torque and powers are constants of time. */
static dg_sim *held(dg_graph **g, const char *extra, double rpm, double cmd) {
  *g = dg_test_graphf("{\"drivegraph\":1,\"blocks\":{\"mot\":{\"type\":\"motor\"," MOTOR
                      ",\"command\":\"torque\"%s%s,\"inputs\":{\"torque\":%.17g}},"
                      "\"src\":{\"type\":\"speed_source\",\"inputs\":{\"speed\":%.17g}}},"
                      "\"connections\":[[\"mot.out\",\"src.in\"]]}",
                      extra[0] ? "," : "", extra, cmd, rpm / RPM);
  return dg_test_sim(*g);
}

/* A four-quadrant map over |rpm| 1000..5000 and the torque in the
 * direction of rotation −200..200 (rows −200, 0... as listed): */
#define EMAP                                                                                       \
  "\"efficiency_map\":{\"rpm\":[1000,5000],\"torque\":[-200,-50,50,200],"                          \
  "\"efficiency\":[[0.80,0.90],[0.70,0.86],[0.70,0.86],[0.84,0.94]]}"

/* Driving at 3000 rpm and 125 N·m: η = lerp(lerp(0.70, 0.86, 0.5),
 * lerp(0.84, 0.94, 0.5), 0.5) = lerp(0.78, 0.89, 0.5) = 0.835, and the
 * electrical power is P/η; over 10 s the heat is (P/η − P)·10. */
START_TEST(test_map_point_driving) {
  dg_graph *g;
  dg_sim *sim = held(&g, EMAP, 3000, 125);
  double p = 125.0 * 3000 / RPM, eta = 0.835;
  ck_assert_double_eq_tol(dg_test_signal(sim, "mot.torque"), 125.0, TOL_TORQUE);
  ck_assert_double_eq_tol(dg_test_signal(sim, "mot.efficiency"), eta, 1e-12);
  ck_assert_double_eq_tol(dg_test_signal(sim, "mot.electric_power"), p / eta, 1e-8);
  dg_test_step(sim, 1000, 1e-2);
  ck_assert_double_eq_tol(dg_test_signal(sim, "mot.electric_energy"), p / eta * 10.0, 1e-6);
  ck_assert_double_eq_tol(dg_test_signal(sim, "mot.heat"), (p / eta - p) * 10.0, 1e-6);
  dg_block_energy e;
  ck_assert_int_eq(dg_sim_block_energy(sim, dg_test_block_index(g, "mot"), &e), DG_OK);
  ck_assert(e.ledger);
  ck_assert_double_eq_tol(e.work, p * 10.0, 1e-6);
  ck_assert_double_eq_tol(e.error, 0.0, 1e-8);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* The four quadrants: generating at 3000 rpm with −125 N·m (the row −200
 * and −50: η = lerp(lerp(0.70, 0.86, 0.5), lerp(0.80, 0.90, 0.5), 0.5) =
 * lerp(0.78, 0.85, 0.5) = 0.815), P_e = P·η; turning backwards (−3000 rpm)
 * with +125 N·m is generating too, the same point of the map; with −125
 * N·m it drives, at η 0.835. */
START_TEST(test_four_quadrants) {
  struct {
    double rpm, cmd, eta;
  } q[] = {{3000, -125, 0.815}, {-3000, 125, 0.815}, {-3000, -125, 0.835}, {3000, 125, 0.835}};
  for (int i = 0; i < 4; i++) {
    dg_graph *g;
    dg_sim *sim = held(&g, EMAP, q[i].rpm, q[i].cmd);
    double p = q[i].cmd * q[i].rpm / RPM;
    double pe = p > 0.0 ? p / q[i].eta : p * q[i].eta;
    ck_assert_double_eq_tol(dg_test_signal(sim, "mot.torque"), q[i].cmd, TOL_TORQUE);
    ck_assert_double_eq_tol(dg_test_signal(sim, "mot.electric_power"), pe, 1e-8);
    ck_assert_double_eq_tol(dg_test_signal(sim, "mot.efficiency"), q[i].eta, 1e-12);
    dg_sim_free(sim);
    dg_graph_free(g);
  }
}
END_TEST

/* FASTSim's form: η over |P| / max_power (100 kW): at 2000 rpm and
 * 150 N·m, P = 31.416 kW, the fraction 0.31416 between 0.2 (0.90) and 0.4
 * (0.94): η = 0.90 + 0.04 · 0.5708 = 0.92283. A constant efficiency and a
 * loss map (P_e = P + L, a loss at stall too) likewise. */
START_TEST(test_other_forms) {
  dg_graph *g;
  dg_sim *sim = held(&g,
                     "\"efficiency_power\":{\"power_fraction\":[0,0.2,0.4,1],"
                     "\"efficiency\":[0.8,0.9,0.94,0.92]}",
                     2000, 150);
  double p = 150.0 * 2000 / RPM, eta = 0.90 + 0.04 * (p / 1e5 - 0.2) / 0.2;
  ck_assert_double_eq_tol(dg_test_signal(sim, "mot.electric_power"), p / eta, 1e-8);
  dg_sim_free(sim);
  dg_graph_free(g);
  sim = held(&g, "\"efficiency\":0.9", 2000, -150);
  ck_assert_double_eq_tol(dg_test_signal(sim, "mot.electric_power"), -p * 0.9, 1e-8);
  dg_sim_free(sim);
  dg_graph_free(g);
  const char *loss = "\"loss_map\":{\"rpm\":[0,6000],\"torque\":[-250,0,250],"
                     "\"loss\":[[3000,5000],[200,800],[3000,5000]]}";
  sim = held(&g, loss, 3000, 125); /* L = lerp(lerp(200, 800, .5), lerp(3000, 5000, .5), .5) */
  ck_assert_double_eq_tol(dg_test_signal(sim, "mot.electric_power"),
                          125.0 * 3000 / RPM + 0.5 * (500.0 + 4000.0), 1e-8);
  dg_sim_free(sim);
  dg_graph_free(g);
  sim = held(&g, loss, 0, 125); /* stall: no mechanical power, a loss all the same */
  ck_assert_double_eq_tol(dg_test_signal(sim, "mot.electric_power"), 0.5 * (200.0 + 3000.0),
                          1e-9);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* The torque command is clamped to the envelope: 250 N·m driving (below
 * the base speed), the regen envelope generating (max_regen_power 30 kW at
 * 3000 rpm: 95.49 N·m); pedals are ignored; the brake's regeneration adds
 * to the command. */
START_TEST(test_torque_command) {
  dg_graph *g;
  dg_sim *sim = held(&g, "", 3000, 400);
  dg_sim_set_input(sim, DG_INPUT_THROTTLE, 0.0);
  ck_assert_double_eq_tol(dg_test_signal(sim, "mot.torque"), 250.0, TOL_TORQUE);
  dg_sim_free(sim);
  dg_graph_free(g);
  sim = held(&g, "\"max_regen_power\":30000", 3000, -400);
  ck_assert_double_eq_tol(dg_test_signal(sim, "mot.torque"), -30000.0 * RPM / 3000, TOL_TORQUE);
  dg_sim_free(sim);
  dg_graph_free(g);
  sim = held(&g, "\"regen_fraction\":0.5", 3000, 20);
  dg_sim_set_input(sim, DG_INPUT_BRAKE, 0.4); /* r = 0.2 of 250 N·m */
  ck_assert_double_eq_tol(dg_test_signal(sim, "mot.torque"), 20.0 - 0.2 * 250.0, TOL_TORQUE);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* Electrical limits: generating 200 N·m at 3000 rpm with η = 0.9 would
 * deliver 56.549 kW; a charge limit of 20 kW scales the torque to
 * T = −20000 / (0.9 ω) exactly (one step for a constant efficiency), and a
 * discharge limit of 10 kW driving to T = 10000 · 0.9 / ω. */
START_TEST(test_electric_limits) {
  dg_graph *g;
  double w = 3000 / RPM;
  dg_sim *sim = held(&g, "\"efficiency\":0.9,\"max_regen_power\":1e6", 3000, -200);
  ck_assert_double_eq_tol(dg_test_signal(sim, "mot.torque"), -200.0, TOL_TORQUE); /* unbound */
  dg_sim_free(sim);
  dg_graph_free(g);
  g = dg_test_graphf("{\"drivegraph\":1,\"blocks\":{\"mot\":{\"type\":\"motor\"," MOTOR
                       ",\"command\":\"torque\",\"efficiency\":0.9,\"max_regen_power\":1e6,"
                       "\"inputs\":{\"torque\":\"cmd\",\"charge_limit\":\"cl\","
                       "\"discharge_limit\":\"dl\"}},"
                       "\"src\":{\"type\":\"speed_source\",\"inputs\":{\"speed\":%.17g}}},"
                       "\"connections\":[[\"mot.out\",\"src.in\"]]}",
                       w);
  sim = dg_test_sim(g);
  dg_test_set_input(sim, "cl", 20000.0);
  dg_test_set_input(sim, "dl", 10000.0);
  dg_test_set_input(sim, "cmd", -200.0);
  ck_assert_double_eq_tol(dg_test_signal(sim, "mot.torque"), -20000.0 / (0.9 * w), 1e-9);
  ck_assert_double_eq_tol(dg_test_signal(sim, "mot.electric_power"), -20000.0, 1e-7);
  dg_test_set_input(sim, "cmd", 200.0);
  ck_assert_double_eq_tol(dg_test_signal(sim, "mot.torque"), 10000.0 * 0.9 / w, 1e-9);
  dg_test_set_input(sim, "cmd", 20.0); /* within the limit: untouched */
  ck_assert_double_eq_tol(dg_test_signal(sim, "mot.torque"), 20.0, TOL_TORQUE);
  dg_test_set_input(sim, "cl", 0.0); /* a full battery: no regeneration */
  dg_test_set_input(sim, "cmd", -50.0);
  ck_assert_double_eq(dg_test_signal(sim, "mot.torque"), 0.0);
  dg_sim_free(sim);
  dg_graph_free(g);
  /* with a map, the scaling converges to the limit within its iterations */
  g = dg_test_graphf("{\"drivegraph\":1,\"blocks\":{\"mot\":{\"type\":\"motor\"," MOTOR
                     ",\"command\":\"torque\"," EMAP ",\"max_regen_power\":1e6,"
                     "\"inputs\":{\"torque\":-190,\"charge_limit\":30000}},"
                     "\"src\":{\"type\":\"speed_source\",\"inputs\":{\"speed\":%.17g}}},"
                     "\"connections\":[[\"mot.out\",\"src.in\"]]}",
                     w);
  sim = dg_test_sim(g);
  ck_assert_double_eq_tol(dg_test_signal(sim, "mot.electric_power"), -30000.0, 1e-9 * 30000.0);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* A throttle cut (a gearbox shifting) removes the torque command; the
 * brake's regeneration stays. */
START_TEST(test_torque_command_cut) {
  dg_graph *g = dg_test_graphf(
      "{\"drivegraph\":1,\"blocks\":{\"mot\":{\"type\":\"motor\"," MOTOR
      ",\"command\":\"torque\",\"regen_fraction\":1,"
      "\"inputs\":{\"torque\":80,\"throttle_cut\":\"cut\",\"brake\":\"pedal\"}},"
      "\"src\":{\"type\":\"speed_source\",\"inputs\":{\"speed\":%.17g}}},"
      "\"connections\":[[\"mot.out\",\"src.in\"]]}",
      3000 / RPM);
  dg_sim *sim = dg_test_sim(g);
  ck_assert_double_eq_tol(dg_test_signal(sim, "mot.torque"), 80.0, TOL_TORQUE);
  dg_test_set_input(sim, "cut", 1.0);
  ck_assert_double_eq(dg_test_signal(sim, "mot.torque"), 0.0);
  dg_test_set_input(sim, "pedal", 0.1); /* 0.1 of 250 N·m */
  ck_assert_double_eq_tol(dg_test_signal(sim, "mot.torque"), -25.0, TOL_TORQUE);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* A generator at the end of an engine's shaft: its in port on the
 * crankshaft, its out port left open. */
START_TEST(test_generator_on_engine) {
  dg_graph *g = dg_test_graph(
      "{\"drivegraph\":1,\"blocks\":{\"eng\":{\"type\":\"engine\",\"inertia\":0.15,"
      "\"idle_rpm\":800,\"redline_rpm\":6000,\"idle_gain\":0,"
      "\"full_load\":{\"rpm\":[0,8000],\"torque\":[100,100]},\"inputs\":{\"throttle\":0.5}},"
      "\"gen\":{\"type\":\"motor\",\"inertia\":0.05,\"max_torque\":150,\"max_rpm\":8000,"
      "\"command\":\"torque\",\"inputs\":{\"torque\":-50}}},"
      "\"connections\":[[\"eng.out\",\"gen.in\"]]}");
  dg_sim *sim = dg_test_sim(g);
  dg_test_set_initial1(sim, "eng.rpm", 2000);
  /* 50 N·m from the engine, −50 from the generator: the shaft holds */
  dg_test_step(sim, 1000, 1e-3);
  ck_assert_double_eq_tol(dg_test_signal(sim, "gen.rpm"), 2000.0, 1e-9);
  ck_assert_double_eq_tol(dg_test_signal(sim, "gen.electric_power"), -50.0 * 2000 / RPM, 1e-8);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

static const dg_test_bad_param bad[] = {
    {MOTOR ",\"efficiency\":0.9,\"loss_map\":{\"rpm\":[0,1],\"torque\":[0,1],\"loss\":[[0,0],[0,0]]}",
     "/blocks/mot", "give only one of efficiency, efficiency_map, efficiency_power, loss_map"},
    {"\"inertia\":0.04,\"max_torque\":250,\"max_rpm\":12000,"
     "\"efficiency_power\":{\"power_fraction\":[0,1],\"efficiency\":[0.9,0.9]}",
     "/blocks/mot/efficiency_power",
     "needs the drive power limit (max_power or base_rpm) its fractions refer to"},
    {MOTOR ",\"efficiency\":1.2", "/blocks/mot/efficiency", "must be <= 1 (got 1.2)"},
    {MOTOR ",\"command\":\"speed\"", "/blocks/mot/command",
     "must be one of \"pedals\", \"torque\" (got \"speed\")"},
    {MOTOR ",\"base_rpm\":3000", "/blocks/mot", "give only one of max_power, base_rpm"},
    {"\"inertia\":0.04,\"max_torque\":250,\"base_rpm\":13000,\"max_rpm\":12000",
     "/blocks/mot/base_rpm", "must be < max_rpm (12000) (got 13000)"},
    {"\"inertia\":0,\"max_torque\":250,\"max_rpm\":12000", "/blocks/mot/inertia",
     "must be > 0 (got 0)"},
    {"\"max_torque\":250,\"max_rpm\":12000", "/blocks/mot/inertia",
     "missing required number (kg*m^2)"},
    {"\"inertia\":0.04,\"max_rpm\":12000", "/blocks/mot/max_torque",
     "missing required number (N*m)"},
    {"\"inertia\":0.04,\"max_torque\":250", "/blocks/mot/max_rpm", "missing required number (rpm)"},
    {"\"inertia\":0.04,\"max_torque\":-250,\"max_rpm\":12000", "/blocks/mot/max_torque",
     "must be > 0 (got -250)"},
    {"\"inertia\":0.04,\"max_torque\":250,\"max_rpm\":0", "/blocks/mot/max_rpm",
     "must be > 0 (got 0)"},
    {"\"inertia\":0.04,\"max_torque\":250,\"max_power\":-1,\"max_rpm\":12000",
     "/blocks/mot/max_power", "must be > 0 (got -1)"},
    {"\"inertia\":0.04,\"max_torque\":250,\"base_rpm\":0,\"max_rpm\":12000", "/blocks/mot/base_rpm",
     "must be > 0 (got 0)"},
    {MOTOR ",\"regen_fraction\":-0.1", "/blocks/mot/regen_fraction", "must be >= 0 (got -0.1)"},
    {MOTOR ",\"max_regen_torque\":0", "/blocks/mot/max_regen_torque", "must be > 0 (got 0)"},
    {MOTOR ",\"max_regen_power\":-5", "/blocks/mot/max_regen_power", "must be > 0 (got -5)"},
    {MOTOR ",\"regen_fade_rpm\":0", "/blocks/mot/regen_fade_rpm", "must be > 0 (got 0)"},
    {MOTOR ",\"reverse\":\"yes\"", "/blocks/mot/reverse", "expected true or false, got string"},
    {MOTOR ",\"max_trque\":1", "/blocks/mot/max_trque",
     "unknown parameter; did you mean \"max_torque\"?"},
};

START_TEST(test_bad_params) {
  dg_test_graph_error_at(
      bad[_i].path, bad[_i].text,
      "{\"drivegraph\":1,\"blocks\":{\"mot\":{\"type\":\"motor\",%s},"
      "\"ld\":{\"type\":\"load\",\"inertia\":1}},\"connections\":[[\"mot.out\",\"ld.in\"]]}",
      bad[_i].params);
}
END_TEST

/* ---- series blending (blocks/motor.c: brake_power, friction_brake) ---- */

/* A motor (efficiency 0.9, 300 N·m of regeneration, no power limit below
 * it) straight on a rolling wheel (R = 0.5 m) of a body at 10 m/s: the
 * motor turns at 20 rad/s and can regenerate 300 · 20 = 6 kW at its shaft.
 * Pedal 0.5; brake_power the number given, charge_limit the number given. */
static dg_sim *blend(double brake_power, double charge_limit) {
  dg_graph *g = dg_test_graphf(
      "{\"drivegraph\":1,\"blocks\":{"
      "\"m\":{\"type\":\"motor\",\"inertia\":0.1,\"max_torque\":300,\"max_rpm\":10000,"
      "\"efficiency\":0.9,\"regen_fraction\":1,"
      "\"inputs\":{\"throttle\":0,\"brake\":0.5,\"brake_power\":%.17g,\"charge_limit\":%.17g}},"
      "\"w\":{\"type\":\"wheel\",\"radius\":0.5,\"inertia\":1,\"brake_torque\":2000,"
      "\"inputs\":{\"brake\":\"m.friction_brake\"}},"
      "\"body\":{\"type\":\"vehicle\",\"mass\":1000}},"
      "\"connections\":[[\"m.out\",\"w.hub\"],[\"w.ground\",\"body.front\"]]}",
      brake_power, charge_limit);
  dg_sim *sim = dg_test_sim(g);
  int v = dg_sim_signal_find(sim, "body.speed");
  ck_assert_int_eq(dg_sim_set_initial(sim, 1, &v, (double[]){10.0}, NULL), DG_OK);
  ck_assert_int_eq(dg_sim_start(sim, NULL), DG_OK);
  return sim;
}

static void blend_free(dg_sim *sim) {
  const dg_graph *g = dg_sim_graph(sim);
  dg_sim_free(sim);
  dg_graph_free((dg_graph *)g);
}

/* Asked 4 kW: all regenerated (torque −4000 / 20 = −200 N·m), no friction.
 * Asked 9 kW: 6 kW regenerated (the 300 N·m envelope), the friction pedal
 * 0.5 · (1 − 6/9) = 1/6. With charge_limit 3 kW: P_e = 0.9 P, so the shaft
 * gives 3000 / 0.9 W and the friction the rest. Read after one step of
 * 1 µs (the wheel's brake direction is set at a step's start), so the
 * envelope is taken at the motor's speed then (20 rad/s less ~1e-5).
 * Round-off tolerances: a torque scaled to the charge limit in one
 * proportional step is exact for a constant efficiency. */
START_TEST(test_blend_cases) {
  static const struct {
    double asked, limit;
  } cases[] = {{4000, 1e9}, {9000, 1e9}, {9000, 3000}, {0, 1e9}};
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    dg_sim *sim = blend(cases[k].asked, cases[k].limit);
    ck_assert_int_eq(dg_sim_step(sim, 1e-6), DG_OK);
    double w = dg_test_signal(sim, "m.omega");
    ck_assert_double_eq_tol(w, 20.0, 1e-4);
    double avail = cases[k].limit < 1e6 ? cases[k].limit / 0.9 : 300.0 * w;
    double regen = fmin(cases[k].asked, avail);
    double friction = cases[k].asked > 0.0 ? 0.5 * (1.0 - regen / cases[k].asked) : 0.5;
    double p = dg_test_signal(sim, "m.power");
    ck_assert_msg(fabs(-p - regen) <= 1e-9 * 6000.0, "case %zu: regen %.17g, want %.17g", k, -p,
                  regen);
    ck_assert_double_eq_tol(dg_test_signal(sim, "m.regen_available"), avail, 1e-9 * 6000.0);
    ck_assert_double_eq_tol(dg_test_signal(sim, "m.friction_brake"), friction, 1e-12);
    /* the wheel's brake torque is the friction pedal's (at the speed of the
     * step's start: 1e-6 of it in 1 µs) */
    ck_assert_double_eq_tol(dg_test_signal(sim, "w.brake_torque"), -2000.0 * friction, 2e-3);
    ck_assert(-dg_test_signal(sim, "m.electric_power") <= cases[k].limit * (1 + 1e-12));
    blend_free(sim);
  }
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("motor");
  TCase *tc = tcase_create("drive");
  tcase_add_test(tc, test_constant_torque);
  tcase_add_test(tc, test_constant_power);
  tcase_add_test(tc, test_max_rpm);
  tcase_add_test(tc, test_reverse);
  suite_add_tcase(s, tc);
  tc = tcase_create("regen");
  tcase_add_test(tc, test_regen);
  tcase_add_test(tc, test_throttle_cut);
  suite_add_tcase(s, tc);
  tc = tcase_create("electric");
  tcase_add_test(tc, test_map_point_driving);
  tcase_add_test(tc, test_four_quadrants);
  tcase_add_test(tc, test_other_forms);
  tcase_add_test(tc, test_torque_command);
  tcase_add_test(tc, test_torque_command_cut);
  tcase_add_test(tc, test_electric_limits);
  tcase_add_test(tc, test_generator_on_engine);
  suite_add_tcase(s, tc);
  tc = tcase_create("params");
  tcase_add_loop_test(tc, test_bad_params, 0, (int)(sizeof bad / sizeof bad[0]));
  suite_add_tcase(s, tc);
  tc = tcase_create("blending");
  tcase_add_test(tc, test_blend_cases);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return dg_test_run(suite()); }
