/* inertia — a flywheel on a shaft, passing speed and torque straight through.
 *
 *   ω_in = ω_out,  inertia J on the shaft.
 *
 * Either side may be left open: at the end of a chain it is a flywheel, at
 * its start a free mass the rest of the line drives. */
#include <drivegraph/block.h>

enum { PORT_IN, PORT_OUT };

typedef struct inertia_params {
  double inertia;
} inertia_params;

static const dg_port_def inertia_ports[] = {
    {.name = "in", .dir = DG_PORT_IN, .domain = DG_ROTATIONAL, .optional = true,
     .doc = "shaft toward the source"},
    {.name = "out", .dir = DG_PORT_OUT, .domain = DG_ROTATIONAL, .optional = true,
     .doc = "shaft toward the road"},
    {0},
};

static const dg_param_def inertia_params_table[] = {
    DG_NUMBER(inertia_params, inertia, .unit = "kg*m^2", .required = true,
              .flags = DG_P_MIN_EXCL | DG_P_INERTIA, .doc = "moment of inertia"),
    {0},
};

static const dg_signal_def inertia_signals[] = {
    {.name = "omega", .unit = "rad/s", .doc = "shaft speed", .port = PORT_IN, .scale = 1},
    {.name = "rpm", .unit = "rpm", .doc = "shaft speed", .port = PORT_IN,
     .scale = DG_RPM_PER_RAD_S},
    {0},
};

static void inertia_state_upstream(dg_block *self, dg_topo *topo) {
  const inertia_params *p = self->params;
  dg_topo_ratio(topo, self, PORT_IN, PORT_OUT, 1.0, 1.0);
  dg_topo_inertia(topo, self, PORT_IN, p->inertia);
}

const dg_block_class dg_block_inertia = {
    .abi = DG_BLOCK_ABI,
    .type = "inertia",
    .doc = "Flywheel: a rigid pass-through shaft with inertia.",
    .ports = inertia_ports,
    .params = inertia_params_table,
    .params_size = sizeof(inertia_params),
    .signals = inertia_signals,
    .state_upstream = inertia_state_upstream,
};
