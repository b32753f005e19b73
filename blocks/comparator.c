/* comparator — a switch with hysteresis: `state` turns 1 when the input
 * rises to `on_above` and 0 when it falls below `off_below`
 * (off_below <= on_above; equal: a plain comparator, no hysteresis), and
 * `output` passes input a while the state is 1, b while it is 0 (a = 1 and
 * b = 0 when unbound, so output = state).
 *
 * The state changes only at the located crossings (events: the input
 * reaching on_above while 0, falling to off_below while 1), never inside an
 * RK4 step. At the start it is 1 when the input is at or above on_above, 0
 * below off_below, and `initial_state` between them. `state` is a boolean
 * signal: it may drive boolean inputs (a lock-up, a throttle cut). A
 * signal block (no ports, no states). */
#include <drivegraph/block.h>

#include <math.h>

enum { IN_INPUT, IN_A, IN_B };
enum { SIG_OUTPUT, SIG_STATE };

typedef struct comparator_params {
  double on_above, off_below;
  bool has_off, initial_state;
} comparator_params;

typedef struct comparator_data {
  bool on;
  bool started;
} comparator_data;

static const dg_param_def comparator_params_table[] = {
    {.key = "on_above", .kind = DG_PARAM_NUMBER, .offset = offsetof(comparator_params, on_above),
     .doc = "the state turns 1 when the input rises to this value", .required = true,
     .flags = DG_P_DYNAMICS},
    {.key = "off_below", .kind = DG_PARAM_NUMBER, .offset = offsetof(comparator_params, off_below),
     .doc = "the state turns 0 when the input falls below this value (on_above when left out: "
            "no hysteresis)",
     .flags = DG_P_DYNAMICS, .present = DG_PRESENT(comparator_params, has_off)},
    {.key = "initial_state", .kind = DG_PARAM_BOOL,
     .offset = offsetof(comparator_params, initial_state),
     .doc = "the state at the start when the input starts between off_below and on_above",
     .flags = DG_P_DYNAMICS},
    {0},
};

static const dg_input_def comparator_inputs[] = {
    {.name = "input", .doc = "the signal compared", .flags = DG_INPUT_REQUIRED},
    {.name = "a", .doc = "passed to output while the state is 1 (1 when unbound)", .def = 1.0},
    {.name = "b", .doc = "passed to output while the state is 0 (0 when unbound)"},
    {0},
};

static const dg_signal_def comparator_signals[] = {
    {.name = "output", .unit = "", .doc = "a while the state is 1, b while it is 0",
     .port = DG_SIGNAL_HOOK, .flags = DG_SIGNAL_FEEDTHROUGH},
    {.name = "state", .unit = "", .doc = "1 after the input rose to on_above, 0 after it fell "
                                         "below off_below",
     .port = DG_SIGNAL_HOOK, .flags = DG_SIGNAL_FEEDTHROUGH | DG_SIGNAL_BOOL},
    {0},
};

static double comparator_off(const comparator_params *p) {
  return p->has_off ? p->off_below : p->on_above;
}

static void comparator_check(const void *params, dg_check *chk) {
  const comparator_params *p = params;
  if (p->has_off && !(p->off_below <= p->on_above))
    dg_check_error(chk, "off_below", "must be <= on_above %g (got %g)", p->on_above,
                   p->off_below);
}

/* The state at the point: the held one, or before the first segment the
 * start rule. */
static bool comparator_state(const comparator_params *p, const comparator_data *d, double x) {
  if (d->started)
    return d->on;
  return x >= p->on_above ? true : x < comparator_off(p) ? false : p->initial_state;
}

static void comparator_pre_step(dg_block *self, dg_ctx *ctx) {
  const comparator_params *p = self->params;
  comparator_data *d = self->data;
  double x = dg_block_input(ctx, self, IN_INPUT);
  if (!d->started)
    d->on = comparator_state(p, d, x);
  else if (!d->on && x >= p->on_above)
    d->on = true;
  else if (d->on && x < comparator_off(p))
    d->on = false;
  d->started = true;
}

/* > 0 until the crossing that changes the state. */
static int comparator_event_values(const dg_block *self, dg_ctx *ctx, double *g) {
  const comparator_params *p = self->params;
  const comparator_data *d = self->data;
  double x = dg_block_input(ctx, self, IN_INPUT);
  g[0] = d->on ? x - comparator_off(p) : p->on_above - x;
  return 1;
}

static double comparator_signal(const dg_block *self, const dg_ctx *ctx, int index) {
  bool on = comparator_state(self->params, self->data, dg_block_input(ctx, self, IN_INPUT));
  if (index == SIG_STATE)
    return on ? 1.0 : 0.0;
  return dg_block_input(ctx, self, on ? IN_A : IN_B);
}

const dg_block_class dg_block_comparator = {
    .abi = DG_BLOCK_ABI,
    .type = "comparator",
    .doc = "Comparator and switch with hysteresis (a signal block; no ports): a boolean state "
           "set when the input rises to on_above and cleared when it falls below off_below, "
           "located as events; output passes a or b by the state.",
    .params = comparator_params_table,
    .params_size = sizeof(comparator_params),
    .signals = comparator_signals,
    .data_size = sizeof(comparator_data),
    .check = comparator_check,
    .pre_step = comparator_pre_step,
    .signal = comparator_signal,
    .num_events = 1,
    .event_values = comparator_event_values,
    .inputs = comparator_inputs,
};
