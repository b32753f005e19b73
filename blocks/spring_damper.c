/* spring_damper — a torsional spring and damper, with optional backlash,
 * between two shafts (a half-shaft, a coupling, a dual-mass flywheel).
 *
 * Ports: `in` (toward the source) and `out` (toward the road) are two
 * shafts, each its own DOF (dg_topo_dof on both). The block has no inertia
 * unless `inertia` is given, and then half of it sits at each end (the
 * lumped-mass split of a uniform shaft). Usually the neighbours carry the
 * inertia (a differential's side gear, a wheel); a shaft end with nothing
 * on it — two spring_dampers in series with no inertia between them — is a
 * DOF without inertia, which `validate` refuses, as it should: a massless
 * node between two springs has no dynamics RK4 could integrate.
 *
 * State: the twist θ = ∫ (ω_in − ω_out) dt (rad), one continuous state;
 * dθ/dt = Δω = ω_in − ω_out in every contact state.
 *
 * Torque. T is transmitted from `in` to `out`: −T at `in`, +T at `out`
 * (T > 0 when the source drives the road), with k = stiffness,
 * c = damping and h = backlash / 2:
 *   backlash 0:  T = k·θ + c·Δω                (a plain Kelvin–Voigt shaft)
 *   backlash b > 0, a contact state σ held for each step segment:
 *     σ = drive  (+1): T = k·(θ − h) + c·Δω     the drive flanks touch
 *     σ = coast  (−1): T = k·(θ + h) + c·Δω     the coast flanks touch
 *     σ = free   ( 0): T = 0                    no contact: neither the
 *                      spring nor the damper acts inside the dead band
 * (Modelica's ElastoBacklash2, the default `backlash_law`.) With
 * backlash_law "elasto_backlash" (Modelica's ElastoBacklash) the damper
 * never adds more than the spring in contact:
 *     drive: T = T_c + min(T_c, T_d),  coast: T = T_c + max(T_c, T_d)
 * with T_c = k·(θ ∓ h), T_d = c·Δω: a closing contact starts at zero
 * torque (T = 2·T_c while the damper would add more), so the torque is
 * continuous there. Which of the two applies is a sub-mode held over each
 * segment (blocks/signal_side.h), its switch (T_d = T_c) a third event.
 * A flank can push but not pull (as in both of Modelica's laws): the drive
 * contact lasts while  g_d = min(θ − h, F_d/k) >= 0  with F_d = k·(θ − h) +
 * c·Δω, the coast contact while  g_c = min(−h − θ, −F_c/k) >= 0  with
 * F_c = k·(θ + h) + c·Δω. With c = 0, g_d = θ − h: the contact ends and
 * starts at the band's edge. With c > 0 a separating contact lets go where
 * its force reaches zero (slightly before the edge, so the damper never
 * pulls the sides together), and a closing one takes up the damper's force
 * c·Δω at the edge (the Kelvin–Voigt contact's force step; the speeds stay
 * continuous: nothing impacts).
 *
 * Why a held state and events. T(θ, Δω) has kinks at the band's edges and
 * where the contact force reaches zero; RK4 integrating across one loses
 * its order and, worse, the four stages may disagree about the contact. As
 * the clutch holds its slip direction, σ is decided in pre_step (and again
 * in post_step) and the torque law of σ is used unchanged through the
 * segment (beyond the edge it is the smooth continuation). Two event
 * functions end the segment where σ stops being true, at
 *   in contact:  g_d (drive) or g_c (coast) reaching −ε: the contact ends,
 *   free:        ε − g_d or ε − g_c reaching 0: a contact starts,
 * with ε = TWIST_ABS_TOL + TWIST_REL_TOL·b (ε keeps a contact that starts
 * exactly at the edge, with no force, from counting as crossed already).
 * The decision then compares g with ±ε and, near the edge, uses the sign of
 * Δω (closing: contact; opening: free), so an event cannot switch back at
 * once. With b = 0 there is one law and no events. The stiffness check
 * linearizes the law of the current σ: in contact it sees k and c.
 *
 * Energy. The spring stores PE = ½·k·φ² (φ = θ − h in drive contact,
 * θ + h in coast contact, θ with b = 0; 0 when free), the signal
 * `potential_energy`. The energy audit books the block's net work
 * W = −∫ T·Δω dt like any other block's (dg_port_add_torque), so its
 * balance ΔKE = Σ W closes with no hook: a spring's W is −(ΔPE + D), where
 * D >= 0 is what the damper (and a contact that let go under a damper's
 * force) dissipated, so D = −W − ΔPE. The audit's `work_out` therefore
 * holds the energy the springs store at the end, not only losses.
 *
 * The start (dg_sim_start). DG_START_PROPOSE: `in` turns with `out`
 * (dg_ctx_start_speed), so initial values carry across the spring.
 * DG_START_CHECK, when the two ends turn together and no initial twist was
 * given: the static twist. The block asks for a rigid connection (a tie
 * ω_in − ω_out = 0, a mode used only here), reads its multiplier λ
 * (dg_ctx_tie_force) — the torque T = −λ a rigid shaft would carry at the
 * start, in the modes and with the inputs of the start, every other
 * spring_damper rigid as well — and goes back to compliant with
 *   θ = T/k + h  (T >= 0, drive contact),   θ = T/k − h  (T < 0, coast),
 * (θ = T/k with b = 0). Both ends then accelerate as the rigid line does,
 * so nothing jumps and no shuffle starts by itself; with constant loads the
 * twist stays put. Limits: the torque of the modes blocks hold at the start
 * (a hold that a block first takes in its first pre_step, such as a load's
 * Coulomb stick, is not seen); two spring_dampers in parallel on a rigid
 * loop make one tie redundant (it reads 0: the sum is right, the split is
 * not); a spring closing a loop of contradictory ratios (wind-up between
 * two axles) cannot be made rigid and fails the start — give its twist as
 * an initial value (`"<id>.twist": value`), which skips the rule.
 * Without dg_sim_start the twist starts at +h (0 with b = 0): the drive
 * flanks touching with no force, so a fresh simulation — the one
 * `validate --dt` checks — is in contact and its stiffness is seen. */
#include "signal_side.h"

#include <drivegraph/block.h>
#include <math.h>

enum { PORT_IN, PORT_OUT };
enum { SIDE_COAST = -1, SIDE_FREE = 0, SIDE_DRIVE = 1 };
enum { START_NONE, START_RIGID, START_DONE };
enum { LAW_ELASTO_BACKLASH2, LAW_ELASTO_BACKLASH };
enum {
  SIG_OMEGA_IN,
  SIG_OMEGA_OUT,
  SIG_TWIST,
  SIG_TORQUE,
  SIG_TWIST_RATE,
  SIG_IN_CONTACT,
  SIG_POTENTIAL_ENERGY
};

/* ε of the contact decisions (rad): the round-off of an event located on
 * RK4's dense output and then integrated to, never a physical twist. */
#define TWIST_ABS_TOL 1e-12
#define TWIST_REL_TOL 1e-9
/* Δω this small (relative to the shaft speeds) is "turning together". */
#define SPEED_REL_TOL 1e-10
#define SPEED_ABS_TOL 1e-12
/* The widest backlash: one turn (rad). */
#define MAX_BACKLASH 6.283185307179586

typedef struct spring_params {
  double stiffness;
  double damping;
  double backlash;
  double inertia;
  int law;
} spring_params;

typedef struct spring_data {
  int side;         /* SIDE_*: the contact law of the segment (DRIVE with b = 0) */
  bool rigid;       /* the start's rigid connection (DG_START_CHECK only) */
  int tie;          /* its tie, -1 otherwise */
  int start_stage;  /* START_*: where the static-twist rule is */
  bool twist_given; /* an initial twist was set: keep it */
  signal_side lim;  /* law elasto_backlash, in contact: side·T_d above side·T_c (the
                     * damper's torque limited to the spring's), held per segment */
} spring_data;

static const char *const spring_laws[] = {"elasto_backlash2", "elasto_backlash", NULL};

static const dg_port_def spring_ports[] = {
    {.name = "in", .dir = DG_PORT_IN, .domain = DG_ROTATIONAL,
     .doc = "shaft toward the source (a differential's side gear)"},
    {.name = "out", .dir = DG_PORT_OUT, .domain = DG_ROTATIONAL,
     .doc = "shaft toward the road (a wheel's hub)"},
    {0},
};

static const dg_param_def spring_params_table[] = {
    DG_NUMBER(spring_params, stiffness, .unit = "N*m/rad", .required = true,
              .flags = DG_P_MIN_EXCL | DG_P_DYNAMICS, .doc = "torsional stiffness k"),
    DG_NUMBER(spring_params, damping, .unit = "N*m*s/rad", .flags = DG_P_MIN | DG_P_DYNAMICS,
              .doc = "torsional damping c (acts only in contact)"),
    DG_NUMBER(spring_params, backlash, .unit = "rad", .flags = DG_P_MIN | DG_P_DYNAMICS,
              .doc = "total free play b: no torque while |twist| < b/2"),
    DG_NUMBER(spring_params, inertia, .unit = "kg*m^2", .flags = DG_P_MIN | DG_P_INERTIA,
              .doc = "the shaft's own inertia, half at each end"),
    {.key = "backlash_law", .kind = DG_PARAM_ENUM, .offset = offsetof(spring_params, law),
     .doc = "the contact's torque with backlash: elasto_backlash2 T = T_c + T_d (Modelica's "
            "ElastoBacklash2: the damper's force steps in where a contact starts); "
            "elasto_backlash T = T_c + min(T_c, T_d) on the drive flank, max on the coast "
            "(Modelica's ElastoBacklash: the damper never adds more than the spring, so the "
            "torque is continuous where a contact starts)",
     .def = LAW_ELASTO_BACKLASH2, .choices = spring_laws, .flags = DG_P_DYNAMICS},
    {0},
};

static const dg_signal_def spring_signals[] = {
    {.name = "omega_in", .unit = "rad/s", .doc = "speed of `in`", .port = PORT_IN, .scale = 1},
    {.name = "omega_out", .unit = "rad/s", .doc = "speed of `out`", .port = PORT_OUT, .scale = 1},
    {.name = "twist", .unit = "rad",
     .doc = "twist: integral of omega_in - omega_out (settable as an initial value)",
     .port = DG_SIGNAL_HOOK},
    {.name = "torque", .unit = "N*m", .doc = "torque transmitted from in to out",
     .port = DG_SIGNAL_HOOK},
    {.name = "twist_rate", .unit = "rad/s", .doc = "omega_in - omega_out",
     .port = DG_SIGNAL_HOOK},
    {.name = "in_contact", .unit = "", .doc = "1 when the flanks touch (always with no backlash)",
     .port = DG_SIGNAL_HOOK, .flags = DG_SIGNAL_BOOL},
    {.name = "potential_energy", .unit = "J", .doc = "energy stored in the spring",
     .port = DG_SIGNAL_HOOK},
    {0},
};

static double half_lash(const spring_params *p) { return 0.5 * p->backlash; }

static double twist_tol(const spring_params *p) {
  return TWIST_ABS_TOL + TWIST_REL_TOL * p->backlash;
}

static double rel_speed(const dg_block *self, const dg_ctx *ctx) {
  return dg_port_speed(ctx, self, PORT_IN) - dg_port_speed(ctx, self, PORT_OUT);
}

/* The contact measures g_d and g_c (rad, >= 0 in contact; see the top). */
static double gap_drive(const spring_params *p, double th, double dw) {
  double d = th - half_lash(p);
  return dg_fmin(d, d + p->damping / p->stiffness * dw);
}
static double gap_coast(const spring_params *p, double th, double dw) {
  double d = -half_lash(p) - th;
  return dg_fmin(d, d - p->damping / p->stiffness * dw);
}

/* Whether the elasto_backlash law limits the damper at this point: the held
 * sub-mode (by position over a segment that started on its boundary). */
static bool spring_limited(const spring_params *p, const spring_data *d, double tc, double td) {
  if (p->law != LAW_ELASTO_BACKLASH || !(p->backlash > 0.0) || d->side == SIDE_FREE)
    return false;
  return signal_side_above(&d->lim, d->side * td, d->side * tc);
}

/* The law of the held contact state (and sub-mode) at twist th, rate dw. */
static double spring_torque(const spring_params *p, const spring_data *d, double th, double dw) {
  if (d->side == SIDE_FREE)
    return 0.0;
  double tc = p->stiffness * (th - d->side * half_lash(p)), td = p->damping * dw;
  return spring_limited(p, d, tc, td) ? 2.0 * tc : tc + td;
}

/* The contact state after `side` at twist th and twist rate dw. */
static int spring_decide(const spring_params *p, int side, double th, double dw) {
  if (!(p->backlash > 0.0))
    return SIDE_DRIVE;
  double eps = twist_tol(p), gd = gap_drive(p, th, dw), gc = gap_coast(p, th, dw);
  if (side == SIDE_DRIVE && (gd < -eps || (gd <= eps && dw < 0.0)))
    side = SIDE_FREE;
  else if (side == SIDE_COAST && (gc < -eps || (gc <= eps && dw > 0.0)))
    side = SIDE_FREE;
  if (side == SIDE_FREE) {
    if (gd > eps || (gd >= -eps && dw > 0.0))
      side = SIDE_DRIVE;
    else if (gc > eps || (gc >= -eps && dw < 0.0))
      side = SIDE_COAST;
  }
  return side;
}

/* Backlash is the free play between two flanks: less than a turn. A gap
 * wider than that is wider than any motion the ends make relative to each
 * other in a run (the spring would never act), and the twist, which starts
 * at b/2, could not resolve the motion it integrates. */
static void spring_check(const void *params, dg_check *chk) {
  const spring_params *p = params;
  if (p->backlash > MAX_BACKLASH)
    dg_check_error(chk, "backlash",
                   "must be <= %g rad, one turn (got %g): backlash is the free play between "
                   "flanks, and a gap wider than the ends ever turn apart would never close "
                   "(the spring could never act)",
                   MAX_BACKLASH, p->backlash);
}

static int spring_init(dg_block *self, dg_init *init) {
  const spring_params *p = self->params;
  spring_data *d = self->data;
  d->side = SIDE_DRIVE;
  d->tie = -1;
  dg_init_state(init)[0] = half_lash(p); /* drive flanks touching, no force */
  /* without backlash the flanks never part: a side to decide (drive and
   * coast act alike at zero lash) and no contact events */
  if (!(p->backlash > 0.0))
    dg_init_idle(init, DG_HOOK_PRE_STEP | DG_HOOK_POST_STEP | DG_HOOK_EVENTS);
  return 0;
}

static void spring_state_upstream(dg_block *self, dg_topo *topo) {
  const spring_params *p = self->params;
  spring_data *d = self->data;
  dg_topo_dof(topo, self, PORT_OUT);
  dg_topo_dof(topo, self, PORT_IN);
  dg_topo_inertia(topo, self, PORT_IN, 0.5 * p->inertia);
  dg_topo_inertia(topo, self, PORT_OUT, 0.5 * p->inertia);
  d->tie = -1;
  if (d->rigid) {
    d->tie = dg_topo_lock(topo, self, PORT_IN, PORT_OUT);
  }
}

static void spring_update_side(dg_block *self, dg_ctx *ctx) {
  const spring_params *p = self->params;
  spring_data *d = self->data;
  double th = dg_block_state(ctx, self)[0], dw = rel_speed(self, ctx);
  int side = spring_decide(p, d->side, th, dw);
  if (side != d->side) /* a new contact: its sub-mode decided afresh */
    d->lim = (signal_side){0};
  d->side = side;
  if (p->law == LAW_ELASTO_BACKLASH && side != SIDE_FREE) {
    double tc = p->stiffness * (th - side * half_lash(p)), td = p->damping * dw;
    signal_side_decide(&d->lim, side * td, side * tc);
  }
}

static void spring_torque_downstream(dg_block *self, dg_ctx *ctx) {
  const spring_params *p = self->params;
  const spring_data *d = self->data;
  double dw = rel_speed(self, ctx);
  dg_block_state_rate(ctx, self)[0] = dw;
  if (d->rigid) /* the tie carries the torque */
    return;
  double t = spring_torque(p, d, dg_block_state(ctx, self)[0], dw);
  dg_port_add_torque(ctx, self, PORT_IN, -t);
  dg_port_add_torque(ctx, self, PORT_OUT, t);
}

static int spring_event_values(const dg_block *self, dg_ctx *ctx, double *g) {
  const spring_params *p = self->params;
  const spring_data *d = self->data;
  g[0] = g[1] = g[2] = 1.0;
  if (!(p->backlash > 0.0) || d->rigid)
    return 0;
  double th = dg_block_state(ctx, self)[0], dw = rel_speed(self, ctx), eps = twist_tol(p);
  if (p->law == LAW_ELASTO_BACKLASH && d->side != SIDE_FREE) {
    double tc = p->stiffness * (th - d->side * half_lash(p)), td = p->damping * dw;
    g[2] = signal_side_event(&d->lim, d->side * td, d->side * tc);
  }
  if (d->side == SIDE_DRIVE) {
    g[0] = gap_drive(p, th, dw) + eps;
  } else if (d->side == SIDE_COAST) {
    g[1] = gap_coast(p, th, dw) + eps;
  } else {
    g[0] = eps - gap_drive(p, th, dw);
    g[1] = eps - gap_coast(p, th, dw);
  }
  return 1;
}

/* The start: `in` turns with `out`; then the static twist (see the top).
 * Each DG_START_CHECK round after a mode change calls this again. */
static void spring_start(dg_block *self, dg_ctx *ctx, int phase) {
  const spring_params *p = self->params;
  spring_data *d = self->data;
  if (phase == DG_START_PROPOSE) {
    d->start_stage = START_NONE;
    dg_ctx_start_speed_why(ctx, self, PORT_IN, dg_port_speed(ctx, self, PORT_OUT),
                           "turning with its out end");
    return;
  }
  if (d->start_stage == START_NONE) {
    double w_in = dg_port_speed(ctx, self, PORT_IN), w_out = dg_port_speed(ctx, self, PORT_OUT);
    bool together =
        fabs(w_in - w_out) <= SPEED_REL_TOL * (fabs(w_in) + fabs(w_out)) + SPEED_ABS_TOL;
    if (d->twist_given || !together) {
      d->start_stage = START_DONE;
      return;
    }
    d->rigid = true;
    d->start_stage = START_RIGID;
    dg_ctx_request_topology(ctx);
    return;
  }
  if (d->start_stage != START_RIGID || !d->rigid)
    return;
  double t = -dg_ctx_tie_force(ctx, d->tie);
  double *th = dg_block_state_commit(ctx, self);
  int side = p->backlash > 0.0 && t < 0.0 ? SIDE_COAST : SIDE_DRIVE;
  *th = t / p->stiffness + side * half_lash(p);
  d->side = side;
  d->rigid = false;
  d->start_stage = START_DONE;
  dg_ctx_request_topology(ctx);
}

static double spring_signal(const dg_block *self, const dg_ctx *ctx, int index) {
  const spring_params *p = self->params;
  const spring_data *d = self->data;
  double th = dg_block_state(ctx, self)[0], dw = rel_speed(self, ctx);
  switch (index) {
  case SIG_TWIST:
    return th;
  case SIG_TORQUE:
    return spring_torque(p, d, th, dw);
  case SIG_TWIST_RATE:
    return dw;
  case SIG_IN_CONTACT:
    return d->side != SIDE_FREE ? 1.0 : 0.0;
  case SIG_POTENTIAL_ENERGY: {
    if (d->side == SIDE_FREE)
      return 0.0;
    double phi = th - d->side * half_lash(p);
    return 0.5 * p->stiffness * phi * phi;
  }
  default:
    return NAN;
  }
}

/* An initial twist: kept by the start; the contact follows from it. */
static int spring_set_signal(dg_block *self, dg_ctx *ctx, int index, double value) {
  const spring_params *p = self->params;
  spring_data *d = self->data;
  if (index != SIG_TWIST || !isfinite(value))
    return -1;
  *dg_block_state_commit(ctx, self) = value;
  d->twist_given = true;
  if (p->backlash > 0.0)
    d->side = value >= half_lash(p) ? SIDE_DRIVE : (value <= -half_lash(p) ? SIDE_COAST : SIDE_FREE);
  return 0;
}

const dg_block_class dg_block_spring_damper = {
    .abi = DG_BLOCK_ABI,
    .type = "spring_damper",
    .flags = DG_CLASS_COMPLIANCE,
    .doc = "Torsional spring and damper between in and out (a half-shaft, a coupling) with "
           "optional backlash: T = k (twist - b/2) + c (w_in - w_out) while the flanks touch, 0 "
           "in the dead band; the twist is a state and starts at the static twist the start "
           "needs.",
    .ports = spring_ports,
    .params = spring_params_table,
    .params_size = sizeof(spring_params),
    .signals = spring_signals,
    .data_size = sizeof(spring_data),
    .num_states = 1,
    .check = spring_check,
    .init = spring_init,
    .pre_step = spring_update_side,
    .state_upstream = spring_state_upstream,
    .torque_downstream = spring_torque_downstream,
    .post_step = spring_update_side,
    .signal = spring_signal,
    .set_signal = spring_set_signal,
    .start = spring_start,
    .num_events = 3,
    .event_values = spring_event_values,
};
