/* differential — splits one input shaft into two outputs (axle or centre).
 *
 * Ports: `in` (input shaft, toward the source), `left` and `right` (outputs,
 * toward the road; for a centre differential left = front, right = rear),
 * and the internal node `carrier` (the ring gear / carrier, used by
 * clutch_lsd to measure the torque it carries).
 *
 * Kinematics, with ratio r and torque split s (share of torque to `left`):
 *   ω_carrier = s · ω_left + (1 − s) · ω_right,   ω_in = r · ω_carrier
 * By virtual work a torque T at `in` reaches the outputs as
 *   T_left = r·s·T,  T_right = r·(1 − s)·T
 * (s = 0.5 is the usual axle differential; a centre differential may bias).
 * `efficiency` applies between `in` and the outputs; the carrier inertia
 * sits on the input shaft.
 *
 * Sign convention for the torque between the outputs: `locking_torque` is
 * the torque the lock, coupling or clutch pack adds to `left`; it takes the
 * same torque from `right`. The two outputs then receive
 *   T_left = s·T_c + L,   T_right = (1 − s)·T_c − L
 * where T_c is the carrier torque (sum of both outputs' torques), so the
 * torque difference between the sides (the bias) is 2·|L| for s = 0.5.
 *
 * kind "open": the outputs turn freely relative to each other (two DOFs
 * below the input when both sides have inertia); L = 0.
 * kind "locked": in addition the tie ω_left − ω_right = 0 (a spool). Its
 * multiplier is L; positive when it speeds up the left side.
 * kind "viscous": a viscous coupling between the outputs,
 *   L = −c · (ω_left − ω_right)   (c = viscous_coefficient, N·m·s/rad),
 * added at every RK4 substep. It dissipates c·Δω² (Δω = ω_left − ω_right),
 * booked to this block by the energy audit. The coupling is stiff when
 * c·dt is not small against the outputs' inertia (RK4 is stable for
 * c·dt·(1/I_left + 1/I_right) < 2.78).
 * kind "clutch_lsd": a clutch pack between the outputs with capacity
 *   C = preload + ramp · |T_c|,   ramp = power_ramp if T_c·ω_carrier ≥ 0
 *                                        (the input drives), else coast_ramp,
 * and stick–slip like a clutch:
 *   locked   — the tie ω_left − ω_right = 0; its multiplier is L. When
 *              |L| > C at the end of a step the pack slips: mode slipping,
 *              slip direction d = −sign(L) (the side the lock was holding
 *              back runs ahead).
 *   slipping — the outputs are free; L = −C·d, a friction torque C from
 *              the faster to the slower side (d = sign(ω_left − ω_right),
 *              held for the whole slipping phase so that RK4 sees a smooth
 *              torque). When Δω crosses zero (d·Δω < 0 after a step) the
 *              pack locks; if the lock then needs more than C at the end
 *              of the next step it slips again.
 * The input torque T_c for the ramps is measured, not guessed: for
 * clutch_lsd the carrier is its own DOF tied to the outputs by
 *   ω_carrier − s·ω_left − (1 − s)·ω_right = 0,
 * and the multiplier λ_c of that tie (dg_ctx_tie_force) is the torque the
 * outputs push back on the carrier, so T_c = −λ_c = T_left + T_right: the
 * torque actually transmitted (after efficiency, without the torque that
 * accelerates the carrier). It is read in post_step, so the capacity used
 * by the friction torque during a step is the one of the end of the
 * previous step (a one-step lag); the unlock test uses the fresh value.
 * Limitation of that construction: the efficiency path factor of blocks
 * below the outputs (a lossy hub gear) does not reach blocks above a
 * clutch_lsd; the differential's own efficiency does. */
#include <drivegraph/block.h>
#include <math.h>

enum { PORT_IN, PORT_LEFT, PORT_RIGHT, PORT_CARRIER };
enum { KIND_OPEN, KIND_LOCKED, KIND_VISCOUS, KIND_CLUTCH_LSD };
enum { MODE_LOCKED, MODE_SLIPPING }; /* clutch_lsd */
enum { /* signal table order */
       SIG_OMEGA,
       SIG_SPEED_DIFF,
       SIG_LOCKING_TORQUE,
       SIG_CAPACITY,
       SIG_INPUT_TORQUE,
       SIG_LOCKED
};

/* The lock of a clutch_lsd slips when |L| exceeds the capacity by more than
 * round-off: multipliers come out of a linear solve with a relative error
 * near 1e-13 of the torques involved, so 1e-9 relative (plus 1e-9 N·m for a
 * zero capacity at rest) is far above noise and far below any real torque. */
#define LOCK_TOL_REL 1e-9
#define LOCK_TOL_ABS 1e-9

typedef struct diff_params {
  int kind;
  double ratio;
  double split;
  double efficiency;
  double inertia;
  double viscous_coefficient;
  double preload;
  double power_ramp;
  double coast_ramp;
  bool has_viscous, has_preload, has_power_ramp, has_coast_ramp;
} diff_params;

typedef struct diff_data {
  int lock_tie;          /* ω_left − ω_right = 0, or -1 */
  int carrier_tie;       /* carrier kinematics as a tie (clutch_lsd), or -1 */
  int mode;              /* clutch_lsd: MODE_LOCKED or MODE_SLIPPING */
  double dir;            /* clutch_lsd slipping: sign of ω_left − ω_right (±1) */
  double locking_torque; /* locked: last multiplier of lock_tie */
  double input_torque;   /* clutch_lsd: T_c at the end of the last step */
  double capacity;       /* clutch_lsd: capacity from input_torque */
} diff_data;

static const char *const diff_kinds[] = {"open", "locked", "viscous", "clutch_lsd", NULL};

static const dg_port_def diff_ports[] = {
    {.name = "in", .dir = DG_PORT_IN, .domain = DG_ROTATIONAL, .doc = "input shaft"},
    {.name = "left", .dir = DG_PORT_OUT, .domain = DG_ROTATIONAL, .doc = "left (or front) output"},
    {.name = "right", .dir = DG_PORT_OUT, .domain = DG_ROTATIONAL, .doc = "right (or rear) output"},
    {.name = "carrier", .dir = DG_PORT_INTERNAL, .domain = DG_ROTATIONAL,
     .doc = "carrier (ring gear): s*left + (1-s)*right"},
    {0},
};

static const dg_param_def diff_params_table[] = {
    {.key = "kind", .kind = DG_PARAM_ENUM, .offset = offsetof(diff_params, kind), .unit = "",
     .doc = "open: outputs free relative to each other; locked: outputs tied (spool); viscous: "
            "viscous coupling between the outputs; clutch_lsd: clutch pack with preload and ramps",
     .def = KIND_OPEN, .choices = diff_kinds},
    DG_NUMBER(diff_params, ratio, .unit = "", .def = 1.0, .flags = DG_P_MIN_EXCL,
              .doc = "input speed / carrier speed"),
    DG_NUMBER(diff_params, split, .unit = "", .def = 0.5, .flags = DG_P_MIN_EXCL | DG_P_MAX_EXCL,
              .max = 1, .doc = "share of the input torque sent to the left output"),
    DG_NUMBER(diff_params, efficiency, .unit = "", .def = 1.0,
              .flags = DG_P_MIN_EXCL | DG_P_MAX | DG_P_DYNAMICS, .max = 1,
              .doc = "power efficiency from input to outputs"),
    DG_NUMBER(diff_params, inertia, .unit = "kg*m^2", .flags = DG_P_MIN | DG_P_INERTIA,
              .doc = "carrier inertia on the input shaft"),
    {.key = "viscous_coefficient", .kind = DG_PARAM_NUMBER,
     .offset = offsetof(diff_params, viscous_coefficient), .unit = "N*m*s/rad",
     .doc = "viscous: torque moved from the faster to the slower output per unit speed "
            "difference",
     .flags = DG_P_MIN | DG_P_DYNAMICS, .min = 0, .present = DG_PRESENT(diff_params, has_viscous)},
    {.key = "preload", .kind = DG_PARAM_NUMBER, .offset = offsetof(diff_params, preload),
     .unit = "N*m", .doc = "clutch_lsd: clutch-pack capacity with no input torque",
     .flags = DG_P_MIN | DG_P_DYNAMICS, .min = 0, .present = DG_PRESENT(diff_params, has_preload)},
    {.key = "power_ramp", .kind = DG_PARAM_NUMBER, .offset = offsetof(diff_params, power_ramp),
     .unit = "", .doc = "clutch_lsd: capacity per N*m of carrier torque while the input drives "
                        "(0.5 holds the outputs together under power at split 0.5)",
     .flags = DG_P_MIN | DG_P_MAX | DG_P_DYNAMICS, .min = 0, .max = 1,
     .present = DG_PRESENT(diff_params, has_power_ramp)},
    {.key = "coast_ramp", .kind = DG_PARAM_NUMBER, .offset = offsetof(diff_params, coast_ramp),
     .unit = "", .doc = "clutch_lsd: capacity per N*m of carrier torque while coasting (the "
                        "input brakes)",
     .flags = DG_P_MIN | DG_P_MAX | DG_P_DYNAMICS, .min = 0, .max = 1,
     .present = DG_PRESENT(diff_params, has_coast_ramp)},
    {0},
};

static const dg_signal_def diff_signals[] = {
    {.name = "omega", .unit = "rad/s", .doc = "input shaft speed", .port = PORT_IN, .scale = 1},
    {.name = "speed_diff", .unit = "rad/s", .doc = "left minus right output speed",
     .port = DG_SIGNAL_HOOK},
    {.name = "locking_torque", .unit = "N*m",
     .doc = "torque the lock, coupling or clutch pack adds to the left output (and takes from "
            "the right); 0 when open",
     .port = DG_SIGNAL_HOOK},
    {.name = "capacity", .unit = "N*m",
     .doc = "clutch_lsd: clutch-pack capacity preload + ramp*abs(input_torque) (0 for other kinds)",
     .port = DG_SIGNAL_HOOK},
    {.name = "input_torque", .unit = "N*m",
     .doc = "clutch_lsd: carrier torque = sum of the outputs' torques, at the end of the last "
            "step (0 for other kinds)",
     .port = DG_SIGNAL_HOOK},
    {.name = "locked", .unit = "", .doc = "1 while the outputs are tied together, else 0",
     .port = DG_SIGNAL_HOOK, .flags = DG_SIGNAL_BOOL},
    {0},
};

static void diff_check(const void *params, dg_check *chk) {
  const diff_params *p = params;
  const char *kind = diff_kinds[p->kind];
  if (p->kind == KIND_VISCOUS && !p->has_viscous)
    dg_check_error(chk, "viscous_coefficient",
                   "missing required number (N*m*s/rad) for kind \"viscous\"");
  if (p->kind != KIND_VISCOUS && p->has_viscous)
    dg_check_error(chk, "viscous_coefficient", "only used by kind \"viscous\" (kind is \"%s\")",
                   kind);
  if (p->kind != KIND_CLUTCH_LSD) {
    const struct {
      bool given;
      const char *key;
    } lsd[] = {{p->has_preload, "preload"},
               {p->has_power_ramp, "power_ramp"},
               {p->has_coast_ramp, "coast_ramp"}};
    for (size_t i = 0; i < sizeof lsd / sizeof lsd[0]; i++)
      if (lsd[i].given)
        dg_check_error(chk, lsd[i].key, "only used by kind \"clutch_lsd\" (kind is \"%s\")",
                       kind);
  }
}

/* C = preload + ramp · |T_c|: power ramp while the input drives the carrier
 * (T_c·ω_c ≥ 0), coast ramp while it brakes it. */
static double lsd_capacity(const diff_params *p, double t_c, double w_c) {
  double ramp = t_c * w_c >= 0.0 ? p->power_ramp : p->coast_ramp;
  return p->preload + ramp * fabs(t_c);
}

static void diff_state_upstream(dg_block *self, dg_topo *topo) {
  const diff_params *p = self->params;
  diff_data *d = self->data;
  const int outs[2] = {PORT_LEFT, PORT_RIGHT};
  const double lock[2] = {1.0, -1.0};
  d->lock_tie = -1;
  d->carrier_tie = -1;
  if (p->kind == KIND_CLUTCH_LSD) {
    /* the carrier is a DOF tied to the outputs, so that the tie's
     * multiplier measures the carrier torque */
    const int ports[3] = {PORT_CARRIER, PORT_LEFT, PORT_RIGHT};
    const double kin[3] = {1.0, -p->split, -(1.0 - p->split)};
    dg_topo_dof(topo, self, PORT_CARRIER);
    d->carrier_tie = dg_topo_tie(topo, self, 3, ports, kin);
    dg_topo_ratio(topo, self, PORT_IN, PORT_CARRIER, p->ratio, p->efficiency);
    if (d->mode == MODE_LOCKED)
      d->lock_tie = dg_topo_tie(topo, self, 2, outs, lock);
  } else {
    const double coef[2] = {p->ratio * p->split, p->ratio * (1.0 - p->split)};
    const double carrier[2] = {p->split, 1.0 - p->split};
    dg_topo_link(topo, self, PORT_IN, 2, outs, coef, p->efficiency);
    dg_topo_link(topo, self, PORT_CARRIER, 2, outs, carrier, 1.0);
    if (p->kind == KIND_LOCKED)
      d->lock_tie = dg_topo_tie(topo, self, 2, outs, lock);
  }
  dg_topo_inertia(topo, self, PORT_IN, p->inertia);
}

/* The torque added to `left` by the coupling or the slipping pack (taken
 * from `right`) at the given speeds. */
static double coupling_torque(const diff_params *p, const diff_data *d, double dw) {
  if (p->kind == KIND_VISCOUS)
    return 0.0 - p->viscous_coefficient * dw;
  if (p->kind == KIND_CLUTCH_LSD && d->mode == MODE_SLIPPING)
    return 0.0 - d->capacity * d->dir;
  return 0.0;
}

static void diff_torque_downstream(dg_block *self, dg_ctx *ctx) {
  const diff_params *p = self->params;
  const diff_data *d = self->data;
  double dw = dg_port_speed(ctx, self, PORT_LEFT) - dg_port_speed(ctx, self, PORT_RIGHT);
  double t = coupling_torque(p, d, dw);
  if (t != 0.0) {
    dg_port_add_torque(ctx, self, PORT_LEFT, t);
    dg_port_add_torque(ctx, self, PORT_RIGHT, -t);
  }
}

static void lsd_post_step(dg_block *self, dg_ctx *ctx) {
  const diff_params *p = self->params;
  diff_data *d = self->data;
  double t_c = -dg_ctx_tie_force(ctx, d->carrier_tie);
  d->input_torque = t_c;
  d->capacity = lsd_capacity(p, t_c, dg_port_speed(ctx, self, PORT_CARRIER));
  double dw = dg_port_speed(ctx, self, PORT_LEFT) - dg_port_speed(ctx, self, PORT_RIGHT);
  if (d->mode == MODE_LOCKED) {
    double lam = dg_ctx_tie_force(ctx, d->lock_tie);
    d->locking_torque = lam;
    double tol = LOCK_TOL_ABS + LOCK_TOL_REL * (fabs(t_c) + fabs(lam));
    if (fabs(lam) > d->capacity + tol) {
      d->mode = MODE_SLIPPING;
      d->dir = lam > 0.0 ? -1.0 : 1.0; /* the side the lock held back runs ahead */
      dg_ctx_request_topology(ctx);
    }
  } else if (d->dir * dw < 0.0) {
    /* the slip crossed zero during the step: lock (a plastic impact of the
     * small remaining slip); the next post_step checks the capacity */
    d->mode = MODE_LOCKED;
    d->locking_torque = -d->capacity * d->dir;
    dg_ctx_request_topology(ctx);
  }
}

/* At a segment's start, with the tie forces of the mode just built: a
 * clutch pack's lock beyond the capacity its input torque gives lets go
 * there (the start, a pack locked where the torque already exceeds it),
 * not at the segment's end. */
static void diff_hold_check(dg_block *self, dg_ctx *ctx) {
  const diff_params *p = self->params;
  diff_data *d = self->data;
  if (p->kind == KIND_CLUTCH_LSD && d->mode == MODE_LOCKED)
    lsd_post_step(self, ctx);
}

/* Clutch-pack LSD switching conditions, located inside the step: the
 * slipping speed difference reaching zero (g0 = s · Δω, s the direction
 * it slips in), and the lock's torque reaching the capacity its input
 * torque gives (g1 = C(T_c) + tol − |λ|). */
static int diff_event_values(const dg_block *self, dg_ctx *ctx, double *g) {
  const diff_params *p = self->params;
  const diff_data *d = self->data;
  g[0] = g[1] = 1.0;
  if (p->kind != KIND_CLUTCH_LSD)
    return 0;
  if (d->mode == MODE_LOCKED) {
    double t_c = -dg_ctx_tie_force(ctx, d->carrier_tie);
    double lam = dg_ctx_tie_force(ctx, d->lock_tie);
    double cap = lsd_capacity(p, t_c, dg_port_speed(ctx, self, PORT_CARRIER));
    g[1] = cap + LOCK_TOL_ABS + LOCK_TOL_REL * (fabs(t_c) + fabs(lam)) - fabs(lam);
    return 1;
  } else if (d->dir != 0.0) {
    g[0] = d->dir * (dg_port_speed(ctx, self, PORT_LEFT) - dg_port_speed(ctx, self, PORT_RIGHT));
    return 1;
  }
  return 0;
}

static void diff_post_step(dg_block *self, dg_ctx *ctx) {
  const diff_params *p = self->params;
  diff_data *d = self->data;
  if (p->kind == KIND_CLUTCH_LSD)
    lsd_post_step(self, ctx);
  else if (p->kind == KIND_LOCKED)
    d->locking_torque = dg_ctx_tie_force(ctx, d->lock_tie);
}

static double diff_signal(const dg_block *self, const dg_ctx *ctx, int index) {
  const diff_params *p = self->params;
  const diff_data *d = self->data;
  double dw = dg_port_speed(ctx, self, PORT_LEFT) - dg_port_speed(ctx, self, PORT_RIGHT);
  bool lsd = p->kind == KIND_CLUTCH_LSD;
  bool locked = p->kind == KIND_LOCKED || (lsd && d->mode == MODE_LOCKED);
  switch (index) {
  case SIG_SPEED_DIFF:
    return dw;
  case SIG_LOCKING_TORQUE:
    return locked ? d->locking_torque : coupling_torque(p, d, dw);
  case SIG_CAPACITY:
    return lsd ? d->capacity : 0.0;
  case SIG_INPUT_TORQUE:
    return lsd ? d->input_torque : 0.0;
  case SIG_LOCKED:
    return locked ? 1.0 : 0.0;
  default:
    return 0.0;
  }
}

static int diff_mode_count(const dg_block *self) {
  const diff_params *p = self->params;
  return p->kind == KIND_CLUTCH_LSD ? 2 : 1;
}

static void diff_mode_set(dg_block *self, int mode) {
  diff_data *d = self->data;
  d->mode = mode;
  d->dir = 1.0;
}

static const char *diff_mode_name(const dg_block *self, int mode) {
  (void)self;
  return mode == MODE_LOCKED ? "locked" : "slipping";
}

static int diff_init(dg_block *self, dg_init *init) {
  const diff_params *p = self->params;
  diff_data *d = self->data;
  d->lock_tie = -1;
  d->carrier_tie = -1;
  d->mode = MODE_LOCKED;
  d->dir = 1.0;
  d->capacity = p->kind == KIND_CLUTCH_LSD ? p->preload : 0.0;
  /* only a clutch pack decides and has events; only a coupling or a
   * pack adds torque; a locked one reads its lock's torque after a segment */
  unsigned idle = 0;
  if (p->kind != KIND_CLUTCH_LSD)
    idle |= DG_HOOK_EVENTS | DG_HOOK_HOLD_CHECK;
  if (p->kind != KIND_CLUTCH_LSD && p->kind != KIND_VISCOUS)
    idle |= DG_HOOK_TORQUE;
  if (p->kind != KIND_CLUTCH_LSD && p->kind != KIND_LOCKED)
    idle |= DG_HOOK_POST_STEP;
  dg_init_idle(init, idle);
  return 0;
}

const dg_block_class dg_block_differential = {
    .abi = DG_BLOCK_ABI,
    .type = "differential",
    .doc = "Differential: open, locked, viscous coupling or clutch-pack LSD (preload, power and "
           "coast ramps, stick-slip), with ratio, torque split, efficiency and carrier inertia.",
    .ports = diff_ports,
    .params = diff_params_table,
    .params_size = sizeof(diff_params),
    .signals = diff_signals,
    .data_size = sizeof(diff_data),
    .check = diff_check,
    .init = diff_init,
    .mode_count = diff_mode_count,
    .mode_set = diff_mode_set,
    .mode_name = diff_mode_name,
    .state_upstream = diff_state_upstream,
    .torque_downstream = diff_torque_downstream,
    .post_step = diff_post_step,
    .hold_check = diff_hold_check,
    .num_events = 2,
    .event_values = diff_event_values,
    .signal = diff_signal,
};
