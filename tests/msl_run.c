/* msl_run GRAPH SCENARIO DT SIGNALS [--no-events] — the runner of the
 * Modelica regression suite (tests/test_msl.py): runs a graph with a
 * scenario at step DT for the scenario's duration and writes to stdout a
 * CSV "t,<signal>,..." (SIGNALS comma-separated) with %.17g, one row at
 * t = 0 and one at the end of every step, as `drivegraph sim --digits 17`
 * with an output interval of DT writes them, and one more row at the last
 * event the solver located inside a step (a clutch sticking, a brake
 * letting go, a freewheel locking), unless --no-events.
 *
 * Why the event rows. The regression compares curves: Modelica tools write
 * their results at every event as well as on their output grid (the MSL's
 * references have a row at each event, twice: its left and right values),
 * and the tube rule interpolates between rows. A run that writes only step
 * ends draws a straight line across a step with an event in it, and the
 * kink of the solution at the event (a speed that stops falling where a
 * brake holds) is cut off: at dt = 1e-3 that alone takes a friction model
 * out of the tube although the solver has the solution at the event. The
 * row is the solver's own state at that time, taken without changing the
 * run: before each step the runner takes a snapshot; when the step located
 * an event (dg_sim_event_count grew), it restores the snapshot, steps from
 * the step's start to the event's time (dg_sim_last_event_time) — the
 * same RK4 segment the step integrated up to its event — writes that
 * state, restores the snapshot again and takes the step as before, which
 * gives the run bit for bit (tests/test_msl.py compares the step rows with
 * a run with --no-events). A step with several events has a row at the
 * last one only.
 *
 * Exit 0, 1 with the error on stderr, 2 for a usage error or an unknown
 * signal. */
#include <drivegraph/drivegraph.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SIGNALS 64

static int fail(const char *what, const dg_error *err) {
  char line[1024];
  dg_error_format(err, line, sizeof line);
  fprintf(stderr, "msl_run: %s: %s\n", what, line);
  return 1;
}

static void row(const dg_sim *sim, double t, const int *ids, int n) {
  printf("%.17g", t);
  for (int i = 0; i < n; i++)
    printf(",%.17g", dg_sim_signal(sim, ids[i]));
  putchar('\n');
}

int main(int argc, char **argv) {
  bool events = true;
  if (argc == 6 && strcmp(argv[5], "--no-events") == 0)
    events = false;
  else if (argc != 5) {
    fprintf(stderr, "usage: msl_run GRAPH SCENARIO DT SIGNALS [--no-events]\n");
    return 2;
  }
  char *end;
  double dt = strtod(argv[3], &end);
  if (*end != '\0' || !(dt > 0.0)) {
    fprintf(stderr, "msl_run: DT must be a number > 0 (got '%s')\n", argv[3]);
    return 2;
  }
  dg_error err;
  dg_graph *g = dg_graph_load_file(NULL, argv[1], &err);
  if (!g)
    return fail(argv[1], &err);
  dg_scenario *scn = dg_scenario_load_file(argv[2], &err);
  if (!scn)
    return fail(argv[2], &err);
  dg_sim *sim = dg_sim_new(g, &err);
  if (!sim)
    return fail(argv[1], &err);
  dg_driver *drv = dg_driver_new(scn, sim, &err);
  if (!drv)
    return fail(argv[2], &err);

  int ids[MAX_SIGNALS], n = 0;
  char *names = strdup(argv[4]);
  printf("t");
  for (char *s = strtok(names, ","); s; s = strtok(NULL, ",")) {
    if (n == MAX_SIGNALS) {
      fprintf(stderr, "msl_run: more than %d signals\n", MAX_SIGNALS);
      return 2;
    }
    ids[n] = dg_sim_signal_find(sim, s);
    if (ids[n] < 0) {
      fprintf(stderr, "msl_run: no signal '%s'\n", s);
      return 2;
    }
    printf(",%s", s);
    n++;
  }
  putchar('\n');
  free(names);

  double duration = dg_scenario_duration(scn);
  long steps = lround(duration / dt);
  int rc = 0;
  row(sim, dg_sim_time(sim), ids, n);
  for (long k = 0; k < steps && rc == 0; k++) {
    double t0 = dg_sim_time(sim);
    dg_snapshot *snap = NULL;
    if (events) {
      snap = dg_sim_snapshot(sim, &err);
      if (!snap)
        return fail("snapshot", &err);
    }
    long ev0 = dg_sim_event_count(sim);
    dg_driver_apply(drv, (double)k * dt);
    if (dg_sim_step(sim, dt) != DG_OK) {
      rc = fail("step", dg_sim_last_error(sim));
      dg_snapshot_free(snap);
      break;
    }
    double te = dg_sim_last_event_time(sim);
    if (events && dg_sim_event_count(sim) > ev0 && te > t0 + 1e-9 * dt &&
        te < t0 + dt * (1.0 - 1e-9)) {
      /* the state at the event: the step's segment up to it, again */
      if (dg_sim_restore(sim, snap, &err) != DG_OK)
        return fail("restore", &err);
      dg_driver_apply(drv, (double)k * dt);
      if (dg_sim_step(sim, te - t0) != DG_OK) {
        rc = fail("step to an event", dg_sim_last_error(sim));
        dg_snapshot_free(snap);
        break;
      }
      row(sim, dg_sim_time(sim), ids, n);
      /* and the step as it was taken */
      if (dg_sim_restore(sim, snap, &err) != DG_OK)
        return fail("restore", &err);
      dg_driver_apply(drv, (double)k * dt);
      if (dg_sim_step(sim, dt) != DG_OK) {
        rc = fail("step", dg_sim_last_error(sim));
        dg_snapshot_free(snap);
        break;
      }
    }
    dg_snapshot_free(snap);
    row(sim, dg_sim_time(sim), ids, n);
  }
  if (fflush(stdout) != 0)
    rc = 1;
  dg_driver_free(drv);
  dg_sim_free(sim);
  dg_scenario_free(scn);
  dg_graph_free(g);
  return rc;
}
