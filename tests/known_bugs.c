/* known_bugs CASE — minimal reproductions of solver and block bugs on
 * record, each asserting the correct result (a closed form). tests/meson.build
 * registers every case as a meson test with should_fail: true, so the suite
 * passes while the bug is there and reports an unexpected pass once it is
 * fixed: then move the case into the block's Check suite as a regular test
 * and remove it here. Exit 0 when the result is right, 1 when it is not
 * (the bug), 2 for a usage or load error.
 *
 * All cases are about a friction hold that cannot be kept at the start of
 * a step segment (its held torque is already beyond its capacity there):
 * the element keeps the hold for the whole segment and lets go at its end,
 * one step late (issue 22, item 3, "holds decided at the segment's
 * start"). Found by the Modelica regression suite (tests/test_msl.py,
 * docs/msl.md): ModelicaTest.Rotational.TestFriction's bearing friction
 * (load_reversal: within the tube, at 0.82 of it at dt = 1e-3) and
 * Modelica.Mechanics.Rotational.Examples.OneWayClutch (freewheel_release:
 * out of the tube at dt = 1e-3).
 *
 *   load_reversal     1 kg*m^2 at 1 rad/s, a constant -5 N*m, Coulomb
 *                     friction c0 = 1 N*m (load): it slides to rest at
 *                     t = 1/6 s and, the drive exceeding c0, back at once:
 *                     w = -4 (t - 1/6). At dt = 0.1 s the stop is located
 *                     inside the second step and the load holds the shaft
 *                     at rest to 0.2 s: w(0.2) = 0 instead of -2/15,
 *                     w(0.4) = -0.8 instead of -14/15.
 *   brake_reversal    the same with a friction brake of 1 N*m.
 *   clutch_reversal   a (1 kg*m^2, 1 rad/s, -5 N*m) -> clutch of 1 N*m ->
 *                     b (1 kg*m^2, at rest): the slip closes at t = 1/7 s;
 *                     holding would take 2.5 N*m, so the slip reverses at
 *                     once: a = 1/7 - 4 (t - 1/7), b = 1/7 - (t - 1/7).
 *                     The clutch holds to 0.2 s instead.
 *   freewheel_release a freewheel and a clutch of 10 N*m in parallel
 *                     between a and b (1 kg*m^2 each, at rest), 1 N*m
 *                     pulling b ahead (the freewheel's overrun direction):
 *                     the clutch holds the pair together (0.5 rad/s^2)
 *                     until its engagement drops to 0 at 0.5 s, then b
 *                     runs ahead: w_b - w_a = t - 0.5. The freewheel,
 *                     locked with no torque, takes the reversed torque
 *                     over the step from 0.5 s and lets go at 0.6 s.
 *   overloaded_start  2 N*m on 1 kg*m^2 at rest against c0 = 1 N*m (load):
 *                     w = t from t = 0; the load holds the first step. */
#include <drivegraph/drivegraph.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#define DT 0.1
#define TOL 1e-9

typedef struct expect {
  double t;
  const char *signal;
  double value;
} expect;

typedef struct bug_case {
  const char *name;
  const char *graph;
  const char *scenario;
  int n;
  expect e[4];
} bug_case;

static const char *const load_graph =
    "{\"drivegraph\":1,\"blocks\":{\"drive\":{\"type\":\"torque_source\",\"torque\":-5},"
    "\"shaft\":{\"type\":\"inertia\",\"inertia\":1},\"friction\":{\"type\":\"load\",\"c0\":1}},"
    "\"connections\":[[\"drive.out\",\"shaft.in\"],[\"shaft.out\",\"friction.in\"]]}";
static const char *const brake_graph =
    "{\"drivegraph\":1,\"blocks\":{\"drive\":{\"type\":\"torque_source\",\"torque\":-5},"
    "\"shaft\":{\"type\":\"inertia\",\"inertia\":1},"
    "\"friction\":{\"type\":\"brake\",\"max_torque\":1,\"static_factor\":1}},"
    "\"connections\":[[\"drive.out\",\"shaft.in\"],[\"shaft.out\",\"friction.in\"]]}";
static const char *const clutch_graph =
    "{\"drivegraph\":1,\"blocks\":{\"drive\":{\"type\":\"torque_source\",\"torque\":-5},"
    "\"a\":{\"type\":\"inertia\",\"inertia\":1},"
    "\"c\":{\"type\":\"clutch\",\"max_torque\":1,\"static_factor\":1,\"inertia\":0},"
    "\"b\":{\"type\":\"inertia\",\"inertia\":1}},"
    "\"connections\":[[\"drive.out\",\"a.in\"],[\"a.out\",\"c.in\"],[\"c.out\",\"b.in\"]]}";
static const char *const freewheel_graph =
    "{\"drivegraph\":1,\"blocks\":{\"a\":{\"type\":\"inertia\",\"inertia\":1},"
    "\"fw\":{\"type\":\"one_way_clutch\",\"inertia\":0},"
    "\"c\":{\"type\":\"clutch\",\"max_torque\":10,\"static_factor\":1,\"inertia\":0,"
    "\"inputs\":{\"engagement\":\"e\"}},"
    "\"b\":{\"type\":\"inertia\",\"inertia\":1},\"pull\":{\"type\":\"torque_source\",\"torque\":1}},"
    "\"connections\":[[\"a.out\",\"fw.in\",\"c.in\"],[\"fw.out\",\"c.out\",\"b.in\",\"pull.out\"]]}";
static const char *const start_graph =
    "{\"drivegraph\":1,\"blocks\":{\"drive\":{\"type\":\"torque_source\",\"torque\":2},"
    "\"shaft\":{\"type\":\"inertia\",\"inertia\":1},\"friction\":{\"type\":\"load\",\"c0\":1}},"
    "\"connections\":[[\"drive.out\",\"shaft.in\"],[\"shaft.out\",\"friction.in\"]]}";

static const bug_case cases[] = {
    {"load_reversal", load_graph, "{\"duration\":0.4,\"initial\":{\"shaft.omega\":1}}", 2,
     {{0.2, "shaft.omega", -2.0 / 15.0}, {0.4, "shaft.omega", -14.0 / 15.0}}},
    {"brake_reversal", brake_graph, "{\"duration\":0.4,\"initial\":{\"shaft.omega\":1}}", 2,
     {{0.2, "shaft.omega", -2.0 / 15.0}, {0.4, "shaft.omega", -14.0 / 15.0}}},
    {"clutch_reversal", clutch_graph,
     "{\"duration\":0.4,\"initial\":{\"a.omega\":1,\"b.omega\":0}}", 4,
     {{0.2, "a.omega", 1.0 / 7.0 - 4.0 * (0.2 - 1.0 / 7.0)},
      {0.2, "b.omega", 1.0 / 7.0 - (0.2 - 1.0 / 7.0)},
      {0.4, "a.omega", 1.0 / 7.0 - 4.0 * (0.4 - 1.0 / 7.0)},
      {0.4, "b.omega", 1.0 / 7.0 - (0.4 - 1.0 / 7.0)}}},
    {"freewheel_release", freewheel_graph,
     "{\"duration\":0.8,\"inputs\":{\"e\":[[0,1],[0.5,1],[0.5,0]]},"
     "\"initial\":{\"a.omega\":0,\"b.omega\":0}}",
     4,
     {{0.6, "a.omega", 0.25}, {0.6, "b.omega", 0.35}, {0.8, "a.omega", 0.25},
      {0.8, "b.omega", 0.55}}},
    {"overloaded_start", start_graph, "{\"duration\":0.3}", 2,
     {{0.1, "shaft.omega", 0.1}, {0.3, "shaft.omega", 0.3}}},
};

static int load_error(const char *what, const dg_error *err) {
  char line[1024];
  dg_error_format(err, line, sizeof line);
  fprintf(stderr, "known_bugs: %s: %s\n", what, line);
  return 2;
}

int main(int argc, char **argv) {
  const bug_case *c = NULL;
  for (size_t i = 0; argc == 2 && i < sizeof cases / sizeof cases[0]; i++)
    if (strcmp(argv[1], cases[i].name) == 0)
      c = &cases[i];
  if (!c) {
    fprintf(stderr, "usage: known_bugs CASE (load_reversal, brake_reversal, clutch_reversal, "
                    "freewheel_release, overloaded_start)\n");
    return 2;
  }
  dg_error err;
  dg_graph *g = dg_graph_load_string(NULL, c->graph, c->name, &err);
  if (!g)
    return load_error("graph", &err);
  dg_scenario *scn = dg_scenario_load_string(c->scenario, c->name, &err);
  if (!scn)
    return load_error("scenario", &err);
  dg_sim *sim = dg_sim_new(g, &err);
  if (!sim)
    return load_error("simulation", &err);
  dg_driver *drv = dg_driver_new(scn, sim, &err);
  if (!drv)
    return load_error("scenario", &err);
  long steps = lround(dg_scenario_duration(scn) / DT);
  int wrong = 0;
  for (long k = 0; k < steps; k++) {
    dg_driver_apply(drv, (double)k * DT);
    if (dg_sim_step(sim, DT) != DG_OK)
      return load_error("step", dg_sim_last_error(sim));
    for (int i = 0; i < c->n; i++) {
      if (fabs(dg_sim_time(sim) - c->e[i].t) > 1e-12)
        continue;
      double v = NAN;
      dg_sim_signal_by_name(sim, c->e[i].signal, &v, &err);
      bool ok = fabs(v - c->e[i].value) <= TOL;
      printf("%s: %s at t = %g s: %.12g, closed form %.12g%s\n", ok ? "ok" : "WRONG",
             c->e[i].signal, c->e[i].t, v, c->e[i].value, ok ? "" : " (the bug)");
      wrong += !ok;
    }
  }
  dg_driver_free(drv);
  dg_sim_free(sim);
  dg_scenario_free(scn);
  dg_graph_free(g);
  return wrong ? 1 : 0;
}
