/* Importer for Chrono::Vehicle powertrain templates: one engine file and one
 * transmission file, as JSON with `//` (and block) comments.
 *
 * Reading. Comments are blanked out character by character (newlines kept),
 * so jansson's line and column and those found later by walking the text
 * are the file's own. Trailing text after the root object (one corpus file
 * ends in a stray "}") is ignored with a warning. Every problem names
 * file:line:column and the key path ("Gear Box.Forward Gear Ratios[2]").
 *
 * Engines (speeds in the maps are rpm; Chrono converts them to rad/s):
 *   EngineSimpleMap  "Maximal Engine Speed RPM" -> redline_rpm;
 *                    "Map Full Throttle" -> full_load, "Map Zero Throttle"
 *                    -> closed_throttle (torque = zero + θ (full − zero),
 *                    Chrono's interpolation and the engine block's).
 *   EngineShafts     "Motorshaft Inertia" -> inertia; "Torque Map" T and
 *                    "Losses Map" L: Chrono applies θ·T(ω) + L(ω), so
 *                    full_load = T + L sampled at the union of both maps'
 *                    breakpoints (exact: both are piecewise linear) and
 *                    closed_throttle = L. The redline is where the full-load
 *                    torque falls through zero after its peak (Chrono's
 *                    governor), else the map's last speed.
 *                    "Motor Block Inertia" (the block's reaction on the
 *                    chassis) is not modelled.
 *   EngineSimple     a `motor` block: "Maximum Engine Torque" -> max_torque,
 *                    "Maximum Engine Power" -> max_power, "Maximum Engine
 *                    Speed" (rad/s) -> max_rpm; no idle, no engine braking,
 *                    as in Chrono.
 *   Map points below 0 rpm are replaced by the map's value at 0 rpm (the
 *   engine block evaluates at max(rpm, 0)). A map whose speeds end below a
 *   fifth of "Maximal Engine Speed RPM" was written in rad/s (the Marder
 *   file): it is converted, with a warning. Chrono's engines idle at no
 *   particular speed; the engine gets idle_rpm = min(800, 0.35 × redline)
 *   and, where Chrono has no inertia (SimpleMap, Simple), 0.25 kg·m² scaled
 *   with the peak torque over 330 N·m (the default sedan's engine).
 *
 * Transmissions. Chrono states a gear ratio as output/input speed (0.2: the
 * output turns at 0.2 × the input, reverse negative); drivegraph's are
 * input/output, so ratio = 1/|r|. Chrono changes a ratio instantaneously,
 * so every gearbox gets "shift": { "engagement": "rigid" } (drivegraph's
 * default shifts through friction, which Chrono does not model).
 *   AutomaticTransmissionSimpleMap  gearbox, shift mode shift_map from
 *       "Shift Points Map RPM" ([downshift, upshift] per gear), shifts
 *       instantaneous (shift_time 0) like Chrono's; an automatic launch
 *       clutch between engine and gearbox (Chrono ties the engine to the
 *       wheels kinematically down to 0 rpm; drivegraph's engine idles).
 *   AutomaticTransmissionShafts  torque_converter ("Capacity Factor Map" ->
 *       capacity_factor, same (ω/K)² convention in rad/s; "Torque Ratio Map"
 *       -> torque_ratio; "Motorshaft Inertia" -> pump_inertia, "Input Shaft
 *       Inertia" -> turbine_inertia) and gearbox (auto_rpm from "Upshift
 *       RPM"/"Downshift RPM"); "Driveshaft Inertia" -> the final drive's
 *       inertia. "Shift Latency" is Chrono's minimum time between shifts
 *       (its shifts are instantaneous); drivegraph's shift_time is a lock-out
 *       and a torque interrupt, so it takes the latency capped at 0.25 s.
 *   ManualTransmissionShafts  an `inertia` block for the "Motorshaft
 *       Inertia", a clutch of "Clutch Torque Limit" (mode auto, so launches
 *       work with the pedal released; the pedal still opens it; a motor gets
 *       a pedal clutch) with the "Input Shaft Inertia" as its plate, a manual
 *       gearbox.
 *   AutomaticTransmissionSimpleCVT  a `cvt` block whose ratio follows
 *       Chrono's schedule: out/in ratio rising linearly from "Minimum Gear
 *       Ratio" to "Maximum Gear Ratio" as the driveshaft speed goes from
 *       "Driveshaft Speed Begin" to "End" (rad/s), as an in/out table over
 *       the output speed (41 points spaced evenly in log ratio: within 0.1 %
 *       of 1/r), with "Efficiency". An engine gets a centrifugal launch
 *       clutch after the CVT, its speeds scaled by the launch ratio: a lock
 *       on the CVT's input would tie a shaft whose kinematics change, which
 *       the solver's Ġ = Ṙ·T (ties constant) does not follow.
 * Shift points that would make the box hunt (a downshift speed at or above
 * the speed an upshift lands on) are lowered to 95 % of that speed, with a
 * warning: Chrono has no such check.
 *
 * The final drive is not part of Chrono's powertrain (it sits in the
 * driveline): it comes from the --vehicle config, else the default sedan's
 * 4.10. So does the rest of the vehicle. */
#include "import.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_GEARS 24
#define MAX_PATH 6
#define CVT_POINTS 41
/* Chrono's shift latency becomes at most this much torque interrupt. */
#define MAX_SHIFT_TIME 0.25
#define DEFAULT_FINAL_DRIVE 4.1
#define DEFAULT_IDLE_RPM 800.0
#define LIMITER_HYSTERESIS_RPM 100.0
#define RPM_PER_RAD_S 9.549296585513720

/* ------------------------------------------------------------------------ */
/* A file, its text and positions                                           */

typedef struct cfile {
  const char *path;
  char *text; /* comments blanked */
  json_t *root;
} cfile;

typedef struct cctx {
  dg_error *err;
  bool failed;
  dg_diag_fn notes;
  void *user;
  dg_arena *arena;
} cctx;

/* A key path: keys and array indices. */
typedef struct cpath {
  int n;
  struct {
    const char *key; /* NULL: index */
    int index;
  } el[MAX_PATH];
} cpath;

static cpath P0(void) { return (cpath){0}; }

static cpath Pk(cpath p, const char *key) {
  if (p.n < MAX_PATH)
    p.el[p.n++].key = key;
  return p;
}

static cpath Pi(cpath p, int index) {
  if (p.n < MAX_PATH) {
    p.el[p.n].key = NULL;
    p.el[p.n++].index = index;
  }
  return p;
}

static void path_text(const cpath *p, char *out, size_t size) {
  size_t o = 0;
  out[0] = '\0';
  for (int i = 0; i < p->n && o < size; i++) {
    int w = p->el[i].key ? snprintf(out + o, size - o, "%s%s", i ? "." : "", p->el[i].key)
                         : snprintf(out + o, size - o, "[%d]", p->el[i].index);
    if (w < 0)
      break;
    o += (size_t)w;
  }
}

static void path_pointer(const cpath *p, char *out, size_t size) {
  out[0] = '\0';
  char tmp[DG_ERROR_PATH_LEN];
  for (int i = 0; i < p->n; i++) {
    snprintf(tmp, sizeof tmp, "%s", out);
    if (p->el[i].key)
      dgp_pointer_append(out, size, tmp, p->el[i].key);
    else
      dgp_pointer_index(out, size, tmp, (size_t)p->el[i].index);
  }
}

/* Blanks // and block comments outside strings, keeping newlines: 0, or
 * the offset + 1 of an unterminated block comment. */
static size_t strip_comments(char *t) {
  bool in_string = false;
  for (size_t i = 0; t[i]; i++) {
    if (in_string) {
      if (t[i] == '\\' && t[i + 1])
        i++;
      else if (t[i] == '"')
        in_string = false;
      continue;
    }
    if (t[i] == '"') {
      in_string = true;
    } else if (t[i] == '/' && t[i + 1] == '/') {
      while (t[i] && t[i] != '\n')
        t[i++] = ' ';
      if (!t[i])
        break;
    } else if (t[i] == '/' && t[i + 1] == '*') {
      size_t start = i;
      t[i++] = ' ';
      t[i++] = ' ';
      while (t[i] && !(t[i] == '*' && t[i + 1] == '/')) {
        if (t[i] != '\n')
          t[i] = ' ';
        i++;
      }
      if (!t[i])
        return start + 1;
      t[i++] = ' ';
      t[i] = ' ';
    }
  }
  return 0;
}

static void line_col(const char *t, size_t pos, int *line, int *col) {
  int l = 1;
  size_t start = 0;
  for (size_t i = 0; i < pos && t[i]; i++)
    if (t[i] == '\n') {
      l++;
      start = i + 1;
    }
  *line = l;
  *col = (int)(pos - start) + 1;
}

static size_t skip_ws(const char *t, size_t i) {
  while (t[i] == ' ' || t[i] == '\t' || t[i] == '\n' || t[i] == '\r')
    i++;
  return i;
}

static size_t skip_string(const char *t, size_t i) {
  i++; /* the opening quote */
  while (t[i] && t[i] != '"')
    i += t[i] == '\\' && t[i + 1] ? 2 : 1;
  return t[i] ? i + 1 : i;
}

/* Past one value (text already known to be valid JSON). */
static size_t skip_value(const char *t, size_t i) {
  i = skip_ws(t, i);
  if (t[i] == '"')
    return skip_string(t, i);
  if (t[i] == '{' || t[i] == '[') {
    int depth = 0;
    while (t[i]) {
      if (t[i] == '"') {
        i = skip_string(t, i);
        continue;
      }
      if (t[i] == '{' || t[i] == '[')
        depth++;
      else if ((t[i] == '}' || t[i] == ']') && --depth == 0)
        return i + 1;
      i++;
    }
    return i;
  }
  while (t[i] && !strchr(",]} \t\r\n", t[i]))
    i++;
  return i;
}

/* Offset of the value at `p`, or of the deepest container found on the way
 * (where a missing key belongs). */
static size_t locate(const char *t, const cpath *p) {
  size_t i = skip_ws(t, 0);
  for (int k = 0; k < p->n; k++) {
    size_t container = i;
    if (p->el[k].key) {
      if (t[i] != '{')
        return container;
      i = skip_ws(t, i + 1);
      size_t klen = strlen(p->el[k].key);
      bool found = false;
      while (t[i] == '"') {
        size_t kend = skip_string(t, i);
        bool match = kend - i - 2 == klen && strncmp(t + i + 1, p->el[k].key, klen) == 0;
        i = skip_ws(t, kend);
        if (t[i] == ':')
          i = skip_ws(t, i + 1);
        if (match) {
          found = true;
          break;
        }
        i = skip_ws(t, skip_value(t, i));
        if (t[i] == ',')
          i = skip_ws(t, i + 1);
      }
      if (!found)
        return container;
    } else {
      if (t[i] != '[')
        return container;
      i = skip_ws(t, i + 1);
      for (int j = 0; j < p->el[k].index; j++) {
        if (t[i] == ']' || !t[i])
          return container;
        i = skip_ws(t, skip_value(t, i));
        if (t[i] == ',')
          i = skip_ws(t, i + 1);
      }
      if (t[i] == ']')
        return container;
    }
  }
  return i;
}

static void cfail(cctx *c, const cfile *f, const cpath *p, int code, const char *fmt, ...)
    DG_PRINTF(5, 6);
static void cfail(cctx *c, const cfile *f, const cpath *p, int code, const char *fmt, ...) {
  if (c->failed)
    return;
  c->failed = true;
  if (!c->err)
    return;
  char shown[DG_ERROR_PATH_LEN], ptr[DG_ERROR_PATH_LEN], msg[DG_ERROR_TEXT_LEN];
  path_text(p, shown, sizeof shown);
  path_pointer(p, ptr, sizeof ptr);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  dgp_error_set(c->err, code, f->path, ptr, "%s%s%s", shown, shown[0] ? ": " : "", msg);
  line_col(f->text, locate(f->text, p), &c->err->line, &c->err->column);
}

static void cmissing(cctx *c, const cfile *f, const cpath *p, const char *what) {
  cpath parent = *p;
  parent.n--;
  if (what)
    cfail(c, f, &parent, DG_ERR_SCHEMA, "missing required key \"%s\" (%s)", p->el[p->n - 1].key,
          what);
  else
    cfail(c, f, &parent, DG_ERR_SCHEMA, "missing required key \"%s\"", p->el[p->n - 1].key);
}

static void cnote(cctx *c, const cfile *f, const cpath *p, bool warning, const char *fmt, ...)
    DG_PRINTF(5, 6);
static void cnote(cctx *c, const cfile *f, const cpath *p, bool warning, const char *fmt, ...) {
  if (!c->notes)
    return;
  char shown[DG_ERROR_PATH_LEN], msg[DG_ERROR_TEXT_LEN];
  path_text(p, shown, sizeof shown);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  int line = 0, col = 0;
  if (p)
    line_col(f->text, locate(f->text, p), &line, &col);
  dgp_import_notify(c->notes, c->user, f->path, line, col, warning, "%s%s%s", shown,
                   shown[0] ? ": " : "", msg);
}

static json_t *cget(const cfile *f, const cpath *p) {
  json_t *v = f->root;
  for (int k = 0; k < p->n && v; k++)
    v = p->el[k].key ? json_object_get(v, p->el[k].key)
                     : json_array_get(v, (size_t)p->el[k].index);
  return v;
}

static const char *type_name(const json_t *v) {
  switch (v ? json_typeof(v) : JSON_NULL) {
  case JSON_OBJECT:
    return "an object";
  case JSON_ARRAY:
    return "an array";
  case JSON_STRING:
    return "a string";
  case JSON_INTEGER:
  case JSON_REAL:
    return "a number";
  case JSON_TRUE:
  case JSON_FALSE:
    return "a boolean";
  default:
    return v ? "null" : "nothing";
  }
}

/* A missing key: reported at the object that lacks it, named by its path. */
static void cmissing(cctx *c, const cfile *f, const cpath *p, const char *what);

/* Reads and parses one file. */
static bool cload(cctx *c, cfile *f, const char *path) {
  memset(f, 0, sizeof *f);
  f->path = path;
  size_t len;
  char why[DG_ERROR_TEXT_LEN];
  f->text = dgp_read_input(path, &len, why, sizeof why);
  if (!f->text) {
    c->failed = true;
    dgp_error_set(c->err, DG_ERR_IO, path, "", "%s", why);
    return false;
  }
  if (strlen(f->text) != len) {
    c->failed = true;
    dgp_error_set(c->err, DG_ERR_SYNTAX, path, "", "file contains a NUL byte; expected JSON text");
    return false;
  }
  size_t open = strip_comments(f->text);
  if (open) {
    c->failed = true;
    dgp_error_set(c->err, DG_ERR_SYNTAX, path, "", "unterminated /* comment");
    if (c->err)
      line_col(f->text, open - 1, &c->err->line, &c->err->column);
    return false;
  }
  const char *start = f->text;
  if ((unsigned char)start[0] == 0xEF && (unsigned char)start[1] == 0xBB &&
      (unsigned char)start[2] == 0xBF)
    memset(f->text, ' ', 3); /* a byte order mark */
  json_error_t je;
  f->root = json_loads(f->text, JSON_REJECT_DUPLICATES | JSON_DISABLE_EOF_CHECK, &je);
  if (!f->root) {
    c->failed = true;
    dgp_error_set(c->err, DG_ERR_SYNTAX, path, "", "syntax error: %s", je.text);
    if (c->err) {
      c->err->line = je.line > 0 ? je.line : 1;
      c->err->column = je.column > 0 ? je.column : 1;
    }
    return false;
  }
  size_t end = skip_ws(f->text, (size_t)je.position);
  if (f->text[end]) {
    int line, col;
    line_col(f->text, end, &line, &col);
    dgp_import_notify(c->notes, c->user, path, line, col, true,
                     "text after the end of the JSON document ignored");
  }
  if (!json_is_object(f->root)) {
    cpath p = P0();
    cfail(c, f, &p, DG_ERR_SCHEMA, "expected a JSON object (a Chrono template), got %s",
          type_name(f->root));
    return false;
  }
  return true;
}

static void cfree(cfile *f) {
  json_decref(f->root);
  free(f->text);
}

/* ------------------------------------------------------------------------ */
/* Values                                                                   */

typedef struct crange {
  unsigned flags;
  double min, max;
} crange;

static const crange ANY = {0, 0, 0};
static const crange POSITIVE = {DG_P_MIN_EXCL, 0, 0};
static const crange NON_NEGATIVE = {DG_P_MIN, 0, 0};

static bool in_range(double x, const crange *r) {
  return !((r->flags & DG_P_MIN_EXCL) && !(x > r->min)) &&
         !((r->flags & DG_P_MIN) && !(x >= r->min)) &&
         !((r->flags & DG_P_MAX_EXCL) && !(x < r->max)) &&
         !((r->flags & DG_P_MAX) && !(x <= r->max));
}

static bool cvalue_num(cctx *c, const cfile *f, const cpath *p, const json_t *v, const crange *r,
                       double *out) {
  char buf[64];
  if (!json_is_number(v)) {
    cfail(c, f, p, DG_ERR_SCHEMA, "expected a number, got %s", type_name(v));
    return false;
  }
  double x = json_number_value(v);
  if (!in_range(x, r)) {
    cfail(c, f, p, DG_ERR_RANGE, "must be %s (got %g)",
          dgp_range_text(buf, sizeof buf, r->flags, r->min, r->max, DG_RANGE_BOUNDS), x);
    return false;
  }
  *out = x;
  return true;
}

/* A required number. */
static bool cnum(cctx *c, const cfile *f, cpath p, const crange *r, double *out) {
  if (c->failed)
    return false;
  json_t *v = cget(f, &p);
  if (!v) {
    cmissing(c, f, &p, NULL);
    return false;
  }
  return cvalue_num(c, f, &p, v, r, out);
}

/* An optional number: false when absent. */
static bool cnum_opt(cctx *c, const cfile *f, cpath p, const crange *r, double *out) {
  if (c->failed || !cget(f, &p))
    return false;
  return cnum(c, f, p, r, out);
}

static bool cobject(cctx *c, const cfile *f, cpath p) {
  if (c->failed)
    return false;
  json_t *v = cget(f, &p);
  if (!v) {
    cmissing(c, f, &p, NULL);
    return false;
  }
  if (!json_is_object(v)) {
    cfail(c, f, &p, DG_ERR_SCHEMA, "expected an object, got %s", type_name(v));
    return false;
  }
  return true;
}

/* An array of numbers (at least min_len). */
static bool cnumbers(cctx *c, const cfile *f, cpath p, const crange *r, int min_len, double **out,
                     int *n) {
  if (c->failed)
    return false;
  json_t *v = cget(f, &p);
  if (!v) {
    cmissing(c, f, &p, NULL);
    return false;
  }
  if (!json_is_array(v)) {
    cfail(c, f, &p, DG_ERR_SCHEMA, "expected an array of numbers, got %s", type_name(v));
    return false;
  }
  int len = (int)json_array_size(v);
  if (len < min_len) {
    cfail(c, f, &p, DG_ERR_SCHEMA, "must have at least %d %s (got %d)", min_len,
          min_len == 1 ? "value" : "values", len);
    return false;
  }
  double *a = dgp_arena_alloc(c->arena, sizeof *a * (size_t)(len ? len : 1));
  if (!a) {
    cfail(c, f, &p, DG_ERR_NOMEM, "out of memory");
    return false;
  }
  for (int i = 0; i < len; i++) {
    cpath e = Pi(p, i);
    if (!cvalue_num(c, f, &e, json_array_get(v, (size_t)i), r, &a[i]))
      return false;
  }
  *out = a;
  *n = len;
  return true;
}

/* A Chrono map: [[x, y], ...] with strictly increasing x, >= 2 points. */
typedef struct cmap {
  double *x, *y;
  int n;
} cmap;

static bool cread_map(cctx *c, const cfile *f, cpath p, const char *xname, cmap *m) {
  if (c->failed)
    return false;
  json_t *v = cget(f, &p);
  if (!v) {
    cmissing(c, f, &p, NULL);
    return false;
  }
  if (!json_is_array(v)) {
    cfail(c, f, &p, DG_ERR_SCHEMA, "expected an array of [%s, value] pairs, got %s", xname,
          type_name(v));
    return false;
  }
  int len = (int)json_array_size(v);
  if (len < 2) {
    cfail(c, f, &p, DG_ERR_SCHEMA, "must have at least 2 points (got %d)", len);
    return false;
  }
  m->x = dgp_arena_alloc(c->arena, sizeof *m->x * (size_t)len);
  m->y = dgp_arena_alloc(c->arena, sizeof *m->y * (size_t)len);
  if (!m->x || !m->y) {
    cfail(c, f, &p, DG_ERR_NOMEM, "out of memory");
    return false;
  }
  for (int i = 0; i < len; i++) {
    cpath e = Pi(p, i);
    json_t *pair = json_array_get(v, (size_t)i);
    if (!json_is_array(pair) || json_array_size(pair) != 2) {
      cfail(c, f, &e, DG_ERR_SCHEMA, "expected a [%s, value] pair, got %s", xname,
            json_is_array(pair) ? "an array of another length" : type_name(pair));
      return false;
    }
    cpath ex = Pi(e, 0), ey = Pi(e, 1);
    if (!cvalue_num(c, f, &ex, json_array_get(pair, 0), &ANY, &m->x[i]) ||
        !cvalue_num(c, f, &ey, json_array_get(pair, 1), &ANY, &m->y[i]))
      return false;
    if (i > 0 && !(m->x[i] > m->x[i - 1])) {
      cfail(c, f, &ex, DG_ERR_RANGE, "%s must increase from point to point: %g after %g",
            xname, m->x[i], m->x[i - 1]);
      return false;
    }
  }
  m->n = len;
  return true;
}

/* Linear interpolation, clamped at the ends (the table blocks' lookup). */
static double map_eval(const cmap *m, double x) {
  if (x <= m->x[0])
    return m->y[0];
  if (x >= m->x[m->n - 1])
    return m->y[m->n - 1];
  int i = 1;
  while (m->x[i] < x)
    i++;
  double t = (x - m->x[i - 1]) / (m->x[i] - m->x[i - 1]);
  return m->y[i - 1] + t * (m->y[i] - m->y[i - 1]);
}

/* The part of a map at x >= 0, starting with its value at 0 if it reached
 * below. False if no point lies at or above 0. */
static bool map_from_zero(cctx *c, const cfile *f, const cpath *p, const cmap *m, cmap *out) {
  if (m->x[m->n - 1] < 0.0) {
    cfail(c, f, p, DG_ERR_RANGE, "no point at or above 0 rpm (the last is at %g)",
          m->x[m->n - 1]);
    return false;
  }
  if (m->x[0] >= 0.0) {
    *out = *m;
    return true;
  }
  int first = 0;
  while (m->x[first] <= 0.0)
    first++; /* first point strictly above 0 */
  int n = m->n - first + 1;
  out->x = dgp_arena_alloc(c->arena, sizeof *out->x * (size_t)n);
  out->y = dgp_arena_alloc(c->arena, sizeof *out->y * (size_t)n);
  if (!out->x || !out->y) {
    cfail(c, f, p, DG_ERR_NOMEM, "out of memory");
    return false;
  }
  out->x[0] = 0.0;
  out->y[0] = map_eval(m, 0.0);
  memcpy(out->x + 1, m->x + first, sizeof *out->x * (size_t)(n - 1));
  memcpy(out->y + 1, m->y + first, sizeof *out->y * (size_t)(n - 1));
  out->n = n;
  if (n < 2) { /* only the point at 0: extend flat */
    out->x[1] = 1.0;
    out->y[1] = out->y[0];
    out->n = 2;
  }
  cnote(c, f, p, false,
        "points below 0 rpm replaced by the value at 0 rpm, %g (the engine reads its map at "
        "max(rpm, 0))",
        out->y[0]);
  return true;
}

/* ------------------------------------------------------------------------ */
/* Templates                                                                */

enum { ENGINE_SIMPLE_MAP, ENGINE_SHAFTS, ENGINE_SIMPLE, NUM_ENGINES };
enum { TRANS_SIMPLE_MAP, TRANS_SHAFTS, TRANS_CVT, TRANS_MANUAL, NUM_TRANS };
static const char *const engine_templates[] = {"EngineSimpleMap", "EngineShafts",
                                               "EngineSimple"};
static const char *const trans_templates[] = {
    "AutomaticTransmissionSimpleMap", "AutomaticTransmissionShafts",
    "AutomaticTransmissionSimpleCVT", "ManualTransmissionShafts"};

typedef struct cengine {
  int kind;
  const char *name;
  double inertia;
  bool has_inertia;
  cmap full, closed;
  double idle_rpm, redline_rpm;
  double max_torque, max_power, max_speed; /* EngineSimple (rad/s) */
} cengine;

typedef struct ctrans {
  int kind;
  const char *name;
  double ratios[MAX_GEARS]; /* drivegraph's, input/output */
  double chrono[MAX_GEARS];
  int n;
  int listed[MAX_GEARS]; /* index of each kept gear in the file's list */
  int n_listed;
  double reverse;
  bool has_reverse;
  double up[MAX_GEARS], down[MAX_GEARS]; /* shift map, rpm */
  double upshift_rpm, downshift_rpm, latency;
  cmap capacity, torque_ratio;
  double motorshaft_inertia, input_inertia, driveshaft_inertia;
  double clutch_torque;
  double efficiency, min_ratio, max_ratio, speed_begin, speed_end;
} ctrans;

/* The "Template" of a file: its index in `names`, or -1 with the error. */
static int ctemplate(cctx *c, const cfile *f, const char *const *names, int n, const char *role,
                     const char *const *other, int n_other) {
  cpath p = Pk(P0(), "Template");
  json_t *t = cget(f, &p);
  if (!t) {
    cmissing(c, f, &p, role[0] == 'e' ? "the engine template name" : "the transmission template name");
    return -1;
  }
  if (!json_is_string(t)) {
    cfail(c, f, &p, DG_ERR_SCHEMA, "expected a string, got %s", type_name(t));
    return -1;
  }
  const char *s = json_string_value(t);
  for (int i = 0; i < n; i++)
    if (strcmp(s, names[i]) == 0)
      return i;
  char list[256] = "";
  for (int i = 0; i < n; i++) {
    size_t l = strlen(list);
    snprintf(list + l, sizeof list - l, "%s%s", i ? ", " : "", names[i]);
  }
  for (int i = 0; i < n_other; i++)
    if (strcmp(s, other[i]) == 0) {
      cfail(c, f, &p, DG_ERR_UNKNOWN, "\"%s\" is not %s %s template (expected %s)", s,
            role[0] == 'e' ? "an" : "a", role, list);
      return -1;
    }
  const char *close = dg_suggest(s, names, n);
  if (close)
    cfail(c, f, &p, DG_ERR_UNKNOWN, "unknown %s template \"%s\"; did you mean \"%s\"?", role, s,
          close);
  else
    cfail(c, f, &p, DG_ERR_UNKNOWN, "unknown %s template \"%s\" (supported: %s)", role, s, list);
  return -1;
}

static const char *cname(const cfile *f) {
  json_t *n = json_object_get(f->root, "Name");
  return json_is_string(n) ? json_string_value(n) : NULL;
}

/* Notes keys a template has that the import does not use. */
static void note_unused(cctx *c, const cfile *f, const char *key, const char *why) {
  cpath p = Pk(P0(), key);
  if (cget(f, &p))
    cnote(c, f, &p, false, "ignored (%s)", why);
}

/* The rpm at which the full-load curve falls through zero after its peak,
 * or its last speed. */
static double governed_speed(const cmap *full) {
  double at;
  dgp_import_peak(full->x, full->y, full->n, &at);
  for (int i = 1; i < full->n; i++) {
    if (full->x[i] <= at || full->y[i] > 0.0 || full->y[i - 1] <= 0.0)
      continue;
    double t = full->y[i - 1] / (full->y[i - 1] - full->y[i]);
    return full->x[i - 1] + t * (full->x[i] - full->x[i - 1]);
  }
  return full->x[full->n - 1];
}

static double scaled_inertia(double peak_torque) {
  return 0.25 * (peak_torque > 330.0 ? peak_torque / 330.0 : 1.0);
}

static void read_engine(cctx *c, const cfile *f, cengine *e) {
  memset(e, 0, sizeof *e);
  e->name = cname(f);
  e->kind = ctemplate(c, f, engine_templates, NUM_ENGINES, "engine", trans_templates, NUM_TRANS);
  if (e->kind < 0)
    return;
  cpath root = P0();
  if (e->kind == ENGINE_SIMPLE) {
    cnum(c, f, Pk(root, "Maximum Engine Torque"), &POSITIVE, &e->max_torque);
    cnum(c, f, Pk(root, "Maximum Engine Power"), &POSITIVE, &e->max_power);
    cnum(c, f, Pk(root, "Maximum Engine Speed"), &POSITIVE, &e->max_speed);
    e->inertia = scaled_inertia(e->max_torque);
    return;
  }
  cmap full, closed;
  if (e->kind == ENGINE_SIMPLE_MAP) {
    cpath pf = Pk(root, "Map Full Throttle"), pz = Pk(root, "Map Zero Throttle");
    cnum(c, f, Pk(root, "Maximal Engine Speed RPM"), &POSITIVE, &e->redline_rpm);
    if (!cread_map(c, f, pf, "rpm", &full) || !cread_map(c, f, pz, "rpm", &closed))
      return;
    if (full.x[full.n - 1] > 0.0 && full.x[full.n - 1] < 0.2 * e->redline_rpm) {
      /* written in rad/s: the map would end far below the engine's speed */
      for (int i = 0; i < full.n; i++)
        full.x[i] *= RPM_PER_RAD_S;
      for (int i = 0; i < closed.n; i++)
        closed.x[i] *= RPM_PER_RAD_S;
      cnote(c, f, &pf, true,
            "speeds end at %g, below a fifth of Maximal Engine Speed RPM (%g): read as rad/s "
            "and converted to rpm",
            full.x[full.n - 1] / RPM_PER_RAD_S, e->redline_rpm);
    }
    if (!map_from_zero(c, f, &pf, &full, &e->full) ||
        !map_from_zero(c, f, &pz, &closed, &e->closed))
      return;
  } else {
    cpath pt = Pk(root, "Torque Map"), pl = Pk(root, "Losses Map");
    e->has_inertia = cnum(c, f, Pk(root, "Motorshaft Inertia"), &POSITIVE, &e->inertia);
    cmap t0, l0, t, l;
    if (!cread_map(c, f, pt, "rpm", &t0) || !cread_map(c, f, pl, "rpm", &l0) ||
        !map_from_zero(c, f, &pt, &t0, &t) || !map_from_zero(c, f, &pl, &l0, &l))
      return;
    /* full = T + L on the union of the breakpoints (both are >= 0 now) */
    int n = 0;
    double *x = dgp_arena_alloc(c->arena, sizeof *x * (size_t)(t.n + l.n));
    double *y = dgp_arena_alloc(c->arena, sizeof *y * (size_t)(t.n + l.n));
    if (!x || !y) {
      cfail(c, f, &pt, DG_ERR_NOMEM, "out of memory");
      return;
    }
    for (int i = 0, j = 0; i < t.n || j < l.n;) {
      double v = j >= l.n || (i < t.n && t.x[i] <= l.x[j]) ? t.x[i] : l.x[j];
      if (i < t.n && t.x[i] == v)
        i++;
      if (j < l.n && l.x[j] == v)
        j++;
      x[n] = v;
      y[n] = map_eval(&t, v) + map_eval(&l, v);
      n++;
    }
    e->full = (cmap){x, y, n};
    e->closed = l;
    e->redline_rpm = governed_speed(&e->full);
    cnote(c, f, &pt, false,
          "full load = Torque Map + Losses Map (Chrono's throttle x T + L), %d points; redline "
          "%g rpm, where it falls to zero",
          n, e->redline_rpm);
    note_unused(c, f, "Motor Block Inertia", "the engine block's reaction on the chassis is not "
                                             "modelled");
  }
  if (c->failed)
    return;
  e->idle_rpm = DEFAULT_IDLE_RPM < 0.35 * e->redline_rpm ? DEFAULT_IDLE_RPM : 0.35 * e->redline_rpm;
  if (!(e->redline_rpm > e->idle_rpm + LIMITER_HYSTERESIS_RPM)) {
    cpath p = Pk(root, e->kind == ENGINE_SIMPLE_MAP ? "Maximal Engine Speed RPM" : "Torque Map");
    cfail(c, f, &p, DG_ERR_RANGE, "maximum engine speed %g rpm is too low for an idling engine",
          e->redline_rpm);
    return;
  }
  double at, peak = dgp_import_peak(e->full.x, e->full.y, e->full.n, &at);
  if (!(peak > 0.0)) {
    cpath p = Pk(root, e->kind == ENGINE_SIMPLE_MAP ? "Map Full Throttle" : "Torque Map");
    cfail(c, f, &p, DG_ERR_RANGE, "the full-load torque is nowhere positive");
    return;
  }
  if (!e->has_inertia)
    e->inertia = scaled_inertia(peak);
}

/* Forward ratios (Chrono: output/input, rising), reverse (negative). For
 * automatic shifting the ratios must rise from gear to gear; a gear out of
 * that order (one corpus file lists 0.45 before 0.26) is dropped with a
 * warning, keeping the longest rising sequence, since Chrono shifts through
 * such a box regardless. */
static void read_ratios(cctx *c, const cfile *f, cpath gb, ctrans *t, bool need_rising) {
  double *r;
  int n;
  cpath pr = Pk(gb, "Forward Gear Ratios");
  if (!cnumbers(c, f, pr, &POSITIVE, 1, &r, &n))
    return;
  if (n > MAX_GEARS) {
    cfail(c, f, &pr, DG_ERR_RANGE, "at most %d gears (got %d)", MAX_GEARS, n);
    return;
  }
  t->n_listed = n;
  /* longest strictly rising subsequence (n is small): len[i] ends at i */
  int len[MAX_GEARS], prev[MAX_GEARS], best = 0;
  for (int i = 0; i < n; i++) {
    len[i] = 1;
    prev[i] = -1;
    for (int j = 0; j < i; j++)
      if (need_rising && r[j] < r[i] && len[j] + 1 > len[i]) {
        len[i] = len[j] + 1;
        prev[i] = j;
      }
    if (!need_rising) {
      len[i] = i + 1;
      prev[i] = i - 1;
    }
    if (len[i] > len[best])
      best = i;
  }
  t->n = len[best];
  for (int i = best, k = t->n - 1; i >= 0; i = prev[i], k--) {
    t->listed[k] = i;
    t->chrono[k] = r[i];
    t->ratios[k] = 1.0 / r[i];
  }
  for (int i = 0, k = 0; i < n; i++) {
    if (k < t->n && t->listed[k] == i) {
      k++;
      continue;
    }
    cpath e = Pi(pr, i);
    cnote(c, f, &e, true,
          "gear %d (%g) is out of order for automatic shifting (Chrono ratios are output/input "
          "speed, rising with the gear): dropped",
          i + 1, r[i]);
  }
  double rev;
  cpath pv = Pk(gb, "Reverse Gear Ratio");
  if (cnum_opt(c, f, pv, &ANY, &rev)) {
    if (rev == 0.0) {
      cfail(c, f, &pv, DG_ERR_RANGE, "must be non-zero (negative: the output turns backwards)");
      return;
    }
    if (rev > 0.0)
      cnote(c, f, &pv, true, "positive (%g); Chrono writes reverse ratios negative: using %g",
            rev, -rev);
    t->reverse = 1.0 / fabs(rev);
    t->has_reverse = true;
  }
}

/* Lowers an upshift speed the engine cannot reach under load (at or above
 * max_rpm, where its full-load torque runs out or the limiter cuts): the
 * box would stay in gear for good. */
static double reachable(cctx *c, const cfile *f, const cpath *at, int gear, double up,
                        double max_rpm) {
  if (up < max_rpm)
    return up;
  double fixed = floor(0.95 * max_rpm);
  cnote(c, f, at, true,
        "upshift from gear %d at %g rpm: the engine does not get there under load (its torque "
        "runs out at %.0f rpm); using %g rpm",
        gear, up, max_rpm, fixed);
  return fixed;
}

/* Lowers a downshift speed that would make the box hunt after an upshift
 * from gear g (1-based) into g + 1: down_{g+1} < up_g · r_{g+1}/r_g. */
static double unhunt(cctx *c, const cfile *f, const cpath *at, const ctrans *t, int g, double up,
                     double down) {
  double bound = up * t->ratios[g] / t->ratios[g - 1];
  if (down < bound)
    return down;
  double fixed = floor(0.95 * bound);
  cnote(c, f, at, true,
        "downshift at %g rpm in gear %d would shift straight back down after an upshift from "
        "gear %d at %g rpm (it lands at %.0f rpm); using %g rpm",
        down, g + 1, g, up, bound, fixed);
  return fixed;
}

/* max_rpm: the highest speed the engine reaches under load. */
static void read_trans(cctx *c, const cfile *f, ctrans *t, double max_rpm) {
  memset(t, 0, sizeof *t);
  t->name = cname(f);
  t->kind = ctemplate(c, f, trans_templates, NUM_TRANS, "transmission", engine_templates,
                      NUM_ENGINES);
  if (t->kind < 0)
    return;
  cpath root = P0(), gb = Pk(root, "Gear Box");
  if (!cobject(c, f, gb))
    return;
  switch (t->kind) {
  case TRANS_SIMPLE_MAP: {
    read_ratios(c, f, gb, t, true);
    cpath ps = Pk(gb, "Shift Points Map RPM");
    json_t *v = cget(f, &ps);
    if (c->failed)
      return;
    if (!v) {
      cmissing(c, f, &ps, NULL);
      return;
    }
    if (!json_is_array(v) || (int)json_array_size(v) != t->n_listed) {
      if (json_is_array(v))
        cfail(c, f, &ps, DG_ERR_SCHEMA,
              "expected %d [downshift rpm, upshift rpm] pairs, one per forward gear, got %d",
              t->n_listed, (int)json_array_size(v));
      else
        cfail(c, f, &ps, DG_ERR_SCHEMA,
              "expected %d [downshift rpm, upshift rpm] pairs, one per forward gear, got %s",
              t->n_listed, type_name(v));
      return;
    }
    for (int i = 0; i < t->n; i++) {
      cpath e = Pi(ps, t->listed[i]);
      json_t *pair = json_array_get(v, (size_t)t->listed[i]);
      if (!json_is_array(pair) || json_array_size(pair) != 2) {
        cfail(c, f, &e, DG_ERR_SCHEMA, "expected a [downshift rpm, upshift rpm] pair, got %s",
              json_is_array(pair) ? "an array of another length" : type_name(pair));
        return;
      }
      cpath pd = Pi(e, 0), pu = Pi(e, 1);
      if (!cvalue_num(c, f, &pd, json_array_get(pair, 0), &NON_NEGATIVE, &t->down[i]) ||
          !cvalue_num(c, f, &pu, json_array_get(pair, 1), &POSITIVE, &t->up[i]))
        return;
      if (i + 1 < t->n && !(t->down[i] < t->up[i])) {
        cfail(c, f, &pd, DG_ERR_RANGE, "downshift speed must be < the upshift speed %g (got %g)",
              t->up[i], t->down[i]);
        return;
      }
      if (i + 1 < t->n)
        t->up[i] = reachable(c, f, &pu, i + 1, t->up[i], max_rpm);
    }
    for (int g = 1; g < t->n; g++) {
      cpath pd = Pi(Pi(ps, t->listed[g]), 0);
      t->down[g] = unhunt(c, f, &pd, t, g, t->up[g - 1], t->down[g]);
    }
    break;
  }
  case TRANS_SHAFTS:
  case TRANS_MANUAL:
    read_ratios(c, f, gb, t, t->kind == TRANS_SHAFTS);
    cnum(c, f, Pk(root, "Motorshaft Inertia"), &NON_NEGATIVE, &t->motorshaft_inertia);
    cnum(c, f, Pk(root, "Input Shaft Inertia"), &NON_NEGATIVE, &t->input_inertia);
    cnum(c, f, Pk(root, "Driveshaft Inertia"), &NON_NEGATIVE, &t->driveshaft_inertia);
    note_unused(c, f, "Transmission Block Inertia",
                "the housing's reaction on the chassis is not modelled");
    if (t->kind == TRANS_MANUAL) {
      cnum(c, f, Pk(root, "Clutch Torque Limit"), &POSITIVE, &t->clutch_torque);
      break;
    }
    {
      cpath tc = Pk(root, "Torque Converter");
      if (!cobject(c, f, tc))
        return;
      cpath pk = Pk(tc, "Capacity Factor Map"), pt = Pk(tc, "Torque Ratio Map");
      if (!cread_map(c, f, pk, "speed ratio", &t->capacity) ||
          !cread_map(c, f, pt, "speed ratio", &t->torque_ratio))
        return;
      cmap *maps[2] = {&t->capacity, &t->torque_ratio};
      const cpath *paths[2] = {&pk, &pt};
      for (int k = 0; k < 2; k++) {
        cmap *m = maps[k];
        for (int i = 0; i < m->n; i++) {
          cpath e = Pi(Pi(*paths[k], i), 1);
          if (m->x[i] < 0.0) {
            cpath ex = Pi(Pi(*paths[k], i), 0);
            cfail(c, f, &ex, DG_ERR_RANGE, "speed ratio must be >= 0 (got %g)", m->x[i]);
            return;
          }
          if (!(m->y[i] > 0.0)) {
            cfail(c, f, &e, DG_ERR_RANGE, "must be > 0 (got %g)", m->y[i]);
            return;
          }
        }
        int keep = m->n;
        while (keep > 0 && m->x[keep - 1] > 1.0)
          keep--;
        if (keep < m->n) {
          cnote(c, f, paths[k], false,
                "points above speed ratio 1 dropped (the converter block handles reverse flow "
                "itself)");
          m->n = keep;
        }
        if (m->n < 2) {
          cfail(c, f, paths[k], DG_ERR_RANGE, "needs at least 2 points at speed ratios 0..1");
          return;
        }
      }
      /* power out <= power in: TR(s)·s <= 1 (checked on a fine grid) */
      for (int i = 0; i <= 1000; i++) {
        double s = i / 1000.0, eff = map_eval(&t->torque_ratio, s) * s;
        if (eff > 1.0 + 1e-9) {
          cfail(c, f, &pt, DG_ERR_RANGE,
                "torque ratio x speed ratio (the efficiency) must be <= 1 (got %g at speed ratio "
                "%g)",
                eff, s);
          return;
        }
      }
      cpath pu = Pk(gb, "Upshift RPM"), pd = Pk(gb, "Downshift RPM"), pl = Pk(gb, "Shift Latency");
      if (cnum(c, f, pu, &POSITIVE, &t->upshift_rpm) && t->n > 1)
        t->upshift_rpm = reachable(c, f, &pu, 1, t->upshift_rpm, max_rpm);
      cnum(c, f, pd, &POSITIVE, &t->downshift_rpm);
      if (cnum_opt(c, f, pl, &NON_NEGATIVE, &t->latency) && t->latency > MAX_SHIFT_TIME)
        cnote(c, f, &pl, false,
              "%g s is Chrono's minimum time between (instantaneous) shifts; drivegraph's "
              "shift_time is also a torque interrupt: using %g s",
              t->latency, MAX_SHIFT_TIME);
      if (c->failed)
        return;
      if (!(t->downshift_rpm < t->upshift_rpm)) {
        cfail(c, f, &pd, DG_ERR_RANGE, "must be < Upshift RPM (%g) (got %g)", t->upshift_rpm,
              t->downshift_rpm);
        return;
      }
      double down = t->downshift_rpm;
      for (int g = 1; g < t->n; g++)
        down = unhunt(c, f, &pd, t, g, t->upshift_rpm, down);
      t->downshift_rpm = down;
    }
    break;
  case TRANS_CVT: {
    const crange eff = {DG_P_MIN_EXCL | DG_P_MAX, 0, 1};
    cnum(c, f, Pk(gb, "Efficiency"), &eff, &t->efficiency);
    cpath pmin = Pk(gb, "Minimum Gear Ratio"), pmax = Pk(gb, "Maximum Gear Ratio");
    cpath pb = Pk(gb, "Driveshaft Speed Begin"), pe = Pk(gb, "Driveshaft Speed End");
    cnum(c, f, pmin, &POSITIVE, &t->min_ratio);
    cnum(c, f, pmax, &POSITIVE, &t->max_ratio);
    cnum(c, f, pb, &NON_NEGATIVE, &t->speed_begin);
    cnum(c, f, pe, &POSITIVE, &t->speed_end);
    if (c->failed)
      return;
    if (!(t->max_ratio > t->min_ratio))
      cfail(c, f, &pmax, DG_ERR_RANGE, "must be > Minimum Gear Ratio (%g) (got %g)",
            t->min_ratio, t->max_ratio);
    else if (!(t->speed_end > t->speed_begin))
      cfail(c, f, &pe, DG_ERR_RANGE, "must be > Driveshaft Speed Begin (%g) (got %g)",
            t->speed_begin, t->speed_end);
    break;
  }
  default:
    break;
  }
}

/* The highest engine speed under load: where the full-load torque runs out
 * or the rev limiter cuts; a motor's drive fades over its last 5 %. */
static double engine_max_rpm(const cengine *e) {
  if (e->kind == ENGINE_SIMPLE)
    return 0.95 * e->max_speed * RPM_PER_RAD_S;
  double governed = governed_speed(&e->full);
  return governed < e->redline_rpm ? governed : e->redline_rpm;
}

/* ------------------------------------------------------------------------ */
/* The graph                                                                */

static void build_engine(dg_import_graph *g, const cengine *e) {
  if (e->kind == ENGINE_SIMPLE) {
    json_t *m = dgp_import_block(g, "engine", "motor",
                                "Chrono EngineSimple: throttle x max torque, power limited");
    dgp_import_set_num(g, m, "inertia", e->inertia);
    dgp_import_set_num(g, m, "max_torque", e->max_torque);
    dgp_import_set_num(g, m, "max_power", e->max_power);
    dgp_import_set_num(g, m, "max_rpm", e->max_speed * RPM_PER_RAD_S);
    dgp_import_set_bool(g, m, "reverse", false);
    return;
  }
  json_t *b = dgp_import_block(g, "engine", "engine",
                              e->kind == ENGINE_SHAFTS
                                  ? "Chrono EngineShafts: full_load = Torque Map + Losses Map, "
                                    "closed_throttle = Losses Map"
                                  : "Chrono EngineSimpleMap");
  dgp_import_set_num(g, b, "inertia", e->inertia);
  dgp_import_set_num(g, b, "idle_rpm", e->idle_rpm);
  dgp_import_set_num(g, b, "redline_rpm", e->redline_rpm);
  dgp_import_set(g, b, "full_load", dgp_import_table1d("rpm", e->full.x, "torque", e->full.y,
                                                     e->full.n));
  dgp_import_set(g, b, "closed_throttle", dgp_import_table1d("rpm", e->closed.x, "torque",
                                                           e->closed.y, e->closed.n));
}

/* The gearbox block common to the stepped transmissions. */
static json_t *build_gearbox(dg_import_graph *g, const ctrans *t, const char *doc) {
  json_t *gb = dgp_import_block(g, "gearbox", "gearbox", doc);
  dgp_import_set(g, gb, "ratios", dgp_import_numbers(t->ratios, t->n));
  if (t->has_reverse)
    dgp_import_set_num(g, gb, "reverse", t->reverse);
  return gb;
}

/* Builds everything up to the driveline; returns the shaft that feeds it. */
static const char *build_transmission(dg_import_graph *g, const cengine *e, const ctrans *t) {
  bool motor = e->kind == ENGINE_SIMPLE;
  double peak_rpm = 0.0, peak = 0.0;
  if (!motor)
    peak = dgp_import_peak(e->full.x, e->full.y, e->full.n, &peak_rpm);
  switch (t->kind) {
  case TRANS_SHAFTS: {
    json_t *tc = dgp_import_block(g, "converter", "torque_converter",
                                 "Chrono AutomaticTransmissionShafts torque converter");
    dgp_import_set(g, tc, "capacity_factor",
                  dgp_import_table1d("speed_ratio", t->capacity.x, "k", t->capacity.y,
                                    t->capacity.n));
    dgp_import_set(g, tc, "torque_ratio",
                  dgp_import_table1d("speed_ratio", t->torque_ratio.x, "ratio", t->torque_ratio.y,
                                    t->torque_ratio.n));
    dgp_import_set_num(g, tc, "pump_inertia", t->motorshaft_inertia);
    dgp_import_set_num(g, tc, "turbine_inertia", t->input_inertia);
    dgp_import_connect(g, "engine.out", "converter.in");
    json_t *gb = build_gearbox(g, t, "Chrono ratios output/input, inverted");
    dgp_import_set_num(g, gb, "inertia", 0.0); /* the turbine carries the input shaft */
    dgp_import_set_num(g, gb, "shift_time", t->latency < MAX_SHIFT_TIME ? t->latency
                                                                       : MAX_SHIFT_TIME);
    json_t *sh = json_object();
    dgp_import_set_str(g, sh, "engagement", "rigid");
    dgp_import_set_str(g, sh, "mode", "auto_rpm");
    dgp_import_set_num(g, sh, "upshift_rpm", t->upshift_rpm);
    dgp_import_set_num(g, sh, "downshift_rpm", t->downshift_rpm);
    dgp_import_set(g, gb, "shift", sh);
    dgp_import_connect(g, "converter.out", "gearbox.in");
    return "gearbox.out";
  }
  case TRANS_MANUAL: {
    json_t *ms = dgp_import_block(g, "motorshaft", "inertia",
                                 "Chrono ManualTransmissionShafts Motorshaft Inertia");
    dgp_import_set_num(g, ms, "inertia", t->motorshaft_inertia > 0.0 ? t->motorshaft_inertia
                                                                   : 1e-3);
    dgp_import_connect(g, "engine.out", "motorshaft.in");
    json_t *cl = dgp_import_block(g, "clutch", "clutch",
                                 motor ? "Chrono clutch (pedal)"
                                       : "Chrono clutch: automatic for launches, the pedal "
                                         "still opens it");
    if (!motor) {
      dgp_import_set_str(g, cl, "mode", "auto");
      dgp_import_set_num(g, cl, "idle_rpm", e->idle_rpm);
      double lo = e->idle_rpm + 0.1 * (e->redline_rpm - e->idle_rpm);
      double hi = 0.5 * (e->idle_rpm + e->redline_rpm);
      dgp_import_set_num(g, cl, "launch_rpm", peak_rpm < lo ? lo : peak_rpm > hi ? hi : peak_rpm);
    }
    dgp_import_set_num(g, cl, "max_torque", t->clutch_torque);
    dgp_import_set_num(g, cl, "inertia", t->input_inertia);
    dgp_import_connect(g, "motorshaft.out", "clutch.in");
    json_t *gb = build_gearbox(g, t, "Chrono ratios output/input, inverted; the gear input "
                                     "selects the gear");
    dgp_import_set_num(g, gb, "inertia", 0.0); /* the clutch plate carries the input shaft */
    dgp_import_set_num(g, gb, "shift_time", 0.0);
    json_t *sh = json_object();
    dgp_import_set_str(g, sh, "engagement", "rigid");
    dgp_import_set_str(g, sh, "mode", "manual");
    dgp_import_set(g, gb, "shift", sh);
    dgp_import_connect(g, "clutch.out", "gearbox.in");
    return "gearbox.out";
  }
  case TRANS_SIMPLE_MAP: {
    const char *into = "gearbox.in";
    if (!motor) {
      dgp_import_launch_clutch(g, "automatic launch clutch (Chrono's simple map has none)",
                              e->idle_rpm, e->redline_rpm, peak, peak_rpm, 0.0, 0.0);
      dgp_import_connect(g, "engine.out", "clutch.in");
      dgp_import_connect(g, "clutch.out", "gearbox.in");
    } else {
      dgp_import_connect(g, "engine.out", into);
    }
    json_t *gb = build_gearbox(g, t, "Chrono ratios output/input, inverted; instantaneous "
                                     "shifts on Chrono's shift points");
    dgp_import_set_num(g, gb, "shift_time", 0.0);
    json_t *sh = json_object();
    dgp_import_set_str(g, sh, "engagement", "rigid");
    dgp_import_set_str(g, sh, "mode", "shift_map");
    dgp_import_set(g, sh, "upshift_map", dgp_import_numbers(t->up, t->n));
    dgp_import_set(g, sh, "downshift_map", dgp_import_numbers(t->down, t->n));
    dgp_import_set(g, gb, "shift", sh);
    return "gearbox.out";
  }
  case TRANS_CVT: {
    dgp_import_connect(g, "engine.out", "cvt.in");
    /* in/out = 1/r(ω), r rising linearly in ω from min to max ratio */
    double w[CVT_POINTS], ratio[CVT_POINTS];
    for (int i = 0; i < CVT_POINTS; i++) {
      double r = t->min_ratio * pow(t->max_ratio / t->min_ratio, (double)i / (CVT_POINTS - 1));
      w[i] = t->speed_begin +
             (r - t->min_ratio) / (t->max_ratio - t->min_ratio) * (t->speed_end - t->speed_begin);
      ratio[i] = 1.0 / r;
    }
    w[CVT_POINTS - 1] = t->speed_end; /* exactly, despite round-off */
    json_t *cvt = dgp_import_block(g, "cvt", "cvt",
                                  "Chrono AutomaticTransmissionSimpleCVT: 1/ratio over the "
                                  "driveshaft speed");
    dgp_import_set(g, cvt, "ratio", dgp_import_table1d("omega_out", w, "ratio", ratio, CVT_POINTS));
    dgp_import_set_num(g, cvt, "efficiency", t->efficiency);
    if (motor)
      return "cvt.out";
    /* The launch clutch goes after the CVT (a centrifugal clutch, as on
     * scooters), its speeds scaled by the CVT's launch ratio r0, so that at
     * rest it sees the engine's speed / r0: its lock then ties two shafts of
     * constant kinematics (a lock on the CVT's input would tie a shaft whose
     * ratio changes, which the solver's Ġ = Ṙ·T does not follow). */
    double r0 = 1.0 / t->min_ratio;
    double lo = e->idle_rpm + 0.1 * (e->redline_rpm - e->idle_rpm);
    double hi = 0.5 * (e->idle_rpm + e->redline_rpm);
    double launch = peak_rpm < lo ? lo : peak_rpm > hi ? hi : peak_rpm;
    json_t *cl = dgp_import_block(g, "clutch", "clutch",
                                 "centrifugal launch clutch after the CVT (Chrono's CVT has "
                                 "none): engine idle and launch speeds over the launch ratio");
    dgp_import_set_str(g, cl, "mode", "auto");
    dgp_import_set_num(g, cl, "max_torque", 1.25 * peak * r0);
    dgp_import_set_num(g, cl, "idle_rpm", e->idle_rpm / r0);
    dgp_import_set_num(g, cl, "launch_rpm", launch / r0);
    dgp_import_connect(g, "cvt.out", "clutch.in");
    return "clutch.out";
  }
  default:
    return "gearbox.out";
  }
}

/* The file's "Type", when present, must say what the template says. */
static bool is_type(const cfile *f, const char *type) {
  json_t *t = json_object_get(f->root, "Type");
  return json_is_string(t) && strcmp(json_string_value(t), type) == 0;
}

static bool has_template(const cfile *f, const char *const *names, int n) {
  json_t *t = json_object_get(f->root, "Template");
  for (int i = 0; json_is_string(t) && i < n; i++)
    if (strcmp(json_string_value(t), names[i]) == 0)
      return true;
  return false;
}

static const char *base_name(const char *path) {
  const char *s = strrchr(path, '/');
  return s ? s + 1 : path;
}

char *dg_import_chrono_to_json(const char *engine, const char *transmission, const char *vehicle,
                               dg_diag_fn notes, void *user, dg_error *err) {
  dgp_error_clear(err);
  if (!engine || !transmission) {
    dgp_error_set(err, DG_ERR_USAGE, "", "", "an engine file and a transmission file are needed");
    return NULL;
  }
  cctx c = {.err = err, .notes = notes, .user = user, .arena = dgp_arena_new()};
  if (!c.arena) {
    dgp_error_set(err, DG_ERR_NOMEM, engine, "", "out of memory");
    return NULL;
  }
  dg_import_vehicle v;
  double final_drive = DEFAULT_FINAL_DRIVE;
  bool has_fd = false;
  if (vehicle) {
    if (dgp_import_yaml_vehicle(vehicle, &v, &final_drive, &has_fd, notes, user, err) != DG_OK)
      c.failed = true;
  } else {
    dgp_import_vehicle_default(&v);
  }
  if (!has_fd && !c.failed)
    dgp_import_notify(notes, user, vehicle ? vehicle : engine, 0, 0, false,
                     "final drive not given (Chrono keeps it in the driveline): the default "
                     "sedan's %g",
                     final_drive);
  cfile ef = {0}, tf = {0};
  bool ok = !c.failed && cload(&c, &ef, engine) && cload(&c, &tf, transmission);
  if (ok && has_template(&ef, trans_templates, NUM_TRANS) &&
      has_template(&tf, engine_templates, NUM_ENGINES)) {
    cfile tmp = ef;
    ef = tf;
    tf = tmp;
    dgp_import_notify(notes, user, transmission, 0, 0, false,
                     "%s is the engine and %s the transmission: taken the other way round",
                     base_name(ef.path), base_name(tf.path));
  }
  cengine e;
  ctrans t;
  char *json = NULL;
  dg_import_graph g = {0};
  if (ok) {
    read_engine(&c, &ef, &e);
    if (!c.failed)
      read_trans(&c, &tf, &t, engine_max_rpm(&e));
    cpath ty = Pk(P0(), "Type");
    if (!c.failed && json_object_get(ef.root, "Type") && !is_type(&ef, "Engine"))
      cnote(&c, &ef, &ty, true, "expected \"Engine\" for template %s",
            engine_templates[e.kind]);
    if (!c.failed && json_object_get(tf.root, "Type") && !is_type(&tf, "Transmission"))
      cnote(&c, &tf, &ty, true, "expected \"Transmission\" for template %s",
            trans_templates[t.kind]);
  }
  if (ok && !c.failed) {
    char title[256], about[1024];
    snprintf(title, sizeof title, "%s + %s", e.name ? e.name : base_name(ef.path),
             t.name ? t.name : base_name(tf.path));
    snprintf(about, sizeof about,
             "Chrono::Vehicle %s engine (%s) and %s (%s), imported by `drivegraph import`; "
             "vehicle: %s, final drive %g",
             engine_templates[e.kind], base_name(ef.path), trans_templates[t.kind],
             base_name(tf.path), vehicle ? base_name(vehicle) : "the default sedan",
             final_drive);
    if (!dgp_import_graph_init(&g, title, about)) {
      c.failed = true;
      dgp_error_set(err, DG_ERR_NOMEM, engine, "", "out of memory");
    } else {
      build_engine(&g, &e);
      const char *out = build_transmission(&g, &e, &t);
      dgp_import_driveline(&g, &v, out, final_drive, t.driveshaft_inertia);
      json = g.nomem ? NULL : dgp_import_dump(g.root);
      if (!json)
        dgp_error_set(err, DG_ERR_NOMEM, engine, "", "out of memory");
    }
  }
  dgp_import_graph_free(&g);
  cfree(&ef);
  cfree(&tf);
  dgp_arena_free(c.arena);
  return json;
}

dg_graph *dg_graph_import_chrono(const dg_registry *reg, const char *engine,
                                 const char *transmission, const char *vehicle, dg_error *err) {
  char *json = dg_import_chrono_to_json(engine, transmission, vehicle, NULL, NULL, err);
  if (!json)
    return NULL;
  dg_graph *g = dgp_import_load(reg, json, engine, err);
  free(json);
  return g;
}
