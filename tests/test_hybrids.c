/* A series hybrid and a P2 hybrid built from blocks over the UDDS (the
 * EPA's city cycle, tests/data/udds.csv, 1369 s, 11.99 km), driven by the
 * driver block: the audit closes from the fuel and the battery to the road
 * within 1e-9 of the energy in, every bus balances, and the
 * charge-sustaining controller ends within 0.5 % of its start state of
 * charge (issue 23's acceptance). The series hybrid runs at dt = 2 ms; the
 * P2 hybrid at 1 ms, because the driver's pedal limits switch inside RK4
 * steps (not located: docs/energy.md) and the brake's regeneration at the
 * motor takes them into the mechanics, which the shaft audit's own error
 * follows (1.2e-9 of the energy in over four ECE-15 cycles at 2 ms, 3.1e-10
 * over the UDDS at 1 ms). */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The UDDS trace as the driver's "trace" value (JSON). */
static char *udds_trace(void) {
  char *csv = dg_test_read_source("tests/data/udds.csv");
  size_t cap = 64 * 1024, used = 0;
  char *t = malloc(cap), *v = malloc(cap);
  size_t vu = 0;
  ck_assert(t && v);
  used += (size_t)snprintf(t + used, cap - used, "{\"time\":[");
  vu += (size_t)snprintf(v + vu, cap - vu, "\"speed_kmh\":[");
  char *line = strchr(csv, '\n'); /* past the header */
  int n = 0;
  while (line && line[1]) {
    double s, mps;
    if (sscanf(line + 1, "%lf,%lf", &s, &mps) == 2) {
      used += (size_t)snprintf(t + used, cap - used, "%s%.17g", n ? "," : "", s);
      vu += (size_t)snprintf(v + vu, cap - vu, "%s%.17g", n ? "," : "", 3.6 * mps);
      n++;
    }
    line = strchr(line + 1, '\n');
  }
  ck_assert_int_eq(n, 1370);
  ck_assert(used + vu + 8 < cap);
  snprintf(t + used, cap - used, "],%s]}", v);
  free(v);
  free(csv);
  return t;
}

typedef struct result {
  dg_energy_ledger l;
  double soc0, soc1, distance, fuel_g;
} result;

static result drive_udds(const char *graph, const char *scenario, double dt) {
  char *trace = udds_trace();
  char *json = dg_test_read_source(graph);
  dg_override ov = {"driver.trace", trace};
  dg_error err;
  dg_graph *g = dg_graph_load_overrides(NULL, json, graph, 1, &ov, &err);
  ck_assert_msg(g, "%s: %s %s", graph, err.path, err.text);
  char path[1024];
  dg_test_path(path, sizeof path, scenario);
  dg_scenario *scn = dg_scenario_load_file(path, &err);
  ck_assert_msg(scn, "%s: %s", scenario, err.text);
  dg_sim *sim = dg_test_sim(g);
  dg_driver *drv = dg_driver_new(scn, sim, &err);
  ck_assert_msg(drv, "%s: %s", scenario, err.text);
  result r;
  r.soc0 = dg_test_signal(sim, "battery.soc");
  long n = lround(1369.0 / dt);
  for (long k = 0; k < n; k++) {
    dg_driver_apply(drv, (double)k * dt);
    int rc = dg_sim_step(sim, dt);
    ck_assert_msg(rc == DG_OK, "%s at step %ld: %s", graph, k, dg_sim_last_error(sim)->text);
  }
  r.soc1 = dg_test_signal(sim, "battery.soc");
  r.distance = dg_test_signal(sim, "body.x");
  r.fuel_g = 1e3 * dg_test_signal(sim, "engine.fuel_used");
  dg_sim_energy_ledger(sim, &r.l);
  const dg_graph *gg = dg_sim_graph(sim);
  for (int i = 0; i < dg_graph_block_count(gg); i++) {
    dg_block_energy e;
    ck_assert_int_eq(dg_sim_block_energy(sim, i, &e), DG_OK);
    if (e.ledger)
      ck_assert_msg(fabs(e.error) <= 1e-11 * r.l.energy_in, "%s: %s: ledger error %g J", graph,
                    dg_graph_block_id(gg, i), e.error);
  }
  printf("%s over the UDDS at dt = %g s: %.1f m, fuel %.1f g, SoC %.4f -> %.4f, energy in %.6g J, "
         "balance error %.3g J (%.2g), bus %.3g J\n",
         graph, dt, r.distance, r.fuel_g, r.soc0, r.soc1, r.l.energy_in, r.l.balance_error,
         fabs(r.l.balance_error) / r.l.energy_in, r.l.electric);
  dg_driver_free(drv);
  dg_scenario_free(scn);
  dg_sim_free(sim);
  dg_graph_free(g);
  free(json);
  free(trace);
  return r;
}

static void check(const result *r) {
  ck_assert_msg(fabs(r->l.balance_error) <= 1e-9 * r->l.energy_in, "balance error %.3g of %.6g J",
                r->l.balance_error, r->l.energy_in);
  ck_assert(fabs(r->l.electric) <= 1e-12 * r->l.energy_in);
  ck_assert_double_eq(r->l.work_in_other, 0.0);
  ck_assert_msg(fabs(r->soc1 - r->soc0) <= 0.005, "SoC %g -> %g", r->soc0, r->soc1);
  /* the driver followed the trace: the UDDS is 11.99 km */
  ck_assert_msg(fabs(r->distance - 11990.0) < 0.01 * 11990.0, "distance %g m", r->distance);
  ck_assert(r->fuel_g > 0.0);
}

START_TEST(test_series_udds) {
  result r = drive_udds("graphs/series_hybrid.json", "graphs/scenarios/series_hybrid_city.json", 2e-3);
  check(&r);
}
END_TEST

START_TEST(test_p2_udds) {
  result r = drive_udds("graphs/p2_hybrid_battery.json", "graphs/scenarios/p2_hybrid_city.json", 1e-3);
  check(&r);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("hybrids");
  TCase *tc = tcase_create("udds");
  tcase_set_timeout(tc, 900);
  tcase_add_test(tc, test_series_udds);
  tcase_add_test(tc, test_p2_udds);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return dg_test_run(suite()); }
