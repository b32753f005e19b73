/* import_yaml: YAML vehicle configs with a `powertrain:` block.
 *
 * The sample config converts to the expected blocks, field by field, and the
 * vehicle keys, the defaults, the older flat-torque drive and the notes do
 * what docs/import.md says. The built graph behaves: the engine idles at rest and
 * the car does not creep; a full-throttle launch slips the automatic clutch
 * without stalling and upshifts at 6000 rpm with the rpm bounded between the
 * downshift speed and the redline; the engine's inertia reaches the wheels
 * through the engaged gear (exactly I·(i_g·i_fd)², and first gear spins the
 * wheels up slower than top gear). Every bad config in
 * tests/data/yaml/invalid/ gives its expected file:line:column message. */
#include "testutil.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Values copied from a file compare exactly (ck_assert_double_eq): they go
 * through strtod and the shortest round-trip printing only. */
/* Closed forms built from the same doubles: a few roundings. */
#define TOL_EXACT 1e-12

static void data_path(char *buf, size_t size, const char *name) {
  char rel[512];
  snprintf(rel, sizeof rel, "tests/data/yaml/%s", name);
  dg_test_path(buf, size, rel);
}

/* Imports a config of tests/data/yaml and parses the graph text. */
static json_t *import_doc(const char *name) {
  char path[1024];
  data_path(path, sizeof path, name);
  dg_error err;
  char *text = dg_import_yaml_to_json(path, NULL, NULL, &err);
  ck_assert_msg(text != NULL, "%s did not import: %s", name, err.text);
  return dg_test_json_take(text);
}

static void assert_numbers(const json_t *arr, const double *want, int n) {
  ck_assert_msg(json_is_array(arr), "not an array");
  ck_assert_int_eq((int)json_array_size(arr), n);
  for (int i = 0; i < n; i++)
    ck_assert_double_eq(json_number_value(json_array_get(arr, (size_t)i)), want[i]);
}

/* Writes `text` as cfg.yaml in a fresh temporary directory. */
static void write_config(char *path, size_t size, const char *text) {
  char dir[] = "/tmp/dg_import_yaml_XXXXXX";
  ck_assert(mkdtemp(dir) != NULL);
  snprintf(path, size, "%s/cfg.yaml", dir);
  FILE *f = fopen(path, "w");
  ck_assert(f != NULL);
  fputs(text, f);
  fclose(f);
}

static void remove_config(const char *path) {
  char dir[1024];
  snprintf(dir, sizeof dir, "%s", path);
  remove(path);
  char *slash = strrchr(dir, '/');
  if (slash) {
    *slash = '\0';
    rmdir(dir);
  }
}

/* The sample with one text replacement, as a temporary config. */
static char *sample_text(void) {
  char path[1024];
  data_path(path, sizeof path, "powertrain_sedan.yaml");
  FILE *f = fopen(path, "rb");
  ck_assert(f != NULL);
  static char buf[8192];
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = '\0';
  return buf;
}

/* The sample in manual mode with no start gear (the gear input selects the
 * gear from the first step), after `prefix`, as a temporary config. */
static void manual_variant(char *path, size_t size, const char *prefix) {
  const char *text = sample_text();
  const char *mode = strstr(text, "mode: auto_rpm"), *start = strstr(text, "start_gear: 1");
  ck_assert(mode && start && mode < start);
  char buf[8192];
  snprintf(buf, sizeof buf, "%s%.*smode: manual%.*s%s", prefix, (int)(mode - text), text,
           (int)(start - (mode + 14)), mode + 14, start + 13);
  write_config(path, size, buf);
}

static int sig(const dg_sim *sim, const char *name) {
  int id = dg_sim_signal_find(sim, name);
  ck_assert_msg(id >= 0, "no signal %s", name);
  return id;
}

/* ---------------------------------------------------------------------- */
/* Conversion                                                             */

START_TEST(test_sample_engine_gearbox) {
  json_t *doc = import_doc("powertrain_sedan.yaml");
  ck_assert_int_eq((int)json_integer_value(json_object_get(doc, "drivegraph")), 1);
  json_t *e = dg_test_json_block(doc, "engine");
  ck_assert_str_eq(dg_test_json_str(e, "type"), "engine");
  ck_assert_double_eq(dg_test_json_num(e, "inertia"), 0.20);
  ck_assert_double_eq(dg_test_json_num(e, "idle_rpm"), 800);
  ck_assert_double_eq(dg_test_json_num(e, "redline_rpm"), 6500);
  json_t *map = json_object_get(e, "torque_map");
  static const double rpm[] = {1000, 2500, 4000, 5500, 6500}, thr[] = {0.0, 0.5, 1.0};
  static const double rows[3][5] = {
      {-15, -20, -25, -30, -35}, {95, 150, 165, 150, 120}, {180, 300, 330, 300, 250}};
  assert_numbers(json_object_get(map, "rpm"), rpm, 5);
  assert_numbers(json_object_get(map, "throttle"), thr, 3);
  ck_assert_int_eq((int)json_array_size(json_object_get(map, "torque")), 3);
  for (int i = 0; i < 3; i++)
    assert_numbers(json_array_get(json_object_get(map, "torque"), (size_t)i), rows[i], 5);

  /* the launch clutch: 1.25 × the 330 N·m peak; engaged at the peak's
   * 4000 rpm, held to halfway up the range, (800 + 6500)/2 = 3650 rpm */
  json_t *cl = dg_test_json_block(doc, "clutch");
  ck_assert_str_eq(dg_test_json_str(cl, "type"), "clutch");
  ck_assert_str_eq(dg_test_json_str(cl, "mode"), "auto");
  ck_assert_double_eq(dg_test_json_num(cl, "max_torque"), 1.25 * 330);
  ck_assert_double_eq(dg_test_json_num(cl, "idle_rpm"), 800);
  ck_assert_double_eq(dg_test_json_num(cl, "launch_rpm"), 3650);

  json_t *gb = dg_test_json_block(doc, "gearbox");
  static const double ratios[] = {3.40, 2.05, 1.40, 1.00, 0.82, 0.68};
  assert_numbers(json_object_get(gb, "ratios"), ratios, 6);
  ck_assert_double_eq(dg_test_json_num(gb, "reverse"), 3.20);
  ck_assert_double_eq(dg_test_json_num(gb, "efficiency"), 0.92);
  ck_assert_double_eq(dg_test_json_num(gb, "shift_time"), 0.25);
  ck_assert_int_eq((int)json_integer_value(json_object_get(gb, "start_gear")), 1);
  json_t *sh = json_object_get(gb, "shift");
  ck_assert_str_eq(dg_test_json_str(sh, "mode"), "auto_rpm");
  ck_assert_double_eq(dg_test_json_num(sh, "upshift_rpm"), 6000);
  ck_assert_double_eq(dg_test_json_num(sh, "downshift_rpm"), 2000);
  json_t *fin = dg_test_json_block(doc, "final");
  ck_assert_str_eq(dg_test_json_str(fin, "type"), "gear");
  ck_assert_double_eq(dg_test_json_num(fin, "ratio"), 4.10);

  ck_assert(dg_test_json_connected(doc, "engine.out", "clutch.in"));
  ck_assert(dg_test_json_connected(doc, "clutch.out", "gearbox.in"));
  ck_assert(dg_test_json_connected(doc, "gearbox.out", "final.in"));
  ck_assert(dg_test_json_connected(doc, "final.out", "diff.in"));
  json_decref(doc);
}
END_TEST

/* The sample gives no vehicle: the default sedan (docs/import.md). */
START_TEST(test_sample_default_sedan) {
  json_t *doc = import_doc("powertrain_sedan.yaml");
  json_t *body = dg_test_json_block(doc, "body");
  ck_assert_double_eq(dg_test_json_num(body, "mass"), 1500);
  ck_assert_double_eq(dg_test_json_num(body, "wheelbase"), 2.7);
  ck_assert_double_eq_tol(dg_test_json_num(body, "cg_to_front"), 1.2, TOL_EXACT);
  ck_assert_double_eq(dg_test_json_num(body, "cg_height"), 0.55);
  ck_assert_double_eq_tol(dg_test_json_num(body, "cda"), 0.30 * 2.2, TOL_EXACT);
  ck_assert_double_eq(dg_test_json_num(body, "rolling_resistance"), 0.012);
  ck_assert_str_eq(dg_test_json_str(dg_test_json_block(doc, "diff"), "kind"), "open");
  /* RWD: the differential drives the rear wheels */
  ck_assert(dg_test_json_connected(doc, "diff.left", "wheel_rl.hub"));
  ck_assert(dg_test_json_connected(doc, "diff.right", "wheel_rr.hub"));
  static const char *const wheels[] = {"wheel_fl", "wheel_fr", "wheel_rl", "wheel_rr"};
  for (int i = 0; i < 4; i++) {
    json_t *w = dg_test_json_block(doc, wheels[i]);
    ck_assert_double_eq(dg_test_json_num(w, "radius"), 0.32);
    /* a 40 kg wheel as a solid disc, ½·m·R² */
    ck_assert_double_eq_tol(dg_test_json_num(w, "inertia"), 0.5 * 40 * 0.32 * 0.32, TOL_EXACT);
    /* 2000 N·m at full pedal, half to the front axle: 500 N·m a wheel */
    ck_assert_double_eq_tol(
        dg_test_json_num(w, "brake_torque") * dg_test_json_num(w, "brake_share"), 500, TOL_EXACT);
    json_t *t = json_object_get(w, "tyre");
    ck_assert_str_eq(dg_test_json_str(t, "model"), "magic_formula");
    ck_assert_double_eq(dg_test_json_num(t, "D"), 1.0);
  }
  json_decref(doc);
}
END_TEST

START_TEST(test_vehicle_keys) {
  json_t *doc = import_doc("vehicle_awd_lsd.yaml");
  ck_assert_str_eq(dg_test_json_str(doc, "name"), "AWD coupe, limited-slip axles");
  json_t *body = dg_test_json_block(doc, "body");
  ck_assert_double_eq(dg_test_json_num(body, "mass"), 1650);
  ck_assert_double_eq(dg_test_json_num(body, "wheelbase"), 2.65);
  ck_assert_double_eq(dg_test_json_num(body, "cg_to_front"), 1.25);
  ck_assert_double_eq(dg_test_json_num(body, "cg_height"), 0.48);
  ck_assert_double_eq(dg_test_json_num(body, "track_front"), 1.60);
  ck_assert_double_eq(dg_test_json_num(body, "track_rear"), 1.58);
  ck_assert_double_eq_tol(dg_test_json_num(body, "cda"), 0.31 * 2.0, TOL_EXACT);
  ck_assert_double_eq(dg_test_json_num(body, "rolling_resistance"), 0.011);
  /* AWD: final drive, then a centre differential sending 40 % forward */
  json_t *c = dg_test_json_block(doc, "centre");
  ck_assert_str_eq(dg_test_json_str(c, "kind"), "open");
  ck_assert_double_eq(dg_test_json_num(c, "split"), 0.4);
  ck_assert(dg_test_json_connected(doc, "final.out", "centre.in"));
  ck_assert(dg_test_json_connected(doc, "centre.left", "diff_f.in"));
  ck_assert(dg_test_json_connected(doc, "centre.right", "diff_r.in"));
  ck_assert(dg_test_json_connected(doc, "diff_f.left", "wheel_fl.hub"));
  ck_assert(dg_test_json_connected(doc, "diff_r.right", "wheel_rr.hub"));
  /* LSD: a clutch pack whose locking torque is lsd_preload × axle torque */
  static const char *const diffs[] = {"diff_f", "diff_r"};
  for (int i = 0; i < 2; i++) {
    json_t *d = dg_test_json_block(doc, diffs[i]);
    ck_assert_str_eq(dg_test_json_str(d, "kind"), "clutch_lsd");
    ck_assert_double_eq(dg_test_json_num(d, "power_ramp"), 0.25);
    ck_assert_double_eq(dg_test_json_num(d, "coast_ramp"), 0.25);
    ck_assert_double_eq(dg_test_json_num(d, "preload"), 0.0);
  }
  static const char *const wheels[] = {"wheel_fl", "wheel_fr", "wheel_rl", "wheel_rr"};
  static const double inertia[] = {1.1, 1.1, 1.3, 1.3}, share[] = {0.6, 0.6, 0.4, 0.4};
  for (int i = 0; i < 4; i++) {
    json_t *w = dg_test_json_block(doc, wheels[i]);
    ck_assert_double_eq(dg_test_json_num(w, "radius"), 0.33);
    ck_assert_double_eq(dg_test_json_num(w, "inertia"), inertia[i]);
    ck_assert_double_eq_tol(dg_test_json_num(w, "brake_torque"), 3200 / 2.0, TOL_EXACT);
    ck_assert_double_eq_tol(dg_test_json_num(w, "brake_share"), share[i], TOL_EXACT);
    json_t *t = json_object_get(w, "tyre");
    ck_assert_double_eq(dg_test_json_num(t, "B"), 12.0);
    ck_assert_double_eq(dg_test_json_num(t, "C"), 1.6);
    ck_assert_double_eq_tol(dg_test_json_num(t, "D"), 0.9, TOL_EXACT); /* D_long × mu_nominal */
    ck_assert_double_eq(dg_test_json_num(t, "E"), 0.95);
    ck_assert_double_eq(dg_test_json_num(t, "relaxation_length"), 0.2);
  }
  json_t *cl = dg_test_json_block(doc, "clutch");
  ck_assert_double_eq(dg_test_json_num(cl, "max_torque"), 600);
  ck_assert_double_eq(dg_test_json_num(cl, "launch_rpm"), 2600);
  ck_assert_double_eq(dg_test_json_num(cl, "idle_rpm"), 850);
  ck_assert_double_eq(dg_test_json_num(dg_test_json_block(doc, "final"), "ratio"), 3.9);
  json_decref(doc);
}
END_TEST

/* No powertrain block: throttle × max_motor_torque × final_drive_ratio. */
START_TEST(test_flat_torque) {
  json_t *doc = import_doc("vehicle_flat_torque.yaml");
  json_t *m = dg_test_json_block(doc, "motor");
  ck_assert_str_eq(dg_test_json_str(m, "type"), "motor");
  ck_assert_double_eq(dg_test_json_num(m, "max_torque"), 250);
  ck_assert_double_eq(dg_test_json_num(m, "inertia"), 0.3);
  ck_assert(json_is_true(json_object_get(m, "reverse")));
  ck_assert(json_object_get(m, "max_power") == NULL); /* flat: no power limit */
  ck_assert_double_eq(dg_test_json_num(dg_test_json_block(doc, "final"), "ratio"), 4.5);
  ck_assert(json_object_get(json_object_get(doc, "blocks"), "engine") == NULL);
  ck_assert(json_object_get(json_object_get(doc, "blocks"), "gearbox") == NULL);
  ck_assert(dg_test_json_connected(doc, "motor.out", "final.in"));
  ck_assert(dg_test_json_connected(doc, "diff.left", "wheel_fl.hub")); /* FWD */
  ck_assert(dg_test_json_connected(doc, "diff.right", "wheel_fr.hub"));
  ck_assert_double_eq_tol(dg_test_json_num(dg_test_json_block(doc, "wheel_fl"), "brake_share"),
                          0.65, TOL_EXACT);
  json_decref(doc);
}
END_TEST

/* The flat drive at rest: 0.5 throttle gives 0.5 × 250 N·m at the motor,
 * so the front hubs together get 0.5·250·4.5 (the motor's inertia is
 * accelerated too: the reaction is checked through the motor signal). */
START_TEST(test_flat_torque_drives) {
  char path[1024];
  data_path(path, sizeof path, "vehicle_flat_torque.yaml");
  dg_error err;
  dg_graph *g = dg_graph_load_file(NULL, path, &err);
  ck_assert_msg(g != NULL, "%s", err.text);
  dg_sim *sim = dg_test_sim(g);
  dg_sim_set_input(sim, DG_INPUT_THROTTLE, 0.5);
  dg_test_step(sim, 1, 1e-3);
  ck_assert_double_eq_tol(dg_test_signal(sim, "motor.torque"), 0.5 * 250, TOL_EXACT);
  dg_test_step(sim, 2000, 1e-3);
  ck_assert(dg_test_signal(sim, "body.speed") > 1.0);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

typedef struct notes {
  char text[16][DG_ERROR_FILE_LEN + DG_ERROR_TEXT_LEN + 64];
  int n;
} notes;

static void collect(const dg_error *e, void *user) {
  notes *ns = user;
  ck_assert_int_eq(e->code, DG_OK);
  if (ns->n < 16) {
    const char *base = strrchr(e->file, '/');
    snprintf(ns->text[ns->n++], sizeof ns->text[0], "%s:%d:%d: %s", base ? base + 1 : e->file,
             e->line, e->column, e->text);
  }
}

static bool has_note(const notes *ns, const char *want) {
  for (int i = 0; i < ns->n; i++)
    if (strcmp(ns->text[i], want) == 0)
      return true;
  return false;
}

START_TEST(test_notes) {
  char path[1024];
  data_path(path, sizeof path, "notes.yaml");
  notes ns = {0};
  dg_error err;
  char *json = dg_import_yaml_to_json(path, collect, &ns, &err);
  ck_assert_msg(json != NULL, "%s", err.text);
  free(json);
  for (int i = 0; i < ns.n; i++)
    fprintf(stderr, "  %s\n", ns.text[i]);
  ck_assert(has_note(&ns, "notes.yaml:4:1: note: anti_dive_front: ignored (no suspension in a "
                          "longitudinal simulation)"));
  ck_assert(has_note(&ns, "notes.yaml:5:1: note: favourite_colour: ignored (unknown key, not "
                          "used by a drivetrain simulation)"));
  ck_assert(has_note(&ns, "notes.yaml:6:1: warning: wheelbse: unknown key, ignored; did you mean "
                          "\"wheelbase\"?"));
  ck_assert(has_note(&ns, "notes.yaml:13:5: warning: powertrain.engine.idle_rmp: unknown key, "
                          "ignored; did you mean \"idle_rpm\"?"));
  ck_assert(has_note(&ns, "notes.yaml:0:0: note: wheelbase not given: default sedan's "
                          "wheelbase 2.7 m"));
}
END_TEST

/* dg_graph_load_file and dg_graph_validate_file take .yaml paths. */
START_TEST(test_load_and_validate_yaml) {
  char path[1024];
  data_path(path, sizeof path, "powertrain_sedan.yaml");
  dg_error err;
  dg_graph *g = dg_graph_load_file(NULL, path, &err);
  ck_assert_msg(g != NULL, "%s", err.text);
  ck_assert_int_eq(dg_graph_block_count(g), 10);
  ck_assert_str_eq(dg_graph_file(g), path);
  dg_graph_free(g);
  dg_graph_info info;
  ck_assert_int_eq(dg_graph_validate_file(NULL, path, NULL, NULL, &info), 0);
  ck_assert_int_eq(info.blocks, 10);
  ck_assert_int_eq(info.connections, 10);
  data_path(path, sizeof path, "invalid/wrong_type.yaml");
  ck_assert_int_eq(dg_graph_validate_file(NULL, path, NULL, NULL, NULL), 1);
  g = dg_graph_load_file(NULL, path, &err);
  ck_assert(g == NULL);
  ck_assert_int_eq(err.code, DG_ERR_SCHEMA);
  ck_assert_int_eq(err.line, 4);
  ck_assert_int_eq(err.column, 15);
  ck_assert_str_eq(err.path, "/powertrain/engine/idle_rpm");
}
END_TEST

/* Same input, same text (no addresses, times or hash order in it). */
START_TEST(test_deterministic) {
  char path[1024];
  data_path(path, sizeof path, "vehicle_awd_lsd.yaml");
  dg_error err;
  char *a = dg_import_yaml_to_json(path, NULL, NULL, &err);
  char *b = dg_import_yaml_to_json(path, NULL, NULL, &err);
  ck_assert(a && b);
  ck_assert_str_eq(a, b);
  free(a);
  free(b);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* Behaviour                                                              */

static dg_graph *load_sample(void) {
  char path[1024];
  data_path(path, sizeof path, "powertrain_sedan.yaml");
  dg_error err;
  dg_graph *g = dg_graph_import_yaml(NULL, path, &err);
  ck_assert_msg(g != NULL, "%s", err.text);
  return g;
}

/* At rest with the throttle closed the engine idles and the car stays put:
 * the clutch is open at idle, so it neither creeps forward nor — a slipping
 * clutch transmitting engine braking would do that — backwards. The idle
 * controller holds the engine a few rpm under idle_rpm (its proportional
 * droop: 20 N·m of closed-throttle drag over 0.02/rpm × 195 N·m per unit
 * throttle ≈ 5 rpm). */
START_TEST(test_idle_no_creep) {
  dg_graph *g = load_sample();
  dg_sim *sim = dg_test_sim(g);
  int rpm = sig(sim, "engine.rpm"), x = sig(sim, "body.x"), v = sig(sim, "body.speed");
  int slip = sig(sim, "clutch.slip_rpm"), torque = sig(sim, "clutch.torque");
  for (int i = 0; i < 10000; i++) {
    dg_test_step(sim, 1, 1e-3);
    ck_assert_msg(dg_sim_signal(sim, x) >= 0.0, "creeps backwards: x = %g at %g s",
                  dg_sim_signal(sim, x), dg_sim_time(sim));
    ck_assert_msg(dg_sim_signal(sim, v) >= 0.0, "rolls backwards: v = %g at %g s",
                  dg_sim_signal(sim, v), dg_sim_time(sim));
  }
  ck_assert_double_eq_tol(dg_sim_signal(sim, rpm), 800, 10);
  ck_assert(dg_sim_signal(sim, rpm) <= 800);
  ck_assert_double_eq_tol(dg_sim_signal(sim, slip), dg_sim_signal(sim, rpm), 1e-9);
  ck_assert_double_eq(dg_sim_signal(sim, torque), 0.0); /* open: nothing crosses */
  ck_assert_double_eq(dg_sim_signal(sim, x), 0.0);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* Rolling to a stop with the throttle closed: the car slows, stops and
 * stays stopped; it never rolls backwards. */
START_TEST(test_coast_to_rest_no_reverse) {
  dg_graph *g = load_sample();
  dg_sim *sim = dg_test_sim(g);
  const char *names[] = {"body.speed", "wheel_fl.omega", "wheel_fr.omega", "wheel_rl.omega",
                         "wheel_rr.omega", "engine.rpm"};
  double v0 = 3.0, w0 = v0 / 0.32;
  double values[6] = {v0, w0, w0, w0, w0, 800};
  dg_test_set_initial(sim, 6, names, values);
  int v = sig(sim, "body.speed");
  double min_v = v0;
  for (int i = 0; i < 30000; i++) {
    dg_test_step(sim, 1, 1e-3);
    min_v = fmin(min_v, dg_sim_signal(sim, v));
  }
  ck_assert_msg(min_v >= 0.0, "rolled backwards at %g m/s", min_v);
  ck_assert_double_eq_tol(dg_sim_signal(sim, v), 0.0, 1e-6);
  double x = dg_test_signal(sim, "body.x");
  dg_test_step(sim, 5000, 1e-3);
  ck_assert_double_eq_tol(dg_test_signal(sim, "body.x"), x, 1e-6);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* Full throttle from rest: the clutch slips with the engine pulled well above
 * idle (no stall), then locks; every upshift happens at 6000 rpm (+ one
 * step's rise, < 60 rpm at < 60000 rpm/s), and from the first upshift on the
 * engine stays between the downshift speed (2000) and the redline (6500). */
START_TEST(test_launch_sawtooth) {
  dg_graph *g = load_sample();
  dg_sim *sim = dg_test_sim(g);
  int rpm = sig(sim, "engine.rpm"), gear = sig(sim, "gearbox.gear"), v = sig(sim, "body.speed");
  int locked = sig(sim, "clutch.locked"), slip = sig(sim, "clutch.slip_rpm");
  dg_test_step(sim, 500, 1e-3); /* idle first */
  dg_sim_set_input(sim, DG_INPUT_THROTTLE, 1.0);
  int shifts = 0, last_gear = 1;
  double min_launch_rpm = 1e9, max_slip = 0, t100 = -1, after_lo = 1e9, after_hi = 0;
  bool slipped_moving = false;
  double prev_rpm = dg_sim_signal(sim, rpm);
  while (dg_sim_time(sim) < 30.0 && dg_sim_signal(sim, v) < 40.0) {
    dg_test_step(sim, 1, 1e-3);
    double r = dg_sim_signal(sim, rpm);
    int gnow = (int)dg_sim_signal(sim, gear);
    if (gnow != last_gear) {
      ck_assert_int_eq(gnow, last_gear + 1);
      ck_assert_msg(prev_rpm >= 6000.0 - 60.0 && prev_rpm <= 6060.0,
                    "upshift %d -> %d at %g rpm", last_gear, gnow, prev_rpm);
      shifts++;
      last_gear = gnow;
    }
    if (shifts == 0) {
      min_launch_rpm = fmin(min_launch_rpm, r);
      if (dg_sim_signal(sim, locked) == 0.0 && dg_sim_signal(sim, v) > 0.1) {
        slipped_moving = true;
        max_slip = fmax(max_slip, dg_sim_signal(sim, slip));
      }
    } else {
      after_lo = fmin(after_lo, r);
      after_hi = fmax(after_hi, r);
    }
    if (t100 < 0 && dg_sim_signal(sim, v) >= 100 / 3.6)
      t100 = dg_sim_time(sim) - 0.5;
    prev_rpm = r;
  }
  fprintf(stderr, "launch: min rpm %.0f, max slip %.0f rpm, %d shifts, after the first %.0f..%.0f "
                  "rpm, 0-100 km/h %.2f s\n",
          min_launch_rpm, max_slip, shifts, after_lo, after_hi, t100);
  ck_assert(slipped_moving);
  ck_assert(max_slip > 500.0);          /* the clutch really slipped under way */
  ck_assert(min_launch_rpm > 800 - 10); /* never below idle: no stall */
  ck_assert_int_ge(shifts, 3);
  ck_assert(after_lo >= 2000.0);
  ck_assert(after_hi <= 6500.0);
  /* 1500 kg, 330 N·m: a plausible sedan, 6..10 s (6.67 s with the shifts
   * through friction, which keep the torque on where the rigid shifts
   * interrupted it for 0.25 s each: 7.18 s) */
  ck_assert_msg(t100 > 6.0 && t100 < 10.0, "0-100 km/h in %g s", t100);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* Gear g engaged, clutch locked at 3000 rpm (the car rolling to match). */
static dg_sim *locked_in_gear(const dg_graph *g, int gear, double ratio) {
  dg_sim *sim = dg_test_sim(g);
  dg_sim_set_input(sim, DG_INPUT_GEAR, gear);
  double w_engine = 3000 / 9.549296585513720, w_wheel = w_engine / (ratio * 4.1);
  const char *names[] = {"engine.rpm", "clutch.omega_out", "wheel_rl.omega", "wheel_rr.omega",
                         "wheel_fl.omega", "wheel_fr.omega", "body.speed"};
  double values[] = {3000, w_engine, w_wheel, w_wheel, w_wheel, w_wheel, w_wheel * 0.32};
  dg_test_set_initial(sim, 7, names, values);
  dg_test_step(sim, 1, 1e-4);
  ck_assert_double_eq(dg_test_signal(sim, "gearbox.gear"), gear);
  ck_assert_double_eq(dg_test_signal(sim, "clutch.locked"), 1);
  return sim;
}

/* Kinetic energy with the rear wheels at (a, b) rad/s and the body and
 * front wheels at rest: ½ [a b] M_w [a b]ᵀ, M_w the rear wheels' coupled
 * inertia (the engine side follows through the locked clutch and gears). */
static double rear_energy(dg_sim *sim, double a, double b) {
  const char *names[] = {"wheel_rl.omega", "wheel_rr.omega", "wheel_fl.omega", "wheel_fr.omega",
                         "body.speed"};
  double values[] = {a, b, 0, 0, 0};
  dg_test_set_initial(sim, 5, names, values);
  return dg_sim_kinetic_energy(sim);
}

/* Through a locked clutch and gear g the engine side (engine 0.2 + clutch
 * plate 0.01 + gearbox input 0.02 kg·m²) reaches the open differential as
 * I_e = 0.23·(i_g·4.1)², and the two rear wheels see
 * M_w = [[I_w + I_e/4, I_e/4], [I_e/4, I_w + I_e/4]] (DESIGN.md), read from
 * the kinetic energy at (1, 0), (0, 1) and (1, 1) × 10 rad/s: exactly. */
START_TEST(test_reflected_inertia_exact) {
  char path[1024];
  manual_variant(path, sizeof path, "");
  dg_error err;
  dg_graph *g = dg_graph_load_file(NULL, path, &err);
  ck_assert_msg(g != NULL, "%s", err.text);
  static const int gears[] = {1, 6};
  static const double ratios[] = {3.40, 0.68};
  double iw = 0.5 * 40 * 0.32 * 0.32;
  for (int k = 0; k < 2; k++) {
    dg_sim *sim = locked_in_gear(g, gears[k], ratios[k]);
    double w = 10.0;
    double m11 = 2 * rear_energy(sim, w, 0) / (w * w);
    double m22 = 2 * rear_energy(sim, 0, w) / (w * w);
    double m12 = (2 * rear_energy(sim, w, w) / (w * w) - m11 - m22) / 2;
    double i = ratios[k] * 4.1, ie = 0.23 * i * i;
    fprintf(stderr, "gear %d: M_w = [[%.6f, %.6f], [., %.6f]], I_e = %.6f\n", gears[k], m11, m12,
            m22, ie);
    ck_assert_double_eq_tol(m11, iw + ie / 4, TOL_EXACT * (iw + ie));
    ck_assert_double_eq_tol(m22, iw + ie / 4, TOL_EXACT * (iw + ie));
    ck_assert_double_eq_tol(m12, ie / 4, TOL_EXACT * (iw + ie));
    dg_sim_free(sim);
  }
  dg_graph_free(g);
  remove_config(path);
}
END_TEST

/* On ice (μ 0.05) at full throttle from 3000 rpm, the driven wheels spin up
 * slower in first gear than in top gear: first gear multiplies the torque
 * by i = 13.9 but the inertia by i²; per wheel
 *   α ≈ T·i·η/2 / (I_w + I_e/2),
 * 81 rad/s² in first and 135 rad/s² in top with T = 310 N·m. The tyre's
 * drag, at most μ·F_z·R ≈ 52 N·m a wheel (13 % of top gear's drive torque),
 * is left out of the estimate, hence the 20 % tolerance. */
START_TEST(test_first_gear_spins_up_slower) {
  char path[1024];
  manual_variant(path, sizeof path, "tire:\n  mu_nominal: 0.05\n");
  dg_error err;
  dg_graph *g = dg_graph_load_file(NULL, path, &err);
  ck_assert_msg(g != NULL, "%s", err.text);
  static const int gears[] = {1, 6};
  static const double ratios[] = {3.40, 0.68};
  double alpha[2], iw = 0.5 * 40 * 0.32 * 0.32;
  for (int k = 0; k < 2; k++) {
    dg_sim *sim = locked_in_gear(g, gears[k], ratios[k]);
    int w = sig(sim, "wheel_rl.omega");
    dg_sim_set_input(sim, DG_INPUT_THROTTLE, 1.0);
    dg_test_step(sim, 10, 1e-3); /* the tyre's force settles over its relaxation */
    double w0 = dg_sim_signal(sim, w), t0 = dg_sim_time(sim);
    dg_test_step(sim, 20, 1e-3);
    ck_assert_double_eq(dg_test_signal(sim, "clutch.locked"), 1);
    alpha[k] = (dg_sim_signal(sim, w) - w0) / (dg_sim_time(sim) - t0);
    double i = ratios[k] * 4.1, ie = 0.23 * i * i;
    double torque = 300 + (3000.0 - 2500.0) / 1500.0 * 30; /* full-load map at 3000 rpm */
    double predicted = torque * i * 0.92 / 2 / (iw + ie / 2);
    fprintf(stderr, "gear %d: wheel spin-up %.1f rad/s^2 (inertia estimate %.1f)\n", gears[k],
            alpha[k], predicted);
    ck_assert_double_eq_tol(alpha[k], predicted, 0.2 * predicted);
    dg_sim_free(sim);
  }
  ck_assert(alpha[0] < 0.8 * alpha[1]);
  dg_graph_free(g);
  remove_config(path);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* Errors: tests/data/yaml/invalid/<case>.yaml and <case>.expected        */

static const char *const invalid_cases[] = {
    "syntax_error", "empty", "not_mapping", "two_documents", "missing_torque_map",
    "wrong_type", "quoted_number", "non_monotonic_rpm", "map_rows", "map_row_length",
    "throttle_out_of_range", "negative_mass", "infinite", "unknown_drive_type",
    "unknown_shift_mode", "duplicate_key", "downshift_hunting", "ratios_not_falling",
    "start_gear_fraction", "redline_below_idle", "powertrain_not_mapping",
    "cg_outside_wheelbase", "wheel_inertia_count", "engine_missing", "efficiency_range",
};
#define NUM_INVALID ((int)(sizeof invalid_cases / sizeof invalid_cases[0]))

START_TEST(test_invalid) {
  const char *name = invalid_cases[_i];
  char path[1024], rel[128], expected[1024] = "";
  snprintf(rel, sizeof rel, "invalid/%s.yaml", name);
  data_path(path, sizeof path, rel);
  snprintf(rel, sizeof rel, "invalid/%s.expected", name);
  char epath[1024];
  data_path(epath, sizeof epath, rel);
  dg_test_first_line(expected, sizeof expected, epath);
  dg_error err;
  char *json = dg_import_yaml_to_json(path, NULL, NULL, &err);
  ck_assert_msg(json == NULL, "%s imported", name);
  ck_assert_msg(err.line > 0 && err.column > 0, "%s: no line and column", name);
  snprintf(err.file, sizeof err.file, "%s.yaml", name);
  char msg[1024];
  dg_error_format(&err, msg, sizeof msg);
  ck_assert_str_eq(msg, expected);
}
END_TEST

/* Missing files and bad arguments. */
START_TEST(test_io_errors) {
  dg_error err;
  ck_assert(dg_import_yaml_to_json("/nonexistent/x.yaml", NULL, NULL, &err) == NULL);
  ck_assert_int_eq(err.code, DG_ERR_IO);
  ck_assert_str_eq(err.file, "/nonexistent/x.yaml");
  ck_assert(dg_import_yaml_to_json(NULL, NULL, NULL, &err) == NULL);
  ck_assert_int_eq(err.code, DG_ERR_USAGE);
  ck_assert(dg_graph_load_file(NULL, "/nonexistent/x.yml", &err) == NULL);
  ck_assert_int_eq(err.code, DG_ERR_IO);
  ck_assert(dg_import_yaml_to_json("/nonexistent/x.yaml", NULL, NULL, NULL) == NULL);
}
END_TEST

static Suite *import_yaml_suite(void) {
  Suite *s = suite_create("import_yaml");
  TCase *tc = tcase_create("convert");
  tcase_add_test(tc, test_sample_engine_gearbox);
  tcase_add_test(tc, test_sample_default_sedan);
  tcase_add_test(tc, test_vehicle_keys);
  tcase_add_test(tc, test_flat_torque);
  tcase_add_test(tc, test_flat_torque_drives);
  tcase_add_test(tc, test_notes);
  tcase_add_test(tc, test_load_and_validate_yaml);
  tcase_add_test(tc, test_deterministic);
  suite_add_tcase(s, tc);
  tc = tcase_create("behaviour");
  tcase_add_test(tc, test_idle_no_creep);
  tcase_add_test(tc, test_coast_to_rest_no_reverse);
  tcase_add_test(tc, test_launch_sawtooth);
  tcase_add_test(tc, test_reflected_inertia_exact);
  tcase_add_test(tc, test_first_gear_spins_up_slower);
  suite_add_tcase(s, tc);
  tc = tcase_create("errors");
  tcase_add_loop_test(tc, test_invalid, 0, NUM_INVALID);
  tcase_add_test(tc, test_io_errors);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return dg_test_run(import_yaml_suite()); }
