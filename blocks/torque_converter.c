/* torque_converter — hydrodynamic torque converter (pump, turbine, stator)
 * with an optional lock-up clutch.
 *
 * Ports: `in` is the pump (impeller, engine side), `out` the turbine. The
 * pump and turbine inertias sit on those ports. Speed ratio
 * SR = ω_t/ω_p (reported as 0 while ω_p <= 0).
 *
 * Fluid torques, with K(SR) the capacity factor (rad/s/sqrt(N·m)) and
 * TR(SR) the torque ratio, both tables interpolated linearly and clamped:
 *   ω_p <= 0:  T_p = T_t = 0 (no torque with the pump stopped or turning
 *              backwards)
 *   SR <= 1:   T_p = f·(ω_p/K(SR))²,        T_t = TR(SR)·T_p
 *   SR > 1:    T_p = −f·(ω_p/K(2 − SR))²,   T_t = T_p
 * with f = min(1, |1 − SR| / 0.01): nothing flows at SR = 1, so the torque
 * fades to 0 over the last 1 % of speed ratio on either side (continuous
 * for any table, also one with a finite K(1)).
 * T_p is the torque the pump absorbs (−T_p is applied at `in`), T_t the
 * torque delivered to the turbine (+T_t at `out`). SR > 1 is reverse flow
 * (engine braking: the turbine drives the pump; the stator freewheels, so
 * TR = 1 and both torques change sign), mirrored about SR = 1. A turbine
 * turning backwards (SR < 0) gets the stall values, as do SR > 2.
 * The difference (TR − 1)·T_p is the stator's reaction on the housing, so
 * below the coupling point the converter multiplies torque and momentum is
 * not conserved; the power it dissipates is T_p·ω_p·(1 − TR·SR), which
 * `check` keeps >= 0 (TR·SR <= 1 on 0 <= SR <= 1).
 *
 * Default tables, a typical three-element converter (engine stall speed
 * K(0)·sqrt(T) ≈ 1750 rpm for 200 N·m):
 *   capacity_factor: SR 0    0.3  0.5  0.6  0.7  0.8  0.9  0.95 0.98 0.99 0.995 0.999 1
 *                    K  13   13.5 14.2 14.8 15.7 17.2 21   28   44   63   89    198   2000
 *     K rises toward coupling like 1/sqrt(1 − SR), so the torque falls
 *     about linearly to ~0 at SR = 1 (no jump at the reverse-flow mirror,
 *     and a moderate torque gradient near coupling for explicit RK4).
 *   torque_ratio: 2.0 at stall, falling linearly to 1.0 at the coupling
 *     point SR = 0.87, and 1.0 above.
 *
 * Lock-up clutch (`lockup`): friction between pump and turbine with
 * capacity max_torque while applied, 0 otherwise. It is applied (decided
 * in pre_step and held through the step) while the pump turns at
 * >= min_rpm and either SR >= speed_ratio (speed_ratio > 0) or the input
 * `lockup` (channel "lockup" by default) is >= 0.5. Stick–slip as the
 * clutch block: while open, the friction T_c = max_torque·s acts with the
 * slip direction s = sign(ω_p − ω_t) fixed for the step; it locks when the
 * slip reaches zero; locked, the tie multiplier λ (torque at the pump) gives
 * the torque it carries, −λ, and it lets go when |λ| > static_factor ·
 * max_torque or when it is no longer applied.
 *
 * Modes: 0 open (start mode: pump and turbine are separate DOFs, fluid
 * torques plus a slipping lock-up clutch), 1 locked (only with `lockup`:
 * dg_topo_dof(in) plus the tie ω_p − ω_t = 0; no fluid torque, since
 * nothing circulates at SR = 1). */
#include <drivegraph/block.h>
#include <math.h>
#include <stdio.h>

/* Slack on the efficiency check TR·SR <= 1, for tables written as
 * decimals (1/0.87 is not exact). */
#define EFFICIENCY_TOL 1e-9

enum { PORT_IN, PORT_OUT };
enum { MODE_OPEN, MODE_LOCKED, NUM_MODES };
enum {
  SIG_OMEGA,
  SIG_OMEGA_OUT,
  SIG_SPEED_RATIO,
  SIG_PUMP_TORQUE,
  SIG_TURBINE_TORQUE,
  SIG_LOCKUP_TORQUE,
  SIG_LOCKED
};

typedef struct lockup_params {
  double max_torque;
  double speed_ratio;
  double static_factor;
  double min_rpm;
} lockup_params;

typedef struct tc_params {
  dg_table1d capacity_factor;
  dg_table1d torque_ratio;
  double pump_inertia;
  double turbine_inertia;
  lockup_params lockup;
  bool has_lockup;
} tc_params;

typedef struct tc_data {
  dg_table1d k;  /* capacity factor in use (given or default) */
  dg_table1d tr; /* torque ratio in use */
  int mode;      /* MODE_* */
  bool applied;  /* lock-up clutch applied for this step */
  int dir;       /* slip direction of the lock-up clutch for this step */
  bool just_released;
  bool have_lambda;
  double lambda; /* tie multiplier: torque the lock applies at the pump */
  int tie;
} tc_data;

static const double default_k_sr[] = {0.0, 0.3,  0.5,  0.6,  0.7,   0.8,   0.9,
                                      0.95, 0.98, 0.99, 0.995, 0.999, 1.0};
static const double default_k[] = {13.0, 13.5, 14.2, 14.8, 15.7,  17.2,  21.0,
                                   28.0, 44.0, 63.0, 89.0, 198.0, 2000.0};
static const double default_tr_sr[] = {0.0, 0.87, 1.0};
static const double default_tr[] = {2.0, 1.0, 1.0};

static const char *const tc_mode_names[NUM_MODES] = {"open", "locked"};

static const dg_port_def tc_ports[] = {
    {.name = "in", .dir = DG_PORT_IN, .domain = DG_ROTATIONAL, .doc = "pump (impeller), engine side"},
    {.name = "out", .dir = DG_PORT_OUT, .domain = DG_ROTATIONAL, .doc = "turbine, gearbox side"},
    {0},
};

static const dg_param_def tc_lockup_fields[] = {
    DG_NUMBER(lockup_params, max_torque, .unit = "N*m", .required = true,
              .flags = DG_P_MIN_EXCL | DG_P_DYNAMICS,
              .doc = "kinetic (slipping) torque capacity of the lock-up clutch"),
    DG_NUMBER(lockup_params, speed_ratio, .unit = "", .flags = DG_P_MIN | DG_P_MAX | DG_P_DYNAMICS,
              .max = 1,
              .doc = "applied at speed ratios >= this (0: only through the \"lockup\" channel)"),
    DG_NUMBER(lockup_params, static_factor, .unit = "", .def = 1.1,
              .flags = DG_P_MIN | DG_P_DYNAMICS, .min = 1, .doc = "static / kinetic capacity"),
    DG_NUMBER(lockup_params, min_rpm, .unit = "rpm", .flags = DG_P_MIN | DG_P_DYNAMICS,
              .doc = "released below this pump speed (0: no limit)"),
    {0},
};

static const dg_param_def tc_params_table[] = {
    {.key = "capacity_factor", .kind = DG_PARAM_TABLE1D,
     .offset = offsetof(tc_params, capacity_factor), .unit = "rad/s/sqrt(N*m)",
     .doc = "K over speed ratio; pump torque (w_p/K)^2 (default: K 13 at stall rising to 21 at "
            "SR 0.9 and steeply toward SR 1)",
     .flags = DG_P_MIN_EXCL | DG_P_DYNAMICS, .min = 0, .axis = {"speed_ratio", "k"}},
    {.key = "torque_ratio", .kind = DG_PARAM_TABLE1D, .offset = offsetof(tc_params, torque_ratio),
     .unit = "", .doc = "turbine / pump torque over speed ratio (default: 2.0 at stall, linear to "
                        "1.0 at the coupling point SR 0.87)",
     .flags = DG_P_MIN_EXCL | DG_P_DYNAMICS, .min = 0, .axis = {"speed_ratio", "ratio"}},
    DG_NUMBER(tc_params, pump_inertia, .unit = "kg*m^2", .def = 0.05,
              .flags = DG_P_MIN | DG_P_INERTIA, .doc = "pump (impeller and cover) inertia, on `in`"),
    DG_NUMBER(tc_params, turbine_inertia, .unit = "kg*m^2", .def = 0.03,
              .flags = DG_P_MIN | DG_P_INERTIA, .doc = "turbine inertia, on `out`"),
    {.key = "lockup", .kind = DG_PARAM_OBJECT, .offset = offsetof(tc_params, lockup),
     .doc = "lock-up clutch: { \"max_torque\", \"speed_ratio\", \"static_factor\", \"min_rpm\" }",
     .fields = tc_lockup_fields, .present = DG_PRESENT(tc_params, has_lockup)},
    {0},
};

enum { IN_LOCKUP };
static const dg_input_def tc_inputs[] = {
    {.name = "lockup", .unit = "",
     .doc = "lock-up command (>= 0.5 applies the lock-up clutch above min_rpm)",
     .source = "lockup", .flags = DG_INPUT_BOOL},
    {0},
};

static const dg_signal_def tc_signals[] = {
    {.name = "omega", .unit = "rad/s", .doc = "pump speed", .port = PORT_IN, .scale = 1},
    {.name = "omega_out", .unit = "rad/s", .doc = "turbine speed", .port = PORT_OUT, .scale = 1},
    {.name = "speed_ratio", .unit = "", .doc = "turbine / pump speed (0 while the pump is stopped)",
     .port = DG_SIGNAL_HOOK},
    {.name = "pump_torque", .unit = "N*m",
     .doc = "fluid torque absorbed by the pump (negative in reverse flow)", .port = DG_SIGNAL_HOOK},
    {.name = "turbine_torque", .unit = "N*m", .doc = "fluid torque delivered to the turbine",
     .port = DG_SIGNAL_HOOK},
    {.name = "lockup_torque", .unit = "N*m",
     .doc = "torque the lock-up clutch transmits from pump to turbine", .port = DG_SIGNAL_HOOK},
    {.name = "locked", .unit = "", .doc = "1 when the lock-up clutch is locked",
     .port = DG_SIGNAL_HOOK, .flags = DG_SIGNAL_BOOL},
    {0},
};

/* Speed-ratio breakpoints must lie in [0, 1]. */
static void check_axis(const dg_table1d *t, const char *name, dg_check *chk) {
  for (int i = 0; i < t->n; i++) {
    char path[64];
    snprintf(path, sizeof path, "%s/speed_ratio/%d", name, i);
    if (t->x[i] < 0.0)
      dg_check_error(chk, path, "must be >= 0 (got %g)", t->x[i]);
    else if (t->x[i] > 1.0)
      dg_check_error(chk, path, "must be <= 1 (got %g)", t->x[i]);
  }
}

/* Largest TR(s)·s over 0 <= s <= 1: TR is piecewise linear, so the product
 * is piecewise quadratic; its maximum is at a breakpoint, at s = 1, or at
 * the vertex of a segment. */
static double max_efficiency(const dg_table1d *t, double *at) {
  double best = dg_table1d_eval(t, 1.0);
  *at = 1.0;
  for (int i = 0; i < t->n; i++) {
    double s = t->x[i];
    if (s >= 0.0 && s <= 1.0 && t->y[i] * s > best) {
      best = t->y[i] * s;
      *at = s;
    }
    if (i + 1 < t->n) {
      double b = (t->y[i + 1] - t->y[i]) / (t->x[i + 1] - t->x[i]);
      double a = t->y[i] - b * t->x[i];
      double v = b < 0.0 ? -a / (2.0 * b) : -1.0;
      if (v > t->x[i] && v < t->x[i + 1] && v >= 0.0 && v <= 1.0 && (a + b * v) * v > best) {
        best = (a + b * v) * v;
        *at = v;
      }
    }
  }
  return best;
}

static void tc_check(const void *params, dg_check *chk) {
  const tc_params *p = params;
  check_axis(&p->capacity_factor, "capacity_factor", chk);
  check_axis(&p->torque_ratio, "torque_ratio", chk);
  if (p->torque_ratio.n > 0) {
    double at, eff = max_efficiency(&p->torque_ratio, &at);
    if (eff > 1.0 + EFFICIENCY_TOL)
      dg_check_error(chk, "torque_ratio",
                     "ratio*speed_ratio (efficiency) must be <= 1 (got %g at speed_ratio %g)", eff,
                     at);
  }
}

static int tc_init(dg_block *self, dg_init *init) {
  const tc_params *p = self->params;
  tc_data *d = self->data;
  d->k = p->capacity_factor.n > 0
             ? p->capacity_factor
             : (dg_table1d){(int)(sizeof default_k / sizeof default_k[0]), default_k_sr, default_k};
  d->tr = p->torque_ratio.n > 0
              ? p->torque_ratio
              : (dg_table1d){(int)(sizeof default_tr / sizeof default_tr[0]), default_tr_sr,
                             default_tr};
  (void)init;
  d->mode = MODE_OPEN;
  d->tie = -1;
  return 0;
}

static double tc_speed_ratio(double wp, double wt) { return wp > 0.0 ? wt / wp : 0.0; }

/* Width in speed ratio of the fade to zero torque at SR = 1. */
#define COUPLING_BAND 0.01

/* Fluid torques at pump speed wp and turbine speed wt (open converter).
 * At SR = 1 nothing flows, so no torque: a table with a finite K(1) (as
 * imported Chrono converters have) would otherwise jump from +(ω/K)² to
 * −(ω/K)² there, which RK4 resolves only to first order. Within
 * COUPLING_BAND of SR = 1 the torques fade linearly to 0; the default table
 * is already near 0 there, so it hardly changes. */
static void tc_fluid(const tc_data *d, double wp, double wt, double *tp, double *tt) {
  *tp = *tt = 0.0;
  if (!(wp > 0.0))
    return;
  double sr = wt / wp;
  double fade = dg_fmin(1.0, fabs(1.0 - sr) / COUPLING_BAND);
  if (sr <= 1.0) {
    double q = wp / dg_table1d_eval(&d->k, sr);
    *tp = fade * q * q;
    *tt = dg_table1d_eval(&d->tr, sr) * *tp;
  } else {
    double q = wp / dg_table1d_eval(&d->k, 2.0 - sr);
    *tp = -fade * q * q;
    *tt = *tp;
  }
}

static double tc_slip(const dg_block *self, const dg_ctx *ctx) {
  return dg_port_speed(ctx, self, PORT_IN) - dg_port_speed(ctx, self, PORT_OUT);
}

/* Whether the lock-up clutch is applied at the context's speeds. */
static bool tc_lockup_applied(const dg_block *self, const dg_ctx *ctx) {
  const tc_params *p = self->params;
  if (!p->has_lockup)
    return false;
  double wp = dg_port_speed(ctx, self, PORT_IN);
  if (wp * DG_RPM_PER_RAD_S < p->lockup.min_rpm)
    return false;
  double sr = tc_speed_ratio(wp, dg_port_speed(ctx, self, PORT_OUT));
  return (p->lockup.speed_ratio > 0.0 && sr >= p->lockup.speed_ratio) ||
         dg_block_input(ctx, self, IN_LOCKUP) >= 0.5;
}

static int tc_mode_count(const dg_block *self) {
  const tc_params *p = self->params;
  return p->has_lockup ? NUM_MODES : 1;
}

static void tc_mode_set(dg_block *self, int mode) {
  tc_data *d = self->data;
  d->mode = mode == MODE_LOCKED ? MODE_LOCKED : MODE_OPEN;
}

static const char *tc_mode_name(const dg_block *self, int mode) {
  (void)self;
  return mode >= 0 && mode < NUM_MODES ? tc_mode_names[mode] : NULL;
}

static void tc_state_upstream(dg_block *self, dg_topo *topo) {
  const tc_params *p = self->params;
  tc_data *d = self->data;
  dg_topo_dof(topo, self, PORT_IN);
  dg_topo_inertia(topo, self, PORT_IN, p->pump_inertia);
  dg_topo_inertia(topo, self, PORT_OUT, p->turbine_inertia);
  d->tie = -1;
  if (d->mode == MODE_LOCKED) {
    d->tie = dg_topo_lock(topo, self, PORT_IN, PORT_OUT);
  }
}

/* `torque`: what the lock-up clutch carried until the lock's first multiplier. */
static void tc_lock(tc_data *d, dg_ctx *ctx, double torque) {
  d->mode = MODE_LOCKED;
  d->have_lambda = false;
  d->lambda = -torque;
  d->just_released = false;
  dg_ctx_request_topology(ctx);
}

static void tc_release(tc_data *d, dg_ctx *ctx, bool in_post_step) {
  d->mode = MODE_OPEN;
  d->dir = -dg_sign(d->lambda);
  d->just_released = in_post_step;
  dg_ctx_request_topology(ctx);
}

static void tc_pre_step(dg_block *self, dg_ctx *ctx) {
  const tc_params *p = self->params;
  tc_data *d = self->data;
  d->applied = tc_lockup_applied(self, ctx);
  if (d->mode == MODE_LOCKED) {
    if (!d->applied ||
        (d->have_lambda && fabs(d->lambda) > p->lockup.static_factor * p->lockup.max_torque))
      tc_release(d, ctx, false);
    return;
  }
  double slip = tc_slip(self, ctx);
  if (fabs(slip) > dg_slip_zero_tol(ctx, self, PORT_IN, PORT_OUT))
    d->dir = dg_sign(slip);
  else if (!d->just_released && d->applied)
    tc_lock(d, ctx, 0.0);
  else if (!d->just_released)
    d->dir = 0;
  d->just_released = false;
}

static void tc_torque_downstream(dg_block *self, dg_ctx *ctx) {
  const tc_params *p = self->params;
  const tc_data *d = self->data;
  if (d->mode == MODE_LOCKED)
    return;
  double tp, tt;
  tc_fluid(d, dg_port_speed(ctx, self, PORT_IN), dg_port_speed(ctx, self, PORT_OUT), &tp, &tt);
  if (d->applied) {
    double tc = p->lockup.max_torque * d->dir;
    tp += tc;
    tt += tc;
  }
  dg_port_add_torque(ctx, self, PORT_IN, -tp);
  dg_port_add_torque(ctx, self, PORT_OUT, tt);
}

static void tc_post_step(dg_block *self, dg_ctx *ctx) {
  const tc_params *p = self->params;
  tc_data *d = self->data;
  if (!p->has_lockup)
    return;
  bool applied = tc_lockup_applied(self, ctx);
  if (d->mode == MODE_LOCKED) {
    d->lambda = dg_ctx_tie_force(ctx, d->tie);
    d->have_lambda = true;
    if (!applied || fabs(d->lambda) > p->lockup.static_factor * p->lockup.max_torque)
      tc_release(d, ctx, true);
    return;
  }
  if (d->applied && applied && d->dir != 0 &&
      tc_slip(self, ctx) * d->dir <= dg_slip_zero_tol(ctx, self, PORT_IN, PORT_OUT))
    tc_lock(d, ctx, p->lockup.max_torque * d->dir);
}

/* At a segment's start, with the tie forces of the mode just built: a
 * lock-up beyond its static capacity (or released) lets go there, not at
 * the segment's end (as clutch.c). */
static void tc_hold_check(dg_block *self, dg_ctx *ctx) {
  const tc_params *p = self->params;
  tc_data *d = self->data;
  if (!p->has_lockup || d->mode != MODE_LOCKED)
    return;
  d->lambda = dg_ctx_tie_force(ctx, d->tie);
  d->have_lambda = true;
  if (!tc_lockup_applied(self, ctx) ||
      fabs(d->lambda) > p->lockup.static_factor * p->lockup.max_torque)
    tc_release(d, ctx, true);
}

/* Lock-up switching conditions, located inside the step: the slip of an
 * applied lock-up clutch reaching zero (g0 = slip · s), and a lock's torque
 * reaching the static capacity (g1 = T_s − |λ|). */
static int tc_event_values(const dg_block *self, dg_ctx *ctx, double *g) {
  const tc_params *p = self->params;
  const tc_data *d = self->data;
  g[0] = g[1] = 1.0;
  if (!p->has_lockup)
    return 0;
  if (d->mode == MODE_LOCKED) {
    g[1] = p->lockup.static_factor * p->lockup.max_torque - fabs(dg_ctx_tie_force(ctx, d->tie));
    return 1;
  } else if (d->applied && d->dir != 0) {
    g[0] = tc_slip(self, ctx) * d->dir;
    return 1;
  }
  return 0;
}

static double tc_signal(const dg_block *self, const dg_ctx *ctx, int index) {
  const tc_params *p = self->params;
  const tc_data *d = self->data;
  double wp = dg_port_speed(ctx, self, PORT_IN), wt = dg_port_speed(ctx, self, PORT_OUT);
  double tp = 0.0, tt = 0.0;
  if (d->mode == MODE_OPEN)
    tc_fluid(d, wp, wt, &tp, &tt);
  switch (index) {
  case SIG_SPEED_RATIO:
    return tc_speed_ratio(wp, wt);
  case SIG_PUMP_TORQUE:
    return tp;
  case SIG_TURBINE_TORQUE:
    return tt;
  case SIG_LOCKUP_TORQUE: {
    if (d->mode == MODE_LOCKED)
      return -d->lambda;
    if (!tc_lockup_applied(self, ctx))
      return 0.0;
    double slip = wp - wt;
    int s = fabs(slip) > dg_slip_zero_tol(ctx, self, PORT_IN, PORT_OUT) ? dg_sign(slip) : d->dir;
    return p->lockup.max_torque * s;
  }
  case SIG_LOCKED:
    return d->mode == MODE_LOCKED ? 1.0 : 0.0;
  default:
    return NAN;
  }
}

const dg_block_class dg_block_torque_converter = {
    .abi = DG_BLOCK_ABI,
    .type = "torque_converter",
    .doc = "Hydrodynamic torque converter: pump torque (w_p/K(SR))^2, turbine torque TR(SR) "
           "times that, reverse flow above SR 1, pump and turbine inertias, optional lock-up "
           "clutch with stick-slip.",
    .ports = tc_ports,
    .params = tc_params_table,
    .params_size = sizeof(tc_params),
    .signals = tc_signals,
    .inputs = tc_inputs,
    .data_size = sizeof(tc_data),
    .check = tc_check,
    .init = tc_init,
    .mode_count = tc_mode_count,
    .mode_set = tc_mode_set,
    .mode_name = tc_mode_name,
    .pre_step = tc_pre_step,
    .state_upstream = tc_state_upstream,
    .torque_downstream = tc_torque_downstream,
    .post_step = tc_post_step,
    .hold_check = tc_hold_check,
    .num_events = 2,
    .event_values = tc_event_values,
    .signal = tc_signal,
};
