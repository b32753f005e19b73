/* The VPP pattern (docs/host.md): the host owns the chassis and the tyre
 * law, drivegraph the wheel's spin. Each step the host gives the contact
 * patch's velocity and normal load to a hub block and reads the tyre force
 * the hub evaluated at every RK4 stage with the host's own tyre model. Here
 * one driven wheel carries a 300 kg quarter car. */
#include <drivegraph/drivegraph.h>
#include <math.h>
#include <stdio.h>

static const char *graph =
    "{\"drivegraph\": 1, \"blocks\": {"
    " \"motor\": {\"type\": \"torque_source\", \"inertia\": 0.05,"
    "   \"torque_vs_rpm\": {\"rpm\": [0, 3000, 9000], \"torque\": [120, 120, 40]}},"
    " \"gear\": {\"type\": \"gear\", \"ratio\": 8},"
    " \"hub\": {\"type\": \"hub\", \"radius\": 0.3, \"inertia\": 1.0,"
    "   \"inputs\": {\"vx\": \"patch_vx\", \"fz\": \"patch_fz\"}}},"
    " \"connections\": [[\"motor.out\", \"gear.in\"], [\"gear.out\", \"hub.hub\"]]}";

/* The host's tyre: a brush-like law, linear to 20·Fz per unit slip and
 * saturating at µ = 1, from the hub's relaxed slip. */
static double tyre(const dg_tyre_state *s, void *user) {
  (void)user;
  double k = 20.0 * s->slip;
  return s->fz * k / sqrt(1.0 + k * k);
}

int main(void) {
  dg_error err;
  dg_graph *g = dg_graph_load_string(NULL, graph, "vpp_pattern", &err);
  dg_sim *sim = g ? dg_sim_new(g, &err) : NULL;
  if (!sim || dg_sim_set_tyre(sim, "hub", tyre, NULL, &err) != DG_OK) {
    fprintf(stderr, "%s\n", err.text);
    return 1;
  }
  int in_vx = dg_sim_input_find(sim, "patch_vx"), in_fz = dg_sim_input_find(sim, "patch_fz");
  int fx_id = dg_sim_signal_find(sim, "hub.fx");
  const double m = 300.0, dt = 1e-3;
  double v = 0.0;
  for (int k = 0; k < 5000; k++) {
    dg_sim_set_input(sim, in_vx, v);        /* patch kinematics in */
    dg_sim_set_input(sim, in_fz, m * 9.81); /* and the load */
    if (dg_sim_step(sim, dt) != DG_OK) {
      fprintf(stderr, "%s\n", dg_sim_last_error(sim)->text);
      return 1;
    }
    v += dt * dg_sim_signal(sim, fx_id) / m; /* tyre force out */
  }
  double slip;
  dg_sim_signal_by_name(sim, "hub.slip", &slip, NULL);
  printf("vpp pattern: %.2f m/s after 5 s, tyre force %.0f N at slip %.4f\n", v,
         dg_sim_signal(sim, fx_id), slip);
  dg_sim_free(sim);
  dg_graph_free(g);
  return 0;
}
