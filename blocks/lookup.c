/* lookup — a 1-D table of a signal: output = f(input), piecewise linear
 * through the points (x_i, y_i), x strictly increasing.
 *
 * Beyond the ends the output is held at the end values (extrapolation
 * "hold") or continues the end segments' lines ("linear"). A signal block
 * (no ports, no states), feedthrough.
 *
 * The piece in use is a mode held over each step segment: the output is
 * that piece's line over the whole segment, and the input reaching the
 * piece's breakpoints is located as an event, so RK4 keeps its order
 * through the kinks (as blocks/signal_side.h does for one boundary). A
 * segment that starts on a breakpoint moves to the piece beyond it when the
 * previous segment located that crossing, keeps its piece otherwise, and
 * watches no breakpoint for that segment; an input that jumps is placed by
 * a search of the table (at segment starts only: nothing is searched in an
 * RK4 stage). */
#include <drivegraph/block.h>

#include <math.h>

enum { IN_INPUT };
enum { SIG_OUTPUT, SIG_PIECE };
enum { EXTRA_HOLD, EXTRA_LINEAR };

typedef struct lookup_params {
  dg_table1d table;
  int extrapolation;
} lookup_params;

/* piece k in −1 … n−1: −1 below x_0, k between x_k and x_{k+1}, n−1
 * above x_{n−1}. */
typedef struct lookup_data {
  int piece;
  bool watch;   /* the segment locates the piece's breakpoints */
  bool started; /* a piece has been chosen */
} lookup_data;

static const char *const lookup_extra[] = {"hold", "linear", NULL};

static const dg_param_def lookup_params_table[] = {
    {.key = "table", .kind = DG_PARAM_TABLE1D, .offset = offsetof(lookup_params, table),
     .doc = "the points: { \"x\": [...], \"y\": [...] } (x strictly increasing)",
     .required = true, .axis = {"x", "y"}, .min_len = 1, .flags = DG_P_DYNAMICS},
    {.key = "extrapolation", .kind = DG_PARAM_ENUM, .offset = offsetof(lookup_params, extrapolation),
     .doc = "beyond the ends: hold (the end values) or linear (the end segments' lines)",
     .def = EXTRA_HOLD, .choices = lookup_extra, .flags = DG_P_DYNAMICS},
    {0},
};

static const dg_input_def lookup_inputs[] = {
    {.name = "input", .doc = "x, the signal looked up", .flags = DG_INPUT_REQUIRED},
    {0},
};

static const dg_signal_def lookup_signals[] = {
    {.name = "output", .unit = "", .doc = "f(input)", .port = DG_SIGNAL_HOOK,
     .flags = DG_SIGNAL_FEEDTHROUGH},
    {.name = "piece", .unit = "",
     .doc = "the piece in use: -1 below the first point, k between points k and k+1 (from 0), "
            "n-1 above the last (held over each step segment)",
     .port = DG_SIGNAL_HOOK, .flags = DG_SIGNAL_FEEDTHROUGH | DG_SIGNAL_INTEGER},
    {0},
};

/* The piece containing x by position (x_k <= x < x_{k+1}). */
static int lookup_find(const dg_table1d *t, double x) {
  if (x < t->x[0])
    return -1;
  int lo = 0, hi = t->n - 1; /* x_lo <= x; the answer is in [lo, hi] */
  if (x >= t->x[hi])
    return hi;
  while (hi - lo > 1) {
    int mid = (lo + hi) / 2;
    if (x >= t->x[mid])
      lo = mid;
    else
      hi = mid;
  }
  return lo;
}

static bool lookup_near(double x, double b) {
  return fabs(x - b) <= 1e-9 * dg_fmax(fabs(x), fabs(b));
}

static void lookup_pre_step(dg_block *self, dg_ctx *ctx) {
  const lookup_params *p = self->params;
  lookup_data *d = self->data;
  const dg_table1d *t = &p->table;
  double x = dg_block_input(ctx, self, IN_INPUT);
  int k = d->piece;
  bool on_lo = d->started && k >= 0 && lookup_near(x, t->x[k]);
  bool on_hi = d->started && k + 1 < t->n && lookup_near(x, t->x[k + 1]);
  if (on_lo || on_hi) {
    if (d->watch) /* the crossing located: to the piece beyond it */
      d->piece = on_lo ? k - 1 : k + 1;
    d->watch = false;
  } else {
    d->piece = lookup_find(t, x);
    d->watch = true;
  }
  d->started = true;
}

static int lookup_event_values(const dg_block *self, dg_ctx *ctx, double *g) {
  const lookup_params *p = self->params;
  const lookup_data *d = self->data;
  const dg_table1d *t = &p->table;
  g[0] = g[1] = 1.0;
  if (!d->watch)
    return 0;
  double x = dg_block_input(ctx, self, IN_INPUT);
  if (d->piece >= 0)
    g[0] = x - t->x[d->piece];
  if (d->piece + 1 < t->n)
    g[1] = t->x[d->piece + 1] - x;
  return 1;
}

/* The line of piece k at x. */
static double lookup_line(const lookup_params *p, int k, double x) {
  const dg_table1d *t = &p->table;
  if (t->n == 1)
    return t->y[0];
  if (p->extrapolation == EXTRA_HOLD && (k < 0 || k >= t->n - 1))
    return k < 0 ? t->y[0] : t->y[t->n - 1];
  int i = k < 0 ? 0 : k >= t->n - 1 ? t->n - 2 : k;
  double s = (t->y[i + 1] - t->y[i]) / (t->x[i + 1] - t->x[i]);
  return t->y[i] + s * (x - t->x[i]);
}

static double lookup_signal(const dg_block *self, const dg_ctx *ctx, int index) {
  const lookup_params *p = self->params;
  const lookup_data *d = self->data;
  double x = dg_block_input(ctx, self, IN_INPUT);
  int k = d->started ? d->piece : lookup_find(&p->table, x);
  if (index == SIG_PIECE)
    return k;
  return lookup_line(p, k, x);
}

/* With ends held, the output stays within the table's values. */
static void lookup_signal_range(const void *params, int signal, dg_range *r) {
  const lookup_params *p = params;
  if (signal == SIG_PIECE) {
    r->min = -1.0;
    r->max = p->table.n - 1;
    return;
  }
  if (p->extrapolation != EXTRA_HOLD || p->table.n < 1)
    return;
  r->min = r->max = p->table.y[0];
  for (int i = 1; i < p->table.n; i++) {
    r->min = dg_fmin(r->min, p->table.y[i]);
    r->max = dg_fmax(r->max, p->table.y[i]);
  }
}

const dg_block_class dg_block_lookup = {
    .abi = DG_BLOCK_ABI,
    .type = "lookup",
    .doc = "1-D lookup table of a signal (a signal block; no ports): piecewise linear through "
           "the points, ends held or extrapolated, breakpoints located as events.",
    .params = lookup_params_table,
    .params_size = sizeof(lookup_params),
    .signals = lookup_signals,
    .data_size = sizeof(lookup_data),
    .pre_step = lookup_pre_step,
    .signal = lookup_signal,
    .num_events = 2,
    .event_values = lookup_event_values,
    .inputs = lookup_inputs,
    .signal_range = lookup_signal_range,
};
