/* Fuzz target: the scenario loader and the driver that binds a scenario to a
 * simulation.
 *
 * The input is a scenario file. Properties:
 * - loading never crashes, leaks or hangs; a failure is a well-formed error;
 * - a scenario that loads reports its timing as NaN or a finite value > 0;
 * - binding it to an example graph (picked from the text's hash, so every
 *   graph gets scenarios) succeeds or fails with a well-formed error naming
 *   the scenario file;
 * - a bound scenario drives a short run (at most 300 steps, at the file's dt
 *   clamped to [1e-4, 1e-2] s) that stays finite or stops with an error. */
#include "fuzz_common.h"

static fuzz_graphs graphs;

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  fuzz_load_graphs(&graphs);
  return 0;
}

static void check_timing(double v, const char *what) {
  FUZZ_CHECK(isnan(v) || (isfinite(v) && v > 0.0), "scenario %s is %g", what, v);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (graphs.n == 0)
    LLVMFuzzerInitialize(NULL, NULL);
  char *text = fuzz_text(data, size);
  dg_error err;
  dg_scenario *scn = dg_scenario_load_string(text, "fuzz_scenario.json", &err);
  if (!scn) {
    fuzz_check_error(&err, "scenario load");
    FUZZ_CHECK(strcmp(err.file, "fuzz_scenario.json") == 0, "error names file '%s'", err.file);
    free(text);
    return 0;
  }
  check_timing(dg_scenario_duration(scn), "duration");
  check_timing(dg_scenario_dt(scn), "dt");
  check_timing(dg_scenario_output_interval(scn), "output_interval");

  unsigned hash = 2166136261u; /* FNV-1a */
  for (size_t i = 0; i < size; i++)
    hash = (hash ^ data[i]) * 16777619u;
  int gi = (int)(hash % (unsigned)graphs.n);
  const char *gname = graphs.name[gi];
  dg_sim *sim = dg_sim_new(graphs.g[gi], &err);
  FUZZ_CHECK(sim != NULL, "%s: no simulation: %s", gname, err.text);
  dg_driver *drv = dg_driver_new(scn, sim, &err);
  if (!drv) {
    fuzz_check_error(&err, "driver");
    FUZZ_CHECK(strcmp(err.file, "fuzz_scenario.json") == 0, "driver error names file '%s'",
               err.file);
  } else {
    double dt = dg_scenario_dt(scn);
    dt = isnan(dt) ? 0.001 : fmin(fmax(dt, 1e-4), 1e-2);
    double duration = dg_scenario_duration(scn);
    long steps = isnan(duration) ? 300 : (long)fmin(300.0, ceil(duration / dt));
    for (long k = 0; k < steps && !dg_driver_should_stop(drv); k++) {
      dg_driver_apply(drv, (double)k * dt);
      int rc = dg_sim_step(sim, dt);
      if (rc != DG_OK) {
        fuzz_check_step_error(sim, rc, gname);
        break;
      }
      fuzz_check_finite(sim, gname);
    }
    /* going back in time is allowed and exact */
    dg_driver_apply(drv, 0.0);
    dg_driver_free(drv);
  }
  dg_sim_free(sim);
  dg_scenario_free(scn);
  free(text);
  return 0;
}
