/* min_max — the smaller or the larger of two signals.
 *
 *   kind "min": output = min(a, b)     kind "max": output = max(a, b)
 *
 * A signal block (no ports, no states), feedthrough. Which input is passed
 * on is a mode held over each step segment and the crossing a = b is
 * located as an event (blocks/signal_side.h), so RK4 keeps its order
 * through it; the signal `selected` says which (0: a, 1: b). Chain blocks
 * for more inputs. */
#include "signal_side.h"

#include <drivegraph/block.h>

enum { IN_A, IN_B };
enum { SIG_OUTPUT, SIG_SELECTED };
enum { KIND_MIN, KIND_MAX };

typedef struct min_max_params {
  int kind;
} min_max_params;

typedef struct min_max_data {
  signal_side side; /* a above b */
} min_max_data;

static const char *const min_max_kinds[] = {"min", "max", NULL};

static const dg_param_def min_max_params_table[] = {
    {.key = "kind", .kind = DG_PARAM_ENUM, .offset = offsetof(min_max_params, kind),
     .doc = "min: the smaller input; max: the larger", .def = KIND_MIN, .choices = min_max_kinds,
     .flags = DG_P_DYNAMICS},
    {0},
};

static const dg_input_def min_max_inputs[] = {
    {.name = "a", .doc = "first input", .flags = DG_INPUT_REQUIRED},
    {.name = "b", .doc = "second input", .flags = DG_INPUT_REQUIRED},
    {0},
};

static const dg_signal_def min_max_signals[] = {
    {.name = "output", .unit = "", .doc = "min(a, b) or max(a, b)", .port = DG_SIGNAL_HOOK,
     .flags = DG_SIGNAL_FEEDTHROUGH},
    {.name = "selected", .unit = "",
     .doc = "0 while a is passed on, 1 while b is (held over each step segment)",
     .port = DG_SIGNAL_HOOK, .flags = DG_SIGNAL_FEEDTHROUGH | DG_SIGNAL_INTEGER},
    {0},
};

/* Whether b is passed on with a on side `a_above` of b. */
static bool min_max_takes_b(const min_max_params *p, bool a_above) {
  return p->kind == KIND_MIN ? a_above : !a_above;
}

static void min_max_pre_step(dg_block *self, dg_ctx *ctx) {
  min_max_data *d = self->data;
  signal_side_decide(&d->side, dg_block_input(ctx, self, IN_A), dg_block_input(ctx, self, IN_B));
}

static int min_max_event_values(const dg_block *self, dg_ctx *ctx, double *g) {
  const min_max_data *d = self->data;
  g[0] = signal_side_event(&d->side, dg_block_input(ctx, self, IN_A),
                           dg_block_input(ctx, self, IN_B));
  return d->side.watch;
}

static double min_max_signal(const dg_block *self, const dg_ctx *ctx, int index) {
  const min_max_data *d = self->data;
  double a_val = dg_block_input(ctx, self, IN_A), b_val = dg_block_input(ctx, self, IN_B);
  bool b = min_max_takes_b(self->params, signal_side_above(&d->side, a_val, b_val));
  if (index == SIG_SELECTED)
    return b ? 1.0 : 0.0;
  return b ? b_val : a_val;
}

static void min_max_signal_range(const void *params, int signal, dg_range *r) {
  (void)params;
  if (signal == SIG_SELECTED) {
    r->min = 0.0;
    r->max = 1.0;
  }
}

const dg_block_class dg_block_min_max = {
    .abi = DG_BLOCK_ABI,
    .type = "min_max",
    .doc = "The smaller (kind min) or larger (kind max) of two signals (a signal block; no "
           "ports), the crossing located as an event.",
    .params = min_max_params_table,
    .params_size = sizeof(min_max_params),
    .signals = min_max_signals,
    .data_size = sizeof(min_max_data),
    .pre_step = min_max_pre_step,
    .signal = min_max_signal,
    .num_events = 1,
    .event_values = min_max_event_values,
    .inputs = min_max_inputs,
    .signal_range = min_max_signal_range,
};
