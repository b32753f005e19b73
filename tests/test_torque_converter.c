/* torque_converter: fluid torques against the formulas (stall, coupling,
 * reverse flow, pump backwards), stall speed, momentum above and below the
 * coupling point, the lock-up clutch (speed ratio, channel, unlocking,
 * min_rpm), modes, errors. */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* src (torque_source) → tc (torque_converter) → ld (load). */
static dg_graph *rig(const char *src, const char *tc, const char *ld) {
  return dg_test_chain(src, "torque_converter", "tc", tc, ld);
}

/* Tables that make the fluid coupling negligible (K = 1e4: 4e-4 N·m at
 * 200 rad/s) and torque-neutral (TR = 1, so momentum is conserved): the
 * lock-up clutch alone then follows the closed forms of the clutch block. */
#define NO_FLUID                                                                                   \
  "\"capacity_factor\":{\"speed_ratio\":[0,1],\"k\":[1e4,1e4]},"                                 \
  "\"torque_ratio\":{\"speed_ratio\":[0,1],\"ratio\":[1,1]}"

/* ---------------------------------------------------------------------- */
/* Fluid torques                                                          */

/* Default tables at ω_p = 200 rad/s, by hand from the documented
 * breakpoints: {SR, K, TR}; SR > 1 mirrors to 2 − SR with TR = 1 and
 * negative torques; SR outside [0, 2] clamps to the stall values.
 *   SR 0.4:  K = 13.5 + 0.5·(14.2 − 13.5) = 13.85, TR = 2 − 0.4/0.87
 *   SR 0.87: K = 17.2 + 0.7·(21 − 17.2) = 19.86,   TR = 1 (coupling point) */
static const struct {
  double sr, k, tr, sign;
} fluid_cases[] = {
    {0.0, 13.0, 2.0, 1},   {0.4, 13.85, 2.0 - 0.4 / 0.87, 1}, {0.87, 19.86, 1.0, 1},
    {0.95, 28.0, 1.0, 1},  {1.2, 17.2, 1.0, -1},              {2.5, 13.0, 1.0, -1},
    {-0.3, 13.0, 2.0, 1},
};

START_TEST(test_fluid_torques) {
  const double wp = 200.0;
  dg_graph *g = rig("\"inertia\":0.2", "", "\"inertia\":1");
  dg_sim *sim = dg_test_sim(g);
  dg_test_set_initial(sim, 2, (const char *[]){"src.omega", "ld.omega"},
                      (double[]){wp, fluid_cases[_i].sr * wp});
  double tp = fluid_cases[_i].sign * (wp / fluid_cases[_i].k) * (wp / fluid_cases[_i].k);
  double rel = 1e-12 * fabs(tp); /* interpolation round-off */
  ck_assert_double_eq_tol(dg_test_signal(sim, "tc.speed_ratio"), fluid_cases[_i].sr, 1e-15);
  ck_assert_double_eq_tol(dg_test_signal(sim, "tc.pump_torque"), tp, rel);
  ck_assert_double_eq_tol(dg_test_signal(sim, "tc.turbine_torque"), fluid_cases[_i].tr * tp,
                          2 * rel);
  ck_assert_double_eq(dg_test_signal(sim, "tc.locked"), 0.0);
  ck_assert_double_eq(dg_test_signal(sim, "tc.lockup_torque"), 0.0);
  /* and they act: over 1 µs the speeds move by torque·dt/J (pump
   * 0.2 + 0.05, turbine 1 + 0.03); the torques change by ~1e-5 relative
   * meanwhile, so 1e-4 of the change is the tolerance */
  const double dt = 1e-6;
  dg_test_step(sim, 1, dt);
  ck_assert_double_eq_tol(dg_test_signal(sim, "src.omega"), wp - tp * dt / 0.25,
                          1e-4 * fabs(tp) * dt / 0.25);
  ck_assert_double_eq_tol(dg_test_signal(sim, "ld.omega"),
                          fluid_cases[_i].sr * wp + fluid_cases[_i].tr * tp * dt / 1.03,
                          1e-4 * fabs(fluid_cases[_i].tr * tp) * dt / 1.03);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* No torque while the pump stands or turns backwards, whatever the turbine
 * does: the speeds stay put. */
static const double backwards_cases[][2] = {{-50.0, 10.0}, {0.0, 30.0}, {-20.0, -40.0}};

START_TEST(test_pump_backwards) {
  dg_graph *g = rig("\"inertia\":0.2", "", "\"inertia\":1");
  dg_sim *sim = dg_test_sim(g);
  dg_test_set_initial(sim, 2, (const char *[]){"src.omega", "ld.omega"}, backwards_cases[_i]);
  ck_assert_double_eq(dg_test_signal(sim, "tc.pump_torque"), 0.0);
  ck_assert_double_eq(dg_test_signal(sim, "tc.turbine_torque"), 0.0);
  ck_assert_double_eq(dg_test_signal(sim, "tc.speed_ratio"), 0.0);
  dg_test_step(sim, 100, 1e-3);
  ck_assert_double_eq(dg_test_signal(sim, "src.omega"), backwards_cases[_i][0]);
  ck_assert_double_eq(dg_test_signal(sim, "ld.omega"), backwards_cases[_i][1]);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* Stall: 200 N·m on the pump, turbine held (a 1e9 kg·m² load). The pump
 * settles where (ω_p/K(0))² = 200, ω_p = 13·sqrt(200) (time constant
 * J/(2ω/K²) ≈ 0.12 s, so 3 s leave e^-23), and the turbine gets the stall
 * torque ratio: 2.0·200 N·m. The turbine creeps at 400/1e9 rad/s², so SR
 * stays below 1e-8, which moves K by < 2e-8 (ω_p by < 3e-7 rad/s) and TR
 * by < 2e-8. */
START_TEST(test_stall) {
  dg_graph *g = rig("\"inertia\":0.2,\"torque\":200", "", "\"inertia\":1e9");
  dg_sim *sim = dg_test_sim(g);
  dg_test_step(sim, 3000, 1e-3);
  ck_assert_double_eq_tol(dg_test_signal(sim, "tc.omega"), 13.0 * sqrt(200.0), 1e-6);
  ck_assert_double_lt(dg_test_signal(sim, "tc.speed_ratio"), 1e-8);
  double tp = dg_test_signal(sim, "tc.pump_torque"), tt = dg_test_signal(sim, "tc.turbine_torque");
  ck_assert_double_eq_tol(tp, 200.0, 1e-6);
  ck_assert_double_eq_tol(tt / tp, 2.0, 1e-7);
  /* the converter only dissipates, and the energy books close */
  int tc = -1;
  for (int i = 0; i < dg_graph_block_count(g); i++)
    if (strcmp(dg_graph_block_id(g, i), "tc") == 0)
      tc = i;
  ck_assert_double_lt(dg_sim_block_work(sim, tc), 0.0);
  dg_energy e;
  dg_sim_energy(sim, &e);
  ck_assert_double_lt(fabs(e.balance_error), 1e-9 * e.work_in);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* Above the coupling point TR = 1: pump and turbine torques are equal and
 * opposite, the stator carries nothing and the momentum of the two free
 * sides is conserved while the turbine catches up. Below it the stator
 * reaction (TR − 1)·T_p adds momentum. Generalized momentum = J_p ω_p +
 * J_t ω_t with J_p = 0.2 + 0.05, J_t = 0.5 + 0.03. */
START_TEST(test_coupling_momentum) {
  dg_graph *g = rig("\"inertia\":0.2", "", "\"inertia\":0.5");
  dg_sim *sim = dg_test_sim(g);
  dg_test_set_initial(sim, 2, (const char *[]){"src.omega", "ld.omega"}, (double[]){200, 180});
  double p0[2], p1[2];
  dg_sim_momentum(sim, p0);
  dg_test_step(sim, 2000, 1e-3);
  dg_sim_momentum(sim, p1);
  ck_assert_double_eq_tol(p1[0] + p1[1], p0[0] + p0[1], 1e-12 * (p0[0] + p0[1]));
  ck_assert_double_gt(dg_test_signal(sim, "tc.speed_ratio"), 0.99);
  ck_assert_double_eq_tol(dg_test_signal(sim, "tc.turbine_torque"),
                          dg_test_signal(sim, "tc.pump_torque"), 1e-15);
  dg_sim_free(sim);
  dg_graph_free(g);

  g = rig("\"inertia\":0.2", "", "\"inertia\":0.5");
  sim = dg_test_sim(g);
  dg_test_set_initial(sim, 2, (const char *[]){"src.omega", "ld.omega"}, (double[]){200, 100});
  dg_sim_momentum(sim, p0);
  dg_test_step(sim, 1, 1e-6);
  dg_sim_momentum(sim, p1);
  /* d(momentum)/dt = (TR − 1)·T_p at SR 0.5: TR = 2 − 0.5/0.87, T_p =
   * (200/14.2)²; over 1 µs the torques change by ~1e-5 relative */
  double rate = (1.0 - 0.5 / 0.87) * (200.0 / 14.2) * (200.0 / 14.2);
  ck_assert_double_eq_tol(((p1[0] + p1[1]) - (p0[0] + p0[1])) / 1e-6, rate, 1e-4 * rate);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* Reverse flow drives the pump: a turbine at 1.5× pump speed speeds the
 * (torque-free) pump up and is itself braked by the same torque. */
START_TEST(test_reverse_flow_drives_pump) {
  dg_graph *g = rig("\"inertia\":0.2", "", "\"inertia\":1");
  dg_sim *sim = dg_test_sim(g);
  dg_test_set_initial(sim, 2, (const char *[]){"src.omega", "ld.omega"}, (double[]){100, 150});
  double tp = -(100.0 / 14.2) * (100.0 / 14.2); /* mirrored SR' = 2 − 1.5 = 0.5: K = 14.2 */
  ck_assert_double_eq_tol(dg_test_signal(sim, "tc.pump_torque"), tp, 1e-12);
  ck_assert_double_eq_tol(dg_test_signal(sim, "tc.turbine_torque"), tp, 1e-12);
  dg_test_step(sim, 10, 1e-3);
  ck_assert_double_gt(dg_test_signal(sim, "src.omega"), 100.0);
  ck_assert_double_lt(dg_test_signal(sim, "ld.omega"), 150.0);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* Given tables replace the defaults. */
START_TEST(test_custom_tables) {
  dg_graph *g = rig("\"inertia\":0.2",
                    "\"capacity_factor\":{\"speed_ratio\":[0,1],\"k\":[10,30]},"
                    "\"torque_ratio\":{\"speed_ratio\":[0,0.5,1],\"ratio\":[1.8,1.2,1]}",
                    "\"inertia\":1");
  dg_sim *sim = dg_test_sim(g);
  dg_test_set_initial(sim, 2, (const char *[]){"src.omega", "ld.omega"}, (double[]){100, 25});
  double tp = (100.0 / 15.0) * (100.0 / 15.0); /* K(0.25) = 15, TR(0.25) = 1.5 */
  ck_assert_double_eq_tol(dg_test_signal(sim, "tc.pump_torque"), tp, 1e-12);
  ck_assert_double_eq_tol(dg_test_signal(sim, "tc.turbine_torque"), 1.5 * tp, 1e-12);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* Lock-up clutch                                                         */

/* Applied at SR >= 0.8: pump side J_p = 0.3 + 0.05 at 200 rad/s, turbine
 * side J_t = 0.05 + 0.6 at 180 (SR 0.9), friction 300 N·m: the slip closes
 * at a = 300 (1/J_p + 1/J_t), t* = 20/a ≈ 15.2 ms, then both turn at the
 * momentum-conserving (J_p·200 + J_t·180)/(J_p + J_t) = 187. The fluid
 * (4e-4 N·m) moves t* by ~2e-8 s, far inside the step. Then a torque ramp
 * from t = 0.1 s (1000 N·m/s) loads the lock with 0.65·T_src until it
 * exceeds 1.1·300 N·m (t > 0.1 + 330/650 s), and it slips at exactly 300. */
START_TEST(test_lockup_by_speed_ratio) {
  const double Jp = 0.35, Jt = 0.65, h = 1e-4;
  const double a = 300.0 * (1.0 / Jp + 1.0 / Jt), t_star = 20.0 / a;
  dg_graph *g = rig("\"inertia\":0.3,\"torque_vs_time\":{\"time\":[0,0.1,1.1],"
                    "\"torque\":[0,0,1000]}",
                    NO_FLUID ",\"lockup\":{\"max_torque\":300,\"speed_ratio\":0.8},"
                    "\"turbine_inertia\":0.05",
                    "\"inertia\":0.6");
  dg_sim *sim = dg_test_sim(g);
  dg_test_set_initial(sim, 2, (const char *[]){"src.omega", "ld.omega"}, (double[]){200, 180});
  ck_assert_int_eq(dg_sim_dof_count(sim), 2);
  ck_assert_double_eq(dg_test_signal(sim, "tc.lockup_torque"), 300.0);
  double t_lock = -1.0;
  for (int i = 0; i < 1000 && t_lock < 0; i++) {
    dg_test_step(sim, 1, h);
    if (dg_test_signal(sim, "tc.locked") == 1.0)
      t_lock = dg_sim_time(sim);
  }
  ck_assert_double_gt(t_lock, t_star);
  ck_assert_double_le(t_lock, t_star + h + 1e-12);
  ck_assert_int_eq(dg_sim_dof_count(sim), 1);
  ck_assert_double_eq_tol(dg_test_signal(sim, "tc.omega"), 187.0, 1e-9 * 187.0);
  ck_assert_double_eq_tol(dg_test_signal(sim, "tc.omega_out"), 187.0, 1e-9 * 187.0);
  ck_assert_double_eq(dg_test_signal(sim, "tc.pump_torque"), 0.0);
  dg_test_step(sim, 100, h);
  ck_assert_double_eq_tol(dg_test_signal(sim, "tc.lockup_torque"), 0.0, 1e-9);
  ck_assert_double_eq(dg_test_signal(sim, "tc.locked"), 1.0);

  const double t_unlock = 0.1 + 330.0 / 650.0;
  double t_u = -1.0;
  for (int i = 0; i < 10000 && t_u < 0; i++) {
    dg_test_step(sim, 1, h);
    if (dg_test_signal(sim, "tc.locked") == 0.0)
      t_u = dg_sim_time(sim);
    else if (dg_sim_time(sim) > 0.2)
      ck_assert_double_eq_tol(dg_test_signal(sim, "tc.lockup_torque"),
                              0.65 * 1000.0 * (dg_sim_time(sim) - 0.1), 1e-6);
  }
  ck_assert_double_gt(t_u, t_unlock);
  ck_assert_double_le(t_u, t_unlock + h + 1e-12);
  ck_assert_double_eq(dg_test_signal(sim, "tc.lockup_torque"), 300.0);
  /* slipping: the turbine side gets 300 N·m plus the fluid's (ω_p/1e4)²,
   * under 2.5e-3 N·m for ω_p < 500 rad/s: < 4e-4 rad/s in 0.1 s */
  double wt = dg_test_signal(sim, "tc.omega_out");
  dg_test_step(sim, 1000, h);
  ck_assert_double_lt(dg_test_signal(sim, "tc.omega"), 500.0);
  ck_assert_double_gt(dg_test_signal(sim, "tc.speed_ratio"), 0.8); /* still applied */
  ck_assert_double_eq_tol(dg_test_signal(sim, "tc.omega_out"), wt + 300.0 * 0.1 / Jt, 4e-4);
  ck_assert_double_eq(dg_test_signal(sim, "tc.locked"), 0.0);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* Locked at 187 rad/s (1786 rpm) and braked by a 40 N·m Coulomb load: the
 * lock-up lets go in the step the pump drops under min_rpm = 1500. */
START_TEST(test_lockup_min_rpm) {
  const double h = 1e-3;
  dg_graph *g = rig("\"inertia\":0.3",
                    NO_FLUID ",\"lockup\":{\"max_torque\":300,\"speed_ratio\":0.8,"
                    "\"min_rpm\":1500},\"turbine_inertia\":0.05",
                    "\"inertia\":0.6,\"c0\":40");
  dg_sim *sim = dg_test_sim(g);
  dg_test_set_initial(sim, 2, (const char *[]){"src.omega", "ld.omega"}, (double[]){200, 180});
  dg_test_step(sim, 100, h);
  ck_assert_double_eq(dg_test_signal(sim, "tc.locked"), 1.0);
  double rpm_prev = dg_test_signal(sim, "src.rpm");
  int released = 0;
  for (int i = 0; i < 2000 && !released; i++) {
    dg_test_step(sim, 1, h);
    double rpm = dg_test_signal(sim, "src.rpm");
    if (dg_test_signal(sim, "tc.locked") == 0.0) {
      released = 1;
      ck_assert_double_lt(rpm, 1500.0);
      ck_assert_double_ge(rpm_prev, 1500.0);
    }
    rpm_prev = rpm;
  }
  ck_assert_int_eq(released, 1);
  ck_assert_double_eq(dg_test_signal(sim, "tc.lockup_torque"), 0.0);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* The lock-up commanded through its input's default channel "lockup" (a
 * plain shaft "cmd" stands where a gearbox would be). */
static dg_graph *cmd_rig(dg_registry **reg) {
  *reg = dg_test_registry();
  return dg_test_graph_reg(
      *reg, "{\"drivegraph\":1,\"blocks\":{"
            "\"src\":{\"type\":\"torque_source\",\"inertia\":0.3,\"torque\":100},"
            "\"cmd\":{\"type\":\"test_speedo\"},"
            "\"tc\":{\"type\":\"torque_converter\"," NO_FLUID ",\"lockup\":{\"max_torque\":300},"
            "\"turbine_inertia\":0.05},"
            "\"ld\":{\"type\":\"load\",\"inertia\":0.6}},"
            "\"connections\":[[\"src.out\",\"cmd.in\"],[\"cmd.out\",\"tc.in\"],"
            "[\"tc.out\",\"ld.in\"]]}");
}

/* Commanded through the channel: with speed_ratio 0 it never applies by
 * itself; commanded while slipping it closes the slip and locks; a lock
 * commanded off opens in that same step. */
START_TEST(test_lockup_by_channel) {
  const double h = 1e-3;
  dg_registry *reg;
  dg_graph *g = cmd_rig(&reg);
  dg_sim *sim = dg_test_sim(g);
  int cmd = dg_sim_input_find(sim, "lockup");
  ck_assert_int_ge(cmd, 0);
  dg_test_step(sim, 100, h);
  ck_assert_double_eq(dg_test_signal(sim, "tc.locked"), 0.0);
  ck_assert_double_eq_tol(dg_test_signal(sim, "src.omega"), 100.0 / 0.35 * 0.1, 1e-3);
  dg_sim_set_input(sim, cmd, 1.0);
  dg_test_step(sim, 1, h);
  ck_assert_double_eq_tol(dg_test_signal(sim, "tc.lockup_torque"), 300.0, 1e-12);
  dg_test_step(sim, 199, h); /* slip 28.6 rad/s closing at ~(300 − 100)/0.35 + 300/0.65 */
  ck_assert_double_eq(dg_test_signal(sim, "tc.locked"), 1.0);
  /* locked: 100 N·m on J_p + J_t = 1, the lock carries 0.65 of it */
  ck_assert_double_eq_tol(dg_test_signal(sim, "tc.lockup_torque"), 65.0, 1e-9);
  dg_sim_set_input(sim, cmd, 0.0);
  dg_test_step(sim, 1, h);
  ck_assert_double_eq(dg_test_signal(sim, "tc.locked"), 0.0);
  ck_assert_double_eq(dg_test_signal(sim, "tc.lockup_torque"), 0.0);
  dg_sim_free(sim);
  dg_graph_free(g);
  dg_registry_free(reg);

  /* commanded from rest: both shafts at 0, it locks at the first step */
  g = cmd_rig(&reg);
  sim = dg_test_sim(g);
  dg_sim_set_input(sim, dg_sim_input_find(sim, "lockup"), 1.0);
  ck_assert_int_eq(dg_sim_dof_count(sim), 2);
  dg_test_step(sim, 1, h);
  ck_assert_double_eq(dg_test_signal(sim, "tc.locked"), 1.0);
  ck_assert_int_eq(dg_sim_dof_count(sim), 1);
  dg_test_step(sim, 999, h);
  ck_assert_double_eq_tol(dg_test_signal(sim, "ld.omega"), 100.0, 1e-9);
  dg_sim_free(sim);
  dg_graph_free(g);
  dg_registry_free(reg);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* Modes                                                                  */

/* open/locked (locked only with a lock-up clutch) times a coupler's two
 * modes; with the turbine side free (gearbox in neutral) the turbine
 * inertia is all it has. */
START_TEST(test_validate_modes) {
  dg_registry *reg = dg_test_registry();
  const char *fmt =
      "{\"drivegraph\":1,\"blocks\":{\"src\":{\"type\":\"torque_source\",\"inertia\":0.2},"
      "\"tc\":{\"type\":\"torque_converter\"%s},"
      "\"cp\":{\"type\":\"test_coupler\"},\"ld\":{\"type\":\"load\",\"inertia\":1}},"
      "\"connections\":[[\"src.out\",\"tc.in\"],[\"tc.out\",\"cp.in\"],[\"cp.out\",\"ld.in\"]]}";
  char json[1024];
  dg_graph_info info;
  int problems = 0;
  snprintf(json, sizeof json, fmt, "");
  ck_assert_int_eq(
      dg_graph_validate_string(reg, json, "t.json", dg_test_count_diag, &problems, &info), 0);
  ck_assert_int_eq(info.modes, 2);
  ck_assert_int_eq(info.dofs, 2);
  snprintf(json, sizeof json, fmt, ",\"lockup\":{\"max_torque\":400,\"speed_ratio\":0.85}");
  ck_assert_int_eq(
      dg_graph_validate_string(reg, json, "t.json", dg_test_count_diag, &problems, &info), 0);
  ck_assert_int_eq(info.modes, 4);
  snprintf(json, sizeof json, fmt, ",\"turbine_inertia\":0");
  ck_assert_int_eq(
      dg_graph_validate_string(reg, json, "t.json", dg_test_count_diag, &problems, NULL), 1);
  dg_registry_free(reg);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* Errors                                                                 */

static const dg_test_bad_param bad[] = {
    {"\"capacity_factor\":{\"speed_ratio\":[0,1],\"k\":[12,0]}", "/blocks/tc/capacity_factor/k/1",
     "must be > 0 (got 0)"},
    {"\"capacity_factor\":{\"speed_ratio\":[0,1]}", "/blocks/tc/capacity_factor/k",
     "missing required array of numbers (rad/s/sqrt(N*m))"},
    {"\"capacity_factor\":{\"speed_ratio\":[0,1.2],\"k\":[12,20]}",
     "/blocks/tc/capacity_factor/speed_ratio/1", "must be <= 1 (got 1.2)"},
    {"\"torque_ratio\":{\"speed_ratio\":[-0.1,1],\"ratio\":[2,1]}",
     "/blocks/tc/torque_ratio/speed_ratio/0", "must be >= 0 (got -0.1)"},
    {"\"torque_ratio\":{\"speed_ratio\":[0,1],\"ratio\":[-1,1]}", "/blocks/tc/torque_ratio/ratio/0",
     "must be > 0 (got -1)"},
    /* TR = 3.4 − 2.4 SR on [0.5, 1]: TR·SR peaks at SR = 3.4/4.8 */
    {"\"torque_ratio\":{\"speed_ratio\":[0,0.5,1],\"ratio\":[2.5,2.2,1]}", "/blocks/tc/torque_ratio",
     "ratio*speed_ratio (efficiency) must be <= 1 (got 1.20417 at speed_ratio 0.708333)"},
    {"\"torque_ratio\":{\"speed_ratio\":[0,0.5],\"ratio\":[2,1.2]}", "/blocks/tc/torque_ratio",
     "ratio*speed_ratio (efficiency) must be <= 1 (got 1.2 at speed_ratio 1)"},
    {"\"pump_inertia\":-1", "/blocks/tc/pump_inertia", "must be >= 0 (got -1)"},
    {"\"lockup\":{}", "/blocks/tc/lockup/max_torque", "missing required number (N*m)"},
    {"\"lockup\":true", "/blocks/tc/lockup", "expected an object, got boolean"},
    {"\"lockup\":{\"max_torque\":100,\"speed_ratio\":1.5}", "/blocks/tc/lockup/speed_ratio",
     "must be <= 1 (got 1.5)"},
    {"\"lockup\":{\"max_torque\":100,\"static_factor\":0.5}", "/blocks/tc/lockup/static_factor",
     "must be >= 1 (got 0.5)"},
    {"\"lockup\":{\"max_torque\":100,\"speed_ration\":0.8}", "/blocks/tc/lockup/speed_ration",
     "unknown parameter; did you mean \"speed_ratio\"?"},
    {"\"lockup\":{\"max_torque\":100,\"min_rpm\":-1}", "/blocks/tc/lockup/min_rpm",
     "must be >= 0 (got -1)"},
};

START_TEST(test_bad_params) {
  dg_test_graph_error_at(
      bad[_i].path, bad[_i].text,
      "{\"drivegraph\":1,\"blocks\":{\"src\":{\"type\":\"torque_source\",\"inertia\":1},"
      "\"tc\":{\"type\":\"torque_converter\",%s},\"ld\":{\"type\":\"load\",\"inertia\":1}},"
      "\"connections\":[[\"src.out\",\"tc.in\"],[\"tc.out\",\"ld.in\"]]}",
      bad[_i].params);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("torque_converter");
  TCase *tc = tcase_create("fluid");
  tcase_add_loop_test(tc, test_fluid_torques, 0, (int)(sizeof fluid_cases / sizeof fluid_cases[0]));
  tcase_add_loop_test(tc, test_pump_backwards, 0,
                      (int)(sizeof backwards_cases / sizeof backwards_cases[0]));
  tcase_add_test(tc, test_stall);
  tcase_add_test(tc, test_coupling_momentum);
  tcase_add_test(tc, test_reverse_flow_drives_pump);
  tcase_add_test(tc, test_custom_tables);
  suite_add_tcase(s, tc);
  tc = tcase_create("lockup");
  tcase_add_test(tc, test_lockup_by_speed_ratio);
  tcase_add_test(tc, test_lockup_min_rpm);
  tcase_add_test(tc, test_lockup_by_channel);
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
