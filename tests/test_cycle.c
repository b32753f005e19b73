/* lib/run/cycle.c: the cycle CSV loader (every error with its line and
 * column), the shipped cycles, the trace's window and distance, the EPA
 * trace tolerance on hand-made traces, and runs over a cycle: the driver's
 * standstill hold, series-blended braking over the UDDS (friction = asked −
 * regenerated, the regeneration within the machine's and the battery's
 * limits; the cases by hand are in test_motor.c) and the
 * backward mode's road-load energies against an independent reference
 * (scripts/ref/cycle_road_load.py, scipy quadrature of the linear trace).
 *
 * Tolerances are given where they are used, each with its reason. */
#include "testutil.h"

#include <drivegraph/cycle.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MPH 0.44704

static dg_cycle *load(const char *text, dg_error *err) {
  return dg_cycle_load_string(text, strlen(text), "c.csv", err);
}

static dg_cycle *builtin(const char *name) {
  char rel[64], path[1024];
  snprintf(rel, sizeof rel, "data/cycles/%s.csv", name);
  dg_test_path(path, sizeof path, rel);
  dg_error err;
  dg_cycle *c = dg_cycle_load_file(path, &err);
  ck_assert_msg(c, "%s:%d:%d: %s", err.file, err.line, err.column, err.text);
  return c;
}

/* ---- loading ---- */

START_TEST(test_load_fastsim) {
  dg_error err;
  dg_cycle *c = load("cycSecs,cycMps,cycGrade,cycRoadType\n0,0,0,0\n1,2,0.01,0\n3,4,0,0\n", &err);
  ck_assert_msg(c, "%s", err.text);
  ck_assert_int_eq(dg_cycle_length(c), 3);
  ck_assert_double_eq(dg_cycle_time(c)[2], 3.0);
  ck_assert_double_eq(dg_cycle_speed(c)[1], 2.0);
  ck_assert_double_eq(dg_cycle_grade(c)[1], 0.01);
  /* ∫ v dt of the linear trace: 1 + 6 = 7 m (exact in binary) */
  ck_assert_double_eq(dg_cycle_distance(c), 7.0);
  ck_assert_double_eq(dg_cycle_duration(c), 3.0);
  ck_assert_double_eq(dg_cycle_speed_at(c, 2.0), 3.0);
  ck_assert_double_eq(dg_cycle_speed_at(c, 10.0), 4.0); /* ends held */
  dg_cycle_free(c);
}
END_TEST

/* CRLF, a byte order mark, blank lines, blanks around fields, the column
 * aliases in another order, km/h, no grade column. */
START_TEST(test_load_forms) {
  dg_error err;
  dg_cycle *c = load("\xef\xbb\xbf speed_kmh , time_s\r\n\r\n36,0\r\n 72 , 10 \r\n\n", &err);
  ck_assert_msg(c, "%s", err.text);
  ck_assert_int_eq(dg_cycle_length(c), 2);
  ck_assert_double_eq_tol(dg_cycle_speed(c)[0], 10.0, 1e-15);
  ck_assert_double_eq_tol(dg_cycle_speed(c)[1], 20.0, 1e-15);
  ck_assert_double_eq(dg_cycle_grade(c)[1], 0.0);
  char *json = dg_cycle_trace_json(c);
  ck_assert_str_eq(json, "{\"time\": [0, 10], \"speed_kmh\": [36, 72]}");
  free(json);
  dg_cycle_free(c);
}
END_TEST

/* Every bad file is refused with its line and column. */
static const struct {
  const char *text;
  int line, column;
  const char *message; /* a part of the text */
} bad[] = {
    {"cycSecs,cycMps\n0,0\n1,x\n", 3, 3, "speed: expected a finite number (got \"x\")"},
    {"cycSecs,cycMps\n0,0\n1,\n", 3, 3, "speed: expected a finite number (got \"\")"},
    {"cycSecs,cycMps\n0,0\n1,nan\n", 3, 3, "expected a finite number"},
    {"cycSecs,cycMps\n0,0\n0,1\n", 3, 1, "time: must be greater than the line before's 0 s"},
    {"cycSecs,cycMps\n1,0\n2,1\n", 2, 1, "the first point's time must be 0 s (got 1)"},
    {"cycSecs,cycMps\n0,0\n1,-1\n", 3, 3, "speed: must be >= 0"},
    {"cycSecs,cycMps,cycGrade\n0,0,0\n1,1,2\n", 3, 5, "grade: must be within -1 and 1"},
    {"cycSecs,cycMps\n0,0\n1\n", 3, 2, "expected 2 fields, as the header has (got 1)"},
    {"cycSecs,cycMps\n0,0\n1,2,3\n", 3, 4, "expected 2 fields, as the header has (got 3)"},
    {"time,speed\n0,0\n", 1, 1, "the header names no time column"},
    {"cycSecs,cycSecs,cycMps\n", 1, 9, "repeats the time column"},
    {"cycSecs,cycMps\n0,0\n", 2, 1, "at least two points (got 1)"},
    {"", 0, 1, "empty cycle file"},
    {"cycSecs,cycMps\n0,0\n1,\0012\n", 3, 3, "expected a finite number"},
};

START_TEST(test_load_errors) {
  dg_error err;
  dg_cycle *c = load(bad[_i].text, &err);
  ck_assert_msg(!c, "case %d loaded", _i);
  ck_assert_str_eq(err.file, "c.csv");
  ck_assert_msg(strstr(err.text, bad[_i].message), "case %d: %s", _i, err.text);
  if (bad[_i].line > 0)
    ck_assert_msg(err.line == bad[_i].line && err.column == bad[_i].column,
                  "case %d: %d:%d, want %d:%d (%s)", _i, err.line, err.column, bad[_i].line,
                  bad[_i].column, err.text);
  char msg[600];
  dg_error_format(&err, msg, sizeof msg);
  ck_assert_msg(strncmp(msg, "c.csv:", 6) == 0, "%s", msg);
}
END_TEST

START_TEST(test_load_nul_and_file) {
  dg_error err;
  static const char text[] = "cycSecs,cycMps\n0,0\n1,\0\n";
  ck_assert(!dg_cycle_load_string(text, sizeof text - 1, "n.csv", &err));
  ck_assert(strstr(err.text, "NUL byte"));
  ck_assert_int_eq(err.line, 3);
  ck_assert_int_eq(err.column, 3);
  ck_assert(!dg_cycle_load_file("/nonexistent/x.csv", &err));
  ck_assert_int_eq(err.code, DG_ERR_IO);
  ck_assert_str_eq(err.file, "/nonexistent/x.csv");
}
END_TEST

/* The shipped cycles: their durations and distances as FASTSim's README
 * gives them (to its 10 m), WLTC's CRLF included. */
START_TEST(test_builtin) {
  static const struct {
    const char *name;
    double duration, km;
  } want[] = {{"udds", 1369, 11.99}, {"hwfet", 765, 16.51}, {"us06", 600, 12.89},
              {"wltc3b", 1800, 23.27}};
  ck_assert_int_eq(dg_cycle_builtin_count(), 4);
  for (int i = 0; i < 4; i++) {
    ck_assert_str_eq(dg_cycle_builtin_name(i), want[i].name);
    ck_assert_int_eq(dg_cycle_builtin_find(want[i].name), i);
    dg_cycle *c = builtin(want[i].name);
    ck_assert_double_eq(dg_cycle_duration(c), want[i].duration);
    ck_assert_double_eq_tol(dg_cycle_distance(c) / 1000.0, want[i].km, 0.005);
    dg_cycle_free(c);
  }
  ck_assert_int_eq(dg_cycle_builtin_find("ftp"), -1);
  ck_assert_ptr_null(dg_cycle_builtin_name(4));
}
END_TEST

/* ---- the trace tolerance ---- */

/* The trace 0 → 10 m/s over 1 s, held 1 s, back to 0 over 1 s. */
static dg_cycle *tent(void) {
  dg_error err;
  dg_cycle *c = load("cycSecs,cycMps\n0,0\n1,10\n2,10\n3,0\n", &err);
  ck_assert(c);
  return c;
}

START_TEST(test_window) {
  dg_cycle *c = tent();
  double lo, hi;
  dg_cycle_window(c, 0.5, 2.5, &lo, &hi); /* the ends: 5 and 5; the points 10, 10 */
  ck_assert_double_eq(lo, 5.0);
  ck_assert_double_eq(hi, 10.0);
  dg_cycle_window(c, -1.0, 0.25, &lo, &hi); /* held 0 before, 2.5 at 0.25 */
  ck_assert_double_eq(lo, 0.0);
  ck_assert_double_eq(hi, 2.5);
  dg_cycle_window(c, 1.2, 1.8, &lo, &hi); /* inside the flat piece */
  ck_assert_double_eq(lo, 10.0);
  ck_assert_double_eq(hi, 10.0);
  dg_cycle_free(c);
}
END_TEST

/* At t = 1.5 s the window [0.5, 2.5] spans 5..10 m/s, so the band is
 * [5 − 2 mph, 10 + 2 mph] = [4.10592, 10.89408] m/s. */
START_TEST(test_check_band) {
  dg_cycle *c = tent();
  dg_trace_check chk;
  dg_trace_check_init(&chk);
  ck_assert_double_eq_tol(chk.speed_tol, 2.0 * MPH, 1e-15);
  ck_assert_double_eq(chk.time_tol, 1.0);
  dg_trace_check_sample(&chk, c, 1.5, 4.2, 0.01);    /* inside */
  dg_trace_check_sample(&chk, c, 1.5, 10.8, 0.01);   /* inside */
  ck_assert_int_eq(chk.violations, 0);
  ck_assert(isnan(chk.worst_time));
  dg_trace_check_sample(&chk, c, 1.5, 4.0, 0.01);    /* 0.10592 below */
  dg_trace_check_sample(&chk, c, 1.6, 11.0, 0.01);   /* window 4..10: 0.10592 above */
  dg_trace_check_sample(&chk, c, 1.7, 11.5, 0.02);   /* window 3..10: 0.60592 above */
  ck_assert_int_eq(chk.samples, 5);
  ck_assert_int_eq(chk.violations, 3);
  ck_assert_double_eq_tol(chk.violation_time, 0.04, 1e-15);
  ck_assert_double_eq_tol(chk.worst_excess, 11.5 - 10.0 - 2.0 * MPH, 1e-14);
  ck_assert_double_eq(chk.worst_time, 1.7);
  ck_assert_double_eq(chk.worst_speed, 11.5);
  ck_assert_double_eq_tol(chk.worst_lo, 3.0 - 2.0 * MPH, 1e-14); /* v(2.7) = 3 */
  ck_assert_double_eq_tol(chk.worst_hi, 10.0 + 2.0 * MPH, 1e-14);
  dg_cycle_free(c);
}
END_TEST

/* A car one second late stays within the band (the window reaches back a
 * second); two seconds late it leaves it, worst at t = 4 s: it still does
 * v(2) = 10 m/s where the trace has been 0 since t = 3 s (window [3, 5]),
 * 10 − 2 mph = 9.10592 m/s above the band. */
START_TEST(test_check_lag) {
  dg_cycle *c = tent();
  for (int lag = 1; lag <= 2; lag++) {
    dg_trace_check chk;
    dg_trace_check_init(&chk);
    for (int k = 0; k <= 6000; k++) {
      double t = 1e-3 * k;
      dg_trace_check_sample(&chk, c, t, dg_cycle_speed_at(c, t - lag), 1e-3);
    }
    ck_assert_int_eq(chk.samples, 6001);
    if (lag == 1) {
      ck_assert_int_eq(chk.violations, 0);
    } else {
      ck_assert(chk.violations > 0);
      ck_assert_double_eq_tol(chk.violation_time, 1e-3 * (double)chk.violations, 1e-12);
      ck_assert_double_eq_tol(chk.worst_excess, 10.0 - 2.0 * MPH, 1e-12);
      ck_assert_double_eq_tol(chk.worst_time, 4.0, 1e-12);
    }
  }
  dg_cycle_free(c);
}
END_TEST

/* ---- runs ---- */

typedef struct run_result {
  dg_cycle_report r;
  double friction_check; /* worst |asked − friction − regenerated| / asked at step ends */
  double regen_excess;   /* worst regeneration beyond the machine's or battery's limit (W) */
} run_result;

static dg_cycle_run *start(const char *graph, const char *trace_csv, dg_cycle **cycle,
                           bool backward, double dt) {
  dg_error err;
  *cycle = trace_csv[0] == '@' ? builtin(trace_csv + 1) : load(trace_csv, &err);
  ck_assert(*cycle);
  char *json = dg_test_read_source(graph);
  dg_cycle_options opt;
  dg_cycle_options_init(&opt);
  opt.graph_json = json;
  opt.graph_name = graph;
  opt.dt = dt;
  opt.backward = backward;
  dg_cycle_run *run = dg_cycle_run_new(&opt, *cycle, &err);
  ck_assert_msg(run, "%s: %s %s", graph, err.path, err.text);
  free(json);
  return run;
}

/* The sedan (torque converter at idle: it creeps when the brake is light)
 * stops from 30 km/h and is held: from 1 s after the trace stops, its
 * speed is exactly 0 and its position does not change; the driver holds
 * it on hold_brake with no throttle. */
START_TEST(test_standstill_hold) {
  dg_cycle *c;
  dg_cycle_run *run = start("graphs/driver_follow.json",
                            "cycSecs,cycMps\n0,0\n10,8.3333333\n20,0\n40,0\n", &c, false, 1e-3);
  dg_sim *sim = dg_cycle_run_sim(run);
  while (dg_sim_time(sim) < 21.0 - 1e-9)
    ck_assert_int_eq(dg_cycle_run_step(run), DG_OK);
  double x = dg_test_signal(sim, "body.x");
  ck_assert(x > 40.0);
  while (dg_cycle_run_steps(run) < dg_cycle_run_total_steps(run)) {
    ck_assert_int_eq(dg_cycle_run_step(run), DG_OK);
    ck_assert_double_eq(dg_test_signal(sim, "body.speed"), 0.0);
    ck_assert_double_eq(dg_test_signal(sim, "driver.throttle"), 0.0);
    ck_assert_double_eq(dg_test_signal(sim, "driver.holding"), 1.0);
    ck_assert_double_ge(dg_test_signal(sim, "driver.brake"), 0.6);
  }
  ck_assert_double_eq(dg_test_signal(sim, "body.x"), x);
  ck_assert(dg_test_signal(sim, "engine.rpm") > 700.0); /* idling against the converter */
  dg_cycle_report r;
  dg_cycle_run_report(run, &r);
  ck_assert_int_eq(r.trace.violations, 0);
  dg_cycle_run_free(run);
  dg_cycle_free(c);
}
END_TEST

/* The EV over the first 200 s of the UDDS, forward: at every step's end
 * the braking asked (the driver's brake_power, brake · brake_force · v) is
 * what the friction brakes get (the motor's friction_brake pedal times the
 * four brakes' force at full pedal, Σ brake_torque · share / R = 3000 /
 * 0.34 N, times v) plus the shaft power the machine regenerates; the graph
 * rounds brake_force to 8823.53 N (4e-8 of it, the tolerance's scale). The
 * machine's power is compared at its shaft: the reduction's mesh loss
 * brakes on top. The regeneration never passes the machine's envelope nor
 * the battery's charge limit. */
START_TEST(test_blend_ev) {
  dg_cycle *c;
  dg_cycle_run *run = start("graphs/ev_battery.json", "@udds", &c, false, 2e-3);
  dg_sim *sim = dg_cycle_run_sim(run);
  const double force = 3000.0 / 0.34;
  double worst = 0.0;
  long braking = 0, blended = 0;
  while (dg_sim_time(sim) < 200.0) {
    ck_assert_int_eq(dg_cycle_run_step(run), DG_OK);
    double asked = dg_test_signal(sim, "driver.brake_power");
    double regen = -dg_test_signal(sim, "motor.power");
    double v = dg_test_signal(sim, "body.speed");
    double friction = dg_test_signal(sim, "motor.friction_brake") * force * v;
    double avail = dg_test_signal(sim, "motor.regen_available");
    ck_assert(regen <= avail * (1 + 1e-9) + 1e-9);
    ck_assert(-dg_test_signal(sim, "motor.electric_power") <=
              dg_test_signal(sim, "battery.charge_limit") * (1 + 1e-12));
    if (asked > 100.0 && dg_test_signal(sim, "driver.throttle") == 0.0) {
      braking++;
      blended += friction > 0.01 * asked;
      worst = fmax(worst, fabs(asked - friction - regen) / asked);
    }
  }
  printf("cycle: EV, first 200 s of the UDDS: %ld braking steps (%ld with friction), worst "
         "|asked - friction - regenerated| / asked %.3g\n",
         braking, blended, worst);
  ck_assert(braking > 1000);
  ck_assert_double_le(worst, 1e-7);
  dg_cycle_run_free(run);
  dg_cycle_free(c);
}
END_TEST

/* Backward: the body on the UDDS and the HWFET exactly, so its road-load
 * energies are the trace's: drag ∫ ½ρ cda v³ dt, rolling crr m g ∫ v dt and
 * the kinetic energy gained where it speeds up, against the scipy
 * quadrature of scripts/ref/cycle_road_load.py. Tolerances: RK4 integrates
 * v³ of a linear speed exactly (Simpson's rule on a cubic), to round-off
 * over ~10⁵ steps (1e-9); the rolling resistance's direction is that of each
 * step's start (blocks/vehicle.c), so it starts one step late at each of
 * the ~20 launches: F_c · a · dt² / 2 ≈ 186 N · 1.5 m/s² · 1e-4 s² / 2 per
 * launch, 0.3 J of 2.2 MJ at dt = 0.01 s (1e-6). */
START_TEST(test_backward_road_load) {
  static const char *names[] = {"udds", "hwfet"};
  char *ref = dg_test_read_source("tests/data/ref/cycle_road_load.csv");
  char *line = strchr(strchr(ref, '\n') + 1, '\n') + 1;
  for (int k = 0; k < 2; k++) {
    double idx, dist, drag, rolling, accel, kinetic;
    ck_assert_int_eq(sscanf(line, "%lf,%lf,%lf,%lf,%lf,%lf", &idx, &dist, &drag, &rolling, &accel,
                            &kinetic),
                     6);
    line = strchr(line, '\n') + 1;
    char which[16];
    snprintf(which, sizeof which, "@%s", names[k]);
    dg_cycle *c;
    dg_cycle_run *run = start("graphs/ev_battery.json", which, &c, true, 0.01);
    ck_assert_int_eq(dg_cycle_run_all(run), DG_OK);
    dg_cycle_report r;
    dg_cycle_run_report(run, &r);
    printf("cycle: EV backward over %s at dt 0.01 s: drag %.6f J (ref %.6f), rolling %.6f J (ref "
           "%.6f), accel %.6f J (ref %.6f), distance %.6f m (ref %.6f); enforcement %.0f / %.0f "
           "J\n",
           names[k], r.drag_J, drag, r.rolling_J, rolling, r.accel_J, accel, r.distance, dist,
           r.enforcement_in_J, r.enforcement_out_J);
    ck_assert_double_eq_tol(r.drag_J, drag, 1e-9 * drag);
    ck_assert_double_eq_tol(r.rolling_J, rolling, 1e-6 * rolling);
    ck_assert_double_eq_tol(r.accel_J, accel, 1e-9 * accel);
    ck_assert_double_eq_tol(r.kinetic_J, kinetic, 1e-9 * accel);
    ck_assert_double_eq_tol(r.distance, dist, 1e-9 * dist);
    ck_assert_double_eq(r.grade_J, 0.0);
    ck_assert_int_eq(r.trace.violations, 0);
    /* the powertrain, not the prescription, drove the car: the
     * prescription's work is below 1 % of the road's */
    double road = r.drag_J + r.rolling_J;
    ck_assert_double_le(r.enforcement_in_J - r.enforcement_out_J, 0.01 * road);
    /* the ledger still closes, prescription included */
    ck_assert_double_le(fabs(r.ledger.balance_error), 1e-9 * r.ledger.energy_in);
    dg_cycle_run_free(run);
    dg_cycle_free(c);
  }
  free(ref);
}
END_TEST

/* Backward, iterated: each 1 s step of the UDDS taken again with the
 * effort that zeroes the prescription's work over it. The EV's battery
 * energy agrees with the plain backward run at 10 ms (itself within 0.1 %
 * of 1 ms: docs/energy.md) to 0.2 % — the motor's losses and the
 * regeneration over 1 s steps against 10 ms ones — the road load is the
 * trace's (drag exact, RK4 on a cubic), and what the prescription still
 * does per step stays below 0.1 % of the road's energy. */
START_TEST(test_backward_iterated) {
  dg_cycle *c;
  dg_cycle_run *run = start("graphs/ev_battery.json", "@udds", &c, true, 0.01);
  ck_assert_int_eq(dg_cycle_run_all(run), DG_OK);
  dg_cycle_report fine;
  dg_cycle_run_report(run, &fine);
  dg_cycle_run_free(run);
  char *json = dg_test_read_source("graphs/ev_battery.json");
  dg_cycle_options opt;
  dg_cycle_options_init(&opt);
  opt.graph_json = json;
  opt.graph_name = "ev_battery.json";
  opt.dt = 1.0;
  opt.backward = true;
  opt.iterate = true;
  dg_error err;
  run = dg_cycle_run_new(&opt, c, &err);
  ck_assert_msg(run, "%s", err.text);
  ck_assert_int_eq(dg_cycle_run_all(run), DG_OK);
  dg_cycle_report r;
  dg_cycle_run_report(run, &r);
  printf("cycle: EV backward over the UDDS, iterated at dt 1 s: battery %.0f J (%.0f at 10 ms), "
         "enforcement %.0f / %.0f J, drag %.6f J, %ld steps tried\n",
         r.battery_J, fine.battery_J, r.enforcement_in_J, r.enforcement_out_J, r.drag_J,
         r.steps_tried);
  ck_assert_int_eq(r.steps, 1369);
  /* every step tried once at least, at most 5 tries and the best taken again */
  ck_assert_int_ge(r.steps_tried, r.steps);
  ck_assert_int_le(r.steps_tried, 6 * r.steps);
  ck_assert_int_eq(fine.steps_tried, fine.steps); /* not iterated */
  ck_assert_double_eq_tol(r.battery_J, fine.battery_J, 2e-3 * fine.battery_J);
  ck_assert_double_eq_tol(r.drag_J, fine.drag_J, 1e-9 * fine.drag_J);
  double road = r.drag_J + r.rolling_J;
  ck_assert_double_le(r.enforcement_in_J - r.enforcement_out_J, 1e-3 * road);
  dg_cycle_run_free(run);
  dg_cycle_free(c);
  free(json);
}
END_TEST

/* A graph without a driver block is refused, naming the graph. */
START_TEST(test_no_driver) {
  dg_error err;
  dg_cycle *c = builtin("udds");
  char *json = dg_test_read_source("graphs/sedan_rwd_automatic.json");
  dg_cycle_options opt;
  dg_cycle_options_init(&opt);
  opt.graph_json = json;
  opt.graph_name = "sedan.json";
  ck_assert(!dg_cycle_run_new(&opt, c, &err));
  ck_assert_str_eq(err.file, "sedan.json");
  ck_assert(strstr(err.text, "no driver block"));
  free(json);
  dg_cycle_free(c);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("cycle");
  TCase *tc = tcase_create("load");
  tcase_add_test(tc, test_load_fastsim);
  tcase_add_test(tc, test_load_forms);
  tcase_add_loop_test(tc, test_load_errors, 0, (int)(sizeof bad / sizeof bad[0]));
  tcase_add_test(tc, test_load_nul_and_file);
  tcase_add_test(tc, test_builtin);
  suite_add_tcase(s, tc);
  tc = tcase_create("trace");
  tcase_add_test(tc, test_window);
  tcase_add_test(tc, test_check_band);
  tcase_add_test(tc, test_check_lag);
  suite_add_tcase(s, tc);
  tc = tcase_create("runs");
  tcase_set_timeout(tc, 600);
  tcase_add_test(tc, test_standstill_hold);
  tcase_add_test(tc, test_blend_ev);
  tcase_add_test(tc, test_backward_road_load);
  tcase_add_test(tc, test_backward_iterated);
  tcase_add_test(tc, test_no_driver);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return dg_test_run(suite()); }
