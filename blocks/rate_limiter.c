/* rate_limiter — a signal that follows its input no faster than given
 * rates:
 *
 *   dy/dt = min(max((input − y) / tau, −falling), rising),  output = y
 *
 * Within the limits y follows the input as a first-order lag of time
 * constant tau (small: tau → 0 is the ideal rate limiter, which follows
 * the input exactly wherever its slope is within the limits); beyond them y
 * ramps at `rising` or `falling` per second. y is a state integrated by RK4
 * with the mechanics, starting at the input (or `initial`), settable as the
 * initial value "NAME.output"; not feedthrough. Which law applies (lag,
 * rising ramp, falling ramp) is a mode held over each step segment and
 * the crossings of the lag's rate through the limits are located as events
 * (blocks/signal_side.h), so RK4 keeps its order through them. RK4 is
 * stable in the lag for dt < 2.78 tau. */
#include "signal_side.h"

#include <drivegraph/block.h>

#include <math.h>

enum { IN_INPUT };
enum { SIG_OUTPUT, SIG_RATE, SIG_LIMITED };
enum { ST_Y, NUM_STATES };

typedef struct rate_limiter_params {
  double rising, falling, tau, initial;
  bool has_falling, has_initial;
} rate_limiter_params;

typedef struct rate_limiter_data {
  double fall;      /* falling, or rising when not given */
  signal_side up;   /* lag rate above rising */
  signal_side down; /* lag rate above −falling */
  bool started;
} rate_limiter_data;

static const dg_param_def rate_limiter_params_table[] = {
    {.key = "rising", .kind = DG_PARAM_NUMBER, .offset = offsetof(rate_limiter_params, rising),
     .unit = "1/s", .doc = "largest rate of rise (output units per second)", .required = true,
     .flags = DG_P_MIN_EXCL | DG_P_DYNAMICS, .min = 0},
    {.key = "falling", .kind = DG_PARAM_NUMBER, .offset = offsetof(rate_limiter_params, falling),
     .unit = "1/s", .doc = "largest rate of fall, as a positive number (rising when left out)",
     .flags = DG_P_MIN_EXCL | DG_P_DYNAMICS, .min = 0,
     .present = DG_PRESENT(rate_limiter_params, has_falling)},
    DG_NUMBER(rate_limiter_params, tau, .unit = "s", .def = 0.01,
              .flags = DG_P_MIN_EXCL | DG_P_DYNAMICS,
              .doc = "time constant with which the output follows the input within the rates"),
    {.key = "initial", .kind = DG_PARAM_NUMBER, .offset = offsetof(rate_limiter_params, initial),
     .doc = "output at the start (the input at the start when left out)", .flags = DG_P_DYNAMICS,
     .present = DG_PRESENT(rate_limiter_params, has_initial)},
    {0},
};

static const dg_input_def rate_limiter_inputs[] = {
    {.name = "input", .doc = "the signal followed", .flags = DG_INPUT_REQUIRED},
    {0},
};

static const dg_signal_def rate_limiter_signals[] = {
    {.name = "output", .unit = "", .doc = "y (a state; settable as an initial value)",
     .port = DG_SIGNAL_HOOK},
    {.name = "rate", .unit = "1/s", .doc = "dy/dt", .port = DG_SIGNAL_HOOK,
     .flags = DG_SIGNAL_FEEDTHROUGH},
    {.name = "limited", .unit = "",
     .doc = "+1 while ramping at the rising rate, -1 at the falling rate, 0 following "
            "(held over each step segment)",
     .port = DG_SIGNAL_HOOK, .flags = DG_SIGNAL_INTEGER},
    {0},
};

static int rate_limiter_init(dg_block *self, dg_init *init) {
  const rate_limiter_params *p = self->params;
  rate_limiter_data *d = self->data;
  d->fall = p->has_falling ? p->falling : p->rising;
  d->started = p->has_initial;
  dg_init_state(init)[ST_Y] = p->has_initial ? p->initial : 0.0;
  return 0;
}

/* The lag's rate (input − y)/tau at the context's point. */
static double rate_limiter_lag(const dg_block *self, const dg_ctx *ctx) {
  const rate_limiter_params *p = self->params;
  return (dg_block_input(ctx, self, IN_INPUT) - dg_block_state(ctx, self)[ST_Y]) / p->tau;
}

/* y's start value, once the inputs of the start exist. */
static void rate_limiter_begin(dg_block *self, dg_ctx *ctx) {
  rate_limiter_data *d = self->data;
  if (d->started)
    return;
  dg_block_state_commit(ctx, self)[ST_Y] = dg_block_input(ctx, self, IN_INPUT);
  d->started = true;
}

static void rate_limiter_pre_step(dg_block *self, dg_ctx *ctx) {
  const rate_limiter_params *p = self->params;
  rate_limiter_data *d = self->data;
  rate_limiter_begin(self, ctx);
  double r = rate_limiter_lag(self, ctx);
  signal_side_decide(&d->up, r, p->rising);
  signal_side_decide(&d->down, r, -d->fall);
}

static void rate_limiter_start(dg_block *self, dg_ctx *ctx, int phase) {
  if (phase == DG_START_CHECK)
    rate_limiter_begin(self, ctx);
}

/* −1, 0, +1 by the held sides at the context's point. */
static int rate_limiter_mode(const dg_block *self, const dg_ctx *ctx) {
  const rate_limiter_params *p = self->params;
  const rate_limiter_data *d = self->data;
  double r = rate_limiter_lag(self, ctx);
  return signal_side_above(&d->up, r, p->rising) ? 1
         : !signal_side_above(&d->down, r, -d->fall) ? -1
                                                       : 0;
}

static double rate_limiter_rate(const dg_block *self, const dg_ctx *ctx) {
  const rate_limiter_params *p = self->params;
  const rate_limiter_data *d = self->data;
  int m = rate_limiter_mode(self, ctx);
  return m > 0 ? p->rising : m < 0 ? -d->fall : rate_limiter_lag(self, ctx);
}

static void rate_limiter_torque_downstream(dg_block *self, dg_ctx *ctx) {
  dg_block_state_rate(ctx, self)[ST_Y] = rate_limiter_rate(self, ctx);
}

static int rate_limiter_event_values(const dg_block *self, dg_ctx *ctx, double *g) {
  const rate_limiter_params *p = self->params;
  const rate_limiter_data *d = self->data;
  g[0] = g[1] = 1.0;
  if (!d->up.watch && !d->down.watch)
    return 0;
  double r = rate_limiter_lag(self, ctx);
  g[0] = signal_side_event(&d->up, r, p->rising);
  g[1] = signal_side_event(&d->down, r, -d->fall);
  return 1;
}

static double rate_limiter_signal(const dg_block *self, const dg_ctx *ctx, int index) {
  switch (index) {
  case SIG_RATE:
    return rate_limiter_rate(self, ctx);
  case SIG_LIMITED:
    return rate_limiter_mode(self, ctx);
  default:
    return dg_block_state(ctx, self)[ST_Y];
  }
}

static int rate_limiter_set_signal(dg_block *self, dg_ctx *ctx, int index, double value) {
  if (index != SIG_OUTPUT || !isfinite(value))
    return -1;
  dg_block_state_commit(ctx, self)[ST_Y] = value;
  ((rate_limiter_data *)self->data)->started = true;
  return 0;
}


static void rate_limiter_signal_range(const void *params, int signal, dg_range *r) {
  const rate_limiter_params *p = params;
  if (signal == SIG_RATE) {
    r->min = -(p->has_falling ? p->falling : p->rising);
    r->max = p->rising;
  } else if (signal == SIG_LIMITED) {
    r->min = -1.0;
    r->max = 1.0;
  }
}

const dg_block_class dg_block_rate_limiter = {
    .abi = DG_BLOCK_ABI,
    .type = "rate_limiter",
    .doc = "Rate limiter (a signal block; no ports): the output follows the input as a lag of "
           "time constant tau, never faster than the rising and falling rates; the limits' "
           "crossings located as events.",
    .params = rate_limiter_params_table,
    .params_size = sizeof(rate_limiter_params),
    .signals = rate_limiter_signals,
    .data_size = sizeof(rate_limiter_data),
    .num_states = NUM_STATES,
    .init = rate_limiter_init,
    .pre_step = rate_limiter_pre_step,
    .start = rate_limiter_start,
    .torque_downstream = rate_limiter_torque_downstream,
    .signal = rate_limiter_signal,
    .set_signal = rate_limiter_set_signal,
    .num_events = 2,
    .event_values = rate_limiter_event_values,
    .inputs = rate_limiter_inputs,
    .signal_range = rate_limiter_signal_range,
};
