/* one_way_clutch — a freewheel (sprag or roller clutch): carries torque
 * one way, overruns the other.
 *
 * Ports: `in` is the driving side, `out` the driven side; the outer race's
 * inertia `inertia` sits on `out`.
 *
 * Sign convention: slip Δω = ω_in − ω_out; T is the torque transmitted
 * from `in` to `out` (−T applied at `in`, +T at `out`). The freewheel
 * never lets `in` run ahead of `out` (Δω <= 0) and transmits only T >= 0:
 * `in` drives `out` forward, never holds it back. So a faster `out`
 * overruns (a bicycle's rear wheel coasting past the pedals), and `in`
 * catching up from behind drives it.
 *
 * Modes (index 0 is the start mode):
 *   0 overrunning: `in` and `out` are separate DOFs (dg_topo_dof(in)); no
 *     torque.
 *   1 locked: the tie ω_in − ω_out = 0. Its multiplier λ (dg_ctx_tie_force)
 *     is the torque the lock applies at `in`, so T = −λ.
 * overrunning → locked: the slip rises to zero (`in` catches up):
 *   Δω >= −tol, located inside the step by event g0 = −Δω, so the lock
 *   comes at the slip's root without an impact. Also in pre_step whenever
 *   Δω >= −tol (a start with equal speeds, or with `in` ahead, which then
 *   locks with a plastic impact the solver books). tol = 1e-10 · (|ω_in| +
 *   |ω_out|) + 1e-12 rad/s, as clutch.c.
 * locked → overrunning: the lock's torque would reverse, T < 0 (λ > 0):
 *   located by event g1 = T + tol_T, decided in post_step by T < −tol_T/2,
 *   where tol_T = 1e-9 · |T at the segment's start| + 1e-9 N·m separates a
 *   torque that changes sign from the round-off of a multiplier (~1e-13 of
 *   the torques involved) and from the located point's offset (the event is
 *   found on the dense output, post_step runs on the RK4 step to it). A
 *   lock carrying no torque (two shafts coasting together) stays locked.
 *   The next segment starts at Δω = 0 and `in` falls behind; pre_step does
 *   not lock again at the instant it let go. */
#include <drivegraph/block.h>
#include <math.h>

enum { PORT_IN, PORT_OUT };
enum { MODE_OVERRUNNING, MODE_LOCKED, NUM_MODES };
enum { SIG_OMEGA, SIG_OMEGA_OUT, SIG_SLIP_RPM, SIG_TORQUE, SIG_LOCKED };
#define TORQUE_REL_TOL 1e-9
#define TORQUE_ABS_TOL 1e-9

typedef struct owc_params {
  double inertia;
} owc_params;

typedef struct owc_data {
  int mode;           /* MODE_* */
  bool just_released; /* unlocked in the last post_step: Δω = 0 */
  double torque;      /* T at the last post_step of the current lock */
  double torque_tol;  /* tol_T for the segment */
  int tie;            /* the lock's tie while locked, -1 otherwise */
} owc_data;

static const char *const owc_mode_names[NUM_MODES] = {"overrunning", "locked"};

static const dg_port_def owc_ports[] = {
    {.name = "in", .dir = DG_PORT_IN, .domain = DG_ROTATIONAL, .doc = "driving side"},
    {.name = "out", .dir = DG_PORT_OUT, .domain = DG_ROTATIONAL,
     .doc = "driven side (overruns when faster than in)"},
    {0},
};

static const dg_param_def owc_params_table[] = {
    DG_NUMBER(owc_params, inertia, .unit = "kg*m^2", .flags = DG_P_MIN | DG_P_INERTIA,
              .doc = "outer race inertia, on `out`"),
    {0},
};

static const dg_signal_def owc_signals[] = {
    {.name = "omega", .unit = "rad/s", .doc = "driving-side speed", .port = PORT_IN, .scale = 1},
    {.name = "omega_out", .unit = "rad/s", .doc = "driven-side speed", .port = PORT_OUT,
     .scale = 1},
    {.name = "slip_rpm", .unit = "rpm", .doc = "in minus out (<= 0: overrunning)",
     .port = DG_SIGNAL_HOOK},
    {.name = "torque", .unit = "N*m",
     .doc = "torque transmitted from in to out (>= 0; the lock's multiplier at the last step's "
            "end, 0 while overrunning)",
     .port = DG_SIGNAL_HOOK},
    {.name = "locked", .unit = "", .doc = "1 when locked, 0 when overrunning",
     .port = DG_SIGNAL_HOOK, .flags = DG_SIGNAL_BOOL},
    {0},
};

static double owc_slip(const dg_block *self, const dg_ctx *ctx) {
  return dg_port_speed(ctx, self, PORT_IN) - dg_port_speed(ctx, self, PORT_OUT);
}

static int owc_init(dg_block *self, dg_init *init) {
  (void)init;
  owc_data *d = self->data;
  d->mode = MODE_OVERRUNNING;
  d->tie = -1;
  return 0;
}

static int owc_mode_count(const dg_block *self) {
  (void)self;
  return NUM_MODES;
}

static void owc_mode_set(dg_block *self, int mode) {
  owc_data *d = self->data;
  d->mode = mode == MODE_LOCKED ? MODE_LOCKED : MODE_OVERRUNNING;
}

static const char *owc_mode_name(const dg_block *self, int mode) {
  (void)self;
  return mode >= 0 && mode < NUM_MODES ? owc_mode_names[mode] : NULL;
}

static void owc_state_upstream(dg_block *self, dg_topo *topo) {
  const owc_params *p = self->params;
  owc_data *d = self->data;
  dg_topo_dof(topo, self, PORT_IN);
  dg_topo_inertia(topo, self, PORT_OUT, p->inertia);
  d->tie = -1;
  if (d->mode == MODE_LOCKED) {
    d->tie = dg_topo_lock(topo, self, PORT_IN, PORT_OUT);
  }
}

static void owc_set_mode(owc_data *d, dg_ctx *ctx, int mode, bool in_post_step) {
  d->mode = mode;
  d->torque = 0.0;
  d->just_released = mode == MODE_OVERRUNNING && in_post_step;
  dg_ctx_request_topology(ctx);
}

static void owc_pre_step(dg_block *self, dg_ctx *ctx) {
  owc_data *d = self->data;
  d->torque_tol = TORQUE_REL_TOL * fabs(d->torque) + TORQUE_ABS_TOL;
  if (d->mode == MODE_OVERRUNNING && !d->just_released &&
      owc_slip(self, ctx) >= -dg_slip_zero_tol(ctx, self, PORT_IN, PORT_OUT))
    owc_set_mode(d, ctx, MODE_LOCKED, false);
  d->just_released = false;
}

static void owc_post_step(dg_block *self, dg_ctx *ctx) {
  owc_data *d = self->data;
  if (d->mode == MODE_LOCKED) {
    double t = -dg_ctx_tie_force(ctx, d->tie);
    if (t < -0.5 * d->torque_tol)
      owc_set_mode(d, ctx, MODE_OVERRUNNING, true);
    else
      d->torque = t;
    return;
  }
  if (owc_slip(self, ctx) >= -dg_slip_zero_tol(ctx, self, PORT_IN, PORT_OUT))
    owc_set_mode(d, ctx, MODE_LOCKED, true);
}

/* At a segment's start, with the tie forces of the mode just built: a
 * lock whose torque is reversed lets go there (a clutch in parallel that
 * carried the pair let go at this time), not at the segment's end. */
static void owc_hold_check(dg_block *self, dg_ctx *ctx) {
  owc_data *d = self->data;
  if (d->mode != MODE_LOCKED)
    return;
  double t = -dg_ctx_tie_force(ctx, d->tie);
  if (t < -0.5 * d->torque_tol)
    owc_set_mode(d, ctx, MODE_OVERRUNNING, true);
}

/* g0 = −Δω while overrunning (`in` catching up); g1 = T + tol_T while
 * locked (the transmitted torque reversing). */
static int owc_event_values(const dg_block *self, dg_ctx *ctx, double *g) {
  const owc_data *d = self->data;
  g[0] = g[1] = 1.0;
  if (d->mode == MODE_LOCKED)
    g[1] = d->torque_tol - dg_ctx_tie_force(ctx, d->tie);
  else
    g[0] = -owc_slip(self, ctx);
  return 1;
}

static double owc_signal(const dg_block *self, const dg_ctx *ctx, int index) {
  const owc_data *d = self->data;
  switch (index) {
  case SIG_SLIP_RPM:
    return owc_slip(self, ctx) * DG_RPM_PER_RAD_S;
  case SIG_TORQUE:
    return d->mode == MODE_LOCKED ? d->torque : 0.0;
  case SIG_LOCKED:
    return d->mode == MODE_LOCKED ? 1.0 : 0.0;
  default:
    return NAN;
  }
}

const dg_block_class dg_block_one_way_clutch = {
    .abi = DG_BLOCK_ABI,
    .type = "one_way_clutch",
    .doc = "Freewheel: locks when the driving side catches up with the driven side and carries "
           "torque from in to out only; overruns (no torque) while out turns faster; unlocks "
           "when the transmitted torque would reverse.",
    .ports = owc_ports,
    .params = owc_params_table,
    .params_size = sizeof(owc_params),
    .signals = owc_signals,
    .data_size = sizeof(owc_data),
    .init = owc_init,
    .mode_count = owc_mode_count,
    .mode_set = owc_mode_set,
    .mode_name = owc_mode_name,
    .pre_step = owc_pre_step,
    .state_upstream = owc_state_upstream,
    .post_step = owc_post_step,
    .hold_check = owc_hold_check,
    .signal = owc_signal,
    .num_events = 2,
    .event_values = owc_event_values,
};
