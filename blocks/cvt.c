/* cvt — a continuously variable transmission whose ratio follows a schedule
 * over its output speed (the Chrono::Vehicle AutomaticTransmissionSimpleCVT
 * model, with a ratio actuator).
 *
 * Kinematics: ω_in = r · ω_out, with the ratio r (in/out) a continuous state.
 * The solver re-assembles the coupled inertia matrix every RK4 substep
 * (DG_CLASS_VARIABLE_KINEMATICS) and adds the inertial force −I·ṙ·ω_out of
 * the changing ratio (dg_topo_link_rate), so a ratio change neither creates
 * nor destroys kinetic energy. Torque: T at `in` reaches `out` as r·η·T when
 * it drives and r·T/η when power flows back.
 *
 * Schedule: the target ratio r*(ω) is the `ratio` table over the output
 * speed { "omega_out": [rad/s...], "ratio": [...] }, linear between points
 * and clamped at the ends (high ratios at low speed for launches).
 *
 * Actuator: the ratio moves toward its target with time constant τ
 * (`time_constant`), and the controller reads the output speed through a
 * first-order filter of time constant τ/4:
 *   ṙ   = (r*(ω_f) − r) / τ,
 *   ω̇_f = (|ω_out| − ω_f) / (τ/4).
 * The filtered speed is a state so that ṙ depends on states only: the
 * solver needs ṙ when it assembles the kinematics of a substep, before the
 * substep's speeds exist. At t = 0, r = r*(0) and ω_f = 0.
 *
 * Signals: omega, omega_out, ratio (r), target (r*(ω_f)), omega_filtered. */
#include <drivegraph/block.h>
#include <math.h>
#include <stdio.h>

enum { PORT_IN, PORT_OUT };
enum { SIG_OMEGA, SIG_OMEGA_OUT, SIG_RATIO, SIG_TARGET, SIG_FILTERED };
enum { STATE_RATIO, STATE_FILTERED, NUM_STATES };

/* The speed filter's time constant as a share of the actuator's. */
#define FILTER_SHARE 0.25

typedef struct cvt_params {
  dg_table1d ratio;
  double efficiency;
  double inertia;
  double time_constant;
} cvt_params;


static const dg_port_def cvt_ports[] = {
    {.name = "in", .dir = DG_PORT_IN, .domain = DG_ROTATIONAL,
     .doc = "input shaft (engine side)"},
    {.name = "out", .dir = DG_PORT_OUT, .domain = DG_ROTATIONAL,
     .doc = "output shaft (driveshaft, road side)"},
    {0},
};

static const dg_param_def cvt_params_table[] = {
    {.key = "ratio", .kind = DG_PARAM_TABLE1D, .offset = offsetof(cvt_params, ratio), .unit = "",
     .doc = "target ratio in/out over the output speed (rad/s): { \"omega_out\": [...], "
            "\"ratio\": [...] }",
     .required = true, .flags = DG_P_MIN_EXCL, .min = 0, .axis = {"omega_out", "ratio"}},
    DG_NUMBER(cvt_params, efficiency, .unit = "", .def = 1.0,
              .flags = DG_P_MIN_EXCL | DG_P_MAX | DG_P_DYNAMICS, .max = 1,
              .doc = "power efficiency"),
    DG_NUMBER(cvt_params, inertia, .unit = "kg*m^2", .def = 0.02, .flags = DG_P_MIN | DG_P_INERTIA,
              .doc = "input-shaft inertia, on `in`"),
    DG_NUMBER(cvt_params, time_constant, .unit = "s", .def = 0.2, .flags = DG_P_MIN_EXCL,
              .doc = "ratio actuator lag (the speed it reads is filtered with a quarter of it)"),
    {0},
};

static const dg_signal_def cvt_signals[] = {
    {.name = "omega", .unit = "rad/s", .doc = "input shaft speed", .port = PORT_IN, .scale = 1},
    {.name = "omega_out", .unit = "rad/s", .doc = "output shaft speed", .port = PORT_OUT,
     .scale = 1},
    {.name = "ratio", .unit = "", .doc = "ratio in/out", .port = DG_SIGNAL_HOOK},
    {.name = "target", .unit = "", .doc = "target ratio at the filtered output speed",
     .port = DG_SIGNAL_HOOK},
    {.name = "omega_filtered", .unit = "rad/s", .doc = "output speed the controller reads",
     .port = DG_SIGNAL_HOOK},
    {0},
};

static void cvt_check(const void *params, dg_check *chk) {
  const cvt_params *p = params;
  for (int i = 0; i < p->ratio.n; i++) {
    if (p->ratio.x[i] >= 0.0)
      continue;
    char path[64];
    snprintf(path, sizeof path, "ratio/omega_out/%d", i);
    dg_check_error(chk, path, "must be >= 0 (got %g)", p->ratio.x[i]);
  }
}

static double cvt_target(const cvt_params *p, double w_filtered) {
  return dg_table1d_eval(&p->ratio, w_filtered);
}

static double cvt_rate(const cvt_params *p, double r, double wf) {
  return (cvt_target(p, wf) - r) / p->time_constant;
}

static int cvt_init(dg_block *self, dg_init *init) {
  const cvt_params *p = self->params;
  double *st = dg_init_state(init);
  st[STATE_RATIO] = cvt_target(p, 0.0);
  st[STATE_FILTERED] = 0.0;
  return 0;
}

/* The states' rates, at the substep's speeds and states. */
static void cvt_torque_downstream(dg_block *self, dg_ctx *ctx) {
  const cvt_params *p = self->params;
  const double *st = dg_block_state(ctx, self);
  double *ds = dg_block_state_rate(ctx, self);
  ds[STATE_RATIO] = cvt_rate(p, st[STATE_RATIO], st[STATE_FILTERED]);
  ds[STATE_FILTERED] = (fabs(dg_port_speed(ctx, self, PORT_OUT)) - st[STATE_FILTERED]) /
                       (FILTER_SHARE * p->time_constant);
}

/* The ratio and its rate at the point being built (a substep's states). */
static void cvt_state_upstream(dg_block *self, dg_topo *topo) {
  const cvt_params *p = self->params;
  const double *st = dg_topo_state(topo, self);
  double r = st[STATE_RATIO], rate = cvt_rate(p, r, st[STATE_FILTERED]);
  static const int out = PORT_OUT;
  dg_topo_link_rate(topo, self, PORT_IN, 1, &out, &r, &rate, p->efficiency);
  dg_topo_inertia(topo, self, PORT_IN, p->inertia);
}

static double cvt_signal(const dg_block *self, const dg_ctx *ctx, int index) {
  const double *st = dg_block_state(ctx, self);
  switch (index) {
  case SIG_RATIO:
    return st[STATE_RATIO];
  case SIG_TARGET:
    return cvt_target(self->params, st[STATE_FILTERED]);
  case SIG_FILTERED:
    return st[STATE_FILTERED];
  default:
    return 0.0;
  }
}

const dg_block_class dg_block_cvt = {
    .abi = DG_BLOCK_ABI,
    .type = "cvt",
    .doc = "Continuously variable transmission: ratio in/out following a schedule over the "
           "output speed through a first-order actuator; efficiency, input inertia.",
    .flags = DG_CLASS_VARIABLE_KINEMATICS,
    .ports = cvt_ports,
    .params = cvt_params_table,
    .params_size = sizeof(cvt_params),
    .signals = cvt_signals,
    .num_states = NUM_STATES,
    .check = cvt_check,
    .init = cvt_init,
    .state_upstream = cvt_state_upstream,
    .torque_downstream = cvt_torque_downstream,
    .signal = cvt_signal,
};
