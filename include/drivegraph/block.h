/// drivegraph block author API.
///
/// A block class is a `const dg_block_class` table: its ports, parameters and
/// signals described as data, plus hooks the solver calls. See
/// docs/writing-blocks.md and blocks/gear.c for a complete small example.
///
/// The mechanical model. Connected ports turn at one speed and form a node.
/// Every node speed is a linear combination of the degrees of freedom (DOFs)
/// q of the current mode: x = G q. On every mode change the solver walks the
/// blocks from the road back to the sources and each block's
/// `state_upstream` expresses its `in` (and internal) ports in terms of its
/// `out` ports (dg_topo_link), declares new DOFs (dg_topo_dof), ties speeds
/// together or to ground (dg_topo_tie) and places inertia at ports
/// (dg_topo_inertia). The solver then assembles M = Gᵀ diag(I) G, and every
/// RK4 substep the blocks' `torque_downstream` add torques at ports; the
/// solver solves M q̇ = Gᵀ (τ + L), where L are the loss torques of the
/// lossy meshes (links and ties with an efficiency below 1): each mesh
/// loses (1 − η) of the power it transmits (docs/solver.md, "Losses").
///
/// Sign conventions: a port's speed is positive in the direction of forward
/// travel; a torque added at a port accelerates that port's node in the
/// positive direction. Linear ports use m/s and N in the same way.
#ifndef DRIVEGRAPH_BLOCK_H
#define DRIVEGRAPH_BLOCK_H

#include <drivegraph/drivegraph.h>
#include <math.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Bump when dg_block_class changes incompatibly; classes state the ABI they
/// were built for in their `abi` field.
#define DG_BLOCK_ABI 6

typedef struct dg_block dg_block;
typedef struct dg_ctx dg_ctx;
typedef struct dg_topo dg_topo;
typedef struct dg_init dg_init;
typedef struct dg_check dg_check;

/* ------------------------------------------------------------------------ */
/* Ports                                                                    */

typedef enum dg_port_dir {
  DG_PORT_IN,       ///< toward the power source; shares a shaft with an `out` port
  DG_PORT_OUT,      ///< toward the road; shares a shaft with an `in` port
  DG_PORT_INTERNAL, ///< a node inside the block (diff carrier, body mass); not connectable
  /// A member that may drive or be driven, as the connections make it (a
  /// planetary's sun, carrier and ring; a brake's shaft): it joins a shaft
  /// with ports of any direction. Its block relates it to its other ports
  /// by ties (dg_topo_tie), not by expressing it from them, and it does not
  /// order the blocks.
  DG_PORT_ANY
} dg_port_dir;

typedef enum dg_domain {
  DG_ROTATIONAL, ///< rad/s, N·m, kg·m²
  DG_LINEAR      ///< m/s, N, kg
} dg_domain;

typedef struct dg_port_def {
  const char *name; ///< NULL terminates the table
  dg_port_dir dir;
  dg_domain domain;
  bool optional; ///< may be left unconnected
  const char *doc;
} dg_port_def;

/* ------------------------------------------------------------------------ */
/* Parameters: one table per class drives parsing, validation, docs, schema */

typedef enum dg_param_kind {
  DG_PARAM_NUMBER,  ///< double
  DG_PARAM_INTEGER, ///< int
  DG_PARAM_BOOL,    ///< bool
  DG_PARAM_ENUM,    ///< int: index into `choices`, written in JSON as the string
  DG_PARAM_ARRAY,   ///< dg_array of numbers
  DG_PARAM_TABLE1D, ///< dg_table1d: { "<axis[0]>": [...], "<axis[1]>": [...] }
  DG_PARAM_TABLE2D, ///< dg_table2d: { "<axis[0]>": [x...], "<axis[1]>": [y...], "<axis[2]>": [[z...] per y] }
  DG_PARAM_OBJECT   ///< nested object described by `fields`, stored at `offset`
} dg_param_kind;

/// Range flags for dg_param_def.flags, and what a parameter can do to the
/// modes (DG_P_DYNAMICS, DG_P_INERTIA).
///
/// Loading a graph checks every reachable mode (the blocks' state_upstream
/// in every combination of their mode_set modes). A batch run that overrides
/// parameters (dg_batch_run, `drivegraph sweep`) skips that check for a
/// variant when no override can change its outcome, and reuses the base
/// graph's: the two flags below say which parameters those are. A parameter
/// without either may change it (ratios, kinds, anything state_upstream,
/// mode_count or mode_set reads, or init derives their data from), and every
/// variant overriding it is checked in full. Leave them off when in doubt:
/// a flag that is wrong lets a sweep accept a variant that loading the same
/// graph refuses.
enum {
  DG_P_MIN = 1u << 0,      ///< value >= min
  DG_P_MAX = 1u << 1,      ///< value <= max
  DG_P_MIN_EXCL = 1u << 2, ///< value > min
  DG_P_MAX_EXCL = 1u << 3, ///< value < max
  DG_P_INCREASING = 1u << 4, ///< array: strictly increasing
  /// Used only by the dynamics (torques, decisions in pre_step / post_step,
  /// events, signals), not by state_upstream or the mode hooks, nor by init
  /// for data they read, and init cannot fail on it — or read by
  /// state_upstream only as the efficiency of a dg_topo_link, which weights
  /// torques but enters neither G nor M. Overriding it, or giving it where
  /// the file leaves it out, cannot change which modes are valid. On an
  /// object: its presence and every field (each field must carry the flag).
  DG_P_DYNAMICS = 1u << 5,
  /// A number (an inertia, a mass) that state_upstream passes only to
  /// dg_topo_inertia, at most times a factor >= 0 fixed by parameters
  /// without these flags, that mode_count, mode_set and init do not read,
  /// and that the dynamics may read. The every-mode check sees it only in
  /// the inertia matrix M = Gᵀ diag(I) G, whose positive definiteness it
  /// tests relative to M's largest diagonal entry; M is linear in it, so a
  /// batch run reuses a check for every value between two values that pass
  /// (see lib/run/batch.c).
  DG_P_INERTIA = 1u << 6
};

typedef struct dg_array {
  int n; ///< 0 when absent
  const double *v;
} dg_array;

/// 1-D lookup table, strictly increasing x; linear, clamped at the ends.
typedef struct dg_table1d {
  int n; ///< 0 when absent
  const double *x;
  const double *y;
} dg_table1d;

/// 2-D lookup table: z[iy * nx + ix] at (x[ix], y[iy]); bilinear, clamped.
typedef struct dg_table2d {
  int nx, ny; ///< 0 when absent
  const double *x;
  const double *y;
  const double *z;
} dg_table2d;

DG_API double dg_table1d_eval(const dg_table1d *t, double x);
/// As dg_table1d_eval, for lookups that move along the table (a trace read
/// at the simulation's time): *hint (start it at 0; kept in block data) is
/// the piece last found, tried first with its neighbours before a binary
/// search. The same value as dg_table1d_eval for any hint. When slope is
/// not NULL it gets the piece's slope dy/dx (0 outside the table, where the
/// value is held; at a breakpoint, the piece that starts there).
DG_API double dg_table1d_eval_hint(const dg_table1d *t, double x, int *hint, double *slope);
DG_API double dg_table2d_eval(const dg_table2d *t, double x, double y);

typedef struct dg_param_def {
  const char *key;    ///< JSON key; NULL terminates the table
  dg_param_kind kind;
  size_t offset;      ///< offsetof() the target in the params struct (or enclosing object)
  const char *unit;   ///< "N*m", "kg*m^2", "rpm", "" for none
  const char *doc;    ///< one line
  bool required;
  double def;         ///< default for NUMBER, INTEGER, BOOL (0/1), ENUM (index)
  unsigned flags;     ///< DG_P_* range flags; for arrays and tables they apply to values
  double min, max;    ///< bounds selected by flags
  const char *const *choices;         ///< ENUM: NULL-terminated names
  int min_len, max_len;               ///< ARRAY / table axis lengths (0 = no bound)
  const char *axis[3];                ///< table key names (x, y[, z])
  const struct dg_param_def *fields;  ///< OBJECT: nested table
  size_t present;     ///< 0, or offsetof(bool member)+1: set true when the key is given
} dg_param_def;

/// `present` member helper: `.present = DG_PRESENT(my_params, has_road_load)`.
#define DG_PRESENT(type, member) (offsetof(type, member) + 1)

/* ------------------------------------------------------------------------ */
/* Signals                                                                  */

/// A signal is either the scaled speed of one of the block's ports
/// (`port` >= 0: value = scale · speed; settable as an initial value) or
/// computed by the class's `signal` hook (`port` = DG_SIGNAL_HOOK).
#define DG_SIGNAL_HOOK (-1)
typedef struct dg_signal_def {
  const char *name; ///< NULL terminates the table
  const char *unit;
  const char *doc;
  int port;
  double scale;
  unsigned flags; ///< DG_SIGNAL_*
} dg_signal_def;

/// Signal flags.
enum {
  /// The hook's value depends on the block's inputs at the same instant (a
  /// controller's proportional term, an engine's torque on its throttle),
  /// not only on speeds, states and time. A graph that binds such signals
  /// into a loop (a block's input depending on its own feedthrough output
  /// through any chain) is an algebraic loop, refused at load.
  DG_SIGNAL_FEEDTHROUGH = 1u << 0,
  /// The signal's values are whole numbers (a gear): it may feed an
  /// integer input (DG_INPUT_INTEGER), which a continuous signal may not.
  DG_SIGNAL_INTEGER = 1u << 1,
  /// The signal is 0 or 1 (locked, held, a cut): it may feed a boolean or
  /// an integer input.
  DG_SIGNAL_BOOL = 1u << 2,
  /// The energy ledger (docs/energy.md). A block that exchanges energy
  /// outside the shafts (fuel burnt, a battery's charge, electricity,
  /// heat) reports each kind as a signal in J, integrated since the start
  /// (a continuous state: RK4 integrates it with the mechanics), flagged
  /// with its kind. For each such block its net shaft work W (the audit's,
  /// dg_sim_block_work) obeys W = fuel + stored + electric − heat, and the
  /// ledger (dg_sim_energy_ledger) closes the audit from the fuel and the
  /// batteries to the road.
  /// J: the chemical energy of the fuel the block has burnt (>= 0).
  DG_SIGNAL_ENERGY_FUEL = 1u << 3,
  /// J: the energy the block's store has given up (a battery's chemical
  /// energy, ∫ V_oc I dt; negative while it has taken in more than given).
  DG_SIGNAL_ENERGY_STORED = 1u << 4,
  /// J: the electrical energy the block has taken from its bus (negative:
  /// delivered to it, as a generator or a battery does).
  DG_SIGNAL_ENERGY_ELECTRIC = 1u << 5,
  /// J: the energy the block has turned into heat outside the shafts (an
  /// engine's, a machine's or a battery's losses, an auxiliary load).
  DG_SIGNAL_ENERGY_HEAT = 1u << 6,
  /// W: the electrical power the block takes from its bus now (negative:
  /// delivers), at every RK4 stage. A graph binds it to exactly one input
  /// flagged DG_INPUT_ELECTRIC (a bus's or a battery's), so the bus
  /// balances at every stage; binding it to two is refused at load.
  DG_SIGNAL_ELECTRIC_POWER = 1u << 7,
  /// 1 when the block keeps an energy ledger in this graph, 0 when it does
  /// not (an engine without a fuel model: its energy signals read 0 and
  /// its work counts as work from outside). A block with energy signals
  /// and no such signal always keeps one.
  DG_SIGNAL_LEDGER = 1u << 8
};

/// A range of values, for the binding checks made at load (lib/bind.c):
/// what an input accepts, or what a signal can take (dg_block_class's
/// input_range and signal_range).
typedef struct dg_range {
  double min, max;  ///< the values (-INFINITY / INFINITY: unbounded on that side)
  /// Signals: the highest frequency (Hz) of a signal that oscillates (a
  /// sine's), 0 for one that does not. A step dt samples it only when
  /// frequency <= 1 / (2 dt): dg_graph_check_step refuses a faster one.
  double frequency;
} dg_range;

/* ------------------------------------------------------------------------ */
/* Inputs                                                                   */

/// An input is a value a block reads every substep (a pedal, a command, a
/// measured speed). The class declares it here; a graph binds it, in the
/// block's "inputs" object, to a named channel ("c1"), to another block's
/// signal ("driver.throttle") or to a number. An input the graph does not
/// bind follows its default `source`:
///   NULL or ""     the constant `def`;
///   "name"         the channel `name` (given by a scenario, a preset or
///                  dg_sim_set_input; `def` while not given);
///   ">signal"      `signal` of the nearest block downstream (through out
///                  ports) that has a signal of that name (a gearbox's
///                  "throttle_cut" for the engine driving it); `def` if none;
///   "@type.signal" `signal` of the graph's one block of class `type` (the
///                  vehicle's speed); `def` if there is none; with two the
///                  graph must bind the input.
/// Blocks read inputs with dg_block_input.
typedef struct dg_input_def {
  const char *name; ///< NULL terminates the table
  const char *unit;
  const char *doc;
  const char *source; ///< default source (see above)
  double def;         ///< value of an absent source
  unsigned flags;     ///< DG_P_MIN / DG_P_MAX (range of constants and scenario values), DG_INPUT_*
  double min, max;
} dg_input_def;

/// Input flags (beside DG_P_MIN / DG_P_MAX).
enum {
  /// The graph must bind the input (a controller's measurement).
  DG_INPUT_REQUIRED = 1u << 8,
  /// An integer value (a gear): a scenario's channel feeding it steps from
  /// breakpoint to breakpoint instead of interpolating. A constant, a
  /// schedule's value or a signal that is not a whole number is refused
  /// (signals must be DG_SIGNAL_INTEGER or DG_SIGNAL_BOOL).
  DG_INPUT_INTEGER = 1u << 9,
  /// The block reads the input's time derivative (dg_block_input_derivative: a
  /// prescribed speed's acceleration). The binding must have one: a
  /// constant, a channel (a schedule's slope, a callback's derivative, 0
  /// for a value held by dg_sim_set_input) or a signal of a time source
  /// (DG_CLASS_TIME_SOURCE); any other binding is refused at load.
  DG_INPUT_RATE = 1u << 10,
  /// A boolean (a command that is on or off: a lock-up, a throttle cut):
  /// 0 or 1, fed by constants 0 and 1, schedules of them (which step) and
  /// signals flagged DG_SIGNAL_BOOL.
  DG_INPUT_BOOL = 1u << 11,
  /// The block controls what the input measures (a driver's vehicle
  /// speed): left to a default source the graph does not have ("@vehicle"
  /// without a vehicle) it would read a constant, and loading warns.
  DG_INPUT_MEASURED = 1u << 12,
  /// The input is electrical power drawn through it (W; a bus's member, a
  /// battery's load): bound to a block's signal, that signal must be a
  /// DG_SIGNAL_ELECTRIC_POWER one, and no such signal may feed two of these
  /// inputs (it would be drawn twice). Numbers and channels are accepted (a
  /// load imposed from outside; the ledger then shows the electricity from
  /// outside the model).
  DG_INPUT_ELECTRIC = 1u << 13
};

#define DG_RPM_PER_RAD_S 9.549296585513720 /* 30/pi */

/* ------------------------------------------------------------------------ */
/* The class                                                                */

/// Class flags.
enum {
  /// G depends on the block's state (a CVT): the solver re-runs
  /// state_upstream and re-factors M every RK4 substep.
  DG_CLASS_VARIABLE_KINEMATICS = 1u << 0,
  /// The class's hook signals are functions of time and parameters only
  /// (a sine or a table over time), so their time derivative can be taken
  /// by evaluating them at nearby times (DG_INPUT_RATE bindings).
  DG_CLASS_TIME_SOURCE = 1u << 1,
  /// The block acts only through the relative motion of its first two
  /// ports (a spring, a damper between `in` and `out`). Loading warns when
  /// in every mode the two turn as one shaft (other blocks tie them
  /// rigidly), for then the block can never act.
  DG_CLASS_COMPLIANCE = 1u << 2
};

struct dg_block_class {
  int abi;          ///< DG_BLOCK_ABI
  const char *type; ///< JSON "type"
  const char *doc;  ///< one paragraph for `drivegraph blocks`
  unsigned flags;

  const dg_port_def *ports;     ///< NULL-terminated by name
  const dg_param_def *params;   ///< NULL-terminated by key
  size_t params_size;           ///< size of the params struct the table fills
  const dg_signal_def *signals; ///< NULL-terminated by name
  size_t data_size;             ///< per-simulation instance data, zeroed
  /// Continuous internal states integrated by RK4 (a tyre's relaxation slip,
  /// a body's position). They live in the solver's state vector y = [q; s],
  /// not in the block: read them with dg_block_state, write their rates in
  /// torque_downstream with dg_block_state_rate, and reset or clamp the
  /// committed values in pre_step / post_step / set_signal with
  /// dg_block_state_commit. They start at 0, or at what init writes through
  /// dg_init_state.
  int num_states;

  /// Extra checks on parsed parameters, beyond the table (at load and
  /// validate). Report with dg_check_error; the path is relative to the block.
  void (*check)(const void *params, dg_check *chk);
  /// Derives instance data (self->data) from self->params. Return 0, or
  /// non-zero after dg_init_error.
  int (*init)(dg_block *self, dg_init *init);
  void (*destroy)(dg_block *self);

  /// Discrete modes, so that `validate` can check every reachable one.
  /// NULL mode_count means one mode.
  int (*mode_count)(const dg_block *self);
  void (*mode_set)(dg_block *self, int mode);
  const char *(*mode_name)(const dg_block *self, int mode);

  /// Before each step segment (a step, or the part of one after an event
  /// or an input breakpoint): discrete decisions; may call
  /// dg_ctx_request_topology. ctx->dt is the planned length of the segment.
  void (*pre_step)(dg_block *self, dg_ctx *ctx);
  /// On each mode change: kinematics, DOFs, ties and inertia (dg_topo_*).
  /// NULL: every in and internal port becomes a free DOF.
  void (*state_upstream)(dg_block *self, dg_topo *topo);
  /// Every RK4 substep: add torques/forces at ports (dg_port_add_torque)
  /// and, for a class with num_states, write the states' rates
  /// (dg_block_state_rate; they are zeroed before). Required with
  /// num_states > 0.
  void (*torque_downstream)(dg_block *self, dg_ctx *ctx);

  /// After each step segment (at a located event's time, or the step's
  /// end): lock/unlock decisions, using dg_ctx_tie_force. ctx->dt is the
  /// length integrated.
  void (*post_step)(dg_block *self, dg_ctx *ctx);
  /// Value of a DG_SIGNAL_HOOK signal.
  double (*signal)(const dg_block *self, const dg_ctx *ctx, int index);
  /// Sets a hook signal as an initial value (a state through
  /// dg_block_state_commit); return 0, or -1 if not settable.
  int (*set_signal)(dg_block *self, dg_ctx *ctx, int index, double value);

  /// Switching conditions located inside the step (ABI 2): the number of
  /// event functions the block has, and a hook filling g[0..num_events).
  /// A mode change is due when some g_i goes from > 0 at the start of a step
  /// segment to <= 0 at its end (a slip crossing zero: g = slip · direction;
  /// a lock torque reaching the static capacity: g = T_s − |λ|). The solver
  /// then finds the time of the first such crossing on the step's dense
  /// output, integrates to exactly that time, and runs every post_step
  /// there, so the block's usual post_step test decides the change. The
  /// context has the time, speeds, inputs, states and tie forces
  /// (dg_ctx_tie_force) of the point evaluated; the hook must not change
  /// the block. Set g_i = +1 for a condition that does not apply in the
  /// current mode, and return 0 when none applies (the solver then skips
  /// the block's end-of-segment evaluation), else 1. NULL / 0: no events
  /// (decisions at step ends only).
  int num_events;
  int (*event_values)(const dg_block *self, dg_ctx *ctx, double *g);

  /// Inputs (ABI 3), NULL-terminated by name: read with dg_block_input.
  const dg_input_def *inputs;

  /// Making the start consistent (ABI 3), run by dg_sim_start (which
  /// scenarios and presets call after the initial values), with the inputs
  /// of the start time and the speeds settled so far. DG_START_PROPOSE:
  /// adopt what the inputs say about the start mode (a manual gearbox takes
  /// its lever's gear; dg_ctx_request_topology) and propose speeds for
  /// shafts the initial values leave free (dg_ctx_start_speed: an engine
  /// at idle, a tyre rolling with the road). Blocks are asked from the road
  /// back to the sources, each seeing what the ones before settled.
  /// DG_START_CHECK: refuse a start the block cannot run from (an engine
  /// driven above its redline) with dg_ctx_fail, saying what to change. A
  /// check may also change the block's mode (dg_ctx_request_topology) where
  /// the speeds already satisfy it, and write its states
  /// (dg_block_state_commit): the mode is then built keeping every speed and
  /// all the checks run again, up to 4 rounds (a spring_damper turns rigid
  /// to read the torque a rigid line carries at the start, then sets its
  /// static twist and turns back).
  /// NULL: nothing to adopt, propose or check.
  void (*start)(dg_block *self, dg_ctx *ctx, int phase);

  /// Prescribed motion (ABI 4): a class whose state_upstream calls
  /// dg_topo_prescribe gives the prescribed speed of that port's shaft
  /// (rad/s, or m/s on a linear port) and its time derivative at the
  /// context's time, at every point the solver evaluates (before the
  /// speeds of that point exist: read inputs and the block's states, not
  /// speeds). The shaft then follows it exactly; the torque it takes is
  /// dg_ctx_motion_torque.
  void (*motion)(const dg_block *self, const dg_ctx *ctx, double *speed, double *accel);

  /// Ranges that depend on the parameters (ABI 5), for the binding checks
  /// made at load. input_range narrows what input `input` accepts (a
  /// gearbox's gear: -1 .. its number of gears); signal_range what hook
  /// signal `signal` can take and how fast it oscillates (a sine: offset ±
  /// amplitude, at its frequency). The framework fills *r first from the
  /// tables (an input's DG_P_MIN / DG_P_MAX bounds, else unbounded; a
  /// signal unbounded, frequency 0). A constant or a scenario's schedule
  /// outside an input's range, and a signal whose range is not within it,
  /// are refused with both places named. NULL: the tables say all.
  void (*input_range)(const void *params, int input, dg_range *r);
  void (*signal_range)(const void *params, int signal, dg_range *r);

  /// Holds decided at a segment's start (ABI 6): after pre_step and the
  /// mode change it asked for, with the tie forces of the mode now built
  /// at the committed state and the segment's inputs (dg_ctx_tie_force),
  /// let go of a hold that cannot be kept — its multiplier beyond its
  /// capacity (a brake's, a clutch's static capacity; a freewheel's
  /// reversed torque) — with dg_ctx_request_topology, as post_step would.
  /// Run at every segment's start where the solver locates events and
  /// some tie is active (t = 0, after a restore or set_initial, right
  /// after a mode change, at an input's jump), and again in the new mode
  /// after a release, until no block lets go. It must only release, never
  /// engage: each round then drops at least one hold, so the rounds end
  /// (the solver stops after one round per block with this hook). NULL:
  /// the block keeps no hold of its own, or decides it in post_step only.
  void (*hold_check)(dg_block *self, dg_ctx *ctx);
};

/// Phases of dg_block_class.start.
enum { DG_START_PROPOSE, DG_START_CHECK };

/// A block instance. Authors read the fields; the framework owns them.
struct dg_block {
  const dg_block_class *klass;
  const char *id;     ///< the key in "blocks"
  const void *params; ///< parsed parameter struct (shared by simulations, read-only)
  void *data;         ///< instance data, klass->data_size bytes
  const int *node;    ///< node index of each port, in port-table order
  int index;          ///< position in the graph
  int state;          ///< offset of the block's num_states values in the state vector
  const double *const *in; ///< where each input's value is, in input-table order
};

/* ------------------------------------------------------------------------ */
/* Step context                                                             */

struct dg_ctx {
  double t;             ///< time of this substep (s)
  double dt;            ///< length of the step segment (s): planned in pre_step, integrated in post_step
  const double *speed;  ///< node speeds of this substep
  double *torque;       ///< node torque accumulator (torque_downstream only)
  double power;         ///< power of the torques added by the current block (energy audit)
  const double *input;  ///< driver inputs (DG_INPUT_* and custom)
  double *channel;      ///< block-to-block values (dg_init_channel)
  double *normal_load;  ///< per node: normal force on a ground contact (N)
  const double *state;  ///< continuous states at this point (dg_block_state)
  double *state_rate;   ///< torque_downstream: their rates (dg_block_state_rate), else NULL
  double *state_commit; ///< pre_step, post_step, set_signal: the committed states, else NULL
  dg_sim *sim;
};

/// The block's continuous states at the context's point (the substep's in
/// torque_downstream and event_values, the committed ones elsewhere).
static inline const double *dg_block_state(const dg_ctx *ctx, const dg_block *b) {
  return ctx->state + b->state;
}
/// In torque_downstream: where the rates of the block's states go.
static inline double *dg_block_state_rate(dg_ctx *ctx, const dg_block *b) {
  return ctx->state_rate + b->state;
}
/// In pre_step, post_step and set_signal: the committed states, writable
/// (a reset at a mode change, a clamp, an initial value).
static inline double *dg_block_state_commit(dg_ctx *ctx, const dg_block *b) {
  return ctx->state_commit + b->state;
}

static inline double dg_port_speed(const dg_ctx *ctx, const dg_block *b, int port) {
  return ctx->speed[b->node[port]];
}
/// The slip between two ports (ω_a − ω_b) below which a friction element
/// treats it as zero: 1e-10 of the two speeds plus 1e-12 rad/s. The
/// momentum projection of a mode change leaves round-off of ~1e-16
/// relative between shafts that turn together, whose sign must not pick a
/// friction direction; shafts at rest need the absolute floor.
static inline double dg_slip_zero_tol(const dg_ctx *ctx, const dg_block *b, int port_a,
                                      int port_b) {
  return 1e-10 * (fabs(ctx->speed[b->node[port_a]]) + fabs(ctx->speed[b->node[port_b]])) + 1e-12;
}
/// Adds a torque (or force) at a port. The energy audit books its power
/// torque · speed to the calling block, so every block's net work is known
/// without the block computing it: sources come out positive, friction,
/// slip, brakes and drag negative.
static inline void dg_port_add_torque(dg_ctx *ctx, const dg_block *b, int port, double torque) {
  int n = b->node[port];
  ctx->torque[n] += torque;
  ctx->power += torque * ctx->speed[n];
}
/// The value of the block's input `input` (its index in the class's input
/// table) at the context's point: a channel's value, a constant, or the
/// bound signal evaluated at this substep (signals feeding inputs are
/// evaluated in dependency order before the block's hooks run).
static inline double dg_block_input(const dg_ctx *ctx, const dg_block *b, int input) {
  (void)ctx;
  return *b->in[input];
}
/// The first (`order` 1) or second (`order` 2) time derivative of input
/// `input` at the context's time, for an input flagged DG_INPUT_RATE: 0
/// for a constant or a held value; a schedule's slope on its current piece
/// (and 0 for the second: schedules are piecewise linear); a central
/// difference of a callback or of a time source's signal (steps 1e-6 s and
/// 1e-4 s, scaled by the time when it exceeds 1 s).
DG_API double dg_block_input_derivative(const dg_ctx *ctx, const dg_block *b, int input,
                                        int order);
/// A sim-wide channel by index (dg_init_input); blocks read their declared
/// inputs with dg_block_input instead.
static inline double dg_ctx_input(const dg_ctx *ctx, int input) { return ctx->input[input]; }
/// Normal load on a linear ground port's node, published by the body
/// (dg_port_set_normal_load, typically in pre_step) and read by the wheel.
static inline double dg_port_normal_load(const dg_ctx *ctx, const dg_block *b, int port) {
  return ctx->normal_load[b->node[port]];
}
static inline void dg_port_set_normal_load(dg_ctx *ctx, const dg_block *b, int port, double fz) {
  ctx->normal_load[b->node[port]] = fz;
}

/// The sign of x as an int: 1 for x > 0, −1 for x < 0, and 0 for +0, −0
/// and NaN (a friction direction, a slip's sign; 0 means "none").
static inline int dg_sign(double x) { return (x > 0.0) - (x < 0.0); }
/// x clamped to [0, 1] (a pedal, an engagement, a fill level): 1 for
/// x > 1 (and +inf), x for 0 < x <= 1, and +0 for x <= 0 (−0 and −inf
/// included) and for NaN: an input that is not a number counts as
/// released.
static inline double dg_clamp01(double x) { return x > 1.0 ? 1.0 : (x > 0.0 ? x : 0.0); }
/// C's fmax and fmin without a call (the compiler may not inline them
/// without changing what NaN gives): the larger (smaller) of a and b, the
/// other when one is NaN, and b when they compare equal: glibc's, except
/// that of two zeros of opposite signs glibc's fmax may give a
/// (tests/test_util.c). Blocks use these in their hooks. Where `a` is a
/// constant that is not NaN (a bound: dg_fmax(0.0, load)), the same bits
/// from one comparison.
static inline double dg_fmax(double a, double b) {
#if defined(__GNUC__)
  if (__builtin_constant_p(a) && a == a)
    return b >= a ? b : a;
#endif
  return (a > b || b != b) ? a : b;
}
static inline double dg_fmin(double a, double b) {
#if defined(__GNUC__)
  if (__builtin_constant_p(a) && a == a)
    return b <= a ? b : a;
#endif
  return (a < b || b != b) ? a : b;
}

/// Asks for a mode change: the solver rebuilds the topology (calling every
/// state_upstream) after the current pre_step / post_step pass and projects
/// the speeds conserving momentum.
DG_API void dg_ctx_request_topology(dg_ctx *ctx);
/// In post_step (and event_values): the multiplier of tie `tie` (returned
/// by dg_topo_tie in the current mode) at the end of the step segment (in
/// event_values: at the point evaluated), computed in the solver's
/// acceleration stage: the generalized force the tie applies along its
/// coefficient vector. For a tie `x_a − x_b = 0` it is the
/// torque applied at a (and its negative at b). 0 for a redundant tie.
DG_API double dg_ctx_tie_force(dg_ctx *ctx, int tie);
/// For a lossy tie (dg_topo_tie_lossy), at the same point as
/// dg_ctx_tie_force: the factor on side b's share of the tie force, 1/η
/// when the power flows from side b to side a, η when it flows from a to b,
/// 1 when none flows (and for every other tie). The torque at port i is
/// λ·(coef_a[i] + factor·(coef[i] − coef_a[i])).
DG_API double dg_ctx_tie_factor(dg_ctx *ctx, int tie);
/// The torque (or force) a block's prescribed motion applies to its shaft
/// (dg_topo_prescribe) to keep it on the prescribed speed, at the same
/// point as dg_ctx_tie_force; 0 for a block without one in this mode.
DG_API double dg_ctx_motion_torque(dg_ctx *ctx, const dg_block *b);
/// In start (DG_START_PROPOSE): proposes `speed` for the shaft at `port`.
/// It is taken when it agrees with the initial values given and the
/// proposals taken before it (the shaft is free to turn so), else dropped.
DG_API void dg_ctx_start_speed(dg_ctx *ctx, const dg_block *b, int port, double speed);
/// dg_ctx_start_speed with the rule that proposes it ("idle", "at rest:
/// no speed given", a static string): the run's header
/// (dg_sim_start_choice) says which speeds the start chose and why.
DG_API void dg_ctx_start_speed_why(dg_ctx *ctx, const dg_block *b, int port, double speed,
                                   const char *why);
/// A number that changes whenever the simulation's parameters are changed
/// while it runs (a tuning between steps): a block's memo of values it
/// computed from its parameters keys on it rather than on a copy of them.
DG_API unsigned long dg_ctx_params_epoch(const dg_ctx *ctx);
/// Stops the simulation with an error naming the block and the time.
DG_API void dg_ctx_fail(dg_ctx *ctx, const dg_block *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/// A block of a simulation by id (for block-specific public APIs such as a
/// gearbox's shift callback), or NULL.
DG_API dg_block *dg_sim_block(dg_sim *sim, const char *id);

/* ------------------------------------------------------------------------ */
/* Topology building (state_upstream)                                       */

/// The node at `port` becomes a new DOF.
DG_API void dg_topo_dof(dg_topo *t, const dg_block *b, int port);
/// speed(dst) = Σ coef[i] · speed(src[i]); `efficiency` (0..1] is the power
/// efficiency of the mesh, whichever way the power flows: the driving side
/// supplies P, the driven side receives η·P (torques transmitted include the
/// inertial torque of what is driven). Sources without a speed
/// yet become free DOFs. A dst that already has a speed becomes a tie
/// instead (a lossy one with side a = dst).
DG_API void dg_topo_link(dg_topo *t, const dg_block *b, int dst, int n, const int *src,
                  const double *coef, double efficiency);
/// As dg_topo_link, for classes with DG_CLASS_VARIABLE_KINEMATICS whose
/// coefficients change with their state (a CVT): `coef_rate` gives d(coef)/dt
/// at this substep, so the solver can add the inertial force −I·Ġ·q of the
/// changing ratio (without it a CVT would create or destroy kinetic energy).
DG_API void dg_topo_link_rate(dg_topo *t, const dg_block *b, int dst, int n, const int *src,
                       const double *coef, const double *coef_rate, double efficiency);
/// In state_upstream of a DG_CLASS_VARIABLE_KINEMATICS class: the block's
/// continuous states at the point the kinematics are built for.
DG_API const double *dg_topo_state(const dg_topo *t, const dg_block *b);
/// speed(dst) = ratio · speed(src) through a mesh whose efficiency depends
/// on the side that drives (ABI 6): efficiency_dst while dst drives (power
/// flows from dst to src: a gear's input driving its output),
/// efficiency_src while src drives. Both in (0, 1].
DG_API void dg_topo_ratio_directed(dg_topo *t, const dg_block *b, int dst, int src, double ratio,
                                   double efficiency_dst, double efficiency_src);
/// After dg_topo_ratio_directed (or a lossy dg_topo_link) of the same
/// block (ABI 6): the mesh's efficiencies over |speed(dst)| (rad/s), each
/// table replacing its constant (NULL or an absent table: the constant);
/// evaluated at every stage. The table must outlive the simulation (a
/// parameter of the block).
DG_API void dg_topo_mesh_tables(dg_topo *t, const dg_block *b, const dg_table1d *efficiency_dst,
                                const dg_table1d *efficiency_src);
/// speed(dst) = ratio · speed(src).
DG_API void dg_topo_ratio(dg_topo *t, const dg_block *b, int dst, int src, double ratio,
                   double efficiency);
/// Adds the constraint Σ coef[i] · speed(port[i]) = 0 (one port: held at
/// rest). Returns the tie's index for dg_ctx_tie_force.
DG_API int dg_topo_tie(dg_topo *t, const dg_block *b, int n, const int *port, const double *coef);
/// A tie Σ coef[i] · speed(port[i]) = 0 that is a lossy mesh: its
/// coefficients split into side a (`coef_a`) and side b (coef − coef_a),
/// with Σ coef_a[i]·speed(port[i]) = −Σ (coef − coef_a)[i]·speed(port[i])
/// the mesh's speed, so the power it transmits from side b to side a is
/// P = λ·Σ coef_a[i]·speed(port[i]) (λ its multiplier). The mesh loses
/// (1 − efficiency)·|P|: side b's share of the tie force is scaled by
/// 1/efficiency when P > 0 and by efficiency when P < 0. A planetary's
/// meshes in the carrier's frame: side a the sun relative to the carrier,
/// side b the ring relative to the carrier. Returns the tie's index.
DG_API int dg_topo_tie_lossy(dg_topo *t, const dg_block *b, int n, const int *port,
                             const double *coef, const double *coef_a, double efficiency);
/// Marks a hold of the block (a one-port dg_topo_tie) as one that yields
/// to another hold of the same shaft: where another block holds it too,
/// this one is the redundant tie (its force 0) instead of the pair being
/// refused as over-constrained. For a hold whose own test reads the
/// torques at its ports (a self-locking gear's: blocks/gear.c): while
/// another holds the shaft, its mesh sees that block's reaction and stays;
/// when the other lets go, its tie takes the load.
DG_API void dg_topo_tie_yielding(dg_topo *t, const dg_block *b, int tie);
/// Ties two of the block's ports to one speed (a locked clutch:
/// ω_a − ω_b = 0). The tie's multiplier (dg_ctx_tie_force) is the torque
/// the lock applies at port_a. Returns the tie's index.
DG_API int dg_topo_lock(dg_topo *t, const dg_block *b, int port_a, int port_b);
/// The shaft at `port` follows the speed the class's `motion` hook gives,
/// exactly (a rheonomic constraint: not a degree of freedom of the mode).
/// One per block and mode; a shaft that other constraints already fix
/// (two prescribed speeds tied together, a prescribed shaft held by a
/// brake) is over-constrained and refused.
DG_API void dg_topo_prescribe(dg_topo *t, const dg_block *b, int port);
/// Adds inertia (kg·m², or kg on a linear port) at a port's node.
DG_API void dg_topo_inertia(dg_topo *t, const dg_block *b, int port, double inertia);

/* ------------------------------------------------------------------------ */
/* Load time                                                                */

/// Registers (or finds) a named custom driver input and returns its index.
DG_API int dg_init_input(dg_init *init, const char *name);
/// Registers (or finds) a named block-to-block channel (a double in
/// ctx->channel, 0 at start): for example the gearbox writes
/// "throttle_cut" during a shift and the engine reads it.
DG_API int dg_init_channel(dg_init *init, const char *name);
/// In init: the block's num_states continuous states, to give them start
/// values (they are 0 otherwise).
DG_API double *dg_init_state(dg_init *init);
/// Hooks of a class that one of its blocks may do without (dg_init_idle).
enum {
  DG_HOOK_PRE_STEP = 1u << 0,
  DG_HOOK_TORQUE = 1u << 1,
  DG_HOOK_POST_STEP = 1u << 2,
  DG_HOOK_EVENTS = 1u << 3,
  DG_HOOK_HOLD_CHECK = 1u << 4
};
/// In init: the hooks (DG_HOOK_*) that this block's parameters leave
/// nothing to do, for its whole simulation: the solver then never calls
/// them (a gear without bearing friction, stuck mode or efficiency tables
/// has no torque of its own, nothing to decide and no event; its mesh's
/// loss is the solver's). The block must behave exactly as if they were
/// called: only hooks that change nothing and add nothing may be named.
/// A class with states keeps torque_downstream (it writes their rates):
/// naming it there is an init error.
DG_API void dg_init_idle(dg_init *init, unsigned hooks);
/// Reports an init failure (the framework adds the block's path).
DG_API void dg_init_error(dg_init *init, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/// Reports a parameter problem at `path` relative to the block
/// ("ratios/2"; "" for the block itself).
DG_API void dg_check_error(dg_check *chk, const char *path, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* ------------------------------------------------------------------------ */
/* Plugins                                                                  */

/// A plugin is a shared library exporting this one function, which registers
/// its block classes (dg_registry_add) and returns DG_OK, or fills err.
/// `drivegraph validate|sim --plugin LIB.so` calls it; so can any program
/// (dlopen + dlsym(DG_PLUGIN_ENTRY)).
typedef int (*dg_plugin_init_fn)(dg_registry *reg, dg_error *err);
#define DG_PLUGIN_ENTRY "drivegraph_plugin_init"

/* ------------------------------------------------------------------------ */
/* Parameter-table macros                                                   */

/// A number parameter stored in field `field` of params struct T, with the
/// field's name as its key; the rest are dg_param_def's fields by name:
///
///     DG_NUMBER(clutch_params, max_torque, .unit = "N*m", .required = true,
///               .flags = DG_P_MIN_EXCL, .doc = "torque capacity at full engagement"),
///
/// (`.def`, `.flags`, `.min` and `.max` are 0 when not given).
#define DG_NUMBER(T, field, ...)                                                                  \
  {.key = #field, .kind = DG_PARAM_NUMBER, .offset = offsetof(T, field), __VA_ARGS__}
/// The same with a key other than the field's name.
#define DG_NUMBER_AT(T, field, key_, ...)                                                         \
  {.key = key_, .kind = DG_PARAM_NUMBER, .offset = offsetof(T, field), __VA_ARGS__}
/// The older positional forms, kept for blocks written against them.
#define DG_PARAM_NUM(T, field, key_, unit_, def_, flags_, min_, max_, doc_)                      \
  {.key = key_, .kind = DG_PARAM_NUMBER, .offset = offsetof(T, field), .unit = unit_,           \
   .doc = doc_, .def = def_, .flags = flags_, .min = min_, .max = max_}
#define DG_PARAM_NUM_REQ(T, field, key_, unit_, flags_, min_, max_, doc_)                        \
  {.key = key_, .kind = DG_PARAM_NUMBER, .offset = offsetof(T, field), .unit = unit_,           \
   .doc = doc_, .required = true, .flags = flags_, .min = min_, .max = max_}

#ifdef __cplusplus
}
#endif
#endif
