/* driver — follows a target-speed trace with throttle and brake: a signal
 * block (no ports) whose outputs are bound to the car's pedal inputs
 * (engine "throttle", gearbox "throttle" and "brake", every wheel's
 * "brake").
 *
 * With V = 3.6·v the vehicle speed in km/h (input `speed`, m/s; by default
 * the speed of the graph's one vehicle), S(t) the trace in km/h, tp the
 * preview time and i the integral state:
 *
 *   e      = S(t) − V                       error (error_kmh)
 *   ep     = S(t + tp) − V                  previewed error
 *   a      = S'(t + tp) / 3.6               the trace's acceleration (m/s²)
 *                                            ahead: the slope of its piece,
 *                                            0 outside the table
 *   c      = kp·ep + i + accel_gain·a       pedal command: > 0 throttle, < 0 brake
 *   throttle = min(max(c, 0), 1)
 *   brake    = min(max(−brake_gain·c, 0), 1)   (both dg_clamp01: a NaN c
 *                                            gives 0, no pedal)
 *   di/dt  = ki·e, except 0 while c >= 1 and e > 0 or c <= −1/brake_gain
 *            and e < 0 (clamp anti-windup: no integration while both pedals
 *            are at their stops and the error pushes further)
 *
 * The preview looks ahead on the trace to meet the car's lag (engine,
 * converter, shifts); the integral acts on the error at t, so the car ends up
 * on the trace itself, not ahead of it. The feed-forward gives the pedal the
 * trace's acceleration needs (about m·a divided by the drive force at full
 * throttle: 0.1..0.3 per m/s² for a car in its low gears).
 *
 * Standstill: while the trace is at rest now and ahead (S(t) <= 0,
 * S(t + tp) <= 0 and not rising there) and the car is all but stopped (V <= hold_speed), the
 * driver holds it: no throttle, the brake at hold_brake (or the
 * command's, if firmer), and the integral decays to 0 (di/dt = −i / 0.5 s)
 * so the next launch starts from the feed-forward; the wheel brakes' stick
 * then hold the car at exactly 0 (no creep against an idling converter).
 * The hold ends as soon as the trace ahead moves.
 *
 * Blended braking: with brake_force (N: the friction brakes' force at the
 * road at full pedal) the signal brake_power = brake · brake_force · |v| is
 * the braking power the pedal asks for; a motor's input brake_power bound
 * to it regenerates first and passes what it cannot take to the friction
 * brakes through its signal friction_brake (blocks/motor.c: series
 * blending).
 *
 * Backward mode (follow "effort": `drivegraph cycle --backward`): the body
 * follows the trace exactly (a linear_speed_source), so the speed error is
 * 0 by construction; the driver still works the pedals so that the
 * powertrain, not the prescription, supplies the tractive effort. Its
 * input `effort` is the acceleration the prescription added over the last
 * step (its force over the vehicle's mass, m/s²: positive, the powertrain
 * fell short), and
 *   c      = accel_gain·(a(t) + effort_kp·effort) + i,
 *   di/dt  = accel_gain·effort_ki·effort
 * (the same anti-windup; at a stop both pedals are let go, since the
 * prescription holds the body, and a brake sliding on a tyre's relaxation
 * at rest would only chatter), with a(t) the trace's slope
 * now: a feed-forward from the trace's acceleration and a PI that drives
 * the prescription's force to 0, both scaled by accel_gain (the pedal per
 * m/s², which must be > 0): with the input held over a step of dt (the
 * last step's force, so there is no algebraic loop) the integral removes
 * effort_ki·dt of an effort per step, stable below 2 while accel_gain is
 * the car's true pedal per m/s² within a factor 2 (the cycle command sets
 * effort_ki = 0.5 / dt).
 *
 * Time is the simulation's: the trace starts at t = 0. i starts at 0
 * (settable as the initial value "driver.i"). The anti-windup and the pedal
 * limits switch at each RK4 stage; their switches are not located (RK4 is
 * first order across them), which a driver does not need. */
#include <drivegraph/block.h>

#include <math.h>
#include <string.h>

#define KMH_PER_MS 3.6

enum { IN_SPEED, IN_EFFORT };
enum { FOLLOW_SPEED, FOLLOW_EFFORT };
enum {
  SIG_THROTTLE,
  SIG_BRAKE,
  SIG_COMMAND,
  SIG_TARGET,
  SIG_ERROR,
  SIG_I,
  SIG_SPEED,
  SIG_BRAKE_POWER,
  SIG_HOLDING
};

/* The integral's decay time while holding the car at a stop (s). */
#define HOLD_DECAY 0.5

typedef struct driver_params {
  dg_table1d trace;
  double kp, ki, accel_gain, preview, brake_gain;
  double hold_speed, hold_brake, brake_force;
  int follow;
  double effort_kp, effort_ki;
} driver_params;

static const char *const follow_names[] = {"speed", "effort", NULL};

static const dg_param_def driver_params_table[] = {
    {.key = "trace", .kind = DG_PARAM_TABLE1D, .offset = offsetof(driver_params, trace),
     .unit = "km/h",
     .doc = "target speed over time: { \"time\": [s...], \"speed_kmh\": [km/h...] } (linear, "
            "ends held)",
     .required = true, .axis = {"time", "speed_kmh"}, .min_len = 1, .flags = DG_P_DYNAMICS},
    DG_NUMBER(driver_params, kp, .unit = "1/(km/h)", .def = 0.05, .flags = DG_P_MIN | DG_P_DYNAMICS,
              .doc = "pedal per km/h of (previewed) speed error"),
    DG_NUMBER(driver_params, ki, .unit = "1/(km/h*s)", .def = 0.02,
              .flags = DG_P_MIN | DG_P_DYNAMICS, .doc = "pedal per km/h of speed error and second"),
    DG_NUMBER(driver_params, accel_gain, .unit = "s^2/m", .flags = DG_P_MIN | DG_P_DYNAMICS,
              .doc = "feed-forward: pedal per m/s^2 of the trace's acceleration ahead"),
    DG_NUMBER(driver_params, preview, .unit = "s", .flags = DG_P_MIN | DG_P_DYNAMICS,
              .doc = "how far ahead on the trace the proportional and feed-forward terms look"),
    DG_NUMBER(driver_params, brake_gain, .unit = "", .def = 1.0,
              .flags = DG_P_MIN_EXCL | DG_P_DYNAMICS,
              .doc = "brake pedal per unit of negative command"),
    DG_NUMBER(driver_params, hold_speed, .unit = "km/h", .def = 1.0,
              .flags = DG_P_MIN | DG_P_DYNAMICS,
              .doc = "below this speed, with the trace at rest now and ahead, the driver holds "
                     "the car on the brake"),
    DG_NUMBER(driver_params, hold_brake, .unit = "", .def = 0.6,
              .flags = DG_P_MIN | DG_P_MAX | DG_P_DYNAMICS, .max = 1,
              .doc = "brake pedal while holding the car at a stop"),
    DG_NUMBER(driver_params, brake_force, .unit = "N", .flags = DG_P_MIN | DG_P_DYNAMICS,
              .doc = "the friction brakes' force at the road at full pedal: the scale of "
                     "brake_power (0: none)"),
    {.key = "follow", .kind = DG_PARAM_ENUM, .offset = offsetof(driver_params, follow),
     .unit = "",
     .doc = "speed: a PI on the speed error (forward); effort: a PI on the input effort, the "
            "prescription's acceleration of a backward run",
     .choices = follow_names, .def = FOLLOW_SPEED, .flags = DG_P_DYNAMICS},
    DG_NUMBER(driver_params, effort_kp, .unit = "", .def = 0.3, .flags = DG_P_MIN | DG_P_DYNAMICS,
              .doc = "follow effort: proportional gain on the prescription's acceleration (times "
                     "accel_gain)"),
    DG_NUMBER(driver_params, effort_ki, .unit = "1/s", .def = 500.0,
              .flags = DG_P_MIN | DG_P_DYNAMICS,
              .doc = "follow effort: integral gain on the prescription's acceleration (times "
                     "accel_gain; about 0.5 / dt)"),
    {0},
};

static const dg_input_def driver_inputs[] = {
    {.name = "speed", .unit = "m/s", .doc = "vehicle speed: by default the graph's vehicle's",
     .source = "@vehicle.speed", .flags = DG_INPUT_MEASURED},
    {.name = "effort", .unit = "m/s^2",
     .doc = "follow effort: the acceleration the prescription of a backward run added over the "
            "last step (force / mass)",
     .source = "", .def = 0.0},
    {0},
};

static const dg_signal_def driver_signals[] = {
    {.name = "throttle", .unit = "", .doc = "throttle pedal 0..1", .port = DG_SIGNAL_HOOK,
     .flags = DG_SIGNAL_FEEDTHROUGH},
    {.name = "brake", .unit = "", .doc = "brake pedal 0..1", .port = DG_SIGNAL_HOOK,
     .flags = DG_SIGNAL_FEEDTHROUGH},
    {.name = "command", .unit = "", .doc = "pedal command c (> 0 throttle, < 0 brake)",
     .port = DG_SIGNAL_HOOK, .flags = DG_SIGNAL_FEEDTHROUGH},
    {.name = "target_kmh", .unit = "km/h", .doc = "the trace's speed now", .port = DG_SIGNAL_HOOK},
    {.name = "error_kmh", .unit = "km/h", .doc = "trace speed minus vehicle speed",
     .port = DG_SIGNAL_HOOK, .flags = DG_SIGNAL_FEEDTHROUGH},
    {.name = "i", .unit = "", .doc = "integral term (a state; settable as an initial value)",
     .port = DG_SIGNAL_HOOK},
    {.name = "speed_kmh", .unit = "km/h", .doc = "the vehicle speed the driver sees (input speed)",
     .port = DG_SIGNAL_HOOK, .flags = DG_SIGNAL_FEEDTHROUGH},
    {.name = "brake_power", .unit = "W",
     .doc = "braking power the pedal asks for at the road, brake * brake_force * |v| (a motor's "
            "brake_power: series blending)",
     .port = DG_SIGNAL_HOOK, .flags = DG_SIGNAL_FEEDTHROUGH},
    {.name = "holding", .unit = "", .doc = "1 while the driver holds the car at a stop, else 0",
     .port = DG_SIGNAL_HOOK, .flags = DG_SIGNAL_FEEDTHROUGH | DG_SIGNAL_BOOL},
    {0},
};

typedef struct driver_point {
  double e, c;
  double ie; /* what the integral integrates: the speed error, or the effort */
  double v;     /* vehicle speed (m/s) */
  bool holding; /* at a stop, held on the brake */
} driver_point;

/* The block's data: the pieces of the trace last read (now and ahead), and
 * a memo of the last point evaluated with everything it was evaluated at
 * (time, inputs, state and the parameters' epoch: they may be tuned
 * between steps). The pedals' bindings read several signals at each stage
 * (throttle, brake, brake_power), each of them this point: reused exactly. */
typedef struct driver_data {
  int hint_now, hint_ahead;
  double seg_start; /* the step segment's start (pre_step) */
  bool valid, key_left;
  double key_t, key_v, key_i, key_effort;
  unsigned long key_params;
  driver_point memo;
} driver_data;

/* The trace and its slope at t; `left`: at a breakpoint, the slope of the
 * piece that ends there (a point past the segment's start: its stages and
 * events see the trace's acceleration as the segment began with it, as
 * schedules are read, not the next piece's at the segment's very end). */
static double trace_at(const dg_table1d *tr, double t, bool left, int *hint, double *slope) {
  double v = dg_table1d_eval_hint(tr, t, hint, slope);
  if (left && tr->n >= 2) {
    int k = t == tr->x[tr->n - 1] ? tr->n - 1 : *hint;
    if (k > 0 && tr->x[k] == t)
      *slope = (tr->y[k] - tr->y[k - 1]) / (tr->x[k] - tr->x[k - 1]);
  }
  return v;
}

static driver_point driver_eval(const dg_block *self, const dg_ctx *ctx) {
  const driver_params *p = self->params;
  driver_data *d = self->data;
  double V = KMH_PER_MS * dg_block_input(ctx, self, IN_SPEED);
  double i = dg_block_state(ctx, self)[0];
  double effort = p->follow == FOLLOW_EFFORT ? dg_block_input(ctx, self, IN_EFFORT) : 0.0;
  bool left = ctx->t > d->seg_start;
  if (d->valid && d->key_t == ctx->t && d->key_left == left && d->key_v == V && d->key_i == i &&
      d->key_effort == effort && d->key_params == dg_ctx_params_epoch(ctx))
    return d->memo;
  double tp = ctx->t + p->preview;
  driver_point q;
  double a_now, a_ahead;
  double s_now = trace_at(&p->trace, ctx->t, left, &d->hint_now, &a_now);
  double s_ahead = trace_at(&p->trace, tp, left, &d->hint_ahead, &a_ahead);
  q.v = V / KMH_PER_MS;
  q.e = s_now - V;
  double ep = s_ahead - V;
  if (p->follow == FOLLOW_EFFORT) {
    double u = isfinite(effort) ? effort : 0.0;
    double a = a_now / KMH_PER_MS;
    q.c = p->accel_gain * (a + p->effort_kp * u) + i;
    q.ie = p->accel_gain * p->effort_ki * u;
  } else {
    double a = a_ahead / KMH_PER_MS;
    q.c = p->kp * ep + i + p->accel_gain * a;
    q.ie = p->ki * q.e;
  }
  q.holding = s_now <= 0.0 && s_ahead <= 0.0 && !(a_ahead > 0.0) &&
              fabs(V) <= p->hold_speed;
  if (q.holding && p->follow == FOLLOW_EFFORT) {
    q.c = 0.0; /* backward: the prescription holds the body; both pedals off */
  } else if (q.holding) { /* no throttle, the brake at least at hold_brake */
    double hold = -p->hold_brake / p->brake_gain;
    q.c = q.c < hold ? q.c : hold;
  }
  d->valid = true;
  d->key_left = left;
  d->key_t = ctx->t;
  d->key_v = V;
  d->key_i = i;
  d->key_effort = effort;
  d->key_params = dg_ctx_params_epoch(ctx);
  d->memo = q;
  return q;
}

static void driver_pre_step(dg_block *self, dg_ctx *ctx) {
  ((driver_data *)self->data)->seg_start = ctx->t;
}

static void driver_torque_downstream(dg_block *self, dg_ctx *ctx) {
  const driver_params *p = self->params;
  driver_point q = driver_eval(self, ctx);
  bool frozen = (q.c >= 1.0 && q.ie > 0.0) || (q.c <= -1.0 / p->brake_gain && q.ie < 0.0);
  double i = dg_block_state(ctx, self)[0];
  dg_block_state_rate(ctx, self)[0] = q.holding ? -i / HOLD_DECAY : frozen ? 0.0 : q.ie;
}

static double driver_signal(const dg_block *self, const dg_ctx *ctx, int index) {
  const driver_params *p = self->params;
  if (index == SIG_TARGET)
    return dg_table1d_eval_hint(&p->trace, ctx->t, &((driver_data *)self->data)->hint_now, NULL);
  if (index == SIG_I)
    return dg_block_state(ctx, self)[0];
  if (index == SIG_SPEED)
    return KMH_PER_MS * dg_block_input(ctx, self, IN_SPEED);
  driver_point q = driver_eval(self, ctx);
  switch (index) {
  case SIG_THROTTLE:
    return dg_clamp01(q.c);
  case SIG_BRAKE:
    return dg_clamp01(-p->brake_gain * q.c);
  case SIG_COMMAND:
    return q.c;
  case SIG_ERROR:
    return q.e;
  case SIG_BRAKE_POWER:
    return dg_clamp01(-p->brake_gain * q.c) * p->brake_force * fabs(q.v);
  case SIG_HOLDING:
    return q.holding ? 1.0 : 0.0;
  default:
    return NAN;
  }
}

static int driver_set_signal(dg_block *self, dg_ctx *ctx, int index, double value) {
  if (index != SIG_I || !isfinite(value))
    return -1;
  dg_block_state_commit(ctx, self)[0] = value;
  return 0;
}

/* The pedals are clamped to 0..1. */
static void driver_signal_range(const void *params, int signal, dg_range *r) {
  (void)params;
  if (signal == SIG_THROTTLE || signal == SIG_BRAKE) {
    r->min = 0.0;
    r->max = 1.0;
  }
}

const dg_block_class dg_block_driver = {
    .abi = DG_BLOCK_ABI,
    .type = "driver",
    .doc = "Driver following a target-speed trace (a signal block; no ports): PI on the speed "
           "error with preview and acceleration feed-forward, its throttle and brake signals "
           "bound to the car's pedal inputs.",
    .params = driver_params_table,
    .params_size = sizeof(driver_params),
    .signals = driver_signals,
    .num_states = 1,
    .data_size = sizeof(driver_data),
    .pre_step = driver_pre_step,
    .torque_downstream = driver_torque_downstream,
    .signal = driver_signal,
    .set_signal = driver_set_signal,
    .inputs = driver_inputs,
    .signal_range = driver_signal_range,
};
