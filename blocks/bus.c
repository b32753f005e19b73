/* bus — an electrical bus (DC link): the sum of its members' powers.
 *
 * No ports, no states. Inputs p1 … p8 are the electrical powers its
 * members take from it (W; negative: deliver), each bound to one block's
 * `electric_power` (a machine, a load, another bus) or left at 0. The
 * signal `power` is their sum, the power the bus needs from its source:
 * bind it to a battery's `power` (or to another bus's member). Every
 * member's power is evaluated at every RK4 stage before the battery reads
 * the sum (they are feedthrough signals, ordered at load), so the bus
 * balances exactly at every stage: the battery delivers what the members
 * take, with nothing stored on the link. Loading refuses a member's
 * electrical power drawn twice (by two buses, or a bus and a battery) and
 * a member that is not an electrical power (a machine's mechanical
 * `power`).
 *
 * A bus with more than 8 members: chain two (bus_b.power as a member of
 * bus_a). */
#include <drivegraph/block.h>

#include <math.h>

#define BUS_MEMBERS 8

enum { SIG_POWER, SIG_MEMBERS };

#define MEMBER(k)                                                                                  \
  {.name = "p" #k, .unit = "W",                                                                    \
   .doc = "electrical power member " #k " takes from the bus (negative: delivers)",                \
   .flags = DG_INPUT_ELECTRIC}

static const dg_input_def bus_inputs[] = {
    MEMBER(1), MEMBER(2), MEMBER(3), MEMBER(4), MEMBER(5), MEMBER(6), MEMBER(7), MEMBER(8), {0},
};

static const dg_signal_def bus_signals[] = {
    {.name = "power", .unit = "W",
     .doc = "sum of the members' powers: what the bus takes from its source (a battery)",
     .port = DG_SIGNAL_HOOK, .flags = DG_SIGNAL_FEEDTHROUGH | DG_SIGNAL_ELECTRIC_POWER},
    {.name = "members", .unit = "", .doc = "number of members drawing power now (non-zero)",
     .port = DG_SIGNAL_HOOK, .flags = DG_SIGNAL_FEEDTHROUGH},
    {0},
};

static double bus_signal(const dg_block *self, const dg_ctx *ctx, int index) {
  double sum = 0.0;
  int n = 0;
  for (int k = 0; k < BUS_MEMBERS; k++) {
    double v = dg_block_input(ctx, self, k);
    if (v == v && v != 0.0) {
      sum += v;
      n++;
    }
  }
  return index == SIG_POWER ? sum : (double)n;
}

const dg_block_class dg_block_bus = {
    .abi = DG_BLOCK_ABI,
    .type = "bus",
    .doc = "Electrical bus (DC link; no ports): sums the electrical powers of up to 8 members "
           "(machines, loads, other buses) for a battery to supply, exactly at every RK4 stage.",
    .signals = bus_signals,
    .inputs = bus_inputs,
    .signal = bus_signal,
};
