/* electric_load — an auxiliary electrical load (no ports): lights, pumps,
 * climate, a DC-DC converter's low-voltage side.
 *
 * Draws P = power · demand (W, >= 0: the parameter `power` times the input
 * `demand`, 1 by default, clamped at 0) from its bus, all of it turned
 * into heat. One state,
 * the energy drawn E = ∫ P dt, reported both as the electrical energy taken
 * from the bus and as heat, so the ledger 0 = E − E closes. Bind its
 * `electric_power` to a bus member (or a battery). */
#include <drivegraph/block.h>

#include <math.h>

enum { SIG_ELECTRIC_POWER, SIG_ELECTRIC_ENERGY, SIG_HEAT };
enum { IN_DEMAND };

typedef struct load_params {
  double power;
} load_params;

static const dg_param_def electric_load_params_table[] = {
    DG_NUMBER(load_params, power, .unit = "W", .flags = DG_P_MIN | DG_P_DYNAMICS,
              .doc = "power drawn at demand 1"),
    {0},
};

static const dg_input_def electric_load_inputs[] = {
    {.name = "demand", .unit = "",
     .doc = "multiplies power (a duty cycle, or the power in W with power = 1); clamped at 0",
     .def = 1.0},
    {0},
};

static const dg_signal_def electric_load_signals[] = {
    {.name = "electric_power", .unit = "W", .doc = "power drawn from the bus",
     .port = DG_SIGNAL_HOOK, .flags = DG_SIGNAL_FEEDTHROUGH | DG_SIGNAL_ELECTRIC_POWER},
    {.name = "electric_energy", .unit = "J", .doc = "energy drawn since the start (a state; ledger)",
     .port = DG_SIGNAL_HOOK, .flags = DG_SIGNAL_ENERGY_ELECTRIC},
    {.name = "heat", .unit = "J", .doc = "the same energy, turned into heat (ledger)",
     .port = DG_SIGNAL_HOOK, .flags = DG_SIGNAL_ENERGY_HEAT},
    {0},
};

static double load_power(const dg_block *self, const dg_ctx *ctx) {
  const load_params *p = self->params;
  double v = p->power * dg_block_input(ctx, self, IN_DEMAND);
  return v > 0.0 ? v : 0.0;
}

static void electric_load_torque_downstream(dg_block *self, dg_ctx *ctx) {
  dg_block_state_rate(ctx, self)[0] = load_power(self, ctx);
}

static double electric_load_signal(const dg_block *self, const dg_ctx *ctx, int index) {
  if (index == SIG_ELECTRIC_POWER)
    return load_power(self, ctx);
  return dg_block_state(ctx, self)[0];
}

const dg_block_class dg_block_electric_load = {
    .abi = DG_BLOCK_ABI,
    .type = "electric_load",
    .doc = "Auxiliary electrical load (no ports): a constant or commanded power drawn from a bus "
           "and turned into heat.",
    .params = electric_load_params_table,
    .params_size = sizeof(load_params),
    .signals = electric_load_signals,
    .inputs = electric_load_inputs,
    .num_states = 1,
    .torque_downstream = electric_load_torque_downstream,
    .signal = electric_load_signal,
};
