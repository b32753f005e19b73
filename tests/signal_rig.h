/* The rig of the signal blocks' suites: signal block "c" drives
 * torque_source "src" on a 1 kg·m² load "ld" with its output, so
 * ld.omega(t) = ∫₀ᵗ c.output dt (RK4 integrates it, through the block's
 * located events), beside the time sources that feed it:
 *   "s"  sine_source, amplitude 2, 1 Hz:  s.value = 2 sin 2πt
 *   "r"  table_source, the ramp r.value = t (0 … 10 s). */
#ifndef DG_TEST_SIGNAL_RIG_H
#define DG_TEST_SIGNAL_RIG_H

#include "testutil.h"

#include <math.h>

#define SIGNAL_RIG_PI 3.14159265358979323846
#define SIGNAL_RIG_DT 1e-3

/* `block` is the JSON object of "c" without its braces. */
#define signal_rig(block)                                                                       \
  dg_test_graphf("{\"drivegraph\":1,\"blocks\":{\"c\":{%s},"                                   \
                 "\"s\":{\"type\":\"sine_source\",\"amplitude\":2,\"frequency\":1},"           \
                 "\"r\":{\"type\":\"table_source\",\"table\":{\"time\":[0,10],"                \
                 "\"value\":[0,10]}},"                                                          \
                 "\"src\":{\"type\":\"torque_source\",\"inputs\":{\"command\":\"c.output\"}}," \
                 "\"ld\":{\"type\":\"load\",\"inertia\":1}},"                                  \
                 "\"connections\":[[\"src.out\",\"ld.in\"]]}",                                 \
                 block)

/* The rig's "c" alone driving the load (no time sources), a graph that
 * must fail to load with `message` at JSON pointer `pointer`; `block` as
 * signal_rig's. */
#define signal_rig_error(pointer, message, block)                                              \
  dg_test_graph_error_at(pointer, message,                                                     \
                         "{\"drivegraph\":1,\"blocks\":{\"c\":{%s},"                         \
                         "\"src\":{\"type\":\"torque_source\",\"inputs\":{\"command\":"     \
                         "\"c.output\"}},\"ld\":{\"type\":\"load\",\"inertia\":1}},"         \
                         "\"connections\":[[\"src.out\",\"ld.in\"]]}",                       \
                         block)

/* Steps the simulation to time t (a multiple of the step from now). */
static inline void signal_rig_run_to(dg_sim *sim, double t) {
  long n = lround((t - dg_sim_time(sim)) / SIGNAL_RIG_DT);
  if (n > 0)
    dg_test_step(sim, (int)n, SIGNAL_RIG_DT);
}

/* A channel as steps: value v[k] from t[k]. */
static inline void signal_rig_steps(dg_sim *sim, const char *name, int n, const double *t,
                                    const double *v) {
  dg_error err;
  int ch = dg_sim_input_find(sim, name);
  ck_assert_msg(ch >= 0, "no channel %s", name);
  ck_assert_msg(dg_sim_set_input_schedule(sim, ch, n, t, v, true, &err) == DG_OK, "%s", err.text);
}

/* ∫₀ᵗ clamp(2 sin 2πτ, lo, hi) dτ in closed form (lo, hi may be ∓inf):
 * split at the crossings 2 sin θ = c (θ = asin(c/2), π − asin(c/2) mod 2π)
 * and integrate each piece's formula. */
static inline double signal_rig_clamped_sine_integral(double t, double lo, double hi) {
  const double w = 2 * SIGNAL_RIG_PI, end = w * t;
  double cut[64];
  int n = 0;
  cut[n++] = 0.0;
  const double levels[2] = {lo, hi};
  for (int l = 0; l < 2; l++) {
    if (!(fabs(levels[l]) < 2.0))
      continue;
    double a = asin(levels[l] / 2);
    for (int k = -1; k <= (int)(end / w) + 1; k++) {
      double c[2] = {a + w * k, SIGNAL_RIG_PI - a + w * k};
      for (int j = 0; j < 2; j++)
        if (c[j] > 0 && c[j] < end && n < 62)
          cut[n++] = c[j];
    }
  }
  cut[n++] = end;
  for (int i = 1; i < n; i++) /* insertion sort */
    for (int j = i; j > 0 && cut[j] < cut[j - 1]; j--) {
      double x = cut[j];
      cut[j] = cut[j - 1];
      cut[j - 1] = x;
    }
  double sum = 0.0;
  for (int i = 0; i + 1 < n; i++) {
    double a = cut[i], b = cut[i + 1], x = 2 * sin((a + b) / 2);
    if (x > hi)
      sum += hi * (b - a);
    else if (x < lo)
      sum += lo * (b - a);
    else
      sum += 2 * (cos(a) - cos(b));
  }
  return sum / w;
}

#endif
