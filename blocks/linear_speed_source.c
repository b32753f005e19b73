/* linear_speed_source — a body that follows a given speed exactly: the
 * linear twin of speed_source, for a vehicle that follows a drive cycle's
 * trace (the backward mode of `drivegraph cycle`, docs/energy.md).
 *
 *   v(t) = speed(t)   (m/s; the input `speed`)
 *
 * A rheonomic constraint on the linear node it connects to (a vehicle's
 * free ground port: front, rear or a corner the wheels leave free; every
 * ground port moves with the body), not a stiff spring: the solver keeps
 * the node's speed out of the degrees of freedom (dg_topo_prescribe) and
 * gives it the input's value and time derivative at every point, so the
 * body follows the input to round-off and everything geared to it — the
 * wheels, the driveline, an engine behind a locked clutch — accelerates
 * with it. `force` is the force the source applies to the body to keep it
 * so (N, forward positive): with the body's mass m, the road load F_road
 * and the tyres' forces F_tyres,
 *   force = m·dv/dt − F_tyres − F_road,
 * zero when the powertrain delivers exactly what the trace needs; its work
 * (`power` = force · v, booked to this block by the energy audit) is the
 * trace enforcement a backward run reports. The input must have a time
 * derivative (DG_INPUT_RATE): a number, a channel (a schedule: a cycle's
 * linear trace) or a time source's signal. */
#include <drivegraph/block.h>

enum { PORT_IN, PORT_OUT };
enum { IN_SPEED };
enum { SIG_SPEED, SIG_FORCE, SIG_POWER, SIG_ACCEL };

static const dg_port_def lss_ports[] = {
    {.name = "in", .dir = DG_PORT_IN, .domain = DG_LINEAR, .optional = true,
     .doc = "the body's node, from a block's out port"},
    {.name = "out", .dir = DG_PORT_OUT, .domain = DG_LINEAR, .optional = true,
     .doc = "the body's node: a vehicle's free ground port"},
    {0},
};

static const dg_param_def lss_params_table[] = {{0}};

static const dg_input_def lss_inputs[] = {
    {.name = "speed", .unit = "m/s", .doc = "the speed the body follows",
     .flags = DG_INPUT_REQUIRED | DG_INPUT_RATE},
    {0},
};

static const dg_signal_def lss_signals[] = {
    {.name = "speed", .unit = "m/s", .doc = "the node's speed", .port = PORT_OUT, .scale = 1},
    {.name = "force", .unit = "N", .doc = "force the source applies to keep the speed",
     .port = DG_SIGNAL_HOOK, .flags = DG_SIGNAL_FEEDTHROUGH},
    {.name = "power", .unit = "W", .doc = "power the source delivers (force x speed)",
     .port = DG_SIGNAL_HOOK, .flags = DG_SIGNAL_FEEDTHROUGH},
    {.name = "accel", .unit = "m/s^2", .doc = "the prescribed acceleration",
     .port = DG_SIGNAL_HOOK, .flags = DG_SIGNAL_FEEDTHROUGH},
    {0},
};

/* The speed is prescribed at `out`, and `in` moves with it. */
static void lss_state_upstream(dg_block *self, dg_topo *topo) {
  dg_topo_prescribe(topo, self, PORT_OUT);
  dg_topo_ratio(topo, self, PORT_IN, PORT_OUT, 1.0, 1.0);
}

static void lss_motion(const dg_block *self, const dg_ctx *ctx, double *speed, double *accel) {
  *speed = dg_block_input(ctx, self, IN_SPEED);
  *accel = dg_block_input_derivative(ctx, self, IN_SPEED, 1);
}

/* The signal hook may not change the block; the force query only fills
 * the solver's cache of the point's forces. */
static double lss_signal(const dg_block *self, const dg_ctx *ctx, int index) {
  if (index == SIG_ACCEL)
    return dg_block_input_derivative(ctx, self, IN_SPEED, 1);
  double force = dg_ctx_motion_torque((dg_ctx *)ctx, self);
  return index == SIG_POWER ? force * dg_port_speed(ctx, self, PORT_OUT) : force;
}

const dg_block_class dg_block_linear_speed_source = {
    .abi = DG_BLOCK_ABI,
    .type = "linear_speed_source",
    .doc = "A body that follows a given speed exactly (input `speed`, m/s): a rheonomic "
           "constraint on a linear node (a vehicle's free ground port) reporting the force it "
           "takes; the backward mode of drive cycles.",
    .ports = lss_ports,
    .params = lss_params_table,
    .params_size = 0,
    .signals = lss_signals,
    .inputs = lss_inputs,
    .state_upstream = lss_state_upstream,
    .signal = lss_signal,
    .motion = lss_motion,
};
