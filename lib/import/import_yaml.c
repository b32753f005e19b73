/* Importer for vehicle configs in YAML with a `powertrain:` block, and the
 * pieces both importers share: the default sedan, the driveline behind a
 * powertrain, notes, and the graph writer.
 *
 * The config (SI units, rpm where a key says so) keeps the vehicle's own
 * parameters at the top level and, optionally, an engine + gearbox in
 * `powertrain:`:
 *
 *   mass: 1500            # and wheelbase, cg_to_front, cg_to_rear, ...
 *   drive_type: RWD       # FWD | RWD | AWD
 *   differential: Open   # Open | Locked | LSD
 *   powertrain:
 *     engine:  { idle_rpm, redline_rpm, inertia, rpm_breaks,
 *                throttle_breaks, torque_map: [row per throttle break] }
 *     gearbox: { gear_ratios, reverse_ratio, final_drive, efficiency,
 *                shift_time }
 *     shift:   { mode: manual | auto_rpm, upshift_rpm, downshift_rpm,
 *                start_gear }
 *     clutch:  { max_torque, launch_rpm }        (drivegraph's own, optional)
 *
 * The graph built from it:
 *
 *   engine -> clutch (mode auto) -> gearbox -> final -> diff(s) -> wheels -> body
 *
 * The automatic launch clutch opens at the engine's idle_rpm and closes
 * fully at launch_rpm (smoothstep in between), so the engine idles at rest,
 * a full-throttle launch slips the clutch with the engine near its torque
 * peak, and at idle it transmits nothing (no engine braking, no creep).
 * Once locked the engine's inertia is tied to the wheels through the
 * engaged gear, so the solver sees I_eng·(i_g·i_fd)² at the wheels.
 *
 * Without `powertrain:` (or with `enabled: false`) the drive is the older
 * flat torque, throttle × max_motor_torque × final_drive_ratio at the axle:
 * a `motor` block (no power limit, reverse on gear −1, inertia
 * engine_rotational_inertia) behind a `gear` of final_drive_ratio.
 *
 * What the config leaves out comes from the default sedan
 * (dgp_import_vehicle_default and the POWERTRAIN_* defaults below, listed in
 * docs/import.md, "YAML vehicle configs"). Keys the simulation does not
 * use are ignored with a note; an unknown key close to a known one gets a
 * "did you mean" warning. Every error names file:line:column (libyaml's
 * marks, 1-based) and the key path ("powertrain.engine.torque_map[1][2]:
 * ...").
 *
 * Only the keys the schema knows are read, so aliases cannot make the
 * reader loop or blow up (a recursive alias is never followed). */
#include "import.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <yaml.h>

/* The default sedan's unsprung mass per wheel (kg): with no wheel_inertia
 * the wheel is a solid disc of it, ½·m·R² (as vdsim derives it). */
#define DEFAULT_UNSPRUNG_MASS 40.0
#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* ------------------------------------------------------------------------ */
/* The default sedan                                                        */

void dgp_import_vehicle_default(dg_import_vehicle *v) {
  *v = (dg_import_vehicle){
      .mass = 1500.0,
      .wheelbase = 2.7,
      .cg_to_front = 1.2,
      .cg_height = 0.55,
      .track_front = 1.55,
      .track_rear = 1.55,
      .wheel_radius = 0.32,
      .drive = DG_DRIVE_RWD,
      .split_front = 0.5,
      .diff = DG_DIFF_OPEN,
      .lsd_bias = 0.10,
      .max_brake_torque = 2000.0,
      .brake_bias_front = 0.5,
      .cda = 0.30 * 2.2,
      .air_density = 1.225,
      .rolling_resistance = 0.012,
      .tyre_b = 10.0,
      .tyre_c = 1.9,
      .tyre_d = 1.0,
      .tyre_e = 0.97,
      .relaxation_length = 0.15,
  };
  /* a 40 kg wheel as a solid disc: ½·m·R² */
  for (int i = 0; i < 4; i++)
    v->wheel_inertia[i] = 0.5 * DEFAULT_UNSPRUNG_MASS * v->wheel_radius * v->wheel_radius;
}

/* ------------------------------------------------------------------------ */
/* Notes                                                                    */

void dgp_import_notify(dg_diag_fn fn, void *user, const char *file, int line, int column,
                      bool warning, const char *fmt, ...) {
  if (!fn)
    return;
  dg_error e;
  memset(&e, 0, sizeof e);
  e.code = DG_OK;
  snprintf(e.file, sizeof e.file, "%s", file ? file : "");
  e.line = line;
  e.column = line > 0 ? column : 0;
  int len = snprintf(e.text, sizeof e.text, "%s", warning ? "warning: " : "note: ");
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(e.text + len, sizeof e.text - (size_t)len, fmt, ap);
  va_end(ap);
  fn(&e, user);
}

/* ------------------------------------------------------------------------ */
/* The graph document                                                       */

bool dgp_import_graph_init(dg_import_graph *g, const char *name, const char *description) {
  memset(g, 0, sizeof *g);
  g->root = json_object();
  g->blocks = json_object();
  g->conns = json_array();
  if (!g->root || !g->blocks || !g->conns) {
    json_decref(g->root);
    json_decref(g->blocks);
    json_decref(g->conns);
    memset(g, 0, sizeof *g);
    return false;
  }
  dgp_import_set_int(g, g->root, "drivegraph", 1);
  dgp_import_set_str(g, g->root, "name", name);
  if (description)
    dgp_import_set_str(g, g->root, "description", description);
  /* the root takes the references; the borrowed pointers stay valid */
  if (json_object_set_new(g->root, "blocks", g->blocks) != 0 ||
      json_object_set_new(g->root, "connections", g->conns) != 0) {
    json_decref(g->root);
    memset(g, 0, sizeof *g);
    return false;
  }
  if (g->nomem) {
    dgp_import_graph_free(g);
    return false;
  }
  return true;
}

void dgp_import_graph_free(dg_import_graph *g) {
  if (g) {
    json_decref(g->root);
    memset(g, 0, sizeof *g);
  }
}

void dgp_import_set(dg_import_graph *g, json_t *obj, const char *key, json_t *value) {
  if (!obj || !value || json_object_set_new(obj, key, value) != 0)
    g->nomem = true;
}

void dgp_import_set_num(dg_import_graph *g, json_t *obj, const char *key, double value) {
  dgp_import_set(g, obj, key, json_real(value));
}

void dgp_import_set_int(dg_import_graph *g, json_t *obj, const char *key, long value) {
  dgp_import_set(g, obj, key, json_integer(value));
}

void dgp_import_set_str(dg_import_graph *g, json_t *obj, const char *key, const char *value) {
  dgp_import_set(g, obj, key, json_string(value ? value : ""));
}

void dgp_import_set_bool(dg_import_graph *g, json_t *obj, const char *key, bool value) {
  dgp_import_set(g, obj, key, json_boolean(value));
}

json_t *dgp_import_block(dg_import_graph *g, const char *id, const char *type, const char *doc) {
  json_t *b = json_object();
  if (!b || json_object_set_new(g->blocks, id, b) != 0) {
    g->nomem = true;
    return NULL;
  }
  dgp_import_set_str(g, b, "type", type);
  if (doc)
    dgp_import_set_str(g, b, "doc", doc);
  return b;
}

json_t *dgp_import_numbers(const double *v, int n) {
  json_t *a = json_array();
  for (int i = 0; a && i < n; i++)
    if (json_array_append_new(a, json_real(v[i])) != 0) {
      json_decref(a);
      return NULL;
    }
  return a;
}

json_t *dgp_import_table1d(const char *xname, const double *x, const char *yname, const double *y,
                          int n) {
  json_t *t = json_object();
  json_t *xs = dgp_import_numbers(x, n), *ys = dgp_import_numbers(y, n);
  if (!t || !xs || !ys || json_object_set_new(t, xname, xs) != 0) {
    json_decref(t);
    json_decref(xs);
    json_decref(ys);
    return NULL;
  }
  if (json_object_set_new(t, yname, ys) != 0) {
    json_decref(t);
    return NULL;
  }
  return t;
}

void dgp_import_connect(dg_import_graph *g, const char *from, const char *to) {
  json_t *pair = json_pack("[ss]", from, to);
  if (!pair || json_array_append_new(g->conns, pair) != 0)
    g->nomem = true;
}

double dgp_import_peak(const double *x, const double *y, int n, double *at) {
  double best = -INFINITY;
  *at = n > 0 ? x[0] : 0.0;
  for (int i = 0; i < n; i++)
    if (y[i] > best) {
      best = y[i];
      *at = x[i];
    }
  return best;
}

/* One wheel: radius, inertia, brake and magic-formula tyre. The brake
 * torque at full pedal is max_brake_torque/2 × the axle's share, so the
 * front axle gets brake_bias_front of the total. */
static void add_wheel(dg_import_graph *g, const dg_import_vehicle *v, const char *id, int index) {
  bool front = index < 2;
  json_t *w = dgp_import_block(g, id, "wheel", NULL);
  dgp_import_set_num(g, w, "radius", v->wheel_radius);
  dgp_import_set_num(g, w, "inertia", v->wheel_inertia[index]);
  dgp_import_set_num(g, w, "brake_torque", v->max_brake_torque / 2.0);
  dgp_import_set_num(g, w, "brake_share", front ? v->brake_bias_front : 1.0 - v->brake_bias_front);
  json_t *tyre = json_object();
  dgp_import_set_str(g, tyre, "model", "magic_formula");
  dgp_import_set_num(g, tyre, "B", v->tyre_b);
  dgp_import_set_num(g, tyre, "C", v->tyre_c);
  dgp_import_set_num(g, tyre, "D", v->tyre_d);
  dgp_import_set_num(g, tyre, "E", v->tyre_e);
  dgp_import_set_num(g, tyre, "relaxation_length", v->relaxation_length);
  dgp_import_set(g, w, "tyre", tyre);
}

/* An axle differential of the configured kind. vdsim-style LSD bias b
 * (locking torque = b × axle torque each way) is a torque-sensing clutch
 * pack with power and coast ramps b: capacity b·|T_in|. */
static void add_axle_diff(dg_import_graph *g, const dg_import_vehicle *v, const char *id) {
  static const char *const kinds[] = {"open", "locked", "clutch_lsd"};
  json_t *d = dgp_import_block(g, id, "differential", NULL);
  dgp_import_set_str(g, d, "kind", kinds[v->diff]);
  if (v->diff == DG_DIFF_LSD) {
    dgp_import_set_num(g, d, "preload", 0.0);
    dgp_import_set_num(g, d, "power_ramp", v->lsd_bias);
    dgp_import_set_num(g, d, "coast_ramp", v->lsd_bias);
  }
}

void dgp_import_driveline(dg_import_graph *g, const dg_import_vehicle *v, const char *from,
                         double final_drive, double final_inertia) {
  json_t *fin = dgp_import_block(g, "final", "gear", NULL);
  dgp_import_set_num(g, fin, "ratio", final_drive);
  if (final_inertia > 0.0)
    dgp_import_set_num(g, fin, "inertia", final_inertia);
  dgp_import_connect(g, from, "final.in");
  static const char *const wheels[4] = {"wheel_fl", "wheel_fr", "wheel_rl", "wheel_rr"};
  static const char *const body_ports[4] = {"body.front_left", "body.front_right",
                                            "body.rear_left", "body.rear_right"};
  if (v->drive == DG_DRIVE_AWD) {
    json_t *c = dgp_import_block(g, "centre", "differential",
                                "centre differential: left output to the front axle");
    dgp_import_set_str(g, c, "kind", "open");
    dgp_import_set_num(g, c, "split", v->split_front);
    dgp_import_connect(g, "final.out", "centre.in");
    add_axle_diff(g, v, "diff_f");
    add_axle_diff(g, v, "diff_r");
    dgp_import_connect(g, "centre.left", "diff_f.in");
    dgp_import_connect(g, "centre.right", "diff_r.in");
    dgp_import_connect(g, "diff_f.left", "wheel_fl.hub");
    dgp_import_connect(g, "diff_f.right", "wheel_fr.hub");
    dgp_import_connect(g, "diff_r.left", "wheel_rl.hub");
    dgp_import_connect(g, "diff_r.right", "wheel_rr.hub");
  } else {
    int first = v->drive == DG_DRIVE_FWD ? 0 : 2;
    add_axle_diff(g, v, "diff");
    dgp_import_connect(g, "final.out", "diff.in");
    char hub[32];
    snprintf(hub, sizeof hub, "%s.hub", wheels[first]);
    dgp_import_connect(g, "diff.left", hub);
    snprintf(hub, sizeof hub, "%s.hub", wheels[first + 1]);
    dgp_import_connect(g, "diff.right", hub);
  }
  for (int i = 0; i < 4; i++)
    add_wheel(g, v, wheels[i], i);
  json_t *body = dgp_import_block(g, "body", "vehicle", NULL);
  dgp_import_set_num(g, body, "mass", v->mass);
  dgp_import_set_num(g, body, "wheelbase", v->wheelbase);
  dgp_import_set_num(g, body, "cg_to_front", v->cg_to_front);
  dgp_import_set_num(g, body, "cg_height", v->cg_height);
  dgp_import_set_num(g, body, "track_front", v->track_front);
  dgp_import_set_num(g, body, "track_rear", v->track_rear);
  dgp_import_set_num(g, body, "cda", v->cda);
  dgp_import_set_num(g, body, "air_density", v->air_density);
  dgp_import_set_num(g, body, "rolling_resistance", v->rolling_resistance);
  for (int i = 0; i < 4; i++) {
    char ground[32];
    snprintf(ground, sizeof ground, "%s.ground", wheels[i]);
    dgp_import_connect(g, ground, body_ports[i]);
  }
}

/* ------------------------------------------------------------------------ */
/* The writer                                                               */

typedef struct sbuf {
  char *s;
  size_t len, cap;
  bool nomem;
} sbuf;

static void sb_put(sbuf *b, const char *s, size_t n) {
  if (b->nomem)
    return;
  if (b->len + n + 1 > b->cap) {
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->len + n + 1)
      cap *= 2;
    char *s2 = realloc(b->s, cap);
    if (!s2) {
      b->nomem = true;
      return;
    }
    b->s = s2;
    b->cap = cap;
  }
  memcpy(b->s + b->len, s, n);
  b->len += n;
  b->s[b->len] = '\0';
}

static void sb_puts(sbuf *b, const char *s) { sb_put(b, s, strlen(s)); }

static void sb_indent(sbuf *b, int depth) {
  for (int i = 0; i < depth; i++)
    sb_puts(b, "  ");
}

/* The shortest %g form that reads back as the same double. */
static void format_real(double x, char *buf, size_t size) {
  for (int prec = 15; prec <= 17; prec++) {
    snprintf(buf, size, "%.*g", prec, x);
    if (strtod(buf, NULL) == x)
      return;
  }
}

static void dump_scalar(sbuf *b, const json_t *v) {
  char buf[64];
  if (json_is_real(v)) {
    format_real(json_real_value(v), buf, sizeof buf);
    sb_puts(b, buf);
  } else if (json_is_integer(v)) {
    snprintf(buf, sizeof buf, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
    sb_puts(b, buf);
  } else {
    char *s = json_dumps(v, JSON_ENCODE_ANY);
    if (!s) {
      b->nomem = true;
      return;
    }
    sb_puts(b, s);
    free(s);
  }
}

static bool all_scalars(const json_t *arr) {
  size_t i;
  json_t *e;
  json_array_foreach(arr, i, e) {
    if (json_is_object(e) || json_is_array(e))
      return false;
  }
  return true;
}

static void dump_value(sbuf *b, const json_t *v, int depth) {
  if (json_is_object(v)) {
    if (json_object_size(v) == 0) {
      sb_puts(b, "{}");
      return;
    }
    sb_puts(b, "{\n");
    const char *key;
    json_t *e;
    size_t k = 0, n = json_object_size(v);
    json_object_foreach((json_t *)v, key, e) {
      sb_indent(b, depth + 1);
      json_t *ks = json_string(key);
      if (!ks) {
        b->nomem = true;
        return;
      }
      dump_scalar(b, ks);
      json_decref(ks);
      sb_puts(b, ": ");
      dump_value(b, e, depth + 1);
      sb_puts(b, ++k < n ? ",\n" : "\n");
    }
    sb_indent(b, depth);
    sb_puts(b, "}");
  } else if (json_is_array(v)) {
    size_t i, n = json_array_size(v);
    json_t *e;
    if (all_scalars(v)) { /* numbers and pairs of names stay on one line */
      sb_puts(b, "[");
      json_array_foreach(v, i, e) {
        dump_scalar(b, e);
        if (i + 1 < n)
          sb_puts(b, ", ");
      }
      sb_puts(b, "]");
      return;
    }
    sb_puts(b, "[\n");
    json_array_foreach(v, i, e) {
      sb_indent(b, depth + 1);
      dump_value(b, e, depth + 1);
      sb_puts(b, i + 1 < n ? ",\n" : "\n");
    }
    sb_indent(b, depth);
    sb_puts(b, "]");
  } else {
    dump_scalar(b, v);
  }
}

char *dgp_import_dump(const json_t *root) {
  sbuf b = {0};
  dump_value(&b, root, 0);
  sb_puts(&b, "\n");
  if (b.nomem) {
    free(b.s);
    return NULL;
  }
  return b.s;
}

dg_graph *dgp_import_load(const dg_registry *reg, const char *json, const char *file,
                         dg_error *err) {
  return dg_graph_load_string(reg, json, file, err);
}

/* ------------------------------------------------------------------------ */
/* Reading YAML                                                             */

/* Defaults of the default sedan's powertrain (vdsim's EngineParams,
 * GearboxParams and PowertrainParams), and of the older flat-torque drive. */
#define POWERTRAIN_IDLE_RPM 800.0
#define POWERTRAIN_REDLINE_RPM 6500.0
#define POWERTRAIN_INERTIA 0.25
#define POWERTRAIN_REVERSE 3.2
#define POWERTRAIN_FINAL_DRIVE 4.1
#define POWERTRAIN_EFFICIENCY 0.92
#define POWERTRAIN_SHIFT_TIME 0.3
#define POWERTRAIN_UPSHIFT_RPM 5500.0
#define POWERTRAIN_DOWNSHIFT_RPM 1800.0
static const double powertrain_ratios[] = {3.5, 2.1, 1.4, 1.0, 0.8};
#define FLAT_MAX_TORQUE 300.0
#define FLAT_FINAL_DRIVE 5.0
#define FLAT_INERTIA 0.25
/* The flat-torque motor has no speed limit of its own; this is far beyond
 * anything a road vehicle reaches (the motor fades over its last 5 %). */
#define FLAT_MAX_RPM 100000.0
/* Engine rev limiter hysteresis (the engine block's default), which the
 * redline must clear above idle. */
#define LIMITER_HYSTERESIS_RPM 100.0
#define MAX_GEARS 24

typedef struct yctx {
  const char *file;
  yaml_document_t *doc;
  dg_error *err;
  bool failed;
  dg_diag_fn notes;
  void *user;
  dg_arena *arena;
} yctx;

/* Range of a number: DG_P_* flags of block.h. */
typedef struct yrange {
  unsigned flags;
  double min, max;
} yrange;

static const yrange ANY = {0, 0, 0};
static const yrange POSITIVE = {DG_P_MIN_EXCL, 0, 0};
static const yrange NON_NEGATIVE = {DG_P_MIN, 0, 0};
static const yrange FRACTION = {DG_P_MIN | DG_P_MAX, 0, 1};

/* "/powertrain/engine/torque_map/1/2" -> "powertrain.engine.torque_map[1][2]" */
static void display_path(const char *ptr, char *out, size_t size) {
  size_t o = 0;
  out[0] = '\0';
  const char *p = ptr;
  while (*p == '/' && o + 1 < size) {
    p++;
    const char *end = strchr(p, '/');
    size_t n = end ? (size_t)(end - p) : strlen(p);
    bool index = n > 0 && strspn(p, "0123456789") >= n;
    char tok[128];
    size_t t = 0;
    for (size_t i = 0; i < n && t + 1 < sizeof tok; i++) {
      if (p[i] == '~' && i + 1 < n && (p[i + 1] == '0' || p[i + 1] == '1')) {
        tok[t++] = p[i + 1] == '0' ? '~' : '/';
        i++;
      } else {
        tok[t++] = p[i];
      }
    }
    tok[t] = '\0';
    int w = index ? snprintf(out + o, size - o, "[%s]", tok)
                  : snprintf(out + o, size - o, "%s%s", o ? "." : "", tok);
    if (w < 0 || (size_t)w >= size - o)
      break;
    o += (size_t)w;
    p += n;
  }
}

static int mark_line(const yaml_node_t *n) { return n ? (int)n->start_mark.line + 1 : 0; }
static int mark_column(const yaml_node_t *n) { return n ? (int)n->start_mark.column + 1 : 0; }

/* The first error wins; `at` locates it, `ptr` names the key. */
static void yfail(yctx *c, const yaml_node_t *at, int code, const char *ptr, const char *fmt, ...)
    DG_PRINTF(5, 6);
static void yfail(yctx *c, const yaml_node_t *at, int code, const char *ptr, const char *fmt,
                  ...) {
  if (c->failed)
    return;
  c->failed = true;
  if (!c->err)
    return;
  char shown[DG_ERROR_PATH_LEN];
  display_path(ptr, shown, sizeof shown);
  char msg[DG_ERROR_TEXT_LEN];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  dgp_error_set(c->err, code, c->file, ptr, "%s%s%s", shown, shown[0] ? ": " : "", msg);
  c->err->line = at ? mark_line(at) : 1;
  c->err->column = at ? mark_column(at) : 1;
}

static void ynote(yctx *c, const yaml_node_t *at, bool warning, const char *fmt, ...)
    DG_PRINTF(4, 5);
static void ynote(yctx *c, const yaml_node_t *at, bool warning, const char *fmt, ...) {
  if (!c->notes)
    return;
  char msg[DG_ERROR_TEXT_LEN];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  dgp_import_notify(c->notes, c->user, c->file, mark_line(at), mark_column(at), warning, "%s",
                   msg);
}

static yaml_node_t *ynode(yctx *c, int index) { return yaml_document_get_node(c->doc, index); }

static const char *yscalar(const yaml_node_t *n) {
  return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

static bool is_plain(const yaml_node_t *n) {
  return n && n->type == YAML_SCALAR_NODE && n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
}

static bool is_null(const yaml_node_t *n) {
  const char *s = yscalar(n);
  return is_plain(n) && (!s[0] || strcmp(s, "~") == 0 || strcmp(s, "null") == 0 ||
                         strcmp(s, "Null") == 0 || strcmp(s, "NULL") == 0);
}

/* YAML 1.1 and 1.2 booleans. */
static int as_bool(const yaml_node_t *n) {
  static const char *const yes[] = {"true", "True", "TRUE", "yes", "Yes", "YES", "on", "On", "ON"};
  static const char *const no[] = {"false", "False", "FALSE", "no", "No", "NO", "off", "Off", "OFF"};
  if (!is_plain(n))
    return -1;
  for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++) {
    if (strcmp(yscalar(n), yes[i]) == 0)
      return 1;
    if (strcmp(yscalar(n), no[i]) == 0)
      return 0;
  }
  return -1;
}

/* A plain scalar that reads as a number: decimal integers and floats with
 * an optional exponent, and YAML's .inf / .nan spellings (which are then
 * refused as not finite). */
static bool as_number(const yaml_node_t *n, double *out) {
  if (!is_plain(n))
    return false;
  const char *s = yscalar(n);
  const char *t = s + (*s == '+' || *s == '-');
  if (strcmp(t, ".inf") == 0 || strcmp(t, ".Inf") == 0 || strcmp(t, ".INF") == 0) {
    *out = *s == '-' ? -INFINITY : INFINITY;
    return true;
  }
  if (strcmp(s, ".nan") == 0 || strcmp(s, ".NaN") == 0 || strcmp(s, ".NAN") == 0) {
    *out = NAN;
    return true;
  }
  if (!((*t >= '0' && *t <= '9') || (*t == '.' && t[1] >= '0' && t[1] <= '9')))
    return false;
  if (strpbrk(s, "xXnN")) /* hex, inf, nan: not YAML decimal numbers */
    return false;
  char *end;
  errno = 0;
  double x = strtod(s, &end);
  if (end == s || *end != '\0')
    return false;
  *out = x;
  return true;
}

/* "a string \"abc\"", "a mapping", ... for type errors. */
static const char *describe(const yaml_node_t *n, char *buf, size_t size) {
  double x;
  if (!n)
    return "nothing";
  switch (n->type) {
  case YAML_MAPPING_NODE:
    return "a mapping";
  case YAML_SEQUENCE_NODE:
    return "a sequence";
  case YAML_SCALAR_NODE:
    if (is_null(n))
      return "null";
    if (as_bool(n) >= 0)
      return "a boolean";
    if (as_number(n, &x))
      return "a number";
    snprintf(buf, size, "a string \"%.40s\"", yscalar(n));
    return buf;
  default:
    return "nothing";
  }
}

static void child_ptr(char *out, size_t size, const char *base, const char *key) {
  dgp_pointer_append(out, size, base, key);
}

static void index_ptr(char *out, size_t size, const char *base, size_t i) {
  dgp_pointer_index(out, size, base, i);
}

/* Mapping pairs with their key and value nodes. */
typedef struct ypair {
  yaml_node_t *key, *value;
} ypair;

static int ypairs(yctx *c, const yaml_node_t *map, ypair *out, int max) {
  int n = 0;
  for (yaml_node_pair_t *p = map->data.mapping.pairs.start;
       p < map->data.mapping.pairs.top && n < max; p++)
    out[n++] = (ypair){ynode(c, p->key), ynode(c, p->value)};
  return n;
}

/* A key ignored on purpose, and why. */
typedef struct yignored {
  const char *key, *why;
} yignored;

/* Checks a mapping's keys: scalars, no duplicates, each either used,
 * ignored on purpose (a note giving the reason), or unknown (a note, or a
 * warning with "did you mean" when close to a used key). */
#define MAX_PAIRS 256
static void ycheck_keys(yctx *c, const yaml_node_t *map, const char *ptr,
                        const char *const *used, int n_used, const yignored *ignored,
                        int n_ignored) {
  ypair pairs[MAX_PAIRS];
  int n = ypairs(c, map, pairs, MAX_PAIRS);
  for (int i = 0; i < n && !c->failed; i++) {
    const char *k = yscalar(pairs[i].key);
    char buf[64];
    if (!k) {
      yfail(c, pairs[i].key, DG_ERR_SCHEMA, ptr, "keys must be plain names, got %s",
            describe(pairs[i].key, buf, sizeof buf));
      return;
    }
    for (int j = 0; j < i; j++)
      if (strcmp(k, yscalar(pairs[j].key)) == 0) {
        char kp[DG_ERROR_PATH_LEN];
        child_ptr(kp, sizeof kp, ptr, k);
        yfail(c, pairs[i].key, DG_ERR_SCHEMA, kp, "duplicate key (first given at line %d)",
              mark_line(pairs[j].key));
        return;
      }
    bool known = false;
    for (int j = 0; j < n_used && !known; j++)
      known = strcmp(k, used[j]) == 0;
    if (known)
      continue;
    char kp[DG_ERROR_PATH_LEN], shown[DG_ERROR_PATH_LEN];
    child_ptr(kp, sizeof kp, ptr, k);
    display_path(kp, shown, sizeof shown);
    const char *why = NULL;
    for (int j = 0; j < n_ignored && !why; j++)
      if (strcmp(k, ignored[j].key) == 0)
        why = ignored[j].why;
    const char *close = why ? NULL : dg_suggest(k, used, n_used);
    if (close)
      ynote(c, pairs[i].key, true, "%s: unknown key, ignored; did you mean \"%s\"?", shown, close);
    else
      ynote(c, pairs[i].key, false, "%s: ignored (%s)", shown,
            why ? why : "unknown key, not used by a drivetrain simulation");
  }
}

static yaml_node_t *yget(yctx *c, const yaml_node_t *map, const char *key) {
  if (!map || map->type != YAML_MAPPING_NODE)
    return NULL;
  for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
       p++) {
    const char *k = yscalar(ynode(c, p->key));
    if (k && strcmp(k, key) == 0)
      return ynode(c, p->value);
  }
  return NULL;
}

static bool in_range(double x, const yrange *r) {
  if ((r->flags & DG_P_MIN_EXCL) && !(x > r->min))
    return false;
  if ((r->flags & DG_P_MIN) && !(x >= r->min))
    return false;
  if ((r->flags & DG_P_MAX_EXCL) && !(x < r->max))
    return false;
  if ((r->flags & DG_P_MAX) && !(x <= r->max))
    return false;
  return true;
}

/* A number node: type, finiteness and range. */
static bool ynumber_node(yctx *c, const yaml_node_t *n, const char *ptr, const yrange *r,
                         double *out) {
  double x;
  char buf[64];
  if (!as_number(n, &x)) {
    yfail(c, n, DG_ERR_SCHEMA, ptr, "expected a number, got %s", describe(n, buf, sizeof buf));
    return false;
  }
  if (!isfinite(x)) {
    yfail(c, n, DG_ERR_RANGE, ptr, "must be a finite number (got %s)", yscalar(n));
    return false;
  }
  if (!in_range(x, r)) {
    yfail(c, n, DG_ERR_RANGE, ptr, "must be %s (got %g)",
          dgp_range_text(buf, sizeof buf, r->flags, r->min, r->max, DG_RANGE_BOUNDS), x);
    return false;
  }
  *out = x;
  return true;
}

/* map[key] as a number into *out when given (true); absent leaves *out. */
static bool ynum(yctx *c, const yaml_node_t *map, const char *base, const char *key,
                 const yrange *r, double *out) {
  yaml_node_t *n = yget(c, map, key);
  if (!n || c->failed)
    return false;
  char ptr[DG_ERROR_PATH_LEN];
  child_ptr(ptr, sizeof ptr, base, key);
  return ynumber_node(c, n, ptr, r, out);
}

/* A sequence of numbers (at least min_len) into arena memory. */
static bool ynumbers_node(yctx *c, const yaml_node_t *n, const char *ptr, const yrange *r,
                          int min_len, double **out, int *count) {
  char buf[64];
  if (!n || n->type != YAML_SEQUENCE_NODE) {
    yfail(c, n, DG_ERR_SCHEMA, ptr, "expected a sequence of numbers, got %s",
          describe(n, buf, sizeof buf));
    return false;
  }
  int len = (int)(n->data.sequence.items.top - n->data.sequence.items.start);
  if (len < min_len) {
    yfail(c, n, DG_ERR_SCHEMA, ptr, "must have at least %d %s (got %d)", min_len,
          min_len == 1 ? "value" : "values", len);
    return false;
  }
  double *v = dgp_arena_alloc(c->arena, sizeof *v * (size_t)(len ? len : 1));
  if (!v) {
    yfail(c, n, DG_ERR_NOMEM, ptr, "out of memory");
    return false;
  }
  for (int i = 0; i < len; i++) {
    char ip[DG_ERROR_PATH_LEN];
    index_ptr(ip, sizeof ip, ptr, (size_t)i);
    if (!ynumber_node(c, ynode(c, n->data.sequence.items.start[i]), ip, r, &v[i]))
      return false;
  }
  *out = v;
  *count = len;
  return true;
}

/* Strictly increasing breakpoints: the first offender is reported. */
static bool yincreasing(yctx *c, const yaml_node_t *seq, const char *ptr, const double *v, int n,
                        const char *what) {
  for (int i = 1; i < n; i++) {
    if (v[i] > v[i - 1])
      continue;
    char ip[DG_ERROR_PATH_LEN];
    index_ptr(ip, sizeof ip, ptr, (size_t)i);
    yfail(c, ynode(c, seq->data.sequence.items.start[i]), DG_ERR_RANGE, ip,
          "%s must increase strictly: %g after %g", what, v[i], v[i - 1]);
    return false;
  }
  return true;
}

static bool ymapping(yctx *c, const yaml_node_t *n, const char *ptr) {
  char buf[64];
  if (n && n->type == YAML_MAPPING_NODE)
    return true;
  yfail(c, n, DG_ERR_SCHEMA, ptr, "expected a mapping, got %s", describe(n, buf, sizeof buf));
  return false;
}

/* One of `choices` (case-insensitive), as an index. */
static bool yenum(yctx *c, const yaml_node_t *map, const char *base, const char *key,
                  const char *const *choices, int n_choices, int *out) {
  yaml_node_t *n = yget(c, map, key);
  if (!n || c->failed)
    return false;
  char ptr[DG_ERROR_PATH_LEN], buf[64], list[128] = "";
  child_ptr(ptr, sizeof ptr, base, key);
  for (int i = 0; i < n_choices; i++) {
    size_t l = strlen(list);
    snprintf(list + l, sizeof list - l, "%s%s", i ? " | " : "", choices[i]);
  }
  const char *s = yscalar(n);
  double x;
  if (!s || is_null(n) || as_bool(n) >= 0 || as_number(n, &x)) {
    yfail(c, n, DG_ERR_SCHEMA, ptr, "expected one of %s, got %s", list,
          describe(n, buf, sizeof buf));
    return false;
  }
  for (int i = 0; i < n_choices; i++)
    if (strcasecmp(s, choices[i]) == 0) {
      *out = i;
      return true;
    }
  const char *close = dg_suggest(s, choices, n_choices);
  if (close)
    yfail(c, n, DG_ERR_UNKNOWN, ptr, "unknown value \"%s\"; did you mean \"%s\"?", s, close);
  else
    yfail(c, n, DG_ERR_UNKNOWN, ptr, "unknown value \"%s\" (expected %s)", s, list);
  return false;
}

/* ------------------------------------------------------------------------ */
/* The vehicle (top-level keys)                                             */

static const char *const vehicle_keys[] = {
    "name", "description", "mass", "wheelbase", "cg_to_front", "cg_to_rear", "cg_height",
    "track_front", "track_rear", "wheel_radius_nominal", "wheel_inertia", "unsprung_mass",
    "drive_type", "drive_split_front", "differential", "lsd_preload", "max_brake_torque",
    "brake_bias_front", "aero_drag_coeff", "frontal_area", "air_density", "rolling_resistance",
    "tire", "tyre", "max_motor_torque", "final_drive_ratio", "engine_rotational_inertia",
    "powertrain"};
#define NUM_VEHICLE_KEYS ((int)(sizeof vehicle_keys / sizeof vehicle_keys[0]))

/* Keys of such configs (vdsim's VehicleParams) that a drivetrain simulation
 * has no use for: suspension, steering, actuator lags, lateral dynamics. */
#define NOT_DRIVETRAIN "not used by a drivetrain simulation"
static const yignored vehicle_ignored[] = {
    {"mass_sprung", "the body is one rigid mass"},
    {"inertia_diag", "no body rotation in a longitudinal simulation"},
    {"spring_stiffness", "no suspension in a longitudinal simulation"},
    {"damper_coefficient", "no suspension in a longitudinal simulation"},
    {"arb_stiffness_front", "no suspension in a longitudinal simulation"},
    {"arb_stiffness_rear", "no suspension in a longitudinal simulation"},
    {"roll_center_height_front", "no suspension in a longitudinal simulation"},
    {"roll_center_height_rear", "no suspension in a longitudinal simulation"},
    {"anti_dive_front", "no suspension in a longitudinal simulation"},
    {"anti_squat_rear", "no suspension in a longitudinal simulation"},
    {"camber_per_roll", "no suspension in a longitudinal simulation"},
    {"spring_bump_ratio", "no suspension in a longitudinal simulation"},
    {"spring_droop_ratio", "no suspension in a longitudinal simulation"},
    {"plant_path", NOT_DRIVETRAIN},
    {"lsd_ramp", "the speed-sensitive part of the LSD bias is not modelled: the clutch-pack LSD "
                 "is torque-sensing (lsd_preload)"},
    {"brake_ebd_enabled", "the brake bias is fixed (brake_bias_front)"},
    {"brake_deadtime_s", "driver inputs act without delay"},
    {"drive_deadtime_s", "driver inputs act without delay"},
    {"steer_deadtime_s", "no steering in a longitudinal simulation"},
    {"steering_ratio", "no steering in a longitudinal simulation"},
    {"max_steer_angle_wheel", "no steering in a longitudinal simulation"},
    {"ackerman_percent", "no steering in a longitudinal simulation"},
    {"steering_dynamic", "no steering in a longitudinal simulation"},
    {"rack_mass", "no steering in a longitudinal simulation"},
    {"rack_damping", "no steering in a longitudinal simulation"},
    {"pinion_radius", "no steering in a longitudinal simulation"},
    {"caster_trail", "no steering in a longitudinal simulation"},
    {"aero_lift_front", "aerodynamic lift is not modelled"},
    {"aero_lift_rear", "aerodynamic lift is not modelled"},
};
#define NUM_VEHICLE_IGNORED ((int)(sizeof vehicle_ignored / sizeof vehicle_ignored[0]))

static const char *const tire_keys[] = {"B_long", "C_long", "D_long", "E_long",
                                        "mu_nominal", "rolling_resistance",
                                        "relaxation_length_long"};
#define NUM_TIRE_KEYS ((int)(sizeof tire_keys / sizeof tire_keys[0]))

/* A number, or a sequence of four (FL, FR, RL, RR). */
static bool yper_wheel(yctx *c, const yaml_node_t *map, const char *key, const yrange *r,
                       double out[4]) {
  yaml_node_t *n = yget(c, map, key);
  if (!n || c->failed)
    return false;
  char ptr[DG_ERROR_PATH_LEN];
  child_ptr(ptr, sizeof ptr, "", key);
  if (n->type != YAML_SEQUENCE_NODE) {
    double x;
    if (!ynumber_node(c, n, ptr, r, &x))
      return false;
    for (int i = 0; i < 4; i++)
      out[i] = x;
    return true;
  }
  double *v;
  int len;
  if (!ynumbers_node(c, n, ptr, r, 1, &v, &len))
    return false;
  if (len != 4) {
    yfail(c, n, DG_ERR_SCHEMA, ptr, "expected 4 values (FL, FR, RL, RR), got %d", len);
    return false;
  }
  memcpy(out, v, 4 * sizeof *v);
  return true;
}

/* Notes the default taken for a key the config leaves out. */
static void ydefault(yctx *c, const yaml_node_t *map, const char *key, const char *what,
                     double value, const char *unit) {
  if (!yget(c, map, key))
    dgp_import_notify(c->notes, c->user, c->file, 0, 0, false,
                     "%s not given: default sedan's %s %g%s%s", key, what, value,
                     unit[0] ? " " : "", unit);
}

static void read_tire(yctx *c, const yaml_node_t *tire, const char *key, dg_import_vehicle *v) {
  char base[DG_ERROR_PATH_LEN];
  child_ptr(base, sizeof base, "", key);
  if (!ymapping(c, tire, base))
    return;
  static const yignored tire_ignored[] = {
      {"B_lat", "no lateral tyre forces"}, {"C_lat", "no lateral tyre forces"},
      {"D_lat", "no lateral tyre forces"}, {"E_lat", "no lateral tyre forces"},
      {"cornering_stiffness", "no lateral tyre forces"},
      {"relaxation_length_lat", "no lateral tyre forces"}};
  ycheck_keys(c, tire, base, tire_keys, NUM_TIRE_KEYS, tire_ignored, COUNT(tire_ignored));
  double mu = 1.0, d = 1.0;
  ynum(c, tire, base, "B_long", &POSITIVE, &v->tyre_b);
  const yrange c_range = {DG_P_MIN_EXCL | DG_P_MAX_EXCL, 0, 2};
  ynum(c, tire, base, "C_long", &c_range, &v->tyre_c);
  ynum(c, tire, base, "D_long", &POSITIVE, &d);
  const yrange e_range = {DG_P_MAX, 0, 1};
  ynum(c, tire, base, "E_long", &e_range, &v->tyre_e);
  ynum(c, tire, base, "mu_nominal", &POSITIVE, &mu);
  v->tyre_d = d * mu;
  ynum(c, tire, base, "rolling_resistance", &NON_NEGATIVE, &v->rolling_resistance);
  double relax = 0.0;
  if (ynum(c, tire, base, "relaxation_length_long", &NON_NEGATIVE, &relax)) {
    if (relax > 0.0)
      v->relaxation_length = relax;
    else
      ynote(c, yget(c, tire, "relaxation_length_long"), false,
            "%s.relaxation_length_long: 0 (instant slip) is not available; using %g m", key,
            v->relaxation_length);
  }
}

/* Reads the top-level vehicle keys (not powertrain). */
static void read_vehicle(yctx *c, const yaml_node_t *root, dg_import_vehicle *v) {
  const yaml_node_t *r = root;
  ynum(c, r, "", "mass", &POSITIVE, &v->mass);
  ydefault(c, r, "mass", "mass", v->mass, "kg");
  double wheelbase = 0, front = 0, rear = 0;
  bool has_l = ynum(c, r, "", "wheelbase", &POSITIVE, &wheelbase);
  bool has_a = ynum(c, r, "", "cg_to_front", &POSITIVE, &front);
  bool has_b = ynum(c, r, "", "cg_to_rear", &POSITIVE, &rear);
  if (c->failed)
    return;
  if (has_l)
    v->wheelbase = wheelbase;
  else if (has_a && has_b)
    v->wheelbase = front + rear;
  else
    ydefault(c, r, "wheelbase", "wheelbase", v->wheelbase, "m");
  if (has_a) {
    v->cg_to_front = front;
  } else if (has_b) {
    v->cg_to_front = v->wheelbase - rear;
  } else {
    /* the default sedan's weight distribution, 1.2 m of 2.7 m */
    v->cg_to_front = v->wheelbase * 1.2 / 2.7;
    dgp_import_notify(c->notes, c->user, c->file, 0, 0, false,
                     "cg_to_front not given: %g m (the default sedan's 1.2/2.7 of the wheelbase)",
                     v->cg_to_front);
  }
  if (has_l && has_a && has_b && fabs(front + rear - wheelbase) > 1e-3 * wheelbase)
    ynote(c, yget(c, r, "cg_to_rear"), true,
          "cg_to_front + cg_to_rear = %g differs from wheelbase %g; using wheelbase and "
          "cg_to_front",
          front + rear, wheelbase);
  if (!(v->cg_to_front > 0.0 && v->cg_to_front < v->wheelbase)) {
    const char *key = has_a ? "cg_to_front" : has_b ? "cg_to_rear" : "wheelbase";
    char ptr[64];
    child_ptr(ptr, sizeof ptr, "", key);
    yfail(c, yget(c, r, key), DG_ERR_RANGE, ptr,
          "the centre of gravity must lie between the axles (cg_to_front %g, wheelbase %g)",
          v->cg_to_front, v->wheelbase);
    return;
  }
  ynum(c, r, "", "cg_height", &NON_NEGATIVE, &v->cg_height);
  ydefault(c, r, "cg_height", "cg_height", v->cg_height, "m");
  ynum(c, r, "", "track_front", &POSITIVE, &v->track_front);
  ynum(c, r, "", "track_rear", &POSITIVE, &v->track_rear);
  ynum(c, r, "", "wheel_radius_nominal", &POSITIVE, &v->wheel_radius);
  ydefault(c, r, "wheel_radius_nominal", "wheel radius", v->wheel_radius, "m");
  /* wheel inertia: given (> 0), else ½·m_u·R² from the unsprung mass */
  double unsprung[4] = {DEFAULT_UNSPRUNG_MASS, DEFAULT_UNSPRUNG_MASS, DEFAULT_UNSPRUNG_MASS,
                        DEFAULT_UNSPRUNG_MASS};
  double inertia[4] = {0, 0, 0, 0};
  yper_wheel(c, r, "unsprung_mass", &POSITIVE, unsprung);
  yper_wheel(c, r, "wheel_inertia", &NON_NEGATIVE, inertia);
  for (int i = 0; i < 4; i++)
    v->wheel_inertia[i] =
        inertia[i] > 0.0 ? inertia[i] : 0.5 * unsprung[i] * v->wheel_radius * v->wheel_radius;
  if (!yget(c, r, "wheel_inertia"))
    dgp_import_notify(c->notes, c->user, c->file, 0, 0, false,
                     "wheel_inertia not given: 0.5 x unsprung mass x wheel radius^2 = %g kg*m^2",
                     v->wheel_inertia[0]);
  static const char *const drives[] = {"FWD", "RWD", "AWD"};
  int drive = (int)v->drive;
  if (yenum(c, r, "", "drive_type", drives, 3, &drive))
    v->drive = (dg_import_drive)drive;
  else if (!c->failed)
    dgp_import_notify(c->notes, c->user, c->file, 0, 0, false,
                     "drive_type not given: default sedan's RWD");
  const yrange split = {DG_P_MIN_EXCL | DG_P_MAX_EXCL, 0, 1};
  if (ynum(c, r, "", "drive_split_front", &split, &v->split_front) && v->drive != DG_DRIVE_AWD)
    ynote(c, yget(c, r, "drive_split_front"), false,
          "drive_split_front: ignored (only used with drive_type AWD)");
  static const char *const diffs[] = {"Open", "Locked", "LSD"};
  int diff = (int)v->diff;
  if (yenum(c, r, "", "differential", diffs, 3, &diff))
    v->diff = (dg_import_diff)diff;
  const yrange lsd = {DG_P_MIN | DG_P_MAX, 0, 0.5};
  if (ynum(c, r, "", "lsd_preload", &lsd, &v->lsd_bias) && v->diff != DG_DIFF_LSD)
    ynote(c, yget(c, r, "lsd_preload"), false,
          "lsd_preload: ignored (only used with differential LSD)");
  ynum(c, r, "", "max_brake_torque", &NON_NEGATIVE, &v->max_brake_torque);
  ynum(c, r, "", "brake_bias_front", &FRACTION, &v->brake_bias_front);
  double cd = 0.30, area = 2.2;
  bool has_cd = ynum(c, r, "", "aero_drag_coeff", &NON_NEGATIVE, &cd);
  bool has_area = ynum(c, r, "", "frontal_area", &NON_NEGATIVE, &area);
  v->cda = cd * area;
  if (!has_cd || !has_area)
    dgp_import_notify(c->notes, c->user, c->file, 0, 0, false,
                     "drag: aero_drag_coeff %g x frontal_area %g m^2 (%s from the default sedan)",
                     cd, area, !has_cd && !has_area ? "both" : !has_cd ? "Cd" : "area");
  ynum(c, r, "", "air_density", &POSITIVE, &v->air_density);
  ynum(c, r, "", "rolling_resistance", &NON_NEGATIVE, &v->rolling_resistance);
  const char *tire_key = yget(c, r, "tire") ? "tire" : "tyre";
  yaml_node_t *tire = yget(c, r, tire_key);
  if (tire && !c->failed)
    read_tire(c, tire, tire_key, v);
  if (yget(c, r, "tire") && yget(c, r, "tyre"))
    ynote(c, yget(c, r, "tyre"), true, "tyre: ignored (tire is given too)");
}

/* ------------------------------------------------------------------------ */
/* The powertrain block                                                     */

typedef struct ypowertrain {
  double idle_rpm, redline_rpm, inertia;
  double *rpm, *throttle, *torque; /* torque[i_throttle * n_rpm + i_rpm] */
  int n_rpm, n_throttle;
  double ratios[MAX_GEARS];
  int n_gears;
  double reverse, final_drive, efficiency, shift_time;
  bool automatic;
  double upshift_rpm, downshift_rpm;
  int start_gear;
  bool has_start_gear;
  double clutch_torque, launch_rpm;
  bool has_clutch_torque, has_launch_rpm;
} ypowertrain;

static const char *const powertrain_keys[] = {"engine", "gearbox", "shift", "clutch", "enabled"};
static const char *const engine_keys[] = {"idle_rpm", "redline_rpm", "inertia", "rpm_breaks",
                                          "throttle_breaks", "torque_map"};
static const char *const gearbox_keys[] = {"gear_ratios", "reverse_ratio", "final_drive",
                                           "efficiency", "shift_time"};
static const char *const shift_keys[] = {"mode", "upshift_rpm", "downshift_rpm", "start_gear"};
static const char *const clutch_keys[] = {"max_torque", "launch_rpm"};

/* A required child of a mapping, reported at the mapping when missing. */
static yaml_node_t *yrequire(yctx *c, const yaml_node_t *map, const char *base, const char *key,
                             const char *what) {
  yaml_node_t *n = yget(c, map, key);
  if (!n && !c->failed) {
    char ptr[DG_ERROR_PATH_LEN];
    child_ptr(ptr, sizeof ptr, base, key);
    yfail(c, map, DG_ERR_SCHEMA, ptr, "missing required key (%s)", what);
  }
  return n;
}

static void read_engine(yctx *c, const yaml_node_t *eng, ypowertrain *p) {
  const char *base = "/powertrain/engine";
  if (!ymapping(c, eng, base))
    return;
  ycheck_keys(c, eng, base, engine_keys, COUNT(engine_keys), NULL, 0);
  ynum(c, eng, base, "idle_rpm", &POSITIVE, &p->idle_rpm);
  ynum(c, eng, base, "redline_rpm", &POSITIVE, &p->redline_rpm);
  ynum(c, eng, base, "inertia", &POSITIVE, &p->inertia);
  if (c->failed)
    return;
  if (!(p->redline_rpm > p->idle_rpm + LIMITER_HYSTERESIS_RPM)) {
    yaml_node_t *at = yget(c, eng, "redline_rpm") ? yget(c, eng, "redline_rpm")
                                                  : yget(c, eng, "idle_rpm");
    yfail(c, at ? at : eng, DG_ERR_RANGE, "/powertrain/engine/redline_rpm",
          "must be > idle_rpm + %g (the rev limiter's hysteresis) = %g (got %g)",
          LIMITER_HYSTERESIS_RPM, p->idle_rpm + LIMITER_HYSTERESIS_RPM, p->redline_rpm);
    return;
  }
  yaml_node_t *rpm = yrequire(c, eng, base, "rpm_breaks", "the map's rpm breakpoints");
  yaml_node_t *thr = yrequire(c, eng, base, "throttle_breaks", "the map's throttle breakpoints");
  yaml_node_t *map = yrequire(c, eng, base, "torque_map", "one row of torques per throttle break");
  if (c->failed)
    return;
  const char *rp = "/powertrain/engine/rpm_breaks", *tp = "/powertrain/engine/throttle_breaks";
  if (!ynumbers_node(c, rpm, rp, &NON_NEGATIVE, 2, &p->rpm, &p->n_rpm) ||
      !yincreasing(c, rpm, rp, p->rpm, p->n_rpm, "rpm breakpoints") ||
      !ynumbers_node(c, thr, tp, &FRACTION, 2, &p->throttle, &p->n_throttle) ||
      !yincreasing(c, thr, tp, p->throttle, p->n_throttle, "throttle breakpoints"))
    return;
  const char *mp = "/powertrain/engine/torque_map";
  char buf[64];
  if (map->type != YAML_SEQUENCE_NODE) {
    yfail(c, map, DG_ERR_SCHEMA, mp, "expected a sequence of rows, got %s",
          describe(map, buf, sizeof buf));
    return;
  }
  int rows = (int)(map->data.sequence.items.top - map->data.sequence.items.start);
  if (rows != p->n_throttle) {
    yfail(c, map, DG_ERR_SCHEMA, mp,
          "expected %d rows, one per throttle break (throttle_breaks has %d), got %d",
          p->n_throttle, p->n_throttle, rows);
    return;
  }
  p->torque = dgp_arena_alloc(c->arena, sizeof *p->torque * (size_t)(rows * p->n_rpm));
  if (!p->torque) {
    yfail(c, map, DG_ERR_NOMEM, mp, "out of memory");
    return;
  }
  for (int i = 0; i < rows; i++) {
    char rowp[DG_ERROR_PATH_LEN];
    index_ptr(rowp, sizeof rowp, mp, (size_t)i);
    yaml_node_t *row = ynode(c, map->data.sequence.items.start[i]);
    double *v;
    int n;
    if (!ynumbers_node(c, row, rowp, &ANY, 1, &v, &n))
      return;
    if (n != p->n_rpm) {
      yfail(c, row, DG_ERR_SCHEMA, rowp,
            "expected %d torques, one per rpm break (rpm_breaks has %d), got %d", p->n_rpm,
            p->n_rpm, n);
      return;
    }
    memcpy(p->torque + i * p->n_rpm, v, sizeof *v * (size_t)n);
  }
}

static void read_gearbox(yctx *c, const yaml_node_t *gb, ypowertrain *p) {
  const char *base = "/powertrain/gearbox";
  if (!ymapping(c, gb, base))
    return;
  ycheck_keys(c, gb, base, gearbox_keys, COUNT(gearbox_keys), NULL, 0);
  yaml_node_t *ratios = yget(c, gb, "gear_ratios");
  if (ratios) {
    double *v;
    int n;
    const char *rp = "/powertrain/gearbox/gear_ratios";
    if (!ynumbers_node(c, ratios, rp, &POSITIVE, 1, &v, &n))
      return;
    if (n > MAX_GEARS) {
      yfail(c, ratios, DG_ERR_RANGE, rp, "at most %d gears (got %d)", MAX_GEARS, n);
      return;
    }
    memcpy(p->ratios, v, sizeof *v * (size_t)n);
    p->n_gears = n;
  }
  ynum(c, gb, base, "reverse_ratio", &POSITIVE, &p->reverse);
  ynum(c, gb, base, "final_drive", &POSITIVE, &p->final_drive);
  const yrange eff = {DG_P_MIN_EXCL | DG_P_MAX, 0, 1};
  ynum(c, gb, base, "efficiency", &eff, &p->efficiency);
  ynum(c, gb, base, "shift_time", &NON_NEGATIVE, &p->shift_time);
}

static void read_shift(yctx *c, const yaml_node_t *sh, const yaml_node_t *gb, ypowertrain *p) {
  const char *base = "/powertrain/shift";
  if (!ymapping(c, sh, base))
    return;
  ycheck_keys(c, sh, base, shift_keys, COUNT(shift_keys), NULL, 0);
  static const char *const modes[] = {"manual", "auto_rpm"};
  int mode = 0;
  if (yenum(c, sh, base, "mode", modes, 2, &mode))
    p->automatic = mode == 1;
  yaml_node_t *up = yget(c, sh, "upshift_rpm"), *down = yget(c, sh, "downshift_rpm");
  ynum(c, sh, base, "upshift_rpm", &POSITIVE, &p->upshift_rpm);
  ynum(c, sh, base, "downshift_rpm", &POSITIVE, &p->downshift_rpm);
  yaml_node_t *sg = yget(c, sh, "start_gear");
  if (sg && !c->failed) {
    double g;
    const char *gp = "/powertrain/shift/start_gear";
    const yrange gears = {DG_P_MIN | DG_P_MAX, -1, p->n_gears};
    if (!ynumber_node(c, sg, gp, &gears, &g))
      return;
    if (g != floor(g)) {
      yfail(c, sg, DG_ERR_SCHEMA, gp, "expected a whole gear number (-1 reverse, 0 neutral, "
                                      "1..%d), got %g", p->n_gears, g);
      return;
    }
    p->start_gear = (int)g;
    p->has_start_gear = true;
  }
  if (!p->automatic || c->failed)
    return;
  /* auto_rpm: falling ratios, and no hunting after an upshift */
  yaml_node_t *ratios = yget(c, gb, "gear_ratios");
  for (int i = 1; i < p->n_gears; i++)
    if (!(p->ratios[i] < p->ratios[i - 1])) {
      char ip[64];
      index_ptr(ip, sizeof ip, "/powertrain/gearbox/gear_ratios", (size_t)i);
      yfail(c, ratios ? ynode(c, ratios->data.sequence.items.start[i]) : sh, DG_ERR_RANGE, ip,
            "must be < the gear below (%g) for shift mode auto_rpm (got %g)", p->ratios[i - 1],
            p->ratios[i]);
      return;
    }
  if (!(p->downshift_rpm < p->upshift_rpm)) {
    yfail(c, down ? down : sh, DG_ERR_RANGE, "/powertrain/shift/downshift_rpm",
          "must be < upshift_rpm (%g) (got %g)", p->upshift_rpm, p->downshift_rpm);
    return;
  }
  for (int g = 1; g < p->n_gears; g++) {
    double bound = p->upshift_rpm * p->ratios[g] / p->ratios[g - 1];
    if (p->downshift_rpm < bound)
      continue;
    yfail(c, down ? down : up ? up : sh, DG_ERR_RANGE, "/powertrain/shift/downshift_rpm",
          "must be < %g (upshift_rpm %g x %g/%g, the step from gear %d to %d) so that an "
          "upshift does not shift straight back down (got %g)",
          bound, p->upshift_rpm, p->ratios[g], p->ratios[g - 1], g, g + 1, p->downshift_rpm);
    return;
  }
  if (p->upshift_rpm > p->redline_rpm)
    ynote(c, up ? up : sh, true,
          "powertrain.shift.upshift_rpm %g is above redline_rpm %g: the rev limiter cuts in "
          "before the upshift",
          p->upshift_rpm, p->redline_rpm);
}

static void read_powertrain(yctx *c, const yaml_node_t *pt, ypowertrain *p) {
  *p = (ypowertrain){.idle_rpm = POWERTRAIN_IDLE_RPM,
                     .redline_rpm = POWERTRAIN_REDLINE_RPM,
                     .inertia = POWERTRAIN_INERTIA,
                     .n_gears = COUNT(powertrain_ratios),
                     .reverse = POWERTRAIN_REVERSE,
                     .final_drive = POWERTRAIN_FINAL_DRIVE,
                     .efficiency = POWERTRAIN_EFFICIENCY,
                     .shift_time = POWERTRAIN_SHIFT_TIME,
                     .upshift_rpm = POWERTRAIN_UPSHIFT_RPM,
                     .downshift_rpm = POWERTRAIN_DOWNSHIFT_RPM};
  memcpy(p->ratios, powertrain_ratios, sizeof powertrain_ratios);
  ycheck_keys(c, pt, "/powertrain", powertrain_keys, COUNT(powertrain_keys), NULL, 0);
  yaml_node_t *eng = yrequire(c, pt, "/powertrain", "engine", "the engine and its torque map");
  if (eng)
    read_engine(c, eng, p);
  yaml_node_t *gb = yget(c, pt, "gearbox");
  if (gb && !c->failed)
    read_gearbox(c, gb, p);
  else if (!c->failed)
    dgp_import_notify(c->notes, c->user, c->file, 0, 0, false,
                     "powertrain.gearbox not given: the default sedan's 5-speed gearbox");
  yaml_node_t *sh = yget(c, pt, "shift");
  if (sh && !c->failed)
    read_shift(c, sh, gb, p);
  else if (!c->failed)
    dgp_import_notify(c->notes, c->user, c->file, 0, 0, false,
                     "powertrain.shift not given: mode manual (the gear input selects the gear)");
  yaml_node_t *cl = yget(c, pt, "clutch");
  if (cl && !c->failed && ymapping(c, cl, "/powertrain/clutch")) {
    ycheck_keys(c, cl, "/powertrain/clutch", clutch_keys, COUNT(clutch_keys), NULL, 0);
    p->has_clutch_torque =
        ynum(c, cl, "/powertrain/clutch", "max_torque", &POSITIVE, &p->clutch_torque);
    p->has_launch_rpm = ynum(c, cl, "/powertrain/clutch", "launch_rpm", &POSITIVE, &p->launch_rpm);
    if (p->has_launch_rpm && !(p->launch_rpm > p->idle_rpm))
      yfail(c, yget(c, cl, "launch_rpm"), DG_ERR_RANGE, "/powertrain/clutch/launch_rpm",
            "must be > idle_rpm (%g) (got %g)", p->idle_rpm, p->launch_rpm);
  }
}

/* ------------------------------------------------------------------------ */
/* Building the graph                                                       */

/* The automatic launch clutch between an engine and its gearbox. Defaults
 * (documented in docs/import.md): capacity 1.25 × the peak full-load
 * torque, so a locked clutch (static capacity × 1.1) holds the engine at
 * any throttle; fully engaged at the speed of peak torque, kept between
 * idle + 10 % and halfway to the redline of the engine's range, so a
 * full-throttle launch slips with the engine near its best torque. */
void dgp_import_launch_clutch(dg_import_graph *g, const char *doc, double idle_rpm,
                             double redline_rpm, double peak_torque, double peak_rpm,
                             double max_torque, double launch_rpm) {
  if (!(max_torque > 0.0))
    max_torque = 1.25 * (peak_torque > 1.0 ? peak_torque : 1.0);
  if (!(launch_rpm > idle_rpm)) {
    double lo = idle_rpm + 0.1 * (redline_rpm - idle_rpm), hi = 0.5 * (idle_rpm + redline_rpm);
    launch_rpm = peak_rpm < lo ? lo : peak_rpm > hi ? hi : peak_rpm;
  }
  json_t *cl = dgp_import_block(g, "clutch", "clutch", doc);
  dgp_import_set_str(g, cl, "mode", "auto");
  dgp_import_set_num(g, cl, "max_torque", max_torque);
  dgp_import_set_num(g, cl, "idle_rpm", idle_rpm);
  dgp_import_set_num(g, cl, "launch_rpm", launch_rpm);
}

static void build_powertrain(dg_import_graph *g, const ypowertrain *p) {
  json_t *e = dgp_import_block(g, "engine", "engine", NULL);
  dgp_import_set_num(g, e, "inertia", p->inertia);
  dgp_import_set_num(g, e, "idle_rpm", p->idle_rpm);
  dgp_import_set_num(g, e, "redline_rpm", p->redline_rpm);
  json_t *map = json_object(), *rows = json_array();
  dgp_import_set(g, map, "rpm", dgp_import_numbers(p->rpm, p->n_rpm));
  dgp_import_set(g, map, "throttle", dgp_import_numbers(p->throttle, p->n_throttle));
  for (int i = 0; rows && i < p->n_throttle; i++)
    if (json_array_append_new(rows, dgp_import_numbers(p->torque + i * p->n_rpm, p->n_rpm)) != 0)
      g->nomem = true;
  dgp_import_set(g, map, "torque", rows);
  dgp_import_set(g, e, "torque_map", map);

  double peak_rpm;
  const double *full = p->torque + (p->n_throttle - 1) * p->n_rpm;
  double peak = dgp_import_peak(p->rpm, full, p->n_rpm, &peak_rpm);
  dgp_import_launch_clutch(g, "automatic launch clutch: open at idle, closed at launch_rpm",
                          p->idle_rpm, p->redline_rpm, peak, peak_rpm,
                          p->has_clutch_torque ? p->clutch_torque : 0.0,
                          p->has_launch_rpm ? p->launch_rpm : 0.0);
  dgp_import_connect(g, "engine.out", "clutch.in");

  json_t *gb = dgp_import_block(g, "gearbox", "gearbox", NULL);
  dgp_import_set(g, gb, "ratios", dgp_import_numbers(p->ratios, p->n_gears));
  dgp_import_set_num(g, gb, "reverse", p->reverse);
  dgp_import_set_num(g, gb, "efficiency", p->efficiency);
  dgp_import_set_num(g, gb, "shift_time", p->shift_time);
  if (p->has_start_gear)
    dgp_import_set_int(g, gb, "start_gear", p->start_gear);
  json_t *shift = json_object();
  dgp_import_set_str(g, shift, "mode", p->automatic ? "auto_rpm" : "manual");
  if (p->automatic) {
    dgp_import_set_num(g, shift, "upshift_rpm", p->upshift_rpm);
    dgp_import_set_num(g, shift, "downshift_rpm", p->downshift_rpm);
  }
  dgp_import_set(g, gb, "shift", shift);
  dgp_import_connect(g, "clutch.out", "gearbox.in");
}

/* The older flat torque: throttle × max_motor_torque × final_drive_ratio. */
static void build_flat(yctx *c, dg_import_graph *g, const yaml_node_t *root, double *final_drive) {
  double torque = FLAT_MAX_TORQUE, inertia = FLAT_INERTIA;
  ynum(c, root, "", "max_motor_torque", &POSITIVE, &torque);
  ynum(c, root, "", "final_drive_ratio", &POSITIVE, final_drive);
  ynum(c, root, "", "engine_rotational_inertia", &NON_NEGATIVE, &inertia);
  ydefault(c, root, "max_motor_torque", "flat drive torque", torque, "N*m");
  ydefault(c, root, "final_drive_ratio", "final drive", *final_drive, "");
  if (!(inertia > 0.0)) {
    /* 0 meant "no engine inertia" there; a motor needs some, so a token
     * one that adds nothing measurable at the wheels */
    inertia = 1e-4;
    ynote(c, yget(c, root, "engine_rotational_inertia"), false,
          "engine_rotational_inertia 0: using %g kg*m^2 (a motor block needs some inertia)",
          inertia);
  }
  json_t *m = dgp_import_block(g, "motor", "motor",
                              "flat drive torque: throttle x max_torque, no power limit");
  dgp_import_set_num(g, m, "inertia", inertia);
  dgp_import_set_num(g, m, "max_torque", torque);
  dgp_import_set_num(g, m, "max_rpm", FLAT_MAX_RPM);
  dgp_import_set_bool(g, m, "reverse", true);
}

/* Loads the first YAML document of `path`; its root, or NULL with the
 * error set. */
static yaml_node_t *load_yaml(yctx *c, const char *path, yaml_document_t *doc, bool *loaded) {
  *loaded = false;
  size_t len;
  char why[DG_ERROR_TEXT_LEN];
  char *text = dgp_read_input(path, &len, why, sizeof why);
  if (!text) {
    c->failed = true;
    dgp_error_set(c->err, DG_ERR_IO, path, "", "%s", why);
    return NULL;
  }
  if (strlen(text) != len) {
    c->failed = true;
    dgp_error_set(c->err, DG_ERR_SYNTAX, path, "", "file contains a NUL byte; expected YAML text");
    free(text);
    return NULL;
  }
  yaml_parser_t parser;
  if (!yaml_parser_initialize(&parser)) {
    free(text);
    c->failed = true;
    dgp_error_set(c->err, DG_ERR_NOMEM, path, "", "out of memory");
    return NULL;
  }
  yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
  yaml_node_t *root = NULL;
  if (!yaml_parser_load(&parser, doc)) {
    c->failed = true;
    dgp_error_set(c->err, parser.error == YAML_MEMORY_ERROR ? DG_ERR_NOMEM : DG_ERR_SYNTAX, path,
                 "", "syntax error: %s%s%s", parser.problem ? parser.problem : "invalid YAML",
                 parser.context ? " " : "", parser.context ? parser.context : "");
    if (c->err) {
      c->err->line = (int)parser.problem_mark.line + 1;
      c->err->column = (int)parser.problem_mark.column + 1;
    }
  } else {
    *loaded = true;
    c->doc = doc;
    root = yaml_document_get_root_node(doc);
    if (!root) {
      c->failed = true;
      dgp_error_set(c->err, DG_ERR_SYNTAX, path, "",
                   "empty file, expected a mapping of vehicle parameters");
      if (c->err)
        c->err->line = c->err->column = 1;
    } else {
      yaml_document_t next;
      if (yaml_parser_load(&parser, &next)) {
        yaml_node_t *extra = yaml_document_get_root_node(&next);
        if (extra) {
          yfail(c, extra, DG_ERR_SYNTAX, "",
                "a second YAML document; the config must be a single document");
          root = NULL;
        }
        yaml_document_delete(&next);
      } else {
        yfail(c, NULL, DG_ERR_SYNTAX, "", "syntax error after the first document: %s",
              parser.problem ? parser.problem : "invalid YAML");
        if (c->err) {
          c->err->line = (int)parser.problem_mark.line + 1;
          c->err->column = (int)parser.problem_mark.column + 1;
        }
        root = NULL;
      }
      if (root && root->type != YAML_MAPPING_NODE) {
        char buf[64];
        yfail(c, root, DG_ERR_SCHEMA, "", "expected a mapping of vehicle parameters, got %s",
              describe(root, buf, sizeof buf));
        root = NULL;
      }
    }
  }
  yaml_parser_delete(&parser);
  free(text);
  return c->failed ? NULL : root;
}

/* `enabled: false` turns a powertrain block off (the flat torque then). */
static bool powertrain_enabled(yctx *c, const yaml_node_t *pt) {
  yaml_node_t *en = yget(c, pt, "enabled");
  if (!en)
    return true;
  int b = as_bool(en);
  if (b < 0) {
    char buf[64];
    yfail(c, en, DG_ERR_SCHEMA, "/powertrain/enabled", "expected true or false, got %s",
          describe(en, buf, sizeof buf));
    return false;
  }
  if (!b)
    ynote(c, en, false, "powertrain.enabled is false: using the flat drive torque");
  return b == 1;
}

static const char *base_name(const char *path) {
  const char *s = strrchr(path, '/');
  return s ? s + 1 : path;
}

char *dg_import_yaml_to_json(const char *path, dg_diag_fn notes, void *user, dg_error *err) {
  dgp_error_clear(err);
  if (!path) {
    dgp_error_set(err, DG_ERR_USAGE, "", "", "no file name given");
    return NULL;
  }
  yctx c = {.file = path, .err = err, .notes = notes, .user = user, .arena = dgp_arena_new()};
  if (!c.arena) {
    dgp_error_set(err, DG_ERR_NOMEM, path, "", "out of memory");
    return NULL;
  }
  yaml_document_t doc;
  bool loaded;
  yaml_node_t *root = load_yaml(&c, path, &doc, &loaded);
  char *json = NULL;
  dg_import_graph g = {0};
  if (root) {
    ycheck_keys(&c, root, "", vehicle_keys, NUM_VEHICLE_KEYS, vehicle_ignored,
                NUM_VEHICLE_IGNORED);
    dg_import_vehicle v;
    dgp_import_vehicle_default(&v);
    read_vehicle(&c, root, &v);
    yaml_node_t *pt = yget(&c, root, "powertrain");
    if (pt && !c.failed && !ymapping(&c, pt, "/powertrain"))
      pt = NULL;
    bool with_powertrain = pt && !c.failed && powertrain_enabled(&c, pt);
    ypowertrain p;
    if (with_powertrain) {
      read_powertrain(&c, pt, &p);
      static const char *const legacy[] = {"max_motor_torque", "final_drive_ratio",
                                           "engine_rotational_inertia"};
      for (int i = 0; i < COUNT(legacy) && !c.failed; i++)
        if (yget(&c, root, legacy[i]))
          ynote(&c, yget(&c, root, legacy[i]), false,
                "%s: ignored (the powertrain block defines the drive)", legacy[i]);
    }
    const char *name = yscalar(yget(&c, root, "name"));
    const char *desc = yscalar(yget(&c, root, "description"));
    char title[256], about[512];
    snprintf(title, sizeof title, "%s", name ? name : base_name(path));
    snprintf(about, sizeof about,
             "%s; imported by `drivegraph import` from %s (%s drive, %s differential%s)",
             desc ? desc
                  : with_powertrain ? "Vehicle config with an engine and gearbox"
                                    : "Vehicle config with a flat drive torque",
             base_name(path), v.drive == DG_DRIVE_FWD ? "front-wheel"
                              : v.drive == DG_DRIVE_RWD ? "rear-wheel" : "all-wheel",
             v.diff == DG_DIFF_OPEN ? "open" : v.diff == DG_DIFF_LOCKED ? "locked" : "limited-slip",
             v.drive == DG_DRIVE_AWD ? " axles, open centre differential" : "");
    if (!c.failed && !dgp_import_graph_init(&g, title, about))
      yfail(&c, NULL, DG_ERR_NOMEM, "", "out of memory");
    if (!c.failed) {
      if (with_powertrain) {
        build_powertrain(&g, &p);
        dgp_import_driveline(&g, &v, "gearbox.out", p.final_drive, 0.0);
      } else {
        double fd = FLAT_FINAL_DRIVE;
        build_flat(&c, &g, root, &fd);
        dgp_import_driveline(&g, &v, "motor.out", fd, 0.0);
      }
    }
    if (!c.failed && !g.nomem)
      json = dgp_import_dump(g.root);
    if (!c.failed && !json)
      dgp_error_set(err, DG_ERR_NOMEM, path, "", "out of memory");
  }
  dgp_import_graph_free(&g);
  if (loaded)
    yaml_document_delete(&doc);
  dgp_arena_free(c.arena);
  return json;
}

dg_graph *dg_graph_import_yaml(const dg_registry *reg, const char *path, dg_error *err) {
  char *json = dg_import_yaml_to_json(path, NULL, NULL, err);
  if (!json)
    return NULL;
  dg_graph *g = dgp_import_load(reg, json, path, err);
  free(json);
  return g;
}

/* Ignored keys of a --vehicle config's powertrain block. */
int dgp_import_yaml_vehicle(const char *path, dg_import_vehicle *v, double *final_drive,
                           bool *has_final_drive, dg_diag_fn notes, void *user, dg_error *err) {
  dgp_error_clear(err);
  dgp_import_vehicle_default(v);
  *has_final_drive = false;
  yctx c = {.file = path, .err = err, .notes = notes, .user = user, .arena = dgp_arena_new()};
  if (!c.arena) {
    dgp_error_set(err, DG_ERR_NOMEM, path, "", "out of memory");
    return DG_ERR_NOMEM;
  }
  yaml_document_t doc;
  bool loaded;
  yaml_node_t *root = load_yaml(&c, path, &doc, &loaded);
  if (root) {
    ycheck_keys(&c, root, "", vehicle_keys, NUM_VEHICLE_KEYS, vehicle_ignored,
                NUM_VEHICLE_IGNORED);
    read_vehicle(&c, root, v);
    yaml_node_t *pt = yget(&c, root, "powertrain");
    yaml_node_t *gb = pt && pt->type == YAML_MAPPING_NODE ? yget(&c, pt, "gearbox") : NULL;
    if (gb && gb->type == YAML_MAPPING_NODE && yget(&c, gb, "final_drive"))
      *has_final_drive =
          ynum(&c, gb, "/powertrain/gearbox", "final_drive", &POSITIVE, final_drive);
    else if (yget(&c, root, "final_drive_ratio"))
      *has_final_drive = ynum(&c, root, "", "final_drive_ratio", &POSITIVE, final_drive);
    if (pt && !c.failed)
      ynote(&c, pt, false,
            "powertrain: ignored except gearbox.final_drive (the Chrono files define the "
            "engine and the transmission)");
    static const char *const legacy[] = {"max_motor_torque", "engine_rotational_inertia"};
    for (int i = 0; i < COUNT(legacy) && !c.failed; i++)
      if (yget(&c, root, legacy[i]))
        ynote(&c, yget(&c, root, legacy[i]), false,
              "%s: ignored (the Chrono files define the engine)", legacy[i]);
  }
  if (loaded)
    yaml_document_delete(&doc);
  dgp_arena_free(c.arena);
  return c.failed ? (err && err->code ? err->code : DG_ERR_SCHEMA) : DG_OK;
}
