/* gear — a fixed ratio: final drive, transfer gear, reduction.
 *
 *   ω_in = r · ω_out    (r = ratio)
 *
 * Torque flows the other way by virtual work, with the mesh's loss: the
 * driving side supplies the power P, the driven side receives η·P (the
 * solver's lossy mesh, lib/solver/loss.c; torques transmitted include the
 * inertial torque of what is driven), with η = η_f (`efficiency`) while
 * `in` drives and η_r (`efficiency_reverse`, default η_f) while `out`
 * drives. Either may follow a table over |ω_in| (efficiency_table,
 * efficiency_reverse_table; the solver evaluates it at every stage, at the
 * stage's speed; the stuck mode uses its value at rest). A table is
 * linear between its breakpoints and clamped beyond them, so each
 * breakpoint is a kink of η(|ω_in|): the gear holds, for each table, the
 * two breakpoints that bracket |ω_in| at a segment's start and locates
 * |ω_in| reaching either as an event (g2 forward table, g3 reverse table:
 * min(|ω_in| − x_lo, x_hi − |ω_in|)), so the loss is smooth inside every
 * segment and RK4 keeps its order across the kinks. A segment that starts
 * on a breakpoint (within 1e-9 relative) after a located crossing of it
 * takes the interval beyond; one that starts on it otherwise (at rest at
 * ω = 0, after a restore) watches the next breakpoints only, as the signal
 * blocks do with their boundaries (blocks/signal_side.h). The optional
 * inertia is that of the gear set referred to the input shaft. Bearing
 * friction (optional), on each shaft:
 *   −(c0 · s + c1 · ω_in) at `in`   (bearing_c0, bearing_c1),
 *   −(c0b · s + c1b · ω_out) at `out` (bearing_out_c0, bearing_out_c1),
 * with s the direction of rotation, fixed for a segment as a load's
 * Coulomb friction (blocks/load.c). So a Modelica LossyGear's τ_bf_a and
 * τ_bf_b are c0 and c0b (its lossTable's τ_bf1 = η_f c0 + c0b / r,
 * τ_bf2 = c0 / η_r + c0b / r).
 *
 * The stuck mode (Modelica's LossyGear "locked"): at rest the mesh holds
 * while neither side can drive the other through it. With T_a the torque
 * the rest of the graph applies at `in` and T_b at `out` while held, and
 * η_f, η_r the efficiencies that count (`self_locking`: the mesh's; else
 * 1, so that only the bearing holds), the mesh can turn
 *   forward  (ω_out > 0) when F = min(η_f r (T_a − c0) + T_b − c0b,
 *                                     r (T_a − c0) + η_r (T_b − c0b)) > 0,
 *   backward (ω_out < 0) when B = min(−η_f r (T_a + c0) − T_b − c0b,
 *                                     −r (T_a + c0) − η_r (T_b + c0b)) > 0:
 * the first term of each is `in` driving (its bearing takes c0 of its
 * torque before the mesh; η_f r of the rest arrives at `out`, whose
 * bearing takes c0b), the second `out` driving (η_r of T_b less its
 * bearing arrives at `in`, against T_a and the bearing; scaled by r). F + B <= 0, so at most one
 * holds; with F <= 0 and B <= 0 it sticks: with c0 = 0 and T_a > 0, η_f r T_a <= −T_b <= r T_a /
 * η_r. It has a stuck mode when self_locking is set with an efficiency below 1, or a bearing has
 * Coulomb friction. Modes (index 0 is the start mode): 0 rolling: the link ω_in = r ω_out with η_f
 * / η_r; s = sign(ω_out) fixed in pre_step for the segment; 1 stuck: `in` a DOF, the tie ω_in − r
 * ω_out = 0 (multiplier μ: μ at `in`, −r μ at `out`) and the tie ω_out = 0 to ground (multiplier λ
 * at `out`). At rest the node balances give T_a = −μ and T_b = r μ − λ. No power flows, so nothing
 * is lost. rolling → stuck: ω_out reaches zero (event g0 = ω_out·s − tol, located inside the step),
 * or the gear is found at rest in pre_step; the stuck mode's forces then decide at once
 * (hold_check, at the next segment's start) whether it stays. stuck → rolling: F or B above tol_T =
 * 1e-9 (|r T_a| + |T_b|) + 1e-9 N·m (event g1 = tol_T − max(F, B), so a torque that comes to
 * overcome the lock releases it at that time; also hold_check and post_step). It then rolls the way
 * it can (s = +1 for F, −1 for B); at the instant it lets go pre_step does not stick it again.
 * Tolerances as load.c's. Without a stuck mode a lossy mesh at rest under torques inside its
 * locking band finds no consistent direction of power flow, and its speed
 * chatters around zero (amplitude ∝ dt): set self_locking for such uses.
 * The stuck mode's hold is a tie to ground on `out`, so a graph that also
 * holds that shaft (a brake, a wheel's brake on the hub) or prescribes a
 * speed on the gear's shafts is refused by the every-mode check. */
#include <drivegraph/block.h>
#include <math.h>
#include <stdio.h>

enum { PORT_IN, PORT_OUT };
enum { MODE_ROLLING, MODE_STUCK, NUM_MODES };
#define REST_TOL 1e-12
#define REST_REL 1e-10
#define TORQUE_REL_TOL 1e-9
#define TORQUE_ABS_TOL 1e-9

typedef struct gear_params {
  double ratio;
  double efficiency;
  double efficiency_reverse;
  bool has_efficiency_reverse;
  bool self_locking;
  double inertia;
  double bearing_c0, bearing_c1, bearing_out_c0, bearing_out_c1;
  dg_table1d efficiency_table, efficiency_reverse_table;
} gear_params;

typedef struct gear_data {
  int mode;           /* MODE_* */
  int dir;            /* s = sign(ω_out) for the segment */
  bool just_released; /* let go at this instant: at rest, not to stick again */
  double rest_tol;    /* REST_TOL + REST_REL |ω_out| at the segment's start */
  int tie_ratio, tie_hold; /* the stuck mode's ties, -1 otherwise */
  /* per efficiency table (forward, reverse): the breakpoints bracketing
   * |ω_in| over the segment (±INFINITY: none), once decided */
  double lo[2], hi[2];
  bool bracketed[2];
} gear_data;

static const char *const gear_mode_names[NUM_MODES] = {"rolling", "stuck"};

static const dg_port_def gear_ports[] = {
    {.name = "in", .dir = DG_PORT_IN, .domain = DG_ROTATIONAL, .doc = "input shaft (engine side)"},
    {.name = "out", .dir = DG_PORT_OUT, .domain = DG_ROTATIONAL, .doc = "output shaft (road side)"},
    {0},
};

static const dg_param_def gear_params_table[] = {
    DG_NUMBER(gear_params, ratio, .unit = "", .required = true, .flags = DG_P_MIN_EXCL,
              .doc = "speed ratio in/out (> 1 reduces speed and multiplies torque)"),
    /* structural: below 1 the mesh has a stuck (self-locking) mode */
    DG_NUMBER(gear_params, efficiency, .unit = "", .def = 1.0, .flags = DG_P_MIN_EXCL | DG_P_MAX,
              .max = 1,
              .doc = "power efficiency of the mesh while `in` drives (and both ways without "
                     "efficiency_reverse)"),
    {.key = "efficiency_reverse", .kind = DG_PARAM_NUMBER,
     .offset = offsetof(gear_params, efficiency_reverse), .unit = "",
     .doc = "power efficiency of the mesh while `out` drives (default: efficiency)",
     .flags = DG_P_MIN_EXCL | DG_P_MAX, .min = 0, .max = 1,
     .present = DG_PRESENT(gear_params, has_efficiency_reverse)},
    /* structural: the stuck mode */
    {.key = "self_locking", .kind = DG_PARAM_BOOL, .offset = offsetof(gear_params, self_locking),
     .unit = "",
     .doc = "at rest, the mesh holds while neither side can drive the other through its "
            "losses (Modelica's LossyGear); its hold is a tie to ground on `out`",
     .def = 0},
    DG_NUMBER(gear_params, bearing_c0, .unit = "N*m", .flags = DG_P_MIN,
              .doc = "bearing friction on `in`: Coulomb torque, sticking at rest up to it"),
    DG_NUMBER(gear_params, bearing_c1, .unit = "N*m*s/rad", .flags = DG_P_MIN | DG_P_DYNAMICS,
              .doc = "bearing friction on `in`: viscous torque per "
                     "unit speed"),
    DG_NUMBER(gear_params, bearing_out_c0, .unit = "N*m", .flags = DG_P_MIN,
              .doc = "bearing friction on `out`: Coulomb torque, sticking at rest up to it"),
    DG_NUMBER(gear_params, bearing_out_c1, .unit = "N*m*s/rad", .flags = DG_P_MIN | DG_P_DYNAMICS,
              .doc = "bearing friction on `out`: viscous torque per "
                     "unit speed"),
    {.key = "efficiency_table", .kind = DG_PARAM_TABLE1D,
     .offset = offsetof(gear_params, efficiency_table), .unit = "",
     .doc = "efficiency while `in` drives over |omega_in| (rad/s), in place of efficiency",
     .flags = DG_P_MIN_EXCL | DG_P_MAX, .min = 0, .max = 1, .axis = {"omega", "efficiency"}},
    {.key = "efficiency_reverse_table", .kind = DG_PARAM_TABLE1D,
     .offset = offsetof(gear_params, efficiency_reverse_table), .unit = "",
     .doc = "efficiency while `out` drives over |omega_in| (rad/s), in place of "
            "efficiency_reverse (default: efficiency_table, if given)",
     .flags = DG_P_MIN_EXCL | DG_P_MAX, .min = 0, .max = 1, .axis = {"omega", "efficiency"}},
    DG_NUMBER(gear_params, inertia, .unit = "kg*m^2", .flags = DG_P_MIN | DG_P_INERTIA,
              .doc = "inertia referred to the input shaft"),
    {0},
};

enum { SIG_OMEGA, SIG_OMEGA_OUT, SIG_STUCK, SIG_BEARING };
static const dg_signal_def gear_signals[] = {
    {.name = "omega", .unit = "rad/s", .doc = "input shaft speed", .port = PORT_IN, .scale = 1},
    {.name = "omega_out", .unit = "rad/s", .doc = "output shaft speed", .port = PORT_OUT, .scale = 1},
    {.name = "stuck", .unit = "", .doc = "1 while the mesh holds at rest (stuck mode), else 0",
     .port = DG_SIGNAL_HOOK, .flags = DG_SIGNAL_BOOL},
    {.name = "bearing_torque", .unit = "N*m",
     .doc = "torque the bearing friction applies to `in` while rolling (0 while stuck)",
     .port = DG_SIGNAL_HOOK},
    {0},
};

static bool gear_sticks(const gear_params *p);
static const dg_table1d *gear_watched(const gear_params *p, int k);

static int gear_init(dg_block *self, dg_init *init) {
  const gear_params *p = self->params;
  gear_data *d = self->data;
  d->mode = MODE_ROLLING;
  d->tie_ratio = d->tie_hold = -1;
  /* without bearing friction, a stuck mode or tables to watch, the gear is
   * its link alone (the mesh's loss is the solver's): no torque, nothing
   * to decide, no event */
  if (!gear_sticks(p) && !gear_watched(p, 0) && !gear_watched(p, 1) && p->bearing_c0 == 0.0 &&
      p->bearing_c1 == 0.0 && p->bearing_out_c0 == 0.0 && p->bearing_out_c1 == 0.0)
    dg_init_idle(init, DG_HOOK_PRE_STEP | DG_HOOK_TORQUE | DG_HOOK_POST_STEP | DG_HOOK_EVENTS |
                           DG_HOOK_HOLD_CHECK);
  return 0;
}

/* The tables in use: efficiency_table for `in` driving; for `out`
 * driving efficiency_reverse_table, else efficiency_table when no constant
 * efficiency_reverse is given. NULL: the constant. */
static const dg_table1d *gear_table(const gear_params *p) {
  return p->efficiency_table.n > 0 ? &p->efficiency_table : NULL;
}

static const dg_table1d *gear_table_reverse(const gear_params *p) {
  if (p->efficiency_reverse_table.n > 0)
    return &p->efficiency_reverse_table;
  return p->has_efficiency_reverse ? NULL : gear_table(p);
}

/* η_f and η_r at rest (the stuck mode's), and the smallest value each can
 * take (below 1: the link is a lossy mesh). */
static double table_min(const dg_table1d *t) {
  double m = 1.0;
  for (int i = 0; i < t->n; i++)
    m = dg_fmin(m, t->y[i]);
  return m;
}

static double gear_eta(const gear_params *p) {
  return gear_table(p) ? dg_table1d_eval(gear_table(p), 0.0) : p->efficiency;
}

static double gear_eta_reverse(const gear_params *p) {
  const dg_table1d *t = gear_table_reverse(p);
  return t ? dg_table1d_eval(t, 0.0) : p->has_efficiency_reverse ? p->efficiency_reverse
                                                                   : p->efficiency;
}

static void gear_check(const void *params, dg_check *chk) {
  const gear_params *p = params;
  const dg_table1d *t[2] = {&p->efficiency_table, &p->efficiency_reverse_table};
  static const char *const key[2] = {"efficiency_table", "efficiency_reverse_table"};
  for (int k = 0; k < 2; k++)
    for (int i = 0; i < t[k]->n; i++)
      if (t[k]->x[i] < 0.0) {
        char path[64];
        snprintf(path, sizeof path, "%s/omega/%d", key[k], i);
        dg_check_error(chk, path, "must be >= 0 (got %g)", t[k]->x[i]);
      }
  if (p->efficiency_table.n > 0 && p->efficiency != 1.0)
    dg_check_error(chk, "efficiency", "give efficiency or efficiency_table, not both");
  if (p->efficiency_reverse_table.n > 0 && p->has_efficiency_reverse)
    dg_check_error(chk, "efficiency_reverse",
                   "give efficiency_reverse or efficiency_reverse_table, not both");
}

/* Whether the gear has a stuck mode (see the file comment). */
static bool gear_sticks(const gear_params *p) {
  return (p->self_locking && (gear_eta(p) < 1.0 || gear_eta_reverse(p) < 1.0)) ||
         p->bearing_c0 > 0.0 || p->bearing_out_c0 > 0.0;
}

static int gear_mode_count(const dg_block *self) { return gear_sticks(self->params) ? NUM_MODES : 1; }

static void gear_mode_set(dg_block *self, int mode) {
  gear_data *d = self->data;
  d->mode = mode == MODE_STUCK ? MODE_STUCK : MODE_ROLLING;
}

static const char *gear_mode_name(const dg_block *self, int mode) {
  (void)self;
  return mode >= 0 && mode < NUM_MODES ? gear_mode_names[mode] : NULL;
}

static void gear_state_upstream(dg_block *self, dg_topo *topo) {
  const gear_params *p = self->params;
  gear_data *d = self->data;
  d->tie_ratio = d->tie_hold = -1;
  if (d->mode == MODE_STUCK) {
    static const int ports[2] = {PORT_IN, PORT_OUT}, out = PORT_OUT;
    static const double one = 1.0;
    const double coef[2] = {1.0, -p->ratio};
    dg_topo_dof(topo, self, PORT_IN);
    d->tie_ratio = dg_topo_tie(topo, self, 2, ports, coef);
    d->tie_hold = dg_topo_tie(topo, self, 1, &out, &one);
    dg_topo_tie_yielding(topo, self, d->tie_hold); /* another hold of out takes the load */
  } else {
    const dg_table1d *tf = gear_table(p), *tr = gear_table_reverse(p);
    double ef = tf ? table_min(tf) : p->efficiency;
    double er = tr ? table_min(tr) : p->has_efficiency_reverse ? p->efficiency_reverse : ef;
    dg_topo_ratio_directed(topo, self, PORT_IN, PORT_OUT, p->ratio, ef, er);
    if ((tf || tr) && (ef < 1.0 || er < 1.0))
      dg_topo_mesh_tables(topo, self, tf, tr);
  }
  dg_topo_inertia(topo, self, PORT_IN, p->inertia);
}

static void gear_set_mode(gear_data *d, dg_ctx *ctx, int mode, bool released) {
  if (mode == d->mode)
    return;
  d->mode = mode;
  d->just_released = released;
  dg_ctx_request_topology(ctx);
}

/* F and B of the stuck mode at the context's point (the file comment),
 * and tol_T. */
static void gear_drive_excess(const dg_block *self, dg_ctx *ctx, double *f, double *b,
                              double *tol) {
  const gear_params *p = self->params;
  const gear_data *d = self->data;
  double r = p->ratio, c0 = p->bearing_c0, cb = p->bearing_out_c0;
  double ef = p->self_locking ? gear_eta(p) : 1.0;
  double er = p->self_locking ? gear_eta_reverse(p) : 1.0;
  double mu = dg_ctx_tie_force(ctx, d->tie_ratio), lam = dg_ctx_tie_force(ctx, d->tie_hold);
  double ta = -mu, tb = r * mu - lam;
  *f = dg_fmin(ef * r * (ta - c0) + tb - cb, r * (ta - c0) + er * (tb - cb));
  *b = dg_fmin(-ef * r * (ta + c0) - tb - cb, -r * (ta + c0) - er * (tb + cb));
  *tol = TORQUE_REL_TOL * (fabs(r * ta) + fabs(tb)) + TORQUE_ABS_TOL;
}

/* The tables whose breakpoints are watched: [0] the forward one, [1] the
 * reverse one when it is another table. */
static const dg_table1d *gear_watched(const gear_params *p, int k) {
  const dg_table1d *tf = gear_table(p);
  if (k == 0)
    return tf;
  const dg_table1d *tr = gear_table_reverse(p);
  return tr != tf ? tr : NULL;
}

/* The breakpoints of t bracketing v = |ω_in| at a segment's start (see the
 * file comment): on a breakpoint just crossed (the last bracket's end),
 * the interval beyond it; on one otherwise, the neighbours only. */
static void gear_bracket(const dg_table1d *t, double v, double *lo, double *hi, bool known) {
  int n = t->n, on = -1;
  for (int i = 0; i < n && on < 0; i++)
    if (fabs(v - t->x[i]) <= 1e-9 * dg_fmax(fabs(v), fabs(t->x[i])))
      on = i;
  if (on < 0) {
    *lo = -INFINITY;
    *hi = INFINITY;
    for (int i = 0; i < n; i++) {
      if (t->x[i] < v)
        *lo = t->x[i];
      else if (t->x[i] > v && *hi == INFINITY)
        *hi = t->x[i];
    }
    return;
  }
  double below = on > 0 ? t->x[on - 1] : -INFINITY, above = on < n - 1 ? t->x[on + 1] : INFINITY;
  double x = t->x[on];
  if (known && *hi == x) { /* crossed upward */
    *lo = x;
    *hi = above;
  } else if (known && *lo == x) { /* crossed downward */
    *lo = below;
    *hi = x;
  } else {
    *lo = below;
    *hi = above;
  }
}

static void gear_pre_step(dg_block *self, dg_ctx *ctx) {
  gear_data *d = self->data;
  double v_in = fabs(dg_port_speed(ctx, self, PORT_IN));
  for (int k = 0; k < 2; k++) {
    const dg_table1d *t = gear_watched(self->params, k);
    if (t) {
      gear_bracket(t, v_in, &d->lo[k], &d->hi[k], d->bracketed[k]);
      d->bracketed[k] = true;
    }
  }
  double w = dg_port_speed(ctx, self, PORT_OUT);
  d->rest_tol = REST_TOL + REST_REL * fabs(w);
  if (d->mode == MODE_STUCK)
    return;
  if (fabs(w) > REST_TOL)
    d->dir = dg_sign(w);
  else if (d->just_released)
    ; /* at rest because it just let go: roll the way it can */
  else if (gear_sticks(self->params))
    gear_set_mode(d, ctx, MODE_STUCK, false);
  else
    d->dir = 0;
  d->just_released = false;
}

static void gear_torque_downstream(dg_block *self, dg_ctx *ctx) {
  const gear_params *p = self->params;
  const gear_data *d = self->data;
  if (d->mode == MODE_STUCK)
    return;
  if (p->bearing_c0 > 0.0 || p->bearing_c1 > 0.0) {
    double w = dg_port_speed(ctx, self, PORT_IN);
    dg_port_add_torque(ctx, self, PORT_IN, 0.0 - (p->bearing_c0 * d->dir + p->bearing_c1 * w));
  }
  if (p->bearing_out_c0 > 0.0 || p->bearing_out_c1 > 0.0) {
    double w = dg_port_speed(ctx, self, PORT_OUT);
    dg_port_add_torque(ctx, self, PORT_OUT,
                       0.0 - (p->bearing_out_c0 * d->dir + p->bearing_out_c1 * w));
  }
}

/* Stuck: lets go where a side can drive (hold_check at a segment's start,
 * post_step at its end), rolling the way it can. */
static void gear_hold_check(dg_block *self, dg_ctx *ctx) {
  gear_data *d = self->data;
  if (d->mode != MODE_STUCK)
    return;
  double f, b, tol;
  gear_drive_excess(self, ctx, &f, &b, &tol);
  if (dg_fmax(f, b) > 0.5 * tol) {
    d->dir = f > b ? 1 : -1;
    gear_set_mode(d, ctx, MODE_ROLLING, true);
  }
}

static void gear_post_step(dg_block *self, dg_ctx *ctx) {
  gear_data *d = self->data;
  if (d->mode == MODE_STUCK) {
    gear_hold_check(self, ctx);
    return;
  }
  if (gear_sticks(self->params) && d->dir != 0 &&
      dg_port_speed(ctx, self, PORT_OUT) * d->dir <= d->rest_tol)
    gear_set_mode(d, ctx, MODE_STUCK, false);
}

/* g0: a rolling gear with a stuck mode reaching rest; g1: a side able to
 * drive the stuck mesh; g2, g3: |ω_in| of a rolling gear reaching a
 * breakpoint of its forward, reverse efficiency table. */
static int gear_event_values(const dg_block *self, dg_ctx *ctx, double *g) {
  const gear_data *d = self->data;
  g[0] = g[1] = g[2] = g[3] = 1.0;
  if (d->mode == MODE_STUCK) {
    double f, b, tol;
    gear_drive_excess(self, ctx, &f, &b, &tol);
    g[1] = tol - dg_fmax(f, b);
    return 1;
  }
  int active = 0;
  if (gear_sticks(self->params) && d->dir != 0) {
    g[0] = dg_port_speed(ctx, self, PORT_OUT) * d->dir - d->rest_tol;
    active = 1;
  }
  double v = fabs(dg_port_speed(ctx, self, PORT_IN));
  for (int k = 0; k < 2; k++) {
    if (!d->bracketed[k] || !gear_watched(self->params, k))
      continue;
    double lo = isfinite(d->lo[k]) ? v - d->lo[k] : 1.0,
           hi = isfinite(d->hi[k]) ? d->hi[k] - v : 1.0;
    g[2 + k] = dg_fmin(lo, hi);
    active = 1;
  }
  return active;
}

static double gear_signal(const dg_block *self, const dg_ctx *ctx, int index) {
  const gear_params *p = self->params;
  const gear_data *d = self->data;
  if (index == SIG_STUCK)
    return d->mode == MODE_STUCK ? 1.0 : 0.0;
  double w = dg_port_speed(ctx, self, PORT_IN);
  int s = fabs(w) > REST_TOL ? dg_sign(w) : d->dir;
  return d->mode == MODE_STUCK ? 0.0 : 0.0 - (p->bearing_c0 * s + p->bearing_c1 * w);
}

const dg_block_class dg_block_gear = {
    .abi = DG_BLOCK_ABI,
    .type = "gear",
    .doc = "Fixed ratio (final drive, transfer gear) with an efficiency per direction of power "
           "flow, optional inertia and bearing friction; optionally self-locking: at rest the "
           "mesh holds while neither side can drive the other through its losses.",
    .ports = gear_ports,
    .params = gear_params_table,
    .params_size = sizeof(gear_params),
    .signals = gear_signals,
    .data_size = sizeof(gear_data),
    .check = gear_check,
    .init = gear_init,
    .mode_count = gear_mode_count,
    .mode_set = gear_mode_set,
    .mode_name = gear_mode_name,
    .pre_step = gear_pre_step,
    .state_upstream = gear_state_upstream,
    .torque_downstream = gear_torque_downstream,
    .post_step = gear_post_step,
    .signal = gear_signal,
    .num_events = 4,
    .event_values = gear_event_values,
    .hold_check = gear_hold_check,
};
