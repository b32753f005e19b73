/* clutch — dry friction clutch with stick–slip, engaged by the pedal or
 * automatically with engine speed.
 *
 * Ports: `in` is the engine side, `out` the gearbox side; the driven plate's
 * inertia `inertia` sits on `out` (so a slipping clutch in front of a gearbox
 * in neutral still has inertia on both sides).
 *
 * Sign conventions: slip Δω = ω_in − ω_out; T is the torque transmitted
 * from `in` to `out`: −T is applied at `in`, +T at `out` (T > 0 when the
 * engine drives the load).
 *
 * Capacity. T_cap = max_torque · e with the engagement e in [0, 1]:
 *   pedal = the input `pedal` clamped to [0, 1] (0 released, 1 pressed);
 *   e_pedal = E(pedal), the `engagement` curve {"pedal": [...],
 *             "engagement": [...]}, or 1 − pedal without one;
 *   mode "pedal": e = e_pedal;
 *   mode "auto":  e = S(x) · e_pedal, x = (rpm_in − idle_rpm)/(launch_rpm −
 *             idle_rpm) clamped to [0, 1], S(x) = x²(3 − 2x) (smoothstep:
 *             0 at idle_rpm, 1 at launch_rpm, C¹), so the engine is not
 *             loaded below idle and a launch slips with the engine held
 *             where its torque equals T_cap(rpm). The pedal can still open
 *             an automatic clutch (the default pedal input 0 leaves e = S).
 *   the input `engagement` (normalized normal force, default 1) clamped
 *             to [0, 1] multiplies e: a shift element's own command.
 * Static capacity T_s = static_factor · T_cap, static_factor >= 1.
 *
 * Modes (index 0 is the start mode):
 *   0 slipping: `in` and `out` are separate DOFs (dg_topo_dof(in)); the
 *     friction torque is T = T_cap · s, with s the slip direction, a
 *     discrete state fixed in pre_step for the step segment: s = sign(Δω)
 *     at its start, or, when Δω is exactly 0 just after a lock let go, the
 *     direction the lock was pushing. Freezing s keeps the RK4 right-hand
 *     side smooth within a segment: with sign(Δω) evaluated per substep the
 *     four substeps disagree about a zero crossing and can leave Δω
 *     hovering at a value that never crosses, so the lock would be missed.
 *     No regularization of sign() is used, so a slipping clutch transmits
 *     exactly T_cap, and locking is by the events below.
 *   1 locked: dg_topo_dof(in) plus the tie ω_in − ω_out = 0. Its multiplier
 *     λ (dg_ctx_tie_force) is the torque the lock applies at `in`, so the
 *     transmitted torque is T = −λ (the `torque` signal shows the last
 *     slipping torque until the first post_step of a new lock).
 *
 * Transitions:
 *   slipping → locked (post_step): the slip reached zero (Δω · s <= 0)
 *     and T_cap > 0. The solver locates that time inside the step (event
 *     g0 below) and ends the segment there, so the lock comes at the slip's
 *     root with no overshoot; the momentum-conserving projection of the
 *     mode change then has nothing to take (beyond 32 segments in one step
 *     it is decided at the step's end, with a plastic impact on the
 *     overshoot). Also in
 *     pre_step when Δω is zero with no slip direction known (both shafts
 *     at rest at t = 0, or equal initial speeds) and T_cap > 0. "Zero"
 *     means within 1e-10 of the shaft speeds: a mode change's projection
 *     leaves round-off between shafts that turned together, and its sign
 *     must not choose a friction direction.
 *   locked → slipping (post_step): |λ| > T_s, or T_cap = 0; the slip
 *     direction becomes −sign(λ) (the side the lock was holding back runs
 *     ahead). The same test runs in pre_step with the λ of the previous
 *     post_step (same state) and the capacity of the new inputs, so a pedal
 *     pressed at time t opens the clutch for the step starting at t.
 *   The lock torque reaching T_s inside a step is located as well (event
 *   g1), so the clutch lets go at that time; it then slips away from zero
 *   in the direction of λ, so with T_s >= T_cap it does not chatter.
 *
 * Start mode: slipping, so that initial values may give the two sides
 * different speeds (an idling engine and a car at rest); with equal speeds
 * it locks at the first pre_step (see above). */
#include <drivegraph/block.h>
#include <math.h>
#include <stdio.h>

enum { PORT_IN, PORT_OUT };
enum { MODE_SLIPPING, MODE_LOCKED, NUM_MODES };
enum { ENGAGE_PEDAL, ENGAGE_AUTO };

enum { SIG_OMEGA, SIG_OMEGA_OUT, SIG_SLIP_RPM, SIG_TORQUE, SIG_LOCKED, SIG_ENGAGEMENT };

typedef struct clutch_params {
  double max_torque;
  double static_factor;
  double inertia;
  int mode;
  dg_table1d engagement;
  double idle_rpm;
  double launch_rpm;
  bool has_idle_rpm;
  bool has_launch_rpm;
} clutch_params;

typedef struct clutch_data {
  int mode;           /* MODE_* */
  int dir;            /* slip direction s for the step: -1, 0, +1 */
  bool just_released; /* unlocked in the last post_step: Δω = 0, dir from λ */
  bool have_lambda;   /* lambda holds a post_step value of the current lock */
  double lambda;      /* tie multiplier: torque the lock applies at `in` */
  int tie;            /* tie id in the locked mode, -1 otherwise */
  int cmd_dir;        /* slipping: sign of the shift command at the segment's start, 0 if
                         there is no capacity to gain or lose through its zero */
} clutch_data;

static const char *const clutch_modes_enum[] = {"pedal", "auto", NULL};
static const char *const clutch_mode_names[NUM_MODES] = {"slipping", "locked"};

static const dg_port_def clutch_ports[] = {
    {.name = "in", .dir = DG_PORT_IN, .domain = DG_ROTATIONAL, .doc = "engine side (flywheel)"},
    {.name = "out", .dir = DG_PORT_OUT, .domain = DG_ROTATIONAL,
     .doc = "gearbox side (driven plate)"},
    {0},
};

static const dg_param_def clutch_params_table[] = {
    DG_NUMBER(clutch_params, max_torque, .unit = "N*m", .required = true,
              .flags = DG_P_MIN_EXCL | DG_P_DYNAMICS,
              .doc = "kinetic (slipping) torque capacity at full engagement"),
    DG_NUMBER(clutch_params, static_factor, .unit = "", .def = 1.1,
              .flags = DG_P_MIN | DG_P_DYNAMICS, .min = 1,
              .doc = "static / kinetic capacity: a lock holds up to static_factor times the "
                     "slipping capacity"),
    DG_NUMBER(clutch_params, inertia, .unit = "kg*m^2", .def = 0.01,
              .flags = DG_P_MIN | DG_P_INERTIA, .doc = "driven plate inertia, on `out`"),
    {.key = "mode", .kind = DG_PARAM_ENUM, .offset = offsetof(clutch_params, mode), .unit = "",
     .doc = "pedal: engagement from the clutch pedal; auto: also rises with engine rpm from "
            "idle_rpm to launch_rpm",
     .def = ENGAGE_PEDAL, .choices = clutch_modes_enum, .flags = DG_P_DYNAMICS},
    {.key = "engagement", .kind = DG_PARAM_TABLE1D, .offset = offsetof(clutch_params, engagement),
     .unit = "", .doc = "engagement over pedal position (default 1 - pedal)",
     .flags = DG_P_MIN | DG_P_MAX | DG_P_DYNAMICS, .min = 0, .max = 1,
     .axis = {"pedal", "engagement"}},
    {.key = "idle_rpm", .kind = DG_PARAM_NUMBER, .offset = offsetof(clutch_params, idle_rpm),
     .unit = "rpm", .doc = "auto mode: engine speed below which the clutch is open", .def = 1000,
     .flags = DG_P_MIN | DG_P_DYNAMICS, .min = 0,
     .present = DG_PRESENT(clutch_params, has_idle_rpm)},
    {.key = "launch_rpm", .kind = DG_PARAM_NUMBER, .offset = offsetof(clutch_params, launch_rpm),
     .unit = "rpm", .doc = "auto mode: engine speed from which the clutch is fully engaged",
     .def = 2000, .flags = DG_P_MIN_EXCL | DG_P_DYNAMICS, .min = 0,
     .present = DG_PRESENT(clutch_params, has_launch_rpm)},
    {0},
};

enum { IN_PEDAL, IN_ENGAGEMENT };
static const dg_input_def clutch_inputs[] = {
    {.name = "pedal", .unit = "", .doc = "clutch pedal: 0 released (engaged) .. 1 pressed (open)",
     .source = "clutch", .flags = DG_P_MIN | DG_P_MAX, .min = 0, .max = 1},
    {.name = "engagement", .unit = "",
     .doc = "normalized normal force 0 (open) .. 1 (full capacity), multiplying the pedal's "
            "engagement: a shift element's command",
     .def = 1, .flags = DG_P_MIN | DG_P_MAX, .min = 0, .max = 1},
    {0},
};

static const dg_signal_def clutch_signals[] = {
    {.name = "omega", .unit = "rad/s", .doc = "engine-side speed", .port = PORT_IN, .scale = 1},
    {.name = "omega_out", .unit = "rad/s", .doc = "gearbox-side speed", .port = PORT_OUT,
     .scale = 1},
    {.name = "slip_rpm", .unit = "rpm", .doc = "engine side minus gearbox side",
     .port = DG_SIGNAL_HOOK},
    {.name = "torque", .unit = "N*m",
     .doc = "torque transmitted from in to out (locked: from the lock's multiplier)",
     .port = DG_SIGNAL_HOOK, .flags = DG_SIGNAL_FEEDTHROUGH},
    {.name = "locked", .unit = "", .doc = "1 when locked, 0 when slipping", .port = DG_SIGNAL_HOOK,
     .flags = DG_SIGNAL_BOOL},
    {.name = "engagement", .unit = "", .doc = "engagement 0..1 (capacity / max_torque)",
     .port = DG_SIGNAL_HOOK, .flags = DG_SIGNAL_FEEDTHROUGH},
    {0},
};

static void clutch_check(const void *params, dg_check *chk) {
  const clutch_params *p = params;
  for (int i = 0; i < p->engagement.n; i++) {
    double v = p->engagement.x[i];
    char path[64];
    snprintf(path, sizeof path, "engagement/pedal/%d", i);
    if (v < 0.0)
      dg_check_error(chk, path, "must be >= 0 (got %g)", v);
    else if (v > 1.0)
      dg_check_error(chk, path, "must be <= 1 (got %g)", v);
  }
  if (p->mode == ENGAGE_AUTO && !(p->launch_rpm > p->idle_rpm))
    dg_check_error(chk, "launch_rpm", "must be > idle_rpm (%g) (got %g)", p->idle_rpm,
                   p->launch_rpm);
  if (p->mode != ENGAGE_AUTO && p->has_idle_rpm)
    dg_check_error(chk, "idle_rpm", "only used with mode \"auto\"");
  if (p->mode != ENGAGE_AUTO && p->has_launch_rpm)
    dg_check_error(chk, "launch_rpm", "only used with mode \"auto\"");
}

/* The pedal's engagement in [0, 1] at a pedal position and an engine-side
 * speed (rad/s), before the shift command's factor. */
static double clutch_pedal_engagement(const clutch_params *p, double pedal, double w_in) {
  pedal = dg_clamp01(pedal);
  double e = p->engagement.n > 0 ? dg_table1d_eval(&p->engagement, pedal) : 1.0 - pedal;
  if (p->mode == ENGAGE_AUTO) {
    double x = dg_clamp01((w_in * DG_RPM_PER_RAD_S - p->idle_rpm) / (p->launch_rpm - p->idle_rpm));
    e *= x * x * (3.0 - 2.0 * x);
  }
  return dg_clamp01(e);
}

/* e in [0, 1] for a pedal position, a shift command and an engine-side
 * speed (rad/s). */
static double clutch_engagement(const clutch_params *p, double pedal, double force, double w_in) {
  return clutch_pedal_engagement(p, pedal, w_in) * dg_clamp01(force);
}

/* Kinetic capacity T_cap (N·m) at the context's inputs and speeds. */
static double clutch_capacity(const dg_block *self, const dg_ctx *ctx) {
  const clutch_params *p = self->params;
  return p->max_torque * clutch_engagement(p, dg_block_input(ctx, self, IN_PEDAL),
                                           dg_block_input(ctx, self, IN_ENGAGEMENT),
                                           dg_port_speed(ctx, self, PORT_IN));
}

/* The capacity for the hold's event function: T_cap, but with the shift
 * command unclamped below 0, so that where a command falls through 0 the
 * function crosses zero with a slope (and the solver's secant finds it in
 * a few tries) instead of becoming 0 on a stretch (a corner, found only by
 * halving). Its sign is the capacity's wherever that is > 0. */
static double clutch_event_capacity(const dg_block *self, const dg_ctx *ctx) {
  const clutch_params *p = self->params;
  double force = dg_block_input(ctx, self, IN_ENGAGEMENT);
  return p->max_torque *
         clutch_pedal_engagement(p, dg_block_input(ctx, self, IN_PEDAL),
                                 dg_port_speed(ctx, self, PORT_IN)) *
         (force < 1.0 ? force : 1.0);
}

static double clutch_slip(const dg_block *self, const dg_ctx *ctx) {
  return dg_port_speed(ctx, self, PORT_IN) - dg_port_speed(ctx, self, PORT_OUT);
}

static int clutch_init(dg_block *self, dg_init *init) {
  (void)init;
  clutch_data *d = self->data;
  d->mode = MODE_SLIPPING;
  d->tie = -1;
  return 0;
}

static int clutch_mode_count(const dg_block *self) {
  (void)self;
  return NUM_MODES;
}

static void clutch_mode_set(dg_block *self, int mode) {
  clutch_data *d = self->data;
  d->mode = mode == MODE_LOCKED ? MODE_LOCKED : MODE_SLIPPING;
}

static const char *clutch_mode_name(const dg_block *self, int mode) {
  (void)self;
  return mode >= 0 && mode < NUM_MODES ? clutch_mode_names[mode] : NULL;
}

static void clutch_state_upstream(dg_block *self, dg_topo *topo) {
  const clutch_params *p = self->params;
  clutch_data *d = self->data;
  dg_topo_dof(topo, self, PORT_IN);
  dg_topo_inertia(topo, self, PORT_OUT, p->inertia);
  d->tie = -1;
  if (d->mode == MODE_LOCKED) {
    d->tie = dg_topo_lock(topo, self, PORT_IN, PORT_OUT);
  }
}

/* `torque`: the transmitted torque until the lock's first multiplier. */
static void clutch_lock(clutch_data *d, dg_ctx *ctx, double torque) {
  d->mode = MODE_LOCKED;
  d->have_lambda = false;
  d->lambda = -torque;
  d->just_released = false;
  dg_ctx_request_topology(ctx);
}

static void clutch_release(clutch_data *d, dg_ctx *ctx, bool in_post_step) {
  d->mode = MODE_SLIPPING;
  d->dir = -dg_sign(d->lambda);
  d->just_released = in_post_step;
  dg_ctx_request_topology(ctx);
}

/* The sign of the shift command where the capacity turns through 0 with
 * it (the pedal's engagement > 0), else 0. */
static int clutch_command_dir(const dg_block *self, const dg_ctx *ctx) {
  const clutch_params *p = self->params;
  double force = dg_block_input(ctx, self, IN_ENGAGEMENT);
  if (!(clutch_pedal_engagement(p, dg_block_input(ctx, self, IN_PEDAL),
                                dg_port_speed(ctx, self, PORT_IN)) > 0.0))
    return 0;
  return dg_sign(force);
}

static void clutch_pre_step(dg_block *self, dg_ctx *ctx) {
  const clutch_params *p = self->params;
  clutch_data *d = self->data;
  double cap = clutch_capacity(self, ctx);
  d->cmd_dir = clutch_command_dir(self, ctx);
  if (d->mode == MODE_LOCKED) {
    /* New inputs, same state: the last post_step's λ against the new capacity. */
    if (!(cap > 0.0) || (d->have_lambda && fabs(d->lambda) > p->static_factor * cap))
      clutch_release(d, ctx, false);
    return;
  }
  double slip = clutch_slip(self, ctx);
  if (fabs(slip) > dg_slip_zero_tol(ctx, self, PORT_IN, PORT_OUT))
    d->dir = dg_sign(slip);
  else if (!d->just_released && cap > 0.0)
    clutch_lock(d, ctx, 0.0);
  else if (!d->just_released)
    d->dir = 0;
  d->just_released = false;
}

static void clutch_torque_downstream(dg_block *self, dg_ctx *ctx) {
  const clutch_data *d = self->data;
  if (d->mode == MODE_LOCKED || d->dir == 0)
    return;
  double t = clutch_capacity(self, ctx) * d->dir;
  dg_port_add_torque(ctx, self, PORT_IN, -t);
  dg_port_add_torque(ctx, self, PORT_OUT, t);
}

static void clutch_post_step(dg_block *self, dg_ctx *ctx) {
  const clutch_params *p = self->params;
  clutch_data *d = self->data;
  double cap = clutch_capacity(self, ctx);
  if (d->mode == MODE_LOCKED) {
    d->lambda = dg_ctx_tie_force(ctx, d->tie);
    d->have_lambda = true;
    if (!(cap > 0.0) || fabs(d->lambda) > p->static_factor * cap)
      clutch_release(d, ctx, true);
    return;
  }
  if (cap > 0.0 && d->dir != 0 &&
      clutch_slip(self, ctx) * d->dir <= dg_slip_zero_tol(ctx, self, PORT_IN, PORT_OUT))
    clutch_lock(d, ctx, cap * d->dir);
}

/* At a segment's start, with the tie forces of the mode just built: a
 * lock beyond T_s (or with no capacity) lets go there, not at the
 * segment's end — the slip closing where holding would take more than
 * T_s, a start already overloaded, a parallel element letting go. */
static void clutch_hold_check(dg_block *self, dg_ctx *ctx) {
  const clutch_params *p = self->params;
  clutch_data *d = self->data;
  if (d->mode != MODE_LOCKED)
    return;
  d->lambda = dg_ctx_tie_force(ctx, d->tie);
  d->have_lambda = true;
  double cap = clutch_capacity(self, ctx);
  if (!(cap > 0.0) || fabs(d->lambda) > p->static_factor * cap)
    clutch_release(d, ctx, true);
}

/* Switching conditions, located inside the step by the solver (post_step
 * then decides at their time):
 *   g0 = Δω · s while slipping with a direction and some capacity: the
 *        slip reaching zero (stick);
 *   g1 = T_s − |λ| while locked: the lock torque reaching the static
 *        capacity (unstick; also the capacity falling to zero);
 *   g0 = tol − |Δω| while slipping with no direction yet (both sides at
 *        one speed, no capacity): the slip leaving zero, so that the
 *        friction acts from then on (pre_step picks the direction) rather
 *        than from the next step;
 *   g2 = c · e_cmd while slipping, c the sign of the shift command e_cmd
 *        (input `engagement`) at the segment's start: the command passing
 *        through 0, where the capacity starts or stops (a lock at that
 *        moment when the sides turn together; otherwise a corner in the
 *        torque, which a segment must not straddle: RK4 and its dense
 *        output assume the torques smooth inside a segment).
 * g1 uses the capacity with the command unclamped below 0
 * (clutch_event_capacity), so it crosses zero with a slope. */
static int clutch_event_values(const dg_block *self, dg_ctx *ctx, double *g) {
  const clutch_params *p = self->params;
  const clutch_data *d = self->data;
  g[0] = g[1] = g[2] = 1.0;
  if (d->mode == MODE_LOCKED) {
    g[1] = p->static_factor * clutch_event_capacity(self, ctx) - fabs(dg_ctx_tie_force(ctx, d->tie));
    return 1;
  }
  int active = 0;
  if (d->cmd_dir != 0) {
    g[2] = d->cmd_dir * dg_block_input(ctx, self, IN_ENGAGEMENT);
    active = 1;
  }
  if (d->dir != 0 && clutch_capacity(self, ctx) > 0.0) {
    g[0] = clutch_slip(self, ctx) * d->dir;
    active = 1;
  } else if (d->dir == 0) {
    g[0] = dg_slip_zero_tol(ctx, self, PORT_IN, PORT_OUT) - fabs(clutch_slip(self, ctx));
    active = 1;
  }
  return active;
}

static double clutch_signal(const dg_block *self, const dg_ctx *ctx, int index) {
  const clutch_data *d = self->data;
  const clutch_params *p = self->params;
  double slip = clutch_slip(self, ctx);
  switch (index) {
  case SIG_SLIP_RPM:
    return slip * DG_RPM_PER_RAD_S;
  case SIG_TORQUE: {
    if (d->mode == MODE_LOCKED)
      return -d->lambda;
    int s = fabs(slip) > dg_slip_zero_tol(ctx, self, PORT_IN, PORT_OUT) ? dg_sign(slip) : d->dir;
    return clutch_capacity(self, ctx) * s;
  }
  case SIG_LOCKED:
    return d->mode == MODE_LOCKED ? 1.0 : 0.0;
  case SIG_ENGAGEMENT:
    return clutch_engagement(p, dg_block_input(ctx, self, IN_PEDAL),
                             dg_block_input(ctx, self, IN_ENGAGEMENT),
                             dg_port_speed(ctx, self, PORT_IN));
  default:
    return NAN;
  }
}

const dg_block_class dg_block_clutch = {
    .abi = DG_BLOCK_ABI,
    .type = "clutch",
    .doc = "Friction clutch with stick-slip: capacity max_torque x engagement, engagement from "
           "the clutch pedal (optional curve) or automatic with engine rpm; locks when the slip "
           "crosses zero, unlocks when the lock torque exceeds static_factor x capacity.",
    .ports = clutch_ports,
    .params = clutch_params_table,
    .params_size = sizeof(clutch_params),
    .signals = clutch_signals,
    .inputs = clutch_inputs,
    .data_size = sizeof(clutch_data),
    .check = clutch_check,
    .init = clutch_init,
    .mode_count = clutch_mode_count,
    .mode_set = clutch_mode_set,
    .mode_name = clutch_mode_name,
    .pre_step = clutch_pre_step,
    .state_upstream = clutch_state_upstream,
    .torque_downstream = clutch_torque_downstream,
    .post_step = clutch_post_step,
    .hold_check = clutch_hold_check,
    .signal = clutch_signal,
    .num_events = 3,
    .event_values = clutch_event_values,
};
