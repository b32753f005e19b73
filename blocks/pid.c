/* pid — a continuous-time PID controller: a signal block (no ports) whose
 * two states the solver integrates with RK4 together with the mechanics.
 *
 * Inputs r (setpoint), y (measurement, must be bound), u_ff (feedforward),
 * reset. States i (the integral term, in output units) and x (the
 * derivative filter's state). At every point (each RK4 stage):
 *
 *   e     = r − y
 *   v     = −y  (derivative_on "measurement": no kick on a setpoint step)
 *         =  e  (derivative_on "error")
 *   p     = kp · e
 *   d     = kd · (v − x) / td          ẋ = (v − x) / td
 *   u     = p + i + d + u_ff           (unsaturated)
 *   out   = min(max(u, output_min), output_max)
 *
 * so d is kd · s/(td·s + 1) applied to v: a derivative filtered by a first
 * order lag of time constant td (a step of size Δ in v gives
 * d = kd·Δ/td · exp(−t/td)). The integral term follows the anti-windup law:
 *
 *   "none"              di/dt = ki · e
 *   "clamp"             di/dt = 0 while u >= output_max and ki·e > 0, or
 *                                  u <= output_min and ki·e < 0
 *                                  (conditional integration: the integral
 *                                  stops when the output is saturated and the
 *                                  error would push it further in),
 *                       di/dt = ki · e otherwise
 *   "back_calculation"  di/dt = ki · e + (out − u) / tracking_time
 *                       (the integral is pulled back at rate 1/Tt by the
 *                       excess of u over the limit; Tt = tracking_time)
 *
 * i starts at initial_integral (settable as the initial value "pid.i"); x
 * starts at v at the first step, so a measurement that is not 0 at t = 0
 * gives no derivative kick. While reset >= 0.5 (read at the start of each
 * step segment and held over it) i is held at 0 (di/dt = 0) and x is set
 * back to v at each segment start.
 *
 * Saturation is a mode of each limit, decided at segment starts and held
 * over the segment: saturated at output_max while u > output_max (at
 * output_min while u < output_min). The clamp law freezes the integral by
 * the held mode (not by u at each RK4 stage), and the crossings of u through
 * the limits are located as events, so the kink of `output` and the jump of
 * the frozen integral's rate fall on segment ends and RK4 keeps its order
 * across them. A segment that starts on a limit (u within 1e-9 of it)
 * changes the mode if the previous segment was watching that limit (the
 * crossing it located) and keeps it otherwise, and watches no crossing of
 * that limit: so an integral sliding along a limit (the clamp law with an
 * integral that pushes u back into saturation, where exact continuous-time
 * solutions switch infinitely often) costs at most one located crossing per
 * step and limit, and RK4 is first order there.
 *
 * Gains are >= 0: for a reverse-acting loop swap what is bound to the
 * setpoint and the measurement. `output`, `unsaturated`, `error`, `p` and
 * `d` follow the inputs at once (feedthrough: binding them back into the
 * block's own inputs through any chain is an algebraic loop); `i` is a state
 * and may feed anything. */
#include <drivegraph/block.h>

#include <math.h>

enum { IN_SETPOINT, IN_MEASUREMENT, IN_FEEDFORWARD, IN_RESET };
enum { SIG_OUTPUT, SIG_UNSATURATED, SIG_ERROR, SIG_P, SIG_I, SIG_D };
enum { ST_I, ST_X, NUM_STATES };
enum { AW_CLAMP, AW_BACK_CALCULATION, AW_NONE };
enum { D_ON_MEASUREMENT, D_ON_ERROR };

typedef struct pid_params {
  double kp, ki, kd, td;
  double output_min, output_max;
  bool has_min, has_max;
  int anti_windup;
  double tracking_time;
  bool has_tracking_time;
  int derivative_on;
  double initial_integral;
} pid_params;

typedef struct pid_data {
  double lo, hi;    /* output limits (±inf when not given) */
  bool started;     /* the filter state has been set to v */
  bool resetting;   /* reset held over the current segment */
  bool sat[2];      /* held over the segment: saturated at hi, at lo */
  bool watch[2];    /* the segment locates u crossing hi, lo */
} pid_data;

static const char *const pid_aw_choices[] = {"clamp", "back_calculation", "none", NULL};
static const char *const pid_don_choices[] = {"measurement", "error", NULL};

static const dg_param_def pid_params_table[] = {
    DG_NUMBER(pid_params, kp, .unit = "", .def = 1.0, .flags = DG_P_MIN | DG_P_DYNAMICS,
              .doc = "proportional gain (output per unit of error)"),
    DG_NUMBER(pid_params, ki, .unit = "1/s", .flags = DG_P_MIN | DG_P_DYNAMICS,
              .doc = "integral gain (output per unit of error and second)"),
    DG_NUMBER(pid_params, kd, .unit = "s", .flags = DG_P_MIN | DG_P_DYNAMICS,
              .doc = "derivative gain (output per unit of error rate)"),
    DG_NUMBER(pid_params, td, .unit = "s", .def = 0.01, .flags = DG_P_MIN_EXCL | DG_P_DYNAMICS,
              .doc = "time constant of the derivative's first-order filter"),
    {.key = "output_min", .kind = DG_PARAM_NUMBER, .offset = offsetof(pid_params, output_min),
     .doc = "lower output limit (none when left out)", .flags = DG_P_DYNAMICS,
     .present = DG_PRESENT(pid_params, has_min)},
    {.key = "output_max", .kind = DG_PARAM_NUMBER, .offset = offsetof(pid_params, output_max),
     .doc = "upper output limit (none when left out)", .flags = DG_P_DYNAMICS,
     .present = DG_PRESENT(pid_params, has_max)},
    {.key = "anti_windup", .kind = DG_PARAM_ENUM, .offset = offsetof(pid_params, anti_windup),
     .doc = "clamp: stop integrating while saturated and pushing further; back_calculation: "
            "pull the integral back by (output - u)/tracking_time; none",
     .def = AW_CLAMP, .choices = pid_aw_choices, .flags = DG_P_DYNAMICS},
    {.key = "tracking_time", .kind = DG_PARAM_NUMBER,
     .offset = offsetof(pid_params, tracking_time), .unit = "s",
     .doc = "back_calculation's tracking time constant Tt (required with it)",
     .flags = DG_P_MIN_EXCL | DG_P_DYNAMICS, .min = 0,
     .present = DG_PRESENT(pid_params, has_tracking_time)},
    {.key = "derivative_on", .kind = DG_PARAM_ENUM,
     .offset = offsetof(pid_params, derivative_on),
     .doc = "what the derivative acts on: measurement (its negative; no kick on setpoint "
            "steps) or error",
     .def = D_ON_MEASUREMENT, .choices = pid_don_choices, .flags = DG_P_DYNAMICS},
    DG_NUMBER(pid_params, initial_integral, .unit = "", .flags = DG_P_DYNAMICS,
              .doc = "start value of the integral term i (output units)"),
    {0},
};

static const dg_input_def pid_inputs[] = {
    {.name = "setpoint", .doc = "setpoint r (default 0)"},
    {.name = "measurement", .doc = "measured value y", .flags = DG_INPUT_REQUIRED},
    {.name = "feedforward", .doc = "added to the output before the limits"},
    {.name = "reset", .doc = "reset (>= 0.5 holds the integral at 0 and restarts the filter)",
     .flags = DG_P_MIN | DG_P_MAX, .min = 0, .max = 1},
    {0},
};

static const dg_signal_def pid_signals[] = {
    {.name = "output", .unit = "", .doc = "controller output, within the limits",
     .port = DG_SIGNAL_HOOK, .flags = DG_SIGNAL_FEEDTHROUGH},
    {.name = "unsaturated", .unit = "", .doc = "output before the limits u = p + i + d + feedforward",
     .port = DG_SIGNAL_HOOK, .flags = DG_SIGNAL_FEEDTHROUGH},
    {.name = "error", .unit = "", .doc = "e = setpoint - measurement", .port = DG_SIGNAL_HOOK,
     .flags = DG_SIGNAL_FEEDTHROUGH},
    {.name = "p", .unit = "", .doc = "proportional term kp e", .port = DG_SIGNAL_HOOK,
     .flags = DG_SIGNAL_FEEDTHROUGH},
    {.name = "i", .unit = "", .doc = "integral term (a state; settable as an initial value)",
     .port = DG_SIGNAL_HOOK},
    {.name = "d", .unit = "", .doc = "filtered derivative term", .port = DG_SIGNAL_HOOK,
     .flags = DG_SIGNAL_FEEDTHROUGH},
    {0},
};

static void pid_check(const void *params, dg_check *chk) {
  const pid_params *p = params;
  if (p->has_min && p->has_max && !(p->output_min < p->output_max))
    dg_check_error(chk, "output_max", "must be > output_min %g (got %g)", p->output_min,
                   p->output_max);
  if (p->anti_windup == AW_BACK_CALCULATION && !p->has_tracking_time)
    dg_check_error(chk, "tracking_time", "required with anti_windup \"back_calculation\"");
  if (p->anti_windup != AW_BACK_CALCULATION && p->has_tracking_time)
    dg_check_error(chk, "tracking_time",
                   "used only with anti_windup \"back_calculation\" (anti_windup is \"%s\")",
                   pid_aw_choices[p->anti_windup]);
}

static int pid_init(dg_block *self, dg_init *init) {
  const pid_params *p = self->params;
  pid_data *d = self->data;
  d->lo = p->has_min ? p->output_min : -INFINITY;
  d->hi = p->has_max ? p->output_max : INFINITY;
  dg_init_state(init)[ST_I] = p->initial_integral;
  return 0;
}

/* Everything at the context's point. */
typedef struct pid_point {
  double e, v, p, i, d, u, out;
} pid_point;

static double pid_v(const pid_params *p, double e, double y) {
  return p->derivative_on == D_ON_ERROR ? e : -y;
}

static pid_point pid_eval(const dg_block *self, const dg_ctx *ctx) {
  const pid_params *p = self->params;
  const pid_data *d = self->data;
  const double *s = dg_block_state(ctx, self);
  double y = dg_block_input(ctx, self, IN_MEASUREMENT);
  pid_point q;
  q.e = dg_block_input(ctx, self, IN_SETPOINT) - y;
  q.v = pid_v(p, q.e, y);
  q.p = p->kp * q.e;
  q.i = s[ST_I];
  q.d = p->kd * (q.v - s[ST_X]) / p->td;
  q.u = q.p + q.i + q.d + dg_block_input(ctx, self, IN_FEEDFORWARD);
  q.out = q.u > d->hi ? d->hi : q.u < d->lo ? d->lo : q.u;
  return q;
}

/* The mode of one limit at a segment start: g is the distance into
 * saturation (u − hi or lo − u). */
static void pid_limit_mode(pid_data *d, int k, double limit, double u, double g) {
  if (!isfinite(limit)) {
    d->sat[k] = d->watch[k] = false;
    return;
  }
  if (fabs(g) > 1e-9 * dg_fmax(fabs(limit), fabs(u))) {
    d->sat[k] = g > 0.0;
    d->watch[k] = true;
    return;
  }
  if (d->watch[k]) /* on the limit after a located crossing */
    d->sat[k] = !d->sat[k];
  d->watch[k] = false;
}

/* Before each segment: the first step's filter start, the reset, and the
 * limits' modes. */
static void pid_pre_step(dg_block *self, dg_ctx *ctx) {
  const pid_params *p = self->params;
  pid_data *d = self->data;
  double *s = dg_block_state_commit(ctx, self);
  d->resetting = dg_block_input(ctx, self, IN_RESET) >= 0.5;
  if (!d->started || d->resetting) {
    double y = dg_block_input(ctx, self, IN_MEASUREMENT);
    s[ST_X] = pid_v(p, dg_block_input(ctx, self, IN_SETPOINT) - y, y);
    d->started = true;
  }
  if (d->resetting)
    s[ST_I] = 0.0;
  pid_point q = pid_eval(self, ctx);
  pid_limit_mode(d, 0, d->hi, q.u, q.u - d->hi);
  pid_limit_mode(d, 1, d->lo, q.u, d->lo - q.u);
}

static void pid_torque_downstream(dg_block *self, dg_ctx *ctx) {
  const pid_params *p = self->params;
  const pid_data *d = self->data;
  double *rate = dg_block_state_rate(ctx, self);
  pid_point q = pid_eval(self, ctx);
  rate[ST_X] = (q.v - dg_block_state(ctx, self)[ST_X]) / p->td;
  if (d->resetting)
    return; /* the integral held at 0 */
  double ie = p->ki * q.e;
  switch (p->anti_windup) {
  case AW_CLAMP:
    rate[ST_I] = (d->sat[0] && ie > 0.0) || (d->sat[1] && ie < 0.0) ? 0.0 : ie;
    break;
  case AW_BACK_CALCULATION:
    rate[ST_I] = ie + (q.out - q.u) / p->tracking_time;
    break;
  default:
    rate[ST_I] = ie;
    break;
  }
}

/* g_k > 0 on the side of limit k the segment started on. */
static int pid_event_values(const dg_block *self, dg_ctx *ctx, double *g) {
  const pid_data *d = self->data;
  g[0] = g[1] = 1.0;
  if (!d->watch[0] && !d->watch[1])
    return 0;
  pid_point q = pid_eval(self, ctx);
  if (d->watch[0])
    g[0] = d->sat[0] ? q.u - d->hi : d->hi - q.u;
  if (d->watch[1])
    g[1] = d->sat[1] ? d->lo - q.u : q.u - d->lo;
  return 1;
}

static double pid_signal(const dg_block *self, const dg_ctx *ctx, int index) {
  pid_point q = pid_eval(self, ctx);
  switch (index) {
  case SIG_OUTPUT:
    return q.out;
  case SIG_UNSATURATED:
    return q.u;
  case SIG_ERROR:
    return q.e;
  case SIG_P:
    return q.p;
  case SIG_I:
    return q.i;
  case SIG_D:
    return q.d;
  default:
    return NAN;
  }
}

static int pid_set_signal(dg_block *self, dg_ctx *ctx, int index, double value) {
  if (index != SIG_I || !isfinite(value))
    return -1;
  dg_block_state_commit(ctx, self)[ST_I] = value;
  return 0;
}

/* `output` stays within the limits given. */
static void pid_signal_range(const void *params, int signal, dg_range *r) {
  const pid_params *p = params;
  if (signal != SIG_OUTPUT)
    return;
  if (p->has_min)
    r->min = p->output_min;
  if (p->has_max)
    r->max = p->output_max;
}

const dg_block_class dg_block_pid = {
    .abi = DG_BLOCK_ABI,
    .type = "pid",
    .doc = "Continuous-time PID controller (a signal block; no ports): filtered derivative on "
           "the measurement or the error, output limits, clamp or back-calculation "
           "anti-windup, feedforward and reset inputs; its states are integrated by RK4 with "
           "the mechanics.",
    .params = pid_params_table,
    .params_size = sizeof(pid_params),
    .signals = pid_signals,
    .data_size = sizeof(pid_data),
    .num_states = NUM_STATES,
    .check = pid_check,
    .init = pid_init,
    .pre_step = pid_pre_step,
    .torque_downstream = pid_torque_downstream,
    .signal = pid_signal,
    .set_signal = pid_set_signal,
    .num_events = 2,
    .event_values = pid_event_values,
    .inputs = pid_inputs,
    .signal_range = pid_signal_range,
};
