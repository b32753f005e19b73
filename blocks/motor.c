/* motor — an electric traction motor: a torque source on its shaft.
 *
 * Port `out` is the rotor shaft; the rotor inertia sits there. Speeds and
 * torques are positive in the direction of forward travel.
 *
 * Drive envelope, at shaft speed w = |ω|:
 *   T_avail(w) = min(max_torque, P / w) · fade(w),
 *   fade(w)    = clamp((ω_max − w) / (0.05 ω_max), 0, 1),
 * constant torque up to the base speed ω_base = P / max_torque, constant
 * power P above it, and a linear fade to zero over the last 5 % of max_rpm
 * (a hard cut would chatter at max_rpm). P is max_power, or max_torque ·
 * base_rpm when base_rpm is given instead (at most one of the two); with
 * neither, the torque is not power limited.
 *
 * Drive command: T_drive = d · θ · T_avail(w), θ = throttle input clamped to
 * [0, 1] (0 while the channel "throttle_cut" >= 0.5), d = −1 when `reverse`
 * is on and the gear input is −1 (< −0.5), else +1 (any other gear input,
 * including 0, drives forward: a motor has no neutral of its own).
 *
 * Regenerative braking: a demand r = clamp(max(regen_fraction · brake,
 * −throttle), 0, 1) (a negative throttle is a regen command too; ignored
 * during a throttle cut like any throttle) as a share of the regen envelope
 *   T_regen = −r · min(max_regen_torque, P_regen / w) · clamp(rpm / regen_fade_rpm, −1, 1),
 * opposing rotation and fading out linearly below regen_fade_rpm so that the
 * motor does not chatter at standstill. max_regen_torque defaults to
 * max_torque, max_regen_power to the drive power limit. With the default
 * regen_fraction = 0 the brake pedal does not regenerate.
 *
 * Series blending (the input brake_power bound, >= 0: a driver's
 * brake_power, the braking power its pedal asks for at the road): the
 * machine regenerates first, as much of that power as it can now,
 *   P_avail = −T_env·ω,  T_env = the regen envelope above (torque, power,
 *             fade) scaled down to the charge_limit like any torque,
 *   T_regen = −min(brake_power, P_avail) / |ω| · sign(ω),
 * in place of regen_fraction · brake, and the signal friction_brake is the
 * pedal the friction brakes get for the rest:
 *   friction_brake = brake · (1 − min(brake_power, P_avail) / brake_power)
 * (brake itself when nothing is asked, at rest). Bind the wheels' brake
 * inputs to it: the friction brakes take only what the machine cannot
 * (docs/energy.md, "Blended braking"). The comparison is at the power the
 * machine takes from its shaft; the driveline's mesh losses between it and
 * the road brake a little more on top.
 *
 * Net torque T = T_drive + T_regen.
 *
 * Torque command (command = "torque"): the pedals are ignored and the input
 * `torque` (N·m, either sign) is the torque at `out`, in all four
 * quadrants, within the envelope: up to T_avail(w) (above) where it drives
 * (T·ω > 0, or at rest) and up to min(max_regen_torque, P_regen / w) where
 * it brakes (T·ω < 0), without the regen fade: a generator on an engine's
 * shaft, a power split's motor-generators, a supervisory controller's
 * torque. The brake pedal's regeneration (regen_fraction · brake, as
 * above) is added to the command; a throttle cut (>= 0.5) removes the
 * command, as it removes the drive torque of the pedals.
 *
 * Electrical side (docs/energy.md). The electrical power the machine takes
 * from its bus, from the mechanical power P = T·ω:
 *   P_e = P / η   while driving (P >= 0),   P_e = P · η   while generating,
 * η one of: `efficiency` (a number), `efficiency_map` η(rpm, T_d) over
 * |rpm| and the torque in the direction of rotation T_d = T·sign(ω)
 * (positive driving, negative generating: the four quadrants, a map
 * symmetric in the direction of rotation), or `efficiency_power`
 * η(|P| / P_max) over the fraction of the drive power limit (FASTSim's
 * mc_eff_map over mc_pwr_out_perc); or `loss_map`: P_e = P + L(rpm, T_d)
 * with the losses L in W (which, unlike η, can charge a loss at stall).
 * With none, η = 1. Two continuous states: the electrical energy taken
 * from the bus E_e = ∫ P_e dt and the heat Q = ∫ (P_e − P) dt, so the
 * ledger W = E_e − Q closes to round-off; `electric_power` is the signal a
 * bus or a battery binds (drawn at every RK4 stage, exactly).
 *
 * Electrical limits: the inputs discharge_limit and charge_limit (W,
 * default none) bound the electrical power taken from and delivered to the
 * bus: the torque is scaled down until P_e is within them (bind them to a
 * battery's signals of the same names, which follow its state of charge
 * and limits, so that the machine stops regenerating into a full battery).
 *
 * Signals: omega, rpm (settable initial speed), torque, power = T·ω
 * (mechanical shaft power; negative while regenerating), electric_power,
 * efficiency (P/P_e driving, P_e/P generating, 1 at no power),
 * electric_energy, heat, regen_available (P_avail), friction_brake. */
#include <drivegraph/block.h>
#include <float.h>
#include <math.h>
#include <string.h>

enum { PORT_OUT, PORT_IN };
enum {
  SIG_OMEGA,
  SIG_RPM,
  SIG_TORQUE,
  SIG_POWER,
  SIG_ELECTRIC_POWER,
  SIG_EFFICIENCY,
  SIG_ELECTRIC_ENERGY,
  SIG_HEAT,
  SIG_REGEN_AVAILABLE,
  SIG_FRICTION_BRAKE
};
enum { ST_ELECTRIC, ST_HEAT };
enum { COMMAND_PEDALS, COMMAND_TORQUE };

/* Share of max_rpm over which the drive torque fades out. */
#define MAX_RPM_FADE 0.05

typedef struct motor_params {
  double inertia;
  double max_torque;
  double max_power;
  bool has_max_power;
  double base_rpm;
  bool has_base_rpm;
  double max_rpm;
  double regen_fraction;
  double max_regen_torque;
  bool has_regen_torque;
  double max_regen_power;
  bool has_regen_power;
  double regen_fade_rpm;
  bool reverse;
  int command;
  double efficiency;
  bool has_efficiency;
  dg_table2d efficiency_map, loss_map;
  dg_table1d efficiency_power;
} motor_params;

#define MOTOR_NUM_INPUTS 8

typedef struct motor_data {
  double power;       /* drive power limit (W), INFINITY for none */
  double regen_torque;
  double regen_power; /* INFINITY for none */
  double w_max;       /* rad/s */
  double w_fade;      /* regen fade speed, rad/s */
  /* A memo of the last point's clipped torque and regeneration power, with
   * everything they were computed from (speed, every input, the
   * parameters' epoch: they may be tuned between steps): the bindings read
   * several of the machine's signals at each stage (torque, electric power,
   * regen_available, friction_brake), each needing the clipped torque (a
   * secant on the efficiency map). NaN: not computed for this key. */
  bool memo_valid;
  double memo_w, memo_in[MOTOR_NUM_INPUTS];
  unsigned long memo_params; /* the parameters' epoch (dg_ctx_params_epoch) */
  double memo_torque, memo_regen;
} motor_data;

static const dg_port_def motor_ports[] = {
    {.name = "out", .dir = DG_PORT_OUT, .domain = DG_ROTATIONAL, .optional = true,
     .doc = "rotor shaft (the motor's inertia); may be left open for a generator at the end of a "
            "source's shaft ([\"engine.out\", \"gen.in\"])"},
    {.name = "in", .dir = DG_PORT_IN, .domain = DG_ROTATIONAL, .optional = true,
     .doc = "the same shaft upstream, to sit in-line (a P2 motor between clutch and gearbox, "
            "another source behind it); turns with out"},
    {0},
};

static const char *const command_names[] = {"pedals", "torque", NULL};

static const dg_param_def motor_params_table[] = {
    DG_NUMBER(motor_params, inertia, .unit = "kg*m^2", .required = true,
              .flags = DG_P_MIN_EXCL | DG_P_INERTIA, .doc = "rotor inertia"),
    DG_NUMBER(motor_params, max_torque, .unit = "N*m", .required = true,
              .flags = DG_P_MIN_EXCL | DG_P_DYNAMICS,
              .doc = "drive torque limit below the base speed"),
    {.key = "max_power", .kind = DG_PARAM_NUMBER, .offset = offsetof(motor_params, max_power),
     .unit = "W", .doc = "drive power limit above the base speed (or give base_rpm)",
     .flags = DG_P_MIN_EXCL | DG_P_DYNAMICS, .min = 0,
     .present = DG_PRESENT(motor_params, has_max_power)},
    {.key = "base_rpm", .kind = DG_PARAM_NUMBER, .offset = offsetof(motor_params, base_rpm),
     .unit = "rpm", .doc = "base speed: power limit = max_torque * base speed (or give max_power)",
     .flags = DG_P_MIN_EXCL | DG_P_DYNAMICS, .min = 0,
     .present = DG_PRESENT(motor_params, has_base_rpm)},
    DG_NUMBER(motor_params, max_rpm, .unit = "rpm", .required = true,
              .flags = DG_P_MIN_EXCL | DG_P_DYNAMICS,
              .doc = "drive torque fades to 0 over the last 5 % up to this speed"),
    DG_NUMBER(motor_params, regen_fraction, .unit = "", .flags = DG_P_MIN | DG_P_DYNAMICS,
              .doc = "regen demand per unit brake, as a share of the regen limit (saturates at 1)"),
    {.key = "max_regen_torque", .kind = DG_PARAM_NUMBER,
     .offset = offsetof(motor_params, max_regen_torque), .unit = "N*m",
     .doc = "regenerative torque limit (default max_torque)",
     .flags = DG_P_MIN_EXCL | DG_P_DYNAMICS, .min = 0,
     .present = DG_PRESENT(motor_params, has_regen_torque)},
    {.key = "max_regen_power", .kind = DG_PARAM_NUMBER,
     .offset = offsetof(motor_params, max_regen_power), .unit = "W",
     .doc = "regenerative power limit (default the drive power limit)",
     .flags = DG_P_MIN_EXCL | DG_P_DYNAMICS, .min = 0,
     .present = DG_PRESENT(motor_params, has_regen_power)},
    DG_NUMBER(motor_params, regen_fade_rpm, .unit = "rpm", .def = 100.0,
              .flags = DG_P_MIN_EXCL | DG_P_DYNAMICS,
              .doc = "regen torque fades linearly to 0 below this speed"),
    {.key = "reverse", .kind = DG_PARAM_BOOL, .offset = offsetof(motor_params, reverse),
     .unit = "", .doc = "gear input -1 reverses the drive torque", .def = 1,
     .flags = DG_P_DYNAMICS},
    {.key = "command", .kind = DG_PARAM_ENUM, .offset = offsetof(motor_params, command),
     .unit = "",
     .doc = "pedals: throttle drives, brake and negative throttle regenerate; torque: the torque "
            "input (N*m, four quadrants, within the envelope)",
     .choices = command_names, .def = COMMAND_PEDALS, .flags = DG_P_DYNAMICS},
    {.key = "efficiency", .kind = DG_PARAM_NUMBER, .offset = offsetof(motor_params, efficiency),
     .unit = "",
     .doc = "constant efficiency: electrical power = P / efficiency driving, P * efficiency "
            "generating (or give efficiency_map, efficiency_power or loss_map; default 1)",
     .flags = DG_P_MIN_EXCL | DG_P_MAX | DG_P_DYNAMICS, .min = 0, .max = 1,
     .present = DG_PRESENT(motor_params, has_efficiency)},
    {.key = "efficiency_map", .kind = DG_PARAM_TABLE2D,
     .offset = offsetof(motor_params, efficiency_map), .unit = "",
     .doc = "efficiency over |rpm| and the torque in the direction of rotation (negative rows: "
            "generating), one row per torque breakpoint",
     .axis = {"rpm", "torque", "efficiency"},
     .flags = DG_P_MIN_EXCL | DG_P_MAX | DG_P_DYNAMICS, .min = 0, .max = 1},
    {.key = "efficiency_power", .kind = DG_PARAM_TABLE1D,
     .offset = offsetof(motor_params, efficiency_power), .unit = "",
     .doc = "efficiency over |P| / max_power (FASTSim's mc_eff_map over mc_pwr_out_perc), both "
            "directions",
     .axis = {"power_fraction", "efficiency"},
     .flags = DG_P_MIN_EXCL | DG_P_MAX | DG_P_DYNAMICS, .min = 0, .max = 1},
    {.key = "loss_map", .kind = DG_PARAM_TABLE2D, .offset = offsetof(motor_params, loss_map),
     .unit = "W",
     .doc = "losses over |rpm| and the torque in the direction of rotation: electrical power = "
            "P + loss",
     .axis = {"rpm", "torque", "loss"}, .flags = DG_P_MIN | DG_P_DYNAMICS, .min = 0},
    {0},
};

static const dg_signal_def motor_signals[] = {
    {.name = "omega", .unit = "rad/s", .doc = "shaft speed", .port = PORT_OUT, .scale = 1},
    {.name = "rpm", .unit = "rpm", .doc = "shaft speed", .port = PORT_OUT,
     .scale = DG_RPM_PER_RAD_S},
    {.name = "torque", .unit = "N*m", .doc = "torque applied at out (negative: regenerating)",
     .port = DG_SIGNAL_HOOK, .flags = DG_SIGNAL_FEEDTHROUGH},
    {.name = "power", .unit = "W", .doc = "shaft power torque * omega (negative: regenerating)",
     .port = DG_SIGNAL_HOOK, .flags = DG_SIGNAL_FEEDTHROUGH},
    {.name = "electric_power", .unit = "W",
     .doc = "electrical power taken from the bus (negative: generating); bind it to a bus or "
            "battery",
     .port = DG_SIGNAL_HOOK, .flags = DG_SIGNAL_FEEDTHROUGH | DG_SIGNAL_ELECTRIC_POWER},
    {.name = "efficiency", .unit = "", .doc = "efficiency at this point (1 at no power)",
     .port = DG_SIGNAL_HOOK, .flags = DG_SIGNAL_FEEDTHROUGH},
    {.name = "electric_energy", .unit = "J",
     .doc = "electrical energy taken from the bus since the start (a state; ledger)",
     .port = DG_SIGNAL_HOOK, .flags = DG_SIGNAL_ENERGY_ELECTRIC},
    {.name = "heat", .unit = "J", .doc = "machine losses since the start (a state; ledger)",
     .port = DG_SIGNAL_HOOK, .flags = DG_SIGNAL_ENERGY_HEAT},
    {.name = "regen_available", .unit = "W",
     .doc = "shaft power the machine could regenerate now (envelope, fade and charge_limit)",
     .port = DG_SIGNAL_HOOK, .flags = DG_SIGNAL_FEEDTHROUGH},
    {.name = "friction_brake", .unit = "",
     .doc = "series blending: the brake pedal left for the friction brakes after the "
            "regeneration (the brake input itself without brake_power)",
     .port = DG_SIGNAL_HOOK, .flags = DG_SIGNAL_FEEDTHROUGH},
    {0},
};

enum {
  IN_THROTTLE,
  IN_BRAKE,
  IN_GEAR,
  IN_THROTTLE_CUT,
  IN_TORQUE,
  IN_DISCHARGE,
  IN_CHARGE,
  IN_BRAKE_POWER
};
_Static_assert(IN_BRAKE_POWER + 1 == MOTOR_NUM_INPUTS, "the memo keys every input");
static const dg_input_def motor_inputs[] = {
    {.name = "throttle", .unit = "",
     .doc = "torque command -1..1: positive drives, negative regenerates", .source = "throttle",
     .flags = DG_P_MIN | DG_P_MAX, .min = -1, .max = 1},
    {.name = "brake", .unit = "", .doc = "brake pedal 0..1 (regen_fraction of it regenerates)",
     .source = "brake", .flags = DG_P_MIN | DG_P_MAX, .min = 0, .max = 1},
    {.name = "gear", .unit = "", .doc = "selected gear: -1 reverses the drive torque (with reverse)",
     .source = "gear", .flags = DG_INPUT_INTEGER},
    {.name = "throttle_cut", .unit = "",
     .doc = "drive cut (>= 0.5 removes the drive torque): by default the throttle_cut signal of "
            "the gearbox this motor drives",
     .source = ">throttle_cut", .flags = DG_INPUT_BOOL},
    {.name = "torque", .unit = "N*m",
     .doc = "torque command (command \"torque\"), either sign, clamped to the envelope",
     .source = "", .def = 0.0},
    {.name = "discharge_limit", .unit = "W",
     .doc = "largest electrical power to take from the bus (a battery's discharge_limit)",
     .source = "", .def = DBL_MAX, .flags = DG_P_MIN, .min = 0},
    {.name = "charge_limit", .unit = "W",
     .doc = "largest electrical power to deliver to the bus (a battery's charge_limit)",
     .source = "", .def = DBL_MAX, .flags = DG_P_MIN, .min = 0},
    {.name = "brake_power", .unit = "W",
     .doc = "series blending: the braking power asked for at the road (a driver's brake_power); "
            "regenerated first in place of regen_fraction * brake (negative, the default: none)",
     .source = "", .def = -1.0},
    {0},
};

static void motor_check(const void *params, dg_check *chk) {
  const motor_params *p = params;
  if (p->has_max_power && p->has_base_rpm)
    dg_check_error(chk, "", "give only one of max_power, base_rpm");
  else if (p->has_base_rpm && !(p->base_rpm < p->max_rpm))
    dg_check_error(chk, "base_rpm", "must be < max_rpm (%g) (got %g)", p->max_rpm, p->base_rpm);
  int forms = p->has_efficiency + (p->efficiency_map.nx > 0) + (p->efficiency_power.n > 0) +
              (p->loss_map.nx > 0);
  if (forms > 1)
    dg_check_error(chk, "", "give only one of efficiency, efficiency_map, efficiency_power, loss_map");
  if (p->efficiency_power.n > 0 && !p->has_max_power && !p->has_base_rpm)
    dg_check_error(chk, "efficiency_power",
                   "needs the drive power limit (max_power or base_rpm) its fractions refer to");
}

static int motor_init(dg_block *self, dg_init *init) {
  const motor_params *p = self->params;
  motor_data *d = self->data;
  (void)init;
  d->power = p->has_max_power  ? p->max_power
             : p->has_base_rpm ? p->max_torque * p->base_rpm / DG_RPM_PER_RAD_S
                               : INFINITY;
  d->regen_torque = p->has_regen_torque ? p->max_regen_torque : p->max_torque;
  d->regen_power = p->has_regen_power ? p->max_regen_power : d->power;
  d->w_max = p->max_rpm / DG_RPM_PER_RAD_S;
  d->w_fade = p->regen_fade_rpm / DG_RPM_PER_RAD_S;
  return 0;
}

static double clamp(double v, double lo, double hi) { return v < lo ? lo : v > hi ? hi : v; }

/* min(torque, power / w) without dividing by zero */
static double limit(double torque, double power, double w) {
  return power < torque * w ? power / w : torque;
}

static double motor_electric(const dg_block *self, double w, double t);

/* The memo of the point (w, the inputs, the parameters): kept when it is
 * the memo's, else started afresh (nothing computed). */
static motor_data *motor_memo(const dg_block *self, const dg_ctx *ctx, double w) {
  motor_data *d = self->data;
  unsigned long epoch = dg_ctx_params_epoch(ctx);
  double in[MOTOR_NUM_INPUTS];
  bool same = d->memo_valid && d->memo_w == w;
  for (int k = 0; k < MOTOR_NUM_INPUTS; k++) {
    in[k] = dg_block_input(ctx, self, k);
    same = same && in[k] == d->memo_in[k];
  }
  if (same && d->memo_params == epoch)
    return d;
  d->memo_valid = true;
  d->memo_w = w;
  memcpy(d->memo_in, in, sizeof in);
  d->memo_params = epoch;
  d->memo_torque = NAN;
  d->memo_regen = NAN;
  return d;
}


/* t scaled down where its electrical power would pass the inputs
 * discharge_limit / charge_limit (a battery's, read from its state: no
 * loop). P_e is monotone in T at a given speed, and P_e/T nearly constant:
 * a first step T ← T · limit / P_e(T) (exact for a constant efficiency),
 * then secant steps (an efficiency map's bilinear pieces: to round-off in
 * a few). */
static double motor_clip(const dg_block *self, const dg_ctx *ctx, double w, double t) {
  double dl = dg_block_input(ctx, self, IN_DISCHARGE), cl = dg_block_input(ctx, self, IN_CHARGE);
  dl = dl > 0.0 ? dl : 0.0;
  cl = cl > 0.0 ? cl : 0.0;
  if (t == 0.0 || w == 0.0)
    return t;
  double pe = motor_electric(self, w, t);
  double lim = pe > dl ? dl : (pe < -cl ? -cl : pe);
  if (pe == lim)
    return t;
  if (lim == 0.0)
    return 0.0;
  /* a first step by proportion, then the secant on P_e(T) − lim */
  double t0 = t, f0 = pe - lim;
  t *= lim / pe;
  pe = motor_electric(self, w, t);
  for (int k = 0; k < 6 && pe != lim; k++) {
    double f = pe - lim, dt = f - f0 != 0.0 ? f * (t - t0) / (f - f0) : 0.0;
    if (dt == 0.0 || !isfinite(dt))
      break;
    t0 = t;
    f0 = f;
    t -= dt;
    pe = motor_electric(self, w, t);
  }
  return t;
}

/* The regen envelope's torque magnitude at speed w, with its fade. */
static double motor_regen_envelope(const motor_data *d, double w) {
  return limit(d->regen_torque, d->regen_power, fabs(w)) * clamp(fabs(w) / d->w_fade, 0.0, 1.0);
}

/* P_avail: the shaft power the machine can regenerate now (>= 0). */
static double motor_regen_available(const dg_block *self, const dg_ctx *ctx, double w) {
  motor_data *d = motor_memo(self, ctx, w);
  if (d->memo_regen != d->memo_regen) {
    double t = -motor_regen_envelope(d, w) * (w < 0.0 ? -1.0 : 1.0);
    double p = -motor_clip(self, ctx, w, t) * w;
    d->memo_regen = p > 0.0 ? p : 0.0;
  }
  return d->memo_regen;
}

/* Series blending: the power regenerated of brake_power (>= 0), or -1
 * without series blending. */
static double motor_series_regen(const dg_block *self, const dg_ctx *ctx, double w) {
  double demand = dg_block_input(ctx, self, IN_BRAKE_POWER);
  if (!(demand >= 0.0))
    return -1.0;
  double avail = motor_regen_available(self, ctx, w);
  return demand < avail ? demand : avail;
}

/* The brake pedal's regenerative torque (opposing rotation): series
 * (brake_power) or the share regen_fraction · brake of the envelope, with
 * a negative throttle's share (`neg`, >= 0) in the pedals' mode. */
static double motor_brake_torque(const dg_block *self, const dg_ctx *ctx, double w, double neg) {
  const motor_params *p = self->params;
  const motor_data *d = self->data;
  double series = motor_series_regen(self, ctx, w);
  double aw = fabs(w);
  double t = 0.0;
  if (series >= 0.0) {
    if (series > 0.0 && aw > 0.0)
      t = -series / aw * (w < 0.0 ? -1.0 : 1.0);
    if (neg > 0.0)
      t -= neg * limit(d->regen_torque, d->regen_power, aw) * clamp(w / d->w_fade, -1.0, 1.0);
    return t;
  }
  double r = p->regen_fraction * dg_block_input(ctx, self, IN_BRAKE);
  r = clamp(r > neg ? r : neg, 0.0, 1.0);
  if (r > 0.0)
    t = -r * limit(d->regen_torque, d->regen_power, aw) * clamp(w / d->w_fade, -1.0, 1.0);
  return t;
}

/* The torque the command asks for, within the mechanical envelope. */
static double motor_command(const dg_block *self, const dg_ctx *ctx, double w) {
  const motor_params *p = self->params;
  const motor_data *d = self->data;
  double aw = fabs(w);
  if (p->command == COMMAND_TORQUE) {
    double cmd = dg_block_input(ctx, self, IN_TORQUE);
    if (!(cmd == cmd) || dg_block_input(ctx, self, IN_THROTTLE_CUT) >= 0.5)
      cmd = 0.0; /* a gearbox's shift cuts the command as it cuts a throttle */
    cmd += motor_brake_torque(self, ctx, w, 0.0); /* the brake pedal's, as with the pedals */
    double lim;
    if (cmd * w < 0.0) /* braking the rotation: generating */
      lim = limit(d->regen_torque, d->regen_power, aw);
    else
      lim = limit(p->max_torque, d->power, aw) *
            clamp((d->w_max - aw) / (MAX_RPM_FADE * d->w_max), 0.0, 1.0);
    return clamp(cmd, -lim, lim);
  }
  double throttle = dg_block_input(ctx, self, IN_THROTTLE);
  if (dg_block_input(ctx, self, IN_THROTTLE_CUT) >= 0.5)
    throttle = 0.0;
  double t = 0.0;
  double th = clamp(throttle, 0.0, 1.0);
  if (th > 0.0) {
    double avail = limit(p->max_torque, d->power, aw) *
                   clamp((d->w_max - aw) / (MAX_RPM_FADE * d->w_max), 0.0, 1.0);
    double dir = p->reverse && dg_block_input(ctx, self, IN_GEAR) < -0.5 ? -1.0 : 1.0;
    t += dir * th * avail;
  }
  return t + motor_brake_torque(self, ctx, w, clamp(-throttle, 0.0, 1.0));
}

/* The torque at `out`: the command within the electrical limits. */
static double motor_torque(const dg_block *self, const dg_ctx *ctx, double w) {
  motor_data *d = motor_memo(self, ctx, w);
  if (d->memo_torque != d->memo_torque)
    d->memo_torque = motor_clip(self, ctx, w, motor_command(self, ctx, w));
  return d->memo_torque;
}

/* Series blending's friction pedal: the brake the machine leaves. */
static double motor_friction_brake(const dg_block *self, const dg_ctx *ctx, double w) {
  double brake = dg_clamp01(dg_block_input(ctx, self, IN_BRAKE));
  double demand = dg_block_input(ctx, self, IN_BRAKE_POWER);
  if (!(demand > 0.0))
    return brake;
  double regen = motor_series_regen(self, ctx, w);
  return dg_clamp01(brake * (1.0 - regen / demand));
}

static void motor_state_upstream(dg_block *self, dg_topo *topo) {
  const motor_params *p = self->params;
  /* one shaft: `in` (when connected, a shaft upstream) turns with `out` */
  dg_topo_ratio(topo, self, PORT_IN, PORT_OUT, 1.0, 1.0);
  dg_topo_inertia(topo, self, PORT_OUT, p->inertia);
}

/* Electrical power taken from the bus for torque t at speed w. */
static double motor_electric(const dg_block *self, double w, double t) {
  const motor_params *p = self->params;
  const motor_data *d = self->data;
  double pm = t * w;
  double rpm = fabs(w) * DG_RPM_PER_RAD_S, td = w < 0.0 ? -t : t;
  if (p->loss_map.nx > 0)
    return pm + dg_table2d_eval(&p->loss_map, rpm, td);
  double eta = 1.0;
  if (p->has_efficiency)
    eta = p->efficiency;
  else if (p->efficiency_map.nx > 0)
    eta = dg_table2d_eval(&p->efficiency_map, rpm, td);
  else if (p->efficiency_power.n > 0)
    eta = dg_table1d_eval(&p->efficiency_power, fabs(pm) / d->power);
  return pm >= 0.0 ? pm / eta : pm * eta;
}

static void motor_torque_downstream(dg_block *self, dg_ctx *ctx) {
  double w = dg_port_speed(ctx, self, PORT_OUT);
  double t = motor_torque(self, ctx, w);
  dg_port_add_torque(ctx, self, PORT_OUT, t);
  double pe = motor_electric(self, w, t);
  double *rate = dg_block_state_rate(ctx, self);
  rate[ST_ELECTRIC] = pe;
  rate[ST_HEAT] = pe - t * w;
}

static double motor_signal(const dg_block *self, const dg_ctx *ctx, int index) {
  double w = dg_port_speed(ctx, self, PORT_OUT);
  const double *st = dg_block_state(ctx, self);
  if (index == SIG_ELECTRIC_ENERGY)
    return st[ST_ELECTRIC];
  if (index == SIG_HEAT)
    return st[ST_HEAT];
  if (index == SIG_REGEN_AVAILABLE)
    return motor_regen_available(self, ctx, w);
  if (index == SIG_FRICTION_BRAKE)
    return motor_friction_brake(self, ctx, w);
  double t = motor_torque(self, ctx, w);
  switch (index) {
  case SIG_TORQUE:
    return t;
  case SIG_POWER:
    return t * w;
  case SIG_ELECTRIC_POWER:
    return motor_electric(self, w, t);
  case SIG_EFFICIENCY: {
    double pm = t * w, pe = motor_electric(self, w, t);
    if (pm == 0.0 || pe == 0.0)
      return pm == pe ? 1.0 : 0.0;
    return pm > 0.0 ? pm / pe : pe / pm;
  }
  default:
    return NAN;
  }
}

const dg_block_class dg_block_motor = {
    .abi = DG_BLOCK_ABI,
    .type = "motor",
    .doc = "Electric motor: constant torque to the base speed, constant power above, fade to 0 "
           "at max_rpm; regenerative braking from the brake pedal or a negative throttle; "
           "reverse on gear -1; or a four-quadrant torque command (a generator, a "
           "motor-generator); electrical power through an efficiency, an efficiency map or a "
           "loss map, for a bus or a battery (the energy ledger).",
    .ports = motor_ports,
    .params = motor_params_table,
    .params_size = sizeof(motor_params),
    .signals = motor_signals,
    .inputs = motor_inputs,
    .data_size = sizeof(motor_data),
    .num_states = 2, /* electrical energy taken, heat (J) */
    .check = motor_check,
    .init = motor_init,
    .state_upstream = motor_state_upstream,
    .torque_downstream = motor_torque_downstream,
    .signal = motor_signal,
};
