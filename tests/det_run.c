/* det_run GRAPH SCENARIO DT OUT.csv — runs a graph with a scenario at step
 * DT for the scenario's duration (or until its stop condition) and writes
 * every signal at every output interval with %.17g, which round-trips each
 * double exactly: two CSVs are equal as text only if every value is equal
 * to the last bit.
 *
 * Built twice by tests/meson.build, against the static and the shared
 * library; test_determinism.sh compares runs of both. Exit 0, or 1 with the
 * error on stderr. */
#include <drivegraph/drivegraph.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static int fail(const dg_error *err) {
  char line[1024];
  dg_error_format(err, line, sizeof line);
  fprintf(stderr, "det_run: %s\n", line);
  return 1;
}

int main(int argc, char **argv) {
  if (argc != 5) {
    fprintf(stderr, "usage: det_run GRAPH SCENARIO DT OUT.csv\n");
    return 2;
  }
  double dt = atof(argv[3]);
  dg_error err;
  dg_graph *g = dg_graph_load_file(NULL, argv[1], &err);
  if (!g)
    return fail(&err);
  dg_scenario *scn = dg_scenario_load_file(argv[2], &err);
  if (!scn)
    return fail(&err);
  dg_sim *sim = dg_sim_new(g, &err);
  if (!sim)
    return fail(&err);
  dg_driver *drv = dg_driver_new(scn, sim, &err);
  if (!drv)
    return fail(&err);
  double duration = dg_scenario_duration(scn), interval = dg_scenario_output_interval(scn);
  if (isnan(duration))
    duration = 10.0;
  long every = isnan(interval) ? 10 : lround(interval / dt);
  if (every < 1)
    every = 1;
  long steps = (long)ceil(duration / dt - 1e-9);
  FILE *out = fopen(argv[4], "w");
  if (!out) {
    perror(argv[4]);
    return 1;
  }
  int n = dg_sim_signal_count(sim);
  fputs("t", out);
  for (int i = 0; i < n; i++)
    fprintf(out, ",%s", dg_sim_signal_name(sim, i));
  fputc('\n', out);
  int rc = 0;
  for (long k = 0; k <= steps; k++) {
    if (k % every == 0 || k == steps) {
      fprintf(out, "%.17g", dg_sim_time(sim));
      for (int i = 0; i < n; i++)
        fprintf(out, ",%.17g", dg_sim_signal(sim, i));
      fputc('\n', out);
    }
    if (k == steps || dg_driver_should_stop(drv))
      break;
    dg_driver_apply(drv, (double)k * dt);
    if (dg_sim_step(sim, dt) != DG_OK) {
      rc = fail(dg_sim_last_error(sim));
      break;
    }
  }
  dg_energy e;
  dg_sim_energy(sim, &e);
  fprintf(out, "# energy %.17g %.17g %.17g %.17g %.17g %.17g\n", e.kinetic, e.work_in, e.work_out,
          e.efficiency_loss, e.impact_loss, e.balance_error);
  if (fclose(out) != 0)
    rc = 1;
  dg_driver_free(drv);
  dg_sim_free(sim);
  dg_scenario_free(scn);
  dg_graph_free(g);
  return rc;
}
