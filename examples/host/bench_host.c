/* Throughput of the host coupling: N sedan drivetrains (examples/host/
 * sedan_rwd_hubs.json, one loaded graph shared by all) coupled to N planar
 * hosts, each stepped at 1 kHz for S simulated seconds, in one thread, all
 * N advanced step by step together as a simulator steps its vehicles. The
 * drivers: full throttle for 6 s, then part throttle with a slow weave of
 * the steering (so shifts, lock-up and load transfer all happen), each
 * car's phase shifted. Prints the CPU time per host step (thread CPU
 * clock) and the real-time factor per core: simulated seconds of all N
 * cars per CPU second.
 *
 *   bench_host [SOURCE_ROOT [N [SECONDS]]]      (default 100 cars, 20 s) */
#include "host.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double cpu_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double wall_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv) {
  const char *root = argc > 1 ? argv[1] : ".";
  int n = argc > 2 ? atoi(argv[2]) : 100;
  double seconds = argc > 3 ? atof(argv[3]) : 20.0;
  const double dt = 1e-3;
  char path[1024];
  snprintf(path, sizeof path, "%s/examples/host/sedan_rwd_hubs.json", root);
  dg_error err;
  dg_graph *g = dg_graph_load_file(NULL, path, &err);
  if (!g || n < 1) {
    fprintf(stderr, "%s: %s\n", path, g ? "N must be >= 1" : err.text);
    return 1;
  }
  host_car car;
  host_car_sedan(&car);
  host *hosts = calloc((size_t)n, sizeof *hosts);
  for (int i = 0; i < n; i++)
    if (host_init(&hosts[i], &car, g, HOST_HUB, &err) != DG_OK) {
      fprintf(stderr, "host %d: %s\n", i, err.text);
      return 1;
    }
  long steps = lround(seconds / dt);
  double c0 = cpu_now(), w0 = wall_now();
  for (long k = 0; k < steps; k++) {
    double t = (double)k * dt;
    for (int i = 0; i < n; i++) {
      host *h = &hosts[i];
      double phase = 0.37 * i;
      h->throttle = t < 6.0 ? 1.0 : 0.45 + 0.25 * sin(0.5 * t + phase);
      h->steer = t < 6.0 ? 0.0 : 0.03 * sin(0.7 * (t - 6.0) + phase);
      if (host_step(h, dt) != DG_OK) {
        fprintf(stderr, "host %d at %g s: %s\n", i, t, dg_sim_last_error(h->sim)->text);
        return 1;
      }
    }
  }
  double cpu = cpu_now() - c0, wall = wall_now() - w0;
  double vmean = 0.0;
  for (int i = 0; i < n; i++)
    vmean += hosts[i].s.vx / n;
  double per_step = cpu / ((double)steps * n);
  printf("hosts:             %d sedans (examples/host/sedan_rwd_hubs.json, hub coupling), one thread\n", n);
  printf("run:               %.0f s simulated each at dt = %g s (%ld steps), mean final speed %.1f km/h\n",
         seconds, dt, steps, 3.6 * vmean);
  printf("cpu time:          %.3f s (wall %.3f s)\n", cpu, wall);
  printf("per host step:     %.2f us (drivetrain step, tyre callbacks, chassis)\n", 1e6 * per_step);
  printf("real-time factor:  %.2f per core for all %d cars together (%.0f for one car)\n",
         seconds / cpu, n, seconds * n / cpu);
  for (int i = 0; i < n; i++)
    host_free(&hosts[i]);
  free(hosts);
  dg_graph_free(g);
  return 0;
}
