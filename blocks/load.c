/* load — a resisting shaft at the end of a line (a dynamometer, a fan).
 *
 *   T = −(c0 · sign(ω) + c1 · ω + c2 · ω·|ω|),  own inertia J,
 *
 * so the torque always opposes rotation: c0 is Coulomb friction, c1 viscous
 * drag, c2 quadratic (aerodynamic) drag. sign(0) = 0, so a load at rest
 * exerts nothing. */
#include <drivegraph/block.h>
#include <math.h>

enum { PORT_IN };
enum { SIG_OMEGA, SIG_RPM, SIG_TORQUE, SIG_POWER };

typedef struct load_params {
  double inertia;
  double c0, c1, c2;
} load_params;

static const dg_port_def load_ports[] = {
    {.name = "in", .dir = DG_PORT_IN, .domain = DG_ROTATIONAL, .doc = "driven shaft"},
    {0},
};

static const dg_param_def load_params_table[] = {
    DG_PARAM_NUM(load_params, inertia, "inertia", "kg*m^2", 0.0, DG_P_MIN | DG_P_INERTIA, 0, 0,
                 "inertia of the load"),
    DG_PARAM_NUM(load_params, c0, "c0", "N*m", 0.0, DG_P_MIN | DG_P_DYNAMICS, 0, 0,
                 "constant (Coulomb) resisting torque"),
    DG_PARAM_NUM(load_params, c1, "c1", "N*m*s/rad", 0.0, DG_P_MIN | DG_P_DYNAMICS, 0, 0,
                 "resisting torque per unit speed"),
    DG_PARAM_NUM(load_params, c2, "c2", "N*m*s^2/rad^2", 0.0, DG_P_MIN | DG_P_DYNAMICS, 0, 0,
                 "resisting torque per unit speed squared"),
    {0},
};

static const dg_signal_def load_signals[] = {
    {.name = "omega", .unit = "rad/s", .doc = "shaft speed", .port = PORT_IN, .scale = 1},
    {.name = "rpm", .unit = "rpm", .doc = "shaft speed", .port = PORT_IN,
     .scale = DG_RPM_PER_RAD_S},
    {.name = "torque", .unit = "N*m", .doc = "torque the load applies (negative: resisting)",
     .port = DG_SIGNAL_HOOK},
    {.name = "power", .unit = "W", .doc = "power absorbed by the load", .port = DG_SIGNAL_HOOK},
    {0},
};

static double load_torque(const load_params *p, double w) {
  double sign = (w > 0.0) - (w < 0.0);
  return 0.0 - (p->c0 * sign + p->c1 * w + p->c2 * w * fabs(w)); /* 0.0 - x: +0 at rest */
}

static void load_state_upstream(dg_block *self, dg_topo *topo) {
  const load_params *p = self->params;
  dg_topo_dof(topo, self, PORT_IN);
  dg_topo_inertia(topo, self, PORT_IN, p->inertia);
}

static void load_torque_downstream(dg_block *self, dg_ctx *ctx) {
  dg_port_add_torque(ctx, self, PORT_IN, load_torque(self->params, dg_port_speed(ctx, self, PORT_IN)));
}

static double load_signal(const dg_block *self, const dg_ctx *ctx, int index) {
  double w = dg_port_speed(ctx, self, PORT_IN);
  double t = load_torque(self->params, w);
  return index == SIG_TORQUE ? t : -t * w;
}

const dg_block_class dg_block_load = {
    .abi = DG_BLOCK_ABI,
    .type = "load",
    .doc = "Resisting load with inertia: T = -(c0 sign(w) + c1 w + c2 w|w|).",
    .ports = load_ports,
    .params = load_params_table,
    .params_size = sizeof(load_params),
    .signals = load_signals,
    .state_upstream = load_state_upstream,
    .torque_downstream = load_torque_downstream,
    .signal = load_signal,
};
