/* battery — a traction battery on an electrical bus: no shaft ports.
 *
 * Model (an equivalent circuit of one source and one resistance): the open
 * circuit voltage V_oc(SoC) (the table `ocv` over the state of charge, or
 * the constant `voltage`) behind the internal resistance R. The input
 * `power` is the power the bus draws at the terminals, P (W; negative:
 * charging), at every RK4 stage: bind it to a bus's `power` (the sum of
 * its members) or to one machine's `electric_power`. The current I
 * (positive discharging) solves P = V_oc I − R I² exactly, on the branch
 * through I = 0:
 *
 *   I = 2 P / (V_oc + √(V_oc² − 4 R P))
 *
 * (the cancellation-free form of (V_oc − √(V_oc² − 4RP)) / 2R). Past the
 * largest power the cell can give, P > V_oc² / 4R, there is no solution:
 * the simulation stops with an error naming the power asked and the limit.
 *
 * The cell's charge efficiency η (`efficiency`, default 1) is a loss of
 * charge, not of voltage: the store gives up I_s = I / η while the
 * terminals carry I discharging, and takes in I_s = I · η charging (a
 * constant-efficiency battery, FASTSim's with η = √ess_round_trip_eff,
 * when R = 0).
 *
 * States, integrated by RK4 with the mechanics:
 *   SoC'    = −I_s / (3600 · capacity)        capacity in A·h
 *   E_s'    = V_oc(SoC) · I_s                 stored energy given up (J)
 *   Q'      = R · I² + V_oc · (I_s − I)       heat (J)
 *   E_e'    = −P                              electrical energy taken from
 *                                             the bus (negative: delivered)
 * so the ledger 0 = E_s + E_e − Q closes (a battery has no shaft work).
 *
 * Limits. `max_discharge_current`, `max_charge_current` (A) and
 * `max_discharge_power`, `max_charge_power` (W) give the powers the
 * battery can take or give now, published as the signals discharge_limit
 * and charge_limit (W, >= 0; from SoC alone, so any block may read them
 * without an algebraic loop: a controller, a machine's inputs of the same
 * names; DBL_MAX where nothing limits, as charging without a limit:
 * signals stay finite). Both fall linearly to 0 over the last soc_taper of
 * state of charge before soc_min (discharge) and soc_max (charge), so
 * machines that honour them keep the battery within its window. The
 * battery itself always supplies what its bus draws, so that the energy
 * balances; the time spent beyond a limit is counted (over_limit_time:
 * the segments that start beyond one; the signal over_limit) for a report to flag. A state of charge leaving
 * [0, 1] stops the simulation (the battery is empty or full); soc_min and
 * soc_max (a usable window) are only reported by over_limit.
 *
 * Signals: soc (settable; initial value also by initial_soc), ocv, voltage
 * (terminal, V_oc − R I), current, power (terminal, delivered to the bus),
 * discharge_limit, charge_limit, over_limit, over_limit_time,
 * stored_energy (E_s), heat (Q), electric_energy (E_e), energy (the
 * energy the battery holds above empty, ∫ V_oc over the charge: a
 * figure for reports). */
#include <drivegraph/block.h>

#include <float.h>
#include <math.h>
#include <stdio.h>

enum {
  SIG_SOC,
  SIG_OCV,
  SIG_VOLTAGE,
  SIG_CURRENT,
  SIG_POWER,
  SIG_DISCHARGE_LIMIT,
  SIG_CHARGE_LIMIT,
  SIG_OVER_LIMIT,
  SIG_OVER_LIMIT_TIME,
  SIG_STORED_ENERGY,
  SIG_HEAT,
  SIG_ELECTRIC_ENERGY
};
enum { ST_SOC, ST_STORED, ST_HEAT, ST_ELECTRIC };
enum { IN_POWER };

typedef struct battery_params {
  double capacity; /* A·h */
  dg_table1d ocv;
  double voltage;
  bool has_voltage;
  double resistance;
  double efficiency;
  double initial_soc;
  double soc_min, soc_max, soc_taper;
  double max_discharge_current, max_charge_current;
  double max_discharge_power, max_charge_power;
  bool has_idc, has_icc, has_pdc, has_pcc;
} battery_params;

typedef struct battery_data {
  double over_time; /* s beyond a limit */
  bool over;        /* beyond a limit at the segment's start */
} battery_data;

static const dg_param_def battery_params_table[] = {
    DG_NUMBER(battery_params, capacity, .unit = "A*h", .required = true,
              .flags = DG_P_MIN_EXCL | DG_P_DYNAMICS,
              .doc = "charge from empty (SoC 0) to full (SoC 1)"),
    {.key = "ocv", .kind = DG_PARAM_TABLE1D, .offset = offsetof(battery_params, ocv), .unit = "V",
     .doc = "open-circuit voltage over the state of charge (or give voltage)",
     .axis = {"soc", "voltage"}, .flags = DG_P_MIN_EXCL | DG_P_DYNAMICS, .min = 0},
    {.key = "voltage", .kind = DG_PARAM_NUMBER, .offset = offsetof(battery_params, voltage),
     .unit = "V", .doc = "constant open-circuit voltage (or give ocv)",
     .flags = DG_P_MIN_EXCL | DG_P_DYNAMICS, .min = 0,
     .present = DG_PRESENT(battery_params, has_voltage)},
    DG_NUMBER(battery_params, resistance, .unit = "ohm", .required = true,
              .flags = DG_P_MIN | DG_P_DYNAMICS, .doc = "internal resistance"),
    DG_NUMBER(battery_params, efficiency, .unit = "", .def = 1.0,
              .flags = DG_P_MIN_EXCL | DG_P_MAX | DG_P_DYNAMICS, .max = 1,
              .doc = "the cell's one-way charge efficiency: a discharge current I takes I / "
                     "efficiency from the store, a charge puts I x efficiency in (FASTSim: the square "
                     "root of ess_round_trip_eff)"),
    DG_NUMBER(battery_params, initial_soc, .unit = "", .def = 0.6,
              .flags = DG_P_MIN | DG_P_MAX | DG_P_DYNAMICS, .max = 1,
              .doc = "state of charge at the start (also the initial value battery.soc)"),
    DG_NUMBER(battery_params, soc_min, .unit = "", .flags = DG_P_MIN | DG_P_MAX | DG_P_DYNAMICS,
              .max = 1, .doc = "lower end of the usable window (below it over_limit is 1)"),
    DG_NUMBER(battery_params, soc_max, .unit = "", .def = 1.0,
              .flags = DG_P_MIN | DG_P_MAX | DG_P_DYNAMICS, .max = 1,
              .doc = "upper end of the usable window (above it over_limit is 1)"),
    DG_NUMBER(battery_params, soc_taper, .unit = "", .def = 0.02,
              .flags = DG_P_MIN_EXCL | DG_P_MAX | DG_P_DYNAMICS, .max = 1,
              .doc = "the limits fall linearly to 0 over this much state of charge before soc_min "
                     "(discharge) and soc_max (charge)"),
    {.key = "max_discharge_current", .kind = DG_PARAM_NUMBER,
     .offset = offsetof(battery_params, max_discharge_current), .unit = "A",
     .doc = "discharge current limit (default none)", .flags = DG_P_MIN_EXCL | DG_P_DYNAMICS,
     .present = DG_PRESENT(battery_params, has_idc)},
    {.key = "max_charge_current", .kind = DG_PARAM_NUMBER,
     .offset = offsetof(battery_params, max_charge_current), .unit = "A",
     .doc = "charge current limit (default none)", .flags = DG_P_MIN_EXCL | DG_P_DYNAMICS,
     .present = DG_PRESENT(battery_params, has_icc)},
    {.key = "max_discharge_power", .kind = DG_PARAM_NUMBER,
     .offset = offsetof(battery_params, max_discharge_power), .unit = "W",
     .doc = "discharge power limit at the terminals (default none)",
     .flags = DG_P_MIN_EXCL | DG_P_DYNAMICS, .present = DG_PRESENT(battery_params, has_pdc)},
    {.key = "max_charge_power", .kind = DG_PARAM_NUMBER,
     .offset = offsetof(battery_params, max_charge_power), .unit = "W",
     .doc = "charge power limit at the terminals (default none)",
     .flags = DG_P_MIN_EXCL | DG_P_DYNAMICS, .present = DG_PRESENT(battery_params, has_pcc)},
    {0},
};

static const dg_signal_def battery_signals[] = {
    {.name = "soc", .unit = "", .doc = "state of charge 0..1 (a state; settable)",
     .port = DG_SIGNAL_HOOK},
    {.name = "ocv", .unit = "V", .doc = "open-circuit voltage at the state of charge",
     .port = DG_SIGNAL_HOOK},
    {.name = "voltage", .unit = "V", .doc = "terminal voltage ocv - R * current",
     .port = DG_SIGNAL_HOOK, .flags = DG_SIGNAL_FEEDTHROUGH},
    {.name = "current", .unit = "A", .doc = "current (positive discharging)",
     .port = DG_SIGNAL_HOOK, .flags = DG_SIGNAL_FEEDTHROUGH},
    {.name = "power", .unit = "W", .doc = "terminal power delivered to the bus (negative: charging)",
     .port = DG_SIGNAL_HOOK, .flags = DG_SIGNAL_FEEDTHROUGH},
    {.name = "discharge_limit", .unit = "W",
     .doc = "largest terminal power it may deliver now (from the limits and the state of charge)",
     .port = DG_SIGNAL_HOOK},
    {.name = "charge_limit", .unit = "W", .doc = "largest terminal power it may take in now",
     .port = DG_SIGNAL_HOOK},
    {.name = "over_limit", .unit = "",
     .doc = "1 while beyond a current or power limit or outside [soc_min, soc_max]",
     .port = DG_SIGNAL_HOOK, .flags = DG_SIGNAL_FEEDTHROUGH},
    {.name = "over_limit_time", .unit = "s", .doc = "time spent beyond a limit since the start",
     .port = DG_SIGNAL_HOOK},
    {.name = "stored_energy", .unit = "J",
     .doc = "chemical energy given up since the start, integral of ocv * current (ledger)",
     .port = DG_SIGNAL_HOOK, .flags = DG_SIGNAL_ENERGY_STORED},
    {.name = "heat", .unit = "J", .doc = "resistive loss R * current^2 since the start (ledger)",
     .port = DG_SIGNAL_HOOK, .flags = DG_SIGNAL_ENERGY_HEAT},
    {.name = "electric_energy", .unit = "J",
     .doc = "electrical energy taken from the bus since the start (negative: delivered; ledger)",
     .port = DG_SIGNAL_HOOK, .flags = DG_SIGNAL_ENERGY_ELECTRIC},
    {0},
};

static const dg_input_def battery_inputs[] = {
    {.name = "power", .unit = "W",
     .doc = "power the bus draws at the terminals (negative: charging): a bus's power or a "
            "machine's electric_power",
     .flags = DG_INPUT_REQUIRED | DG_INPUT_ELECTRIC},
    {0},
};

static void battery_check(const void *params, dg_check *chk) {
  const battery_params *p = params;
  if (p->ocv.n > 0 && p->has_voltage)
    dg_check_error(chk, "", "give only one of ocv, voltage");
  else if (p->ocv.n == 0 && !p->has_voltage)
    dg_check_error(chk, "", "give one of ocv, voltage");
  for (int i = 0; i < p->ocv.n; i++)
    if (!(p->ocv.x[i] >= 0.0 && p->ocv.x[i] <= 1.0)) {
      char path[64];
      snprintf(path, sizeof path, "ocv/soc/%d", i);
      dg_check_error(chk, path, "must be within [0, 1] (got %g)", p->ocv.x[i]);
    }
  if (!(p->soc_min < p->soc_max))
    dg_check_error(chk, "soc_max", "must be > soc_min (%g) (got %g)", p->soc_min, p->soc_max);
}

static int battery_init(dg_block *self, dg_init *init) {
  const battery_params *p = self->params;
  dg_init_state(init)[ST_SOC] = p->initial_soc;
  return 0;
}

static double battery_ocv(const battery_params *p, double soc) {
  return p->ocv.n > 0 ? dg_table1d_eval(&p->ocv, soc) : p->voltage;
}

/* The current for terminal power pw at open-circuit voltage v; past the
 * largest power the discriminant is held at 0 (post_step then fails). */
static double battery_current(const battery_params *p, double v, double pw) {
  double disc = v * v - 4.0 * p->resistance * pw;
  return 2.0 * pw / (v + sqrt(disc > 0.0 ? disc : 0.0));
}

static double battery_power_in(const dg_block *self, const dg_ctx *ctx) {
  double pw = dg_block_input(ctx, self, IN_POWER);
  return pw == pw ? pw : 0.0;
}

static void battery_torque_downstream(dg_block *self, dg_ctx *ctx) {
  const battery_params *p = self->params;
  const double *st = dg_block_state(ctx, self);
  double pw = battery_power_in(self, ctx);
  double v = battery_ocv(p, st[ST_SOC]);
  double i = battery_current(p, v, pw);
  double ic = i > 0.0 ? i / p->efficiency : i * p->efficiency; /* the store's current */
  double *rate = dg_block_state_rate(ctx, self);
  rate[ST_SOC] = -ic / (3600.0 * p->capacity);
  rate[ST_STORED] = v * ic;
  rate[ST_HEAT] = p->resistance * i * i + v * (ic - i);
  rate[ST_ELECTRIC] = -pw;
}

/* The largest terminal power at voltage v with current limit i (A, or
 * INFINITY) and power limit pl (W, or INFINITY); discharging (dir = 1)
 * P = v i − R i² is capped at its peak v²/4R, charging (dir = −1) the
 * power taken in is v i + R i². */
static double battery_limit(const battery_params *p, double v, double i, double pl, int dir) {
  double r = p->resistance, pi;
  if (dir > 0) {
    double ipk = r > 0.0 ? v / (2.0 * r) : INFINITY;
    if (i > ipk)
      i = ipk;
    pi = isinf(i) ? INFINITY : v * i - r * i * i;
  } else {
    pi = isinf(i) ? INFINITY : v * i + r * i * i;
  }
  double lim = pi < pl ? pi : pl;
  return isinf(lim) ? DBL_MAX : lim; /* signals stay finite */
}

static double taper(double x) { return x >= 1.0 ? 1.0 : (x > 0.0 ? x : 0.0); }

static double battery_discharge_limit(const battery_params *p, double soc) {
  double l = battery_limit(p, battery_ocv(p, soc), p->has_idc ? p->max_discharge_current : INFINITY,
                           p->has_pdc ? p->max_discharge_power : INFINITY, 1);
  double f = taper((soc - p->soc_min) / p->soc_taper);
  return f < 1.0 ? (l < DBL_MAX ? l * f : (f > 0.0 ? DBL_MAX : 0.0)) : l;
}

static double battery_charge_limit(const battery_params *p, double soc) {
  double l = battery_limit(p, battery_ocv(p, soc), p->has_icc ? p->max_charge_current : INFINITY,
                           p->has_pcc ? p->max_charge_power : INFINITY, -1);
  double f = taper((p->soc_max - soc) / p->soc_taper);
  return f < 1.0 ? (l < DBL_MAX ? l * f : (f > 0.0 ? DBL_MAX : 0.0)) : l;
}

static bool battery_over(const battery_params *p, double soc, double pw) {
  if (soc < p->soc_min || soc > p->soc_max)
    return true;
  if (pw > 0.0)
    return pw > battery_discharge_limit(p, soc) * (1.0 + 1e-12);
  return -pw > battery_charge_limit(p, soc) * (1.0 + 1e-12);
}

/* Beyond a limit at the segment's start: the segment counts as over. */
static void battery_pre_step(dg_block *self, dg_ctx *ctx) {
  const battery_params *p = self->params;
  battery_data *d = self->data;
  d->over = battery_over(p, dg_block_state(ctx, self)[ST_SOC], battery_power_in(self, ctx));
}

static void battery_post_step(dg_block *self, dg_ctx *ctx) {
  const battery_params *p = self->params;
  battery_data *d = self->data;
  const double *st = dg_block_state(ctx, self);
  double soc = st[ST_SOC], pw = battery_power_in(self, ctx), v = battery_ocv(p, soc);
  if (d->over)
    d->over_time += ctx->dt;
  if (!(soc >= 0.0)) {
    dg_ctx_fail(ctx, self, "the battery is empty (state of charge %.4g)", soc);
    return;
  }
  if (!(soc <= 1.0)) {
    dg_ctx_fail(ctx, self, "the battery is full (state of charge %.4g) and still charged", soc);
    return;
  }
  if (p->resistance > 0.0 && v * v - 4.0 * p->resistance * pw < 0.0)
    dg_ctx_fail(ctx, self,
                "the bus draws %.6g W, more than the battery can give at state of charge %.4g "
                "(V_oc^2 / 4R = %.6g W): limit the machines' power (the signal discharge_limit)",
                pw, soc, v * v / (4.0 * p->resistance));
}

static double battery_signal(const dg_block *self, const dg_ctx *ctx, int index) {
  const battery_params *p = self->params;
  const battery_data *d = self->data;
  const double *st = dg_block_state(ctx, self);
  double soc = st[ST_SOC], v = battery_ocv(p, soc);
  switch (index) {
  case SIG_SOC:
    return soc;
  case SIG_OCV:
    return v;
  case SIG_DISCHARGE_LIMIT:
    return battery_discharge_limit(p, soc);
  case SIG_CHARGE_LIMIT:
    return battery_charge_limit(p, soc);
  case SIG_OVER_LIMIT_TIME:
    return d->over_time;
  case SIG_STORED_ENERGY:
    return st[ST_STORED];
  case SIG_HEAT:
    return st[ST_HEAT];
  case SIG_ELECTRIC_ENERGY:
    return st[ST_ELECTRIC];
  default:
    break;
  }
  double pw = battery_power_in(self, ctx), i = battery_current(p, v, pw);
  switch (index) {
  case SIG_VOLTAGE:
    return v - p->resistance * i;
  case SIG_CURRENT:
    return i;
  case SIG_POWER:
    return pw;
  case SIG_OVER_LIMIT:
    return battery_over(p, soc, pw) ? 1.0 : 0.0;
  default:
    return NAN;
  }
}

static int battery_set_signal(dg_block *self, dg_ctx *ctx, int index, double value) {
  if (index != SIG_SOC || !(value >= 0.0 && value <= 1.0))
    return -1;
  dg_block_state_commit(ctx, self)[ST_SOC] = value;
  return 0;
}

const dg_block_class dg_block_battery = {
    .abi = DG_BLOCK_ABI,
    .type = "battery",
    .doc = "Traction battery on an electrical bus (no shaft ports): open-circuit voltage over the "
           "state of charge behind an internal resistance, the bus's power drawn exactly at "
           "every stage (P = V_oc I - R I^2 solved for I), state of charge, stored energy and "
           "heat as states, current and power limits published for controllers.",
    .signals = battery_signals,
    .params = battery_params_table,
    .params_size = sizeof(battery_params),
    .inputs = battery_inputs,
    .data_size = sizeof(battery_data),
    .num_states = 4,
    .check = battery_check,
    .init = battery_init,
    .pre_step = battery_pre_step,
    .torque_downstream = battery_torque_downstream,
    .post_step = battery_post_step,
    .signal = battery_signal,
    .set_signal = battery_set_signal,
};
