/* lib/run/simstate.c: number parameters changed in place between steps
 * (dgp_sim_tune) and a simulation's state as bytes (dgp_sim_state_write /
 * _read). Every comparison is bit for bit (memcmp of the signals after
 * each step), no tolerance. */
#include "testutil.h"

#include "run/simstate.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DT 0.001

/* `text` with the first `from` replaced by `to` (malloc'ed). */
static char *replace(const char *text, const char *from, const char *to) {
  const char *at = strstr(text, from);
  ck_assert_msg(at != NULL, "'%s' not in the text", from);
  size_t n = strlen(text) - strlen(from) + strlen(to);
  char *out = malloc(n + 1);
  ck_assert_ptr_nonnull(out);
  size_t head = (size_t)(at - text);
  memcpy(out, text, head);
  strcpy(out + head, to);
  strcat(out, at + strlen(from));
  return out;
}

static void run_steps(dg_sim *sim, long steps) {
  for (long k = 0; k < steps; k++)
    ck_assert_msg(dg_sim_step(sim, DT) == DG_OK, "%s", dg_sim_last_error(sim)->text);
}

/* ---- parameters ---------------------------------------------------------- */

START_TEST(param_number_finds_numbers) {
  dg_graph *g = dg_test_graph_file("graphs/ev_single_speed.json");
  const dg_param_def *def = NULL;
  int block = -1;
  double *p = dgp_graph_param_number(g, "motor.max_power", &def, &block);
  ck_assert_ptr_nonnull(p);
  ck_assert_double_eq(*p, 200000);
  ck_assert_str_eq(def->key, "max_power");
  ck_assert_str_eq(dg_graph_block_id(g, block), "motor");
  /* a field of an object, with its default */
  p = dgp_graph_param_number(g, "wheel_rl.tyre.B", &def, NULL);
  ck_assert_ptr_nonnull(p);
  ck_assert_double_eq(*p, def->def);
  /* not numbers, unknown, absent with a present flag */
  ck_assert_ptr_null(dgp_graph_param_number(g, "motor.reverse", NULL, NULL));
  ck_assert_ptr_null(dgp_graph_param_number(g, "motor.nope", NULL, NULL));
  ck_assert_ptr_null(dgp_graph_param_number(g, "nobody.inertia", NULL, NULL));
  ck_assert_ptr_null(dgp_graph_param_number(g, "motor.base_rpm", NULL, NULL));
  ck_assert_ptr_null(dgp_graph_param_number(g, "wheel_rl.tyre", NULL, NULL));
  ck_assert_ptr_null(dgp_graph_param_number(g, "motor", NULL, NULL));
  ck_assert_ptr_null(dgp_graph_param_number(g, ".x", NULL, NULL));
  dg_graph_free(g);
}
END_TEST

/* A tuned value from t = 0 runs as the graph loaded with it: what init
 * derives (the motor's power limit) follows the new value. */
START_TEST(tune_at_start_equals_load) {
  char *json = dg_test_read_source("graphs/ev_single_speed.json");
  dg_override ov[] = {{"motor.max_power", "90000"}, {"motor.max_torque", "300"}};
  dg_error err;
  dg_scenario *scn =
      dg_scenario_load_file(DG_SOURCE_ROOT "/graphs/scenarios/ev_launch_brake.json", &err);
  ck_assert_msg(scn != NULL, "%s", err.text);

  dg_graph *g = dg_graph_load_string(NULL, json, "ev.json", &err);
  ck_assert_msg(g != NULL, "%s", err.text);
  dg_sim *a = dg_test_sim(g);
  ck_assert_msg(dgp_sim_tune(a, json, "ev.json", 2, ov, &err) == DG_OK, "%s", err.text);
  dg_driver *da = dg_driver_new(scn, a, &err);
  ck_assert_msg(da != NULL, "%s", err.text);

  dg_graph *g2 = dg_graph_load_overrides(NULL, json, "ev.json", 2, ov, &err);
  ck_assert_msg(g2 != NULL, "%s", err.text);
  dg_sim *b = dg_test_sim(g2);
  dg_driver *db = dg_driver_new(scn, b, &err);
  ck_assert_msg(db != NULL, "%s", err.text);

  double *ra = dg_test_record(a, 4000, DT), *rb = dg_test_record(b, 4000, DT);
  dg_test_same_records(ra, rb, a, 4000);
  free(ra);
  free(rb);
  dg_driver_free(da);
  dg_driver_free(db);
  dg_sim_free(a);
  dg_sim_free(b);
  dg_graph_free(g);
  dg_graph_free(g2);
  dg_scenario_free(scn);
  free(json);
}
END_TEST

/* A hook a block's init leaves out for its values (dg_init_idle) comes back
 * when a tuning gives it work: the axle's wheel loads loaded without drag
 * (no torque hook: nothing to add), tuned at t = 0 to the file's drag, run
 * as the graph loaded with it, bit for bit; tuned back to none, as the
 * drag-free load (the hook, called again, adds exactly 0). Before, the
 * tuned drag was silently ignored: the wheels spun up freely. */
START_TEST(tune_wakes_idle_hooks) {
  char *json = dg_test_read_source("graphs/bench/axle_baseline.json");
  dg_override none[] = {{"left.c1", "0"}, {"left.c2", "0"}, {"right.c1", "0"}, {"right.c2", "0"}};
  dg_error err;
  /* a tuning changes its graph's numbers: one graph per simulation */
  dg_graph *g[4];
  for (int i = 0; i < 4; i++) {
    g[i] = i % 2 ? dg_graph_load_string(NULL, json, "axle.json", &err)
                 : dg_graph_load_overrides(NULL, json, "axle.json", 4, none, &err);
    ck_assert_msg(g[i] != NULL, "%s", err.text);
  }
  dg_sim *a = dg_test_sim(g[0]), *b = dg_test_sim(g[1]), *c = dg_test_sim(g[2]),
         *d = dg_test_sim(g[3]);
  ck_assert_msg(dgp_sim_tune(a, json, "axle.json", 0, NULL, &err) == DG_OK, "%s", err.text);
  ck_assert_msg(dgp_sim_tune(d, json, "axle.json", 4, none, &err) == DG_OK, "%s", err.text);
  long n = 2000;
  double *ra = dg_test_record(a, n, DT), *rb = dg_test_record(b, n, DT);
  double *rc = dg_test_record(c, n, DT), *rd = dg_test_record(d, n, DT);
  dg_test_same_records(ra, rb, a, n); /* the drag, tuned in, acts */
  dg_test_same_records(rd, rc, d, n); /* and tuned out, it is gone */
  size_t bytes = sizeof(double) * (size_t)n * (size_t)dg_sim_signal_count(a);
  ck_assert_int_ne(memcmp(ra, rc, bytes), 0); /* the two differ */
  free(ra);
  free(rb);
  free(rc);
  free(rd);
  dg_sim_free(a);
  dg_sim_free(b);
  dg_sim_free(c);
  dg_sim_free(d);
  for (int i = 0; i < 4; i++)
    dg_graph_free(g[i]);
  free(json);
}
END_TEST

/* A brake tuned away while it holds: the hatchback at rest on its brakes
 * (every wheel held), its brakes tuned to 0. Without a brake a wheel's
 * events and hold check are left out (dg_init_idle), and its pre_step
 * lets the held wheel go at the next step's start: every wheel free after
 * one step, and the car rolls on under the engine's creep without a
 * stuck wheel (no hold left to check). */
START_TEST(tune_brake_away_while_held) {
  char *json = dg_test_read_source("graphs/hatchback_fwd_manual.json");
  static const char *const wheels[] = {"wheel_fl", "wheel_fr", "wheel_rl", "wheel_rr"};
  dg_override off[4];
  char keys[4][32];
  for (int i = 0; i < 4; i++) {
    snprintf(keys[i], sizeof keys[i], "%s.brake_torque", wheels[i]);
    off[i] = (dg_override){keys[i], "0"};
  }
  dg_error err;
  dg_graph *g = dg_graph_load_string(NULL, json, "hatchback.json", &err);
  ck_assert_msg(g != NULL, "%s", err.text);
  dg_sim *sim = dg_test_sim(g);
  dg_test_set_input(sim, "brake", 1.0);
  dg_test_step(sim, 200, DT);
  char name[64];
  for (int i = 0; i < 4; i++) {
    snprintf(name, sizeof name, "%s.locked", wheels[i]);
    ck_assert_double_eq(dg_test_signal(sim, name), 1.0);
  }
  ck_assert_msg(dgp_sim_tune(sim, json, "hatchback.json", 4, off, &err) == DG_OK, "%s", err.text);
  dg_test_step(sim, 1, DT);
  for (int i = 0; i < 4; i++) {
    snprintf(name, sizeof name, "%s.locked", wheels[i]);
    ck_assert_double_eq(dg_test_signal(sim, name), 0.0);
    snprintf(name, sizeof name, "%s.brake_torque", wheels[i]);
    double b = dg_test_signal(sim, name);
    ck_assert_msg(b == 0.0 && !signbit(b), "%s = %g", name, b); /* +0: no brake */
  }
  dg_test_step(sim, 500, DT);
  for (int i = 0; i < 4; i++) {
    snprintf(name, sizeof name, "%s.locked", wheels[i]);
    ck_assert_double_eq(dg_test_signal(sim, name), 0.0);
  }
  dg_sim_free(sim);
  dg_graph_free(g);
  free(json);
}
END_TEST

/* A parameter tuned at an instant acts at that instant: the driver's and
 * the motor's memos (the last point's pedals and torque, kept for the
 * several signals the bindings read) key on the parameters too. At a fixed
 * point the driver's command is affine in kp (c = kp·ep + ...) and the
 * motor's torque at part throttle below its base speed is throttle ×
 * max_torque; the tyre's force is linear in its damping ratio (the wheel
 * caches the damping for its normal load): three values read at one
 * instant lie on a line (equal differences), and the first two differ (a
 * stale memo would repeat the first). */
START_TEST(tune_reaches_memos) {
  char *json = dg_test_read_source("graphs/ev_battery.json");
  dg_error err;
  dg_graph *g = dg_graph_load_string(NULL, json, "ev.json", &err);
  ck_assert_msg(g != NULL, "%s", err.text);
  dg_sim *sim = dg_test_sim(g);
  run_steps(sim, 13000); /* 13 s: launching towards 15 km/h, part throttle */
  int c = dg_sim_signal_find(sim, "driver.command");
  int tq = dg_sim_signal_find(sim, "motor.torque");
  int th = dg_sim_signal_find(sim, "driver.throttle");
  ck_assert(c >= 0 && tq >= 0 && th >= 0);
  double thr = dg_sim_signal(sim, th);
  ck_assert_msg(thr > 0.0 && thr < 1.0, "throttle %g", thr);
  static const char *const kp[3] = {"0.08", "0.1", "0.12"};
  static const char *const mt[3] = {"350", "360", "370"};
  double cv[3], tv[3];
  for (int k = 0; k < 3; k++) {
    const dg_override ov[] = {{"driver.kp", kp[k]}, {"motor.max_torque", mt[k]}};
    ck_assert_msg(dgp_sim_tune(sim, json, "ev.json", 2, ov, &err) == DG_OK, "%s", err.text);
    cv[k] = dg_sim_signal(sim, c);
    tv[k] = dg_sim_signal(sim, tq);
  }
  ck_assert_msg(cv[1] != cv[0] && tv[1] != tv[0], "command %g %g, torque %g %g", cv[0], cv[1],
                tv[0], tv[1]);
  ck_assert_double_eq_tol(cv[2] - cv[1], cv[1] - cv[0], 1e-12 * fabs(cv[0]) + 1e-15);
  /* the throttle moves with kp too: torque = throttle(kp) × max_torque */
  for (int k = 0; k < 3; k++)
    ck_assert_double_eq_tol(tv[k], dg_clamp01(cv[k]) * atof(mt[k]), 1e-9 * tv[k]);
  dg_sim_free(sim);
  dg_graph_free(g);
  free(json);

  /* the sedan's magic-formula tyre in its launch: fx = fz·MF(κ) + c(ζ)·κ̇
   * within ±fz·µ, c ∝ ζ */
  json = dg_test_read_source("graphs/sedan_rwd_automatic.json");
  g = dg_graph_load_string(NULL, json, "sedan.json", &err);
  ck_assert_msg(g != NULL, "%s", err.text);
  sim = dg_test_sim(g);
  dg_scenario *scn = dg_scenario_load_file(DG_SOURCE_ROOT "/graphs/scenarios/launch.json", &err);
  ck_assert_msg(scn != NULL, "%s", err.text);
  dg_driver *drv = dg_driver_new(scn, sim, &err);
  ck_assert_msg(drv != NULL, "%s", err.text);
  run_steps(sim, 300);
  int fx = dg_sim_signal_find(sim, "wheel_rl.fx");
  ck_assert(fx >= 0);
  static const char *const zeta[3] = {"1", "1.5", "2"};
  double fv[3];
  for (int k = 0; k < 3; k++) {
    const dg_override ov[] = {{"wheel_rl.tyre.damping_ratio", zeta[k]}};
    ck_assert_msg(dgp_sim_tune(sim, json, "sedan.json", 1, ov, &err) == DG_OK, "%s", err.text);
    fv[k] = dg_sim_signal(sim, fx);
  }
  ck_assert_msg(fv[1] != fv[0], "tyre force %.17g %.17g", fv[0], fv[1]);
  ck_assert_double_eq_tol(fv[2] - fv[1], fv[1] - fv[0], 1e-9 * fabs(fv[0]));
  dg_driver_free(drv);
  dg_scenario_free(scn);
  dg_sim_free(sim);
  dg_graph_free(g);
  free(json);
}
END_TEST

/* Tuning away and back at one instant changes nothing; tuning the drag
 * area up slows the car down from then on. */
START_TEST(tune_mid_run) {
  char *json = dg_test_read_source("graphs/sedan_rwd_automatic.json");
  dg_test_drive ref =
      dg_test_start("graphs/sedan_rwd_automatic.json", "graphs/scenarios/launch.json");
  dg_error err;
  dg_graph *g = dg_graph_load_string(NULL, json, "sedan.json", &err);
  ck_assert_msg(g != NULL, "%s", err.text);
  dg_sim *sim = dg_test_sim(g);
  dg_scenario *scn = dg_scenario_load_file(DG_SOURCE_ROOT "/graphs/scenarios/launch.json", &err);
  ck_assert_msg(scn != NULL, "%s", err.text);
  dg_driver *drv = dg_driver_new(scn, sim, &err);
  ck_assert_msg(drv != NULL, "%s", err.text);
  run_steps(ref.sim, 3000);
  run_steps(sim, 3000);

  const dg_override away[] = {{"body.cda", "1.5"}, {"engine.idle_rpm", "900"}};
  ck_assert_msg(dgp_sim_tune(sim, json, "sedan.json", 2, away, &err) == DG_OK, "%s", err.text);
  ck_assert_int_eq(dgp_sim_tune(sim, json, "sedan.json", 0, NULL, &err), DG_OK);
  double *ra = dg_test_record(ref.sim, 3000, DT), *rb = dg_test_record(sim, 3000, DT);
  dg_test_same_records(ra, rb, sim, 3000);
  free(ra);
  free(rb);

  int v = dg_sim_signal_find(sim, "body.speed");
  const dg_override more_drag[] = {{"body.cda", "3"}};
  ck_assert_msg(dgp_sim_tune(sim, json, "sedan.json", 1, more_drag, &err) == DG_OK, "%s", err.text);
  run_steps(ref.sim, 3000);
  run_steps(sim, 3000);
  ck_assert_msg(dg_sim_signal(sim, v) < dg_sim_signal(ref.sim, v) - 0.05, "%g vs %g",
                dg_sim_signal(sim, v), dg_sim_signal(ref.sim, v));

  dg_driver_free(drv);
  dg_scenario_free(scn);
  dg_sim_free(sim);
  dg_graph_free(g);
  dg_test_finish(&ref);
  free(json);
}
END_TEST

START_TEST(tune_refusals) {
  char *json = dg_test_read_source("graphs/sedan_rwd_automatic.json");
  dg_error err;
  dg_graph *g = dg_graph_load_string(NULL, json, "sedan.json", &err);
  ck_assert_msg(g != NULL, "%s", err.text);
  dg_sim *sim = dg_test_sim(g);
  double *idle = dgp_graph_param_number(g, "engine.idle_rpm", NULL, NULL);
  double before = *idle;
  static const struct {
    dg_override ov;
    int code;
    const char *text;
  } bad[] = {
      {{"final.ratio", "4.1"}, DG_ERR_USAGE, "cannot change while the simulation runs"},
      {{"engine.inertia", "0.3"}, DG_ERR_USAGE, "cannot change while the simulation runs"},
      {{"engine.nope", "1"}, DG_ERR_USAGE, "cannot change"},
      {{"engine.idle_rpm", "abc"}, DG_ERR_RANGE, "expected a finite number"},
      {{"engine.idle_rpm", "-5"}, DG_ERR_RANGE, "idle_rpm"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    int rc = dgp_sim_tune(sim, json, "sedan.json", 1, &bad[i].ov, &err);
    ck_assert_msg(rc == bad[i].code, "%s=%s: code %d (%s)", bad[i].ov.key, bad[i].ov.value, rc,
                  err.text);
    ck_assert_msg(strstr(err.text, bad[i].text) != NULL || strstr(err.path, bad[i].text) != NULL,
                  "%s: '%s' at %s", bad[i].ov.key, err.text, err.path);
    ck_assert(*idle == before);
  }
  dg_sim_free(sim);
  dg_graph_free(g);
  free(json);
}
END_TEST

/* ---- state as bytes ------------------------------------------------------ */

/* Written mid-run and read into a simulation of another load of the same
 * text (so its torque converter's tables are elsewhere: the keep mask),
 * the run goes on bit for bit. */
START_TEST(state_round_trip) {
  char *sedan = dg_test_read_source("graphs/sedan_rwd_automatic.json");
  char *json = replace(sedan, "\"type\": \"torque_converter\",",
                       "\"type\": \"torque_converter\", \"capacity_factor\": { \"speed_ratio\": "
                       "[0, 0.5, 0.9, 1], \"k\": [15, 15, 18, 35] },");
  free(sedan);
  dg_error err;
  dg_scenario *scn = dg_scenario_load_file(DG_SOURCE_ROOT "/graphs/scenarios/launch.json", &err);
  ck_assert_msg(scn != NULL, "%s", err.text);
  dg_test_drive a = {0};
  a.g = dg_graph_load_string(NULL, json, "sedan.json", &err);
  ck_assert_msg(a.g != NULL, "%s", err.text);
  a.sim = dg_test_sim(a.g);
  a.drv = dg_driver_new(scn, a.sim, &err);
  ck_assert_msg(a.drv != NULL, "%s", err.text);
  run_steps(a.sim, 2500);
  size_t size = dgp_sim_state_size(a.sim);
  unsigned char *buf = malloc(size);
  ck_assert_ptr_nonnull(buf);
  ck_assert_uint_eq(dgp_sim_state_write(a.sim, buf, size - 1), 0);
  ck_assert_uint_eq(dgp_sim_state_write(a.sim, buf, size), size);

  /* the keep mask: bytes two loads of the text disagree on */
  dg_graph *g1 = dg_graph_load_string(NULL, json, "sedan.json", &err);
  dg_graph *g2 = dg_graph_load_string(NULL, json, "sedan.json", &err);
  ck_assert_ptr_nonnull(g1);
  ck_assert_ptr_nonnull(g2);
  dg_sim *s1 = dg_test_sim(g1), *s2 = dg_test_sim(g2);
  size_t ds = dgp_sim_data_size(s1);
  unsigned char *d1 = malloc(ds + 1), *d2 = malloc(ds + 1), *keep = malloc(ds + 1);
  dgp_sim_data_copy(s1, d1);
  dgp_sim_data_copy(s2, d2);
  int kept = 0;
  for (size_t i = 0; i < ds; i++) {
    keep[i] = d1[i] != d2[i];
    kept += keep[i];
  }
  ck_assert_msg(kept > 0, "the converter's tables are addresses");
  dg_sim_free(s2);
  dg_graph_free(g2);

  /* another graph refuses; damaged bytes refuse */
  dg_test_drive other =
      dg_test_start("graphs/ev_single_speed.json", "graphs/scenarios/ev_launch_brake.json");
  ck_assert_int_eq(dgp_sim_state_read(other.sim, buf, size, NULL, NULL, &err), DG_ERR_USAGE);
  ck_assert_ptr_nonnull(strstr(err.text, "another graph"));
  dg_test_finish(&other);
  buf[size / 2] ^= 1;
  ck_assert_int_eq(dgp_sim_state_read(s1, buf, size, keep, NULL, &err), DG_ERR_USAGE);
  ck_assert_ptr_nonnull(strstr(err.text, "checksum"));
  buf[size / 2] ^= 1;
  ck_assert_int_eq(dgp_sim_state_read(s1, buf, size - 1, keep, NULL, &err), DG_ERR_USAGE);

  ck_assert_msg(dgp_sim_state_read(s1, buf, size, keep, NULL, &err) == DG_OK, "%s", err.text);
  /* the scenario's schedules go with the simulation, not its state */
  dg_sim *fresh = dg_test_sim(g1);
  dg_driver *drv = dg_driver_new(scn, fresh, &err);
  ck_assert_msg(drv != NULL, "%s", err.text);
  dg_sim_free(s1);
  ck_assert_msg(dgp_sim_state_read(fresh, buf, size, keep, NULL, &err) == DG_OK, "%s", err.text);
  ck_assert(dg_sim_time(fresh) == dg_sim_time(a.sim));
  double *ra = dg_test_record(a.sim, 3000, DT), *rb = dg_test_record(fresh, 3000, DT);
  dg_test_same_records(ra, rb, fresh, 3000);
  free(ra);
  free(rb);

  dg_driver_free(drv);
  dg_scenario_free(scn);
  dg_sim_free(fresh);
  dg_graph_free(g1);
  free(d1);
  free(d2);
  free(keep);
  free(buf);
  dg_driver_free(a.drv);
  dg_sim_free(a.sim);
  dg_graph_free(a.g);
  free(json);
}
END_TEST

/* ---- a retry's state (dgp_sim_state_save / _load) ------------------------- */

/* A run that, before each step, saves its state for a retry, takes a
 * detour (one long step from there, across shifts, lock-ups and slips:
 * often into another mode), loads the state back and takes the step:
 * every signal after every step bit for bit the same as a run without
 * detours. The detours that ended in another mode had their plan built
 * again (or taken from the mode cache) at the load, the others kept the plan in the arrays: both kinds
 * are counted, and a launch has both. */
static void retry_exact(const char *graph, const char *scenario, long steps, double detour,
                        int min_rebuilds) {
  dg_test_drive a = dg_test_start(graph, scenario), b = dg_test_start(graph, scenario);
  double *ra = dg_test_record(a.sim, steps, DT);
  int n = dg_sim_signal_count(b.sim);
  size_t size = dgp_sim_state_size(b.sim);
  unsigned char *buf = malloc(size);
  double *rb = malloc(sizeof *rb * (size_t)(n * steps + 1));
  ck_assert_ptr_nonnull(buf);
  ck_assert_ptr_nonnull(rb);
  int rebuilt = 0, kept = 0;
  for (long k = 0; k < steps; k++) {
    ck_assert_uint_eq(dgp_sim_state_save(b.sim, buf, size), size);
    uint64_t gen = b.sim->plan_gen;
    ck_assert_msg(dg_sim_step(b.sim, detour) == DG_OK, "detour at step %ld: %s", k,
                  dg_sim_last_error(b.sim)->text);
    uint64_t builds = b.sim->plan_builds;
    bool moved = b.sim->plan_gen != gen;
    ck_assert_int_eq(dgp_sim_state_load(b.sim, buf, size), DG_OK);
    ck_assert_uint_eq(b.sim->plan_gen, gen);
    if (moved) { /* built again, or taken from the mode cache (lib/solver/cache.c) */
      ck_assert_uint_le(b.sim->plan_builds, builds + 1);
      rebuilt++;
    } else {
      ck_assert_uint_eq(b.sim->plan_builds, builds);
      kept++;
    }
    ck_assert_msg(dg_sim_step(b.sim, DT) == DG_OK, "step %ld: %s", k,
                  dg_sim_last_error(b.sim)->text);
    for (int i = 0; i < n; i++)
      rb[k * n + i] = dg_sim_signal(b.sim, i);
  }
  dg_test_same_records(ra, rb, b.sim, steps);
  ck_assert_msg(rebuilt >= min_rebuilds && kept > 0, "%s: %d rebuilt, %d kept", graph, rebuilt,
                kept);
  free(ra);
  free(rb);
  free(buf);
  dg_test_finish(&a);
  dg_test_finish(&b);
}

START_TEST(retry_state_sedan) {
  retry_exact("graphs/sedan_rwd_automatic.json", "graphs/scenarios/launch.json", 2500, 0.3, 10);
}
END_TEST

START_TEST(retry_state_dct) {
  retry_exact("graphs/dct.json", "graphs/scenarios/dct_upshifts.json", 3000, 0.2, 5);
}
END_TEST

START_TEST(retry_state_clutches) {
  retry_exact("graphs/coupled_clutches.json", "graphs/scenarios/coupled_clutches.json", 1500, 0.1,
              3);
}
END_TEST

START_TEST(retry_state_ev) {
  retry_exact("graphs/ev_single_speed.json", "graphs/scenarios/ev_launch_brake.json", 30000, 1.0, 1);
}
END_TEST

/* A retry's state is for the simulation that saved it: the checksummed
 * reader and a keep mask refuse it. */
START_TEST(retry_state_refused_elsewhere) {
  dg_test_drive a = dg_test_start("graphs/sedan_rwd_automatic.json", "graphs/scenarios/launch.json");
  run_steps(a.sim, 100);
  size_t size = dgp_sim_state_size(a.sim);
  /* zeroed: a retry's state leaves the arrays of unused parts unwritten,
   * and the checksummed reader reads every byte before it refuses */
  unsigned char *buf = calloc(1, size);
  ck_assert_ptr_nonnull(buf);
  ck_assert_uint_eq(dgp_sim_state_save(a.sim, buf, size), size);
  dg_error err;
  ck_assert_int_eq(dgp_sim_state_read(a.sim, buf, size, NULL, NULL, &err), DG_ERR_USAGE);
  free(buf);
  dg_test_finish(&a);
}
END_TEST

/* A retry's state whose plan must be built again at the load (the mode
 * changed since the save) and whose blocks no longer build that mode (a
 * block whose kinematics depend on something outside its data, here a
 * test's switch): refused, naming why, and the simulation stops rather
 * than run on a plan not its own. */
static bool shifter_locked = true;

static void shifter_upstream(dg_block *self, dg_topo *topo) {
  if (shifter_locked)
    dg_topo_lock(topo, self, 0, 1);
}

START_TEST(retry_state_mode_not_rebuilt) {
  static const dg_port_def ports[] = {{.name = "in", .dir = DG_PORT_IN},
                                      {.name = "out", .dir = DG_PORT_OUT},
                                      {0}};
  static const dg_block_class shifter = {
      .abi = DG_BLOCK_ABI, .type = "shifter", .ports = ports, .state_upstream = shifter_upstream};
  dg_registry *reg = dg_test_registry();
  dg_error err;
  ck_assert_msg(dg_registry_add(reg, &shifter, &err) == DG_OK, "%s", err.text);
  shifter_locked = true;
  dg_graph *g = dg_test_graph_regf(
      reg, "{\"drivegraph\":1,\"blocks\":{\"src\":{\"type\":\"torque_source\",\"inertia\":1,"
           "\"torque\":2},\"s\":{\"type\":\"shifter\"},\"ld\":{\"type\":\"load\",\"inertia\":3}},"
           "\"connections\":[[\"src.out\",\"s.in\"],[\"s.out\",\"ld.in\"]]}");
  dg_sim *sim = dg_test_sim(g);
  run_steps(sim, 10);
  size_t size = dgp_sim_state_size(sim);
  unsigned char *buf = malloc(size);
  ck_assert_ptr_nonnull(buf);
  ck_assert_uint_eq(dgp_sim_state_save(sim, buf, size), size);
  /* the lock lets go by the switch: another mode, another plan */
  shifter_locked = false;
  ck_assert_int_eq(dgp_solver_change_topology(sim), DG_OK);
  ck_assert_int_eq(dgp_sim_state_load(sim, buf, size), DG_ERR_USAGE);
  ck_assert_str_eq(dg_sim_last_error(sim)->text,
                   "not a state of this simulation: its mode could not be built again");
  ck_assert_int_ne(dg_sim_step(sim, DT), DG_OK);
  /* with the switch back, the same bytes load and the run goes on */
  shifter_locked = true;
  ck_assert_int_eq(dgp_sim_state_load(sim, buf, size), DG_OK);
  run_steps(sim, 10);
  ck_assert_double_eq_tol(dg_test_signal(sim, "ld.omega"), 2.0 / 4.0 * 20 * DT, 1e-12);
  free(buf);
  dg_sim_free(sim);
  dg_graph_free(g);
  dg_registry_free(reg);
}
END_TEST

Suite *simstate_suite(void) {
  Suite *s = suite_create("simstate");
  TCase *tc = tcase_create("params");
  tcase_add_test(tc, param_number_finds_numbers);
  tcase_add_test(tc, tune_at_start_equals_load);
  tcase_add_test(tc, tune_wakes_idle_hooks);
  tcase_add_test(tc, tune_brake_away_while_held);
  tcase_add_test(tc, tune_mid_run);
  tcase_add_test(tc, tune_reaches_memos);
  tcase_add_test(tc, tune_refusals);
  suite_add_tcase(s, tc);
  tc = tcase_create("bytes");
  tcase_add_test(tc, state_round_trip);
  tcase_add_test(tc, retry_state_sedan);
  tcase_add_test(tc, retry_state_dct);
  tcase_add_test(tc, retry_state_clutches);
  tcase_add_test(tc, retry_state_ev);
  tcase_add_test(tc, retry_state_refused_elsewhere);
  tcase_add_test(tc, retry_state_mode_not_rebuilt);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return dg_test_run(simstate_suite()); }
