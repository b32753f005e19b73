/* Drive cycles (include/drivegraph/cycle.h, docs/energy.md "Drive cycles"):
 * the cycle CSV loader, the EPA's trace tolerance, and runs of a graph over
 * a cycle, forward (the graph's driver block follows the trace) or
 * backward (the body follows it exactly, a prescribed speed).
 *
 * The run prepares everything before the first step — the graph loaded
 * with the driver's trace replaced, the signals it reads resolved to ids,
 * the grade as a schedule — so a step is dg_sim_step plus a few signal
 * reads: no allocation, no string lookup. */
#include "internal.h"
#include "simstate.h"

#include <drivegraph/cycle.h>

#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The EPA's tolerance: 2 mph within 1 s. */
#define EPA_SPEED_TOL (2.0 * 0.44704)
#define EPA_TIME_TOL 1.0
/* Speeds above this (m/s) are not a road vehicle's trace. */
#define CYCLE_MAX_SPEED 150.0
#define DEFAULT_DT 1e-3
/* The trace enforcement's peak force counts above this speed (m/s): at
 * rest the prescription holds the car against its creep without work. */
#define PEAK_MIN_SPEED 0.1
/* Backward, iterated: tries per step, and the largest effort tried (m/s²:
 * a car's whole range of acceleration). */
#define ITERATE_TRIES 5
#define ITERATE_MAX_EFFORT 20.0
#define KMH_PER_MS 3.6
#define M_PER_MILE 1609.344
#define L_PER_GALLON 3.785411784

struct dg_cycle {
  int n;
  double *t, *v, *grade;
};

/* ------------------------------------------------------------------------ */
/* Built-in cycles                                                          */

static const struct {
  const char *name, *file, *doc;
} builtin[] = {
    {"udds", "udds.csv", "EPA urban dynamometer driving schedule (city), 1369 s, 11.99 km"},
    {"hwfet", "hwfet.csv", "EPA highway fuel economy test, 765 s, 16.51 km"},
    {"us06", "us06.csv", "EPA US06 supplemental FTP (aggressive), 600 s, 12.89 km"},
    {"wltc3b", "wltc3b.csv", "WLTC class 3b (UNECE, WLTP), 1800 s, 23.27 km"},
};
enum { NUM_BUILTIN = sizeof builtin / sizeof builtin[0] };

int dg_cycle_builtin_count(void) { return NUM_BUILTIN; }

const char *dg_cycle_builtin_name(int i) { return i >= 0 && i < NUM_BUILTIN ? builtin[i].name : NULL; }

const char *dg_cycle_builtin_file(int i) { return i >= 0 && i < NUM_BUILTIN ? builtin[i].file : NULL; }

const char *dg_cycle_builtin_doc(int i) { return i >= 0 && i < NUM_BUILTIN ? builtin[i].doc : NULL; }

int dg_cycle_builtin_find(const char *name) {
  for (int i = 0; name && i < NUM_BUILTIN; i++)
    if (strcmp(builtin[i].name, name) == 0)
      return i;
  return -1;
}

/* ------------------------------------------------------------------------ */
/* The CSV loader                                                           */

enum { COL_TIME, COL_SPEED, COL_GRADE, NUM_COLS };

/* What a header name is: a column kind, with the speed's scale. */
static int dgp_cycle_column(const char *name, size_t len, double *scale) {
  static const struct {
    const char *name;
    int col;
    double scale;
  } names[] = {
      {"cycSecs", COL_TIME, 1.0},     {"time_s", COL_TIME, 1.0},
      {"cycMps", COL_SPEED, 1.0},     {"speed_mps", COL_SPEED, 1.0},
      {"speed_kmh", COL_SPEED, 1.0 / KMH_PER_MS},
      {"cycGrade", COL_GRADE, 1.0},   {"grade", COL_GRADE, 1.0},
  };
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (strlen(names[i].name) == len && memcmp(names[i].name, name, len) == 0) {
      *scale = names[i].scale;
      return names[i].col;
    }
  return -1;
}

typedef struct csv_reader {
  const char *text, *end, *name;
  const char *line;  /* start of the current line */
  int lineno;
  dg_error *err;
} csv_reader;

/* file:line:column: text */
static void dgp_cycle_error(csv_reader *r, const char *at, int code, const char *fmt, ...)
    DG_PRINTF(4, 5);
static void dgp_cycle_error(csv_reader *r, const char *at, int code, const char *fmt, ...) {
  char text[DG_ERROR_TEXT_LEN];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(text, sizeof text, fmt, ap);
  va_end(ap);
  dgp_error_set(r->err, code, r->name, "", "%s", text);
  if (r->err) {
    r->err->line = r->lineno;
    r->err->column = at ? (int)(at - r->line) + 1 : 1;
  }
}

/* The end of the line starting at p (its '\n' or the text's end), and the
 * end of its content (before a '\r'). */
static const char *dgp_line_end(const char *p, const char *end, const char **content_end) {
  const char *e = memchr(p, '\n', (size_t)(end - p));
  if (!e)
    e = end;
  *content_end = e > p && e[-1] == '\r' ? e - 1 : e;
  return e;
}

static bool dgp_blank(const char *p, const char *e) {
  for (; p < e; p++)
    if (*p != ' ' && *p != '\t')
      return false;
  return true;
}

/* A field [p, e) trimmed of blanks. */
static void dgp_trim(const char **p, const char **e) {
  while (*p < *e && (**p == ' ' || **p == '\t'))
    (*p)++;
  while (*e > *p && ((*e)[-1] == ' ' || (*e)[-1] == '\t'))
    (*e)--;
}

/* "the text" quoted and escaped for a message, cut to 40 bytes. */
static void dgp_quote(char *out, size_t size, const char *p, const char *e) {
  char raw[48];
  size_t len = (size_t)(e - p);
  if (len > 40)
    len = 40;
  memcpy(raw, p, len);
  raw[len] = '\0';
  for (size_t i = 0; i < len; i++)
    if (raw[i] == '\0')
      raw[i] = '?';
  dg_text_escape(out, size, raw);
}

typedef struct cycle_header {
  int ncols;        /* fields per line */
  int col_of[64];   /* field -> COL_* or -1 (ignored) */
  double scale[64];
  bool has[NUM_COLS];
} cycle_header;

static int dgp_cycle_header(csv_reader *r, const char *p, const char *e, cycle_header *h) {
  memset(h, 0, sizeof *h);
  const char *field = p;
  for (;;) {
    const char *comma = memchr(field, ',', (size_t)(e - field));
    const char *fe = comma ? comma : e;
    const char *a = field, *b = fe;
    dgp_trim(&a, &b);
    if (h->ncols >= 64) {
      dgp_cycle_error(r, field, DG_ERR_SCHEMA, "more than 64 columns");
      return -1;
    }
    double scale = 1.0;
    int col = dgp_cycle_column(a, (size_t)(b - a), &scale);
    if (col >= 0 && h->has[col]) {
      char q[200];
      dgp_quote(q, sizeof q, a, b);
      dgp_cycle_error(r, a, DG_ERR_SCHEMA, "column \"%s\" repeats the %s column", q,
                      col == COL_TIME ? "time" : col == COL_SPEED ? "speed" : "grade");
      return -1;
    }
    if (col >= 0)
      h->has[col] = true;
    h->col_of[h->ncols] = col;
    h->scale[h->ncols] = scale;
    h->ncols++;
    if (!comma)
      break;
    field = comma + 1;
  }
  if (!h->has[COL_TIME] || !h->has[COL_SPEED]) {
    dgp_cycle_error(r, p, DG_ERR_SCHEMA,
                    "the header names no %s column: expected a header line naming the columns "
                    "cycSecs (or time_s) and cycMps (or speed_mps, speed_kmh), and optionally "
                    "cycGrade (or grade)",
                    h->has[COL_TIME] ? "speed" : "time");
    return -1;
  }
  return 0;
}

static const char *const col_noun[NUM_COLS] = {"time", "speed", "grade"};

/* Reads one data line into vals[COL_*]. */
static int dgp_cycle_row(csv_reader *r, const char *p, const char *e, const cycle_header *h,
                         double vals[NUM_COLS], const char *at[NUM_COLS]) {
  const char *field = p;
  vals[COL_GRADE] = 0.0;
  at[COL_GRADE] = p;
  for (int k = 0; k < h->ncols; k++) {
    if (field > e || (k > 0 && field == e && field[-1] != ',')) {
      dgp_cycle_error(r, e, DG_ERR_SCHEMA, "expected %d fields, as the header has (got %d)",
                      h->ncols, k);
      return -1;
    }
    const char *comma = memchr(field, ',', (size_t)(e - field));
    const char *fe = comma ? comma : e;
    if (k == h->ncols - 1 && comma) {
      int extra = 1;
      for (const char *c = comma + 1; c < e; c++)
        extra += *c == ',';
      dgp_cycle_error(r, comma, DG_ERR_SCHEMA, "expected %d fields, as the header has (got %d)",
                      h->ncols, h->ncols + extra);
      return -1;
    }
    if (k < h->ncols - 1 && !comma) {
      dgp_cycle_error(r, e, DG_ERR_SCHEMA, "expected %d fields, as the header has (got %d)",
                      h->ncols, k + 1);
      return -1;
    }
    int col = h->col_of[k];
    if (col >= 0) {
      const char *a = field, *b = fe;
      dgp_trim(&a, &b);
      char buf[64];
      size_t len = (size_t)(b - a);
      char *stop = NULL;
      double v = NAN;
      if (len > 0 && len < sizeof buf) {
        memcpy(buf, a, len);
        buf[len] = '\0';
        v = strtod(buf, &stop);
      }
      if (len == 0 || len >= sizeof buf || *stop != '\0' || !isfinite(v)) {
        char q[200];
        dgp_quote(q, sizeof q, a, b);
        dgp_cycle_error(r, a, DG_ERR_SCHEMA, "%s: expected a finite number (got \"%s\")",
                        col_noun[col], q);
        return -1;
      }
      vals[col] = v * h->scale[k];
      at[col] = a;
    }
    field = fe + 1;
  }
  return 0;
}

static int dgp_cycle_push(dg_cycle *c, int *cap, const double vals[NUM_COLS]) {
  if (c->n == *cap) {
    int bigger = *cap ? 2 * *cap : 1024;
    double *t = realloc(c->t, (size_t)bigger * sizeof *t);
    if (t)
      c->t = t;
    double *v = t ? realloc(c->v, (size_t)bigger * sizeof *v) : NULL;
    if (v)
      c->v = v;
    double *g = v ? realloc(c->grade, (size_t)bigger * sizeof *g) : NULL;
    if (!g)
      return -1;
    c->grade = g;
    *cap = bigger;
  }
  c->t[c->n] = vals[COL_TIME];
  c->v[c->n] = vals[COL_SPEED];
  c->grade[c->n] = vals[COL_GRADE];
  c->n++;
  return 0;
}

/* The checks of a point against the one before. */
static int dgp_cycle_check_point(csv_reader *r, const dg_cycle *c, const double vals[NUM_COLS],
                                 const char *const at[NUM_COLS]) {
  double t = vals[COL_TIME], v = vals[COL_SPEED], g = vals[COL_GRADE];
  if (c->n == 0 && t != 0.0) {
    dgp_cycle_error(r, at[COL_TIME], DG_ERR_RANGE,
                    "time: the first point's time must be 0 s (got %g)", t);
    return -1;
  }
  if (c->n > 0 && !(t > c->t[c->n - 1])) {
    dgp_cycle_error(r, at[COL_TIME], DG_ERR_RANGE,
                    "time: must be greater than the line before's %g s (got %g)",
                    c->t[c->n - 1], t);
    return -1;
  }
  if (!(v >= 0.0 && v <= CYCLE_MAX_SPEED)) {
    dgp_cycle_error(r, at[COL_SPEED], DG_ERR_RANGE,
                    "speed: must be >= 0 and <= %g m/s (got %g m/s)", CYCLE_MAX_SPEED, v);
    return -1;
  }
  if (!(fabs(g) <= 1.0)) {
    dgp_cycle_error(r, at[COL_GRADE], DG_ERR_RANGE,
                    "grade: must be within -1 and 1 (rise over run; got %g)", g);
    return -1;
  }
  return 0;
}

dg_cycle *dg_cycle_load_string(const char *text, size_t len, const char *name, dg_error *err) {
  dgp_error_clear(err);
  if (!name)
    name = "<string>";
  if (!text) {
    dgp_error_set(err, DG_ERR_USAGE, name, "", "no cycle text given");
    return NULL;
  }
  char why[DG_ERROR_TEXT_LEN];
  if (dgp_input_size_check(len, why, sizeof why) != 0) {
    dgp_error_set(err, DG_ERR_IO, name, "", "%s", why);
    return NULL;
  }
  csv_reader r = {.text = text, .end = text + len, .name = name, .lineno = 0, .err = err};
  const char *nul = memchr(text, '\0', len);
  if (nul) {
    /* the line and column of the NUL byte */
    r.line = text;
    r.lineno = 1;
    for (const char *p = text; p < nul; p++)
      if (*p == '\n') {
        r.lineno++;
        r.line = p + 1;
      }
    dgp_cycle_error(&r, nul, DG_ERR_SYNTAX, "NUL byte in a cycle file (is it text?)");
    return NULL;
  }
  const char *p = text;
  if (len >= 3 && memcmp(p, "\xef\xbb\xbf", 3) == 0) /* a UTF-8 byte order mark */
    p += 3;
  dg_cycle *c = calloc(1, sizeof *c);
  if (!c) {
    dgp_error_set(err, DG_ERR_NOMEM, name, "", "out of memory");
    return NULL;
  }
  int cap = 0;
  cycle_header h;
  bool have_header = false;
  const char *last_line = p;
  while (p < r.end) {
    const char *ce;
    const char *e = dgp_line_end(p, r.end, &ce);
    r.line = p;
    r.lineno++;
    if (!dgp_blank(p, ce)) {
      if (!have_header) {
        if (dgp_cycle_header(&r, p, ce, &h) != 0)
          goto fail;
        have_header = true;
      } else {
        double vals[NUM_COLS];
        const char *at[NUM_COLS];
        if (dgp_cycle_row(&r, p, ce, &h, vals, at) != 0 ||
            dgp_cycle_check_point(&r, c, vals, at) != 0)
          goto fail;
        if (dgp_cycle_push(c, &cap, vals) != 0) {
          dgp_error_set(err, DG_ERR_NOMEM, name, "", "out of memory");
          goto fail;
        }
      }
      last_line = p;
    }
    p = e < r.end ? e + 1 : e;
  }
  if (c->n < 2) {
    r.line = last_line;
    dgp_cycle_error(&r, NULL, DG_ERR_SCHEMA,
                    have_header ? "a cycle needs at least two points (got %d)"
                                : "empty cycle file: expected a header line and at least two "
                                  "points%.0d",
                    c->n);
    goto fail;
  }
  return c;
fail:
  dg_cycle_free(c);
  return NULL;
}

dg_cycle *dg_cycle_load_file(const char *path, dg_error *err) {
  dgp_error_clear(err);
  size_t len;
  char why[DG_ERROR_TEXT_LEN];
  char *text = dgp_read_input(path, &len, why, sizeof why);
  if (!text) {
    static const char lead[] = "cannot read file: ";
    char *c = why + sizeof lead - 1;
    if (strncmp(why, lead, sizeof lead - 1) == 0 && *c >= 'A' && *c <= 'Z')
      *c = (char)(*c - 'A' + 'a');
    dgp_error_set(err, DG_ERR_IO, path ? path : "", "", "%s", why);
    return NULL;
  }
  dg_cycle *c = dg_cycle_load_string(text, len, path, err);
  free(text);
  return c;
}

void dg_cycle_free(dg_cycle *c) {
  if (!c)
    return;
  free(c->t);
  free(c->v);
  free(c->grade);
  free(c);
}

int dg_cycle_length(const dg_cycle *c) { return c->n; }
const double *dg_cycle_time(const dg_cycle *c) { return c->t; }
const double *dg_cycle_speed(const dg_cycle *c) { return c->v; }
const double *dg_cycle_grade(const dg_cycle *c) { return c->grade; }
double dg_cycle_duration(const dg_cycle *c) { return c->t[c->n - 1]; }

double dg_cycle_distance(const dg_cycle *c) {
  double d = 0.0;
  for (int k = 1; k < c->n; k++)
    d += 0.5 * (c->v[k] + c->v[k - 1]) * (c->t[k] - c->t[k - 1]);
  return d;
}

/* The last point at or before t (0 before the first). */
static int dgp_cycle_index(const dg_cycle *c, double t) {
  int lo = 0, hi = c->n - 1;
  if (!(t >= c->t[0]))
    return 0;
  if (t >= c->t[hi])
    return hi;
  while (hi - lo > 1) {
    int mid = lo + (hi - lo) / 2;
    if (c->t[mid] <= t)
      lo = mid;
    else
      hi = mid;
  }
  return lo;
}

static double dgp_cycle_interp(const dg_cycle *c, int k, double t) {
  if (k >= c->n - 1 || !(t > c->t[k]))
    return c->v[k];
  double s = (t - c->t[k]) / (c->t[k + 1] - c->t[k]);
  return c->v[k] + s * (c->v[k + 1] - c->v[k]);
}

double dg_cycle_speed_at(const dg_cycle *c, double t) {
  return dgp_cycle_interp(c, dgp_cycle_index(c, t), t);
}

/* The window's extremes, starting the scan of the points at k0 (the last
 * point at or before t0). */
static void dgp_cycle_window_from(const dg_cycle *c, int k0, double t0, double t1, double *lo,
                                  double *hi) {
  double a = dgp_cycle_interp(c, k0, t0);
  double mn = a, mx = a;
  int k = k0 + 1;
  for (; k < c->n && c->t[k] < t1; k++) {
    mn = fmin(mn, c->v[k]);
    mx = fmax(mx, c->v[k]);
  }
  double b = dgp_cycle_interp(c, k - 1, t1);
  *lo = fmin(mn, b);
  *hi = fmax(mx, b);
}

void dg_cycle_window(const dg_cycle *c, double t0, double t1, double *lo, double *hi) {
  dgp_cycle_window_from(c, dgp_cycle_index(c, t0), t0, t1, lo, hi);
}

char *dg_cycle_trace_json(const dg_cycle *c) {
  size_t cap = (size_t)c->n * 52 + 64, used = 0;
  char *s = malloc(cap);
  if (!s)
    return NULL;
  used += (size_t)snprintf(s + used, cap - used, "{\"time\": [");
  for (int k = 0; k < c->n; k++)
    used += (size_t)snprintf(s + used, cap - used, "%s%.17g", k ? ", " : "", c->t[k]);
  used += (size_t)snprintf(s + used, cap - used, "], \"speed_kmh\": [");
  for (int k = 0; k < c->n; k++)
    used += (size_t)snprintf(s + used, cap - used, "%s%.17g", k ? ", " : "", KMH_PER_MS * c->v[k]);
  snprintf(s + used, cap - used, "]}");
  return s;
}

/* ------------------------------------------------------------------------ */
/* The trace tolerance                                                      */

void dg_trace_check_init(dg_trace_check *chk) {
  memset(chk, 0, sizeof *chk);
  chk->speed_tol = EPA_SPEED_TOL;
  chk->time_tol = EPA_TIME_TOL;
  chk->worst_time = NAN;
  chk->worst_speed = chk->worst_lo = chk->worst_hi = NAN;
}

void dg_trace_check_sample(dg_trace_check *chk, const dg_cycle *c, double t, double v,
                           double weight) {
  double t0 = t - chk->time_tol, t1 = t + chk->time_tol;
  int k = chk->cursor_;
  if (k < 0 || k >= c->n || c->t[k] > t0)
    k = dgp_cycle_index(c, t0);
  while (k + 1 < c->n && c->t[k + 1] <= t0)
    k++;
  chk->cursor_ = k;
  double lo, hi;
  dgp_cycle_window_from(c, k, t0, t1, &lo, &hi);
  lo -= chk->speed_tol;
  hi += chk->speed_tol;
  chk->samples++;
  double excess = v < lo ? lo - v : v > hi ? v - hi : 0.0;
  if (!(excess > 0.0) && v == v)
    return;
  if (v != v)
    excess = INFINITY;
  chk->violations++;
  chk->violation_time += weight;
  if (excess > chk->worst_excess) {
    chk->worst_excess = excess;
    chk->worst_time = t;
    chk->worst_speed = v;
    chk->worst_lo = lo;
    chk->worst_hi = hi;
  }
}

/* ------------------------------------------------------------------------ */
/* Runs                                                                     */

#define MAX_TRACKED 16

struct dg_cycle_run {
  const dg_cycle *cycle;
  dg_graph *graph;
  dg_sim *sim;
  bool backward;
  double dt;
  long total, k;
  char driver[DG_ERROR_PATH_LEN], vehicle[DG_ERROR_PATH_LEN];
  int vehicle_index;
  int sig_speed, sig_x, sig_drag, sig_rolling, sig_grade;
  /* backward mode: the prescription */
  int src_index, sig_force, in_effort;
  double src_work, enf_in, enf_out, enf_peak;
  /* backward, iterated: the state a step starts from, the effort's gain */
  bool iterate;
  unsigned char *state;
  size_t state_size;
  double effort_gain; /* effort_kp + effort_ki dt / 2 */
  long tries;         /* steps taken, the repeated ones included */
  double learned_gain; /* the last secant's −dW/du over m · path (0: none yet) */
  double mass;            /* the vehicle's, from its kinetic energy bookkeeping (NaN: unknown) */
  double v0;              /* body speed at the start */
  double ke, accel;       /* ½ m v² at the last step's end; Σ of its increases */
  int n_soc, sig_soc[MAX_TRACKED];
  int n_motor, motor[MAX_TRACKED];  /* block indices of the machines */
  double motor_work[MAX_TRACKED];   /* their work at the last step's end */
  double regen;                     /* Σ of their negative work per step (<= 0) */
  double soc_start, soc_min, soc_max;
  dg_trace_check trace;
};

void dg_cycle_options_init(dg_cycle_options *o) {
  memset(o, 0, sizeof *o);
  o->dt = NAN;
}

/* The only block of `type` in g: its index, -1 for none, -2 for several
 * (the ids in `ids`). */
static int dgp_only_block(const dg_graph *g, const char *type, char *ids, size_t size) {
  int found = -1, count = 0;
  size_t used = 0;
  ids[0] = '\0';
  for (int i = 0; i < dg_graph_block_count(g); i++)
    if (strcmp(dg_graph_block_type(g, i), type) == 0) {
      if (used < size)
        used += (size_t)snprintf(ids + used, size - used, "%s\"%s\"", count ? ", " : "",
                                 dg_graph_block_id(g, i));
      found = i;
      count++;
    }
  return count > 1 ? -2 : found;
}

static int dgp_signal_of(const dg_sim *sim, const char *block, const char *signal) {
  char name[2 * DG_ERROR_PATH_LEN];
  snprintf(name, sizeof name, "%s.%s", block, signal);
  return dg_sim_signal_find(sim, name);
}

static void dgp_cycle_run_resolve(dg_cycle_run *run) {
  const dg_graph *g = run->graph;
  run->sig_speed = dgp_signal_of(run->sim, run->vehicle, "speed");
  run->sig_x = dgp_signal_of(run->sim, run->vehicle, "x");
  run->sig_drag = dgp_signal_of(run->sim, run->vehicle, "drag_energy");
  run->sig_rolling = dgp_signal_of(run->sim, run->vehicle, "rolling_energy");
  run->sig_grade = dgp_signal_of(run->sim, run->vehicle, "grade_energy");
  run->n_soc = 0;
  for (int i = 0; i < dg_graph_block_count(g) && run->n_soc < MAX_TRACKED; i++)
    if (strcmp(dg_graph_block_type(g, i), "battery") == 0)
      run->sig_soc[run->n_soc++] = dgp_signal_of(run->sim, dg_graph_block_id(g, i), "soc");
  run->n_motor = 0;
  for (int i = 0; i < dg_graph_block_count(g) && run->n_motor < MAX_TRACKED; i++)
    if (strcmp(dg_graph_block_type(g, i), "motor") == 0) {
      run->motor[run->n_motor] = i;
      run->motor_work[run->n_motor++] = dg_sim_block_work(run->sim, i);
    }
  run->soc_start = run->n_soc ? dg_sim_signal(run->sim, run->sig_soc[0]) : NAN;
  run->soc_min = run->soc_max = run->soc_start;
  run->v0 = dg_sim_signal(run->sim, run->sig_speed);
  run->ke = 0.5 * run->mass * run->v0 * run->v0;
}

/* The channel "grade", where the graph reads it, follows the cycle's grade
 * (linear between the points, as the speed). */
static int dgp_cycle_grade(dg_cycle_run *run, dg_error *err) {
  int in = dg_sim_input_find(run->sim, "grade");
  if (in < 0)
    return DG_OK;
  return dg_sim_set_input_schedule(run->sim, in, run->cycle->n, run->cycle->t, run->cycle->grade,
                                   false, err);
}

/* The vehicle's mass from the graph's text (NaN when it is not a number:
 * the loader has refused that already). */
static double dgp_vehicle_mass(const char *json, const char *vehicle) {
  json_t *root = json_loads(json, JSON_DECODE_ANY, NULL);
  json_t *m = json_object_get(json_object_get(json_object_get(root, "blocks"), vehicle), "mass");
  double mass = json_is_number(m) ? json_number_value(m) : NAN;
  json_decref(root);
  return mass;
}

/* Finds the driver and the vehicle; fills their ids. */
static int dgp_cycle_blocks(dg_cycle_run *run, const dg_graph *g, const char *name,
                            dg_error *err) {
  char ids[200];
  int d = dgp_only_block(g, "driver", ids, sizeof ids);
  if (d == -1) {
    dgp_error_set(err, DG_ERR_USAGE, name, "/blocks",
                  "the graph has no driver block: a cycle is driven by the graph's `driver` block "
                  "(its throttle and brake bound to the pedal inputs, its trace replaced by the "
                  "cycle), as in graphs/driver_follow.json or graphs/ev_battery.json");
    return -1;
  }
  if (d == -2) {
    dgp_error_set(err, DG_ERR_USAGE, name, "/blocks",
                  "the graph has several driver blocks (%s): a cycle drives one", ids);
    return -1;
  }
  int v = dgp_only_block(g, "vehicle", ids, sizeof ids);
  if (v < 0) {
    dgp_error_set(err, DG_ERR_USAGE, name, "/blocks",
                  v == -1 ? "the graph has no vehicle block: a cycle is a speed of a vehicle%s"
                          : "the graph has several vehicle blocks (%s): a cycle drives one",
                  v == -1 ? "" : ids);
    return -1;
  }
  run->vehicle_index = v;
  snprintf(run->driver, sizeof run->driver, "%s", dg_graph_block_id(g, d));
  snprintf(run->vehicle, sizeof run->vehicle, "%s", dg_graph_block_id(g, v));
  return 0;
}

/* The id of the prescription's block: "cycle_speed_source", or with a
 * number when the graph has a block of that name. */
static void dgp_source_id(json_t *blocks, char *id, size_t size) {
  snprintf(id, size, "cycle_speed_source");
  for (int k = 2; json_object_get(blocks, id); k++)
    snprintf(id, size, "cycle_speed_source_%d", k);
}

/* A ground port of the vehicle no connection uses, or NULL. */
static const char *dgp_free_port(json_t *connections, const char *vehicle) {
  static const char *const ports[] = {"front", "rear", "front_left", "front_right",
                                      "rear_left", "rear_right"};
  for (size_t k = 0; k < sizeof ports / sizeof ports[0]; k++) {
    char name[DG_ERROR_PATH_LEN + 16];
    snprintf(name, sizeof name, "%s.%s", vehicle, ports[k]);
    bool used = false;
    size_t i;
    json_t *c;
    json_array_foreach(connections, i, c) {
      for (size_t e = 0; e < 2; e++) {
        const char *end = json_string_value(json_array_get(c, e));
        if (end && strcmp(end, name) == 0)
          used = true;
      }
    }
    if (!used)
      return ports[k];
  }
  return NULL;
}

static int dgp_set(json_t *obj, const char *key, json_t *value) {
  return json_object_set_new(obj, key, value);
}

/* The graph of a backward run, as JSON text (malloc'ed): the driver's trace
 * the cycle's and its follow mode "effort" on the channel trace_effort; a
 * linear_speed_source on a free ground port of the vehicle following the
 * channel cycle_speed; the vehicle's static road load and the wheels'
 * brake holds off (a prescribed body is neither held nor locked). */
static char *dgp_backward_text(dg_cycle_run *run, const char *json, const char *trace,
                               const char *name, dg_error *err) {
  json_t *root = json_loads(json, JSON_DECODE_ANY, NULL);
  json_t *blocks = json_object_get(root, "blocks");
  json_t *conns = json_object_get(root, "connections");
  json_t *tr = json_loads(trace, 0, NULL);
  json_t *drv = json_object_get(blocks, run->driver);
  json_t *veh = json_object_get(blocks, run->vehicle);
  char *text = NULL;
  if (!json_is_object(drv) || !json_is_object(veh) || !json_is_array(conns) || !tr) {
    dgp_error_set(err, DG_ERR_NOMEM, name, "", "out of memory");
    goto done;
  }
  const char *port = dgp_free_port(conns, run->vehicle);
  if (!port) {
    dgp_error_set(err, DG_ERR_USAGE, name, "",
                  "backward mode puts a linear_speed_source on a free ground port of vehicle "
                  "\"%s\", and every one is connected",
                  run->vehicle);
    goto done;
  }
  dgp_set(drv, "trace", json_incref(tr));
  dgp_set(drv, "follow", json_string("effort"));
  if (!json_object_get(drv, "effort_ki"))
    dgp_set(drv, "effort_ki", json_real(0.5 / run->dt));
  json_t *kp = json_object_get(drv, "effort_kp"), *ki = json_object_get(drv, "effort_ki");
  run->effort_gain = (json_is_number(kp) ? json_number_value(kp) : 0.3) +
                     json_number_value(ki) * run->dt / 2.0;
  json_t *ag = json_object_get(drv, "accel_gain");
  if (!(json_is_number(ag) && json_number_value(ag) > 0.0)) {
    dgp_error_set(err, DG_ERR_USAGE, name, "",
                  "backward mode: driver \"%s\" needs accel_gain > 0, its pedal per m/s^2 of "
                  "acceleration, to work the pedals from the effort the trace needs",
                  run->driver);
    goto done;
  }
  json_t *in = json_object_get(drv, "inputs");
  if (!json_is_object(in)) {
    in = json_object();
    dgp_set(drv, "inputs", in);
  }
  dgp_set(in, "effort", json_string("trace_effort"));
  dgp_set(veh, "hold_at_rest", json_false());
  const char *key;
  json_t *b;
  json_object_foreach(blocks, key, b) {
    const char *type = json_string_value(json_object_get(b, "type"));
    if (type && strcmp(type, "wheel") == 0)
      dgp_set(b, "brake_hold", json_false());
  }
  char id[64], from[80], to[DG_ERROR_PATH_LEN + 16];
  dgp_source_id(blocks, id, sizeof id);
  json_t *src = json_pack("{s:s, s:{s:s}}", "type", "linear_speed_source", "inputs", "speed",
                          "cycle_speed");
  dgp_set(blocks, id, src);
  snprintf(from, sizeof from, "%s.out", id);
  snprintf(to, sizeof to, "%s.%s", run->vehicle, port);
  json_array_append_new(conns, json_pack("[s, s]", from, to));
  text = json_dumps(root, JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17));
  if (!text)
    dgp_error_set(err, DG_ERR_NOMEM, name, "", "out of memory");
done:
  json_decref(tr);
  json_decref(root);
  return text;
}

/* Resolves the prescription of a backward run and sets its schedule. */
static int dgp_backward_start(dg_cycle_run *run, dg_error *err) {
  const dg_graph *g = run->graph;
  run->src_index = -1;
  for (int i = 0; i < dg_graph_block_count(g); i++)
    if (strcmp(dg_graph_block_type(g, i), "linear_speed_source") == 0 &&
        strncmp(dg_graph_block_id(g, i), "cycle_speed_source", 18) == 0)
      run->src_index = i;
  run->sig_force = dgp_signal_of(run->sim, dg_graph_block_id(g, run->src_index), "force");
  run->in_effort = dg_sim_input_find(run->sim, "trace_effort");
  int in_speed = dg_sim_input_find(run->sim, "cycle_speed");
  if (run->sig_force < 0 || run->in_effort < 0 || in_speed < 0) {
    dgp_error_set(err, DG_ERR_USAGE, dg_graph_file(g), "", "backward mode: the prescription is "
                                                           "missing from the graph");
    return DG_ERR_USAGE;
  }
  return dg_sim_set_input_schedule(run->sim, in_speed, run->cycle->n, run->cycle->t,
                                   run->cycle->v, false, err);
}

dg_cycle_run *dg_cycle_run_new(const dg_cycle_options *opt, const dg_cycle *cycle, dg_error *err) {
  dgp_error_clear(err);
  const char *name = opt && opt->graph_name ? opt->graph_name : "<string>";
  if (!opt || !opt->graph_json || !cycle) {
    dgp_error_set(err, DG_ERR_USAGE, name, "", "no graph text or no cycle given");
    return NULL;
  }
  double dt = opt->dt > 0.0 ? opt->dt : DEFAULT_DT;
  if (!isfinite(dt)) {
    dgp_error_set(err, DG_ERR_USAGE, name, "", "dt must be a finite number > 0");
    return NULL;
  }
  dg_cycle_run *run = calloc(1, sizeof *run);
  if (!run) {
    dgp_error_set(err, DG_ERR_NOMEM, name, "", "out of memory");
    return NULL;
  }
  run->cycle = cycle;
  run->dt = dt;
  run->backward = opt->backward;
  double steps = ceil(dg_cycle_duration(cycle) / dt - 1e-9);
  run->total = (long)steps;
  dg_trace_check_init(&run->trace);

  dg_graph *plain = dg_graph_load_string(opt->reg, opt->graph_json, name, err);
  if (!plain)
    goto fail;
  int rc = dgp_cycle_blocks(run, plain, name, err);
  dg_graph_free(plain);
  if (rc != 0)
    goto fail;
  run->mass = dgp_vehicle_mass(opt->graph_json, run->vehicle);
  char *trace = dg_cycle_trace_json(cycle);
  if (!trace) {
    dgp_error_set(err, DG_ERR_NOMEM, name, "", "out of memory");
    goto fail;
  }
  if (opt->backward) {
    char *text = dgp_backward_text(run, opt->graph_json, trace, name, err);
    run->graph = text ? dg_graph_load_string(opt->reg, text, name, err) : NULL;
    free(text);
  } else {
    char key[DG_ERROR_PATH_LEN + 8];
    snprintf(key, sizeof key, "%s.trace", run->driver);
    dg_override ov = {key, trace};
    run->graph = dg_graph_load_overrides(opt->reg, opt->graph_json, name, 1, &ov, err);
  }
  free(trace);
  if (!run->graph)
    goto fail;
  run->sim = dg_sim_new(run->graph, err);
  if (!run->sim || dgp_cycle_grade(run, err) != DG_OK)
    goto fail;
  if (opt->backward && dgp_backward_start(run, err) != DG_OK)
    goto fail;
  run->iterate = opt->backward && opt->iterate;
  dg_sim_apply_inputs(run->sim, 0.0);
  if (dg_sim_start(run->sim, err) != DG_OK)
    goto fail;
  dgp_cycle_run_resolve(run);
  if (run->backward)
    run->src_work = dg_sim_block_work(run->sim, run->src_index);
  if (run->iterate) {
    run->state_size = dgp_sim_state_size(run->sim);
    run->state = malloc(run->state_size);
    if (!run->state) {
      dgp_error_set(err, DG_ERR_NOMEM, name, "", "out of memory");
      goto fail;
    }
  }
  return run;
fail:
  dg_cycle_run_free(run);
  return NULL;
}

void dg_cycle_run_free(dg_cycle_run *run) {
  if (!run)
    return;
  dg_sim_free(run->sim);
  dg_graph_free(run->graph);
  free(run->state);
  free(run);
}

dg_sim *dg_cycle_run_sim(dg_cycle_run *run) { return run->sim; }
const dg_graph *dg_cycle_run_graph(const dg_cycle_run *run) { return run->graph; }
double dg_cycle_run_dt(const dg_cycle_run *run) { return run->dt; }
long dg_cycle_run_total_steps(const dg_cycle_run *run) { return run->total; }
long dg_cycle_run_steps(const dg_cycle_run *run) { return run->k; }
const char *dg_cycle_run_driver(const dg_cycle_run *run) { return run->driver; }
const char *dg_cycle_run_vehicle(const dg_cycle_run *run) { return run->vehicle; }

/* Backward, iterated: the step taken again from its saved state with the
 * effort u (held over the step) that makes the prescription's work W over
 * it 0. W falls with u about as m · effort_gain · v̄ · dt (the driver's
 * command moves by accel_gain (kp + ki t) u, a force of m (kp + ki t) u if
 * accel_gain is the car's pedal per m/s²): a first correction by the
 * slope the last secant measured (that one until there is a secant), then
 * secant steps, at most 5 tries, the effort within ±20 m/s²;
 * the first within 0.5 N of mean force is accepted, else the best of them
 * (taken again). No allocation (the state buffer is the run's). */
static int dgp_cycle_iterate(dg_cycle_run *run) {
  dg_sim *sim = run->sim;
  if (dgp_sim_state_save(sim, run->state, run->state_size) == 0)
    return dg_sim_step(sim, run->dt);
  double t0 = dg_sim_time(sim);
  double vbar = 0.5 * (dg_cycle_speed_at(run->cycle, t0) +
                       dg_cycle_speed_at(run->cycle, t0 + run->dt));
  double path = vbar * run->dt, tol = 0.5 * path;
  double w_start = dg_sim_block_work(sim, run->src_index);
  double u0 = 0.0, u1 = 0.0, W0 = 0.0, best_u = 0.0, best_w = INFINITY;
  for (int k = 0; k < ITERATE_TRIES; k++) {
    if (k > 0 && dgp_sim_state_load(sim, run->state, run->state_size) != DG_OK)
      return DG_ERR_USAGE;
    dg_sim_set_input(sim, run->in_effort, u1);
    int rc = dg_sim_step(sim, run->dt);
    run->tries++;
    if (rc != DG_OK)
      return rc;
    double W1 = dg_sim_block_work(sim, run->src_index) - w_start;
    if (fabs(W1) < best_w) {
      best_w = fabs(W1);
      best_u = u1;
    }
    if (!(fabs(W1) > tol) || !(path > 1e-9))
      return DG_OK;
    if (k > 0 && W1 != W0) {
      double g = -(W1 - W0) / (u1 - u0) / (run->mass * path);
      if (g > 0.1 * run->effort_gain && g < 10.0 * run->effort_gain)
        run->learned_gain = g;
    }
    double gain = run->learned_gain > 0.0 ? run->learned_gain : run->effort_gain;
    double u2 = k == 0 || W1 == W0 ? u1 + W1 / (run->mass * gain * path)
                                    : u1 - W1 * (u1 - u0) / (W1 - W0);
    if (!isfinite(u2) || k == ITERATE_TRIES - 1)
      break;
    u0 = u1;
    W0 = W1;
    u1 = fmax(-ITERATE_MAX_EFFORT, fmin(ITERATE_MAX_EFFORT, u2));
  }
  if (best_u == u1) /* the last try was the best */
    return DG_OK;
  if (dgp_sim_state_load(sim, run->state, run->state_size) != DG_OK)
    return DG_ERR_USAGE;
  dg_sim_set_input(sim, run->in_effort, best_u);
  run->tries++;
  return dg_sim_step(sim, run->dt);
}

int dg_cycle_run_step(dg_cycle_run *run) {
  int rc = run->iterate ? dgp_cycle_iterate(run) : dg_sim_step(run->sim, run->dt);
  if (rc != DG_OK)
    return rc;
  run->k++;
  double t = dg_sim_time(run->sim), v = dg_sim_signal(run->sim, run->sig_speed);
  dg_trace_check_sample(&run->trace, run->cycle, t, v, run->dt);
  double ke = 0.5 * run->mass * v * v;
  if (ke > run->ke)
    run->accel += ke - run->ke;
  run->ke = ke;
  if (run->n_soc) {
    double soc = dg_sim_signal(run->sim, run->sig_soc[0]);
    run->soc_min = fmin(run->soc_min, soc);
    run->soc_max = fmax(run->soc_max, soc);
  }
  if (run->backward) { /* the prescription: its work, and its force for the driver */
    double w = dg_sim_block_work(run->sim, run->src_index), dw = w - run->src_work;
    if (dw > 0.0)
      run->enf_in += dw;
    else
      run->enf_out += dw;
    run->src_work = w;
    double f = dg_sim_signal(run->sim, run->sig_force);
    if (fabs(dg_sim_signal(run->sim, run->sig_speed)) > PEAK_MIN_SPEED)
      run->enf_peak = fmax(run->enf_peak, fabs(f)); /* at rest it does no work */
    if (!run->iterate) /* the next step's effort: this one's force */
      dg_sim_set_input(run->sim, run->in_effort,
                       isfinite(f) && run->mass > 0.0 ? f / run->mass : 0.0);
  }
  /* the machines' regeneration: their work per step where negative (a
   * step of 1 ms seldom both drives and brakes) */
  for (int m = 0; m < run->n_motor; m++) {
    double w = dg_sim_block_work(run->sim, run->motor[m]);
    if (w < run->motor_work[m])
      run->regen += w - run->motor_work[m];
    run->motor_work[m] = w;
  }
  return DG_OK;
}

int dg_cycle_run_all(dg_cycle_run *run) {
  while (run->k < run->total) {
    int rc = dg_cycle_run_step(run);
    if (rc != DG_OK)
      return rc;
  }
  return DG_OK;
}

static double dgp_signal_or_nan(const dg_sim *sim, int id) {
  return id >= 0 ? dg_sim_signal(sim, id) : NAN;
}

/* The fuel figures: the engines keeping a ledger. */
static void dgp_report_fuel(const dg_cycle_run *run, dg_cycle_report *r) {
  const dg_graph *g = run->graph;
  for (int i = 0; i < dg_graph_block_count(g); i++) {
    if (strcmp(dg_graph_block_type(g, i), "engine") != 0)
      continue;
    dg_block_energy e;
    if (dg_sim_block_energy(run->sim, i, &e) != DG_OK || !e.ledger)
      continue;
    const char *id = dg_graph_block_id(g, i);
    r->engines++;
    r->fuel_kg += dgp_signal_or_nan(run->sim, dgp_signal_of(run->sim, id, "fuel_used"));
    r->fuel_L += dgp_signal_or_nan(run->sim, dgp_signal_of(run->sim, id, "fuel_volume"));
    r->fuel_J += e.fuel;
    r->engine_work_J += e.work;
  }
  double km = r->distance / 1000.0;
  r->fuel_L_per_100km = r->engines && km > 0.0 ? r->fuel_L / (km / 100.0) : NAN;
  r->mpg = r->engines && r->fuel_L > 0.0
               ? (r->distance / M_PER_MILE) / (r->fuel_L / L_PER_GALLON)
               : NAN;
}

/* The electricity figures and the charge balance. */
static void dgp_report_battery(const dg_cycle_run *run, dg_cycle_report *r) {
  const dg_graph *g = run->graph;
  for (int i = 0; i < dg_graph_block_count(g); i++) {
    if (strcmp(dg_graph_block_type(g, i), "battery") != 0)
      continue;
    dg_block_energy e;
    if (dg_sim_block_energy(run->sim, i, &e) != DG_OK || !e.ledger)
      continue;
    r->batteries++;
    r->battery_J += e.stored;
    r->battery_terminal_J -= e.electric;
  }
  r->soc_start = run->soc_start;
  r->soc_end = run->n_soc ? dg_sim_signal(run->sim, run->sig_soc[0]) : NAN;
  r->soc_min = run->soc_min;
  r->soc_max = run->soc_max;
  double km = r->distance / 1000.0;
  r->electricity_Wh_per_km = r->batteries && km > 0.0 ? r->battery_J / 3600.0 / km : NAN;
  r->fuel_equivalent_kg = NAN;
  r->fuel_corrected_L_per_100km = NAN;
  r->battery_share = NAN;
  if (r->engines && r->batteries && r->fuel_J > 0.0 && r->fuel_kg > 0.0) {
    double heating = r->fuel_J / r->fuel_kg;           /* J/kg, the engines' own */
    double density = r->fuel_L > 0.0 ? r->fuel_kg / r->fuel_L : NAN; /* kg/L */
    double eta = r->engine_work_J / r->fuel_J;
    r->battery_share = fabs(r->battery_J) / r->fuel_J;
    if (eta > 0.0) {
      r->fuel_equivalent_kg = r->battery_J / (eta * heating);
      r->fuel_corrected_L_per_100km =
          km > 0.0 ? (r->fuel_kg + r->fuel_equivalent_kg) / density / (km / 100.0) : NAN;
    }
  }
}

/* The energies: the ledger's totals and the brakes', machines' and road's. */
static void dgp_report_energy(const dg_cycle_run *run, dg_cycle_report *r) {
  const dg_graph *g = run->graph;
  dg_sim_energy_ledger(run->sim, &r->ledger);
  for (int i = 0; i < dg_graph_block_count(g); i++) {
    const char *type = dg_graph_block_type(g, i);
    double w = dg_sim_block_work(run->sim, i);
    if (strcmp(type, "wheel") == 0)
      r->friction_brake_J -= w;
    else if (strcmp(type, "vehicle") == 0)
      r->road_J += w;
  }
  r->regen_J = -run->regen;
  r->drag_J = dgp_signal_or_nan(run->sim, run->sig_drag);
  r->rolling_J = dgp_signal_or_nan(run->sim, run->sig_rolling);
  r->grade_J = dgp_signal_or_nan(run->sim, run->sig_grade);
}

void dg_cycle_run_report(const dg_cycle_run *run, dg_cycle_report *r) {
  memset(r, 0, sizeof *r);
  r->backward = run->backward;
  r->dt = run->dt;
  r->time = dg_sim_time(run->sim);
  r->steps = run->k;
  r->steps_tried = run->iterate ? run->tries : run->k;
  r->distance = dg_sim_signal(run->sim, run->sig_x);
  /* the trace's distance up to `time` */
  const dg_cycle *c = run->cycle;
  double d = 0.0;
  for (int k = 1; k < c->n && c->t[k - 1] < r->time; k++) {
    double t1 = fmin(c->t[k], r->time);
    double v1 = dgp_cycle_interp(c, k - 1, t1);
    d += 0.5 * (c->v[k - 1] + v1) * (t1 - c->t[k - 1]);
  }
  r->trace_distance = d;
  r->trace = run->trace;
  dgp_report_fuel(run, r);
  dgp_report_battery(run, r);
  dgp_report_energy(run, r);
  double v1 = dg_sim_signal(run->sim, run->sig_speed);
  r->kinetic_J = 0.5 * run->mass * (v1 * v1 - run->v0 * run->v0);
  r->accel_J = run->accel;
  r->enforcement_in_J = run->enf_in;
  r->enforcement_out_J = run->enf_out;
  r->enforcement_peak_N = run->enf_peak;
}
