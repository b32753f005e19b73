/* table_source — a value over time from a table.
 *
 *   τ = t − time_offset
 *   τ' = τ                                   without a period
 *   τ' = t₀ + ((τ − t₀) mod P)               with period P (mod ≥ 0; t₀ the first time)
 *   value = scale · table(τ')
 *
 * The table { "time": [...], "value": [...] } interpolates linearly and holds
 * its end values (before its first time, after its last). With a period the
 * table repeats every P seconds from its first time: P must cover the table
 * (P ≥ t_last − t₀); the last value holds from t_last to t₀ + P, where the
 * value returns to the first (a jump unless the two are equal).
 *
 * A signal block: no ports, no states. `value` follows the input `scale`
 * (default 1) at once, so it is a feedthrough signal; `unscaled` (the table
 * alone) is not.
 *
 * Every breakpoint is a kink or a jump of the value. The block declares the
 * next one as an event (g = t_next − t, t_next found in pre_step), so the
 * solver ends a step segment exactly there and RK4 integrates what the value
 * drives as accurately as if the steps landed on the breakpoints. The period
 * index is decided at segment ends (pre_step, post_step) and held inside a
 * segment, so the segment that ends at a period's wrap sees the value from
 * the left at all its stages (the table's end value held), and a value read
 * between steps at the wrap is the new period's. */
#include <drivegraph/block.h>

#include <float.h>
#include <math.h>

enum { SIG_VALUE, SIG_UNSCALED };
enum { IN_SCALE };

typedef struct table_params {
  dg_table1d table;
  double period;
  bool has_period;
  double time_offset;
} table_params;

typedef struct table_data {
  double period_index; /* m: the table's argument is τ − m·P (0 without a period) */
  double next;         /* absolute time of the next breakpoint after the segment's start, or NAN */
} table_data;

static const dg_param_def table_params_table[] = {
    {.key = "table", .kind = DG_PARAM_TABLE1D, .offset = offsetof(table_params, table),
     .doc = "value over time: { \"time\": [s...], \"value\": [...] } (linear, ends held)",
     .required = true, .axis = {"time", "value"}, .min_len = 2, .flags = DG_P_DYNAMICS},
    {.key = "period", .kind = DG_PARAM_NUMBER, .offset = offsetof(table_params, period),
     .unit = "s",
     .doc = "repeat the table every period from its first time (>= the table's time span)",
     .flags = DG_P_MIN_EXCL | DG_P_DYNAMICS, .min = 0,
     .present = DG_PRESENT(table_params, has_period)},
    DG_NUMBER(table_params, time_offset, .unit = "s", .flags = DG_P_DYNAMICS,
              .doc = "shifts the table later in time: value(t) = table(t - time_offset)"),
    {0},
};

static const dg_input_def table_inputs[] = {
    {.name = "scale", .doc = "factor on the table's value", .def = 1.0},
    {0},
};

static const dg_signal_def table_signals[] = {
    {.name = "value", .unit = "", .doc = "scale x table(t - time_offset)", .port = DG_SIGNAL_HOOK,
     .flags = DG_SIGNAL_FEEDTHROUGH},
    {.name = "unscaled", .unit = "", .doc = "table(t - time_offset), without the scale input",
     .port = DG_SIGNAL_HOOK},
    {0},
};

static void table_check(const void *params, dg_check *chk) {
  const table_params *p = params;
  if (!p->has_period || p->table.n < 1)
    return;
  double span = p->table.x[p->table.n - 1] - p->table.x[0];
  if (p->period < span)
    dg_check_error(chk, "period", "must be >= the table's time span %g s (got %g)", span,
                   p->period);
}

/* The period index of time t (0 without a period). */
static double table_period_index(const table_params *p, double t) {
  if (!p->has_period)
    return 0.0;
  return floor((t - p->time_offset - p->table.x[0]) / p->period);
}

/* The table at time t in period m. */
static double table_unscaled(const table_params *p, double t, double m) {
  double tau = t - p->time_offset - (p->has_period ? m * p->period : 0.0);
  return dg_table1d_eval(&p->table, tau);
}

static double table_signal(const dg_block *self, const dg_ctx *ctx, int index) {
  const table_data *d = self->data;
  double v = table_unscaled(self->params, ctx->t, d->period_index);
  return index == SIG_VALUE ? dg_block_input(ctx, self, IN_SCALE) * v : v;
}

/* At time t: the period index and the next breakpoint after t (one within
 * the solver's time tolerance of t counts as passed). */
static void table_locate(const table_params *p, table_data *d, double t, double tol) {
  double m = table_period_index(p, t + tol);
  double base = p->time_offset + (p->has_period ? m * p->period : 0.0);
  d->period_index = m;
  d->next = NAN;
  for (int k = 0; k < p->table.n; k++)
    if (base + p->table.x[k] > t + tol) {
      d->next = base + p->table.x[k];
      return;
    }
  if (p->has_period) /* the start of the next period */
    d->next = base + p->period + p->table.x[0];
}

static int table_init(dg_block *self, dg_init *init) {
  (void)init;
  table_locate(self->params, self->data, 0.0, 0.0); /* a simulation starts at 0 */
  return 0;
}

static void table_update(dg_block *self, dg_ctx *ctx) {
  table_locate(self->params, self->data, ctx->t,
               1e-9 * ctx->dt + 8.0 * DBL_EPSILON * fabs(ctx->t));
}

static int table_event_values(const dg_block *self, dg_ctx *ctx, double *g) {
  const table_data *d = self->data;
  if (isnan(d->next)) {
    g[0] = 1.0;
    return 0;
  }
  g[0] = d->next - ctx->t;
  return 1;
}

/* `unscaled` stays within the table's values (linear between them, ends
 * held); `value` follows the scale input, whose range is not known here. */
static void table_signal_range(const void *params, int signal, dg_range *r) {
  const table_params *p = params;
  if (signal != SIG_UNSCALED || p->table.n < 1)
    return;
  r->min = r->max = p->table.y[0];
  for (int k = 1; k < p->table.n; k++) {
    r->min = dg_fmin(r->min, p->table.y[k]);
    r->max = dg_fmax(r->max, p->table.y[k]);
  }
}

const dg_block_class dg_block_table_source = {
    .abi = DG_BLOCK_ABI,
    .type = "table_source",
    .doc = "A value over time from a table (a signal to bind to inputs; no ports): linear, "
           "ends held, optionally repeated with a period, times an input scale.",
    .params = table_params_table,
    .params_size = sizeof(table_params),
    .signals = table_signals,
    .data_size = sizeof(table_data),
    .inputs = table_inputs,
    .check = table_check,
    .init = table_init,
    .pre_step = table_update,
    .post_step = table_update,
    .signal = table_signal,
    .num_events = 1,
    .event_values = table_event_values,
    .signal_range = table_signal_range,
};
