/* accel_source — a shaft that follows a given acceleration exactly.
 *
 *   ω̇(t) = accel(t),   ω(t0) = initial_speed (or the scenario's "initial")
 *
 * The block integrates the input into its speed (one continuous state, so
 * RK4 integrates it with the rest) and prescribes that speed on the shaft
 * (dg_topo_prescribe): a rheonomic constraint, exact to the integration of
 * the input. `torque` is the torque it takes: J ω̇ + T_load. The shaft
 * passes through `in` and `out` as speed_source's does. */
#include "motion_source.h"

#include <drivegraph/block.h>

enum { IN_ACCEL };
enum { SIG_OMEGA, SIG_RPM, SIG_TORQUE, SIG_POWER, SIG_ACCEL };

typedef struct accel_params {
  double initial_speed;
} accel_params;

static const dg_param_def accel_params_table[] = {
    DG_NUMBER(accel_params, initial_speed, .unit = "rad/s", .flags = DG_P_DYNAMICS,
              .doc = "the shaft's speed at the start (a scenario's initial omega overrides it)"),
    {0},
};

static const dg_input_def accel_inputs[] = {
    {.name = "accel", .unit = "rad/s^2", .doc = "the acceleration the shaft follows",
     .flags = DG_INPUT_REQUIRED},
    {0},
};

static const dg_signal_def accel_signals[] = {
    {.name = "omega", .unit = "rad/s", .doc = "shaft speed (settable initial value)",
     .port = DG_SIGNAL_HOOK},
    {.name = "rpm", .unit = "rpm", .doc = "shaft speed", .port = DG_SIGNAL_HOOK},
    MOTION_SOURCE_TORQUE_SIGNALS,
    {0},
};

static int accel_init(dg_block *self, dg_init *init) {
  const accel_params *p = self->params;
  dg_init_state(init)[0] = p->initial_speed;
  return 0;
}

static void accel_motion(const dg_block *self, const dg_ctx *ctx, double *speed, double *accel) {
  *speed = dg_block_state(ctx, self)[0];
  *accel = dg_block_input(ctx, self, IN_ACCEL);
}

static void accel_torque_downstream(dg_block *self, dg_ctx *ctx) {
  dg_block_state_rate(ctx, self)[0] = dg_block_input(ctx, self, IN_ACCEL);
}

static double accel_signal(const dg_block *self, const dg_ctx *ctx, int index) {
  double w = dg_block_state(ctx, self)[0];
  switch (index) {
  case SIG_OMEGA:
    return w;
  case SIG_RPM:
    return w * DG_RPM_PER_RAD_S;
  case SIG_ACCEL:
    return dg_block_input(ctx, self, IN_ACCEL);
  default:
    return motion_source_torque(self, ctx, index == SIG_POWER);
  }
}

/* The initial speed: the state, and the shaft with it (the solver reads the
 * prescribed speed from the state at the next evaluation). */
static int accel_set_signal(dg_block *self, dg_ctx *ctx, int index, double value) {
  if (index != SIG_OMEGA && index != SIG_RPM)
    return -1;
  dg_block_state_commit(ctx, self)[0] = index == SIG_OMEGA ? value : value / DG_RPM_PER_RAD_S;
  return 0;
}

const dg_block_class dg_block_accel_source = {
    .abi = DG_BLOCK_ABI,
    .type = "accel_source",
    .doc = "A shaft that follows a given acceleration exactly (input `accel`, rad/s^2), from "
           "initial_speed: a rheonomic constraint reporting the torque it takes.",
    .ports = motion_source_ports,
    .params = accel_params_table,
    .params_size = sizeof(accel_params),
    .signals = accel_signals,
    .inputs = accel_inputs,
    .num_states = 1,
    .init = accel_init,
    .state_upstream = motion_source_state_upstream,
    .torque_downstream = accel_torque_downstream,
    .signal = accel_signal,
    .set_signal = accel_set_signal,
    .motion = accel_motion,
};
