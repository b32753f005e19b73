/* A hand-written baseline: the sedan of graphs/bench/sedan_baseline.json as
 * one plain C step function with RK4, no framework, no graph, no hooks.
 *
 * It exists to measure the framework's overhead honestly (the bench program
 * drivegraph-bench, bench/main.c, prints the cost ratio) and to pin its
 * numerics: tests/test_baseline.c runs
 * both over a full-throttle launch with shifts and asserts the same
 * trajectory to 1e-9 relative. The equations are those of blocks/engine.c,
 * gearbox.c (auto_rpm), gear.c, differential.c (open), wheel.c
 * (magic_formula, no brake) and vehicle.c (coast-down road load without a
 * constant term), coupled the way lib/solver.c couples them (see
 * baseline_sedan.c). Keep the graph file and baseline_sedan_defaults in
 * step: a changed number in one is a test failure.
 *
 * Built, with baseline_axle.c, into the static library `dgbaseline`
 * (bench/meson.build), which the bench program and the baseline suites
 * link; it is not part of libdrivegraph or of the drivegraph tool. */
#ifndef DG_BASELINE_SEDAN_H
#define DG_BASELINE_SEDAN_H

#include <stdbool.h>

/* The "name" of graphs/bench/sedan_baseline.json: drivegraph-bench
 * recognizes the baseline's graph by it. */
#define BASELINE_SEDAN_NAME \
  "Sedan baseline: engine, 6-speed automatic, open differential, magic-formula tyres"
#define BASELINE_SEDAN_GRAPH "graphs/bench/sedan_baseline.json"

enum { BL_RL, BL_RR, BL_FL, BL_FR, BL_WHEELS }; /* driven rear wheels first */
#define BL_MAP_RPM 5
#define BL_MAP_THROTTLE 3
#define BL_GEARS 6

typedef struct baseline_sedan_params {
  /* engine: torque map rows per throttle breakpoint, idle control, limiter */
  double engine_inertia;
  double idle_rpm, redline_rpm, limiter_hysteresis_rpm, idle_gain;
  double map_rpm[BL_MAP_RPM], map_throttle[BL_MAP_THROTTLE];
  double map_torque[BL_MAP_THROTTLE][BL_MAP_RPM];
  /* gearbox (auto_rpm), final drive, open differential (ratio 1, split 0.5) */
  double ratios[BL_GEARS];
  double gearbox_efficiency, gearbox_inertia, shift_time, upshift_rpm, downshift_rpm;
  double final_ratio, final_efficiency;
  double diff_inertia;
  /* wheels (BL_RL ...) and their magic-formula tyres */
  double radius[BL_WHEELS], wheel_inertia[BL_WHEELS];
  double B, C, D, E, relaxation_length, damping_ratio;
  /* body: coast-down road load F = f1 v + f2 v|v| */
  double mass, wheelbase, cg_to_front, cg_height, f1, f2, gravity;
} baseline_sedan_params;

/* The numbers of graphs/bench/sedan_baseline.json (and the blocks'
 * defaults for what the file leaves out). */
void baseline_sedan_defaults(baseline_sedan_params *p);

typedef struct baseline_sedan {
  baseline_sedan_params p;
  /* state */
  double t;
  double w[BL_WHEELS]; /* hub speeds (rad/s) */
  double v;            /* body speed (m/s) */
  double we;           /* engine speed (rad/s): a DOF while shifting */
  double kappa[BL_WHEELS];
  double x;            /* position (m) */
  int gear;            /* engaged gear, the target while shifting */
  bool shifting, limiter;
  int kidx;            /* the meshes' direction of the last segment: 0 engine drives */
  double shift_end, accel;
  long steps, topology_changes;
  long events;         /* power reversals located */
  double last_event;
  /* derived once, and per mode */
  double mf_peak;                  /* largest |MF| within the slip limit */
  double a;                        /* engine speed per driven-wheel speed, r_g r_fd / 2 */
  double eff;                      /* efficiency engine → wheels in gear */
  double m_ll, m_lr, m_rr;         /* inverse of the driven wheels' 2×2 inertia block */
  double k[2];                     /* the meshes' factor: η (engine drives), 1/η (wheels drive) */
  double k_ll[2], k_lr[2], k_rr[2]; /* the same block's inverse with the engine's term × k */
} baseline_sedan;

/* At rest in first gear, like a new dg_sim of the graph. */
void baseline_sedan_init(baseline_sedan *s, const baseline_sedan_params *p);
/* One RK4 step of dt with the driver throttle (0..1) held over the step,
 * with the gearbox's and the limiter's decisions before and after it. */
void baseline_sedan_step(baseline_sedan *s, double throttle, double dt);
/* Engine speed in the current mode (rad/s). */
double baseline_sedan_engine_speed(const baseline_sedan *s);

#endif
