/* The parameter-table engine (lib/params.c): defaults, every kind, every
 * error with its exact JSON pointer, code and text, and the sanity checks
 * run when a class is registered.
 *
 * The table below is a made-up block that uses every kind once; its keys
 * borrow the names of real blocks so the messages read like real ones. */
#include "internal.h"
#include "testutil.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* Parsed numbers are copied from the JSON text unchanged, so they are
 * compared exactly (ck_assert_double_eq); table lookups in between exact
 * breakpoints use INTERP, a few ulps of the values involved. */
#define INTERP 1e-12

static const char *const kind_names[] = {"open", "locked", NULL};
static const char *const mode_names[] = {"manual", "auto_rpm", NULL};
static const char *const skip_type[] = {"type", NULL};

typedef struct tshift {
  int mode;
  double upshift_rpm;
  double downshift_rpm;
  bool has_downshift;
} tshift;

typedef struct tparams {
  double inertia;
  double efficiency;
  double ratio;
  double lag;
  int teeth;
  bool locked;
  bool has_locked;
  int kind;
  dg_array ratios;
  dg_array speeds;
  dg_table1d full_load;
  dg_table2d torque_map;
  tshift shift;
  bool has_shift;
} tparams;

static const dg_param_def shift_defs[] = {
    {.key = "mode",
     .kind = DG_PARAM_ENUM,
     .offset = offsetof(tshift, mode),
     .unit = "",
     .doc = "shift policy",
     .def = 1,
     .choices = mode_names},
    {.key = "upshift_rpm",
     .kind = DG_PARAM_NUMBER,
     .offset = offsetof(tshift, upshift_rpm),
     .unit = "rpm",
     .doc = "upshift speed",
     .required = true,
     .flags = DG_P_MIN_EXCL},
    {.key = "downshift_rpm",
     .kind = DG_PARAM_NUMBER,
     .offset = offsetof(tshift, downshift_rpm),
     .unit = "rpm",
     .doc = "downshift speed",
     .def = 2000,
     .flags = DG_P_MIN_EXCL,
     .present = DG_PRESENT(tshift, has_downshift)},
    {0},
};

static const dg_param_def defs[] = {
    DG_PARAM_NUM_REQ(tparams, inertia, "inertia", "kg*m^2", DG_P_MIN_EXCL, 0, 0,
                     "rotating inertia"),
    DG_PARAM_NUM(tparams, efficiency, "efficiency", "", 0.95, DG_P_MIN_EXCL | DG_P_MAX, 0, 1,
                 "power efficiency"),
    DG_PARAM_NUM(tparams, ratio, "ratio", "", 1.0, DG_P_MIN, 0, 0, "speed ratio"),
    DG_PARAM_NUM(tparams, lag, "lag", "s", 0.0, DG_P_MIN | DG_P_MAX_EXCL, 0, 1, "time lag"),
    {.key = "teeth",
     .kind = DG_PARAM_INTEGER,
     .offset = offsetof(tparams, teeth),
     .unit = "",
     .doc = "tooth count",
     .def = 20,
     .flags = DG_P_MIN | DG_P_MAX,
     .min = 1,
     .max = 200},
    {.key = "locked",
     .kind = DG_PARAM_BOOL,
     .offset = offsetof(tparams, locked),
     .unit = "",
     .doc = "starts locked",
     .def = 1,
     .present = DG_PRESENT(tparams, has_locked)},
    {.key = "kind",
     .kind = DG_PARAM_ENUM,
     .offset = offsetof(tparams, kind),
     .unit = "",
     .doc = "differential kind",
     .def = 0,
     .choices = kind_names},
    {.key = "ratios",
     .kind = DG_PARAM_ARRAY,
     .offset = offsetof(tparams, ratios),
     .unit = "",
     .doc = "forward ratios",
     .flags = DG_P_MIN_EXCL,
     .min = 0,
     .min_len = 1,
     .max_len = 10},
    {.key = "speeds",
     .kind = DG_PARAM_ARRAY,
     .offset = offsetof(tparams, speeds),
     .unit = "m/s",
     .doc = "breakpoints",
     .flags = DG_P_INCREASING},
    {.key = "full_load",
     .kind = DG_PARAM_TABLE1D,
     .offset = offsetof(tparams, full_load),
     .unit = "N*m",
     .doc = "full-load curve",
     .flags = DG_P_MIN,
     .min = 0,
     .axis = {"rpm", "torque"}},
    {.key = "torque_map",
     .kind = DG_PARAM_TABLE2D,
     .offset = offsetof(tparams, torque_map),
     .unit = "N*m",
     .doc = "torque map",
     .flags = DG_P_MAX,
     .max = 500,
     .axis = {"rpm", "throttle", "torque"}},
    {.key = "shift",
     .kind = DG_PARAM_OBJECT,
     .offset = offsetof(tparams, shift),
     .unit = "",
     .doc = "shift policy",
     .fields = shift_defs,
     .present = DG_PRESENT(tparams, has_shift)},
    {0},
};

/* ---- harness ------------------------------------------------------------- */

#define MAX_SEEN 32

typedef struct seen {
  int n;
  dg_error e[MAX_SEEN];
} seen;

static void collect(const dg_error *err, void *user) {
  seen *s = user;
  if (s->n < MAX_SEEN)
    s->e[s->n++] = *err;
}

typedef struct run {
  dg_arena *arena;
  tparams p;
  seen seen;
  dg_diag diag;
  int problems;
} run;

/* Parses `json` against `table` at `path`; every problem is collected. The
 * JSON is freed before returning, so stored arrays must live in the arena. */
static void parse_with(run *r, const dg_param_def *table, const char *json, const char *path) {
  json_error_t je;
  json_t *root = json_loads(json, JSON_DECODE_ANY, &je);
  ck_assert_msg(root != NULL, "test JSON does not parse: %s", je.text);
  memset(r, 0, sizeof *r);
  r->arena = dgp_arena_new();
  ck_assert_ptr_nonnull(r->arena);
  dgp_diag_init(&r->diag, "engine.json", collect, &r->seen);
  r->problems = dgp_params_parse(table, root, &r->p, r->arena, path, skip_type, &r->diag);
  json_decref(root);
  ck_assert_int_eq(r->problems, r->seen.n);
  ck_assert_int_eq(r->problems, r->diag.count);
}

static void parse(run *r, const char *json) { parse_with(r, defs, json, "/blocks/engine"); }

static void done(run *r) { dgp_arena_free(r->arena); }

static void assert_problem(const run *r, int i, const char *path, int code, const char *text) {
  ck_assert_msg(i < r->seen.n, "expected problem %d (%s: %s), got only %d", i, path, text,
                r->seen.n);
  const dg_error *e = &r->seen.e[i];
  ck_assert_str_eq(e->path, path);
  ck_assert_str_eq(e->text, text);
  ck_assert_msg(e->code == code, "%s: code %s, expected %s", path, dg_code_name(e->code),
                dg_code_name(code));
  ck_assert_str_eq(e->file, "engine.json");
  ck_assert_int_eq(e->line, 0);
}

/* ---- defaults and values ------------------------------------------------- */

static void assert_defaults(const tparams *p) {
  ck_assert_double_eq(p->efficiency, 0.95);
  ck_assert_double_eq(p->ratio, 1.0);
  ck_assert_double_eq(p->lag, 0.0);
  ck_assert_int_eq(p->teeth, 20);
  ck_assert(p->locked);
  ck_assert(!p->has_locked);
  ck_assert_int_eq(p->kind, 0);
  ck_assert_int_eq(p->ratios.n, 0);
  ck_assert_int_eq(p->speeds.n, 0);
  ck_assert_int_eq(p->full_load.n, 0);
  ck_assert_int_eq(p->torque_map.nx, 0);
  ck_assert_int_eq(p->torque_map.ny, 0);
  ck_assert(!p->has_shift);
  ck_assert_int_eq(p->shift.mode, 1);
  ck_assert_double_eq(p->shift.downshift_rpm, 2000.0);
  ck_assert(!p->shift.has_downshift);
}

START_TEST(defaults_when_absent) {
  run r;
  parse(&r, "{\"type\": \"engine\", \"inertia\": 0.2}");
  ck_assert_int_eq(r.problems, 0);
  ck_assert_double_eq(r.p.inertia, 0.2);
  assert_defaults(&r.p);
  done(&r);
}
END_TEST

START_TEST(defaults_without_json) {
  tparams p;
  memset(&p, 0xA5, sizeof p); /* garbage everywhere, presence flags included */
  dgp_params_defaults(defs, &p);
  assert_defaults(&p);
}
END_TEST

START_TEST(null_object_is_empty) {
  seen s = {0};
  dg_diag d;
  dgp_diag_init(&d, "engine.json", collect, &s);
  tparams p;
  dg_arena *a = dgp_arena_new();
  ck_assert_int_eq(dgp_params_parse(defs, NULL, &p, a, "/blocks/engine", NULL, &d), 1);
  ck_assert_str_eq(s.e[0].path, "/blocks/engine/inertia");
  assert_defaults(&p);
  /* Without a collector the count is still returned. */
  ck_assert_int_eq(dgp_params_parse(defs, NULL, &p, a, "/blocks/engine", NULL, NULL), 1);
  dgp_arena_free(a);
}
END_TEST

START_TEST(values_of_every_kind) {
  run r;
  parse(&r, "{\"type\": \"engine\", \"inertia\": 0.25, \"efficiency\": 1, \"ratio\": 0,"
            " \"lag\": 0.5, \"teeth\": 3.0, \"locked\": false, \"kind\": \"locked\","
            " \"ratios\": [3.4, 2.05, 1.4], \"speeds\": [-1, 0, 2.5],"
            " \"full_load\": {\"torque\": [100, 300], \"rpm\": [1000, 3000]},"
            " \"torque_map\": {\"rpm\": [1000, 2000, 3000], \"throttle\": [0, 1],"
            "                  \"torque\": [[-10, -20, -30], [100, 200, 150]]},"
            " \"shift\": {\"mode\": \"manual\", \"upshift_rpm\": 6000, \"downshift_rpm\": 1500}}");
  ck_assert_int_eq(r.problems, 0);
  const tparams *p = &r.p;
  ck_assert_double_eq(p->inertia, 0.25);
  ck_assert_double_eq(p->efficiency, 1.0);
  ck_assert_double_eq(p->ratio, 0.0);
  ck_assert_double_eq(p->lag, 0.5);
  ck_assert_int_eq(p->teeth, 3);
  ck_assert(!p->locked);
  ck_assert(p->has_locked);
  ck_assert_int_eq(p->kind, 1);

  ck_assert_int_eq(p->ratios.n, 3);
  ck_assert_double_eq(p->ratios.v[0], 3.4);
  ck_assert_double_eq(p->ratios.v[1], 2.05);
  ck_assert_double_eq(p->ratios.v[2], 1.4);
  ck_assert_int_eq(p->speeds.n, 3);
  ck_assert_double_eq(p->speeds.v[0], -1.0);
  ck_assert_double_eq(p->speeds.v[2], 2.5);

  ck_assert_int_eq(p->full_load.n, 2);
  ck_assert_double_eq(p->full_load.x[0], 1000);
  ck_assert_double_eq(p->full_load.x[1], 3000);
  ck_assert_double_eq(p->full_load.y[0], 100);
  ck_assert_double_eq(p->full_load.y[1], 300);
  ck_assert_double_eq_tol(dg_table1d_eval(&p->full_load, 2000), 200, INTERP);

  /* Row-major: z[iy * nx + ix]. */
  const dg_table2d *m = &p->torque_map;
  ck_assert_int_eq(m->nx, 3);
  ck_assert_int_eq(m->ny, 2);
  ck_assert_double_eq(m->x[2], 3000);
  ck_assert_double_eq(m->y[1], 1);
  static const double z[] = {-10, -20, -30, 100, 200, 150};
  for (int i = 0; i < 6; i++)
    ck_assert_double_eq(m->z[i], z[i]);
  ck_assert_double_eq(dg_table2d_eval(m, 2000, 1), 200);

  ck_assert(p->has_shift);
  ck_assert_int_eq(p->shift.mode, 0);
  ck_assert_double_eq(p->shift.upshift_rpm, 6000);
  ck_assert_double_eq(p->shift.downshift_rpm, 1500);
  ck_assert(p->shift.has_downshift);
  done(&r);
}
END_TEST

START_TEST(nested_defaults_when_given) {
  run r;
  parse(&r, "{\"inertia\": 1, \"shift\": {\"upshift_rpm\": 5000}}");
  ck_assert_int_eq(r.problems, 0);
  ck_assert(r.p.has_shift);
  ck_assert_int_eq(r.p.shift.mode, 1);
  ck_assert_double_eq(r.p.shift.downshift_rpm, 2000);
  ck_assert(!r.p.shift.has_downshift);
  done(&r);
}
END_TEST

START_TEST(bad_value_keeps_default) {
  run r;
  parse(&r, "{\"inertia\": 1, \"efficiency\": 2, \"ratios\": [1, -1], \"locked\": 0}");
  ck_assert_int_eq(r.problems, 3);
  ck_assert_double_eq(r.p.efficiency, 0.95);
  ck_assert_int_eq(r.p.ratios.n, 0);
  ck_assert(r.p.locked);
  ck_assert(r.p.has_locked); /* the key was given, even if wrong */
  done(&r);
}
END_TEST

/* ---- one problem per case ------------------------------------------------ */

static const struct {
  const char *json;
  const char *path;
  int code;
  const char *text;
} one[] = {
    /* required, types and ranges of scalars */
    {"{\"type\": \"engine\"}", "/blocks/engine/inertia", DG_ERR_SCHEMA,
     "missing required number (kg*m^2)"},
    {"{\"inertia\": \"heavy\"}", "/blocks/engine/inertia", DG_ERR_SCHEMA,
     "expected a number, got string"},
    {"{\"inertia\": -5}", "/blocks/engine/inertia", DG_ERR_RANGE, "must be > 0 (got -5)"},
    {"{\"inertia\": 0}", "/blocks/engine/inertia", DG_ERR_RANGE, "must be > 0 (got 0)"},
    {"{\"inertia\": 1, \"ratio\": -1}", "/blocks/engine/ratio", DG_ERR_RANGE,
     "must be >= 0 (got -1)"},
    {"{\"inertia\": 1, \"efficiency\": 1.5}", "/blocks/engine/efficiency", DG_ERR_RANGE,
     "must be <= 1 (got 1.5)"},
    {"{\"inertia\": 1, \"efficiency\": 1.0000001}", "/blocks/engine/efficiency", DG_ERR_RANGE,
     "must be <= 1 (got 1.0000001)"},
    {"{\"inertia\": 1, \"lag\": 1}", "/blocks/engine/lag", DG_ERR_RANGE, "must be < 1 (got 1)"},
    {"{\"inertia\": 1, \"lag\": [0.1]}", "/blocks/engine/lag", DG_ERR_SCHEMA,
     "expected a number, got array"},
    {"{\"inertia\": 1, \"teeth\": 3.5}", "/blocks/engine/teeth", DG_ERR_SCHEMA,
     "expected an integer, got 3.5"},
    {"{\"inertia\": 1, \"teeth\": \"3\"}", "/blocks/engine/teeth", DG_ERR_SCHEMA,
     "expected an integer, got string"},
    {"{\"inertia\": 1, \"teeth\": 0}", "/blocks/engine/teeth", DG_ERR_RANGE,
     "must be >= 1 (got 0)"},
    {"{\"inertia\": 1, \"teeth\": 201}", "/blocks/engine/teeth", DG_ERR_RANGE,
     "must be <= 200 (got 201)"},
    {"{\"inertia\": 1, \"teeth\": 1e10}", "/blocks/engine/teeth", DG_ERR_RANGE,
     "must be between -2147483648 and 2147483647 (got 1e+10)"},
    {"{\"inertia\": 1, \"locked\": 1}", "/blocks/engine/locked", DG_ERR_SCHEMA,
     "expected true or false, got number"},
    {"{\"inertia\": 1, \"locked\": null}", "/blocks/engine/locked", DG_ERR_SCHEMA,
     "expected true or false, got null"},
    /* enums */
    {"{\"inertia\": 1, \"kind\": \"opne\"}", "/blocks/engine/kind", DG_ERR_RANGE,
     "must be one of \"open\", \"locked\" (got \"opne\"); did you mean \"open\"?"},
    {"{\"inertia\": 1, \"kind\": \"Locked\"}", "/blocks/engine/kind", DG_ERR_RANGE,
     "must be one of \"open\", \"locked\" (got \"Locked\"); did you mean \"locked\"?"},
    {"{\"inertia\": 1, \"kind\": \"banana\"}", "/blocks/engine/kind", DG_ERR_RANGE,
     "must be one of \"open\", \"locked\" (got \"banana\")"},
    {"{\"inertia\": 1, \"kind\": 1}", "/blocks/engine/kind", DG_ERR_SCHEMA,
     "expected a string (one of \"open\", \"locked\"), got number"},
    /* arrays */
    {"{\"inertia\": 1, \"ratios\": 3.4}", "/blocks/engine/ratios", DG_ERR_SCHEMA,
     "expected an array of numbers, got number"},
    {"{\"inertia\": 1, \"ratios\": []}", "/blocks/engine/ratios", DG_ERR_SCHEMA,
     "must have at least 1 element (got 0)"},
    {"{\"inertia\": 1, \"ratios\": [1,2,3,4,5,6,7,8,9,10,11,12]}", "/blocks/engine/ratios",
     DG_ERR_SCHEMA, "must have at most 10 elements (got 12)"},
    {"{\"inertia\": 1, \"ratios\": [3.4, \"2.05\", 1.4]}", "/blocks/engine/ratios/1", DG_ERR_SCHEMA,
     "expected a number, got string"},
    {"{\"inertia\": 1, \"ratios\": [3.4, -2.05]}", "/blocks/engine/ratios/1", DG_ERR_RANGE,
     "must be > 0 (got -2.05)"},
    {"{\"inertia\": 1, \"speeds\": [1.0, 2.05, 1.4]}", "/blocks/engine/speeds/2", DG_ERR_RANGE,
     "must be strictly increasing (1.4 after 2.05)"},
    {"{\"inertia\": 1, \"speeds\": [1, 1]}", "/blocks/engine/speeds/1", DG_ERR_RANGE,
     "must be strictly increasing (1 after 1)"},
    /* 1-D tables */
    {"{\"inertia\": 1, \"full_load\": [1, 2]}", "/blocks/engine/full_load", DG_ERR_SCHEMA,
     "expected a table {\"rpm\": [...], \"torque\": [...]}, got array"},
    {"{\"inertia\": 1, \"full_load\": {\"rpm\": [1000, 2000]}}", "/blocks/engine/full_load/torque",
     DG_ERR_SCHEMA, "missing required array of numbers (N*m)"},
    {"{\"inertia\": 1, \"full_load\": {\"torque\": [1, 2]}}", "/blocks/engine/full_load/rpm",
     DG_ERR_SCHEMA, "missing required array of numbers"},
    {"{\"inertia\": 1, \"full_load\": {\"rpm\": [1, 2], \"torque\": [1, 2], \"rmp\": [1]}}",
     "/blocks/engine/full_load/rmp", DG_ERR_UNKNOWN, "unknown key; did you mean \"rpm\"?"},
    {"{\"inertia\": 1, \"full_load\": {\"rpm\": [1, 2], \"torque\": [1, 2], \"colour\": 1}}",
     "/blocks/engine/full_load/colour", DG_ERR_UNKNOWN,
     "unknown key (expected \"rpm\", \"torque\")"},
    {"{\"inertia\": 1, \"full_load\": {\"rpm\": [1, 2, 3, 4, 5], \"torque\": [1, 2, 3, 4]}}",
     "/blocks/engine/full_load/torque", DG_ERR_SCHEMA, "must have 5 elements like \"rpm\" (got 4)"},
    {"{\"inertia\": 1, \"full_load\": {\"rpm\": [1000, 3000, 2000], \"torque\": [1, 2, 3]}}",
     "/blocks/engine/full_load/rpm/2", DG_ERR_RANGE,
     "must be strictly increasing (2000 after 3000)"},
    {"{\"inertia\": 1, \"full_load\": {\"rpm\": [1000, 3000], \"torque\": [5, -10]}}",
     "/blocks/engine/full_load/torque/1", DG_ERR_RANGE, "must be >= 0 (got -10)"},
    {"{\"inertia\": 1, \"full_load\": {\"rpm\": [1000], \"torque\": [5]}}",
     "/blocks/engine/full_load/rpm", DG_ERR_SCHEMA, "must have at least 2 elements (got 1)"},
    {"{\"inertia\": 1, \"full_load\": {\"rpm\": [1000, \"x\"], \"torque\": [5, 6]}}",
     "/blocks/engine/full_load/rpm/1", DG_ERR_SCHEMA, "expected a number, got string"},
    {"{\"inertia\": 1, \"full_load\": {\"rpm\": {}, \"torque\": [5, 6]}}",
     "/blocks/engine/full_load/rpm", DG_ERR_SCHEMA, "expected an array of numbers, got object"},
    /* 2-D tables */
    {"{\"inertia\": 1, \"torque_map\": 7}", "/blocks/engine/torque_map", DG_ERR_SCHEMA,
     "expected a table {\"rpm\": [...], \"throttle\": [...], \"torque\": [[...], ...]}, got "
     "number"},
    {"{\"inertia\": 1, \"torque_map\": {\"rpm\": [1, 2, 3, 4, 5], \"throttle\": [0, 0.5, 1],"
     " \"torque\": [[1, 2, 3, 4, 5], [1, 2, 3, 4], [1, 2, 3, 4, 5]]}}",
     "/blocks/engine/torque_map/torque/1", DG_ERR_SCHEMA,
     "must have 5 values like \"rpm\" (got 4)"},
    {"{\"inertia\": 1, \"torque_map\": {\"rpm\": [1, 2], \"throttle\": [0, 0.5, 1],"
     " \"torque\": [[1, 2], [3, 4]]}}",
     "/blocks/engine/torque_map/torque", DG_ERR_SCHEMA,
     "must have 3 rows like \"throttle\" (got 2)"},
    {"{\"inertia\": 1, \"torque_map\": {\"rpm\": [1, 2], \"throttle\": [0, 1], \"torque\": 5}}",
     "/blocks/engine/torque_map/torque", DG_ERR_SCHEMA,
     "expected an array of rows, one per \"throttle\" value, got number"},
    {"{\"inertia\": 1, \"torque_map\": {\"rpm\": [1, 2], \"throttle\": [0, 1]}}",
     "/blocks/engine/torque_map/torque", DG_ERR_SCHEMA,
     "missing required array of rows, one per \"throttle\" value (N*m)"},
    {"{\"inertia\": 1, \"torque_map\": {\"rpm\": [1, 2], \"throttle\": [0, 1],"
     " \"torque\": [[1, 2], 3]}}",
     "/blocks/engine/torque_map/torque/1", DG_ERR_SCHEMA,
     "expected an array of numbers, got number"},
    {"{\"inertia\": 1, \"torque_map\": {\"rpm\": [1, 2], \"throttle\": [0, 1],"
     " \"torque\": [[1, 2], [3, \"4\"]]}}",
     "/blocks/engine/torque_map/torque/1/1", DG_ERR_SCHEMA, "expected a number, got string"},
    {"{\"inertia\": 1, \"torque_map\": {\"rpm\": [1, 2], \"throttle\": [0, 1],"
     " \"torque\": [[1, 2], [3, 600]]}}",
     "/blocks/engine/torque_map/torque/1/1", DG_ERR_RANGE, "must be <= 500 (got 600)"},
    {"{\"inertia\": 1, \"torque_map\": {\"rpm\": [1, 2], \"throttle\": [0.5, 0.5],"
     " \"torque\": [[1, 2], [3, 4]]}}",
     "/blocks/engine/torque_map/throttle/1", DG_ERR_RANGE,
     "must be strictly increasing (0.5 after 0.5)"},
    {"{\"inertia\": 1, \"torque_map\": {\"rpm\": [1, 2], \"throttle\": [0, 1],"
     " \"torque\": [[1, 2], [3, 4]], \"rpms\": []}}",
     "/blocks/engine/torque_map/rpms", DG_ERR_UNKNOWN, "unknown key; did you mean \"rpm\"?"},
    /* nested objects */
    {"{\"inertia\": 1, \"shift\": 5}", "/blocks/engine/shift", DG_ERR_SCHEMA,
     "expected an object, got number"},
    {"{\"inertia\": 1, \"shift\": {}}", "/blocks/engine/shift/upshift_rpm", DG_ERR_SCHEMA,
     "missing required number (rpm)"},
    {"{\"inertia\": 1, \"shift\": {\"mode\": \"auto_rmp\", \"upshift_rpm\": 6000}}",
     "/blocks/engine/shift/mode", DG_ERR_RANGE,
     "must be one of \"manual\", \"auto_rpm\" (got \"auto_rmp\"); did you mean \"auto_rpm\"?"},
    {"{\"inertia\": 1, \"shift\": {\"upshift_rpm\": -1}}", "/blocks/engine/shift/upshift_rpm",
     DG_ERR_RANGE, "must be > 0 (got -1)"},
    {"{\"inertia\": 1, \"shift\": {\"upshift_rpm\": 6000, \"upshif_rpm\": 5000}}",
     "/blocks/engine/shift/upshif_rpm", DG_ERR_UNKNOWN,
     "unknown parameter; did you mean \"upshift_rpm\"?"},
    /* unknown keys */
    {"{\"inertia\": 1, \"ratoi\": 3}", "/blocks/engine/ratoi", DG_ERR_UNKNOWN,
     "unknown parameter; did you mean \"ratio\"?"},
    {"{\"inertia\": 1, \"inertai\": 3}", "/blocks/engine/inertai", DG_ERR_UNKNOWN,
     "unknown parameter; did you mean \"inertia\"?"},
    {"{\"inertia\": 1, \"efficency\": 0.9}", "/blocks/engine/efficency", DG_ERR_UNKNOWN,
     "unknown parameter; did you mean \"efficiency\"?"},
    {"{\"inertia\": 1, \"tpye\": \"engine\"}", "/blocks/engine/tpye", DG_ERR_UNKNOWN,
     "unknown parameter; did you mean \"type\"?"},
    {"{\"inertia\": 1, \"colour\": \"red\"}", "/blocks/engine/colour", DG_ERR_UNKNOWN,
     "unknown parameter"},
    {"{\"inertia\": 1, \"a/b~c\": 0}", "/blocks/engine/a~1b~0c", DG_ERR_UNKNOWN,
     "unknown parameter"},
    /* not an object at all */
    {"[1, 2]", "/blocks/engine", DG_ERR_SCHEMA, "expected an object, got array"},
    {"\"engine\"", "/blocks/engine", DG_ERR_SCHEMA, "expected an object, got string"},
};

START_TEST(one_problem) {
  run r;
  parse(&r, one[_i].json);
  ck_assert_msg(r.problems == 1, "%s: %d problems, first: %s: %s", one[_i].json, r.problems,
                r.seen.e[0].path, r.seen.e[0].text);
  assert_problem(&r, 0, one[_i].path, one[_i].code, one[_i].text);
  done(&r);
}
END_TEST

/* ---- several problems ---------------------------------------------------- */

START_TEST(all_problems_in_document_order) {
  run r;
  parse(&r, "{\"efficency\": 1, \"kind\": \"x\", \"ratios\": [0, \"a\"],"
            " \"torque_map\": {\"rpm\": [1, 2, 3], \"throttle\": [0, 1],"
            "                 \"torque\": [[1, 2], [1, 2, 3, 4]]}}");
  ck_assert_int_eq(r.problems, 7);
  assert_problem(&r, 0, "/blocks/engine/efficency", DG_ERR_UNKNOWN,
                 "unknown parameter; did you mean \"efficiency\"?");
  assert_problem(&r, 1, "/blocks/engine/kind", DG_ERR_RANGE,
                 "must be one of \"open\", \"locked\" (got \"x\")");
  assert_problem(&r, 2, "/blocks/engine/ratios/0", DG_ERR_RANGE, "must be > 0 (got 0)");
  assert_problem(&r, 3, "/blocks/engine/ratios/1", DG_ERR_SCHEMA, "expected a number, got string");
  assert_problem(&r, 4, "/blocks/engine/torque_map/torque/0", DG_ERR_SCHEMA,
                 "must have 3 values like \"rpm\" (got 2)");
  assert_problem(&r, 5, "/blocks/engine/torque_map/torque/1", DG_ERR_SCHEMA,
                 "must have 3 values like \"rpm\" (got 4)");
  /* Missing keys come last, after the keys that were given. */
  assert_problem(&r, 6, "/blocks/engine/inertia", DG_ERR_SCHEMA,
                 "missing required number (kg*m^2)");
  /* The collector keeps the first one. */
  ck_assert_str_eq(r.diag.first.path, "/blocks/engine/efficency");
  ck_assert_int_eq(r.p.torque_map.nx, 0);
  done(&r);
}
END_TEST

START_TEST(count_is_relative_to_collector) {
  /* A graph loader shares one collector between blocks: the return value
   * counts this object's problems only. */
  run r;
  parse(&r, "{\"inertia\": -1}");
  tparams p;
  int n = dgp_params_parse(defs, NULL, &p, r.arena, "/blocks/other", NULL, &r.diag);
  ck_assert_int_eq(n, 1);
  ck_assert_int_eq(r.diag.count, 2);
  ck_assert_str_eq(r.seen.e[1].path, "/blocks/other/inertia");
  done(&r);
}
END_TEST

START_TEST(table_one_point_reported_once) {
  /* x too short and y as long as x: one message, at x. */
  run r;
  parse(&r, "{\"inertia\": 1, \"full_load\": {\"rpm\": [1000], \"torque\": [5, 6]}}");
  ck_assert_int_eq(r.problems, 1);
  assert_problem(&r, 0, "/blocks/engine/full_load/rpm", DG_ERR_SCHEMA,
                 "must have at least 2 elements (got 1)");
  done(&r);
}
END_TEST

START_TEST(table_without_x_checks_y_length) {
  run r;
  parse(&r, "{\"inertia\": 1, \"full_load\": {\"rpm\": 3, \"torque\": [5]}}");
  ck_assert_int_eq(r.problems, 2);
  assert_problem(&r, 0, "/blocks/engine/full_load/rpm", DG_ERR_SCHEMA,
                 "expected an array of numbers, got number");
  assert_problem(&r, 1, "/blocks/engine/full_load/torque", DG_ERR_SCHEMA,
                 "must have at least 2 elements (got 1)");
  done(&r);
}
END_TEST

/* ---- every kind required ------------------------------------------------- */

typedef struct treq {
  double n;
  int i;
  bool b;
  int e;
  dg_array a;
  dg_table1d t1;
  dg_table2d t2;
  tshift o;
} treq;

static const dg_param_def req_defs[] = {
    {.key = "inertia",
     .kind = DG_PARAM_NUMBER,
     .offset = offsetof(treq, n),
     .unit = "kg*m^2",
     .required = true},
    {.key = "teeth",
     .kind = DG_PARAM_INTEGER,
     .offset = offsetof(treq, i),
     .unit = "",
     .required = true},
    {.key = "locked", .kind = DG_PARAM_BOOL, .offset = offsetof(treq, b), .required = true},
    {.key = "kind",
     .kind = DG_PARAM_ENUM,
     .offset = offsetof(treq, e),
     .required = true,
     .choices = kind_names},
    {.key = "radii",
     .kind = DG_PARAM_ARRAY,
     .offset = offsetof(treq, a),
     .unit = "m",
     .required = true},
    {.key = "full_load",
     .kind = DG_PARAM_TABLE1D,
     .offset = offsetof(treq, t1),
     .unit = "N*m",
     .required = true,
     .axis = {"rpm", "torque"}},
    {.key = "torque_map",
     .kind = DG_PARAM_TABLE2D,
     .offset = offsetof(treq, t2),
     .unit = "N*m",
     .required = true,
     .axis = {"rpm", "throttle", "torque"}},
    {.key = "shift",
     .kind = DG_PARAM_OBJECT,
     .offset = offsetof(treq, o),
     .required = true,
     .fields = shift_defs},
    {0},
};

START_TEST(missing_required_of_every_kind) {
  run r;
  memset(&r, 0, sizeof r);
  treq q;
  seen s = {0};
  dg_diag d;
  dgp_diag_init(&d, "engine.json", collect, &s);
  json_t *empty = json_object();
  r.arena = dgp_arena_new();
  ck_assert_int_eq(dgp_params_parse(req_defs, empty, &q, r.arena, "", NULL, &d), 8);
  json_decref(empty);
  r.seen = s;
  assert_problem(&r, 0, "/inertia", DG_ERR_SCHEMA, "missing required number (kg*m^2)");
  assert_problem(&r, 1, "/teeth", DG_ERR_SCHEMA, "missing required integer");
  assert_problem(&r, 2, "/locked", DG_ERR_SCHEMA, "missing required boolean");
  assert_problem(&r, 3, "/kind", DG_ERR_SCHEMA,
                 "missing required string (one of \"open\", \"locked\")");
  assert_problem(&r, 4, "/radii", DG_ERR_SCHEMA, "missing required array of numbers (m)");
  assert_problem(&r, 5, "/full_load", DG_ERR_SCHEMA,
                 "missing required table {\"rpm\": [...], \"torque\": [...]} (N*m)");
  assert_problem(&r, 6, "/torque_map", DG_ERR_SCHEMA,
                 "missing required table {\"rpm\": [...], \"throttle\": [...], "
                 "\"torque\": [[...], ...]} (N*m)");
  assert_problem(&r, 7, "/shift", DG_ERR_SCHEMA, "missing required object");
  dgp_arena_free(r.arena);
}
END_TEST

START_TEST(arrays_outlive_the_json) {
  /* Values are copied into the arena: many tables, JSON freed at once. */
  run r;
  parse(&r, "{\"inertia\": 1, \"ratios\": [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]}");
  ck_assert_int_eq(r.p.ratios.n, 10);
  for (int i = 0; i < 10; i++)
    ck_assert_double_eq(r.p.ratios.v[i], i + 1);
  ck_assert_int_eq((int)((uintptr_t)r.p.ratios.v % _Alignof(double)), 0);
  done(&r);
}
END_TEST

/* ---- table sanity checks ------------------------------------------------- */

START_TEST(check_defs_accepts_good_tables) {
  char why[256] = "unchanged";
  ck_assert_int_eq(dgp_params_check_defs(defs, sizeof(tparams), why, sizeof why), 0);
  ck_assert_int_eq(dgp_params_check_defs(req_defs, sizeof(treq), why, sizeof why), 0);
  ck_assert_int_eq(dgp_params_check_defs(NULL, 0, why, sizeof why), 0);
  ck_assert_int_eq(dgp_params_check_defs((const dg_param_def[]){{0}}, 0, NULL, 0), 0);
}
END_TEST

typedef struct tbad {
  double d;
  int i;
  bool b;
  dg_table1d t;
  tshift o;
} tbad;

static const char *const no_choices[] = {NULL};
static const char *const twice[] = {"a", "b", "a", NULL};
static const dg_param_def bad_nested[] = {
    {.key = "mode", .kind = DG_PARAM_ENUM, .offset = offsetof(tshift, mode)},
    {0},
};

static const struct {
  dg_param_def defs[3];
  size_t size;
  const char *why;
} bad_tables[] = {
    {{{.key = "d", .kind = DG_PARAM_NUMBER, .offset = offsetof(tbad, d)},
      {.key = "d", .kind = DG_PARAM_NUMBER, .offset = offsetof(tbad, d)}},
     sizeof(tbad),
     "parameter \"d\" declared twice"},
    {{{.key = "", .kind = DG_PARAM_NUMBER}}, sizeof(tbad), "parameter 0 has an empty key"},
    {{{.key = "t", .kind = DG_PARAM_TABLE1D, .offset = offsetof(tbad, t), .axis = {"rpm", "rpm"}}},
     sizeof(tbad),
     "parameter \"t\": axis \"rpm\" named twice"},
    {{{.key = "t", .kind = DG_PARAM_TABLE1D, .offset = offsetof(tbad, t), .axis = {"rpm"}}},
     sizeof(tbad),
     "parameter \"t\": table needs 2 axis names"},
    {{{.key = "t", .kind = DG_PARAM_TABLE2D, .offset = 0, .axis = {"a", "b"}}},
     1024,
     "parameter \"t\": table needs 3 axis names"},
    {{{.key = "d", .kind = DG_PARAM_NUMBER, .offset = sizeof(tbad) - 4}},
     sizeof(tbad),
     NULL /* offset check, message depends on the layout */},
    {{{.key = "d", .kind = DG_PARAM_NUMBER, .offset = 4}},
     1024,
     "parameter \"d\": offset 4 is misaligned for its kind"},
    {{{.key = "b", .kind = DG_PARAM_BOOL, .offset = 0, .present = 4096}},
     64,
     "parameter \"b\": present flag at 4095 exceeds params_size 64"},
    {{{.key = "e", .kind = DG_PARAM_ENUM, .offset = 0}}, 64, "parameter \"e\": enum needs choices"},
    {{{.key = "e", .kind = DG_PARAM_ENUM, .offset = 0, .choices = no_choices}},
     64,
     "parameter \"e\": enum needs choices"},
    {{{.key = "e", .kind = DG_PARAM_ENUM, .offset = 0, .choices = twice}},
     64,
     "parameter \"e\": choice \"a\" listed twice"},
    {{{.key = "e", .kind = DG_PARAM_ENUM, .offset = 0, .choices = kind_names, .def = 2}},
     64,
     "parameter \"e\": default 2 is not a choice index (0..1)"},
    {{{.key = "o", .kind = DG_PARAM_OBJECT, .offset = 0}},
     64,
     "parameter \"o\": object needs fields"},
    {{{.key = "o", .kind = DG_PARAM_OBJECT, .offset = 0, .fields = bad_nested}},
     64,
     "parameter \"o/mode\": enum needs choices"},
    {{{.key = "d", .kind = DG_PARAM_NUMBER, .flags = DG_P_MIN | DG_P_MAX, .min = 2, .max = 1}},
     64,
     "parameter \"d\": empty range [2, 1]"},
    {{{.key = "d", .kind = DG_PARAM_NUMBER, .flags = 1u << 9}},
     64,
     "parameter \"d\": unknown flags 0x200"},
    {{{.key = "d", .kind = DG_PARAM_NUMBER, .flags = DG_P_MIN | DG_P_DYNAMICS | DG_P_INERTIA}},
     64,
     "parameter \"d\": DG_P_DYNAMICS and DG_P_INERTIA exclude each other"},
    {{{.key = "d", .kind = DG_PARAM_NUMBER, .flags = DG_P_INERTIA}},
     64,
     "parameter \"d\": DG_P_INERTIA needs a number bounded below by 0 or more"},
    {{{.key = "d", .kind = DG_PARAM_NUMBER, .flags = DG_P_INERTIA | DG_P_MIN, .min = -1}},
     64,
     "parameter \"d\": DG_P_INERTIA needs a number bounded below by 0 or more"},
    {{{.key = "t", .kind = DG_PARAM_TABLE1D, .axis = {"a", "b"}, .flags = DG_P_INERTIA | DG_P_MIN}},
     64,
     "parameter \"t\": DG_P_INERTIA needs a number bounded below by 0 or more"},
    {{{.key = "o", .kind = DG_PARAM_OBJECT, .fields = shift_defs, .flags = DG_P_DYNAMICS}},
     64,
     "parameter \"o\": DG_P_DYNAMICS on an object needs it on every field (not on \"mode\")"},
    {{{.key = "a", .kind = DG_PARAM_ARRAY, .min_len = 5, .max_len = 2}},
     64,
     "parameter \"a\": bad length bounds 5..2"},
    {{{.key = "d", .kind = (dg_param_kind)99}}, 64, "parameter \"d\": unknown kind 99"},
};

START_TEST(check_defs_rejects_bad_tables) {
  char why[256] = "";
  ck_assert_int_eq(dgp_params_check_defs(bad_tables[_i].defs, bad_tables[_i].size, why, sizeof why),
                   -1);
  if (bad_tables[_i].why)
    ck_assert_str_eq(why, bad_tables[_i].why);
  else
    ck_assert_msg(strstr(why, "exceeds params_size") != NULL, "why: %s", why);
  /* A NULL buffer is allowed. */
  ck_assert_int_eq(dgp_params_check_defs(bad_tables[_i].defs, bad_tables[_i].size, NULL, 0), -1);
}
END_TEST

/* The structure flags are accepted where they belong, and they bound
 * nothing: a table with only DG_P_DYNAMICS takes any finite numbers. */
static const dg_param_def flagged_fields[] = {
    DG_PARAM_NUM(tshift, upshift_rpm, "upshift_rpm", "rpm", 5000, DG_P_DYNAMICS, 0, 0, "up"),
    {0},
};
static const dg_param_def flagged[] = {
    DG_PARAM_NUM(tparams, inertia, "inertia", "kg*m^2", 0.1, DG_P_MIN | DG_P_INERTIA, 0, 0, "I"),
    DG_PARAM_NUM(tparams, efficiency, "efficiency", "", 1, DG_P_MAX | DG_P_DYNAMICS, 0, 1, "eta"),
    {.key = "full_load", .kind = DG_PARAM_TABLE1D, .offset = offsetof(tparams, full_load),
     .axis = {"rpm", "torque"}, .flags = DG_P_DYNAMICS},
    {.key = "shift", .kind = DG_PARAM_OBJECT, .offset = offsetof(tparams, shift),
     .fields = flagged_fields, .flags = DG_P_DYNAMICS},
    {0},
};

START_TEST(structure_flags) {
  char why[256] = "";
  ck_assert_msg(dgp_params_check_defs(flagged, sizeof(tparams), why, sizeof why) == 0, "%s", why);
  json_t *obj = json_loads("{\"full_load\": {\"rpm\": [0, 1000], \"torque\": [-50, 300]}}", 0,
                           NULL);
  tparams p;
  dg_arena *arena = dgp_arena_new();
  ck_assert_int_eq(dgp_params_parse(flagged, obj, &p, arena, "/blocks/x", NULL, NULL), 0);
  ck_assert_double_eq(p.full_load.y[0], -50);
  json_decref(obj);
  dgp_arena_free(arena);
  /* dgp_param_value_ok: what parsing accepts for a number */
  ck_assert(dgp_param_value_ok(&flagged[0], 0.0));
  ck_assert(!dgp_param_value_ok(&flagged[0], -1e-300));
  ck_assert(!dgp_param_value_ok(&flagged[0], INFINITY));
  ck_assert(dgp_param_value_ok(&flagged[1], 1.0));
  ck_assert(!dgp_param_value_ok(&flagged[1], 1.0000001));
  ck_assert(!dgp_param_value_ok(&defs[0], 0.0)); /* inertia > 0 */
}
END_TEST

START_TEST(check_defs_params_size_too_small) {
  /* The struct ends before the last parameter's field. */
  char why[256], expected[256];
  size_t limit = offsetof(tparams, shift);
  ck_assert_int_eq(dgp_params_check_defs(defs, limit, why, sizeof why), -1);
  snprintf(expected, sizeof expected,
           "parameter \"shift\": offset %zu + 1 bytes exceeds params_size %zu", limit, limit);
  ck_assert_str_eq(why, expected);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("params");
  TCase *v = tcase_create("values");
  tcase_add_test(v, defaults_when_absent);
  tcase_add_test(v, defaults_without_json);
  tcase_add_test(v, null_object_is_empty);
  tcase_add_test(v, values_of_every_kind);
  tcase_add_test(v, nested_defaults_when_given);
  tcase_add_test(v, bad_value_keeps_default);
  tcase_add_test(v, arrays_outlive_the_json);
  suite_add_tcase(s, v);
  TCase *e = tcase_create("errors");
  tcase_add_loop_test(e, one_problem, 0, (int)(sizeof one / sizeof one[0]));
  tcase_add_test(e, all_problems_in_document_order);
  tcase_add_test(e, count_is_relative_to_collector);
  tcase_add_test(e, table_one_point_reported_once);
  tcase_add_test(e, table_without_x_checks_y_length);
  tcase_add_test(e, missing_required_of_every_kind);
  suite_add_tcase(s, e);
  TCase *d = tcase_create("defs");
  tcase_add_test(d, check_defs_accepts_good_tables);
  tcase_add_loop_test(d, check_defs_rejects_bad_tables, 0,
                      (int)(sizeof bad_tables / sizeof bad_tables[0]));
  tcase_add_test(d, check_defs_params_size_too_small);
  tcase_add_test(d, structure_flags);
  suite_add_tcase(s, d);
  return s;
}

int main(void) { return dg_test_run(suite()); }
