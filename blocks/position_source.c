/* position_source — a shaft that follows a given angle exactly.
 *
 *   φ(t) = angle(t),   ω = angle'(t),   ω̇ = angle''(t)
 *
 * The shaft's speed is prescribed (dg_topo_prescribe) as the input's first
 * derivative, with its second as the acceleration, so the shaft's angle is
 * the input's to the accuracy of RK4's quadrature of that speed. A
 * piecewise-linear schedule turns at constant speed between breakpoints
 * and changes speed at each one at once (the line rigidly geared to the
 * shaft takes the impulse that needs, as at a mode change); a sine_source
 * or a callback gives a smooth motion. `angle` reports the input itself,
 * `torque` the torque it takes (J ω̇ + T_load). The shaft passes through
 * `in` and `out` as speed_source's does. */
#include "motion_source.h"

#include <drivegraph/block.h>

enum { IN_ANGLE };
enum { SIG_ANGLE, SIG_OMEGA, SIG_RPM, SIG_TORQUE, SIG_POWER, SIG_ACCEL };

static const dg_param_def position_params_table[] = {{0}};

static const dg_input_def position_inputs[] = {
    {.name = "angle", .unit = "rad", .doc = "the angle the shaft follows",
     .flags = DG_INPUT_REQUIRED | DG_INPUT_RATE},
    {0},
};

static const dg_signal_def position_signals[] = {
    {.name = "angle", .unit = "rad", .doc = "the prescribed angle (the input)",
     .port = DG_SIGNAL_HOOK, .flags = DG_SIGNAL_FEEDTHROUGH},
    {.name = "omega", .unit = "rad/s", .doc = "shaft speed", .port = MOTION_PORT_IN, .scale = 1},
    {.name = "rpm", .unit = "rpm", .doc = "shaft speed", .port = MOTION_PORT_IN,
     .scale = DG_RPM_PER_RAD_S},
    MOTION_SOURCE_TORQUE_SIGNALS,
    {0},
};

static void position_motion(const dg_block *self, const dg_ctx *ctx, double *speed,
                            double *accel) {
  *speed = dg_block_input_derivative(ctx, self, IN_ANGLE, 1);
  *accel = dg_block_input_derivative(ctx, self, IN_ANGLE, 2);
}

static double position_signal(const dg_block *self, const dg_ctx *ctx, int index) {
  switch (index) {
  case SIG_ANGLE:
    return dg_block_input(ctx, self, IN_ANGLE);
  case SIG_ACCEL:
    return dg_block_input_derivative(ctx, self, IN_ANGLE, 2);
  default:
    return motion_source_torque(self, ctx, index == SIG_POWER);
  }
}

const dg_block_class dg_block_position_source = {
    .abi = DG_BLOCK_ABI,
    .type = "position_source",
    .doc = "A shaft that follows a given angle exactly (input `angle`, rad): its speed and "
           "acceleration are the input's derivatives; reports the torque it takes.",
    .ports = motion_source_ports,
    .params = position_params_table,
    .params_size = 0,
    .signals = position_signals,
    .inputs = position_inputs,
    .state_upstream = motion_source_state_upstream,
    .signal = position_signal,
    .motion = position_motion,
};
