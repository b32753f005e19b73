/* brake — holds the shaft at its port `in` to ground: a friction brake
 * (a band or a multi-plate brake of an automatic, a driveline brake) with
 * stick–slip, or a parking lock (a pawl: no slip).
 *
 * Port: `in` (direction any) is the braked shaft; it joins a shaft with
 * ports of any direction (["ps.ring", "brake.in", "clutch.out"]). The
 * brake's own rotating part, `inertia`, sits on it.
 *
 * Sign convention: `torque` is the torque the brake applies to the shaft
 * (dg_port_add_torque's sign): negative while it slows a shaft turning
 * forward. The energy audit books its work, always <= 0, to the brake.
 *
 * kind "friction" (the default). Capacity T_cap = max_torque · e, with e
 * the input `engagement` clamped to [0, 1] (0 free, 1 full: a normalized
 * normal force); static capacity T_s = static_factor · T_cap. Modes (index
 * 0 is the start mode), as a clutch (blocks/clutch.c) whose `out` is the
 * ground:
 *   0 slipping: the shaft is a DOF; the brake applies −T_cap · s, with s
 *     the slip direction, a discrete state fixed in pre_step for the step
 *     segment: s = sign(ω) at its start, or, at rest just after the hold
 *     let go, the direction the hold was pushing against. Freezing s keeps
 *     the right-hand side smooth within the segment (see clutch.c); no
 *     regularization of sign(), so a slipping brake applies exactly T_cap.
 *   1 held: the tie ω = 0 (dg_topo_tie with one port). Its multiplier λ
 *     (dg_ctx_tie_force) is the torque the brake applies to hold the shaft.
 * slipping → held: the shaft reaches rest (ω · s <= tol) with T_cap > 0;
 *   located inside the step by event g0 = ω · s − tol, so the brake holds
 *   at the stopping time with nothing left for an impact. Also in pre_step
 *   when the shaft is at rest with no slip direction (at t = 0) and
 *   T_cap > 0. "Rest" is |ω| <= tol = 1e-12 rad/s + 1e-10 · |ω| at the
 *   segment's start (load.c's tolerance: a projection's round-off, the gap
 *   between the dense output an event is located on and the step to it).
 * held → slipping: |λ| > T_s or T_cap = 0 (post_step; located by event
 *   g1 = T_s − |λ|; the same test in pre_step with the new inputs); the
 *   shaft then slips the way the held torque pushed, s = −sign(λ).
 * A shaft at rest with no capacity (the brake released at t = 0): event
 *   g0 = tol − |ω|, the shaft leaving rest, so that the friction direction
 *   is picked where it starts to turn.
 *
 * kind "lock" (a parking lock: no slip, no torque limit). Engaged while
 * e >= 0.5. Modes: 0 free (no torque), 1 held (the tie ω = 0, any torque).
 *   free → held: engaged with |ω| <= lock_speed. A lock engaged while the
 *     shaft turns faster ratchets (the pawl skips over the teeth, no
 *     torque) until the speed falls to lock_speed, and then holds with a
 *     plastic impact: the mode change's momentum projection stops the
 *     shaft (and whatever turns with it) at once and the solver books the
 *     kinetic energy lost as impact loss. Located inside the step by event
 *     g0 = max(0.5 − e, ω · s − lock_speed − tol) (s = sign(ω) at the
 *     segment's start), so the impact comes at exactly lock_speed. With
 *     lock_speed 0 the lock holds where the shaft reaches rest, without an
 *     impact.
 *   held → free: e < 0.5 (event g1 = e − 0.5, and pre_step / post_step).
 *
 * Two holds on one shaft (a second brake, a load's stuck Coulomb friction)
 * would not pool: the solver would keep one tie and drop the other as
 * redundant (its multiplier 0), so with a torque above either capacity the
 * two would take turns. The every-mode check refuses such a graph, naming
 * both blocks (lib/solver.c, check_double_holds): give a shaft one brake. */
#include <drivegraph/block.h>
#include <math.h>

enum { PORT_IN };
enum { MODE_SLIPPING, MODE_HELD, NUM_MODES };
enum { KIND_FRICTION, KIND_LOCK };
enum { IN_ENGAGEMENT };
enum { SIG_OMEGA, SIG_RPM, SIG_TORQUE, SIG_HELD, SIG_ENGAGEMENT, SIG_CAPACITY };
/* Rest: see the file comment. */
#define REST_TOL 1e-12
#define REST_REL 1e-10
/* A lock is engaged from this engagement up. */
#define LOCK_ENGAGED 0.5

typedef struct brake_params {
  int kind;
  double max_torque;
  double static_factor;
  double inertia;
  double lock_speed;
  bool has_max_torque, has_static_factor, has_lock_speed;
} brake_params;

typedef struct brake_data {
  int mode;           /* MODE_* */
  int dir;            /* s for the segment: -1, 0, +1 */
  bool just_released; /* let go in the last post_step: at rest, s from λ */
  bool have_lambda;   /* lambda holds a post_step value of the current hold */
  double lambda;      /* tie multiplier: torque the hold applies to the shaft */
  double rest_tol;    /* REST_TOL + REST_REL |ω| at the segment's start */
  int tie;            /* the hold's tie while held, -1 otherwise */
} brake_data;

static const char *const brake_kinds[] = {"friction", "lock", NULL};
static const char *const brake_mode_names[2][NUM_MODES] = {{"slipping", "held"},
                                                           {"free", "held"}};

static const dg_port_def brake_ports[] = {
    {.name = "in", .dir = DG_PORT_ANY, .domain = DG_ROTATIONAL,
     .doc = "the braked shaft (joins a shaft with ports of any direction)"},
    {0},
};

static const dg_param_def brake_params_table[] = {
    {.key = "kind", .kind = DG_PARAM_ENUM, .offset = offsetof(brake_params, kind), .unit = "",
     .doc = "friction: stick-slip with max_torque x engagement; lock: a parking lock, no slip, "
            "holds any torque while engagement >= 0.5",
     .def = KIND_FRICTION, .choices = brake_kinds},
    {.key = "max_torque", .kind = DG_PARAM_NUMBER, .offset = offsetof(brake_params, max_torque),
     .unit = "N*m", .doc = "friction: kinetic (slipping) torque capacity at full engagement",
     .flags = DG_P_MIN_EXCL | DG_P_DYNAMICS, .min = 0,
     .present = DG_PRESENT(brake_params, has_max_torque)},
    {.key = "static_factor", .kind = DG_PARAM_NUMBER,
     .offset = offsetof(brake_params, static_factor), .unit = "",
     .doc = "friction: static / kinetic capacity: the hold lets go above static_factor times "
            "the slipping capacity",
     .def = 1.1, .flags = DG_P_MIN | DG_P_DYNAMICS, .min = 1,
     .present = DG_PRESENT(brake_params, has_static_factor)},
    DG_NUMBER(brake_params, inertia, .unit = "kg*m^2", .flags = DG_P_MIN | DG_P_INERTIA,
              .doc = "inertia of the brake's rotating part, on the shaft"),
    {.key = "lock_speed", .kind = DG_PARAM_NUMBER, .offset = offsetof(brake_params, lock_speed),
     .unit = "rad/s",
     .doc = "lock: speed below which an engaged lock catches (faster, it ratchets); it then "
            "stops the shaft with an impact",
     .def = 0.5, .flags = DG_P_MIN | DG_P_DYNAMICS, .min = 0,
     .present = DG_PRESENT(brake_params, has_lock_speed)},
    {0},
};

static const dg_input_def brake_inputs[] = {
    {.name = "engagement", .unit = "",
     .doc = "normalized normal force 0 (free) .. 1 (full capacity); a lock is engaged from 0.5",
     .def = 1, .flags = DG_P_MIN | DG_P_MAX, .min = 0, .max = 1},
    {0},
};

static const dg_signal_def brake_signals[] = {
    {.name = "omega", .unit = "rad/s", .doc = "shaft speed", .port = PORT_IN, .scale = 1},
    {.name = "rpm", .unit = "rpm", .doc = "shaft speed", .port = PORT_IN,
     .scale = DG_RPM_PER_RAD_S},
    {.name = "torque", .unit = "N*m",
     .doc = "torque the brake applies to the shaft (held: the hold's multiplier at the last "
            "step's end)",
     .port = DG_SIGNAL_HOOK, .flags = DG_SIGNAL_FEEDTHROUGH},
    {.name = "held", .unit = "", .doc = "1 while the shaft is held, 0 while it slips or is free",
     .port = DG_SIGNAL_HOOK, .flags = DG_SIGNAL_BOOL},
    {.name = "engagement", .unit = "", .doc = "engagement 0..1 (the input, clamped)",
     .port = DG_SIGNAL_HOOK, .flags = DG_SIGNAL_FEEDTHROUGH},
    {.name = "capacity", .unit = "N*m",
     .doc = "friction: kinetic capacity max_torque x engagement (lock: 0)",
     .port = DG_SIGNAL_HOOK, .flags = DG_SIGNAL_FEEDTHROUGH},
    {0},
};

static void brake_check(const void *params, dg_check *chk) {
  const brake_params *p = params;
  const char *kind = brake_kinds[p->kind];
  if (p->kind == KIND_FRICTION && !p->has_max_torque)
    dg_check_error(chk, "max_torque", "missing required number (N*m) for kind \"friction\"");
  if (p->kind != KIND_FRICTION && p->has_max_torque)
    dg_check_error(chk, "max_torque", "only used by kind \"friction\" (kind is \"%s\")", kind);
  if (p->kind != KIND_FRICTION && p->has_static_factor)
    dg_check_error(chk, "static_factor", "only used by kind \"friction\" (kind is \"%s\")", kind);
  if (p->kind != KIND_LOCK && p->has_lock_speed)
    dg_check_error(chk, "lock_speed", "only used by kind \"lock\" (kind is \"%s\")", kind);
}

static double brake_engagement(const dg_block *self, const dg_ctx *ctx) {
  return dg_clamp01(dg_block_input(ctx, self, IN_ENGAGEMENT));
}

/* Kinetic capacity T_cap (N·m) of a friction brake at the context's inputs. */
static double brake_capacity(const dg_block *self, const dg_ctx *ctx) {
  const brake_params *p = self->params;
  return p->kind == KIND_FRICTION ? p->max_torque * brake_engagement(self, ctx) : 0.0;
}

/* The capacity for the hold's event function: T_cap with the engagement
 * unclamped below 0, so that a command falling through 0 makes the
 * function cross zero with a slope rather than flatten at 0 (the
 * clutch's event capacity, blocks/clutch.c). */
static double brake_event_capacity(const dg_block *self, const dg_ctx *ctx) {
  const brake_params *p = self->params;
  double e = dg_block_input(ctx, self, IN_ENGAGEMENT);
  return p->max_torque * (e < 1.0 ? e : 1.0);
}

static bool lock_engaged(const dg_block *self, const dg_ctx *ctx) {
  return brake_engagement(self, ctx) >= LOCK_ENGAGED;
}

static double brake_speed(const dg_block *self, const dg_ctx *ctx) {
  return dg_port_speed(ctx, self, PORT_IN);
}

static int brake_init(dg_block *self, dg_init *init) {
  (void)init;
  brake_data *d = self->data;
  d->mode = MODE_SLIPPING;
  d->tie = -1;
  return 0;
}

static int brake_mode_count(const dg_block *self) {
  (void)self;
  return NUM_MODES;
}

static void brake_mode_set(dg_block *self, int mode) {
  brake_data *d = self->data;
  d->mode = mode == MODE_HELD ? MODE_HELD : MODE_SLIPPING;
}

static const char *brake_mode_name(const dg_block *self, int mode) {
  const brake_params *p = self->params;
  return mode >= 0 && mode < NUM_MODES ? brake_mode_names[p->kind][mode] : NULL;
}

static void brake_state_upstream(dg_block *self, dg_topo *topo) {
  const brake_params *p = self->params;
  brake_data *d = self->data;
  dg_topo_dof(topo, self, PORT_IN);
  dg_topo_inertia(topo, self, PORT_IN, p->inertia);
  d->tie = -1;
  if (d->mode == MODE_HELD) {
    static const int port = PORT_IN;
    static const double coef = 1.0;
    d->tie = dg_topo_tie(topo, self, 1, &port, &coef);
  }
}

/* `torque`: what the brake applied until the hold's first multiplier. */
static void brake_hold(brake_data *d, dg_ctx *ctx, double torque) {
  d->mode = MODE_HELD;
  d->have_lambda = false;
  d->lambda = torque;
  d->just_released = false;
  dg_ctx_request_topology(ctx);
}

/* Lets go: the shaft slips the way the held torque pushed. */
static void brake_release(brake_data *d, dg_ctx *ctx, bool in_post_step) {
  d->mode = MODE_SLIPPING;
  d->dir = d->have_lambda ? -dg_sign(d->lambda) : 0;
  d->just_released = in_post_step;
  dg_ctx_request_topology(ctx);
}

static void friction_pre_step(dg_block *self, dg_ctx *ctx, brake_data *d) {
  const brake_params *p = self->params;
  double cap = brake_capacity(self, ctx), w = brake_speed(self, ctx);
  if (d->mode == MODE_HELD) {
    /* new inputs, same state: the last post_step's λ against the new capacity */
    if (!(cap > 0.0) || (d->have_lambda && fabs(d->lambda) > p->static_factor * cap))
      brake_release(d, ctx, false);
    return;
  }
  if (fabs(w) > d->rest_tol)
    d->dir = dg_sign(w);
  else if (d->just_released)
    ; /* at rest because it just let go: slip the way it was pushed */
  else if (cap > 0.0)
    brake_hold(d, ctx, 0.0);
  else
    d->dir = 0;
  d->just_released = false;
}

static void lock_pre_step(dg_block *self, dg_ctx *ctx, brake_data *d) {
  const brake_params *p = self->params;
  double w = brake_speed(self, ctx);
  bool engaged = lock_engaged(self, ctx);
  if (d->mode == MODE_HELD) {
    if (!engaged)
      brake_release(d, ctx, false);
    return;
  }
  d->dir = fabs(w) > d->rest_tol ? dg_sign(w) : 0;
  if (engaged && fabs(w) <= p->lock_speed + d->rest_tol)
    brake_hold(d, ctx, 0.0);
}

static void brake_pre_step(dg_block *self, dg_ctx *ctx) {
  const brake_params *p = self->params;
  brake_data *d = self->data;
  d->rest_tol = REST_TOL + REST_REL * fabs(brake_speed(self, ctx));
  if (p->kind == KIND_LOCK)
    lock_pre_step(self, ctx, d);
  else
    friction_pre_step(self, ctx, d);
}

static void brake_torque_downstream(dg_block *self, dg_ctx *ctx) {
  const brake_data *d = self->data;
  if (d->mode == MODE_HELD || d->dir == 0)
    return;
  double cap = brake_capacity(self, ctx);
  if (cap > 0.0)
    dg_port_add_torque(ctx, self, PORT_IN, -cap * d->dir);
}

static void brake_post_step(dg_block *self, dg_ctx *ctx) {
  const brake_params *p = self->params;
  brake_data *d = self->data;
  double w = brake_speed(self, ctx);
  if (d->mode == MODE_HELD) {
    d->lambda = dg_ctx_tie_force(ctx, d->tie);
    d->have_lambda = true;
    if (p->kind == KIND_LOCK ? !lock_engaged(self, ctx)
                             : !(brake_capacity(self, ctx) > 0.0) ||
                                   fabs(d->lambda) > p->static_factor * brake_capacity(self, ctx))
      brake_release(d, ctx, true);
    return;
  }
  if (p->kind == KIND_LOCK) {
    if (lock_engaged(self, ctx) && fabs(w) <= p->lock_speed + d->rest_tol)
      brake_hold(d, ctx, 0.0);
    return;
  }
  double cap = brake_capacity(self, ctx);
  if (cap > 0.0 && d->dir != 0 && w * d->dir <= d->rest_tol)
    brake_hold(d, ctx, -cap * d->dir);
}

/* At a segment's start, with the tie forces of the mode just built: a
 * friction hold beyond T_s lets go there (see load.c); a lock holds any
 * torque. */
static void brake_hold_check(dg_block *self, dg_ctx *ctx) {
  const brake_params *p = self->params;
  brake_data *d = self->data;
  if (d->mode != MODE_HELD || p->kind != KIND_FRICTION)
    return;
  d->lambda = dg_ctx_tie_force(ctx, d->tie);
  d->have_lambda = true;
  double cap = brake_capacity(self, ctx);
  if (!(cap > 0.0) || fabs(d->lambda) > p->static_factor * cap)
    brake_release(d, ctx, true);
}

/* Switching conditions, located inside the step (post_step then decides at
 * their time); see the file comment:
 *   friction, slipping with a direction: g0 = ω · s − tol (the shaft
 *     reaching rest; with no capacity post_step lets it pass through);
 *   friction, slipping at rest with no direction: g0 = tol − |ω| (the
 *     shaft leaving rest);
 *   friction, held: g1 = T_s − |λ| (the hold torque reaching the static
 *     capacity, or the capacity falling to zero);
 *   lock, free: g0 = max(0.5 − e, ω · s − lock_speed − tol) (engaged at
 *     or below lock_speed);
 *   lock, held: g1 = e − 0.5 (disengaged). */
static int brake_event_values(const dg_block *self, dg_ctx *ctx, double *g) {
  const brake_params *p = self->params;
  const brake_data *d = self->data;
  double w = brake_speed(self, ctx);
  g[0] = g[1] = 1.0;
  if (p->kind == KIND_LOCK) {
    double e = brake_engagement(self, ctx);
    if (d->mode == MODE_HELD)
      g[1] = e - LOCK_ENGAGED;
    else
      g[0] = dg_fmax(LOCK_ENGAGED - e, w * d->dir - p->lock_speed - d->rest_tol);
    return 1;
  }
  if (d->mode == MODE_HELD)
    g[1] = p->static_factor * brake_event_capacity(self, ctx) - fabs(dg_ctx_tie_force(ctx, d->tie));
  else if (d->dir != 0)
    g[0] = w * d->dir - d->rest_tol;
  else
    g[0] = d->rest_tol - fabs(w);
  return 1;
}

static double brake_signal(const dg_block *self, const dg_ctx *ctx, int index) {
  const brake_data *d = self->data;
  double w = brake_speed(self, ctx);
  switch (index) {
  case SIG_TORQUE: {
    if (d->mode == MODE_HELD)
      return d->lambda;
    int s = fabs(w) > REST_TOL ? dg_sign(w) : d->dir;
    return 0.0 - brake_capacity(self, ctx) * s; /* 0.0 - x: +0 when free */
  }
  case SIG_HELD:
    return d->mode == MODE_HELD ? 1.0 : 0.0;
  case SIG_ENGAGEMENT:
    return brake_engagement(self, ctx);
  case SIG_CAPACITY:
    return brake_capacity(self, ctx);
  default:
    return NAN;
  }
}

const dg_block_class dg_block_brake = {
    .abi = DG_BLOCK_ABI,
    .type = "brake",
    .doc = "Brake holding its shaft to ground: kind friction (stick-slip, capacity max_torque x "
           "engagement, holds up to static_factor x capacity) or lock (a parking lock: no slip, "
           "catches below lock_speed while engagement >= 0.5, with an impact).",
    .ports = brake_ports,
    .params = brake_params_table,
    .params_size = sizeof(brake_params),
    .signals = brake_signals,
    .inputs = brake_inputs,
    .data_size = sizeof(brake_data),
    .check = brake_check,
    .init = brake_init,
    .mode_count = brake_mode_count,
    .mode_set = brake_mode_set,
    .mode_name = brake_mode_name,
    .pre_step = brake_pre_step,
    .state_upstream = brake_state_upstream,
    .torque_downstream = brake_torque_downstream,
    .post_step = brake_post_step,
    .hold_check = brake_hold_check,
    .signal = brake_signal,
    .num_events = 2,
    .event_values = brake_event_values,
};
