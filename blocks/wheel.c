/* wheel — a road wheel: hub shaft, tyre contact and brake.
 *
 * Ports: `hub` (in, rotational, optional: a free undriven wheel leaves it
 * unconnected) carries the wheel's inertia; `ground` (out, linear, required)
 * is the contact patch and connects to a body port (vehicle). Speeds are
 * positive in forward travel: ω (rad/s) at the hub, v (m/s) at the ground.
 *
 * Tyre models (`tyre.model`):
 *
 *   "rolling": no slip, the hub follows the ground,  ω = v / R
 *     (dg_topo_ratio(hub, ground, 1/R)). The body's mass is felt at the hub
 *     as m·R² and the wheel's inertia at the body as J/R². The contact force
 *     is a reaction of this rigid link and is not resolved: fx reads 0.
 *
 *   "magic_formula": the hub is its own DOF. Longitudinal slip κ is a state
 *     with a relaxation length σ (first-order tyre lag):
 *         σ · dκ/dt = v_slip − |v| · κ,     v_slip = ω·R − v,
 *     so in steady rolling κ = (ω·R − v)/|v| (SAE slip ratio: −1 for a
 *     locked wheel, > 0 when driving) and nothing divides by v at rest. The
 *     force on the body is Pacejka's magic formula
 *         Fx = Fz · D · sin(C · atan(B·κ − E·(B·κ − atan(B·κ)))),
 *     applied as +Fx at `ground` and −Fx·R at `hub`; its power
 *     Fx·v − Fx·R·ω = −Fx·v_slip is the slip loss. D is the peak friction
 *     coefficient μ: for C > 1 the curve peaks at Fz·D where
 *     C·atan(φ) = π/2 (φ = B·κ − E·(B·κ − atan(B·κ)); E = 0: B·κ = tan(π/(2C))).
 *     κ is limited to ±KAPPA_LIMIT: at standstill the steady slip is
 *     unbounded, and a wheel spinning on the spot would otherwise wind the
 *     state up far beyond the range the B, C, D, E fit describes.
 *     Tread damping. At low speed the relaxation model is an undamped
 *     spring (stiffness k_x = Fz·B·C·D/σ per metre of tread deflection
 *     u = σ·κ) between hub and road: a wheel launched from rest rings at
 *     tens of Hz. A damper on the deflection rate, like MF-Tyre's low-speed
 *     damping, removes it:
 *         Fx = Fz·MF(κ) + c·σ·dκ/dt,   c = 2·ζ·sqrt(k_x·J/R²),
 *     ζ = `damping_ratio` (default 1: critical for the wheel's own
 *     inertia J; 0 gives the plain model). It vanishes in steady rolling
 *     and at rest, and Fx is kept within ±Fz·max|MF|.
 *     Fz is the normal load the body publishes on the ground node
 *     (dg_port_normal_load; 0 when nothing publishes it); a `normal_load`
 *     parameter replaces it with a fixed value (test rigs, bodies that do
 *     not publish loads).
 *
 * Brake. Capacity T_b = brake_torque · clamp(brake input, 0, 1) ·
 * brake_share (N·m). Stick–slip:
 *   sliding: −T_b·s at the hub, with s the direction of rotation frozen in
 *     pre_step for the whole step (sign of ω at its start), so the RK4
 *     right-hand side is smooth within a step; the wheel is held when ω
 *     reaches or crosses zero during the step (ω·s <= 0 at its end) or is
 *     exactly at rest, and T_b > 0.
 *   holding: a one-port tie ω = 0 on the hub (dg_topo_tie); its multiplier
 *     λ is the holding torque. Released when T_b drops to 0 (pre_step), or
 *     when |λ| exceeds the capacity (post_step); the wheel then slides in
 *     the direction the load pushed it (−sign λ). After such a breakaway
 *     the wheel is not held again while it stays at rest until T_b exceeds
 *     the torque that broke it, so it cannot chatter.
 *   With a rolling tyre the hold ties the whole vehicle (ω = v/R). With a
 *   magic-formula tyre a held wheel on a moving body skids (κ → −1); when
 *   the body reaches rest too the tyre sticks: a second tie ω·R − v = 0
 *   whose multiplier is the tyre's static force (Fx = −λ), limited to
 *   Fz·max|MF| — so a parked car does not creep on the tyre's relaxation
 *   spring, and speeds stay exactly 0. If that limit is exceeded the tyre
 *   slides (κ starts at the peak slip, so the force is continuous).
 *
 * With brake_hold false the brake never holds: it slides while the wheel
 * turns and stops acting when the wheel reaches rest (the wheels of a body
 * whose speed is prescribed, which a hold would over-constrain).
 *
 * Several held wheels on one body are rigidly coupled, so the solver keeps
 * one of their ties and reports 0 for the others (redundant). The wheels
 * therefore pool their capacities through channels: "wheel_hold_brake"
 * (Σ T_b/R of the held rolling and parked wheels, N at the ground, built in
 * the pre_step pass) for the hub ties, and the stuck tyres' Σ Fz·max|MF|
 * for the contact ties; the wheel whose tie carries the load compares it
 * with the pool.
 * Holds decided at a segment's start (hold_check, after every pre_step and
 * the body's publication of the loads): with the tie forces of the mode
 * just built,
 *   - a pooled hub tie beyond the brake pool lets go, and with it every
 *     other pooled wheel (each that let go brakes with its full sliding
 *     torque, so what the rest carry stays beyond what they can: the pool
 *     is exceeded until none is left) — the first wheel to find it writes
 *     its verdict (the load, N at the ground) to "wheel_hold_brake_verdict"
 *     and every pooled wheel lets go on reading it, in this round or the
 *     next, sliding the way the load pushed;
 *   - the stuck tyres are tallied over a round (each adds its Fz·max|MF|
 *     and the force its contact tie carries; "wheel_hold_parked" counts
 *     them in the pre_step pass, so the last one of a round knows the
 *     totals): past the pool, every stuck tyre lets go at its peak slip
 *     (the same argument: a tyre that let go gives its full friction), the
 *     last one at once and the others on its verdict in the next round;
 *   - a skidding wheel's hub tie (its own) beyond T_b lets go.
 * So a car parked or held past what its brakes or tyres can hold moves
 * from the segment's start (t = 0, after a restore, right after another
 * element switched), not a step later. Holds that become overloaded
 * within a segment let go at its end (post_step: the hub ties against the
 * brake pool; the tyres at the next segment's start). A wheel that let go
 * but is still held at rest by the others already brakes with its
 * sliding torque.
 *
 * Modes (index 0 is the start mode): 0 free, 1 held (rolling: hub tied;
 * magic formula: hub tied, tyre skidding), 2 parked (magic formula only:
 * hub tied and tyre stuck). */
#include "tyre.h"

#include <drivegraph/block.h>
#include <math.h>

enum { PORT_HUB, PORT_GROUND };
enum { MODEL_ROLLING, MODEL_MAGIC };
enum { MODE_FREE, MODE_HELD, MODE_PARKED, NUM_MODES };
/* The channels of hold_check's tallies: the pre_step pass's stamp, the
 * stuck tyres at the round's start and after it, those seen in the round,
 * their Σ Fz·max|MF| and Σ Fx, and the verdicts (0: none). */
enum {
  TALLY_STAMP,
  TALLY_PARKED,
  TALLY_PARKED_NEXT,
  TALLY_SEEN,
  TALLY_TYRE_CAP,
  TALLY_TYRE_LOAD,
  TALLY_TYRE_VERDICT,
  TALLY_BRAKE_VERDICT,
  NUM_TALLY
};
enum { SIG_OMEGA, SIG_SPEED, SIG_SLIP, SIG_FX, SIG_FZ, SIG_LOCKED, SIG_BRAKE, SIG_SLIP_RATIO };
/* Below this ground speed the kinematic slip divides by it instead (m/s). */
#define SLIP_RATIO_MIN_SPEED 0.1

/* Bound of the slip state (see the header; tyre.h). */
#define KAPPA_LIMIT TYRE_KAPPA_LIMIT
/* Speeds this small are rest (rad/s, m/s): a held node is exactly 0; this
 * only absorbs round-off of the momentum projection. */
#define REST_TOL 1e-12
#define PI 3.14159265358979323846

typedef struct tyre_params {
  int model;
  double B, C, D, E;
  double relaxation_length;
  double damping_ratio;
} tyre_params;

typedef struct wheel_params {
  double radius;
  double inertia;
  double brake_torque;
  double brake_share;
  double normal_load;
  bool has_normal_load;
  bool brake_hold;
  tyre_params tyre;
} wheel_params;

typedef struct wheel_data {
  int mode;         /* MODE_* */
  int hold_tie;     /* hub ω = 0, or -1 */
  int contact_tie;  /* ω·R − v = 0 (parked), or -1 */
  double cap;       /* brake capacity T_b of this step (N·m) */
  int dir;          /* frozen direction of rotation for the sliding brake */
  int vdir;         /* frozen direction of the ground speed (held: skid) */
  double w_start, v_start; /* speeds at the start of the step */
  double hold;      /* last multiplier of the hold tie (N·m at the hub) */
  double fx_stick;  /* last tyre force carried by the contact tie (N) */
  bool have_hold;   /* hold is a multiplier of the current hold */
  bool have_stick;  /* fx_stick is a multiplier of the current stick */
  double inhibit;   /* hub torque that broke the last hold (0: none) */
  double tyre_inhibit; /* tyre force that broke the last stick (0: none) */
  double kappa_peak;   /* slip of the largest |MF| within the limit */
  double mf_peak;      /* that |MF| (the static friction coefficient) */
  int ch_brake_stamp, ch_brake_pool;
  int ch_tally[NUM_TALLY]; /* hold_check's round tallies (wheel_tally_names) */
} wheel_data;

static const char *const tyre_models[] = {"rolling", "magic_formula", NULL};
static const char *const wheel_mode_names[NUM_MODES] = {"free", "held", "parked"};
static const char *const wheel_tally_names[NUM_TALLY] = {
    "wheel_hold_check_step",   "wheel_hold_parked",       "wheel_hold_parked_next",
    "wheel_hold_seen",         "wheel_hold_tyre",         "wheel_hold_tyre_load",
    "wheel_hold_tyre_verdict", "wheel_hold_brake_verdict"};

static const dg_port_def wheel_ports[] = {
    {.name = "hub", .dir = DG_PORT_IN, .domain = DG_ROTATIONAL, .optional = true,
     .doc = "hub shaft (drive side); leave unconnected for a free wheel"},
    {.name = "ground", .dir = DG_PORT_OUT, .domain = DG_LINEAR,
     .doc = "tyre contact; connects to a body port"},
    {0},
};

static const dg_param_def tyre_fields[] = {
    {.key = "model", .kind = DG_PARAM_ENUM, .offset = offsetof(tyre_params, model), .unit = "",
     .doc = "rolling: no slip (omega R = v); magic_formula: Pacejka longitudinal force with "
            "relaxation length",
     .def = MODEL_ROLLING, .choices = tyre_models},
    TYRE_MF_FIELDS(tyre_params),
    {0},
};

static const dg_param_def wheel_params_table[] = {
    DG_NUMBER(wheel_params, radius, .unit = "m", .required = true, .flags = DG_P_MIN_EXCL,
              .doc = "rolling radius"),
    DG_NUMBER(wheel_params, inertia, .unit = "kg*m^2", .def = 1.0, .flags = DG_P_MIN | DG_P_INERTIA,
              .doc = "inertia of wheel, tyre and brake disc about the hub"),
    DG_NUMBER(wheel_params, brake_torque, .unit = "N*m", .flags = DG_P_MIN | DG_P_DYNAMICS,
              .doc = "brake torque at full brake input and brake_share 1"),
    DG_NUMBER(wheel_params, brake_share, .unit = "", .def = 1.0,
              .flags = DG_P_MIN | DG_P_MAX | DG_P_DYNAMICS, .max = 1,
              .doc = "share of the brake input this wheel's brake receives"),
    {.key = "brake_hold", .kind = DG_PARAM_BOOL, .offset = offsetof(wheel_params, brake_hold),
     .unit = "", .def = 1,
     .doc = "the brake holds the wheel at rest (false: it only slides, and lets go at rest; a "
            "wheel of a body whose speed a linear_speed_source prescribes)"},
    {.key = "normal_load", .kind = DG_PARAM_NUMBER, .offset = offsetof(wheel_params, normal_load),
     .unit = "N",
     .doc = "fixed normal load, replacing the one the body publishes (magic formula only)",
     .flags = DG_P_MIN | DG_P_DYNAMICS, .min = 0,
     .present = DG_PRESENT(wheel_params, has_normal_load)},
    {.key = "tyre", .kind = DG_PARAM_OBJECT, .offset = offsetof(wheel_params, tyre), .unit = "",
     .doc = "tyre model: { \"model\": \"rolling\" | \"magic_formula\", \"B\", \"C\", \"D\", "
            "\"E\", \"relaxation_length\" }",
     .fields = tyre_fields},
    {0},
};

enum { IN_BRAKE };
static const dg_input_def wheel_inputs[] = {
    {.name = "brake", .unit = "", .doc = "brake pedal 0..1 (brake_torque x brake_share at 1)",
     .source = "brake", .flags = DG_P_MIN | DG_P_MAX, .min = 0, .max = 1},
    {0},
};

static const dg_signal_def wheel_signals[] = {
    {.name = "omega", .unit = "rad/s", .doc = "hub speed", .port = PORT_HUB, .scale = 1},
    {.name = "speed", .unit = "m/s", .doc = "ground (contact) speed", .port = PORT_GROUND,
     .scale = 1},
    {.name = "slip", .unit = "",
     .doc = "tyre slip state kappa of the relaxation model, what the force follows (limited; 0 "
            "for a rolling tyre)",
     .port = DG_SIGNAL_HOOK},
    {.name = "fx", .unit = "N",
     .doc = "tyre force on the body, forward positive (0 for a rolling tyre)",
     .port = DG_SIGNAL_HOOK},
    {.name = "fz", .unit = "N", .doc = "normal load", .port = DG_SIGNAL_HOOK},
    {.name = "locked", .unit = "", .doc = "1 while the brake holds the wheel, else 0",
     .port = DG_SIGNAL_HOOK, .flags = DG_SIGNAL_BOOL},
    {.name = "brake_torque", .unit = "N*m",
     .doc = "torque the brake applies at the hub (holding: the hold's reaction)",
     .port = DG_SIGNAL_HOOK},
    {.name = "slip_ratio", .unit = "",
     .doc = "kinematic slip (omega R - v) / max(|v|, 0.1 m/s): how much faster the tread turns "
            "than the road passes (unlimited, unlike the state `slip`)",
     .port = DG_SIGNAL_HOOK},
    {0},
};

static bool is_magic(const wheel_params *p) { return p->tyre.model == MODEL_MAGIC; }

/* Magic formula per unit load: Fx / Fz at slip k. */
static double mf(const tyre_params *t, double k) { return tyre_mf(t->B, t->C, t->D, t->E, k); }

/* φ(x) = x − E (x − atan x): increasing for E <= 1. */
static double mf_phi(const tyre_params *t, double x) { return x - t->E * (x - atan(x)); }

/* Slip of the largest MF value in [0, KAPPA_LIMIT]: C·atan(φ) = π/2 when
 * reachable (C > 1), else the limit (the curve rises monotonically). */
static double mf_peak_slip(const tyre_params *t) {
  double xmax = t->B * KAPPA_LIMIT;
  if (!(t->C > 1.0))
    return KAPPA_LIMIT;
  double target = tan(PI / (2.0 * t->C));
  if (mf_phi(t, xmax) <= target)
    return KAPPA_LIMIT;
  double lo = 0.0, hi = xmax;
  for (int i = 0; i < 200 && hi - lo > 1e-15 * xmax; i++) {
    double mid = 0.5 * (lo + hi);
    if (mf_phi(t, mid) < target)
      lo = mid;
    else
      hi = mid;
  }
  return 0.5 * (lo + hi) / t->B;
}

/* The slip in [−κ_peak, κ_peak] at which the tyre gives `ratio` = Fx/Fz
 * (the peak slip beyond the peak): keeps the force continuous when a stuck
 * tyre is released. MF is increasing on [0, κ_peak]. */
static double mf_slip_for(const wheel_data *d, const tyre_params *t, double ratio) {
  double r = fabs(ratio);
  if (!(r < d->mf_peak))
    return dg_sign(ratio) * d->kappa_peak;
  double lo = 0.0, hi = d->kappa_peak;
  for (int i = 0; i < 100; i++) {
    double mid = 0.5 * (lo + hi);
    if (mf(t, mid) < r)
      lo = mid;
    else
      hi = mid;
  }
  return dg_sign(ratio) * 0.5 * (lo + hi);
}

static double wheel_fz(const dg_block *self, const dg_ctx *ctx) {
  const wheel_params *p = self->params;
  if (p->has_normal_load)
    return p->normal_load;
  double fz = dg_port_normal_load(ctx, self, PORT_GROUND);
  return fz > 0.0 ? fz : 0.0;
}

/* Whether the brake can ever act: otherwise its capacity is +0. */
static bool wheel_has_brake(const wheel_params *p) {
  return p->brake_torque > 0.0 && p->brake_share > 0.0;
}

static double wheel_capacity(const dg_block *self, const dg_ctx *ctx) {
  const wheel_params *p = self->params;
  return p->brake_torque * dg_clamp01(dg_block_input(ctx, self, IN_BRAKE)) * p->brake_share;
}

/* dκ/dt = (ωR − v − |v|·κ)/σ, held at the slip limit. */
static double wheel_slip_rate(const wheel_params *p, double w, double v, double k) {
  return tyre_slip_rate(w, p->radius, v, k, p->tyre.relaxation_length);
}

/* Tyre force on the body at slip k and the context's speeds: the magic
 * formula plus the tread damping c·σ·dκ/dt, within ±Fz·max|MF|. */
static double wheel_tyre_force(const dg_block *self, const dg_ctx *ctx, double k, double *dk) {
  const wheel_params *p = self->params;
  const wheel_data *d = self->data;
  const tyre_params *t = &p->tyre;
  double fz = wheel_fz(self, ctx);
  double fx = fz * mf(t, k);
  double w = dg_port_speed(ctx, self, PORT_HUB), v = dg_port_speed(ctx, self, PORT_GROUND);
  *dk = wheel_slip_rate(p, w, v, k);
  if (t->damping_ratio > 0.0 && p->inertia > 0.0 && fz > 0.0) {
    /* c σ = 2ζ sqrt(k_x J) σ / R with k_x = F_z B C D / σ (N per m of
     * tread travel), computed at each call from fz and the parameters
     * (which may be tuned between steps: a sqrt is cheaper than keeping
     * it keyed), as sqrt(F_z · B C D J / σ) · 2ζ σ / R: in a compiled
     * stage, whose parameters are constants, the two products of
     * parameters are constants too */
    double damping = sqrt(fz * (t->B * t->C * t->D * p->inertia / t->relaxation_length)) *
                     (2.0 * t->damping_ratio * t->relaxation_length / p->radius);
    fx += damping * *dk;
    double lim = fz * d->mf_peak; /* |fx| within it (NaN stays NaN) */
    if (fabs(fx) > lim)
      fx = copysign(lim, fx);
  }
  return fx;
}

static int wheel_init(dg_block *self, dg_init *init) {
  const wheel_params *p = self->params;
  wheel_data *d = self->data;
  d->mode = MODE_FREE;
  d->hold_tie = d->contact_tie = -1;
  d->kappa_peak = mf_peak_slip(&p->tyre);
  d->mf_peak = fabs(mf(&p->tyre, d->kappa_peak));
  d->ch_brake_stamp = dg_init_channel(init, "wheel_hold_brake_step");
  d->ch_brake_pool = dg_init_channel(init, "wheel_hold_brake");
  for (int k = 0; k < NUM_TALLY; k++)
    d->ch_tally[k] = dg_init_channel(init, wheel_tally_names[k]);
  /* without a brake (brake_torque or brake_share 0) the capacity is 0: a
   * free wheel stays free (pre_step lets a held one go first), so there
   * is nothing to locate and no hold to check */
  if (!wheel_has_brake(p))
    dg_init_idle(init, DG_HOOK_EVENTS | DG_HOOK_HOLD_CHECK);
  return 0;
}

static int wheel_mode_count(const dg_block *self) {
  const wheel_params *p = self->params;
  if (!p->brake_hold)
    return 1;
  return is_magic(p) ? NUM_MODES : NUM_MODES - 1;
}

static void wheel_mode_set(dg_block *self, int mode) {
  wheel_data *d = self->data;
  d->mode = mode >= 0 && mode < wheel_mode_count(self) ? mode : MODE_FREE;
}

static const char *wheel_mode_name(const dg_block *self, int mode) {
  return mode >= 0 && mode < wheel_mode_count(self) ? wheel_mode_names[mode] : NULL;
}

static void wheel_state_upstream(dg_block *self, dg_topo *topo) {
  const wheel_params *p = self->params;
  wheel_data *d = self->data;
  d->hold_tie = d->contact_tie = -1;
  if (is_magic(p)) {
    dg_topo_dof(topo, self, PORT_HUB);
    if (d->mode == MODE_PARKED) {
      static const int ports[2] = {PORT_HUB, PORT_GROUND};
      const double coef[2] = {p->radius, -1.0};
      d->contact_tie = dg_topo_tie(topo, self, 2, ports, coef);
    }
  } else {
    dg_topo_ratio(topo, self, PORT_HUB, PORT_GROUND, 1.0 / p->radius, 1.0);
  }
  dg_topo_inertia(topo, self, PORT_HUB, p->inertia);
  if (d->mode != MODE_FREE) {
    static const int hub = PORT_HUB;
    static const double one = 1.0;
    d->hold_tie = dg_topo_tie(topo, self, 1, &hub, &one);
  }
}

/* ---- mode changes ---- */

static void wheel_set_mode(wheel_data *d, dg_ctx *ctx, int mode) {
  if (mode == d->mode)
    return;
  d->mode = mode;
  d->have_hold = d->have_stick = false;
  dg_ctx_request_topology(ctx);
}

/* Lets go of the hub: the wheel slides the way the load pushed it. */
static void wheel_release(const dg_block *self, wheel_data *d, dg_ctx *ctx, bool broke) {
  const wheel_params *p = self->params;
  if (d->mode == MODE_PARKED) {
    double fz = wheel_fz(self, ctx);
    *dg_block_state_commit(ctx, self) =
        fz > 0.0 && d->have_stick ? mf_slip_for(d, &p->tyre, d->fx_stick / fz) : 0.0;
  }
  d->dir = d->have_hold ? -dg_sign(d->hold) : 0;
  d->inhibit = broke ? fabs(d->hold) : 0.0;
  d->tyre_inhibit = 0.0;
  wheel_set_mode(d, ctx, MODE_FREE);
}

/* Holds the hub; a magic-formula tyre also sticks if the ground is at rest. */
static void wheel_hold(const dg_block *self, wheel_data *d, dg_ctx *ctx, bool ground_at_rest) {
  if (!((const wheel_params *)self->params)->brake_hold) {
    d->dir = 0; /* no hold: the sliding brake stops acting at rest */
    return;
  }
  bool park = is_magic(self->params) && ground_at_rest;
  if (park)
    *dg_block_state_commit(ctx, self) = 0.0;
  d->inhibit = 0.0;
  wheel_set_mode(d, ctx, park ? MODE_PARKED : MODE_HELD);
}

/* The brake pool: a channel pair (stamp, sum) restarted by the first wheel
 * that adds to it in a new pass, built in the pre_step pass (the
 * capacities of this segment's inputs) and read in hold_check and the
 * post_step pass. The segment count is k in the pre_step pass and
 * hold_check of segment k + 1 and k + 1 in its post_step pass, so the
 * stamps tell stale sums apart. */
static double *wheel_pool(dg_ctx *ctx, int stamp_ch, int pool_ch, long stamp) {
  if (ctx->channel[stamp_ch] != (double)stamp) {
    ctx->channel[stamp_ch] = (double)stamp;
    ctx->channel[pool_ch] = 0.0;
  }
  return &ctx->channel[pool_ch];
}

/* Step segments completed (see wheel_pool). */
static long wheel_steps(const dg_ctx *ctx) { return dg_sim_segment_count(ctx->sim); }

/* `pre`: in the pre_step pass or hold_check, else in the post_step pass. */
static double *wheel_brake_pool(const wheel_data *d, dg_ctx *ctx, bool pre) {
  return wheel_pool(ctx, d->ch_brake_stamp, d->ch_brake_pool, wheel_steps(ctx) + (pre ? 1 : 0));
}

/* hold_check's tallies, restarted by the first wheel of the pre_step pass. */
static double *wheel_tally(const wheel_data *d, dg_ctx *ctx, int k) {
  return &ctx->channel[d->ch_tally[k]];
}

static void wheel_tally_start(const wheel_data *d, dg_ctx *ctx) {
  double stamp = (double)(wheel_steps(ctx) + 1);
  if (*wheel_tally(d, ctx, TALLY_STAMP) == stamp)
    return;
  for (int k = 0; k < NUM_TALLY; k++)
    *wheel_tally(d, ctx, k) = 0.0;
  *wheel_tally(d, ctx, TALLY_STAMP) = stamp;
}

static bool wheel_pooled(const dg_block *self, const wheel_data *d) {
  return d->mode == MODE_PARKED || (d->mode == MODE_HELD && !is_magic(self->params));
}

static void wheel_pre_step(dg_block *self, dg_ctx *ctx) {
  const wheel_params *p = self->params;
  wheel_data *d = self->data;
  double w = dg_port_speed(ctx, self, PORT_HUB), v = dg_port_speed(ctx, self, PORT_GROUND);
  d->cap = wheel_capacity(self, ctx);
  /* a free wheel without a brake: nothing to decide (its direction, the
   * step's start speeds, the pools and tallies are read only with a
   * capacity > 0 or held) */
  if (d->mode == MODE_FREE && !wheel_has_brake(p))
    return;
  d->w_start = w;
  d->v_start = v;
  double *brake_pool = wheel_brake_pool(d, ctx, true);
  wheel_tally_start(d, ctx);
  bool w_rest = fabs(w) <= REST_TOL, v_rest = fabs(v) <= REST_TOL;

  if (d->mode != MODE_FREE && !(d->cap > 0.0)) {
    wheel_release(self, d, ctx, false);
  } else if (d->mode == MODE_HELD && is_magic(p)) {
    /* a skidding wheel on a body that reached rest exactly (held
     * elsewhere) parks; its hold against T_b is hold_check's */
    if (v_rest && !(d->tyre_inhibit > 0.0))
      wheel_hold(self, d, ctx, true);
  } else if (d->mode == MODE_FREE) {
    if (!w_rest)
      d->dir = dg_sign(w);
    else if (d->cap > 0.0 && d->cap > d->inhibit)
      wheel_hold(self, d, ctx, v_rest);
  }
  if (d->mode == MODE_HELD || d->mode == MODE_PARKED)
    d->vdir = v_rest ? 0 : dg_sign(v);

  if (wheel_pooled(self, d))
    *brake_pool += d->cap / p->radius;
  if (d->mode == MODE_PARKED) {
    *wheel_tally(d, ctx, TALLY_PARKED) += 1.0;
    *wheel_tally(d, ctx, TALLY_PARKED_NEXT) += 1.0;
  }
}

static void wheel_torque_downstream(dg_block *self, dg_ctx *ctx) {
  const wheel_params *p = self->params;
  const wheel_data *d = self->data;
  /* a sliding brake follows the pedal inside the step; the hold decisions
   * use the capacity of the segment's start (d->cap, 0 without a brake:
   * the parameters' test first, a constant in a compiled stage) */
  if (wheel_has_brake(p) && d->mode == MODE_FREE && d->dir != 0 && d->cap > 0.0)
    dg_port_add_torque(ctx, self, PORT_HUB, -wheel_capacity(self, ctx) * d->dir);
  if (is_magic(p) && d->mode != MODE_PARKED) {
    double *dk = dg_block_state_rate(ctx, self);
    double fx = wheel_tyre_force(self, ctx, dg_block_state(ctx, self)[0], dk);
    dg_port_add_torque(ctx, self, PORT_GROUND, fx);
    dg_port_add_torque(ctx, self, PORT_HUB, -fx * p->radius);
  }
}

static void wheel_post_step(dg_block *self, dg_ctx *ctx) {
  const wheel_params *p = self->params;
  wheel_data *d = self->data;
  double w = dg_port_speed(ctx, self, PORT_HUB), v = dg_port_speed(ctx, self, PORT_GROUND);
  bool w_rest = fabs(w) <= REST_TOL, v_rest = fabs(v) <= REST_TOL;
  double *kappa = dg_block_state_commit(ctx, self); /* the step's slip, within the model's range */
  *kappa = dg_fmax(-KAPPA_LIMIT, dg_fmin(KAPPA_LIMIT, *kappa));

  if (d->mode == MODE_FREE) {
    if (!w_rest)
      d->inhibit = 0.0; /* moving: a later stop is a new one */
    if (!(d->cap > 0.0))
      return;
    bool crossed = d->dir != 0 && d->w_start * d->dir > REST_TOL && w * d->dir <= REST_TOL;
    bool resting = w_rest && fabs(d->w_start) <= REST_TOL && d->cap > d->inhibit;
    if (crossed || resting)
      wheel_hold(self, d, ctx, v_rest);
    return;
  }

  d->hold = dg_ctx_tie_force(ctx, d->hold_tie);
  d->have_hold = true;
  if (d->mode == MODE_PARKED) {
    d->fx_stick = -dg_ctx_tie_force(ctx, d->contact_tie);
    d->have_stick = true;
  }
  if (d->mode == MODE_HELD && is_magic(p)) {
    /* skidding: the hub tie is this wheel's own */
    if (fabs(d->hold) > d->cap) {
      wheel_release(self, d, ctx, true);
      return;
    }
    if (!v_rest)
      d->tyre_inhibit = 0.0;
    bool crossed = d->vdir != 0 && d->v_start * d->vdir > REST_TOL && v * d->vdir <= REST_TOL;
    bool resting = v_rest && fabs(d->v_start) <= REST_TOL && !(d->tyre_inhibit > 0.0);
    if (crossed || resting)
      wheel_hold(self, d, ctx, true);
    return;
  }
  if (fabs(d->hold) / p->radius > *wheel_brake_pool(d, ctx, false))
    wheel_release(self, d, ctx, true);
}

/* A stuck tyre lets go at its peak slip, the way `load` (the stuck
 * tyres' force on the body) pushed it; the hub stays held (skidding). */
static void wheel_tyre_let_go(wheel_data *d, dg_ctx *ctx, const dg_block *self, double load) {
  *dg_block_state_commit(ctx, self) = dg_sign(load) * d->kappa_peak;
  d->tyre_inhibit = fabs(load);
  wheel_set_mode(d, ctx, MODE_HELD);
}

/* At a segment's start, with the tie forces of the mode just built (see
 * the file comment): the pooled hub ties against the brake pool, the
 * stuck tyres against theirs (decided by the last of a round), a skidding
 * hub against its own T_b. Only releases. */
static void wheel_hold_check(dg_block *self, dg_ctx *ctx) {
  const wheel_params *p = self->params;
  wheel_data *d = self->data;
  if (d->mode == MODE_FREE || *wheel_tally(d, ctx, TALLY_STAMP) != (double)(wheel_steps(ctx) + 1))
    return;
  bool parked = d->mode == MODE_PARKED, pooled = wheel_pooled(self, d);
  double *pool = wheel_brake_pool(d, ctx, true);
  d->hold = dg_ctx_tie_force(ctx, d->hold_tie);
  d->have_hold = true;
  bool last = false;
  if (parked) {
    d->fx_stick = -dg_ctx_tie_force(ctx, d->contact_tie);
    d->have_stick = true;
    *wheel_tally(d, ctx, TALLY_SEEN) += 1.0;
    *wheel_tally(d, ctx, TALLY_TYRE_CAP) += d->mf_peak * wheel_fz(self, ctx);
    *wheel_tally(d, ctx, TALLY_TYRE_LOAD) += d->fx_stick;
    last = *wheel_tally(d, ctx, TALLY_SEEN) >= *wheel_tally(d, ctx, TALLY_PARKED);
  }

  double tyre_verdict = *wheel_tally(d, ctx, TALLY_TYRE_VERDICT);
  double *brake_verdict = wheel_tally(d, ctx, TALLY_BRAKE_VERDICT);
  if (parked && tyre_verdict != 0.0) {
    wheel_tyre_let_go(d, ctx, self, tyre_verdict);
  } else if (pooled) {
    if (*brake_verdict == 0.0 && fabs(d->hold) / p->radius > *pool)
      *brake_verdict = d->hold / p->radius; /* this wheel's tie carries the load */
    if (*brake_verdict != 0.0) {
      d->hold = *brake_verdict * p->radius;
      wheel_release(self, d, ctx, true);
    }
  } else if (fabs(d->hold) > d->cap) { /* skidding: its own hub tie */
    wheel_release(self, d, ctx, true);
  }

  if (last) { /* the round's stuck tyres are all in the tally */
    double load = *wheel_tally(d, ctx, TALLY_TYRE_LOAD);
    if (tyre_verdict == 0.0 && fabs(load) > *wheel_tally(d, ctx, TALLY_TYRE_CAP)) {
      *wheel_tally(d, ctx, TALLY_TYRE_VERDICT) = load;
      if (d->mode == MODE_PARKED)
        wheel_tyre_let_go(d, ctx, self, load);
    }
  }
  if (parked && d->mode != MODE_PARKED)
    *wheel_tally(d, ctx, TALLY_PARKED_NEXT) -= 1.0;
  if (pooled && !wheel_pooled(self, d))
    *pool -= d->cap / p->radius;
  if (last) { /* the next round counts the tyres still stuck */
    *wheel_tally(d, ctx, TALLY_PARKED) = *wheel_tally(d, ctx, TALLY_PARKED_NEXT);
    *wheel_tally(d, ctx, TALLY_SEEN) = 0.0;
    *wheel_tally(d, ctx, TALLY_TYRE_CAP) = 0.0;
    *wheel_tally(d, ctx, TALLY_TYRE_LOAD) = 0.0;
  }
}

/* ---- events ---- */

/* Switching conditions, located inside the step: a braked wheel's hub
 * reaching rest (g0 = ω · s − tol, s its direction of rotation), and a
 * held magic-formula wheel's ground contact reaching rest (g1 = v · s −
 * tol): the brake then holds. Letting go depends on the pools of all the
 * wheels and is decided at step ends. */
static int wheel_event_values(const dg_block *self, dg_ctx *ctx, double *g) {
  const wheel_data *d = self->data;
  g[0] = g[1] = 1.0;
  if (d->mode == MODE_FREE && d->dir != 0 && d->cap > 0.0) {
    g[0] = dg_port_speed(ctx, self, PORT_HUB) * d->dir - REST_TOL;
    return 1;
  } else if (d->mode == MODE_HELD && is_magic(self->params) && d->vdir != 0) {
    g[1] = dg_port_speed(ctx, self, PORT_GROUND) * d->vdir - REST_TOL;
    return 1;
  }
  return 0;
}

/* ---- telemetry ---- */

static double wheel_signal(const dg_block *self, const dg_ctx *ctx, int index) {
  const wheel_params *p = self->params;
  const wheel_data *d = self->data;
  switch (index) {
  case SIG_SLIP:
    return is_magic(p) ? dg_block_state(ctx, self)[0] : 0.0;
  case SIG_FX:
    if (!is_magic(p))
      return 0.0;
    if (d->mode == MODE_PARKED)
      return d->have_stick ? d->fx_stick : 0.0;
  {
    double dk;
    return wheel_tyre_force(self, ctx, dg_block_state(ctx, self)[0], &dk);
  }
  case SIG_FZ:
    return wheel_fz(self, ctx);
  case SIG_LOCKED:
    return d->mode == MODE_FREE ? 0.0 : 1.0;
  case SIG_SLIP_RATIO: {
    double v = dg_port_speed(ctx, self, PORT_GROUND);
    return (dg_port_speed(ctx, self, PORT_HUB) * p->radius - v) /
           dg_fmax(fabs(v), SLIP_RATIO_MIN_SPEED);
  }
  case SIG_BRAKE:
    if (d->mode != MODE_FREE)
      return d->have_hold ? d->hold : 0.0;
    return 0.0 - d->cap * d->dir; /* +0 without a capacity, whatever the direction */
  default:
    return NAN;
  }
}

/* The start: a tyre with slip rolls with the road (hub = ground / R, no
 * slip) unless the initial values say otherwise. */
static void wheel_start(dg_block *self, dg_ctx *ctx, int phase) {
  const wheel_params *p = self->params;
  wheel_data *d = self->data;
  if (phase != DG_START_PROPOSE)
    return;
  double v = dg_port_speed(ctx, self, PORT_GROUND), w = dg_port_speed(ctx, self, PORT_HUB);
  /* a braked wheel of a car at rest starts held, as its first pre_step
   * would hold it: so what starts after it (a compliant half-shaft's
   * static twist) sees the hold */
  d->cap = wheel_capacity(self, ctx);
  if (d->mode == MODE_FREE && d->cap > 0.0 && fabs(v) <= REST_TOL &&
      (fabs(w) <= REST_TOL || is_magic(p)))
    wheel_hold(self, d, ctx, true);
  if (is_magic(p))
    dg_ctx_start_speed_why(ctx, self, PORT_HUB, v / p->radius, "rolling with the road");
}

static int wheel_set_signal(dg_block *self, dg_ctx *ctx, int index, double value) {
  const wheel_params *p = self->params;
  if (index != SIG_SLIP || !is_magic(p) || !(fabs(value) <= KAPPA_LIMIT))
    return -1;
  *dg_block_state_commit(ctx, self) = value;
  return 0;
}

const dg_block_class dg_block_wheel = {
    .abi = DG_BLOCK_ABI,
    .type = "wheel",
    .doc = "Road wheel: hub inertia, brake with stick-slip holding, and a rolling (no-slip) or "
           "magic-formula tyre with relaxation length; the normal load comes from the body.",
    .ports = wheel_ports,
    .params = wheel_params_table,
    .params_size = sizeof(wheel_params),
    .signals = wheel_signals,
    .inputs = wheel_inputs,
    .data_size = sizeof(wheel_data),
    .num_states = 1,
    .init = wheel_init,
    .mode_count = wheel_mode_count,
    .mode_set = wheel_mode_set,
    .mode_name = wheel_mode_name,
    .pre_step = wheel_pre_step,
    .state_upstream = wheel_state_upstream,
    .torque_downstream = wheel_torque_downstream,
    .post_step = wheel_post_step,
    .hold_check = wheel_hold_check,
    .signal = wheel_signal,
    .set_signal = wheel_set_signal,
    .start = wheel_start,
    .num_events = 2,
    .event_values = wheel_event_values,
};
