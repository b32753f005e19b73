/* sine_source — a sine wave over time, as Modelica.Blocks.Sources.Sine:
 *
 *   value(t) = offset                                          t <  start_time
 *   value(t) = offset + amplitude · sin(2π·f·(t − start_time) + phase)   t >= start_time
 *
 * A signal block: no ports, no states, no inputs. Bind its `value` to
 * another block's input ("inputs": { "command": "sine.value" }); it depends
 * on time only, so it is no feedthrough and closes no algebraic loop.
 *
 * With a phase whose sine is not 0 the value jumps at start_time (and its
 * slope always changes there). The block declares that instant as an event
 * (g = start_time − t), so the solver ends a step segment exactly there and
 * RK4 keeps its order across it wherever start_time falls in a step. Whether
 * the sine has started is decided at segment ends (pre_step, post_step) and
 * held inside a segment, so the segment that ends at start_time sees the
 * value from the left at all of its RK4 stages (its last stage is at, or a
 * located event's round-off past, start_time), and a value read between
 * steps at start_time is the started one, as in Modelica. */
#include <drivegraph/block.h>

#include <float.h>
#include <math.h>

#define TWO_PI 6.28318530717958647692

enum { SIG_VALUE };

typedef struct sine_params {
  double amplitude;
  double frequency;
  double phase;
  double offset;
  double start_time;
} sine_params;

typedef struct sine_data {
  bool started; /* t >= start_time at the last segment end */
} sine_data;

static const dg_param_def sine_params_table[] = {
    DG_NUMBER(sine_params, amplitude, .unit = "", .def = 1.0, .flags = DG_P_DYNAMICS,
              .doc = "amplitude of the sine (in the unit of the input it drives)"),
    DG_NUMBER(sine_params, frequency, .unit = "Hz", .def = 1.0, .flags = DG_P_MIN | DG_P_DYNAMICS,
              .doc = "frequency f"),
    DG_NUMBER(sine_params, phase, .unit = "rad", .flags = DG_P_DYNAMICS,
              .doc = "phase at start_time"),
    DG_NUMBER(sine_params, offset, .unit = "", .flags = DG_P_DYNAMICS,
              .doc = "value added to the sine, and the value before start_time"),
    DG_NUMBER(sine_params, start_time, .unit = "s", .flags = DG_P_DYNAMICS,
              .doc = "time the sine starts (the value is offset before it)"),
    {0},
};

static const dg_signal_def sine_signals[] = {
    {.name = "value", .unit = "", .doc = "offset + amplitude sin(2 pi f (t - start_time) + phase)",
     .port = DG_SIGNAL_HOOK},
    {0},
};

static double sine_signal(const dg_block *self, const dg_ctx *ctx, int index) {
  const sine_params *p = self->params;
  const sine_data *d = self->data;
  (void)index;
  if (!d->started)
    return p->offset;
  return p->offset + p->amplitude * sin(TWO_PI * p->frequency * (ctx->t - p->start_time) + p->phase);
}

static int sine_init(dg_block *self, dg_init *init) {
  const sine_params *p = self->params;
  (void)init;
  ((sine_data *)self->data)->started = p->start_time <= 0.0; /* a simulation starts at 0 */
  return 0;
}

/* At a segment's start and end: started once t has reached start_time (to
 * the solver's time tolerance). */
static void sine_update(dg_block *self, dg_ctx *ctx) {
  const sine_params *p = self->params;
  sine_data *d = self->data;
  double tol = 1e-9 * ctx->dt + 8.0 * DBL_EPSILON * fabs(ctx->t);
  d->started = ctx->t >= p->start_time - tol;
}

/* The start as an event, until it has happened. */
static int sine_event_values(const dg_block *self, dg_ctx *ctx, double *g) {
  const sine_params *p = self->params;
  const sine_data *d = self->data;
  if (d->started) {
    g[0] = 1.0;
    return 0;
  }
  g[0] = p->start_time - ctx->t;
  return 1;
}

/* The value stays within offset ± |amplitude| and oscillates at the
 * frequency, which the step must sample (dg_graph_check_step). */
static void sine_signal_range(const void *params, int signal, dg_range *r) {
  const sine_params *p = params;
  (void)signal;
  r->min = p->offset - fabs(p->amplitude);
  r->max = p->offset + fabs(p->amplitude);
  r->frequency = p->amplitude != 0.0 ? p->frequency : 0.0;
}

const dg_block_class dg_block_sine_source = {
    .abi = DG_BLOCK_ABI,
    .type = "sine_source",
    .flags = DG_CLASS_TIME_SOURCE,
    .doc = "Sine wave over time (a signal to bind to inputs; no ports): offset + amplitude "
           "sin(2 pi f (t - start_time) + phase) from start_time, offset before it "
           "(as Modelica.Blocks.Sources.Sine).",
    .params = sine_params_table,
    .params_size = sizeof(sine_params),
    .signals = sine_signals,
    .data_size = sizeof(sine_data),
    .init = sine_init,
    .pre_step = sine_update,
    .post_step = sine_update,
    .signal = sine_signal,
    .num_events = 1,
    .event_values = sine_event_values,
    .signal_range = sine_signal_range,
};
