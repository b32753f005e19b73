/* lag — a first-order lag of a signal:
 *
 *   T · dy/dt = k · input − y,   output = y
 *
 * y is a state integrated by RK4 with the mechanics; it starts at
 * k · input (no transient from the start) unless `initial` is given, and
 * is settable as the initial value "NAME.output". The output is a state,
 * not feedthrough: it may feed anything, its own input included (a lag in
 * a loop breaks an algebraic loop). RK4 is stable for dt < 2.78 T. */
#include <drivegraph/block.h>

#include <math.h>

enum { IN_INPUT };
enum { SIG_OUTPUT };
enum { ST_Y, NUM_STATES };

typedef struct lag_params {
  double time_constant, gain, initial;
  bool has_initial;
} lag_params;

typedef struct lag_data {
  bool started; /* y has its start value */
} lag_data;

static const dg_param_def lag_params_table[] = {
    {.key = "time_constant", .kind = DG_PARAM_NUMBER, .offset = offsetof(lag_params, time_constant),
     .unit = "s", .doc = "time constant T", .required = true,
     .flags = DG_P_MIN_EXCL | DG_P_DYNAMICS, .min = 0},
    DG_NUMBER(lag_params, gain, .unit = "", .def = 1.0, .flags = DG_P_DYNAMICS,
              .doc = "steady-state gain k (output per unit of input)"),
    {.key = "initial", .kind = DG_PARAM_NUMBER, .offset = offsetof(lag_params, initial),
     .doc = "output at the start (k * input at the start when left out)",
     .flags = DG_P_DYNAMICS, .present = DG_PRESENT(lag_params, has_initial)},
    {0},
};

static const dg_input_def lag_inputs[] = {
    {.name = "input", .doc = "the signal lagged", .flags = DG_INPUT_REQUIRED},
    {0},
};

static const dg_signal_def lag_signals[] = {
    {.name = "output", .unit = "", .doc = "y (a state; settable as an initial value)",
     .port = DG_SIGNAL_HOOK},
    {0},
};

static int lag_init(dg_block *self, dg_init *init) {
  const lag_params *p = self->params;
  dg_init_state(init)[ST_Y] = p->has_initial ? p->initial : 0.0;
  ((lag_data *)self->data)->started = p->has_initial;
  return 0;
}

static void lag_pre_step(dg_block *self, dg_ctx *ctx) {
  const lag_params *p = self->params;
  lag_data *d = self->data;
  if (d->started)
    return;
  dg_block_state_commit(ctx, self)[ST_Y] = p->gain * dg_block_input(ctx, self, IN_INPUT);
  d->started = true;
}

/* The start value once the inputs of the start exist (dg_sim_start). */
static void lag_start(dg_block *self, dg_ctx *ctx, int phase) {
  if (phase == DG_START_CHECK)
    lag_pre_step(self, ctx);
}

static void lag_torque_downstream(dg_block *self, dg_ctx *ctx) {
  const lag_params *p = self->params;
  double y = dg_block_state(ctx, self)[ST_Y];
  dg_block_state_rate(ctx, self)[ST_Y] =
      (p->gain * dg_block_input(ctx, self, IN_INPUT) - y) / p->time_constant;
}

static double lag_signal(const dg_block *self, const dg_ctx *ctx, int index) {
  (void)index;
  return dg_block_state(ctx, self)[ST_Y];
}

static int lag_set_signal(dg_block *self, dg_ctx *ctx, int index, double value) {
  (void)index;
  if (!isfinite(value))
    return -1;
  dg_block_state_commit(ctx, self)[ST_Y] = value;
  ((lag_data *)self->data)->started = true;
  return 0;
}

const dg_block_class dg_block_lag = {
    .abi = DG_BLOCK_ABI,
    .type = "lag",
    .doc = "First-order lag of a signal (a signal block; no ports): T dy/dt = k input - y, y a "
           "state integrated by RK4 with the mechanics.",
    .params = lag_params_table,
    .params_size = sizeof(lag_params),
    .signals = lag_signals,
    .data_size = sizeof(lag_data),
    .num_states = NUM_STATES,
    .init = lag_init,
    .pre_step = lag_pre_step,
    .start = lag_start,
    .torque_downstream = lag_torque_downstream,
    .signal = lag_signal,
    .set_signal = lag_set_signal,
    .inputs = lag_inputs,
};
