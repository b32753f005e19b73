/* The vehicle host, shown: the sedan and the AWD coupe of examples/host
 * launched at full throttle in the planar host (hub coupling), then the
 * sedan in a steady left turn. Run as  host_demo [SOURCE_ROOT]. */
#include "host.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static int launch(const char *root, const char *file, const host_car *car) {
  char path[1024];
  snprintf(path, sizeof path, "%s/examples/host/%s", root, file);
  dg_error err;
  dg_graph *g = dg_graph_load_file(NULL, path, &err);
  if (!g) {
    fprintf(stderr, "%s: %s\n", path, err.text);
    return 1;
  }
  host h;
  if (host_init(&h, car, g, HOST_HUB, &err) != DG_OK) {
    fprintf(stderr, "%s: %s\n", path, err.text);
    dg_graph_free(g);
    return 1;
  }
  h.throttle = 1.0; /* the driver: full throttle from rest, drive */
  const double dt = 1e-3;
  double t100 = NAN, v_prev = 0.0;
  for (long k = 1; k <= 20000 && isnan(t100); k++) {
    if (host_step(&h, dt) != DG_OK) {
      fprintf(stderr, "%s: %s\n", file, dg_sim_last_error(h.sim)->text);
      break;
    }
    if (h.s.vx >= 100 / 3.6)
      t100 = (k - 1 + (100 / 3.6 - v_prev) / (h.s.vx - v_prev)) * dt;
    v_prev = h.s.vx;
  }
  double gear, rpm;
  dg_sim_signal_by_name(h.sim, "gearbox.gear", &gear, NULL);
  dg_sim_signal_by_name(h.sim, "engine.rpm", &rpm, NULL);
  printf("%-22s 0-100 km/h %.2f s, then gear %.0f at %.0f rpm, x %.1f m, rear-left fx %.0f N\n",
         file, t100, gear, rpm, h.s.x, h.w[HOST_RL].fx);
  host_free(&h);
  dg_graph_free(g);
  return isnan(t100);
}

static int turn(const char *root) {
  char path[1024];
  snprintf(path, sizeof path, "%s/examples/host/sedan_rwd_hubs.json", root);
  dg_error err;
  dg_graph *g = dg_graph_load_file(NULL, path, &err);
  host_car car;
  host_car_sedan(&car);
  host h;
  if (!g || host_init(&h, &car, g, HOST_HUB, &err) != DG_OK) {
    fprintf(stderr, "%s: %s\n", path, err.text);
    dg_graph_free(g);
    return 1;
  }
  /* a speed controller on the throttle, a steering controller on the yaw rate */
  const double radius = 40.0, v_target = 12.0, dt = 1e-3;
  double integ = 0.0;
  for (long k = 0; k < 30000; k++) {
    double e = v_target - h.s.vx, th = 0.2 * e + 0.05 * integ;
    if (th > 0.0 && th < 0.3) /* at most 0.3: a RWD car at full throttle in a turn spins */
      integ += e * dt;
    h.throttle = fmin(0.3, fmax(0.0, th));
    h.steer = car.wheelbase / radius + 0.5 * (h.s.vx / radius - h.s.r);
    if (host_step(&h, dt) != DG_OK) {
      fprintf(stderr, "turn at %g s: %s\n", dg_sim_time(h.sim), dg_sim_last_error(h.sim)->text);
      host_free(&h);
      dg_graph_free(g);
      return 1;
    }
  }
  double wi, wo;
  dg_sim_signal_by_name(h.sim, "hub_rl.omega", &wi, NULL);
  dg_sim_signal_by_name(h.sim, "hub_rr.omega", &wo, NULL);
  double t = car.track_rear, geom = (h.s.vx + h.s.r * t / 2) / (h.s.vx - h.s.r * t / 2);
  printf("turn at %.2f m/s, radius %.2f m: rear wheels outer/inner %.5f, track geometry %.5f, "
         "steering %.2f deg\n",
         h.s.vx, h.s.vx / h.s.r, wo / wi, geom, h.steer * 180 / 3.14159265358979);
  host_free(&h);
  dg_graph_free(g);
  return 0;
}

int main(int argc, char **argv) {
  const char *root = argc > 1 ? argv[1] : ".";
  host_car sedan, awd;
  host_car_sedan(&sedan);
  host_car_awd(&awd);
  int rc = launch(root, "sedan_rwd_hubs.json", &sedan);
  rc |= launch(root, "awd_lsd_hubs.json", &awd);
  rc |= turn(root);
  return rc;
}
