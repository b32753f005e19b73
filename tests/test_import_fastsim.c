/* import_fastsim: FASTSim's vehicle table to graphs.
 *
 * - import: the graph of a conventional and of a battery-electric row,
 *   field by field against the table's numbers and FASTSim's rules by hand;
 *   every light-duty conventional and electric row's mass against the mass
 *   FASTSim's own rolling-resistance energy implies (rrKj = g·crr·m·d);
 * - errors: every broken file of tests/data/fastsim/invalid gives its
 *   file:line:column message, hybrids are refused with the reason, unknown
 *   rows and names are named;
 * - cycles: the 14 light-duty conventional and electric vehicles of
 *   FASTSim's benchmark (master_benchmark_vars.csv) over UDDS and HWFET,
 *   backward (the body on the trace: drag, acceleration, rolling and tyre
 *   inertia energies within 0.1 % of FASTSim's) and forward (the imported
 *   driver: within 1 %), and their fuel economy (mpgge) or consumption
 *   (kWh/mi) against FASTSim's lab values (res_excel.json) within 2 %.
 *
 * FASTSim's conventions (docs/import.md, "FASTSim vehicles"): air 1.2
 * kg/m³, g 9.81 m/s², a mile of 1609.0 m (distMilesFinal), a gallon of
 * gasoline equivalent of 33.7 kWh, 1 s steps whose road load is at the
 * step's mean speed. */
#include "testutil.h"

#include <drivegraph/cycle.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define M_PER_MILE 1609.0   /* FASTSim's mile: distMilesFinal = metres / 1609.0 */
#define KWH_PER_GALLON 33.7 /* FASTSim's gallon of gasoline equivalent */
#define J_PER_KWH 3.6e6
/* Steps: forward and backward runs give the same energies at 0.05 s and at
 * 0.01 s to 1e-4 (the driver is a PI on a first-order plant; the road-load
 * energies of a prescribed body are exact at any step), so the matrix runs
 * at 0.05 s. */
#define DT_CYCLE 0.05

static void data_path(char *buf, size_t size, const char *name) {
  char rel[512];
  snprintf(rel, sizeof rel, "tests/data/fastsim/%s", name);
  dg_test_path(buf, size, rel);
}

static char *import_row(int sel, const char *name, dg_error *err) {
  char csv[1024];
  data_path(csv, sizeof csv, "FASTSim_py_veh_db.csv");
  dg_fastsim_options o = {.row = sel, .name = name};
  return dg_import_fastsim_to_json(csv, &o, NULL, NULL, err);
}

static json_t *import_json(int sel) {
  dg_error err;
  char *text = import_row(sel, NULL, &err);
  ck_assert_msg(text != NULL, "vehicle %d: %s", sel, err.text);
  json_error_t je;
  json_t *root = json_loads(text, 0, &je);
  free(text);
  ck_assert(root != NULL);
  return root;
}

static double num_at(json_t *root, const char *block, const char *key) {
  json_t *v = json_object_get(json_object_get(json_object_get(root, "blocks"), block), key);
  ck_assert_msg(json_is_number(v), "%s.%s", block, key);
  return json_number_value(v);
}

static double table_at(json_t *root, const char *block, const char *key, const char *xname,
                       double x) {
  json_t *t = json_object_get(json_object_get(json_object_get(root, "blocks"), block), key);
  json_t *xs = json_object_get(t, xname), *ys = json_object_get(t, "efficiency");
  size_t n = json_array_size(xs);
  ck_assert(n >= 2 && n == json_array_size(ys));
  for (size_t i = 0; i + 1 < n; i++) {
    double x0 = json_number_value(json_array_get(xs, i)),
           x1 = json_number_value(json_array_get(xs, i + 1));
    if (x >= x0 && x <= x1) {
      double y0 = json_number_value(json_array_get(ys, i)),
             y1 = json_number_value(json_array_get(ys, i + 1));
      return y0 + (y1 - y0) * (x - x0) / (x1 - x0);
    }
  }
  return json_number_value(json_array_get(ys, n - 1));
}

/* ------------------------------------------------------------------------ */
/* FASTSim's results                                                        */

typedef struct benchmark {
  double drag, acc_pos, acc_neg, rr, tire_pos, tire_neg, miles; /* kJ, mi */
} benchmark;

/* The row of master_benchmark_vars.csv for vehicle `vnum` on `cycle`. */
static void read_benchmark(int vnum, const char *cycle, benchmark *b) {
  char path[1024];
  data_path(path, sizeof path, "master_benchmark_vars.csv");
  FILE *f = fopen(path, "r");
  ck_assert(f != NULL);
  static char line[1 << 16];
  char *names[200];
  int ncol = 0;
  ck_assert(fgets(line, sizeof line, f) != NULL);
  line[strcspn(line, "\r\n")] = '\0';
  static char header[1 << 16];
  strcpy(header, line);
  for (char *tok = strtok(header, ","); tok && ncol < 200; tok = strtok(NULL, ","))
    names[ncol++] = tok;
  bool found = false;
  while (!found && fgets(line, sizeof line, f)) {
    line[strcspn(line, "\r\n")] = '\0';
    char *fields[200];
    int n = 0;
    for (char *p = line, *q; n < 200; p = q + 1) {
      fields[n++] = p;
      q = strchr(p, ',');
      if (!q)
        break;
      *q = '\0';
    }
    if (atoi(fields[0]) != vnum || strcmp(fields[1], cycle) != 0)
      continue;
    found = true;
    for (int k = 0; k < n && k < ncol; k++) {
      double v = atof(fields[k]);
      if (strcmp(names[k], "dragKjPos") == 0)
        b->drag = v;
      else if (strcmp(names[k], "accelKjPos") == 0)
        b->acc_pos = v;
      else if (strcmp(names[k], "accelKjNeg") == 0)
        b->acc_neg = v;
      else if (strcmp(names[k], "rrKjPos") == 0)
        b->rr = v;
      else if (strcmp(names[k], "cycTireInertiaKjPos") == 0)
        b->tire_pos = v;
      else if (strcmp(names[k], "cycTireInertiaKjNeg") == 0)
        b->tire_neg = v;
      else if (strcmp(names[k], "distMilesFinal") == 0)
        b->miles = v;
    }
  }
  fclose(f);
  ck_assert_msg(found, "no benchmark row for vehicle %d on %s", vnum, cycle);
}

/* res_excel.json's lab value `key` for the vehicle named `name`. */
static double read_lab(const char *name, const char *key) {
  char path[1024];
  data_path(path, sizeof path, "res_excel.json");
  json_error_t je;
  json_t *root = json_load_file(path, 0, &je);
  ck_assert(root != NULL);
  json_t *v = json_object_get(json_object_get(root, name), key);
  ck_assert_msg(json_is_number(v), "res_excel.json: no %s for %s", key, name);
  double x = json_number_value(v);
  json_decref(root);
  return x;
}

/* ------------------------------------------------------------------------ */
/* Import                                                                   */

/* Row 1, the 2016 Corolla (Conv), without veh_override_kg: FASTSim's mass
 * rule, m = cargo + glider + trans_kg·k + (fc_max_kw/fc_kw_per_kg +
 * fc_base_kg)·k + fs_kwh/fs_kwh_per_kg·k, k = comp_mass_multiplier 1.4:
 *   136 + 1045.636 + 114·1.4 + (98/2.13 + 61)·1.4 + 441/9.89·1.4
 *   = 1553.4758 kg.
 * The engine's efficiency is FASTSim's lookup: at 5 % of rated power the
 * grid point 5 % (FASTSim's grid has every 0.5 % from 3 % to 7 %), the map
 * between 4 % (0.22) and 6 % (0.28): 0.25; at 5.4 % still 0.25 (the grid
 * point at or below); at 30 % the point 30 %, the map between 20 % (0.36)
 * and 40 % (0.35): 0.355. */
START_TEST(test_conventional) {
  json_t *g = import_json(1);
  double m = 136 + 1045.636 + 114 * 1.4 + (98 / 2.13 + 61) * 1.4 + 441 / 9.89 * 1.4;
  ck_assert_double_eq_tol(num_at(g, "body", "mass"), m, 1e-9);
  ck_assert_double_eq_tol(num_at(g, "body", "cda"), 0.3 * 2.574, 1e-15);
  ck_assert_double_eq(num_at(g, "body", "rolling_resistance"), 0.01);
  ck_assert_double_eq(num_at(g, "body", "air_density"), 1.2);
  ck_assert_double_eq(num_at(g, "body", "gravity"), 9.81);
  ck_assert_double_eq(num_at(g, "front_axle", "radius"), 0.336);
  ck_assert_double_eq_tol(num_at(g, "front_axle", "inertia") + num_at(g, "rear_axle", "inertia"),
                          4 * 0.815, 1e-15);
  ck_assert_double_eq(num_at(g, "trans", "efficiency"), 0.92);
  ck_assert_double_eq(num_at(g, "engine", "rated_power"), 98000);
  ck_assert_double_eq(num_at(g, "engine", "accessory_power"), 700);
  ck_assert_double_eq_tol(table_at(g, "engine", "efficiency", "power_fraction", 0.05), 0.25, 1e-12);
  ck_assert_double_eq_tol(table_at(g, "engine", "efficiency", "power_fraction", 0.054), 0.25,
                          1e-12);
  ck_assert_double_eq_tol(table_at(g, "engine", "efficiency", "power_fraction", 0.30), 0.355,
                          1e-12);
  /* no fuel cut: FASTSim fuels the accessories whatever the wheels ask */
  json_t *cut =
      json_object_get(json_object_get(json_object_get(g, "blocks"), "engine"), "fuel_cut");
  ck_assert(json_is_false(cut));
  json_decref(g);
  /* the same row by name, any case */
  dg_error err;
  char *a = import_row(1, NULL, &err), *b = import_row(-1, "2016 toyota COROLLA 4cyl 2WD", &err);
  ck_assert(a && b);
  ck_assert_str_eq(a, b);
  free(a);
  free(b);
}
END_TEST

/* Row 17, the 2017 Bolt (BEV): mass 136 + 1203.12 + 114.9·1.4 + (21.6 +
 * 0.833·150)·1.4 + (75 + 8·60)·1.4 (motor and battery by the rule); the
 * battery 60 kWh at 360 V = 166.67 A·h, √0.97 each way, 160 kW both ways,
 * SoC 0.05..0.98 starting full; no mc_eff_map, so FASTSim's baseline map
 * for 150 kW (the large motor's, above 75 kW) scaled by 0.95 / 0.94:
 * 0.94 → 0.95, at 40 % of 150 kW. */
START_TEST(test_electric) {
  json_t *g = import_json(17);
  ck_assert_double_eq(num_at(g, "battery", "capacity"), 60e3 / 360);
  ck_assert_double_eq_tol(num_at(g, "battery", "efficiency"), sqrt(0.97), 1e-15);
  ck_assert_double_eq(num_at(g, "battery", "max_discharge_power"), 160e3);
  ck_assert_double_eq(num_at(g, "battery", "initial_soc"), 0.98);
  ck_assert_double_eq(num_at(g, "battery", "soc_min"), 0.05);
  ck_assert_double_eq(num_at(g, "motor", "max_power"), 150e3);
  ck_assert_double_eq_tol(table_at(g, "motor", "efficiency_power", "power_fraction", 0.40), 0.95,
                          1e-12);
  ck_assert_double_eq_tol(table_at(g, "motor", "efficiency_power", "power_fraction", 0.02),
                          0.85 * 0.95 / 0.94, 1e-12);
  ck_assert_double_eq(num_at(g, "aux", "power"), 250);
  json_decref(g);
}
END_TEST

/* Options and notes: --linear writes the 12-point map as it is (at 5 % of
 * rated power the map's own 0.22 + 0.06 / 2 = 0.25, at 5.4 % 0.262); a
 * cycle becomes the driver's trace (UDDS: 1370 points, 91.25 km/h at its
 * peak, 25.3476 m/s); a stop-start row (45, the Fiat Panda) imports with a
 * warning naming the column's cell; a row with veh_override_kg takes it
 * (30, the 2017 Highlander: 2270 kg) with a note. */
typedef struct notes {
  char text[8][DG_ERROR_TEXT_LEN + 32];
  int n;
} notes;

static void collect(const dg_error *e, void *user) {
  notes *ns = user;
  if (ns->n < 8)
    snprintf(ns->text[ns->n++], sizeof ns->text[0], "%d:%d: %s", e->line, e->column, e->text);
}

START_TEST(test_options) {
  char csv[1024], cyc[1024];
  data_path(csv, sizeof csv, "FASTSim_py_veh_db.csv");
  data_path(cyc, sizeof cyc, "udds.csv");
  dg_fastsim_options o = {.row = 1, .linear_efficiency = true, .cycle = cyc};
  dg_error err;
  char *text = dg_import_fastsim_to_json(csv, &o, NULL, NULL, &err);
  ck_assert_msg(text != NULL, "%s", err.text);
  json_t *g = json_loads(text, 0, NULL);
  free(text);
  ck_assert_double_eq_tol(table_at(g, "engine", "efficiency", "power_fraction", 0.05), 0.25, 1e-12);
  ck_assert_double_eq_tol(table_at(g, "engine", "efficiency", "power_fraction", 0.054),
                          0.22 + 0.06 * 0.014 / 0.02, 1e-12);
  json_t *trace = json_object_get(
      json_object_get(json_object_get(json_object_get(g, "blocks"), "driver"), "trace"),
      "speed_kmh");
  ck_assert_int_eq((int)json_array_size(trace), 1370);
  double peak = 0;
  for (size_t i = 0; i < json_array_size(trace); i++)
    peak = fmax(peak, json_number_value(json_array_get(trace, i)));
  ck_assert_double_eq_tol(peak, 3.6 * 25.34757924, 1e-9);
  json_decref(g);

  notes ns = {0};
  o = (dg_fastsim_options){.row = 45};
  text = dg_import_fastsim_to_json(csv, &o, collect, &ns, &err);
  ck_assert_msg(text != NULL, "%s", err.text);
  free(text);
  bool warned = false;
  for (int i = 0; i < ns.n; i++)
    warned |= strstr(ns.text[i], "46:") == ns.text[i] &&
              strstr(ns.text[i], "warning: stop_start: FASTSim turns this engine off at rest");
  ck_assert_msg(warned, "no stop_start warning (%d notes)", ns.n);

  memset(&ns, 0, sizeof ns);
  o = (dg_fastsim_options){.row = 30};
  text = dg_import_fastsim_to_json(csv, &o, collect, &ns, &err);
  ck_assert_msg(text != NULL, "%s", err.text);
  g = json_loads(text, 0, NULL);
  free(text);
  ck_assert_double_eq(num_at(g, "body", "mass"), 2270);
  json_decref(g);
  /* and its empty fc_eff_map takes FASTSim's spark-ignition map, with a note */
  bool mass_note = false, map_note = false;
  for (int i = 0; i < ns.n; i++) {
    mass_note |= strstr(ns.text[i], "note: mass 2270 kg from veh_override_kg") != NULL;
    map_note |= strstr(ns.text[i], "note: fc_eff_map empty: FASTSim's spark-ignition") != NULL;
  }
  ck_assert(mass_note && map_note);
}
END_TEST

/* The mass of each light-duty conventional and electric vehicle of the
 * benchmark against the mass FASTSim's own rolling-resistance energy
 * implies: rrKj = g·crr·m·d over UDDS, d = distMilesFinal·1609.0 m. */
static const int light_duty[] = {1, 2, 3, 4, 5, 6, 7, 8, 17, 18, 19, 20, 21, 22};

START_TEST(test_masses) {
  int sel = light_duty[_i];
  json_t *g = import_json(sel);
  benchmark b;
  read_benchmark(sel, "udds", &b);
  double crr = num_at(g, "body", "rolling_resistance");
  double implied = b.rr * 1e3 / (9.81 * crr * b.miles * M_PER_MILE);
  /* distMilesFinal has 10 digits and FASTSim's trace distance differs from
   * the exact one by 2e-8: 1e-7 */
  ck_assert_msg(fabs(num_at(g, "body", "mass") / implied - 1) < 1e-7, "vehicle %d: %.9g vs %.9g",
                sel, num_at(g, "body", "mass"), implied);
  json_decref(g);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Errors                                                                   */

typedef struct bad_case {
  const char *file;
  int row;
  const char *name;
  const char *want; /* file:line:column: text, the file's base name */
} bad_case;

static const bad_case bad[] = {
    {"invalid/garbage_number.csv", 1, NULL,
     "garbage_number.csv:2:38: drag_coef: expected a number > 0, got \"abc\" (body `cda` = "
     "drag_coef x frontal_area_m2)"},
    {"invalid/negative_area.csv", 1, NULL,
     "negative_area.csv:2:42: frontal_area_m2: must be > 0, got -2.5 (body `cda`)"},
    {"invalid/empty_required.csv", 1, NULL,
     "empty_required.csv:2:318: wheel_radius_m: empty; expected a number > 0 (axles' `radius`)"},
    {"invalid/short_eff_map.csv", 1, NULL,
     "short_eff_map.csv:2:96: fc_eff_map: 11 entries; expected 12"},
    {"invalid/bad_eff_entry.csv", 1, NULL,
     "bad_eff_entry.csv:2:115: fc_eff_map[3]: expected a number > 0 and <= 1, got \"x\""},
    {"invalid/eff_above_one.csv", 1, NULL,
     "eff_above_one.csv:2:133: fc_eff_map[6]: must be > 0 and <= 1, got 1.35"},
    {"invalid/unknown_type.csv", 1, NULL,
     "unknown_type.csv:2:33: veh_pt_type: expected Conv, BEV, HEV or PHEV, got \"Diesel\""},
    {"invalid/bev_percent_mass.csv", 17, NULL,
     "bev_percent_mass.csv:2:250: mc_pe_kg_per_kw: expected a number >= 0, got \"83%\" (the "
     "motor's mass, without veh_override_kg)"},
    {"invalid/bev_soc_window.csv", 17, NULL,
     "bev_soc_window.csv:2:319: max_soc: must be > min_soc 0.9, got 0.5"},
    {"invalid/hybrid.csv", 9, NULL,
     "hybrid.csv:2:24: veh_pt_type: HEV: hybrids are not imported: a FASTSim hybrid is its "
     "supervisory controller"},
    {"invalid/missing_column.csv", 1, NULL,
     "missing_column.csv:1:1: no column \"wheel_rr_coef\" in the header"},
    {"invalid/short_row.csv", 1, NULL,
     "short_row.csv:2:1: this row has 40 fields, the header 79; expected one field per column"},
    {"invalid/unterminated_quote.csv", 1, NULL,
     "unterminated_quote.csv:2:95: unterminated quoted field; expected a closing quote"},
    {"invalid/latin1_name.csv", 1, NULL,
     "latin1_name.csv:2:22: byte 0xE9 is not UTF-8; expected UTF-8 CSV text"},
    {"FASTSim_py_veh_db.csv", 999, NULL,
     "FASTSim_py_veh_db.csv:0:0: no row with selection 999 (the file's selections run from 1 to "
     "68)"},
    {"FASTSim_py_veh_db.csv", -1, "Leaf",
     "FASTSim_py_veh_db.csv:0:0: no vehicle named \"Leaf\" (column \"Scenario name\", 68 rows); "
     "did you mean \"2016 Leaf 24 kWh\", \"2016 Nissan Leaf 30 kWh\""},
    {"FASTSim_py_veh_db.csv", 12, NULL,
     "FASTSim_py_veh_db.csv:13:"}, /* the PHEV Prius Prime, refused (its cell's column) */
    {"FASTSim_py_veh_db.csv", 40, NULL,
     "FASTSim_py_veh_db.csv:41:107: fc_eff_map: empty; FASTSim fills it from its default map "
     "for fc_eff_type Diesel, which this table does not carry"},
    {"no_such_file.csv", 1, NULL, "no_such_file.csv:0:0: cannot open"},
};

START_TEST(test_errors) {
  const bad_case *c = &bad[_i];
  char path[1024];
  data_path(path, sizeof path, c->file);
  dg_fastsim_options o = {.row = c->row, .name = c->name};
  dg_error err;
  char *json = dg_import_fastsim_to_json(path, &o, NULL, NULL, &err);
  ck_assert_msg(json == NULL, "%s imported", c->file);
  const char *base = strrchr(err.file, '/');
  char got[DG_ERROR_FILE_LEN + DG_ERROR_TEXT_LEN + 64];
  snprintf(got, sizeof got, "%s:%d:%d: %s", base ? base + 1 : err.file, err.line, err.column,
           err.text);
  ck_assert_msg(strncmp(got, c->want, strlen(c->want)) == 0, "%s:\n got  %s\n want %s", c->file,
                got, c->want);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Cycles                                                                   */

typedef struct run_result {
  double drag, rr, acc_pos, acc_neg, tire_pos, tire_neg; /* J */
  double dist, fuel, battery;                            /* m, J, J */
} run_result;

/* Vehicle `sel` over `cycle` (backward or forward) with dg_cycle_run. The
 * drag and rolling energies are the vehicle block's; the acceleration and
 * tyre inertia terms are the body's and the wheels' kinetic energies at
 * every second, their rises and falls summed as FASTSim sums its 1 s
 * steps. */
static void run_cycle(int sel, const char *cycle, bool backward, run_result *r) {
  json_t *root = import_json(sel);
  double m = num_at(root, "body", "mass");
  double iw = num_at(root, "front_axle", "inertia"), ir = num_at(root, "rear_axle", "inertia");
  char *text = json_dumps(root, 0);
  json_decref(root);
  char path[1024];
  data_path(path, sizeof path, cycle);
  dg_error err;
  dg_cycle *cyc = dg_cycle_load_file(path, &err);
  ck_assert_msg(cyc != NULL, "%s", err.text);
  dg_cycle_options o;
  dg_cycle_options_init(&o);
  o.graph_json = text;
  o.graph_name = "fastsim";
  o.dt = DT_CYCLE;
  o.backward = backward;
  dg_cycle_run *run = dg_cycle_run_new(&o, cyc, &err);
  ck_assert_msg(run != NULL, "vehicle %d: %s %s", sel, err.path, err.text);
  dg_sim *sim = dg_cycle_run_sim(run);
  int s_v = dg_sim_signal_find(sim, "body.speed");
  int s_wf = dg_sim_signal_find(sim, "front_axle.omega");
  int s_wr = dg_sim_signal_find(sim, "rear_axle.omega");
  memset(r, 0, sizeof *r);
  long per_s = lround(1.0 / DT_CYCLE), total = dg_cycle_run_total_steps(run);
  double ke0 = 0.0, ti0 = 0.0;
  for (long k = 1; k <= total; k++) {
    ck_assert_msg(dg_cycle_run_step(run) == DG_OK, "vehicle %d on %s: %s", sel, cycle,
                  dg_sim_last_error(sim)->text);
    if (k % per_s)
      continue;
    double v = dg_sim_signal(sim, s_v), wf = dg_sim_signal(sim, s_wf),
           wr = dg_sim_signal(sim, s_wr);
    double ke = 0.5 * m * v * v, ti = 0.5 * (iw * wf * wf + ir * wr * wr);
    *(ke > ke0 ? &r->acc_pos : &r->acc_neg) += ke - ke0;
    *(ti > ti0 ? &r->tire_pos : &r->tire_neg) += ti - ti0;
    ke0 = ke;
    ti0 = ti;
  }
  dg_cycle_report rep;
  dg_cycle_run_report(run, &rep);
  r->drag = rep.drag_J;
  r->rr = rep.rolling_J;
  r->dist = rep.distance;
  r->fuel = rep.fuel_J;
  r->battery = rep.battery_J;
  dg_cycle_run_free(run);
  dg_cycle_free(cyc);
  free(text);
}

static const char *const cycles[2] = {"udds", "hwfet"};

static double rel(double ours, double theirs) { return ours / theirs - 1.0; }

/* The road-load terms against FASTSim's (kJ), within tol. */
static void check_road_load(int sel, const char *cycle, const run_result *r, double tol,
                            const char *mode) {
  benchmark b;
  read_benchmark(sel, cycle, &b);
  double d[6] = {rel(r->drag / 1e3, b.drag),         rel(r->rr / 1e3, b.rr),
                 rel(r->acc_pos / 1e3, b.acc_pos),   rel(r->acc_neg / 1e3, b.acc_neg),
                 rel(r->tire_pos / 1e3, b.tire_pos), rel(r->tire_neg / 1e3, b.tire_neg)};
  printf("%s %2d %-5s drag %+.2e rr %+.2e accel %+.2e/%+.2e tyres %+.2e/%+.2e\n", mode, sel, cycle,
         d[0], d[1], d[2], d[3], d[4], d[5]);
  for (int k = 0; k < 6; k++)
    ck_assert_msg(fabs(d[k]) < tol, "%s vehicle %d on %s: term %d off by %.3g", mode, sel, cycle, k,
                  d[k]);
}

/* Backward: the body on the trace. The road-load energies of the exact
 * linear trace differ from FASTSim's 1 s steps at their mean speed only in
 * the drag: ∫v³ over a linear piece against its mean cubed, 0.032 % over
 * UDDS and less over HWFET (scripts/ref/fastsim_roadload.py); the other
 * terms are the same sums. Within 0.1 %. */
START_TEST(test_backward) {
  int sel = light_duty[_i / 2];
  const char *cycle = cycles[_i % 2];
  char file[32];
  snprintf(file, sizeof file, "%s.csv", cycle);
  run_result r;
  run_cycle(sel, file, true, &r);
  check_road_load(sel, cycle, &r, 1e-3, "backward");
}
END_TEST

/* Forward: the imported driver follows the trace within 0.2 km/h; the
 * road-load energies of its run within 1 % of FASTSim's; and the fuel
 * economy (mpgge: miles per 33.7 kWh of fuel) or the consumption (kWh per
 * mile from the battery's store) within 2 % of FASTSim's lab values. */
START_TEST(test_forward) {
  int sel = light_duty[_i / 2];
  const char *cycle = cycles[_i % 2];
  char file[32];
  snprintf(file, sizeof file, "%s.csv", cycle);
  run_result r;
  run_cycle(sel, file, false, &r);
  check_road_load(sel, cycle, &r, 1e-2, "forward");
  json_t *g = import_json(sel);
  const char *full = json_string_value(json_object_get(g, "name"));
  char name[256];
  snprintf(name, sizeof name, "%s", full);
  *strstr(name, " (FASTSim") = '\0';
  json_decref(g);
  double miles = r.dist / M_PER_MILE;
  bool udds = _i % 2 == 0;
  if (r.fuel > 0.0) {
    double mpgge = miles / (r.fuel / J_PER_KWH / KWH_PER_GALLON);
    double lab = read_lab(name, udds ? "labUddsMpgge" : "labHwyMpgge");
    printf("forward %2d %-5s mpgge %.3f lab %.3f (%+.2f %%)\n", sel, cycle, mpgge, lab,
           100 * rel(mpgge, lab));
    ck_assert_msg(fabs(rel(mpgge, lab)) < 0.02, "vehicle %d on %s: %.4g mpgge, lab %.4g", sel,
                  cycle, mpgge, lab);
  } else {
    double kwh_mi = r.battery / J_PER_KWH / miles;
    double lab = read_lab(name, udds ? "labUddsKwhPerMile" : "labHwyKwhPerMile");
    printf("forward %2d %-5s kWh/mi %.5f lab %.5f (%+.2f %%)\n", sel, cycle, kwh_mi, lab,
           100 * rel(kwh_mi, lab));
    /* the i-MiEV (row 21, 49 kW) has no mc_eff_map: FASTSim's default map
     * for a motor between its small and large baselines, rebuilt here, is
     * 0.3 % more efficient than FASTSim's own over UDDS (mcElecKjInAch),
     * and the car regenerates at low power fractions: 1.7 % below
     * FASTSim's on UDDS, the largest difference (docs/import.md) */
    ck_assert_msg(fabs(rel(kwh_mi, lab)) < 0.02, "vehicle %d on %s: %.5g kWh/mi, lab %.5g", sel,
                  cycle, kwh_mi, lab);
  }
}
END_TEST

static Suite *import_fastsim_suite(void) {
  Suite *s = suite_create("import_fastsim");
  TCase *tc = tcase_create("import");
  tcase_add_test(tc, test_conventional);
  tcase_add_test(tc, test_electric);
  tcase_add_test(tc, test_options);
  tcase_add_loop_test(tc, test_masses, 0, (int)(sizeof light_duty / sizeof light_duty[0]));
  suite_add_tcase(s, tc);
  tc = tcase_create("errors");
  tcase_add_loop_test(tc, test_errors, 0, (int)(sizeof bad / sizeof bad[0]));
  suite_add_tcase(s, tc);
  tc = tcase_create("cycles");
  tcase_set_timeout(tc, 600);
  int n = 2 * (int)(sizeof light_duty / sizeof light_duty[0]);
  tcase_add_loop_test(tc, test_backward, 0, n);
  tcase_add_loop_test(tc, test_forward, 0, n);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return dg_test_run(import_fastsim_suite()); }
