/* vehicle — the car body: a point mass moving along the road, with axle
 * loads, road load and grade.
 *
 * Ports (all `in`, linear, optional): the ground ports front_left,
 * front_right, rear_left, rear_right (four-wheel models) and front, rear
 * (single-track models: the port carries the whole axle). Connect each
 * wheel's `ground` to one of them, and use either the corner ports or the
 * single-track port of an axle, not both (both would be handed the load).
 * The internal port `mass` is the body's DOF with the inertia `mass`; every
 * ground port moves with it (ratio 1). Speed v > 0 is forward travel.
 *
 * Forces on the body (at `mass`), θ = atan(grade), grade = custom input
 * "grade" (rise/run, 0.2 = 20 %, positive uphill):
 *   grade:      −m·g·sin θ
 *   road load:  −(F_c·s + f1·v + f2·v·|v|)
 *     physical:   F_c = rolling_resistance·m·g·cos θ, f1 = 0,
 *                 f2 = ½·air_density·cda
 *     road_load:  F_c = f0, f1, f2 (coast-down coefficients)
 * The Coulomb part F_c is stick–slip, so road load never pushes a car
 * that is at rest: while moving, s is the direction of travel frozen at
 * the start of each step (a smooth RK4 right-hand side); when v reaches or
 * crosses zero during a step, or is exactly at rest, and F_c > 0, the body
 * stops: a one-port tie v = 0 on `mass` whose multiplier λ is the force
 * needed to hold it. It moves off when |λ| > F_c (it then starts in the
 * direction it was pushed, −sign λ, and is not stopped again while at rest
 * until F_c exceeds the force that moved it). Wheel brakes hold the car
 * through their own ties (see wheel.c).
 *
 * Normal loads, published in pre_step on every ground port's node with
 * dg_port_set_normal_load, for the wheels' tyres (N). With L = wheelbase,
 * a_f = cg_to_front, b = L − a_f, h = cg_height, W = m·g·cos θ:
 *   F_front = (W·b − m·(a + g·sin θ)·h) / L,  F_rear = W − F_front
 * (longitudinal transfer m·a·h/L, plus the grade's share: facing uphill
 * the rear axle carries more). Aerodynamic drag is taken to act at
 * contact height (no pitch moment from it) and there is no aero lift.
 * Lateral transfer from the custom input "lateral_accel" a_y (m/s²,
 * positive toward the left: a left-hand turn, the load moves to the right,
 * outer, wheels), shared between the axles in proportion to their static
 * load:
 *   ΔF_front = m·a_y·h·(b/L) / track_front,  ΔF_rear = m·a_y·h·(a_f/L) / track_rear
 *   left = axle/2 − ΔF, right = axle/2 + ΔF;  front/rear ports get the axle.
 * Every load is clamped at 0 (a lifted wheel); the load it cannot take is
 * not moved elsewhere.
 *
 * The acceleration a is the previous step's (Δv/dt, stored in post_step).
 * Load transfer is an algebraic loop: the loads set the tyre forces, the
 * tyre forces set a, and a sets the loads. Using the last step's a breaks
 * the loop with a lag of one step (an error of order dt·da/dt) instead of
 * iterating every step to a fixed point; with constant acceleration the
 * loads are exact from the second step on.
 *
 * Also: the signal "speed" (m/s) is what a gearbox's input vehicle_speed
 * follows by default; the position x (m) is a continuous
 * state integrated with the speeds, dx/dt = v; so are the road load's
 * energies, the work each part of it took from the body (J, for the
 * energy reports of drive cycles, docs/energy.md):
 *   drag_energy'    = f2·v·|v|·v        (aerodynamic drag; physical: ½ρ·cda)
 *   rolling_energy' = (F_c·s + f1·v)·v  (rolling resistance, the Coulomb part)
 *   grade_energy'   = m·g·sin θ·v       (into height: negative downhill)
 * whose sum is minus the vehicle's own work in the energy audit.
 *
 * Modes (index 0 is the start mode): 0 moving, 1 stopped. */
#include <drivegraph/block.h>
#include <math.h>
#include <string.h>

enum { PORT_FL, PORT_FR, PORT_RL, PORT_RR, PORT_FRONT, PORT_REAR, PORT_MASS, NUM_GROUND = 6 };
enum { MODE_MOVING, MODE_STOPPED, NUM_MODES };
enum {
  SIG_SPEED,
  SIG_ACCEL,
  SIG_X,
  SIG_LOAD_FRONT,
  SIG_LOAD_REAR,
  SIG_ROAD_LOAD,
  SIG_DRAG_ENERGY,
  SIG_ROLLING_ENERGY,
  SIG_GRADE_ENERGY,
  SIG_STOPPED
};
enum { ST_X, ST_DRAG, ST_ROLLING, ST_GRADE, NUM_STATES };

/* Speeds this small are rest (m/s); see wheel.c. */
#define REST_TOL 1e-12
/* Shortest step segment the acceleration is measured over (s). */
#define ACCEL_MIN_DT 1e-6

typedef struct road_load_params {
  double f0, f1, f2;
} road_load_params;

typedef struct vehicle_params {
  double mass;
  double wheelbase;
  double cg_to_front;
  double cg_height;
  double track_front, track_rear;
  double cda;
  double air_density;
  double rolling_resistance;
  road_load_params road_load;
  double gravity;
  bool has_cg_to_front;
  bool has_cda;
  bool has_rolling_resistance;
  bool has_road_load;
  bool hold_at_rest;
} vehicle_params;

typedef struct vehicle_data {
  int mode;        /* MODE_* */
  int stop_tie;    /* v = 0 while stopped, or -1 */
  int dir;         /* frozen direction of travel for the Coulomb road load */
  double v_start;  /* speed at the start of the step */
  double accel;    /* Δv/dt of the last step */
  double sin_t, cos_t; /* grade angle of this step */
  double grade_at;     /* the grade input sin_t and cos_t are of (NaN: none yet) */
  double f_c;      /* Coulomb road load of this step (N) */
  double hold;     /* last multiplier of the stop tie (N) */
  bool have_hold;
  double inhibit;  /* force that moved the stopped car off (0: none) */
  double load_front, load_rear;
  double a_f;      /* cg_to_front resolved */
} vehicle_data;

static const char *const vehicle_mode_names[NUM_MODES] = {"moving", "stopped"};

static const dg_port_def vehicle_ports[] = {
    {.name = "front_left", .dir = DG_PORT_IN, .domain = DG_LINEAR, .optional = true,
     .doc = "front left wheel contact"},
    {.name = "front_right", .dir = DG_PORT_IN, .domain = DG_LINEAR, .optional = true,
     .doc = "front right wheel contact"},
    {.name = "rear_left", .dir = DG_PORT_IN, .domain = DG_LINEAR, .optional = true,
     .doc = "rear left wheel contact"},
    {.name = "rear_right", .dir = DG_PORT_IN, .domain = DG_LINEAR, .optional = true,
     .doc = "rear right wheel contact"},
    {.name = "front", .dir = DG_PORT_IN, .domain = DG_LINEAR, .optional = true,
     .doc = "front axle contact (single-track model: the whole axle load)"},
    {.name = "rear", .dir = DG_PORT_IN, .domain = DG_LINEAR, .optional = true,
     .doc = "rear axle contact (single-track model: the whole axle load)"},
    {.name = "mass", .dir = DG_PORT_INTERNAL, .domain = DG_LINEAR,
     .doc = "the body's mass (its speed is the vehicle speed)"},
    {0},
};

static const dg_param_def road_load_fields[] = {
    DG_NUMBER(road_load_params, f0, .unit = "N", .flags = DG_P_MIN | DG_P_DYNAMICS,
              .doc = "constant resistance (Coulomb: holds a car at rest up to f0)"),
    DG_NUMBER(road_load_params, f1, .unit = "N*s/m", .flags = DG_P_MIN | DG_P_DYNAMICS,
              .doc = "resistance per unit speed"),
    DG_NUMBER(road_load_params, f2, .unit = "N*s^2/m^2", .flags = DG_P_MIN | DG_P_DYNAMICS,
              .doc = "resistance per unit speed squared"),
    {0},
};

static const dg_param_def vehicle_params_table[] = {
    DG_NUMBER(vehicle_params, mass, .unit = "kg", .required = true,
              .flags = DG_P_MIN_EXCL | DG_P_INERTIA,
              .doc = "total mass (wheel inertias come from the wheels)"),
    DG_NUMBER(vehicle_params, wheelbase, .unit = "m", .def = 2.7,
              .flags = DG_P_MIN_EXCL | DG_P_DYNAMICS, .doc = "distance between the axles"),
    {.key = "cg_to_front", .kind = DG_PARAM_NUMBER, .offset = offsetof(vehicle_params, cg_to_front),
     .unit = "m", .doc = "distance from the front axle back to the centre of gravity "
                         "(default: half the wheelbase)",
     .flags = DG_P_MIN_EXCL | DG_P_DYNAMICS, .min = 0,
     .present = DG_PRESENT(vehicle_params, has_cg_to_front)},
    DG_NUMBER(vehicle_params, cg_height, .unit = "m", .def = 0.5, .flags = DG_P_MIN | DG_P_DYNAMICS,
              .doc = "height of the centre of gravity above the road"),
    DG_NUMBER(vehicle_params, track_front, .unit = "m", .def = 1.55,
              .flags = DG_P_MIN_EXCL | DG_P_DYNAMICS,
              .doc = "front track width (lateral load transfer)"),
    DG_NUMBER(vehicle_params, track_rear, .unit = "m", .def = 1.55,
              .flags = DG_P_MIN_EXCL | DG_P_DYNAMICS,
              .doc = "rear track width (lateral load transfer)"),
    {.key = "cda", .kind = DG_PARAM_NUMBER, .offset = offsetof(vehicle_params, cda),
     .unit = "m^2", .doc = "drag coefficient times frontal area", .flags = DG_P_MIN | DG_P_DYNAMICS,
     .min = 0, .present = DG_PRESENT(vehicle_params, has_cda)},
    DG_NUMBER(vehicle_params, air_density, .unit = "kg/m^3", .def = 1.225,
              .flags = DG_P_MIN_EXCL | DG_P_DYNAMICS, .doc = "air density for the drag"),
    {.key = "rolling_resistance", .kind = DG_PARAM_NUMBER,
     .offset = offsetof(vehicle_params, rolling_resistance), .unit = "",
     .doc = "rolling resistance coefficient (force = coefficient * m g cos(grade))",
     .flags = DG_P_MIN | DG_P_DYNAMICS, .min = 0,
     .present = DG_PRESENT(vehicle_params, has_rolling_resistance)},
    {.key = "road_load", .kind = DG_PARAM_OBJECT, .offset = offsetof(vehicle_params, road_load),
     .unit = "", .doc = "coast-down coefficients { \"f0\", \"f1\", \"f2\" }: F = f0 + f1 v + f2 "
                        "v^2, instead of cda and rolling_resistance",
     .fields = road_load_fields, .present = DG_PRESENT(vehicle_params, has_road_load),
     .flags = DG_P_DYNAMICS},
    DG_NUMBER(vehicle_params, gravity, .unit = "m/s^2", .def = 9.80665,
              .flags = DG_P_MIN_EXCL | DG_P_DYNAMICS, .doc = "gravitational acceleration"),
    {.key = "hold_at_rest", .kind = DG_PARAM_BOOL, .offset = offsetof(vehicle_params, hold_at_rest),
     .unit = "", .def = 1,
     .doc = "the road load's static friction holds the body at rest (false: never; a body whose "
            "speed a linear_speed_source prescribes)"},
    {0},
};

enum { IN_GRADE, IN_LATERAL_ACCEL };
static const dg_input_def vehicle_inputs[] = {
    {.name = "grade", .unit = "", .doc = "road grade (rise over run; positive uphill)",
     .source = "grade"},
    {.name = "lateral_accel", .unit = "m/s^2",
     .doc = "lateral acceleration for the lateral load transfer (positive: turning left)",
     .source = "lateral_accel"},
    {0},
};

static const dg_signal_def vehicle_signals[] = {
    {.name = "speed", .unit = "m/s", .doc = "vehicle speed", .port = PORT_MASS, .scale = 1},
    {.name = "accel", .unit = "m/s^2", .doc = "acceleration over the last step",
     .port = DG_SIGNAL_HOOK},
    {.name = "x", .unit = "m", .doc = "distance travelled (position along the road)",
     .port = DG_SIGNAL_HOOK},
    {.name = "load_front", .unit = "N", .doc = "front axle normal load", .port = DG_SIGNAL_HOOK},
    {.name = "load_rear", .unit = "N", .doc = "rear axle normal load", .port = DG_SIGNAL_HOOK},
    {.name = "road_load", .unit = "N",
     .doc = "road load force on the body (negative: resisting forward travel)",
     .port = DG_SIGNAL_HOOK},
    {.name = "drag_energy", .unit = "J",
     .doc = "work the aerodynamic drag (f2) has taken from the body since the start (a state)",
     .port = DG_SIGNAL_HOOK},
    {.name = "rolling_energy", .unit = "J",
     .doc = "work the rolling resistance (F_c, f1) has taken from the body (a state)",
     .port = DG_SIGNAL_HOOK},
    {.name = "grade_energy", .unit = "J",
     .doc = "work the grade has taken from the body, m g sin(grade) v (negative downhill; a state)",
     .port = DG_SIGNAL_HOOK},
    {.name = "stopped", .unit = "", .doc = "1 while the road load's static friction holds the "
                                           "body at rest, else 0",
     .port = DG_SIGNAL_HOOK, .flags = DG_SIGNAL_BOOL},
    {0},
};

static void vehicle_check(const void *params, dg_check *chk) {
  const vehicle_params *p = params;
  if (p->has_cg_to_front && !(p->cg_to_front < p->wheelbase))
    dg_check_error(chk, "cg_to_front", "must be < wheelbase (%g) (got %g)", p->wheelbase,
                   p->cg_to_front);
  if (p->has_road_load && (p->has_cda || p->has_rolling_resistance))
    dg_check_error(chk, "road_load",
                   "give either road_load or cda and rolling_resistance, not both");
}

static int vehicle_init(dg_block *self, dg_init *init) {
  const vehicle_params *p = self->params;
  vehicle_data *d = self->data;
  d->mode = MODE_MOVING;
  d->stop_tie = -1;
  d->a_f = p->has_cg_to_front ? p->cg_to_front : 0.5 * p->wheelbase;
  d->cos_t = 1.0;
  d->grade_at = NAN;
  (void)init;
  return 0;
}

static int vehicle_mode_count(const dg_block *self) {
  const vehicle_params *p = self->params;
  return p->hold_at_rest ? NUM_MODES : 1;
}

static void vehicle_mode_set(dg_block *self, int mode) {
  vehicle_data *d = self->data;
  d->mode = mode == MODE_STOPPED ? MODE_STOPPED : MODE_MOVING;
}

static const char *vehicle_mode_name(const dg_block *self, int mode) {
  (void)self;
  return mode >= 0 && mode < NUM_MODES ? vehicle_mode_names[mode] : NULL;
}

static void vehicle_state_upstream(dg_block *self, dg_topo *topo) {
  const vehicle_params *p = self->params;
  vehicle_data *d = self->data;
  dg_topo_dof(topo, self, PORT_MASS);
  dg_topo_inertia(topo, self, PORT_MASS, p->mass);
  for (int port = 0; port < NUM_GROUND; port++)
    dg_topo_ratio(topo, self, port, PORT_MASS, 1.0, 1.0);
  d->stop_tie = -1;
  if (d->mode == MODE_STOPPED) {
    static const int mass = PORT_MASS;
    static const double one = 1.0;
    d->stop_tie = dg_topo_tie(topo, self, 1, &mass, &one);
  }
}

/* The grade angle of a grade (rise/run). */
static double grade_angle(double grade) { return isfinite(grade) ? atan(grade) : 0.0; }

/* The grade angle from the input. */
static double vehicle_theta(const dg_block *self, const dg_ctx *ctx) {
  return grade_angle(dg_block_input(ctx, self, IN_GRADE));
}

/* Coulomb part F_c of the road load at grade angle cos θ (N). */
static double vehicle_coulomb(const vehicle_params *p, double cos_t) {
  return p->has_road_load ? p->road_load.f0 : p->rolling_resistance * p->mass * p->gravity * cos_t;
}

/* Road load at speed v with Coulomb part f_c in direction s (N, on the
 * body). 0.0 - x: +0 at rest. Without a Coulomb part the term f_c s (±0)
 * is left out: it changes at most the sign of a zero sum, which 0.0 - x
 * makes +0 either way (the same bits; a compiled stage whose f_c is the
 * parameter f0 = 0 then neither converts s nor reads it). */
static double vehicle_road_load(const vehicle_params *p, double f_c, double v, int s) {
  double f1 = 0.0, f2 = 0.5 * p->air_density * p->cda;
  if (p->has_road_load) {
    f1 = p->road_load.f1;
    f2 = p->road_load.f2;
  }
  if (f_c == 0.0)
    return 0.0 - (f1 * v + f2 * v * fabs(v));
  return 0.0 - (f_c * s + f1 * v + f2 * v * fabs(v));
}

/* Normal loads from the last step's acceleration; published on every port. */
static void vehicle_publish_loads(dg_block *self, dg_ctx *ctx) {
  const vehicle_params *p = self->params;
  vehicle_data *d = self->data;
  double m = p->mass, g = p->gravity, L = p->wheelbase, h = p->cg_height;
  double af = d->a_f, b = L - af;
  double w = m * g * d->cos_t;
  double front = (w * b - m * (d->accel + g * d->sin_t) * h) / L;
  double rear = w - front;
  double ay = dg_block_input(ctx, self, IN_LATERAL_ACCEL);
  if (!isfinite(ay))
    ay = 0.0;
  double dfront = m * ay * h * (b / L) / p->track_front;
  double drear = m * ay * h * (af / L) / p->track_rear;
  const double load[NUM_GROUND] = {0.5 * front - dfront, 0.5 * front + dfront,
                                   0.5 * rear - drear,   0.5 * rear + drear,
                                   front,                rear};
  for (int port = 0; port < NUM_GROUND; port++)
    dg_port_set_normal_load(ctx, self, port, dg_fmax(0.0, load[port]));
  d->load_front = dg_fmax(0.0, front);
  d->load_rear = dg_fmax(0.0, rear);
}

static void vehicle_set_mode(vehicle_data *d, dg_ctx *ctx, int mode) {
  d->mode = mode;
  d->have_hold = false;
  dg_ctx_request_topology(ctx);
}

static void vehicle_move_off(vehicle_data *d, dg_ctx *ctx, bool broke) {
  d->dir = d->have_hold ? -dg_sign(d->hold) : 0;
  d->inhibit = broke ? fabs(d->hold) : 0.0;
  vehicle_set_mode(d, ctx, MODE_MOVING);
}

static void vehicle_stop(vehicle_data *d, dg_ctx *ctx) {
  d->inhibit = 0.0;
  vehicle_set_mode(d, ctx, MODE_STOPPED);
}

/* The start: nothing given means the car at rest (the body proposes
 * v = 0 before the sources are asked, so an engine geared to the wheels
 * with no clutch starts where the car puts it, not the car where the
 * engine's idle would); a body at rest that its road load's static
 * friction holds starts stopped, as its first pre_step would stop it (so
 * the starts that follow, a compliant half-shaft's twist, see the hold). */
static void vehicle_start(dg_block *self, dg_ctx *ctx, int phase) {
  const vehicle_params *p = self->params;
  vehicle_data *d = self->data;
  if (phase != DG_START_PROPOSE)
    return;
  dg_ctx_start_speed_why(ctx, self, PORT_MASS, 0.0, "at rest: no speed given");
  if (d->mode != MODE_MOVING || !p->hold_at_rest)
    return;
  double theta = vehicle_theta(self, ctx);
  d->f_c = vehicle_coulomb(p, cos(theta));
  if (fabs(dg_port_speed(ctx, self, PORT_MASS)) <= REST_TOL && d->f_c > 0.0)
    vehicle_stop(d, ctx);
}

static void vehicle_pre_step(dg_block *self, dg_ctx *ctx) {
  const vehicle_params *p = self->params;
  vehicle_data *d = self->data;
  double grade = dg_block_input(ctx, self, IN_GRADE);
  if (memcmp(&grade, &d->grade_at, sizeof grade) != 0) { /* a new grade, to the bit */
    double theta = grade_angle(grade);
    d->sin_t = sin(theta);
    d->cos_t = cos(theta);
    d->grade_at = grade;
  }
  d->f_c = vehicle_coulomb(p, d->cos_t);
  double v = dg_port_speed(ctx, self, PORT_MASS);
  d->v_start = v;
  vehicle_publish_loads(self, ctx);

  if (d->mode == MODE_STOPPED) {
    /* new inputs (grade), same state: the last multiplier against F_c */
    if (!(d->f_c > 0.0))
      vehicle_move_off(d, ctx, false);
    else if (d->have_hold && fabs(d->hold) > d->f_c)
      vehicle_move_off(d, ctx, true);
    return;
  }
  if (fabs(v) > REST_TOL)
    d->dir = dg_sign(v);
  else if (!p->hold_at_rest)
    d->dir = 0;
  else if (d->f_c > 0.0 && d->f_c > d->inhibit)
    vehicle_stop(d, ctx);
}

static void vehicle_torque_downstream(dg_block *self, dg_ctx *ctx) {
  const vehicle_params *p = self->params;
  const vehicle_data *d = self->data;
  double v = dg_port_speed(ctx, self, PORT_MASS);
  /* the step's Coulomb part, the parameter f0 itself with road-load
   * coefficients (vehicle_coulomb): a constant in a compiled stage */
  double f_c = p->has_road_load ? p->road_load.f0 : d->f_c;
  int s = f_c != 0.0 && d->mode == MODE_MOVING ? d->dir : 0;
  double grade = p->mass * p->gravity * d->sin_t;
  double f = vehicle_road_load(p, f_c, v, s) - grade;
  dg_port_add_torque(ctx, self, PORT_MASS, f);
  double f1 = p->has_road_load ? p->road_load.f1 : 0.0;
  double f2 = p->has_road_load ? p->road_load.f2 : 0.5 * p->air_density * p->cda;
  double *rate = dg_block_state_rate(ctx, self);
  rate[ST_X] = v;
  rate[ST_DRAG] = f2 * v * fabs(v) * v;
  /* f_c s is ±0 without a Coulomb part: left out, the sum differs at most
   * in a zero's sign, which the energy's integral (from +0) does not keep */
  rate[ST_ROLLING] = (f_c == 0.0 ? f1 * v : f_c * s + f1 * v) * v;
  rate[ST_GRADE] = grade * v;
}

static void vehicle_post_step(dg_block *self, dg_ctx *ctx) {
  vehicle_data *d = self->data;
  double v = dg_port_speed(ctx, self, PORT_MASS);
  /* over a segment an event cut very short, the difference of two speeds
   * would be round-off: keep the acceleration of the last real one */
  if (ctx->dt > ACCEL_MIN_DT)
    d->accel = (v - d->v_start) / ctx->dt;
  if (d->mode == MODE_STOPPED) {
    d->hold = dg_ctx_tie_force(ctx, d->stop_tie);
    d->have_hold = true;
    if (fabs(d->hold) > d->f_c)
      vehicle_move_off(d, ctx, true);
    return;
  }
  bool rest = fabs(v) <= REST_TOL;
  if (!rest)
    d->inhibit = 0.0;
  if (!(d->f_c > 0.0) || !((const vehicle_params *)self->params)->hold_at_rest)
    return;
  bool crossed = d->dir != 0 && d->v_start * d->dir > REST_TOL && v * d->dir <= REST_TOL;
  bool resting = rest && fabs(d->v_start) <= REST_TOL && d->f_c > d->inhibit;
  if (crossed || resting)
    vehicle_stop(d, ctx);
}

/* At a segment's start, with the tie forces of the mode just built: a
 * hold beyond the road load's static friction lets go there (a body
 * stopped where the drive already exceeds it), as post_step would. */
static void vehicle_hold_check(dg_block *self, dg_ctx *ctx) {
  vehicle_data *d = self->data;
  if (d->mode != MODE_STOPPED)
    return;
  d->hold = dg_ctx_tie_force(ctx, d->stop_tie);
  d->have_hold = true;
  if (fabs(d->hold) > d->f_c)
    vehicle_move_off(d, ctx, true);
}

/* Switching conditions, located inside the step: the moving body's speed
 * reaching rest (g0 = v · s − tol, s the direction it moves in; the
 * friction of the road load then holds it), and a held body's hold force
 * reaching the static friction (g1 = F_c − |λ|). */
static int vehicle_event_values(const dg_block *self, dg_ctx *ctx, double *g) {
  const vehicle_data *d = self->data;
  g[0] = g[1] = 1.0;
  if (!((const vehicle_params *)self->params)->hold_at_rest)
    return 0;
  if (d->mode == MODE_STOPPED) {
    g[1] = d->f_c - fabs(dg_ctx_tie_force(ctx, d->stop_tie));
    return 1;
  } else if (d->dir != 0 && d->f_c > 0.0) {
    g[0] = dg_port_speed(ctx, self, PORT_MASS) * d->dir - REST_TOL;
    return 1;
  }
  return 0;
}

static double vehicle_signal(const dg_block *self, const dg_ctx *ctx, int index) {
  const vehicle_params *p = self->params;
  const vehicle_data *d = self->data;
  switch (index) {
  case SIG_ACCEL:
    return d->accel;
  case SIG_X:
    return dg_block_state(ctx, self)[ST_X];
  case SIG_DRAG_ENERGY:
    return dg_block_state(ctx, self)[ST_DRAG];
  case SIG_ROLLING_ENERGY:
    return dg_block_state(ctx, self)[ST_ROLLING];
  case SIG_GRADE_ENERGY:
    return dg_block_state(ctx, self)[ST_GRADE];
  case SIG_LOAD_FRONT:
    return d->load_front;
  case SIG_LOAD_REAR:
    return d->load_rear;
  case SIG_ROAD_LOAD: {
    if (d->mode == MODE_STOPPED)
      return 0.0;
    double v = dg_port_speed(ctx, self, PORT_MASS);
    double f_c = vehicle_coulomb(p, cos(vehicle_theta(self, ctx)));
    return vehicle_road_load(p, f_c, v, fabs(v) > REST_TOL ? dg_sign(v) : d->dir);
  }
  case SIG_STOPPED:
    return d->mode == MODE_STOPPED ? 1.0 : 0.0;
  default:
    return NAN;
  }
}

static int vehicle_set_signal(dg_block *self, dg_ctx *ctx, int index, double value) {
  if (index != SIG_X)
    return -1;
  dg_block_state_commit(ctx, self)[ST_X] = value;
  return 0;
}

const dg_block_class dg_block_vehicle = {
    .abi = DG_BLOCK_ABI,
    .type = "vehicle",
    .doc = "Vehicle body: mass on the road with grade, road load (physical or coast-down "
           "coefficients, stick-slip at rest), axle loads with longitudinal and lateral load "
           "transfer published to the wheels, and position.",
    .ports = vehicle_ports,
    .params = vehicle_params_table,
    .params_size = sizeof(vehicle_params),
    .signals = vehicle_signals,
    .inputs = vehicle_inputs,
    .data_size = sizeof(vehicle_data),
    .num_states = NUM_STATES,
    .check = vehicle_check,
    .init = vehicle_init,
    .mode_count = vehicle_mode_count,
    .mode_set = vehicle_mode_set,
    .mode_name = vehicle_mode_name,
    .pre_step = vehicle_pre_step,
    .state_upstream = vehicle_state_upstream,
    .torque_downstream = vehicle_torque_downstream,
    .post_step = vehicle_post_step,
    .hold_check = vehicle_hold_check,
    .num_events = 2,
    .event_values = vehicle_event_values,
    .signal = vehicle_signal,
    .start = vehicle_start,
    .set_signal = vehicle_set_signal,
};
