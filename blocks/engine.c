/* engine — an internal-combustion engine: a torque source on the crankshaft.
 *
 * Port `out` is the crankshaft/flywheel; the engine's inertia sits there.
 * Speeds and torques are positive in the direction of normal rotation.
 *
 * Torque characteristic, one of two forms (exactly one must be given):
 *   torque_map       T_map(rpm, θ): a 2-D table, one row per throttle
 *                    breakpoint, bilinear and clamped to the table at both
 *                    axes. The lowest throttle row is the closed-throttle
 *                    (engine braking) torque, normally negative.
 *   full_load        T_full(rpm) with an optional closed_throttle T_closed(rpm):
 *                    T_map = T_closed + θ · (T_full − T_closed).
 *                    Without closed_throttle, T_closed = 0 (no engine braking
 *                    beyond the friction curve).
 * The optional `friction` curve F(rpm) >= 0 is subtracted, opposing rotation.
 *
 * Effective throttle θ, from the driver throttle θ_d (input clamped to
 * [0, 1]; treated as 0 while the channel "throttle_cut" is >= 0.5, which a
 * gearbox raises during a shift) and the proportional idle controller:
 *   θ = clamp(max(θ_d, g · (idle_rpm − rpm)), 0, 1),   g = idle_gain (1/rpm).
 * A declutched engine settles where T_map(rpm, g·Δ) = F + load, i.e. Δ below
 * idle_rpm with Δ ≈ (−T_closed + F + load) / (g · ∂T/∂θ): a few rpm with the
 * default g = 0.02/rpm (full throttle 50 rpm below idle). idle_gain = 0
 * turns idle control off. The controller acts continuously (every RK4
 * substep), its stiffness g · ∂T/∂θ · 30/π / J must stay below ~2.7/dt.
 *
 * Rev limiter (an event located inside the step): when rpm reaches
 * redline_rpm the throttle is cut to 0 (the torque falls to the
 * closed-throttle value) until rpm falls to redline_rpm −
 * limiter_hysteresis_rpm. Both crossings are located on the step's dense
 * output and the step is split there, so rpm does not overshoot redline
 * and the run does not depend on where the steps fall (RK4's order is
 * kept through the cuts).
 *
 * Stall (an event; stall_rpm = 0 disables it): once the engine has run
 * above stall_rpm, falling to it stalls the engine for good
 * (restarting is out of scope): no combustion torque, no idle control, only
 * the friction curve remains; the signal `stalled` is 1. An engine that
 * starts below stall_rpm (a simulation starts at rest) is not stalled: the
 * idle controller cranks it up like a starter, and the stall check arms when
 * it first reaches stall_rpm.
 *
 * Net torque at `out`: T = T_map(rpm, θ) − F(rpm) (or −F(rpm) stalled).
 * A negative net torque is drag and must not drive the engine backwards:
 * within ±DRAG_FADE_RPM of standstill it is faded linearly to zero and it
 * changes sign with the rotation, T = T · clamp(rpm / DRAG_FADE_RPM, −1, 1),
 * so a closed-throttle or stalled engine comes to rest and stays there.
 * Tables are evaluated at max(rpm, 0).
 *
 * Fuel (optional; docs/energy.md). One of three forms gives the fuel rate
 * ṁ at the net torque T and speed ω (P = T·ω the brake power):
 *   fuel_map         ṁ(rpm, T) in g/s, a 2-D table over rpm and torque
 *                    (bilinear, clamped; rows below 0 N·m give the
 *                    motored fuel), floored at 0;
 *   bsfc_map         BSFC(rpm, T) in g/kWh: ṁ = BSFC · max(P, 0) / 3.6e6;
 *   efficiency       η(P / rated_power) over the fraction of the rated
 *                    power (FASTSim's fc_eff_map over fc_pwr_out_perc):
 *                    ṁ = P_o / (η(P_o / rated_power) · heating_value),
 *                    P_o = max(P, 0) + accessory_power: accessories
 *                    (alternator, pumps) driven at a constant power, as
 *                    FASTSim's aux_kw on a conventional car; they load the
 *                    fuel, not the shaft (a power, not a torque, so the
 *                    engine's speed does not enter), and their energy is
 *                    part of the heat.
 * idle_fuel_rate (g/s) is a floor of ṁ while the engine is fuelled (the
 * fuel at no load). Fuel cut (fuel_cut, on by default): no fuel while the
 * effective throttle θ is 0 (driver off the pedal with the idle controller
 * not acting, or the limiter cutting) above fuel_cut_rpm (default
 * idle_rpm), nor while stalled. The fuel's chemical power P_f = ṁ · H
 * (H = heating_value, J/kg) enters the engine, and its heat
 *   Q̇ = P_f − T·ω
 * leaves it (friction and pumping while motored included: Q̇ = −T·ω with
 * the fuel cut). Two continuous states, integrated by RK4 with the
 * mechanics: the fuel used m_f (kg) and the heat Q (J); so the ledger
 * closes, W_engine = E_fuel − Q, to round-off. Without a fuel form the
 * engine keeps no ledger (fuel_model 0, its fuel signals 0, its work
 * counted as work from outside).
 *
 * Signals: omega, rpm (settable initial speed), torque (net, N·m), throttle
 * (effective θ: 0 while the limiter cuts or stalled), stalled, limiter,
 * max_torque (the peak of T_map(rpm, 1) − F(rpm), a constant: a gearbox's
 * friction shift scales its element's capacity by it); fuel_rate (g/s),
 * fuel_power (W), fuel_used (kg, settable), fuel_volume (L, fuel_used /
 * fuel_density), fuel_energy (J, m_f·H), heat (J), efficiency (P / P_f, 0
 * without fuel), fuel_cut (1 while cut), fuel_model (1 with a fuel form). */
#include <drivegraph/block.h>
#include <math.h>
#include <stdio.h>

enum { PORT_OUT, PORT_IN };
enum {
  SIG_OMEGA,
  SIG_RPM,
  SIG_TORQUE,
  SIG_THROTTLE,
  SIG_STALLED,
  SIG_LIMITER,
  SIG_MAX_TORQUE,
  SIG_FUEL_RATE,
  SIG_FUEL_POWER,
  SIG_FUEL_USED,
  SIG_FUEL_VOLUME,
  SIG_FUEL_ENERGY,
  SIG_HEAT,
  SIG_EFFICIENCY,
  SIG_FUEL_CUT,
  SIG_FUEL_MODEL
};
enum { ST_FUEL, ST_HEAT };

/* Speed (rpm) within which negative (drag) torque fades to zero at rest. */
#define DRAG_FADE_RPM 10.0

typedef struct engine_params {
  double inertia;
  double idle_rpm, redline_rpm;
  dg_table2d torque_map;
  dg_table1d full_load, closed_throttle, friction;
  double limiter_hysteresis_rpm;
  double idle_gain;
  double stall_rpm;
  dg_table2d fuel_map, bsfc_map;
  dg_table1d efficiency;
  double rated_power;
  bool has_rated_power;
  double accessory_power;
  double idle_fuel_rate;
  bool fuel_cut;
  double fuel_cut_rpm;
  bool has_fuel_cut_rpm;
  double heating_value, fuel_density;
} engine_params;

typedef struct engine_data {
  bool limiter;    /* rev limiter cutting */
  bool stalled;
  bool armed; /* has run at or above stall_rpm */
  double max_torque; /* N·m: peak of T_map(rpm, 1) − F(rpm) */
} engine_data;

static const dg_port_def engine_ports[] = {
    {.name = "out", .dir = DG_PORT_OUT, .domain = DG_ROTATIONAL,
     .doc = "crankshaft / flywheel (the engine's inertia)"},
    {.name = "in", .dir = DG_PORT_IN, .domain = DG_ROTATIONAL, .optional = true,
     .doc = "the same shaft upstream, to sit in-line (a P2 motor between clutch and gearbox, "
            "another source behind it); turns with out"},
    {0},
};

static const dg_param_def engine_params_table[] = {
    DG_NUMBER(engine_params, inertia, .unit = "kg*m^2", .required = true,
              .flags = DG_P_MIN_EXCL | DG_P_INERTIA, .doc = "crankshaft and flywheel inertia"),
    DG_NUMBER(engine_params, idle_rpm, .unit = "rpm", .required = true,
              .flags = DG_P_MIN_EXCL | DG_P_DYNAMICS, .doc = "speed the idle controller holds"),
    DG_NUMBER(engine_params, redline_rpm, .unit = "rpm", .required = true,
              .flags = DG_P_MIN_EXCL | DG_P_DYNAMICS,
              .doc = "rev limiter cuts the throttle at this speed (located inside the step)"),
    {.key = "torque_map", .kind = DG_PARAM_TABLE2D, .offset = offsetof(engine_params, torque_map),
     .unit = "N*m",
     .doc = "torque over rpm and throttle, one row per throttle breakpoint (lowest row: closed "
            "throttle, negative for engine braking)",
     .axis = {"rpm", "throttle", "torque"}, .flags = DG_P_DYNAMICS},
    {.key = "full_load", .kind = DG_PARAM_TABLE1D, .offset = offsetof(engine_params, full_load),
     .unit = "N*m", .doc = "full-throttle torque over rpm (instead of torque_map)",
     .axis = {"rpm", "torque"}, .flags = DG_P_DYNAMICS},
    {.key = "closed_throttle", .kind = DG_PARAM_TABLE1D,
     .offset = offsetof(engine_params, closed_throttle), .unit = "N*m",
     .doc = "closed-throttle torque over rpm, with full_load (default 0)",
     .axis = {"rpm", "torque"}, .flags = DG_P_DYNAMICS},
    {.key = "friction", .kind = DG_PARAM_TABLE1D, .offset = offsetof(engine_params, friction),
     .unit = "N*m", .doc = "friction torque over rpm, subtracted (opposes rotation)",
     .flags = DG_P_MIN | DG_P_DYNAMICS, .min = 0, .axis = {"rpm", "torque"}},
    DG_NUMBER(engine_params, limiter_hysteresis_rpm, .unit = "rpm", .def = 100.0,
              .flags = DG_P_MIN | DG_P_DYNAMICS,
              .doc = "rev limiter releases at redline_rpm minus this (located inside the step)"),
    DG_NUMBER(engine_params, idle_gain, .unit = "1/rpm", .def = 0.02,
              .flags = DG_P_MIN | DG_P_DYNAMICS,
              .doc = "idle controller throttle per rpm below idle_rpm (0: off)"),
    DG_NUMBER(engine_params, stall_rpm, .unit = "rpm", .flags = DG_P_MIN | DG_P_DYNAMICS,
              .doc = "the engine stalls for good on falling to this speed, once above it "
                     "(0: never)"),
    {.key = "fuel_map", .kind = DG_PARAM_TABLE2D, .offset = offsetof(engine_params, fuel_map),
     .unit = "g/s",
     .doc = "fuel rate over rpm and net torque, one row per torque breakpoint (or give bsfc_map or "
            "efficiency)",
     .axis = {"rpm", "torque", "fuel_rate"}, .flags = DG_P_MIN | DG_P_DYNAMICS, .min = 0},
    {.key = "bsfc_map", .kind = DG_PARAM_TABLE2D, .offset = offsetof(engine_params, bsfc_map),
     .unit = "g/kWh",
     .doc = "brake-specific fuel consumption over rpm and net torque: fuel rate = bsfc x brake "
            "power (or give fuel_map or efficiency)",
     .axis = {"rpm", "torque", "bsfc"}, .flags = DG_P_MIN_EXCL | DG_P_DYNAMICS, .min = 0},
    {.key = "efficiency", .kind = DG_PARAM_TABLE1D, .offset = offsetof(engine_params, efficiency),
     .unit = "",
     .doc = "brake efficiency over the fraction of rated_power (FASTSim's fc_eff_map over "
            "fc_pwr_out_perc): fuel power = brake power / efficiency",
     .axis = {"power_fraction", "efficiency"},
     .flags = DG_P_MIN_EXCL | DG_P_MAX | DG_P_DYNAMICS, .min = 0, .max = 1},
    {.key = "rated_power", .kind = DG_PARAM_NUMBER, .offset = offsetof(engine_params, rated_power),
     .unit = "W", .doc = "rated power the efficiency table's power fractions refer to",
     .flags = DG_P_MIN_EXCL | DG_P_DYNAMICS, .min = 0,
     .present = DG_PRESENT(engine_params, has_rated_power)},
    DG_NUMBER(engine_params, accessory_power, .unit = "W", .flags = DG_P_MIN | DG_P_DYNAMICS,
              .doc = "efficiency form: accessories driven at this constant power (FASTSim's aux_kw "
                     "on a conventional car), fuelled at the efficiency of brake + accessory power; "
                     "their energy leaves as heat, the shaft does not carry it"),
    DG_NUMBER(engine_params, idle_fuel_rate, .unit = "g/s", .flags = DG_P_MIN | DG_P_DYNAMICS,
              .doc = "least fuel rate while fuelled (the fuel at no load; FASTSim's idle_fc_kw / "
                     "heating value)"),
    {.key = "fuel_cut", .kind = DG_PARAM_BOOL, .offset = offsetof(engine_params, fuel_cut),
     .unit = "", .doc = "no fuel on overrun: effective throttle 0 above fuel_cut_rpm", .def = 1,
     .flags = DG_P_DYNAMICS},
    {.key = "fuel_cut_rpm", .kind = DG_PARAM_NUMBER,
     .offset = offsetof(engine_params, fuel_cut_rpm), .unit = "rpm",
     .doc = "the fuel is cut above this speed (default idle_rpm)",
     .flags = DG_P_MIN | DG_P_DYNAMICS, .min = 0,
     .present = DG_PRESENT(engine_params, has_fuel_cut_rpm)},
    DG_NUMBER(engine_params, heating_value, .unit = "J/kg", .def = 43.0e6,
              .flags = DG_P_MIN_EXCL | DG_P_DYNAMICS,
              .doc = "lower heating value of the fuel (default gasoline's, as FASTSim)"),
    DG_NUMBER(engine_params, fuel_density, .unit = "kg/L", .def = 0.75,
              .flags = DG_P_MIN_EXCL | DG_P_DYNAMICS, .doc = "fuel density, for fuel_volume"),
    {0},
};

static const dg_signal_def engine_signals[] = {
    {.name = "omega", .unit = "rad/s", .doc = "crankshaft speed", .port = PORT_OUT, .scale = 1},
    {.name = "rpm", .unit = "rpm", .doc = "crankshaft speed", .port = PORT_OUT,
     .scale = DG_RPM_PER_RAD_S},
    {.name = "torque", .unit = "N*m", .doc = "net torque delivered at out",
     .port = DG_SIGNAL_HOOK, .flags = DG_SIGNAL_FEEDTHROUGH},
    {.name = "throttle", .unit = "", .doc = "effective throttle (driver, idle control, cuts)",
     .port = DG_SIGNAL_HOOK, .flags = DG_SIGNAL_FEEDTHROUGH},
    {.name = "stalled", .unit = "", .doc = "1 once the engine has stalled", .port = DG_SIGNAL_HOOK, .flags = DG_SIGNAL_BOOL},
    {.name = "limiter", .unit = "", .doc = "1 while the rev limiter cuts", .port = DG_SIGNAL_HOOK, .flags = DG_SIGNAL_BOOL},
    {.name = "max_torque", .unit = "N*m",
     .doc = "peak net full-throttle torque (a constant: what a gearbox's shift capacity scales)",
     .port = DG_SIGNAL_HOOK},
    {.name = "fuel_rate", .unit = "g/s", .doc = "fuel mass flow (0 without a fuel form)",
     .port = DG_SIGNAL_HOOK, .flags = DG_SIGNAL_FEEDTHROUGH},
    {.name = "fuel_power", .unit = "W", .doc = "chemical power of the fuel flow",
     .port = DG_SIGNAL_HOOK, .flags = DG_SIGNAL_FEEDTHROUGH},
    {.name = "fuel_used", .unit = "kg", .doc = "fuel burnt since the start (a state; settable)",
     .port = DG_SIGNAL_HOOK},
    {.name = "fuel_volume", .unit = "L", .doc = "fuel burnt since the start, by volume",
     .port = DG_SIGNAL_HOOK},
    {.name = "fuel_energy", .unit = "J", .doc = "chemical energy of the fuel burnt (ledger: fuel in)",
     .port = DG_SIGNAL_HOOK, .flags = DG_SIGNAL_ENERGY_FUEL},
    {.name = "heat", .unit = "J",
     .doc = "fuel energy not delivered at the shaft, since the start (a state; ledger: heat out)",
     .port = DG_SIGNAL_HOOK, .flags = DG_SIGNAL_ENERGY_HEAT},
    {.name = "efficiency", .unit = "", .doc = "brake efficiency torque * omega / fuel_power (0 without fuel)",
     .port = DG_SIGNAL_HOOK, .flags = DG_SIGNAL_FEEDTHROUGH},
    {.name = "fuel_cut", .unit = "", .doc = "1 while the fuel is cut (overrun, stalled)",
     .port = DG_SIGNAL_HOOK, .flags = DG_SIGNAL_FEEDTHROUGH | DG_SIGNAL_BOOL},
    {.name = "fuel_model", .unit = "",
     .doc = "1 with a fuel form (the engine keeps an energy ledger), 0 without (its fuel signals "
            "read 0)",
     .port = DG_SIGNAL_HOOK, .flags = DG_SIGNAL_LEDGER | DG_SIGNAL_BOOL},
    {0},
};

enum { IN_THROTTLE, IN_THROTTLE_CUT };
static const dg_input_def engine_inputs[] = {
    {.name = "throttle", .unit = "", .doc = "driver throttle 0..1", .source = "throttle",
     .flags = DG_P_MIN | DG_P_MAX, .min = 0, .max = 1},
    {.name = "throttle_cut", .unit = "",
     .doc = "throttle cut (>= 0.5 closes the throttle): by default the throttle_cut signal of "
            "the gearbox this engine drives",
     .source = ">throttle_cut", .flags = DG_INPUT_BOOL},
    {0},
};

/* Every element of an rpm axis must be >= 0. */
static void check_rpm_axis(dg_check *chk, const char *name, int n, const double *x) {
  char path[64];
  for (int i = 0; i < n; i++) {
    if (x[i] >= 0.0)
      continue;
    snprintf(path, sizeof path, "%s/rpm/%d", name, i);
    dg_check_error(chk, path, "must be >= 0 (got %g)", x[i]);
  }
}

static void engine_check(const void *params, dg_check *chk) {
  const engine_params *p = params;
  bool map = p->torque_map.nx > 0, full = p->full_load.n > 0;
  if (map && full)
    dg_check_error(chk, "", "give only one of torque_map, full_load");
  else if (!map && !full)
    dg_check_error(chk, "", "give one of torque_map, full_load");
  if (p->closed_throttle.n > 0 && !full)
    dg_check_error(chk, "closed_throttle",
                   "only valid with full_load (torque_map has its own closed-throttle row)");
  if (!(p->redline_rpm > p->idle_rpm))
    dg_check_error(chk, "redline_rpm", "must be > idle_rpm (%g) (got %g)", p->idle_rpm,
                   p->redline_rpm);
  else if (!(p->limiter_hysteresis_rpm < p->redline_rpm - p->idle_rpm))
    dg_check_error(chk, "limiter_hysteresis_rpm", "must be < redline_rpm - idle_rpm (%g) (got %g)",
                   p->redline_rpm - p->idle_rpm, p->limiter_hysteresis_rpm);
  if (!(p->stall_rpm < p->idle_rpm))
    dg_check_error(chk, "stall_rpm", "must be < idle_rpm (%g) (got %g)", p->idle_rpm, p->stall_rpm);
  if (map) {
    char path[64];
    for (int i = 0; i < p->torque_map.ny; i++) {
      double th = p->torque_map.y[i];
      snprintf(path, sizeof path, "torque_map/throttle/%d", i);
      if (th < 0.0)
        dg_check_error(chk, path, "must be >= 0 (got %g)", th);
      else if (th > 1.0)
        dg_check_error(chk, path, "must be <= 1 (got %g)", th);
    }
    check_rpm_axis(chk, "torque_map", p->torque_map.nx, p->torque_map.x);
  }
  check_rpm_axis(chk, "full_load", p->full_load.n, p->full_load.x);
  check_rpm_axis(chk, "closed_throttle", p->closed_throttle.n, p->closed_throttle.x);
  check_rpm_axis(chk, "friction", p->friction.n, p->friction.x);
  int forms = (p->fuel_map.nx > 0) + (p->bsfc_map.nx > 0) + (p->efficiency.n > 0);
  if (forms > 1)
    dg_check_error(chk, "", "give only one of fuel_map, bsfc_map, efficiency");
  if (p->efficiency.n > 0 && !p->has_rated_power)
    dg_check_error(chk, "", "missing rated_power (the efficiency table is over its fractions)");
  else if (p->has_rated_power && p->efficiency.n == 0)
    dg_check_error(chk, "rated_power", "only valid with efficiency");
  if (p->accessory_power > 0.0 && p->efficiency.n == 0)
    dg_check_error(chk, "accessory_power", "only valid with efficiency");
  check_rpm_axis(chk, "fuel_map", p->fuel_map.nx, p->fuel_map.x);
  check_rpm_axis(chk, "bsfc_map", p->bsfc_map.nx, p->bsfc_map.x);
  for (int i = 0; i < p->efficiency.n; i++)
    if (p->efficiency.x[i] < 0.0) {
      char path[64];
      snprintf(path, sizeof path, "efficiency/power_fraction/%d", i);
      dg_check_error(chk, path, "must be >= 0 (got %g)", p->efficiency.x[i]);
    }
}

static bool engine_has_fuel(const engine_params *p) {
  return p->fuel_map.nx > 0 || p->bsfc_map.nx > 0 || p->efficiency.n > 0;
}

static double engine_map(const engine_params *p, double rpm, double th);

/* The peak of T_map(rpm, 1) − F(rpm): both are piecewise linear in rpm, so
 * it is at a breakpoint of one of them. */
static double peak_torque(const engine_params *p) {
  const double *x[2] = {p->torque_map.nx > 0 ? p->torque_map.x : p->full_load.x, p->friction.x};
  int n[2] = {p->torque_map.nx > 0 ? p->torque_map.nx : p->full_load.n, p->friction.n};
  double best = -INFINITY;
  for (int k = 0; k < 2; k++)
    for (int i = 0; i < n[k]; i++) {
      double rpm = x[k][i] > 0.0 ? x[k][i] : 0.0;
      double t = engine_map(p, rpm, 1.0) - dg_table1d_eval(&p->friction, rpm);
      best = t > best ? t : best;
    }
  return best;
}

static int engine_init(dg_block *self, dg_init *init) {
  (void)init;
  engine_data *d = self->data;
  d->limiter = d->stalled = d->armed = false;
  d->max_torque = peak_torque(self->params);
  return 0;
}

static double clamp(double v, double lo, double hi) { return v < lo ? lo : v > hi ? hi : v; }

/* Effective throttle at `rpm` (0 while stalled or the limiter cuts). */
static double engine_throttle(const dg_block *self, const dg_ctx *ctx, double rpm) {
  const engine_params *p = self->params;
  const engine_data *d = self->data;
  if (d->stalled || d->limiter)
    return 0.0;
  double driver = clamp(dg_block_input(ctx, self, IN_THROTTLE), 0.0, 1.0);
  if (dg_block_input(ctx, self, IN_THROTTLE_CUT) >= 0.5)
    driver = 0.0;
  double idle = p->idle_gain * (p->idle_rpm - rpm);
  /* the larger of the two within [0, 1]: the driver's is already */
  return driver > idle ? driver : clamp(idle, 0.0, 1.0);
}

/* Combustion torque (friction not included) at rpm >= 0 and throttle th. */
static double engine_map(const engine_params *p, double rpm, double th) {
  if (p->torque_map.nx > 0)
    return dg_table2d_eval(&p->torque_map, rpm, th);
  double closed = dg_table1d_eval(&p->closed_throttle, rpm); /* 0 when absent */
  return closed + th * (dg_table1d_eval(&p->full_load, rpm) - closed);
}

/* Net torque at `out` for crankshaft speed w. */
static double engine_torque(const dg_block *self, const dg_ctx *ctx, double w) {
  const engine_params *p = self->params;
  const engine_data *d = self->data;
  double rpm = w * DG_RPM_PER_RAD_S;
  double r = rpm > 0.0 ? rpm : 0.0;
  double t = -dg_table1d_eval(&p->friction, r);
  if (!d->stalled)
    t += engine_map(p, r, engine_throttle(self, ctx, rpm));
  if (t < 0.0 && fabs(rpm) < DRAG_FADE_RPM)
    t *= rpm / DRAG_FADE_RPM;
  else if (t < 0.0 && rpm < 0.0)
    t = -t;
  return t;
}

/* Whether the fuel is cut at speed rpm with effective throttle th. */
static bool engine_cut(const dg_block *self, double rpm, double th) {
  const engine_params *p = self->params;
  const engine_data *d = self->data;
  if (d->stalled)
    return true;
  double cut_rpm = p->has_fuel_cut_rpm ? p->fuel_cut_rpm : p->idle_rpm;
  return p->fuel_cut && !(th > 0.0) && rpm > cut_rpm;
}

/* Fuel rate (kg/s) at speed w with net torque t and effective throttle th;
 * 0 without a fuel form. */
static double engine_fuel_rate(const dg_block *self, double w, double t, double th) {
  const engine_params *p = self->params;
  if (!engine_has_fuel(p))
    return 0.0;
  double rpm = w * DG_RPM_PER_RAD_S;
  if (engine_cut(self, rpm, th))
    return 0.0;
  double r = rpm > 0.0 ? rpm : 0.0, pw = t * w, g; /* g/s */
  if (p->fuel_map.nx > 0) {
    g = dg_table2d_eval(&p->fuel_map, r, t);
  } else if (p->bsfc_map.nx > 0) {
    g = pw > 0.0 ? dg_table2d_eval(&p->bsfc_map, r, t) * pw / 3.6e6 : 0.0;
  } else {
    double po = (pw > 0.0 ? pw : 0.0) + p->accessory_power;
    double eta = po > 0.0 ? dg_table1d_eval(&p->efficiency, po / p->rated_power) : 1.0;
    g = po > 0.0 ? 1e3 * po / (eta * p->heating_value) : 0.0;
  }
  if (!(g > p->idle_fuel_rate))
    g = p->idle_fuel_rate;
  return 1e-3 * g;
}

/* The limiter's and the stall's decisions at crankshaft speed rpm, with
 * the event functions' bounds included (a located crossing ends its
 * segment where g <= 0): the limiter cuts at redline_rpm and releases at
 * redline_rpm − limiter_hysteresis_rpm; an engine that has run above
 * stall_rpm stalls on coming down to it. */
static void engine_decide(const engine_params *p, engine_data *d, double rpm) {
  if (d->limiter && rpm <= p->redline_rpm - p->limiter_hysteresis_rpm)
    d->limiter = false;
  else if (!d->limiter && rpm >= p->redline_rpm)
    d->limiter = true;
  if (p->stall_rpm > 0.0 && !d->stalled) {
    if (!d->armed) {
      if (rpm > p->stall_rpm)
        d->armed = true;
    } else if (rpm <= p->stall_rpm) {
      d->stalled = true;
    }
  }
  if (d->stalled)
    d->limiter = false;
}

/* The pre_step and the post_step: at a step's start (speeds a host or
 * dg_sim_set_initial set since the last segment) and at each segment's end
 * (a located crossing). */
static void engine_step_hook(dg_block *self, dg_ctx *ctx) {
  engine_decide(self->params, self->data, dg_port_speed(ctx, self, PORT_OUT) * DG_RPM_PER_RAD_S);
}

/* g0: the speed reaching redline (limiter off); g1: falling to the
 * release speed (limiter cutting); g2: an armed engine falling to
 * stall_rpm. A stalled engine has none. */
static int engine_event_values(const dg_block *self, dg_ctx *ctx, double *g) {
  const engine_params *p = self->params;
  const engine_data *d = self->data;
  g[0] = g[1] = g[2] = 1.0;
  if (d->stalled)
    return 0;
  double rpm = dg_port_speed(ctx, self, PORT_OUT) * DG_RPM_PER_RAD_S;
  if (d->limiter)
    g[1] = rpm - (p->redline_rpm - p->limiter_hysteresis_rpm);
  else
    g[0] = p->redline_rpm - rpm;
  if (p->stall_rpm > 0.0 && d->armed)
    g[2] = rpm - p->stall_rpm;
  return 1;
}

/* The start: an engine nobody gave a speed runs at idle when its shaft is
 * free to (a clutch or converter between it and the road); one the start
 * drives above its redline, or backwards, cannot start so. */
static void engine_start(dg_block *self, dg_ctx *ctx, int phase) {
  const engine_params *p = self->params;
  if (phase == DG_START_PROPOSE) {
    dg_ctx_start_speed_why(ctx, self, PORT_OUT, p->idle_rpm / DG_RPM_PER_RAD_S, "idle");
    return;
  }
  double rpm = dg_port_speed(ctx, self, PORT_OUT) * DG_RPM_PER_RAD_S;
  if (rpm > p->redline_rpm * (1.0 + 1e-9))
    dg_ctx_fail(ctx, self,
                "the start drives the engine at %.0f rpm, above its redline %.0f rpm (the initial "
                "speeds and the gear engaged fix it): start in a higher gear, at a lower speed, or "
                "with the clutch open",
                rpm, p->redline_rpm);
  else if (rpm < -1e-9 * p->redline_rpm)
    dg_ctx_fail(ctx, self,
                "the start turns the engine backwards (%.0f rpm): the gear engaged at the start "
                "drives against the initial speeds",
                rpm);
}

static void engine_state_upstream(dg_block *self, dg_topo *topo) {
  const engine_params *p = self->params;
  /* one shaft: `in` (when connected, a shaft upstream) turns with `out` */
  dg_topo_ratio(topo, self, PORT_IN, PORT_OUT, 1.0, 1.0);
  dg_topo_inertia(topo, self, PORT_OUT, p->inertia);
}

static void engine_torque_downstream(dg_block *self, dg_ctx *ctx) {
  const engine_params *p = self->params;
  double w = dg_port_speed(ctx, self, PORT_OUT);
  double t = engine_torque(self, ctx, w);
  dg_port_add_torque(ctx, self, PORT_OUT, t);
  if (engine_has_fuel(p)) {
    double th = engine_throttle(self, ctx, w * DG_RPM_PER_RAD_S);
    double mdot = engine_fuel_rate(self, w, t, th);
    double *rate = dg_block_state_rate(ctx, self);
    rate[ST_FUEL] = mdot;
    rate[ST_HEAT] = mdot * p->heating_value - t * w;
  }
}

static double engine_signal(const dg_block *self, const dg_ctx *ctx, int index) {
  const engine_params *p = self->params;
  const engine_data *d = self->data;
  double w = dg_port_speed(ctx, self, PORT_OUT);
  const double *st = dg_block_state(ctx, self);
  bool fuel = engine_has_fuel(p);
  if (index == SIG_FUEL_MODEL)
    return fuel ? 1.0 : 0.0;
  if (index >= SIG_FUEL_RATE && !fuel)
    return 0.0;
  switch (index) {
  case SIG_FUEL_RATE:
  case SIG_FUEL_POWER:
  case SIG_EFFICIENCY: {
    double t = engine_torque(self, ctx, w);
    double mdot = engine_fuel_rate(self, w, t, engine_throttle(self, ctx, w * DG_RPM_PER_RAD_S));
    if (index == SIG_FUEL_RATE)
      return 1e3 * mdot;
    double pf = mdot * p->heating_value;
    if (index == SIG_FUEL_POWER)
      return pf;
    return pf > 0.0 ? t * w / pf : 0.0;
  }
  case SIG_FUEL_USED:
    return st[ST_FUEL];
  case SIG_FUEL_VOLUME:
    return st[ST_FUEL] / p->fuel_density;
  case SIG_FUEL_ENERGY:
    return st[ST_FUEL] * p->heating_value;
  case SIG_HEAT:
    return st[ST_HEAT];
  case SIG_FUEL_CUT:
    return engine_cut(self, w * DG_RPM_PER_RAD_S,
                      engine_throttle(self, ctx, w * DG_RPM_PER_RAD_S))
               ? 1.0
               : 0.0;
  case SIG_TORQUE:
    return engine_torque(self, ctx, w);
  case SIG_THROTTLE:
    return engine_throttle(self, ctx, w * DG_RPM_PER_RAD_S);
  case SIG_STALLED:
    return d->stalled ? 1.0 : 0.0;
  case SIG_LIMITER:
    return d->limiter ? 1.0 : 0.0;
  case SIG_MAX_TORQUE:
    return d->max_torque;
  default:
    return 0.0;
  }
}

/* max_torque is a constant of the parameters (a gearbox's torque_reference
 * reads it and accepts values >= 0). */
static void engine_signal_range(const void *params, int signal, dg_range *r) {
  if (signal == SIG_MAX_TORQUE)
    r->min = r->max = peak_torque(params);
}

/* The fuel used can be set as an initial value (a tank's reading). */
static int engine_set_signal(dg_block *self, dg_ctx *ctx, int index, double value) {
  if (index != SIG_FUEL_USED || !engine_has_fuel(self->params) || !(value >= 0.0) ||
      !isfinite(value))
    return -1;
  dg_block_state_commit(ctx, self)[ST_FUEL] = value;
  return 0;
}

const dg_block_class dg_block_engine = {
    .abi = DG_BLOCK_ABI,
    .type = "engine",
    .doc = "Combustion engine: torque map (or full-load and closed-throttle curves) over rpm and "
           "throttle, friction, idle control, rev limiter with hysteresis, optional stall (their "
           "crossings located inside the step); "
           "optional fuel model (fuel-rate or BSFC map over rpm and torque, or efficiency over "
           "the fraction of rated power), idle fuel, fuel cut on overrun, fuel used and heat as "
           "states (the energy ledger).",
    .ports = engine_ports,
    .params = engine_params_table,
    .params_size = sizeof(engine_params),
    .signals = engine_signals,
    .inputs = engine_inputs,
    .data_size = sizeof(engine_data),
    .num_states = 2, /* fuel used (kg), heat (J) */
    .check = engine_check,
    .init = engine_init,
    .pre_step = engine_step_hook,
    .post_step = engine_step_hook,
    .num_events = 3,
    .event_values = engine_event_values,
    .state_upstream = engine_state_upstream,
    .torque_downstream = engine_torque_downstream,
    .signal = engine_signal,
    .set_signal = engine_set_signal,
    .start = engine_start,
    .signal_range = engine_signal_range,
};
