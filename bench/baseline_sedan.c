/* The hand-written baseline of graphs/bench/sedan_baseline.json (see
 * baseline_sedan.h): what a careful engineer would write for this one car,
 * without the framework.
 *
 * Degrees of freedom. In gear g the engine turns with the driven wheels,
 *   ω_e = a·(ω_rl + ω_rr),   a = r_g · r_fd / 2,
 * and the diff carrier at (ω_rl + ω_rr)/2; the DOFs are the four hub speeds
 * and the body speed v. The coupled inertia of the driven pair is
 *   [[J_rl + c, c], [c, J_rr + c]],   c = J_d/4 + (J_e + J_gb)·a²,
 * (lib/solver.c's M = Gᵀ diag(I) G for this graph), inverted once per mode;
 * the free wheels and the body are decoupled (their own inertias). While
 * the gearbox shifts it is decoupled: ω_e is a DOF of its own with inertia
 * J_e + J_gb and c = J_d/4.
 *
 * Forces (per RK4 substep, at the substep's speeds and slips):
 *   engine  T_e = map(rpm, θ), θ = clamp(max(θ_driver, g·(idle − rpm)), 0, 1),
 *           θ_driver = 0 while the gearbox shifts, θ = 0 while the rev
 *           limiter cuts; drag
 *           faded within 10 rpm of rest.
 *   meshes  in gear, the gearbox and the final drive pass η = η_gb·η_fd of
 *           the power the driving side gives them (nothing turns between
 *           them). The engine shaft gives the meshes m_e = T_e − J ω̇_e
 *           (J = J_e + J_gb), so the driven pair feels a·k·m_e on each
 *           wheel, k = η when the engine drives (m_e ω_e > 0), 1/η when the
 *           wheels drive it: with ω̇_e = a(ω̇_rl + ω̇_rr) the pair's
 *           equations are the block above with c = J_d/4 + k J a² and the
 *           force a·k·T_e. A step segment's first stage takes the k the
 *           solution confirms (the last one tried first) and holds it; where
 *           the held direction's power m_e ω_e (sign-corrected) crosses zero
 *           the segment ends — checked with the fourth stage's value and
 *           located with regula falsi and bisection on RK4's dense output,
 *           as lib/solver.c locates events — and the next segment decides
 *           again, with the limiter's, the gearbox's and the loads'
 *           decisions at its start.
 *   tyre    F_x = F_z·MF(κ) + c_t·σ·κ̇ within ±F_z·max|MF|,
 *           MF(κ) = D sin(C atan(Bκ − E(Bκ − atan Bκ))),
 *           σ κ̇ = ω R − v − |v| κ (held at |κ| = 1), c_t = 2ζ sqrt(F_z B C D J / σ) / R;
 *           +F_x on the body, −F_x·R at the hub.
 *   body    −(f1 v + f2 v|v|); F_z per wheel from the static axle loads and
 *           the previous step's acceleration (m·a·h/L transfer).
 *
 * Events, in the order the framework takes them: before the step the rev
 * limiter (above redline, released 100 rpm below; the framework's engine
 * locates these crossings inside the step, which this twin does not: the
 * bench launch upshifts at 6000 rpm and never reaches the 6500 rpm redline,
 * so the two agree there, tests/test_baseline.c) and the gearbox (up at
 * upshift_rpm, down at downshift_rpm: a shift decouples for shift_time,
 * rounded to whole steps); after it the shift's end, re-engaging with a
 * momentum-conserving projection (a plastic impact through the
 * synchronizer): the driven pair's generalized momentum
 *   p_L = J_rl ω_rl + J_d/2·ω_d + a (J_e + J_gb) ω_e   (likewise p_R)
 * is kept, so [ω_rl, ω_rr] = M⁻¹ p. */
#include "baseline_sedan.h"

#include <float.h>
#include <math.h>
#include <string.h>

#define RPM_PER_RAD_S 9.549296585513720 /* 30/π, as DG_RPM_PER_RAD_S */
#define KAPPA_LIMIT 1.0
#define DRAG_FADE_RPM 10.0
#define PI 3.14159265358979323846
#define TIME_EPS 1e-6

/* y = [ω_rl, ω_rr, ω_fl, ω_fr, v, ω_e, κ_rl, κ_rr, κ_fl, κ_fr, x] */
enum { Y_W = 0, Y_V = 4, Y_E = 5, Y_K = 6, Y_X = 10, NY = 11 };

void baseline_sedan_defaults(baseline_sedan_params *p) {
  static const baseline_sedan_params d = {
      .engine_inertia = 0.20,
      .idle_rpm = 800,
      .redline_rpm = 6500,
      .limiter_hysteresis_rpm = 100,
      .idle_gain = 0.02,
      .map_rpm = {1000, 2500, 4000, 5500, 6500},
      .map_throttle = {0.0, 0.5, 1.0},
      .map_torque = {{-15, -20, -25, -30, -35}, {95, 150, 165, 150, 120}, {180, 300, 330, 300, 250}},
      .ratios = {3.40, 2.05, 1.40, 1.00, 0.82, 0.68},
      .gearbox_efficiency = 0.97,
      .gearbox_inertia = 0.02,
      .shift_time = 0.25,
      .upshift_rpm = 6000,
      .downshift_rpm = 2000,
      .final_ratio = 4.10,
      .final_efficiency = 0.97,
      .diff_inertia = 0.05,
      .radius = {0.32, 0.32, 0.32, 0.32},
      .wheel_inertia = {1.3, 1.3, 1.0, 1.0},
      .B = 10.0,
      .C = 1.9,
      .D = 1.0,
      .E = 0.97,
      .relaxation_length = 0.15,
      .damping_ratio = 1.0,
      .mass = 1500,
      .wheelbase = 2.8,
      .cg_to_front = 1.2,
      .cg_height = 0.5,
      .f1 = 4.5,
      .f2 = 0.398,
      .gravity = 9.80665,
  };
  *p = d;
}

/* ---- engine ---------------------------------------------------------------- */

static double lerp(double a, double b, double w) { return a + w * (b - a); }

/* Clamped interval of u on n increasing breakpoints: v = v[i] + w (v[j] − v[i]). */
static void locate(const double *x, int n, double u, int *i, int *j, double *w) {
  if (u <= x[0]) {
    *i = *j = 0;
    *w = 0.0;
    return;
  }
  if (u >= x[n - 1]) {
    *i = *j = n - 1;
    *w = 0.0;
    return;
  }
  int k = 0;
  while (u >= x[k + 1])
    k++;
  *i = k;
  *j = k + 1;
  *w = (u - x[k]) / (x[k + 1] - x[k]);
}

static double engine_map(const baseline_sedan_params *p, double rpm, double th) {
  int i0, i1, j0, j1;
  double wx, wy;
  locate(p->map_rpm, BL_MAP_RPM, rpm, &i0, &i1, &wx);
  locate(p->map_throttle, BL_MAP_THROTTLE, th, &j0, &j1, &wy);
  const double *r0 = p->map_torque[j0], *r1 = p->map_torque[j1];
  return lerp(lerp(r0[i0], r0[i1], wx), lerp(r1[i0], r1[i1], wx), wy);
}

static double clamp(double v, double lo, double hi) { return v < lo ? lo : v > hi ? hi : v; }

/* Net engine torque at speed w; `driver` is the throttle after the
 * gearbox's cut, `limiter` closes the throttle idle control included. */
static double engine_torque(const baseline_sedan_params *p, double w, double driver, bool limiter) {
  double rpm = w * RPM_PER_RAD_S;
  double idle = p->idle_gain * (p->idle_rpm - rpm);
  double th = limiter ? 0.0 : clamp(driver > idle ? driver : idle, 0.0, 1.0);
  double t = engine_map(p, rpm > 0.0 ? rpm : 0.0, th);
  if (t < 0.0 && fabs(rpm) < DRAG_FADE_RPM)
    t *= rpm / DRAG_FADE_RPM;
  else if (t < 0.0 && rpm < 0.0)
    t = -t;
  return t;
}

/* ---- tyres ----------------------------------------------------------------- */

static double mf(const baseline_sedan_params *p, double k) {
  double x = p->B * k;
  return p->D * sin(p->C * atan(x - p->E * (x - atan(x))));
}

/* Slip of the MF peak within the limit: C·atan(φ) = π/2 (bisection). */
static double mf_peak_slip(const baseline_sedan_params *p) {
  double xmax = p->B * KAPPA_LIMIT;
  if (!(p->C > 1.0))
    return KAPPA_LIMIT;
  double target = tan(PI / (2.0 * p->C));
  if (xmax - p->E * (xmax - atan(xmax)) <= target)
    return KAPPA_LIMIT;
  double lo = 0.0, hi = xmax;
  for (int i = 0; i < 200 && hi - lo > 1e-15 * xmax; i++) {
    double mid = 0.5 * (lo + hi);
    if (mid - p->E * (mid - atan(mid)) < target)
      lo = mid;
    else
      hi = mid;
  }
  return 0.5 * (lo + hi) / p->B;
}

/* ---- modes ----------------------------------------------------------------- */

/* [[J_rl + c, c], [c, J_rr + c]]⁻¹ */
static void invert_pair(const baseline_sedan_params *p, double c, double *ll, double *lr,
                        double *rr) {
  double m11 = p->wheel_inertia[BL_RL] + c, m22 = p->wheel_inertia[BL_RR] + c;
  double det = m11 * m22 - c * c;
  *ll = m22 / det;
  *rr = m11 / det;
  *lr = -c / det;
}

/* Inverses of the driven pair's inertia block for the current mode. */
static void set_mode(baseline_sedan *s) {
  const baseline_sedan_params *p = &s->p;
  double je = p->engine_inertia + p->gearbox_inertia;
  double c = 0.25 * p->diff_inertia;
  s->a = 0.0;
  if (!s->shifting) {
    s->a = p->ratios[s->gear - 1] * p->final_ratio * 0.5;
    c += je * s->a * s->a;
  }
  s->eff = p->gearbox_efficiency * p->final_efficiency;
  s->k[0] = s->eff;
  s->k[1] = 1.0 / s->eff;
  invert_pair(p, c, &s->m_ll, &s->m_lr, &s->m_rr);
  for (int i = 0; i < 2; i++)
    invert_pair(p, 0.25 * p->diff_inertia + s->k[i] * je * s->a * s->a, &s->k_ll[i], &s->k_lr[i],
                &s->k_rr[i]);
}

double baseline_sedan_engine_speed(const baseline_sedan *s) {
  return s->shifting ? s->we : s->a * s->w[BL_RL] + s->a * s->w[BL_RR];
}

/* Re-engaging: keep the driven pair's generalized momentum. */
static void engage(baseline_sedan *s) {
  const baseline_sedan_params *p = &s->p;
  double je = p->engine_inertia + p->gearbox_inertia;
  double wd = 0.5 * s->w[BL_RL] + 0.5 * s->w[BL_RR];
  double we = s->we;
  set_mode(s);
  double pd = 0.5 * p->diff_inertia * wd + s->a * je * we;
  double pl = p->wheel_inertia[BL_RL] * s->w[BL_RL] + pd;
  double pr = p->wheel_inertia[BL_RR] * s->w[BL_RR] + pd;
  s->w[BL_RL] = s->m_ll * pl + s->m_lr * pr;
  s->w[BL_RR] = s->m_lr * pl + s->m_rr * pr;
  s->topology_changes++;
}

void baseline_sedan_init(baseline_sedan *s, const baseline_sedan_params *p) {
  memset(s, 0, sizeof *s);
  s->p = *p;
  s->gear = 1;
  s->mf_peak = fabs(mf(p, mf_peak_slip(p)));
  set_mode(s);
}

/* ---- the step -------------------------------------------------------------- */

/* What stays fixed over one segment: inputs after the decisions, normal
 * loads; and the meshes' direction: decided at the segment's first stage,
 * held over it (kidx: 0 the engine drives, 1 the wheels drive), with the
 * engine shaft's power into the meshes m_e ω_e of the last evaluation. */
typedef struct step_data {
  double driver;              /* engine throttle after the gearbox's cut */
  double fz[BL_WHEELS];       /* normal loads */
  double damp[BL_WHEELS];     /* c_t·σ, or 0 */
  double lim[BL_WHEELS];      /* F_z·max|MF| */
  int kidx;
  bool hold;
  double pe;
} step_data;

static double slip_rate(const baseline_sedan_params *p, double w, double r, double v, double k) {
  double dk = (w * r - v - fabs(v) * k) / p->relaxation_length;
  if ((k >= KAPPA_LIMIT && dk > 0.0) || (k <= -KAPPA_LIMIT && dk < 0.0))
    dk = 0.0;
  return dk;
}

static void derivative(const baseline_sedan *s, step_data *sd, const double *y, double *dy) {
  const baseline_sedan_params *p = &s->p;
  double v = y[Y_V];
  double hub[BL_WHEELS], fsum = 0.0;
  for (int i = 0; i < BL_WHEELS; i++) {
    double w = y[Y_W + i], k = y[Y_K + i];
    double dk = slip_rate(p, w, p->radius[i], v, k);
    double fx = sd->fz[i] * mf(p, k);
    if (sd->damp[i] > 0.0) {
      fx += sd->damp[i] * dk;
      fx = fx > sd->lim[i] ? sd->lim[i] : (fx < -sd->lim[i] ? -sd->lim[i] : fx);
    }
    dy[Y_K + i] = dk;
    hub[i] = -fx * p->radius[i];
    fsum += fx;
  }
  double tl = hub[BL_RL], tr = hub[BL_RR];
  double je = p->engine_inertia + p->gearbox_inertia;
  if (s->shifting) {
    dy[Y_E] = engine_torque(p, y[Y_E], sd->driver, s->limiter) / je;
    dy[Y_W + BL_RL] = s->m_ll * tl + s->m_lr * tr;
    dy[Y_W + BL_RR] = s->m_lr * tl + s->m_rr * tr;
  } else {
    double we = s->a * y[Y_W + BL_RL] + s->a * y[Y_W + BL_RR];
    double te = engine_torque(p, we, sd->driver, s->limiter);
    /* held: the segment's direction; else the one the solution confirms,
     * the last one tried first */
    for (int n = 0, i = sd->kidx; n < 2; n++, i = 1 - i) {
      double t = s->a * s->k[i] * te;
      dy[Y_W + BL_RL] = s->k_ll[i] * (tl + t) + s->k_lr[i] * (tr + t);
      dy[Y_W + BL_RR] = s->k_lr[i] * (tl + t) + s->k_rr[i] * (tr + t);
      sd->pe = (te - je * s->a * (dy[Y_W + BL_RL] + dy[Y_W + BL_RR])) * we;
      sd->kidx = i;
      if (sd->hold || (i == 0 ? sd->pe >= 0.0 : sd->pe <= 0.0))
        break;
    }
    dy[Y_E] = 0.0;
  }
  dy[Y_W + BL_FL] = hub[BL_FL] / p->wheel_inertia[BL_FL];
  dy[Y_W + BL_FR] = hub[BL_FR] / p->wheel_inertia[BL_FR];
  dy[Y_V] = (fsum - (p->f1 * v + p->f2 * v * fabs(v))) / p->mass;
  dy[Y_X] = v;
}

/* Normal loads from the last step's acceleration (level road). */
static void normal_loads(const baseline_sedan *s, step_data *sd) {
  const baseline_sedan_params *p = &s->p;
  double m = p->mass, g = p->gravity, L = p->wheelbase;
  double w = m * g, b = L - p->cg_to_front;
  double front = (w * b - m * s->accel * p->cg_height) / L;
  double rear = w - front;
  double axle[BL_WHEELS] = {0.5 * rear, 0.5 * rear, 0.5 * front, 0.5 * front};
  for (int i = 0; i < BL_WHEELS; i++) {
    double fz = axle[i] > 0.0 ? axle[i] : 0.0;
    sd->fz[i] = fz;
    sd->lim[i] = fz * s->mf_peak;
    sd->damp[i] = 0.0;
    if (p->damping_ratio > 0.0 && p->wheel_inertia[i] > 0.0 && fz > 0.0) {
      double kx = fz * p->B * p->C * p->D / p->relaxation_length;
      double c = 2.0 * p->damping_ratio * sqrt(kx * p->wheel_inertia[i]) / p->radius[i];
      sd->damp[i] = c * p->relaxation_length;
    }
  }
}

/* The power reversal's event function: the engine shaft's power into the
 * meshes in the segment's direction (positive while it holds). */
static double reversal(const step_data *sd) { return sd->kidx == 0 ? sd->pe : -sd->pe; }

/* The state at θ on RK4's continuous extension (the solver's dense_state). */
static void dense(const double *y0, const double *k1, const double *k2, const double *k3,
                  const double *k4, double theta, double h, double *y) {
  double t2 = theta * theta, t3 = t2 * theta;
  double b1 = theta - 1.5 * t2 + 2.0 / 3.0 * t3, b23 = t2 - 2.0 / 3.0 * t3,
         b4 = -0.5 * t2 + 2.0 / 3.0 * t3;
  for (int i = 0; i < NY; i++)
    y[i] = y0[i] + h * (b1 * k1[i] + b23 * (k2[i] + k3[i]) + b4 * k4[i]);
}

static void rk4_rest(const baseline_sedan *s, step_data *sd, const double *y0, const double *k1,
                     double h, double *k2, double *k3, double *k4, double *yt) {
  for (int i = 0; i < NY; i++)
    yt[i] = y0[i] + 0.5 * h * k1[i];
  derivative(s, sd, yt, k2);
  for (int i = 0; i < NY; i++)
    yt[i] = y0[i] + 0.5 * h * k2[i];
  derivative(s, sd, yt, k3);
  for (int i = 0; i < NY; i++)
    yt[i] = y0[i] + h * k3[i];
  derivative(s, sd, yt, k4);
  for (int i = 0; i < NY; i++)
    yt[i] = y0[i] + h / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]);
}

/* One segment from s->t towards t_end: the decisions at its start, RK4
 * with the meshes' direction held, cut at a power reversal located as the
 * solver locates events (regula falsi with bisection on the dense output,
 * to max(1e-10, 1e-14/h) of the segment), the decisions at its end. */
static void segment(baseline_sedan *s, double throttle, double t_end, bool events) {
  const baseline_sedan_params *p = &s->p;
  double h = t_end - s->t, tol = 1e-9 * h + 8.0 * DBL_EPSILON * fabs(s->t);
  /* before: limiter, gearbox policy (auto_rpm), loads */
  double rpm = baseline_sedan_engine_speed(s) * RPM_PER_RAD_S;
  if (s->limiter && rpm < p->redline_rpm - p->limiter_hysteresis_rpm)
    s->limiter = false;
  else if (!s->limiter && rpm > p->redline_rpm)
    s->limiter = true;
  if (!s->shifting) {
    int want = s->gear;
    if (s->gear < BL_GEARS && rpm >= p->upshift_rpm)
      want = s->gear + 1;
    else if (s->gear > 1 && rpm <= p->downshift_rpm)
      want = s->gear - 1;
    if (want != s->gear) {
      s->we = baseline_sedan_engine_speed(s); /* decoupling keeps every speed */
      s->gear = want;
      s->shifting = true;
      s->shift_end = s->t + p->shift_time;
      set_mode(s);
      s->topology_changes++;
    }
  }
  step_data sd = {.kidx = s->kidx};
  sd.driver = s->shifting ? 0.0 : clamp(throttle, 0.0, 1.0);
  normal_loads(s, &sd);
  double v_start = s->v;

  double y0[NY], yt[NY], k1[NY], k2[NY], k3[NY], k4[NY];
  memcpy(y0 + Y_W, s->w, sizeof s->w);
  y0[Y_V] = s->v;
  y0[Y_E] = s->we;
  memcpy(y0 + Y_K, s->kappa, sizeof s->kappa);
  y0[Y_X] = s->x;
  derivative(s, &sd, y0, k1); /* the direction is taken here ... */
  sd.hold = true;             /* ... and kept */
  s->kidx = sd.kidx;
  bool watch = events && !s->shifting && fabs(sd.pe) > 1e-9;
  double g0 = reversal(&sd);
  rk4_rest(s, &sd, y0, k1, h, k2, k3, k4, yt);
  if (watch) {
    double dy[NY], ghi = reversal(&sd); /* the fourth stage's, as the solver takes it */
    if (g0 > 0.0 && ghi <= 0.0) {
      double lo = 0.0, hi = 1.0, etol = fmax(1e-10, 1e-14 / h), yd[NY];
      int stall = 0, last = 0;
      for (int it = 0; it < 100 && hi - lo > etol; it++) {
        double est = hi, w = hi - lo;
        if (g0 > 0.0 && !(ghi > 0.0)) {
          double r = lo + w * g0 / (g0 - ghi);
          if (r < est)
            est = r;
        }
        if (stall >= 2 || !(est > lo + 1e-3 * w && est < hi - 1e-3 * w))
          est = lo + 0.5 * w;
        dense(y0, k1, k2, k3, k4, est, h, yd);
        derivative(s, &sd, yd, dy);
        double gt = reversal(&sd);
        bool crossed = g0 > 0.0 && gt <= 0.0;
        int side = crossed ? 1 : -1;
        stall = side == last ? stall + 1 : 0;
        last = side;
        if (crossed) {
          hi = est;
          ghi = gt;
        } else {
          lo = est;
          g0 = gt;
        }
      }
      if (hi * h < h - tol) {
        s->events++;
        s->last_event = s->t + hi * h;
        h = hi * h;
        rk4_rest(s, &sd, y0, k1, h, k2, k3, k4, yt); /* k1 is the same */
      }
    }
  }
  memcpy(s->w, yt + Y_W, sizeof s->w);
  s->v = yt[Y_V];
  s->we = yt[Y_E];
  for (int i = 0; i < BL_WHEELS; i++)
    s->kappa[i] = fmax(-KAPPA_LIMIT, fmin(KAPPA_LIMIT, yt[Y_K + i]));
  s->x = yt[Y_X];
  s->t += h;

  /* after: the body's acceleration (not over a sliver), the shift's end */
  if (h > 1e-6)
    s->accel = (s->v - v_start) / h;
  if (s->shifting && !(s->t < s->shift_end - TIME_EPS * h)) {
    s->shifting = false;
    engage(s);
  }
}

void baseline_sedan_step(baseline_sedan *s, double throttle, double dt) {
  double t_end = s->t + dt;
  for (int seg = 0; seg < 32; seg++) {
    segment(s, throttle, t_end, seg < 31);
    if (s->t >= t_end - (1e-9 * dt + 8.0 * DBL_EPSILON * fabs(t_end)))
      break;
  }
  s->t = t_end;
  s->steps++;
}
