/* The parameter-table engine: one dg_param_def table per block class drives
 * parsing, defaults and validation, so no block touches JSON.
 *
 * Parsing a block object:
 *   1. every field gets its default (nested objects recursively, `present`
 *      flags false, arrays and tables empty);
 *   2. keys are visited in document order: known keys are type-checked,
 *      range-checked and stored, unknown keys are reported with a "did you
 *      mean" when one known key is close;
 *   3. required keys that were not given are reported.
 * Every problem is reported at the JSON pointer of the offending value, and
 * parsing carries on, so a file with five mistakes gets five messages. A
 * value with a problem is not stored: its field keeps the default. */
#include "internal.h"

#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Room for an enum's choices or a table's shape in a message; longer lists
 * are cut by snprintf, the message stays valid. */
#define HINT_LEN 192
/* The flags that bound values (the others say what a parameter does). */
#define DG_P_RANGE_FLAGS (DG_P_MIN | DG_P_MAX | DG_P_MIN_EXCL | DG_P_MAX_EXCL | DG_P_INCREASING)

/* ------------------------------------------------------------------------ */
/* Messages                                                                 */

/* A number as the user would write it: %g, or more digits when %g would hide
 * the difference ("must be <= 1 (got 1.0000001)", not "(got 1)"). */
static void fmt_num(char *buf, size_t size, double v) {
  static const char *const formats[] = {"%g", "%.10g", "%.15g", "%.17g"};
  for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++) {
    snprintf(buf, size, formats[i], v);
    if (!isfinite(v) || strtod(buf, NULL) == v)
      return;
  }
}

/* "\"open\", \"locked\"" */
static void fmt_choices(char *buf, size_t size, const char *const *choices) {
  size_t len = 0;
  buf[0] = '\0';
  for (int i = 0; choices && choices[i]; i++) {
    int w = snprintf(buf + len, size - len, "%s\"%s\"", i ? ", " : "", choices[i]);
    if (w < 0 || (size_t)w >= size - len)
      return;
    len += (size_t)w;
  }
}

/* What a kind looks like in JSON, for "expected ..." and "missing ...". */
static void fmt_kind(char *buf, size_t size, const dg_param_def *d) {
  char choices[HINT_LEN - 32];
  switch (d->kind) {
  case DG_PARAM_NUMBER:
    snprintf(buf, size, "number");
    return;
  case DG_PARAM_INTEGER:
    snprintf(buf, size, "integer");
    return;
  case DG_PARAM_BOOL:
    snprintf(buf, size, "boolean");
    return;
  case DG_PARAM_ENUM:
    fmt_choices(choices, sizeof choices, d->choices);
    snprintf(buf, size, "string (one of %s)", choices);
    return;
  case DG_PARAM_ARRAY:
    snprintf(buf, size, "array of numbers");
    return;
  case DG_PARAM_TABLE1D:
    snprintf(buf, size, "table {\"%s\": [...], \"%s\": [...]}", d->axis[0], d->axis[1]);
    return;
  case DG_PARAM_TABLE2D:
    snprintf(buf, size, "table {\"%s\": [...], \"%s\": [...], \"%s\": [[...], ...]}", d->axis[0],
             d->axis[1], d->axis[2]);
    return;
  case DG_PARAM_OBJECT:
    snprintf(buf, size, "object");
    return;
  }
  snprintf(buf, size, "value");
}

static const char *article(const char *noun) { return strchr("aeiou", noun[0]) ? "an" : "a"; }

static void type_error(dg_diag *diag, const char *path, const dg_param_def *d, const json_t *v) {
  char kind[HINT_LEN];
  if (d->kind == DG_PARAM_BOOL) {
    dgp_diag_add(diag, DG_ERR_SCHEMA, path, "expected true or false, got %s", dgp_json_type_name(v));
    return;
  }
  fmt_kind(kind, sizeof kind, d);
  dgp_diag_add(diag, DG_ERR_SCHEMA, path, "expected %s %s, got %s", article(kind), kind,
              dgp_json_type_name(v));
}

static void missing_error(dg_diag *diag, const char *path, const dg_param_def *d) {
  char kind[HINT_LEN];
  fmt_kind(kind, sizeof kind, d);
  if (d->unit && d->unit[0])
    dgp_diag_add(diag, DG_ERR_SCHEMA, path, "missing required %s (%s)", kind, d->unit);
  else
    dgp_diag_add(diag, DG_ERR_SCHEMA, path, "missing required %s", kind);
}

static const char *plural(long n, const char *one, const char *many) { return n == 1 ? one : many; }

/* ------------------------------------------------------------------------ */
/* Checks on values                                                         */

/* The first bound of `d` that v violates: its operator and value, or NULL
 * when v is within every bound. */
static const char *violated_bound(const dg_param_def *d, double v, double *bound) {
  *bound = d->min;
  if ((d->flags & DG_P_MIN_EXCL) && !(v > d->min))
    return ">";
  if ((d->flags & DG_P_MIN) && !(v >= d->min))
    return ">=";
  *bound = d->max;
  if ((d->flags & DG_P_MAX_EXCL) && !(v < d->max))
    return "<";
  if ((d->flags & DG_P_MAX) && !(v <= d->max))
    return "<=";
  return NULL;
}

/* The range flags of `d` on one value. Reports the first bound violated. */
static bool check_range(const dg_param_def *d, double v, const char *path, dg_diag *diag) {
  char got[32], bound[32];
  if (!isfinite(v)) {
    fmt_num(got, sizeof got, v);
    dgp_diag_add(diag, DG_ERR_RANGE, path, "must be a finite number (got %s)", got);
    return false;
  }
  double b;
  const char *op = violated_bound(d, v, &b);
  if (!op)
    return true;
  fmt_num(got, sizeof got, v);
  fmt_num(bound, sizeof bound, b);
  dgp_diag_add(diag, DG_ERR_RANGE, path, "must be %s %s (got %s)", op, bound, got);
  return false;
}

bool dgp_param_value_ok(const dg_param_def *d, double v) {
  double b;
  return isfinite(v) && !violated_bound(d, v, &b);
}

/* Length bounds of an array or table axis (0 = no bound). */
static bool check_length(size_t n, int min_len, int max_len, const char *path, dg_diag *diag) {
  if (min_len > 0 && n < (size_t)min_len) {
    dgp_diag_add(diag, DG_ERR_SCHEMA, path, "must have at least %d %s (got %zu)", min_len,
                plural(min_len, "element", "elements"), n);
    return false;
  }
  if (max_len > 0 && n > (size_t)max_len) {
    dgp_diag_add(diag, DG_ERR_SCHEMA, path, "must have at most %d %s (got %zu)", max_len,
                plural(max_len, "element", "elements"), n);
    return false;
  }
  if (n > INT_MAX) {
    dgp_diag_add(diag, DG_ERR_SCHEMA, path, "too many elements (got %zu)", n);
    return false;
  }
  return true;
}

/* Every pair out of order is reported at the later element. */
static void check_increasing(const double *v, size_t n, const char *path, dg_diag *diag) {
  for (size_t i = 1; i < n; i++) {
    if (v[i] > v[i - 1])
      continue;
    char p[DG_ERROR_PATH_LEN], a[32], b[32];
    dgp_pointer_index(p, sizeof p, path, i);
    fmt_num(a, sizeof a, v[i]);
    fmt_num(b, sizeof b, v[i - 1]);
    dgp_diag_add(diag, DG_ERR_RANGE, p, "must be strictly increasing (%s after %s)", a, b);
  }
}

/* Reads a JSON array that must hold only numbers into dst (NULL: check only),
 * applying the range flags of `ranged` (NULL: none) to each. Returns true
 * when every element is a number, whatever the ranges say, so that order
 * checks still make sense. */
static bool read_numbers(const json_t *arr, const dg_param_def *ranged, const char *path,
                         double *dst, dg_diag *diag) {
  bool numbers = true;
  size_t i;
  const json_t *e;
  json_array_foreach(arr, i, e) {
    char p[DG_ERROR_PATH_LEN];
    if (!json_is_number(e)) {
      dgp_pointer_index(p, sizeof p, path, i);
      dgp_diag_add(diag, DG_ERR_SCHEMA, p, "expected a number, got %s", dgp_json_type_name(e));
      numbers = false;
      continue;
    }
    double v = json_number_value(e);
    if (dst)
      dst[i] = v;
    if (ranged && (ranged->flags & DG_P_RANGE_FLAGS)) {
      dgp_pointer_index(p, sizeof p, path, i);
      check_range(ranged, v, p, diag);
    }
  }
  return numbers;
}

/* Room for n doubles in the arena; NULL for n == 0 or out of memory
 * (reported). */
static double *alloc_doubles(dg_arena *arena, size_t n, const char *path, dg_diag *diag) {
  if (n == 0)
    return NULL;
  double *p = n <= SIZE_MAX / sizeof(double) ? dgp_arena_alloc(arena, n * sizeof(double)) : NULL;
  if (!p)
    dgp_diag_add(diag, DG_ERR_NOMEM, path, "out of memory");
  return p;
}

static void store(unsigned char *base, size_t offset, const void *value, size_t size) {
  memcpy(base + offset, value, size);
}

/* ------------------------------------------------------------------------ */
/* Kinds                                                                    */

typedef struct parse_ctx {
  dg_arena *arena;
  dg_diag *diag;
} parse_ctx;

static void parse_object(const dg_param_def *defs, const json_t *obj, unsigned char *out,
                         const char *path, const char *const *skip, parse_ctx *c);

static void parse_integer(const dg_param_def *d, const json_t *v, unsigned char *out,
                          const char *path, parse_ctx *c) {
  if (!json_is_number(v)) {
    type_error(c->diag, path, d, v);
    return;
  }
  double x = json_number_value(v);
  char got[32];
  /* 3.0 is an integer written as a real; 3.5 is not. */
  if (!isfinite(x) || x != floor(x)) {
    fmt_num(got, sizeof got, x);
    dgp_diag_add(c->diag, DG_ERR_SCHEMA, path, "expected an integer, got %s", got);
    return;
  }
  if (x < INT_MIN || x > INT_MAX) {
    fmt_num(got, sizeof got, x);
    dgp_diag_add(c->diag, DG_ERR_RANGE, path, "must be between %d and %d (got %s)", INT_MIN, INT_MAX,
                got);
    return;
  }
  if (!check_range(d, x, path, c->diag))
    return;
  int i = (int)x;
  store(out, d->offset, &i, sizeof i);
}

static void parse_enum(const dg_param_def *d, const json_t *v, unsigned char *out, const char *path,
                       parse_ctx *c) {
  if (!json_is_string(v)) {
    type_error(c->diag, path, d, v);
    return;
  }
  const char *s = json_string_value(v);
  int n = 0;
  for (; d->choices && d->choices[n]; n++) {
    if (strcmp(s, d->choices[n]) == 0) {
      store(out, d->offset, &n, sizeof n);
      return;
    }
  }
  char choices[HINT_LEN];
  fmt_choices(choices, sizeof choices, d->choices);
  const char *hint = dg_suggest(s, d->choices, n);
  if (hint)
    dgp_diag_add(c->diag, DG_ERR_RANGE, path,
                "must be one of %s (got \"%.64s\"); did you mean \"%s\"?", choices, s, hint);
  else
    dgp_diag_add(c->diag, DG_ERR_RANGE, path, "must be one of %s (got \"%.64s\")", choices, s);
}

static void parse_array(const dg_param_def *d, const json_t *v, unsigned char *out,
                        const char *path, parse_ctx *c) {
  if (!json_is_array(v)) {
    type_error(c->diag, path, d, v);
    return;
  }
  int before = c->diag->count;
  size_t n = json_array_size(v);
  check_length(n, d->min_len, d->max_len, path, c->diag);
  double *vals = alloc_doubles(c->arena, n, path, c->diag);
  if (n > 0 && !vals)
    return;
  if (read_numbers(v, d, path, vals, c->diag) && (d->flags & DG_P_INCREASING))
    check_increasing(vals, n, path, c->diag);
  if (c->diag->count == before) {
    dg_array a;
    memset(&a, 0, sizeof a); /* padding too: a parsed struct has defined bytes wherever it is copied */
    a.n = (int)n;
    a.v = vals;
    store(out, d->offset, &a, sizeof a);
  }
}

/* One table axis: a number array under `key`, strictly increasing. */
typedef struct axis {
  const json_t *json; /* NULL when missing or not an array */
  size_t n;
  bool length_ok; /* an array whose length other axes can be compared with */
  double *v;
} axis;

/* Reports keys of a table object that are not its axes. */
static void check_table_keys(const dg_param_def *d, const json_t *obj, int naxes, const char *path,
                             dg_diag *diag) {
  const char *key;
  const json_t *val;
  json_object_foreach((json_t *)obj, key, val) {
    bool known = false;
    for (int i = 0; i < naxes; i++)
      known = known || strcmp(key, d->axis[i]) == 0;
    if (known)
      continue;
    char p[DG_ERROR_PATH_LEN];
    dgp_pointer_append(p, sizeof p, path, key);
    const char *hint = dg_suggest(key, d->axis, naxes);
    if (hint) {
      dgp_diag_add(diag, DG_ERR_UNKNOWN, p, "unknown key; did you mean \"%s\"?", hint);
    } else {
      char names[HINT_LEN];
      const char *axes[4] = {d->axis[0], d->axis[1], naxes > 2 ? d->axis[2] : NULL, NULL};
      fmt_choices(names, sizeof names, axes);
      dgp_diag_add(diag, DG_ERR_UNKNOWN, p, "unknown key (expected %s)", names);
    }
  }
}

/* Reads a breakpoint axis (strictly increasing, at least `min_len`). */
static axis read_axis(const dg_param_def *d, const json_t *table, const char *key, const char *path,
                      parse_ctx *c) {
  axis a = {0};
  char p[DG_ERROR_PATH_LEN];
  dgp_pointer_append(p, sizeof p, path, key);
  const json_t *j = json_object_get(table, key);
  if (!j) {
    dgp_diag_add(c->diag, DG_ERR_SCHEMA, p, "missing required array of numbers");
    return a;
  }
  if (!json_is_array(j)) {
    dgp_diag_add(c->diag, DG_ERR_SCHEMA, p, "expected an array of numbers, got %s",
                dgp_json_type_name(j));
    return a;
  }
  a.json = j;
  a.n = json_array_size(j);
  a.length_ok = check_length(a.n, d->min_len > 0 ? d->min_len : 2, d->max_len, p, c->diag);
  a.v = alloc_doubles(c->arena, a.n, p, c->diag);
  if (a.n > 0 && !a.v) {
    a.length_ok = false;
    return a;
  }
  if (read_numbers(j, NULL, p, a.v, c->diag))
    check_increasing(a.v, a.n, p, c->diag);
  return a;
}

static void parse_table1d(const dg_param_def *d, const json_t *v, unsigned char *out,
                          const char *path, parse_ctx *c) {
  if (!json_is_object(v)) {
    type_error(c->diag, path, d, v);
    return;
  }
  int before = c->diag->count;
  check_table_keys(d, v, 2, path, c->diag);
  axis x = read_axis(d, v, d->axis[0], path, c);

  char yp[DG_ERROR_PATH_LEN];
  dgp_pointer_append(yp, sizeof yp, path, d->axis[1]);
  const json_t *yj = json_object_get(v, d->axis[1]);
  double *y = NULL;
  if (!yj) {
    missing_error(c->diag, yp, &(dg_param_def){.kind = DG_PARAM_ARRAY, .unit = d->unit});
  } else if (!json_is_array(yj)) {
    dgp_diag_add(c->diag, DG_ERR_SCHEMA, yp, "expected an array of numbers, got %s",
                dgp_json_type_name(yj));
  } else {
    size_t ny = json_array_size(yj);
    /* y must match x; when x is itself too short or too long that is
     * reported once, at x. Without an x array y gets the bounds. */
    if (x.length_ok && ny != x.n)
      dgp_diag_add(c->diag, DG_ERR_SCHEMA, yp, "must have %zu %s like \"%s\" (got %zu)", x.n,
                  plural((long)x.n, "element", "elements"), d->axis[0], ny);
    else if (!x.json)
      check_length(ny, d->min_len > 0 ? d->min_len : 2, d->max_len, yp, c->diag);
    y = alloc_doubles(c->arena, ny, yp, c->diag);
    if (read_numbers(yj, d, yp, y, c->diag) && y && (d->flags & DG_P_INCREASING))
      check_increasing(y, ny, yp, c->diag);
  }
  if (c->diag->count == before) {
    dg_table1d t;
    memset(&t, 0, sizeof t); /* padding too: a parsed struct has defined bytes wherever it is copied */
    t.n = (int)x.n;
    t.x = x.v;
    t.y = y;
    store(out, d->offset, &t, sizeof t);
  }
}

static void parse_table2d(const dg_param_def *d, const json_t *v, unsigned char *out,
                          const char *path, parse_ctx *c) {
  if (!json_is_object(v)) {
    type_error(c->diag, path, d, v);
    return;
  }
  int before = c->diag->count;
  check_table_keys(d, v, 3, path, c->diag);
  axis x = read_axis(d, v, d->axis[0], path, c);
  axis y = read_axis(d, v, d->axis[1], path, c);

  char zp[DG_ERROR_PATH_LEN];
  dgp_pointer_append(zp, sizeof zp, path, d->axis[2]);
  const json_t *zj = json_object_get(v, d->axis[2]);
  double *z = NULL;
  if (!zj) {
    dgp_diag_add(c->diag, DG_ERR_SCHEMA, zp,
                "missing required array of rows, one per \"%s\" value%s%s%s", d->axis[1],
                d->unit && d->unit[0] ? " (" : "", d->unit ? d->unit : "",
                d->unit && d->unit[0] ? ")" : "");
  } else if (!json_is_array(zj)) {
    dgp_diag_add(c->diag, DG_ERR_SCHEMA, zp,
                "expected an array of rows, one per \"%s\" value, got %s", d->axis[1],
                dgp_json_type_name(zj));
  } else {
    size_t rows = json_array_size(zj);
    if (y.length_ok && rows != y.n)
      dgp_diag_add(c->diag, DG_ERR_SCHEMA, zp, "must have %zu %s like \"%s\" (got %zu)", y.n,
                  plural((long)y.n, "row", "rows"), d->axis[1], rows);
    /* Values go straight to their place in the row-major table when the
     * shape is right; otherwise rows are only checked. */
    if (x.length_ok && y.length_ok && rows == y.n && y.n > 0 && x.n <= SIZE_MAX / y.n)
      z = alloc_doubles(c->arena, x.n * y.n, zp, c->diag);
    size_t i;
    const json_t *row;
    json_array_foreach(zj, i, row) {
      char rp[DG_ERROR_PATH_LEN];
      dgp_pointer_index(rp, sizeof rp, zp, i);
      if (!json_is_array(row)) {
        dgp_diag_add(c->diag, DG_ERR_SCHEMA, rp, "expected an array of numbers, got %s",
                    dgp_json_type_name(row));
        continue;
      }
      size_t n = json_array_size(row);
      if (x.length_ok && n != x.n)
        dgp_diag_add(c->diag, DG_ERR_SCHEMA, rp, "must have %zu %s like \"%s\" (got %zu)", x.n,
                    plural((long)x.n, "value", "values"), d->axis[0], n);
      read_numbers(row, d, rp, z && n == x.n ? z + i * x.n : NULL, c->diag);
    }
  }
  if (c->diag->count == before) {
    dg_table2d t = {(int)x.n, (int)y.n, x.v, y.v, z};
    store(out, d->offset, &t, sizeof t);
  }
}

static void parse_value(const dg_param_def *d, const json_t *v, unsigned char *out,
                        const char *path, parse_ctx *c) {
  switch (d->kind) {
  case DG_PARAM_NUMBER:
    if (!json_is_number(v)) {
      type_error(c->diag, path, d, v);
    } else {
      double x = json_number_value(v);
      if (check_range(d, x, path, c->diag))
        store(out, d->offset, &x, sizeof x);
    }
    return;
  case DG_PARAM_INTEGER:
    parse_integer(d, v, out, path, c);
    return;
  case DG_PARAM_BOOL:
    if (!json_is_boolean(v)) {
      type_error(c->diag, path, d, v);
    } else {
      bool b = json_is_true(v);
      store(out, d->offset, &b, sizeof b);
    }
    return;
  case DG_PARAM_ENUM:
    parse_enum(d, v, out, path, c);
    return;
  case DG_PARAM_ARRAY:
    parse_array(d, v, out, path, c);
    return;
  case DG_PARAM_TABLE1D:
    parse_table1d(d, v, out, path, c);
    return;
  case DG_PARAM_TABLE2D:
    parse_table2d(d, v, out, path, c);
    return;
  case DG_PARAM_OBJECT:
    if (!json_is_object(v))
      type_error(c->diag, path, d, v);
    else
      parse_object(d->fields, v, out + d->offset, path, NULL, c);
    return;
  }
}

/* ------------------------------------------------------------------------ */
/* Objects                                                                  */

static const dg_param_def *find_def(const dg_param_def *defs, const char *key) {
  for (const dg_param_def *d = defs; d && d->key; d++)
    if (strcmp(d->key, key) == 0)
      return d;
  return NULL;
}

static bool in_list(const char *const *list, const char *key) {
  for (; list && *list; list++)
    if (strcmp(*list, key) == 0)
      return true;
  return false;
}

/* "unknown parameter", with the closest known or skipped key as a hint
 * (skipped keys such as "type" are valid in the object too). */
static void unknown_key(const dg_param_def *defs, const char *const *skip, const char *key,
                        const char *path, dg_diag *diag) {
  int n = 0, ns = 0;
  for (const dg_param_def *d = defs; d && d->key; d++)
    n++;
  for (const char *const *s = skip; s && *s; s++)
    ns++;
  const char **names = malloc(((size_t)n + (size_t)ns + 1) * sizeof *names);
  const char *hint = NULL;
  if (names) {
    for (int i = 0; i < n; i++)
      names[i] = defs[i].key;
    for (int i = 0; i < ns; i++)
      names[n + i] = skip[i];
    hint = dg_suggest(key, names, n + ns);
  }
  if (hint)
    dgp_diag_add(diag, DG_ERR_UNKNOWN, path, "unknown parameter; did you mean \"%s\"?", hint);
  else
    dgp_diag_add(diag, DG_ERR_UNKNOWN, path, "unknown parameter");
  free(names);
}

static void parse_object(const dg_param_def *defs, const json_t *obj, unsigned char *out,
                         const char *path, const char *const *skip, parse_ctx *c) {
  dgp_params_defaults(defs, out);
  if (obj && !json_is_object(obj)) {
    dgp_diag_add(c->diag, DG_ERR_SCHEMA, path, "expected an object, got %s", dgp_json_type_name(obj));
    return;
  }
  const char *key;
  const json_t *val;
  char p[DG_ERROR_PATH_LEN];
  if (obj) {
    json_object_foreach((json_t *)obj, key, val) {
      dgp_pointer_append(p, sizeof p, path, key);
      const dg_param_def *d = find_def(defs, key);
      if (!d) {
        if (!in_list(skip, key))
          unknown_key(defs, skip, key, p, c->diag);
        continue;
      }
      if (d->present) {
        bool yes = true;
        store(out, d->present - 1, &yes, sizeof yes);
      }
      parse_value(d, val, out, p, c);
    }
  }
  for (const dg_param_def *d = defs; d && d->key; d++) {
    if (d->required && !(obj && json_object_get(obj, d->key))) {
      dgp_pointer_append(p, sizeof p, path, d->key);
      missing_error(c->diag, p, d);
    }
  }
}

int dgp_params_parse(const dg_param_def *defs, const json_t *obj, void *out, dg_arena *arena,
                    const char *path, const char *const *skip, dg_diag *diag) {
  dg_diag local;
  if (!diag) {
    dgp_diag_init(&local, "", NULL, NULL);
    diag = &local;
  }
  parse_ctx c = {arena, diag};
  int before = diag->count;
  parse_object(defs, obj, out, path ? path : "", skip, &c);
  return diag->count - before;
}

void dgp_params_defaults(const dg_param_def *defs, void *out) {
  unsigned char *base = out;
  for (const dg_param_def *d = defs; d && d->key; d++) {
    switch (d->kind) {
    case DG_PARAM_NUMBER:
      store(base, d->offset, &d->def, sizeof d->def);
      break;
    case DG_PARAM_INTEGER:
    case DG_PARAM_ENUM: {
      int i = (int)d->def;
      store(base, d->offset, &i, sizeof i);
      break;
    }
    case DG_PARAM_BOOL: {
      bool b = d->def != 0;
      store(base, d->offset, &b, sizeof b);
      break;
    }
    case DG_PARAM_ARRAY:
      store(base, d->offset, &(dg_array){0}, sizeof(dg_array));
      break;
    case DG_PARAM_TABLE1D:
      store(base, d->offset, &(dg_table1d){0}, sizeof(dg_table1d));
      break;
    case DG_PARAM_TABLE2D:
      store(base, d->offset, &(dg_table2d){0}, sizeof(dg_table2d));
      break;
    case DG_PARAM_OBJECT:
      dgp_params_defaults(d->fields, base + d->offset);
      break;
    }
    if (d->present) {
      bool no = false;
      store(base, d->present - 1, &no, sizeof no);
    }
  }
}

/* ------------------------------------------------------------------------ */
/* Table sanity checks (at registration)                                    */

typedef struct kind_layout {
  size_t size, align;
} kind_layout;

static kind_layout layout_of(dg_param_kind k) {
  switch (k) {
  case DG_PARAM_NUMBER:
    return (kind_layout){sizeof(double), _Alignof(double)};
  case DG_PARAM_INTEGER:
  case DG_PARAM_ENUM:
    return (kind_layout){sizeof(int), _Alignof(int)};
  case DG_PARAM_BOOL:
    return (kind_layout){sizeof(bool), _Alignof(bool)};
  case DG_PARAM_ARRAY:
    return (kind_layout){sizeof(dg_array), _Alignof(dg_array)};
  case DG_PARAM_TABLE1D:
    return (kind_layout){sizeof(dg_table1d), _Alignof(dg_table1d)};
  case DG_PARAM_TABLE2D:
    return (kind_layout){sizeof(dg_table2d), _Alignof(dg_table2d)};
  case DG_PARAM_OBJECT:
    return (kind_layout){1, 1}; /* the nested struct's size is not recorded */
  }
  return (kind_layout){0, 0};
}

/* Writes the reason and returns -1. */
static int why_not(char *why, size_t n, const char *fmt, ...) DG_PRINTF(3, 4);
static int why_not(char *why, size_t n, const char *fmt, ...) {
  if (why && n > 0) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, n, fmt, ap);
    va_end(ap);
  }
  return -1;
}

static bool fits(size_t offset, size_t size, size_t limit) {
  return offset <= limit && size <= limit - offset;
}

static int check_axes(const dg_param_def *d, int naxes, const char *name, char *why, size_t n) {
  for (int i = 0; i < naxes; i++) {
    if (!d->axis[i] || !d->axis[i][0])
      return why_not(why, n, "parameter \"%s\": table needs %d axis names", name, naxes);
    for (int j = 0; j < i; j++)
      if (strcmp(d->axis[i], d->axis[j]) == 0)
        return why_not(why, n, "parameter \"%s\": axis \"%s\" named twice", name, d->axis[i]);
  }
  return 0;
}

static int check_enum(const dg_param_def *d, const char *name, char *why, size_t n) {
  if (!d->choices || !d->choices[0])
    return why_not(why, n, "parameter \"%s\": enum needs choices", name);
  int count = 0;
  for (; d->choices[count]; count++)
    for (int j = 0; j < count; j++)
      if (strcmp(d->choices[count], d->choices[j]) == 0)
        return why_not(why, n, "parameter \"%s\": choice \"%s\" listed twice", name,
                       d->choices[count]);
  if (!d->required && !(d->def >= 0 && d->def < count && d->def == floor(d->def)))
    return why_not(why, n, "parameter \"%s\": default %g is not a choice index (0..%d)", name,
                   d->def, count - 1);
  return 0;
}

/* `limit` is the size of the struct the table fills; SIZE_MAX inside nested
 * objects, whose size dg_param_def does not record. */
static int check_defs(const dg_param_def *defs, size_t limit, const char *prefix, char *why,
                      size_t n) {
  const unsigned known_flags = DG_P_RANGE_FLAGS | DG_P_DYNAMICS | DG_P_INERTIA;
  for (int i = 0; defs[i].key; i++) {
    const dg_param_def *d = &defs[i];
    char name[DG_ERROR_PATH_LEN];
    snprintf(name, sizeof name, "%s%s", prefix, d->key);
    if (!d->key[0])
      return why_not(why, n, "parameter %s%d has an empty key", prefix, i);
    for (int j = 0; j < i; j++)
      if (strcmp(d->key, defs[j].key) == 0)
        return why_not(why, n, "parameter \"%s\" declared twice", name);
    kind_layout lay = layout_of(d->kind);
    if (lay.size == 0)
      return why_not(why, n, "parameter \"%s\": unknown kind %d", name, (int)d->kind);
    if (!fits(d->offset, lay.size, limit))
      return why_not(why, n, "parameter \"%s\": offset %zu + %zu bytes exceeds params_size %zu",
                     name, d->offset, lay.size, limit);
    if (d->offset % lay.align != 0)
      return why_not(why, n, "parameter \"%s\": offset %zu is misaligned for its kind", name,
                     d->offset);
    if (d->present && !fits(d->present - 1, sizeof(bool), limit))
      return why_not(why, n, "parameter \"%s\": present flag at %zu exceeds params_size %zu", name,
                     d->present - 1, limit);
    if (d->flags & ~known_flags)
      return why_not(why, n, "parameter \"%s\": unknown flags 0x%x", name, d->flags & ~known_flags);
    bool has_min = d->flags & (DG_P_MIN | DG_P_MIN_EXCL);
    bool has_max = d->flags & (DG_P_MAX | DG_P_MAX_EXCL);
    if ((has_min && isnan(d->min)) || (has_max && isnan(d->max)) ||
        (has_min && has_max && d->min > d->max))
      return why_not(why, n, "parameter \"%s\": empty range [%g, %g]", name, d->min, d->max);
    if ((d->flags & DG_P_DYNAMICS) && (d->flags & DG_P_INERTIA))
      return why_not(why, n, "parameter \"%s\": DG_P_DYNAMICS and DG_P_INERTIA exclude each other",
                     name);
    /* an inertia is a number >= 0: dg_topo_inertia refuses the others */
    if ((d->flags & DG_P_INERTIA) &&
        (d->kind != DG_PARAM_NUMBER || !has_min || !(d->min >= 0.0)))
      return why_not(why, n, "parameter \"%s\": DG_P_INERTIA needs a number bounded below by 0 "
                     "or more", name);
    if ((d->flags & DG_P_DYNAMICS) && d->kind == DG_PARAM_OBJECT && d->fields)
      for (const dg_param_def *f = d->fields; f->key; f++)
        if (!(f->flags & DG_P_DYNAMICS))
          return why_not(why, n, "parameter \"%s\": DG_P_DYNAMICS on an object needs it on every "
                         "field (not on \"%s\")", name, f->key);
    if (d->min_len < 0 || d->max_len < 0 || (d->max_len > 0 && d->min_len > d->max_len))
      return why_not(why, n, "parameter \"%s\": bad length bounds %d..%d", name, d->min_len,
                     d->max_len);
    int rc = 0;
    if (d->kind == DG_PARAM_ENUM)
      rc = check_enum(d, name, why, n);
    else if (d->kind == DG_PARAM_TABLE1D)
      rc = check_axes(d, 2, name, why, n);
    else if (d->kind == DG_PARAM_TABLE2D)
      rc = check_axes(d, 3, name, why, n);
    else if (d->kind == DG_PARAM_OBJECT) {
      if (!d->fields)
        return why_not(why, n, "parameter \"%s\": object needs fields", name);
      char nested[DG_ERROR_PATH_LEN + 1];
      snprintf(nested, sizeof nested, "%s/", name);
      rc = check_defs(d->fields, SIZE_MAX, nested, why, n);
    }
    if (rc != 0)
      return rc;
  }
  return 0;
}

int dgp_params_check_defs(const dg_param_def *defs, size_t params_size, char *why, size_t n) {
  if (why && n > 0)
    why[0] = '\0';
  if (!defs)
    return 0;
  return check_defs(defs, params_size, "", why, n);
}
