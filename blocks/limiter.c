/* limiter — a signal held within bounds:
 *
 *   output = min(max(input, lower), upper)
 *
 * The bounds are inputs (constants, or signals: a torque limit that moves);
 * unbound they read ∓DBL_MAX (no bound). Where lower > upper the upper bound wins.
 * A signal block (no ports, no states), feedthrough. Whether the input is
 * below, within or above the bounds is a mode held over each step segment,
 * and the crossings are located as events (blocks/signal_side.h), so RK4
 * keeps its order through them; `limited` is −1, 0 or +1 accordingly. */
#include "signal_side.h"

#include <drivegraph/block.h>

#include <float.h>
#include <math.h>

enum { IN_INPUT, IN_LOWER, IN_UPPER };
enum { SIG_OUTPUT, SIG_LIMITED };

typedef struct limiter_data {
  signal_side hi; /* input above upper */
  signal_side lo; /* input above lower */
} limiter_data;

static const dg_input_def limiter_inputs[] = {
    {.name = "input", .doc = "the signal limited", .flags = DG_INPUT_REQUIRED},
    {.name = "lower", .doc = "lower bound (none when unbound)", .def = -DBL_MAX},
    {.name = "upper", .doc = "upper bound (none when unbound; wins over lower)", .def = DBL_MAX},
    {0},
};

static const dg_signal_def limiter_signals[] = {
    {.name = "output", .unit = "", .doc = "the input within [lower, upper]",
     .port = DG_SIGNAL_HOOK, .flags = DG_SIGNAL_FEEDTHROUGH},
    {.name = "limited", .unit = "",
     .doc = "-1 at the lower bound, +1 at the upper, 0 within (held over each step segment)",
     .port = DG_SIGNAL_HOOK, .flags = DG_SIGNAL_FEEDTHROUGH | DG_SIGNAL_INTEGER},
    {0},
};

static const dg_param_def limiter_params_table[] = {{0}};

/* The decision for one bound: an unbound one (∓DBL_MAX) is never
 * crossed. */
static void limiter_decide(signal_side *s, double v, double bound) {
  if (fabs(bound) >= DBL_MAX) {
    s->above = bound < 0.0;
    s->watch = false;
    s->set = true;
    return;
  }
  signal_side_decide(s, v, bound);
}

static void limiter_pre_step(dg_block *self, dg_ctx *ctx) {
  limiter_data *d = self->data;
  double x = dg_block_input(ctx, self, IN_INPUT);
  limiter_decide(&d->hi, x, dg_block_input(ctx, self, IN_UPPER));
  limiter_decide(&d->lo, x, dg_block_input(ctx, self, IN_LOWER));
}

static int limiter_event_values(const dg_block *self, dg_ctx *ctx, double *g) {
  const limiter_data *d = self->data;
  double x = dg_block_input(ctx, self, IN_INPUT);
  g[0] = signal_side_event(&d->hi, x, dg_block_input(ctx, self, IN_UPPER));
  g[1] = signal_side_event(&d->lo, x, dg_block_input(ctx, self, IN_LOWER));
  return d->hi.watch || d->lo.watch;
}

/* -1, 0 or +1 by the held sides at the context's point. */
static int limiter_state(const limiter_data *d, double x, double lower, double upper) {
  return signal_side_above(&d->hi, x, upper) ? 1 : !signal_side_above(&d->lo, x, lower) ? -1 : 0;
}

static double limiter_signal(const dg_block *self, const dg_ctx *ctx, int index) {
  double x = dg_block_input(ctx, self, IN_INPUT), lower = dg_block_input(ctx, self, IN_LOWER),
         upper = dg_block_input(ctx, self, IN_UPPER);
  int s = limiter_state(self->data, x, lower, upper);
  if (index == SIG_LIMITED)
    return s;
  return s > 0 ? upper : s < 0 ? lower : x;
}

static void limiter_signal_range(const void *params, int signal, dg_range *r) {
  (void)params;
  if (signal == SIG_LIMITED) {
    r->min = -1.0;
    r->max = 1.0;
  }
}

const dg_block_class dg_block_limiter = {
    .abi = DG_BLOCK_ABI,
    .type = "limiter",
    .doc = "A signal held within lower and upper bounds, which are inputs (a signal block; no "
           "ports); the crossings located as events.",
    .params = limiter_params_table,
    .params_size = 0,
    .signals = limiter_signals,
    .data_size = sizeof(limiter_data),
    .pre_step = limiter_pre_step,
    .signal = limiter_signal,
    .num_events = 2,
    .event_values = limiter_event_values,
    .inputs = limiter_inputs,
    .signal_range = limiter_signal_range,
};
