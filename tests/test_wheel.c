/* wheel: magic-formula force and slip, rolling tyre kinematics, brake
 * stick–slip (stopping, holding on a grade, breakaway), parameter errors. */
#include "testutil.h"

#include <math.h>

#define PI 3.14159265358979323846
#define G 9.80665

static double sig(const dg_sim *sim, const char *name) { return dg_test_signal(sim, name); }

/* The magic formula, written out independently of the block. */
static double mf_ref(double B, double C, double D, double E, double k) {
  double bk = B * k;
  return D * sin(C * atan(bk - E * (bk - atan(bk))));
}

/* ------------------------------------------------------------------------ */
/* Magic formula                                                            */

/* One MF wheel on a body, fixed normal load, tyre fields given. */
static dg_graph *mf_rig(const char *tyre, double fz) {
  return dg_test_graphf("{\"drivegraph\":1,\"blocks\":{"
                        "\"w\":{\"type\":\"wheel\",\"radius\":0.3,\"normal_load\":%g,"
                        "\"tyre\":{\"model\":\"magic_formula\"%s}},"
                        "\"body\":{\"type\":\"vehicle\",\"mass\":1000}},"
                        "\"connections\":[[\"w.ground\",\"body.rear\"]]}",
                        fz, tyre);
}

/* E = 0: the peak is at B·κ = tan(π/(2C)) and equals D·Fz. The formula is
 * evaluated in closed form, so only round-off separates the values. */
START_TEST(test_peak_e0) {
  const double B = 10, C = 1.65, D = 0.9, fz = 4000;
  dg_graph *g = mf_rig(",\"B\":10,\"C\":1.65,\"D\":0.9,\"E\":0", fz);
  dg_sim *sim = dg_test_sim(g);
  double kp = tan(PI / (2.0 * C)) / B;
  dg_test_set_initial1(sim, "w.slip", kp);
  ck_assert_double_eq_tol(sig(sim, "w.fx"), D * fz, 1e-9);
  ck_assert_double_eq(sig(sim, "w.fz"), fz);
  dg_test_set_initial1(sim, "w.slip", -kp);
  ck_assert_double_eq_tol(sig(sim, "w.fx"), -D * fz, 1e-9);
  /* either side of the peak is lower */
  dg_test_set_initial1(sim, "w.slip", kp - 0.01);
  ck_assert_double_lt(sig(sim, "w.fx"), D * fz - 1.0);
  dg_test_set_initial1(sim, "w.slip", kp + 0.01);
  ck_assert_double_lt(sig(sim, "w.fx"), D * fz - 1.0);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* Default (dry asphalt) coefficients, E = 0.97: the curve follows the
 * formula, and its peak — found here by golden-section search on the
 * reference formula — is μ·Fz = D·Fz at the slip where C·atan(φ) = π/2. */
START_TEST(test_peak_default) {
  const double B = 10, C = 1.9, D = 1.0, E = 0.97, fz = 3500;
  dg_graph *g = mf_rig("", fz);
  dg_sim *sim = dg_test_sim(g);
  const double ks[] = {-1.0, -0.3, -0.05, 0.0, 0.02, 0.1, 0.25, 0.7, 1.0};
  for (size_t i = 0; i < sizeof ks / sizeof ks[0]; i++) {
    dg_test_set_initial1(sim, "w.slip", ks[i]);
    ck_assert_double_eq_tol(sig(sim, "w.fx"), fz * mf_ref(B, C, D, E, ks[i]), 1e-9);
  }
  double lo = 0.0, hi = 1.0, r = (sqrt(5.0) - 1.0) / 2.0;
  for (int i = 0; i < 200; i++) {
    double a = hi - r * (hi - lo), b = lo + r * (hi - lo);
    if (mf_ref(B, C, D, E, a) < mf_ref(B, C, D, E, b))
      lo = a;
    else
      hi = b;
  }
  double kp = 0.5 * (lo + hi);
  /* the peak is flat: a slip error δ costs ~δ², so 1e-8 in slip is enough */
  double bk = B * kp;
  ck_assert_double_eq_tol(C * atan(bk - E * (bk - atan(bk))), PI / 2.0, 1e-6);
  dg_test_set_initial1(sim, "w.slip", kp);
  ck_assert_double_eq_tol(sig(sim, "w.fx"), D * fz, 1e-6);
  /* the figures docs/blocks.md and README quote for the dry-road default:
   * the peak at slip 0.180, 0.914 of it at full slip */
  dg_test_set_initial1(sim, "w.slip", 1.0);
  double slide = sig(sim, "w.fx") / (D * fz);
  printf("tyre default: peak at slip %.4f, %.4f of it at full slip\n", kp, slide);
  ck_assert_double_eq_tol(kp, 0.180, 5e-4);
  ck_assert_double_eq_tol(slide, 0.9145, 5e-4);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* The slip state: σ dκ/dt = ωR − v − |v|κ. With both speeds held nearly
 * constant (huge masses: Fx·t/m ~ 1e-8 of the speeds), κ relaxes as
 * κ_ss (1 − exp(−|v| t / σ)) with κ_ss = (ωR − v)/|v|. RK4 at
 * h|v|/σ = 0.067 is accurate to ~1e-9. */
START_TEST(test_relaxation) {
  dg_graph *g = dg_test_graphf("{\"drivegraph\":1,\"blocks\":{"
                               "\"w\":{\"type\":\"wheel\",\"radius\":0.3,\"inertia\":1e9,"
                               "\"normal_load\":1000,\"tyre\":{\"model\":\"magic_formula\"}},"
                               "\"body\":{\"type\":\"vehicle\",\"mass\":1e9}},"
                               "\"connections\":[[\"w.ground\",\"body.rear\"]]}");
  dg_sim *sim = dg_test_sim(g);
  dg_test_set_initial(sim, 2, (const char *[]){"body.speed", "w.omega"},
                      (double[]){10.0, 10.5 / 0.3});
  double kss = 0.05, tau = 0.15 / 10.0;
  dg_test_step(sim, 10, 1e-3);
  ck_assert_double_eq_tol(sig(sim, "w.slip"), kss * (1.0 - exp(-0.01 / tau)), 1e-7);
  dg_test_step(sim, 90, 1e-3);
  ck_assert_double_eq_tol(sig(sim, "w.slip"), kss * (1.0 - exp(-0.1 / tau)), 1e-7);
  ck_assert_double_gt(sig(sim, "w.fx"), 0.0);
  /* the kinematic slip is (ωR − v)/|v| = 0.05 throughout (both speeds
   * held by the huge inertias), while the state is still rising to it */
  ck_assert_double_eq_tol(sig(sim, "w.slip_ratio"), kss, 1e-6);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* The kinematic slip is not limited (the state is): a wheel spinning at
 * 2.5 times the road speed has slip_ratio 1.5; at rest the speed floor
 * 0.1 m/s keeps it finite. */
START_TEST(test_slip_ratio) {
  dg_graph *g = dg_test_graphf("{\"drivegraph\":1,\"blocks\":{"
                               "\"w\":{\"type\":\"wheel\",\"radius\":0.3,\"inertia\":1,"
                               "\"normal_load\":1000,\"tyre\":{\"model\":\"magic_formula\"}},"
                               "\"body\":{\"type\":\"vehicle\",\"mass\":1000}},"
                               "\"connections\":[[\"w.ground\",\"body.rear\"]]}");
  dg_sim *sim = dg_test_sim(g);
  dg_test_set_initial(sim, 2, (const char *[]){"body.speed", "w.omega"},
                      (double[]){4.0, 10.0 / 0.3});
  ck_assert_double_eq_tol(sig(sim, "w.slip_ratio"), 1.5, 1e-12);
  dg_test_set_initial(sim, 2, (const char *[]){"body.speed", "w.omega"},
                      (double[]){0.0, 0.03 / 0.3});
  ck_assert_double_eq_tol(sig(sim, "w.slip_ratio"), 0.3, 1e-12);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* A wheel driven from rest: positive torque spins it forward, κ > 0 and
 * the tyre pushes the body forward; negative torque the reverse. Once the
 * slip has settled (the tread damping term c·σ·dκ/dt has died away) the
 * force is Fz·MF(κ) of the current slip. */
START_TEST(test_spinning) {
  double torque = _i == 0 ? 400.0 : -400.0;
  dg_graph *g =
      dg_test_graphf("{\"drivegraph\":1,\"blocks\":{"
                     "\"src\":{\"type\":\"torque_source\",\"torque\":%g},"
                     "\"w\":{\"type\":\"wheel\",\"radius\":0.3,\"inertia\":0.8,"
                     "\"tyre\":{\"model\":\"magic_formula\"}},"
                     "\"body\":{\"type\":\"vehicle\",\"mass\":1000,\"wheelbase\":2.5}},"
                     "\"connections\":[[\"src.out\",\"w.hub\"],[\"w.ground\",\"body.rear\"]]}",
                     torque);
  dg_sim *sim = dg_test_sim(g);
  dg_test_step(sim, 300, 1e-3);
  double s = torque > 0 ? 1.0 : -1.0;
  double slip = sig(sim, "w.slip"), fx = sig(sim, "w.fx"), fz = sig(sim, "w.fz");
  ck_assert_double_gt(s * slip, 0.0);
  ck_assert_double_gt(s * fx, 0.0);
  ck_assert_double_gt(s * sig(sim, "body.speed"), 0.0);
  ck_assert_double_gt(s * sig(sim, "w.omega") * 0.3, s * sig(sim, "body.speed"));
  /* rear axle load of a 1000 kg car with its CG mid-wheelbase, plus the
   * transfer of the acceleration (±), so between 0 and m g */
  ck_assert_double_gt(fz, 0.0);
  ck_assert_double_lt(fz, 1000 * G);
  ck_assert_double_eq_tol(fx, fz * mf_ref(10, 1.9, 1, 0.97, slip), 1e-3 * fabs(fx));
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* The relaxation model alone (damping_ratio 0) leaves the tread a spring
 * with no damping at low speed: a wheel launched from rest rings at
 * ~40 Hz (here the body's acceleration swings by more than half its mean).
 * The default tread damping (ratio 1 on the wheel's own inertia) removes
 * it: the acceleration is steady to 1 % after 0.2 s. */
START_TEST(test_tread_damping) {
  double zeta = _i == 0 ? 0.0 : 1.0;
  dg_graph *g =
      dg_test_graphf("{\"drivegraph\":1,\"blocks\":{"
                     "\"src\":{\"type\":\"torque_source\",\"torque\":400},"
                     "\"w\":{\"type\":\"wheel\",\"radius\":0.3,\"inertia\":0.8,"
                     "\"tyre\":{\"model\":\"magic_formula\",\"damping_ratio\":%g}},"
                     "\"body\":{\"type\":\"vehicle\",\"mass\":1000,\"wheelbase\":2.5}},"
                     "\"connections\":[[\"src.out\",\"w.hub\"],[\"w.ground\",\"body.rear\"]]}",
                     zeta);
  dg_sim *sim = dg_test_sim(g);
  dg_test_step(sim, 200, 1e-3);
  double lo = INFINITY, hi = -INFINITY, sum = 0;
  for (int k = 0; k < 100; k++) {
    dg_test_step(sim, 1, 1e-3);
    double a = sig(sim, "body.accel");
    lo = fmin(lo, a);
    hi = fmax(hi, a);
    sum += a;
  }
  double mean = sum / 100;
  ck_assert_double_gt(mean, 1.0);
  if (zeta == 0.0)
    ck_assert_double_gt(hi - lo, 0.5 * mean);
  else
    ck_assert_double_lt(hi - lo, 0.01 * mean);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* At rest with no torque, a magic-formula tyre does nothing: no slip
 * builds up, nothing moves, to the last bit (10 s). */
START_TEST(test_rest_no_drift) {
  dg_graph *g =
      dg_test_graphf("{\"drivegraph\":1,\"blocks\":{"
                     "\"src\":{\"type\":\"torque_source\",\"torque\":0,\"inertia\":0.1},"
                     "\"wr\":{\"type\":\"wheel\",\"radius\":0.3,"
                     "\"tyre\":{\"model\":\"magic_formula\"}},"
                     "\"wf\":{\"type\":\"wheel\",\"radius\":0.3,"
                     "\"tyre\":{\"model\":\"magic_formula\"}},"
                     "\"body\":{\"type\":\"vehicle\",\"mass\":1200,\"rolling_resistance\":0.01}},"
                     "\"connections\":[[\"src.out\",\"wr.hub\"],[\"wr.ground\",\"body.rear\"],"
                     "[\"wf.ground\",\"body.front\"]]}");
  dg_sim *sim = dg_test_sim(g);
  for (int i = 0; i < 10000; i++) {
    ck_assert_int_eq(dg_sim_step(sim, 1e-3), DG_OK);
    ck_assert_double_eq_tol(sig(sim, "body.speed"), 0.0, 1e-12);
    ck_assert_double_eq_tol(sig(sim, "wr.omega"), 0.0, 1e-12);
  }
  ck_assert_double_eq_tol(sig(sim, "body.x"), 0.0, 1e-12);
  ck_assert_double_eq_tol(sig(sim, "wf.slip"), 0.0, 1e-12);
  ck_assert_double_eq_tol(sig(sim, "wr.fx"), 0.0, 1e-12);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* Emergency stop with a magic-formula tyre: the brake locks the wheel,
 * the tyre skids at κ = −1 (force Fz·MF(−1) backwards), the car stops and
 * then stays exactly at rest with the wheel held and the tyre stuck. */
START_TEST(test_skid_stop) {
  dg_graph *g = dg_test_graphf("{\"drivegraph\":1,\"blocks\":{"
                               "\"w\":{\"type\":\"wheel\",\"radius\":0.3,\"inertia\":1,"
                               "\"brake_torque\":6000,\"tyre\":{\"model\":\"magic_formula\"}},"
                               "\"body\":{\"type\":\"vehicle\",\"mass\":1000}},"
                               "\"connections\":[[\"w.ground\",\"body.rear\"]]}");
  dg_sim *sim = dg_test_sim(g);
  dg_test_set_initial(sim, 2, (const char *[]){"body.speed", "w.omega"},
                      (double[]){20.0, 20.0 / 0.3});
  dg_test_set_input(sim, "brake", 1.0);
  dg_test_step(sim, 500, 1e-3);
  ck_assert_double_eq(sig(sim, "w.locked"), 1.0);
  ck_assert_double_eq(sig(sim, "w.omega"), 0.0);
  ck_assert_double_eq_tol(sig(sim, "w.slip"), -1.0, 1e-6);
  double fz = sig(sim, "w.fz");
  ck_assert_double_eq_tol(sig(sim, "w.fx"), fz * mf_ref(10, 1.9, 1, 0.97, -1.0), 1e-3);
  dg_test_step(sim, 10000, 1e-3);
  ck_assert_double_eq_tol(sig(sim, "body.speed"), 0.0, 1e-12);
  double x = sig(sim, "body.x");
  ck_assert_double_gt(x, 0.0);
  dg_test_step(sim, 2000, 1e-3);
  ck_assert_double_eq_tol(sig(sim, "body.speed"), 0.0, 1e-12);
  ck_assert_double_eq_tol(sig(sim, "w.omega"), 0.0, 1e-12);
  ck_assert_double_eq_tol(sig(sim, "body.x"), x, 1e-12);
  ck_assert_double_eq(sig(sim, "w.locked"), 1.0);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Rolling tyre                                                             */

/* torque_source → gear (i, η) → wheel (rolling) → vehicle: the mesh
 * passes η of the power the input shaft gives it (the source's torque less
 * its inertial torque), so
 *   a = (T i η / R) / (m + J_w/R² + η (J_src + J_gear) i²/R²),
 * integrated exactly by RK4 (constant acceleration). */
START_TEST(test_rolling_drive) {
  const double T = 150, i = 4, eta = 0.9, Js = 0.2, Jg = 0.05, R = 0.3, Jw = 1.2, m = 1200;
  dg_graph *g =
      dg_test_graphf("{\"drivegraph\":1,\"blocks\":{"
                     "\"src\":{\"type\":\"torque_source\",\"torque\":%g,\"inertia\":%g},"
                     "\"fd\":{\"type\":\"gear\",\"ratio\":%g,\"efficiency\":%g,\"inertia\":%g},"
                     "\"w\":{\"type\":\"wheel\",\"radius\":%g,\"inertia\":%g},"
                     "\"body\":{\"type\":\"vehicle\",\"mass\":%g}},"
                     "\"connections\":[[\"src.out\",\"fd.in\"],[\"fd.out\",\"w.hub\"],"
                     "[\"w.ground\",\"body.rear\"]]}",
                     T, Js, i, eta, Jg, R, Jw, m);
  dg_sim *sim = dg_test_sim(g);
  double meff = m + Jw / (R * R) + (Js + Jg) * i * i / (R * R);
  double a = T * i * eta / R / (m + Jw / (R * R) + eta * (Js + Jg) * i * i / (R * R));
  ck_assert_int_eq(dg_sim_dof_count(sim), 1);
  double M;
  dg_sim_mass_matrix(sim, &M);
  ck_assert_double_eq_tol(M, meff, 1e-10 * meff);
  dg_test_step(sim, 1000, 1e-3);
  ck_assert_double_eq_tol(sig(sim, "body.accel"), a, 1e-10 * a);
  ck_assert_double_eq_tol(sig(sim, "body.speed"), a * 1.0, 1e-10 * a);
  ck_assert_double_eq_tol(sig(sim, "w.omega"), a / R, 1e-10 * a / R);
  ck_assert_double_eq_tol(sig(sim, "body.x"), 0.5 * a, 1e-10 * a);
  ck_assert_double_eq(sig(sim, "w.slip"), 0.0);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* A braked car stops in v0²/(2a), a = (T_b/R)/(m + J/R²); the sliding
 * brake is constant within each step, so the speed falls exactly
 * linearly; the last step overshoots zero by at most a·dt² in distance
 * before the hold takes it, hence the tolerance. Then it stays stopped. */
START_TEST(test_brake_stop) {
  const double m = 1000, R = 0.3, J = 0.9, Tb = 1500, share = 0.8, v0 = 20;
  dg_graph *g = dg_test_graphf("{\"drivegraph\":1,\"blocks\":{"
                               "\"w\":{\"type\":\"wheel\",\"radius\":%g,\"inertia\":%g,"
                               "\"brake_torque\":%g,\"brake_share\":%g},"
                               "\"body\":{\"type\":\"vehicle\",\"mass\":%g}},"
                               "\"connections\":[[\"w.ground\",\"body.rear\"]]}",
                               R, J, Tb, share, m);
  dg_sim *sim = dg_test_sim(g);
  dg_test_set_initial1(sim, "body.speed", v0);
  dg_test_set_input(sim, "brake", 0.9);
  double a = Tb * share * 0.9 / R / (m + J / (R * R));
  dg_test_step(sim, 2000, 1e-3);
  ck_assert_double_eq_tol(sig(sim, "body.speed"), v0 - 2.0 * a, 1e-9);
  ck_assert_double_eq_tol(sig(sim, "w.brake_torque"), -Tb * share * 0.9, 1e-12);
  ck_assert_double_eq(sig(sim, "w.locked"), 0.0);
  dg_test_step(sim, 4000, 1e-3);
  ck_assert_double_eq(sig(sim, "w.locked"), 1.0);
  ck_assert_double_eq_tol(sig(sim, "body.speed"), 0.0, 1e-12);
  double d = v0 * v0 / (2.0 * a);
  ck_assert_double_eq_tol(sig(sim, "body.x"), d, a * 1e-6);
  dg_test_step(sim, 2000, 1e-3);
  ck_assert_double_eq_tol(sig(sim, "body.speed"), 0.0, 1e-12);
  ck_assert_double_eq_tol(sig(sim, "body.x"), d, a * 1e-6);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* A 1500 kg car on a 20 % grade, front and rear wheels braked with shares
 * 0.6 / 0.4 of `brake_torque`, tyre `model`, rolling resistance 0.012.
 * Needed at the wheels: m g sin(atan 0.2) = 2885 N. */
static dg_graph *grade_car(const char *model, double brake_torque) {
  return dg_test_graphf(
      "{\"drivegraph\":1,\"blocks\":{"
      "\"wf\":{\"type\":\"wheel\",\"radius\":0.3,\"inertia\":1,\"brake_torque\":%g,"
      "\"brake_share\":0.6,\"tyre\":{\"model\":\"%s\"}},"
      "\"wr\":{\"type\":\"wheel\",\"radius\":0.3,\"inertia\":1,\"brake_torque\":%g,"
      "\"brake_share\":0.4,\"tyre\":{\"model\":\"%s\"}},"
      "\"body\":{\"type\":\"vehicle\",\"mass\":1500,\"wheelbase\":2.8,"
      "\"cg_to_front\":1.2,\"cg_height\":0.55,\"rolling_resistance\":0.012}},"
      "\"connections\":[[\"wf.ground\",\"body.front\"],[\"wr.ground\",\"body.rear\"]]}",
      brake_torque, model, brake_torque, model);
}

/* Brake capacity at the ground 1000/0.3 = 3333 N: neither wheel alone
 * could hold the car (2000 N, 1333 N), both together can, so the wheels
 * pool their holds. Nothing moves for 10 s: speeds exactly 0 (1e-12
 * allows round-off of the projection), position unchanged. */
START_TEST(test_hold_grade) {
  const char *model = _i == 0 ? "rolling" : "magic_formula";
  dg_graph *g = grade_car(model, 1000);
  dg_sim *sim = dg_test_sim(g);
  dg_test_set_input(sim, "grade", 0.2);
  dg_test_set_input(sim, "brake", 1.0);
  for (int k = 0; k < 10000; k++) {
    ck_assert_int_eq(dg_sim_step(sim, 1e-3), DG_OK);
    ck_assert_double_eq_tol(sig(sim, "body.speed"), 0.0, 1e-12);
    ck_assert_double_eq_tol(sig(sim, "wf.omega"), 0.0, 1e-12);
    ck_assert_double_eq_tol(sig(sim, "wr.omega"), 0.0, 1e-12);
  }
  ck_assert_double_eq_tol(sig(sim, "body.x"), 0.0, 1e-12);
  ck_assert_double_eq(sig(sim, "wf.locked"), 1.0);
  ck_assert_double_eq(sig(sim, "wr.locked"), 1.0);
  ck_assert_double_eq_tol(sig(sim, "body.accel"), 0.0, 1e-9);
  /* the holds carry gravity less the rolling resistance at the verge of
   * moving: (hold torques)/R = m g sin θ − c_rr m g cos θ */
  double th = atan(0.2), need = 1500 * G * (sin(th) - 0.012 * cos(th));
  double held = -(sig(sim, "wf.brake_torque") + sig(sim, "wr.brake_torque")) / 0.3;
  if (_i == 1) /* magic formula: the stuck tyres carry it to the body */
    ck_assert_double_eq_tol(sig(sim, "wf.fx") + sig(sim, "wr.fx"), need, 1e-6);
  ck_assert_double_eq_tol(fabs(held), need, 1e-6);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* Too weak a brake (1667 N at the ground): the holds let go at t = 0
 * (hold_check at the segment's start, issue 22 item 3; the body's own
 * static friction, the rolling resistance, lets go first or with them) and
 * the car rolls back from t = 0 at a = (−m g sin θ + F_brake + F_rr)/m_eff
 * (brake and rolling resistance oppose the backward motion): v = a·t,
 * linear, so RK4 is exact to round-off. (It used to take a few steps at
 * rest while the pooled holds let go one per step.) */
START_TEST(test_hold_too_weak) {
  dg_graph *g = grade_car("rolling", 500);
  dg_sim *sim = dg_test_sim(g);
  dg_test_set_input(sim, "grade", 0.2);
  dg_test_set_input(sim, "brake", 1.0);
  double th = atan(0.2), m = 1500, meff = m + 2.0 / 0.09;
  double a = (-m * G * sin(th) + 500.0 / 0.3 + 0.012 * m * G * cos(th)) / meff;
  dg_test_step(sim, 1, 1e-3);
  ck_assert_double_eq_tol(sig(sim, "body.speed"), a * 1e-3, 1e-15);
  dg_test_step(sim, 999, 1e-3);
  ck_assert_double_eq(sig(sim, "wf.locked"), 0.0);
  ck_assert_double_eq(sig(sim, "wr.locked"), 0.0);
  ck_assert_double_eq_tol(sig(sim, "body.accel"), a, 1e-9);
  printf("too weak a brake on the grade: v(1 s) %.15g, closed form %.15g\n", sig(sim, "body.speed"),
         a);
  ck_assert_double_eq_tol(sig(sim, "body.speed"), a, 1e-12);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* Holds decided at the segment's start (issue 22, item 3), pooled brakes:
 * a car of m = 1000 kg at rest on rolling wheels (R = 0.3 m, J = 1 kg·m²
 * each), front brake 300 N·m, rear 200 N·m, no road load, a torque T on
 * the front hub. Held together the brakes pool 500 N·m: T = 400 stays
 * at rest with the holds carrying −400 N·m; T = 800 is beyond the pool
 * at t = 0, so both let go there and slide:
 *   ω = (T − 300 − 200)/(2 J + m R²) · t = 300/92 · t
 * from t = 0 (linear: exact for RK4). Before hold_check the holds took the
 * first step and let go one per step (ω(0.1) = 0 instead of 0.326). */
static dg_graph *pushed_car(double torque) {
  return dg_test_graphf(
      "{\"drivegraph\":1,\"blocks\":{"
      "\"push\":{\"type\":\"torque_source\",\"torque\":%g},"
      "\"wf\":{\"type\":\"wheel\",\"radius\":0.3,\"inertia\":1,\"brake_torque\":300},"
      "\"wr\":{\"type\":\"wheel\",\"radius\":0.3,\"inertia\":1,\"brake_torque\":200},"
      "\"body\":{\"type\":\"vehicle\",\"mass\":1000,\"rolling_resistance\":0,\"cda\":0}},"
      "\"connections\":[[\"push.out\",\"wf.hub\"],[\"wf.ground\",\"body.front\"],"
      "[\"wr.ground\",\"body.rear\"]]}",
      torque);
}

static const double pushed_dts[] = {0.1, 1e-3};

START_TEST(test_pool_overloaded_start) {
  double dt = pushed_dts[_i];
  dg_graph *g = pushed_car(800);
  dg_sim *sim = dg_test_sim(g);
  dg_test_set_input(sim, "brake", 1.0);
  double worst = 0.0, alpha = 300.0 / 92.0;
  for (int k = 1; k * dt <= 0.5 + 1e-12; k++) {
    dg_test_step(sim, 1, dt);
    double t = dg_sim_time(sim);
    worst = fmax(worst, fabs(sig(sim, "wf.omega") - alpha * t));
    worst = fmax(worst, fabs(sig(sim, "wr.omega") - alpha * t));
  }
  printf("pooled brakes overloaded at t = 0, dt = %g: worst |w - 300/92 t| %.2e rad/s\n", dt,
         worst);
  ck_assert_double_le(worst, 1e-12);
  ck_assert_double_eq(sig(sim, "wf.locked"), 0.0);
  ck_assert_double_eq(sig(sim, "wr.locked"), 0.0);
  ck_assert_double_eq_tol(sig(sim, "wf.brake_torque"), -300.0, 1e-12);
  ck_assert_double_eq_tol(sig(sim, "wr.brake_torque"), -200.0, 1e-12);
  dg_test_check_balance(sim, 1e-9);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

START_TEST(test_pool_holds) {
  dg_graph *g = pushed_car(400);
  dg_sim *sim = dg_test_sim(g);
  dg_test_set_input(sim, "brake", 1.0);
  dg_test_step(sim, 100, 1e-2);
  ck_assert_double_eq(sig(sim, "wf.omega"), 0.0);
  ck_assert_double_eq(sig(sim, "body.speed"), 0.0);
  ck_assert_double_eq(sig(sim, "wf.locked"), 1.0);
  ck_assert_double_eq(sig(sim, "wr.locked"), 1.0);
  ck_assert_double_eq_tol(sig(sim, "wf.brake_torque") + sig(sim, "wr.brake_torque"), -400.0, 1e-9);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* Pooled stuck tyres: a parked car (m = 1000 kg, brakes 3000 N·m on each
 * wheel, far beyond the tyres) on a grade, magic-formula tyres with fixed
 * loads 2000 N (front) and 2500 N (rear), C = 1, E = 0, B = 10, D = 1: the
 * curve rises to the slip limit κ = 1, where Fx/Fz = sin(atan 10) =
 * 10/√101. Together the tyres hold 4500·10/√101 = 4477.7 N. Grade 0.5
 * (m g sin θ = 4385.7 N) stays parked; grade 0.6 (5045.2 N) is beyond the
 * pool at t = 0, so both tyres let go there, at κ = 1. Sliding backward on
 * locked hubs, σ dκ/dt = −v − |v|κ = 0 at κ = 1: the force stays
 * 4477.7 N, and v = −(m g sin θ − 4477.7)/m · t from t = 0, linear. */
static dg_graph *parked_car(void) {
  static const char *const tyre =
      "\"tyre\":{\"model\":\"magic_formula\",\"B\":10,\"C\":1,\"D\":1,\"E\":0}";
  return dg_test_graphf(
      "{\"drivegraph\":1,\"blocks\":{"
      "\"wf\":{\"type\":\"wheel\",\"radius\":0.3,\"inertia\":1,\"brake_torque\":3000,"
      "\"normal_load\":2000,%s},"
      "\"wr\":{\"type\":\"wheel\",\"radius\":0.3,\"inertia\":1,\"brake_torque\":3000,"
      "\"normal_load\":2500,%s},"
      "\"body\":{\"type\":\"vehicle\",\"mass\":1000,\"rolling_resistance\":0,\"cda\":0}},"
      "\"connections\":[[\"wf.ground\",\"body.front\"],[\"wr.ground\",\"body.rear\"]]}",
      tyre, tyre);
}

START_TEST(test_parked_tyres_overloaded_start) {
  const double grade = _i == 0 ? 0.5 : 0.6, dt = 1e-2;
  dg_graph *g = parked_car();
  dg_sim *sim = dg_test_sim(g);
  dg_test_set_input(sim, "brake", 1.0);
  dg_test_set_input(sim, "grade", grade);
  double th = atan(grade), grip = 4500.0 * 10.0 / sqrt(101.0);
  double push = 1000.0 * G * sin(th);
  double a = push > grip ? -(push - grip) / 1000.0 : 0.0;
  double worst = 0.0;
  for (int k = 1; k * dt <= 1.0 + 1e-12; k++) {
    dg_test_step(sim, 1, dt);
    worst = fmax(worst, fabs(sig(sim, "body.speed") - a * dg_sim_time(sim)));
  }
  printf("parked car on grade %g (pushed %.1f N, grip %.1f N): worst |v - a t| %.2e m/s\n", grade,
         push, grip, worst);
  ck_assert_double_le(worst, 1e-12);
  ck_assert_double_eq(sig(sim, "wf.omega"), 0.0);
  ck_assert_double_eq(sig(sim, "wr.omega"), 0.0);
  ck_assert_double_eq(sig(sim, "wf.locked"), 1.0);
  if (_i == 1) { /* sliding on locked wheels at the slip limit */
    ck_assert_double_eq_tol(sig(sim, "wf.slip"), 1.0, 1e-15);
    ck_assert_double_eq_tol(sig(sim, "wf.fx") + sig(sim, "wr.fx"), grip, 1e-9);
  } else {
    ck_assert_double_eq_tol(sig(sim, "wf.fx") + sig(sim, "wr.fx"), push, 1e-9);
  }
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* Releasing the brake on the grade: the car rolls back with gravity less
 * rolling resistance; with a magic-formula tyre the stuck tyre's force is
 * carried over into the slip state, so the wheels start loaded. */
START_TEST(test_release) {
  const char *model = _i == 0 ? "rolling" : "magic_formula";
  dg_graph *g = grade_car(model, 1000);
  dg_sim *sim = dg_test_sim(g);
  dg_test_set_input(sim, "grade", 0.2);
  dg_test_set_input(sim, "brake", 1.0);
  dg_test_step(sim, 100, 1e-3);
  dg_test_set_input(sim, "brake", 0.0);
  ck_assert_int_eq(dg_sim_step(sim, 1e-3), DG_OK);
  ck_assert_double_eq(sig(sim, "wf.locked"), 0.0);
  ck_assert_double_eq(sig(sim, "wr.locked"), 0.0);
  if (_i == 1) {
    double th = atan(0.2), need = 1500 * G * (sin(th) - 0.012 * cos(th));
    ck_assert_double_gt(sig(sim, "wf.fx") + sig(sim, "wr.fx"), 0.5 * need);
  }
  dg_test_step(sim, 1000, 1e-3);
  ck_assert_double_lt(sig(sim, "body.speed"), -0.5);
  if (_i == 0) {
    double th = atan(0.2), m = 1500;
    double a = (-m * G * sin(th) + 0.012 * m * G * cos(th)) / (m + 2.0 / 0.09);
    ck_assert_double_eq_tol(sig(sim, "body.accel"), a, 1e-9);
  }
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* validate checks every mode; a magic-formula wheel on a free hub needs
 * its own inertia. */
START_TEST(test_validate) {
  dg_graph_info info;
  int n = dg_graph_validate_string(
      NULL,
      "{\"drivegraph\":1,\"blocks\":{\"w\":{\"type\":\"wheel\",\"radius\":0.3,"
      "\"brake_torque\":100,\"tyre\":{\"model\":\"magic_formula\"}},"
      "\"body\":{\"type\":\"vehicle\",\"mass\":1000}},"
      "\"connections\":[[\"w.ground\",\"body.rear\"]]}",
      "test.json", NULL, NULL, &info);
  ck_assert_int_eq(n, 0);
  ck_assert_int_eq(info.modes, 6);
  n = dg_graph_validate_string(
      NULL,
      "{\"drivegraph\":1,\"blocks\":{\"w\":{\"type\":\"wheel\",\"radius\":0.3,\"inertia\":0,"
      "\"tyre\":{\"model\":\"magic_formula\"}},\"body\":{\"type\":\"vehicle\",\"mass\":1000}},"
      "\"connections\":[[\"w.ground\",\"body.rear\"]]}",
      "test.json", NULL, NULL, NULL);
  ck_assert_int_gt(n, 0);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Parameter errors                                                         */

static const dg_test_bad_param bad[] = {
    {"\"inertia\":1", "/blocks/w/radius", "missing required number (m)"},
    {"\"radius\":0", "/blocks/w/radius", "must be > 0 (got 0)"},
    {"\"radius\":0.3,\"inertia\":-1", "/blocks/w/inertia", "must be >= 0 (got -1)"},
    {"\"radius\":0.3,\"brake_torque\":-5", "/blocks/w/brake_torque", "must be >= 0 (got -5)"},
    {"\"radius\":0.3,\"brake_share\":1.5", "/blocks/w/brake_share", "must be <= 1 (got 1.5)"},
    {"\"radius\":0.3,\"normal_load\":-1", "/blocks/w/normal_load", "must be >= 0 (got -1)"},
    {"\"radius\":0.3,\"tyre\":{\"model\":\"pacejka\"}", "/blocks/w/tyre/model",
     "must be one of \"rolling\", \"magic_formula\" (got \"pacejka\")"},
    {"\"radius\":0.3,\"tyre\":{\"B\":0}", "/blocks/w/tyre/B", "must be > 0 (got 0)"},
    {"\"radius\":0.3,\"tyre\":{\"C\":2}", "/blocks/w/tyre/C", "must be < 2 (got 2)"},
    {"\"radius\":0.3,\"tyre\":{\"D\":-1}", "/blocks/w/tyre/D", "must be > 0 (got -1)"},
    {"\"radius\":0.3,\"tyre\":{\"E\":1.2}", "/blocks/w/tyre/E", "must be <= 1 (got 1.2)"},
    {"\"radius\":0.3,\"tyre\":{\"relaxation_length\":0}", "/blocks/w/tyre/relaxation_length",
     "must be > 0 (got 0)"},
    {"\"radius\":0.3,\"tyre\":{\"relaxation\":0.2}", "/blocks/w/tyre/relaxation",
     "unknown parameter; did you mean \"relaxation_length\"?"},
    {"\"radius\":0.3,\"tyre\":\"rolling\"", "/blocks/w/tyre", "expected an object, got string"},
    {"\"radius\":0.3,\"brake\":100", "/blocks/w/brake",
     "unknown parameter; did you mean \"brake_torque\"?"},
};

START_TEST(test_bad_params) {
  dg_test_graph_error_at(bad[_i].path, bad[_i].text,
                         "{\"drivegraph\":1,\"blocks\":{\"w\":{\"type\":\"wheel\",%s},"
                         "\"body\":{\"type\":\"vehicle\",\"mass\":1000}},"
                         "\"connections\":[[\"w.ground\",\"body.rear\"]]}",
                         bad[_i].params);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("wheel");
  TCase *tc = tcase_create("tyre");
  tcase_add_test(tc, test_peak_e0);
  tcase_add_test(tc, test_peak_default);
  tcase_add_test(tc, test_relaxation);
  tcase_add_test(tc, test_slip_ratio);
  tcase_add_loop_test(tc, test_spinning, 0, 2);
  tcase_add_loop_test(tc, test_tread_damping, 0, 2);
  tcase_add_test(tc, test_rest_no_drift);
  tcase_add_test(tc, test_skid_stop);
  suite_add_tcase(s, tc);
  tc = tcase_create("dynamics");
  tcase_add_test(tc, test_rolling_drive);
  tcase_add_test(tc, test_brake_stop);
  tcase_add_loop_test(tc, test_hold_grade, 0, 2);
  tcase_add_test(tc, test_hold_too_weak);
  tcase_add_loop_test(tc, test_pool_overloaded_start, 0,
                      (int)(sizeof pushed_dts / sizeof pushed_dts[0]));
  tcase_add_test(tc, test_pool_holds);
  tcase_add_loop_test(tc, test_parked_tyres_overloaded_start, 0, 2);
  tcase_add_loop_test(tc, test_release, 0, 2);
  tcase_add_test(tc, test_validate);
  suite_add_tcase(s, tc);
  tc = tcase_create("params");
  tcase_add_loop_test(tc, test_bad_params, 0, (int)(sizeof bad / sizeof bad[0]));
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return dg_test_run(suite()); }
