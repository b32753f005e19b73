/// drivegraph — simulate vehicle drivetrains built as graphs of blocks.
///
/// This is the user API: load a graph file, create a simulation, set driver
/// inputs, step, read signals. Block authors also include block.h.
///
/// Conventions
/// - Units are SI (rad/s, N·m, kg·m², m/s, N, s) except rpm where a name says so.
/// - Every `*_new` / `*_load_*` has a `*_free`; `*_free(NULL)` is a no-op.
/// - Functions that can fail take a caller-provided `dg_error *` (NULL allowed)
///   and return NULL or a non-zero `dg_code`; the library never prints or exits.
/// - No global mutable state: distinct objects may be used from distinct
///   threads at once. One object must not be used by two threads at once,
///   except a `dg_graph` and a `dg_registry`, which are read-only after loading
///   and may back simulations in several threads.
#ifndef DRIVEGRAPH_DRIVEGRAPH_H
#define DRIVEGRAPH_DRIVEGRAPH_H

#include <drivegraph/export.h>
#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define DG_VERSION_MAJOR 0
#define DG_VERSION_MINOR 1
#define DG_VERSION_PATCH 0
#define DG_VERSION_STRING "0.1.0"

/// Every error code, with a short description: generates `dg_code` and
/// `dg_code_name()`.
#define DG_CODE_MAP(X)                                                         \
  X(OK, "ok")                                                                  \
  X(ERR_IO, "cannot read or write a file")                                     \
  X(ERR_SYNTAX, "syntax error")                                                \
  X(ERR_SCHEMA, "wrong structure or type")                                     \
  X(ERR_RANGE, "value out of range")                                           \
  X(ERR_UNKNOWN, "unknown name")                                               \
  X(ERR_PORT, "bad port or connection")                                        \
  X(ERR_TOPOLOGY, "invalid graph structure")                                   \
  X(ERR_INERTIA, "degree of freedom without inertia")                          \
  X(ERR_OVERCONSTRAINED, "contradictory constraints")                          \
  X(ERR_NUMERIC, "simulation diverged")                                        \
  X(ERR_BLOCK, "block error")                                                  \
  X(ERR_NOMEM, "out of memory")                                                \
  X(ERR_USAGE, "invalid argument")

typedef enum dg_code {
#define DG_CODE_ENUM_(name, text) DG_##name,
  DG_CODE_MAP(DG_CODE_ENUM_)
#undef DG_CODE_ENUM_
      DG_CODE_COUNT
} dg_code;

/// Short symbolic name of a code ("ERR_RANGE"); "?" for unknown codes.
DG_API const char *dg_code_name(int code);

#define DG_ERROR_FILE_LEN 256
#define DG_ERROR_PATH_LEN 256
#define DG_ERROR_TEXT_LEN 320

/// An error, filled by the first failing call (like jansson's json_error_t).
typedef struct dg_error {
  int code;                     ///< a dg_code; DG_OK when nothing went wrong
  char file[DG_ERROR_FILE_LEN]; ///< source file, "<string>" or "" if none
  char path[DG_ERROR_PATH_LEN]; ///< JSON pointer ("/blocks/gear/ratio"), "" for the whole document
  int line;                     ///< 1-based line for syntax errors, else 0
  int column;                   ///< 1-based column for syntax errors, else 0
  char text[DG_ERROR_TEXT_LEN]; ///< lowercase message without trailing period
} dg_error;

/// Formats an error as `file:line:column: text` (syntax errors) or
/// `file: /path: text`; parts that are empty are left out. Returns the
/// length snprintf would have written.
DG_API int dg_error_format(const dg_error *err, char *buf, size_t size);

/// Callback receiving one problem at a time (validation, see
/// dg_graph_validate_file). The error is only valid during the call.
typedef void (*dg_diag_fn)(const dg_error *err, void *user);

/// The closest of `candidates` to `word`, for a "did you mean" hint, by the
/// rule of the library's own messages: at most a third of the word's
/// letters apart (at least one edit; optimal string alignment distance,
/// ASCII case-insensitive) and not a complete rewrite of a short name;
/// failing that, a name that differs by a whole "_" suffix (a unit, as in
/// "redline" for "redline_rpm"). Ties go to the earlier candidate; NULL
/// entries are skipped. Returns one of `candidates` (not copied), or NULL
/// (also for a NULL word or list). Thread-safe.
DG_API const char *dg_suggest(const char *word, const char *const *candidates, int n);

/// Copies `text` into `out` (`size` bytes, always terminated when size > 0)
/// with every character a terminal or a log could act on shown as an
/// escape: control characters (C0, DEL, C1: ESC as \u001B, a newline as
/// \u000A), format characters (the bidi embeddings, overrides and
/// isolates such as RLO \u202E, zero-width spaces and joiners, the BOM,
/// tags; above U+FFFF as \U000E0001), line and paragraph separators, and
/// every byte that is not valid UTF-8 (\xFF). Everything else is copied;
/// an escape or a character is never cut in two. Every dg_error the
/// library fills has its file, path and text passed through it (they echo
/// ids, keys, strings and paths from files). Returns the length written.
DG_API size_t dg_text_escape(char *out, size_t size, const char *text);

/// The size limit of graph and scenario texts, in bytes: files (graph
/// JSON, YAML configs, Chrono files, scenarios) and strings given to the
/// loaders above it are refused before they are parsed (a file of known
/// size before it is read). DRIVEGRAPH_MAX_INPUT_SIZE in the environment
/// sets it (bytes, or with k, M or G: "64M"), read at each load; the
/// default is 16 MiB (docs/errors.md, "Bounded input").
DG_API size_t dg_input_size_limit(void);

typedef struct dg_block_class dg_block_class; ///< see block.h
typedef struct dg_registry dg_registry;       ///< type name → block class
typedef struct dg_graph dg_graph;             ///< a loaded, checked graph (read-only)
typedef struct dg_sim dg_sim;                 ///< one running simulation
typedef struct dg_scenario dg_scenario;       ///< a loaded scenario file
typedef struct dg_driver dg_driver;           ///< a scenario bound to one simulation

/* ------------------------------------------------------------------------ */
/* Registry                                                                 */

/// A new registry holding the built-in block classes. Users add their own
/// classes with dg_registry_add. Read-only use is thread-safe.
DG_API dg_registry *dg_registry_new(void);
DG_API void dg_registry_free(dg_registry *reg);
/// Registers a block class (not copied: it must outlive the registry; classes
/// are normally `static const`). Replaces nothing: a type that is already
/// registered, an ABI mismatch or a malformed table is an error.
DG_API int dg_registry_add(dg_registry *reg, const dg_block_class *klass, dg_error *err);
/// The class for a JSON `type`, or NULL.
DG_API const dg_block_class *dg_registry_find(const dg_registry *reg, const char *type);
DG_API int dg_registry_count(const dg_registry *reg);
DG_API const dg_block_class *dg_registry_at(const dg_registry *reg, int index);

/* ------------------------------------------------------------------------ */
/* Graphs                                                                   */

/// Loads and checks a graph file. `reg` NULL means the built-in classes only;
/// otherwise the registry must outlive the graph. Returns NULL and fills
/// `err` with the first problem.
DG_API dg_graph *dg_graph_load_file(const dg_registry *reg, const char *path, dg_error *err);
/// Same from a NUL-terminated string; `name` is used as the file in errors
/// (NULL gives "<string>").
DG_API dg_graph *dg_graph_load_string(const dg_registry *reg, const char *json, const char *name,
                               dg_error *err);

/// Summary of a valid graph (see dg_graph_validate_file).
typedef struct dg_graph_info {
  int blocks;
  int connections;
  int dofs;   ///< degrees of freedom in the start mode
  /// Mode combinations checked: `modes_covered` (below), at most INT_MAX.
  int modes;
  /// All the combinations of the switching blocks' modes (their product).
  double mode_combinations;
  /// 1 when some group was checked one block at a time (`partial_groups`),
  /// else 0.
  int mode_level;
  int switching_blocks;
  /// The combinations the check covers: those built, and those whose
  /// verdict follows from them. Switching blocks fall into independent
  /// groups (blocks whose modes cannot change what another group's modes
  /// do: elements between shafts with inertia, or in different parts of
  /// the drivetrain); a mode is valid when its part in each group is, so
  /// checking each group's combinations with the others in their start
  /// modes covers the product of the groups' counts. A group of more than
  /// 4,096 combinations is checked one block at a time (each block's modes
  /// with the others in their start modes): then this is less than
  /// `mode_combinations`.
  double modes_covered;
  int mode_groups;            ///< independent groups of switching blocks
  int partial_groups;         ///< of them, checked one block at a time
  int largest_group;          ///< the switching blocks of the largest of those
  double largest_group_modes; ///< its combinations
  /// Modes built (one topology build each): the start mode, then each
  /// group's; the others covered follow from them.
  int modes_built;
} dg_graph_info;

/// Checks a graph file and reports every problem found through `fn` (which
/// may be NULL). Returns the number of problems (0 = valid). `info`, if not
/// NULL, is filled when the graph is valid.
DG_API int dg_graph_validate_file(const dg_registry *reg, const char *path, dg_diag_fn fn, void *user,
                           dg_graph_info *info);
/// dg_graph_validate_file that also keeps what it loaded: when the graph is
/// valid (0 problems), *graph is set to it, as dg_graph_load_file would
/// load it (free it with dg_graph_free), else to NULL. One load and one
/// every-mode check for a caller that wants both the problems and the
/// graph (`drivegraph validate`). `graph` NULL: dg_graph_validate_file.
DG_API int dg_graph_validate_load_file(const dg_registry *reg, const char *path, dg_diag_fn fn,
                                       void *user, dg_graph_info *info, dg_graph **graph);
/// dg_graph_validate_file for a string.
DG_API int dg_graph_validate_string(const dg_registry *reg, const char *json, const char *name,
                             dg_diag_fn fn, void *user, dg_graph_info *info);

/// Warnings of a loaded graph: things it loads with but probably does not
/// mean (an element that can never act, such as a spring whose two ends
/// turn together; a start in which nothing can move; an input following a
/// block the graph does not have). Each is a dg_error with code DG_OK, the
/// block's JSON pointer as its path and a text starting "warning: ".
/// dg_graph_validate_file and _string pass them to `fn` as they are found
/// (without counting them as problems); a graph keeps them for tools that
/// load it (`drivegraph sim` prints them on stderr).
DG_API int dg_graph_warning_count(const dg_graph *graph);
/// Warning `index`, or NULL (owned by the graph).
DG_API const dg_error *dg_graph_warning(const dg_graph *graph, int index);

/// Frees a graph. Simulations created from it keep it alive until they are
/// freed too (reference counted, thread-safe).
DG_API void dg_graph_free(dg_graph *graph);

DG_API const char *dg_graph_name(const dg_graph *graph);  ///< the "name" field or ""
DG_API const char *dg_graph_file(const dg_graph *graph);  ///< file it was loaded from
DG_API int dg_graph_block_count(const dg_graph *graph);
DG_API const char *dg_graph_block_id(const dg_graph *graph, int index);
DG_API const char *dg_graph_block_type(const dg_graph *graph, int index);
/// Power-flow edges: every out port → in port pair that shares a shaft
/// (a two-port connection of the file is one edge; ports of direction
/// "any", such as a planetary's members, give none).
DG_API int dg_graph_connection_count(const dg_graph *graph);
/// Endpoints of edge `index` as "block.port" strings (owned by graph).
DG_API void dg_graph_connection(const dg_graph *graph, int index, const char **from, const char **to);
/// The nearest block of class `type` downstream of block `block` (breadth
/// first along the power-flow edges: the gearbox an engine drives), or -1.
DG_API int dg_graph_downstream(const dg_graph *graph, int block, const char *type);
/// The file's connections: each the ports of one shaft, in the file's order.
DG_API int dg_graph_shaft_count(const dg_graph *graph);
DG_API int dg_graph_shaft_port_count(const dg_graph *graph, int shaft);
/// Port k of a shaft as "block.port" (owned by graph), or NULL.
DG_API const char *dg_graph_shaft_port(const dg_graph *graph, int shaft, int k);
/// Channels the graph's blocks are bound to by name in the file
/// ("inputs": { "pedal": "c1" }): a scenario must give each of them
/// (dg_driver_new refuses one that does not). Channels that inputs follow
/// by default (throttle, brake, ...) are not listed: they hold the input's
/// default value until given.
DG_API int dg_graph_channel_count(const dg_graph *graph);
DG_API const char *dg_graph_channel_name(const dg_graph *graph, int index);
/// JSON pointer of the first binding naming channel `index`.
DG_API const char *dg_graph_channel_path(const dg_graph *graph, int index);
/// Block inputs and where each takes its value from (the file's binding or
/// the class's default, resolved): for tools that draw or list them.
DG_API int dg_graph_input_count(const dg_graph *graph, int block);
DG_API const char *dg_graph_input_name(const dg_graph *graph, int block, int input);
typedef struct dg_input_source {
  int kind;            ///< 0 a constant, 1 a channel, 2 another block's signal
  bool given;          ///< bound in the file (else the class's default)
  double value;        ///< kind 0
  const char *channel; ///< kind 1
  int block;           ///< kind 2: the source block's index
  const char *signal;  ///< kind 2: its signal's name
} dg_input_source;
/// Fills src; 0, or -1 for a bad index.
DG_API int dg_graph_input_source(const dg_graph *graph, int block, int input, dg_input_source *src);
/// Checks that steps of `dt` seconds can sample the graph's signals: a
/// source oscillating faster than 1 / (2 dt), half the step rate (a
/// sine_source at 600 Hz with dt 1 ms), is a problem, reported through
/// `fn` (may be NULL) at its block ("/blocks/<id>") with the dt it needs.
/// Returns the number of problems (0: dt will do). `drivegraph sim`,
/// `validate --dt`, `sweep` and the Python package make this check before
/// a run.
DG_API int dg_graph_check_step(const dg_graph *graph, double dt, dg_diag_fn fn, void *user);
/// The channel block `block`'s input `input` follows (bound by name or by
/// its class's default), or NULL when it follows a signal or a constant,
/// or there is no such input.
DG_API const char *dg_graph_input_channel(const dg_graph *graph, int block, const char *input);

/* ------------------------------------------------------------------------ */
/* Importers: YAML vehicle configs and Chrono::Vehicle powertrain files     */

/// Converts a YAML vehicle config (vehicle parameters at the top level, an
/// optional `powertrain:` block with engine, gearbox and shift) into graph
/// JSON text: the equivalent graph, pretty-printed. What the config leaves
/// out comes from the documented default sedan (docs/import.md, "YAML
/// vehicle configs"). Returns a malloc'ed string the caller releases with
/// free(), or NULL with `err` filled: file, line and column of the problem
/// and the key path in the text ("powertrain.engine.torque_map[1][2]: ...").
/// `notes`, if not NULL, receives keys ignored, defaults taken and
/// conversions made, one call each, as a dg_error with code DG_OK whose text
/// starts with "note: " or "warning: " (line 0 when no place applies).
/// dg_graph_load_file and dg_graph_validate_file call this importer for a
/// path ending in .yaml or .yml.
DG_API char *dg_import_yaml_to_json(const char *path, dg_diag_fn notes, void *user, dg_error *err);
/// Imports a YAML vehicle config and loads the graph (see
/// dg_import_yaml_to_json; `reg` as for dg_graph_load_file).
DG_API dg_graph *dg_graph_import_yaml(const dg_registry *reg, const char *path, dg_error *err);

/// Converts a Chrono::Vehicle engine file (template EngineSimpleMap,
/// EngineShafts or EngineSimple) and transmission file
/// (AutomaticTransmissionSimpleMap, AutomaticTransmissionShafts,
/// AutomaticTransmissionSimpleCVT or ManualTransmissionShafts) into graph
/// JSON text, completed by the vehicle of the YAML config `vehicle` (NULL:
/// the default sedan). `//` and `/* */` comments are accepted. Chrono's
/// gear ratios (output/input speed) become drivegraph's input/output ratios.
/// Errors name the file, line and column and the key; memory and notes as
/// for dg_import_yaml_to_json.
DG_API char *dg_import_chrono_to_json(const char *engine, const char *transmission, const char *vehicle,
                               dg_diag_fn notes, void *user, dg_error *err);
/// Imports a Chrono engine + transmission pair and loads the graph.
DG_API dg_graph *dg_graph_import_chrono(const dg_registry *reg, const char *engine,
                                 const char *transmission, const char *vehicle, dg_error *err);

/// Which vehicle of a FASTSim vehicle table to import, and how.
typedef struct dg_fastsim_options {
  int row;                ///< the row whose `selection` is this (FASTSim's vehicle number), when name is NULL
  const char *name;       ///< or the row whose `Scenario name` is this (case-insensitive); NULL: use row
  const char *cycle;      ///< a cycle CSV (dg_cycle_load_file) as the driver's trace; NULL: a short launch and stop
  bool linear_efficiency; ///< interpolate the efficiency maps linearly instead of FASTSim's grid lookup
} dg_fastsim_options;

/// Converts one row of FASTSim's vehicle table (FASTSim_py_veh_db.csv) into
/// graph JSON text: a conventional car (veh_pt_type Conv: an engine with
/// FASTSim's efficiency over the fraction of rated power, geared to the
/// wheels) or a battery-electric one (BEV: motor, bus and battery), with
/// FASTSim's mass, road load and driver (docs/import.md, "FASTSim
/// vehicles"). Hybrids (HEV, PHEV) are refused with the reason. Errors name
/// the file, line and column, the column's name and what it must hold;
/// memory and notes as for dg_import_yaml_to_json.
DG_API char *dg_import_fastsim_to_json(const char *path, const dg_fastsim_options *opt,
                                       dg_diag_fn notes, void *user, dg_error *err);
/// Imports a FASTSim vehicle and loads the graph.
DG_API dg_graph *dg_graph_import_fastsim(const dg_registry *reg, const char *path,
                                         const dg_fastsim_options *opt, dg_error *err);
/// The importer's column table, entry `index` (0, 1, ...): the column's name
/// and what it becomes in the graph (static strings). Returns 0 past the end.
DG_API int dg_import_fastsim_column(int index, const char **name, const char **use);

/* ------------------------------------------------------------------------ */
/* Simulations                                                              */

/// Standard driver inputs, always present (custom inputs follow them).
enum {
  DG_INPUT_THROTTLE = 0, ///< 0..1 (negative values are clamped by blocks that need it)
  DG_INPUT_BRAKE = 1,    ///< 0..1
  DG_INPUT_CLUTCH = 2,   ///< pedal 0 = released (engaged) .. 1 = pressed (open)
  DG_INPUT_GEAR = 3,     ///< selected gear: -1 reverse, 0 neutral, 1.. forward
  DG_NUM_STD_INPUTS = 4
};

/// Creates a simulation at t = 0 with all speeds zero and every block in its
/// start mode. Allocates everything the step needs.
DG_API dg_sim *dg_sim_new(const dg_graph *graph, dg_error *err);
DG_API void dg_sim_free(dg_sim *sim);
DG_API const dg_graph *dg_sim_graph(const dg_sim *sim);

/// Advances by `dt` seconds. The step is integrated with RK4 in one or more
/// segments: it ends a segment at every breakpoint of a scheduled input and
/// at every switching event (located on the step's dense output to ~1e-12 s),
/// where the blocks make their decisions (post_step) and the next segment
/// starts in the new mode (pre_step). Returns DG_OK, or an error code with the details in
/// dg_sim_last_error (the block, signal and time for a diverged state); the
/// simulation must not be stepped again after an error. Never allocates.
DG_API int dg_sim_step(dg_sim *sim, double dt);
/// Compiles the RK4 stages of the simulation's modes to machine code
/// (experimental; docs/performance.md, "Compiled stages"): its current
/// mode and the other modes it visited that its mode cache keeps (up to
/// 8), each one's plan written out as C with the torque hooks' parameters
/// as constants, compiled by the system's C compiler (DG_CC's words, else
/// `cc`) together with the built-in blocks' own sources (DG_SOURCE_DIR,
/// else the tree the library was built from, else the installed copy) and
/// loaded. dg_sim_step then runs them whenever the simulation is in one of
/// those modes, and the generic stage in every other; where a mode has no
/// hooks, events, timed or bound inputs and no ties around its stages, the
/// whole step segment runs compiled, and where its pre/post hooks and event
/// functions are all built-in blocks' and it has no ties, the segment
/// between those hooks and the hooks themselves (an event located inside
/// the segment is then located by the generic step). The graph keeps the compiled modes
/// too: simulations made of it afterwards (dg_sim_new) run them in those
/// modes (so: drive once through the modes that matter, compile, and
/// simulate anew). A parameter tuned in place afterwards returns every
/// simulation of the graph to the generic stages until it is compiled
/// again. The results are bit for bit the same. Takes from under a second
/// to some ten (the compiler: one mode of the axle 0.7 s, the sedan's four
/// modes 10 s of CPU), or a few milliseconds when the same code was
/// compiled before: units are kept in a cache on disk keyed by their text,
/// the compiler's words and the sources' contents (DG_COMPILE_CACHE, else
/// $XDG_CACHE_HOME/drivegraph or ~/.cache/drivegraph; "off": none;
/// docs/performance.md). It replaces what the simulation and the graph had compiled
/// before; it must not run while another thread makes a simulation of the
/// same graph. DG_OK; DG_ERR_USAGE when the current mode is not one a
/// compiled stage covers yet (the message says why: variable ratios,
/// prescribed speeds, a block class that is not built in, no DOF, more
/// than 4096 nodes; other modes that are not are left out); DG_ERR_IO
/// when the compiler or the sources are missing or the compile fails (the
/// message has the compiler's first error). The simulation is unchanged on
/// failure.
DG_API int dg_sim_compile(dg_sim *sim, dg_error *err);
/// RK4 stages (right-hand-side evaluations) since dg_sim_new, and how many
/// of them the compiled stage ran (-1 when none is compiled).
DG_API long dg_sim_stage_count(const dg_sim *sim);
DG_API long dg_sim_compiled_stage_count(const dg_sim *sim);
/// 1 when the simulation's compiled unit was loaded from the cache on disk
/// (dg_sim_compile ran no compiler), 0 when it was compiled, -1 when the
/// simulation has none.
DG_API int dg_sim_compiled_from_cache(const dg_sim *sim);
DG_API const dg_error *dg_sim_last_error(const dg_sim *sim);
DG_API double dg_sim_time(const dg_sim *sim);

DG_API int dg_sim_input_count(const dg_sim *sim);
/// Whether input i feeds an integer block input (a gear): schedules for it
/// should step rather than interpolate.
DG_API bool dg_sim_input_is_integer(const dg_sim *sim, int input);
DG_API const char *dg_sim_input_name(const dg_sim *sim, int input);
/// Index of a named input ("throttle", "grade", ...), or -1.
DG_API int dg_sim_input_find(const dg_sim *sim, const char *name);
/// Sets an input by index to a constant (it replaces a schedule or callback
/// set before); out-of-range indices are ignored. A value that is not
/// finite (NaN, ±Inf) is refused: the input keeps its value and the next
/// dg_sim_step fails with DG_ERR_RANGE naming the input and the value.
DG_API void dg_sim_set_input(dg_sim *sim, int input, double value);
/// Current value of an input (at dg_sim_time), NaN for a bad index.
DG_API double dg_sim_get_input(const dg_sim *sim, int input);

/// Gives an input a schedule: n >= 1 breakpoints (t[k], v[k]) in seconds of
/// simulation time, t non-decreasing. The value is linear between
/// breakpoints, v[0] before the first and v[n-1] after the last; two equal
/// times make a jump, and the later value holds from that time on.
/// The solver evaluates it inside the step, at each RK4 substep's time, and
/// ends a step segment at every breakpoint that falls inside a step, so a
/// ramp or a jump acts at its own time and the integration stays fourth
/// order. `stepped` inputs instead hold v[k] from t[k] and change only at
/// the start of a step (the gear selector). The arrays are copied; the
/// schedule replaces any value, schedule or callback set before. Returns
/// DG_OK, or DG_ERR_USAGE / DG_ERR_RANGE (bad index, n < 1, times not
/// finite or decreasing, values not finite) with `err` filled. Allocates;
/// call it between steps.
DG_API int dg_sim_set_input_schedule(dg_sim *sim, int input, int n, const double *t, const double *v,
                              bool stepped, dg_error *err);
/// An input computed by a callback: `fn(t, user)` gives its value at time t
/// (s). It is called at every substep's time (four times per step, plus a
/// few times more while an event is located), always with non-decreasing
/// times within a step segment but sometimes again for an earlier time of
/// the same step, so it must be a function of t alone (no state advanced
/// per call). It must return finite values; a non-finite value stops the
/// step with DG_ERR_NUMERIC naming the input. Replaces any value, schedule
/// or callback set before; `fn` NULL makes the input a constant at its
/// current value.
typedef double (*dg_input_fn)(double t, void *user);
DG_API int dg_sim_set_input_fn(dg_sim *sim, int input, dg_input_fn fn, void *user, dg_error *err);
/// Sets every scheduled or callback input to its value at time t without
/// removing the schedules (what the solver does at each step's start).
DG_API void dg_sim_apply_inputs(dg_sim *sim, double t);

/// Signals are named "<block>.<signal>" ("engine.rpm"); each has a unit.
DG_API int dg_sim_signal_count(const dg_sim *sim);
DG_API const char *dg_sim_signal_name(const dg_sim *sim, int id);
DG_API const char *dg_sim_signal_unit(const dg_sim *sim, int id);
/// Pre-resolves a signal name to an id for fast reads, or -1.
DG_API int dg_sim_signal_find(const dg_sim *sim, const char *name);
/// Value of a signal by id (no string work; NaN for a bad id).
DG_API double dg_sim_signal(const dg_sim *sim, int id);
/// Value by name; returns DG_OK or DG_ERR_UNKNOWN (and fills err).
DG_API int dg_sim_signal_by_name(const dg_sim *sim, const char *name, double *value, dg_error *err);

/// Sets initial values by signal id (speeds such as "engine.rpm" or
/// "body.speed", and block states whose class allows it), then makes every
/// speed consistent with the current constraints: the given speeds are met
/// exactly and the remaining freedom is filled by a momentum-conserving
/// projection of the previous speeds. Contradictory values (two speeds that
/// a rigid connection forces apart) are an error.
DG_API int dg_sim_set_initial(dg_sim *sim, int n, const int *ids, const double *values, dg_error *err);

/// Makes the start consistent with the initial values given
/// (dg_sim_set_initial) and the inputs at the current time: blocks adopt
/// their start modes from the inputs (a manual gearbox without start_gear
/// engages its lever's gear, an automatic picks the gear for the road
/// speed) and speeds nobody gave are proposed where the shaft is free to
/// turn (an engine at idle, a wheel rolling without slip under the body),
/// then checked (an engine the start would drive above its redline is
/// refused, saying what to change). Given speeds are kept exactly. So
/// nothing impacts at the first step. dg_driver_new calls it after the
/// scenario's initial values; a program setting its own inputs and initial
/// values calls it before stepping. DG_OK, or an error naming the block.
DG_API int dg_sim_start(dg_sim *sim, dg_error *err);
/// A speed the last dg_sim_start chose for a shaft no initial value fixed:
/// a block's proposal (an engine at idle, a body at rest, a tyre rolling
/// with the road), taken, or not taken because the speeds given and taken
/// before it fix the shaft otherwise (an engine geared to a car at rest
/// starts where the car puts it).
typedef struct dg_start_choice {
  const char *block; ///< id of the block that proposed it
  const char *why;   ///< its rule ("idle", ...), or "" when it gave none
  char shaft[96];    ///< the shaft ("block.port = block.port")
  double proposed;   ///< the speed proposed (rad/s; m/s on a linear port)
  double speed;      ///< the speed the shaft started at
  int taken;         ///< 1 taken, 0 not (the speed is then another's)
  int linear;        ///< 1 on a linear shaft (m/s), 0 rotational (rad/s)
} dg_start_choice;
/// The number of choices the last dg_sim_start made (0 before one); fills
/// *out with choice i when out is not NULL and i is in range.
DG_API int dg_sim_start_choice(const dg_sim *sim, int i, dg_start_choice *out);
DG_API int dg_sim_dof_count(const dg_sim *sim);        ///< DOFs in the current mode
/// 1 when no shaft can turn in the current mode (0 degrees of freedom and
/// no prescribed motion: a planetary with two members held), filling `buf`
/// with the blocks that hold it ("brake \"b1\", brake \"b2\""); else 0.
/// `drivegraph sim` warns when a run is locked after its first step.
DG_API int dg_sim_locked_by(const dg_sim *sim, char *buf, size_t size);
DG_API int dg_sim_node_count(const dg_sim *sim);       ///< shaft nodes
DG_API long dg_sim_topology_changes(const dg_sim *sim);  ///< mode changes so far
DG_API long dg_sim_step_count(const dg_sim *sim);
/// Switching events located inside steps so far (a clutch sticking or
/// letting go, any block's switching condition): each one ended a step
/// segment at the event's time.
DG_API long dg_sim_event_count(const dg_sim *sim);
/// Step segments integrated so far: one per step, plus one more for every
/// located event and every input breakpoint that fell inside a step.
DG_API long dg_sim_segment_count(const dg_sim *sim);
/// Time (s) of the last event located inside a step, NaN before the first.
DG_API double dg_sim_last_event_time(const dg_sim *sim);
/// Kinetic energy ½ Σ I ω² over all nodes (J).
DG_API double dg_sim_kinetic_energy(const dg_sim *sim);
/// Generalized momentum Gᵀ·I·ω of the current DOFs (n = dg_sim_dof_count).
DG_API void dg_sim_momentum(const dg_sim *sim, double *p);
/// Names the shaft a DOF of the current mode belongs to ("diff.left"):
/// the port whose speed the DOF was declared on. Returns snprintf's length.
DG_API int dg_sim_dof_describe(const dg_sim *sim, int dof, char *buf, size_t size);
/// Coupled inertia matrix of the current mode, row-major n×n.
DG_API void dg_sim_mass_matrix(const dg_sim *sim, double *m);
/// Energy audit since t = 0 (or since the last dg_sim_set_initial), in J.
/// Every block's net work is the integral of the power of the torques it
/// applies (RK4, alongside the speeds): positive for sources, negative for
/// friction, slip, brakes and drag. Efficiency losses of lossy gears and
/// the plastic-impact losses of mode changes are booked separately, so
///   kinetic − kinetic_start = work_in + work_out + efficiency_loss + impact_loss
/// up to the integration error, which is reported as balance_error.
typedef struct dg_energy {
  double kinetic;          ///< now
  double kinetic_start;    ///< at the start of the audit
  double work_in;          ///< sum of the blocks' net work where positive
  double work_out;         ///< sum of the blocks' net work where negative (<= 0)
  double efficiency_loss;  ///< lost in lossy gears (<= 0)
  double impact_loss;      ///< lost in momentum-conserving mode changes (<= 0)
  double balance_error;    ///< kinetic − kinetic_start − (the four above)
} dg_energy;
DG_API void dg_sim_energy(const dg_sim *sim, dg_energy *energy);
/// Net work (J) done by block `index` (graph order) since the audit started.
DG_API double dg_sim_block_work(const dg_sim *sim, int index);

/// What a step keeps beyond the state, the speeds and the signals, one bit
/// each (docs/library.md, "What a step keeps"): DG_KEEP_WORK the energy
/// audit (each block's work, the gears' and impacts' losses:
/// dg_sim_energy, dg_sim_block_work, dg_sim_block_energy,
/// dg_sim_energy_ledger), DG_KEEP_ANGLES each shaft's angle (the ports'
/// `angle` signals). A new simulation keeps both.
enum { DG_KEEP_WORK = 1u, DG_KEEP_ANGLES = 2u, DG_KEEP_ALL = 3u };
/// Sets what the steps keep (DG_KEEP_* or'ed; 0: neither), before the
/// first step. A bookkeeping left out is not computed, and what it would
/// report reads as NaN (dg_sim_signal_by_name: an error naming the
/// signal). DG_ERR_USAGE after the first step or for an unknown bit.
DG_API int dg_sim_set_keep(dg_sim *sim, unsigned keep, dg_error *err);
/// What the steps keep (DG_KEEP_*).
DG_API unsigned dg_sim_keep(const dg_sim *sim);
/// What reading signal `id` needs the steps to keep: DG_KEEP_ANGLES for a
/// port's `angle`, 0 for every other signal (and for an unknown id). A
/// tool that knows every signal it will read keeps no more than their
/// union (and DG_KEEP_WORK if it reports the energy audit).
DG_API unsigned dg_sim_signal_keep(const dg_sim *sim, int id);

/// The energy ledger of one block (docs/energy.md): what it exchanged
/// outside the shafts since the start, from its signals flagged
/// DG_SIGNAL_ENERGY_* (block.h), and its shaft work. A block keeps a
/// ledger when it has such signals, they are numbers and its
/// DG_SIGNAL_LEDGER signal, if it has one, is 1 (an engine with a fuel
/// model, a machine, a battery, a load); for it
///   work = fuel + stored + electric − heat
/// to round-off, which `error` reports.
typedef struct dg_block_energy {
  bool ledger;     ///< the block keeps a ledger (else only `work` is set)
  double fuel;     ///< J: chemical energy of the fuel burnt (>= 0)
  double stored;   ///< J: energy its store gave up (a battery; negative: net charge)
  double electric; ///< J: electrical energy taken from its bus (negative: delivered)
  double heat;     ///< J: energy turned into heat outside the shafts (>= 0)
  double work;     ///< J: net shaft work (dg_sim_block_work)
  double error;    ///< J: work − (fuel + stored + electric − heat)
} dg_block_energy;
/// Fills `e` for block `index` (graph order). DG_OK, or DG_ERR_USAGE for an
/// index out of range.
DG_API int dg_sim_block_energy(const dg_sim *sim, int index, dg_block_energy *e);

/// The audit extended from the shafts to the fuel and the batteries: where
/// the energy came from (fuel burnt, batteries' charge, electricity drawn
/// from outside the model, the shaft work of blocks without a ledger: ideal
/// sources, prescribed motion) and where it went (heat in the converters,
/// the work of the road, brakes, slip and drag, the meshes' and the
/// impacts' losses, kinetic energy). With every block's ledger and the
/// shaft audit closed,
///   kinetic − kinetic_start = fuel + stored + electric − heat + work_other
///                             + efficiency_loss + impact_loss
/// up to round-off and the integration error, reported as balance_error.
/// `electric` is the sum of every block's electrical energy: 0 when every
/// machine and load draws from a battery through a bus; what is left is
/// electricity from outside the model (a motor on no battery).
typedef struct dg_energy_ledger {
  double fuel;            ///< J: Σ fuel burnt
  double stored;          ///< J: Σ energy the batteries gave up (negative: net charge)
  double electric;        ///< J: Σ electrical energy taken from buses: 0 when balanced
  double heat;            ///< J: Σ heat of the blocks with a ledger (>= 0)
  double work_in_other;   ///< J: positive work of the blocks without a ledger (ideal sources)
  double work_out_other;  ///< J: negative work of the blocks without a ledger (road, brakes, slip; <= 0)
  double efficiency_loss; ///< J: lost in lossy meshes (<= 0)
  double impact_loss;     ///< J: lost in mode changes (<= 0)
  double kinetic_change;  ///< J: kinetic − kinetic_start
  double energy_in;       ///< J: fuel + max(stored, 0) + max(electric, 0) + work_in_other: the scale
  double balance_error;   ///< J: kinetic_change minus the sum of the terms above
  int ledger_blocks;      ///< blocks keeping a ledger
} dg_energy_ledger;
DG_API void dg_sim_energy_ledger(const dg_sim *sim, dg_energy_ledger *ledger);

/// A copy of everything that makes up a simulation's state at its current
/// time: speeds and block states, the mode's matrices, every block's data
/// (modes, timers, latched decisions), input values and schedule places,
/// channels, the energy audit and the counters.
typedef struct dg_snapshot dg_snapshot;
/// Takes a snapshot (allocates: not for the hot path). Fails with
/// DG_ERR_USAGE for a simulation that has failed.
DG_API dg_snapshot *dg_sim_snapshot(dg_sim *sim, dg_error *err);
/// Puts `sim` back to the snapshot's state: stepping it then gives, bit for
/// bit, what stepping the simulation gave after the snapshot was taken.
/// `sim` may be the simulation the snapshot came from or another one of the
/// same dg_graph (DG_ERR_USAGE otherwise). Schedules and callbacks are not
/// part of the state: those set on `sim` stay (their place in time is
/// restored). A restored simulation that had failed can be stepped again.
/// Does not allocate.
DG_API int dg_sim_restore(dg_sim *sim, const dg_snapshot *snap, dg_error *err);
DG_API void dg_snapshot_free(dg_snapshot *snap);

/// Speed of the node at "block.port" (rad/s or m/s); NaN if unknown.
DG_API double dg_sim_port_speed(const dg_sim *sim, const char *block_port);

/* ------------------------------------------------------------------------ */
/* Stiffness: can RK4 take the step size?                                   */

/// RK4 is stable for a mode e^{λt} when |R(λ·dt)| <= 1 with
/// R(z) = 1 + z + z²/2 + z³/6 + z⁴/24: up to |λ|·dt = 2.785 on the negative
/// real axis (a decay), 2√2 on the imaginary axis (an undamped oscillation).
#define DG_RK4_REAL_LIMIT 2.785

/// Result of dg_sim_check_stiffness.
typedef struct dg_stiffness {
  double dt;             ///< the step size checked (s)
  int size;              ///< states of the linearized system (DOFs + internal states)
  double rate;           ///< |λ| of the binding mode (1/s); 0 when nothing limits dt
  double lambda_re;      ///< its eigenvalue λ (1/s), real part
  double lambda_im;      ///< imaginary part (an oscillation at |Im λ|/2π Hz)
  double max_rate;       ///< largest |λ| of any stable or oscillating mode (1/s)
  double dt_limit;       ///< largest step RK4 is stable at (s); INFINITY if none
  double recommended_dt; ///< 2/rate rounded down to 1, 2 or 5·10^k (s); INFINITY if none
  bool stiff;            ///< dt > dt_limit: RK4 would blow this mode up
  int block;             ///< graph index of the block owning the mode's largest
                         ///< component, or -1
  char where[DG_ERROR_TEXT_LEN]; ///< the mode's largest components, largest first:
                                 ///< "speed of dyno.in (block \"dyno\"), ..."
} dg_stiffness;

/// Checks whether RK4 at step `dt` can integrate the simulation's current
/// mode: linearizes the right-hand side of M q̇ = f(q, s), ṡ = g(q, s) around
/// the current state (Jacobian by central finite differences with respect to
/// the DOF speeds q and the blocks' internal states s), computes its
/// eigenvalues (Hessenberg QR) and, for each mode that decays or oscillates
/// (Re λ <= 0), the largest dt with |R(λ·dt)| <= 1. Modes that grow by
/// themselves (Re λ > 0: a tyre past its peak) are physics, not a step-size
/// problem, and are left out; so are jumps such as Coulomb friction at
/// exactly zero speed (found by comparing differences at h, 2h and 4h).
/// The mode with the smallest limit is reported with the shafts and states
/// where its eigenvector is largest.
///
/// A simulation that has not been stepped yet is advanced by one short step
/// (1 µs at most) on a private copy first (same inputs, speeds and
/// states), so that bodies have published the normal loads the tyres'
/// stiffness depends on; `sim` itself is never changed: checking does not
/// alter a run's results.
///
/// Returns DG_OK when dt is stable, DG_ERR_NUMERIC when it is not (`err`
/// names the block at /blocks/<id>, the mode and a recommended dt),
/// DG_ERR_USAGE (dt not > 0, or the simulation has failed), or DG_ERR_BLOCK
/// when the check cannot be made (a block failed while linearizing, the
/// linearization is not finite, the eigenvalues did not converge). `out` (may be
/// NULL) is filled whenever the eigenvalues were computed. Systems of more
/// than 400 states are not checked (DG_OK, `size` set, `dt_limit` INFINITY).
/// Allocates; not for the hot path.
DG_API int dg_sim_check_stiffness(dg_sim *sim, double dt, dg_stiffness *out, dg_error *err);

/* ------------------------------------------------------------------------ */
/* Gearbox shift policy callback                                            */

/// What a shift policy sees, once per step segment (not during a shift's
/// lock-out): once per step unless an event or an input breakpoint cuts it.
typedef struct dg_shift_context {
  double time;          ///< s
  double engine_rpm;    ///< gearbox input speed in rpm
  double output_rpm;    ///< gearbox output speed in rpm
  int current_gear;     ///< -1 reverse, 0 neutral, 1..num_gears
  int num_gears;        ///< forward gears
  double vehicle_speed; ///< m/s, from the vehicle block (0 without one)
  double throttle;      ///< driver input 0..1
  double brake;         ///< driver input 0..1
} dg_shift_context;

/// Returns the gear wanted (-1 .. num_gears); returning current_gear keeps it.
typedef int (*dg_shift_policy)(const dg_shift_context *ctx, void *user);

/// Installs a shift policy on the gearbox block `gearbox_id`, overriding its
/// declarative mode (NULL restores it). `user` is passed back unchanged.
DG_API int dg_sim_set_shift_policy(dg_sim *sim, const char *gearbox_id, dg_shift_policy policy,
                            void *user, dg_error *err);

/* ------------------------------------------------------------------------ */
/* The drivetrain seen by a host at its boundary (docs/host.md)              */

/// At the n blocks `ids` that prescribe a speed in the current mode
/// (speed_source, accel_source, position_source: a host's driveshaft or
/// spindles), between steps: `inertia` (n × n, row-major) is the
/// drivetrain's effective inertia there, J = M_pp − M_pf M_ff⁻¹ M_fp (the
/// forces the prescriptions apply change by J·Δv̇ for a change Δv̇ of their
/// accelerations); `dforce_dspeed` (n × n) is ∂force_i/∂speed_j with the
/// state held (the damping the drivetrain adds: an implicit host step uses
/// both). Either may be NULL. DG_OK, or DG_ERR_UNKNOWN / DG_ERR_USAGE (a
/// block that prescribes nothing now) with `err` filled. Allocates.
DG_API int dg_sim_boundary_motion(dg_sim *sim, int n, const char *const *ids, double *inertia,
                                  double *dforce_dspeed, dg_error *err);
/// At n ports ("block.port") of free shafts where a host applies torques:
/// the mobility Y (n × n, row-major: the ports' accelerations per unit
/// torques applied at them, G_P M⁻¹ G_Pᵀ); the effective inertia is Y⁻¹
/// (1/Y for one port). Allocates.
DG_API int dg_sim_boundary_ports(dg_sim *sim, int n, const char *const *ports, double *mobility,
                                 dg_error *err);

/// Whether an explicit coupling can be stable: a host that computes a torque
/// at `port` from the drivetrain's state at the start of its step and holds
/// it over the step (a torque_source bound to a channel, one host step
/// late), with the law's slope `dtorque_dspeed` = −∂T/∂ω at that port
/// (N·m per rad/s; for a tyre R²·∂Fx/∂κ / |vx|), at the host's step `dt`.
/// The error then evolves as e ← (1 − c·dt/J) e with J the drivetrain's
/// effective inertia there (1/Y, dg_sim_boundary_ports): DG_OK when
/// 0 <= c·dt/J < 2, else DG_ERR_RANGE with a message naming the port, J and
/// c·dt/J, and the remedies (a `hub` block, which evaluates the tyre inside
/// the step, or a step below 2J/c). Allocates.
DG_API int dg_sim_check_coupling(dg_sim *sim, const char *port, double dtorque_dspeed, double dt,
                                 dg_error *err);

/* ------------------------------------------------------------------------ */
/* A host's tyre model for the hub block                                     */

/// What a host tyre model sees at every RK4 stage of a `hub` block.
typedef struct dg_tyre_state {
  double slip;   ///< the relaxed slip state κ (SAE slip ratio in steady rolling), within ±1
  double fz;     ///< normal load (N), the hub's input, >= 0
  double vx;     ///< contact patch velocity (m/s), the hub's input
  double omega;  ///< wheel speed (rad/s), the drivetrain's own at this stage
  double radius; ///< rolling radius (m)
  double t;      ///< time of the stage (s)
} dg_tyre_state;

/// Returns the tyre's longitudinal force on the chassis (N, forward
/// positive) for the state; the hub gets −Fx·R. Called at every RK4 stage
/// (and for signal reads), so it must be a function of its arguments; it
/// must return a finite value.
typedef double (*dg_tyre_fn)(const dg_tyre_state *state, void *user);

/// Installs a host's tyre model on the `hub` block `hub_id`, replacing its
/// magic formula (NULL restores it). `user` is passed back unchanged.
DG_API int dg_sim_set_tyre(dg_sim *sim, const char *hub_id, dg_tyre_fn fn, void *user,
                           dg_error *err);

/* ------------------------------------------------------------------------ */
/* Scenarios: driver inputs over time, initial values, stop condition       */

DG_API dg_scenario *dg_scenario_load_file(const char *path, dg_error *err);
DG_API dg_scenario *dg_scenario_load_string(const char *json, const char *name, dg_error *err);
DG_API void dg_scenario_free(dg_scenario *scn);
/// Reads a scenario and reports every problem of its text through fn, one
/// call each (as dg_graph_validate_file); returns their number (0: it loads).
DG_API int dg_scenario_validate_file(const char *path, dg_diag_fn fn, void *user);
DG_API int dg_scenario_validate_string(const char *json, const char *name, dg_diag_fn fn,
                                       void *user);
/// Checks a scenario against a simulation without changing it: every input
/// names one of its channels ("did you mean"), channels feeding integer
/// inputs get integers, every channel the graph binds by name is given, the
/// `initial` and `stop` signals exist. Reports every problem through fn
/// (the scenario's file and JSON pointer); returns their number.
/// dg_driver_new refuses a scenario with any, returning the first.
DG_API int dg_scenario_check(const dg_scenario *scn, const dg_sim *sim, dg_diag_fn fn, void *user);
/// What a driver of the scenario reads needs the simulation to keep
/// (dg_sim_signal_keep of its stop signal; 0 for an unknown one).
/// dg_scenario_check refuses a stop signal the simulation does not keep.
DG_API unsigned dg_scenario_keep(const dg_scenario *scn, const dg_sim *sim);
/// Values from the file; NaN when the file leaves them out.
DG_API double dg_scenario_duration(const dg_scenario *scn);
DG_API double dg_scenario_dt(const dg_scenario *scn);
DG_API double dg_scenario_output_interval(const dg_scenario *scn);

/// Binds a scenario to a simulation: resolves input and signal names (errors
/// carry the scenario file and JSON pointer) and applies `initial`. The
/// scenario must outlive the driver.
DG_API dg_driver *dg_driver_new(const dg_scenario *scn, dg_sim *sim, dg_error *err);
DG_API void dg_driver_free(dg_driver *drv);
/// Shows the scenario's inputs at time t: the driver handed them to the
/// simulation as schedules (dg_sim_set_input_schedule) when it was created,
/// and the simulation evaluates them inside every step, so stepping does
/// not need this; it sets every schedule or callback input of the
/// simulation to its value at t (dg_sim_apply_inputs). No allocation, no
/// string lookups.
DG_API void dg_driver_apply(dg_driver *drv, double t);
/// True once the scenario's stop condition holds.
DG_API bool dg_driver_should_stop(const dg_driver *drv);

/* ------------------------------------------------------------------------ */
/* Run summaries: the figures `drivegraph sim` reports                      */

/// Speeds of the standard figures (m/s) and distance (m).
#define DG_SUMMARY_V100 (100.0 / 3.6)
#define DG_SUMMARY_X400 400.0
/// A run "starts from rest" below this speed (m/s), and "is at rest" below
/// DG_SUMMARY_REST (m/s).
#define DG_SUMMARY_FROM_REST 0.1
#define DG_SUMMARY_REST 0.01
/// Shifts stored in the log (shifts_total counts them all).
#define DG_SUMMARY_MAX_SHIFTS 200

/// One shift of the log.
typedef struct dg_summary_shift {
  double t;     ///< s: the start of the step at which the new gear was selected
  int from, to; ///< gears (-1 R, 0 neutral)
  double rpm;   ///< engine (else motor, else gearbox input) rpm when it was selected
} dg_summary_shift;

/// What a run is summarized by, collected step by step (dg_summary_sample)
/// from the signals of the first vehicle block, the first gearbox, the
/// engine (else motor, else the gearbox input) and every wheel. Fields are
/// NaN (times, speeds) or -1 (ids, slip_wheel) until they are known; the
/// 0-100 km/h and 0-400 m figures only for a start from rest
/// (v_start <= DG_SUMMARY_FROM_REST), the time to rest only for a moving
/// start. Crossing times are interpolated linearly within one step. The
/// struct is the caller's; the arrays in it are owned by it (dg_summary_free).
typedef struct dg_summary {
  const dg_sim *sim;
  int id_speed, id_x, id_gear, id_rpm; ///< signal ids, -1 when the graph has no such block
  int nwheels;
  int *id_slip;         ///< per wheel: its slip_ratio signal
  int *id_wheel_v;      ///< per wheel: its ground speed signal
  const char **wheel;   ///< the wheels' block ids (owned by the graph)
  const char *vehicle;  ///< vehicle block id or NULL
  const char *gearbox;  ///< first gearbox id or NULL
  const char *rpm_name; ///< the signal behind the shift log's rpm ("engine.rpm") or NULL

  bool started;
  double t_prev, v_prev, x_prev, rpm_prev;
  int gear_prev;
  int gear_start;        ///< after the first step's engagement; 0 without a gearbox
  double v_start, x_start; ///< m/s, m
  double v_top, t_top;   ///< m/s, s
  double t_100;          ///< s: 0-100 km/h, from rest only
  double t_400, v_400;   ///< s, m/s: 0-400 m, from rest only
  double rest_speed;     ///< m/s: "at rest" below it (DG_SUMMARY_REST unless set after init)
  double t_rest, x_rest; ///< s, m: a moving start, then at rest
  double slip_peak, slip_t; ///< peak |slip_ratio| above 1 m/s ground speed, and when (s)
  int slip_wheel;        ///< index into wheel[], -1 none
  dg_summary_shift shifts[DG_SUMMARY_MAX_SHIFTS];
  int nshifts;           ///< stored
  long shifts_total;     ///< including those not stored
} dg_summary;

/// Resolves the signals of `sim` (which must outlive the summary). Returns
/// DG_OK, or DG_ERR_NOMEM (the summary is then empty and needs no free).
DG_API int dg_summary_init(dg_summary *s, const dg_sim *sim);
/// Releases the arrays; the summary may be initialized again.
DG_API void dg_summary_free(dg_summary *s);
/// Records the state after a step ending at time t (s); call it once at
/// t = 0 too, before the first step. A few signal reads, no allocation.
DG_API void dg_summary_sample(dg_summary *s, double t);

/// A run's steps and output rows, as `drivegraph sim` and the Python
/// package take them: ceil(duration / dt) steps (1e-9 of a step forgiven;
/// duration NaN: open-ended, LONG_MAX steps), a row every
/// round(interval / dt) >= 1 steps (interval NaN: max(dt, 0.01) s) at times
/// that are exact multiples of the interval used.
typedef struct dg_run_timing {
  long total_steps;
  long steps_per_row;
  double interval; ///< steps_per_row × dt when the one asked for is not a multiple of dt
} dg_run_timing;
/// 0; 1 when the interval was rounded to a whole number of steps; -1 for
/// more than 1e12 steps.
DG_API int dg_run_timing_init(dg_run_timing *rt, double dt, double duration, double interval);

/* ------------------------------------------------------------------------ */
/* Preset drivers: `drivegraph sim --preset`                                */

/// A built-in driver for a graph with a vehicle block (lib/run/preset.c has
/// the details; docs/cli.md, "Presets"):
/// - "launch": full throttle from rest, the engine at idle; a manual box
///   gets gear 1 and a pedal clutch is released over 1 s, then the driver
///   shifts up at 0.96 × redline; done at 400 m and >= 100 km/h (60 s limit);
/// - "coast": closed throttle from the start speed in the highest sensible
///   gear (a copy of the graph with the gearbox's start_gear); done below
///   1 km/h or creeping steadily (300 s limit);
/// - "brake": full brake from the start speed; done at rest (30 s limit).
/// It works the channels throttle, brake, clutch and gear; the others the
/// graph binds by name must be given by the caller. Not thread-safe: one
/// preset drives one simulation.
typedef struct dg_preset dg_preset;

/// 1, 2, 3 for "launch", "coast", "brake"; 0 for another name.
DG_API int dg_preset_find(const char *name);
/// Creates preset `name` for `graph` (loaded with `reg`, NULL for the
/// built-in classes) whose JSON text is `graph_json` (the file's text, or
/// what a YAML config converts to): the parameters it needs are read from
/// it. `from_speed_kmh` is the start speed of coast and brake (NaN: 100).
/// `given` lists the `n_given` channels the caller holds itself (the CLI's
/// --input). Every reason it cannot drive the graph (more than one engine,
/// gearboxes or clutches sharing its channels, a channel the graph binds
/// that is not given, no vehicle) is reported through `fn`; returns NULL
/// with the first in `err`. The graph must outlive the preset.
DG_API dg_preset *dg_preset_new(const dg_registry *reg, const dg_graph *graph,
                                const char *graph_json, const char *name, double from_speed_kmh,
                                int n_given, const char *const *given, dg_diag_fn fn, void *user,
                                dg_error *err);
DG_API void dg_preset_free(dg_preset *preset);
/// The graph to simulate: the one given, or for coast and brake its copy
/// starting in the chosen gear (owned by the preset).
DG_API const dg_graph *dg_preset_graph(const dg_preset *preset);
DG_API const char *dg_preset_name(const dg_preset *preset);
/// The run's time limit (s) when the caller gives none.
DG_API double dg_preset_time_limit(const dg_preset *preset);
/// The start speed (m/s): 0 for a launch.
DG_API double dg_preset_start_speed(const dg_preset *preset);
/// The speed (m/s) below which the summary counts the car at rest
/// (dg_summary.rest_speed): 1 km/h for coast, DG_SUMMARY_REST otherwise.
DG_API double dg_preset_rest_speed(const dg_preset *preset);
/// Sets the start on a new simulation of dg_preset_graph: the engine at
/// idle (launch), or every speed rolling at the start speed. The caller
/// then applies the inputs at t = 0 and calls dg_sim_start. DG_OK or an error.
DG_API int dg_preset_start(dg_preset *preset, dg_sim *sim, dg_error *err);
/// The driver's inputs for the step starting at t (s): sets the four
/// standard inputs. Call it before each step.
DG_API void dg_preset_apply(dg_preset *preset, dg_sim *sim, double t);
/// True once the goal is met, checked after a step ending at t (s) (and once
/// at t = 0); `reason` (may be NULL) then says which goal.
DG_API bool dg_preset_done(dg_preset *preset, const dg_sim *sim, double t, char *reason,
                           size_t size);

/* ------------------------------------------------------------------------ */
/* Batch runs: parameter overrides and many simulations on several threads  */

/// One parameter override. `key` is "block.param", or "block.param.field"
/// for a field of a nested object ("wheel_rl.tyre.D", "gearbox.shift.upshift_rpm");
/// `value` is JSON text ("0.15", "[3.4, 2.1, 1.4]", "\"locked\""), and text
/// that is not JSON is taken as a string (`locked`). Both strings are
/// borrowed for the duration of the call that uses them.
typedef struct dg_override {
  const char *key;
  const char *value;
} dg_override;

/// Applies overrides to a graph's JSON text: each one sets
/// /blocks/<block>/<param>[/<field>...] (later overrides win), creating the
/// last key when it is absent, so that a misspelt parameter reaches the
/// loader and is reported there with "did you mean". Returns the new text
/// (malloc'ed, release with free()), or NULL and fills `err` (code, `name`
/// as the file, the override's JSON pointer as the path, the override named
/// in the text) for text that is not a graph object, an unknown block, a
/// key without a parameter, or a path through a value that is not an
/// object. Numbers keep every bit (17 significant digits); block order is
/// kept, so an unmodified graph simulates identically.
DG_API char *dg_override_apply(const char *json, const char *name, int n, const dg_override *ov,
                        dg_error *err);

/// dg_override_apply, then dg_graph_load_string: overrides are validated
/// like the file itself. A load error at or inside an override's path ends
/// with " (override KEY=VALUE)", any other error of a modified graph with
/// " (with N overrides)". `n` = 0 loads `json` unchanged.
DG_API dg_graph *dg_graph_load_overrides(const dg_registry *reg, const char *json, const char *name,
                                  int n, const dg_override *ov, dg_error *err);

/// The built-in "launch" input pattern at time t (s), used by `drivegraph
/// bench` and by batch runs without a scenario: full throttle from t = 0,
/// brake 0, clutch pedal 0 (engaged), gear input 1 + floor(t / 2 s) (a
/// manual gearbox shifts up every 2 s, up to its top gear; automatic modes
/// read any gear input >= 0 as drive). Sets the four standard inputs.
DG_API void dg_batch_launch_inputs(dg_sim *sim, double t);

/// One variant of a batch: overrides applied to the base graph.
typedef struct dg_batch_variant {
  int n_overrides;
  const dg_override *overrides;
} dg_batch_variant;

typedef struct dg_batch_options {
  const dg_registry *reg;      ///< NULL: the built-in classes; read-only, shared by the threads
  const char *graph_json;      ///< text of the base graph (required)
  const char *graph_name;      ///< file named in errors (NULL: "<string>")
  const dg_scenario *scenario; ///< inputs, initial values, stop condition; NULL: the launch pattern
  double dt;                   ///< s; NaN or <= 0: the scenario's, else 0.001
  double duration;             ///< s; NaN or <= 0: the scenario's, else 10
  int threads;                 ///< <= 0: one per online CPU; never more than variants
  int n_signals;               ///< final values reported per variant
  const char *const *signals;  ///< their names ("engine.rpm"); NaN where a variant lacks one
  const char *speed_signal;    ///< for t_0_100 and top_speed; NULL: "<id>.speed" of the first vehicle block
} dg_batch_options;

/// Zeroes the options and sets dt and duration to NaN (the defaults).
DG_API void dg_batch_options_init(dg_batch_options *o);

/// Summary of one variant's run.
typedef struct dg_batch_result {
  int code;                ///< DG_OK, or why the variant failed (load, scenario or step; see error)
  dg_error error;          ///< the failure, DG_OK otherwise
  double t_0_100;          ///< s at which speed_signal first reached 100 km/h (linear between steps); NaN if never
  double top_speed;        ///< m/s: the largest speed_signal value; NaN without one
  double final_time;       ///< s: time at the end (the duration, or the stop condition's step)
  long steps;              ///< steps taken
  long topology_changes;   ///< mode changes (dg_sim_topology_changes)
  double balance_error;    ///< J: the energy audit's balance error (dg_energy)
  double work_in;          ///< J: the audit's work in, the scale of balance_error
} dg_batch_result;

/// Runs every variant to the end as its own simulation and fills
/// results[i] and, when opt->n_signals > 0, final_values[i * n_signals + k].
/// Each run is exactly: load the graph with the variant's overrides
/// (dg_graph_load_overrides), dg_sim_new, dg_driver_new when there is a
/// scenario; then while fewer than ceil(duration / dt) steps are taken and
/// the stop condition does not hold: inputs at t = k·dt (dg_driver_apply
/// or dg_batch_launch_inputs), dg_sim_step(dt), speed bookkeeping. The
/// results do not depend on the number of threads or on other variants.
/// Loading checks every reachable mode once per distinct structure, not
/// once per variant: a variant whose overrides cannot change the outcome
/// of that check (parameters marked DG_P_DYNAMICS in their class's table,
/// inertias marked DG_P_INERTIA within a range the batch has checked) is
/// loaded without it, reusing the base graph's check or that of the
/// structure it shares with other variants (the base graph with the same
/// overrides of other parameters), and its results and errors are those
/// of a full load.
/// Threads: variant i runs on thread i % T, one simulation per thread at a
/// time; the threads share only read-only inputs and write disjoint result
/// slots. Returns DG_OK once every variant has run (failed variants carry
/// their own code), or an error in `err` when nothing could run: missing
/// graph text, a base graph that does not load, an unknown signal name,
/// out of memory.
DG_API int dg_batch_run(const dg_batch_options *opt, int n, const dg_batch_variant *variants,
                 dg_batch_result *results, double *final_values, dg_error *err);

/// Loads every variant's graph as dg_batch_run does, sharing the every-mode
/// check the same way, and simulates nothing: results[i].code is DG_OK or
/// the load error (results[i].error, the text ending with the override as
/// dg_graph_load_overrides writes it); the other result fields are 0, or
/// NaN for t_0_100 and top_speed. For naming a bad override before a long
/// batch starts (`drivegraph sweep` loads each --set value alone this way).
/// opt's signals are not looked up. Threads and return value as
/// dg_batch_run.
DG_API int dg_batch_validate(const dg_batch_options *opt, int n, const dg_batch_variant *variants,
                             dg_batch_result *results, dg_error *err);

#ifdef __cplusplus
}
#endif
#endif
