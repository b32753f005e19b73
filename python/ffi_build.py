"""Writes the C source of drivegraph._drivegraph, the CFFI extension module
(API mode) of the Python package, for meson to compile against libdrivegraph.

Run by the build as  ffi_build.py OUTPUT.c  (python/drivegraph/meson.build).

The declarations below are the part of include/drivegraph/drivegraph.h the
package uses; in API mode the C compiler checks them against the header
(struct layouts with "...;" are taken from it), so a change to the header
that breaks them fails the build instead of corrupting memory.

The one piece of C of the package is pydg_advance: the loop of
`drivegraph sim` (tools/cmd_sim.c, sim_loop) over one simulation, so a whole
run is one C call, made without the GIL (CFFI releases it around every call):
Python threads simulate in parallel, and only Python callbacks (a shift
policy, an input given as a callable: once per step; a hub's tyre model:
at every RK4 stage) take the GIL back.
"""
import sys

import cffi

CDEF = r"""
typedef enum dg_code {
  DG_OK, DG_ERR_IO, DG_ERR_SYNTAX, DG_ERR_SCHEMA, DG_ERR_RANGE, DG_ERR_UNKNOWN, DG_ERR_PORT,
  DG_ERR_TOPOLOGY, DG_ERR_INERTIA, DG_ERR_OVERCONSTRAINED, DG_ERR_NUMERIC, DG_ERR_BLOCK,
  DG_ERR_NOMEM, DG_ERR_USAGE, ...
} dg_code;
typedef struct dg_error {
  int code;
  char file[256];
  char path[256];
  int line;
  int column;
  char text[320];
} dg_error;
typedef void (*dg_diag_fn)(const dg_error *err, void *user);
const char *dg_code_name(int code);
int dg_error_format(const dg_error *err, char *buf, size_t size);

typedef struct dg_registry dg_registry;
typedef struct dg_graph dg_graph;
typedef struct dg_sim dg_sim;
typedef struct dg_scenario dg_scenario;
typedef struct dg_driver dg_driver;

dg_graph *dg_graph_load_file(const dg_registry *reg, const char *path, dg_error *err);
dg_graph *dg_graph_load_string(const dg_registry *reg, const char *json, const char *name,
                               dg_error *err);
typedef struct dg_graph_info { int blocks; int connections; int dofs; int modes; ...; } dg_graph_info;
int dg_graph_validate_file(const dg_registry *reg, const char *path, dg_diag_fn fn, void *user,
                           dg_graph_info *info);
int dg_graph_validate_string(const dg_registry *reg, const char *json, const char *name,
                             dg_diag_fn fn, void *user, dg_graph_info *info);
void dg_graph_free(dg_graph *graph);
const char *dg_graph_name(const dg_graph *graph);
const char *dg_graph_file(const dg_graph *graph);
int dg_graph_block_count(const dg_graph *graph);
const char *dg_graph_block_id(const dg_graph *graph, int index);
const char *dg_graph_block_type(const dg_graph *graph, int index);
int dg_graph_channel_count(const dg_graph *graph);
int dg_graph_warning_count(const dg_graph *graph);
const dg_error *dg_graph_warning(const dg_graph *graph, int index);
int dg_graph_check_step(const dg_graph *graph, double dt, dg_diag_fn fn, void *user);
const char *dg_graph_channel_name(const dg_graph *graph, int index);
char *dg_import_yaml_to_json(const char *path, dg_diag_fn notes, void *user, dg_error *err);
void free(void *p);

dg_sim *dg_sim_new(const dg_graph *graph, dg_error *err);
void dg_sim_free(dg_sim *sim);
const dg_error *dg_sim_last_error(const dg_sim *sim);
double dg_sim_time(const dg_sim *sim);
int dg_sim_input_count(const dg_sim *sim);
bool dg_sim_input_is_integer(const dg_sim *sim, int input);
const char *dg_sim_input_name(const dg_sim *sim, int input);
int dg_sim_input_find(const dg_sim *sim, const char *name);
void dg_sim_set_input(dg_sim *sim, int input, double value);
double dg_sim_get_input(const dg_sim *sim, int input);
typedef double (*dg_input_fn)(double t, void *user);
int dg_sim_set_input_fn(dg_sim *sim, int input, dg_input_fn fn, void *user, dg_error *err);
int dg_sim_signal_count(const dg_sim *sim);
const char *dg_sim_signal_name(const dg_sim *sim, int id);
const char *dg_sim_signal_unit(const dg_sim *sim, int id);
int dg_sim_signal_find(const dg_sim *sim, const char *name);
double dg_sim_signal(const dg_sim *sim, int id);
int dg_sim_set_initial(dg_sim *sim, int n, const int *ids, const double *values, dg_error *err);
int dg_sim_start(dg_sim *sim, dg_error *err);
typedef struct dg_start_choice {
  const char *block; const char *why; char shaft[96];
  double proposed; double speed; int taken; int linear;
} dg_start_choice;
int dg_sim_start_choice(const dg_sim *sim, int i, dg_start_choice *out);
int dg_sim_dof_count(const dg_sim *sim);
long dg_sim_topology_changes(const dg_sim *sim);
long dg_sim_step_count(const dg_sim *sim);
typedef struct dg_energy {
  double kinetic; double kinetic_start; double work_in; double work_out;
  double efficiency_loss; double impact_loss; double balance_error;
} dg_energy;
void dg_sim_energy(const dg_sim *sim, dg_energy *energy);
double dg_sim_block_work(const dg_sim *sim, int index);
enum { DG_KEEP_WORK = 1, DG_KEEP_ANGLES = 2, DG_KEEP_ALL = 3 };
int dg_sim_set_keep(dg_sim *sim, unsigned keep, dg_error *err);
unsigned dg_sim_keep(const dg_sim *sim);
unsigned dg_sim_signal_keep(const dg_sim *sim, int id);
typedef struct dg_block_energy {
  bool ledger; double fuel; double stored; double electric; double heat; double work; double error;
} dg_block_energy;
int dg_sim_block_energy(const dg_sim *sim, int index, dg_block_energy *e);
typedef struct dg_energy_ledger {
  double fuel; double stored; double electric; double heat; double work_in_other;
  double work_out_other; double efficiency_loss; double impact_loss; double kinetic_change;
  double energy_in; double balance_error; int ledger_blocks;
} dg_energy_ledger;
void dg_sim_energy_ledger(const dg_sim *sim, dg_energy_ledger *ledger);

typedef struct dg_cycle dg_cycle;
int dg_cycle_builtin_count(void);
const char *dg_cycle_builtin_name(int i);
const char *dg_cycle_builtin_file(int i);
int dg_cycle_builtin_find(const char *name);
dg_cycle *dg_cycle_load_file(const char *path, dg_error *err);
void dg_cycle_free(dg_cycle *cycle);
double dg_cycle_duration(const dg_cycle *cycle);
double dg_cycle_distance(const dg_cycle *cycle);
typedef struct dg_trace_check {
  double speed_tol; double time_tol; long samples; long violations; double violation_time;
  double worst_excess; double worst_time; double worst_speed; ...;
} dg_trace_check;
typedef struct dg_cycle_options {
  const dg_registry *reg; const char *graph_json; const char *graph_name; double dt;
  bool backward; bool iterate; ...;
} dg_cycle_options;
void dg_cycle_options_init(dg_cycle_options *o);
typedef struct dg_cycle_run dg_cycle_run;
dg_cycle_run *dg_cycle_run_new(const dg_cycle_options *opt, const dg_cycle *cycle, dg_error *err);
void dg_cycle_run_free(dg_cycle_run *run);
dg_sim *dg_cycle_run_sim(dg_cycle_run *run);
int dg_cycle_run_all(dg_cycle_run *run);
typedef struct dg_cycle_report {
  bool backward; double dt; double time; long steps; long steps_tried; double distance;
  double trace_distance;
  dg_trace_check trace; int engines; double fuel_kg; double fuel_L; double fuel_J;
  double engine_work_J; double fuel_L_per_100km; double mpg; int batteries; double soc_start;
  double soc_end; double soc_min; double soc_max; double battery_J; double battery_terminal_J;
  double electricity_Wh_per_km; double fuel_equivalent_kg; double fuel_corrected_L_per_100km;
  double battery_share; dg_energy_ledger ledger; double regen_J; double friction_brake_J;
  double road_J; double drag_J; double rolling_J; double grade_J; double kinetic_J;
  double accel_J; double enforcement_in_J; double enforcement_out_J; double enforcement_peak_N;
  ...;
} dg_cycle_report;
void dg_cycle_run_report(const dg_cycle_run *run, dg_cycle_report *r);

typedef struct dg_shift_context {
  double time; double engine_rpm; double output_rpm; int current_gear; int num_gears;
  double vehicle_speed; double throttle; double brake;
} dg_shift_context;
typedef int (*dg_shift_policy)(const dg_shift_context *ctx, void *user);
int dg_sim_set_shift_policy(dg_sim *sim, const char *gearbox_id, dg_shift_policy policy,
                            void *user, dg_error *err);

typedef struct dg_tyre_state {
  double slip; double fz; double vx; double omega; double radius; double t;
} dg_tyre_state;
typedef double (*dg_tyre_fn)(const dg_tyre_state *state, void *user);
int dg_sim_set_tyre(dg_sim *sim, const char *hub_id, dg_tyre_fn fn, void *user, dg_error *err);
int dg_sim_boundary_motion(dg_sim *sim, int n, const char *const *ids, double *inertia,
                           double *dforce_dspeed, dg_error *err);
int dg_sim_boundary_ports(dg_sim *sim, int n, const char *const *ports, double *mobility,
                          dg_error *err);
int dg_sim_check_coupling(dg_sim *sim, const char *port, double dtorque_dspeed, double dt,
                          dg_error *err);

dg_scenario *dg_scenario_load_file(const char *path, dg_error *err);
dg_scenario *dg_scenario_load_string(const char *json, const char *name, dg_error *err);
void dg_scenario_free(dg_scenario *scn);
int dg_scenario_validate_file(const char *path, dg_diag_fn fn, void *user);
int dg_scenario_validate_string(const char *json, const char *name, dg_diag_fn fn, void *user);
int dg_scenario_check(const dg_scenario *scn, const dg_sim *sim, dg_diag_fn fn, void *user);
unsigned dg_scenario_keep(const dg_scenario *scn, const dg_sim *sim);
double dg_scenario_duration(const dg_scenario *scn);
double dg_scenario_dt(const dg_scenario *scn);
double dg_scenario_output_interval(const dg_scenario *scn);
dg_driver *dg_driver_new(const dg_scenario *scn, dg_sim *sim, dg_error *err);
void dg_driver_free(dg_driver *drv);

typedef struct dg_override { const char *key; const char *value; } dg_override;
typedef struct dg_batch_variant { int n_overrides; const dg_override *overrides; } dg_batch_variant;
typedef struct dg_batch_options {
  const dg_registry *reg; const char *graph_json; const char *graph_name;
  const dg_scenario *scenario; double dt; double duration; int threads; int n_signals;
  const char *const *signals; const char *speed_signal;
} dg_batch_options;
void dg_batch_options_init(dg_batch_options *o);
typedef struct dg_batch_result {
  int code; dg_error error; double t_0_100; double top_speed; double final_time; long steps;
  long topology_changes; double balance_error; double work_in;
} dg_batch_result;
int dg_batch_run(const dg_batch_options *opt, int n, const dg_batch_variant *variants,
                 dg_batch_result *results, double *final_values, dg_error *err);
int dg_batch_validate(const dg_batch_options *opt, int n, const dg_batch_variant *variants,
                      dg_batch_result *results, dg_error *err);

typedef struct dg_summary_shift { double t; int from, to; double rpm; } dg_summary_shift;
typedef struct dg_summary {
  int id_speed, id_x, id_gear, id_rpm;
  int nwheels;
  const char **wheel;
  const char *vehicle;
  const char *gearbox;
  const char *rpm_name;
  double v_start, x_start, v_top, t_top, t_100, t_400, v_400, rest_speed, t_rest, x_rest;
  double slip_peak, slip_t;
  int slip_wheel;
  dg_summary_shift shifts[...];
  int nshifts;
  long shifts_total;
  int gear_start;
  ...;
} dg_summary;
int dg_summary_init(dg_summary *s, const dg_sim *sim);
void dg_summary_free(dg_summary *s);

typedef struct dg_preset dg_preset;
dg_preset *dg_preset_new(const dg_registry *reg, const dg_graph *graph, const char *graph_json,
                         const char *name, double from_speed_kmh, int n_given,
                         const char *const *given, dg_diag_fn fn, void *user, dg_error *err);
void dg_preset_free(dg_preset *preset);
const dg_graph *dg_preset_graph(const dg_preset *preset);
const char *dg_preset_name(const dg_preset *preset);
double dg_preset_time_limit(const dg_preset *preset);
double dg_preset_rest_speed(const dg_preset *preset);
int dg_preset_start(dg_preset *preset, dg_sim *sim, dg_error *err);
void dg_preset_apply(dg_preset *preset, dg_sim *sim, double t);

typedef struct pydg_run {
  dg_sim *sim;
  dg_driver *drv;
  dg_preset *preset;
  dg_summary *sum;
  double dt;
  long total_steps;
  long steps_per_row;
  double interval;
  int ncols;
  const int *cols;
  double *rows;
  long max_rows;
  int abort;
  long steps;
  long nrows;
  int stopped;
  int code;
  char reason[160];
  void *step_user;
  int applied0;
} pydg_run;
typedef struct dg_run_timing { long total_steps; long steps_per_row; double interval; } dg_run_timing;
int dg_run_timing_init(dg_run_timing *rt, double dt, double duration, double interval);
int pydg_advance(pydg_run *r, long n);
double pydg_column(const dg_sim *sim, int col);

extern "Python" double pydg_input_cb(double t, void *user);
extern "Python" int pydg_step_cb(void *user, double t);
extern "Python" int pydg_shift_cb(const dg_shift_context *ctx, void *user);
extern "Python" void pydg_diag_cb(const dg_error *err, void *user);
extern "Python" double pydg_tyre_cb(const dg_tyre_state *state, void *user);
"""

SOURCE = r"""
#include <drivegraph/cycle.h>
#include <drivegraph/drivegraph.h>
#include <math.h>
#include <stdlib.h>

/* The run of one simulation, as `drivegraph sim` steps it (tools/cmd_sim.c,
 * sim_timing and sim_loop): the same arithmetic for the step count and the
 * output interval, inputs applied at t = k dt, the summary sampled after
 * every step, a row every steps_per_row steps at a time computed from the
 * row count. The tests compare the rows with the CLI's CSV. */
typedef struct pydg_run {
  dg_sim *sim;
  dg_driver *drv;       /* NULL without a scenario */
  dg_preset *preset;    /* NULL without a preset driver */
  dg_summary *sum;
  double dt;
  long total_steps;     /* ceil(duration / dt) */
  long steps_per_row;
  double interval;      /* an exact multiple of dt */
  int ncols;            /* recorded columns: signal ids, channel k as -(k + 1) */
  const int *cols;
  double *rows;         /* max_rows rows of 1 + ncols values (t first); NULL: none */
  long max_rows;
  int abort;            /* set by a Python callback that raised: stop after the step */
  long steps;           /* steps taken */
  long nrows;           /* rows recorded */
  int stopped;          /* the scenario's stop condition or the preset's goal holds */
  int code;             /* DG_OK, or the failed step's code */
  char reason[160];     /* the preset's goal met */
  void *step_user;      /* non-NULL: inputs given as Python callables, once per step */
  int applied0;         /* the first step's inputs were applied before the first row */
} pydg_run;

static int pydg_step_cb(void *user, double t);

static int pydg_should_stop(pydg_run *r) {
  if (r->drv)
    return dg_driver_should_stop(r->drv);
  return r->preset &&
         dg_preset_done(r->preset, r->sim, (double)r->steps * r->dt, r->reason, sizeof r->reason);
}

/* dt, duration (s) and the output interval (NaN: max(dt, 0.01)) into r: 0,
 * or -1 for too many steps. Returns 1 when the interval was rounded to a
 * whole number of steps. */
int pydg_timing(double dt, double duration, double interval, pydg_run *r) {
  double steps = ceil(duration / dt - 1e-9);
  if (steps > 1e12)
    return -1;
  r->dt = dt;
  r->total_steps = (long)steps;
  if (isnan(interval))
    interval = fmax(dt, 0.01);
  r->steps_per_row = lround(interval / dt);
  if (r->steps_per_row < 1)
    r->steps_per_row = 1;
  r->interval = interval;
  if (fabs((double)r->steps_per_row * dt - interval) > 1e-9 * interval) {
    r->interval = (double)r->steps_per_row * dt;
    return 1;
  }
  return 0;
}

double pydg_column(const dg_sim *sim, int c) {
  return c >= 0 ? dg_sim_signal(sim, c) : dg_sim_get_input(sim, -c - 1);
}

static void pydg_row(pydg_run *r, long step) {
  if (!r->rows || r->nrows >= r->max_rows)
    return;
  double *row = r->rows + r->nrows * (1 + r->ncols);
  row[0] = (double)(step / r->steps_per_row) * r->interval;
  for (int i = 0; i < r->ncols; i++)
    row[1 + i] = pydg_column(r->sim, r->cols[i]);
  r->nrows++;
}

/* Up to n more steps (fewer at the end of the run, at the stop condition,
 * a failed step or a callback's exception). The first call records the
 * start. Returns DG_OK, a step's error code, or -1 (abort). */
/* The inputs of the step starting at t: the scenario's or the preset's,
 * then the callables' (once per step, held over it). -1: a callable raised. */
static int pydg_inputs(pydg_run *r, double t) {
  if (r->drv)
    dg_driver_apply(r->drv, t);
  else if (r->preset)
    dg_preset_apply(r->preset, r->sim, t);
  if (r->step_user && pydg_step_cb(r->step_user, t) != 0) {
    r->abort = 1;
    return -1;
  }
  return 0;
}

int pydg_advance(pydg_run *r, long n) {
  if (r->steps == 0 && r->nrows == 0 && !r->stopped) {
    /* with callables, the first row shows the values they give at t = 0 */
    if (r->step_user) {
      if (pydg_inputs(r, 0.0) != 0)
        return -1;
      r->applied0 = 1;
    }
    pydg_row(r, 0);
    dg_summary_sample(r->sum, 0.0);
    r->stopped = pydg_should_stop(r);
  }
  for (long i = 0; i < n && r->steps < r->total_steps && !r->stopped; i++) {
    long k = r->steps;
    double t = (double)k * r->dt;
    if (!(k == 0 && r->applied0) && pydg_inputs(r, t) != 0)
      return -1;
    int rc = dg_sim_step(r->sim, r->dt);
    r->steps = k + 1;
    if (r->abort)
      return -1;
    if (rc != DG_OK) {
      r->code = rc;
      return rc;
    }
    dg_summary_sample(r->sum, (double)r->steps * r->dt);
    r->stopped = pydg_should_stop(r);
    if (r->steps % r->steps_per_row == 0)
      pydg_row(r, r->steps);
  }
  return DG_OK;
}
"""


def builder(include_dir):
    ffi = cffi.FFI()
    ffi.cdef(CDEF)
    ffi.set_source("drivegraph._drivegraph", SOURCE, include_dirs=[include_dir])
    return ffi


def main(argv):
    out = argv[1]
    ffi = builder(".")
    ffi.emit_c_code(out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
