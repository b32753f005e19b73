/* load — a resisting shaft at the end of a line (a dynamometer, a fan).
 *
 *   T = −(c0 · s + c1 · ω + c2 · ω·|ω|),  own inertia J,
 *
 * so the torque always opposes rotation: c0 is Coulomb friction, c1 viscous
 * drag, c2 quadratic (aerodynamic) drag.
 *
 * Coulomb friction sticks and slips like a brake (the wheel's, the
 * clutch's). Modes (index 0 is the start mode):
 *   0 sliding: the shaft is a DOF; s is the direction of rotation, fixed in
 *     pre_step for the step segment (sign(ω) at its start), so the torque
 *     is smooth within the segment;
 *   1 stuck (a mode only with c0 > 0, which makes c0 structural for the
 *     every-mode check): the shaft is held at rest by a tie to ground,
 *     whose multiplier λ is the torque the friction holds.
 * sliding → stuck: the speed reaches zero (event g0 = ω·s − tol, located
 *   inside the step, so the shaft stops at its stopping time and nothing
 *   is lost to an impact), or the shaft is found at rest in pre_step.
 * stuck → sliding: the held torque exceeds c0 (event g1 = c0 − |λ|, or
 *   the same test in post_step and pre_step); it then slides the way the
 *   torque pushes, s = −sign(λ).
 * Evaluating c0·sign(ω) per substep instead (version 1) made the step map
 * have a spurious fixed point near rest: the shaft crept at 5.7e-5 rad/s
 * and the audit booked friction work that no kinetic energy paid for. */
#include <drivegraph/block.h>
#include <math.h>

enum { PORT_IN };
enum { MODE_SLIDING, MODE_STUCK, NUM_MODES };
/* Rest: a speed within REST_TOL (rad/s) plus REST_REL of the speed at the
 * segment's start is zero — the round-off of a projection, or the gap
 * between the dense output an event is located on and the step that then
 * integrates to it. */
#define REST_TOL 1e-12
#define REST_REL 1e-10
enum { SIG_OMEGA, SIG_RPM, SIG_TORQUE, SIG_POWER };

typedef struct load_params {
  double inertia;
  double c0, c1, c2;
} load_params;

typedef struct load_data {
  int mode;       /* MODE_* */
  int dir;        /* s for the segment: -1, 0, +1 */
  int tie;        /* the hold's tie while stuck, -1 otherwise */
  double hold;    /* last multiplier of the hold (N·m) */
  bool have_hold; /* hold belongs to the current stick */
  bool just_released; /* let go in the last post_step: at rest, but not to stick again */
  double rest_tol;    /* REST_TOL + REST_REL |ω| at the segment's start */
} load_data;

static const char *const load_mode_names[NUM_MODES] = {"sliding", "stuck"};

static const dg_port_def load_ports[] = {
    {.name = "in", .dir = DG_PORT_IN, .domain = DG_ROTATIONAL, .doc = "driven shaft"},
    {0},
};

static const dg_param_def load_params_table[] = {
    DG_NUMBER(load_params, inertia, .unit = "kg*m^2", .flags = DG_P_MIN | DG_P_INERTIA,
              .doc = "inertia of the load"),
    /* structural: with c0 > 0 the load has a stuck mode */
    DG_NUMBER(load_params, c0, .unit = "N*m", .flags = DG_P_MIN,
              .doc = "constant (Coulomb) resisting torque; sticks at rest up to c0"),
    DG_NUMBER(load_params, c1, .unit = "N*m*s/rad", .flags = DG_P_MIN | DG_P_DYNAMICS,
              .doc = "resisting torque per unit speed"),
    DG_NUMBER(load_params, c2, .unit = "N*m*s^2/rad^2", .flags = DG_P_MIN | DG_P_DYNAMICS,
              .doc = "resisting torque per unit speed squared"),
    {0},
};

static const dg_signal_def load_signals[] = {
    {.name = "omega", .unit = "rad/s", .doc = "shaft speed", .port = PORT_IN, .scale = 1},
    {.name = "rpm", .unit = "rpm", .doc = "shaft speed", .port = PORT_IN,
     .scale = DG_RPM_PER_RAD_S},
    {.name = "torque", .unit = "N*m", .doc = "torque the load applies (negative: resisting)",
     .port = DG_SIGNAL_HOOK},
    {.name = "power", .unit = "W", .doc = "power absorbed by the load", .port = DG_SIGNAL_HOOK},
    {0},
};

/* Resisting torque at speed w with the Coulomb part in direction s. 0.0 -
 * x: +0 at rest. Without Coulomb friction the term c0 s (±0) is left
 * out: it changes at most the sign of a zero sum, which 0.0 - x makes +0
 * either way (the same bits; a compiled stage then neither converts s
 * nor reads it). */
static double load_torque(const load_params *p, double w, int s) {
  if (p->c0 == 0.0)
    return 0.0 - (p->c1 * w + p->c2 * w * fabs(w));
  return 0.0 - (p->c0 * s + p->c1 * w + p->c2 * w * fabs(w));
}

static int load_init(dg_block *self, dg_init *init) {
  const load_params *p = self->params;
  load_data *d = self->data;
  d->mode = MODE_SLIDING;
  d->tie = -1;
  /* without Coulomb friction it never sticks and s does not count; without
   * any friction it is an inertia alone */
  if (!(p->c0 > 0.0))
    dg_init_idle(init, DG_HOOK_PRE_STEP | DG_HOOK_POST_STEP | DG_HOOK_EVENTS | DG_HOOK_HOLD_CHECK |
                           (p->c1 == 0.0 && p->c2 == 0.0 ? DG_HOOK_TORQUE : 0u));
  return 0;
}

/* Without Coulomb friction nothing sticks: one mode. */
static int load_mode_count(const dg_block *self) {
  const load_params *p = self->params;
  return p->c0 > 0.0 ? NUM_MODES : 1;
}

static void load_mode_set(dg_block *self, int mode) {
  load_data *d = self->data;
  d->mode = mode == MODE_STUCK ? MODE_STUCK : MODE_SLIDING;
}

static const char *load_mode_name(const dg_block *self, int mode) {
  (void)self;
  return mode >= 0 && mode < NUM_MODES ? load_mode_names[mode] : NULL;
}

static void load_state_upstream(dg_block *self, dg_topo *topo) {
  const load_params *p = self->params;
  load_data *d = self->data;
  dg_topo_dof(topo, self, PORT_IN);
  dg_topo_inertia(topo, self, PORT_IN, p->inertia);
  d->tie = -1;
  if (d->mode == MODE_STUCK) {
    static const int port = PORT_IN;
    static const double coef = 1.0;
    d->tie = dg_topo_tie(topo, self, 1, &port, &coef);
  }
}

static void load_set_mode(load_data *d, dg_ctx *ctx, int mode) {
  if (mode == d->mode)
    return;
  d->mode = mode;
  d->have_hold = false;
  dg_ctx_request_topology(ctx);
}

/* Lets go: slides the way the held torque pushed. */
static void load_release(load_data *d, dg_ctx *ctx, bool in_post_step) {
  d->dir = d->have_hold ? -dg_sign(d->hold) : 0;
  d->just_released = in_post_step;
  load_set_mode(d, ctx, MODE_SLIDING);
}

/* The start: a load at rest with Coulomb friction starts stuck, as its
 * first pre_step would stick it (so a compliant shaft's static twist sees
 * the hold). */
static void load_start(dg_block *self, dg_ctx *ctx, int phase) {
  const load_params *p = self->params;
  load_data *d = self->data;
  if (phase == DG_START_PROPOSE && d->mode == MODE_SLIDING && p->c0 > 0.0 &&
      fabs(dg_port_speed(ctx, self, PORT_IN)) <= REST_TOL && !d->just_released)
    load_set_mode(d, ctx, MODE_STUCK);
}

static void load_pre_step(dg_block *self, dg_ctx *ctx) {
  const load_params *p = self->params;
  load_data *d = self->data;
  double w = dg_port_speed(ctx, self, PORT_IN);
  d->rest_tol = REST_TOL + REST_REL * fabs(w);
  if (d->mode == MODE_STUCK) {
    if (!(p->c0 > 0.0) || (d->have_hold && fabs(d->hold) > p->c0))
      load_release(d, ctx, false);
    return;
  }
  if (fabs(w) > REST_TOL)
    d->dir = dg_sign(w);
  else if (d->just_released)
    ; /* at rest because it just let go: slide the way it was pushed */
  else if (p->c0 > 0.0)
    load_set_mode(d, ctx, MODE_STUCK);
  else
    d->dir = 0;
  d->just_released = false;
}

static void load_torque_downstream(dg_block *self, dg_ctx *ctx) {
  const load_data *d = self->data;
  if (d->mode == MODE_STUCK)
    return;
  dg_port_add_torque(ctx, self, PORT_IN,
                     load_torque(self->params, dg_port_speed(ctx, self, PORT_IN), d->dir));
}

static void load_post_step(dg_block *self, dg_ctx *ctx) {
  const load_params *p = self->params;
  load_data *d = self->data;
  if (d->mode == MODE_STUCK) {
    d->hold = dg_ctx_tie_force(ctx, d->tie);
    d->have_hold = true;
    if (fabs(d->hold) > p->c0)
      load_release(d, ctx, true);
    return;
  }
  if (p->c0 > 0.0 && d->dir != 0 && dg_port_speed(ctx, self, PORT_IN) * d->dir <= d->rest_tol)
    load_set_mode(d, ctx, MODE_STUCK);
}

/* At a segment's start, with the tie forces of the mode just built: a
 * hold beyond c0 lets go there (t = 0 overloaded, a stop located where the
 * drive exceeds c0, another element's switch), as post_step would. */
static void load_hold_check(dg_block *self, dg_ctx *ctx) {
  const load_params *p = self->params;
  load_data *d = self->data;
  if (d->mode != MODE_STUCK)
    return;
  d->hold = dg_ctx_tie_force(ctx, d->tie);
  d->have_hold = true;
  if (fabs(d->hold) > p->c0)
    load_release(d, ctx, true);
}

/* g0: a sliding shaft reaching rest; g1: the held torque reaching c0. */
static int load_event_values(const dg_block *self, dg_ctx *ctx, double *g) {
  const load_params *p = self->params;
  const load_data *d = self->data;
  g[0] = g[1] = 1.0;
  if (!(p->c0 > 0.0))
    return 0;
  if (d->mode == MODE_STUCK) {
    g[1] = p->c0 - fabs(dg_ctx_tie_force(ctx, d->tie));
    return 1;
  } else if (d->dir != 0) {
    g[0] = dg_port_speed(ctx, self, PORT_IN) * d->dir - d->rest_tol;
    return 1;
  }
  return 0;
}

static double load_signal(const dg_block *self, const dg_ctx *ctx, int index) {
  const load_data *d = self->data;
  double w = dg_port_speed(ctx, self, PORT_IN);
  double t = d->mode == MODE_STUCK ? (d->have_hold ? d->hold : 0.0)
                                   : load_torque(self->params, w,
                                                 fabs(w) > REST_TOL ? dg_sign(w) : d->dir);
  return index == SIG_TORQUE ? t : -t * w;
}

const dg_block_class dg_block_load = {
    .abi = DG_BLOCK_ABI,
    .type = "load",
    .doc = "Resisting load with inertia: T = -(c0 sign(w) + c1 w + c2 w|w|); the Coulomb part "
           "c0 sticks at rest and lets go when the held torque exceeds c0.",
    .ports = load_ports,
    .params = load_params_table,
    .params_size = sizeof(load_params),
    .signals = load_signals,
    .data_size = sizeof(load_data),
    .init = load_init,
    .mode_count = load_mode_count,
    .mode_set = load_mode_set,
    .mode_name = load_mode_name,
    .pre_step = load_pre_step,
    .state_upstream = load_state_upstream,
    .torque_downstream = load_torque_downstream,
    .post_step = load_post_step,
    .hold_check = load_hold_check,
    .signal = load_signal,
    .num_events = 2,
    .event_values = load_event_values,
    .start = load_start,
};
