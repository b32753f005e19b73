/* Private interface shared by the importers: lib/import/import_yaml.c
 * (vehicle configs with a `powertrain:` block, the default sedan, the
 * driveline and the graph writer) and lib/import/import_chrono.c
 * (Chrono::Vehicle engine and transmission templates). Not installed.
 *
 * Both importers build a graph document with jansson, following the
 * drivegraph graph format, and print it with dgp_import_dump. Every value
 * they put in it has been checked against the block's parameter ranges
 * first, so that problems are reported at the place in the user's file
 * (YAML marks, or line and column in the Chrono JSON) rather than as a
 * JSON pointer into a graph the user never wrote. */
#ifndef DG_IMPORT_H
#define DG_IMPORT_H

#include "internal.h"

#include <stdbool.h>

/* ---- the vehicle around a powertrain ------------------------------------ */

typedef enum { DG_DRIVE_FWD, DG_DRIVE_RWD, DG_DRIVE_AWD } dg_import_drive;
typedef enum { DG_DIFF_OPEN, DG_DIFF_LOCKED, DG_DIFF_LSD } dg_import_diff;

/* Wheels are indexed FL, FR, RL, RR. */
typedef struct dg_import_vehicle {
  double mass;                 /* kg */
  double wheelbase;            /* m */
  double cg_to_front;          /* m, front axle to centre of gravity */
  double cg_height;            /* m */
  double track_front, track_rear; /* m */
  double wheel_radius;         /* m */
  double wheel_inertia[4];     /* kg·m² */
  dg_import_drive drive;
  double split_front;          /* AWD: share of the torque to the front axle */
  dg_import_diff diff;         /* the axle differentials */
  double lsd_bias;             /* LSD: locking torque per N·m of axle torque */
  double max_brake_torque;     /* N·m, all four brakes together at full pedal */
  double brake_bias_front;     /* share of the brake torque on the front axle */
  double cda;                  /* m² */
  double air_density;          /* kg/m³ */
  double rolling_resistance;   /* coefficient */
  double tyre_b, tyre_c, tyre_d, tyre_e; /* magic formula, D = peak friction */
  double relaxation_length;    /* m */
} dg_import_vehicle;

/* The documented default sedan (docs/import.md, "YAML vehicle
 * configs"). */
void dgp_import_vehicle_default(dg_import_vehicle *v);

/* Reads the vehicle parameters of a YAML config for the Chrono importer's
 * `--vehicle`: `v` starts from the default sedan; `*final_drive` is set
 * (and *has_final_drive true) from powertrain.gearbox.final_drive or
 * final_drive_ratio when the config gives one. The rest of its powertrain
 * block is ignored with a note. Returns DG_OK or an error code (err
 * filled). */
int dgp_import_yaml_vehicle(const char *path, dg_import_vehicle *v, double *final_drive,
                           bool *has_final_drive, dg_diag_fn notes, void *user, dg_error *err);

/* ---- notes and warnings ------------------------------------------------- */

/* Passes a note ("note: ...") or warning ("warning: ...") to `fn` as a
 * dg_error with code DG_OK; line 0 when it concerns no place in a file. */
void dgp_import_notify(dg_diag_fn fn, void *user, const char *file, int line, int column,
                      bool warning, const char *fmt, ...) DG_PRINTF(7, 8);

/* ---- building the graph document ---------------------------------------- */

typedef struct dg_import_graph {
  json_t *root;   /* { "drivegraph": 1, "name", "description", "blocks", "connections" } */
  json_t *blocks; /* borrowed from root */
  json_t *conns;  /* borrowed from root */
  bool nomem;     /* an allocation failed somewhere: the document is incomplete */
} dg_import_graph;

/* Starts a document; false when out of memory. */
bool dgp_import_graph_init(dg_import_graph *g, const char *name, const char *description);
void dgp_import_graph_free(dg_import_graph *g);
/* Adds block `id` of `type` (with a "doc" string when doc is not NULL) and
 * returns it (borrowed), or NULL when out of memory. */
json_t *dgp_import_block(dg_import_graph *g, const char *id, const char *type, const char *doc);
/* Parameter setters; a NULL object is ignored (out of memory was noted). */
void dgp_import_set_num(dg_import_graph *g, json_t *obj, const char *key, double value);
void dgp_import_set_int(dg_import_graph *g, json_t *obj, const char *key, long value);
void dgp_import_set_str(dg_import_graph *g, json_t *obj, const char *key, const char *value);
void dgp_import_set_bool(dg_import_graph *g, json_t *obj, const char *key, bool value);
void dgp_import_set(dg_import_graph *g, json_t *obj, const char *key, json_t *value);
json_t *dgp_import_numbers(const double *v, int n);
/* { xname: x, yname: y } */
json_t *dgp_import_table1d(const char *xname, const double *x, const char *yname, const double *y,
                          int n);
void dgp_import_connect(dg_import_graph *g, const char *from, const char *to);

/* The driveline behind a powertrain whose output shaft is `from`
 * ("gearbox.out"): the final drive (block "final"), the differentials
 * (FWD/RWD "diff"; AWD a "centre" differential splitting split_front to the
 * front, then "diff_f" and "diff_r"), wheels "wheel_fl" .. "wheel_rr" with
 * brakes and magic-formula tyres, and the body "body". */
void dgp_import_driveline(dg_import_graph *g, const dg_import_vehicle *v, const char *from,
                         double final_drive, double final_inertia);

/* The document as pretty JSON (objects indented, number arrays on one
 * line, numbers in their shortest round-trip form); malloc'ed, NULL when
 * out of memory. */
char *dgp_import_dump(const json_t *root);

/* Loads the document text as a graph, naming `file` in errors. */
dg_graph *dgp_import_load(const dg_registry *reg, const char *json, const char *file, dg_error *err);

/* Block "clutch": an automatic launch clutch (mode auto) between an engine
 * and its gearbox, open at idle_rpm. max_torque and launch_rpm <= 0 take the
 * defaults: 1.25 × the peak full-load torque, and the speed of that peak
 * kept between idle + 10 % and halfway up the engine's range. */
void dgp_import_launch_clutch(dg_import_graph *g, const char *doc, double idle_rpm,
                             double redline_rpm, double peak_torque, double peak_rpm,
                             double max_torque, double launch_rpm);

/* Peak of a curve: its largest y and the x where it is reached (the first
 * such x). */
double dgp_import_peak(const double *x, const double *y, int n, double *at);

#endif
