/* The example graphs that bind block inputs (graphs/NAME.json with their
 * scenarios): each checked against a hand calculation, a conservation law
 * or an independent reference. */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef dg_test_drive run;
#define start dg_test_start
#define finish dg_test_finish

static double sig(const run *r, const char *name) { return dg_test_signal(r->sim, name); }

/* ---- per-wheel brake commands ------------------------------------------- */

/* graphs/brake_per_wheel.json, scenario brake_front_left: the body rolls at
 * 20 m/s on four no-slip wheels (one DOF v), no road load; from t = 1 s
 * only the front-left brake is applied, 0.75 of 2000 N·m × share 0.6 =
 * T = 900 N·m. The brake slips (the wheel turns), so it applies exactly T
 * against the wheel's rotation, and by virtual work on v (ω = v/R):
 *   (m + Σ I_w / R²) dv/dt = −T / R,
 * a constant deceleration a = (900/0.32) / (1500 + 4.6/0.1024)
 * = 2812.5 / 1544.921875 = 1.820475... m/s². The ground force at the
 * braked wheel's contact, F = T/R − I_fl a / R = 2812.5 − 17.8 N, is the
 * only horizontal force on the car; the other brakes apply nothing. */
START_TEST(test_one_wheel_braked) {
  run r = start("graphs/brake_per_wheel.json", "graphs/scenarios/brake_front_left.json");
  const double R = 0.32, T = 2000 * 0.6 * 0.75;
  const double m_eff = 1500 + (2 * 1.0 + 2 * 1.3) / (R * R), a = T / R / m_eff;
  dg_test_step(r.sim, 1000, 1e-3);
  ck_assert_double_eq_tol(sig(&r, "body.speed"), 20.0, 1e-12);
  ck_assert_double_eq(sig(&r, "wheel_fl.brake_torque"), 0.0);
  for (int k = 1; k <= 3; k++) {
    dg_test_step(r.sim, 1000, 1e-3);
    double v = 20.0 - a * k;
    ck_assert_double_eq_tol(sig(&r, "body.speed"), v, 1e-10);
    ck_assert_double_eq_tol(sig(&r, "wheel_fl.omega"), v / R, 1e-9);
    ck_assert_double_eq_tol(sig(&r, "wheel_fl.brake_torque"), -T, 1e-9);
    ck_assert_double_eq_tol(sig(&r, "body.accel"), -a, 1e-9);
    const char *others[] = {"wheel_fr.brake_torque", "wheel_rl.brake_torque",
                            "wheel_rr.brake_torque"};
    for (int i = 0; i < 3; i++)
      ck_assert_double_eq(fabs(sig(&r, others[i])), 0.0);
  }
  /* the brake's work is the kinetic energy lost: T ∫ω dt */
  double v3 = 20.0 - 3 * a, s = (20.0 + v3) / 2 * 3;
  int fl = dg_test_block_index(r.g, "wheel_fl");
  ck_assert_double_eq_tol(dg_sim_block_work(r.sim, fl), -T * s / R, 1e-6);
  dg_energy e;
  dg_sim_energy(r.sim, &e);
  ck_assert_double_eq_tol(e.kinetic, 0.5 * m_eff * v3 * v3, 1e-6);
  finish(&r);
}
END_TEST

/* A channel the graph binds but the scenario does not give is refused
 * before the run; dg_scenario_check names every missing one. */
static void count_problem(const dg_error *e, void *user) {
  ck_assert_str_eq(e->file, "s.json");
  ck_assert_str_eq(e->path, "/inputs");
  (*(int *)user)++;
}

START_TEST(test_missing_channel) {
  dg_graph *g = dg_test_graph_file("graphs/brake_per_wheel.json");
  dg_error err;
  dg_scenario *scn = dg_scenario_load_string(
      "{\"duration\":1,\"inputs\":{\"brake_fr\":[[0,0]]}}", "s.json", &err);
  ck_assert_ptr_nonnull(scn);
  dg_sim *sim = dg_test_sim(g);
  ck_assert_ptr_null(dg_driver_new(scn, sim, &err));
  ck_assert_str_eq(err.file, "s.json");
  ck_assert_str_eq(err.path, "/inputs");
  ck_assert_msg(strstr(err.text, "channel \"brake_fl\" is not given, but the graph ") &&
                    strstr(err.text, "binds it (/blocks/wheel_fl/inputs/brake): add "
                                     "\"brake_fl\": [[t, value], ...]"),
                "%s", err.text);
  int n = 0;
  ck_assert_int_eq(dg_scenario_check(scn, sim, count_problem, &n), 3);
  ck_assert_int_eq(n, 3);
  dg_sim_free(sim);
  dg_scenario_free(scn);
  dg_graph_free(g);
}
END_TEST

/* ---- the 4x4 pickup: transfer case on its own range input ---------------- */

/* Reverse in low range: the automatic on R (channel gear −1), the transfer
 * case in low (channel range 2): the truck backs away, and the transfer
 * case's input turns 2.72 times its output (the same sign: no neutral). */
START_TEST(test_pickup_reverses_in_low) {
  run r = start("graphs/pickup_4x4.json", "graphs/scenarios/pickup_reverse_low.json");
  dg_test_step(r.sim, 8000, 1e-3);
  ck_assert_double_eq(sig(&r, "gearbox.gear"), -1.0);
  ck_assert_double_eq(sig(&r, "transfer.gear"), 2.0);
  ck_assert_double_eq(sig(&r, "transfer.ratio"), 2.72);
  double out = sig(&r, "transfer.omega_out");
  ck_assert_double_lt(out, -5.0);
  ck_assert_double_eq_tol(sig(&r, "transfer.omega"), 2.72 * out, 1e-12 * fabs(out));
  ck_assert_double_lt(sig(&r, "body.speed"), -3.0);
  finish(&r);
}
END_TEST

/* Upshifts of the automatic in high range: the gearbox shifts through
 * friction with "cut_throttle", and the engine follows the throttle cut of
 * the gearbox it drives (the nearest downstream), so in each inertia phase
 * (the oncoming clutch slipping, shift_phase 2) its throttle is 0 and its
 * speed never rises above where the phase began (with the cut cancelled by
 * the transfer case it would flare towards the limiter); outside it the
 * throttle is the driver's 1; the transfer case, shifting nothing, stays in
 * high. */
START_TEST(test_pickup_no_flare) {
  run r = start("graphs/pickup_4x4.json", "graphs/scenarios/pickup_launch_high.json");
  int shifts = 0;
  bool inertia = false;
  double begin = 0.0, peak = 0.0;
  for (int i = 0; i < 30000; i++) {
    double rpm = sig(&r, "engine.rpm");
    dg_test_step(r.sim, 1, 1e-3);
    bool now = sig(&r, "gearbox.shift_phase") == 2.0;
    if (now && !inertia) {
      begin = rpm;
      peak = rpm;
      shifts++;
    }
    if (now) {
      ck_assert_double_eq(sig(&r, "engine.throttle"), 0.0);
      peak = fmax(peak, sig(&r, "engine.rpm"));
    } else if (dg_sim_time(r.sim) > 1.2) {
      ck_assert_double_eq(sig(&r, "engine.throttle"), 1.0);
    }
    if (!now && inertia)
      ck_assert_msg(peak <= begin + 1e-6, "flare: %.1f rpm at the phase's start, %.1f in it",
                    begin, peak);
    inertia = now;
    ck_assert_double_eq(sig(&r, "transfer.gear"), 1.0);
  }
  ck_assert_int_ge(shifts, 3);
  finish(&r);
}
END_TEST

/* ---- Modelica CoupledClutches ------------------------------------------- */

/* graphs/coupled_clutches.json with its scenario against the independent
 * reference tests/data/ref/coupled_clutches.csv (scripts/ref/
 * coupled_clutches.py: scipy's DOP853 at rtol 1e-12 between located stick,
 * slip and opening events; its two solvers agree to 2e-11 rad/s). The
 * issue asks 1e-3 rad/s at dt = 1 ms; the framework integrates the sine
 * forcing with RK4 (local error ~(2π·5·dt)⁵/120 of the forcing, 3e-8 at
 * 1 ms) and locates every stick and unstick to 1e-10 of a step, so the
 * speeds agree to 1e-6 rad/s at every millisecond (measured 7.7e-8). */
START_TEST(test_coupled_clutches) {
  run r = start("graphs/coupled_clutches.json", "graphs/scenarios/coupled_clutches.json");
  char path[1024];
  dg_test_path(path, sizeof path, "tests/data/ref/coupled_clutches.csv");
  FILE *f = fopen(path, "r");
  ck_assert_msg(f, "cannot read %s", path);
  char line[512];
  const char *names[4] = {"J1.omega", "J2.omega", "J3.omega", "J4.omega"};
  double worst = 0.0, worst_t = 0.0;
  int rows = 0;
  bool header = false;
  while (fgets(line, sizeof line, f)) {
    if (line[0] == '#')
      continue;
    if (!header) {
      ck_assert_str_eq(line, "t,w1,w2,w3,w4\n");
      header = true;
      continue;
    }
    double t, w[4];
    ck_assert_int_eq(sscanf(line, "%lf,%lf,%lf,%lf,%lf", &t, &w[0], &w[1], &w[2], &w[3]), 5);
    if (rows > 0)
      dg_test_step(r.sim, 1, 1e-3);
    ck_assert_double_eq_tol(dg_sim_time(r.sim), t, 1e-12);
    for (int k = 0; k < 4; k++) {
      double d = fabs(sig(&r, names[k]) - w[k]);
      if (d > worst) {
        worst = d;
        worst_t = t;
      }
    }
    rows++;
  }
  fclose(f);
  printf("coupled clutches: %d samples, worst |w - w_ref| %.3g rad/s at t = %.3f s\n", rows,
         worst, worst_t);
  ck_assert_int_eq(rows, 1501);
  ck_assert_double_le(worst, 1e-6);
  /* the end state: clutches 2 and 3 stuck, clutch 1 open */
  ck_assert_double_eq(sig(&r, "clutch1.locked"), 0.0);
  ck_assert_double_eq(sig(&r, "clutch2.locked"), 1.0);
  ck_assert_double_eq(sig(&r, "clutch3.locked"), 1.0);
  /* energy: the source's work and the clutches' friction close the audit */
  dg_energy e;
  dg_sim_energy(r.sim, &e);
  ck_assert_double_le(fabs(e.balance_error), 1e-9);
  finish(&r);
}
END_TEST

/* ---- Modelica SimpleGearShift ------------------------------------------ */

/* graphs/simple_gear_shift.json with its scenario against the independent
 * reference tests/data/ref/simple_gear_shift.csv (scripts/ref/
 * simple_gear_shift.py: a KKT formulation over the three members' speeds,
 * scipy's DOP853 at rtol 1e-12 between located stick and slip events; its
 * two solvers agree to 2e-11 rad/s). The ratio carrier/sun is
 * S/(S+R) = 50/125 = 0.4 while the brake holds the ring (Willis with the
 * ring at rest: exact, it is the tie itself) and exactly 1 once the clutch
 * has locked sun to ring with the brake open. The transient is held to
 * 1e-9 rad/s at dt = 1 ms (the issue asks 1e-6): the right-hand side is
 * smooth between the events and the commands' corners (the drag c2 ω|ω|
 * on a carrier turning one way, linear ramps), all of which end segments,
 * so RK4's global error is O(dt⁴) of the drag's derivatives, and the
 * brake's breakaway and the clutch's stick are located to 1e-10 of a step;
 * the reference itself is good to ~2e-11 (its two solvers' agreement).
 * Measured: 1.75e-11 rad/s (at 2.107 s, in the shift). The brake lets go
 * at 2 + 2/49 s (static = kinetic capacity: where the torque it holds
 * meets its falling capacity) and the clutch sticks at 2.11079 s, each
 * checked against the reference's time to 1e-9 s (measured 8e-14 s). */
static double ref_event(const char *path, const char *what) {
  FILE *f = fopen(path, "r");
  ck_assert_msg(f, "cannot read %s", path);
  char line[512];
  double t = NAN;
  while (fgets(line, sizeof line, f) && line[0] == '#')
    if (strstr(line, what))
      ck_assert_int_eq(sscanf(line, "# event t=%lf", &t), 1);
  fclose(f);
  ck_assert_msg(!isnan(t), "no event \"%s\" in %s", what, path);
  return t;
}

START_TEST(test_simple_gear_shift) {
  run r = start("graphs/simple_gear_shift.json", "graphs/scenarios/simple_gear_shift.json");
  char path[1024];
  dg_test_path(path, sizeof path, "tests/data/ref/simple_gear_shift.csv");
  const double t_brake = ref_event(path, "element=brake slip");
  const double t_stick = ref_event(path, "element=clutch stick");
  FILE *f = fopen(path, "r");
  ck_assert_msg(f, "cannot read %s", path);
  char line[512];
  const char *names[3] = {"engine.omega", "brake.omega", "load.omega"};
  double worst = 0.0, worst_t = 0.0, worst_ratio = 0.0;
  double seen_brake = NAN, seen_stick = NAN;
  int rows = 0;
  bool header = false;
  while (fgets(line, sizeof line, f)) {
    if (line[0] == '#')
      continue;
    if (!header) {
      ck_assert_str_eq(line, "t,w_sun,w_ring,w_carrier\n");
      header = true;
      continue;
    }
    double t, w[3];
    ck_assert_int_eq(sscanf(line, "%lf,%lf,%lf,%lf", &t, &w[0], &w[1], &w[2]), 4);
    if (rows > 0) {
      bool held = sig(&r, "brake.held") == 1.0, locked = sig(&r, "clutch.locked") == 1.0;
      long events = dg_sim_event_count(r.sim);
      dg_test_step(r.sim, 1, 1e-3);
      if (dg_sim_event_count(r.sim) > events && held && sig(&r, "brake.held") == 0.0)
        seen_brake = dg_sim_last_event_time(r.sim);
      if (dg_sim_event_count(r.sim) > events && !locked && sig(&r, "clutch.locked") == 1.0)
        seen_stick = dg_sim_last_event_time(r.sim);
    }
    ck_assert_double_eq_tol(dg_sim_time(r.sim), t, 1e-12);
    for (int k = 0; k < 3; k++) {
      double d = fabs(sig(&r, names[k]) - w[k]);
      if (d > worst) {
        worst = d;
        worst_t = t;
      }
    }
    /* the two gears, from the speeds themselves */
    double ws = sig(&r, "engine.omega"), wc = sig(&r, "load.omega");
    if (t > 0.5 && t <= 2.0) {
      ck_assert_double_eq(sig(&r, "brake.held"), 1.0);
      ck_assert_double_eq(sig(&r, "brake.omega"), 0.0);
      worst_ratio = fmax(worst_ratio, fabs(wc / ws - 0.4));
      ck_assert_double_eq_tol(sig(&r, "ps.carrier_sun"), 0.4, 1e-12);
    } else if (t >= 2.12) {
      ck_assert_double_eq(sig(&r, "clutch.locked"), 1.0);
      ck_assert_double_eq(sig(&r, "brake.held"), 0.0);
      worst_ratio = fmax(worst_ratio, fabs(wc / ws - 1.0));
    }
    rows++;
  }
  fclose(f);
  printf("simple gear shift: %d samples, worst |w - w_ref| %.3g rad/s at t = %.3f s, ratio "
         "error %.3g, brake lets go at %.17g s (ref %.17g), clutch sticks at %.17g s (ref "
         "%.17g)\n",
         rows, worst, worst_t, worst_ratio, seen_brake, t_brake, seen_stick, t_stick);
  ck_assert_int_eq(rows, 5001);
  ck_assert_double_le(worst, 1e-9);
  /* 0.4 = S/(S+R) while the ring is held, 1 once locked: to round-off */
  ck_assert_double_le(worst_ratio, 1e-12);
  ck_assert_double_eq_tol(seen_brake, t_brake, 1e-9);
  ck_assert_double_eq_tol(seen_stick, t_stick, 1e-9);
  /* the gear set's torques stay in the ratio S : R : −(S+R) */
  ck_assert_double_eq_tol(sig(&r, "ps.ring_torque"), 1.5 * sig(&r, "ps.sun_torque"), 1e-12);
  ck_assert_double_eq_tol(sig(&r, "ps.carrier_torque"), -2.5 * sig(&r, "ps.sun_torque"), 1e-12);
  /* energy: engine, drag and the two frictions close the audit; nothing is
   * lost to an impact (every stick is located at zero slip) */
  dg_energy e;
  dg_sim_energy(r.sim, &e);
  printf("simple gear shift: balance error %.3g J, impact loss %.3g J, friction %.6g J\n",
         e.balance_error, e.impact_loss,
         dg_sim_block_work(r.sim, dg_test_block_index(r.g, "clutch")) +
             dg_sim_block_work(r.sim, dg_test_block_index(r.g, "brake")));
  ck_assert_double_le(fabs(e.balance_error), 1e-6);
  ck_assert_double_le(fabs(e.impact_loss), 1e-9);
  finish(&r);
}
END_TEST

/* ---- consistent starts (dg_sim_start, through the scenario driver) ------ */

/* A scenario text against a graph file: the bound run, or NULL with err. */
static run start_text(const char *graph, const char *scenario, dg_error *err) {
  run r = {0};
  r.g = dg_test_graph_file(graph);
  r.scn = dg_scenario_load_string(scenario, "start.json", err);
  ck_assert_msg(r.scn, "%s: %s", err->path, err->text);
  r.sim = dg_test_sim(r.g);
  r.drv = dg_driver_new(r.scn, r.sim, err);
  return r;
}

/* The sedan given only its body speed: the engine, free behind the
 * converter, idles (800 rpm), the magic-formula wheels roll with the road
 * (ω = v/R, no slip), the automatic takes the gear it would not upshift
 * from at that road speed (4 m/s: first; 25 m/s: the input shaft would
 * turn 10 400 rpm in first and 6 265 in second, both past the 6 000 rpm
 * upshift, 4 283 in third: third), and the first step has nothing to
 * change: no mode change, no impact, no shift. */
START_TEST(test_start_sedan_rolling) {
  const double v = _i == 0 ? 4.0 : 25.0, R = 0.32;
  const int gear = _i == 0 ? 1 : 3;
  char text[256];
  snprintf(text, sizeof text,
           "{\"inputs\":{\"throttle\":[[0,0]],\"gear\":[[0,1]]},"
           "\"initial\":{\"body.speed\":%g}}", v);
  dg_error err;
  run r = start_text("graphs/sedan_rwd_automatic.json", text, &err);
  ck_assert_msg(r.drv, "%s", err.text);
  ck_assert_double_eq_tol(sig(&r, "engine.rpm"), 800.0, 1e-9);
  ck_assert_double_eq_tol(sig(&r, "body.speed"), v, 1e-12);
  const char *wheels[] = {"wheel_fl", "wheel_fr", "wheel_rl", "wheel_rr"};
  for (int i = 0; i < 4; i++) {
    char name[64];
    snprintf(name, sizeof name, "%s.omega", wheels[i]);
    ck_assert_double_eq_tol(sig(&r, name), v / R, 1e-9);
    snprintf(name, sizeof name, "%s.slip_ratio", wheels[i]);
    ck_assert_double_eq_tol(sig(&r, name), 0.0, 1e-12);
  }
  ck_assert_double_eq(sig(&r, "gearbox.gear"), gear);
  ck_assert_double_eq(sig(&r, "gearbox.shifting"), 0.0);
  long changes = dg_sim_topology_changes(r.sim);
  dg_test_step(r.sim, 1, 1e-3);
  ck_assert_int_eq(dg_sim_topology_changes(r.sim), changes);
  ck_assert_double_eq(sig(&r, "gearbox.gear"), gear);
  dg_energy e;
  dg_sim_energy(r.sim, &e);
  ck_assert_double_eq(e.impact_loss, 0.0);
  finish(&r);
}
END_TEST

/* The manual hatchback (no start_gear) rolling at 5 m/s with the lever in
 * second and the pedal released: the box engages second at the start, not
 * at the first step (which cost 3656 J and 0.9 m/s of impact), the engine
 * idles on the slipping clutch's far side, and the first step impacts
 * nothing. */
START_TEST(test_start_manual_gear) {
  dg_error err;
  run r = start_text("graphs/hatchback_fwd_manual.json",
                     "{\"inputs\":{\"gear\":[[0,2]],\"clutch\":[[0,0]],\"throttle\":[[0,0]]},"
                     "\"initial\":{\"body.speed\":5}}",
                     &err);
  ck_assert_msg(r.drv, "%s", err.text);
  ck_assert_double_eq(sig(&r, "gearbox.gear"), 2.0);
  ck_assert_double_eq(sig(&r, "gearbox.ratio"), 1.95);
  ck_assert_double_eq_tol(sig(&r, "body.speed"), 5.0, 1e-12);
  long changes = dg_sim_topology_changes(r.sim);
  dg_test_step(r.sim, 1, 1e-3);
  ck_assert_int_le(dg_sim_topology_changes(r.sim), changes + 1); /* at most the clutch locking */
  dg_energy e;
  dg_sim_energy(r.sim, &e);
  ck_assert_double_le(fabs(e.impact_loss), 1e-9);
  ck_assert_double_gt(sig(&r, "body.speed"), 4.99);
  finish(&r);
}
END_TEST

/* A start the engine cannot run from is refused with the reason: with no
 * clutch, an engine straight on a manual box in first at 30 m/s would turn
 * 30/0.3 · 3.55 · 4.06 rad/s = 13 763 rpm. */
START_TEST(test_start_refused) {
  dg_graph *g = dg_test_graph(
      "{\"drivegraph\":1,\"blocks\":{"
      "\"engine\":{\"type\":\"engine\",\"inertia\":0.15,\"idle_rpm\":850,\"redline_rpm\":6500,"
      "\"full_load\":{\"rpm\":[1000,6500],\"torque\":[120,140]}},"
      "\"gearbox\":{\"type\":\"gearbox\",\"ratios\":[3.55,1.95,1.32],\"shift\":{\"mode\":\"manual\"}},"
      "\"final\":{\"type\":\"gear\",\"ratio\":4.06},"
      "\"w\":{\"type\":\"wheel\",\"radius\":0.3,\"inertia\":2},"
      "\"body\":{\"type\":\"vehicle\",\"mass\":1150,\"wheelbase\":2.5}},"
      "\"connections\":[[\"engine.out\",\"gearbox.in\"],[\"gearbox.out\",\"final.in\"],"
      "[\"final.out\",\"w.hub\"],[\"w.ground\",\"body.front\"]]}");
  dg_error err;
  dg_scenario *scn = dg_scenario_load_string(
      "{\"inputs\":{\"gear\":[[0,1]]},\"initial\":{\"body.speed\":30}}", "s.json", &err);
  dg_sim *sim = dg_test_sim(g);
  ck_assert_ptr_null(dg_driver_new(scn, sim, &err));
  ck_assert_str_eq(err.file, "s.json");
  ck_assert_msg(strstr(err.text, "block \"engine\"") &&
                    strstr(err.text, "the start drives the engine at 13763 rpm, above its redline "
                                     "6500 rpm") &&
                    strstr(err.text, "start in a higher gear"),
                "%s", err.text);
  dg_sim_free(sim);
  /* third gear: 5 339 rpm, accepted; the engine follows the road */
  dg_scenario_free(scn);
  scn = dg_scenario_load_string("{\"inputs\":{\"gear\":[[0,3]]},\"initial\":{\"body.speed\":30}}",
                                "s.json", &err);
  sim = dg_test_sim(g);
  dg_driver *drv = dg_driver_new(scn, sim, &err);
  ck_assert_msg(drv, "%s", err.text);
  ck_assert_double_eq_tol(dg_test_signal(sim, "engine.rpm"), 30 / 0.3 * 1.32 * 4.06 * 9.549296585513720,
                          1e-9);
  dg_driver_free(drv);
  dg_sim_free(sim);
  dg_scenario_free(scn);
  dg_graph_free(g);
}
END_TEST

/* ---- P2 parallel hybrid -------------------------------------------------- */

/* graphs/p2_hybrid.json, scenario p2_electric_then_boost: the motor sits
 * in-line between the engine's disconnect clutch k0 and the gearbox. Up to
 * 2 s the clutch is open and the motor alone drives at 200 N·m (below its
 * base speed 60 kW / 200 N·m = 300 rad/s): one DOF, rolling wheels, no
 * road load, so v(t) = F t / m_eff with
 *   F = 200 · 3.9 · 4.1 · η / 0.32 N, η = 0.97 · 0.97 (gearbox and final
 *       drive meshes in series, each passing 0.97 of the power it takes),
 *   m_eff = 1600 + (2·1.0 + 2·0.9)/R² + 0.04/R² (differential carrier)
 *         + η·(0.05 motor + 0.01 plate + 0.03 gearbox input)·(3.9·4.1/R)²
 *   (the inertial torque of the shafts above the meshes passes them too).
 * From 2 to 2.5 s k0 closes and starts the engine; from 2.5 s both drive:
 * at 3 s the motor is above its base speed and gives exactly 60 kW / ω,
 * the engine its full-load curve at that speed, and both shafts turn as
 * one. The energy audit closes. */
START_TEST(test_p2_hybrid) {
  run r = start("graphs/p2_hybrid.json", "graphs/scenarios/p2_electric_then_boost.json");
  const double R = 0.32, ig = 3.9 * 4.1;
  const double F = 200 * ig * 0.97 * 0.97 / R;
  const double m_eff = 1600 + (2 * 1.0 + 2 * 0.9) / (R * R) + 0.04 / (R * R) +
                       0.97 * 0.97 * (0.05 + 0.01 + 0.03) * (ig / R) * (ig / R);
  dg_test_step(r.sim, 1000, 1e-3);
  ck_assert_double_eq(sig(&r, "k0.locked"), 0.0);
  ck_assert_double_eq(sig(&r, "motor.torque"), 200.0);
  ck_assert_double_eq_tol(sig(&r, "body.speed"), F / m_eff * 1.0, 1e-9);
  ck_assert_double_eq_tol(sig(&r, "motor.omega"), F / m_eff / R * ig, 1e-8);
  dg_test_step(r.sim, 2000, 1e-3); /* t = 3 s */
  ck_assert_double_eq(sig(&r, "k0.locked"), 1.0);
  double w = sig(&r, "motor.omega"), rpm = w * 9.549296585513720;
  ck_assert_double_eq_tol(sig(&r, "engine.rpm"), rpm, 1e-9 * rpm);
  ck_assert_double_gt(w, 300.0);
  ck_assert_double_eq_tol(sig(&r, "motor.torque"), 60000.0 / w, 1e-9);
  /* full load between 5000 (235 N·m) and 6200 rpm (200 N·m), no friction */
  ck_assert_double_eq_tol(sig(&r, "engine.torque"), 235.0 - 35.0 * (rpm - 5000.0) / 1200.0, 1e-9);
  dg_test_step(r.sim, 3000, 1e-3);
  dg_energy e;
  dg_sim_energy(r.sim, &e);
  ck_assert_double_le(fabs(e.balance_error), 1e-6 * e.work_in);
  ck_assert_double_gt(sig(&r, "body.speed"), 20.0);
  finish(&r);
}
END_TEST

/* ---- dual-clutch transmission ------------------------------------------ */

/* graphs/dct.json with dct_upshifts.json: three upshifts 1→2→3→4 as clutch
 * crossovers at 4.72, 8.57 and 15.03 s (the engine at ~5000 rpm, throttle
 * 0.4, ~120 N·m): the off-going clutch drops to just above the engine's
 * torque and is released over 0.15 s while the on-coming one takes the
 * engine's torque (torque phase), then pulls the engine down to the new
 * gear's speed (inertia phase) and locks. The tractive force (the driven
 * tyres' Fx) never falls below half its value just before the shift (in
 * the torque phase it falls towards the new gear's r_new/r_old of it:
 * 0.61, 0.71, 0.74 of the force; in the inertia phase the engine's
 * deceleration adds to it), and after the shift the engine turns with the
 * new gear: ω_e = ω_final_in · r_new. The audit closes. */
START_TEST(test_dct_upshifts) {
  run r = start("graphs/dct.json", "graphs/scenarios/dct_upshifts.json");
  const double T[3] = {4.72, 8.57, 15.03};
  const double ratio_new[3] = {2.20, 1.55, 1.15};
  const char *side_new[3] = {"g_even", "g_odd", "g_even"};
  int k = 0;
  double pre = NAN, lowest = INFINITY;
  for (int i = 0; i < 20000 && k < 3; i++) {
    dg_test_step(r.sim, 1, 1e-3);
    double t = dg_sim_time(r.sim);
    double f = sig(&r, "wheel_fl.fx") + sig(&r, "wheel_fr.fx");
    if (fabs(t - (T[k] - 0.1)) < 0.5e-3) {
      pre = f;
      lowest = f;
    } else if (t > T[k] - 0.1 && t <= T[k] + 1.3) {
      lowest = fmin(lowest, f);
    }
    if (fabs(t - (T[k] + 1.3)) < 0.5e-3) {
      printf("dct: upshift %d at %.2f s: tractive force %.0f N before, lowest %.0f N (%.3f)\n",
             k + 1, T[k], pre, lowest, lowest / pre);
      ck_assert_double_gt(pre, 1000.0);
      ck_assert_double_ge(lowest, 0.5 * pre);
      char name[64];
      snprintf(name, sizeof name, "%s.omega", side_new[k]);
      double w_in = sig(&r, name), w_out = dg_test_signal(r.sim, "final.omega");
      ck_assert_double_eq_tol(sig(&r, "engine.omega"), w_in, 1e-9 * w_in);
      ck_assert_double_eq_tol(w_in, ratio_new[k] * w_out, 1e-9 * w_in);
      k++;
    }
  }
  ck_assert_int_eq(k, 3);
  dg_energy e;
  dg_sim_energy(r.sim, &e);
  ck_assert_double_le(fabs(e.balance_error), 1e-6 * e.work_in);
  finish(&r);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("examples");
  TCase *tc = tcase_create("per_wheel_brake");
  tcase_add_test(tc, test_one_wheel_braked);
  tcase_add_test(tc, test_missing_channel);
  suite_add_tcase(s, tc);
  tc = tcase_create("coupled_clutches");
  tcase_add_test(tc, test_coupled_clutches);
  suite_add_tcase(s, tc);
  tc = tcase_create("simple_gear_shift");
  tcase_add_test(tc, test_simple_gear_shift);
  suite_add_tcase(s, tc);
  tc = tcase_create("start");
  tcase_add_loop_test(tc, test_start_sedan_rolling, 0, 2);
  tcase_add_test(tc, test_start_manual_gear);
  tcase_add_test(tc, test_start_refused);
  suite_add_tcase(s, tc);
  tc = tcase_create("p2_hybrid");
  tcase_add_test(tc, test_p2_hybrid);
  suite_add_tcase(s, tc);
  tc = tcase_create("dct");
  tcase_add_test(tc, test_dct_upshifts);
  suite_add_tcase(s, tc);
  tc = tcase_create("pickup");
  tcase_add_test(tc, test_pickup_reverses_in_low);
  tcase_add_test(tc, test_pickup_no_flare);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return dg_test_run(suite()); }
