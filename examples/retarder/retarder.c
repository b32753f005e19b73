/* retarder — a driveline retarder, as on trucks and buses: a wear-free
 * brake on the propeller shaft (hydrodynamic, like a Voith or ZF Intarder
 * secondary retarder). An out-of-tree block: it uses only
 * <drivegraph/block.h> and is loaded as a plugin
 * (`drivegraph validate|sim --plugin libretarder.so`), or linked into a
 * program that registers it with drivegraph_plugin_init / dg_registry_add.
 * docs/writing-blocks.md walks through this file.
 *
 * Ports: `in` and `out` are one rigid shaft, ω_in = ω_out (a ratio-1 link);
 * the rotor's inertia J sits on it. Either side may be left open (a test
 * rig: a flywheel spun down by the retarder).
 *
 * Braking torque on the shaft, opposing rotation:
 *     T = −sign(ω) · min(T_max, k·ω²) · f
 * k·ω² is the hydrodynamic characteristic (the torque of a fluid coupling
 * whose stator is held grows with the square of the rotor speed); T_max is
 * the limit the control valve sets for the cooling system. k is given as
 * `coefficient`, or derived from `full_torque_rpm`, the shaft speed at which
 * k·ω² reaches T_max: k = T_max / ω_f². Near rest T = −k·ω·|ω|·f, which is
 * smooth through ω = 0 (C¹), so unlike a friction brake the retarder needs
 * no stick–slip modes: it cannot hold a vehicle, it only slows it.
 *
 * Fill level. f in [0, 1] is the oil fill of the working chamber, a
 * continuous state following the command u with a first-order lag:
 *     df/dt = (u − f) / τ,   τ = `fill_time`,
 *     u = clamp(max(retarder, brake_blend · brake), 0, 1),
 * where `retarder` and `brake` are the block's inputs (declared in its
 * input table; by default the channels "retarder", the driver's stalk
 * 0..1, and "brake", the pedal; a graph may bind either elsewhere): with
 * brake_blend > 0 the pedal also commands the retarder (brake blending).
 * With u constant, f(t) = u + (f0 − u)·exp(−t/τ).
 *
 * Energy: the torque's power T·ω <= 0 is booked to this block by the
 * energy audit (the heat the retarder's cooler rejects); the block does not
 * compute it. */
#include <drivegraph/block.h>
#include <math.h>

/* Only the entry point leaves the shared library (meson builds it with
 * hidden visibility); in a program that links this file it is an ordinary
 * function. */
#if defined(__GNUC__)
#define RETARDER_EXPORT __attribute__((visibility("default")))
#else
#define RETARDER_EXPORT
#endif

enum { PORT_IN, PORT_OUT };
enum { SIG_OMEGA, SIG_RPM, SIG_TORQUE, SIG_POWER, SIG_FILL, SIG_COMMAND };

typedef struct retarder_params {
  double max_torque;      /* T_max, N·m */
  double coefficient;     /* k, N·m/(rad/s)² */
  double full_torque_rpm; /* ω_f in rpm: k·ω_f² = T_max */
  double fill_time;       /* τ, s */
  double inertia;         /* J, kg·m² */
  double brake_blend;     /* share of the brake pedal commanding the retarder */
  bool has_coefficient;
  bool has_full_torque_rpm;
} retarder_params;

typedef struct retarder_data {
  double k;        /* N·m/(rad/s)², from coefficient or full_torque_rpm */
} retarder_data;

static const dg_port_def retarder_ports[] = {
    {.name = "in", .dir = DG_PORT_IN, .domain = DG_ROTATIONAL, .optional = true,
     .doc = "shaft toward the engine (gearbox output)"},
    {.name = "out", .dir = DG_PORT_OUT, .domain = DG_ROTATIONAL, .optional = true,
     .doc = "shaft toward the road (final drive)"},
    {0},
};

static const dg_param_def retarder_params_table[] = {
    DG_NUMBER(retarder_params, max_torque, .unit = "N*m", .required = true,
              .flags = DG_P_MIN_EXCL | DG_P_DYNAMICS,
              .doc = "largest braking torque (valve / cooling limit)"),
    {.key = "coefficient", .kind = DG_PARAM_NUMBER,
     .offset = offsetof(retarder_params, coefficient), .unit = "N*m*s^2/rad^2",
     .doc = "k in T = k w^2 below max_torque (or give full_torque_rpm)",
     .flags = DG_P_MIN_EXCL | DG_P_DYNAMICS,
     .min = 0, .present = DG_PRESENT(retarder_params, has_coefficient)},
    {.key = "full_torque_rpm", .kind = DG_PARAM_NUMBER,
     .offset = offsetof(retarder_params, full_torque_rpm), .unit = "rpm",
     .doc = "shaft speed from which the full max_torque is available (or give coefficient)",
     .flags = DG_P_MIN_EXCL | DG_P_DYNAMICS, .min = 0,
     .present = DG_PRESENT(retarder_params, has_full_torque_rpm)},
    DG_NUMBER(retarder_params, fill_time, .unit = "s", .def = 0.3,
              .flags = DG_P_MIN_EXCL | DG_P_DYNAMICS,
              .doc = "time constant of the fill level following the command"),
    DG_NUMBER(retarder_params, inertia, .unit = "kg*m^2", .def = 0.1,
              .flags = DG_P_MIN | DG_P_INERTIA, .doc = "rotor inertia on the shaft"),
    DG_NUMBER(retarder_params, brake_blend, .unit = "",
              .flags = DG_P_MIN | DG_P_MAX | DG_P_DYNAMICS, .max = 1,
              .doc = "command from the brake pedal: max(retarder, brake_blend x brake)"),
    {0},
};

static const dg_signal_def retarder_signals[] = {
    {.name = "omega", .unit = "rad/s", .doc = "shaft speed", .port = PORT_IN, .scale = 1},
    {.name = "rpm", .unit = "rpm", .doc = "shaft speed", .port = PORT_IN,
     .scale = DG_RPM_PER_RAD_S},
    {.name = "torque", .unit = "N*m", .doc = "torque on the shaft (negative: braking)",
     .port = DG_SIGNAL_HOOK},
    {.name = "power", .unit = "W", .doc = "power absorbed (turned into heat)",
     .port = DG_SIGNAL_HOOK},
    {.name = "fill", .unit = "", .doc = "fill level 0..1 (settable as an initial value)",
     .port = DG_SIGNAL_HOOK},
    {.name = "command", .unit = "", .doc = "commanded fill 0..1 from the inputs",
     .port = DG_SIGNAL_HOOK},
    {0},
};

/* Inputs: what the block reads every substep, and where from by default. */
enum { IN_RETARDER, IN_BRAKE };
static const dg_input_def retarder_inputs[] = {
    {.name = "retarder", .unit = "", .doc = "retarder stalk 0..1", .source = "retarder",
     .flags = DG_P_MIN | DG_P_MAX, .min = 0, .max = 1},
    {.name = "brake", .unit = "", .doc = "brake pedal 0..1 (blended by brake_blend)",
     .source = "brake", .flags = DG_P_MIN | DG_P_MAX, .min = 0, .max = 1},
    {0},
};

/* T(ω, f): the braking torque on the shaft. sign(0) = 0: nothing at rest. */
static double retarder_torque(const dg_block *self, double w, double fill) {
  const retarder_params *p = self->params;
  const retarder_data *d = self->data;
  double sign = dg_sign(w);
  return -sign * fmin(p->max_torque, d->k * w * w) * fill;
}

/* u: the commanded fill from this step's inputs. */
static double retarder_command(const dg_block *self, const dg_ctx *ctx) {
  const retarder_params *p = self->params;
  double u = dg_block_input(ctx, self, IN_RETARDER);
  double b = p->brake_blend * dg_block_input(ctx, self, IN_BRAKE);
  return dg_clamp01(b > u ? b : u);
}

/* Beyond the table: exactly one of the two ways to give k. */
static void retarder_check(const void *params, dg_check *chk) {
  const retarder_params *p = params;
  if (p->has_coefficient && p->has_full_torque_rpm)
    dg_check_error(chk, "full_torque_rpm", "give coefficient or full_torque_rpm, not both");
  else if (!p->has_coefficient && !p->has_full_torque_rpm)
    dg_check_error(chk, "", "missing coefficient or full_torque_rpm (one of them is required)");
}

static int retarder_init(dg_block *self, dg_init *init) {
  const retarder_params *p = self->params;
  retarder_data *d = self->data;
  (void)init;
  if (p->has_coefficient) {
    d->k = p->coefficient;
  } else {
    double wf = p->full_torque_rpm / DG_RPM_PER_RAD_S;
    d->k = p->max_torque / (wf * wf);
  }
  return 0; /* the fill level starts at 0, as every state */
}

/* One shaft: `in` follows `out` at ratio 1 without loss, the rotor's
 * inertia on it. An open side becomes a free DOF the other side follows. */
static void retarder_state_upstream(dg_block *self, dg_topo *topo) {
  const retarder_params *p = self->params;
  dg_topo_ratio(topo, self, PORT_IN, PORT_OUT, 1.0, 1.0);
  dg_topo_inertia(topo, self, PORT_IN, p->inertia);
}

/* Every RK4 substep, at the substep's speed and fill: the braking torque,
 * and the fill level's rate df/dt = (u − f)/τ. The fill is the block's one
 * continuous state: it lives in the solver's state vector, integrated by
 * RK4 with the shaft speeds. */
static void retarder_torque_downstream(dg_block *self, dg_ctx *ctx) {
  const retarder_params *p = self->params;
  double w = dg_port_speed(ctx, self, PORT_IN);
  double fill = dg_block_state(ctx, self)[0];
  dg_port_add_torque(ctx, self, PORT_IN, retarder_torque(self, w, fill));
  dg_block_state_rate(ctx, self)[0] = (retarder_command(self, ctx) - fill) / p->fill_time;
}

/* The exact solution stays in [0, 1]; the clamp only absorbs round-off. */
static void retarder_post_step(dg_block *self, dg_ctx *ctx) {
  double *fill = dg_block_state_commit(ctx, self);
  *fill = dg_clamp01(*fill);
}

/* ---- telemetry (committed state) ---- */

static double retarder_signal(const dg_block *self, const dg_ctx *ctx, int index) {
  double w = dg_port_speed(ctx, self, PORT_IN), fill = dg_block_state(ctx, self)[0];
  switch (index) {
  case SIG_TORQUE:
    return retarder_torque(self, w, fill);
  case SIG_POWER:
    return -retarder_torque(self, w, fill) * w;
  case SIG_FILL:
    return fill;
  case SIG_COMMAND:
    return retarder_command(self, ctx);
  default:
    return NAN;
  }
}

static int retarder_set_signal(dg_block *self, dg_ctx *ctx, int index, double value) {
  if (index != SIG_FILL || !(value >= 0.0 && value <= 1.0))
    return -1;
  *dg_block_state_commit(ctx, self) = value;
  return 0;
}

static const dg_block_class retarder_class = {
    .abi = DG_BLOCK_ABI,
    .type = "retarder",
    .doc = "Driveline retarder (hydrodynamic brake on a shaft): braking torque "
           "min(max_torque, k w^2) x fill opposing rotation; the fill level follows the "
           "\"retarder\" input (or the brake pedal x brake_blend) with a first-order lag.",
    .ports = retarder_ports,
    .params = retarder_params_table,
    .params_size = sizeof(retarder_params),
    .signals = retarder_signals,
    .inputs = retarder_inputs,
    .data_size = sizeof(retarder_data),
    .num_states = 1,
    .check = retarder_check,
    .init = retarder_init,
    .state_upstream = retarder_state_upstream,
    .torque_downstream = retarder_torque_downstream,
    .post_step = retarder_post_step,
    .signal = retarder_signal,
    .set_signal = retarder_set_signal,
};

/* The plugin entry point (DG_PLUGIN_ENTRY): registers the class. */
RETARDER_EXPORT int drivegraph_plugin_init(dg_registry *reg, dg_error *err);

RETARDER_EXPORT int drivegraph_plugin_init(dg_registry *reg, dg_error *err) {
  return dg_registry_add(reg, &retarder_class, err);
}
