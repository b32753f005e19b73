/* import_chrono: Chrono::Vehicle engine and transmission templates.
 *
 * Each template converts to the expected blocks, asserted field by field
 * against the source numbers (map points, inverted ratios, shift points);
 * the HMMWV-style engine + torque converter + 3-speed automatic pulls away
 * from rest and shifts; the CVT follows Chrono's schedule; every
 * engine/transmission pair of every vehicle in tests/data/chrono/vehicles
 * imports and simulates a launch; the corpus's quirks give warnings; every
 * broken file in tests/data/chrono/invalid gives its expected
 * file:line:column message. */
#include "testutil.h"

#include <dirent.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Numbers copied from a file compare exactly (ck_assert_double_eq); those
 * computed from them (1/r, a sum of two interpolations) to a few roundings. */
#define TOL_EXACT 1e-12
#define RPM_PER_RAD_S 9.549296585513720 /* 30/pi */

static void data_path(char *buf, size_t size, const char *name) {
  char rel[512];
  snprintf(rel, sizeof rel, "tests/data/chrono/%s", name);
  dg_test_path(buf, size, rel);
}

typedef struct notes {
  char text[32][DG_ERROR_FILE_LEN + DG_ERROR_TEXT_LEN + 64];
  int n;
} notes;

static void collect(const dg_error *e, void *user) {
  notes *ns = user;
  if (ns->n < 32) {
    const char *base = strrchr(e->file, '/');
    snprintf(ns->text[ns->n++], sizeof ns->text[0], "%s:%d:%d: %s", base ? base + 1 : e->file,
             e->line, e->column, e->text);
  }
}

static bool has_note(const notes *ns, const char *want) {
  for (int i = 0; i < ns->n; i++)
    if (strstr(ns->text[i], want))
      return true;
  return false;
}

static char *import_text(const char *engine, const char *trans, const char *vehicle, notes *ns) {
  char e[1024], t[1024], v[1024];
  data_path(e, sizeof e, engine);
  data_path(t, sizeof t, trans);
  if (vehicle)
    dg_test_path(v, sizeof v, vehicle);
  dg_error err;
  char *text = dg_import_chrono_to_json(e, t, vehicle ? v : NULL, ns ? collect : NULL, ns, &err);
  ck_assert_msg(text != NULL, "%s + %s did not import: %s:%d:%d: %s", engine, trans, err.file,
                err.line, err.column, err.text);
  return text;
}

static json_t *import_doc(const char *engine, const char *trans, const char *vehicle,
                          notes *ns) {
  char *text = import_text(engine, trans, vehicle, ns);
  return dg_test_json_take(text);
}

static bool has_block(const json_t *doc, const char *id) {
  return json_object_get(json_object_get(doc, "blocks"), id) != NULL;
}

static int len(const json_t *arr) { return (int)json_array_size(arr); }
static double at(const json_t *arr, int i) {
  return json_number_value(json_array_get(arr, (size_t)i));
}

static void assert_numbers(const json_t *arr, const double *want, int n, double tol) {
  ck_assert_int_eq(len(arr), n);
  for (int i = 0; i < n; i++)
    if (tol == 0.0)
      ck_assert_double_eq(at(arr, i), want[i]);
    else
      ck_assert_double_eq_tol(at(arr, i), want[i], tol);
}

/* Linear interpolation clamped at the ends, independent of the library's. */
static double lerp(const double (*map)[2], int n, double x) {
  if (x <= map[0][0])
    return map[0][1];
  for (int i = 1; i < n; i++)
    if (x <= map[i][0])
      return map[i - 1][1] +
             (x - map[i - 1][0]) / (map[i][0] - map[i - 1][0]) * (map[i][1] - map[i - 1][1]);
  return map[n - 1][1];
}

static dg_graph *load_pair(const char *engine, const char *trans) {
  char e[1024], t[1024];
  data_path(e, sizeof e, engine);
  data_path(t, sizeof t, trans);
  dg_error err;
  dg_graph *g = dg_graph_import_chrono(NULL, e, t, NULL, &err);
  ck_assert_msg(g != NULL, "%s", err.text);
  return g;
}

/* ---------------------------------------------------------------------- */
/* The HMMWV shafts powertrain                                            */

static const double hmmwv_torque[][2] = {
    {-100, 300}, {800, 382},  {900, 490},  {1000, 579}, {1100, 650}, {1200, 706}, {1300, 746},
    {1400, 774}, {1500, 789}, {1600, 793}, {1700, 788}, {1800, 774}, {1900, 754}, {2000, 728},
    {2100, 697}, {2200, 664}, {2300, 628}, {2400, 593}, {2500, 558}, {2700, -400}};
static const double hmmwv_losses[][2] = {{-50, 30},    {0, 0},      {50, -30},
                                         {1000, -50}, {2000, -70}, {3000, -90}};
#define N_TORQUE 20
#define N_LOSSES 6

/* EngineShafts: full_load = Torque Map + Losses Map on the union of their
 * breakpoints from 0 rpm, closed_throttle = Losses Map from 0 rpm. */
START_TEST(test_engine_shafts) {
  json_t *doc = import_doc("hmmwv_engine_shafts.json", "hmmwv_automatic_transmission_shafts.json",
                           NULL, NULL);
  json_t *e = dg_test_json_block(doc, "engine");
  ck_assert_str_eq(dg_test_json_str(e, "type"), "engine");
  ck_assert_double_eq(dg_test_json_num(e, "inertia"), 1.1);
  ck_assert_double_eq(dg_test_json_num(e, "idle_rpm"), 800);
  json_t *full = json_object_get(e, "full_load"), *closed = json_object_get(e, "closed_throttle");
  json_t *fx = json_object_get(full, "rpm"), *fy = json_object_get(full, "torque");
  /* union: 0, 50, 800 .. 2500 (every 100 from 800), 2700, 3000 */
  ck_assert_int_eq(len(fx), 1 + 1 + 18 + 1 + 1);
  for (int i = 0; i < len(fx); i++) {
    double x = at(fx, i);
    ck_assert(i == 0 || x > at(fx, i - 1));
    double want = lerp(hmmwv_torque, N_TORQUE, x) + lerp(hmmwv_losses, N_LOSSES, x);
    ck_assert_double_eq_tol(at(fy, i), want, TOL_EXACT * 1000);
  }
  ck_assert_double_eq(at(fx, 0), 0.0);
  ck_assert_double_eq_tol(at(fy, 0), 300 + 82.0 * 100 / 900, TOL_EXACT * 1000);
  ck_assert_double_eq_tol(at(fy, len(fy) - 1), -400 - 90, TOL_EXACT * 1000);
  static const double cx[] = {0, 50, 1000, 2000, 3000}, cy[] = {0, -30, -50, -70, -90};
  assert_numbers(json_object_get(closed, "rpm"), cx, 5, 0.0);
  assert_numbers(json_object_get(closed, "torque"), cy, 5, 0.0);
  /* redline: the full load falls through zero between 2500 rpm
   * (558 − 80 = 478) and 2700 rpm (−400 − 84 = −484) */
  ck_assert_double_eq_tol(dg_test_json_num(e, "redline_rpm"), 2500 + 200 * 478.0 / (478 + 484),
                          TOL_EXACT * 1e4);
  json_decref(doc);
}
END_TEST

/* AutomaticTransmissionShafts: converter maps as given, ratios inverted. */
START_TEST(test_transmission_shafts) {
  json_t *doc = import_doc("hmmwv_engine_shafts.json", "hmmwv_automatic_transmission_shafts.json",
                           NULL, NULL);
  json_t *tc = dg_test_json_block(doc, "converter");
  ck_assert_str_eq(dg_test_json_str(tc, "type"), "torque_converter");
  static const double sr[] = {0.00, 0.25, 0.50, 0.75, 0.90, 1.00};
  static const double k[] = {15, 15, 15, 16, 18, 35};
  static const double sr2[] = {0.00, 0.25, 0.50, 0.75, 1.00}, tr[] = {2.00, 1.80, 1.50, 1.15, 1.00};
  json_t *cf = json_object_get(tc, "capacity_factor"), *trm = json_object_get(tc, "torque_ratio");
  assert_numbers(json_object_get(cf, "speed_ratio"), sr, 6, 0.0);
  assert_numbers(json_object_get(cf, "k"), k, 6, 0.0);
  assert_numbers(json_object_get(trm, "speed_ratio"), sr2, 5, 0.0);
  assert_numbers(json_object_get(trm, "ratio"), tr, 5, 0.0);
  ck_assert_double_eq(dg_test_json_num(tc, "pump_inertia"), 0.5);    /* Motorshaft Inertia */
  ck_assert_double_eq(dg_test_json_num(tc, "turbine_inertia"), 0.3); /* Input Shaft Inertia */
  json_t *gb = dg_test_json_block(doc, "gearbox");
  static const double ratios[] = {1 / 0.2, 1 / 0.4, 1 / 0.8};
  assert_numbers(json_object_get(gb, "ratios"), ratios, 3, TOL_EXACT);
  ck_assert_double_eq_tol(dg_test_json_num(gb, "reverse"), 1 / 0.1, TOL_EXACT);
  ck_assert_double_eq(dg_test_json_num(gb, "inertia"), 0.0);
  ck_assert_double_eq(dg_test_json_num(gb, "shift_time"), 0.25); /* latency 1 s, capped */
  json_t *sh = json_object_get(gb, "shift");
  ck_assert_str_eq(dg_test_json_str(sh, "mode"), "auto_rpm");
  ck_assert_double_eq(dg_test_json_num(sh, "upshift_rpm"), 2500);
  ck_assert_double_eq(dg_test_json_num(sh, "downshift_rpm"), 1200);
  json_t *fin = dg_test_json_block(doc, "final");
  ck_assert_double_eq(dg_test_json_num(fin, "inertia"), 0.5); /* Driveshaft Inertia */
  ck_assert_double_eq(dg_test_json_num(fin, "ratio"), 4.1);   /* the default sedan's */
  ck_assert(dg_test_json_connected(doc, "engine.out", "converter.in"));
  ck_assert(dg_test_json_connected(doc, "converter.out", "gearbox.in"));
  ck_assert(dg_test_json_connected(doc, "gearbox.out", "final.in"));
  ck_assert(!has_block(doc, "clutch"));
  json_decref(doc);
}
END_TEST

/* The HMMWV engine + torque converter + 3-speed automatic pulls away from
 * rest (the converter slips at stall, the engine above idle) and shifts up
 * through its gears. */
START_TEST(test_hmmwv_launch_and_shifts) {
  dg_graph *g =
      load_pair("hmmwv_engine_shafts.json", "hmmwv_automatic_transmission_shafts.json");
  dg_sim *sim = dg_test_sim(g);
  dg_test_step(sim, 500, 1e-3);
  double idle = dg_test_signal(sim, "engine.rpm");
  ck_assert_double_eq_tol(idle, 800, 20);
  dg_sim_set_input(sim, DG_INPUT_THROTTLE, 1.0);
  int gear = dg_sim_signal_find(sim, "gearbox.gear"), v = dg_sim_signal_find(sim, "body.speed");
  int rpm = dg_sim_signal_find(sim, "engine.rpm");
  double t_moving = -1, t_second = -1, t_third = -1, min_rpm = 1e9;
  while (dg_sim_time(sim) < 40.0) {
    dg_test_step(sim, 1, 1e-3);
    min_rpm = fmin(min_rpm, dg_sim_signal(sim, rpm));
    if (t_moving < 0 && dg_sim_signal(sim, v) > 1.0)
      t_moving = dg_sim_time(sim);
    if (t_second < 0 && dg_sim_signal(sim, gear) >= 2)
      t_second = dg_sim_time(sim);
    if (t_third < 0 && dg_sim_signal(sim, gear) >= 3)
      t_third = dg_sim_time(sim);
  }
  fprintf(stderr, "HMMWV shafts: 1 m/s at %.2f s, gear 2 at %.2f s, gear 3 at %.2f s, %.1f m/s "
                  "at 40 s\n",
          t_moving, t_second, t_third, dg_sim_signal(sim, v));
  ck_assert(t_moving > 0.5 && t_moving < 3.0);
  ck_assert(t_second > t_moving);
  ck_assert(t_third > t_second);
  ck_assert(min_rpm > 700);
  ck_assert(dg_sim_signal(sim, v) > 15.0);
  dg_energy en;
  dg_sim_energy(sim, &en);
  /* the converter's work crosses reverse-flow and lock-free switches that
   * are not located in time: a few 1e-4 of the work in */
  ck_assert(fabs(en.balance_error) < 1e-3 * en.work_in);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* Simple-map templates                                                   */

START_TEST(test_simple_map) {
  json_t *doc = import_doc("uaz_engine_simple_map.json",
                           "uaz_automatic_transmission_simple_map.json", NULL, NULL);
  json_t *e = dg_test_json_block(doc, "engine");
  ck_assert_double_eq(dg_test_json_num(e, "redline_rpm"), 4000);
  ck_assert_double_eq(dg_test_json_num(e, "idle_rpm"), 800);
  ck_assert_double_eq(dg_test_json_num(e, "inertia"), 0.25); /* peak 208 N·m: the sedan's 0.25 */
  json_t *fx = json_object_get(json_object_get(e, "full_load"), "rpm");
  json_t *fy = json_object_get(json_object_get(e, "full_load"), "torque");
  /* [-10, 104.66] and [736.5, 174.4] give the value at 0 rpm */
  ck_assert_int_eq(len(fx), 18);
  ck_assert_double_eq(at(fx, 0), 0.0);
  ck_assert_double_eq_tol(at(fy, 0), 104.66 + 10 / 746.5 * (174.4 - 104.66), TOL_EXACT * 100);
  ck_assert_double_eq(at(fx, 1), 736.5);
  ck_assert_double_eq(at(fy, 1), 174.4);
  ck_assert_double_eq(at(fx, 17), 4200.0);
  ck_assert_double_eq(at(fy, 17), -200.0);
  json_t *cy = json_object_get(json_object_get(e, "closed_throttle"), "torque");
  ck_assert_int_eq(len(cy), 10);
  ck_assert_double_eq_tol(at(cy, 0), -10 / 746.5 * 10, TOL_EXACT);
  ck_assert_double_eq(at(cy, 9), -100.0);
  json_t *cl = dg_test_json_block(doc, "clutch");
  ck_assert_str_eq(dg_test_json_str(cl, "mode"), "auto");
  ck_assert_double_eq(dg_test_json_num(cl, "idle_rpm"), 800);
  json_t *gb = dg_test_json_block(doc, "gearbox");
  static const double r[] = {0.125, 0.242, 0.379, 0.633, 1.0};
  json_t *ratios = json_object_get(gb, "ratios");
  ck_assert_int_eq(len(ratios), 5);
  for (int i = 0; i < 5; i++)
    ck_assert_double_eq_tol(at(ratios, i), 1 / r[i], TOL_EXACT * 10);
  ck_assert_double_eq_tol(dg_test_json_num(gb, "reverse"), 1 / 0.191, TOL_EXACT * 10);
  ck_assert_double_eq(dg_test_json_num(gb, "shift_time"), 0.0);
  json_t *sh = json_object_get(gb, "shift");
  ck_assert_str_eq(dg_test_json_str(sh, "mode"), "shift_map");
  static const double up[] = {3000, 3700, 3700, 3700, 4000}, down[] = {1000, 1200, 1200, 1200,
                                                                       1200};
  assert_numbers(json_object_get(sh, "upshift_map"), up, 5, 0.0);
  assert_numbers(json_object_get(sh, "downshift_map"), down, 5, 0.0);
  ck_assert(dg_test_json_connected(doc, "engine.out", "clutch.in"));
  ck_assert(dg_test_json_connected(doc, "clutch.out", "gearbox.in"));
  json_decref(doc);
}
END_TEST

/* EngineSimple: a motor (torque × throttle, power limited), directly on the
 * gearbox: it has no idle to protect. */
START_TEST(test_engine_simple) {
  json_t *doc = import_doc("hmmwv_engine_simple.json", "uaz_automatic_transmission_simple_map.json",
                           NULL, NULL);
  json_t *m = dg_test_json_block(doc, "engine");
  ck_assert_str_eq(dg_test_json_str(m, "type"), "motor");
  ck_assert_double_eq(dg_test_json_num(m, "max_torque"), 330);
  ck_assert_double_eq(dg_test_json_num(m, "max_power"), 110000);
  ck_assert_double_eq_tol(dg_test_json_num(m, "max_rpm"), 10000 * RPM_PER_RAD_S, TOL_EXACT * 1e5);
  ck_assert(json_is_false(json_object_get(m, "reverse")));
  ck_assert(!has_block(doc, "clutch"));
  ck_assert(dg_test_json_connected(doc, "engine.out", "gearbox.in"));
  json_decref(doc);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* CVT and manual                                                         */

/* Chrono's schedule: out/in ratio from 0.1708 at 23.8 rad/s to 1.5361 at
 * 238 rad/s, linear in the driveshaft speed; drivegraph's table is the
 * in/out ratio 1/r on 41 points spaced evenly in log r: exact at the
 * points, within 0.1 % between them (linear interpolation of 1/r over a
 * step of 5.6 % in r errs by about (0.056)²/4). */
START_TEST(test_cvt_schedule) {
  json_t *doc = import_doc("vehicles/hmmwv/powertrain/HMMWV_EngineSimpleMap.json",
                           "vehicles/hmmwv/powertrain/HMMWV_AutomaticTransmissionSimpleCVT.json",
                           NULL, NULL);
  json_t *cvt = dg_test_json_block(doc, "cvt");
  ck_assert_str_eq(dg_test_json_str(cvt, "type"), "cvt");
  ck_assert_double_eq(dg_test_json_num(cvt, "efficiency"), 0.8);
  json_t *w = json_object_get(json_object_get(cvt, "ratio"), "omega_out");
  json_t *r = json_object_get(json_object_get(cvt, "ratio"), "ratio");
  ck_assert_int_eq(len(w), 41);
  ck_assert_double_eq_tol(at(w, 0), 23.8, TOL_EXACT * 100);
  ck_assert_double_eq(at(w, 40), 238.0);
  ck_assert_double_eq_tol(at(r, 0), 1 / 0.1708, TOL_EXACT * 10);
  ck_assert_double_eq_tol(at(r, 40), 1 / 1.5361, TOL_EXACT * 10);
  double worst = 0;
  for (int i = 0; i < 40; i++) {
    for (int k = 0; k <= 4; k++) {
      double x = at(w, i) + k / 4.0 * (at(w, i + 1) - at(w, i));
      double chrono = 0.1708 + (x - 23.8) / (238 - 23.8) * (1.5361 - 0.1708);
      double table = at(r, i) + k / 4.0 * (at(r, i + 1) - at(r, i));
      worst = fmax(worst, fabs(table * chrono - 1));
    }
  }
  ck_assert_msg(worst < 1e-3, "the table strays %g from 1/r", worst);
  /* the launch clutch sits after the CVT, at the engine's speeds / 5.855 */
  json_t *cl = dg_test_json_block(doc, "clutch");
  ck_assert_double_eq_tol(dg_test_json_num(cl, "idle_rpm"), 800 * 0.1708, TOL_EXACT * 100);
  ck_assert(dg_test_json_connected(doc, "engine.out", "cvt.in"));
  ck_assert(dg_test_json_connected(doc, "cvt.out", "clutch.in"));
  ck_assert(dg_test_json_connected(doc, "clutch.out", "final.in"));
  json_decref(doc);
}
END_TEST

/* A CVT launch: the ratio starts at the schedule's low-speed end and falls
 * as the car gathers speed, tracking the schedule; energy is conserved by
 * the varying ratio (the solver's −I·Ġ·q term). */
START_TEST(test_cvt_launch) {
  dg_graph *g = load_pair("vehicles/hmmwv/powertrain/HMMWV_EngineSimpleMap.json",
                          "vehicles/hmmwv/powertrain/HMMWV_AutomaticTransmissionSimpleCVT.json");
  dg_sim *sim = dg_test_sim(g);
  ck_assert_double_eq_tol(dg_test_signal(sim, "cvt.ratio"), 1 / 0.1708, TOL_EXACT * 10);
  dg_test_step(sim, 500, 1e-3);
  dg_sim_set_input(sim, DG_INPUT_THROTTLE, 1.0);
  double prev = dg_test_signal(sim, "cvt.ratio");
  int falls = 0;
  for (int i = 0; i < 15; i++) {
    dg_test_step(sim, 1000, 1e-3);
    double r = dg_test_signal(sim, "cvt.ratio");
    falls += r < prev - 1e-9;
    prev = r;
  }
  fprintf(stderr, "CVT: ratio %.3f (target %.3f) at %.1f m/s after 15 s\n", prev,
          dg_test_signal(sim, "cvt.target"), dg_test_signal(sim, "body.speed"));
  ck_assert_int_ge(falls, 3);
  ck_assert(prev < 1.0 / 0.1708 / 2);
  ck_assert(dg_test_signal(sim, "body.speed") > 20.0);
  /* the ratio lags its target by about τ·ṙ: small once the speed settles */
  ck_assert_double_eq_tol(prev, dg_test_signal(sim, "cvt.target"), 0.05 * prev);
  dg_energy en;
  dg_sim_energy(sim, &en);
  ck_assert_msg(fabs(en.balance_error) < 1e-8 * en.work_in, "balance error %g J of %g J",
                en.balance_error, en.work_in);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

START_TEST(test_manual) {
  json_t *doc = import_doc("vehicles/sedan/powertrain/Sedan_EngineShafts.json",
                           "vehicles/sedan/powertrain/Sedan_ManualTransmissionShafts.json", NULL,
                           NULL);
  ck_assert_double_eq(dg_test_json_num(dg_test_json_block(doc, "engine"), "inertia"), 0.075);
  ck_assert_double_eq(dg_test_json_num(dg_test_json_block(doc, "motorshaft"), "inertia"), 0.05);
  json_t *cl = dg_test_json_block(doc, "clutch");
  ck_assert_double_eq(dg_test_json_num(cl, "max_torque"), 500);
  ck_assert_double_eq(dg_test_json_num(cl, "inertia"), 0.05);
  ck_assert_str_eq(dg_test_json_str(cl, "mode"), "auto");
  json_t *gb = dg_test_json_block(doc, "gearbox");
  static const double r[] = {0.265, 0.489, 0.784, 1.063, 1.276, 1.499};
  for (int i = 0; i < 6; i++)
    ck_assert_double_eq_tol(at(json_object_get(gb, "ratios"), i), 1 / r[i], TOL_EXACT * 10);
  ck_assert_double_eq_tol(dg_test_json_num(gb, "reverse"), 1 / 0.333, TOL_EXACT * 10);
  ck_assert_str_eq(dg_test_json_str(json_object_get(gb, "shift"), "mode"), "manual");
  ck_assert_double_eq(dg_test_json_num(dg_test_json_block(doc, "final"), "inertia"), 0.05);
  ck_assert(dg_test_json_connected(doc, "engine.out", "motorshaft.in"));
  ck_assert(dg_test_json_connected(doc, "motorshaft.out", "clutch.in"));
  json_decref(doc);

  /* driven in first: it moves; with the pedal pressed it does not */
  dg_graph *g = load_pair("vehicles/sedan/powertrain/Sedan_EngineShafts.json",
                          "vehicles/sedan/powertrain/Sedan_ManualTransmissionShafts.json");
  for (int pedal = 0; pedal <= 1; pedal++) {
    dg_sim *sim = dg_test_sim(g);
    dg_sim_set_input(sim, DG_INPUT_GEAR, 1);
    dg_sim_set_input(sim, DG_INPUT_CLUTCH, pedal);
    dg_sim_set_input(sim, DG_INPUT_THROTTLE, 1.0);
    dg_test_step(sim, 3000, 1e-3);
    double v = dg_test_signal(sim, "body.speed");
    if (pedal)
      ck_assert_double_eq(v, 0.0);
    else
      ck_assert(v > 3.0);
    dg_sim_free(sim);
  }
  dg_graph_free(g);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* Options, order, corpus quirks                                          */

START_TEST(test_vehicle_config) {
  json_t *doc = import_doc("hmmwv_engine_shafts.json", "hmmwv_automatic_transmission_shafts.json",
                           "tests/data/yaml/vehicle_awd_lsd.yaml", NULL);
  json_t *fin = dg_test_json_block(doc, "final");
  ck_assert_double_eq(dg_test_json_num(fin, "ratio"), 3.9); /* powertrain.gearbox.final_drive */
  ck_assert_double_eq(dg_test_json_num(dg_test_json_block(doc, "body"), "mass"), 1650);
  ck_assert_double_eq(dg_test_json_num(dg_test_json_block(doc, "centre"), "split"), 0.4);
  ck_assert(dg_test_json_connected(doc, "gearbox.out", "final.in"));
  json_t *eng = dg_test_json_block(doc, "engine");
  ck_assert_str_eq(dg_test_json_str(eng, "type"), "engine"); /* not the config's */
  json_decref(doc);
}
END_TEST

/* Files given the other way round are taken the right way round. */
START_TEST(test_swapped_files) {
  notes ns = {0};
  char *a = import_text("hmmwv_engine_shafts.json", "hmmwv_automatic_transmission_shafts.json",
                        NULL, NULL);
  char *b = import_text("hmmwv_automatic_transmission_shafts.json", "hmmwv_engine_shafts.json",
                        NULL, &ns);
  ck_assert_str_eq(a, b);
  ck_assert(has_note(&ns, "taken the other way round"));
  free(a);
  free(b);
}
END_TEST

START_TEST(test_corpus_quirks) {
  notes ns = {0};
  free(import_text("vehicles/M113/powertrain/M113_EngineSimpleMap.json",
                   "vehicles/M113/powertrain/M113_AutomaticTransmissionShafts.json", NULL, &ns));
  for (int i = 0; i < ns.n; i++)
    fprintf(stderr, "  %s\n", ns.text[i]);
  ck_assert(has_note(&ns, "M113_EngineSimpleMap.json:29:3: warning: text after the end of the "
                          "JSON document ignored"));
  ck_assert(has_note(&ns, "M113_AutomaticTransmissionShafts.json:34:22: warning: Gear "
                          "Box.Downshift RPM: downshift at 1000 rpm in gear 2"));
  ns.n = 0;
  json_t *doc = import_doc("vehicles/Marder/powertrain/Marder_EngineSimpleMap.json",
                           "vehicles/Marder/powertrain/Marder_AutomaticTransmissionSimpleMap.json",
                           NULL, &ns);
  ck_assert(has_note(&ns, "read as rad/s and converted to rpm"));
  json_t *fx =
      json_object_get(json_object_get(dg_test_json_block(doc, "engine"), "full_load"), "rpm");
  ck_assert_double_eq_tol(at(fx, 1), 73.5133 * RPM_PER_RAD_S, TOL_EXACT * 1e4);
  json_decref(doc);
  ns.n = 0;
  doc = import_doc("vehicles/duro/powertrain/duro_engine_simple_map.json",
                   "vehicles/duro/powertrain/duro_automatic_transmission_simple_map.json", NULL,
                   &ns);
  ck_assert(has_note(&ns, "gear 1 (0.45) is out of order"));
  json_t *ratios = json_object_get(dg_test_json_block(doc, "gearbox"), "ratios");
  ck_assert_int_eq(len(ratios), 4);
  ck_assert_double_eq_tol(at(ratios, 0), 1 / 0.26, TOL_EXACT * 10);
  json_decref(doc);
  /* the MAN's upshifts at 2200 rpm, where its engine has no torque left */
  ns.n = 0;
  doc = import_doc("vehicles/MAN_Kat1/powertrain/MAN_7t_EngineSimpleMap.json",
                   "vehicles/MAN_Kat1/powertrain/MAN_7t_AutomaticTransmissionSimpleMap.json",
                   NULL, &ns);
  ck_assert(has_note(&ns, "upshift from gear 1 at 2200 rpm: the engine does not get there"));
  json_t *up =
      json_object_get(json_object_get(dg_test_json_block(doc, "gearbox"), "shift"), "upshift_map");
  ck_assert(at(up, 0) < 2189);
  json_decref(doc);
}
END_TEST

/* Every engine/transmission pair of every vehicle imports, loads and
 * simulates a launch: 8 s at full throttle in first (the gear input drives
 * the manual boxes; the automatic ones shift themselves). */
static bool template_is(const char *path, const char *what) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return false;
  char buf[4096];
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = '\0';
  return strstr(buf, what) != NULL;
}

static int corpus_dir(const char *dir, int *pairs, int *vehicles) {
  DIR *d = opendir(dir);
  ck_assert_msg(d != NULL, "cannot open %s", dir);
  char engines[8][1024], trans[8][1024];
  int ne = 0, nt = 0, found = 0;
  struct dirent *ent;
  while ((ent = readdir(d))) {
    if (ent->d_name[0] == '.')
      continue;
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, ent->d_name);
    size_t l = strlen(ent->d_name);
    if (l > 5 && strcmp(ent->d_name + l - 5, ".json") == 0) {
      if (template_is(path, "\"Engine\"") && ne < 8)
        snprintf(engines[ne++], sizeof engines[0], "%s", path);
      else if (template_is(path, "\"Transmission\"") && nt < 8)
        snprintf(trans[nt++], sizeof trans[0], "%s", path);
    } else if (!strchr(ent->d_name, '.')) {
      found += corpus_dir(path, pairs, vehicles);
    }
  }
  closedir(d);
  for (int i = 0; i < ne; i++)
    for (int j = 0; j < nt; j++) {
      dg_error err;
      dg_graph *g = dg_graph_import_chrono(NULL, engines[i], trans[j], NULL, &err);
      ck_assert_msg(g != NULL, "%s + %s: %s:%d:%d: %s", engines[i], trans[j], err.file, err.line,
                    err.column, err.text);
      dg_sim *sim = dg_test_sim(g);
      dg_sim_set_input(sim, DG_INPUT_GEAR, 1);
      dg_test_step(sim, 500, 1e-3);
      dg_sim_set_input(sim, DG_INPUT_THROTTLE, 1.0);
      for (int k = 0; k < 8000; k++) {
        int rc = dg_sim_step(sim, 1e-3);
        ck_assert_msg(rc == DG_OK, "%s + %s: %s", engines[i], trans[j],
                      dg_sim_last_error(sim)->text);
      }
      double v = dg_test_signal(sim, "body.speed");
      dg_energy en;
      dg_sim_energy(sim, &en);
      fprintf(stderr, "  %-40s %-44s %5.1f m/s  balance %.1e\n", strrchr(engines[i], '/') + 1,
              strrchr(trans[j], '/') + 1, v, en.balance_error / en.work_in);
      /* the slowest (the Gator's single 0.07 gear behind the sedan's final
       * drive) reaches 2 m/s */
      ck_assert_msg(v > 1.5, "%s + %s: %g m/s after 8 s", engines[i], trans[j], v);
      /* converter graphs close to a few 1e-3 (see the HMMWV test), the
       * others to round-off */
      ck_assert_msg(fabs(en.balance_error) < 1e-2 * en.work_in, "%s + %s: balance %g of %g J",
                    engines[i], trans[j], en.balance_error, en.work_in);
      dg_sim_free(sim);
      dg_graph_free(g);
      (*pairs)++;
      found++;
    }
  if (ne > 0 && nt > 0)
    (*vehicles)++;
  return found;
}

START_TEST(test_corpus) {
  char dir[1024];
  data_path(dir, sizeof dir, "vehicles");
  int pairs = 0, vehicles = 0;
  corpus_dir(dir, &pairs, &vehicles);
  fprintf(stderr, "corpus: %d pairs from %d directories\n", pairs, vehicles);
  ck_assert_int_ge(vehicles, 20);
  ck_assert_int_ge(pairs, 50);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* Errors: tests/data/chrono/invalid/<case>.json and <case>.expected      */

static const char *const invalid_cases[] = {
    "engine_missing_key",     "engine_wrong_type",       "engine_non_monotonic_map",
    "engine_unknown_template", "engine_syntax_error",    "engine_unterminated_comment",
    "engine_map_pair",        "engine_negative_map",     "engine_is_transmission",
    "engine_simple_power",    "engine_not_object",       "trans_missing_gearbox",
    "trans_missing_ratios",   "trans_ratio_type",        "trans_unknown_template",
    "trans_efficiency",       "trans_downshift",         "trans_capacity_map",
    "trans_shift_points",     "trans_cvt_ratios",        "trans_zero_reverse",
};
#define NUM_INVALID ((int)(sizeof invalid_cases / sizeof invalid_cases[0]))

START_TEST(test_invalid) {
  const char *name = invalid_cases[_i];
  bool engine = strncmp(name, "engine_", 7) == 0;
  char bad[128], expected[1024] = "", epath[1024], rel[160];
  snprintf(bad, sizeof bad, "invalid/%s.json", name);
  snprintf(rel, sizeof rel, "invalid/%s.expected", name);
  data_path(epath, sizeof epath, rel);
  dg_test_first_line(expected, sizeof expected, epath);
  char e[1024], t[1024];
  data_path(e, sizeof e, engine ? bad : "hmmwv_engine_shafts.json");
  data_path(t, sizeof t, engine ? "hmmwv_automatic_transmission_shafts.json" : bad);
  dg_error err;
  char *json = dg_import_chrono_to_json(e, t, NULL, NULL, NULL, &err);
  ck_assert_msg(json == NULL, "%s imported", name);
  ck_assert_msg(err.line > 0 && err.column > 0, "%s: no line and column", name);
  snprintf(err.file, sizeof err.file, "%s.json", name);
  char msg[1024];
  dg_error_format(&err, msg, sizeof msg);
  ck_assert_str_eq(msg, expected);
}
END_TEST

START_TEST(test_io_errors) {
  dg_error err;
  char t[1024];
  data_path(t, sizeof t, "hmmwv_automatic_transmission_shafts.json");
  ck_assert(dg_import_chrono_to_json("/nonexistent/e.json", t, NULL, NULL, NULL, &err) == NULL);
  ck_assert_int_eq(err.code, DG_ERR_IO);
  ck_assert_str_eq(err.file, "/nonexistent/e.json");
  ck_assert(dg_import_chrono_to_json(t, NULL, NULL, NULL, NULL, &err) == NULL);
  ck_assert_int_eq(err.code, DG_ERR_USAGE);
  /* a bad --vehicle config is reported at its own place */
  char e[1024], v[1024];
  data_path(e, sizeof e, "hmmwv_engine_shafts.json");
  dg_test_path(v, sizeof v, "tests/data/yaml/invalid/negative_mass.yaml");
  ck_assert(dg_import_chrono_to_json(e, t, v, NULL, NULL, &err) == NULL);
  ck_assert_int_eq(err.line, 1);
  ck_assert_str_eq(err.path, "/mass");
  /* two engines */
  ck_assert(dg_import_chrono_to_json(e, e, NULL, NULL, NULL, &err) == NULL);
  ck_assert(strstr(err.text, "is not a transmission template") != NULL);
}
END_TEST

static Suite *import_chrono_suite(void) {
  Suite *s = suite_create("import_chrono");
  TCase *tc = tcase_create("templates");
  tcase_add_test(tc, test_engine_shafts);
  tcase_add_test(tc, test_transmission_shafts);
  tcase_add_test(tc, test_simple_map);
  tcase_add_test(tc, test_engine_simple);
  tcase_add_test(tc, test_cvt_schedule);
  tcase_add_test(tc, test_manual);
  tcase_add_test(tc, test_vehicle_config);
  tcase_add_test(tc, test_swapped_files);
  tcase_add_test(tc, test_corpus_quirks);
  suite_add_tcase(s, tc);
  tc = tcase_create("simulation");
  tcase_set_timeout(tc, 300); /* the corpus: ~50 launches of 8.5 s */
  tcase_add_test(tc, test_hmmwv_launch_and_shifts);
  tcase_add_test(tc, test_cvt_launch);
  tcase_add_test(tc, test_corpus);
  suite_add_tcase(s, tc);
  tc = tcase_create("errors");
  tcase_add_loop_test(tc, test_invalid, 0, NUM_INVALID);
  tcase_add_test(tc, test_io_errors);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return dg_test_run(import_chrono_suite()); }
