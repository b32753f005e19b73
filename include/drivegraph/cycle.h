/// drivegraph — drive cycles: speed traces, the EPA's trace tolerance and
/// runs of a graph over a cycle (`drivegraph cycle`, docs/energy.md, "Drive
/// cycles"). Part of the run-level library (lib/run/cycle.c), like the
/// scenarios and presets of drivegraph.h.
///
/// A cycle is a speed trace at given times (FASTSim's CSV layout: columns
/// cycSecs, cycMps and optionally cycGrade), linear between its points. A
/// run drives a graph over it, either forward (the graph's `driver` block
/// follows the trace with the pedals; the default) or backward (the
/// vehicle body follows the trace exactly, a prescribed speed, while the
/// driver works the pedals from the effort the trace needs), and reports
/// the fuel, the electricity, the trace tolerance and the energies.
#ifndef DRIVEGRAPH_CYCLE_H
#define DRIVEGRAPH_CYCLE_H

#include <drivegraph/drivegraph.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Cycles                                                                   */

typedef struct dg_cycle dg_cycle;

/// The cycles that ship with drivegraph (data/cycles/, installed in
/// DATADIR/drivegraph/cycles): "udds", "hwfet", "us06", "wltc3b".
DG_API int dg_cycle_builtin_count(void);
/// The name of built-in cycle i ("udds"), NULL out of range.
DG_API const char *dg_cycle_builtin_name(int i);
/// Its file name in the cycles directory ("udds.csv"), NULL out of range.
DG_API const char *dg_cycle_builtin_file(int i);
/// Its description ("EPA urban (UDDS), 1369 s"), NULL out of range.
DG_API const char *dg_cycle_builtin_doc(int i);
/// The index of a built-in cycle by name (exact, lowercase), or -1.
DG_API int dg_cycle_builtin_find(const char *name);

/// Reads a cycle CSV: a header line naming the columns, then one line of
/// numbers per point, comma separated, LF or CRLF line ends. Columns (by
/// name, any order, others ignored): time `cycSecs` (or `time_s`), speed
/// `cycMps` (or `speed_mps`, m/s; or `speed_kmh`), grade `cycGrade` (or
/// `grade`; rise over run, optional: 0). The first time is 0, times
/// strictly increase, speeds are finite and >= 0 (at most 150 m/s),
/// grades within ±1; at least two points. Errors name the file, the line
/// and the column (`udds.csv:12:7: cycMps: expected a number (got "x")`,
/// dg_error.line and .column). Files over dg_input_size_limit are refused.
DG_API dg_cycle *dg_cycle_load_file(const char *path, dg_error *err);
/// The same from text (`len` bytes, no NUL needed; `name` names it in errors).
DG_API dg_cycle *dg_cycle_load_string(const char *text, size_t len, const char *name,
                                      dg_error *err);
DG_API void dg_cycle_free(dg_cycle *cycle);
DG_API int dg_cycle_length(const dg_cycle *cycle);        ///< points
DG_API const double *dg_cycle_time(const dg_cycle *cycle);  ///< s, from 0
DG_API const double *dg_cycle_speed(const dg_cycle *cycle); ///< m/s
DG_API const double *dg_cycle_grade(const dg_cycle *cycle); ///< rise over run
DG_API double dg_cycle_duration(const dg_cycle *cycle);     ///< s: the last time
/// The distance of the trace (m): ∫ v dt of the linear trace (exact).
DG_API double dg_cycle_distance(const dg_cycle *cycle);
/// The speed of the linear trace at time t (m/s; ends held).
DG_API double dg_cycle_speed_at(const dg_cycle *cycle, double t);
/// The least and the greatest speed of the linear trace over [t0, t1]
/// (m/s): the values at the ends and at every point between them.
DG_API void dg_cycle_window(const dg_cycle *cycle, double t0, double t1, double *lo, double *hi);
/// The `trace` value of a driver block for the cycle:
/// {"time": [...], "speed_kmh": [...]} (every bit kept). malloc'ed
/// (release with free()); NULL when memory is short.
DG_API char *dg_cycle_trace_json(const dg_cycle *cycle);

/* ------------------------------------------------------------------------ */
/* The trace tolerance                                                      */

/// The EPA's speed tolerance (40 CFR 86.115-78, 1066.425): at time t the
/// vehicle's speed must lie within [min of the trace over [t − time_tol,
/// t + time_tol] − speed_tol, max over the same window + speed_tol].
/// Samples are checked one at a time (dg_trace_check_sample); each stands
/// for `weight` seconds (the step it ends).
typedef struct dg_trace_check {
  double speed_tol;       ///< m/s (EPA: 2 mph = 0.89408 m/s)
  double time_tol;        ///< s (EPA: 1 s)
  long samples;           ///< samples checked
  long violations;        ///< samples outside the band
  double violation_time;  ///< s: the weights of the samples outside
  double worst_excess;    ///< m/s: the largest distance outside the band (0: none)
  double worst_time;      ///< s: when (NaN: none)
  double worst_speed;     ///< m/s: the vehicle's speed then
  double worst_lo, worst_hi; ///< m/s: the band then
  int cursor_;            ///< private: where the last sample's window began
} dg_trace_check;
/// Zeroes the counts and sets the EPA's tolerances.
DG_API void dg_trace_check_init(dg_trace_check *chk);
/// Checks the speed v (m/s) at time t (s) against the band; times must not
/// decrease between calls (a cursor follows them). No allocation.
DG_API void dg_trace_check_sample(dg_trace_check *chk, const dg_cycle *cycle, double t, double v,
                                  double weight);

/* ------------------------------------------------------------------------ */
/* Runs                                                                     */

/// How a graph is driven over a cycle.
typedef struct dg_cycle_options {
  const dg_registry *reg;  ///< NULL: the built-in classes
  const char *graph_json;  ///< the graph's JSON text (required)
  const char *graph_name;  ///< its file, named in errors
  double dt;               ///< s; NaN or <= 0: 0.001
  bool backward;           ///< the body follows the trace exactly (see dg_cycle_run_new)
  /// Backward: each step is taken again from its saved state (up to 5
  /// times) with the effort that makes the prescription's work over the
  /// step 0 (secant), so steps as long as the cycle's 1 s points can be
  /// used; the enforcement is then what is left per step.
  bool iterate;
} dg_cycle_options;

/// Zeroes the options and sets dt to NaN (the default).
DG_API void dg_cycle_options_init(dg_cycle_options *o);

typedef struct dg_cycle_run dg_cycle_run;

/// Prepares a run: loads the graph with its `driver` block's trace
/// replaced by the cycle, binds the vehicle's grade (the channel "grade",
/// where the graph reads it) to the cycle's grade column, creates and
/// starts the simulation. Fails (NULL, `err` naming the graph) for a graph
/// without a driver block or with more than one, without a vehicle block
/// or with more than one, or that does not load.
///
/// Backward mode (`backward`): the graph gets a `linear_speed_source` on a
/// free ground port of the vehicle, its speed the cycle's (a schedule on
/// the channel "cycle_speed"), so the body follows the trace exactly, as
/// FASTSim and ADVISOR compute. The driver keeps working the pedals
/// (docs/energy.md, "Backward mode"): its command is the trace's
/// acceleration feed-forward plus a PI on the force the prescription
/// applies (the channel "trace_force", the last step's, so there is no
/// algebraic loop), so the powertrain, not the prescription, supplies the
/// tractive effort; what the prescription still adds or removes is
/// reported as the trace enforcement.
DG_API dg_cycle_run *dg_cycle_run_new(const dg_cycle_options *opt, const dg_cycle *cycle,
                                      dg_error *err);
DG_API void dg_cycle_run_free(dg_cycle_run *run);
/// The simulation (for reading signals between steps).
DG_API dg_sim *dg_cycle_run_sim(dg_cycle_run *run);
DG_API const dg_graph *dg_cycle_run_graph(const dg_cycle_run *run);
DG_API double dg_cycle_run_dt(const dg_cycle_run *run);
DG_API long dg_cycle_run_total_steps(const dg_cycle_run *run); ///< to the cycle's end
DG_API long dg_cycle_run_steps(const dg_cycle_run *run);       ///< taken so far
/// The ids of the driver block and of the vehicle block.
DG_API const char *dg_cycle_run_driver(const dg_cycle_run *run);
DG_API const char *dg_cycle_run_vehicle(const dg_cycle_run *run);
/// One step: the inputs, dg_sim_step, the trace check and the state of
/// charge's extremes. DG_OK, or the step's error (dg_sim_last_error).
/// No allocation.
DG_API int dg_cycle_run_step(dg_cycle_run *run);
/// Steps to the end of the cycle. DG_OK or the first step's error.
DG_API int dg_cycle_run_all(dg_cycle_run *run);

/// What a run is reported by (so far).
typedef struct dg_cycle_report {
  bool backward;
  double dt;                 ///< s
  double time;               ///< s simulated
  long steps;
  long steps_tried;          ///< steps integrated: `steps` plus the repeated tries of --iterate
  double distance;           ///< m the vehicle travelled
  double trace_distance;     ///< m of the trace up to `time`
  dg_trace_check trace;      ///< the EPA tolerance (forward: the driver's; backward: exact)
  /* fuel: the sum over the engines with a fuel model */
  int engines;               ///< engines keeping a ledger
  double fuel_kg, fuel_L;
  double fuel_J;             ///< chemical energy burnt
  double engine_work_J;      ///< their shaft work
  double fuel_L_per_100km;   ///< NaN without fuel or distance
  double mpg;                ///< miles per US gallon (NaN without fuel)
  /* electricity: the sum over the batteries */
  int batteries;
  double soc_start, soc_end, soc_min, soc_max; ///< the first battery's
  double battery_J;          ///< energy the batteries gave up (stored: chemical; negative: net charge)
  double battery_terminal_J; ///< energy delivered at their terminals (negative: taken)
  double electricity_Wh_per_km; ///< battery_J / 3600 / km (NaN without a battery)
  /// Charge balance (docs/energy.md): the battery's net energy as fuel,
  /// battery_J / (η_engine · heating value), η_engine the run's own
  /// average engine efficiency (engine_work_J / fuel_J); a hybrid's fuel
  /// corrected to no net change of charge is fuel_kg + fuel_equivalent_kg.
  double fuel_equivalent_kg;
  double fuel_corrected_L_per_100km;
  double battery_share;      ///< |battery_J| / fuel_J (SAE J1711: charge-balanced below 0.01)
  /* energies (J), from the ledger */
  dg_energy_ledger ledger;
  double regen_J;            ///< mechanical energy the machines took from their shafts (>= 0)
  double friction_brake_J;   ///< the wheels' negative work (brakes and tyre slip, >= 0)
  double road_J;             ///< the vehicles' work (road load and grade; <= 0)
  double drag_J, rolling_J, grade_J; ///< the road load's parts (>= 0 resisting; the vehicle's signals)
  double kinetic_J;          ///< the body's kinetic energy change, ½ m (v₁² − v₀²)
  double accel_J;            ///< Σ of its increases from step to step (the acceleration's energy)
  /* backward mode: the prescription's work */
  double enforcement_in_J;   ///< positive work of the prescription (it pushed)
  double enforcement_out_J;  ///< negative work (it held back), <= 0
  double enforcement_peak_N; ///< the largest |force| it applied (at the steps' ends, moving above 0.1 m/s)
} dg_cycle_report;
/// Fills `r` from the run so far.
DG_API void dg_cycle_run_report(const dg_cycle_run *run, dg_cycle_report *r);

#ifdef __cplusplus
}
#endif

#endif
