/* The Chrono pattern (docs/host.md): the host owns the wheels and gives
 * drivegraph their speeds; drivegraph returns the spindle torques. Here
 * the host is one rigid car on two driven wheels (point mass, no slip), the
 * drivetrain a 200 N·m engine, a 4-speed box and an open differential whose
 * sides are prescribed by speed_source blocks following the host's spindle
 * speeds. Each step: spindle speeds in, dg_sim_step, spindle torques
 * (the differential's port torques) out. */
#include <drivegraph/drivegraph.h>
#include <stdio.h>

static const char *graph =
    "{\"drivegraph\": 1, \"blocks\": {"
    " \"engine\": {\"type\": \"engine\", \"inertia\": 0.15, \"idle_rpm\": 800, \"redline_rpm\": 6000,"
    "   \"full_load\": {\"rpm\": [1000, 6000], \"torque\": [200, 200]}},"
    " \"clutch\": {\"type\": \"clutch\", \"mode\": \"auto\", \"max_torque\": 400},"
    " \"box\": {\"type\": \"gearbox\", \"ratios\": [3.5, 2.1, 1.4, 1.0], \"shift_time\": 0,"
    "   \"shift\": {\"mode\": \"auto_rpm\", \"upshift_rpm\": 5500, \"downshift_rpm\": 1500}},"
    " \"diff\": {\"type\": \"differential\", \"ratio\": 4.0},"
    " \"spindle_l\": {\"type\": \"speed_source\", \"inputs\": {\"speed\": \"w_left\"}},"
    " \"spindle_r\": {\"type\": \"speed_source\", \"inputs\": {\"speed\": \"w_right\"}}},"
    " \"connections\": [[\"engine.out\", \"clutch.in\"], [\"clutch.out\", \"box.in\"],"
    "   [\"box.out\", \"diff.in\"], [\"diff.left\", \"spindle_l.in\"],"
    "   [\"diff.right\", \"spindle_r.in\"]]}";

int main(void) {
  dg_error err;
  dg_graph *g = dg_graph_load_string(NULL, graph, "chrono_pattern", &err);
  dg_sim *sim = g ? dg_sim_new(g, &err) : NULL;
  if (!sim) {
    fprintf(stderr, "%s\n", err.text);
    return 1;
  }
  int in_l = dg_sim_input_find(sim, "w_left"), in_r = dg_sim_input_find(sim, "w_right");
  int t_l = dg_sim_signal_find(sim, "diff.left.torque");
  int t_r = dg_sim_signal_find(sim, "diff.right.torque");
  dg_sim_set_input(sim, dg_sim_input_find(sim, "throttle"), 1.0);
  dg_sim_set_input(sim, dg_sim_input_find(sim, "gear"), 1);
  if (dg_sim_start(sim, &err) != DG_OK) {
    fprintf(stderr, "%s\n", err.text);
    return 1;
  }
  /* the host: 1400 kg (plus the wheels' 2 × 1.2 kg·m²) on 0.31 m wheels */
  const double m = 1400.0, J = 1.2, R = 0.31, dt = 1e-3;
  double v = 0.0;
  for (int k = 0; k < 10000; k++) {
    dg_sim_set_input(sim, in_l, v / R); /* spindle speeds in */
    dg_sim_set_input(sim, in_r, v / R);
    if (dg_sim_step(sim, dt) != DG_OK) {
      fprintf(stderr, "%s\n", dg_sim_last_error(sim)->text);
      return 1;
    }
    double torque = dg_sim_signal(sim, t_l) + dg_sim_signal(sim, t_r); /* torques out */
    double drag = 0.4 * v * v;
    v += dt * (torque / R - drag) / (m + 2.0 * J / (R * R));
  }
  double gear;
  dg_sim_signal_by_name(sim, "box.gear", &gear, NULL);
  printf("chrono pattern: %.1f km/h after 10 s, gear %.0f, spindle torques %.1f + %.1f N*m\n",
         3.6 * v, gear, dg_sim_signal(sim, t_l), dg_sim_signal(sim, t_r));
  dg_sim_free(sim);
  dg_graph_free(g);
  return 0;
}
