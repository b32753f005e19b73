/* A hand-written baseline: the axle rig of graphs/bench/axle_baseline.json
 * as one plain C step function with RK4, no framework, no graph, no hooks.
 *
 * The smallest system where the framework's coupling is not trivial: a
 * torque source behind a final drive and an open differential, two wheel
 * loads, two DOFs with a full 2×2 inertia matrix. drivegraph-bench prints
 * the framework/baseline cost ratio for it (the framework's fixed cost per
 * step, without tyres or mode changes to hide behind), and
 * tests/test_baseline_axle.c runs both over a launch and asserts the same
 * trajectory at every step to 1e-9 relative. The equations are those of
 * blocks/torque_source.c (torque_vs_rpm), gear.c (efficiency 1),
 * differential.c (open, ratio 1, split 0.5) and load.c (c0 = 0), coupled the
 * way lib/solver.c couples them (see baseline_axle.c). Keep the graph file
 * and baseline_axle_defaults in step: a changed number in one is a test
 * failure.
 *
 * Built, with baseline_sedan.c, into the static library `dgbaseline`
 * (bench/meson.build), which the bench program and the baseline suites
 * link; it is not part of libdrivegraph or of the drivegraph tool. */
#ifndef DG_BASELINE_AXLE_H
#define DG_BASELINE_AXLE_H

/* The "name" of graphs/bench/axle_baseline.json: drivegraph-bench
 * recognizes the baseline's graph by it. */
#define BASELINE_AXLE_NAME \
  "Axle baseline: torque source, 13.94 final drive, open differential, two viscous wheel loads"
#define BASELINE_AXLE_GRAPH "graphs/bench/axle_baseline.json"

enum { BA_LEFT, BA_RIGHT, BA_WHEELS };
#define BA_CURVE 3 /* breakpoints of the full-load curve */

typedef struct baseline_axle_params {
  /* source: inertia and full-load curve T(rpm), linear, held at the ends */
  double source_inertia;
  double curve_rpm[BA_CURVE], curve_torque[BA_CURVE];
  /* final drive (lossless; inertia referred to its input shaft) and open
   * differential (ratio 1, split 0.5; carrier inertia on its input) */
  double final_ratio, final_inertia;
  double diff_inertia;
  /* wheel loads T = −(c1 ω + c2 ω|ω|) */
  double wheel_inertia[BA_WHEELS], c1[BA_WHEELS], c2[BA_WHEELS];
} baseline_axle_params;

/* The numbers of graphs/bench/axle_baseline.json (and the blocks'
 * defaults for what the file leaves out). */
void baseline_axle_defaults(baseline_axle_params *p);

typedef struct baseline_axle {
  baseline_axle_params p;
  /* state */
  double t;
  double w[BA_WHEELS]; /* wheel speeds (rad/s): the two DOFs */
  long steps;
  /* derived once */
  double a;                /* source speed per wheel speed, r/2 */
  double m_ll, m_lr, m_rr; /* inverse of the 2×2 inertia matrix */
} baseline_axle;

/* At rest, like a new dg_sim of the graph. */
void baseline_axle_init(baseline_axle *s, const baseline_axle_params *p);
/* One RK4 step of dt. The source ignores the driver's inputs, so there are
 * none: the launch is the source's full-load curve from rest. */
void baseline_axle_step(baseline_axle *s, double dt);
/* Source (motor) shaft speed (rad/s). */
double baseline_axle_source_speed(const baseline_axle *s);

#endif
