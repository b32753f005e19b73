/* The magic-formula tyre shared by the wheel and hub blocks: the parameter
 * fields of a "tyre" object, the formula, and the relaxed slip's rate.
 *
 *   Fx / Fz = D sin(C atan(Bκ − E(Bκ − atan Bκ)))
 *   σ dκ/dt = ω R − v − |v| κ,  κ held within ±TYRE_KAPPA_LIMIT
 *
 * (wheel.c states the model in full). A private header of blocks/, for
 * classes whose params struct has members B, C, D, E, relaxation_length
 * and damping_ratio.
 *
 * The defaults are a dry road: B 10, C 1.9, D 1, E 0.97, the "dry tarmac"
 * set of the typical Magic Formula coefficients that MathWorks' Simscape
 * Driveline documentation tabulates for its Tire-Road Interaction (Magic
 * Formula) block (after Pacejka, Tire and Vehicle Dynamics). The force
 * peaks at D·Fz at slip 0.180 and falls to 0.914 of the peak at full
 * slip (κ = ±1), so wheelspin and a locked wheel cost grip. (Until
 * version 2's fidelity work the default C was 1.65: a peak at slip 0.40
 * and 0.988 of it at full slip, with almost nothing lost to wheelspin.) */
#ifndef DG_BLOCKS_TYRE_H
#define DG_BLOCKS_TYRE_H

#include <drivegraph/block.h>

#include <math.h>

/* Bound of the slip state: at standstill the steady slip is unbounded, and
 * a wheel spinning on the spot would otherwise wind the state up far
 * beyond the range the B, C, D, E fit describes. */
#define TYRE_KAPPA_LIMIT 1.0

/* The "tyre" object's magic-formula fields of params struct T. */
#define TYRE_MF_FIELDS(T)                                                                        \
  DG_PARAM_NUM(T, B, "B", "", 10.0, DG_P_MIN_EXCL | DG_P_DYNAMICS, 0, 0, "stiffness factor"),   \
      DG_PARAM_NUM(T, C, "C", "", 1.9, DG_P_MIN_EXCL | DG_P_MAX_EXCL | DG_P_DYNAMICS, 0, 2,     \
                   "shape factor (the defaults B, C, D, E are a dry road: the force peaks at "  \
                   "slip 0.180 and keeps 0.914 of the peak at full slip)"),                      \
      DG_PARAM_NUM(T, D, "D", "", 1.0, DG_P_MIN_EXCL | DG_P_DYNAMICS, 0, 0,                      \
                   "peak factor: friction coefficient mu (dry asphalt ~1)"),                     \
      DG_PARAM_NUM(T, E, "E", "", 0.97, DG_P_MAX | DG_P_DYNAMICS, 0, 1, "curvature factor"),     \
      DG_PARAM_NUM(T, relaxation_length, "relaxation_length", "m", 0.15,                         \
                   DG_P_MIN_EXCL | DG_P_DYNAMICS, 0, 0,                                          \
                   "distance rolled for the slip to settle (first-order lag)"),                  \
      DG_PARAM_NUM(T, damping_ratio, "damping_ratio", "", 1.0, DG_P_MIN | DG_P_DYNAMICS, 0, 0,   \
                   "damping of the tread deflection, as a damping ratio of the wheel on the "    \
                   "tyre's stiffness (0: none)")

/* Fx / Fz at slip k. */
static inline double tyre_mf(double B, double C, double D, double E, double k) {
  double x = B * k;
  return D * sin(C * atan(x - E * (x - atan(x))));
}

/* dκ/dt = (ωR − v − |v|κ)/σ, held at the slip limit. */
static inline double tyre_slip_rate(double w, double radius, double v, double k, double sigma) {
  double dk = (w * radius - v - fabs(v) * k) / sigma;
  if ((k >= TYRE_KAPPA_LIMIT && dk > 0.0) || (k <= -TYRE_KAPPA_LIMIT && dk < 0.0))
    dk = 0.0;
  return dk;
}

#endif
