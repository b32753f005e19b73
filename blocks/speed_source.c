/* speed_source — a shaft that follows a given speed exactly.
 *
 *   ω(t) = speed(t)   (rad/s; the input `speed`)
 *
 * A rheonomic constraint, not a stiff spring: the solver keeps the shaft's
 * speed out of the degrees of freedom (dg_topo_prescribe) and gives it the
 * input's value and time derivative at every point it evaluates, so the
 * shaft follows the input to round-off and everything rigidly geared to it
 * accelerates with ω̇ = speed'(t). `torque` is the torque the source applies
 * to the shaft to keep it so: with inertia J on the shaft and the rest of
 * the line taking T_load, torque = J ω̇ + T_load. `power` = torque · ω.
 *
 * The shaft passes through (`in` and `out` turn together, either may be
 * left open), so the source can drive a line from its start (out), take the
 * motion of a host at the line's end (in: a driveshaft or a spindle whose
 * speed the host gives), or sit in the middle. The input must have a time
 * derivative (DG_INPUT_RATE): a number, a channel (a schedule, a callback,
 * or a value a host holds over each step) or a sine_source's signal. */
#include "motion_source.h"

#include <drivegraph/block.h>

enum { IN_SPEED };
enum { SIG_OMEGA, SIG_RPM, SIG_TORQUE, SIG_POWER, SIG_ACCEL };

static const dg_param_def speed_params_table[] = {{0}};

static const dg_input_def speed_inputs[] = {
    {.name = "speed", .unit = "rad/s", .doc = "the speed the shaft follows",
     .flags = DG_INPUT_REQUIRED | DG_INPUT_RATE},
    {0},
};

static const dg_signal_def speed_signals[] = {
    {.name = "omega", .unit = "rad/s", .doc = "shaft speed", .port = MOTION_PORT_IN, .scale = 1},
    {.name = "rpm", .unit = "rpm", .doc = "shaft speed", .port = MOTION_PORT_IN,
     .scale = DG_RPM_PER_RAD_S},
    MOTION_SOURCE_TORQUE_SIGNALS,
    {0},
};

static void speed_motion(const dg_block *self, const dg_ctx *ctx, double *speed, double *accel) {
  *speed = dg_block_input(ctx, self, IN_SPEED);
  *accel = dg_block_input_derivative(ctx, self, IN_SPEED, 1);
}

static double speed_signal(const dg_block *self, const dg_ctx *ctx, int index) {
  if (index == SIG_ACCEL)
    return dg_block_input_derivative(ctx, self, IN_SPEED, 1);
  return motion_source_torque(self, ctx, index == SIG_POWER);
}

const dg_block_class dg_block_speed_source = {
    .abi = DG_BLOCK_ABI,
    .type = "speed_source",
    .doc = "A shaft that follows a given speed exactly (input `speed`, rad/s): a rheonomic "
           "constraint reporting the torque it takes.",
    .ports = motion_source_ports,
    .params = speed_params_table,
    .params_size = 0,
    .signals = speed_signals,
    .inputs = speed_inputs,
    .state_upstream = motion_source_state_upstream,
    .signal = speed_signal,
    .motion = speed_motion,
};
