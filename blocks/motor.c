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
 * Net torque T = T_drive + T_regen. Signals: omega, rpm (settable initial
 * speed), torque, power = T·ω (mechanical shaft power; negative while
 * regenerating). */
#include <drivegraph/block.h>
#include <math.h>

enum { PORT_OUT, PORT_IN };
enum { SIG_OMEGA, SIG_RPM, SIG_TORQUE, SIG_POWER };

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
} motor_params;

typedef struct motor_data {
  double power;       /* drive power limit (W), INFINITY for none */
  double regen_torque;
  double regen_power; /* INFINITY for none */
  double w_max;       /* rad/s */
  double w_fade;      /* regen fade speed, rad/s */
} motor_data;

static const dg_port_def motor_ports[] = {
    {.name = "out", .dir = DG_PORT_OUT, .domain = DG_ROTATIONAL,
     .doc = "rotor shaft (the motor's inertia)"},
    {.name = "in", .dir = DG_PORT_IN, .domain = DG_ROTATIONAL, .optional = true,
     .doc = "the same shaft upstream, to sit in-line (a P2 motor between clutch and gearbox, "
            "another source behind it); turns with out"},
    {0},
};

static const dg_param_def motor_params_table[] = {
    DG_PARAM_NUM_REQ(motor_params, inertia, "inertia", "kg*m^2", DG_P_MIN_EXCL | DG_P_INERTIA, 0, 0,
                     "rotor inertia"),
    DG_PARAM_NUM_REQ(motor_params, max_torque, "max_torque", "N*m", DG_P_MIN_EXCL | DG_P_DYNAMICS,
                     0, 0, "drive torque limit below the base speed"),
    {.key = "max_power", .kind = DG_PARAM_NUMBER, .offset = offsetof(motor_params, max_power),
     .unit = "W", .doc = "drive power limit above the base speed (or give base_rpm)",
     .flags = DG_P_MIN_EXCL | DG_P_DYNAMICS, .min = 0,
     .present = DG_PRESENT(motor_params, has_max_power)},
    {.key = "base_rpm", .kind = DG_PARAM_NUMBER, .offset = offsetof(motor_params, base_rpm),
     .unit = "rpm", .doc = "base speed: power limit = max_torque * base speed (or give max_power)",
     .flags = DG_P_MIN_EXCL | DG_P_DYNAMICS, .min = 0,
     .present = DG_PRESENT(motor_params, has_base_rpm)},
    DG_PARAM_NUM_REQ(motor_params, max_rpm, "max_rpm", "rpm", DG_P_MIN_EXCL | DG_P_DYNAMICS, 0, 0,
                     "drive torque fades to 0 over the last 5 % up to this speed"),
    DG_PARAM_NUM(motor_params, regen_fraction, "regen_fraction", "", 0.0,
                 DG_P_MIN | DG_P_DYNAMICS, 0, 0,
                 "regen demand per unit brake, as a share of the regen limit (saturates at 1)"),
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
    DG_PARAM_NUM(motor_params, regen_fade_rpm, "regen_fade_rpm", "rpm", 100.0,
                 DG_P_MIN_EXCL | DG_P_DYNAMICS, 0, 0,
                 "regen torque fades linearly to 0 below this speed"),
    {.key = "reverse", .kind = DG_PARAM_BOOL, .offset = offsetof(motor_params, reverse),
     .unit = "", .doc = "gear input -1 reverses the drive torque", .def = 1,
     .flags = DG_P_DYNAMICS},
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
    {0},
};

enum { IN_THROTTLE, IN_BRAKE, IN_GEAR, IN_THROTTLE_CUT };
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
    {0},
};

static void motor_check(const void *params, dg_check *chk) {
  const motor_params *p = params;
  if (p->has_max_power && p->has_base_rpm)
    dg_check_error(chk, "", "give only one of max_power, base_rpm");
  else if (p->has_base_rpm && !(p->base_rpm < p->max_rpm))
    dg_check_error(chk, "base_rpm", "must be < max_rpm (%g) (got %g)", p->max_rpm, p->base_rpm);
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

static double motor_torque(const dg_block *self, const dg_ctx *ctx, double w) {
  const motor_params *p = self->params;
  const motor_data *d = self->data;
  double aw = fabs(w);
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
  double r = p->regen_fraction * dg_block_input(ctx, self, IN_BRAKE);
  r = clamp(r > -throttle ? r : -throttle, 0.0, 1.0);
  if (r > 0.0)
    t -= r * limit(d->regen_torque, d->regen_power, aw) * clamp(w / d->w_fade, -1.0, 1.0);
  return t;
}

static void motor_state_upstream(dg_block *self, dg_topo *topo) {
  const motor_params *p = self->params;
  /* one shaft: `in` (when connected, a shaft upstream) turns with `out` */
  dg_topo_ratio(topo, self, PORT_IN, PORT_OUT, 1.0, 1.0);
  dg_topo_inertia(topo, self, PORT_OUT, p->inertia);
}

static void motor_torque_downstream(dg_block *self, dg_ctx *ctx) {
  double w = dg_port_speed(ctx, self, PORT_OUT);
  dg_port_add_torque(ctx, self, PORT_OUT, motor_torque(self, ctx, w));
}

static double motor_signal(const dg_block *self, const dg_ctx *ctx, int index) {
  double w = dg_port_speed(ctx, self, PORT_OUT);
  double t = motor_torque(self, ctx, w);
  return index == SIG_TORQUE ? t : t * w;
}

const dg_block_class dg_block_motor = {
    .abi = DG_BLOCK_ABI,
    .type = "motor",
    .doc = "Electric motor: constant torque to the base speed, constant power above, fade to 0 "
           "at max_rpm; regenerative braking from the brake pedal or a negative throttle; "
           "reverse on gear -1.",
    .ports = motor_ports,
    .params = motor_params_table,
    .params_size = sizeof(motor_params),
    .signals = motor_signals,
    .inputs = motor_inputs,
    .data_size = sizeof(motor_data),
    .check = motor_check,
    .init = motor_init,
    .state_upstream = motor_state_upstream,
    .torque_downstream = motor_torque_downstream,
    .signal = motor_signal,
};
