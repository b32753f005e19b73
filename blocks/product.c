/* product — the product of up to four signals, times a gain:
 *
 *   output = gain · a · b · c · d
 *
 * Inputs c and d left unbound read 1 (a and b must be bound). A signal
 * block (no ports, no states): `output` follows the inputs at once
 * (feedthrough), at every RK4 stage. A power from a torque and a speed,
 * a torque request scaled by a signal. */
#include <drivegraph/block.h>

enum { IN_A, IN_B, IN_C, IN_D, NUM_FACTORS };
enum { SIG_OUTPUT };

typedef struct product_params {
  double gain;
} product_params;

static const dg_param_def product_params_table[] = {
    DG_NUMBER(product_params, gain, .unit = "", .def = 1.0, .flags = DG_P_DYNAMICS,
              .doc = "constant factor of the product"),
    {0},
};

static const dg_input_def product_inputs[] = {
    {.name = "a", .doc = "first factor", .flags = DG_INPUT_REQUIRED},
    {.name = "b", .doc = "second factor", .flags = DG_INPUT_REQUIRED},
    {.name = "c", .doc = "third factor (1 when unbound)", .def = 1.0},
    {.name = "d", .doc = "fourth factor (1 when unbound)", .def = 1.0},
    {0},
};

static const dg_signal_def product_signals[] = {
    {.name = "output", .unit = "", .doc = "gain a b c d", .port = DG_SIGNAL_HOOK,
     .flags = DG_SIGNAL_FEEDTHROUGH},
    {0},
};

static double product_signal(const dg_block *self, const dg_ctx *ctx, int index) {
  const product_params *p = self->params;
  double v = p->gain;
  (void)index;
  for (int i = 0; i < NUM_FACTORS; i++)
    v *= dg_block_input(ctx, self, i);
  return v;
}

const dg_block_class dg_block_product = {
    .abi = DG_BLOCK_ABI,
    .type = "product",
    .doc = "Product of two to four signals times a gain (a signal block; no ports): output = "
           "gain a b c d, c and d 1 when unbound.",
    .params = product_params_table,
    .params_size = sizeof(product_params),
    .signals = product_signals,
    .signal = product_signal,
    .inputs = product_inputs,
};
