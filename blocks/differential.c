/* differential — splits one input shaft into two outputs (axle or centre).
 *
 * Kinematics, with ratio r and torque split s (share of torque to `left`):
 *   ω_in = r · (s · ω_left + (1 − s) · ω_right)
 * By virtual work a torque T at `in` reaches the outputs as
 *   T_left = r·s·T,  T_right = r·(1 − s)·T
 * (s = 0.5 is the usual axle differential; a centre differential may bias).
 * The carrier inertia sits on the input shaft.
 *
 * kind "open": the outputs turn freely relative to each other (two DOFs
 * below the input when both sides have inertia).
 * kind "locked": in addition the tie ω_left − ω_right = 0 (a spool). Its
 * multiplier is the locking torque: the torque the lock adds to `left`
 * (and takes from `right`); positive when it speeds up the left side. */
#include <drivegraph/block.h>

enum { PORT_IN, PORT_LEFT, PORT_RIGHT };
enum { KIND_OPEN, KIND_LOCKED };
enum { SIG_OMEGA, SIG_SPEED_DIFF, SIG_LOCKING_TORQUE }; /* signal table order */

typedef struct diff_params {
  int kind;
  double ratio;
  double split;
  double efficiency;
  double inertia;
} diff_params;

typedef struct diff_data {
  int lock_tie;
  double locking_torque;
} diff_data;

static const char *const diff_kinds[] = {"open", "locked", NULL};

static const dg_port_def diff_ports[] = {
    {.name = "in", .dir = DG_PORT_IN, .domain = DG_ROTATIONAL, .doc = "input (carrier)"},
    {.name = "left", .dir = DG_PORT_OUT, .domain = DG_ROTATIONAL, .doc = "left (or front) output"},
    {.name = "right", .dir = DG_PORT_OUT, .domain = DG_ROTATIONAL, .doc = "right (or rear) output"},
    {0},
};

static const dg_param_def diff_params_table[] = {
    {.key = "kind", .kind = DG_PARAM_ENUM, .offset = offsetof(diff_params, kind), .unit = "",
     .doc = "open: outputs free relative to each other; locked: outputs tied (spool)",
     .def = KIND_OPEN, .choices = diff_kinds},
    DG_PARAM_NUM(diff_params, ratio, "ratio", "", 1.0, DG_P_MIN_EXCL, 0, 0,
                 "input speed / mean output speed"),
    DG_PARAM_NUM(diff_params, split, "split", "", 0.5, DG_P_MIN_EXCL | DG_P_MAX_EXCL, 0, 1,
                 "share of the input torque sent to the left output"),
    DG_PARAM_NUM(diff_params, efficiency, "efficiency", "", 1.0, DG_P_MIN_EXCL | DG_P_MAX, 0, 1,
                 "power efficiency from input to outputs"),
    DG_PARAM_NUM(diff_params, inertia, "inertia", "kg*m^2", 0.0, DG_P_MIN, 0, 0,
                 "carrier inertia on the input shaft"),
    {0},
};

static const dg_signal_def diff_signals[] = {
    {.name = "omega", .unit = "rad/s", .doc = "input (carrier) speed", .port = PORT_IN, .scale = 1},
    {.name = "speed_diff", .unit = "rad/s", .doc = "left minus right output speed",
     .port = DG_SIGNAL_HOOK},
    {.name = "locking_torque", .unit = "N*m",
     .doc = "torque the lock adds to the left output (locked kind; 0 when open)",
     .port = DG_SIGNAL_HOOK},
    {0},
};

static void diff_state_upstream(dg_block *self, dg_topo *topo) {
  const diff_params *p = self->params;
  diff_data *d = self->data;
  const int outs[2] = {PORT_LEFT, PORT_RIGHT};
  const double coef[2] = {p->ratio * p->split, p->ratio * (1.0 - p->split)};
  dg_topo_link(topo, self, PORT_IN, 2, outs, coef, p->efficiency);
  dg_topo_inertia(topo, self, PORT_IN, p->inertia);
  d->lock_tie = -1;
  if (p->kind == KIND_LOCKED) {
    const double tie[2] = {1.0, -1.0};
    d->lock_tie = dg_topo_tie(topo, self, 2, outs, tie);
  }
}

static void diff_post_step(dg_block *self, dg_ctx *ctx) {
  diff_data *d = self->data;
  d->locking_torque = dg_ctx_tie_force(ctx, d->lock_tie);
}

static double diff_signal(const dg_block *self, const dg_ctx *ctx, int index) {
  const diff_data *d = self->data;
  if (index == SIG_SPEED_DIFF)
    return dg_port_speed(ctx, self, PORT_LEFT) - dg_port_speed(ctx, self, PORT_RIGHT);
  return d->locking_torque;
}

static int diff_init(dg_block *self, dg_init *init) {
  (void)init;
  diff_data *d = self->data;
  d->lock_tie = -1;
  return 0;
}

const dg_block_class dg_block_differential = {
    .abi = DG_BLOCK_ABI,
    .type = "differential",
    .doc = "Differential: open or locked, with ratio, torque split, efficiency and carrier "
           "inertia.",
    .ports = diff_ports,
    .params = diff_params_table,
    .params_size = sizeof(diff_params),
    .signals = diff_signals,
    .data_size = sizeof(diff_data),
    .init = diff_init,
    .state_upstream = diff_state_upstream,
    .post_step = diff_post_step,
    .signal = diff_signal,
};
