/* abs — the magnitude of a signal: output = |input|.
 *
 * A signal block (no ports, no states), feedthrough. The kink at 0 is a
 * mode held over each step segment (output = +input or −input) and the
 * input's zero crossing is located as an event (blocks/signal_side.h), so
 * RK4 keeps its order through it. The signal `sign` is the held side:
 * +1 or −1. */
#include "signal_side.h"

#include <drivegraph/block.h>

enum { IN_INPUT };
enum { SIG_OUTPUT, SIG_SIGN };

typedef struct abs_data {
  signal_side side; /* input above 0 */
} abs_data;

static const dg_input_def abs_inputs[] = {
    {.name = "input", .doc = "the signal", .flags = DG_INPUT_REQUIRED},
    {0},
};

static const dg_signal_def abs_signals[] = {
    {.name = "output", .unit = "", .doc = "|input|", .port = DG_SIGNAL_HOOK,
     .flags = DG_SIGNAL_FEEDTHROUGH},
    {.name = "sign", .unit = "", .doc = "+1 or -1: the side of 0 the input is on (held over "
                                        "each step segment, switched at the located crossing)",
     .port = DG_SIGNAL_HOOK, .flags = DG_SIGNAL_FEEDTHROUGH | DG_SIGNAL_INTEGER},
    {0},
};

static const dg_param_def abs_params_table[] = {{0}};

static void abs_pre_step(dg_block *self, dg_ctx *ctx) {
  abs_data *d = self->data;
  signal_side_decide(&d->side, dg_block_input(ctx, self, IN_INPUT), 0.0);
}

static int abs_event_values(const dg_block *self, dg_ctx *ctx, double *g) {
  const abs_data *d = self->data;
  g[0] = signal_side_event(&d->side, dg_block_input(ctx, self, IN_INPUT), 0.0);
  return d->side.watch;
}

static double abs_signal(const dg_block *self, const dg_ctx *ctx, int index) {
  const abs_data *d = self->data;
  double x = dg_block_input(ctx, self, IN_INPUT);
  double s = signal_side_above(&d->side, x, 0.0) ? 1.0 : -1.0;
  return index == SIG_SIGN ? s : s * x;
}

static void abs_signal_range(const void *params, int signal, dg_range *r) {
  (void)params;
  r->min = signal == SIG_SIGN ? -1.0 : 0.0;
  if (signal == SIG_SIGN)
    r->max = 1.0;
}

const dg_block_class dg_block_abs = {
    .abi = DG_BLOCK_ABI,
    .type = "abs",
    .doc = "Magnitude of a signal (a signal block; no ports): output = |input|, the zero "
           "crossing located as an event.",
    .params = abs_params_table,
    .params_size = 0,
    .signals = abs_signals,
    .data_size = sizeof(abs_data),
    .pre_step = abs_pre_step,
    .signal = abs_signal,
    .num_events = 1,
    .event_values = abs_event_values,
    .inputs = abs_inputs,
    .signal_range = abs_signal_range,
};
