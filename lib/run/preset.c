/* Preset drivers (drivegraph.h, "Preset drivers"): `drivegraph sim --preset`
 * and the Python package's simulate(preset=...) drive the car a graph
 * describes without a scenario file. They find the blocks by the graph's
 * structure (the first vehicle, the engine or motor, the gearbox and clutch
 * nearest downstream of it) and read the few parameters they need (idle
 * and redline speeds, gear ratios, shift mode, clutch mode, wheel radii)
 * from the graph's JSON text, else from the class defaults:
 *
 *   launch  full throttle from rest until 400 m are covered at 100 km/h or
 *           more (or the time limit). The engine starts at idle. A manual
 *           gearbox gets gear input 1; a pedal clutch starts pressed and is
 *           released linearly over LAUNCH_CLUTCH_S while the throttle is
 *           already full, so the engine is at high rpm when the clutch bites
 *           (a slipping launch that cannot stall it). The driver then
 *           shifts a manual box up near the redline: throttle off and clutch
 *           in, next gear, clutch out with the throttle back on once the
 *           box has engaged it (its synchronizer may need longer than
 *           shift_time; a box without a pedal clutch just gets the next
 *           gear input).
 *   coast   closed throttle from the start speed (default 100 km/h) until
 *           below 1 km/h (or the time limit). The car starts rolling in the
 *           highest gear that keeps the engine above its idle (automatics:
 *           above the downshift speed) — start_gear in a copy of the graph —
 *           with every speed consistent: dg_sim_set_initial on the body's
 *           speed and the magic-formula wheels' hubs, then on the engine at
 *           the speed of the clutch's or converter's output. A manual car is
 *           declutched (or put in neutral) when the engine falls to
 *           DECLUTCH_FACTOR × idle, as a driver would, to not stall it.
 *   brake   full brake from the start speed until at rest (or the time
 *           limit), started like coast; a manual car's clutch is pressed at
 *           once. */
#include "internal.h"

#include <drivegraph/block.h>
#include <drivegraph/drivegraph.h>

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RPM_PER_RAD_S (30.0 / 3.14159265358979323846)

enum { PRESET_LAUNCH = 1, PRESET_COAST, PRESET_BRAKE, NUM_PRESETS };
static const char *const preset_names[NUM_PRESETS] = {"", "launch", "coast", "brake"};
/* Time limits (s). */
static const double preset_limit[NUM_PRESETS] = {0, 60, 300, 30};

#define DEFAULT_FROM_SPEED_KMH 100.0
#define LAUNCH_CLUTCH_S 1.0  /* pedal released 1 → 0 over this time, throttle full */
#define COAST_STOP (1.0 / 3.6) /* m/s: the coast-down ends below 1 km/h, */
/* or when the speed stays within COAST_STEADY (m/s) over COAST_STEADY_S
 * below COAST_STEADY_MAX: an automatic creeping at idle never stops. */
#define COAST_STEADY 0.01
#define COAST_STEADY_S 5.0
#define COAST_STEADY_MAX (30.0 / 3.6)
#define DECLUTCH_FACTOR 1.3  /* manual coast: clutch in at this × idle rpm */
#define SHIFT_FRACTION 0.96  /* manual launch: upshift at this × redline ... */
#define SHIFT_MARGIN_RPM 150 /* ... but at least this far below it */
/* A driver's manual upshift, from its start: pedal in and throttle off over
 * SHIFT_IN_S, the lever at SHIFT_LEVER_S, pedal out and throttle on over
 * SHIFT_OUT_S once the box has finished: shift_time + SHIFT_WAIT_S after the
 * lever, or later where the box's shift (its signal `shifting`) lasts
 * longer, as its synchronizer may. */
#define SHIFT_IN_S 0.05
#define SHIFT_LEVER_S 0.1
#define SHIFT_WAIT_S 0.05
#define SHIFT_OUT_S 0.3
/* Gear choice at speed: engine at least this × idle (manual) or this ×
 * downshift rpm (automatic). */
#define GEAR_IDLE_FACTOR 1.5
#define GEAR_DOWNSHIFT_FACTOR 1.05

struct dg_preset {
  int kind;
  json_t *json;           /* the graph's text, for parameters */
  dg_registry *own_reg;   /* the built-in classes when the caller gave none */
  const dg_registry *reg; /* the run's classes, for parameter defaults */
  dg_graph *graph;        /* coast and brake: the copy with start_gear; else NULL */
  const dg_graph *base;   /* the graph given */
  const char *file;       /* named in errors: the graph's file */
  const char *vehicle, *engine, *gearbox, *clutch; /* block ids or NULL */
  bool manual;            /* the gearbox follows the gear input */
  bool pedal_clutch;      /* the clutch is worked by the pedal */
  int ngears;
  double idle_rpm, redline_rpm, shift_rpm, shift_time;
  double v0;              /* m/s: coast and brake start speed */
  int id_speed, id_x, id_rpm;
  int id_shifting;        /* the gearbox's `shifting`, or -1 */
  /* the driver */
  int gear;               /* gear input (manual box) */
  int shift_phase;        /* 0 none, 1 an upshift in progress */
  double shift_start;
  bool lever_moved;       /* the upshift in progress has moved the lever */
  double box_done;        /* since its start: the box's shift ended (s), or NAN */
  bool declutched;
  double declutch_start;
  double steady_t, steady_v; /* coast: last check of a steady speed */
};

/* ------------------------------------------------------------------------ */
/* The graph's blocks and parameters                                        */

static int find_type(const dg_graph *g, const char *type) {
  for (int i = 0; i < dg_graph_block_count(g); i++)
    if (strcmp(dg_graph_block_type(g, i), type) == 0)
      return i;
  return -1;
}

static int count_type(const dg_graph *g, const char *type) {
  int n = 0;
  for (int i = 0; i < dg_graph_block_count(g); i++)
    n += strcmp(dg_graph_block_type(g, i), type) == 0;
  return n;
}

static const char *first_id(const dg_graph *g, const char *type) {
  int i = find_type(g, type);
  return i >= 0 ? dg_graph_block_id(g, i) : NULL;
}

/* The definition of a parameter "key" or "object.key" in a table. */
static const dg_param_def *param_def(const dg_param_def *defs, const char *key) {
  const char *dot = strchr(key, '.');
  size_t len = dot ? (size_t)(dot - key) : strlen(key);
  for (; defs && defs->key; defs++) {
    if (strlen(defs->key) != len || strncmp(defs->key, key, len) != 0)
      continue;
    if (!dot)
      return defs;
    return defs->kind == DG_PARAM_OBJECT ? param_def(defs->fields, dot + 1) : NULL;
  }
  return NULL;
}

/* The JSON value of a block parameter "key" or "object.key", or NULL. */
static json_t *param_json(const dg_preset *ps, const char *block, const char *key) {
  json_t *v = json_object_get(json_object_get(ps->json, "blocks"), block);
  char buf[128];
  snprintf(buf, sizeof buf, "%s", key);
  for (char *save = NULL, *tok = strtok_r(buf, ".", &save); tok && v;
       tok = strtok_r(NULL, ".", &save))
    v = json_object_get(v, tok);
  return v;
}

static const dg_param_def *class_param(const dg_preset *ps, const char *type, const char *key) {
  const dg_block_class *k = dg_registry_find(ps->reg, type);
  return k ? param_def(k->params, key) : NULL;
}

/* A number parameter: the file's value, else the class default (NaN for a
 * parameter without one). */
static double param_number(const dg_preset *ps, const char *block, const char *type,
                           const char *key) {
  json_t *v = param_json(ps, block, key);
  if (json_is_number(v))
    return json_number_value(v);
  const dg_param_def *d = class_param(ps, type, key);
  return d && !d->required && (d->kind == DG_PARAM_NUMBER || d->kind == DG_PARAM_INTEGER) &&
                 !d->present
             ? d->def
             : NAN;
}

/* An enum parameter's value name: the file's, else the class default. */
static const char *param_enum(const dg_preset *ps, const char *block, const char *type,
                              const char *key) {
  json_t *v = param_json(ps, block, key);
  if (json_is_string(v))
    return json_string_value(v);
  const dg_param_def *d = class_param(ps, type, key);
  return d && d->kind == DG_PARAM_ENUM && d->choices ? d->choices[(int)d->def] : "";
}

/* The block of `id` in g, or -1. */
static int block_index(const dg_graph *g, const char *id, size_t len) {
  for (int b = 0; b < dg_graph_block_count(g); b++) {
    const char *bid = dg_graph_block_id(g, b);
    if (strlen(bid) == len && strncmp(bid, id, len) == 0)
      return b;
  }
  return -1;
}

/* The id of the nearest block of `type` downstream of block `from`. */
static const char *downstream_of(const dg_graph *g, const char *from, const char *type) {
  int b = dg_graph_downstream(g, block_index(g, from, strlen(from)), type);
  return b >= 0 ? dg_graph_block_id(g, b) : NULL;
}

/* The blocks a preset drives, found by the graph's structure (ids owned by
 * g): the vehicle and the engine (or motor) where there is one of each,
 * the gearbox and the clutch nearest downstream of the engine. */
static void find_blocks(dg_preset *ps, const dg_graph *g) {
  ps->vehicle = first_id(g, "vehicle");
  ps->engine = first_id(g, "engine");
  const char *source = ps->engine ? ps->engine : first_id(g, "motor");
  ps->gearbox = source ? downstream_of(g, source, "gearbox") : first_id(g, "gearbox");
  ps->clutch = source ? downstream_of(g, source, "clutch") : first_id(g, "clutch");
}

/* The blocks of `type` whose input `input` follows `channel`, listed into
 * buf as "\"a\", \"b\""; their number. */
static int followers(const dg_graph *g, const char *type, const char *input, const char *channel,
                     char *buf, size_t size) {
  int n = 0;
  size_t used = 0;
  buf[0] = '\0';
  for (int b = 0; b < dg_graph_block_count(g); b++) {
    const char *ch = dg_graph_input_channel(g, b, input);
    if (strcmp(dg_graph_block_type(g, b), type) != 0 || !ch || strcmp(ch, channel) != 0)
      continue;
    if (used < size)
      used += (size_t)snprintf(buf + used, size - used, "%s\"%s\"", n ? ", " : "",
                               dg_graph_block_id(g, b));
    n++;
  }
  return n;
}

/* Whether the preset can drive the graph: it works the channels throttle,
 * brake, clutch and gear for one engine, clutch and gearbox, so every
 * gearbox or pedal clutch beyond those must follow channels of its own,
 * and every channel the graph binds by name must be given by the caller.
 * Each problem goes to d. */
static void check_graph(const dg_preset *ps, const dg_graph *g, int n_given,
                        const char *const *given, dg_diag *d) {
  char list[512];
  /* motors need nothing of the preset but the throttle they all follow;
   * an engine's idle and redline set the start and the shift points */
  if (count_type(g, "engine") > 1)
    dgp_diag_add(d, DG_ERR_USAGE, "",
                "%s has %d engines; a preset starts and shifts for one: use --scenario",
                ps->file, count_type(g, "engine"));
  if (followers(g, "gearbox", "gear", "gear", list, sizeof list) > 1)
    dgp_diag_add(d, DG_ERR_USAGE, "",
                "gearboxes %s all follow the channel \"gear\", which the preset works as the "
                "lever of one (\"%s\", the one the engine drives); bind the others' gear input "
                "to a channel of its own (\"inputs\": { \"gear\": \"range\" }) and give it with "
                "--input range=1",
                list, ps->gearbox ? ps->gearbox : "?");
  if (ps->gearbox) {
    const char *ch = dg_graph_input_channel(g, block_index(g, ps->gearbox, strlen(ps->gearbox)),
                                            "gear");
    if (!ch || strcmp(ch, "gear") != 0)
      dgp_diag_add(d, DG_ERR_USAGE, "",
                  "the gearbox \"%s\" does not follow the channel \"gear\" the preset "
                  "works%s%s%s: use --scenario",
                  ps->gearbox, ch ? " (it follows \"" : "", ch ? ch : "", ch ? "\")" : "");
  }
  if (followers(g, "clutch", "pedal", "clutch", list, sizeof list) > 1)
    dgp_diag_add(d, DG_ERR_USAGE, "",
                "clutches %s all follow the pedal channel \"clutch\"; the preset works one "
                "pedal: bind the others' pedal (or engagement) to channels of their own, or "
                "use --scenario",
                list);
  for (int c = 0; c < dg_graph_channel_count(g); c++) {
    const char *ch = dg_graph_channel_name(g, c);
    bool is_given = false;
    for (int i = 0; i < n_given && !is_given; i++)
      is_given = given[i] && strcmp(given[i], ch) == 0;
    if (!is_given)
      dgp_diag_add(d, DG_ERR_USAGE, "",
                  "the graph binds the channel \"%s\" (%s), which the preset does not drive: "
                  "give it with --input %s=VALUE, or use --scenario",
                  ch, dg_graph_channel_path(g, c), ch);
  }
}

/* Reads the parameters. DG_OK or an error in d. */
static int read_params(dg_preset *ps, const char *graph_json, double from_kmh, dg_diag *d) {
  json_error_t jerr;
  ps->json = json_loads(graph_json, JSON_REJECT_DUPLICATES, &jerr);
  if (!ps->json) {
    dgp_diag_add(d, DG_ERR_SYNTAX, "", "%d:%d: %s", jerr.line, jerr.column, jerr.text);
    return DG_ERR_SYNTAX;
  }
  if (ps->engine) {
    ps->idle_rpm = param_number(ps, ps->engine, "engine", "idle_rpm");
    ps->redline_rpm = param_number(ps, ps->engine, "engine", "redline_rpm");
    ps->shift_rpm = fmin(SHIFT_FRACTION * ps->redline_rpm, ps->redline_rpm - SHIFT_MARGIN_RPM);
  }
  if (ps->gearbox) {
    ps->manual = strcmp(param_enum(ps, ps->gearbox, "gearbox", "shift.mode"), "manual") == 0;
    ps->ngears = (int)json_array_size(param_json(ps, ps->gearbox, "ratios"));
    ps->shift_time = param_number(ps, ps->gearbox, "gearbox", "shift_time");
    if (isnan(ps->shift_time))
      ps->shift_time = 0.0;
  }
  if (ps->clutch)
    ps->pedal_clutch = strcmp(param_enum(ps, ps->clutch, "clutch", "mode"), "pedal") == 0;
  double kmh = !isnan(from_kmh) ? from_kmh : DEFAULT_FROM_SPEED_KMH;
  ps->v0 = kmh / 3.6;
  ps->gear = 1;
  return DG_OK;
}

/* The clutch or torque converter the engine drives directly (its id), or
 * NULL when the engine is rigidly connected or there is no engine. */
static const char *slipping_element(const dg_preset *ps, const dg_graph *g) {
  if (!ps->engine)
    return NULL;
  size_t len = strlen(ps->engine);
  for (int i = 0; i < dg_graph_connection_count(g); i++) {
    const char *from, *to;
    dg_graph_connection(g, i, &from, &to);
    if (strncmp(from, ps->engine, len) != 0 || from[len] != '.')
      continue;
    for (int b = 0; b < dg_graph_block_count(g); b++) {
      const char *id = dg_graph_block_id(g, b), *type = dg_graph_block_type(g, b);
      size_t n = strlen(id);
      if (strncmp(to, id, n) == 0 && to[n] == '.' &&
          (strcmp(type, "clutch") == 0 || strcmp(type, "torque_converter") == 0))
        return id;
    }
  }
  return NULL;
}

/* Sets the body's speed and every magic-formula wheel's hub speed to v
 * (rolling tyres follow the body by their own constraint), then, when
 * `engine_too`, the engine to the speed of what it drives through a clutch
 * or converter. DG_OK or an error in err. */
static int set_rolling(const dg_preset *ps, dg_sim *sim, double v, bool engine_too,
                       dg_error *err) {
  const dg_graph *g = dg_sim_graph(sim);
  int n = dg_graph_block_count(g);
  int *ids = malloc((size_t)(n + 2) * sizeof *ids);
  double *vals = malloc((size_t)(n + 2) * sizeof *vals);
  if (!ids || !vals) {
    free(ids);
    free(vals);
    dgp_error_set(err, DG_ERR_NOMEM, ps->file, "", "out of memory");
    return DG_ERR_NOMEM;
  }
  int k = 0;
  char name[256];
  snprintf(name, sizeof name, "%s.speed", ps->vehicle);
  ids[k] = dg_sim_signal_find(sim, name);
  vals[k++] = v;
  for (int i = 0; i < n; i++) {
    const char *id = dg_graph_block_id(g, i);
    if (strcmp(dg_graph_block_type(g, i), "wheel") != 0 ||
        strcmp(param_enum(ps, id, "wheel", "tyre.model"), "magic_formula") != 0)
      continue;
    double radius = param_number(ps, id, "wheel", "radius"); /* required: in the file */
    snprintf(name, sizeof name, "%s.omega", id);
    ids[k] = dg_sim_signal_find(sim, name);
    vals[k++] = v / radius;
  }
  dg_error e;
  int rc = dg_sim_set_initial(sim, k, ids, vals, &e);
  const char *slipper = engine_too ? slipping_element(ps, g) : NULL;
  if (rc == DG_OK && slipper) {
    /* A second pass: the speeds above are kept and the engine joins the
     * shaft behind its clutch or converter. */
    snprintf(name, sizeof name, "%s.out", slipper);
    double w = dg_sim_port_speed(sim, name);
    snprintf(name, sizeof name, "%s.rpm", ps->engine);
    ids[k] = dg_sim_signal_find(sim, name);
    vals[k++] = w * RPM_PER_RAD_S;
    if (ids[k - 1] >= 0 && isfinite(w))
      rc = dg_sim_set_initial(sim, k, ids, vals, &e);
  }
  free(ids);
  free(vals);
  if (rc != DG_OK && err) {
    /* the cause, with the speed the preset could not start at */
    char cause[DG_ERROR_FILE_LEN + DG_ERROR_PATH_LEN + DG_ERROR_TEXT_LEN + 32];
    if (!e.file[0])
      snprintf(e.file, sizeof e.file, "%s", ps->file);
    dg_error_format(&e, cause, sizeof cause);
    dgp_error_set(err, rc, "", "", "cannot start at %g km/h: %s", 3.6 * v, cause);
  }
  return rc;
}

/* The gear a driver would be in at speed v0 with the throttle closed: the
 * highest one that keeps the engine above GEAR_IDLE_FACTOR × idle (manual)
 * or above the downshift speed (auto_rpm), and below the redline; 1 when
 * none does. The gearbox output speed comes from a trial simulation.
 * -1 with err filled on failure. */
static int choose_gear(const dg_preset *ps, dg_error *err) {
  dg_sim *trial = dg_sim_new(ps->base, err);
  if (!trial)
    return -1;
  int gear = 1;
  if (set_rolling(ps, trial, ps->v0, false, err) != DG_OK) {
    dg_sim_free(trial);
    return -1;
  }
  char name[256];
  snprintf(name, sizeof name, "%s.omega_out", ps->gearbox);
  double w_out = dg_sim_signal(trial, dg_sim_signal_find(trial, name));
  dg_sim_free(trial);
  double floor = GEAR_IDLE_FACTOR * (isnan(ps->idle_rpm) ? 800.0 : ps->idle_rpm);
  double ceiling = isnan(ps->redline_rpm) ? INFINITY : ps->redline_rpm - SHIFT_MARGIN_RPM;
  if (!ps->manual) {
    double down = param_number(ps, ps->gearbox, "gearbox", "shift.downshift_rpm");
    double up = param_number(ps, ps->gearbox, "gearbox", "shift.upshift_rpm");
    if (!isnan(down))
      floor = fmax(floor, GEAR_DOWNSHIFT_FACTOR * down);
    if (!isnan(up))
      ceiling = fmin(ceiling, up);
  }
  json_t *ratios = param_json(ps, ps->gearbox, "ratios");
  for (int g = ps->ngears; g >= 1; g--) {
    double rpm = w_out * json_number_value(json_array_get(ratios, (size_t)(g - 1))) * RPM_PER_RAD_S;
    if (rpm >= floor && rpm <= ceiling) {
      gear = g;
      break;
    }
  }
  return gear;
}

/* Coast and brake start in gear: a copy of the graph with that start_gear. */
static int start_gear(dg_preset *ps, dg_error *err) {
  if (!ps->gearbox || ps->ngears < 1)
    return DG_OK;
  int gear = choose_gear(ps, err);
  if (gear < 0)
    return err ? err->code : DG_ERR_USAGE;
  ps->gear = gear;
  json_t *blk = json_object_get(json_object_get(ps->json, "blocks"), ps->gearbox);
  if (json_object_set_new(blk, "start_gear", json_integer(gear)) != 0) {
    dgp_error_set(err, DG_ERR_NOMEM, ps->file, "", "out of memory");
    return DG_ERR_NOMEM;
  }
  char *text = json_dumps(ps->json, JSON_REAL_PRECISION(17));
  if (!text) {
    dgp_error_set(err, DG_ERR_NOMEM, ps->file, "", "out of memory");
    return DG_ERR_NOMEM;
  }
  /* The base graph passed the every-mode check; this copy differs only in
   * the gearbox's start mode, which changes no combination's verdict. */
  ps->graph = dgp_graph_load_string_opts(ps->reg, text, ps->file, DG_LOAD_NO_MODE_CHECK, err);
  free(text);
  if (!ps->graph)
    return err ? err->code : DG_ERR_USAGE;
  find_blocks(ps, ps->graph); /* the ids of the graph the run uses */
  return DG_OK;
}

/* ------------------------------------------------------------------------ */
/* Public API                                                               */

int dg_preset_find(const char *name) {
  for (int k = PRESET_LAUNCH; name && k < NUM_PRESETS; k++)
    if (strcmp(preset_names[k], name) == 0)
      return k;
  return 0;
}

dg_preset *dg_preset_new(const dg_registry *reg, const dg_graph *graph, const char *graph_json,
                         const char *name, double from_speed_kmh, int n_given,
                         const char *const *given, dg_diag_fn fn, void *user, dg_error *err) {
  /* the messages name the file where they need to; the tool prefixes them
   * with its option ("drivegraph sim: --preset launch: ...") */
  dg_diag d;
  dgp_diag_init(&d, "", fn, user);
  int kind = dg_preset_find(name);
  if (!graph || !graph_json || !kind) {
    if (!kind)
      dgp_diag_add(&d, DG_ERR_USAGE, "", "unknown preset \"%s\" (presets: launch, coast, brake)",
                  name ? name : "(null)");
    else
      dgp_diag_add(&d, DG_ERR_USAGE, "", "a preset needs the graph and its JSON text");
    dgp_diag_to_error(&d, err);
    return NULL;
  }
  dg_preset *ps = calloc(1, sizeof *ps);
  if (!ps) {
    dgp_diag_add(&d, DG_ERR_NOMEM, "", "out of memory");
    dgp_diag_to_error(&d, err);
    return NULL;
  }
  ps->kind = kind;
  ps->base = graph;
  ps->file = dg_graph_file(graph);
  ps->reg = reg;
  if (!reg) {
    ps->own_reg = dg_registry_new();
    ps->reg = ps->own_reg;
  }
  ps->id_speed = ps->id_x = ps->id_rpm = ps->id_shifting = -1;
  find_blocks(ps, graph);
  check_graph(ps, graph, n_given, given, &d);
  if (d.count == 0 && !ps->vehicle)
    dgp_diag_add(&d, DG_ERR_USAGE, "",
                "%s has no vehicle block (type \"vehicle\"); presets drive a vehicle: use "
                "--scenario for a test rig",
                ps->file);
  if (d.count == 0 && !ps->reg)
    dgp_diag_add(&d, DG_ERR_NOMEM, "", "out of memory");
  if (d.count == 0)
    read_params(ps, graph_json, from_speed_kmh, &d);
  if (d.count > 0) {
    dgp_diag_to_error(&d, err);
    dg_preset_free(ps);
    return NULL;
  }
  if (kind == PRESET_COAST || kind == PRESET_BRAKE) {
    dg_error e;
    if (start_gear(ps, &e) != DG_OK) {
      if (fn)
        fn(&e, user);
      if (err)
        *err = e;
      dg_preset_free(ps);
      return NULL;
    }
  }
  return ps;
}

void dg_preset_free(dg_preset *ps) {
  if (!ps)
    return;
  json_decref(ps->json);
  dg_graph_free(ps->graph);
  dg_registry_free(ps->own_reg);
  free(ps);
}

const dg_graph *dg_preset_graph(const dg_preset *ps) { return ps->graph ? ps->graph : ps->base; }

const char *dg_preset_name(const dg_preset *ps) { return preset_names[ps->kind]; }

double dg_preset_time_limit(const dg_preset *ps) { return preset_limit[ps->kind]; }

double dg_preset_start_speed(const dg_preset *ps) {
  return ps->kind == PRESET_LAUNCH ? 0.0 : ps->v0;
}

double dg_preset_rest_speed(const dg_preset *ps) {
  return ps->kind == PRESET_COAST ? COAST_STOP : DG_SUMMARY_REST;
}

int dg_preset_start(dg_preset *ps, dg_sim *sim, dg_error *err) {
  char name[256];
  snprintf(name, sizeof name, "%s.speed", ps->vehicle);
  ps->id_speed = dg_sim_signal_find(sim, name);
  snprintf(name, sizeof name, "%s.x", ps->vehicle);
  ps->id_x = dg_sim_signal_find(sim, name);
  ps->id_rpm = ps->id_shifting = -1;
  if (ps->engine) {
    snprintf(name, sizeof name, "%s.rpm", ps->engine);
    ps->id_rpm = dg_sim_signal_find(sim, name);
  }
  if (ps->gearbox) {
    snprintf(name, sizeof name, "%s.shifting", ps->gearbox);
    ps->id_shifting = dg_sim_signal_find(sim, name);
  }
  if (ps->kind == PRESET_LAUNCH) {
    if (ps->id_rpm >= 0 && isfinite(ps->idle_rpm))
      return dg_sim_set_initial(sim, 1, &ps->id_rpm, &ps->idle_rpm, err);
    return DG_OK;
  }
  return set_rolling(ps, sim, ps->v0, true, err);
}

static double ramp(double t, double t0, double t1, double a, double b) {
  if (t <= t0)
    return a;
  if (t >= t1)
    return b;
  return a + (b - a) * (t - t0) / (t1 - t0);
}

void dg_preset_apply(dg_preset *ps, dg_sim *sim, double t) {
  double rpm = ps->id_rpm >= 0 ? dg_sim_signal(sim, ps->id_rpm) : NAN;
  double throttle = 0.0, brake = 0.0, pedal = 0.0;
  switch (ps->kind) {
  case PRESET_LAUNCH:
    throttle = 1.0;
    if (ps->pedal_clutch)
      pedal = ramp(t, 0.0, LAUNCH_CLUTCH_S, 1.0, 0.0);
    if (ps->manual && ps->shift_phase == 0 && ps->gear < ps->ngears && rpm >= ps->shift_rpm &&
        t >= LAUNCH_CLUTCH_S) {
      if (ps->pedal_clutch) {
        ps->shift_phase = 1;
        ps->shift_start = t;
        ps->lever_moved = false;
        ps->box_done = NAN;
      } else {
        ps->gear++; /* the box cuts the throttle itself */
      }
    }
    if (ps->shift_phase == 1) {
      double s = t - ps->shift_start;
      /* the box's shift started with the lever (applied at the step after
       * it moved) and has ended where `shifting` reads 0 again */
      if (ps->lever_moved && isnan(ps->box_done) && s > SHIFT_LEVER_S &&
          (ps->id_shifting < 0 || dg_sim_signal(sim, ps->id_shifting) == 0.0))
        ps->box_done = s;
      double out0 = SHIFT_LEVER_S + ps->shift_time + SHIFT_WAIT_S;
      if (isnan(ps->box_done))
        out0 = fmax(out0, s + SHIFT_WAIT_S); /* not yet: the pedal stays in */
      else
        out0 = fmax(out0, ps->box_done);
      if (s < out0) {
        pedal = ramp(s, 0.0, SHIFT_IN_S, 0.0, 1.0);
        throttle = ramp(s, 0.0, SHIFT_IN_S, 1.0, 0.0);
      } else {
        pedal = ramp(s, out0, out0 + SHIFT_OUT_S, 1.0, 0.0);
        throttle = ramp(s, out0, out0 + SHIFT_OUT_S, 0.0, 1.0);
      }
      if (s >= SHIFT_LEVER_S && !ps->lever_moved) {
        ps->gear++;
        ps->lever_moved = true;
      }
      if (s >= out0 + SHIFT_OUT_S)
        ps->shift_phase = 0;
    }
    break;
  case PRESET_COAST:
  case PRESET_BRAKE:
    brake = ps->kind == PRESET_BRAKE ? 1.0 : 0.0;
    if ((ps->manual || ps->pedal_clutch) && !ps->declutched &&
        (ps->kind == PRESET_BRAKE || (!isnan(rpm) && rpm <= DECLUTCH_FACTOR * ps->idle_rpm))) {
      ps->declutched = true;
      ps->declutch_start = t;
    }
    if (ps->declutched) {
      if (ps->pedal_clutch)
        pedal = ps->kind == PRESET_BRAKE ? 1.0 : ramp(t, ps->declutch_start,
                                                      ps->declutch_start + 0.2, 0.0, 1.0);
      else
        ps->gear = 0; /* a manual box without a pedal clutch: neutral */
    }
    break;
  default: break;
  }
  dg_sim_set_input(sim, DG_INPUT_THROTTLE, throttle);
  dg_sim_set_input(sim, DG_INPUT_BRAKE, brake);
  dg_sim_set_input(sim, DG_INPUT_CLUTCH, pedal);
  dg_sim_set_input(sim, DG_INPUT_GEAR, ps->manual ? (double)ps->gear : 1.0);
}

bool dg_preset_done(dg_preset *ps, const dg_sim *sim, double t, char *reason, size_t size) {
  double v = dg_sim_signal(sim, ps->id_speed);
  char dummy[1];
  if (!reason || size == 0) {
    reason = dummy;
    size = sizeof dummy;
  }
  switch (ps->kind) {
  case PRESET_LAUNCH:
    if (dg_sim_signal(sim, ps->id_x) >= DG_SUMMARY_X400 && v >= DG_SUMMARY_V100) {
      snprintf(reason, size, "preset launch: 400 m covered and 100 km/h reached");
      return true;
    }
    return false;
  case PRESET_COAST: {
    if (v <= COAST_STOP) {
      snprintf(reason, size, "preset coast: below 1 km/h");
      return true;
    }
    if (t - ps->steady_t < COAST_STEADY_S)
      return false;
    bool steady = fabs(v - ps->steady_v) < COAST_STEADY && v < COAST_STEADY_MAX;
    ps->steady_t = t;
    ps->steady_v = v;
    if (steady)
      snprintf(reason, size, "preset coast: steady at %.1f km/h (creeping at idle)", 3.6 * v);
    return steady;
  }
  case PRESET_BRAKE:
    if (fabs(v) <= DG_SUMMARY_REST) {
      snprintf(reason, size, "preset brake: at rest");
      return true;
    }
    return false;
  default: return false;
  }
}
