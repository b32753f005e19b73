/* planetary — a simple planetary gear set: sun, planet carrier, ring.
 *
 * Ports: `sun`, `carrier`, `ring`, each of direction any: a member drives
 * or is driven as the connections make it (a member held by a brake, two
 * members joined by a clutch, a member left unconnected turning freely).
 * Each member's inertia (`sun_inertia`, `carrier_inertia`, `ring_inertia`)
 * sits on its port; the planets' own inertia is not modelled.
 *
 * Kinematics (Willis), exact: with S = sun_teeth, R = ring_teeth,
 *   S·ω_s + R·ω_r − (S + R)·ω_c = 0,
 * declared as one tie over the three members, each a DOF of its own
 * (dg_topo_dof; a member that another block already gives a speed keeps
 * it). Normalized, with k_s = S/(S+R), k_r = R/(S+R) (k_s + k_r = 1):
 *   k_s·ω_s + k_r·ω_r − ω_c = 0.
 * So, for each member held:
 *   ring held:    ω_c/ω_s = S/(S+R)          (reduction, same direction)
 *   carrier held: ω_r/ω_s = −S/R             (reverse)
 *   sun held:     ω_c/ω_r = R/(S+R)          (reduction, same direction)
 * and with two members joined all three turn together (ratio 1).
 *
 * Torques. The tie's multiplier λ (dg_ctx_tie_force) is the generalized
 * force along its coefficient vector (k_s, k_r, −1): the gear set applies
 *   τ_s = k_s·λ at the sun,  τ_r = k_r·λ at the ring,  τ_c = −λ at the carrier,
 * each with dg_port_add_torque's sign (positive accelerates that member
 * forward). Hence τ_s : τ_r : τ_c = S : R : −(S+R) at every instant, the
 * three sum to zero (no housing reaction) and their power
 * λ·(k_s ω_s + k_r ω_r − ω_c) is zero: the ideal gear set neither stores
 * nor dissipates energy. The carrier torque is −λ: λ > 0 when the carrier
 * drives (the gear set pushes it back) — for a sun-driven reduction with
 * the ring held, the sun's driver applies +T, the gear set τ_s = −T (at
 * rest or with massless members) and the carrier receives
 * (S+R)/S·T, the ring's holder R/S·T.
 * The signals show λ at the end of the last step (post_step), as a
 * clutch's lock torque.
 *
 * Efficiency. Losses follow the power in the carrier's frame, the meshing
 * power P_m = k_s λ (ω_s − ω_c) = −k_r λ (ω_r − ω_c) that the planets pass
 * between sun and ring: the set loses (1 − η)|P_m| (η = `efficiency`, the
 * basic ratio's efficiency with the carrier held), not (1 − η) of the
 * power through any one member. The tie is a lossy mesh
 * (dg_topo_tie_lossy) with side a the sun relative to the carrier,
 * k_s (ω_s − ω_c), and side b the ring relative to the carrier; the side
 * that gives the meshing power drives, and the ring's share of the tie
 * force is scaled by f = 1/η when the ring drives in that frame, η when
 * the sun does (dg_ctx_tie_factor):
 *   τ_s = k_s λ,  τ_r = f k_r λ,  τ_c = −(k_s + f k_r) λ.
 * So with the ring held and the sun driving, the carrier gets
 * (1 + η R/S)·T: the textbook efficiency (1 + η R/S)/(1 + R/S) of that
 * reduction; with two members joined the planets do not move relative to
 * the carrier and nothing is lost; where power recirculates through a set
 * (a power-split mode), P_m can exceed the power through the set, and so
 * can the loss.
 *
 * The stuck mode (`self_locking`, with efficiency < 1; as the gear's,
 * blocks/gear.c): at rest in the carrier's frame the meshes hold while
 * neither the sun side nor the ring side can drive the other through
 * them. Written with the mesh loads a = τ_s/k_s and b = τ_r/k_r (the
 * gear set's torques on sun and ring, per unit of their coefficients):
 * rolling, the meshes give b = η a (the sun drives in the carrier's
 * frame) or b = a/η (the ring drives); static friction gives any
 * b/a in [η, 1/η] of one sign. So with a' = σ a, b' = σ b,
 * σ = sign(a + b), the excess
 *   e = max(η a' − b', η b' − a')
 * is <= 0 while the meshes can hold (e > 0: a side drives, or the two
 * push the planets the same way). Modes (index 0 is the start mode):
 *   0 rolling: the lossy Willis tie;
 *   1 stuck: the plain Willis tie (multiplier λ: k_s λ at the sun, k_r λ
 *     at the ring, −λ at the carrier) and the tie ω_s − ω_c = 0
 *     (multiplier μ: μ at the sun, −μ at the carrier): the three members
 *     turn as one, and τ_s = k_s λ + μ, τ_r = k_r λ. No relative motion,
 *     so nothing is lost.
 * rolling → stuck: the relative speed ω_s − ω_c reaches zero (event
 *   g0 = (ω_s − ω_c)·s − tol, s its sign at the segment's start, located
 *   inside the step), or is found at rest in pre_step; the stuck mode's
 *   forces then decide at once (hold_check, at the next segment's start)
 *   whether it stays.
 * stuck → rolling: e above 0.5 tol_T, tol_T = 1e-9 (|a| + |b|) + 1e-9 N·m
 *   (event g1 = tol_T − e; hold_check at a segment's start; post_step),
 *   the loss room then finding the direction of the meshing power; at the
 *   instant it lets go pre_step does not stick it again. Without the stuck
 *   mode a set at rest in its frame under loads inside the band finds no
 *   consistent direction of power flow and chatters (amplitude ∝ dt). */
#include <drivegraph/block.h>
#include <math.h>

enum { PORT_SUN, PORT_CARRIER, PORT_RING };
enum {
  SIG_SUN_RPM,
  SIG_CARRIER_RPM,
  SIG_RING_RPM,
  SIG_SUN_TORQUE,
  SIG_CARRIER_TORQUE,
  SIG_RING_TORQUE,
  SIG_CARRIER_SUN,
  SIG_RING_SUN,
  SIG_CARRIER_RING,
  SIG_STUCK
};
/* A speed ratio of a member at rest (|ω| below this, rad/s) reads 0. */
#define RATIO_REST 1e-9
enum { MODE_ROLLING, MODE_STUCK, NUM_MODES };
#define TORQUE_REL_TOL 1e-9
#define TORQUE_ABS_TOL 1e-9

typedef struct planetary_params {
  double sun_teeth, ring_teeth;
  double sun_inertia, carrier_inertia, ring_inertia;
  double efficiency;
  bool self_locking;
} planetary_params;

typedef struct planetary_data {
  double ks, kr;   /* S/(S+R), R/(S+R) */
  double lambda;   /* the tie's multiplier at the last post_step */
  double factor;   /* the ring's factor then (1, η or 1/η) */
  int tie;
  int mode;           /* MODE_* */
  int tie_lock;       /* stuck: ω_s − ω_c = 0, else −1 */
  double mu;          /* its multiplier at the last post_step */
  int dir;            /* sign of ω_s − ω_c at the segment's start (0: at rest) */
  double rest_tol;    /* rest in the carrier's frame, for the segment */
  bool just_released; /* let go at this instant: not stuck again at once */
} planetary_data;

static const char *const planetary_mode_names[NUM_MODES] = {"rolling", "stuck"};

static const dg_port_def planetary_ports[] = {
    {.name = "sun", .dir = DG_PORT_ANY, .domain = DG_ROTATIONAL, .optional = true,
     .doc = "sun gear (drives or is driven)"},
    {.name = "carrier", .dir = DG_PORT_ANY, .domain = DG_ROTATIONAL, .optional = true,
     .doc = "planet carrier (drives or is driven)"},
    {.name = "ring", .dir = DG_PORT_ANY, .domain = DG_ROTATIONAL, .optional = true,
     .doc = "ring gear (drives or is driven)"},
    {0},
};

static const dg_param_def planetary_params_table[] = {
    DG_NUMBER(planetary_params, sun_teeth, .unit = "", .required = true, .flags = DG_P_MIN_EXCL,
              .doc = "teeth of the sun gear (or any number in proportion to them)"),
    DG_NUMBER(planetary_params, ring_teeth, .unit = "", .required = true, .flags = DG_P_MIN_EXCL,
              .doc = "teeth of the ring gear (> sun_teeth)"),
    DG_NUMBER(planetary_params, sun_inertia, .unit = "kg*m^2", .flags = DG_P_MIN | DG_P_INERTIA,
              .doc = "inertia of the sun gear, on `sun`"),
    DG_NUMBER(planetary_params, carrier_inertia, .unit = "kg*m^2", .flags = DG_P_MIN | DG_P_INERTIA,
              .doc = "inertia of the carrier, on `carrier`"),
    DG_NUMBER(planetary_params, ring_inertia, .unit = "kg*m^2", .flags = DG_P_MIN | DG_P_INERTIA,
              .doc = "inertia of the ring gear, on `ring`"),
    DG_NUMBER(planetary_params, efficiency, .unit = "", .def = 1.0,
              .flags = DG_P_MIN_EXCL | DG_P_MAX | DG_P_DYNAMICS, .max = 1,
              .doc = "efficiency of the sun-planet-ring meshes in the carrier's frame (of the "
                     "basic ratio with the carrier held): the set loses (1 - efficiency) of the "
                     "meshing power"),
    /* structural: the stuck mode */
    {.key = "self_locking",
     .kind = DG_PARAM_BOOL,
     .offset = offsetof(planetary_params, self_locking),
     .unit = "",
     .doc = "at rest in the carrier's frame, the meshes hold (the three members turn as one) "
            "while neither sun nor ring can drive the other through their losses (as a gear's "
            "self_locking; needs efficiency < 1)",
     .def = 0},
    {0},
};

static const dg_signal_def planetary_signals[] = {
    {.name = "sun_rpm",
     .unit = "rpm",
     .doc = "sun speed",
     .port = PORT_SUN,
     .scale = DG_RPM_PER_RAD_S},
    {.name = "carrier_rpm",
     .unit = "rpm",
     .doc = "carrier speed",
     .port = PORT_CARRIER,
     .scale = DG_RPM_PER_RAD_S},
    {.name = "ring_rpm",
     .unit = "rpm",
     .doc = "ring speed",
     .port = PORT_RING,
     .scale = DG_RPM_PER_RAD_S},
    {.name = "sun_torque",
     .unit = "N*m",
     .doc = "torque the gear set applies to the sun, S/(S+R) x lambda (at the last step's end)",
     .port = DG_SIGNAL_HOOK},
    {.name = "carrier_torque",
     .unit = "N*m",
     .doc = "torque the gear set applies to the carrier, -(S + f R)/(S+R) x lambda, f the "
            "ring's loss factor (at the last step's end)",
     .port = DG_SIGNAL_HOOK},
    {.name = "ring_torque",
     .unit = "N*m",
     .doc = "torque the gear set applies to the ring, f R/(S+R) x lambda, f = 1 lossless, "
            "1/efficiency when the ring drives in the carrier's frame, efficiency when the sun "
            "does (at the last step's end)",
     .port = DG_SIGNAL_HOOK},
    {.name = "carrier_sun",
     .unit = "",
     .doc = "speed ratio carrier / sun (0 with the sun at rest)",
     .port = DG_SIGNAL_HOOK},
    {.name = "ring_sun",
     .unit = "",
     .doc = "speed ratio ring / sun (0 with the sun at rest)",
     .port = DG_SIGNAL_HOOK},
    {.name = "carrier_ring",
     .unit = "",
     .doc = "speed ratio carrier / ring (0 with the ring at rest)",
     .port = DG_SIGNAL_HOOK},
    {.name = "stuck",
     .unit = "",
     .doc = "1 while the meshes hold in the carrier's frame (stuck mode), else 0",
     .port = DG_SIGNAL_HOOK,
     .flags = DG_SIGNAL_BOOL},
    {0},
};

static void planetary_check(const void *params, dg_check *chk) {
  const planetary_params *p = params;
  if (p->sun_teeth > 0.0 && !(p->ring_teeth > p->sun_teeth))
    dg_check_error(chk, "ring_teeth", "must be > sun_teeth (%g) (got %g)", p->sun_teeth,
                   p->ring_teeth);
}

static bool planetary_sticks(const planetary_params *p);

static int planetary_init(dg_block *self, dg_init *init) {
  const planetary_params *p = self->params;
  planetary_data *d = self->data;
  d->ks = p->sun_teeth / (p->sun_teeth + p->ring_teeth);
  d->kr = p->ring_teeth / (p->sun_teeth + p->ring_teeth);
  d->tie = d->tie_lock = -1;
  d->factor = 1.0;
  d->mode = MODE_ROLLING;
  /* a set that cannot stick has nothing to decide (post_step still reads
   * its forces for the signals) */
  if (!planetary_sticks(p))
    dg_init_idle(init, DG_HOOK_PRE_STEP | DG_HOOK_EVENTS | DG_HOOK_HOLD_CHECK);
  return 0;
}

static bool planetary_sticks(const planetary_params *p) {
  return p->self_locking && p->efficiency < 1.0;
}

static int planetary_mode_count(const dg_block *self) {
  return planetary_sticks(self->params) ? NUM_MODES : 1;
}

static void planetary_mode_set(dg_block *self, int mode) {
  planetary_data *d = self->data;
  d->mode = mode == MODE_STUCK ? MODE_STUCK : MODE_ROLLING;
}

static const char *planetary_mode_name(const dg_block *self, int mode) {
  (void)self;
  return mode >= 0 && mode < NUM_MODES ? planetary_mode_names[mode] : NULL;
}

static void planetary_state_upstream(dg_block *self, dg_topo *topo) {
  const planetary_params *p = self->params;
  planetary_data *d = self->data;
  static const int ports[3] = {PORT_SUN, PORT_RING, PORT_CARRIER};
  const double coef[3] = {d->ks, d->kr, -1.0};
  for (int i = 0; i < 3; i++)
    dg_topo_dof(topo, self, ports[i]);
  dg_topo_inertia(topo, self, PORT_SUN, p->sun_inertia);
  dg_topo_inertia(topo, self, PORT_CARRIER, p->carrier_inertia);
  dg_topo_inertia(topo, self, PORT_RING, p->ring_inertia);
  d->tie_lock = -1;
  if (d->mode == MODE_STUCK) {
    static const int lock_ports[2] = {PORT_SUN, PORT_CARRIER};
    static const double lock_coef[2] = {1.0, -1.0};
    d->tie = dg_topo_tie(topo, self, 3, ports, coef);
    d->tie_lock = dg_topo_tie(topo, self, 2, lock_ports, lock_coef);
    return;
  }
  const double coef_a[3] = {d->ks, 0.0, -d->ks}; /* the sun relative to the carrier */
  d->tie = dg_topo_tie_lossy(topo, self, 3, ports, coef, coef_a, p->efficiency);
}

static double relative_speed(const dg_block *self, const dg_ctx *ctx) {
  return dg_port_speed(ctx, self, PORT_SUN) - dg_port_speed(ctx, self, PORT_CARRIER);
}

static void planetary_set_mode(planetary_data *d, dg_ctx *ctx, int mode, bool released) {
  if (mode == d->mode)
    return;
  d->mode = mode;
  d->just_released = released;
  dg_ctx_request_topology(ctx);
}

/* The stuck mode's excess e and tol_T at the context's point (see the
 * file comment). */
static void planetary_excess(const dg_block *self, dg_ctx *ctx, double *e, double *tol) {
  const planetary_params *p = self->params;
  const planetary_data *d = self->data;
  double lam = dg_ctx_tie_force(ctx, d->tie), mu = dg_ctx_tie_force(ctx, d->tie_lock);
  double a = (d->ks * lam + mu) / d->ks, b = lam; /* τ_s / k_s, τ_r / k_r */
  double sigma = a + b < 0.0 ? -1.0 : 1.0, eta = p->efficiency;
  *e = dg_fmax(eta * sigma * a - sigma * b, eta * sigma * b - sigma * a);
  *tol = TORQUE_REL_TOL * (fabs(a) + fabs(b)) + TORQUE_ABS_TOL;
}

static void planetary_pre_step(dg_block *self, dg_ctx *ctx) {
  planetary_data *d = self->data;
  double dw = relative_speed(self, ctx);
  d->rest_tol = dg_slip_zero_tol(ctx, self, PORT_SUN, PORT_CARRIER);
  if (d->mode == MODE_STUCK)
    return;
  if (fabs(dw) > d->rest_tol)
    d->dir = dg_sign(dw);
  else if (!d->just_released && planetary_sticks(self->params))
    planetary_set_mode(d, ctx, MODE_STUCK, false);
  else
    d->dir = 0;
  d->just_released = false;
}

/* Stuck: lets go where a side can drive (at a segment's start and end). */
static void planetary_hold_check(dg_block *self, dg_ctx *ctx) {
  planetary_data *d = self->data;
  if (d->mode != MODE_STUCK)
    return;
  double e, tol;
  planetary_excess(self, ctx, &e, &tol);
  if (e > 0.5 * tol)
    planetary_set_mode(d, ctx, MODE_ROLLING, true);
}

static void planetary_post_step(dg_block *self, dg_ctx *ctx) {
  planetary_data *d = self->data;
  d->lambda = dg_ctx_tie_force(ctx, d->tie);
  if (d->mode == MODE_STUCK) {
    d->mu = dg_ctx_tie_force(ctx, d->tie_lock);
    d->factor = 1.0;
    planetary_hold_check(self, ctx);
    return;
  }
  d->mu = 0.0;
  d->factor = dg_ctx_tie_factor(ctx, d->tie);
  if (planetary_sticks(self->params) && d->dir != 0 &&
      relative_speed(self, ctx) * d->dir <= d->rest_tol)
    planetary_set_mode(d, ctx, MODE_STUCK, false);
}

/* g0: rolling, the relative speed reaching rest; g1: stuck, a side able
 * to drive the meshes. */
static int planetary_event_values(const dg_block *self, dg_ctx *ctx, double *g) {
  const planetary_data *d = self->data;
  g[0] = g[1] = 1.0;
  if (!planetary_sticks(self->params))
    return 0;
  if (d->mode == MODE_STUCK) {
    double e, tol;
    planetary_excess(self, ctx, &e, &tol);
    g[1] = tol - e;
    return 1;
  }
  if (d->dir == 0)
    return 0;
  g[0] = relative_speed(self, ctx) * d->dir - d->rest_tol;
  return 1;
}

static double ratio(double num, double den) {
  return fabs(den) > RATIO_REST ? num / den : 0.0;
}

static double planetary_signal(const dg_block *self, const dg_ctx *ctx, int index) {
  const planetary_data *d = self->data;
  double ws = dg_port_speed(ctx, self, PORT_SUN), wc = dg_port_speed(ctx, self, PORT_CARRIER),
         wr = dg_port_speed(ctx, self, PORT_RING);
  switch (index) {
  case SIG_SUN_TORQUE:
    return d->ks * d->lambda + d->mu;
  case SIG_CARRIER_TORQUE:
    return -(d->ks + d->factor * d->kr) * d->lambda - d->mu;
  case SIG_RING_TORQUE:
    return d->factor * d->kr * d->lambda;
  case SIG_CARRIER_SUN:
    return ratio(wc, ws);
  case SIG_RING_SUN:
    return ratio(wr, ws);
  case SIG_CARRIER_RING:
    return ratio(wc, wr);
  case SIG_STUCK:
    return d->mode == MODE_STUCK ? 1.0 : 0.0;
  default:
    return NAN;
  }
}

const dg_block_class dg_block_planetary = {
    .abi = DG_BLOCK_ABI,
    .type = "planetary",
    .doc = "Simple planetary gear set (sun, carrier, ring; any member drives or is driven): "
           "Willis kinematics S w_sun + R w_ring = (S + R) w_carrier as one tie, torques "
           "sun : ring : carrier = S : R : -(S + R), optional member inertias, losses from the "
           "meshing power in the carrier's frame, optionally self-locking (a stuck mode at rest "
           "in the carrier's frame).",
    .ports = planetary_ports,
    .params = planetary_params_table,
    .params_size = sizeof(planetary_params),
    .signals = planetary_signals,
    .data_size = sizeof(planetary_data),
    .check = planetary_check,
    .init = planetary_init,
    .mode_count = planetary_mode_count,
    .mode_set = planetary_mode_set,
    .mode_name = planetary_mode_name,
    .pre_step = planetary_pre_step,
    .state_upstream = planetary_state_upstream,
    .post_step = planetary_post_step,
    .hold_check = planetary_hold_check,
    .num_events = 2,
    .event_values = planetary_event_values,
    .signal = planetary_signal,
};
