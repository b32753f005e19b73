/* The step room: EVENTS_PRE → PREPARE → 4 × {SPEEDS → FORCES → ACCEL} →
 * COMBINE → COMMIT → EVENTS_POST, in segments ended by input breakpoints
 * and by switching conditions located inside the step (a slip crossing
 * zero, a lock torque over capacity, a lossy mesh's power reversing), with
 * the energy audit booked at COMMIT. Workspaces: dg_event_ws,
 * dg_audit_ws (lib/sim.h). */
#include "solver.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

/* Speeds above this (rad/s or m/s) are a blow-up, not a drivetrain. */
#define SPEED_LIMIT DGP_SPEED_LIMIT
/* A step is cut into at most this many segments; past it, decisions are
 * taken at segment ends only (a block chattering between modes). */
#define MAX_SEGMENTS 32
/* An event is located to this fraction of the segment (and 1e-14 s). */
#define EVENT_TOL 1e-10

/* The largest |v| over n values, as the bits of their absolute values: for
 * doubles >= 0 the bits are ordered as the values, and inf and NaN have
 * the largest (any NaN above inf). Two running maxima, no branch, so a
 * value is an and, a compare and a move. */
static inline uint64_t abs_bits_max(const double *v, int n) {
  const uint64_t mask = ~((uint64_t)1 << 63);
  uint64_t m0 = 0, m1 = 0;
  int i = 0;
  for (; i + 1 < n; i += 2) {
    uint64_t a, b;
    memcpy(&a, v + i, sizeof a);
    memcpy(&b, v + i + 1, sizeof b);
    a &= mask;
    b &= mask;
    m0 = a > m0 ? a : m0;
    m1 = b > m1 ? b : m1;
  }
  if (i < n) {
    uint64_t a;
    memcpy(&a, v + i, sizeof a);
    a &= mask;
    m0 = a > m0 ? a : m0;
  }
  return m0 > m1 ? m0 : m1;
}

/* The block and port behind a non-finite or runaway value, for the error:
 * the pass check_finite makes only when its scan found one. */
static DGP_NOINLINE bool report_nonfinite(dg_sim *sim, const double *y);

/* Whether every DOF speed is finite and below SPEED_LIMIT and every
 * block state finite (the states are the blocks' slices of y, one after
 * the other): one scan of y's bits, the error's pass only after a find. */
static inline bool check_finite(dg_sim *sim, const double *y) {
  const double limit = SPEED_LIMIT, big = DBL_MAX;
  uint64_t lb, bb;
  memcpy(&lb, &limit, sizeof lb);
  memcpy(&bb, &big, sizeof bb);
  int nd = sim->sv.ndof;
  if (abs_bits_max(y, nd) < lb && abs_bits_max(y + nd, sim->ns) <= bb)
    return true;
  return report_nonfinite(sim, y);
}

static bool report_nonfinite(dg_sim *sim, const double *y) {
  int nd = sim->sv.ndof;
  for (int j = 0; j < nd; j++) {
    if (isfinite(y[j]) && fabs(y[j]) < SPEED_LIMIT)
      continue;
    int raw = sim->sv.ws.col_raw[j];
    int node = sim->sv.ws.raw_node[raw], owner = sim->sv.ws.raw_owner[raw];
    char lab[128], path[DG_ERROR_PATH_LEN];
    dgp_node_label(sim, node, lab, sizeof lab);
    dgp_pointer_append(path, sizeof path, "/blocks", sim->g->blocks[owner].id);
    dgp_error_set(&sim->err, DG_ERR_NUMERIC, sim->g->file, path,
                 "simulation diverged at t = %.6g s: speed of %s became %g (block \"%s\"); "
                 "reduce dt or check the parameters",
                 sim->t, lab, y[j], sim->g->blocks[owner].id);
    sim->failed = true;
    return false;
  }
  for (int i = 0; i < sim->n_state_blocks; i++) {
    const dg_block *b = &sim->blocks[sim->state_blocks[i]];
    int off = b->state;
    for (int k = 0; k < b->klass->num_states; k++) {
      double v = y[nd + off + k];
      if (isfinite(v))
        continue;
      char path[DG_ERROR_PATH_LEN];
      dgp_pointer_append(path, sizeof path, "/blocks", b->id);
      dgp_error_set(&sim->err, DG_ERR_NUMERIC, sim->g->file, path,
                   "simulation diverged at t = %.6g s: internal state %d of block \"%s\" (%s) "
                   "became %g; reduce dt or check the parameters",
                   sim->t, k, b->id, b->klass->type, v);
      sim->failed = true;
      return false;
    }
  }
  return true;
}

/* pre_step / post_step: the committed state, readable and writable; the
 * slots evaluated there first, unless slots_done says they already hold
 * that point's values */
static inline void run_hooks(dg_sim *sim, const dg_hook_entry *list, int n, bool slots_done) {
  sim->ctx.state = sim->sv.s;
  sim->ctx.state_rate = NULL;
  if (n == 0 && sim->n_slots == 0) { /* nothing to evaluate, no hook to call */
    sim->ctx.state_commit = NULL;
    return;
  }
  sim->ctx.state_commit = sim->sv.s;
  if (!slots_done)
    dgp_bind_eval(sim);
  for (int i = 0; i < n && !sim->failed; i++)
    list[i].fn(list[i].b, &sim->ctx);
  sim->ctx.state_commit = NULL;
}

/* HOLDS, at a segment's start after its first stage computed the tie
 * forces at the committed state, in the mode pre_step left and with the
 * segment's inputs: each hold_check hook lets go of a hold those forces
 * overload. True when one did (the caller builds the new mode and asks
 * again). The hooks only release, so each round drops at least one hold
 * and the rounds end; the caller stops after one round per block with the
 * hook (each keeps one hold). So a hold that cannot be kept at a segment's
 * start — t = 0, after a restore, after another element switched, at an
 * input's jump — lets go there, not at the segment's end: its event
 * function (a capacity minus the held torque) is already below zero where
 * the segment starts, and an event is located only where one crosses. */
bool dgp_hold_pass(dg_sim *sim, double t, double h) {
  dg_ctx *ctx = &sim->ctx;
  ctx->t = t;
  ctx->dt = h;
  ctx->speed = sim->sv.x;
  ctx->torque = sim->sv.tau;
  sim->topo_request = false;
  run_hooks(sim, sim->hold, sim->n_hold, false);
  return !sim->failed && sim->topo_request;
}

/* Event functions in all: the blocks', then one per lossy mesh. */
static int event_count(const dg_sim *sim) { return sim->n_events + sim->sv.ws.nmesh; }

/* The event functions: the blocks' (event_values hooks) at the context's
 * point, then each watched mesh's power `p` in its held direction, d·P (it
 * reverses where it reaches 0), 1 for the others. The powers are those of
 * the derivative evaluated at that point (the first stage, a point on the
 * dense output) — at a segment's end, those of its fourth stage (y0 + h k3,
 * O(h²) from the end): the reversal is then located with evaluations on
 * the dense output, and one missed within O(h²) of the end costs O(h⁴),
 * without a fifth evaluation in every segment. */
static int event_values(dg_sim *sim, double *g, const double *p) {
  int active = 0;
  const dg_hook_entry *evb = sim->evb; /* in locals: a hook may write any memory, */
  const int *off = sim->ev_off;        /* but never these lists */
  dg_ctx *ctx = &sim->ctx;
  for (int i = 0, n = sim->n_evb; i < n; i++) {
    const dg_block *b = evb[i].b;
    active += b->klass->event_values(b, ctx, g + off[i]) != 0;
  }
  return active + dgp_loss_event_values(sim, g + sim->n_events, p);
}

/* Event functions at t + θh on the dense output (a full right-hand side
 * there, so speeds, states, inputs and tie forces are those of that time). */
static void events_at(dg_sim *sim, double t, double theta, double h, int ny) {
  dgp_rk4_dense(sim, theta, h, ny);
  dgp_inputs_at(sim, t + theta * h);
  sim->sv.lam.want = sim->sv.ws.nactive > 0;
  dgp_rk4_derivative(sim, t + theta * h, sim->sv.rk.ydense, sim->sv.rk.ysave);
  sim->sv.lam.want = false;
  sim->sv.lam.t = t + theta * h; /* the tie forces are this point's */
  sim->sv.lam.y = sim->sv.rk.ydense;
  sim->ctx.t = t + theta * h;
  event_values(sim, sim->sv.ev.gt, sim->sv.loss.p);
}

/* Event functions at the end of the RK4 step in yt, at time tb (its
 * speeds, states, tie forces and bound inputs; the meshes' powers of its
 * fourth stage, as at every segment's end). */
static void end_values(dg_sim *sim, double tb, double *g) {
  dg_ctx *ctx = &sim->ctx;
  dgp_solver_speeds(sim, sim->sv.rk.yt, sim->sv.xw);
  sim->sv.xw_end = true; /* until a stage writes them (the commit may take them) */
  ctx->t = tb;
  ctx->speed = sim->sv.xw;
  ctx->state = sim->sv.rk.yt + sim->sv.ndof;
  dgp_lambda_at(sim, tb, sim->sv.rk.yt);
  dgp_bind_eval(sim);
  event_values(sim, g, sim->sv.loss.p4);
}

/* A function's crossing from a to b: from > 0 to <= 0, or from exactly
 * 0 to < 0. The second is a function that a located event left at 0: the
 * blocks decide on strict inequalities (a hold lets go above its
 * capacity, not at it), so a root hit exactly switches nothing there, and
 * the function going on below 0 is the crossing, located just past the
 * segment's start. */
static inline bool crosses(double a, double b) { return (a > 0.0 && b <= 0.0) || (a == 0.0 && b < 0.0); }

/* Which functions any_crossed looks at: all, those the dense output is
 * trusted for, or those marked off (sim->sv.ev.off). */
typedef enum { FN_ALL, FN_TRUSTED, FN_OFF } fn_set;

/* Whether a function of the set crosses from glo to g. A function above
 * 0 at the end crosses nothing (both ways to cross end at or below 0):
 * the common case costs one compare. */
static bool any_crossed(const dg_sim *sim, const double *glo, const double *g, fn_set set) {
  const unsigned char *off = sim->sv.ev.off;
  for (int i = 0, ne = event_count(sim); i < ne; i++) {
    double b = g[i];
    if (b > 0.0)
      continue;
    if (crosses(glo[i], b) && (set == FN_ALL || (set == FN_OFF) == (off[i] != 0)))
      return true;
  }
  return false;
}

/* The root in (a, c) of the parabola through (a, fa), (b, fb), (c, fc)
 * (a < c, fa > 0 >= fc, b outside [a, c] or inside), or NaN. */
static double muller_root(double b, double fb, double a, double fa, double c, double fc) {
  if (!(b != a && b != c && a != c))
    return NAN;
  double f_ab = (fa - fb) / (a - b), f_ac = (fc - fa) / (c - a);
  double f_bac = (f_ac - f_ab) / (c - b); /* the second divided difference */
  /* p(x) = fa + f_ac (x − a) + f_bac (x − a)(x − c), in y = x − a */
  double A = f_bac, B = f_ac - f_bac * (c - a), C = fa;
  if (fabs(A) * (c - a) < 1e-12 * fabs(B)) /* a line */
    return B != 0.0 ? a - C / B : NAN;
  double disc = B * B - 4.0 * A * C;
  if (!(disc >= 0.0))
    return NAN;
  double q = -0.5 * (B + copysign(sqrt(disc), B));
  double y1 = q / A, y2 = q != 0.0 ? C / q : NAN;
  double x1 = a + y1, x2 = a + y2;
  bool in1 = x1 > a && x1 < c, in2 = x2 > a && x2 < c;
  return in1 && (!in2 || x1 < x2) ? x1 : in2 ? x2 : NAN;
}

/* Finds the first θ in (lo, hi] where an event function that is > 0 at θ =
 * lo (g0) is <= 0 (it is at θ = hi: g1). Regula falsi on the earliest
 * crossing, with Anderson–Björck's scaling of an end kept twice in a row
 * (the root estimate moves past the kept end's stall), Muller's step (the
 * parabola through the ends and the end replaced last) where it falls in
 * the bracket, and the guards below; returns the right end of the final
 * bracket, where the crossing has happened.
 *
 * The tries are points on the dense output (the functions marked off left
 * out), or, with `shoot`, RK4 steps from the segment's start to them
 * (three more stages each, every function): then yt is left holding the
 * step to the returned θ. */
static double locate_event(dg_sim *sim, double t, double h, int ny, double lo, double hi,
                           bool shoot) {
  int ne = event_count(sim);
  const unsigned char *off = sim->sv.ev.off;
  double done = -1.0; /* the θ yt holds */
  double *ghi = sim->sv.ev.g1;
  double tol = fmax(EVENT_TOL, 1e-14 / h);
  double s_lo = 1.0, s_hi = 1.0; /* Anderson–Björck's weights of the ends' values */
  int last = 0;
  bool inside = true; /* a try just inside the right end is allowed */
  double w1 = 2.0, w2 = 2.0; /* the bracket's width one and two tries ago */
  /* the end the last try replaced (its θ and its value of the function
   * the secant followed), for the parabola through it and the ends */
  int old_k = -1;
  double old_x = 0.0, old_g = 0.0;
  /* g at the bracket's ends: at lo in g0, at hi in g1 */
  for (int it = 0; it < 100 && hi - lo > tol && !sim->failed; it++) {
    /* the earliest secant root among the functions that have crossed at hi */
    double est = hi;
    int kd = -1; /* the function whose root that is */
    for (int i = 0; i < ne; i++) {
      if (!crosses(sim->sv.ev.g0[i], ghi[i]) || (!shoot && off[i]))
        continue;
      double a = s_lo * sim->sv.ev.g0[i], b = s_hi * ghi[i];
      double r = lo + (hi - lo) * a / (a - b);
      if (r < est || kd < 0)
        est = r, kd = i;
    }
    /* Muller's step: the root in the bracket of the parabola through the
     * ends and the end replaced last, for the function the secant
     * follows. Where the bracket's secant crawls (a function flat at one
     * end: a slip leaving zero grows as θ²; or curved) it lands near the
     * root at once */
    bool extrap = false;
    if (old_k >= 0 && old_k == kd) {
      double x = muller_root(old_x, old_g, lo, sim->sv.ev.g0[kd], hi, ghi[kd]);
      if (x > lo && x < hi)
        est = x, extrap = true;
    }
    /* an estimate at the bracket's right end (a root there, or a function
     * that jumps) tries just inside it: the bracket shrinks a millionfold
     * when the root is in that sliver, where bisection would take twenty
     * halvings. When that try has crossed too (a function that is 0 on
     * a stretch before the end), the next tries bisect until one has not
     * crossed: trying inside again would creep a millionth at a time. One
     * within a quarter of the tolerance of the left end tries half the
     * tolerance past it (the root is there). In shooting, a bracket that
     * has not halved in two tries without Muller's step is bisected. */
    double w = hi - lo, d = fmax(1e-6 * w, 0.5 * tol);
    bool at_end = false;
    if (!(est == est) || 4.0 * d >= w || (shoot && !extrap && w > 0.5 * w2))
      est = lo + 0.5 * w;
    else if (!(est > lo + 0.25 * tol))
      est = lo + 0.5 * tol;
    else if (!(est < hi - d))
      at_end = true, est = inside ? hi - d : lo + 0.5 * w;
    if (shoot) {
      dgp_rk4_stages(sim, t, est * h, ny);
      end_values(sim, t + est * h, sim->sv.ev.gt);
      done = est;
    } else {
      events_at(sim, t, est, h, ny);
    }
    bool crossed = any_crossed(sim, sim->sv.ev.g0, sim->sv.ev.gt, shoot ? FN_ALL : FN_TRUSTED);
    int side = crossed ? 1 : -1;
    inside = !(crossed && at_end);
    w2 = w1;
    w1 = w;
    /* Anderson–Björck's factor for the end kept twice: 1 − g_new / g_old
     * of the function the secant followed, 0.5 where that is not in (0, 1) */
    double fac = 0.5;
    if (kd >= 0) {
      double gold = crossed ? ghi[kd] : sim->sv.ev.g0[kd], gnew = sim->sv.ev.gt[kd];
      double mab = gold != 0.0 ? 1.0 - gnew / gold : 0.0;
      if (mab > 0.0 && mab < 1.0)
        fac = mab;
    }
    old_k = kd; /* the end this try replaces */
    if (kd >= 0) {
      old_x = crossed ? hi : lo;
      old_g = crossed ? ghi[kd] : sim->sv.ev.g0[kd];
    }
    if (crossed) { /* hi moves; lo kept */
      hi = est;
      memcpy(ghi, sim->sv.ev.gt, sizeof(double) * (size_t)ne);
      s_hi = 1.0;
      s_lo = side == last ? fac * s_lo : 1.0;
    } else { /* lo moves; hi kept */
      lo = est;
      memcpy(sim->sv.ev.g0, sim->sv.ev.gt, sizeof(double) * (size_t)ne);
      s_lo = 1.0;
      s_hi = side == last ? fac * s_hi : 1.0;
    }
    last = side;
  }
  if (shoot && done != hi && !sim->failed)
    dgp_rk4_stages(sim, t, hi * h, ny);
  return hi;
}

/* The first switching condition crossed in the segment of length h from
 * t, whose RK4 step is in yt with the functions at its start in g0 and at
 * its end in g1 (some crossed): returns θ, with yt holding the RK4 step to
 * θh (θ = 1: the whole step, no event before the end within tol_t).
 *
 * Located on the dense output, then confirmed by the RK4 step to that
 * point. Where the solution has a corner inside the segment (a capacity
 * starting where a command passes 0, a table's corner) the dense output's
 * cubic can cross where the solution does not: a slip that leaves zero
 * only after the corner, whose cubic leaves it at once. Such a function
 * is not trusted on the dense output from there on (marked off), and the
 * others are searched again beyond that point; what is left unfound there
 * is located on RK4 steps from the segment's start (bracketed by real
 * values at both ends). Without this, each false root ended a sliver
 * segment with nothing switched, up to the segments' cap, step after
 * step. */
static double find_event(dg_sim *sim, double t, double h, int ny, double tol_t) {
  int ne = event_count(sim);
  size_t gb = sizeof(double) * (size_t)ne, kb = sizeof(double) * (size_t)ny;
  dg_event_ws *ev = &sim->sv.ev;
  memcpy(ev->gend, ev->g1, gb);
  memcpy(ev->glo, ev->g0, gb);
  memset(ev->off, 0, (size_t)ne);
  double lo = 0.0;
  for (int round = 0; round <= ne && !sim->failed; round++) {
    if (!any_crossed(sim, ev->glo, ev->gend, FN_TRUSTED))
      break; /* all that cross are marked off */
    if (round == 0) { /* the step to a root overwrites k2..k4: kept for more rounds */
      memcpy(ev->kf, sim->sv.rk.k2, kb);
      memcpy(ev->kf + ny, sim->sv.rk.k3, kb);
      memcpy(ev->kf + 2 * ny, sim->sv.rk.k4, kb);
    } else {
      memcpy(sim->sv.rk.k2, ev->kf, kb);
      memcpy(sim->sv.rk.k3, ev->kf + ny, kb);
      memcpy(sim->sv.rk.k4, ev->kf + 2 * ny, kb);
    }
    memcpy(ev->g0, ev->glo, gb);
    memcpy(ev->g1, ev->gend, gb);
    double theta = locate_event(sim, t, h, ny, lo, 1.0, false);
    if (sim->failed)
      return 1.0;
    if (round == 0 && theta * h >= h - tol_t)
      return 1.0; /* at the end: yt is the whole step still */
    dgp_rk4_stages(sim, t, theta * h, ny); /* k1 is the same: one RK4 step to θ */
    end_values(sim, t + theta * h, ev->gt);
    if (any_crossed(sim, ev->glo, ev->gt, FN_ALL)) {
      if (!any_crossed(sim, ev->glo, ev->gt, FN_OFF))
        return theta; /* confirmed */
      /* one not trusted crossed before θ: located on RK4 steps in (lo, θ] */
      memcpy(ev->g0, ev->glo, gb);
      memcpy(ev->g1, ev->gt, gb);
      memset(ev->off, 0, (size_t)ne);
      return locate_event(sim, t, h, ny, lo, theta, true);
    }
    /* not confirmed: nothing has crossed by θ; the functions the dense
     * output saw crossing there are not trusted beyond it */
    for (int i = 0; i < ne; i++)
      if (!ev->off[i] && crosses(ev->g0[i], ev->g1[i]))
        ev->off[i] = 1;
    memcpy(ev->glo, ev->gt, gb);
    lo = theta;
  }
  if (sim->failed)
    return 1.0;
  memcpy(ev->g0, ev->glo, gb);
  memcpy(ev->g1, ev->gend, gb);
  memset(ev->off, 0, (size_t)ne);
  return locate_event(sim, t, h, ny, lo, 1.0, true);
}

/* Integrates one segment from sim->t towards t_end (a breakpoint or the
 * step's end, or earlier at an event) and commits it. */
/* The tie forces after a commit: those the events asked for at this very
 * state stay valid, else they are computed when first asked for. */
static void lambda_after_commit(dg_sim *sim, double tb) {
  if (sim->sv.lam.valid && sim->sv.lam.y == sim->sv.rk.yt)
    sim->sv.lam.y = NULL;
  else
    dgp_lambda_at(sim, tb, NULL);
}

/* A segment that failed the simulation: its directions free again. */
static int segment_failed(dg_sim *sim) {
  sim->sv.loss.hold = false;
  return sim->err.code;
}

/* A segment committed, by the generic step or a compiled one: its
 * directions free again, counted, the time at its end tb. */
static void segment_done(dg_sim *sim, double tb) {
  sim->sv.loss.hold = false;
  sim->segments++;
  sim->t = tb;
}

/* A step of a plain mode whose segment is compiled (compile.c's plain():
 * no hooks around the stages, no events, no timed or bound inputs, no
 * ties): the segment runs to t_end, the commit too, then the context and
 * the solver are left as step_segment and dgp_solver_step leave them,
 * each field written once (the segment writes only the context's power).
 * The segment keeps RK4's arrays and the stages' powers to itself (the
 * audit's pointer stays past the solver's own, where every step leaves
 * it). */
int dgp_compiled_step(dg_sim *sim, dgp_serve *sv, double t_end) {
  dg_ctx *ctx = &sim->ctx;
  double t = sim->t, h = t_end - t;
  ctx->dt = h;
  sim->topo_request = false;
  sim->sv.xw_end = false;
  sim->sv.xw_committed = false;
  sim->stages += 4;
  sv->calls += 4;
  sv->segments++;
  int done = sv->segment(sv->env, t, h); /* the commit too: q, s, the audit, angles, x */
  ctx->speed = sim->sv.x;
  ctx->torque = sim->sv.tau;
  ctx->state = sim->sv.s;
  ctx->state_rate = NULL;
  ctx->state_commit = NULL;
  if (!done) { /* a hook failed, or not finite: the error names the block */
    ctx->t = t;
    if (sim->failed || !check_finite(sim, sim->sv.rk.yt))
      return segment_failed(sim);
    dgp_sim_fail(sim, DG_ERR_NUMERIC,
                 "at t = %g s: the compiled segment refused a state that the finiteness check "
                 "accepts (an internal error)",
                 t);
    return segment_failed(sim);
  }
  segment_done(sim, t_end);
  lambda_after_commit(sim, t_end);
  ctx->t = t_end;
  sim->steps++;
  return DG_OK;
}

/* A segment's plan and what its parts pass on: its start t, end tb and
 * length h, the tolerance of its end, the state's sizes, whether events
 * are located in it and whether the slots hold the end's values. */
typedef struct seg_plan {
  double t, tb, h, tol;
  int nd, ny;
  bool events, slots_done;
} seg_plan;

/* The state's sizes in the current mode. */
static void segment_sizes(const dg_sim *sim, seg_plan *sp) {
  sp->nd = sim->sv.ndof;
  sp->ny = sim->sv.ndof + sim->ns;
}

/* The mode a hold pass asked for, and the state's sizes in it, before the
 * segment's first stage is made again. */
static int hold_new_mode(dg_sim *sim, seg_plan *sp) {
  if (dgp_solver_change_topology(sim) != DG_OK)
    return sim->err.code;
  segment_sizes(sim, sp);
  return DG_OK;
}

/* PREPARE, then the first stage (with tie forces when events need them);
 * HOLDS: a hold those forces overload lets go here, and the first stage
 * is made again in the new mode (hold_pass); then the event functions at
 * the start and RK4's other stages. */
static int segment_stages(dg_sim *sim, seg_plan *sp, int segs_left, int round0) {
  double t = sp->t, h = sp->h;
  sp->events = event_count(sim) > 0 && segs_left > 1;
  for (int round = round0;; round++) {
    dgp_rk4_gather(sim, sim->sv.rk.y0);
    sim->sv.lam.want = sp->events && sim->sv.ws.nactive > 0;
    sim->sv.audit.pcur = sim->sv.audit.pw; /* stage 1's powers */
    /* stage 1's speeds are the committed x: whatever writes q (the
     * commit, a mode change's projection, the start, a restore) leaves x =
     * G q with the plan's own SPEEDS pass, so they are its bits, copied.
     * Not with a variable ratio (the stage refreshes G first) or
     * prescribed speeds (their columns add v at the stage's time). */
    sim->sv.xw_committed = dgp_angles_linear(&sim->sv);
    dgp_rk4_derivative(sim, t, sim->sv.rk.y0, sim->sv.rk.k1); /* the meshes take their directions */
    if (!dgp_angles_linear(&sim->sv)) /* for the angles (dgp_angles_linear) */
      memcpy(sim->sv.mot.x1, sim->sv.xw, sizeof(double) * (size_t)sim->nn);
    sim->sv.audit.pcur = sim->sv.audit.pw + 4 * sim->sv.audit.ne;
    bool checked = sim->sv.lam.want && round < sim->n_hold;
    sim->sv.lam.want = false;
    if (!checked || !dgp_hold_pass(sim, t, h))
      break;
    int rc = hold_new_mode(sim, sp);
    if (rc != DG_OK)
      return rc;
  }
  sim->sv.loss.hold = true; /* ... and keep them to the segment's end */
  for (int j = 0; j < sim->sv.ws.nmesh; j++)
    sim->sv.loss.watch[j] = 0;
  if (sp->events) {
    sim->ctx.t = t;
    dgp_loss_watch_start(sim);
    sp->events = event_values(sim, sim->sv.ev.g0, sim->sv.loss.p) > 0; /* none: nothing to locate */
  }
  dgp_rk4_stages(sim, t, h, sp->ny);
  return sim->failed ? segment_failed(sim) : DG_OK;
}

/* A switching condition crossed inside the segment (g0 to g1) ends it
 * there: located, the segment is shortened to it. */
static int segment_crossed(dg_sim *sim, seg_plan *sp) {
  sp->slots_done = false;
  double h = sp->h;
  double theta = find_event(sim, sp->t, h, sp->ny, sp->tol);
  if (!sim->failed && theta * h < h - sp->tol) {
    sp->h = theta * h;
    sp->tb = sp->t + sp->h;
    sim->events++;
    sim->last_event = sp->tb;
    dgp_lambda_at(sim, sp->tb, NULL);
  } else if (!sim->failed) {
    if (theta != 1.0) /* within tol of the end: the whole segment */
      dgp_rk4_stages(sim, sp->t, h, sp->ny);
    dgp_inputs_at(sim, sp->tb);
  }
  return sim->failed ? segment_failed(sim) : DG_OK;
}

/* EVENTS: the event functions at the segment's end; a switching condition
 * crossed inside the segment ends it there. end_values evaluates the
 * slots at (tb, yt): where no event moves the segment's end, the commit
 * makes that point the committed one (the same t, speeds and states; no
 * hook runs in between), so post_step finds them evaluated. Not with
 * prescribed speeds (the commit evaluates them again at tb). */
static int segment_events(dg_sim *sim, seg_plan *sp) {
  sp->slots_done = false;
  if (!sp->events)
    return DG_OK;
  end_values(sim, sp->tb, sim->sv.ev.g1);
  sp->slots_done = sim->sv.mot.np == 0;
  if (any_crossed(sim, sim->sv.ev.g0, sim->sv.ev.g1, FN_ALL))
    return segment_crossed(sim, sp);
  return sim->failed ? segment_failed(sim) : DG_OK; /* an event function failed it */
}

/* COMMIT: yt becomes the committed state, with the energy audit, the node
 * angles and the committed speeds. */
static int segment_commit(dg_sim *sim, const seg_plan *sp) {
  dg_ctx *ctx = &sim->ctx;
  double h = sp->h, tb = sp->tb;
  int nd = sp->nd;
  if (!check_finite(sim, sim->sv.rk.yt))
    return segment_failed(sim);
  const double *yt = sim->sv.rk.yt;
  memcpy(sim->sv.q, yt, sizeof(double) * (size_t)nd);
  if (sim->ns > 0)
    memcpy(sim->sv.s, yt + nd, sizeof(double) * (size_t)sim->ns);
  /* the energy audit: each hook's work over the segment, with RK4's
   * weights on the stages' powers (what RK4 gives a state whose rate is
   * the power, without carrying those states through the stages) */
  if (sim->keep & DG_KEEP_WORK) {
    const double *p1 = sim->sv.audit.pw, *p2 = p1 + sim->sv.audit.ne, *p3 = p2 + sim->sv.audit.ne,
                 *p4 = p3 + sim->sv.audit.ne;
    for (int i = 0; i < sim->n_torque; i++)
      sim->sv.audit.work[sim->torque[i].b->index] += h / 6.0 *
                                                     (p1[i] + 2.0 * p2[i] + 2.0 * p3[i] + p4[i]);
    int ie = sim->n_torque;
    sim->sv.audit.eff_loss += h / 6.0 * (p1[ie] + 2.0 * p2[ie] + 2.0 * p3[ie] + p4[ie]);
    for (int k = 0; k < sim->n_motion; k++) { /* the prescriptions' work */
      int i = ie + 1 + k;
      sim->sv.audit.work[sim->motion_blocks[k]] += h / 6.0 *
                                                   (p1[i] + 2.0 * p2[i] + 2.0 * p3[i] + p4[i]);
    }
  }
  if (sim->keep & DG_KEEP_ANGLES)
    dgp_commit_angles(sim, h, nd);
  segment_done(sim, tb);
  if (sim->sv.mot.np > 0) { /* the prescribed speeds at the segment's end */
    ctx->state = sim->sv.s;
    dgp_motion_eval(sim, tb);
  }
  if (sim->sv.xw_end && sim->sv.mot.np == 0) /* the end's speeds, from this very yt */
    memcpy(sim->sv.x, sim->sv.xw, sizeof(double) * (size_t)sim->nn);
  else
    dgp_solver_speeds(sim, sim->sv.q, sim->sv.x);
  lambda_after_commit(sim, tb);
  return DG_OK;
}

/* EVENTS_POST: decisions at the segment's end (inputs from the left), the
 * compiled unit's hooks where it has them. */
static int segment_post(dg_sim *sim, const seg_plan *sp) {
  dg_ctx *ctx = &sim->ctx;
  ctx->t = sim->t;
  ctx->dt = sp->h;
  ctx->speed = sim->sv.x;
  sim->topo_request = false;
  dgp_serve *sv = dgp_serve_of(sim);
  if (sv && sv->post)
    sv->post(sv->env, sp->slots_done);
  else
    run_hooks(sim, sim->post, sim->n_post, sp->slots_done);
  if (!sim->failed && sim->topo_request)
    dgp_solver_change_topology(sim);
  ctx->speed = sim->sv.x;
  return sim->failed ? sim->err.code : DG_OK;
}

/* What a compiled run did (compiled_run). */
enum {
  DGP_RUN_FAILED,    /* a hook failed the simulation, or yt fails check_finite */
  DGP_RUN_COMMITTED, /* yt committed (the caller counts it and runs post_step);
                      * *ended: the end's slots and event functions were made */
  DGP_RUN_CROSSED,   /* an event function crossed: the state as
                      * segment_events leaves it before locating it */
  DGP_RUN_NEW_MODE   /* after stage 1, the hold pass asked for a new mode
                      * (topo_request): segment_stages' first round made */
};

/* A hooked mode's segment between its hooks from the compiled unit
 * (dgp_serve's run): DGP_RUN_*. */
static int compiled_run(dg_sim *sim, dgp_serve *sv, const seg_plan *sp, bool *ended) {
  sim->sv.xw_committed = false;
  sim->stages += 4;
  sv->calls += 4;
  sv->runs++;
  int r = sv->run(sv->env, sp->t, sp->h, sp->tb);
  sim->sv.xw_end = r == 2 || r == 3; /* the end's speeds in xw */
  *ended = r == 3;
  sv->crossed += r == 2;
  if (r == 4) { /* one stage made, as the generic step's first round */
    sim->stages -= 3;
    sv->calls -= 3;
    sv->runs--;
    sv->new_modes++;
    return DGP_RUN_NEW_MODE;
  }
  return r == 0 ? DGP_RUN_FAILED : r == 2 ? DGP_RUN_CROSSED : DGP_RUN_COMMITTED;
}

/* The segment after its pre_step hooks: the mode they asked for, then the
 * stages, events and commit, the compiled unit's where it serves the mode
 * (dgp_serve's run: the same operations; it hands a segment whose events
 * cross back to segment_crossed), then the post_step hooks. */
static int segment_rest(dg_sim *sim, seg_plan *sp, int segs_left) {
  dg_ctx *ctx = &sim->ctx;
  if (!sim->failed && sim->topo_request)
    dgp_solver_change_topology(sim);
  if (!sim->failed && sim->sv.mot.np > 0) { /* prescribed speeds at the start (motion.c) */
    ctx->state = sim->sv.s;
    dgp_motion_segment_start(sim, sp->t);
  }
  if (sim->failed)
    return sim->err.code;
  segment_sizes(sim, sp);
  int rc;
  bool ended = false; /* the compiled run evaluated the end's values */
  dgp_serve *sv = segs_left > 1 ? dgp_serve_of(sim) : NULL;
  int ran = sv && sv->run && !sim->sv.lam.want ? compiled_run(sim, sv, sp, &ended) : -1;
  if (ran == DGP_RUN_COMMITTED) { /* compiled_run: the commit's own part made */
    sp->slots_done = sp->events = ended;
    segment_done(sim, sp->tb);
    lambda_after_commit(sim, sp->tb);
    return segment_post(sim, sp);
  }
  if (ran == DGP_RUN_CROSSED) { /* the end's values as end_values leaves them */
    sp->events = true;
    dgp_lambda_at(sim, sp->tb, sim->sv.rk.yt);
    rc = segment_crossed(sim, sp);
  } else if (ran == DGP_RUN_FAILED) { /* a hook failed, or yt is not finite */
    if (!sim->failed && check_finite(sim, sim->sv.rk.yt))
      dgp_sim_fail(sim, DG_ERR_NUMERIC,
                   "at t = %g s: the compiled segment refused a state that the finiteness check "
                   "accepts (an internal error)",
                   sp->t);
    return segment_failed(sim);
  } else {
    /* after a run's hold pass: segment_stages' first round made, its second next */
    rc = ran == DGP_RUN_NEW_MODE ? hold_new_mode(sim, sp) : DG_OK;
    if (rc == DG_OK)
      rc = segment_stages(sim, sp, segs_left, ran == DGP_RUN_NEW_MODE ? 1 : 0);
    if (rc == DG_OK)
      rc = segment_events(sim, sp);
  }
  if (rc == DG_OK)
    rc = segment_commit(sim, sp);
  return rc == DG_OK ? segment_post(sim, sp) : rc;
}

static int step_segment(dg_sim *sim, dgp_serve *sv, double t_end, int segs_left) {
  dg_ctx *ctx = &sim->ctx;
  /* EVENTS_PRE: inputs at the segment start, discrete decisions, mode */
  seg_plan sp = {.t = sim->t};
  if (sim->n_timed > 0) /* schedules and callbacks (none: nothing to do) */
    dgp_solver_inputs_start(sim, sp.t);
  sp.tol = dgp_time_tol(sp.t, t_end - sp.t);
  sp.tb = segs_left > 1 && sim->n_timed > 0 ? dgp_inputs_next_break(sim, sp.t, t_end, sp.tol)
                                            : t_end;
  sp.h = sp.tb - sp.t;
  ctx->dt = sp.h;
  ctx->t = sp.t;
  ctx->speed = sim->sv.x;
  ctx->torque = sim->sv.tau;
  sim->topo_request = false;
  if (sv && sv->pre)
    sv->pre(sv->env);
  else
    run_hooks(sim, sim->pre, sim->n_pre, false);
  return segment_rest(sim, &sp, segs_left);
}

int dgp_step_segments(dg_sim *sim, dgp_serve *sv, double dt) {
  double t_end = sim->t + dt;
  for (int seg = 0; seg < MAX_SEGMENTS; seg++) {
    if (seg > 0) /* the mode the last segment left */
      sv = dgp_serve_of(sim);
    int rc = step_segment(sim, sv, t_end, MAX_SEGMENTS - seg);
    if (rc != DG_OK)
      return rc;
    if (sim->t >= t_end - dgp_time_tol(t_end, dt))
      break;
  }
  sim->t = t_end;
  sim->ctx.t = t_end;
  sim->ctx.speed = sim->sv.x;
  sim->ctx.state = sim->sv.s;
  sv = dgp_serve_of(sim);
  if (sv && sv->slots)
    sv->slots(sv->env);
  else
    dgp_bind_eval(sim); /* what signal reads between steps see */
  sim->steps++;
  return DG_OK;
}

void dg_ctx_request_topology(dg_ctx *ctx) { ctx->sim->topo_request = true; }

unsigned long dg_ctx_params_epoch(const dg_ctx *ctx) { return ctx->sim->params_epoch; }

/* The arrays this room owns (buffers.c). */
void dgp_step_buffers(dg_sim *sim, dgp_buf_list *l) {
  size_t nn = (size_t)sim->nn;
  dgp_buf_add(l, &sim->sv.audit.work, (size_t)sim->nb, sizeof(double));
  dgp_buf_add(l, &sim->sv.audit.pw, 5 * (size_t)sim->sv.audit.ne, sizeof(double));
  dgp_buf_add(l, &sim->sv.ev.g0, (size_t)sim->n_events + nn + 1, sizeof(double));
  dgp_buf_add(l, &sim->sv.ev.g1, (size_t)sim->n_events + nn + 1, sizeof(double));
  dgp_buf_add(l, &sim->sv.ev.gt, (size_t)sim->n_events + nn + 1, sizeof(double));
  dgp_buf_add(l, &sim->sv.ev.gend, (size_t)sim->n_events + nn + 1, sizeof(double));
  dgp_buf_add(l, &sim->sv.ev.glo, (size_t)sim->n_events + nn + 1, sizeof(double));
  dgp_buf_add(l, &sim->sv.ev.off, (size_t)sim->n_events + nn + 1, sizeof(unsigned char));
  dgp_buf_add(l, &sim->sv.ev.kf, 3 * (nn + (size_t)sim->ns), sizeof(double));
}
