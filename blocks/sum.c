/* sum — a weighted sum of up to four signals:
 *
 *   output = k_a · a + k_b · b + k_c · c + k_d · d
 *
 * Inputs left unbound read 0. A difference a − b is k_b = −1. A signal
 * block (no ports, no states): `output` follows the inputs at once
 * (feedthrough), at every RK4 stage. */
#include <drivegraph/block.h>

enum { NUM_TERMS = 4 };
enum { SIG_OUTPUT };

typedef struct sum_params {
  double k[NUM_TERMS];
} sum_params;

static const dg_param_def sum_params_table[] = {
    DG_NUMBER_AT(sum_params, k[0], "k_a", .unit = "", .def = 1.0, .flags = DG_P_DYNAMICS,
                 .doc = "weight of input a"),
    DG_NUMBER_AT(sum_params, k[1], "k_b", .unit = "", .def = 1.0, .flags = DG_P_DYNAMICS,
                 .doc = "weight of input b (-1: a difference a - b)"),
    DG_NUMBER_AT(sum_params, k[2], "k_c", .unit = "", .def = 1.0, .flags = DG_P_DYNAMICS,
                 .doc = "weight of input c"),
    DG_NUMBER_AT(sum_params, k[3], "k_d", .unit = "", .def = 1.0, .flags = DG_P_DYNAMICS,
                 .doc = "weight of input d"),
    {0},
};

static const dg_input_def sum_inputs[] = {
    {.name = "a", .doc = "first term (0 when unbound)"},
    {.name = "b", .doc = "second term (0 when unbound)"},
    {.name = "c", .doc = "third term (0 when unbound)"},
    {.name = "d", .doc = "fourth term (0 when unbound)"},
    {0},
};

static const dg_signal_def sum_signals[] = {
    {.name = "output", .unit = "", .doc = "k_a a + k_b b + k_c c + k_d d",
     .port = DG_SIGNAL_HOOK, .flags = DG_SIGNAL_FEEDTHROUGH},
    {0},
};

static double sum_signal(const dg_block *self, const dg_ctx *ctx, int index) {
  const sum_params *p = self->params;
  double s = 0.0;
  (void)index;
  for (int i = 0; i < NUM_TERMS; i++)
    s += p->k[i] * dg_block_input(ctx, self, i);
  return s;
}

const dg_block_class dg_block_sum = {
    .abi = DG_BLOCK_ABI,
    .type = "sum",
    .doc = "Weighted sum of up to four signals (a signal block; no ports): output = k_a a + "
           "k_b b + k_c c + k_d d, unbound inputs 0; k_b = -1 makes a difference.",
    .params = sum_params_table,
    .params_size = sizeof(sum_params),
    .signals = sum_signals,
    .signal = sum_signal,
    .inputs = sum_inputs,
};
