/* A planar vehicle host with drivegraph as its drivetrain: see host.h and
 * docs/host.md. Plain C against drivegraph's public header only. */
#include "host.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define PI 3.14159265358979323846

/* ---- the tyre ------------------------------------------------------------ */

void host_tyre_default(host_tyre *t) {
  *t = (host_tyre){.B = 10.0, .C = 1.9, .D = 1.0, .E = 0.97,
                   .By = 10.0, .Cy = 1.3, .Dy = 1.0, .Ey = 0.0,
                   .Bxa = 12.0, .Cxa = 1.0, .Byk = 10.0, .Cyk = 1.0,
                   .relaxation_length = 0.15, .lateral_relaxation = 0.3, .damping_ratio = 1.0};
}

double host_mf(double B, double C, double D, double E, double x) {
  double bx = B * x;
  return D * sin(C * atan(bx - E * (bx - atan(bx))));
}

/* The peak of MF on [0, κ_max]: where C·atan(φ) = π/2, φ = Bκ − E(Bκ −
 * atan Bκ) increasing for E <= 1 (bisection on φ), else the end. */
double host_tyre_peak(const host_tyre *t) {
  double xmax = t->B * HOST_KAPPA_LIMIT;
  double end = fabs(host_mf(t->B, t->C, t->D, t->E, HOST_KAPPA_LIMIT));
  if (!(t->C > 1.0))
    return end;
  double target = tan(PI / (2.0 * t->C));
  double lo = 0.0, hi = xmax;
  if (xmax - t->E * (xmax - atan(xmax)) <= target)
    return end;
  for (int i = 0; i < 200; i++) {
    double mid = 0.5 * (lo + hi);
    if (mid - t->E * (mid - atan(mid)) < target)
      lo = mid;
    else
      hi = mid;
  }
  return fabs(host_mf(t->B, t->C, t->D, t->E, 0.5 * (lo + hi) / t->B));
}

double host_slip_rate(double sigma, double omega, double R, double vx, double kappa) {
  double dk = (omega * R - vx - fabs(vx) * kappa) / sigma;
  if ((kappa >= HOST_KAPPA_LIMIT && dk > 0.0) || (kappa <= -HOST_KAPPA_LIMIT && dk < 0.0))
    dk = 0.0;
  return dk;
}

double host_tyre_fx(const host_tyre *t, double peak, double kappa, double dkappa, double fz,
                    double alpha, double J, double R) {
  if (!(fz > 0.0))
    return 0.0;
  double fx = fz * host_mf(t->B, t->C, t->D, t->E, kappa);
  if (t->damping_ratio > 0.0 && J > 0.0) {
    double sigma = t->relaxation_length;
    double kx = fz * t->B * t->C * t->D / sigma;
    double c = 2.0 * t->damping_ratio * sqrt(kx * J) / R * sigma;
    double lim = fz * peak;
    fx += c * dkappa;
    fx = fx > lim ? lim : (fx < -lim ? -lim : fx);
  }
  return fx * cos(t->Cxa * atan(t->Bxa * alpha));
}

double host_tyre_fy(const host_tyre *t, double alpha, double kappa, double fz) {
  if (!(fz > 0.0))
    return 0.0;
  return -fz * host_mf(t->By, t->Cy, t->Dy, t->Ey, alpha) * cos(t->Cyk * atan(t->Byk * kappa));
}

/* The tyre model the hubs call at every RK4 stage (dg_tyre_fn): the hub
 * gives the slip state, load, contact velocity and wheel speed; the slip
 * angle is the host's, held over the step. */
static double host_hub_tyre(const dg_tyre_state *s, void *user) {
  const host_wheel *w = user;
  double dk = host_slip_rate(w->tyre->relaxation_length, s->omega, s->radius, s->vx, s->slip);
  return host_tyre_fx(w->tyre, w->peak, s->slip, dk, s->fz, w->alpha, w->inertia, s->radius);
}

/* The hub's contact velocity inside the step (dg_input_fn). */
static double host_hub_vx(double t, void *user) {
  const host_wheel *w = user;
  return w->vx0 + w->vx_rate * (t - w->t0);
}

/* ---- cars ---------------------------------------------------------------- */

static void car_wheels(host_car *c, double R, const double J[HOST_WHEELS]) {
  static const char *const ids[HOST_WHEELS] = {"hub_fl", "hub_fr", "hub_rl", "hub_rr"};
  for (int i = 0; i < HOST_WHEELS; i++) {
    c->hub[i] = ids[i];
    c->radius[i] = R;
    c->inertia[i] = J[i];
    host_tyre_default(&c->tyre[i]);
  }
}

void host_car_sedan(host_car *c) {
  *c = (host_car){.mass = 1500.0, .yaw_inertia = 2500.0, .wheelbase = 2.8, .cg_to_front = 1.2,
                  .cg_height = 0.5, .track_front = 1.55, .track_rear = 1.55, .cda = 0.65,
                  .air_density = 1.225, .rolling_resistance = 0.012, .gravity = 9.80665};
  const double J[HOST_WHEELS] = {1.0, 1.0, 1.3, 1.3};
  car_wheels(c, 0.32, J);
}

void host_car_awd(host_car *c) {
  *c = (host_car){.mass = 1650.0, .yaw_inertia = 2800.0, .wheelbase = 2.65, .cg_to_front = 1.25,
                  .cg_height = 0.48, .track_front = 1.55, .track_rear = 1.55, .cda = 0.62,
                  .air_density = 1.225, .rolling_resistance = 0.012, .gravity = 9.80665};
  const double J[HOST_WHEELS] = {1.2, 1.2, 1.2, 1.2};
  car_wheels(c, 0.33, J);
}

void host_loads(const host_car *c, double ax, double ay, double fz[HOST_WHEELS]) {
  double m = c->mass, g = c->gravity, L = c->wheelbase, h = c->cg_height;
  double a = c->cg_to_front, b = L - a;
  double front = (m * g * b - m * ax * h) / L, rear = m * g - front;
  double dfront = m * ay * h * (b / L) / c->track_front;
  double drear = m * ay * h * (a / L) / c->track_rear;
  fz[HOST_FL] = fmax(0.0, 0.5 * front - dfront);
  fz[HOST_FR] = fmax(0.0, 0.5 * front + dfront);
  fz[HOST_RL] = fmax(0.0, 0.5 * rear - drear);
  fz[HOST_RR] = fmax(0.0, 0.5 * rear + drear);
}

/* ---- set-up -------------------------------------------------------------- */

static int fail(dg_error *err, int code, const char *what, const char *name) {
  if (err) {
    memset(err, 0, sizeof *err);
    err->code = code;
    snprintf(err->text, sizeof err->text, "host: %s \"%s\"", what, name);
  }
  return code;
}

static int block_index(const dg_graph *g, const char *id) {
  for (int i = 0; i < dg_graph_block_count(g); i++)
    if (strcmp(dg_graph_block_id(g, i), id) == 0)
      return i;
  return -1;
}

/* The index of the channel block `id`'s input `input` follows, or -1. */
static int input_of(const dg_sim *sim, const dg_graph *g, const char *id, const char *input) {
  int b = block_index(g, id);
  const char *ch = b >= 0 ? dg_graph_input_channel(g, b, input) : NULL;
  return ch ? dg_sim_input_find(sim, ch) : -1;
}

static int signal_of(const dg_sim *sim, const char *id, const char *signal) {
  char name[160];
  snprintf(name, sizeof name, "%s.%s", id, signal);
  return dg_sim_signal_find(sim, name);
}

int host_init(host *h, const host_car *car, const dg_graph *g, host_coupling coupling,
              dg_error *err) {
  memset(h, 0, sizeof *h);
  h->car = *car;
  h->coupling = coupling;
  h->extrapolate = true;
  h->gear = 1;
  h->sim = dg_sim_new(g, err);
  if (!h->sim)
    return err ? err->code : DG_ERR_USAGE;
  dg_sim *sim = h->sim;
  h->in_throttle = dg_sim_input_find(sim, "throttle");
  h->in_brake = dg_sim_input_find(sim, "brake");
  h->in_gear = dg_sim_input_find(sim, "gear");
  double fz[HOST_WHEELS];
  host_loads(&h->car, 0.0, 0.0, fz);
  const double a = car->cg_to_front, b = car->wheelbase - a;
  for (int i = 0; i < HOST_WHEELS; i++) {
    host_wheel *w = &h->w[i];
    const char *id = car->hub[i];
    w->tyre = &h->car.tyre[i];
    w->radius = car->radius[i];
    w->inertia = car->inertia[i];
    w->peak = host_tyre_peak(w->tyre);
    w->pos_x = i == HOST_FL || i == HOST_FR ? a : -b;
    double track = i == HOST_FL || i == HOST_FR ? car->track_front : car->track_rear;
    w->pos_y = i == HOST_FL || i == HOST_RL ? 0.5 * track : -0.5 * track;
    w->fz = fz[i];
    w->sig_omega = signal_of(sim, id, "omega");
    if (w->sig_omega < 0) {
      int rc = fail(err, DG_ERR_UNKNOWN, "the graph has no wheel", id);
      host_free(h);
      return rc;
    }
    if (coupling == HOST_HUB) {
      w->in_vx = input_of(sim, g, id, "vx");
      w->in_fz = input_of(sim, g, id, "fz");
      w->sig_fx = signal_of(sim, id, "fx");
      w->sig_slip = signal_of(sim, id, "slip");
      int rc = DG_OK;
      if (w->in_vx < 0 || w->in_fz < 0)
        rc = fail(err, DG_ERR_USAGE, "a hub's vx and fz must follow channels:", id);
      else if ((rc = dg_sim_set_tyre(sim, id, host_hub_tyre, w, err)) == DG_OK)
        rc = dg_sim_set_input_fn(sim, w->in_vx, host_hub_vx, w, err);
      if (rc != DG_OK) {
        host_free(h);
        return rc;
      }
      dg_sim_set_input(sim, w->in_fz, w->fz);
    } else {
      w->in_torque = input_of(sim, g, id, "command");
      if (w->in_torque < 0) {
        int rc = fail(err, DG_ERR_USAGE, "a torque_source's command must follow a channel:", id);
        host_free(h);
        return rc;
      }
    }
  }
  h->stopped = true;
  if (h->in_gear >= 0)
    dg_sim_set_input(sim, h->in_gear, h->gear);
  if (h->in_throttle >= 0)
    dg_sim_set_input(sim, h->in_throttle, 0.0);
  if (h->in_brake >= 0)
    dg_sim_set_input(sim, h->in_brake, 0.0);
  int rc = dg_sim_start(sim, err);
  if (rc != DG_OK)
    host_free(h);
  return rc;
}

void host_free(host *h) {
  dg_sim_free(h->sim);
  h->sim = NULL;
}

/* ---- the step ------------------------------------------------------------ */

/* Contact velocity of wheel i in its own frame for chassis state s. */
static void wheel_velocity(const host_wheel *w, const host_state *s, double *vx, double *vy) {
  double cx = s->vx - s->r * w->pos_y, cy = s->vy + s->r * w->pos_x;
  double c = cos(w->delta), sn = sin(w->delta);
  *vx = c * cx + sn * cy;
  *vy = -sn * cx + c * cy;
}

/* Rate of the relaxed tan α for contact velocity (vx, vy). */
static double lateral_rate(const host_wheel *w, double vx, double vy, double ta) {
  return (vy - fabs(vx) * ta) / w->tyre->lateral_relaxation;
}

/* The chassis' rates d/dt (x, y, ψ, vx, vy, r) for the tyre forces fx, fy
 * (wheel frames); *push is the tyre forces' sum along the body's x. */
static void chassis_rates(const host *h, const host_state *s, const double fx[HOST_WHEELS],
                          const double fy[HOST_WHEELS], double d[6], double *push) {
  const host_car *c = &h->car;
  double sx = 0.0, sy = 0.0, mz = 0.0;
  for (int i = 0; i < HOST_WHEELS; i++) {
    const host_wheel *w = &h->w[i];
    double cd = cos(w->delta), sd = sin(w->delta);
    double bx = cd * fx[i] - sd * fy[i], by = sd * fx[i] + cd * fy[i];
    sx += bx;
    sy += by;
    mz += w->pos_x * by - w->pos_y * bx;
  }
  *push = sx;
  double drag = -0.5 * c->air_density * c->cda * s->vx * fabs(s->vx);
  double roll = -c->rolling_resistance * c->mass * c->gravity * h->dir;
  double cy = cos(s->yaw), sy_ = sin(s->yaw);
  d[0] = cy * s->vx - sy_ * s->vy;
  d[1] = sy_ * s->vx + cy * s->vy;
  d[2] = s->r;
  d[3] = (sx + drag + roll) / c->mass + s->r * s->vy;
  d[4] = sy / c->mass - s->r * s->vx;
  d[5] = mz / c->yaw_inertia;
}

static void state_add(host_state *out, const host_state *s, double k, const double d[6]) {
  out->x = s->x + k * d[0];
  out->y = s->y + k * d[1];
  out->yaw = s->yaw + k * d[2];
  out->vx = s->vx + k * d[3];
  out->vy = s->vy + k * d[4];
  out->r = s->r + k * d[5];
}

/* HOST_EXPLICIT: the kinematic slip at the step's start (the steady state
 * of the hub's relaxation; a host without a slip state of its own). */
static double explicit_slip(const host_wheel *w, double omega) {
  double k = (omega * w->radius - w->vx) / fmax(fabs(w->vx), HOST_SLIP_MIN_SPEED);
  return fmax(-HOST_KAPPA_LIMIT, fmin(HOST_KAPPA_LIMIT, k));
}

int host_step(host *h, double dt) {
  dg_sim *sim = h->sim;
  double t = dg_sim_time(sim);
  if (h->in_throttle >= 0)
    dg_sim_set_input(sim, h->in_throttle, h->throttle);
  if (h->in_brake >= 0)
    dg_sim_set_input(sim, h->in_brake, h->brake);
  if (h->in_gear >= 0)
    dg_sim_set_input(sim, h->in_gear, h->gear);

  /* the wheels' kinematics and loads at the step's start */
  double fz[HOST_WHEELS], fx0[HOST_WHEELS], fy0[HOST_WHEELS], dta0[HOST_WHEELS];
  host_loads(&h->car, h->ax, h->ay, fz);
  for (int i = 0; i < HOST_WHEELS; i++) {
    host_wheel *w = &h->w[i];
    w->delta = i == HOST_FL || i == HOST_FR ? h->steer : 0.0;
    w->vx_prev = w->vx;
    wheel_velocity(w, &h->s, &w->vx, &w->vy);
    w->fz = fz[i];
    w->alpha = atan(w->ta);
    dta0[i] = lateral_rate(w, w->vx, w->vy, w->ta);
    if (h->coupling == HOST_HUB) {
      w->vx0 = w->vx;
      w->t0 = t;
      w->vx_rate = h->extrapolate && h->steps > 0 ? (w->vx - w->vx_prev) / dt : 0.0;
      dg_sim_set_input(sim, w->in_fz, fz[i]);
    } else {
      w->kappa = explicit_slip(w, dg_sim_signal(sim, w->sig_omega));
      w->fx = host_tyre_fx(w->tyre, w->peak, w->kappa, 0.0, fz[i], w->alpha, w->inertia,
                           w->radius);
      dg_sim_set_input(sim, w->in_torque, -w->fx * w->radius);
    }
  }
  if (h->coupling == HOST_HUB)
    dg_sim_apply_inputs(sim, t); /* the callbacks' new start values */
  for (int i = 0; i < HOST_WHEELS; i++) {
    host_wheel *w = &h->w[i];
    double kappa = h->coupling == HOST_HUB ? dg_sim_signal(sim, w->sig_slip) : w->kappa;
    fx0[i] = h->coupling == HOST_HUB ? dg_sim_signal(sim, w->sig_fx) : w->fx;
    fy0[i] = host_tyre_fy(w->tyre, w->alpha, kappa, fz[i]);
  }
  double d0[6], push0;
  chassis_rates(h, &h->s, fx0, fy0, d0, &push0);

  /* the drivetrain's step */
  long modes = dg_sim_topology_changes(sim);
  int rc = dg_sim_step(sim, dt);
  if (rc != DG_OK)
    return rc;

  /* the chassis: Heun, the tyre forces at the end from the drivetrain */
  const host_car *c = &h->car;
  double fc = c->rolling_resistance * c->mass * c->gravity;
  if (h->stopped) {
    /* static friction holds the car while the tyres push less than it */
    double fx1[HOST_WHEELS], push1 = 0.0;
    for (int i = 0; i < HOST_WHEELS; i++) {
      host_wheel *w = &h->w[i];
      fx1[i] = h->coupling == HOST_HUB ? dg_sim_signal(sim, w->sig_fx) : w->fx;
      w->fx = fx1[i];
      w->fy = 0.0;
      push1 += fx1[i] * cos(w->delta);
    }
    h->ax = h->ay = 0.0;
    h->steps++;
    if (fabs(push1) <= fc)
      return DG_OK;
    /* it moves off where |push| passed fc (linear within the step), with
     * the net force rising from 0 there */
    double theta = fabs(push0) < fc ? (fc - fabs(push0)) / (fabs(push1) - fabs(push0)) : 0.0;
    h->dir = push1 > 0.0 ? 1 : -1;
    h->stopped = false;
    double net = push1 - fc * h->dir;
    double dv = 0.5 * (1.0 - theta) * dt * net / c->mass;
    h->s.vx += dv;
    h->s.x += dv * (1.0 - theta) * dt / 3.0;
    h->ax = dv / dt;
    return DG_OK;
  }

  host_state pred;
  state_add(&pred, &h->s, dt, d0);
  double fx1[HOST_WHEELS], fy1[HOST_WHEELS], ta1[HOST_WHEELS];
  for (int i = 0; i < HOST_WHEELS; i++) {
    host_wheel *w = &h->w[i];
    double pvx, pvy, kappa;
    wheel_velocity(w, &pred, &pvx, &pvy);
    double ta_pred = w->ta + dt * dta0[i];
    if (h->coupling == HOST_HUB) {
      /* a mode change at the step's end (a gear engaging) projects the
       * speeds there: the force after that jump belongs to the next step */
      fx1[i] = dg_sim_topology_changes(sim) != modes ? fx0[i] : dg_sim_signal(sim, w->sig_fx);
      kappa = dg_sim_signal(sim, w->sig_slip);
    } else {
      fx1[i] = fx0[i]; /* held over the step: what the drivetrain was given */
      kappa = w->kappa;
    }
    fy1[i] = host_tyre_fy(w->tyre, atan(ta_pred), kappa, fz[i]);
    ta1[i] = w->ta + 0.5 * dt * (dta0[i] + lateral_rate(w, pvx, pvy, ta_pred));
  }
  double d1[6], push1;
  chassis_rates(h, &pred, fx1, fy1, d1, &push1);
  double d[6];
  for (int k = 0; k < 6; k++)
    d[k] = 0.5 * (d0[k] + d1[k]);
  /* the CG's accelerations over the step, for the next step's loads */
  h->ax = d[3] - 0.5 * (h->s.r * h->s.vy + pred.r * pred.vy);
  h->ay = d[4] + 0.5 * (h->s.r * h->s.vx + pred.r * pred.vx);
  state_add(&h->s, &h->s, dt, d);
  for (int i = 0; i < HOST_WHEELS; i++) {
    h->w[i].ta = ta1[i];
    h->w[i].fx = fx1[i];
    h->w[i].fy = fy1[i];
  }
  /* rolling resistance: the car stops where its speed crosses zero */
  if (fc > 0.0 && h->dir != 0 && h->s.vx * h->dir <= 0.0) {
    h->s.vx = h->s.vy = h->s.r = 0.0;
    h->stopped = true;
  }
  h->steps++;
  return DG_OK;
}
