/* gear — a fixed ratio: final drive, transfer gear, reduction.
 *
 *   ω_in = ratio · ω_out
 *
 * Torque flows the other way by virtual work: a torque T at `in` reaches
 * `out` as ratio · η · T when it drives and ratio · T / η when power flows
 * back (the solver's efficiency path factor). The optional inertia is that
 * of the gear set referred to the input shaft. */
#include <drivegraph/block.h>

enum { PORT_IN, PORT_OUT };

typedef struct gear_params {
  double ratio;
  double efficiency;
  double inertia;
} gear_params;

static const dg_port_def gear_ports[] = {
    {.name = "in", .dir = DG_PORT_IN, .domain = DG_ROTATIONAL, .doc = "input shaft (engine side)"},
    {.name = "out", .dir = DG_PORT_OUT, .domain = DG_ROTATIONAL, .doc = "output shaft (road side)"},
    {0},
};

static const dg_param_def gear_params_table[] = {
    DG_PARAM_NUM_REQ(gear_params, ratio, "ratio", "", DG_P_MIN_EXCL, 0, 0,
                     "speed ratio in/out (> 1 reduces speed and multiplies torque)"),
    DG_PARAM_NUM(gear_params, efficiency, "efficiency", "", 1.0,
                 DG_P_MIN_EXCL | DG_P_MAX | DG_P_DYNAMICS, 0, 1, "power efficiency of the mesh"),
    DG_PARAM_NUM(gear_params, inertia, "inertia", "kg*m^2", 0.0, DG_P_MIN | DG_P_INERTIA, 0, 0,
                 "inertia referred to the input shaft"),
    {0},
};

static const dg_signal_def gear_signals[] = {
    {.name = "omega", .unit = "rad/s", .doc = "input shaft speed", .port = PORT_IN, .scale = 1},
    {.name = "omega_out", .unit = "rad/s", .doc = "output shaft speed", .port = PORT_OUT, .scale = 1},
    {0},
};

static void gear_state_upstream(dg_block *self, dg_topo *topo) {
  const gear_params *p = self->params;
  dg_topo_ratio(topo, self, PORT_IN, PORT_OUT, p->ratio, p->efficiency);
  dg_topo_inertia(topo, self, PORT_IN, p->inertia);
}

const dg_block_class dg_block_gear = {
    .abi = DG_BLOCK_ABI,
    .type = "gear",
    .doc = "Fixed ratio (final drive, transfer gear) with efficiency and optional inertia.",
    .ports = gear_ports,
    .params = gear_params_table,
    .params_size = sizeof(gear_params),
    .signals = gear_signals,
    .state_upstream = gear_state_upstream,
};
