/* gear: ratio, efficiency, inertia referred to the input, the self-locking
 * (stuck) mode of a lossy mesh, parameter errors. */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static dg_graph *rig(const char *gear_params) {
  return dg_test_chain("\"inertia\":0.3,\"torque\":12", "gear", "g", gear_params, "\"inertia\":2");
}

/* M = I_load + (I_src + I_gear) k² at the load. */
START_TEST(test_inertia_referred_to_input) {
  dg_graph *g = rig("\"ratio\":4,\"inertia\":0.05");
  dg_sim *sim = dg_test_sim(g);
  double m;
  dg_sim_mass_matrix(sim, &m);
  ck_assert_double_eq_tol(m, 2.0 + (0.3 + 0.05) * 16.0, 1e-14);
  for (int i = 0; i < 500; i++)
    ck_assert_int_eq(dg_sim_step(sim, 1e-3), DG_OK);
  /* constant acceleration 12·4/m, integrated exactly up to round-off */
  double w = 12.0 * 4.0 / m * 0.5;
  ck_assert_double_eq_tol(dg_test_signal(sim, "g.omega_out"), w, 1e-12 * w);
  ck_assert_double_eq_tol(dg_test_signal(sim, "g.omega"), 4.0 * w, 4e-12 * w);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* Defaults: efficiency 1 and no inertia. */
START_TEST(test_defaults) {
  dg_graph *g = rig("\"ratio\":2");
  dg_sim *sim = dg_test_sim(g);
  double m;
  dg_sim_mass_matrix(sim, &m);
  ck_assert_double_eq_tol(m, 2.0 + 0.3 * 4.0, 1e-14);
  ck_assert_int_eq(dg_sim_step(sim, 0.01), DG_OK);
  ck_assert_double_eq_tol(dg_test_signal(sim, "ld.omega"), 12.0 * 2.0 / m * 0.01, 1e-14);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* The self-locking pair of issue 22: 5 N·m on J1 = 1 kg·m² (`in`) drives a
 * gear (r = 2, η = 0.5) into J2 = 1.5 kg·m² held back by T_b = −10 N·m.
 * At rest: forward, `in` driving delivers η r T_a = 5 < 10; backward, `out`
 * driving delivers η |T_b| / r = 2.5 < T_a = 5 at `in`: neither side can
 * drive, so the mesh holds (F = min(5 − 10, 10 − 5) = −5, B = min(−5 + 10,
 * −10 + 5) = −5 in gear.c's terms).
 * Rolling backward (ω_out = q < 0), `out` drives: it pushes T_b − J2 q̇ into
 * the mesh and `in` receives η/r of it:
 *   J1 r q̇ = T_a + η (T_b − J2 q̇) / r  →  q̇ (J1 r + η J2 / r) = T_a + η T_b / r
 *   q̇ = (5 − 2.5) / (2 + 0.375) = 2.5 / 2.375 = 20/19 rad/s²,
 * so from ω_in(0) = −0.2 rad/s (q(0) = −0.1) the mesh comes to rest at
 * t* = 0.1 · 2.375 / 2.5 = 0.095 s exactly, and stays there. The power
 * `out` supplies is −(T_b − J2 q̇) q; a fraction 1 − η is lost. */
static const char *const locking_graph =
    "{\"drivegraph\":1,\"blocks\":{\"drive\":{\"type\":\"torque_source\",\"torque\":%g},"
    "\"j1\":{\"type\":\"inertia\",\"inertia\":1},"
    "\"g\":{\"type\":\"gear\",\"ratio\":2,\"efficiency\":0.5,\"self_locking\":true},"
    "\"j2\":{\"type\":\"inertia\",\"inertia\":1.5},"
    "\"back\":{\"type\":\"torque_source\",\"torque\":-10}},"
    "\"connections\":[[\"drive.out\",\"j1.in\"],[\"j1.out\",\"g.in\"],"
    "[\"g.out\",\"j2.in\",\"back.out\"]]}";

/* Speeds to round-off of the located stop; the audit to 1e-9 of the
 * kinetic energy at the start (0.0275 J): RK4 is exact on these piecewise
 * linear speeds, so what is left is round-off. */
#define TOL_LOCK 1e-9

static void check_audit(const dg_sim *sim) {
  dg_energy e;
  dg_sim_energy(sim, &e);
  ck_assert_double_le(fabs(e.balance_error), 1e-9 * 0.0275);
}

START_TEST(test_self_locking_comes_to_rest) {
  const double dts[] = {3e-3, 1e-3, 0.7e-3};
  double dt = dts[_i], qd = 2.5 / 2.375, ts = 0.095;
  dg_graph *g = dg_test_graphf(locking_graph, 5.0);
  dg_sim *sim = dg_test_sim(g);
  dg_test_set_initial1(sim, "j1.omega", -0.2);
  ck_assert_double_eq_tol(dg_test_signal(sim, "j2.omega"), -0.1, 1e-15);
  double worst = 0.0, t_rest = -1.0;
  for (int k = 1; k * dt <= 0.3 + 1e-12; k++) {
    long events = dg_sim_event_count(sim);
    dg_test_step(sim, 1, dt);
    double t = dg_sim_time(sim), w = dg_test_signal(sim, "j1.omega");
    double exact = t < ts ? -0.2 + 2.0 * qd * t : 0.0;
    worst = fmax(worst, fabs(w - exact));
    /* located inside the step, or (at dt = 1 ms) the step's end: a
     * crossing within 1e-9 of a step of its end is no event */
    if (t_rest < 0.0 && dg_test_signal(sim, "g.stuck") == 1.0)
      t_rest = dg_sim_event_count(sim) > events ? dg_sim_last_event_time(sim) : t;
    if (t > ts)
      ck_assert_double_eq(dg_test_signal(sim, "g.stuck"), 1.0);
  }
  printf("self-locking gear, dt = %g: worst |w_in - closed form| %.2e rad/s, rest at %.15g s "
         "(closed form 0.095)\n",
         dt, worst, t_rest);
  ck_assert_double_le(worst, TOL_LOCK);
  ck_assert_double_eq_tol(t_rest, ts, 1e-9);
  ck_assert_double_eq(dg_test_signal(sim, "j1.omega"), 0.0);
  ck_assert_double_eq(dg_test_signal(sim, "j2.omega"), 0.0);
  check_audit(sim);
  /* the loss is (1 − η) of what `out` supplied over the roll:
   * ∫ −(T_b − J2 q̇) q dt = (10 + 1.5 q̇) · 0.1 · t* / 2 */
  dg_energy e;
  dg_sim_energy(sim, &e);
  ck_assert_double_eq_tol(e.efficiency_loss, -0.5 * (10.0 + 1.5 * qd) * 0.1 * ts / 2.0, 1e-12);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* At rest from t = 0 it never moves; with 12 N·m the `in` side overcomes
 * the lock at once (F = min(12 − 10, 24 − 5) = 2 > 0): q̇ = (η r T_a + T_b)
 * / (J2 + η r² J1) = 2 / 3.5 from t = 0, not from the first step's end. */
START_TEST(test_self_locking_from_rest) {
  dg_graph *g = dg_test_graphf(locking_graph, 5.0);
  dg_sim *sim = dg_test_sim(g);
  dg_test_step(sim, 100, 1e-2);
  ck_assert_double_eq(dg_test_signal(sim, "j1.omega"), 0.0);
  ck_assert_double_eq(dg_test_signal(sim, "j2.omega"), 0.0);
  ck_assert_double_eq(dg_test_signal(sim, "g.stuck"), 1.0);
  dg_sim_free(sim);
  dg_graph_free(g);
  g = dg_test_graphf(locking_graph, 12.0);
  sim = dg_test_sim(g);
  dg_test_step(sim, 1, 1e-2);
  ck_assert_double_eq(dg_test_signal(sim, "g.stuck"), 0.0);
  ck_assert_double_eq_tol(dg_test_signal(sim, "j2.omega"), 2.0 / 3.5 * 1e-2, 1e-15);
  dg_test_step(sim, 99, 1e-2);
  ck_assert_double_eq_tol(dg_test_signal(sim, "j2.omega"), 2.0 / 3.5, 1e-12);
  dg_test_check_balance(sim, 1e-9);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* A self-locking gear beside a brake on its output shaft: two holds of one
 * shaft, which the gear's yields to (dg_topo_tie_yielding) instead of the
 * pair being refused. The brake (engagement on channel "b") holds the
 * output while engaged; with 30 N·m at `in` the gear could drive
 * (F = η r T_a + T_b = 0.5·2·30 − 10 = 20 > 0), but nothing moves until
 * the brake lets go at 0.5 s; from then on `in` drives:
 *   q̇ = (η r T_a + T_b) / (J2 + η r² J1) = 20 / 3.5 rad/s²,
 * ω_out = q̇ (t − 0.5) exactly (RK4 on a linear speed). With 5 N·m the pair
 * locks itself: nothing moves after the release either. `validate`
 * checks every mode (gear stuck and brake held among them). */
static const char *const locking_brake_graph =
    "{\"drivegraph\":1,\"blocks\":{\"drive\":{\"type\":\"torque_source\",\"torque\":%g},"
    "\"j1\":{\"type\":\"inertia\",\"inertia\":1},"
    "\"g\":{\"type\":\"gear\",\"ratio\":2,\"efficiency\":0.5,\"self_locking\":true},"
    "\"j2\":{\"type\":\"inertia\",\"inertia\":1.5},"
    "\"br\":{\"type\":\"brake\",\"max_torque\":1000,\"inputs\":{\"engagement\":\"b\"}},"
    "\"back\":{\"type\":\"torque_source\",\"torque\":-10}},"
    "\"connections\":[[\"drive.out\",\"j1.in\"],[\"j1.out\",\"g.in\"],"
    "[\"g.out\",\"j2.in\",\"back.out\",\"br.in\"]]}";

START_TEST(test_self_locking_beside_brake) {
  const double torque[2] = {30.0, 5.0};
  dg_graph *g = dg_test_graphf(locking_brake_graph, torque[_i]);
  dg_sim *sim = dg_test_sim(g);
  int b = dg_sim_input_find(sim, "b");
  ck_assert_int_ge(b, 0);
  dg_sim_set_input(sim, b, 1.0);
  dg_test_step(sim, 50, 1e-2);
  ck_assert_double_eq(dg_test_signal(sim, "j2.omega"), 0.0);
  ck_assert_double_eq(dg_test_signal(sim, "br.held"), 1.0);
  ck_assert_double_eq(dg_test_signal(sim, "g.stuck"), 1.0);
  dg_sim_set_input(sim, b, 0.0);
  double qd = _i == 0 ? 20.0 / 3.5 : 0.0, worst = 0.0;
  for (int k = 1; k <= 50; k++) {
    dg_test_step(sim, 1, 1e-2);
    worst = fmax(worst, fabs(dg_test_signal(sim, "j2.omega") - qd * k * 1e-2));
  }
  printf("self-locking gear beside a brake, %g N*m: worst |w_out - closed form| %.2e rad/s\n",
         torque[_i], worst);
  ck_assert_double_le(worst, 1e-12);
  ck_assert_double_eq(dg_test_signal(sim, "g.stuck"), _i == 0 ? 0.0 : 1.0);
  dg_energy e;
  dg_sim_energy(sim, &e);
  ck_assert_double_le(fabs(e.balance_error), 1e-9 * fmax(e.work_in, 1.0));
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* Stick–slip against an independent reference: Modelica's LossyGearDemo1
 * (tests/data/msl/LossyGearDemo1: 10 sin(2π t) N·m on J1 = 1, the gear of
 * the tests above, J2 = 1.5 held back by −10 + 2.5 t N·m) against
 * tests/data/ref/lossy_gear.csv (scripts/ref/lossy_gear.py: the four
 * driving cases and the stuck one by hand, scipy's DOP853 at rtol 1e-12
 * between located events; its two solvers agree to 7e-13 rad/s). The mesh
 * rolls backward from t = 0 (`out` driving), sticks at 0.0805 s, rolls
 * forward (`in` driving) from 0.1995 s, sticks at 0.3713 s and rolls
 * backward again from 0.4645 s. Between the events the speeds are
 * integrals of smooth torques, which RK4 follows to O(dt⁴), and the events
 * are located to 1e-10 of a step: held to 1e-9 rad/s at dt = 1e-3 and
 * 1e-4 s, each event time to 1e-8 s. */
static double ref_event_time(const char *path, const char *what) {
  FILE *f = fopen(path, "r");
  ck_assert_msg(f, "cannot read %s", path);
  char line[512];
  double t = NAN;
  while (fgets(line, sizeof line, f) && line[0] == '#')
    if (strstr(line, what) && isnan(t))
      ck_assert_int_eq(sscanf(line, "# event t=%lf", &t), 1);
  fclose(f);
  ck_assert_msg(!isnan(t), "no event \"%s\" in %s", what, path);
  return t;
}

START_TEST(test_lossy_gear_reference) {
  const double dts[] = {1e-3, 1e-4};
  double dt = dts[_i];
  char path[1024];
  dg_test_path(path, sizeof path, "tests/data/ref/lossy_gear.csv");
  double t_stick = ref_event_time(path, "stuck"), t_roll = ref_event_time(path, "in_drives");
  dg_test_drive r = dg_test_start("tests/data/msl/LossyGearDemo1/graph.json",
                                  "tests/data/msl/LossyGearDemo1/scenario.json");
  FILE *f = fopen(path, "r");
  ck_assert_msg(f, "cannot read %s", path);
  char line[512];
  double worst = 0.0, worst_t = 0.0, seen_stick = NAN, seen_roll = NAN;
  int steps = (int)lround(1e-3 / dt);
  bool header = false, first = true;
  while (fgets(line, sizeof line, f)) {
    if (line[0] == '#')
      continue;
    if (!header) {
      ck_assert_str_eq(line, "t,w_in,w_out\n");
      header = true;
      continue;
    }
    double t, w_in, w_out;
    ck_assert_int_eq(sscanf(line, "%lf,%lf,%lf", &t, &w_in, &w_out), 3);
    for (int k = 0; !first && k < steps; k++) {
      double stuck = dg_test_signal(r.sim, "gear.stuck");
      dg_driver_apply(r.drv, dg_sim_time(r.sim));
      dg_test_step(r.sim, 1, dt);
      double now = dg_test_signal(r.sim, "gear.stuck");
      if (stuck == 0.0 && now == 1.0 && isnan(seen_stick))
        seen_stick = dg_sim_last_event_time(r.sim);
      if (stuck == 1.0 && now == 0.0 && isnan(seen_roll))
        seen_roll = dg_sim_last_event_time(r.sim);
    }
    first = false;
    ck_assert_double_eq_tol(dg_sim_time(r.sim), t, 1e-12);
    double d = fmax(fabs(dg_test_signal(r.sim, "Inertia1.omega") - w_in),
                    fabs(dg_test_signal(r.sim, "Inertia2.omega") - w_out));
    if (d > worst) {
      worst = d;
      worst_t = t;
    }
  }
  fclose(f);
  dg_energy e;
  dg_sim_energy(r.sim, &e);
  printf("LossyGearDemo1, dt = %g: worst |w - w_ref| %.3g rad/s at t = %.4f s; sticks at %.12g s "
         "(ref %.12g), rolls at %.12g s (ref %.12g); audit %.2g J of %.3g J in\n",
         dt, worst, worst_t, seen_stick, t_stick, seen_roll, t_roll, e.balance_error, e.work_in);
  ck_assert_double_le(worst, 1e-9);
  ck_assert_double_eq_tol(seen_stick, t_stick, 1e-8);
  ck_assert_double_eq_tol(seen_roll, t_roll, 1e-8);
  ck_assert_double_le(fabs(e.balance_error), 1e-9 * e.work_in);
  dg_test_finish(&r);
}
END_TEST

/* An efficiency per direction of power flow (efficiency 0.9 while `in`
 * drives, efficiency_reverse 0.6 while `out` drives), r = 2, J1 = 0.3 on
 * `in`, J2 = 2 on `out`, 12 N·m:
 *   on `in`:  J1 r q̇ = T − τ_in, J2 q̇ = η_f r τ_in
 *             → q̇ = η_f r T / (J2 + η_f r² J1) = 21.6 / 3.08;
 *   on `out`: J2 q̇ = T − τ_out, J1 r q̇ = η_r τ_out / r
 *             → q̇ = T / (J2 + r² J1 / η_r) = 12 / 4.
 * The loss is (1 − η) of the power the driving side puts into the mesh;
 * the audit closes to round-off. */
static const char *const directed_graph =
    "{\"drivegraph\":1,\"blocks\":{\"t_in\":{\"type\":\"torque_source\",\"torque\":%g},"
    "\"j1\":{\"type\":\"inertia\",\"inertia\":0.3},"
    "\"g\":{\"type\":\"gear\",\"ratio\":2,\"efficiency\":0.9,\"efficiency_reverse\":0.6},"
    "\"j2\":{\"type\":\"inertia\",\"inertia\":2},"
    "\"t_out\":{\"type\":\"torque_source\",\"torque\":%g}},"
    "\"connections\":[[\"t_in.out\",\"j1.in\"],[\"j1.out\",\"g.in\"],[\"g.out\",\"j2.in\","
    "\"t_out.out\"]]}";

START_TEST(test_efficiency_by_direction) {
  const double T = 12.0, cases[2][3] = {{T, 0.0, 21.6 / 3.08}, {0.0, T, 12.0 / 4.0}};
  for (int c = 0; c < 2; c++) {
    dg_graph *g = dg_test_graphf(directed_graph, cases[c][0], cases[c][1]);
    dg_sim *sim = dg_test_sim(g);
    dg_test_step(sim, 100, 1e-2);
    double q = cases[c][2];
    ck_assert_double_eq_tol(dg_test_signal(sim, "j2.omega"), q, 1e-12 * q);
    ck_assert_double_eq_tol(dg_test_signal(sim, "j1.omega"), 2.0 * q, 2e-12 * q);
    /* the power into the mesh from the driving side over 1 s, (1 − η) of it lost:
     * `in` drives: τ_in = T − J1 r q̇ at 2 q̇ t; `out` drives: τ_out = T − J2 q̇ at q̇ t */
    double put = c == 0 ? (T - 0.3 * 2.0 * q) * 2.0 * q / 2.0 : (T - 2.0 * q) * q / 2.0;
    dg_energy e;
    dg_sim_energy(sim, &e);
    ck_assert_double_eq_tol(e.efficiency_loss, -(c == 0 ? 0.1 : 0.4) * put, 1e-12 * put);
    ck_assert_double_le(fabs(e.balance_error), 1e-12 * e.work_in);
    dg_sim_free(sim);
    dg_graph_free(g);
  }
}
END_TEST

/* A gear without bearing friction, stuck mode or tables says at init that
 * it needs none of its hooks (dg_init_idle), and the solver leaves them
 * out. Against a copy of the class without init (so with every hook
 * called), a lossy gear whose power reverses (a sine torque against a
 * constant one: the solver locates each reversal) runs bit for bit the
 * same, with the same events and the same energy audit. */
START_TEST(test_idle_hooks_change_nothing) {
  dg_registry *reg = dg_test_registry();
  static dg_block_class busy;
  busy = *dg_registry_find(reg, "gear");
  busy.type = "gear_busy";
  busy.init = NULL; /* data zeroed: rolling, as gear_init leaves it */
  dg_error err;
  ck_assert_msg(dg_registry_add(reg, &busy, &err) == DG_OK, "%s", err.text);
  const char *types[2] = {"gear", "gear_busy"};
  double end[2][4];
  long events[2] = {0, 0};
  for (int c = 0; c < 2; c++) {
    dg_graph *g = dg_test_graph_regf(
        reg,
        "{\"drivegraph\":1,\"blocks\":{\"t_in\":{\"type\":\"torque_source\",\"torque\":3},"
        "\"j1\":{\"type\":\"inertia\",\"inertia\":0.3},"
        "\"g\":{\"type\":\"%s\",\"ratio\":2,\"efficiency\":0.9,\"efficiency_reverse\":0.6},"
        "\"j2\":{\"type\":\"inertia\",\"inertia\":2},"
        "\"s\":{\"type\":\"sine_source\",\"amplitude\":20,\"frequency\":1.3},"
        "\"t_out\":{\"type\":\"torque_source\",\"torque\":1,\"inputs\":{\"command\":\"s.value\"}}},"
        "\"connections\":[[\"t_in.out\",\"j1.in\"],[\"j1.out\",\"g.in\"],[\"g.out\",\"j2.in\","
        "\"t_out.out\"]]}",
        types[c]);
    dg_sim *sim = dg_test_sim(g);
    double last = NAN;
    for (int i = 0; i < 3000; i++) {
      ck_assert_int_eq(dg_sim_step(sim, 1e-3), DG_OK);
      double te = dg_sim_last_event_time(sim);
      if (te == te && te != last) {
        events[c]++;
        last = te;
      }
    }
    dg_energy e;
    dg_sim_energy(sim, &e);
    end[c][0] = dg_test_signal(sim, "j1.omega");
    end[c][1] = dg_test_signal(sim, "j2.omega");
    end[c][2] = e.efficiency_loss;
    end[c][3] = e.balance_error;
    ck_assert_double_le(fabs(e.balance_error), 1e-12 * e.work_in);
    dg_sim_free(sim);
    dg_graph_free(g);
  }
  ck_assert_int_ge(events[0], 6); /* the power reverses about 8 times in 3 s */
  ck_assert_int_eq(events[0], events[1]);
  for (int k = 0; k < 4; k++)
    ck_assert_msg(end[0][k] == end[1][k], "value %d: %.17g (idle hooks) vs %.17g (called)", k,
                  end[0][k], end[1][k]);
  ck_assert_double_lt(end[0][2], 0.0);
  dg_registry_free(reg);
}
END_TEST

/* Bearing friction on `in` (bearing_c0 = 2 N·m, bearing_c1 N·m·s/rad), a
 * lossless mesh, r = 2, J1 = 0.3, J2 = 2: M = J2 + r² J1 = 3.2 at `out`.
 * - 12 N·m on `in` from rest: the gear starts stuck (at rest with
 *   bearing_c0) and lets go at t = 0 (F = r (12 − 2) = 20 > 0):
 *   q̇ = r (T − c0) / M = 6.25, from t = 0;
 * - 1.5 N·m < c0: it stays stuck, exactly at rest;
 * - coasting from q(0) = 1 rad/s with c1 = 0.5: M q̇ = −r (c0 + c1 r q),
 *   q = (1 + c0/(c1 r)) exp(−c1 r² t / M) − c0/(c1 r) = 3 exp(−t/1.6) − 2,
 *   at rest at t* = 1.6 ln(3/2), located inside the step, then stuck; the
 *   bearing's work is the kinetic energy at the start (the audit closes). */
static const char *const bearing_graph =
    "{\"drivegraph\":1,\"blocks\":{\"t_in\":{\"type\":\"torque_source\",\"torque\":%g},"
    "\"j1\":{\"type\":\"inertia\",\"inertia\":0.3},"
    "\"g\":{\"type\":\"gear\",\"ratio\":2,\"bearing_c0\":2,\"bearing_c1\":%g},"
    "\"j2\":{\"type\":\"inertia\",\"inertia\":2}},"
    "\"connections\":[[\"t_in.out\",\"j1.in\"],[\"j1.out\",\"g.in\"],[\"g.out\",\"j2.in\"]]}";

START_TEST(test_bearing_friction) {
  dg_graph *g = dg_test_graphf(bearing_graph, 12.0, 0.0);
  dg_sim *sim = dg_test_sim(g);
  dg_test_step(sim, 1, 0.1);
  ck_assert_double_eq_tol(dg_test_signal(sim, "j2.omega"), 0.625, 1e-14);
  ck_assert_double_eq_tol(dg_test_signal(sim, "g.bearing_torque"), -2.0, 1e-15);
  dg_sim_free(sim);
  dg_graph_free(g);

  g = dg_test_graphf(bearing_graph, 1.5, 0.0);
  sim = dg_test_sim(g);
  dg_test_step(sim, 100, 1e-2);
  ck_assert_double_eq(dg_test_signal(sim, "j2.omega"), 0.0);
  ck_assert_double_eq(dg_test_signal(sim, "g.stuck"), 1.0);
  dg_sim_free(sim);
  dg_graph_free(g);

  g = dg_test_graphf(bearing_graph, 0.0, 0.5);
  sim = dg_test_sim(g);
  dg_test_set_initial1(sim, "j2.omega", 1.0);
  double ts = 1.6 * log(1.5), worst = 0.0;
  for (int k = 0; k < 100; k++) {
    dg_test_step(sim, 1, 1e-2);
    double t = dg_sim_time(sim);
    double exact = t < ts ? 3.0 * exp(-t / 1.6) - 2.0 : 0.0;
    worst = fmax(worst, fabs(dg_test_signal(sim, "j2.omega") - exact));
  }
  printf("bearing friction: worst |w_out - closed form| %.2e rad/s, rest at %.15g s (closed form "
         "%.15g)\n",
         worst, dg_sim_last_event_time(sim), ts);
  /* RK4 on an exponential at dt/1.6 = 1/160: ~1e-11 per unit; the stop to
   * 1e-10 of a step */
  ck_assert_double_le(worst, 1e-9);
  ck_assert_double_eq_tol(dg_sim_last_event_time(sim), ts, 1e-9);
  ck_assert_double_eq(dg_test_signal(sim, "j2.omega"), 0.0);
  ck_assert_double_eq(dg_test_signal(sim, "g.stuck"), 1.0);
  dg_energy e;
  dg_sim_energy(sim, &e);
  ck_assert_double_eq_tol(dg_sim_block_work(sim, dg_test_block_index(g, "g")), -e.kinetic_start,
                          1e-9 * e.kinetic_start);
  ck_assert_double_le(fabs(e.balance_error), 1e-9 * e.kinetic_start);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* Efficiency over speed: η(ω_in) = 0.5 + 0.02 ω_in (efficiency_table
 * {"omega": [0, 20], "efficiency": [0.5, 0.9]}), r = 2, 12 N·m on J1 = 0.3
 * (`in` drives) into J2 = 2, from rest, for 1 s (ω_in stays below 20):
 *   q̇ = η(2q) r T / (J2 + η(2q) r² J1),
 * integrated here, independently of the library, with RK4 at 1e-5 s (its
 * error ~1e-17). The solver evaluates η at every stage's speed, so its RK4
 * at 1 ms is fourth order in this smooth right-hand side: held to 1e-9. */
static double table_rate(double q) {
  double eta = 0.5 + 0.02 * 2.0 * q;
  return eta * 2.0 * 12.0 / (2.0 + eta * 4.0 * 0.3);
}

START_TEST(test_efficiency_over_speed) {
  dg_graph *g = dg_test_graph(
      "{\"drivegraph\":1,\"blocks\":{\"t_in\":{\"type\":\"torque_source\",\"torque\":12},"
      "\"j1\":{\"type\":\"inertia\",\"inertia\":0.3},"
      "\"g\":{\"type\":\"gear\",\"ratio\":2,"
      "\"efficiency_table\":{\"omega\":[0,20],\"efficiency\":[0.5,0.9]}},"
      "\"j2\":{\"type\":\"inertia\",\"inertia\":2}},"
      "\"connections\":[[\"t_in.out\",\"j1.in\"],[\"j1.out\",\"g.in\"],[\"g.out\",\"j2.in\"]]}");
  dg_sim *sim = dg_test_sim(g);
  double q = 0.0, h = 1e-5, worst = 0.0;
  for (int k = 1; k <= 1000; k++) {
    dg_test_step(sim, 1, 1e-3);
    for (int i = 0; i < 100; i++) {
      double k1 = table_rate(q), k2 = table_rate(q + 0.5 * h * k1);
      double k3 = table_rate(q + 0.5 * h * k2), k4 = table_rate(q + h * k3);
      q += h / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4);
    }
    worst = fmax(worst, fabs(dg_test_signal(sim, "j2.omega") - q));
  }
  printf("efficiency over speed: worst |w_out - reference| %.2e rad/s (w_out(1 s) = %.9g)\n",
         worst, q);
  ck_assert_double_le(worst, 1e-9);
  ck_assert_double_lt(dg_test_signal(sim, "j1.omega"), 20.0);
  dg_energy e;
  dg_sim_energy(sim, &e);
  ck_assert_double_lt(e.efficiency_loss, 0.0);
  ck_assert_double_le(fabs(e.balance_error), 1e-9 * e.work_in);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* Efficiency-table breakpoints located as events (issue 22): a table is
 * linear between breakpoints, so each is a kink of η. T = 50 N·m drives
 * `in` (no inertia there) through r = 2 into J = 1 kg·m², η over ω_in
 * {"omega": [0, 10, 20], "efficiency": [0.9, 0.9, 0.6]}: with u = ω_in,
 * u̇ = η(u) r² T/J = 200 η(u), from rest:
 *   u < 10:       u = 180 t, reaching 10 at t1 = 1/18 s;
 *   10 <= u < 20: η = 0.9 − 0.03 (u − 10), so w = u − 10 follows
 *                 ẇ = 180 − 6 w: w = 30 (1 − e^{−6 (t − t1)}), reaching 10
 *                 at t2 = t1 + ln(1.5)/6;
 *   u >= 20:      η = 0.6 (clamped): u = 20 + 120 (t − t2).
 * The crossings are located (the events' times against t1 and t2); the
 * pieces are linear, then exponential, so
 * the only error left is RK4's on the middle one: per step
 * |e^z − R4(z)| ≈ |z|^5/120 (z = −6 h) of the distance to w = 30 (<= 30),
 * at most N·30·|z|^5/120 after its N steps — the tolerance, with 1e-12 of
 * round-off. Taken across the kinks inside a step RK4 would be second
 * order there (error ~ |Δü| h³: 1080·h³/6 = 1.8e-7 at h = 1 ms). */
static double kink_u(double t) {
  double t1 = 1.0 / 18.0, t2 = t1 + log(1.5) / 6.0;
  if (t < t1)
    return 180.0 * t;
  if (t < t2)
    return 10.0 + 30.0 * (1.0 - exp(-6.0 * (t - t1)));
  return 20.0 + 120.0 * (t - t2);
}

static const double kink_dts[] = {1e-2, 1e-3};

START_TEST(test_efficiency_breakpoints_located) {
  const double h = kink_dts[_i], t1 = 1.0 / 18.0, t2 = t1 + log(1.5) / 6.0;
  dg_graph *g = dg_test_graph(
      "{\"drivegraph\":1,\"blocks\":{\"t_in\":{\"type\":\"torque_source\",\"torque\":50},"
      "\"g\":{\"type\":\"gear\",\"ratio\":2,"
      "\"efficiency_table\":{\"omega\":[0,10,20],\"efficiency\":[0.9,0.9,0.6]}},"
      "\"j\":{\"type\":\"inertia\",\"inertia\":1}},"
      "\"connections\":[[\"t_in.out\",\"g.in\"],[\"g.out\",\"j.in\"]]}");
  dg_sim *sim = dg_test_sim(g);
  double worst = 0.0, crossing[2] = {NAN, NAN};
  int found = 0;
  long events = 0;
  for (int k = 1; k * h <= 0.3 + 1e-12; k++) {
    dg_test_step(sim, 1, h);
    if (dg_sim_event_count(sim) > events) {
      events = dg_sim_event_count(sim);
      if (found < 2)
        crossing[found] = dg_sim_last_event_time(sim);
      found++;
    }
    double t = dg_sim_time(sim);
    worst = fmax(worst, fabs(dg_test_signal(sim, "g.omega") - kink_u(t)));
    worst = fmax(worst, fabs(2.0 * dg_test_signal(sim, "j.omega") - kink_u(t)));
  }
  double z = 6.0 * h, bound = ceil((t2 - t1) / h + 1.0) * 30.0 * pow(z, 5) / 120.0 + 1e-12;
  printf("efficiency breakpoints, dt = %g: crossings at %.12f, %.12f s (closed form %.12f, "
         "%.12f); worst |u - closed form| %.2e rad/s (RK4 bound %.2e)\n",
         h, crossing[0], crossing[1], t1, t2, worst, bound);
  ck_assert_int_eq(found, 2);
  /* each crossing is located on the dense output of the step that holds
   * it, whose later stages see the kinked η: near the kink it leaves the
   * true path by at most |Δü| h³/6 (Δü = 6·180 and 6·120 rad/s³ at the
   * two kinks), i.e. |Δü| h³/(6 u̇) = h³ in time at both (u̇ = 180, 120);
   * the second also carries the first piece's speed error (bound / 120) */
  ck_assert_double_eq_tol(crossing[0], t1, h * h * h + 1e-12);
  ck_assert_double_eq_tol(crossing[1], t2, h * h * h + bound / 120.0);
  ck_assert_double_le(worst, bound);
  /* the audit integrates the powers with RK4's weights, the kinetic energy
   * is the state's: they differ by RK4's error on the middle piece, at
   * most J ω_out δω_out each (δω_out <= bound / 2) */
  dg_energy e;
  dg_sim_energy(sim, &e);
  double w_out = dg_test_signal(sim, "j.omega");
  ck_assert_double_le(fabs(e.balance_error), 1e-9 * e.work_in + w_out * bound);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

static const dg_test_bad_param bad[] = {
    {"\"ratio\":0", "/blocks/g/ratio", "must be > 0 (got 0)"},
    {"\"ratio\":2,\"efficiency\":0", "/blocks/g/efficiency", "must be > 0 (got 0)"},
    {"\"ratio\":2,\"efficiency\":1.01", "/blocks/g/efficiency", "must be <= 1 (got 1.01)"},
    {"\"ratio\":2,\"inertia\":-0.1", "/blocks/g/inertia", "must be >= 0 (got -0.1)"},
    {"\"ratio\":2,\"efficiency_reverse\":0", "/blocks/g/efficiency_reverse", "must be > 0 (got 0)"},
    {"\"ratio\":2,\"bearing_c0\":-1", "/blocks/g/bearing_c0", "must be >= 0 (got -1)"},
    {"\"ratio\":2,\"efficiency\":0.9,\"efficiency_table\":{\"omega\":[0,1],\"efficiency\":[0.5,0.9]}",
     "/blocks/g/efficiency", "give efficiency or efficiency_table, not both"},
    {"\"ratio\":2,\"efficiency_table\":{\"omega\":[0,1],\"efficiency\":[0,0.9]}",
     "/blocks/g/efficiency_table/efficiency/0", "must be > 0 (got 0)"},
    {"\"ratio\":2,\"self_locking\":1", "/blocks/g/self_locking", "expected true or false, got number"},
    {"\"ratio\":\"3\"", "/blocks/g/ratio", "expected a number, got string"},
    {"\"ratio\":2,\"effciency\":0.9", "/blocks/g/effciency",
     "unknown parameter; did you mean \"efficiency\"?"},
};

START_TEST(test_bad_params) {
  dg_test_graph_error_at(
      bad[_i].path, bad[_i].text,
      "{\"drivegraph\":1,\"blocks\":{\"src\":{\"type\":\"torque_source\",\"inertia\":0.3},"
      "\"g\":{\"type\":\"gear\",%s},\"ld\":{\"type\":\"load\",\"inertia\":2}},"
      "\"connections\":[[\"src.out\",\"g.in\"],[\"g.out\",\"ld.in\"]]}",
      bad[_i].params);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("gear");
  TCase *tc = tcase_create("dynamics");
  tcase_add_test(tc, test_inertia_referred_to_input);
  tcase_add_test(tc, test_defaults);
  tcase_add_test(tc, test_efficiency_by_direction);
  tcase_add_test(tc, test_idle_hooks_change_nothing);
  tcase_add_test(tc, test_efficiency_over_speed);
  tcase_add_loop_test(tc, test_efficiency_breakpoints_located, 0,
                      (int)(sizeof kink_dts / sizeof kink_dts[0]));
  tcase_add_test(tc, test_bearing_friction);
  suite_add_tcase(s, tc);
  tc = tcase_create("self_locking");
  tcase_add_loop_test(tc, test_self_locking_comes_to_rest, 0, 3);
  tcase_add_test(tc, test_self_locking_from_rest);
  tcase_add_loop_test(tc, test_self_locking_beside_brake, 0, 2);
  tcase_add_loop_test(tc, test_lossy_gear_reference, 0, 2);
  suite_add_tcase(s, tc);
  tc = tcase_create("params");
  tcase_add_loop_test(tc, test_bad_params, 0, (int)(sizeof bad / sizeof bad[0]));
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return dg_test_run(suite()); }
