/* The hand-written baseline of graphs/bench/axle_baseline.json (see
 * baseline_axle.h): what a careful engineer would write for this one rig,
 * without the framework.
 *
 * Degrees of freedom: the wheel speeds q = [ω_L, ω_R]. The open
 * differential (ratio 1, split 0.5) turns its carrier at (ω_L + ω_R)/2 and
 * the final drive (ratio r) turns the source at
 *   ω_s = a·(ω_L + ω_R),   a = r/2.
 * Kinetic energy, with the gear set's inertia I_g on the source shaft and
 * the carrier's I_d on the differential's input:
 *   2·KE = I_L ω_L² + I_R ω_R² + I_d (ω_L + ω_R)²/4 + (I_s + I_g) a² (ω_L + ω_R)²
 * so the inertia matrix is
 *   M = [[I_L + c, c], [c, I_R + c]],   c = I_e/4,   I_e = (I_s + I_g)·r² + I_d
 * (lib/solver.c's M = Gᵀ diag(I) G for this graph), inverted once by hand:
 *   M⁻¹ = [[I_R + c, −c], [−c, I_L + c]] / ((I_L + c)(I_R + c) − c²).
 *
 * Forces, by virtual work (the lossless gear passes the source torque
 * T_s(ω_s) times its ratio, the differential splits it in halves):
 *   Q_i = a·T_s(ω_s) − c1_i ω_i − c2_i ω_i |ω_i|,   i = L, R,
 *   q̇ = M⁻¹ Q,
 * with T_s the full-load curve over rpm = ω_s · 30/π, linear between its
 * breakpoints and held beyond them. No events: no clutch, no Coulomb
 * friction, so one RK4 step is all a step does. */
#include "baseline_axle.h"

#include <math.h>
#include <string.h>

#define RPM_PER_RAD_S 9.549296585513720 /* 30/π, as DG_RPM_PER_RAD_S */

void baseline_axle_defaults(baseline_axle_params *p) {
  static const baseline_axle_params d = {
      .source_inertia = 0.2,
      .curve_rpm = {0, 3000, 6000},
      .curve_torque = {300, 300, 0},
      .final_ratio = 13.94,
      .final_inertia = 0.0, /* gear's default */
      .diff_inertia = 0.05,
      .wheel_inertia = {1.2, 1.2},
      .c1 = {20, 40},
      .c2 = {0.02, 0.02},
  };
  *p = d;
}

/* The full-load curve: linear between breakpoints, held outside. */
static double source_torque(const baseline_axle_params *p, double rpm) {
  const double *x = p->curve_rpm, *y = p->curve_torque;
  if (rpm <= x[0])
    return y[0];
  if (rpm >= x[BA_CURVE - 1])
    return y[BA_CURVE - 1];
  int k = 0;
  while (rpm >= x[k + 1])
    k++;
  double w = (rpm - x[k]) / (x[k + 1] - x[k]);
  return y[k] + w * (y[k + 1] - y[k]);
}

void baseline_axle_init(baseline_axle *s, const baseline_axle_params *p) {
  memset(s, 0, sizeof *s);
  s->p = *p;
  s->a = 0.5 * p->final_ratio;
  double ie = (p->source_inertia + p->final_inertia) * p->final_ratio * p->final_ratio +
              p->diff_inertia;
  double c = 0.25 * ie;
  double m11 = p->wheel_inertia[BA_LEFT] + c, m22 = p->wheel_inertia[BA_RIGHT] + c;
  double det = m11 * m22 - c * c;
  s->m_ll = m22 / det;
  s->m_rr = m11 / det;
  s->m_lr = -c / det;
}

double baseline_axle_source_speed(const baseline_axle *s) {
  return s->a * (s->w[BA_LEFT] + s->w[BA_RIGHT]);
}

static void derivative(const baseline_axle *s, const double *w, double *dw) {
  const baseline_axle_params *p = &s->p;
  double ws = s->a * (w[BA_LEFT] + w[BA_RIGHT]);
  double drive = s->a * source_torque(p, ws * RPM_PER_RAD_S);
  double wl = w[BA_LEFT], wr = w[BA_RIGHT];
  double ql = drive - (p->c1[BA_LEFT] * wl + p->c2[BA_LEFT] * wl * fabs(wl));
  double qr = drive - (p->c1[BA_RIGHT] * wr + p->c2[BA_RIGHT] * wr * fabs(wr));
  dw[BA_LEFT] = s->m_ll * ql + s->m_lr * qr;
  dw[BA_RIGHT] = s->m_lr * ql + s->m_rr * qr;
}

void baseline_axle_step(baseline_axle *s, double dt) {
  double k1[BA_WHEELS], k2[BA_WHEELS], k3[BA_WHEELS], k4[BA_WHEELS], y[BA_WHEELS];
  const double *w = s->w;
  derivative(s, w, k1);
  for (int i = 0; i < BA_WHEELS; i++)
    y[i] = w[i] + 0.5 * dt * k1[i];
  derivative(s, y, k2);
  for (int i = 0; i < BA_WHEELS; i++)
    y[i] = w[i] + 0.5 * dt * k2[i];
  derivative(s, y, k3);
  for (int i = 0; i < BA_WHEELS; i++)
    y[i] = w[i] + dt * k3[i];
  derivative(s, y, k4);
  for (int i = 0; i < BA_WHEELS; i++)
    s->w[i] = w[i] + dt / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]);
  s->t += dt;
  s->steps++;
}
