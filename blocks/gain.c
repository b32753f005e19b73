/* gain — a signal scaled and offset: output = gain · input + offset.
 *
 * A signal block (no ports, no states): `output` follows the input at once
 * (feedthrough), at every RK4 stage. With gain −1 it negates a signal; with
 * an offset it shifts one (a setpoint relative to a measured value). */
#include <drivegraph/block.h>

enum { IN_INPUT };
enum { SIG_OUTPUT };

typedef struct gain_params {
  double gain, offset;
} gain_params;

static const dg_param_def gain_params_table[] = {
    DG_NUMBER(gain_params, gain, .unit = "", .def = 1.0, .flags = DG_P_DYNAMICS,
              .doc = "factor k of output = k input + offset"),
    DG_NUMBER(gain_params, offset, .unit = "", .flags = DG_P_DYNAMICS,
              .doc = "value added after the factor"),
    {0},
};

static const dg_input_def gain_inputs[] = {
    {.name = "input", .doc = "the signal scaled", .flags = DG_INPUT_REQUIRED},
    {0},
};

static const dg_signal_def gain_signals[] = {
    {.name = "output", .unit = "", .doc = "gain * input + offset", .port = DG_SIGNAL_HOOK,
     .flags = DG_SIGNAL_FEEDTHROUGH},
    {0},
};

static double gain_signal(const dg_block *self, const dg_ctx *ctx, int index) {
  const gain_params *p = self->params;
  (void)index;
  return p->gain * dg_block_input(ctx, self, IN_INPUT) + p->offset;
}

const dg_block_class dg_block_gain = {
    .abi = DG_BLOCK_ABI,
    .type = "gain",
    .doc = "Signal gain (a signal block; no ports): output = gain * input + offset, at every "
           "RK4 stage.",
    .params = gain_params_table,
    .params_size = sizeof(gain_params),
    .signals = gain_signals,
    .signal = gain_signal,
    .inputs = gain_inputs,
};
